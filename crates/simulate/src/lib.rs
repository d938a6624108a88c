//! `dynaburst load --simulate`: the real load pipeline (`dynaburst-loader`)
//! against the in-process engine and its capacity model, in virtual time,
//! so minutes or hours of load take seconds and every figure is what
//! `dynaburst load` itself would do against a table of that design.
//!
//! The pipeline runs on a current-thread tokio runtime with a virtual
//! clock (`clock::VirtualClock`): time advances only when every task waits
//! (on a request's round trip, a backoff, a pacing delay), and the input is
//! read on a task of the same runtime, so reading takes no virtual time. The engine keeps no
//! items (`storage::NullStorage`): memory stays flat with the input.
//!
//! Architecture invariant: a leaf beside the bench; it links the engine
//! and the loader (client and server side meet here and nowhere else but
//! the bench and the binary), no HTTP, no AWS SDK. Its only time is the
//! virtual clock (the wall clock is read once, to say how long the
//! simulation took).

mod clock;
mod sink;
mod storage;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use dynaburst_engine::{BillingMode, CreateTableInput, Engine, EngineConfig, IndexSpec, KeyRole, Millis};
use dynaburst_input::{InputSpec, Record};
use dynaburst_loader::{
    key_hashes, load_report, run_pipeline_reading, Concurrency, Ending, LoadError, LoadReport, Prices, ReadOn,
    SecondRow, Session, SinkItem, Snapshot, Tuning,
};
use dynaburst_model::{item_size, write_units, Item, KeyValue, ScalarType, MAX_ITEM_BYTES};
use parking_lot::Mutex;
use tokio::sync::watch;

pub use clock::VirtualClock;
pub use sink::{
    EngineSink, KeyUnits, Observed, SimSecond, MAX_BATCH_WRITE_BYTES, MAX_BATCH_WRITE_ITEMS, MAX_TRACKED_KEYS,
};
pub use storage::NullStorage;

/// Modelled round trip of one request by default: a client in the
/// table's region.
pub const DEFAULT_ROUND_TRIP: Duration = Duration::from_millis(10);
/// How long a table has existed when a simulated load starts, by default:
/// one second, a table created just before the load.
pub const DEFAULT_TABLE_AGE: Duration = Duration::from_secs(1);
/// What each attribute of an item held by a simulated load costs beyond
/// its name's and value's bytes: the map's entry (name and value, 24 + 32
/// bytes on 64-bit) and the allocator's rounding, about 16 bytes.
const HELD_BYTES_PER_ATTRIBUTE: usize = 72;
/// Hottest partition keys a report lists.
pub const HOT_KEYS_LISTED: usize = 10;
/// A simulation gives up after this much virtual time (a load that would
/// take longer than a week is not worth simulating to its end).
pub const MAX_VIRTUAL_TIME: Duration = Duration::from_secs(7 * 24 * 3600);

/// The design of the table a simulated load writes to.
#[derive(Clone, Debug)]
pub struct TableDesign {
    pub name: String,
    /// Partition key (name, type) and optional sort key.
    pub hash: (String, ScalarType),
    pub range: Option<(String, ScalarType)>,
    pub billing: BillingMode,
    /// WarmThroughput (read, write units per second), when raised.
    pub warm: Option<(Option<u64>, Option<u64>)>,
    /// OnDemandThroughput (MaxReadRequestUnits, MaxWriteRequestUnits).
    pub on_demand_max: Option<(Option<i64>, Option<i64>)>,
    /// Global and local secondary indexes, and the types of their key
    /// attributes.
    pub global_indexes: Vec<IndexSpec>,
    pub local_indexes: Vec<IndexSpec>,
    pub index_attributes: Vec<(String, ScalarType)>,
}

/// What to simulate.
#[derive(Clone, Debug)]
pub struct SimOptions {
    pub input: InputSpec,
    pub design: TableDesign,
    pub tuning: Tuning,
    /// Modelled round trip of one request.
    pub round_trip: Duration,
    /// How long the table existed (idle) before the load started.
    pub table_age: Duration,
    /// Where records the simulated table would refuse go.
    pub rejects: PathBuf,
    pub prices: Prices,
}

/// Why a simulation could not run.
#[derive(Debug)]
pub enum SimError {
    /// The table design is refused by the engine (DynamoDB's message).
    Design(String),
    Load(LoadError),
    Runtime(String),
}

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SimError::Design(m) => write!(f, "the table design is refused: {m}"),
            SimError::Load(e) => write!(f, "{e}"),
            SimError::Runtime(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for SimError {}

/// A partition-key value and what it took.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct HotKey {
    /// The value as text (numbers as written, binary as hex).
    pub key: String,
    pub written_units: f64,
    pub throttled_units: f64,
}

/// When an on-demand table's write ceiling rose.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CeilingRise {
    pub second: u64,
    pub write_units_per_s: f64,
}

/// The predicted cost of the load at list prices.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SimCost {
    /// Write request units at the on-demand price.
    pub on_demand_usd: f64,
    /// The provisioned table's WCU for the load's duration (None on demand).
    pub provisioned_usd: Option<f64>,
    pub prices: Prices,
}

/// A simulated load's report.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SimReport {
    /// Always "simulated": the figures come from the real pipeline against
    /// the capacity model in virtual time, not from a load.
    pub source: &'static str,
    /// What the model assumed of the table and the client.
    pub assumptions: Vec<String>,
    pub table: String,
    pub billing: String,
    pub predicted_duration_s: f64,
    pub mean_items_per_s: f64,
    pub mean_units_per_s: f64,
    pub write_units: f64,
    pub throttle_events: u64,
    pub items_resent: u64,
    pub hottest_partition_keys: Vec<HotKey>,
    pub cost: SimCost,
    /// On-demand: when the table's write ceiling rose during the load.
    pub ceiling_rises: Vec<CeilingRise>,
    /// The loader's own report of the simulated load.
    pub load: LoadReport,
    /// Wall-clock seconds the simulation took.
    pub simulation_wall_s: f64,
}

/// A simulated load: the report, the table's seconds and the loader's.
pub struct Simulation {
    pub ending: Ending,
    pub report: SimReport,
    pub seconds: Vec<SimSecond>,
    pub loader_timeline: Vec<SecondRow>,
}

/// The engine's text of a key value.
fn key_text(k: &KeyValue) -> String {
    match k {
        KeyValue::S(s) => s.clone(),
        KeyValue::N(n) => n.to_string(),
        KeyValue::B(b) => b.iter().map(|x| format!("{x:02x}")).collect(),
    }
}

fn type_name(t: ScalarType) -> &'static str {
    match t {
        ScalarType::S => "S",
        ScalarType::N => "N",
        ScalarType::B => "B",
    }
}

/// An in-process engine (capacity model on, no items kept) with the
/// table of `design` created at engine time 0.
pub fn engine_with(design: &TableDesign) -> Result<Arc<Engine>, SimError> {
    let engine = Engine::open(EngineConfig::local(), Arc::new(NullStorage::default()), Millis(0))
        .map_err(|e| SimError::Design(e.message()))?;
    create(&engine, design, Millis(0))?;
    Ok(Arc::new(engine))
}

/// Creates `design`'s table on `engine` at `now`.
pub fn create(engine: &Engine, design: &TableDesign, now: Millis) -> Result<(), SimError> {
    let mut attribute_definitions = vec![design.hash.clone()];
    attribute_definitions.extend(design.range.clone());
    for a in &design.index_attributes {
        if !attribute_definitions.iter().any(|(n, _)| *n == a.0) {
            attribute_definitions.push(a.clone());
        }
    }
    let mut key_schema = vec![(design.hash.0.clone(), KeyRole::Hash)];
    key_schema.extend(design.range.as_ref().map(|r| (r.0.clone(), KeyRole::Range)));
    engine
        .create_table(
            CreateTableInput {
                global_indexes: (!design.global_indexes.is_empty()).then(|| design.global_indexes.clone()),
                local_indexes: (!design.local_indexes.is_empty()).then(|| design.local_indexes.clone()),
                on_demand: design.on_demand_max,
                warm: design.warm,
                ..CreateTableInput::new(design.name.clone(), key_schema, attribute_definitions, design.billing)
            },
            now,
        )
        .map_err(|e| SimError::Design(e.message()))?;
    Ok(())
}

/// The design of `table` as it is on `engine` (its key, billing and warm
/// throughput; its indexes live on the engine already), for
/// [`simulate_on`]. None when there is no such table.
pub fn design_of(engine: &Engine, table: &str) -> Option<TableDesign> {
    let t = engine.get_table(table)?;
    let settings = t.settings.lock().clone();
    let attr = |a: &dynaburst_engine::KeyAttr| (a.name.clone(), a.ty);
    Some(TableDesign {
        name: t.name.clone(),
        hash: attr(&t.key_schema.hash),
        range: t.key_schema.range.as_ref().map(attr),
        billing: settings.billing,
        warm: settings.warm.map(|(r, w)| (Some(r), Some(w))),
        on_demand_max: None,
        global_indexes: Vec::new(),
        local_indexes: Vec::new(),
        index_attributes: Vec::new(),
    })
}

/// Checks a record against the design's key and converts it, as the
/// DynamoDB target's `prepare` does: what the table would refuse is
/// rejected before it is sent.
fn prepare(
    rec: &Record,
    hash: &(String, ScalarType),
    range: &Option<(String, ScalarType)>,
) -> Result<SinkItem<Item>, String> {
    let item = rec.item.as_ref().map_err(|e| e.0.clone())?;
    let component = |(name, ty): &(String, ScalarType)| -> Result<KeyValue, String> {
        let v = item.get(name).ok_or_else(|| format!("the key attribute {name} is missing"))?;
        let k = KeyValue::from_attribute(v).filter(|k| k.key_type() == *ty).ok_or_else(|| {
            format!("the key attribute {name} is not of type {} (the table's key type)", type_name(*ty))
        })?;
        Ok(k)
    };
    let pk = component(hash)?;
    let sk = range.as_ref().map(component).transpose()?;
    let size = item_size(item);
    if size > MAX_ITEM_BYTES {
        return Err(format!("the item is {size} bytes, over DynamoDB's {MAX_ITEM_BYTES}-byte item limit"));
    }
    let (partition, slot) = key_hashes(&(pk, sk));
    // The item is held as the model's map: its DynamoDB size (names and
    // values) and, per attribute, the map's entry and the value's enum.
    let held = size + item.len() * HELD_BYTES_PER_ATTRIBUTE;
    Ok(SinkItem { partition, slot, units: write_units(size), bytes: size, held, item: item.clone() })
}

/// The billing mode in words.
fn billing_text(b: BillingMode) -> String {
    match b {
        BillingMode::PayPerRequest => "on-demand".to_string(),
        BillingMode::Provisioned { read, write } => format!("provisioned {read} RCU / {write} WCU"),
    }
}

/// Runs the load of `opts` in virtual time to its end.
pub fn simulate(opts: SimOptions) -> Result<Simulation, SimError> {
    let engine = engine_with(&opts.design)?;
    simulate_on(engine, opts, Vec::new())
}

/// [`simulate`] against a table already on `engine` (created, and perhaps
/// warmed or written, by the caller); `assumptions` are added to the
/// report's.
pub fn simulate_on(engine: Arc<Engine>, opts: SimOptions, assumptions: Vec<String>) -> Result<Simulation, SimError> {
    simulate_limited(engine, opts, assumptions, MAX_VIRTUAL_TIME)
}

/// [`simulate_on`], stopping the load after `limit` of virtual time.
pub fn simulate_limited(
    engine: Arc<Engine>,
    opts: SimOptions,
    assumptions: Vec<String>,
    limit: Duration,
) -> Result<Simulation, SimError> {
    #[allow(clippy::disallowed_methods)] // how long the simulation took, for the report only
    let wall = std::time::Instant::now();
    // The wall clock's now only anchors the virtual instants.
    #[allow(clippy::disallowed_methods)]
    let clock = VirtualClock::new(tokio::time::Instant::now());
    let driver = clock.clone();
    let runtime = tokio::runtime::Builder::new_current_thread()
        // Every task waits: time moves to the next deadline.
        .on_thread_park(move || {
            driver.advance();
        })
        .build()
        .map_err(|e| SimError::Runtime(format!("cannot start the simulation's runtime: {e}")))?;
    let table = engine
        .get_table(&opts.design.name)
        .ok_or_else(|| SimError::Design(format!("table {} was not created", opts.design.name)))?;
    let capacity = match opts.design.billing {
        BillingMode::Provisioned { write, .. } => Some(write as f64),
        BillingMode::PayPerRequest => opts.design.warm.and_then(|w| w.1).map(|w| w as f64),
    };
    let session = Session {
        input: opts.input.clone(),
        input_name: opts.input.path.as_ref().map(|p| p.display().to_string()).unwrap_or_else(|| "-".into()),
        input_bytes: opts.input.path.as_ref().and_then(|p| std::fs::metadata(p).ok()).map(|m| m.len()),
        target: opts.design.name.clone(),
        checkpoint: None,
        rejects: opts.rejects.clone(),
        rejects_keep: None,
        id_key: None,
    };
    let tuning = Tuning { stall_timeout: opts.tuning.stall_timeout.min(MAX_VIRTUAL_TIME), ..opts.tuning.clone() };
    let (out, sink) = runtime.block_on(async {
        let start_ms = opts.table_age.as_millis() as u64;
        let sink = Arc::new(EngineSink {
            engine: Arc::clone(&engine),
            table: Arc::clone(&table),
            clock: clock.clone(),
            origin: (dynaburst_loader::Clock::now(&clock), Millis(start_ms)),
            round_trip: opts.round_trip,
            capacity_units_per_s: capacity,
            observed: Mutex::new(Observed::default()),
        });
        let (progress, _rx) = watch::channel(Snapshot::default());
        let (stop_tx, stop) = watch::channel(false);
        // A simulation ends by itself: a load longer than `limit` (at most
        // a week) of virtual time is stopped there.
        let stop_clock = clock.clone();
        let stopper = tokio::spawn(async move {
            let at = dynaburst_loader::Clock::now(&stop_clock) + limit.min(MAX_VIRTUAL_TIME);
            dynaburst_loader::Clock::sleep_until(&stop_clock, at).await;
            let _ = stop_tx.send(true);
        });
        let (hash, range) = (opts.design.hash.clone(), opts.design.range.clone());
        let out = run_pipeline_reading(
            Arc::clone(&sink),
            &session,
            &tuning,
            move |r: &Record| prepare(r, &hash, &range),
            progress,
            stop,
            clock.clone(),
            ReadOn::Task,
        )
        .await;
        stopper.abort();
        (out, sink)
    });
    let out = out.map_err(SimError::Load)?;
    let observed = std::mem::take(&mut *sink.observed.lock());
    let load = load_report(&session, &tuning, "BatchWriteItem", &out);
    let secs = out.elapsed.as_secs_f64().max(1e-3);
    let units = out.stats.units;
    let mut hot: Vec<(&KeyValue, &KeyUnits)> = observed.keys.iter().collect();
    hot.sort_by(|a, b| {
        (b.1.written + b.1.throttled).total_cmp(&(a.1.written + a.1.throttled)).then_with(|| a.0.cmp(b.0))
    });
    let hottest_partition_keys = hot
        .into_iter()
        .take(HOT_KEYS_LISTED)
        .map(|(k, u)| HotKey { key: key_text(k), written_units: u.written, throttled_units: u.throttled })
        .collect();
    let mut ceiling_rises = Vec::new();
    let mut last = observed.seconds.first().map(|s| s.write_ceiling).unwrap_or(0.0);
    for s in &observed.seconds {
        if s.write_ceiling > last {
            ceiling_rises.push(CeilingRise { second: s.second, write_units_per_s: s.write_ceiling });
        }
        last = s.write_ceiling;
    }
    let provisioned_usd = match opts.design.billing {
        BillingMode::Provisioned { write, .. } => Some(write as f64 * secs / 3600.0 * opts.prices.per_wcu_hour),
        BillingMode::PayPerRequest => None,
    };
    let mut all_assumptions = vec![
        format!(
            "the table existed {} s before the load (a new table unless its warm throughput says otherwise)",
            opts.table_age.as_secs_f64()
        ),
        format!("each request takes a {} ms round trip", opts.round_trip.as_millis()),
        "every write is a new item (BatchWriteItem of up to 25 puts), as dynaburst load sends them".to_string(),
    ];
    if let Some((_, Some(w))) = opts.design.warm {
        all_assumptions.push(format!("the table's warm throughput was raised to {w} write units/s before the load"));
    }
    all_assumptions.extend(assumptions);
    let report = SimReport {
        source: "simulated",
        assumptions: all_assumptions,
        table: opts.design.name.clone(),
        billing: billing_text(opts.design.billing),
        predicted_duration_s: secs,
        mean_items_per_s: out.stats.written as f64 / secs,
        mean_units_per_s: units / secs,
        write_units: units,
        throttle_events: out.stats.throttle_events,
        items_resent: out.stats.resent_items,
        hottest_partition_keys,
        cost: SimCost {
            on_demand_usd: units / 1e6 * opts.prices.per_million_wru,
            provisioned_usd,
            prices: opts.prices,
        },
        ceiling_rises,
        load,
        simulation_wall_s: wall.elapsed().as_secs_f64(),
    };
    Ok(Simulation {
        ending: out.ending.clone(),
        report,
        seconds: observed.seconds,
        loader_timeline: out.stats.timeline,
    })
}

/// The default tuning of a simulated `dynaburst load`: what the real load
/// uses without flags (auto concurrency, interleaved order).
pub fn default_tuning(seed: u64) -> Tuning {
    Tuning {
        concurrency: Concurrency::Auto,
        latency_control: false,
        max_wcu: None,
        order: dynaburst_loader::Order::Interleave,
        window: dynaburst_loader::DEFAULT_WINDOW,
        seed,
        stall_timeout: Duration::from_secs(300),
        max_rejects: None,
    }
}

/// The table's seconds as CSV.
pub fn seconds_csv(seconds: &[SimSecond]) -> String {
    let mut s = String::from(
        "second,consumed_write_units,throttled_write_units,items_written,throttled_requests,unprocessed_items,write_ceiling\n",
    );
    for r in seconds {
        s.push_str(&format!(
            "{},{},{},{},{},{},{}\n",
            r.second,
            r.consumed_units,
            r.throttled_units,
            r.items_written,
            r.throttled_requests,
            r.unprocessed_items,
            r.write_ceiling
        ));
    }
    s
}

/// Units per partition-key value, for callers that want them all.
pub fn key_units(observed: &Observed) -> HashMap<String, f64> {
    observed.keys.iter().map(|(k, u)| (key_text(k), u.written)).collect()
}
