//! The DynamoDB target of `dynaburst load`: the AWS SDK client (built
//! once, its retries off), the `DynamoSink`, the table's key schema and the
//! checks each record passes, `count` and `purge`, `dump` (a paced,
//! resumable parallel Scan to a file or an export directory), the bench's typed
//! client, `streams tail` (the DynamoDB Streams SDK), and the one
//! classification of DynamoDB errors (`errors`).
//!
//! Architecture invariant: the only crate that links the AWS SDK (besides
//! the CLI's tests). The pipeline it runs is `dynaburst-loader`'s.

mod bench;
mod convert;
pub mod dump;
pub mod errors;
mod schema;
mod sink;
mod streams;
mod tools;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use dynaburst_input::{InputSpec, Reader, Record};
use dynaburst_loader::{
    load_report, open_session, run_pipeline, Concurrency, Cost, DynamoReport, LoadError, LoadResult, Order, Prices,
    Report, Snapshot, TargetReport, TokioClock, Tuning, UnitRate,
};
use dynaburst_model::ScalarType;
use serde_json::{json, Value};
use tokio::sync::watch;

pub use bench::{BenchClient, BenchError, BenchItem, BENCH_ATTEMPTS, BENCH_BACKOFF};
pub use convert::{from_sdk, item_from_sdk, item_to_sdk, key_from_sdk, to_sdk};
pub use errors::{classify, classify_code, DynamoError, ErrorClass, Unanswered};
pub use schema::{KeySchema, RecordError, SpecError, MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES};
pub use sink::{
    client, create_table, describe, prepare, sdk_config, Billing, DynamoItem, DynamoSink, Endpoint, IndexInfo,
    IndexUnits, TableInfo, WriteMode, BATCH_SIZE, MAX_BATCH_WRITE_BYTES, MAX_TRANSACT_BYTES, MAX_TRANSACT_SIZE,
};
pub use streams::{record_json, tail, TailOptions, MAX_GET_RECORDS};
pub use tools::{count, purge};

/// What `dynaburst load` was asked to do.
#[derive(Clone, Debug)]
pub struct LoadOptions {
    pub input: InputSpec,
    pub table: String,
    pub endpoint: Endpoint,
    /// `--key`: the key schema the user expects; an existing table's must
    /// be the same.
    pub key: Option<KeySchema>,
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
    /// `--max-rejects` (None: the default rule, see `Tuning::max_rejects`).
    pub max_rejects: Option<u64>,
    pub prices: Prices,
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
        return Err(LoadError::Argument(format!("--transact-size must be 1 to {MAX_TRANSACT_SIZE}")));
    }
    let session =
        open_session(opts.input.clone(), &opts.table, opts.checkpoint.clone(), opts.rejects.clone(), opts.resume)?;
    let client = sink::client(&opts.endpoint).await;
    let endpoint = opts.endpoint.name();
    let table_error = |e: DynamoError| LoadError::Table(e.explain(&endpoint));
    let given_key = opts.key.as_ref().or(opts.create.as_ref().map(|(k, _)| k));
    let info = match sink::describe(&client, &opts.table).await {
        Ok(info) => {
            if let Some(k) = given_key {
                if *k != info.schema {
                    return Err(LoadError::Argument(format!(
                        "table {} exists with key {}, not the --key given ({}): drop --key, or load into another table",
                        opts.table, info.schema, k
                    )));
                }
            }
            check_first_records(&session.input, &info.schema)
                .map_err(|m| LoadError::Table(format!("{m}: table {} has key {}", opts.table, info.schema)))?;
            info
        }
        Err(DynamoError::Missing { table: t }) => match &opts.create {
            Some((schema, billing)) => {
                // Before the table exists: a --key that does not fit the
                // records must not create a table nothing can be loaded into.
                check_first_records(&session.input, schema)
                    .map_err(|m| LoadError::Argument(format!("{m}: --key {schema} does not fit this input")))?;
                sink::create_table(&client, &t, schema, *billing).await.map_err(table_error)?;
                sink::describe(&client, &t).await.map_err(table_error)?
            }
            None => {
                return Err(LoadError::Table(format!(
                    "table {t} does not exist: create it, or pass --create-table --key NAME:TYPE[,NAME:TYPE]"
                )))
            }
        },
        Err(e) => return Err(table_error(e)),
    };
    let tuning = Tuning {
        concurrency: opts.concurrency,
        latency_control: false,
        max_wcu: opts.max_wcu,
        order: opts.order,
        window: opts.window,
        seed: opts.seed,
        stall_timeout: opts.stall_timeout,
        max_rejects: opts.max_rejects,
    };
    let index_units = IndexUnits::default();
    let sink = Arc::new(DynamoSink {
        client,
        table: opts.table.clone(),
        schema: info.schema.clone(),
        mode: opts.mode,
        transact_size: opts.transact_size,
        capacity_units_per_s: info.provisioned_wcu.or(info.warm_write_units).map(|w| w as f64),
        index_units: index_units.clone(),
    });
    let schema = info.schema.clone();
    let out =
        run_pipeline(sink, &session, &tuning, move |r: &Record| sink::prepare(r, &schema), progress, stop, TokioClock)
            .await?;
    let s = &out.stats;
    let secs = out.elapsed.as_secs_f64().max(1e-3);
    let best_units = s.timeline.iter().map(|r| r.units).fold(0.0, f64::max);
    let mean_units = s.units / secs;
    let provisioned_wcu = info.provisioned_wcu.map(|w| w as f64).unwrap_or(mean_units.ceil());
    let target = DynamoReport {
        table: opts.table.clone(),
        endpoint: opts.endpoint.url.clone(),
        write_units: s.units,
        index_write_units: index_units.totals(),
        units_per_s: UnitRate { mean: mean_units, best_second: best_units },
        cost_usd: Cost {
            on_demand: s.units / 1e6 * opts.prices.per_million_wru,
            provisioned: provisioned_wcu * secs / 3600.0 * opts.prices.per_wcu_hour,
            provisioned_wcu,
            prices: opts.prices,
        },
    };
    let load = load_report(&session, &tuning, opts.mode.request_name(), &out);
    Ok(LoadResult::new(&out, Report { target: TargetReport::DynamoDb(target), load }))
}

/// Records [`check_first_records`] reads.
pub const KEY_PROBE_RECORDS: usize = 100;

/// Reads the first [`KEY_PROBE_RECORDS`] records (from the resume point)
/// and fails when none of those that parse fits `schema`'s key: a wrong
/// `--key` or table would otherwise reject the whole input record by
/// record. The message says which types the records carry. Standard input
/// cannot be read twice, so it is not probed (the load's `--max-rejects`
/// guard still stops it).
pub fn check_first_records(spec: &InputSpec, schema: &KeySchema) -> Result<(), String> {
    if spec.path.is_none() {
        return Ok(());
    }
    // An unreadable input is reported by the load itself.
    let Ok(reader) = Reader::open(spec.clone()) else { return Ok(()) };
    let mut first_error: Option<(u64, RecordError)> = None;
    let mut seen_types: Vec<HashMap<&'static str, u64>> = vec![HashMap::new(); schema.names().len()];
    let mut parsed = 0;
    for rec in reader.take(KEY_PROBE_RECORDS) {
        let Ok(rec) = rec else { break };
        let Ok(item) = &rec.item else { continue };
        parsed += 1;
        for (name, seen) in schema.names().iter().zip(seen_types.iter_mut()) {
            let ty = item.get(*name).map(|v| v.value_type().descriptor()).unwrap_or("missing");
            *seen.entry(ty).or_insert(0) += 1;
        }
        match schema.check(item) {
            Ok(_) => return Ok(()),
            Err(e @ (RecordError::MissingKey { .. } | RecordError::KeyType { .. })) => {
                first_error.get_or_insert((rec.line, e));
            }
            // Size and emptiness are the record's own problems.
            Err(_) => return Ok(()),
        }
    }
    let Some((line, error)) = first_error else { return Ok(()) };
    let found: Vec<String> = schema
        .names()
        .iter()
        .zip(&seen_types)
        .map(|(name, seen)| {
            let mut types: Vec<(&&str, &u64)> = seen.iter().collect();
            types.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            let types: Vec<String> = types.iter().map(|(t, n)| format!("{t} in {n}")).collect();
            format!("{name} is {}", types.join(", "))
        })
        .collect();
    Err(format!("none of the first {parsed} records fits the key (line {line}: {error}; {})", found.join("; ")))
}

/// `--dry-run`: reads and checks every record, estimates units, cost and
/// time, writes nothing. `schema` comes from `--key` or the table, and
/// `indexes` from the table: each record also pays for its entry in every
/// index it lands in (GSIs on their own capacity, LSIs on the table's), and
/// a GSI's hottest partition key bounds the load like the table's does.
pub fn dry_run(
    spec: InputSpec,
    schema: &KeySchema,
    table_write_capacity: f64,
    indexes: &[IndexInfo],
    prices: Prices,
) -> Result<Value, LoadError> {
    let reader = Reader::open(spec).map_err(LoadError::Input)?;
    let csv_types = reader.column_types().map(|c| c.by_name());
    let (mut read, mut valid, mut units) = (0u64, 0u64, 0.0f64);
    let mut bytes = 0u64;
    let mut per_partition_key: HashMap<dynaburst_model::KeyValue, f64> = HashMap::new();
    let mut per_index: Vec<IndexEstimate> = indexes.iter().map(|_| IndexEstimate::default()).collect();
    let mut problems: Vec<Value> = Vec::new();
    let mut rejected = 0u64;
    for rec in reader {
        let rec = rec.map_err(LoadError::Input)?;
        read += 1;
        let checked = rec.item.map_err(|e| e.0).and_then(|item| {
            let (key, size) = schema.check(&item).map_err(|e| e.to_string())?;
            Ok((key, size, item))
        });
        match checked {
            Ok((key, size, item)) => {
                valid += 1;
                bytes += size as u64;
                let u = dynaburst_model::write_units(size);
                units += u;
                // Bounded: beyond a million distinct keys the hottest key
                // is what matters, and a spread load is not key-bound.
                if per_partition_key.len() < DISTINCT_KEYS_TRACKED || per_partition_key.contains_key(&key.0) {
                    *per_partition_key.entry(key.0).or_insert(0.0) += u;
                }
                for (ix, est) in indexes.iter().zip(per_index.iter_mut()) {
                    est.add(schema, ix, &item);
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
    // LSI entries are written with the item and charged to the table.
    let local_units: f64 = indexes.iter().zip(&per_index).filter(|(ix, _)| !ix.global).map(|(_, e)| e.units).sum();
    // One partition-key value lives on one partition: it cannot take more
    // than 1,000 write units a second, however large the table.
    let mut bounds = vec![
        ((units + local_units) / capacity, "table capacity".to_string()),
        (hottest / PARTITION_WRITE_UNITS, "hottest partition key (1,000 WCU per partition)".to_string()),
    ];
    let mut index_reports = Vec::new();
    let mut index_units = 0.0;
    for (ix, est) in indexes.iter().zip(&per_index) {
        index_units += est.units;
        let hottest_index_key = est.per_key.values().cloned().fold(0.0, f64::max);
        let ix_capacity = ix.provisioned_wcu.or(ix.warm_write_units).unwrap_or(ON_DEMAND_INITIAL_WCU) as f64;
        if ix.global {
            bounds.push((est.units / ix_capacity.max(1.0), format!("index {} capacity", ix.name)));
            bounds.push((
                hottest_index_key / PARTITION_WRITE_UNITS,
                format!("hottest partition key of index {} (1,000 WCU per partition)", ix.name),
            ));
        }
        index_reports.push(json!({
            "name": ix.name,
            "kind": if ix.global { "global" } else { "local" },
            "items": est.items,
            "write_units": est.units,
            "distinct_partition_keys": est.per_key.len(),
            "hottest_partition_key_units": hottest_index_key,
            "write_capacity": if ix.global { json!(ix_capacity) } else { Value::Null },
        }));
    }
    let (seconds, bound_by) = bounds.into_iter().fold((0.0, String::new()), |a, b| if b.0 > a.0 { b } else { a });
    Ok(json!({
        "records": { "read": read, "valid": valid, "rejected": rejected },
        "item_bytes": bytes,
        "write_units": units,
        "index_write_units": index_units,
        "distinct_partition_keys": per_partition_key.len(),
        "hottest_partition_key_units": hottest,
        "table_write_capacity": capacity,
        "indexes": index_reports,
        "estimated_seconds": seconds,
        "estimated_seconds_bound_by": if bound_by.is_empty() { "table capacity".to_string() } else { bound_by },
        "cost_usd": {
            "on_demand": (units + index_units) / 1e6 * prices.per_million_wru,
            "prices": { "per_million_wru": prices.per_million_wru, "per_wcu_hour": prices.per_wcu_hour },
        },
        "problems": problems,
        "csv_types": csv_types,
    }))
}

/// Distinct partition-key values a dry run tracks (per table or index).
const DISTINCT_KEYS_TRACKED: usize = 1_000_000;
/// Write units one partition takes per second (reference A1).
const PARTITION_WRITE_UNITS: f64 = 1000.0;
/// Write units per second a new on-demand table or GSI takes (A19).
const ON_DEMAND_INITIAL_WCU: u64 = 4000;
/// Bytes an index entry adds to its attributes (DynamoDB's per-entry overhead).
const INDEX_ENTRY_OVERHEAD_BYTES: usize = 100;

/// A dry run's running estimate for one index.
#[derive(Default)]
struct IndexEstimate {
    items: u64,
    units: f64,
    per_key: HashMap<Vec<dynaburst_model::KeyValue>, f64>,
}

impl IndexEstimate {
    /// Counts `item`'s entry, if it has one (every key component present,
    /// of its type: an index is sparse).
    fn add(&mut self, table: &KeySchema, ix: &IndexInfo, item: &dynaburst_model::Item) {
        let component = |(name, ty): &(String, ScalarType)| {
            item.get(name).and_then(dynaburst_model::KeyValue::from_attribute).filter(|k| k.key_type() == *ty)
        };
        let Some(partition) = ix.hash.iter().map(component).collect::<Option<Vec<_>>>() else { return };
        if ix.range.iter().map(component).any(|c| c.is_none()) {
            return;
        }
        let keys = table.names();
        let entry: dynaburst_model::Item = item
            .iter()
            .filter(|(n, _)| {
                keys.contains(&n.as_str())
                    || ix.hash.iter().chain(&ix.range).any(|(k, _)| k == *n)
                    || ix.projected.as_ref().is_none_or(|p| p.contains(n))
            })
            .map(|(n, v)| (n.clone(), v.clone()))
            .collect();
        let u = dynaburst_model::write_units(dynaburst_model::item_size(&entry) + INDEX_ENTRY_OVERHEAD_BYTES);
        self.items += 1;
        self.units += u;
        if self.per_key.len() < DISTINCT_KEYS_TRACKED || self.per_key.contains_key(&partition) {
            *self.per_key.entry(partition).or_insert(0.0) += u;
        }
    }
}
