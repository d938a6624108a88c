//! The index trap in virtual time: the same shuffled load of orders runs
//! at the table's rate without a GSI or with a GSI keyed on thousands of
//! values, and at its busiest GSI partition's rate with a GSI keyed on
//! three values, even on a table provisioned at 10,000 WCU. Rates are items
//! per modelled second: no wall clock is read.

use std::collections::BTreeSet;

use dynaburst_bench::results::IndexTrapLoad;
use dynaburst_bench::scenarios::index_trap::ORDER_BYTES;
use dynaburst_bench::scenarios::{index_trap_modelled, index_trap_orders};
use dynaburst_model::AttributeValue;

const ITEMS: u64 = 24_000;

fn distinct(items: &[dynaburst_model::Item], attr: &str) -> usize {
    items.iter().filter_map(|i| i.get(attr)).map(|v| format!("{v:?}")).collect::<BTreeSet<_>>().len()
}

#[test]
fn orders_are_one_write_unit_each_with_three_statuses_and_shuffled() {
    let items = index_trap_orders(3_000, 7);
    assert_eq!(items.len(), 3_000);
    assert!(items.iter().all(|i| dynaburst_model::item_size(i) == ORDER_BYTES));
    assert_eq!(distinct(&items, "status"), 3);
    assert_eq!(distinct(&items, "customer"), 1_000);
    assert_eq!(distinct(&items, "pk"), 3_000);
    let in_order = items
        .iter()
        .enumerate()
        .filter(|(n, i)| i.get("pk") == Some(&AttributeValue::S(format!("order-{n:08}"))))
        .count();
    assert!(in_order < 30, "{in_order} orders in their place: not shuffled");
    // The same seed, the same order.
    assert_eq!(index_trap_orders(3_000, 7), items);
}

#[test]
fn a_low_cardinality_gsi_holds_the_load_to_its_busiest_partition() {
    let loads = index_trap_modelled(ITEMS, 4, &|line| println!("{line}")).expect("modelled loads");
    for l in &loads {
        println!(
            "{}: {:.0} items/s over {} s; bound {:.0} ({}); GSI partitions written {:?} of {:?}, busiest share {:?}",
            l.case,
            l.rate_items_per_s,
            l.seconds,
            l.bound_items_per_s,
            l.bound,
            l.gsi_partitions_written,
            l.gsi_partition_count,
            l.gsi_hottest_partition_share
        );
        assert_eq!(l.items, ITEMS, "{}", l.case);
        assert_eq!(l.timeline.iter().map(|t| t.items).sum::<u64>(), ITEMS, "{}: the timeline adds up", l.case);
        assert!(l.modelled);
        // Within 10% of the bound the capacity model sets (the first
        // second's burst lifts the mean a little above it).
        let ratio = l.rate_items_per_s / l.bound_items_per_s;
        assert!(
            (0.9..=1.1).contains(&ratio),
            "{}: {:.0} items/s against a bound of {:.0}",
            l.case,
            l.rate_items_per_s,
            l.bound_items_per_s
        );
    }
    let load = |case: &str| -> &IndexTrapLoad { loads.iter().find(|l| l.case == case).expect(case) };
    let (none, low, high, prov) =
        (load("no-index"), load("low-cardinality"), load("high-cardinality"), load("provisioned-low-cardinality"));

    // The GSI keys' values, counted from the orders.
    assert_eq!((low.gsi_key_values, high.gsi_key_values, none.gsi_key_values), (Some(3), Some(5_000), None));
    assert_eq!(high.label, "GSI on customer (5,000 values), new on-demand table");

    // No GSI: a new on-demand table's 4,000 write units a second.
    assert!((3_600.0..=4_400.0).contains(&none.rate_items_per_s), "{}", none.rate_items_per_s);
    assert_eq!(none.gsi_key, None);
    assert_eq!(none.gsi_units_total(), None);

    // Three values: at most three GSI partitions take the writes, each at
    // 1,000 units a second, so the load runs far below the table's rate.
    assert!(low.gsi_partitions_written.is_some_and(|p| (1..=3).contains(&p)), "{:?}", low.gsi_partitions_written);
    assert!(
        low.rate_items_per_s <= 0.5 * none.rate_items_per_s,
        "{} vs {}",
        low.rate_items_per_s,
        none.rate_items_per_s
    );
    assert!(low.rate_items_per_s <= 3_300.0, "{}", low.rate_items_per_s);
    assert!(low.bound.contains("GSI"), "{}", low.bound);
    // Its busiest partition spent its burst in the first second (the load
    // was throttled there); from then on it holds at 1,000 units a second.
    // A paced load may bank a little of a slow second and spend it in a
    // later one, so the bound is on the sum since second 1 (a 100-unit
    // allowance for where a second's edge falls).
    assert!(low.timeline[0].throttled_items > 0, "the burst is spent in the first second");
    let mut since = 0.0;
    for (k, t) in low.timeline.iter().enumerate().skip(1) {
        since += t.gsi_hottest_partition_units.expect("a GSI");
        assert!(since <= 1_000.0 * k as f64 + 100.0, "seconds 1 to {k}: {since} units on one GSI partition");
    }
    let steady: Vec<f64> =
        low.timeline.iter().skip(2).rev().skip(2).filter_map(|t| t.gsi_hottest_partition_units).collect();
    let mean = steady.iter().sum::<f64>() / steady.len().max(1) as f64;
    assert!(mean >= 950.0, "the hot GSI partition runs at its maximum: {mean}");

    // Thousands of values: the GSI spreads like the table, and the load
    // runs at the table's rate.
    assert_eq!(high.gsi_partitions_written, high.gsi_partition_count);
    assert!(
        high.rate_items_per_s >= 0.9 * none.rate_items_per_s,
        "{} vs {}",
        high.rate_items_per_s,
        none.rate_items_per_s
    );
    assert!(!high.bound.contains("GSI"), "{}", high.bound);
    assert_eq!(high.gsi_units_total(), Some(ITEMS as f64), "one GSI write unit per order");

    // Provisioning 10,000 WCU does not help: the three values still sit in
    // at most three GSI partitions.
    assert!(prov.rate_items_per_s <= 3_300.0, "{}", prov.rate_items_per_s);
    assert!(prov.rate_items_per_s <= 0.35 * 10_000.0);
}
