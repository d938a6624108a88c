//! `dynaburst load`'s real pipeline against the capacity model in virtual
//! time: seed 004's rates come out of the loader itself.

use std::io::Write;
use std::path::{Path, PathBuf};

use dynaburst_engine::BillingMode;
use dynaburst_input::{Compression, Format, InputSpec};
use dynaburst_loader::{Ending, Order, Prices};
use dynaburst_model::ScalarType;
use dynaburst_simulate::{simulate, SimOptions, Simulation, TableDesign, DEFAULT_ROUND_TRIP, DEFAULT_TABLE_AGE};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dynaburst-simulate-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// JSON Lines of 1 KB items (one write unit each): `key(i)` is the
/// partition key of the `i`th.
fn input(dir: &Path, n: u64, key: impl Fn(u64) -> String) -> PathBuf {
    let path = dir.join("input.jsonl");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    for i in 0..n {
        let head = format!("{{\"pk\":\"{}\",\"sk\":{i},\"pad\":\"", key(i));
        // pk + sk + pad names and values: pad the item to 1,024 bytes.
        let used = 2 + key(i).len() + 2 + i.to_string().len().div_ceil(2) + 1 + 3;
        writeln!(f, "{head}{}\"}}", "x".repeat(1024 - used)).unwrap();
    }
    path
}

fn design(name: &str, billing: BillingMode) -> TableDesign {
    TableDesign {
        name: name.to_string(),
        hash: ("pk".to_string(), ScalarType::S),
        range: Some(("sk".to_string(), ScalarType::N)),
        billing,
        warm: None,
        on_demand_max: None,
        global_indexes: Vec::new(),
        local_indexes: Vec::new(),
        index_attributes: Vec::new(),
    }
}

fn run(dir: &Path, path: PathBuf, design: TableDesign, order: Order) -> Simulation {
    let mut tuning = dynaburst_simulate::default_tuning(7);
    tuning.order = order;
    let sim = simulate(SimOptions {
        input: InputSpec { type_window: 1000, ..InputSpec::file(path, Format::JsonLines, Compression::None) },
        design,
        tuning,
        round_trip: DEFAULT_ROUND_TRIP,
        table_age: DEFAULT_TABLE_AGE,
        rejects: dir.join("rejects.jsonl"),
        prices: Prices::list(),
    })
    .unwrap();
    assert_eq!(sim.ending, Ending::Complete);
    sim
}

#[test]
fn one_partition_key_levels_off_at_1000_units() {
    let dir = temp_dir("single");
    let path = input(&dir, 30_000, |_| "0".to_string());
    let sim = run(&dir, path, design("single", BillingMode::PayPerRequest), Order::Interleave);
    let r = &sim.report;
    println!(
        "single key: {:.0} units/s over {:.1} s, {} throttle events, {} re-sent, wall {:.2} s",
        r.mean_units_per_s, r.predicted_duration_s, r.throttle_events, r.items_resent, r.simulation_wall_s
    );
    assert_eq!(r.load.records.written, 30_000);
    assert!((900.0..=1100.0).contains(&r.mean_units_per_s), "{}", r.mean_units_per_s);
    assert_eq!(r.hottest_partition_keys[0].key, "0");
}

#[test]
fn a_5_wcu_table_takes_its_burst_then_5_units_a_second_and_the_report_says_so() {
    let dir = temp_dir("prov5");
    // 2,000 one-unit items over 3 keys into a table created a second
    // before: it has banked no burst, so the load goes at 5 units a second.
    let path = input(&dir, 2_000, |i| format!("k{}", i % 3));
    let sim = run(&dir, path, design("prov5", BillingMode::Provisioned { read: 5, write: 5 }), Order::Interleave);
    let r = &sim.report;
    println!(
        "5 WCU: {:.1} units/s over {:.1} s, {} throttle events, {} re-sent, wall {:.2} s",
        r.mean_units_per_s, r.predicted_duration_s, r.throttle_events, r.items_resent, r.simulation_wall_s
    );
    assert_eq!(r.source, "simulated");
    assert_eq!(r.load.records.written, 2_000);
    // Never more than the provisioned rate since creation plus the burst
    // the table held at the start (at most 300 s of it).
    let allowed = 5.0 * (1.0 + r.predicted_duration_s) + 5.0 * 300.0;
    assert!(r.write_units <= allowed, "{} units, {allowed} allowed", r.write_units);
    assert!((380.0..=420.0).contains(&r.predicted_duration_s), "{} s", r.predicted_duration_s);
    assert!(r.throttle_events > 0);
    let cost = r.cost.provisioned_usd.unwrap();
    assert!((cost - 5.0 * r.predicted_duration_s / 3600.0 * Prices::list().per_wcu_hour).abs() < 1e-9);
    // Three keys, each a third of the load.
    assert_eq!(r.hottest_partition_keys.len(), 3);
    let per_key: f64 = r.hottest_partition_keys.iter().map(|k| k.written_units).sum();
    assert!((per_key - 2_000.0).abs() < 1e-6, "{per_key}");
    // The per-second curve adds up to the load.
    let consumed: f64 = sim.seconds.iter().map(|s| s.consumed_units).sum();
    assert!((consumed - r.write_units).abs() < 1e-6, "{consumed} vs {}", r.write_units);
    assert!(dynaburst_simulate::seconds_csv(&sim.seconds).starts_with("second,consumed_write_units,"));
}

#[test]
fn a_gsis_on_demand_maximum_caps_the_load_it_is_written_by() {
    let dir = temp_dir("gsimax");
    // 3,000 one-unit items over 300 keys: an on-demand table takes them in
    // about a second, but every item writes an entry to a GSI allowed 200
    // write units a second, whose throttling holds the load to its rate.
    let path = input(&dir, 3_000, |i| format!("k{}", i % 300));
    let mut capped = design("gsimax", BillingMode::PayPerRequest);
    capped.global_indexes.push(dynaburst_engine::IndexSpec {
        name: "by_sk".into(),
        key_schema: vec![("sk".into(), dynaburst_engine::KeyRole::Hash)],
        projection_type: Some(dynaburst_engine::ProjectionType::KeysOnly),
        non_key_attributes: None,
        throughput: None,
        on_demand: Some((None, Some(200))),
        warm: None,
    });
    capped.index_attributes.push(("sk".into(), ScalarType::N));
    let mut free = capped.clone();
    free.global_indexes[0].on_demand = None;
    let (capped, free) =
        (run(&dir, path.clone(), capped, Order::Interleave).report, run(&dir, path, free, Order::Interleave).report);
    println!(
        "GSI capped at 200: {:.1} s, {} throttle events; uncapped: {:.1} s, {} throttle events",
        capped.predicted_duration_s, capped.throttle_events, free.predicted_duration_s, free.throttle_events
    );
    assert_eq!((capped.load.records.written, free.load.records.written), (3_000, 3_000));
    // 3,000 entries at 200 a second (the first 200 at once).
    assert!((12.0..=16.5).contains(&capped.predicted_duration_s), "{} s", capped.predicted_duration_s);
    assert!(capped.throttle_events > 0);
    assert!(free.predicted_duration_s < 3.0, "{} s", free.predicted_duration_s);
}
