//! The index trap: a bulk load into a table whose GSI is keyed on an
//! attribute of few values runs at the GSI's hot partitions' rate.
//!
//! Every write to the table is also a write to each GSI it touches, and
//! DynamoDB admits it only when the table and every such GSI have room
//! (`crates/engine/src/write.rs`, `admit_set`). A GSI has its own
//! partitions; all entries of one GSI partition-key value live in one of
//! them, and a partition takes at most 1,000 write units a second. So a GSI
//! keyed on `status` (three values) holds the whole load to at most three
//! partitions' worth, 3,000 items a second, less when two values share a
//! partition, however much the table could take. A GSI keyed on a customer
//! id (thousands of values) spreads like the table and costs nothing in
//! rate (only the extra write units).

use dynaburst_engine::{Engine, Millis};

use super::*;
use crate::results::{IndexTrap, IndexTrapLoad, IndexTrapSecond};

/// The GSI's name on every table of the scenario.
const GSI_NAME: &str = "by_key";

/// The low-cardinality GSI key's values.
const STATUSES: [&str; 3] = ["PENDING", "SHIPPED", "DELIVERED"];
/// Distinct customers: the high-cardinality GSI key.
const CUSTOMERS: u64 = 5_000;
/// Write units a second one partition takes (`CapacitySettings::dynamodb`).
const PARTITION_WCU: f64 = 1_000.0;
/// Write units a second a new on-demand table (or GSI) takes at once.
const NEW_ON_DEMAND_WCU: f64 = 4_000.0;
/// The provisioned case's table and GSI write units.
const PROVISIONED_WCU: u64 = 10_000;
/// At most 10 modelled minutes per load.
const LIMIT_MS: u64 = 600_000;

/// One case: which GSI, and on what capacity.
struct Case {
    case: &'static str,
    label: &'static str,
    /// The GSI's key attribute; None: no GSI.
    gsi: Option<&'static str>,
    /// Provisioned write units of the table and the GSI; None: on demand.
    provisioned: Option<u64>,
}

const CASES: [Case; 4] = [
    Case { case: "no-index", label: "No GSI, new on-demand table", gsi: None, provisioned: None },
    Case {
        case: "low-cardinality",
        label: "GSI on status ({values} values), new on-demand table",
        gsi: Some("status"),
        provisioned: None,
    },
    Case {
        case: "high-cardinality",
        label: "GSI on customer ({values} values), new on-demand table",
        gsi: Some("customer"),
        provisioned: None,
    },
    Case {
        case: "provisioned-low-cardinality",
        label: "GSI on status ({values} values), table and GSI provisioned at 10,000 WCU",
        gsi: Some("status"),
        provisioned: Some(PROVISIONED_WCU),
    },
];

/// An order's size: one write unit on the table, and one on a GSI
/// projecting every attribute, whose entries count 100 bytes more
/// (`INDEX_ENTRY_OVERHEAD_BYTES`; a 1,024-byte item would cost two units
/// there).
pub const ORDER_BYTES: usize = 1024 - 100;

/// `count` orders of [`ORDER_BYTES`], in the order `seed` shuffles them.
pub fn orders(count: u64, seed: u64) -> Vec<Item> {
    let mut items: Vec<Item> = (0..count)
        .map(|i| {
            let mut item = Item::new();
            item.insert("pk".into(), AttributeValue::S(format!("order-{i:08}")));
            item.insert("status".into(), AttributeValue::S(STATUSES[(i % 3) as usize].to_string()));
            item.insert("customer".into(), AttributeValue::S(format!("c-{:05}", (i / 3) % CUSTOMERS)));
            let used = dynaburst_model::item_size(&item) + "pad".len();
            item.insert("pad".into(), AttributeValue::S("x".repeat(ORDER_BYTES.saturating_sub(used))));
            item
        })
        .collect();
    dynaburst_datagen::Rng::new(seed).shuffle(&mut items);
    items
}

fn write_timeline_csv(path: &Path, rows: &[IndexTrapSecond]) -> Result<(), ScenarioError> {
    let mut s = String::from(
        "second,items_written,table_write_units,gsi_write_units,gsi_hottest_partition_write_units,throttled_items\n",
    );
    let opt = |v: Option<f64>| v.map(|v| format!("{v}")).unwrap_or_default();
    for r in rows {
        s.push_str(&format!(
            "{},{},{},{},{},{}\n",
            r.second,
            r.items,
            r.table_units,
            opt(r.gsi_units),
            opt(r.gsi_hottest_partition_units),
            r.throttled_items
        ));
    }
    std::fs::write(path, s).map_err(BenchError::io("write", path))
}

/// The table's own bound on this load, in items a second, and its words.
fn table_bound(case: &Case) -> (f64, String) {
    match case.provisioned {
        Some(w) => (w as f64, format!("the table's {} provisioned WCU", crate::format::format_count(w as f64))),
        None => (NEW_ON_DEMAND_WCU, "a new on-demand table's 4,000 WRU/s".to_string()),
    }
}

/// A share as a whole percentage, "–" when unknown.
fn percent(share: Option<f64>) -> String {
    share.map(|s| format!("{:.0}%", s * 100.0)).unwrap_or_else(|| crate::format::MISSING.to_string())
}

/// Distinct values of the GSI key of `case` among `items`; None without a GSI.
fn key_values(case: &Case, items: &[Item]) -> Option<u64> {
    let key = case.gsi?;
    let values: std::collections::BTreeSet<&str> = items.iter().filter_map(|i| i.get(key)?.as_s()).collect();
    Some(values.len() as u64)
}

/// The case's label for `items`: with its GSI key's count of values.
fn label(case: &Case, values: Option<u64>) -> String {
    let values = values.map(|v| crate::format::format_count(v as f64)).unwrap_or_default();
    case.label.replace("{values}", &values)
}

/// The GSI of `case`, as `sim` creates it.
fn gsis(case: &Case) -> Vec<sim::Gsi<'static>> {
    case.gsi
        .iter()
        .map(|key| sim::Gsi {
            name: GSI_NAME,
            key: (key, ScalarType::S),
            throughput: case.provisioned.map(|w| (1000, w)),
        })
        .collect()
}

fn billing(case: &Case) -> EngineBilling {
    match case.provisioned {
        Some(w) => EngineBilling::Provisioned { read: 1000, write: w },
        None => EngineBilling::PayPerRequest,
    }
}

/// What the capacity model allows this load, given the write units each
/// GSI partition took over it (largest first) and the GSI key's count of
/// `values`: `(items/s, in words, the busiest GSI partition's share)`.
fn bound(case: &Case, gsi_partition_units: &[f64], values: Option<u64>) -> (f64, String, Option<f64>) {
    let (capacity, words) = table_bound(case);
    let (Some(key), Some(values)) = (case.gsi, values) else { return (capacity, words, None) };
    // A shuffled load is as fast as its busiest partition allows: that
    // partition takes its share of the items at 1,000 units a second.
    let total: f64 = gsi_partition_units.iter().sum();
    let share = gsi_partition_units.first().map(|max| max / total).filter(|s| s.is_finite() && *s > 0.0);
    let Some(s) = share else { return (capacity, words, None) };
    let gsi_limit = (PARTITION_WCU / s).min(capacity);
    // Below the table's capacity by more than the unevenness of hashing
    // thousands of keys: the GSI sets the pace.
    if gsi_limit >= 0.9 * capacity {
        return (capacity, words, share);
    }
    let which = if values <= 10 {
        let n = (s * values as f64).round() as u64;
        format!(" ({n} of the {values} values of `{key}`)")
    } else {
        String::new()
    };
    (gsi_limit, format!("the GSI's busiest partition: {} of its writes{which} at 1,000 WCU", percent(share)), share)
}

/// One modelled load of `items` for `case`.
fn modelled(case: &Case, items: Vec<Item>) -> Result<IndexTrapLoad, ScenarioError> {
    let count = items.len() as u64;
    let values = key_values(case, &items);
    let e = sim::engine();
    sim::create_indexed(&e, case.case, &[("pk", ScalarType::S)], billing(case), &gsis(case))
        .map_err(|e| e.to_string())?;
    let load = sim::load(&e, case.case, &items, Concurrency::Auto, Order::AsIs, LIMIT_MS)?;
    if load.written != count {
        return Err(format!(
            "index-trap {}: {} of {count} items written in {} modelled s",
            case.case,
            load.written,
            LIMIT_MS / 1000
        )
        .into());
    }
    // The models' seconds up to the one after the load's last.
    let end = sim::START_MS + load.elapsed_ms + 1000;
    let (index, units) = if case.gsi.is_some() {
        (
            sim::index_timeline(&e, case.case, GSI_NAME, sim::START_MS, end),
            sim::index_partition_units(&e, case.case, GSI_NAME, sim::START_MS, end),
        )
    } else {
        (Vec::new(), Vec::new())
    };
    let seconds = load.written_per_second.len().max(load.timeline.len());
    let rows: Vec<(u64, u64)> = (0..seconds)
        .map(|i| {
            (load.written_per_second.get(i).copied().unwrap_or(0), load.resent_per_second.get(i).copied().unwrap_or(0))
        })
        .collect();
    let timeline = merge(case, &rows, &load.timeline, &index);
    let (bound, bound_words, share) = bound(case, &units, values);
    Ok(IndexTrapLoad {
        case: case.case.to_string(),
        label: label(case, values),
        modelled: true,
        items: count,
        gsi_key: case.gsi.map(str::to_string),
        gsi_key_values: values,
        gsi_partitions_written: index.iter().map(|s| s.partitions_written as u64).max(),
        gsi_partition_count: index.iter().map(|s| s.partition_count as u64).max(),
        gsi_hottest_partition_share: share,
        seconds: load.elapsed_ms as f64 / 1000.0,
        rate_items_per_s: load.mean_rate(),
        bound_items_per_s: bound,
        bound: bound_words,
        throttled_items: load.resent,
        timeline_csv: format!("index-trap-{}.csv", case.case),
        timeline,
    })
}

/// Per-second rows from the writer's `(items written, items refused)` per
/// second and the table's and GSI's capacity models, numbered alike.
fn merge(case: &Case, rows: &[(u64, u64)], table: &[sim::Second], gsi: &[sim::IndexSecond]) -> Vec<IndexTrapSecond> {
    let seconds = rows.len().max(table.len());
    (0..seconds)
        .map(|i| {
            let t = table.iter().find(|s| s.second == i as u64);
            let g = gsi.iter().find(|s| s.second == i as u64);
            let with_gsi = |f: fn(&sim::IndexSecond) -> f64| case.gsi.map(|_| g.map(f).unwrap_or(0.0));
            let (items, refused) = rows.get(i).copied().unwrap_or((0, 0));
            IndexTrapSecond {
                second: i as u64,
                items,
                table_units: t.map(|s| s.consumed).unwrap_or(0.0),
                gsi_units: with_gsi(|s| s.consumed),
                gsi_hottest_partition_units: with_gsi(|s| s.hottest_partition),
                throttled_items: refused,
            }
        })
        .collect()
}

/// Milliseconds since the Unix epoch: the embedded server's time.
fn wall_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// One load of `items` for `case` over HTTP on the wall clock, with
/// `dynaburst load`, into a table created on the embedded server's
/// `engine` (the bench's client cannot create GSIs); the table's and the
/// GSI's seconds come from that engine's capacity models.
async fn measured(ctx: &Ctx, engine: &Engine, case: &Case, items: &[Item]) -> Result<IndexTrapLoad, ScenarioError> {
    let values = key_values(case, items);
    let table = unique(case.case, ctx.seed);
    sim::create_indexed_at(engine, &table, &[("pk", ScalarType::S)], billing(case), &gsis(case), Millis(wall_ms()))
        .map_err(|e| e.to_string())?;
    let path = ctx.out_dir.join(format!(".{}.jsonl", case.case));
    {
        use std::io::Write;
        let file = std::fs::File::create(&path).map_err(BenchError::io("create", &path))?;
        let mut f = std::io::BufWriter::new(file);
        for i in items {
            let v: serde_json::Map<String, Value> = i
                .iter()
                .filter_map(|(k, v)| match v {
                    AttributeValue::S(s) => Some((k.clone(), json!(s))),
                    _ => None,
                })
                .collect();
            writeln!(f, "{}", Value::Object(v)).map_err(BenchError::io("write", &path))?;
        }
        f.flush().map_err(BenchError::io("write", &path))?;
    }
    let start = wall_ms();
    let result = run_loader(ctx, &ctx.modelled_url, &path, &table, Concurrency::Auto, Order::AsIs).await;
    let _ = std::fs::remove_file(&path);
    let result = result?;
    let end = wall_ms() + 1000;
    let table_seconds = sim::table_timeline(engine, &table, start, end);
    let (index, units) = if case.gsi.is_some() {
        (
            sim::index_timeline(engine, &table, GSI_NAME, start, end),
            sim::index_partition_units(engine, &table, GSI_NAME, start, end),
        )
    } else {
        (Vec::new(), Vec::new())
    };
    let mut rows = Vec::new();
    for r in &result.timeline {
        let i = r.second as usize;
        if rows.len() <= i {
            rows.resize(i + 1, (0, 0));
        }
        rows[i] = (r.items_written, r.unprocessed_items);
    }
    let load = &result.report.load;
    let (bound, bound_words, share) = bound(case, &units, values);
    Ok(IndexTrapLoad {
        case: case.case.to_string(),
        label: label(case, values),
        modelled: false,
        items: items.len() as u64,
        gsi_key: case.gsi.map(str::to_string),
        gsi_key_values: values,
        gsi_partitions_written: index.iter().map(|s| s.partitions_written as u64).max(),
        gsi_partition_count: index.iter().map(|s| s.partition_count as u64).max(),
        gsi_hottest_partition_share: share,
        seconds: load.duration_s,
        rate_items_per_s: load.items_per_s.mean,
        bound_items_per_s: bound,
        bound: bound_words,
        throttled_items: load.items_resent,
        timeline_csv: format!("index-trap-{}.csv", case.case),
        timeline: merge(case, &rows, &table_seconds, &index),
    })
}

/// The four cases' modelled loads of the same `count` shuffled orders
/// (shuffled by `seed`), in virtual time; `say` hears each case start.
pub fn modelled_loads(count: u64, seed: u64, say: &dyn Fn(String)) -> Result<Vec<IndexTrapLoad>, ScenarioError> {
    let items = orders(count, seed);
    let mut loads = Vec::with_capacity(CASES.len());
    for case in &CASES {
        say(format!("index-trap: {}, {count} items (modelled)", label(case, key_values(case, &items))));
        loads.push(modelled(case, items.clone())?);
    }
    Ok(loads)
}

/// The index trap: one shuffled load into four tables, modelled, or with
/// `--real-time` over HTTP into the embedded server.
pub async fn index_trap(ctx: &Ctx) -> Result<Scenario<IndexTrap>, ScenarioError> {
    if ctx.external {
        return Err("index-trap needs a table with a GSI, which the bench's client cannot create over HTTP yet: \
                    run it without --endpoint-url (modelled, or --real-time against the embedded server)"
            .into());
    }
    let modelled_run = !ctx.real_time;
    // ~20 s at the table's rate: enough for the GSI's partitions to spend
    // their burst and show their steady rate.
    let count = if modelled_run { ctx.n(80_000, 12_000) } else { ctx.n(80_000, 4_000) };
    let loads = if modelled_run {
        modelled_loads(count, ctx.seed, &|line| (ctx.say)(line))?
    } else {
        let engine = ctx.modelled_engine.clone().ok_or("index-trap --real-time needs the embedded server")?;
        let items = orders(count, ctx.seed);
        let mut loads = Vec::with_capacity(CASES.len());
        for case in &CASES {
            (ctx.say)(format!("index-trap: {}, {count} items (real time)", label(case, key_values(case, &items))));
            loads.push(measured(ctx, &engine, case, &items).await?);
        }
        loads
    };
    for load in &loads {
        write_timeline_csv(&ctx.out_dir.join(&load.timeline_csv), &load.timeline)?;
    }
    let explanation = if modelled_run {
        "No seed measured this: it follows seed 004's figures with a GSI added. The loads are modelled in virtual time: the engine in-process with the capacity model on (the table and its GSI each with their own partitions), dynaburst load's own pipeline (auto concurrency, BatchWriteItem of 25 orders of 924 bytes, one write unit on the table and one on a GSI projecting every attribute, each request a 10 ms round trip) re-sending what comes back unprocessed or throttled."
    } else {
        "No seed measured this: it follows seed 004's figures with a GSI added. The loads ran over HTTP on the wall clock with dynaburst load into the embedded server (--real-time), each table created with its GSI on the server's engine; the per-second table and GSI units are that engine's capacity models', the items per second the loader's."
    };
    Ok(Scenario {
        seed_id: "004".into(),
        title: "The index trap: a bulk load into a table with a low-cardinality GSI".into(),
        measured: !modelled_run,
        explanation: explanation.into(),
        duration_s: None,
        figures: IndexTrap { loads },
    })
}
