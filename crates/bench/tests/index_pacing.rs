//! Issue 15's sixth workload in virtual time: `dynaburst load`'s pipeline
//! into a new on-demand table whose GSI is keyed on three status values.
//! The busiest GSI partition (1,000 write units a second) bounds the load;
//! the loader must run at that bound (at least 95% of it after the first
//! ten seconds), re-send at most 5% of the items, and draw at most one
//! throttled request (refused, or answered with items unprocessed) a
//! second on average after the first ten seconds. Rates are items per
//! modelled second: no wall clock is read.

use dynaburst_bench::scenarios::index_trap_orders;
use dynaburst_bench::sim;
use dynaburst_engine::BillingMode;
use dynaburst_loader::{Concurrency, Order};
use dynaburst_model::ScalarType;

const ITEMS: u64 = 60_000;
const LIMIT_MS: u64 = 600_000;
/// A GSI partition's write units a second.
const PARTITION_WRITE_UNITS: f64 = 1000.0;

#[derive(Debug)]
struct Pacing {
    /// Items a second from second 10 to the last whole second.
    rate: f64,
    /// What the busiest GSI partition allows, items a second.
    bound: f64,
    resent: f64,
    throttled_per_s: f64,
}

fn paced(case: &str, round_trip_ms: u64, seed: u64) -> Pacing {
    let items = index_trap_orders(ITEMS, seed);
    let engine = sim::engine();
    let gsi = sim::Gsi { name: "by-status", key: ("status", ScalarType::S), throughput: None };
    sim::create_indexed(&engine, case, &[("pk", ScalarType::S)], BillingMode::PayPerRequest, &[gsi]).unwrap();
    let load =
        sim::load_with_round_trip(&engine, case, &items, Concurrency::Auto, Order::AsIs, LIMIT_MS, round_trip_ms)
            .unwrap();
    assert_eq!(load.written, ITEMS, "{case}");
    let end = sim::START_MS + load.elapsed_ms + 1000;
    let units = sim::index_partition_units(&engine, case, "by-status", sim::START_MS, end);
    let total: f64 = units.iter().sum();
    assert!((total - ITEMS as f64).abs() < 1e-6, "{case}: one GSI unit an order, every order once: {total}");
    let busiest = units.iter().copied().fold(0.0, f64::max) / total;
    // The table itself takes 4,000 items a second; the GSI's busiest
    // partition takes its share of every item at 1,000 units a second.
    let bound = (PARTITION_WRITE_UNITS / busiest).min(4000.0);
    let seconds = load.written_per_second.len();
    assert!(seconds >= 25, "{case}: a load long enough to judge after its first 10 s: {seconds} s");
    let steady = 10..seconds - 1;
    let n = steady.len() as f64;
    let rate = load.written_per_second[steady.clone()].iter().sum::<u64>() as f64 / n;
    let throttled: u64 = steady.filter_map(|s| load.throttled_per_second.get(s)).sum();
    let p = Pacing { rate, bound, resent: load.resent as f64 / ITEMS as f64, throttled_per_s: throttled as f64 / n };
    println!(
        "{case} ({round_trip_ms} ms): {:.0} items/s of {:.0} ({:.1}%), busiest GSI partition {:.0}% of the items, {:.2}% re-sent, {:.2} throttled requests/s over {} s",
        p.rate,
        p.bound,
        100.0 * p.rate / p.bound,
        100.0 * busiest,
        100.0 * p.resent,
        p.throttled_per_s,
        seconds
    );
    p
}

fn assert_goals(name: &str, p: &Pacing) {
    assert!(p.rate >= 0.95 * p.bound, "{name}: {p:?}");
    assert!(p.resent <= 0.05, "{name}: {p:?}");
    assert!(p.throttled_per_s <= 1.0, "{name}: {p:?}");
}

#[test]
fn a_gsi_on_three_values_is_loaded_at_its_busiest_partitions_rate_without_a_throttling_storm() {
    // A client in the table's region (10 ms), and one as far as seed 003's
    // service times put `serve --latency-model aws` (about 50 ms).
    for (rtt, seed) in [(10, 7), (50, 7), (50, 8)] {
        let name = format!("gsi-status-{rtt}ms-{seed}");
        let p = paced(&name, rtt, seed);
        assert_goals(&name, &p);
    }
}
