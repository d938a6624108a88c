//! `dynaburst load`: stream records into a DynamoDB-compatible endpoint,
//! fast, adapting to throttling, losing nothing, resumable after a crash.
//! Also `count` and `purge`, and `--dry-run` estimates.
//!
//! Architecture invariant: the AWS SDK lives here (and in other
//! client-side crates), never on the server side. The loader talks to any
//! endpoint only through the SDK; it never links the engine.

mod checkpoint;
mod convert;
mod order;
mod pipeline;
mod report;
mod schema;
mod sink;
mod target;
mod tools;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use dynaburst_input::{InputError, InputSpec, Reader, Record};
use serde_json::{json, Map, Value};
use tokio::sync::{mpsc, watch};

pub use checkpoint::Checkpoint;
pub use convert::{item_to_sdk, to_sdk, HashMap128, HashSet128};
pub use order::Order;
pub use pipeline::{Concurrency, Ending, Outcomes, Snapshot, Tuning, MAX_CONCURRENCY, MAX_HELD_BYTES};
pub use report::{peak_memory_bytes, Prices, Report, SecondRow, PRICE_PER_MILLION_WRU, PRICE_PER_WCU_HOUR};
pub use schema::KeySchema;
pub use sink::{
    client, describe, Billing, DynamoItem, DynamoSink, Endpoint, TableError, TableInfo, WriteMode, BATCH_SIZE,
    MAX_TRANSACT_SIZE,
};
pub use target::{Limits, Outcome, Sink, SinkItem};
pub use tools::{count, purge};

/// Records in the reordering window by default.
pub const DEFAULT_WINDOW: usize = 10_000;

/// What `dynaburst load` was asked to do.
#[derive(Clone, Debug)]
pub struct LoadOptions {
    pub input: InputSpec,
    pub table: String,
    pub endpoint: Endpoint,
    /// `--create-table`: the key schema and billing to create with.
    pub create: Option<(KeySchema, Billing)>,
    pub mode: WriteMode,
    pub transact_size: usize,
    pub concurrency: Concurrency,
    pub max_wcu: Option<f64>,
    pub order: Order,
    pub window: usize,
    pub seed: u64,
    pub rejects: Option<PathBuf>,
    pub checkpoint: Option<PathBuf>,
    pub resume: bool,
    pub stall_timeout: Duration,
    pub prices: Prices,
}

/// Why a load could not run.
#[derive(Debug)]
pub enum LoadError {
    /// The options do not fit (the message says what to do).
    Usage(String),
    /// The table is missing or cannot be described.
    Table(String),
    Input(InputError),
    Io(String),
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Usage(m) | LoadError::Table(m) | LoadError::Io(m) => f.write_str(m),
            LoadError::Input(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for LoadError {}

/// What a load did.
pub struct LoadResult {
    pub ending: Ending,
    pub read: u64,
    pub written: u64,
    pub rejected: u64,
    /// Where rejected records went (when any were).
    pub rejects_file: Option<PathBuf>,
    pub checkpoint_file: Option<PathBuf>,
    /// The report (schema in README.md, "Load report").
    pub report: Value,
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
    let mut rejects_keep = None;
    let mut id_key = None;
    if let Some(path) = &checkpoint_path {
        match Checkpoint::load(path).map_err(LoadError::Io)? {
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
/// with `convert` there, and runs the pipeline into `sink` to its end.
pub async fn run_pipeline<S, F>(
    sink: Arc<S>,
    session: &Session,
    tuning: &Tuning,
    convert: F,
    progress: watch::Sender<Snapshot>,
    stop: watch::Receiver<bool>,
) -> Result<Outcomes, LoadError>
where
    S: Sink,
    F: Fn(&Record) -> Result<SinkItem<S::Item>, String> + Send + 'static,
{
    let reader = Reader::open(session.input.clone()).map_err(LoadError::Input)?;
    let total_bytes = reader.total_bytes();
    let (tx, rx) = mpsc::channel(pipeline::CHANNEL_RECORDS);
    let reader_thread = std::thread::Builder::new()
        .name("dynaburst-reader".into())
        .spawn(move || {
            // Parsing, checks and conversion happen here, beside the
            // pipeline's task.
            for record in reader {
                if tx.blocking_send(record.map(|r| pipeline::Prepared::new(r, &convert))).is_err() {
                    break;
                }
            }
        })
        .map_err(|e| LoadError::Io(format!("cannot start the reader thread: {e}")))?;
    let popts = pipeline::PipelineOptions {
        target: session.target.clone(),
        tuning: Tuning { window: tuning.window.max(1), ..tuning.clone() },
        rejects: session.rejects.clone(),
        rejects_keep: session.rejects_keep,
        checkpoint: session.checkpoint.clone(),
        input_name: session.input_name.clone(),
        input_bytes: session.input_bytes,
        id_key: session.id_key,
    };
    let out = pipeline::run(sink, popts, rx, total_bytes, progress, stop).await.map_err(|e| match e {
        pipeline::PipelineError::Input(e) => LoadError::Input(e),
        pipeline::PipelineError::Io(m) => LoadError::Io(m),
    })?;
    // The reader stops at end of input or when the channel closes.
    let _ = reader_thread.join();
    Ok(out)
}

/// The report's fields every target shares (schema in README.md, "Load
/// report"); each target adds its own.
pub fn base_report(session: &Session, tuning: &Tuning, mode: &str, out: &Outcomes) -> Map<String, Value> {
    let s = &out.stats;
    let secs = out.elapsed.as_secs_f64().max(1e-3);
    let best_items = s.timeline.iter().map(|r| r.items_written).max().unwrap_or(0);
    let (ending, reason) = match &out.ending {
        Ending::Complete => ("complete", Value::Null),
        Ending::Interrupted => ("interrupted", Value::Null),
        Ending::Aborted(m) => ("aborted", json!(m)),
    };
    let report = json!({
        "input": session.input_name,
        "mode": mode,
        "order": format!("{:?}", tuning.order).to_lowercase(),
        "seed": tuning.seed,
        "ending": ending,
        "reason": reason,
        "resumed_from_line": session.input.resume_at.map(|(_, l)| l),
        "records": { "read": s.read, "written": s.written, "rejected": s.rejected },
        "bytes_read": s.bytes_read,
        "duration_s": secs,
        "items_per_s": { "mean": s.written as f64 / secs, "best_second": best_items },
        "throttle_events": s.throttle_events,
        "throttle_codes": s.throttle_codes,
        "unprocessed_items": s.unprocessed_items,
        "items_resent": s.resent_items,
        "requests": s.requests,
        "latency_ms": s.latency_json(),
        "peak_concurrency": s.peak_concurrency,
        "peak_memory_bytes": peak_memory_bytes(),
        "rejects_file": if out.rejects_written { json!(session.rejects.display().to_string()) } else { Value::Null },
        "checkpoint_file": session.checkpoint.as_ref().map(|p| p.display().to_string()),
        "warnings": out.warnings,
    });
    match report {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

impl LoadResult {
    /// A load's result from its pipeline's outcomes and its report.
    pub fn new(session: &Session, out: &Outcomes, report: Map<String, Value>) -> LoadResult {
        LoadResult {
            ending: out.ending.clone(),
            read: out.stats.read,
            written: out.stats.written,
            rejected: out.stats.rejected,
            rejects_file: out.rejects_written.then(|| session.rejects.clone()),
            checkpoint_file: session.checkpoint.clone(),
            report: Value::Object(report),
            timeline: out.stats.timeline.clone(),
        }
    }
}

/// Runs a load into DynamoDB. `progress` receives snapshots; `stop` turns
/// true on a signal (the load then checkpoints and returns
/// `Ending::Interrupted`).
pub async fn load(
    opts: LoadOptions,
    progress: watch::Sender<Snapshot>,
    stop: watch::Receiver<bool>,
) -> Result<LoadResult, LoadError> {
    if opts.mode == WriteMode::Transact && !(1..=MAX_TRANSACT_SIZE).contains(&opts.transact_size) {
        return Err(LoadError::Usage(format!("--transact-size must be 1 to {MAX_TRANSACT_SIZE}")));
    }
    let session =
        open_session(opts.input.clone(), &opts.table, opts.checkpoint.clone(), opts.rejects.clone(), opts.resume)?;
    let client = sink::client(&opts.endpoint).await;
    let info = match sink::describe(&client, &opts.table).await {
        Ok(info) => info,
        Err(sink::TableError::Missing(t)) => match &opts.create {
            Some((schema, billing)) => {
                sink::create_table(&client, &t, schema, *billing).await.map_err(LoadError::Table)?;
                sink::describe(&client, &t).await.map_err(|e| LoadError::Table(format!("{e:?}")))?
            }
            None => {
                return Err(LoadError::Table(format!(
                    "table {t} does not exist: create it, or pass --create-table --key NAME:TYPE[,NAME:TYPE]"
                )))
            }
        },
        Err(sink::TableError::Other(m)) => return Err(LoadError::Table(m)),
    };
    if let Some((schema, _)) = &opts.create {
        if *schema != info.schema {
            return Err(LoadError::Usage(format!(
                "table {} exists with key {:?}, not the --key given ({:?})",
                opts.table, info.schema, schema
            )));
        }
    }
    let tuning = Tuning {
        concurrency: opts.concurrency,
        latency_control: false,
        max_wcu: opts.max_wcu,
        order: opts.order,
        window: opts.window,
        seed: opts.seed,
        stall_timeout: opts.stall_timeout,
    };
    let sink = Arc::new(DynamoSink {
        client,
        table: opts.table.clone(),
        schema: info.schema.clone(),
        mode: opts.mode,
        transact_size: opts.transact_size,
    });
    let schema = info.schema.clone();
    let out =
        run_pipeline(sink, &session, &tuning, move |r: &Record| sink::prepare(r, &schema), progress, stop).await?;
    let s = &out.stats;
    let secs = out.elapsed.as_secs_f64().max(1e-3);
    let best_units = s.timeline.iter().map(|r| r.units).fold(0.0, f64::max);
    let mean_units = s.units / secs;
    let provisioned_wcu = info.provisioned_wcu.map(|w| w as f64).unwrap_or(mean_units.ceil());
    let mut report = Map::new();
    report.insert("table".into(), json!(opts.table));
    report.insert("endpoint".into(), json!(opts.endpoint.url));
    report.extend(base_report(&session, &tuning, opts.mode.request_name(), &out));
    report.insert("write_units".into(), json!(s.units));
    report.insert("units_per_s".into(), json!({ "mean": mean_units, "best_second": best_units }));
    report.insert(
        "cost_usd".into(),
        json!({
            "on_demand": s.units / 1e6 * opts.prices.per_million_wru,
            "provisioned": provisioned_wcu * secs / 3600.0 * opts.prices.per_wcu_hour,
            "provisioned_wcu": provisioned_wcu,
            "prices": { "per_million_wru": opts.prices.per_million_wru, "per_wcu_hour": opts.prices.per_wcu_hour },
        }),
    );
    Ok(LoadResult::new(&session, &out, report))
}

/// `--dry-run`: reads and checks every record, estimates units, cost and
/// time, writes nothing. `schema` comes from `--key` or the table.
pub fn dry_run(
    spec: InputSpec,
    schema: &KeySchema,
    table_write_capacity: f64,
    prices: Prices,
) -> Result<Value, LoadError> {
    let reader = Reader::open(spec).map_err(LoadError::Input)?;
    let (mut read, mut valid, mut units) = (0u64, 0u64, 0.0f64);
    let mut bytes = 0u64;
    let mut per_partition_key: HashMap<dynaburst_model::KeyValue, f64> = HashMap::new();
    let mut problems: Vec<Value> = Vec::new();
    let mut rejected = 0u64;
    for rec in reader {
        let rec = rec.map_err(LoadError::Input)?;
        read += 1;
        let checked = rec.item.map_err(|e| e.0).and_then(|item| schema.check(&item));
        match checked {
            Ok((key, size)) => {
                valid += 1;
                bytes += size as u64;
                let u = dynaburst_model::write_units(size);
                units += u;
                // Bounded: beyond a million distinct keys the hottest key
                // is what matters, and a spread load is not key-bound.
                if per_partition_key.len() < 1_000_000 || per_partition_key.contains_key(&key.0) {
                    *per_partition_key.entry(key.0).or_insert(0.0) += u;
                }
            }
            Err(e) => {
                rejected += 1;
                if problems.len() < 20 {
                    problems.push(json!({ "line": rec.line, "error": e }));
                }
            }
        }
    }
    let hottest = per_partition_key.values().cloned().fold(0.0, f64::max);
    let capacity = table_write_capacity.max(1.0);
    // One partition-key value lives on one partition: it cannot take more
    // than 1,000 write units a second, however large the table.
    let by_capacity = units / capacity;
    let by_hot_key = hottest / 1000.0;
    Ok(json!({
        "records": { "read": read, "valid": valid, "rejected": rejected },
        "item_bytes": bytes,
        "write_units": units,
        "distinct_partition_keys": per_partition_key.len(),
        "hottest_partition_key_units": hottest,
        "table_write_capacity": capacity,
        "estimated_seconds": by_capacity.max(by_hot_key),
        "estimated_seconds_bound_by": if by_hot_key > by_capacity { "hottest partition key (1,000 WCU per partition)" } else { "table capacity" },
        "cost_usd": {
            "on_demand": units / 1e6 * prices.per_million_wru,
            "prices": { "per_million_wru": prices.per_million_wru, "per_wcu_hour": prices.per_wcu_hour },
        },
        "problems": problems,
    }))
}
