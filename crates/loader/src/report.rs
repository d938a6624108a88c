//! What a load did: counters, per-second timeline, latency histograms and
//! the report, with costs at list prices.
//!
//! The report's schema is the types below (README.md, "Load report", lists
//! the same fields): [`Report`] is the fields every target shares
//! ([`LoadReport`]) plus the target's own ([`TargetReport`]), side by side
//! in one JSON object.

use std::collections::BTreeMap;
use std::io::Write;
use std::time::Duration;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// On-demand write request units: USD per million (us-east-1 list price
/// since the November 2024 reduction). Overridable with
/// `--price-write-request-units`.
pub const PRICE_PER_MILLION_WRU: f64 = 0.625;
/// Provisioned write capacity: USD per WCU-hour (us-east-1 list price).
/// Overridable with `--price-wcu-hour`.
pub const PRICE_PER_WCU_HOUR: f64 = 0.00065;
/// Most timeline rows kept (one a second: a day).
pub const MAX_TIMELINE_SECONDS: usize = 86_400;
/// Largest latency recorded, in microseconds (an hour).
const MAX_LATENCY_US: u64 = 3_600_000_000;

/// One second of the load.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SecondRow {
    pub second: u64,
    pub items_written: u64,
    pub units: f64,
    pub throttled_requests: u64,
    pub unprocessed_items: u64,
    /// Requests answered with some of their items unprocessed.
    pub partial_requests: u64,
    pub requests_in_flight: u64,
    pub p99_ms: f64,
}

/// Latency of one request type.
pub struct Latency {
    hist: Histogram<u64>,
}

impl Latency {
    fn new() -> Latency {
        // Three significant digits from 1 µs to an hour: fixed memory.
        Latency { hist: Histogram::new_with_bounds(1, MAX_LATENCY_US, 3).expect("constant histogram bounds are valid") }
    }

    fn record(&mut self, d: Duration) {
        let _ = self.hist.record((d.as_micros() as u64).clamp(1, MAX_LATENCY_US));
    }

    fn ms(&self, q: f64) -> f64 {
        self.hist.value_at_quantile(q) as f64 / 1000.0
    }
}

/// Running counters of a load.
pub struct Stats {
    pub read: u64,
    pub written: u64,
    pub rejected: u64,
    pub bytes_read: u64,
    pub units: f64,
    pub throttle_events: u64,
    /// Throttling error codes seen, with counts.
    pub throttle_codes: BTreeMap<String, u64>,
    pub unprocessed_items: u64,
    /// Requests answered with some of their items unprocessed.
    pub partial_requests: u64,
    pub resent_items: u64,
    pub requests: u64,
    pub peak_concurrency: u64,
    /// The write rate the load learned from the target's throttling (units
    /// a second, at the end), and how many throttles lowered it.
    pub paced_units_per_s: Option<f64>,
    pub pace_cuts: u64,
    /// Partition keys the load paced on their own (hot keys).
    pub paced_keys: u64,
    latency: BTreeMap<&'static str, Latency>,
    pub timeline: Vec<SecondRow>,
    second_hist: Latency,
}

impl Default for Stats {
    fn default() -> Stats {
        Stats {
            read: 0,
            written: 0,
            rejected: 0,
            bytes_read: 0,
            units: 0.0,
            throttle_events: 0,
            throttle_codes: BTreeMap::new(),
            unprocessed_items: 0,
            partial_requests: 0,
            resent_items: 0,
            requests: 0,
            peak_concurrency: 0,
            paced_units_per_s: None,
            pace_cuts: 0,
            paced_keys: 0,
            latency: BTreeMap::new(),
            timeline: Vec::new(),
            second_hist: Latency::new(),
        }
    }
}

impl Stats {
    /// The row for `second` (since the start), created as needed.
    pub fn row(&mut self, second: u64) -> &mut SecondRow {
        if self.timeline.is_empty() {
            self.timeline.push(SecondRow::default());
        }
        while self.timeline.last().is_some_and(|r| r.second < second) && self.timeline.len() < MAX_TIMELINE_SECONDS {
            let p99 = self.second_hist.ms(0.99);
            self.second_hist.hist.reset();
            let last = self.timeline.len() - 1;
            self.timeline[last].p99_ms = p99;
            let next = self.timeline[last].second + 1;
            self.timeline.push(SecondRow { second: next, ..SecondRow::default() });
        }
        let last = self.timeline.len() - 1;
        &mut self.timeline[last]
    }

    /// Records one request's latency.
    pub fn record_latency(&mut self, kind: &'static str, d: Duration) {
        self.latency.entry(kind).or_insert_with(Latency::new).record(d);
        self.second_hist.record(d);
    }

    /// Closes the last timeline row.
    pub fn finish_timeline(&mut self) {
        let p99 = self.second_hist.ms(0.99);
        if let Some(last) = self.timeline.last_mut() {
            last.p99_ms = p99;
        }
    }

    /// Latency percentiles per request type, in milliseconds.
    pub fn latency_summary(&self) -> BTreeMap<String, LatencySummary> {
        self.latency
            .iter()
            .map(|(k, l)| {
                let summary = LatencySummary {
                    count: l.hist.len(),
                    p50_ms: l.ms(0.5),
                    p90_ms: l.ms(0.9),
                    p95_ms: l.ms(0.95),
                    p99_ms: l.ms(0.99),
                    max_ms: l.hist.max() as f64 / 1000.0,
                };
                (k.to_string(), summary)
            })
            .collect()
    }
}

/// Prices used for the cost lines.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Prices {
    pub per_million_wru: f64,
    pub per_wcu_hour: f64,
}

impl Prices {
    /// The list prices above.
    pub fn list() -> Prices {
        Prices { per_million_wru: PRICE_PER_MILLION_WRU, per_wcu_hour: PRICE_PER_WCU_HOUR }
    }
}

/// Peak resident memory of this process in bytes (Linux: VmHWM).
pub fn peak_memory_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Latency of one request type, in milliseconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub count: u64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

/// Records read, and what became of them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Records {
    pub read: u64,
    pub written: u64,
    pub rejected: u64,
    /// Read but neither written nor rejected when the load stopped (in
    /// flight or waiting to be sent; a `--resume` sends them again): read =
    /// written + rejected + unacknowledged. Left out when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unacknowledged: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Items written per second: over the load, and in its best second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ItemRate {
    pub mean: f64,
    pub best_second: u64,
}

/// Write units per second: over the load, and in its best second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UnitRate {
    pub mean: f64,
    pub best_second: f64,
}

/// How a load ended, as the report says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EndingName {
    Complete,
    Interrupted,
    Aborted,
}

/// The report's fields every target shares.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoadReport {
    pub input: String,
    /// The request or command type (`BatchWriteItem`, `insert`, ...).
    pub mode: String,
    /// `as-is` is written `asis`, as it always was.
    pub order: String,
    pub seed: u64,
    pub ending: EndingName,
    /// Why an aborted load stopped.
    pub reason: Option<String>,
    pub resumed_from_line: Option<u64>,
    pub records: Records,
    pub bytes_read: u64,
    pub duration_s: f64,
    pub items_per_s: ItemRate,
    pub throttle_events: u64,
    pub throttle_codes: BTreeMap<String, u64>,
    pub unprocessed_items: u64,
    /// Requests answered with some of their items unprocessed (with
    /// `throttle_events`, the requests DynamoDB counts as throttled).
    #[serde(default)]
    pub partial_requests: u64,
    pub items_resent: u64,
    pub requests: u64,
    /// The write rate the load paced itself to at its end, learned from
    /// the target's throttling (null when unpaced: fixed concurrency, a
    /// target that queues, or no throttle and no stated capacity), and how
    /// many throttles lowered it.
    #[serde(default)]
    pub paced_units_per_s: Option<f64>,
    #[serde(default)]
    pub pace_cuts: u64,
    /// Partition keys paced on their own: a key whose items the target
    /// refused while others went through (a hot partition).
    #[serde(default)]
    pub paced_keys: u64,
    pub latency_ms: BTreeMap<String, LatencySummary>,
    pub peak_concurrency: u64,
    pub peak_memory_bytes: Option<u64>,
    pub rejects_file: Option<String>,
    pub checkpoint_file: Option<String>,
    pub warnings: Vec<String>,
    /// CSV input: each column's type (S, N, ...), as given by `--types` or
    /// inferred from the first records. Left out for other formats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csv_types: Option<BTreeMap<String, String>>,
}

/// What a load into DynamoDB cost at list prices.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cost {
    pub on_demand: f64,
    pub provisioned: f64,
    pub provisioned_wcu: f64,
    pub prices: Prices,
}

/// The DynamoDB target's own report fields.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DynamoReport {
    pub table: String,
    pub endpoint: Option<String>,
    /// Every unit the answers reported: the table's and its indexes'.
    pub write_units: f64,
    /// Of those, each secondary index's (absent without indexes).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub index_write_units: BTreeMap<String, f64>,
    pub units_per_s: UnitRate,
    pub cost_usd: Cost,
}

/// A MongoDB server's name and limits, as a load found them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MongoServerReport {
    pub product: String,
    pub max_bson_object_size: usize,
    pub max_message_size_bytes: Option<usize>,
    pub max_write_batch_size: usize,
}

/// The MongoDB target's own report fields.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MongoReport {
    /// The URI without its password.
    pub target: String,
    pub database: String,
    pub collection: String,
    pub server: MongoServerReport,
    pub batch_size: usize,
    pub notes: Vec<String>,
}

/// A target's own report fields.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum TargetReport {
    DynamoDb(DynamoReport),
    MongoDb(MongoReport),
}

/// The end-of-load report (`--report FILE.json`): one JSON object holding
/// the shared fields and the target's.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    #[serde(flatten)]
    pub target: TargetReport,
    #[serde(flatten)]
    pub load: LoadReport,
}

/// Why a report could not be read.
#[derive(Debug)]
pub struct ReportError(serde_json::Error);

impl std::fmt::Display for ReportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "not a load report: {}", self.0)
    }
}

impl std::error::Error for ReportError {}

impl Report {
    /// Reads a report back. Through a `Value` rather than a derived
    /// `Deserialize`: serde's `flatten` buffers values and loses the
    /// exact numbers `serde_json`'s `arbitrary_precision` keeps.
    pub fn from_json(value: &Value) -> Result<Report, ReportError> {
        let load = LoadReport::deserialize(value).map_err(ReportError)?;
        let target = match DynamoReport::deserialize(value) {
            Ok(d) => TargetReport::DynamoDb(d),
            Err(_) => TargetReport::MongoDb(MongoReport::deserialize(value).map_err(ReportError)?),
        };
        Ok(Report { target, load })
    }

    /// The report as JSON.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// Writes the timeline as CSV.
pub fn write_timeline(rows: &[SecondRow], out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "second,items_written,write_units,throttled_requests,unprocessed_items,requests_in_flight,p99_ms,partial_requests"
    )?;
    for r in rows {
        writeln!(
            out,
            "{},{},{},{},{},{},{:.3},{}",
            r.second,
            r.items_written,
            r.units,
            r.throttled_requests,
            r.unprocessed_items,
            r.requests_in_flight,
            r.p99_ms,
            r.partial_requests
        )?;
    }
    Ok(())
}
