//! The load pipeline: one task that owns all state, fed by a reader thread
//! through a bounded channel, with requests in flight on a `JoinSet`.
//!
//! Guarantees, and where they are kept:
//! - Nothing is lost: every record read ends written or rejected
//!   (`finish_item`), or the run says it is incomplete and leaves a
//!   checkpoint below every unacknowledged record.
//! - Input order per key: the orderer keeps same-key records in order; a
//!   record whose key is in flight waits in `blocked` until that write is
//!   acknowledged, so one key is never written twice at once nor twice in a
//!   batch.
//! - Adaptive: against a target that throttles (DynamoDB), the load learns
//!   the write rate the table takes from its throttling and paces itself
//!   just below it (`pacer`), so it runs at the table's capacity with few
//!   throttled requests and few items sent twice; a partition key that is
//!   refused on its own gets a rate of its own, and only its records wait
//!   for it (`hotkeys`); runs of one partition key (sorted input) are held
//!   aside and go out a record of each key in turn, so the load writes the
//!   partitions of every key it has read ahead at once; concurrency grows
//!   additively up to what that rate needs (`sizing`). Against a target
//!   that queues instead (MongoDB), concurrency follows additive increase,
//!   multiplicative decrease, driven by errors and latency. Retries back
//!   off exponentially with jitter.
//! - Bounded: records read but not acknowledged, and the bytes they hold
//!   (with each record's own overhead), are capped, whatever the endpoint
//!   does; records held aside are capped by those bytes alone, so sorted
//!   input reads as many keys ahead as the memory bound allows.
//!
//! The pipeline knows nothing of the target: a `Sink` sends each request
//! and says what became of each item; `decide` says what to do about it.
//! It reads time only through its `Clock`, so it runs in virtual time too.
//!
//! Parts: `controller` (concurrency), `decide` (retry, split, reject,
//! stop), `pacer` and `hotkeys` (the learned rates), `rejects` (the
//! rejects file), and the run loop here.

mod controller;
mod decide;
mod hotkeys;
mod pacer;
mod rejects;
mod sizing;

pub use controller::Controller;
pub use decide::{decide, Action, Decision, Fate, JobFacts, LoadFacts, Refusals, Signal};
pub use hotkeys::HotKeys;
pub use pacer::Pacer;
pub use sizing::{concurrency_bound, Sizing, CAPACITY_HEADROOM, IN_FLIGHT_MEMORY_SHARE, MIN_CONCURRENCY_BOUND};

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use dynaburst_input::{InputError, Record};
use dynaburst_rng::{Backoff, Rng};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::checkpoint::Checkpoint;
use crate::clock::Clock;
use crate::keys::{HashMap128, HashSet128};
use crate::order::{Order, Orderer};
use crate::report::Stats;
use crate::target::{Limits, Outcome, Sink, SinkItem};
use rejects::Rejects;

/// Most requests in flight with `--concurrency auto` for a target that
/// limits them itself (MongoDB); DynamoDB's bound follows its table's
/// capacity and the memory held instead (`sizing`).
pub const MAX_CONCURRENCY: usize = 64;
/// Concurrency `auto` starts from.
pub const START_CONCURRENCY: f64 = 4.0;
/// Multiplicative decrease on throttling.
pub const DECREASE_FACTOR: f64 = 0.7;
/// At most one decrease per this interval (one reaction per round trip).
pub const DECREASE_INTERVAL: Duration = Duration::from_millis(100);
/// A batch response with more than this fraction unprocessed counts as a
/// throttle signal.
pub const UNPROCESSED_SIGNAL: f64 = 0.1;
/// This many records refused alone with one message, with nothing written
/// in between (at any point of the load), stop the load instead of
/// rejecting them.
pub const SYSTEMIC_REFUSALS: u32 = 20;
/// Without `--max-rejects`, a load stops once it has rejected this many
/// records and they are more than `DEFAULT_REJECTED_SHARE` of the records
/// read: a load that rejects (nearly) everything has the wrong table, key
/// or types, and is not worth finishing.
pub const DEFAULT_MAX_REJECTS_FLOOR: u64 = 1000;
/// See `DEFAULT_MAX_REJECTS_FLOOR`.
pub const DEFAULT_REJECTED_SHARE: f64 = 0.9;
/// Retry backoff: base and cap (exponential, equal jitter).
pub const BACKOFF_BASE: Duration = Duration::from_millis(50);
pub const BACKOFF_CAP: Duration = Duration::from_secs(5);
/// The pipeline's retry backoff.
pub const BACKOFF: Backoff = Backoff { base: BACKOFF_BASE, cap: BACKOFF_CAP };
/// Checkpoint and progress intervals.
pub const CHECKPOINT_EVERY: Duration = Duration::from_secs(1);
pub const PROGRESS_EVERY: Duration = Duration::from_millis(200);
/// Records the reader may run ahead of the pipeline.
pub const CHANNEL_RECORDS: usize = 1024;
/// Most bytes held for records read but not yet acknowledged (their text
/// and their converted form); reading pauses above it.
pub const MAX_HELD_BYTES: usize = 64 * 1024 * 1024;
/// What a record's entry in the map of records outstanding costs (key,
/// value and its share of the tree's nodes), counted against
/// `MAX_HELD_BYTES` with the record itself.
pub const OUTSTANDING_ENTRY_BYTES: usize = 64;
/// A request that fails transiently this many times in a row is split in
/// halves, to find a record that fails every request it is in.
pub const POISON_ATTEMPTS: u32 = 5;
/// Failures of a half after which it is halved again.
pub const POISON_RESPLIT: u32 = 2;
/// After a stop, requests still in flight this long are abandoned; their
/// records stay below the checkpoint.
pub const STOP_GRACE: Duration = Duration::from_secs(30);
/// Latency control: a request whose time per item is more than this many
/// times the recent floor counts as a mild throttle signal.
pub const LATENCY_SIGNAL_RATIO: f64 = 2.0;
/// Severity of that signal (1 is a refused request).
pub const LATENCY_SIGNAL_SEVERITY: f64 = 0.3;
/// The latency floor is the least time per item seen in the current and
/// the previous window of this length, so it follows a changing endpoint.
pub const LATENCY_FLOOR_WINDOW: Duration = Duration::from_secs(10);
/// A run of this many records with one partition key draws a warning
/// (loads not paced: they write a run a partition at a time).
pub const LONG_RUN_WARNING: u64 = 1000;
/// A paced load writes the runs of sorted input a record of each key in
/// turn, as many runs as `MAX_HELD_BYTES` holds; with this many runs held
/// it kept four partitions busy (at least 95% of their capacity, in
/// crates/loader/tests/pipeline.rs), so a run longer than this share of
/// the bytes draws a warning.
pub const RUNS_HELD_FOR_SPREAD: usize = 12;

/// Concurrency: adaptive, or fixed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Concurrency {
    Auto,
    Fixed(usize),
}

/// How the pipeline paces itself; the same flags for every target.
#[derive(Clone, Debug)]
pub struct Tuning {
    pub concurrency: Concurrency,
    /// Let latency drive `--concurrency auto` too (targets that queue
    /// rather than throttle, such as MongoDB).
    pub latency_control: bool,
    pub max_wcu: Option<f64>,
    pub order: Order,
    pub window: usize,
    pub seed: u64,
    /// Abort when no record was acknowledged for this long.
    pub stall_timeout: Duration,
    /// `--max-rejects`: stop once more records than this were rejected.
    /// None applies the default rule (`DEFAULT_MAX_REJECTS_FLOOR`).
    pub max_rejects: Option<u64>,
}

/// Everything the pipeline needs besides the sink and the input.
#[derive(Clone, Debug)]
pub struct PipelineOptions {
    /// The target's name, for the checkpoint (a table, or db.collection).
    pub target: String,
    pub tuning: Tuning,
    pub rejects: PathBuf,
    /// Rejects file length to keep (resume); None truncates nothing.
    pub rejects_keep: Option<u64>,
    /// Fields every rejects line carries besides its record: where the
    /// records came from (`dynaburst_input::RecordSource::fields`).
    pub rejects_source: serde_json::Map<String, serde_json::Value>,
    pub checkpoint: Option<PathBuf>,
    /// The input's name and size, for the checkpoint.
    pub input_name: String,
    pub input_bytes: Option<u64>,
    /// Saved in the checkpoint (see `Checkpoint::id_key`).
    pub id_key: Option<u64>,
    /// Said once, at the start, in every snapshot (the CSV column types).
    pub notes: Vec<String>,
}

/// Progress, sent a few times a second.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    pub read: u64,
    pub written: u64,
    pub rejected: u64,
    pub bytes_read: u64,
    /// Input offset below which every record is acknowledged.
    pub bytes_done: u64,
    pub total_bytes: Option<u64>,
    pub units: f64,
    pub throttle_events: u64,
    /// Records read and neither written nor rejected yet: in requests in
    /// flight, waiting to be sent or re-sent.
    pub unacknowledged: u64,
    pub in_flight: usize,
    pub limit: usize,
    pub elapsed: Duration,
    pub warnings: Vec<String>,
    /// What the load decided at its start (the CSV column types), to say
    /// once.
    pub notes: Vec<String>,
}

/// How a load ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Ending {
    /// Every record read was written or rejected.
    Complete,
    /// Stopped by a signal; the checkpoint says where to resume.
    Interrupted,
    /// Gave up (a fatal error or a stall); the checkpoint says where to
    /// resume once the cause is fixed.
    Aborted(String),
}

/// The pipeline's result.
pub struct Outcomes {
    pub ending: Ending,
    pub stats: Stats,
    /// Records read and neither written nor rejected when the load ended
    /// (in flight or waiting; non-zero only when it stopped early): read =
    /// written + rejected + unacknowledged.
    pub unacknowledged: u64,
    /// CSV input: each column's type (set by `run_pipeline`).
    pub column_types: Option<dynaburst_input::ColumnTypes>,
    pub elapsed: Duration,
    pub warnings: Vec<String>,
    pub rejects_written: bool,
}

/// A pipeline error that stops the load before or outside the requests.
#[derive(Debug)]
pub enum PipelineError {
    Input(InputError),
    Io(String),
}

/// What the reader thread sends the pipeline.
pub enum Intake<I> {
    Record(Prepared<I>),
    /// The input cannot be read on.
    Failed(InputError),
    /// The whole input was read. A channel that closes without it means
    /// the reader died (a panic in parsing or conversion): the load must
    /// not call itself complete.
    End,
}

/// Why the input ended early when the reader thread died without a word.
pub const READER_DIED: &str = "the input reader stopped before the end of the input";

/// A record checked and converted off the pipeline's task (on the reader
/// thread), so the per-record work runs beside the requests.
pub struct Prepared<I> {
    line: u64,
    offset: u64,
    end: u64,
    lines: u64,
    raw: String,
    item: Result<SinkItem<I>, String>,
}

impl<I> Prepared<I> {
    /// Converts a record with the sink's `convert`, which checks it and
    /// says why it cannot be written.
    pub fn new(rec: Record, convert: impl FnOnce(&Record) -> Result<SinkItem<I>, String>) -> Prepared<I> {
        let lines = rec.raw.bytes().filter(|b| *b == b'\n').count() as u64 + 1;
        let item = convert(&rec);
        Prepared { line: rec.line, offset: rec.offset, end: rec.end, lines, raw: rec.raw, item }
    }
}

struct Pending<I> {
    seq: u64,
    line: u64,
    raw: String,
    /// The partition key's hash: what per-key pacing paces.
    partition: u128,
    /// The whole identity's hash: what per-key ordering waits on.
    slot: u128,
    units: f64,
    bytes: usize,
    /// Bytes of memory the record holds (its text, its item in the sink's
    /// form, the pipeline's bookkeeping), as counted against
    /// `MAX_HELD_BYTES`.
    held: usize,
    item: I,
}

struct Job<I> {
    items: Vec<Pending<I>>,
    attempts: u32,
    due: Instant,
    token: Option<String>,
    /// Records written by the whole load when this job last failed
    /// transiently (set once it has: such a job is not merged with others).
    written_at_failure: Option<u64>,
    /// Consecutive failures of this job alone, each after other records
    /// were written since the one before: the record's fault, not the
    /// endpoint's (an outage fails everything, so it strikes nobody).
    strikes: u32,
}

struct Pipeline<S: Sink, C: Clock> {
    opts: PipelineOptions,
    sink: Arc<S>,
    limits: Limits,
    stats: Stats,
    start: Instant,
    orderer: Orderer<Pending<S::Item>>,
    ready: VecDeque<Pending<S::Item>>,
    busy: HashSet128,
    blocked: HashMap128<VecDeque<Pending<S::Item>>>,
    blocked_count: usize,
    retries: Vec<Job<S::Item>>,
    /// Records read and not yet acknowledged: sequence number to (input
    /// offset, line, bytes held).
    outstanding: BTreeMap<u64, (u64, u64, usize)>,
    held_bytes: usize,
    next_seq: u64,
    next_position: (u64, u64),
    controller: Controller,
    clock: C,
    /// Retry jitter (forked from the run's seed).
    rng: Rng,
    rejects: Rejects,
    rate_tokens: f64,
    rate_updated: Instant,
    /// The learned write rate (`--concurrency auto` against a target that
    /// throttles rather than queues).
    pacer: Option<Pacer>,
    /// Per-key pacers beside it, and the records held aside (paced
    /// loads): a hot key's, and runs of one partition key.
    hot: Option<HotKeys<Pending<S::Item>>>,
    /// The partition key of the last record released from the window: a
    /// record of the same key is part of a run.
    last_released: Option<u128>,
    last_progress: Instant,
    warnings: Vec<String>,
    run_key: Option<u128>,
    run_length: u64,
    /// Bytes the current run holds (as counted against `MAX_HELD_BYTES`).
    run_bytes: usize,
    warned_run: bool,
    next_job_id: u64,
    fatal: Option<String>,
    refusals: Refusals,
    /// The bound on requests in flight, from capacity, latency and memory.
    sizing: Sizing,
}

impl<S: Sink, C: Clock> Pipeline<S, C> {
    fn second(&self, now: Instant) -> u64 {
        now.saturating_duration_since(self.start).as_secs()
    }

    /// Adds a warning once.
    fn warn(&mut self, warning: String) {
        if !self.warnings.contains(&warning) {
            self.warnings.push(warning);
        }
    }

    /// A record is done (written or rejected): it no longer holds the
    /// checkpoint back, nor memory.
    fn acknowledge(&mut self, seq: u64) {
        if let Some((_, _, held)) = self.outstanding.remove(&seq) {
            self.held_bytes -= held;
        }
        self.last_progress = self.clock.now();
    }

    /// Warns once of a run of records with one partition key too long for
    /// the load to spread (see `LONG_RUN_WARNING`, `RUNS_HELD_FOR_SPREAD`);
    /// `line` is the run's latest record's.
    fn warn_long_run(&mut self, line: u64) {
        let paced = self.hot.is_some();
        let long = match paced {
            true => self.run_bytes >= MAX_HELD_BYTES / RUNS_HELD_FOR_SPREAD,
            false => self.run_length >= LONG_RUN_WARNING,
        };
        if !long {
            return;
        }
        self.warned_run = true;
        let advice = match (paced, self.opts.tuning.order) {
            (true, _) => format!(
                "the load writes several keys' runs at once only as far as it reads ahead ({} MiB of records, \
                 fewer than {RUNS_HELD_FOR_SPREAD} such runs), so it may keep only some partitions busy: shuffle \
                 the input to spread the writes",
                MAX_HELD_BYTES >> 20
            ),
            (false, Order::AsIs) => "use --order interleave or shuffle to spread writes over partitions".to_string(),
            (false, _) => "a run longer than --window still reaches one partition at a time: raise --window or use \
                           --order shuffle"
                .to_string(),
        };
        let length = self.run_length;
        self.warn(format!(
            "input has runs of {length}+ records with one partition key (from line {}): {advice}",
            line + 1 - length
        ));
    }

    fn reject(&mut self, seq: u64, line: u64, raw: &str, error: &str) {
        // Held until written: it counts against the bound on memory.
        self.held_bytes += self.rejects.hold(seq, line, raw, error);
        self.stats.rejected += 1;
        self.acknowledge(seq);
        if let Some(reason) = self.too_many_rejects() {
            self.fatal.get_or_insert(reason);
        }
    }

    /// Why the load must stop for its rejects (`--max-rejects`, or by
    /// default when it rejects nearly everything), if it must.
    fn too_many_rejects(&self) -> Option<String> {
        let (rejected, written) = (self.stats.rejected, self.stats.written);
        match self.opts.tuning.max_rejects {
            Some(max) => (rejected > max)
                .then(|| format!("{rejected} records rejected, more than --max-rejects {max} (see the rejects file)")),
            None => {
                // Against the records read, not those written: a record
                // refused by its conversion is rejected at once, while the
                // writes of the records around it are still in flight.
                let read = self.stats.read;
                (rejected >= DEFAULT_MAX_REJECTS_FLOOR && rejected as f64 > DEFAULT_REJECTED_SHARE * read as f64).then(
                    || {
                        format!(
                            "{rejected} of the first {read} records read were rejected ({written} written; see the \
                             rejects file): the records do not fit the target; check the table's key and the \
                             input's types, or pass --max-rejects N to load the rest anyway"
                        )
                    },
                )
            }
        }
    }

    /// The first record not yet acknowledged (everything before it is).
    fn low_water_seq(&self) -> u64 {
        self.outstanding.keys().next().copied().unwrap_or(self.next_seq)
    }

    /// Writes the rejects of records below the low-water mark; without a
    /// checkpoint (nothing to resume from) at the end, all of them.
    fn flush_rejects(&mut self, end: bool) -> Result<(), PipelineError> {
        let low = if end && self.opts.checkpoint.is_none() { u64::MAX } else { self.low_water_seq() };
        self.held_bytes -= self.rejects.flush(low)?;
        Ok(())
    }

    /// Rejects a record that was in flight, and lets its key's next record go.
    fn reject_pending(&mut self, p: Pending<S::Item>, error: &str) {
        self.reject(p.seq, p.line, &p.raw, error);
        self.release_key(p.slot);
    }

    fn intake(&mut self, rec: Prepared<S::Item>) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.stats.read += 1;
        self.stats.bytes_read += rec.end - rec.offset;
        self.next_position = (rec.end, rec.line + rec.lines);
        let item = match rec.item {
            Ok(i) => i,
            Err(e) => {
                self.outstanding.insert(seq, (rec.offset, rec.line, 0));
                self.reject(seq, rec.line, &rec.raw, &e);
                return;
            }
        };
        let held = rec.raw.capacity() + item.held + record_overhead::<S::Item>();
        self.outstanding.insert(seq, (rec.offset, rec.line, held));
        self.held_bytes += held;
        // Long runs of one partition key put all the writes on one
        // partition (seed 004): say so once. A paced load holds runs aside
        // and writes several at once, as far as memory lets it read ahead:
        // only runs too long for that draw the warning.
        if self.run_key == Some(item.partition) {
            self.run_length += 1;
            self.run_bytes += held;
            if !self.warned_run {
                self.warn_long_run(rec.line);
            }
        } else {
            self.run_key = Some(item.partition);
            self.run_length = 1;
            self.run_bytes = held;
        }
        let pending = Pending {
            seq,
            line: rec.line,
            raw: rec.raw,
            partition: item.partition,
            slot: item.slot,
            units: item.units,
            bytes: item.bytes,
            held,
            item: item.item,
        };
        self.orderer.push(item.partition, item.slot, pending);
    }

    /// Moves records from the window to `ready` (or `blocked` when their
    /// key is in flight).
    fn release(&mut self, input_done: bool) {
        let wants_full_window = self.opts.tuning.order != Order::AsIs;
        let target = self.controller.allowed() * self.limits.max_items * 2;
        while self.ready.len() < target && self.blocked_count < self.opts.tuning.window {
            // Wait for a full window only while reading can fill it: with
            // the byte bound reached (large records) it never would.
            if wants_full_window && !input_done && self.may_read() {
                break;
            }
            let Some(p) = self.orderer.pop() else { break };
            let run = self.last_released.replace(p.partition) == Some(p.partition);
            if self.busy.contains(&p.slot) {
                self.blocked.entry(p.slot).or_default().push_back(p);
                self.blocked_count += 1;
            } else {
                self.busy.insert(p.slot);
                self.send_or_hold(p, run, false);
            }
        }
    }

    /// A record may go: into `ready`, or aside with the records held
    /// (paced loads) when its key holds some, is paced on its own, or `run`
    /// says it continues a run of one partition key: held runs go out a
    /// record of each key in turn, so sorted input writes as many
    /// partitions at once as the memory bound lets it read keys ahead.
    /// `first`: the record goes before the others (a key's next record
    /// once its write is acknowledged, or one put back).
    fn send_or_hold(&mut self, p: Pending<S::Item>, run: bool, first: bool) {
        match self.hot.as_mut() {
            Some(hot) if run || hot.holds(p.partition) || hot.paced(p.partition) => hot.hold(p.partition, p, first),
            _ if first => self.ready.push_front(p),
            _ => self.ready.push_back(p),
        }
    }

    /// A key's write is acknowledged: its next record (if one waits) goes
    /// first, else the key is free.
    fn release_key(&mut self, slot: u128) {
        match self.blocked.get_mut(&slot).and_then(|q| q.pop_front()) {
            Some(next) => {
                self.blocked_count -= 1;
                if self.blocked.get(&slot).is_some_and(|q| q.is_empty()) {
                    self.blocked.remove(&slot);
                }
                // The key stays busy; its next record goes first.
                self.send_or_hold(next, false, true);
            }
            None => {
                self.busy.remove(&slot);
            }
        }
    }

    fn finish_item(&mut self, p: Pending<S::Item>) {
        self.acknowledge(p.seq);
        self.release_key(p.slot);
    }

    fn new_token(&mut self) -> Option<String> {
        if !self.sink.idempotent_requests() {
            return None;
        }
        self.next_job_id += 1;
        // ClientRequestToken: 36 characters at most (3 + 16 + 1 + 16).
        Some(format!("db-{:016x}-{:016x}", self.opts.tuning.seed, self.next_job_id))
    }

    fn job(&mut self, items: Vec<Pending<S::Item>>, attempts: u32, due: Instant) -> Job<S::Item> {
        let token = self.new_token();
        Job { items, attempts, due, token, written_at_failure: None, strikes: 0 }
    }

    /// Sends `items` again after a backoff for `attempts`.
    fn retry(
        &mut self,
        items: Vec<Pending<S::Item>>,
        attempts: u32,
        token: Option<String>,
        written_at_failure: Option<u64>,
        strikes: u32,
    ) {
        let due = self.clock.now() + BACKOFF.delay(attempts, &mut self.rng);
        self.stats.resent_items += items.len() as u64;
        self.retries.push(Job { items, attempts, due, token, written_at_failure, strikes });
    }

    /// Applies what `decide` says about a request's answer.
    fn handle(&mut self, job: Job<S::Item>, outcome: Outcome, latency: Duration) {
        let now = self.clock.now();
        let second = self.second(now);
        self.stats.requests += 1;
        self.stats.record_latency(self.sink.request_name(), latency);
        // Requests in flight are bounded by the memory their records hold.
        let (units, held) = job.items.iter().fold((0.0, 0), |(u, b), p| (u + p.units, b + p.held));
        self.sizing.answered(latency, units, held);
        self.controller.set_max(self.sizing.bound(self.limits.capacity_units_per_s, self.limits.max_concurrency));
        let facts = JobFacts {
            items: job.items.len(),
            attempts: job.attempts,
            written_at_failure: job.written_at_failure,
            strikes: job.strikes,
        };
        let load = LoadFacts {
            written: self.stats.written,
            outstanding: self.outstanding.len(),
            idempotent: self.sink.idempotent_requests(),
            refusals: &self.refusals,
        };
        let Decision { action, warning, refusals } = decide(outcome, &facts, &load);
        if let Some(w) = warning {
            self.warn(w);
        }
        if let Some(r) = refusals {
            self.refusals = r;
        }
        match action {
            Action::Answered { fates, written, unprocessed, units, again_attempts, signal } => {
                self.stats.units += units;
                self.stats.written += written as u64;
                self.stats.unprocessed_items += unprocessed as u64;
                if unprocessed > 0 {
                    self.stats.partial_requests += 1;
                }
                let row = self.stats.row(second);
                row.items_written += written as u64;
                row.units += units;
                row.unprocessed_items += unprocessed as u64;
                row.partial_requests += u64::from(unprocessed > 0);
                if let Some(pacer) = self.pacer.as_mut() {
                    // Paced: the rate answers throttling; concurrency only
                    // has to carry the rate. A throttle of one hot key is
                    // that key's pacer's, not the table's. The rate is in
                    // the units the records are paced by (their own write
                    // units), not the answer's consumed capacity, which
                    // also counts every index's units: a table with a GSI
                    // would otherwise seem to take twice what it does.
                    let paced_units: f64 = job
                        .items
                        .iter()
                        .zip(&fates)
                        .filter(|(_, f)| matches!(f, Fate::Written))
                        .map(|(p, _)| p.units)
                        .sum();
                    if paced_units > 0.0 {
                        pacer.on_written(now, paced_units);
                    }
                    if unprocessed > 0 {
                        let sent = now.checked_sub(latency).unwrap_or(now);
                        let refused = job.items.iter().zip(&fates).filter(|(_, f)| matches!(f, Fate::Again));
                        let keys = refused.map(|(p, _)| p.partition);
                        if !self.hot.as_mut().is_some_and(|hot| hot.on_refused(now, sent, keys)) {
                            pacer.on_throttle(now, sent);
                        }
                    } else {
                        self.controller.on_success();
                    }
                    if let Some(hot) = self.hot.as_mut() {
                        for (p, _) in job.items.iter().zip(&fates).filter(|(_, f)| matches!(f, Fate::Written)) {
                            hot.on_written(now, p.partition, p.units);
                        }
                    }
                } else {
                    match signal {
                        Signal::Throttle(severity) => self.controller.on_throttle(now, severity),
                        Signal::Answered => {
                            if !self.controller.on_latency(now, latency, facts.items) {
                                self.controller.on_success();
                            }
                        }
                    }
                }
                let mut again = Vec::with_capacity(unprocessed);
                for (p, fate) in job.items.into_iter().zip(fates) {
                    match fate {
                        Fate::Written => self.finish_item(p),
                        Fate::Rejected(reason) => self.reject_pending(p, &reason),
                        Fate::Again => again.push(p),
                    }
                }
                if !again.is_empty() {
                    self.retry(again, again_attempts, job.token, None, 0);
                }
            }
            Action::Throttled { code, attempts, written_at_failure } => {
                self.stats.throttle_events += 1;
                *self.stats.throttle_codes.entry(code).or_insert(0) += 1;
                self.stats.row(second).throttled_requests += 1;
                let sent = now.checked_sub(latency).unwrap_or(now);
                let keys = job.items.iter().map(|p| p.partition);
                match self.pacer.as_mut() {
                    Some(pacer) => {
                        if !self.hot.as_mut().is_some_and(|hot| hot.on_refused(now, sent, keys)) {
                            pacer.on_throttle(now, sent);
                        }
                    }
                    None => self.controller.on_throttle(now, 1.0),
                }
                self.retry(job.items, attempts, job.token, Some(written_at_failure), 0);
            }
            Action::Retry { attempts, written_at_failure, strikes } => {
                self.retry(job.items, attempts, job.token, written_at_failure, strikes);
            }
            Action::Split { attempts, written_at_failure, backoff } => {
                let mut items = job.items;
                let right = items.split_off(items.len() / 2);
                for half in [items, right] {
                    if backoff {
                        let token = self.new_token();
                        self.retry(half, attempts, token, Some(written_at_failure), 0);
                    } else {
                        let mut j = self.job(half, attempts, now);
                        j.written_at_failure = Some(written_at_failure);
                        self.retries.push(j);
                    }
                }
            }
            Action::Reject { reason } => {
                for p in job.items {
                    self.reject_pending(p, &reason);
                }
            }
            Action::Cancelled { rejected, attempts } => {
                let mut reasons: BTreeMap<usize, String> = rejected.into_iter().collect();
                let mut again = Vec::new();
                for (i, p) in job.items.into_iter().enumerate() {
                    match reasons.remove(&i) {
                        Some(reason) => self.reject_pending(p, &reason),
                        None => again.push(p),
                    }
                }
                if !again.is_empty() {
                    let j = self.job(again, attempts, now);
                    self.retries.push(j);
                }
            }
            Action::Stop { reason } => {
                self.fatal.get_or_insert(reason);
                // Its records stay unacknowledged: below the checkpoint.
                for p in job.items {
                    self.busy.remove(&p.slot);
                }
            }
        }
    }

    /// One message from the reader.
    fn take(&mut self, intake: Intake<S::Item>, input_done: &mut bool) -> Result<(), PipelineError> {
        match intake {
            Intake::Record(rec) => self.intake(rec),
            Intake::Failed(e) => return Err(PipelineError::Input(e)),
            Intake::End => *input_done = true,
        }
        Ok(())
    }

    /// The channel closed before `Intake::End`: the reader died. The load
    /// stops as on a fatal error (requests in flight are answered first),
    /// incomplete, with the checkpoint at the first record not
    /// acknowledged: never past one that was not read.
    fn reader_died(&mut self, input_done: &mut bool) {
        *input_done = true;
        self.fatal.get_or_insert_with(|| READER_DIED.to_string());
    }

    /// Records read but not yet acknowledged may not hold more than
    /// `MAX_HELD_BYTES` (throttled records waiting to be re-sent count, so
    /// memory stays bounded whatever the endpoint does); those not held
    /// aside may not exceed the window plus two rounds of requests at the
    /// current concurrency. Records held aside (runs and hot keys of a
    /// paced load) are bounded by the bytes alone: sorted input reads as
    /// many keys ahead as memory allows.
    fn may_read(&self) -> bool {
        let held_aside = self.hot.as_ref().map_or(0, |h| h.held());
        !self.orderer.is_full()
            && self.outstanding.len().saturating_sub(held_aside)
                < self.opts.tuning.window + 2 * self.controller.allowed() * self.limits.max_items
            && self.held_bytes < MAX_HELD_BYTES
    }

    fn checkpoint(&mut self, complete: bool, end: bool) -> Result<(), PipelineError> {
        // The rejects file first: the checkpoint records its length.
        self.flush_rejects(end)?;
        let Some(path) = &self.opts.checkpoint else { return Ok(()) };
        let (offset, line) = self.outstanding.values().next().map(|v| (v.0, v.1)).unwrap_or(self.next_position);
        Checkpoint {
            input: self.opts.input_name.clone(),
            input_bytes: self.opts.input_bytes,
            table: self.opts.target.clone(),
            offset,
            line,
            rejects_bytes: self.rejects.bytes,
            complete,
            id_key: self.opts.id_key,
        }
        .save(path)
        .map_err(|e| PipelineError::Io(format!("cannot write checkpoint {}: {e}", path.display())))
    }

    fn snapshot(&self, in_flight: usize, total_bytes: Option<u64>) -> Snapshot {
        Snapshot {
            read: self.stats.read,
            written: self.stats.written,
            rejected: self.stats.rejected,
            bytes_read: self.stats.bytes_read,
            bytes_done: self.outstanding.values().next().map(|v| v.0).unwrap_or(self.next_position.0),
            total_bytes,
            units: self.stats.units,
            throttle_events: self.stats.throttle_events,
            unacknowledged: self.outstanding.len() as u64,
            in_flight,
            limit: self.controller.allowed(),
            elapsed: self.clock.now().saturating_duration_since(self.start),
            warnings: self.warnings.clone(),
            notes: self.opts.notes.clone(),
        }
    }

    /// Takes a due retry, or a request's worth of ready records; the flag
    /// says which. `more_coming`: records may still arrive, and a request
    /// is in flight whose answer will call this again, so a partial
    /// request of new records can wait to fill up.
    fn next_job(&mut self, now: Instant, stopping: bool, more_coming: bool) -> Option<(Job<S::Item>, bool)> {
        let (max_items, max_bytes) = (self.limits.max_items, self.limits.max_bytes);
        if let Some(i) = self.retries.iter().position(|j| j.due <= now) {
            let mut job = self.retries.swap_remove(i);
            // Merge other due retries into a full request, so a tail of
            // unprocessed items is not sent a few at a time. Idempotent
            // requests (transactions) keep their own items and token: a
            // retried transaction must be the same request. Jobs being
            // searched for a poison record are not merged either.
            if !self.sink.idempotent_requests() && job.written_at_failure.is_none() {
                let mut bytes: usize = job.items.iter().map(|p| p.bytes).sum();
                while job.items.len() < max_items && bytes < max_bytes {
                    let Some(j) = self.retries.iter().position(|r| r.due <= now && r.written_at_failure.is_none())
                    else {
                        break;
                    };
                    let other = &mut self.retries[j];
                    job.attempts = job.attempts.max(other.attempts);
                    let mut taken = 0;
                    while taken < other.items.len()
                        && job.items.len() + taken < max_items
                        && bytes + other.items[taken].bytes <= max_bytes
                    {
                        bytes += other.items[taken].bytes;
                        taken += 1;
                    }
                    if taken == 0 {
                        break;
                    }
                    if taken == other.items.len() {
                        let other = self.retries.swap_remove(j);
                        job.items.extend(other.items);
                    } else {
                        let take: Vec<Pending<S::Item>> = other.items.drain(..taken).collect();
                        job.items.extend(take);
                    }
                }
            }
            return Some((job, true));
        }
        if stopping || (self.ready.is_empty() && self.hot.as_ref().is_none_or(|h| h.held() == 0)) {
            return None;
        }
        let mut items: Vec<Pending<S::Item>> = Vec::new();
        let mut bytes = 0;
        let mut full = false;
        // Records held aside first, a record of each key in turn (a hot
        // key's only as its pacer affords them), then the ready ones; a
        // ready record whose key holds records, or is paced, joins them.
        if let Some(hot) = self.hot.as_mut() {
            full = hot.fill(&mut items, &mut bytes, (max_items, max_bytes), now, |p| (p.units, p.bytes));
        }
        while !full {
            let Some(p) = self.ready.front() else { break };
            if items.len() == max_items || (!items.is_empty() && bytes + p.bytes > max_bytes) {
                full = true;
                break;
            }
            let Some(p) = self.ready.pop_front() else { break };
            if let Some(hot) = self.hot.as_mut().filter(|h| h.holds(p.partition) || h.paced(p.partition)) {
                hot.hold(p.partition, p, false);
                continue;
            }
            bytes += p.bytes;
            items.push(p);
        }
        if items.is_empty() || (!full && more_coming) {
            for p in items.into_iter().rev() {
                self.send_or_hold(p, false, true);
            }
            return None;
        }
        Some((self.job(items, 0, now), false))
    }

    /// The units of each hot key among `items` (keys paced on their own).
    fn keyed_units(&self, items: &[Pending<S::Item>]) -> Vec<(u128, f64)> {
        let mut keyed = Vec::new();
        if let Some(hot) = &self.hot {
            for p in items.iter().filter(|p| hot.paced(p.partition)) {
                add_units(&mut keyed, p.partition, p.units);
            }
        }
        keyed
    }

    /// How long the hot keys' pacers make a request of `keyed` units wait,
    /// if at all (nothing is taken).
    fn key_wait(&mut self, keyed: &[(u128, f64)], now: Instant) -> Option<Duration> {
        let hot = self.hot.as_mut()?;
        keyed.iter().filter_map(|(key, units)| hot.afford(*key, *units, now).err()).max()
    }

    /// The learned rate, then `--max-wcu`: how long the job must wait, or
    /// None when it may go (its units are then taken from both).
    fn rate_wait(&mut self, units: f64, now: Instant) -> Option<Duration> {
        if let Some(wait) = self.pacer.as_mut().and_then(|p| p.wait(units, now)) {
            return Some(wait);
        }
        self.max_wcu_wait(units, now)
    }

    /// `--max-wcu`: waits until the bucket holds the job's units.
    fn max_wcu_wait(&mut self, units: f64, now: Instant) -> Option<Duration> {
        let rate = self.opts.tuning.max_wcu?;
        let elapsed = now.duration_since(self.rate_updated).as_secs_f64();
        self.rate_tokens = (self.rate_tokens + elapsed * rate).min(rate);
        self.rate_updated = now;
        let need = units.min(rate);
        if self.rate_tokens + 1e-9 >= need {
            self.rate_tokens -= units;
            None
        } else {
            Some(Duration::from_secs_f64((need - self.rate_tokens) / rate))
        }
    }
}

/// Memory a record read and not yet acknowledged takes besides its text
/// and its converted form: its place in the pipeline's queues and in the
/// map of records outstanding (a record of a few bytes costs this much).
fn record_overhead<I>() -> usize {
    std::mem::size_of::<Pending<I>>() + OUTSTANDING_ENTRY_BYTES
}

/// Adds `units` to `key`'s entry in a request's short list of units per
/// key.
fn add_units(keyed: &mut Vec<(u128, f64)>, key: u128, units: f64) {
    match keyed.iter_mut().find(|(k, _)| *k == key) {
        Some((_, u)) => *u += units,
        None => keyed.push((key, units)),
    }
}

/// Runs a load to its end. `records` delivers the input (ending with
/// `Intake::End`); `stop` turns true on SIGINT/SIGTERM; `clock` is the only
/// source of time.
pub async fn run<S: Sink, C: Clock>(
    sink: Arc<S>,
    opts: PipelineOptions,
    mut records: mpsc::Receiver<Intake<S::Item>>,
    total_bytes: Option<u64>,
    progress: watch::Sender<Snapshot>,
    mut stop: watch::Receiver<bool>,
    clock: C,
) -> Result<Outcomes, PipelineError> {
    let now = clock.now();
    let rejects = Rejects::open(opts.rejects.clone(), opts.rejects_keep, opts.rejects_source.clone())?;
    let mut limits = sink.limits();
    limits.max_items = limits.max_items.max(1);
    limits.max_concurrency = limits.max_concurrency.max(1);
    // One seed, printed by the run: the shuffle and the retry jitter each
    // draw from their own fork of it.
    let mut seeded = Rng::new(opts.tuning.seed);
    // Paced: `--concurrency auto` against a target that throttles rather
    // than queues.
    let paced = opts.tuning.concurrency == Concurrency::Auto && !opts.tuning.latency_control;
    let pacer = paced.then(|| Pacer::new(now, limits.capacity_units_per_s));
    let mut p = Pipeline {
        orderer: Orderer::new(opts.tuning.order, opts.tuning.window, seeded.fork()),
        controller: Controller::new(opts.tuning.concurrency, limits.max_concurrency, opts.tuning.latency_control, now),
        rng: seeded.fork(),
        clock: clock.clone(),
        rate_tokens: opts.tuning.max_wcu.unwrap_or(0.0),
        opts,
        sink,
        limits,
        stats: Stats::default(),
        start: now,
        ready: VecDeque::new(),
        busy: HashSet128::default(),
        blocked: HashMap128::default(),
        blocked_count: 0,
        retries: Vec::new(),
        outstanding: BTreeMap::new(),
        held_bytes: 0,
        next_seq: 0,
        next_position: (0, 1),
        rejects,
        rate_updated: now,
        hot: pacer.as_ref().map(|_| HotKeys::new(now)),
        last_released: None,
        pacer,
        last_progress: now,
        warnings: Vec::new(),
        run_key: None,
        run_length: 0,
        run_bytes: 0,
        warned_run: false,
        next_job_id: 0,
        fatal: None,
        refusals: Refusals::default(),
        sizing: Sizing::default(),
    };
    let mut in_flight: JoinSet<(Job<S::Item>, Outcome, Duration)> = JoinSet::new();
    let mut input_done = false;
    let mut stopping = false;
    let mut stopped_at: Option<Instant> = None;
    let mut next_checkpoint = now + CHECKPOINT_EVERY;
    let mut next_progress = now;
    let mut next_launch = now;
    loop {
        let now = clock.now();
        if (*stop.borrow() || p.fatal.is_some()) && !stopping {
            stopping = true;
            stopped_at = Some(now);
            records.close();
        }
        if !stopping
            && now.duration_since(p.last_progress) > p.opts.tuning.stall_timeout
            && p.next_seq > 0
            && !p.outstanding.is_empty()
        {
            p.fatal = Some(format!(
                "no record was acknowledged for {} s; is the endpoint up and the target there?",
                p.opts.tuning.stall_timeout.as_secs()
            ));
            continue;
        }
        if stopped_at.is_some_and(|t| now.duration_since(t) >= STOP_GRACE) && !in_flight.is_empty() {
            // Requests that do not come back after a stop are abandoned:
            // their records were never acknowledged, so they stay below the
            // checkpoint and a resumed load sends them again.
            p.warn(format!(
                "abandoned {} requests still in flight {} s after the stop",
                in_flight.len(),
                STOP_GRACE.as_secs()
            ));
            in_flight.abort_all();
            break;
        }
        // Intake without waiting.
        // A fatal error (or too many rejects) stops reading at once: the
        // records it would read are the resumed load's.
        while !stopping && p.fatal.is_none() && !input_done && p.may_read() {
            match records.try_recv() {
                Ok(intake) => p.take(intake, &mut input_done)?,
                Err(mpsc::error::TryRecvError::Empty) if clock.input_is_instant() => {
                    // Virtual time: the reader's next record comes before
                    // any timer fires (the thread is busy parsing, or about
                    // to say End).
                    std::thread::yield_now();
                }
                Err(mpsc::error::TryRecvError::Empty) => break,
                Err(mpsc::error::TryRecvError::Disconnected) => p.reader_died(&mut input_done),
            }
        }
        p.release(input_done || stopping);
        // Launch.
        let mut rate_sleep: Option<Duration> = None;
        while in_flight.len() < p.controller.allowed() {
            if p.controller.pace > Duration::ZERO {
                if now < next_launch {
                    rate_sleep = Some(next_launch - now);
                    break;
                }
                next_launch = now + p.controller.pace;
            }
            // A partial request of new records waits while more input is
            // coming and an answer is due (so requests go out full).
            let more_coming = !input_done && !in_flight.is_empty() && p.may_read();
            let Some((mut job, was_retry)) = p.next_job(now, stopping, more_coming) else { break };
            let units: f64 = job.items.iter().map(|i| i.units).sum();
            let keyed = p.keyed_units(&job.items);
            if was_retry {
                // A retry of a hot key's items waits for its pacer; the
                // records of other keys go on meanwhile.
                if let Some(wait) = p.key_wait(&keyed, now) {
                    job.due = now + wait;
                    p.retries.push(job);
                    continue;
                }
            }
            if let Some(wait) = p.rate_wait(units, now) {
                // Not yet: put it back where it came from.
                if was_retry {
                    p.retries.push(job);
                } else {
                    for item in job.items.into_iter().rev() {
                        p.send_or_hold(item, false, true);
                    }
                }
                rate_sleep = Some(wait);
                break;
            }
            if let Some(hot) = p.hot.as_mut() {
                for (key, units) in keyed {
                    hot.take(key, units, now);
                }
            }
            let sink = Arc::clone(&p.sink);
            let clock = clock.clone();
            in_flight.spawn(async move {
                let started = clock.now();
                // The job keeps its items for a retry; the sink copies
                // what it needs into its request.
                let outcome = {
                    let items: Vec<&S::Item> = job.items.iter().map(|i| &i.item).collect();
                    sink.write(&items, job.token.as_deref()).await
                };
                (job, outcome, clock.now().saturating_duration_since(started))
            });
        }
        p.stats.peak_concurrency = p.stats.peak_concurrency.max(in_flight.len() as u64);
        let second = p.second(now);
        let flying = in_flight.len() as u64;
        let row = p.stats.row(second);
        row.requests_in_flight = row.requests_in_flight.max(flying);
        // Done?
        let drained = p.orderer.is_empty()
            && p.ready.is_empty()
            && p.blocked.is_empty()
            && p.retries.is_empty()
            && p.hot.as_ref().is_none_or(|h| h.held() == 0);
        if in_flight.is_empty() && (stopping || (input_done && drained)) {
            break;
        }
        if now >= next_checkpoint {
            // The last whole second's rate, for the bound on concurrency.
            if let Some(last) = p.stats.timeline.iter().rev().nth(1) {
                p.sizing.second(last.units);
            }
            p.checkpoint(false, false)?;
            if let Some(hot) = p.hot.as_mut() {
                hot.expire(now);
            }
            next_checkpoint = now + CHECKPOINT_EVERY;
        }
        if now >= next_progress {
            let _ = progress.send(p.snapshot(in_flight.len(), total_bytes));
            next_progress = now + PROGRESS_EVERY;
        }
        // Wait for something to happen.
        let mut wake = next_checkpoint.min(next_progress);
        // A due retry is a reason to wake only when it could go out: with
        // every slot taken (or the rate or pace holding it) the next event
        // is an answer or `rate_sleep`; waking for it would spin (for ever
        // in virtual time, where time stands still while this task runs).
        let can_launch = in_flight.len() < p.controller.allowed() && rate_sleep.is_none();
        if let Some(d) = p.retries.iter().map(|j| j.due).min().filter(|_| can_launch) {
            wake = wake.min(d);
        }
        if let Some(w) = rate_sleep {
            wake = wake.min(now + w);
        }
        // Records held for a hot key's pacer: when they may go (not now:
        // records that may go now and did not wait for an answer).
        let max_items = p.limits.max_items;
        if let Some(due) = p.hot.as_mut().filter(|_| can_launch).and_then(|h| h.next_due(now, max_items, |r| r.units)) {
            if due > now {
                wake = wake.min(due);
            }
        }
        if let Some(t) = stopped_at {
            wake = wake.min(t + STOP_GRACE);
        }
        let can_read = !stopping && p.fatal.is_none() && !input_done && p.may_read();
        tokio::select! {
            done = in_flight.join_next(), if !in_flight.is_empty() => {
                if let Some(Ok((job, outcome, latency))) = done {
                    p.handle(job, outcome, latency);
                }
            }
            rec = records.recv(), if can_read => {
                match rec {
                    Some(intake) => p.take(intake, &mut input_done)?,
                    None => p.reader_died(&mut input_done),
                }
            }
            _ = clock.sleep_until(wake) => {}
            _ = stop.changed(), if !stopping => {}
        }
    }
    if !stopping && p.fatal.is_none() && !p.outstanding.is_empty() {
        // Every record must be accounted for before a load calls itself
        // complete (a request task that failed would leave its records here).
        p.fatal = Some(format!("{} records were never acknowledged; run again with --resume", p.outstanding.len()));
    }
    let complete = !stopping && p.fatal.is_none();
    if let Some(pacer) = &p.pacer {
        p.stats.paced_units_per_s = pacer.rate();
        p.stats.pace_cuts = pacer.cuts();
    }
    if let Some(hot) = &p.hot {
        p.stats.paced_keys = hot.started();
    }
    p.checkpoint(complete, true)?;
    p.stats.finish_timeline();
    let _ = progress.send(p.snapshot(0, total_bytes));
    let ending = match (&p.fatal, stopping) {
        (Some(m), _) => Ending::Aborted(m.clone()),
        (None, true) => Ending::Interrupted,
        (None, false) => Ending::Complete,
    };
    Ok(Outcomes {
        ending,
        elapsed: clock.now().saturating_duration_since(p.start),
        warnings: p.warnings.clone(),
        unacknowledged: p.outstanding.len() as u64,
        column_types: None,
        rejects_written: p.rejects.written(),
        stats: p.stats,
    })
}
