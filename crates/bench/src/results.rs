//! The schema of `results.json`: what `dynaburst bench` writes, and what
//! `report.md` and the SVG charts are rendered from.
//!
//! Every field is required unless it is an `Option` (or says what it
//! defaults to): a results file that lacks one does not load, and the
//! error names the scenario and the field. Field names are the JSON keys.
//! `testdata/results-example.json` is a complete example; every committed
//! `bench/results/*/results.json` loads (see `tests/render.rs`).
//!
//! serde's `flatten` is not used: it cannot read numbers when serde_json's
//! `arbitrary_precision` feature is on (the workspace enables it), so the
//! two types that share one JSON object ([`Scenario`], [`LatencyRow`]) read
//! and write it through a [`Value`] instead.

use std::collections::BTreeMap;

use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// The version this code writes.
pub const RESULTS_VERSION: u32 = 1;

/// Scenario keys in the order of their seeds, with the seed each re-runs.
pub const SCENARIOS: [(&str, &str); 6] = [
    (WRITE_APIS, "000"),
    (DOC_SIZE, "001"),
    (DOC_SIZE_MONGODB, "001"),
    (PARALLEL_PATTERNS, "002"),
    (LATENCY, "003"),
    (PARTITION_KEYS, "004"),
];
pub const WRITE_APIS: &str = "write-apis";
pub const DOC_SIZE: &str = "doc-size";
/// Seed 001 like for like: doc-size into a MongoDB-compatible database
/// (FerretDB, which `bench` starts itself, or `--target`).
pub const DOC_SIZE_MONGODB: &str = "doc-size-mongodb";
pub const PARALLEL_PATTERNS: &str = "parallel-patterns";
pub const LATENCY: &str = "latency";
pub const PARTITION_KEYS: &str = "partition-keys";
/// Not a seed's: the GSI bulk-load trap, after seed 004's figures.
pub const INDEX_TRAP: &str = "index-trap";

/// A whole `results.json`: the run, then each scenario that ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Results {
    /// [`RESULTS_VERSION`] when written.
    pub version: u32,
    /// The command line (a MongoDB URI's password redacted).
    pub command: String,
    pub started_at_unix_ms: u64,
    /// The whole run, wall clock.
    pub duration_s: f64,
    /// The seed of datasets, shuffles and latency draws.
    pub seed: u64,
    /// `--endpoint-url`, or a description of the embedded servers.
    pub endpoint: String,
    /// doc-size's `--target`, redacted; absent in results written before
    /// `--target` existed.
    #[serde(default)]
    pub target: Option<String>,
    /// `none` or `aws`.
    pub latency_model: String,
    pub rtt_ms: f64,
    /// `--items` / 10,000.
    pub scale: f64,
    /// `--real-time`; absent (false) in results written before it existed.
    #[serde(default)]
    pub real_time: bool,
    /// Scenarios that failed; absent (none) in results written before it existed.
    #[serde(default)]
    pub failures: Vec<Failure>,
    pub scenarios: Scenarios,
}

impl Results {
    /// Parses a `results.json`.
    pub fn from_json(text: &str) -> Result<Results, serde_json::Error> {
        serde_json::from_str(text)
    }
}

/// A scenario that did not finish.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    pub scenario: String,
    pub error: String,
}

/// The scenarios that ran, by key (`"write-apis"`, ...). Unknown keys (a
/// newer bench's scenarios) keep their title and explanation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scenarios {
    pub write_apis: Option<Scenario<WriteApis>>,
    pub doc_size: Option<Scenario<DocSize>>,
    pub doc_size_mongodb: Option<Scenario<DocSize>>,
    pub parallel_patterns: Option<Scenario<ParallelPatterns>>,
    pub latency: Option<Scenario<Latency>>,
    pub partition_keys: Option<Scenario<PartitionKeys>>,
    pub index_trap: Option<Scenario<IndexTrap>>,
    pub other: BTreeMap<String, Scenario<Other>>,
}

impl Scenarios {
    /// True when no scenario ran.
    pub fn is_empty(&self) -> bool {
        self.write_apis.is_none()
            && self.doc_size.is_none()
            && self.doc_size_mongodb.is_none()
            && self.parallel_patterns.is_none()
            && self.latency.is_none()
            && self.partition_keys.is_none()
            && self.index_trap.is_none()
            && self.other.is_empty()
    }
}

/// What every scenario has, around its own figures `F` (one JSON object).
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario<F> {
    /// The seed it re-runs: `"000"` to `"004"`.
    pub seed_id: String,
    pub title: String,
    /// False when its figures are modelled in virtual time; rows may say
    /// otherwise for themselves (`modelled`).
    pub measured: bool,
    /// Why our figures differ from the seed's.
    pub explanation: String,
    /// Wall clock of the scenario; set by the run (absent in hand-written examples).
    pub duration_s: Option<f64>,
    pub figures: F,
}

/// [`Scenario`]'s own fields, as they sit in the JSON object.
#[derive(Serialize, Deserialize)]
struct ScenarioHead {
    seed_id: String,
    title: String,
    measured: bool,
    explanation: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    duration_s: Option<f64>,
}

impl<F: Serialize> Serialize for Scenario<F> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let head = ScenarioHead {
            seed_id: self.seed_id.clone(),
            title: self.title.clone(),
            measured: self.measured,
            explanation: self.explanation.clone(),
            duration_s: self.duration_s,
        };
        one_object(&head, &self.figures, s)
    }
}

impl<'de, F: DeserializeOwned> Deserialize<'de> for Scenario<F> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (head, figures): (ScenarioHead, F) = from_one_object(d)?;
        let ScenarioHead { seed_id, title, measured, explanation, duration_s } = head;
        Ok(Scenario { seed_id, title, measured, explanation, duration_s, figures })
    }
}

/// Seed 000: one row per write API.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WriteApis {
    pub rows: Vec<WriteApiRow>,
    /// True when each row's peak memory is the client's own: the client
    /// ran in a process without the server (a `bench write-apis
    /// --endpoint-url` child of the bench, or the bench itself against an
    /// external endpoint). False (the default, in results written before)
    /// when it is the whole bench process, embedded server included.
    #[serde(default)]
    pub client_process: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WriteApiRow {
    /// `"PutItem, serial"`, ...
    pub api: String,
    pub items: u64,
    pub wall_s: f64,
    /// The client thread's CPU time.
    pub cpu_s: f64,
    /// The whole process's peak resident memory; null where unreadable.
    pub peak_memory_bytes: Option<u64>,
    /// Items in the table afterwards (a parallel Scan).
    pub count_after: u64,
    /// The seed's published wall time; None for an API the seed did not
    /// run (BatchExecuteStatement).
    #[serde(default)]
    pub seed_wall_s: Option<f64>,
    /// Write requests the API took, retries included (absent in results
    /// written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<u64>,
    /// The seed's published peak memory of its client process, MB; None
    /// for an API the seed did not run (absent in results written before
    /// it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed_peak_mb: Option<f64>,
}

/// Seed 001: one row per document size and writer count.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DocSize {
    pub rows: Vec<DocSizeRow>,
    /// With `--target`: the client's peak memory by document count.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memory: Vec<MemoryRow>,
    /// With `--target`: the redacted URI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// With `--target`: the server's product name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DocSizeRow {
    pub fields: u64,
    pub writers: u64,
    pub docs: u64,
    /// Size of the input file.
    pub bytes: u64,
    pub wall_s: f64,
    pub docs_per_ms: f64,
    pub bytes_per_s: f64,
    /// The loader process's peak resident memory; null where unreadable.
    pub peak_memory_bytes: Option<u64>,
    /// The seed's figures for this size and writer count; null where it published none.
    pub seed: Option<SeedDocSize>,
}

/// Seed 001's published figures for one size and writer count.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeedDocSize {
    pub docs_per_ms: f64,
    pub mb_per_s: f64,
}

/// Seed 001's stated mean document size, in bytes, for 1 (MIN), 10 (MID)
/// and 100 (BIG) fields.
pub fn seed_001_doc_bytes(fields: u64) -> Option<f64> {
    match fields {
        1 => Some(38.0),
        10 => Some(320.0),
        100 => Some(3_400.0),
        _ => None,
    }
}

impl SeedDocSize {
    /// The document size its two figures imply: MB/s over documents/s.
    pub fn implied_doc_bytes(&self) -> f64 {
        self.mb_per_s * 1e6 / (self.docs_per_ms * 1000.0).max(1e-9)
    }

    /// True when the implied size is more than twice, or less than half,
    /// the size seed 001 states for `fields`: its row contradicts itself.
    pub fn inconsistent(&self, fields: u64) -> bool {
        seed_001_doc_bytes(fields).is_some_and(|stated| {
            let r = self.implied_doc_bytes() / stated;
            !(0.5..=2.0).contains(&r)
        })
    }
}

/// doc-size with `--target`: one load of `docs` documents.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemoryRow {
    pub docs: u64,
    pub fields: u64,
    pub writers: u64,
    pub wall_s: f64,
    pub docs_per_ms: f64,
    pub peak_memory_bytes: Option<u64>,
}

/// Seed 002: six loader patterns, then bursts fired at once.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParallelPatterns {
    pub patterns: Vec<PatternRow>,
    pub burst: Vec<BurstRow>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PatternRow {
    /// `"serial"`, `"channel"`, ...
    pub pattern: String,
    pub items: u64,
    pub trials: u64,
    pub mean_ms: f64,
    pub seed_mean_ms: f64,
    /// The most batches this pattern had in flight at once; absent in
    /// results written before it was counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_in_flight: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BurstRow {
    pub items: u64,
    /// `"naive (ignores UnprocessedItems)"` or `"dynaburst load"`.
    pub loader: String,
    pub modelled: bool,
    pub written: u64,
    pub lost: u64,
    pub seconds: f64,
}

/// Seed 003: latency percentiles per write configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub rows: Vec<LatencyRow>,
    /// This machine's own round trip for each configuration, measured just
    /// before its samples and taken off its modelled service times; empty
    /// when nothing was modelled (`--latency-model none`, `--endpoint-url`)
    /// and in results written before calibration existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calibration: Vec<Calibration>,
}

/// One configuration's calibration: the same requests against a server
/// that answers after exactly `probe_ms`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    pub operation: String,
    pub probe_ms: f64,
    pub samples: u64,
    /// Median observed minus `probe_ms`: what was taken off each service time.
    pub local_p50_ms: f64,
    /// 99th percentile observed minus `probe_ms`.
    pub local_p99_ms: f64,
    /// The 99th percentile of the configuration's modelled service times
    /// (before `local_p50_ms` came off): the same number of draws from the
    /// same model and seed as its server's. Absent in results written
    /// before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modelled_p99_ms: Option<f64>,
}

/// One configuration: our percentiles sit in the row's own object.
#[derive(Clone, Debug, PartialEq)]
pub struct LatencyRow {
    pub operation: String,
    pub samples: u64,
    pub ours: Percentiles,
    /// The seed's published percentiles.
    pub seed: Option<Percentiles>,
}

/// [`LatencyRow`]'s fields besides the percentiles.
#[derive(Serialize, Deserialize)]
struct LatencyHead {
    operation: String,
    samples: u64,
    seed: Option<Percentiles>,
}

impl Serialize for LatencyRow {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let head = LatencyHead { operation: self.operation.clone(), samples: self.samples, seed: self.seed.clone() };
        one_object(&head, &self.ours, s)
    }
}

impl<'de> Deserialize<'de> for LatencyRow {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (head, ours): (LatencyHead, Percentiles) = from_one_object(d)?;
        Ok(LatencyRow { operation: head.operation, samples: head.samples, ours, seed: head.seed })
    }
}

/// Latency percentiles in milliseconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    pub min_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

impl Percentiles {
    /// Labels of [`Percentiles::values`], in order.
    pub const LABELS: [&'static str; 6] = ["min", "p50", "p90", "p95", "p99", "max"];

    /// min, p50, p90, p95, p99, max.
    pub fn values(&self) -> [f64; 6] {
        [self.min_ms, self.p50_ms, self.p90_ms, self.p95_ms, self.p99_ms, self.max_ms]
    }
}

/// Seed 004: four loads of the IP-range dataset, then the range lookup.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PartitionKeys {
    pub loads: Vec<PartitionLoad>,
    pub lookup: Lookup,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PartitionLoad {
    /// `"single-key"`, `"sorted"`, `"shuffled"` or `"provisioned"`.
    pub case: String,
    pub label: String,
    pub modelled: bool,
    pub items: u64,
    pub seconds: f64,
    /// Mean consumed write units per second.
    pub rate_units_per_s: f64,
    /// The rate the seed published.
    pub seed_rate: f64,
    /// The timeline's CSV, relative to the output directory.
    pub timeline_csv: String,
    pub timeline: Vec<TimelineSecond>,
    /// The table's partition splits during the load, in order (empty when
    /// not known: a load over HTTP, or results written before they were
    /// recorded).
    #[serde(default)]
    pub splits: Vec<SplitMark>,
}

/// One partition split during a load.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SplitMark {
    /// Seconds since the load started.
    pub at_s: f64,
    /// `heat`, `size` or `throughput` (the capacity model's reason).
    pub reason: String,
    /// The table's partitions after the split.
    pub partitions_after: u64,
}

impl PartitionLoad {
    /// Which of seed 004's figures this load recreates.
    pub fn seed_figure(&self) -> Option<u32> {
        match self.case.as_str() {
            "single-key" => Some(3),
            "sorted" => Some(5),
            "shuffled" => Some(6),
            "provisioned" => Some(7),
            _ => None,
        }
    }
}

/// One second of a load.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimelineSecond {
    pub second: u64,
    /// Write units consumed.
    pub consumed: f64,
    /// Write items throttled or returned unprocessed.
    pub throttled: u64,
    /// The table's partitions at the end of the second; None when not
    /// known (a load over HTTP, or results written before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partitions: Option<u64>,
    /// Of those, the partitions that consumed write units in the second
    /// (seed 004's explanation: how many the load kept busy); None when
    /// not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partitions_written: Option<u64>,
}

/// The IP-range lookup, measured over HTTP.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Lookup {
    pub samples: u64,
    /// Lookups that found the range holding the address.
    pub correct: u64,
    pub latency_ms: Percentiles,
    /// Lookups per second by lookups in flight, up to where the rate
    /// stopped growing (absent in results written before it was measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saturation: Option<LookupSaturation>,
}

/// The lookup's throughput as lookups in flight grow.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LookupSaturation {
    /// One step per concurrency, in the order run (doubling).
    pub steps: Vec<LookupStep>,
    /// A step counts as growth when it beats the best so far by this
    /// fraction (0.05: 5%); the ramp stops after a step that does not.
    pub growth_threshold: f64,
}

/// One concurrency of the saturation ramp.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LookupStep {
    /// Lookups in flight (closed loop: each lane sends its next when the
    /// last is answered).
    pub concurrency: u64,
    pub lookups: u64,
    /// Lookups that found the range holding the address.
    pub correct: u64,
    pub seconds: f64,
    pub lookups_per_s: f64,
    pub latency_ms: Percentiles,
}

impl LookupSaturation {
    /// The step with the most lookups per second.
    pub fn peak(&self) -> Option<&LookupStep> {
        self.steps.iter().max_by(|a, b| a.lookups_per_s.total_cmp(&b.lookups_per_s))
    }
}

/// The index trap: the same shuffled load of one-kilobyte items into a
/// table without a GSI, with a GSI keyed on an attribute of few values, and
/// with one keyed on an attribute of thousands. Its `seed_id` is the seed
/// whose figures it follows (`"004"`); no seed published these numbers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IndexTrap {
    pub loads: Vec<IndexTrapLoad>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IndexTrapLoad {
    /// `"no-index"`, `"low-cardinality"`, `"high-cardinality"`, ...
    pub case: String,
    pub label: String,
    pub modelled: bool,
    /// Items loaded (each one write unit, on the table and on the GSI).
    pub items: u64,
    /// The GSI's partition-key attribute; null for the table without one.
    pub gsi_key: Option<String>,
    /// Distinct values of that attribute among the items.
    pub gsi_key_values: Option<u64>,
    /// The GSI's partitions that took writes during the load (from its
    /// capacity model); null without a GSI or when not readable.
    pub gsi_partitions_written: Option<u64>,
    /// The GSI's partitions.
    pub gsi_partition_count: Option<u64>,
    /// The share of the GSI's write units its busiest partition took over
    /// the load (0 to 1); null without a GSI.
    pub gsi_hottest_partition_share: Option<f64>,
    pub seconds: f64,
    /// Mean items written per second over the load.
    pub rate_items_per_s: f64,
    /// The most items per second the capacity model can sustain for this
    /// load: the least of the table's capacity and, for the table and the
    /// GSI, 1,000 units a second over the share of the items their busiest
    /// partition takes.
    pub bound_items_per_s: f64,
    /// What sets `bound_items_per_s`, in words.
    pub bound: String,
    /// Items refused (throttled or left unprocessed) and re-sent.
    pub throttled_items: u64,
    /// The timeline's CSV, relative to the output directory.
    pub timeline_csv: String,
    pub timeline: Vec<IndexTrapSecond>,
}

impl IndexTrapLoad {
    /// Write units the GSI consumed over the load; None without a GSI.
    pub fn gsi_units_total(&self) -> Option<f64> {
        self.timeline.iter().map(|t| t.gsi_units).sum()
    }
}

/// One second of an index-trap load.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IndexTrapSecond {
    pub second: u64,
    /// Items written.
    pub items: u64,
    /// Write units the table consumed.
    pub table_units: f64,
    /// Write units the GSI consumed; null without a GSI.
    pub gsi_units: Option<f64>,
    /// Write units of the GSI's busiest partition; null without a GSI.
    pub gsi_hottest_partition_units: Option<f64>,
    /// Items refused (throttled or left unprocessed).
    pub throttled_items: u64,
}

/// A scenario this version does not know: its common fields only.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Other {}

impl Serialize for Scenarios {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        if let Some(v) = &self.write_apis {
            m.serialize_entry(WRITE_APIS, v)?;
        }
        if let Some(v) = &self.doc_size {
            m.serialize_entry(DOC_SIZE, v)?;
        }
        if let Some(v) = &self.doc_size_mongodb {
            m.serialize_entry(DOC_SIZE_MONGODB, v)?;
        }
        if let Some(v) = &self.parallel_patterns {
            m.serialize_entry(PARALLEL_PATTERNS, v)?;
        }
        if let Some(v) = &self.latency {
            m.serialize_entry(LATENCY, v)?;
        }
        if let Some(v) = &self.partition_keys {
            m.serialize_entry(PARTITION_KEYS, v)?;
        }
        if let Some(v) = &self.index_trap {
            m.serialize_entry(INDEX_TRAP, v)?;
        }
        for (k, v) in &self.other {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for Scenarios {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = BTreeMap::<String, Value>::deserialize(d)?;
        let mut out = Scenarios::default();
        for (key, v) in raw {
            let err = |e: serde_json::Error| D::Error::custom(format!("scenario {key}: {e}"));
            match key.as_str() {
                WRITE_APIS => out.write_apis = Some(serde_json::from_value(v).map_err(err)?),
                DOC_SIZE => out.doc_size = Some(serde_json::from_value(v).map_err(err)?),
                DOC_SIZE_MONGODB => out.doc_size_mongodb = Some(serde_json::from_value(v).map_err(err)?),
                PARALLEL_PATTERNS => out.parallel_patterns = Some(serde_json::from_value(v).map_err(err)?),
                LATENCY => out.latency = Some(serde_json::from_value(v).map_err(err)?),
                PARTITION_KEYS => out.partition_keys = Some(serde_json::from_value(v).map_err(err)?),
                INDEX_TRAP => out.index_trap = Some(serde_json::from_value(v).map_err(err)?),
                _ => {
                    let s = serde_json::from_value(v).map_err(err)?;
                    out.other.insert(key, s);
                }
            }
        }
        Ok(out)
    }
}

/// Writes `a` and `b` (each a struct) as one JSON object.
fn one_object<A: Serialize, B: Serialize, S: Serializer>(a: &A, b: &B, s: S) -> Result<S::Ok, S::Error> {
    let mut m = to_object::<_, S::Error>(a)?;
    m.extend(to_object::<_, S::Error>(b)?);
    m.serialize(s)
}

fn to_object<T: Serialize, E: serde::ser::Error>(v: &T) -> Result<serde_json::Map<String, Value>, E> {
    match serde_json::to_value(v) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(other) => Err(E::custom(format!("expected an object, not {other}"))),
        Err(e) => Err(E::custom(e)),
    }
}

/// Reads one JSON object as `A` and as `B` (each ignores the other's fields).
fn from_one_object<'de, A: DeserializeOwned, B: DeserializeOwned, D: Deserializer<'de>>(
    d: D,
) -> Result<(A, B), D::Error> {
    let v = Value::deserialize(d)?;
    let a = A::deserialize(&v).map_err(D::Error::custom)?;
    let b = B::deserialize(&v).map_err(D::Error::custom)?;
    Ok((a, b))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn percentiles(base: f64) -> Percentiles {
        Percentiles {
            min_ms: base,
            p50_ms: base + 1.0,
            p90_ms: base + 2.0,
            p95_ms: base + 3.0,
            p99_ms: base + 4.0,
            max_ms: base + 5.0,
        }
    }

    #[test]
    fn a_scenario_and_its_figures_are_one_object() {
        let row = LatencyRow { operation: "PutItem".into(), samples: 3, ours: percentiles(1.0), seed: None };
        let s = Scenario {
            seed_id: "003".into(),
            title: "Latency".into(),
            measured: true,
            explanation: "Why.".into(),
            duration_s: None,
            figures: Latency { rows: vec![row], calibration: Vec::new() },
        };
        let v = serde_json::to_value(&s).expect("serializes");
        assert_eq!(
            v,
            json!({
                "seed_id": "003", "title": "Latency", "measured": true, "explanation": "Why.",
                "rows": [{ "operation": "PutItem", "samples": 3, "seed": null, "min_ms": 1.0, "p50_ms": 2.0,
                           "p90_ms": 3.0, "p95_ms": 4.0, "p99_ms": 5.0, "max_ms": 6.0 }]
            })
        );
        assert_eq!(serde_json::from_value::<Scenario<Latency>>(v).expect("loads"), s);
    }

    #[test]
    fn a_missing_field_names_its_scenario() {
        let err = serde_json::from_value::<Scenarios>(json!({
            "latency": { "seed_id": "003", "title": "t", "measured": true, "explanation": "e",
                         "rows": [{ "operation": "PutItem", "samples": 3, "seed": null, "min_ms": 1.0 }] }
        }))
        .expect_err("percentiles missing");
        assert_eq!(err.to_string(), "scenario latency: missing field `p50_ms`");
    }

    #[test]
    fn percentile_labels_follow_the_values() {
        assert_eq!(Percentiles::LABELS, ["min", "p50", "p90", "p95", "p99", "max"]);
        assert_eq!(percentiles(0.0).values(), [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    }
}
