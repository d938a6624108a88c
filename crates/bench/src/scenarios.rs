//! The five scenarios, one per seed. Each returns its part of
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
    BurstRow, DocSize, DocSizeRow, Latency, LatencyRow, Lookup, MemoryRow, ParallelPatterns, PartitionKeys,
    PartitionLoad, PatternRow, Percentiles, Scenario, SeedDocSize, TimelineSecond, WriteApiRow, WriteApis,
};
use crate::sim;

/// Where and how the scenarios run.
pub struct Ctx {
    /// The endpoint with the capacity model on (or the user's endpoint).
    pub modelled_url: String,
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
    pub out_dir: PathBuf,
    /// Progress lines.
    pub say: Arc<dyn Fn(String) + Send + Sync>,
    /// doc-size into MongoDB / DocumentDB at this URI instead of DynamoDB.
    pub target: Option<String>,
    /// doc-size with a target: document counts for the client-memory check.
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

// ---------------------------------------------------------------- 000

/// Seed 000: 10,000 people by four write APIs.
pub async fn write_apis(ctx: &Ctx) -> Result<Scenario<WriteApis>, ScenarioError> {
    let count = ctx.n(10_000, 100);
    let c = client(ctx, &ctx.modelled_url).await;
    let table = unique("people", ctx.seed);
    create_table(&c, &table, &[("id", ScalarType::S)], None).await?;
    let items: Vec<BenchItem> =
        dataset_items(Dataset::People, count, 0, ctx.seed)?.iter().map(BenchItem::from).collect();
    let published = [
        ("PutItem, serial", 293.38),
        ("BatchWriteItem of 25, serial", 14.45),
        ("PutItem, 25 concurrent", 17.52),
        ("TransactWriteItems of 25, serial", 24.78),
    ];
    let mut rows = Vec::new();
    for (api, seed_wall) in published {
        (ctx.say)(format!("write-apis: {api}, {count} people"));
        c.purge(&table, 4).await.map_err(|e| e.to_string())?;
        reset_peak_memory();
        let cpu0 = thread_cpu_seconds();
        let requests0 = c.requests_sent();
        let t0 = Instant::now();
        match api {
            "PutItem, serial" => {
                for i in &items {
                    put_one(&c, &table, i.clone()).await?;
                }
            }
            "BatchWriteItem of 25, serial" => {
                for chunk in items.chunks(25) {
                    batch_all(&c, &table, chunk).await?;
                }
            }
            "PutItem, 25 concurrent" => {
                for chunk in items.chunks(25) {
                    let mut set = JoinSet::new();
                    for i in chunk {
                        let (c, t, i) = (c.clone(), table.clone(), i.clone());
                        set.spawn(async move { put_one(&c, &t, i).await });
                    }
                    while let Some(r) = set.join_next().await {
                        r.map_err(|e| e.to_string())??;
                    }
                }
            }
            _ => {
                for chunk in items.chunks(25) {
                    transact(&c, &table, chunk).await?;
                }
            }
        }
        let wall = t0.elapsed().as_secs_f64();
        let cpu = thread_cpu_seconds() - cpu0;
        let counted = c.count(&table, 4).await.map_err(|e| BenchError::Scenario(e.to_string()))?;
        rows.push(WriteApiRow {
            api: api.to_string(),
            items: count,
            wall_s: wall,
            cpu_s: cpu,
            peak_memory_bytes: dynaburst_loader::peak_memory_bytes(),
            count_after: counted,
            seed_wall_s: seed_wall,
            requests: Some(c.requests_sent() - requests0),
        });
    }
    Ok(Scenario {
        seed_id: "000".into(),
        title: format!("Write APIs: {count} people into a fresh on-demand table"),
        measured: true,
        explanation: "Measured over HTTP against the embedded server with the AWS SDK for Rust. With --latency-model aws the server answers after seed 003's in-region service times, so each call costs what it costs inside AWS; seed 000 ran the JS SDK from a laptop in Japan, so each of its round trips also carried the distance to ap-northeast-1 (add it with --rtt MS): its serial PutItem paid that 10,000 times, its batches 400 times. CPU time is the client's thread; peak memory is the whole process, client and embedded server.".into(),
        duration_s: None,
        figures: WriteApis { rows },
    })
}

// ---------------------------------------------------------------- 001

fn seed_001(fields: usize, writers: usize) -> Option<SeedDocSize> {
    // Seed 001's table: (fields, processes) -> docs/ms, MB/s.
    let table: &[(usize, usize, f64, f64)] = &[
        (1, 1, 36.0, 1.44),
        (10, 1, 24.2, 7.83),
        (100, 1, 5.23, 17.9),
        (1, 2, 9.09, 30.9),
        (10, 4, 14.0, 47.6),
        (100, 8, 23.4, 79.5),
        (100, 16, 28.9, 98.2),
    ];
    table
        .iter()
        .find(|(f, w, _, _)| *f == fields && *w == writers)
        .map(|&(_, _, docs_per_ms, mb_per_s)| SeedDocSize { docs_per_ms, mb_per_s })
}

/// Seed 001: documents of 1, 10 and 100 fields by 1, 2, 4 and 8 writers,
/// loaded with dynaburst load's pipeline (a writer is a request in flight).
pub async fn doc_size(ctx: &Ctx) -> Result<Scenario<DocSize>, ScenarioError> {
    if let Some(uri) = &ctx.target {
        return doc_size_mongo(ctx, uri).await;
    }
    let per_writer = ctx.n(10_000, 200);
    let mut rows = Vec::new();
    for fields in [1usize, 10, 100] {
        for writers in [1usize, 2, 4, 8] {
            let docs = per_writer * writers as u64;
            (ctx.say)(format!("doc-size: {docs} documents of {fields} fields, {writers} writers"));
            let path = ctx.out_dir.join(format!(".kv-docs-{fields}.jsonl"));
            let mut f = std::io::BufWriter::new(std::fs::File::create(&path).map_err(|e| e.to_string())?);
            generate(Dataset::KvDocs, docs, fields, ctx.seed, &mut f).map_err(|e| e.to_string())?;
            drop(f);
            let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
            let table = unique("docs", ctx.seed);
            let c = client(ctx, &ctx.unlimited_url).await;
            create_table(&c, &table, &[("id", ScalarType::S)], None).await?;
            // The client is `dynaburst load` itself, in its own process, so
            // its peak memory is the client's alone (seed 001's concern).
            let args = ["--table".to_string(), table.clone(), "--endpoint-url".to_string(), ctx.unlimited_url.clone()];
            let report = load_in_child(ctx, &args, &path, &table, writers).await?;
            let _ = std::fs::remove_file(&path);
            let _ = c.delete_table(&table).await;
            let wall = report.duration_s;
            rows.push(doc_size_row(fields, writers, docs, bytes, wall, report.peak_memory_bytes));
        }
    }
    Ok(Scenario {
        seed_id: "001".into(),
        title: "Document size and writer count (DynamoDB target)".into(),
        measured: true,
        explanation: "Seed 001 measured DocumentDB insert_many from a 64-core client, 50,000 documents per process; ours loads DynamoDB BatchWriteItem with dynaburst load's pipeline into the embedded server with the capacity model off, so it measures client and server on this 2-core machine, not a table's capacity. Peak memory is the loader process's own (VmHWM).".into(),
        duration_s: None,
        figures: DocSize { rows, memory: Vec::new(), target: None, server: None },
    })
}

/// One doc-size row: `docs` documents of `fields` fields (`bytes` of
/// input) by `writers` writers in `wall` seconds.
fn doc_size_row(fields: usize, writers: usize, docs: u64, bytes: u64, wall: f64, peak: Option<u64>) -> DocSizeRow {
    DocSizeRow {
        fields: fields as u64,
        writers: writers as u64,
        docs,
        bytes,
        wall_s: wall,
        docs_per_ms: docs as f64 / (wall * 1000.0).max(1e-9),
        bytes_per_s: bytes as f64 / wall.max(1e-9),
        peak_memory_bytes: peak,
        seed: seed_001(fields, writers),
    }
}

/// Documents per insert command in the MongoDB variant (seed 001's
/// insert_many batches).
pub const MONGO_BATCH: usize = 1000;

/// Seed 001 against MongoDB / DocumentDB itself: documents of 1, 10 and 100
/// string fields by 1, 2, 4, 8 and 16 writers, each cell one `dynaburst
/// load --target` in a child process (so its peak memory is the client's
/// own), then the client's peak memory at `--memory-docs` documents, which
/// must not grow with their number (seed 001's client passed 400 GB).
async fn doc_size_mongo(ctx: &Ctx, uri: &str) -> Result<Scenario<DocSize>, ScenarioError> {
    let shown = dynaburst_mongo::redact(uri);
    let database = dynaburst_mongo::database_name(uri, None);
    let (_, server) = dynaburst_mongo::connect(uri, &database).await.map_err(|e| e.to_string())?;
    let per_writer = ctx.n(5_000, 200);
    let mut rows = Vec::new();
    let cell = |fields: usize, writers: usize, docs: u64| {
        let uri = uri.to_string();
        let database = database.clone();
        async move {
            let path = ctx.out_dir.join(format!(".kv-docs-{fields}-{docs}.jsonl"));
            let mut f = std::io::BufWriter::new(std::fs::File::create(&path).map_err(|e| e.to_string())?);
            generate(Dataset::KvDocs, docs, fields, ctx.seed, &mut f).map_err(|e| e.to_string())?;
            drop(f);
            let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
            let collection = unique("docs", ctx.seed);
            let args = vec![
                "--target".to_string(),
                uri.clone(),
                "--collection".to_string(),
                collection.clone(),
                "--batch-size".to_string(),
                MONGO_BATCH.to_string(),
            ];
            let report = load_in_child(ctx, &args, &path, &collection, writers).await;
            let _ = std::fs::remove_file(&path);
            let _ = dynaburst_mongo::drop_collection(&uri, &database, &collection).await;
            let report = report?;
            let wall = report.duration_s;
            let written = report.records.written;
            if written != docs {
                return Err(
                    format!("{docs} documents of {fields} fields by {writers} writers: {written} written").into()
                );
            }
            Ok::<DocSizeRow, ScenarioError>(doc_size_row(fields, writers, docs, bytes, wall, report.peak_memory_bytes))
        }
    };
    for fields in [1usize, 10, 100] {
        for writers in [1usize, 2, 4, 8, 16] {
            let docs = per_writer * writers as u64;
            (ctx.say)(format!("doc-size: {docs} documents of {fields} fields, {writers} writers, into {shown}"));
            rows.push(cell(fields, writers, docs).await?);
        }
    }
    let mut memory = Vec::new();
    for &docs in &ctx.memory_docs {
        (ctx.say)(format!("doc-size: client memory, {docs} documents of 1 field, 4 writers"));
        let row = cell(1, 4, docs).await?;
        memory.push(MemoryRow {
            docs,
            fields: 1,
            writers: 4,
            wall_s: row.wall_s,
            docs_per_ms: row.docs_per_ms,
            peak_memory_bytes: row.peak_memory_bytes,
        });
    }
    Ok(Scenario {
        seed_id: "001".into(),
        title: format!("Document size and writer count ({})", server.product),
        measured: true,
        explanation: format!("Seed 001 measured DocumentDB (db.r5.4xlarge) insert_many from a 64-core client, 50,000 documents per process; ours is dynaburst load --target into {} with {MONGO_BATCH} documents per insert and each writer one command in flight, client and server on this machine. Peak memory is the loader process's own (VmHWM); seed 001's client passed 400 GB at 3.2 million documents.", server.product),
        duration_s: None,
        figures: DocSize { rows, memory, target: Some(shown), server: Some(server.product) },
    })
}

/// Runs `dynaburst load` as a child process (this same executable) with
/// `writers` requests in flight and the target given by `target_args`,
/// and returns its report.
async fn load_in_child(
    ctx: &Ctx,
    target_args: &[String],
    path: &Path,
    name: &str,
    writers: usize,
) -> Result<LoadReport, ScenarioError> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the dynaburst executable: {e}"))?;
    let report = ctx.out_dir.join(format!(".{name}.report.json"));
    let checkpoint = ctx.out_dir.join(format!(".{name}.checkpoint"));
    let out = tokio::process::Command::new(&exe)
        .arg("load")
        .arg(path)
        .args(target_args)
        .args(["--quiet", "--order", "as-is", "--concurrency"])
        .arg(writers.to_string())
        .arg("--seed")
        .arg(ctx.seed.to_string())
        .arg("--report")
        .arg(&report)
        .arg("--checkpoint")
        .arg(&checkpoint)
        .output()
        .await
        .map_err(|e| format!("cannot run {} load: {e}", exe.display()))?;
    let _ = std::fs::remove_file(&checkpoint);
    if !out.status.success() {
        return Err(BenchError::ChildLoad {
            target: name.to_string(),
            message: String::from_utf8_lossy(&out.stderr).into_owned(),
        });
    }
    let text = std::fs::read_to_string(&report).map_err(|e| format!("cannot read {}: {e}", report.display()))?;
    let _ = std::fs::remove_file(&report);
    let value: Value = serde_json::from_str(&text).map_err(|e| format!("bad load report: {e}"))?;
    Report::from_json(&value).map(|r| r.load).map_err(|e| format!("bad load report: {e}").into())
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
            path: Some(path.to_path_buf()),
            format: format.unwrap_or(Format::JsonLines),
            compression: Compression::None,
            types: parse_types(format),
            all_strings: false,
            shard: None,
            resume_at: None,
            raw_json: false,
        },
        table: table.to_string(),
        endpoint: Endpoint { url: Some(url.to_string()), region: Some("us-east-1".into()), profile: None },
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
        prices: Prices::list(),
    };
    let (tx, _rx) = tokio::sync::watch::channel(Default::default());
    let (_stop_tx, stop) = tokio::sync::watch::channel(false);
    let result = dynaburst_dynamo::load(opts, tx, stop).await.map_err(|e| e.to_string())?;
    let _ = std::fs::remove_file(ctx.out_dir.join(format!(".{table}.checkpoint")));
    if result.rejected > 0 || result.ending != dynaburst_loader::Ending::Complete {
        return Err(format!(
            "loading {} into {table}: {:?}, {} rejected",
            path.display(),
            result.ending,
            result.rejected
        )
        .into());
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

// ---------------------------------------------------------------- 002

async fn send_batch(c: &BenchClient, table: &str, items: Vec<BenchItem>) -> Result<(), ScenarioError> {
    batch_all(c, table, &items).await
}

/// Seed 002's table: id and sort, on-demand.
async fn create_books_table(c: &BenchClient, table: &str) -> Result<(), ScenarioError> {
    create_table(c, table, &[("id", ScalarType::S), ("sort", ScalarType::S)], None).await
}

/// Seed 002: six parallel patterns on 1,000 minimal items, then batches
/// fired all at once with and without re-sending UnprocessedItems.
pub async fn parallel_patterns(ctx: &Ctx) -> Result<Scenario<ParallelPatterns>, ScenarioError> {
    let count = ctx.n(1_000, 100);
    let trials = if ctx.scale < 0.5 { 3 } else { 10 };
    let published = [
        ("serial", 619.0),
        ("channel", 71.0),
        ("fork-join", 38.0),
        ("map-reduce", 43.0),
        ("parallel-loop", 146.0),
        ("worker-master", 46.0),
    ];
    let c = client(ctx, &ctx.modelled_url).await;
    let items: Vec<BenchItem> =
        dataset_items(Dataset::Minimal, count, 0, ctx.seed)?.iter().map(BenchItem::from).collect();
    let batches: Vec<Vec<BenchItem>> = items.chunks(25).map(|c| c.to_vec()).collect();
    let mut patterns = Vec::new();
    for (pattern, seed_ms) in published {
        (ctx.say)(format!("parallel-patterns: {pattern}, {count} items x {trials} trials"));
        let mut total = 0.0;
        for _ in 0..trials {
            // A fresh on-demand table per trial, as the seed's runs each
            // wrote into a table with its own capacity.
            let table = unique("books", ctx.seed);
            create_books_table(&c, &table).await?;
            let t0 = Instant::now();
            match pattern {
                "serial" => {
                    for b in &batches {
                        send_batch(&c, &table, b.clone()).await?;
                    }
                }
                "channel" => {
                    let (tx, rx) = tokio::sync::mpsc::channel::<Vec<BenchItem>>(8);
                    let rx = Arc::new(tokio::sync::Mutex::new(rx));
                    let mut set = JoinSet::new();
                    for _ in 0..4 {
                        let (c, t, rx) = (c.clone(), table.clone(), rx.clone());
                        set.spawn(async move {
                            loop {
                                let next = rx.lock().await.recv().await;
                                let Some(b) = next else {
                                    return Ok::<(), ScenarioError>(());
                                };
                                send_batch(&c, &t, b).await?;
                            }
                        });
                    }
                    for b in &batches {
                        tx.send(b.clone()).await.map_err(|e| e.to_string())?;
                    }
                    drop(tx);
                    while let Some(r) = set.join_next().await {
                        r.map_err(|e| e.to_string())??;
                    }
                }
                "fork-join" => {
                    let mut set = JoinSet::new();
                    for b in &batches {
                        let (c, t, b) = (c.clone(), table.clone(), b.clone());
                        set.spawn(async move { send_batch(&c, &t, b).await });
                    }
                    while let Some(r) = set.join_next().await {
                        r.map_err(|e| e.to_string())??;
                    }
                }
                "map-reduce" => {
                    let mut set = JoinSet::new();
                    for part in batches.chunks(batches.len().div_ceil(4).max(1)) {
                        let (c, t, part) = (c.clone(), table.clone(), part.to_vec());
                        set.spawn(async move {
                            let mut n = 0;
                            for b in part {
                                n += b.len();
                                send_batch(&c, &t, b).await?;
                            }
                            Ok::<usize, ScenarioError>(n)
                        });
                    }
                    let mut sum = 0;
                    while let Some(r) = set.join_next().await {
                        sum += r.map_err(|e| e.to_string())??;
                    }
                    if sum != items.len() {
                        return Err(format!("map-reduce counted {sum} of {}", items.len()).into());
                    }
                }
                "parallel-loop" => {
                    // A parallel for over the batches, one lane per core.
                    let lanes = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2);
                    let mut set = JoinSet::new();
                    for lane in 0..lanes {
                        let (c, t) = (c.clone(), table.clone());
                        let mine: Vec<_> = batches.iter().skip(lane).step_by(lanes).cloned().collect();
                        set.spawn(async move {
                            for b in mine {
                                send_batch(&c, &t, b).await?;
                            }
                            Ok::<(), ScenarioError>(())
                        });
                    }
                    while let Some(r) = set.join_next().await {
                        r.map_err(|e| e.to_string())??;
                    }
                }
                _ => {
                    // Worker/master: workers take batches from the master's queue.
                    let queue = Arc::new(Mutex::new(batches.iter().cloned().collect::<VecDeque<_>>()));
                    let mut set = JoinSet::new();
                    for _ in 0..8 {
                        let (c, t, q) = (c.clone(), table.clone(), queue.clone());
                        set.spawn(async move {
                            loop {
                                let next = q.lock().map_err(|e| e.to_string())?.pop_front();
                                let Some(b) = next else {
                                    return Ok::<(), ScenarioError>(());
                                };
                                send_batch(&c, &t, b).await?;
                            }
                        });
                    }
                    while let Some(r) = set.join_next().await {
                        r.map_err(|e| e.to_string())??;
                    }
                }
            }
            total += t0.elapsed().as_secs_f64() * 1000.0;
            let counted = c.count(&table, 2).await.map_err(|e| e.to_string())?;
            if counted != count {
                return Err(format!("{pattern}: {counted} of {count} items in the table").into());
            }
            let _ = c.delete_table(&table).await;
        }
        patterns.push(PatternRow {
            pattern: pattern.to_string(),
            items: count,
            trials,
            mean_ms: total / trials as f64,
            seed_mean_ms: seed_ms,
        });
    }
    let mut burst = Vec::new();
    for full in [10_000u64, 100_000] {
        let modelled = !(ctx.real_time || ctx.external);
        // Modelled bursts cost little, so they keep the seed's sizes.
        let n = if modelled { full } else { ctx.n(full, 1000) };
        (ctx.say)(format!(
            "parallel-patterns: {n} items fired at once at a new on-demand table ({})",
            if modelled { "modelled" } else { "real time" }
        ));
        let items = dataset_items(Dataset::Minimal, n, 0, ctx.seed)?;
        if modelled {
            let e = sim::engine();
            sim::create(&e, "naive", &[("id", ScalarType::S), ("sort", ScalarType::S)], EngineBilling::PayPerRequest)
                .map_err(|e| e.to_string())?;
            let (written, lost) = sim::fire_and_forget(&e, "naive", items.clone());
            burst.push(BurstRow { items: n, loader: NAIVE.into(), modelled: true, written, lost, seconds: 0.0 });
            sim::create(&e, "loader", &[("id", ScalarType::S), ("sort", ScalarType::S)], EngineBilling::PayPerRequest)
                .map_err(|e| e.to_string())?;
            let load = sim::closed_loop(&e, "loader", items, 16, 3_600_000);
            burst.push(BurstRow {
                items: n,
                loader: LOADER.into(),
                modelled: true,
                written: load.written,
                lost: n - load.written,
                seconds: load.elapsed_ms as f64 / 1000.0,
            });
        } else {
            let table = unique("naive", ctx.seed);
            create_books_table(&c, &table).await?;
            let t0 = Instant::now();
            let mut set = JoinSet::new();
            for chunk in items.chunks(25) {
                let (c, t, chunk) = (c.clone(), table.clone(), chunk.to_vec());
                set.spawn(async move {
                    let n = chunk.len() as u64;
                    c.batch_once(&t, &chunk).await.unwrap_or(n)
                });
            }
            let mut lost = 0;
            while let Some(r) = set.join_next().await {
                lost += r.unwrap_or(25);
            }
            burst.push(BurstRow {
                items: n,
                loader: NAIVE.into(),
                modelled: false,
                written: n - lost,
                lost,
                seconds: t0.elapsed().as_secs_f64(),
            });
            let path = ctx.out_dir.join(format!(".minimal-{n}.jsonl"));
            let mut f = std::fs::File::create(&path).map_err(|e| e.to_string())?;
            generate(Dataset::Minimal, n, 0, ctx.seed, &mut f).map_err(|e| e.to_string())?;
            let table = unique("loader", ctx.seed);
            create_books_table(&c, &table).await?;
            let result =
                run_loader(ctx, &ctx.modelled_url, &path, &table, Concurrency::Auto, Order::Interleave).await?;
            let _ = std::fs::remove_file(&path);
            let report = &result.report.load;
            let written = report.records.written;
            burst.push(BurstRow {
                items: n,
                loader: LOADER.into(),
                modelled: false,
                written,
                lost: n - written,
                seconds: report.duration_s,
            });
        }
    }
    Ok(Scenario {
        seed_id: "002".into(),
        title: "Parallel loaders, and what throttling does to them".into(),
        measured: true,
        explanation: "The six patterns are measured over HTTP against the embedded server (capacity model on, a fresh on-demand table per trial) with the AWS SDK for Rust, each re-sending UnprocessedItems; seed 002 ran the same patterns against DynamoDB in ap-northeast-1 from its author's machine, so its times include network round trips. The burst part is modelled in virtual time unless --real-time.".into(),
        duration_s: None,
        figures: ParallelPatterns { patterns, burst },
    })
}

/// The burst's two loaders.
const NAIVE: &str = "naive (ignores UnprocessedItems)";
const LOADER: &str = "dynaburst load";

// ---------------------------------------------------------------- 003

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

/// Seed 003: 4,000 samples of each write configuration.
pub async fn latency(ctx: &Ctx, model_name: &str) -> Result<Scenario<Latency>, ScenarioError> {
    use dynaburst_server::latency::*;
    let samples = ctx.n(4_000, 200) as usize;
    let c = client(ctx, &ctx.unlimited_url).await;
    let table = unique("latency", ctx.seed);
    create_table(&c, &table, &[("id", ScalarType::S)], None).await?;
    let configs: [(&str, usize, bool, Quantiles); 6] = [
        ("PutItem", 1, false, SEED_003_PUT_ITEM),
        ("BatchWrite - 5 items", 5, false, SEED_003_BATCH_WRITE_5),
        ("BatchWrite - 25 items", 25, false, SEED_003_BATCH_WRITE_25),
        ("TransactWrite - 5 items", 5, false, SEED_003_TRANSACT_WRITE_5),
        ("TransactWrite - 25 items", 25, false, SEED_003_TRANSACT_WRITE_25),
        ("TransactWrite - 5 items w/ failure", 5, true, SEED_003_TRANSACT_WRITE_5_FAILURE),
    ];
    let mut rows = Vec::new();
    let lanes = 8usize;
    for (name, items, fail, seed) in configs {
        (ctx.say)(format!("latency: {name}, {samples} samples"));
        let counter = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let mut set = JoinSet::new();
        for lane in 0..lanes {
            let (c, t, counter) = (c.clone(), table.clone(), counter.clone());
            let mine = samples / lanes + usize::from(lane < samples % lanes);
            set.spawn(async move {
                let mut out = Vec::with_capacity(mine);
                for _ in 0..mine {
                    let base = counter.fetch_add(items as u64, std::sync::atomic::Ordering::Relaxed);
                    let item = |k: u64| {
                        Item::from([
                            ("id".to_string(), AttributeValue::S(format!("i{k}"))),
                            ("v".to_string(), AttributeValue::N(Number::from_i64(k as i64))),
                        ])
                    };
                    let t0 = Instant::now();
                    let ok = match (name.starts_with("PutItem"), name.starts_with("BatchWrite"), fail) {
                        (true, _, _) => c.put_once(&t, &item(base)).await,
                        (_, true, _) => {
                            let batch: Vec<Item> = (0..items as u64).map(|k| item(base + k)).collect();
                            c.batch_once(&t, &batch).await.is_some()
                        }
                        (_, _, failing) => {
                            let puts: Vec<Item> =
                                (0..items as u64 - u64::from(failing)).map(|k| item(base + k)).collect();
                            // With `failing`, one action whose condition cannot
                            // hold: the whole transaction is cancelled.
                            let never = AttributeValue::S("never-written".into());
                            let check = failing.then_some(("id", &never));
                            match c.transact_once(&t, &puts, check).await {
                                Ok(written) => written != failing,
                                Err(_) => false,
                            }
                        }
                    };
                    if !ok {
                        return Err(format!("{name}: unexpected response"));
                    }
                    out.push(t0.elapsed().as_secs_f64() * 1000.0);
                }
                Ok::<Vec<f64>, String>(out)
            });
        }
        let mut all = Vec::with_capacity(samples);
        while let Some(r) = set.join_next().await {
            all.extend(r.map_err(|e| e.to_string())??);
        }
        rows.push(LatencyRow {
            operation: name.to_string(),
            samples: samples as u64,
            ours: percentiles(all),
            seed: Some(Percentiles {
                min_ms: seed.min,
                p50_ms: seed.p50,
                p90_ms: seed.p90,
                p95_ms: seed.p95,
                p99_ms: seed.p99,
                max_ms: seed.max,
            }),
        });
    }
    Ok(Scenario {
        seed_id: "003".into(),
        title: format!("Latency of each write API ({samples} samples each)"),
        measured: true,
        explanation: if model_name == "aws" {
            "Measured over HTTP with the server answering after service times fitted to seed 003's percentiles (--latency-model aws), so ours should match the seed's within sampling noise plus this machine's own few tenths of a millisecond; seed 003 measured from Lambda in the same region."
        } else {
            "Measured over HTTP on one machine with no modelled service time (--latency-model none): ours is the local round trip only, while seed 003's figures are DynamoDB's service time plus an in-region network round trip from Lambda. Run with --latency-model aws to compare like with like."
        }
        .into(),
        duration_s: None,
        figures: Latency { rows },
    })
}

// ---------------------------------------------------------------- 004

fn ip_items(count: u64, seed: u64, single_key: bool) -> Result<Vec<Item>, ScenarioError> {
    let mut buf = Vec::new();
    generate(Dataset::IpRanges, count, 0, seed, &mut buf).map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&buf);
    let mut out = Vec::with_capacity(count as usize);
    for line in text.lines().skip(1) {
        let cols: Vec<&str> = line.split(',').collect();
        if cols.len() < 7 {
            continue;
        }
        let num = |s: &str| Number::parse(s).map(AttributeValue::N).map_err(|e| e.to_string());
        let mut item = Item::new();
        item.insert("pk".into(), if single_key { num("0")? } else { num(cols[5])? });
        item.insert("sk".into(), num(cols[3])?);
        item.insert("end".into(), num(cols[4])?);
        item.insert("netblock".into(), AttributeValue::S(cols[0].to_string()));
        item.insert("metadata".into(), AttributeValue::S(cols[6].to_string()));
        out.push(item);
    }
    Ok(out)
}

fn shuffle<T>(v: &mut [T], seed: u64) {
    let mut rng = dynaburst_datagen::Rng::new(seed);
    for i in (1..v.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        v.swap(i, j);
    }
}

fn write_timeline_csv(path: &Path, rows: &[TimelineSecond]) -> Result<(), ScenarioError> {
    let mut s = String::from("second,consumed_write_units,throttled_write_items\n");
    for r in rows {
        // Units as JSON writes them (`1000.0`), as this file always had them.
        let consumed = serde_json::Number::from_f64(r.consumed).map(|n| n.to_string()).unwrap_or_default();
        s.push_str(&format!("{},{consumed},{}\n", r.second, r.throttled));
    }
    std::fs::write(path, s).map_err(BenchError::io("write", path))
}

/// Seed 004: the IP-range dataset under four designs, then the lookup.
pub async fn partition_keys(ctx: &Ctx) -> Result<Scenario<PartitionKeys>, ScenarioError> {
    let modelled = !(ctx.real_time || ctx.external);
    // Modelled loads keep at least 100,000 ranges (~450 per key): with a
    // few dozen records per key, each key fits in a partition's burst and
    // load order stops mattering, which is not what seed 004 is about.
    let count = if modelled { ctx.n(300_000, 100_000) } else { ctx.n(300_000, 5_000) };
    // (name, load, seed's units/s, one key, shuffled, provisioned WCU)
    type Case<'a> = (&'a str, &'a str, u64, bool, bool, Option<u64>);
    let cases: [Case; 4] = [
        ("single-key", "One partition-key value, new on-demand table", 1000, true, false, None),
        ("sorted", "First octet as partition key, sorted, new on-demand table", 1250, false, false, None),
        ("shuffled", "First octet as partition key, shuffled, new on-demand table", 3600, false, true, None),
        ("provisioned", "Shuffled into a table provisioned at 10,000 WCU", 6000, false, true, Some(10_000)),
    ];
    let mut loads = Vec::new();
    for (case, label, seed_rate, single, shuffled, provisioned) in cases {
        (ctx.say)(format!(
            "partition-keys: {label}, {count} ranges ({})",
            if modelled { "modelled" } else { "real time" }
        ));
        let mut items = ip_items(count, ctx.seed, single)?;
        if shuffled {
            shuffle(&mut items, ctx.seed);
        }
        let (rate, seconds, timeline) = if modelled {
            let e = sim::engine();
            let billing = match provisioned {
                Some(w) => EngineBilling::Provisioned { read: 1000, write: w },
                None => EngineBilling::PayPerRequest,
            };
            sim::create(&e, case, &[("pk", ScalarType::N), ("sk", ScalarType::N)], billing)
                .map_err(|e| e.to_string())?;
            // Bounded: at most 10 modelled minutes.
            let load = sim::closed_loop(&e, case, items, 16, 600_000);
            let tl: Vec<TimelineSecond> = load
                .timeline
                .iter()
                .map(|s| TimelineSecond { second: s.second, consumed: s.consumed, throttled: s.throttled })
                .collect();
            (load.mean_rate(), load.elapsed_ms as f64 / 1000.0, tl)
        } else {
            let c = client(ctx, &ctx.modelled_url).await;
            let table = unique(case, ctx.seed);
            create_table(&c, &table, &[("pk", ScalarType::N), ("sk", ScalarType::N)], provisioned.map(|w| (1000, w)))
                .await?;
            let path = ctx.out_dir.join(format!(".{case}.jsonl"));
            let mut f = std::io::BufWriter::new(std::fs::File::create(&path).map_err(|e| e.to_string())?);
            for i in &items {
                use std::io::Write;
                let v: serde_json::Map<String, Value> = i
                    .iter()
                    .map(|(k, v)| {
                        (
                            k.clone(),
                            match v {
                                AttributeValue::N(n) => {
                                    Value::Number(n.to_string().parse().unwrap_or(serde_json::Number::from(0)))
                                }
                                AttributeValue::S(s) => json!(s),
                                _ => Value::Null,
                            },
                        )
                    })
                    .collect();
                writeln!(f, "{}", Value::Object(v)).map_err(|e| e.to_string())?;
            }
            drop(f);
            let result = run_loader(ctx, &ctx.modelled_url, &path, &table, Concurrency::Auto, Order::AsIs).await?;
            let _ = std::fs::remove_file(&path);
            let tl: Vec<TimelineSecond> = result
                .timeline
                .iter()
                .map(|r| TimelineSecond { second: r.second, consumed: r.units, throttled: r.unprocessed_items })
                .collect();
            let units_per_s = match &result.report.target {
                dynaburst_loader::TargetReport::DynamoDb(d) => d.units_per_s.mean,
                dynaburst_loader::TargetReport::MongoDb(_) => 0.0,
            };
            (units_per_s, result.report.load.duration_s, tl)
        };
        let csv = format!("partition-keys-{case}.csv");
        write_timeline_csv(&ctx.out_dir.join(&csv), &timeline)?;
        loads.push(PartitionLoad {
            case: case.to_string(),
            label: label.to_string(),
            modelled,
            items: count,
            seconds,
            rate_units_per_s: rate,
            seed_rate: seed_rate as f64,
            timeline_csv: csv,
            timeline,
        });
    }
    // The lookup, measured over HTTP.
    let lookups = ctx.n(10_000, 500) as usize;
    (ctx.say)(format!("partition-keys: loading {count} ranges for the lookup, then {lookups} lookups"));
    let c = client(ctx, &ctx.unlimited_url).await;
    let table = unique("ipranges", ctx.seed);
    create_table(&c, &table, &[("pk", ScalarType::N), ("sk", ScalarType::N)], None).await?;
    let items = ip_items(count, ctx.seed, false)?;
    let mut set = JoinSet::new();
    for part in items.chunks(items.len().div_ceil(8).max(1)) {
        let (c, t) = (c.clone(), table.clone());
        let part: Vec<BenchItem> = part.iter().map(BenchItem::from).collect();
        set.spawn(async move {
            for chunk in part.chunks(25) {
                batch_all(&c, &t, chunk).await?;
            }
            Ok::<(), ScenarioError>(())
        });
    }
    while let Some(r) = set.join_next().await {
        r.map_err(|e| e.to_string())??;
    }
    // Lookups in 8 lanes (the round trips are independent), each lane
    // drawing its own addresses from the seed.
    let lanes = 8usize;
    let mut set = JoinSet::new();
    for lane in 0..lanes {
        let (c, t) = (c.clone(), table.clone());
        let mine = lookups / lanes + usize::from(lane < lookups % lanes);
        let mut rng = dynaburst_datagen::Rng::new((ctx.seed ^ LOOKUP_SALT).wrapping_add(lane as u64));
        set.spawn(async move {
            let (lo, hi) = (1u64 << 24, 224u64 << 24);
            let mut lat = Vec::with_capacity(mine);
            let mut correct = 0usize;
            for _ in 0..mine {
                let addr = lo + rng.below(hi - lo);
                let t0 = Instant::now();
                let pk = AttributeValue::N(Number::from_i64((addr >> 24) as i64));
                let upto = AttributeValue::N(Number::from_i64(addr as i64));
                let out = c.last_at_most(&t, ("pk", &pk), ("sk", &upto)).await.map_err(|e| e.to_string())?;
                lat.push(t0.elapsed().as_secs_f64() * 1000.0);
                let hit = out.and_then(|i| {
                    let s: u64 = i.get("sk")?.as_n()?.to_string().parse().ok()?;
                    let e: u64 = i.get("end")?.as_n()?.to_string().parse().ok()?;
                    Some(s <= addr && addr <= e)
                });
                if hit == Some(true) {
                    correct += 1;
                }
            }
            Ok::<(Vec<f64>, usize), String>((lat, correct))
        });
    }
    let mut lat = Vec::with_capacity(lookups);
    let mut correct = 0;
    while let Some(r) = set.join_next().await {
        let (l, c) = r.map_err(|e| e.to_string())??;
        lat.extend(l);
        correct += c;
    }
    Ok(Scenario {
        seed_id: "004".into(),
        title: "Partition-key design, load order and capacity mode".into(),
        measured: !modelled,
        explanation: if modelled {
            "The four loads are modelled in virtual time: the engine in-process with the capacity model on, a closed-loop writer of 16 batches of 25 per 10 ms round trip re-sending what comes back unprocessed; seed 004 loaded from Python on EC2 and read its rates off CloudWatch's per-minute sums. The lookup is measured over HTTP."
        } else {
            "The four loads ran over HTTP on the wall clock with dynaburst load (--real-time or an external endpoint); seed 004 read its rates off CloudWatch's per-minute sums."
        }
        .into(),
        duration_s: None,
        figures: PartitionKeys {
            loads,
            lookup: Lookup { samples: lookups as u64, correct: correct as u64, latency_ms: percentiles(lat) },
        },
    })
}
