//! Modelled loads: the engine in-process with the capacity model on, the
//! clock modelled, so minutes of throttled load take seconds.
//!
//! The loads are `dynaburst load`'s own pipeline against the engine
//! (`dynaburst_simulate`), each request a 10 ms round trip. The naive
//! writer sends every batch at the same instant and ignores what comes
//! back unprocessed (seed 002).

use std::io::Write;
use std::sync::Arc;

use dynaburst_engine::*;
use dynaburst_model::Item;

/// Modelled round trip of one request.
pub const ROUND_TRIP_MS: u64 = 10;
/// The modelled clock starts here (the table is created at 0).
pub const START_MS: u64 = 1_000;

/// An engine with the capacity model on, DynamoDB's numbers.
pub fn engine() -> Arc<Engine> {
    Arc::new(Engine::new(EngineConfig::local()))
}

/// Creates a table whose key is `keys` (name, type, role).
pub fn create(
    engine: &Engine,
    name: &str,
    keys: &[(&str, dynaburst_model::ScalarType)],
    billing: BillingMode,
) -> Result<(), EngineError> {
    create_indexed(engine, name, keys, billing, &[])
}

/// A global secondary index of a modelled table: keyed on one attribute,
/// projecting every attribute (so each entry is as large as its item).
#[derive(Clone, Debug)]
pub struct Gsi<'a> {
    pub name: &'a str,
    /// The index's partition key: attribute name and type.
    pub key: (&'a str, dynaburst_model::ScalarType),
    /// Provisioned (read, write) units; None on a table on demand.
    pub throughput: Option<(u64, u64)>,
}

/// Creates a table whose key is `keys` (name, type, role), with `gsis`,
/// at modelled time 0.
pub fn create_indexed(
    engine: &Engine,
    name: &str,
    keys: &[(&str, dynaburst_model::ScalarType)],
    billing: BillingMode,
    gsis: &[Gsi],
) -> Result<(), EngineError> {
    create_indexed_at(engine, name, keys, billing, gsis, Millis(0))
}

/// [`create_indexed`] at `now`: on an embedded server's engine, the
/// server's time (milliseconds since the Unix epoch).
pub fn create_indexed_at(
    engine: &Engine,
    name: &str,
    keys: &[(&str, dynaburst_model::ScalarType)],
    billing: BillingMode,
    gsis: &[Gsi],
    now: Millis,
) -> Result<(), EngineError> {
    let mut attribute_definitions: Vec<(String, dynaburst_model::ScalarType)> =
        keys.iter().map(|(n, t)| (n.to_string(), *t)).collect();
    for g in gsis {
        if !attribute_definitions.iter().any(|(n, _)| n == g.key.0) {
            attribute_definitions.push((g.key.0.to_string(), g.key.1));
        }
    }
    let global_indexes = gsis
        .iter()
        .map(|g| IndexSpec {
            name: g.name.to_string(),
            key_schema: vec![(g.key.0.to_string(), KeyRole::Hash)],
            projection_type: Some(ProjectionType::All),
            non_key_attributes: None,
            throughput: g.throughput,
            on_demand: None,
            warm: None,
        })
        .collect::<Vec<_>>();
    let key_schema = keys
        .iter()
        .enumerate()
        .map(|(i, (n, _))| (n.to_string(), if i == 0 { KeyRole::Hash } else { KeyRole::Range }))
        .collect();
    engine
        .create_table(
            CreateTableInput {
                global_indexes: (!global_indexes.is_empty()).then_some(global_indexes),
                ..CreateTableInput::new(name, key_schema, attribute_definitions, billing)
            },
            now,
        )
        .map(|_| ())
}

/// One modelled second.
#[derive(Clone, Debug, PartialEq)]
pub struct Second {
    pub second: u64,
    /// Write units the table consumed.
    pub consumed: f64,
    /// Write items the model refused (throttled or unprocessed).
    pub throttled: u64,
    /// The table's partitions in that second.
    pub partitions: usize,
    /// Of those, the partitions that consumed write units.
    pub partitions_written: usize,
}

/// One split of a modelled table's partitions.
#[derive(Clone, Debug, PartialEq)]
pub struct Split {
    /// Modelled milliseconds since the load started ([`START_MS`]).
    pub after_start_ms: u64,
    pub reason: capacity::SplitReason,
    pub partitions_after: usize,
}

/// What a modelled load did.
#[derive(Clone, Debug)]
pub struct SimLoad {
    pub written: u64,
    /// Modelled milliseconds from the first request to the end of the
    /// last round trip.
    pub elapsed_ms: u64,
    /// Items written in each second of the load.
    pub written_per_second: Vec<u64>,
    /// Items that came back unprocessed or in a refused batch (and were re-sent).
    pub resent: u64,
    /// Of those, the items refused in each second of the load, whichever
    /// capacity model (the table's or a GSI's) refused them.
    pub resent_per_second: Vec<u64>,
    /// Requests refused whole with a throttling error.
    pub throttled_requests: u64,
    /// Requests refused whole or answered with items unprocessed, in each
    /// second of the load, as the loader counted them (what DynamoDB's
    /// ThrottledRequests metric counts).
    pub throttled_per_second: Vec<u64>,
    /// The table's consumption per second, from the capacity model.
    pub timeline: Vec<Second>,
    /// The table's splits from the start of the load, oldest first.
    pub splits: Vec<Split>,
}

impl SimLoad {
    /// Items per second over the whole load.
    pub fn mean_rate(&self) -> f64 {
        self.written as f64 / (self.elapsed_ms.max(1) as f64 / 1000.0)
    }

    /// Mean items per second over whole seconds in `[from, to)`.
    pub fn rate_between(&self, from: usize, to: usize) -> f64 {
        let slice = &self.written_per_second[from..to.min(self.written_per_second.len())];
        slice.iter().sum::<u64>() as f64 / slice.len().max(1) as f64
    }
}

fn timeline(engine: &Engine, table: &str, now: u64) -> Vec<Second> {
    table_timeline(engine, table, START_MS, now)
}

/// The per-second write metrics of `table` from `start_ms` to `now`,
/// numbered from the second of `start_ms`.
pub fn table_timeline(engine: &Engine, table: &str, start_ms: u64, now: u64) -> Vec<Second> {
    let Some(report) =
        engine.capacity_reports(Millis(now)).into_iter().find(|r| r.table_name == table && r.index_name.is_none())
    else {
        return Vec::new();
    };
    let first = start_ms / 1000;
    report
        .metrics
        .seconds
        .iter()
        .filter(|s| s.second >= first)
        .map(|s| Second {
            second: s.second - first,
            consumed: s.write_units,
            throttled: s.throttled_write_items,
            partitions: s.partition_count,
            partitions_written: s.partitions.iter().filter(|p| p.write_units > 0.0).count(),
        })
        .collect()
}

/// The splits of `table`'s partitions from `start_ms` on, oldest first.
pub fn table_splits(engine: &Engine, table: &str, start_ms: u64, now: u64) -> Vec<Split> {
    let Some(report) =
        engine.capacity_reports(Millis(now)).into_iter().find(|r| r.table_name == table && r.index_name.is_none())
    else {
        return Vec::new();
    };
    report
        .metrics
        .splits
        .iter()
        .filter(|e| e.at.0 >= start_ms)
        .map(|e| Split { after_start_ms: e.at.0 - start_ms, reason: e.reason, partitions_after: e.partitions_after })
        .collect()
}

/// One modelled second of a GSI.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexSecond {
    pub second: u64,
    /// Write units the index consumed, all partitions.
    pub consumed: f64,
    /// Write units of its busiest partition.
    pub hottest_partition: f64,
    /// Partitions that consumed any write units.
    pub partitions_written: usize,
    pub partition_count: usize,
}

/// Write units each partition consumed from `start_ms` on, by partition
/// (keyed by the start of its hash range), largest first.
fn units_by_partition(metrics: &capacity::Metrics, start_ms: u64) -> Vec<f64> {
    let mut by_start = std::collections::BTreeMap::<u128, f64>::new();
    for s in metrics.seconds.iter().filter(|s| s.second >= start_ms / 1000) {
        for p in &s.partitions {
            *by_start.entry(p.start).or_default() += p.write_units;
        }
    }
    let mut units: Vec<f64> = by_start.into_values().filter(|u| *u > 0.0).collect();
    units.sort_by(|a, b| b.total_cmp(a));
    units
}

/// Write units each partition of `index` on `table` consumed from
/// `start_ms` to `now`, largest first: the share of the busiest one bounds a
/// load spread as evenly as the index's keys are.
pub fn index_partition_units(engine: &Engine, table: &str, index: &str, start_ms: u64, now: u64) -> Vec<f64> {
    index_metrics(engine, table, index, now, |m| units_by_partition(m, start_ms)).unwrap_or_default()
}

/// `read` of the metrics of `index` on `table`'s own capacity model
/// (`TableData::indexes[i].capacity`), brought up to `now`: None when the
/// table, the index or its model is missing.
fn index_metrics<R>(
    engine: &Engine,
    table: &str,
    index: &str,
    now: u64,
    read: impl FnOnce(&capacity::Metrics) -> R,
) -> Option<R> {
    let t = engine.get_table(table)?;
    let data = t.data.read();
    let ix = data.indexes.iter().find(|i| i.def.name == index)?;
    let mut capacity = ix.capacity.lock();
    let model = capacity.as_mut()?;
    model.tick(Millis(now));
    Some(read(model.metrics()))
}

/// The per-second metrics of `index` on `table` from `start_ms` to `now`,
/// numbered from the second of `start_ms` (for a modelled load,
/// [`START_MS`]: the seconds of [`SimLoad::timeline`]), read from the GSI's
/// own capacity model (`TableData::indexes[i].capacity`): empty when the
/// table, the index or its model is missing.
pub fn index_timeline(engine: &Engine, table: &str, index: &str, start_ms: u64, now: u64) -> Vec<IndexSecond> {
    index_metrics(engine, table, index, now, |m| index_seconds(m, start_ms)).unwrap_or_default()
}

fn index_seconds(metrics: &capacity::Metrics, start_ms: u64) -> Vec<IndexSecond> {
    let first = start_ms / 1000;
    metrics
        .seconds
        .iter()
        .filter(|s| s.second >= first)
        .map(|s| IndexSecond {
            second: s.second - first,
            consumed: s.write_units,
            hottest_partition: s.partitions.iter().map(|p| p.write_units).fold(0.0, f64::max),
            partitions_written: s.partitions.iter().filter(|p| p.write_units > 0.0).count(),
            partition_count: s.partition_count,
        })
        .collect()
}

/// One simulation of `dynaburst load` (see [`load`]).
fn run_simulation(
    engine: &Arc<Engine>,
    input: dynaburst_input::InputSpec,
    design: dynaburst_simulate::TableDesign,
    tuning: dynaburst_loader::Tuning,
    rejects: std::path::PathBuf,
    limit_ms: u64,
    round_trip_ms: u64,
) -> Result<dynaburst_simulate::Simulation, String> {
    dynaburst_simulate::simulate_limited(
        Arc::clone(engine),
        dynaburst_simulate::SimOptions {
            input,
            design,
            tuning,
            round_trip: std::time::Duration::from_millis(round_trip_ms),
            table_age: std::time::Duration::from_millis(START_MS),
            rejects,
            prices: dynaburst_loader::Prices::list(),
        },
        Vec::new(),
        std::time::Duration::from_millis(limit_ms),
    )
    .map_err(|e| e.to_string())
}

/// Loads `items` into `table` (already on `engine`) with `dynaburst
/// load`'s own pipeline in virtual time (`dynaburst_simulate`): the
/// items are written as DynamoDB JSON to a temporary file, read back by
/// the loader, and sent as it sends them (BatchWriteItem of 25,
/// `concurrency` and `order` as its flags say, UnprocessedItems and
/// throttled requests re-sent with backoff), a request taking
/// [`ROUND_TRIP_MS`]. The load starts at
/// [`START_MS`]; a load not done within `limit_ms` is stopped there.
pub fn load(
    engine: &Arc<Engine>,
    table: &str,
    items: &[Item],
    concurrency: dynaburst_loader::Concurrency,
    order: dynaburst_loader::Order,
    limit_ms: u64,
) -> Result<SimLoad, String> {
    load_with_round_trip(engine, table, items, concurrency, order, limit_ms, ROUND_TRIP_MS)
}

/// [`load`], each request taking `round_trip_ms` instead of
/// [`ROUND_TRIP_MS`].
pub fn load_with_round_trip(
    engine: &Arc<Engine>,
    table: &str,
    items: &[Item],
    concurrency: dynaburst_loader::Concurrency,
    order: dynaburst_loader::Order,
    limit_ms: u64,
    round_trip_ms: u64,
) -> Result<SimLoad, String> {
    let dir = std::env::temp_dir().join(format!("dynaburst-bench-sim-{}", std::process::id()));
    let design = dynaburst_simulate::design_of(engine, table).ok_or_else(|| format!("no table {table}"))?;
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let path = dir.join(format!(".sim-{table}.ddb.json"));
    {
        let file = std::fs::File::create(&path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        let mut f = std::io::BufWriter::new(file);
        for i in items {
            writeln!(f, "{}", dynaburst_ddbjson::item_to_json(i)).map_err(|e| e.to_string())?;
        }
        f.flush().map_err(|e| e.to_string())?;
    }
    let mut tuning = dynaburst_simulate::default_tuning(SIM_SEED);
    tuning.order = order;
    tuning.concurrency = concurrency;
    tuning.stall_timeout = std::time::Duration::from_millis(limit_ms);
    let spec = dynaburst_input::InputSpec {
        type_window: 1,
        ..dynaburst_input::InputSpec::file(
            path.clone(),
            dynaburst_input::Format::DynamoDbJson,
            dynaburst_input::Compression::None,
        )
    };
    // The simulation drives its own runtime; on a thread of its own it
    // may be called from async code (a scenario) as well as from tests.
    let sim = std::thread::scope(|s| {
        s.spawn(|| {
            let rejects = dir.join(format!(".sim-{table}.rejects.jsonl"));
            run_simulation(engine, spec, design, tuning, rejects, limit_ms, round_trip_ms)
        })
        .join()
        .unwrap_or_else(|_| Err("the simulation panicked".to_string()))
    });
    let _ = std::fs::remove_file(&path);
    let sim = sim?;
    let elapsed_ms = (sim.report.predicted_duration_s * 1000.0).round() as u64;
    Ok(SimLoad {
        written: sim.report.load.records.written,
        elapsed_ms,
        written_per_second: sim.seconds.iter().map(|s| s.items_written).collect(),
        resent: sim.report.items_resent,
        resent_per_second: sim.seconds.iter().map(|s| s.unprocessed_items + s.throttled_items).collect(),
        throttled_requests: sim.seconds.iter().map(|s| s.throttled_requests).sum(),
        throttled_per_second: per_second(&sim.loader_timeline),
        timeline: timeline(engine, table, START_MS + elapsed_ms + 1000),
        splits: table_splits(engine, table, START_MS, START_MS + elapsed_ms + 1000),
    })
}

/// Requests refused or partly unprocessed in each second of the loader's
/// timeline (seconds without a row count none).
fn per_second(rows: &[dynaburst_loader::SecondRow]) -> Vec<u64> {
    let mut out = vec![0; rows.iter().map(|r| r.second as usize + 1).max().unwrap_or(0)];
    for r in rows {
        out[r.second as usize] += r.throttled_requests + r.partial_requests;
    }
    out
}

/// The seed of a modelled load's interleaving and retry jitter.
pub const SIM_SEED: u64 = 4;

/// Sends every batch of 25 at the same instant and keeps nothing that
/// comes back: returns (written, lost).
pub fn fire_and_forget(engine: &Engine, table: &str, items: Vec<Item>) -> (u64, u64) {
    fire_at(engine, table, items, |_| START_MS)
}

/// Sends the batches of 25 of `items`, the `i`th at modelled time `at(i)`
/// (in time order), and keeps nothing that comes back: (written, lost).
pub fn fire_at(engine: &Engine, table: &str, items: Vec<Item>, mut at: impl FnMut(usize) -> u64) -> (u64, u64) {
    let mut batches: Vec<(u64, Vec<Item>)> = Vec::with_capacity(items.len().div_ceil(25));
    let mut it = items.into_iter().peekable();
    while it.peek().is_some() {
        let batch: Vec<Item> = it.by_ref().take(25).collect();
        batches.push((at(batches.len()), batch));
    }
    batches.sort_by_key(|(t, _)| *t);
    let (mut written, mut lost) = (0u64, 0u64);
    for (t, batch) in batches {
        let n = batch.len() as u64;
        match engine.batch_write_item(
            BatchWriteInput {
                requests: vec![(table.to_string(), batch.into_iter().map(WriteRequest::Put).collect())],
                return_capacity: ReturnCapacity::None,
                return_item_collection_metrics: false,
            },
            Millis(t),
        ) {
            Ok(out) => {
                let back: u64 = out.unprocessed.iter().map(|(_, r)| r.len() as u64).sum();
                written += n - back;
                lost += back;
            }
            Err(_) => lost += n,
        }
    }
    (written, lost)
}

/// How long seed 002's table had idled before its burst, as modelled: its
/// author had run many loads on it first, so it was not new; five minutes
/// idle fills an on-demand table's bank (`on_demand_bank_seconds`, refilled
/// over the 300 s DynamoDB keeps unused capacity, A39).
pub const SEED002_IDLE_MS: u64 = 300_000;

/// Seed 002's burst against its table as modelled: `items` in batches of
/// 25 fired [`SEED002_IDLE_MS`] after the table's creation, at once when
/// `spread` is None, else each after a delay drawn uniformly from `spread`
/// (ms; the seed's 100,000-item run used 100-2,000 ms) by `rng`:
/// (written, lost).
pub fn seed002_burst(
    engine: &Engine,
    table: &str,
    items: Vec<Item>,
    spread: Option<(u64, u64)>,
    rng: &mut dynaburst_datagen::Rng,
) -> (u64, u64) {
    let start = START_MS + SEED002_IDLE_MS;
    fire_at(engine, table, items, |_| match spread {
        None => start,
        Some((lo, hi)) => start + lo + rng.below(hi - lo + 1),
    })
}
