//! `dynaburst load`'s target-free part: stream records into any `Sink`,
//! fast, adapting to throttling, losing nothing, resumable after a crash.
//! The session (checkpoint, rejects file), the pipeline, per-key ordering,
//! the report and its schema.
//!
//! Architecture invariant: no target's client library here (the AWS SDK
//! is `dynaburst-dynamo`'s, the MongoDB driver `dynaburst-mongo`'s), and no
//! clock but the `Clock` the pipeline is given.

mod checkpoint;
mod clock;
mod keys;
mod order;
mod pipeline;
mod report;
mod target;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use dynaburst_input::{describe_column_types, InputError, InputSpec, Reader, Record};
use tokio::sync::{mpsc, watch};

pub use checkpoint::{Checkpoint, CheckpointError, CHECKPOINT_VERSION};
pub use clock::{Clock, TokioClock, VirtualClock};
pub use keys::{key_hashes, HashMap128, HashSet128, KeyId, U128Hasher};
pub use order::Order;
pub use pipeline::{
    concurrency_bound, decide, Action, Concurrency, Controller, Decision, Ending, Fate, JobFacts, LoadFacts, Outcomes,
    Refusals, Signal, Snapshot, Tuning, BACKOFF, CAPACITY_HEADROOM, DEFAULT_MAX_REJECTS_FLOOR, DEFAULT_REJECTED_SHARE,
    IN_FLIGHT_MEMORY_SHARE, MAX_CONCURRENCY, MAX_HELD_BYTES, MIN_CONCURRENCY_BOUND, POISON_ATTEMPTS, POISON_RESPLIT,
    READER_DIED, RUNS_HELD_FOR_SPREAD, SYSTEMIC_REFUSALS,
};
pub use report::{
    peak_memory_bytes, write_timeline, Cost, DynamoReport, EndingName, ItemRate, LatencySummary, LoadReport,
    MongoReport, MongoServerReport, Prices, Records, Report, ReportError, SecondRow, TargetReport, UnitRate,
    PRICE_PER_MILLION_WRU, PRICE_PER_WCU_HOUR,
};
pub use target::{Limits, Outcome, Sink, SinkItem};

/// Records in the reordering window by default.
pub const DEFAULT_WINDOW: usize = 10_000;

/// Why a load could not run.
#[derive(Debug)]
pub enum LoadError {
    /// The options do not fit the state (an unfinished checkpoint, ...):
    /// the message says what to do.
    Usage(String),
    /// An option is wrong for this input or target (a `--key` that does
    /// not fit the records or the table, ...): a command-line mistake, exit
    /// status 64 like every usage error.
    Argument(String),
    /// The target (table, collection) is missing or cannot be used.
    Table(String),
    Input(InputError),
    Checkpoint(CheckpointError),
    Io(String),
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Usage(m) | LoadError::Argument(m) | LoadError::Table(m) | LoadError::Io(m) => f.write_str(m),
            LoadError::Input(e) => write!(f, "{e}"),
            LoadError::Checkpoint(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for LoadError {}

/// What a load did: how it ended (with an abort's message), its report
/// (records, files, rates: schema in README.md, "Load report", and
/// `report.rs`) and its per-second timeline.
pub struct LoadResult {
    pub ending: Ending,
    pub report: Report,
    pub timeline: Vec<SecondRow>,
}

fn input_name(spec: &InputSpec) -> String {
    spec.path.as_ref().map(|p| p.display().to_string()).unwrap_or_else(|| "-".to_string())
}

fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// The default checkpoint path: beside the input (none for stdin).
pub fn default_checkpoint(spec: &InputSpec) -> Option<PathBuf> {
    let base = spec.path.as_ref()?;
    Some(match spec.shard {
        Some((i, n)) => sibling(base, &format!(".shard-{i}-of-{n}.dynaburst-checkpoint")),
        None => sibling(base, ".dynaburst-checkpoint"),
    })
}

/// The default rejects path: beside the input, or in the working
/// directory for stdin.
pub fn default_rejects(spec: &InputSpec) -> PathBuf {
    match (&spec.path, spec.shard) {
        (Some(p), Some((i, n))) => sibling(p, &format!(".shard-{i}-of-{n}.rejects.jsonl")),
        (Some(p), None) => sibling(p, ".rejects.jsonl"),
        (None, _) => PathBuf::from("dynaburst-rejects.jsonl"),
    }
}

/// Where a load keeps its state, checked against any checkpoint before it
/// starts. Shared by every target.
#[derive(Clone, Debug)]
pub struct Session {
    /// The input, positioned at the checkpoint when resuming.
    pub input: InputSpec,
    pub input_name: String,
    pub input_bytes: Option<u64>,
    /// The target's name as the checkpoint records it.
    pub target: String,
    pub checkpoint: Option<PathBuf>,
    pub rejects: PathBuf,
    /// Rejects-file length to keep when resuming.
    pub rejects_keep: Option<u64>,
    /// The key generated ids come from: the checkpoint's when resuming; a
    /// target that generates ids sets it otherwise, and it is saved with
    /// every checkpoint.
    pub id_key: Option<u64>,
}

/// Opens a load's session: reads the checkpoint, refuses to start over an
/// unfinished load unless resuming, and positions the input.
pub fn open_session(
    mut input: InputSpec,
    target: &str,
    checkpoint: Option<PathBuf>,
    rejects: Option<PathBuf>,
    resume: bool,
) -> Result<Session, LoadError> {
    let name = input_name(&input);
    let input_bytes = input.path.as_ref().and_then(|p| std::fs::metadata(p).ok()).map(|m| m.len());
    let checkpoint_path = checkpoint.or_else(|| default_checkpoint(&input));
    let rejects_path = rejects.unwrap_or_else(|| default_rejects(&input));
    // A new load starts a new rejects file: never the input itself (loading
    // a rejects file with `--rejects` naming it would erase it).
    if let (Some(i), Ok(r)) = (input.path.as_ref().and_then(|p| p.canonicalize().ok()), rejects_path.canonicalize()) {
        if i == r {
            return Err(LoadError::Argument(format!(
                "--rejects {} is the input: rejects go to another file",
                rejects_path.display()
            )));
        }
    }
    let mut rejects_keep = None;
    let mut id_key = None;
    if let Some(path) = &checkpoint_path {
        match Checkpoint::load(path).map_err(LoadError::Checkpoint)? {
            Some(c) if resume => {
                if c.complete {
                    return Err(LoadError::Usage(format!(
                        "the checkpoint {} says this load already finished: nothing to resume (delete it to load again)",
                        path.display()
                    )));
                }
                if c.input != name || c.input_bytes != input_bytes || c.table != target {
                    return Err(LoadError::Usage(format!(
                        "the checkpoint {} belongs to {} ({} bytes) into {}, not this load: pass --checkpoint for another file",
                        path.display(),
                        c.input,
                        c.input_bytes.map(|b| b.to_string()).unwrap_or_else(|| "?".into()),
                        c.table
                    )));
                }
                input.resume_at = Some((c.offset, c.line));
                rejects_keep = Some(c.rejects_bytes);
                id_key = c.id_key;
            }
            Some(c) if !c.complete => {
                return Err(LoadError::Usage(format!(
                    "an unfinished load left a checkpoint at {} (line {}): pass --resume to continue it, or delete the file to start over",
                    path.display(),
                    c.line
                )));
            }
            None if resume => {
                return Err(LoadError::Usage(format!("--resume: no checkpoint at {}", path.display())));
            }
            _ => {}
        }
    } else if resume {
        return Err(LoadError::Usage("--resume needs --checkpoint when loading from standard input".to_string()));
    }
    Ok(Session {
        input,
        input_name: name,
        input_bytes,
        target: target.to_string(),
        checkpoint: checkpoint_path,
        rejects: rejects_path,
        rejects_keep,
        id_key,
    })
}

/// Reads the session's input on its own thread, converting each record
/// with `convert` there, and runs the pipeline into `sink` to its end on
/// `clock` ([`TokioClock`] for real loads, virtual time in tests and
/// simulations).
///
/// A reader that fails (an error, or a panic in parsing or in `convert`)
/// ends the load `Aborted`, never `Complete`: the reader says `End` only
/// after the last record, and the checkpoint never passes a record that
/// was not read.
pub async fn run_pipeline<S, F, C>(
    sink: Arc<S>,
    session: &Session,
    tuning: &Tuning,
    convert: F,
    progress: watch::Sender<Snapshot>,
    stop: watch::Receiver<bool>,
    clock: C,
) -> Result<Outcomes, LoadError>
where
    S: Sink,
    F: Fn(&Record) -> Result<SinkItem<S::Item>, String> + Send + 'static,
    C: Clock,
{
    run_pipeline_reading(sink, session, tuning, convert, progress, stop, clock, ReadOn::Thread).await
}

/// Where the input is read and converted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadOn {
    /// Its own thread, beside the pipeline's task: a real load.
    Thread,
    /// A task on the pipeline's own runtime: a simulation on a
    /// current-thread runtime whose virtual time advances only when every
    /// task waits. Reading then takes no virtual time, and time never runs
    /// ahead while a record is being parsed, as it would while the
    /// pipeline waited on a reader thread.
    Task,
}

/// [`run_pipeline`], with the input read where `read_on` says.
#[allow(clippy::too_many_arguments)]
pub async fn run_pipeline_reading<S, F, C>(
    sink: Arc<S>,
    session: &Session,
    tuning: &Tuning,
    convert: F,
    progress: watch::Sender<Snapshot>,
    stop: watch::Receiver<bool>,
    clock: C,
    read_on: ReadOn,
) -> Result<Outcomes, LoadError>
where
    S: Sink,
    F: Fn(&Record) -> Result<SinkItem<S::Item>, String> + Send + 'static,
    C: Clock,
{
    let reader = Reader::open(session.input.clone()).map_err(LoadError::Input)?;
    let total_bytes = reader.total_bytes();
    let column_types = reader.column_types().filter(|c| !c.columns.is_empty()).cloned();
    let rejects_source = reader.record_source().fields();
    let (tx, rx) = mpsc::channel(pipeline::CHANNEL_RECORDS);
    let prepare = move |record: Result<Record, InputError>| match record {
        Ok(r) => pipeline::Intake::Record(pipeline::Prepared::new(r, &convert)),
        Err(e) => pipeline::Intake::Failed(e),
    };
    let reader_thread = match read_on {
        ReadOn::Thread => ReaderHandle::Thread(
            std::thread::Builder::new()
                .name("dynaburst-reader".into())
                .spawn(move || {
                    // Parsing, checks and conversion happen here, beside the
                    // pipeline's task.
                    for record in reader {
                        if tx.blocking_send(prepare(record)).is_err() {
                            return;
                        }
                    }
                    let _ = tx.blocking_send(pipeline::Intake::End);
                })
                .map_err(|e| LoadError::Io(format!("cannot start the reader thread: {e}")))?,
        ),
        ReadOn::Task => ReaderHandle::Task(tokio::spawn(async move {
            for record in reader {
                if tx.send(prepare(record)).await.is_err() {
                    return;
                }
            }
            let _ = tx.send(pipeline::Intake::End).await;
        })),
    };
    let popts = pipeline::PipelineOptions {
        target: session.target.clone(),
        tuning: Tuning { window: tuning.window.max(1), ..tuning.clone() },
        rejects: session.rejects.clone(),
        rejects_keep: session.rejects_keep,
        rejects_source,
        checkpoint: session.checkpoint.clone(),
        input_name: session.input_name.clone(),
        input_bytes: session.input_bytes,
        id_key: session.id_key,
        notes: column_types.iter().map(describe_column_types).collect(),
    };
    let out = pipeline::run(sink, popts, rx, total_bytes, progress, stop, clock).await;
    // The pipeline has dropped its end of the channel: the reader is done
    // or stops at its next record.
    let joined = match reader_thread {
        ReaderHandle::Thread(t) => t.join(),
        ReaderHandle::Task(t) => t.await.map_err(|e| match e.try_into_panic() {
            Ok(panic) => panic,
            Err(e) => Box::new(e.to_string()),
        }),
    };
    let mut out = out.map_err(|e| match e {
        pipeline::PipelineError::Input(e) => LoadError::Input(e),
        pipeline::PipelineError::Io(m) => LoadError::Io(m),
    })?;
    out.column_types = column_types;
    if let Err(panic) = joined {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".to_string());
        let reason = format!("{READER_DIED}: {what}");
        out.ending = match out.ending {
            Ending::Aborted(m) if m != READER_DIED => Ending::Aborted(format!("{m}; {reason}")),
            _ => Ending::Aborted(reason),
        };
    }
    Ok(out)
}

/// The reader of [`run_pipeline_reading`], to join at the end.
enum ReaderHandle {
    Thread(std::thread::JoinHandle<()>),
    Task(tokio::task::JoinHandle<()>),
}

/// The report's fields every target shares (schema in README.md, "Load
/// report"); each target adds its own.
pub fn load_report(session: &Session, tuning: &Tuning, mode: &str, out: &Outcomes) -> LoadReport {
    let s = &out.stats;
    let secs = out.elapsed.as_secs_f64().max(1e-3);
    let best_items = s.timeline.iter().map(|r| r.items_written).max().unwrap_or(0);
    let (ending, reason) = match &out.ending {
        Ending::Complete => (EndingName::Complete, None),
        Ending::Interrupted => (EndingName::Interrupted, None),
        Ending::Aborted(m) => (EndingName::Aborted, Some(m.clone())),
    };
    LoadReport {
        input: session.input_name.clone(),
        mode: mode.to_string(),
        order: format!("{:?}", tuning.order).to_lowercase(),
        seed: tuning.seed,
        ending,
        reason,
        resumed_from_line: session.input.resume_at.map(|(_, l)| l),
        records: Records { read: s.read, written: s.written, rejected: s.rejected, unacknowledged: out.unacknowledged },
        bytes_read: s.bytes_read,
        duration_s: secs,
        items_per_s: ItemRate { mean: s.written as f64 / secs, best_second: best_items },
        throttle_events: s.throttle_events,
        throttle_codes: s.throttle_codes.clone(),
        unprocessed_items: s.unprocessed_items,
        partial_requests: s.partial_requests,
        items_resent: s.resent_items,
        paced_units_per_s: s.paced_units_per_s,
        pace_cuts: s.pace_cuts,
        paced_keys: s.paced_keys,
        requests: s.requests,
        latency_ms: s.latency_summary(),
        peak_concurrency: s.peak_concurrency,
        peak_memory_bytes: peak_memory_bytes(),
        rejects_file: out.rejects_written.then(|| session.rejects.display().to_string()),
        checkpoint_file: session.checkpoint.as_ref().map(|p| p.display().to_string()),
        warnings: out.warnings.clone(),
        csv_types: out
            .column_types
            .as_ref()
            .map(|c| c.by_name().into_iter().map(|(name, ty)| (name, ty.to_string())).collect()),
    }
}

impl LoadResult {
    /// A load's result from its pipeline's outcomes and its report.
    pub fn new(out: &Outcomes, report: Report) -> LoadResult {
        LoadResult { ending: out.ending.clone(), report, timeline: out.stats.timeline.clone() }
    }
}
