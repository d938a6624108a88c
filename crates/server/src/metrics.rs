//! The capacity model's metrics, rendered from `CapacityReport`s for
//! `GET /metrics` (Prometheus' text format) and `GET /metrics.json` (for
//! charts; the schema is [`MetricsDoc`], documented in README.md).

use std::fmt::Write as _;

use dynaburst_engine::capacity::Mode;
use dynaburst_engine::insights::{TopKey, TopKeysReport};
use dynaburst_engine::CapacityReport;
use dynaburst_engine::KeyValue;

use serde::Serialize;

/// `GET /metrics.json`: every table's model.
#[derive(Serialize, Debug, PartialEq)]
pub struct MetricsDoc {
    pub tables: Vec<TableMetrics>,
}

/// One table's model.
#[derive(Serialize, Debug, PartialEq)]
pub struct TableMetrics {
    pub table: String,
    /// The global secondary index this model is, when it is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<String>,
    /// "on-demand" or "provisioned".
    pub mode: &'static str,
    /// Provisioned units per second; null on demand.
    pub provisioned: Option<ReadWrite>,
    pub partition_count: usize,
    /// Units per second the table takes at once.
    pub warm_throughput: ReadWrite,
    /// Units per second one partition serves.
    pub partition_max: ReadWrite,
    /// Units per second an on-demand table may reach (the account limit).
    pub table_max: ReadWrite,
    /// An on-demand table's current ceiling, which follows its sustained
    /// peaks; null when provisioned.
    pub on_demand_ceiling: Option<ReadWrite>,
    pub item_count: u64,
    pub size_bytes: u64,
    /// The current partitions, in key-space order.
    pub partitions: Vec<Partition>,
    pub totals: Totals,
    pub splits: Vec<Split>,
    /// The last throttling events, oldest first.
    pub throttles: Vec<ThrottleEvent>,
    /// Most accessed and most throttled keys over the last one to two
    /// minutes (a table's model only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_keys: Option<TopKeys>,
    pub seconds: Vec<Second>,
}

/// One current partition.
#[derive(Serialize, Debug, PartialEq)]
pub struct Partition {
    /// Start of its key-hash range, 32 hex digits.
    pub start: String,
    pub size_bytes: u64,
}

/// Refusals of one reason on one partition within one second.
#[derive(Serialize, Debug, PartialEq)]
pub struct ThrottleEvent {
    pub at_ms: u64,
    /// DynamoDB's reason, e.g. "TableWriteKeyRangeThroughputExceeded".
    pub reason: &'static str,
    /// Start of the partition's key-hash range, 32 hex digits.
    pub partition: String,
    pub items: u64,
}

/// Top keys, most first.
#[derive(Serialize, Debug, PartialEq)]
pub struct TopKeys {
    /// Weighted as Contributor Insights weighs access: 3 x WCU + RCU.
    pub accessed_partition_keys: Vec<KeyCount>,
    /// Items refused.
    pub throttled_partition_keys: Vec<KeyCount>,
    pub accessed_keys: Vec<KeyCount>,
    pub throttled_keys: Vec<KeyCount>,
}

/// One counted key; numbers as written, binary as hex.
#[derive(Serialize, Debug, PartialEq)]
pub struct KeyCount {
    pub partition_key: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sort_key: Option<String>,
    pub count: f64,
}

/// A key value as text: a string as is, a number as written, binary as hex.
fn key_text(v: &KeyValue) -> String {
    match v {
        KeyValue::S(s) => s.clone(),
        KeyValue::N(n) => n.to_string(),
        KeyValue::B(b) => b.iter().fold(String::with_capacity(2 * b.len()), |mut out, byte| {
            let _ = write!(out, "{byte:02x}");
            out
        }),
    }
}

fn key_counts(keys: &[TopKey]) -> Vec<KeyCount> {
    keys.iter()
        .map(|k| KeyCount {
            partition_key: key_text(&k.partition),
            sort_key: k.sort.as_ref().map(key_text),
            count: k.count,
        })
        .collect()
}

impl TopKeys {
    fn new(r: &TopKeysReport) -> TopKeys {
        TopKeys {
            accessed_partition_keys: key_counts(&r.accessed_partition_keys),
            throttled_partition_keys: key_counts(&r.throttled_partition_keys),
            accessed_keys: key_counts(&r.accessed_keys),
            throttled_keys: key_counts(&r.throttled_keys),
        }
    }
}

/// Read and write units per second.
#[derive(Serialize, Debug, PartialEq)]
pub struct ReadWrite {
    pub read: f64,
    pub write: f64,
}

/// Running totals since the table was created.
#[derive(Serialize, Debug, PartialEq)]
pub struct Totals {
    pub read_units: f64,
    pub write_units: f64,
    pub throttled_requests: u64,
    pub throttled_items: u64,
}

/// One partition split.
#[derive(Serialize, Debug, PartialEq)]
pub struct Split {
    pub at_ms: u64,
    /// "heat", "size" or "throughput".
    pub reason: &'static str,
    pub partitions_after: usize,
    /// Start of the parent's key-hash range and where it split, 32 hex
    /// digits each.
    pub start: String,
    pub split_at: String,
}

/// One completed second.
#[derive(Serialize, Debug, PartialEq)]
pub struct Second {
    pub second: u64,
    pub read_units: f64,
    pub write_units: f64,
    pub throttled_requests: u64,
    pub throttled_read_items: u64,
    pub throttled_write_items: u64,
    pub partition_count: usize,
    /// Partitions with any traffic or throttling in that second.
    pub partitions: Vec<PartitionSecond>,
}

/// One partition's second.
#[derive(Serialize, Debug, PartialEq)]
pub struct PartitionSecond {
    /// Start of the partition's key-hash range, 32 hex digits.
    pub start: String,
    pub read_units: f64,
    pub write_units: f64,
    pub throttled_items: u64,
}

impl MetricsDoc {
    /// The document for `reports`; `since` keeps only seconds at or after it.
    pub fn new(reports: &[CapacityReport], since: Option<u64>) -> MetricsDoc {
        MetricsDoc { tables: reports.iter().map(|r| TableMetrics::new(r, since)).collect() }
    }
}

impl TableMetrics {
    fn new(r: &CapacityReport, since: Option<u64>) -> TableMetrics {
        let (mode, provisioned) = match r.mode {
            Mode::OnDemand => ("on-demand", None),
            Mode::Provisioned { read, write } => ("provisioned", Some(ReadWrite { read, write })),
        };
        let m = &r.metrics;
        TableMetrics {
            table: r.table_name.clone(),
            index: r.index_name.clone(),
            mode,
            provisioned,
            partition_count: r.partitions.len(),
            warm_throughput: ReadWrite { read: r.warm_throughput.0, write: r.warm_throughput.1 },
            partition_max: ReadWrite { read: r.partition_max.0, write: r.partition_max.1 },
            table_max: ReadWrite { read: r.table_max.0, write: r.table_max.1 },
            on_demand_ceiling: r.on_demand_ceiling.map(|(read, write)| ReadWrite { read, write }),
            item_count: r.item_count,
            size_bytes: r.size_bytes,
            partitions: r
                .partitions
                .iter()
                .map(|p| Partition { start: format!("{:032x}", p.start), size_bytes: p.size_bytes })
                .collect(),
            throttles: m
                .throttles
                .iter()
                .map(|t| ThrottleEvent {
                    at_ms: t.at.0,
                    reason: t.reason,
                    partition: format!("{:032x}", t.partition_start),
                    items: t.items,
                })
                .collect(),
            top_keys: r.top_keys.as_ref().map(TopKeys::new),
            totals: Totals {
                read_units: m.total_read_units,
                write_units: m.total_write_units,
                throttled_requests: m.total_throttled_requests,
                throttled_items: m.total_throttled_items,
            },
            splits: m
                .splits
                .iter()
                .map(|e| Split {
                    at_ms: e.at.0,
                    reason: e.reason.name(),
                    partitions_after: e.partitions_after,
                    start: format!("{:032x}", e.start),
                    split_at: format!("{:032x}", e.split_at),
                })
                .collect(),
            seconds: m
                .seconds
                .iter()
                .filter(|s| since.is_none_or(|t| s.second >= t))
                .map(|s| Second {
                    second: s.second,
                    read_units: s.read_units,
                    write_units: s.write_units,
                    throttled_requests: s.throttled_requests,
                    throttled_read_items: s.throttled_read_items,
                    throttled_write_items: s.throttled_write_items,
                    partition_count: s.partition_count,
                    partitions: s
                        .partitions
                        .iter()
                        .map(|p| PartitionSecond {
                            start: format!("{:032x}", p.start),
                            read_units: p.read_units,
                            write_units: p.write_units,
                            throttled_items: p.throttled_items,
                        })
                        .collect(),
                })
                .collect(),
        }
    }
}

/// `GET /metrics.json`'s body.
pub fn metrics_json(reports: &[CapacityReport], since: Option<u64>) -> Vec<u8> {
    // Plain structs of numbers and strings always serialize.
    serde_json::to_vec(&MetricsDoc::new(reports, since)).unwrap_or_default()
}

/// The capacity model's metrics in Prometheus' text format: running totals
/// as counters, and the last completed second as gauges.
pub fn prometheus_text(reports: &[CapacityReport]) -> String {
    let mut out = String::new();
    let mut family = |name: &str, kind: &str, help: &str, rows: &mut dyn Iterator<Item = (String, f64)>| {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} {kind}");
        for (labels, value) in rows {
            let _ = writeln!(out, "{name}{{{labels}}} {value}");
        }
    };
    let escape = |t: &str| t.replace('\\', "\\\\").replace('"', "\\\"");
    // A GSI's own model is labelled with its table and index.
    let label = |r: &CapacityReport| match &r.index_name {
        Some(i) => format!("table=\"{}\",index=\"{}\"", escape(&r.table_name), escape(i)),
        None => format!("table=\"{}\"", escape(&r.table_name)),
    };
    family(
        "dynaburst_consumed_read_units_total",
        "counter",
        "Read units consumed.",
        &mut reports.iter().map(|r| (label(r), r.metrics.total_read_units)),
    );
    family(
        "dynaburst_consumed_write_units_total",
        "counter",
        "Write units consumed.",
        &mut reports.iter().map(|r| (label(r), r.metrics.total_write_units)),
    );
    family(
        "dynaburst_throttled_requests_total",
        "counter",
        "Requests answered with a throttling error.",
        &mut reports.iter().map(|r| (label(r), r.metrics.total_throttled_requests as f64)),
    );
    family(
        "dynaburst_throttled_items_total",
        "counter",
        "Items refused by the capacity model (throttled or unprocessed).",
        &mut reports.iter().map(|r| (label(r), r.metrics.total_throttled_items as f64)),
    );
    family(
        "dynaburst_partitions",
        "gauge",
        "Current partition count.",
        &mut reports.iter().map(|r| (label(r), r.partitions.len() as f64)),
    );
    family(
        "dynaburst_splits_total",
        "counter",
        "Partition splits since the table was created.",
        &mut reports.iter().map(|r| (label(r), r.metrics.splits.len() as f64)),
    );
    family(
        "dynaburst_warm_write_units",
        "gauge",
        "Write units per second the table takes at once.",
        &mut reports.iter().map(|r| (label(r), r.warm_throughput.1)),
    );
    family(
        "dynaburst_warm_read_units",
        "gauge",
        "Read units per second the table takes at once.",
        &mut reports.iter().map(|r| (label(r), r.warm_throughput.0)),
    );
    let last = |r: &CapacityReport| r.metrics.seconds.back().cloned();
    family(
        "dynaburst_last_second_write_units",
        "gauge",
        "Write units consumed in the last completed second.",
        &mut reports.iter().filter_map(|r| last(r).map(|s| (label(r), s.write_units))),
    );
    family(
        "dynaburst_last_second_read_units",
        "gauge",
        "Read units consumed in the last completed second.",
        &mut reports.iter().filter_map(|r| last(r).map(|s| (label(r), s.read_units))),
    );
    family(
        "dynaburst_last_second_throttled_items",
        "gauge",
        "Items throttled in the last completed second.",
        &mut reports
            .iter()
            .filter_map(|r| last(r).map(|s| (label(r), (s.throttled_read_items + s.throttled_write_items) as f64))),
    );
    family(
        "dynaburst_partition_last_second_write_units",
        "gauge",
        "Write units per partition in the last completed second.",
        &mut reports.iter().flat_map(|r| {
            let t = label(r);
            last(r)
                .map(|s| s.partitions)
                .unwrap_or_default()
                .into_iter()
                .map(move |p| (format!("{t},partition=\"{:032x}\"", p.start), p.write_units))
        }),
    );
    out
}
