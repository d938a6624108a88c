//! The capacity model's metrics as JSON (GET /metrics.json), for charts.
//!
//! Schema (documented in README.md):
//! `{"tables": [{"table": name, "mode": "on-demand"|"provisioned",
//!   "provisioned": {"read": r, "write": w} | null,
//!   "partition_count": n, "warm_throughput": {"read": r, "write": w},
//!   "totals": {"read_units", "write_units", "throttled_requests", "throttled_items"},
//!   "splits": [{"at_ms", "reason", "partitions_after"}],
//!   "seconds": [{"second", "read_units", "write_units", "throttled_requests",
//!     "throttled_read_items", "throttled_write_items", "partition_count",
//!     "partitions": [{"start": hex, "read_units", "write_units", "throttled_items"}]}]}]}`

use dynaburst_engine::capacity::Mode;
use dynaburst_engine::CapacityReport;
use serde_json::{json, Value};

/// Renders capacity reports; `since` keeps only seconds at or after it.
pub fn metrics_json(reports: &[CapacityReport], since: Option<u64>) -> Vec<u8> {
    let tables: Vec<Value> = reports
        .iter()
        .map(|r| {
            let (mode, provisioned) = match r.mode {
                Mode::OnDemand => ("on-demand", Value::Null),
                Mode::Provisioned { read, write } => ("provisioned", json!({"read": read, "write": write})),
            };
            let seconds: Vec<Value> = r
                .metrics
                .seconds
                .iter()
                .filter(|s| since.is_none_or(|t| s.second >= t))
                .map(|s| {
                    json!({
                        "second": s.second,
                        "read_units": s.read_units,
                        "write_units": s.write_units,
                        "throttled_requests": s.throttled_requests,
                        "throttled_read_items": s.throttled_read_items,
                        "throttled_write_items": s.throttled_write_items,
                        "partition_count": s.partition_count,
                        "partitions": s.partitions.iter().map(|p| json!({
                            "start": format!("{:032x}", p.start),
                            "read_units": p.read_units,
                            "write_units": p.write_units,
                            "throttled_items": p.throttled_items,
                        })).collect::<Vec<_>>(),
                    })
                })
                .collect();
            json!({
                "table": r.table_name,
                "mode": mode,
                "provisioned": provisioned,
                "partition_count": r.partitions.len(),
                "warm_throughput": {"read": r.warm_throughput.0, "write": r.warm_throughput.1},
                "totals": {
                    "read_units": r.metrics.total_read_units,
                    "write_units": r.metrics.total_write_units,
                    "throttled_requests": r.metrics.total_throttled_requests,
                    "throttled_items": r.metrics.total_throttled_items,
                },
                "splits": r.metrics.splits.iter().map(|e| json!({
                    "at_ms": e.at.0,
                    "reason": e.reason.name(),
                    "partitions_after": e.partitions_after,
                })).collect::<Vec<_>>(),
                "seconds": seconds,
            })
        })
        .collect();
    serde_json::to_vec(&json!({ "tables": tables })).unwrap_or_default()
}
