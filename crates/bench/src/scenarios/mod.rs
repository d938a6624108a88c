//! The scenarios, one per seed, and the index trap (after seed 004). Each returns its part of
//! results.json, typed ([`crate::results`]).

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dynaburst_datagen::{generate, Dataset};
use dynaburst_dynamo::{BenchClient, BenchItem, Endpoint, LoadOptions, WriteMode};
use dynaburst_engine::BillingMode as EngineBilling;
use dynaburst_input::{parse_json_line, Compression, Format, InputSpec};
use dynaburst_loader::{Concurrency, LoadReport, LoadResult, Order, Prices, Report};
use dynaburst_model::{AttributeValue, Item, Number, ScalarType};
use serde_json::{json, Value};
use tokio::task::JoinSet;

use crate::error::BenchError;
use crate::results::{
    BurstRow, DocSize, DocSizeRow, Latency, LatencyRow, Lookup, LookupSaturation, LookupStep, MemoryRow,
    ParallelPatterns, PartitionKeys, PartitionLoad, PatternRow, Percentiles, Scenario, SeedDocSize, SplitMark,
    TimelineSecond, WriteApiRow, WriteApis,
};
use crate::sim;

/// Where and how the scenarios run.
pub struct Ctx {
    /// The endpoint with the capacity model on (or the user's endpoint).
    pub modelled_url: String,
    /// The engine behind `modelled_url` when the servers are embedded: the
    /// index trap creates its tables with GSIs there, which the bench's
    /// HTTP client cannot create.
    pub modelled_engine: Option<Arc<dynaburst_engine::Engine>>,
    /// The endpoint with the capacity model off (or the user's endpoint),
    /// for measurements that are about client and server speed.
    pub unlimited_url: String,
    /// True when `--endpoint-url` points elsewhere: nothing is modelled.
    pub external: bool,
    /// Run throttling scenarios over HTTP on the wall clock.
    pub real_time: bool,
    /// Multiplies every scenario's size (1.0 = the seeds' sizes).
    pub scale: f64,
    pub seed: u64,
    /// `--rtt`: milliseconds of network distance the embedded servers add.
    pub rtt_ms: f64,
    pub out_dir: PathBuf,
    /// Progress lines.
    pub say: Arc<dyn Fn(String) + Send + Sync>,
    /// doc-size into MongoDB / DocumentDB at this URI instead of DynamoDB.
    pub target: Option<String>,
    /// doc-size with a target: document counts for the client-memory check
    /// (empty: 100,000 and 1,000,000 scaled as every count is, at least
    /// 10,000 and 100,000).
    pub memory_docs: Vec<u64>,
}

impl Ctx {
    fn n(&self, full: u64, min: u64) -> u64 {
        ((full as f64 * self.scale).round() as u64).max(min)
    }
}

/// Mixed into the seed so lookups draw other numbers than the dataset.
const LOOKUP_SALT: u64 = 0x100c_u64;

/// An error that stops a scenario.
pub type ScenarioError = BenchError;

async fn client(ctx: &Ctx, url: &str) -> BenchClient {
    BenchClient::connect(url, ctx.seed).await
}

fn thread_cpu_seconds() -> f64 {
    // utime + stime of this thread, in clock ticks (100 per second on Linux).
    let Ok(stat) = std::fs::read_to_string("/proc/thread-self/stat") else {
        return 0.0;
    };
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

/// Resets the process's peak resident memory (Linux), so the next reading
/// covers only what follows.
fn reset_peak_memory() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

async fn create_table(
    c: &BenchClient,
    name: &str,
    keys: &[(&str, ScalarType)],
    provisioned: Option<(u64, u64)>,
) -> Result<(), ScenarioError> {
    c.create_table(name, keys, provisioned).await.map_err(|e| BenchError::Scenario(e.to_string()))
}

fn unique(prefix: &str, seed: u64) -> String {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("bench-{prefix}-{seed:x}-{n}")
}

fn dataset_items(dataset: Dataset, count: u64, fields: usize, seed: u64) -> Result<Vec<Item>, ScenarioError> {
    let mut buf = Vec::new();
    generate(dataset, count, fields, seed, &mut buf).map_err(|e| e.to_string())?;
    String::from_utf8_lossy(&buf).lines().map(|l| parse_json_line(l).map_err(|e| BenchError::Scenario(e.0))).collect()
}

/// Sends one BatchWriteItem and re-sends what comes back until all is in.
async fn batch_all(c: &BenchClient, table: &str, items: &[BenchItem]) -> Result<(), ScenarioError> {
    c.batch_all(table, items).await.map_err(|e| BenchError::Scenario(e.to_string()))
}

async fn put_one(c: &BenchClient, table: &str, item: BenchItem) -> Result<(), ScenarioError> {
    c.put(table, &item).await.map_err(|e| BenchError::Scenario(e.to_string()))
}

async fn transact(c: &BenchClient, table: &str, items: &[BenchItem]) -> Result<(), ScenarioError> {
    c.transact(table, items).await.map_err(|e| BenchError::Scenario(e.to_string()))
}

async fn run_loader(
    ctx: &Ctx,
    url: &str,
    path: &Path,
    table: &str,
    concurrency: Concurrency,
    order: Order,
) -> Result<LoadResult, ScenarioError> {
    let (format, _) = dynaburst_input::detect(path);
    let opts = LoadOptions {
        input: InputSpec {
            types: parse_types(format),
            ..InputSpec::file(path, format.unwrap_or(Format::JsonLines), Compression::None)
        },
        table: table.to_string(),
        endpoint: Endpoint { url: Some(url.to_string()), region: Some("us-east-1".into()), profile: None },
        key: None,
        create: None,
        mode: WriteMode::Batch,
        transact_size: 25,
        concurrency,
        max_wcu: None,
        order,
        window: dynaburst_loader::DEFAULT_WINDOW,
        seed: ctx.seed,
        rejects: Some(ctx.out_dir.join(format!(".{table}.rejects.jsonl"))),
        checkpoint: Some(ctx.out_dir.join(format!(".{table}.checkpoint"))),
        resume: false,
        stall_timeout: Duration::from_secs(120),
        max_rejects: None,
        prices: Prices::list(),
    };
    let (tx, _rx) = tokio::sync::watch::channel(Default::default());
    let (_stop_tx, stop) = tokio::sync::watch::channel(false);
    let result = dynaburst_dynamo::load(opts, tx, stop).await.map_err(|e| e.to_string())?;
    let _ = std::fs::remove_file(ctx.out_dir.join(format!(".{table}.checkpoint")));
    let rejected = result.report.load.records.rejected;
    if rejected > 0 || result.ending != dynaburst_loader::Ending::Complete {
        return Err(format!("loading {} into {table}: {:?}, {rejected} rejected", path.display(), result.ending).into());
    }
    Ok(result)
}

fn parse_types(format: Option<Format>) -> dynaburst_input::TypeHints {
    // The ip-ranges CSV: numbers where the key schema needs them.
    if format == Some(Format::Csv) {
        dynaburst_input::parse_type_hints("start_num:N,end_num:N,octet:N,pk:N").unwrap_or_default()
    } else {
        Default::default()
    }
}

/// Percentiles of `v`, which must not be empty.
fn percentiles(mut v: Vec<f64>) -> Percentiles {
    v.sort_by(|a, b| a.total_cmp(b));
    let q = |p: f64| v[((v.len() as f64 * p).ceil() as usize).saturating_sub(1).min(v.len() - 1)];
    Percentiles {
        min_ms: v[0],
        p50_ms: q(0.5),
        p90_ms: q(0.9),
        p95_ms: q(0.95),
        p99_ms: q(0.99),
        max_ms: v[v.len() - 1],
    }
}

mod doc_size;
pub mod index_trap;
mod latency;
mod parallel_patterns;
mod partition_keys;
mod write_apis;

pub use doc_size::{doc_size, doc_size_mongodb};
pub use index_trap::{index_trap, modelled_loads as index_trap_modelled, orders as index_trap_orders};
pub use latency::latency;
pub use parallel_patterns::parallel_patterns;
pub use partition_keys::partition_keys;
pub use write_apis::write_apis;
