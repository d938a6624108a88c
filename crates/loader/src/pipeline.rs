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
//! - Adaptive: concurrency follows additive increase, multiplicative
//!   decrease, driven by throttling errors and the fraction of items that
//!   come back unprocessed; retries back off exponentially with jitter.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use aws_sdk_dynamodb::types::AttributeValue as Av;
use aws_sdk_dynamodb::Client;
use dynaburst_input::{InputError, Record};
use dynaburst_model::write_units;
use serde_json::json;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::checkpoint::Checkpoint;
use crate::convert::{item_to_sdk, key_hashes, HashMap128, HashSet128, KeyId};
use crate::order::{Order, Orderer};
use crate::report::Stats;
use crate::schema::KeySchema;
use crate::sink::{self, Outcome, WriteMode};

/// Most requests in flight with `--concurrency auto`.
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
/// This many records refused alone with one message, before anything was
/// written, stop the load instead of rejecting them.
pub const SYSTEMIC_REFUSALS: u32 = 20;
/// Retry backoff: base and cap (exponential, equal jitter).
pub const BACKOFF_BASE: Duration = Duration::from_millis(50);
pub const BACKOFF_CAP: Duration = Duration::from_secs(5);
/// Checkpoint and progress intervals.
pub const CHECKPOINT_EVERY: Duration = Duration::from_secs(1);
pub const PROGRESS_EVERY: Duration = Duration::from_millis(200);
/// Records the reader may run ahead of the pipeline.
pub const CHANNEL_RECORDS: usize = 1024;
/// A run of this many records with one partition key draws a warning.
pub const LONG_RUN_WARNING: u64 = 1000;

/// Concurrency: adaptive, or fixed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Concurrency {
    Auto,
    Fixed(usize),
}

/// Everything the pipeline needs besides the client and the input.
#[derive(Clone, Debug)]
pub struct PipelineOptions {
    pub table: String,
    pub schema: KeySchema,
    pub mode: WriteMode,
    /// Items per request (25 for batch, 1 for put, `--transact-size`).
    pub batch_size: usize,
    pub concurrency: Concurrency,
    pub max_wcu: Option<f64>,
    pub order: Order,
    pub window: usize,
    pub seed: u64,
    pub rejects: PathBuf,
    /// Rejects file length to keep (resume); None truncates nothing.
    pub rejects_keep: Option<u64>,
    pub checkpoint: Option<PathBuf>,
    /// The input's name and size, for the checkpoint.
    pub input_name: String,
    pub input_bytes: Option<u64>,
    /// Abort when no record was acknowledged for this long.
    pub stall_timeout: Duration,
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
    pub in_flight: usize,
    pub limit: usize,
    pub elapsed: Duration,
    pub warnings: Vec<String>,
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

/// A record checked and converted off the pipeline's task (on the reader
/// thread), so the per-record work runs beside the requests.
pub struct Prepared {
    line: u64,
    offset: u64,
    end: u64,
    lines: u64,
    raw: String,
    item: Result<(KeyId, usize, u128, u128, HashMap<String, Av>), String>,
}

/// Checks a record against the key schema and converts it for the SDK.
pub fn prepare(rec: Record, schema: &KeySchema) -> Prepared {
    let lines = rec.raw.bytes().filter(|b| *b == b'\n').count() as u64 + 1;
    let item = rec.item.map_err(|e| e.0).and_then(|item| {
        let (key, size) = schema.check(&item)?;
        let (partition, slot) = key_hashes(&key);
        Ok((key, size, partition, slot, item_to_sdk(&item)))
    });
    Prepared { line: rec.line, offset: rec.offset, end: rec.end, lines, raw: rec.raw, item }
}

struct Pending {
    seq: u64,
    line: u64,
    raw: String,
    key: KeyId,
    /// The whole key's hash (`key_hashes`): what per-key ordering waits on.
    slot: u128,
    units: f64,
    item: HashMap<String, Av>,
}

struct Job {
    items: Vec<Pending>,
    attempts: u32,
    due: Instant,
    token: Option<String>,
}

/// Below one request in flight, throttling slows the request rate: a gap
/// between launches that doubles on each throttle (up to the cap) and
/// shrinks on success.
pub const PACE_MIN: Duration = Duration::from_millis(5);
pub const PACE_MAX: Duration = Duration::from_millis(250);

struct Controller {
    limit: f64,
    fixed: bool,
    last_decrease: Option<Instant>,
    /// Gap between launches once concurrency is down to one.
    pace: Duration,
}

impl Controller {
    fn new(c: Concurrency) -> Controller {
        match c {
            Concurrency::Auto => Controller { limit: START_CONCURRENCY, fixed: false, last_decrease: None, pace: Duration::ZERO },
            Concurrency::Fixed(n) => Controller { limit: n.max(1) as f64, fixed: true, last_decrease: None, pace: Duration::ZERO },
        }
    }

    fn allowed(&self) -> usize {
        (self.limit.floor() as usize).max(1)
    }

    fn on_success(&mut self) {
        if self.fixed {
            return;
        }
        if self.pace > Duration::ZERO {
            self.pace = self.pace.mul_f64(DECREASE_FACTOR);
            if self.pace < PACE_MIN {
                self.pace = Duration::ZERO;
            }
            return;
        }
        self.limit = (self.limit + 1.0 / self.limit).min(MAX_CONCURRENCY as f64);
    }

    /// A throttle signal of `severity` from 0 to 1: 1 for a refused
    /// request, the unprocessed fraction for a partial batch (so a batch
    /// that finds one hot partition among several slows the load a little,
    /// not as if the whole table were full).
    fn on_throttle(&mut self, now: Instant, severity: f64) {
        if self.fixed || self.last_decrease.is_some_and(|t| now.duration_since(t) < DECREASE_INTERVAL) {
            return;
        }
        if self.limit <= 1.0 && severity >= 0.5 {
            self.pace = (self.pace * 2).clamp(PACE_MIN, PACE_MAX);
        }
        let factor = 1.0 - (1.0 - DECREASE_FACTOR) * severity.clamp(0.0, 1.0);
        self.limit = (self.limit * factor).max(1.0);
        self.last_decrease = Some(now);
    }
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Equal jitter: half the delay fixed, half random.
    fn backoff(&mut self, attempts: u32) -> Duration {
        let exp = BACKOFF_BASE.as_millis() as u64 * (1u64 << attempts.min(16));
        let capped = exp.min(BACKOFF_CAP.as_millis() as u64).max(1);
        Duration::from_millis(capped / 2 + self.next() % (capped / 2 + 1))
    }
}

struct Pipeline {
    opts: PipelineOptions,
    client: Client,
    stats: Stats,
    start: Instant,
    orderer: Orderer<Pending>,
    ready: VecDeque<Pending>,
    busy: HashSet128,
    blocked: HashMap128<VecDeque<Pending>>,
    blocked_count: usize,
    retries: Vec<Job>,
    outstanding: BTreeMap<u64, (u64, u64)>,
    next_seq: u64,
    next_position: (u64, u64),
    controller: Controller,
    rng: Rng,
    rejects: Option<File>,
    rejects_bytes: u64,
    rate_tokens: f64,
    rate_updated: Instant,
    last_progress: Instant,
    warnings: Vec<String>,
    run_key: Option<u128>,
    run_length: u64,
    warned_run: bool,
    next_job_id: u64,
    fatal: Option<String>,
    same_refusals: (String, u32),
}

impl Pipeline {
    fn second(&self) -> u64 {
        self.start.elapsed().as_secs()
    }

    fn reject(&mut self, seq: u64, line: u64, raw: &str, error: &str) -> Result<(), PipelineError> {
        if self.rejects.is_none() {
            let f = OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.opts.rejects)
                .map_err(|e| PipelineError::Io(format!("cannot open rejects file {}: {e}", self.opts.rejects.display())))?;
            self.rejects = Some(f);
        }
        let line_json = json!({ "line": line, "record": raw, "error": error }).to_string();
        if let Some(f) = self.rejects.as_mut() {
            writeln!(f, "{line_json}")
                .map_err(|e| PipelineError::Io(format!("cannot write rejects file {}: {e}", self.opts.rejects.display())))?;
        }
        self.rejects_bytes += line_json.len() as u64 + 1;
        self.stats.rejected += 1;
        self.outstanding.remove(&seq);
        self.last_progress = Instant::now();
        Ok(())
    }

    fn intake(&mut self, rec: Prepared) -> Result<(), PipelineError> {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.stats.read += 1;
        self.stats.bytes_read += rec.end - rec.offset;
        self.outstanding.insert(seq, (rec.offset, rec.line));
        self.next_position = (rec.end, rec.line + rec.lines);
        let (key, size, partition, slot, item) = match rec.item {
            Ok(i) => i,
            Err(e) => return self.reject(seq, rec.line, &rec.raw, &e),
        };
        // Long runs of one partition key put all the writes on one
        // partition (seed 004): say so once.
        if self.run_key == Some(partition) {
            self.run_length += 1;
            if self.run_length == LONG_RUN_WARNING && !self.warned_run {
                self.warned_run = true;
                let advice = match self.opts.order {
                    Order::AsIs => "use --order interleave or shuffle to spread writes over partitions",
                    _ => "a run longer than --window still reaches one partition at a time: raise --window or use --order shuffle",
                };
                self.warnings.push(format!(
                    "input has runs of {LONG_RUN_WARNING}+ records with one partition key (from line {}): {advice}",
                    rec.line + 1 - LONG_RUN_WARNING
                ));
            }
        } else {
            self.run_key = Some(partition);
            self.run_length = 1;
        }
        let pending = Pending { seq, line: rec.line, raw: rec.raw, key, slot, units: write_units(size), item };
        self.orderer.push(partition, slot, pending);
        Ok(())
    }

    /// Moves records from the window to `ready` (or `blocked` when their
    /// key is in flight).
    fn release(&mut self, input_done: bool) {
        let wants_full_window = self.opts.order != Order::AsIs;
        let target = self.controller.allowed() * self.opts.batch_size * 2;
        while self.ready.len() < target && self.blocked_count < self.opts.window {
            if wants_full_window && !input_done && !self.orderer.is_full() {
                break;
            }
            let Some(p) = self.orderer.pop() else { break };
            if self.busy.contains(&p.slot) {
                self.blocked.entry(p.slot).or_default().push_back(p);
                self.blocked_count += 1;
            } else {
                self.busy.insert(p.slot);
                self.ready.push_back(p);
            }
        }
    }

    fn finish_item(&mut self, p: Pending) {
        self.outstanding.remove(&p.seq);
        self.last_progress = Instant::now();
        match self.blocked.get_mut(&p.slot).and_then(|q| q.pop_front()) {
            Some(next) => {
                self.blocked_count -= 1;
                if self.blocked.get(&p.slot).is_some_and(|q| q.is_empty()) {
                    self.blocked.remove(&p.slot);
                }
                // The key stays busy; its next record goes first.
                self.ready.push_front(next);
            }
            None => {
                self.busy.remove(&p.slot);
            }
        }
    }

    fn new_token(&mut self) -> Option<String> {
        if self.opts.mode != WriteMode::Transact {
            return None;
        }
        self.next_job_id += 1;
        // ClientRequestToken: 36 characters at most (3 + 16 + 1 + 16).
        Some(format!("db-{:016x}-{:016x}", self.opts.seed, self.next_job_id))
    }

    fn retry(&mut self, items: Vec<Pending>, attempts: u32, token: Option<String>) {
        let due = Instant::now() + self.rng.backoff(attempts);
        self.stats.resent_items += items.len() as u64;
        self.retries.push(Job { items, attempts, due, token });
    }

    fn handle(&mut self, job: Job, outcome: Outcome, latency: Duration) -> Result<(), PipelineError> {
        let now = Instant::now();
        let second = self.second();
        self.stats.requests += 1;
        self.stats.record_latency(self.opts.mode.request_name(), latency);
        match outcome {
            Outcome::Written { unprocessed, units } => {
                let total = job.items.len();
                let left: HashSet<usize> = unprocessed.into_iter().collect();
                let written = total - left.len();
                self.stats.units += units;
                self.stats.written += written as u64;
                self.stats.unprocessed_items += left.len() as u64;
                let row = self.stats.row(second);
                row.items_written += written as u64;
                row.units += units;
                row.unprocessed_items += left.len() as u64;
                let fraction = left.len() as f64 / total.max(1) as f64;
                if fraction > UNPROCESSED_SIGNAL {
                    self.controller.on_throttle(now, fraction);
                } else {
                    self.controller.on_success();
                }
                let mut again = Vec::with_capacity(left.len());
                if written > 0 {
                    self.same_refusals.1 = 0;
                }
                for (i, p) in job.items.into_iter().enumerate() {
                    if left.contains(&i) {
                        again.push(p);
                    } else {
                        self.finish_item(p);
                    }
                }
                if !again.is_empty() {
                    let attempts = if written > 0 { 0 } else { job.attempts + 1 };
                    self.retry(again, attempts, job.token);
                }
            }
            Outcome::Throttled { code } => {
                self.stats.throttle_events += 1;
                *self.stats.throttle_codes.entry(code).or_insert(0) += 1;
                self.stats.row(second).throttled_requests += 1;
                self.controller.on_throttle(now, 1.0);
                self.retry(job.items, job.attempts + 1, job.token);
            }
            Outcome::Transient { message } => {
                if job.attempts >= 3 {
                    self.warnings.push(format!("retrying after: {message}"));
                }
                self.retry(job.items, job.attempts + 1, job.token);
            }
            Outcome::Invalid { message } => {
                if job.items.len() == 1 {
                    // The same refusal for record after record, with nothing
                    // written in between, is a problem with the requests
                    // (or the endpoint), not the data: stop rather than
                    // reject the whole input.
                    if self.same_refusals.0 == message {
                        self.same_refusals.1 += 1;
                    } else {
                        self.same_refusals = (message.clone(), 1);
                    }
                    if self.same_refusals.1 >= SYSTEMIC_REFUSALS && self.stats.written == 0 {
                        self.fatal.get_or_insert(format!(
                            "the endpoint refused {SYSTEMIC_REFUSALS} records in a row, each alone, with: {message}"
                        ));
                        for p in job.items {
                            self.busy.remove(&p.slot);
                        }
                        return Ok(());
                    }
                    let p = job.items.into_iter().next().expect("one item");
                    self.reject(p.seq, p.line, &p.raw, &message)?;
                    self.finish_item(p);
                } else {
                    // Split to find the bad records; the good ones are written.
                    let mut items = job.items;
                    let right = items.split_off(items.len() / 2);
                    for half in [items, right] {
                        let token = self.new_token();
                        self.retries.push(Job { items: half, attempts: job.attempts, due: now, token });
                    }
                }
            }
            Outcome::Cancelled { reasons } => {
                let bad: HashMap<usize, (String, String)> = reasons.into_iter().map(|(i, c, m)| (i, (c, m))).collect();
                let mut again = Vec::new();
                for (i, p) in job.items.into_iter().enumerate() {
                    match bad.get(&i) {
                        Some((code, message)) => {
                            self.reject(p.seq, p.line, &p.raw, &format!("{code}: {message}"))?;
                            self.finish_item(p);
                        }
                        None => again.push(p),
                    }
                }
                if !again.is_empty() {
                    let token = self.new_token();
                    self.retries.push(Job { items: again, attempts: job.attempts, due: now, token });
                }
            }
            Outcome::Fatal { message } => {
                self.fatal.get_or_insert(message);
                // Its records stay unacknowledged: below the checkpoint.
                for p in job.items {
                    self.busy.remove(&p.slot);
                }
            }
        }
        Ok(())
    }

    /// Records read but not yet acknowledged may not exceed the window plus
    /// a full round of requests: throttled records waiting to be re-sent
    /// count, so memory stays bounded whatever the endpoint does.
    fn may_read(&self) -> bool {
        !self.orderer.is_full()
            && self.outstanding.len() < self.opts.window + MAX_CONCURRENCY * self.opts.batch_size
    }

    fn checkpoint(&self, complete: bool) -> Result<(), PipelineError> {
        let Some(path) = &self.opts.checkpoint else { return Ok(()) };
        let (offset, line) = self.outstanding.values().next().copied().unwrap_or(self.next_position);
        Checkpoint {
            input: self.opts.input_name.clone(),
            input_bytes: self.opts.input_bytes,
            table: self.opts.table.clone(),
            offset,
            line,
            rejects_bytes: self.rejects_bytes,
            complete,
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
            in_flight,
            limit: self.controller.allowed(),
            elapsed: self.start.elapsed(),
            warnings: self.warnings.clone(),
        }
    }

    /// Takes a due retry, or up to a batch of ready records; the flag says
    /// which.
    fn next_job(&mut self, now: Instant, stopping: bool) -> Option<(Job, bool)> {
        if let Some(i) = self.retries.iter().position(|j| j.due <= now) {
            let mut job = self.retries.swap_remove(i);
            // Merge other due retries into a full request, so a tail of
            // unprocessed items is not sent a few at a time. Transactions
            // keep their own items and token: a retried transaction must be
            // the same request to stay idempotent.
            if self.opts.mode != WriteMode::Transact {
                while job.items.len() < self.opts.batch_size {
                    let Some(j) = self.retries.iter().position(|r| r.due <= now) else { break };
                    let room = self.opts.batch_size - job.items.len();
                    let other = &mut self.retries[j];
                    if other.items.len() <= room {
                        let other = self.retries.swap_remove(j);
                        job.attempts = job.attempts.max(other.attempts);
                        job.items.extend(other.items);
                    } else {
                        let take: Vec<Pending> = other.items.drain(..room).collect();
                        job.attempts = job.attempts.max(other.attempts);
                        job.items.extend(take);
                    }
                }
            }
            return Some((job, true));
        }
        if stopping || self.ready.is_empty() {
            return None;
        }
        let n = self.ready.len().min(self.opts.batch_size);
        let items: Vec<Pending> = self.ready.drain(..n).collect();
        let token = self.new_token();
        Some((Job { items, attempts: 0, due: now, token }, false))
    }

    /// `--max-wcu`: waits until the bucket holds the job's units.
    fn rate_wait(&mut self, units: f64, now: Instant) -> Option<Duration> {
        let rate = self.opts.max_wcu?;
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

/// Runs a load to its end. `records` delivers the input; `stop` turns true
/// on SIGINT/SIGTERM.
pub async fn run(
    client: Client,
    opts: PipelineOptions,
    mut records: mpsc::Receiver<Result<Prepared, InputError>>,
    total_bytes: Option<u64>,
    progress: watch::Sender<Snapshot>,
    mut stop: watch::Receiver<bool>,
) -> Result<Outcomes, PipelineError> {
    let now = Instant::now();
    let mut rejects_bytes = 0;
    if let Some(keep) = opts.rejects_keep {
        // Resume: records after the checkpoint are read again, so their
        // rejects are dropped and written anew.
        if let Ok(f) = OpenOptions::new().write(true).open(&opts.rejects) {
            f.set_len(keep).map_err(|e| PipelineError::Io(format!("cannot trim {}: {e}", opts.rejects.display())))?;
        }
        rejects_bytes = keep;
    }
    let mut p = Pipeline {
        orderer: Orderer::new(opts.order, opts.window, opts.seed),
        controller: Controller::new(opts.concurrency),
        rng: Rng(opts.seed | 1),
        rate_tokens: opts.max_wcu.unwrap_or(0.0),
        opts,
        client,
        stats: Stats::default(),
        start: now,
        ready: VecDeque::new(),
        busy: HashSet128::default(),
        blocked: HashMap128::default(),
        blocked_count: 0,
        retries: Vec::new(),
        outstanding: BTreeMap::new(),
        next_seq: 0,
        next_position: (0, 1),
        rejects: None,
        rejects_bytes,
        rate_updated: now,
        last_progress: now,
        warnings: Vec::new(),
        run_key: None,
        run_length: 0,
        warned_run: false,
        next_job_id: 0,
        fatal: None,
        same_refusals: (String::new(), 0),
    };
    let mut in_flight: JoinSet<(Job, Outcome, Duration)> = JoinSet::new();
    let mut input_done = false;
    let mut stopping = false;
    let mut next_checkpoint = now + CHECKPOINT_EVERY;
    let mut next_progress = now;
    let mut next_launch = now;
    loop {
        let now = Instant::now();
        if *stop.borrow() && !stopping {
            stopping = true;
            records.close();
        }
        if p.fatal.is_some() && !stopping {
            stopping = true;
            records.close();
        }
        if !stopping && now.duration_since(p.last_progress) > p.opts.stall_timeout && p.next_seq > 0 && !p.outstanding.is_empty() {
            p.fatal = Some(format!(
                "no record was acknowledged for {} s; is the endpoint up and the table there?",
                p.opts.stall_timeout.as_secs()
            ));
            continue;
        }
        // Intake without waiting.
        while !stopping && !input_done && p.may_read() {
            match records.try_recv() {
                Ok(Ok(rec)) => p.intake(rec)?,
                Ok(Err(e)) => return Err(PipelineError::Input(e)),
                Err(mpsc::error::TryRecvError::Empty) => break,
                Err(mpsc::error::TryRecvError::Disconnected) => input_done = true,
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
            let Some((job, was_retry)) = p.next_job(now, stopping) else { break };
            let units: f64 = job.items.iter().map(|i| i.units).sum();
            if let Some(wait) = p.rate_wait(units, now) {
                // Not yet: put it back where it came from.
                if was_retry {
                    p.retries.push(job);
                } else {
                    for item in job.items.into_iter().rev() {
                        p.ready.push_front(item);
                    }
                }
                rate_sleep = Some(wait);
                break;
            }
            let client = p.client.clone();
            let table = p.opts.table.clone();
            let schema = p.opts.schema.clone();
            let mode = p.opts.mode;
            in_flight.spawn(async move {
                let started = Instant::now();
                // The job keeps its items for a retry; the request copies
                // each once, into the SDK's request.
                let outcome = {
                    let items: Vec<(&KeyId, &HashMap<String, Av>)> = job.items.iter().map(|i| (&i.key, &i.item)).collect();
                    sink::write(&client, &table, &schema, mode, &items, job.token.as_deref()).await
                };
                (job, outcome, started.elapsed())
            });
        }
        p.stats.peak_concurrency = p.stats.peak_concurrency.max(in_flight.len() as u64);
        let second = p.second();
        let flying = in_flight.len() as u64;
        let row = p.stats.row(second);
        row.requests_in_flight = row.requests_in_flight.max(flying);
        // Done?
        let drained = p.orderer.is_empty() && p.ready.is_empty() && p.blocked.is_empty() && p.retries.is_empty();
        if in_flight.is_empty() && (stopping || (input_done && drained)) {
            break;
        }
        if now >= next_checkpoint {
            p.checkpoint(false)?;
            next_checkpoint = now + CHECKPOINT_EVERY;
        }
        if now >= next_progress {
            let _ = progress.send(p.snapshot(in_flight.len(), total_bytes));
            next_progress = now + PROGRESS_EVERY;
        }
        // Wait for something to happen.
        let mut wake = next_checkpoint.min(next_progress);
        if let Some(d) = p.retries.iter().map(|j| j.due).min() {
            wake = wake.min(d);
        }
        if let Some(w) = rate_sleep {
            wake = wake.min(now + w);
        }
        let can_read = !stopping && !input_done && p.may_read();
        tokio::select! {
            done = in_flight.join_next(), if !in_flight.is_empty() => {
                if let Some(Ok((job, outcome, latency))) = done {
                    p.handle(job, outcome, latency)?;
                }
            }
            rec = records.recv(), if can_read => {
                match rec {
                    Some(Ok(r)) => p.intake(r)?,
                    Some(Err(e)) => return Err(PipelineError::Input(e)),
                    None => input_done = true,
                }
            }
            _ = tokio::time::sleep_until(wake) => {}
            _ = stop.changed(), if !stopping => {}
        }
    }
    let complete = !stopping && p.fatal.is_none();
    p.checkpoint(complete)?;
    p.stats.finish_timeline();
    let _ = progress.send(p.snapshot(0, total_bytes));
    let ending = match (&p.fatal, stopping) {
        (Some(m), _) => Ending::Aborted(m.clone()),
        (None, true) => Ending::Interrupted,
        (None, false) => Ending::Complete,
    };
    Ok(Outcomes {
        ending,
        elapsed: p.start.elapsed(),
        warnings: p.warnings.clone(),
        rejects_written: p.rejects.is_some(),
        stats: p.stats,
    })
}
