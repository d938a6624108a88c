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
mod tools;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use dynaburst_input::{InputError, InputSpec, Reader};
use serde_json::{json, Value};
use tokio::sync::{mpsc, watch};

pub use checkpoint::Checkpoint;
pub use convert::{item_to_sdk, to_sdk};
pub use order::Order;
pub use pipeline::{Concurrency, Ending, Snapshot, MAX_CONCURRENCY};
pub use report::{peak_memory_bytes, Prices, Report, SecondRow, PRICE_PER_MILLION_WRU, PRICE_PER_WCU_HOUR};
pub use schema::KeySchema;
pub use sink::{client, describe, Billing, Endpoint, TableError, TableInfo, WriteMode};
pub use tools::{count, purge};

/// Records in the reordering window by default.
pub const DEFAULT_WINDOW: usize = 10_000;
/// Largest `--transact-size`.
pub const MAX_TRANSACT_SIZE: usize = 100;
/// Items in one BatchWriteItem.
pub const BATCH_SIZE: usize = 25;

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

/// Runs a load. `progress` receives snapshots; `stop` turns true on a
/// signal (the load then checkpoints and returns `Ending::Interrupted`).
pub async fn load(
    mut opts: LoadOptions,
    progress: watch::Sender<Snapshot>,
    stop: watch::Receiver<bool>,
) -> Result<LoadResult, LoadError> {
    if opts.mode == WriteMode::Transact && !(1..=MAX_TRANSACT_SIZE).contains(&opts.transact_size) {
        return Err(LoadError::Usage(format!("--transact-size must be 1 to {MAX_TRANSACT_SIZE}")));
    }
    let name = input_name(&opts.input);
    let input_bytes = opts.input.path.as_ref().and_then(|p| std::fs::metadata(p).ok()).map(|m| m.len());
    let checkpoint_path = opts.checkpoint.clone().or_else(|| default_checkpoint(&opts.input));
    let rejects_path = opts.rejects.clone().unwrap_or_else(|| default_rejects(&opts.input));
    let mut rejects_keep = None;
    if let Some(path) = &checkpoint_path {
        match Checkpoint::load(path).map_err(LoadError::Io)? {
            Some(c) if opts.resume => {
                if c.complete {
                    return Err(LoadError::Usage(format!(
                        "the checkpoint {} says this load already finished: nothing to resume (delete it to load again)",
                        path.display()
                    )));
                }
                if c.input != name || c.input_bytes != input_bytes || c.table != opts.table {
                    return Err(LoadError::Usage(format!(
                        "the checkpoint {} belongs to {} ({} bytes) into table {}, not this load: pass --checkpoint for another file",
                        path.display(),
                        c.input,
                        c.input_bytes.map(|b| b.to_string()).unwrap_or_else(|| "?".into()),
                        c.table
                    )));
                }
                opts.input.resume_at = Some((c.offset, c.line));
                rejects_keep = Some(c.rejects_bytes);
            }
            Some(c) if !c.complete => {
                return Err(LoadError::Usage(format!(
                    "an unfinished load left a checkpoint at {} (line {}): pass --resume to continue it, or delete the file to start over",
                    path.display(),
                    c.line
                )));
            }
            None if opts.resume => {
                return Err(LoadError::Usage(format!("--resume: no checkpoint at {}", path.display())));
            }
            _ => {}
        }
    } else if opts.resume {
        return Err(LoadError::Usage("--resume needs --checkpoint when loading from standard input".to_string()));
    }
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
    let reader = Reader::open(opts.input.clone()).map_err(LoadError::Input)?;
    let total_bytes = reader.total_bytes();
    let (tx, rx) = mpsc::channel(pipeline::CHANNEL_RECORDS);
    let schema = info.schema.clone();
    let reader_thread = std::thread::Builder::new()
        .name("dynaburst-reader".into())
        .spawn(move || {
            // Parsing, key checks and conversion happen here, beside the
            // pipeline's task.
            for record in reader {
                if tx.blocking_send(record.map(|r| pipeline::prepare(r, &schema))).is_err() {
                    break;
                }
            }
        })
        .map_err(|e| LoadError::Io(format!("cannot start the reader thread: {e}")))?;
    let batch_size = match opts.mode {
        WriteMode::Batch => BATCH_SIZE,
        WriteMode::Put => 1,
        WriteMode::Transact => opts.transact_size,
    };
    let popts = pipeline::PipelineOptions {
        table: opts.table.clone(),
        schema: info.schema.clone(),
        mode: opts.mode,
        batch_size,
        concurrency: opts.concurrency,
        max_wcu: opts.max_wcu,
        order: opts.order,
        window: opts.window.max(1),
        seed: opts.seed,
        rejects: rejects_path.clone(),
        rejects_keep,
        checkpoint: checkpoint_path.clone(),
        input_name: name.clone(),
        input_bytes,
        stall_timeout: opts.stall_timeout,
    };
    let out = pipeline::run(client, popts, rx, total_bytes, progress, stop).await.map_err(|e| match e {
        pipeline::PipelineError::Input(e) => LoadError::Input(e),
        pipeline::PipelineError::Io(m) => LoadError::Io(m),
    })?;
    // The reader stops at end of input or when the channel closes.
    let _ = reader_thread.join();
    let s = &out.stats;
    let secs = out.elapsed.as_secs_f64().max(1e-3);
    let best_items = s.timeline.iter().map(|r| r.items_written).max().unwrap_or(0);
    let best_units = s.timeline.iter().map(|r| r.units).fold(0.0, f64::max);
    let mean_units = s.units / secs;
    let provisioned_wcu = info.provisioned_wcu.map(|w| w as f64).unwrap_or(mean_units.ceil());
    let (ending, reason) = match &out.ending {
        Ending::Complete => ("complete", Value::Null),
        Ending::Interrupted => ("interrupted", Value::Null),
        Ending::Aborted(m) => ("aborted", json!(m)),
    };
    let report = json!({
        "table": opts.table,
        "endpoint": opts.endpoint.url,
        "input": name,
        "mode": opts.mode.request_name(),
        "order": format!("{:?}", opts.order).to_lowercase(),
        "seed": opts.seed,
        "ending": ending,
        "reason": reason,
        "resumed_from_line": opts.input.resume_at.map(|(_, l)| l),
        "records": { "read": s.read, "written": s.written, "rejected": s.rejected },
        "bytes_read": s.bytes_read,
        "write_units": s.units,
        "duration_s": secs,
        "items_per_s": { "mean": s.written as f64 / secs, "best_second": best_items },
        "units_per_s": { "mean": mean_units, "best_second": best_units },
        "throttle_events": s.throttle_events,
        "throttle_codes": s.throttle_codes,
        "unprocessed_items": s.unprocessed_items,
        "items_resent": s.resent_items,
        "requests": s.requests,
        "latency_ms": s.latency_json(),
        "peak_concurrency": s.peak_concurrency,
        "peak_memory_bytes": peak_memory_bytes(),
        "cost_usd": {
            "on_demand": s.units / 1e6 * opts.prices.per_million_wru,
            "provisioned": provisioned_wcu * secs / 3600.0 * opts.prices.per_wcu_hour,
            "provisioned_wcu": provisioned_wcu,
            "prices": { "per_million_wru": opts.prices.per_million_wru, "per_wcu_hour": opts.prices.per_wcu_hour },
        },
        "rejects_file": if out.rejects_written { json!(rejects_path.display().to_string()) } else { Value::Null },
        "checkpoint_file": checkpoint_path.as_ref().map(|p| p.display().to_string()),
        "warnings": out.warnings,
    });
    Ok(LoadResult {
        ending: out.ending.clone(),
        read: s.read,
        written: s.written,
        rejected: s.rejected,
        rejects_file: out.rejects_written.then_some(rejects_path),
        checkpoint_file: checkpoint_path,
        report,
        timeline: out.stats.timeline.clone(),
    })
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
