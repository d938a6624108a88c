//! Seed 002's and seed 004's load scenarios through the engine's real
//! BatchWriteItem with the capacity model on, in virtual time: `dynaburst
//! load`'s own pipeline (`dynaburst_bench::sim::load`) sends batches of 25
//! one-kilobyte items, each request a 10 ms round trip, and re-sends what
//! comes back unprocessed or throttled. Minutes of modelled load take
//! seconds.

use dynaburst_bench::sim;
use dynaburst_datagen::Rng;
use dynaburst_engine::*;
use dynaburst_loader::{Concurrency, Order};
use dynaburst_model::{AttributeValue, Item, Number, ScalarType};

/// An item of exactly 1,024 bytes (one write unit).
fn item(pk: &str, sk: u64) -> Item {
    let mut i = Item::new();
    i.insert("pk".into(), AttributeValue::S(pk.to_string()));
    i.insert("sk".into(), AttributeValue::N(Number::from_i64(sk as i64)));
    let used = dynaburst_model::item_size(&i) + "pad".len();
    i.insert("pad".into(), AttributeValue::S("x".repeat(1024 - used)));
    assert_eq!(dynaburst_model::item_size(&i), 1024);
    i
}

/// A table keyed by pk (S) and sk (N).
fn create(engine: &Engine, name: &str, billing: BillingMode) {
    sim::create(engine, name, &[("pk", ScalarType::S), ("sk", ScalarType::N)], billing).unwrap();
}

/// ~200 partition-key values, like seed 004's first octets, each with
/// `per_key` ranges, in sorted order.
fn octet_dataset(per_key: u64) -> Vec<Item> {
    let mut items = Vec::new();
    for octet in 1..=200u64 {
        for i in 0..per_key {
            items.push(item(&octet.to_string(), i));
        }
    }
    items
}

/// `items` in the order seed `seed` shuffles them into.
fn shuffled(mut items: Vec<Item>, seed: u64) -> Vec<Item> {
    Rng::new(seed).shuffle(&mut items);
    items
}

#[test]
fn seed004_single_partition_key_levels_off_at_1000_units() {
    let engine = sim::engine();
    create(&engine, "ipranges", BillingMode::PayPerRequest);
    let items: Vec<Item> = (0..150_000).map(|i| item("0", i)).collect();
    let load = sim::load(&engine, "ipranges", &items, Concurrency::Auto, Order::AsIs, 120_000).unwrap();
    let rate = load.rate_between(0, 120);
    println!("single key: {rate:.1} units/s over 120 s, {} unprocessed re-sent", load.resent);
    assert!((950.0..=1050.0).contains(&rate), "rate {rate}");
    // It met the partition's limit, and the loader paced itself to it
    // rather than hammering: under 5% of the items were sent twice.
    assert!(load.resent > 0 && load.resent * 20 < load.written, "{} re-sent of {}", load.resent, load.written);
    // The paced loader leaves the partition a little headroom; writes at
    // the hot key in the same millisecond use it up within a partition's
    // 300 s burst (at most 300,000 units), and the throttle names the hot
    // key range.
    let at = Millis(sim::START_MS + 119_990);
    let err = (0..300_001)
        .find_map(|n| {
            let item = item("0", 1_000_000 + n);
            engine
                .put_item(PutItemInput { table_name: "ipranges".into(), item, options: WriteOptions::default() }, at)
                .err()
        })
        .expect("the hot partition refuses a write within its burst");
    assert_eq!(
        err,
        EngineError::Throttled {
            provisioned: false,
            reason: "TableWriteKeyRangeThroughputExceeded",
            resource: "arn:aws:dynamodb:us-east-1:000000000000:table/ipranges".into()
        }
    );
}

#[test]
fn seed004_sorted_partition_keys_stay_below_1500_units() {
    let engine = sim::engine();
    create(&engine, "sorted", BillingMode::PayPerRequest);
    // Seed 004's dataset: hundreds of thousands of ranges over ~200 keys,
    // in key order, from one writer (seed 004's one Python process:
    // `dynaburst load --order as-is --concurrency 1`).
    let load = sim::load(&engine, "sorted", &octet_dataset(1500), Concurrency::Fixed(1), Order::AsIs, 900_000).unwrap();
    let rate = load.mean_rate();
    println!("sorted: {rate:.1} units/s over {} ms", load.elapsed_ms);
    assert_eq!(load.written, 300_000);
    assert!(rate <= 1500.0, "rate {rate}");
    assert!(rate >= 900.0, "one partition at a time still runs near its maximum: {rate}");
}

#[test]
fn seed004_shuffled_partition_keys_reach_3200_units() {
    let engine = sim::engine();
    create(&engine, "shuffled", BillingMode::PayPerRequest);
    let load =
        sim::load(&engine, "shuffled", &shuffled(octet_dataset(600), 4), Concurrency::Auto, Order::AsIs, 600_000)
            .unwrap();
    let rate = load.mean_rate();
    println!("shuffled: {rate:.1} units/s over {} ms", load.elapsed_ms);
    assert_eq!(load.written, 120_000);
    assert!(rate >= 3200.0, "rate {rate}");
    assert!(rate <= 4000.0, "a new on-demand table takes at most 4,000 WRU: {rate}");
}

#[test]
fn seed004_provisioned_10000_wcu_shuffled_reaches_6000_then_9000_with_many_keys() {
    let engine = sim::engine();
    create(&engine, "prov200", BillingMode::Provisioned { read: 1000, write: 10_000 });
    let load = sim::load(&engine, "prov200", &shuffled(octet_dataset(600), 4), Concurrency::Auto, Order::AsIs, 600_000)
        .unwrap();
    let rate = load.mean_rate();
    println!("provisioned, 200 keys: {rate:.1} units/s");
    assert!(rate >= 6000.0, "rate {rate}");

    create(&engine, "prov100k", BillingMode::Provisioned { read: 1000, write: 10_000 });
    let items: Vec<Item> = (0..120_000u64).map(|i| item(&format!("k{}", i % 100_000), i)).collect();
    let load = sim::load(&engine, "prov100k", &shuffled(items, 9), Concurrency::Auto, Order::AsIs, 600_000).unwrap();
    let rate = load.mean_rate();
    println!("provisioned, 100,000 keys: {rate:.1} units/s");
    assert!(rate >= 9000.0, "rate {rate}");
    // Never above the provisioned total since the table was created (one
    // idle second before the load, banked as burst), plus the first
    // second each partition holds at creation.
    let allowed = 10_000.0 * (1.0 + load.elapsed_ms as f64 / 1000.0) + 10_000.0;
    assert!(load.written as f64 <= allowed, "{} written, {allowed} allowed", load.written);
}

/// `calls` batches of 25 new items fired at one instant at a new
/// on-demand table: (items left unprocessed or refused, items sent).
fn fire_at_once(calls: usize) -> (u64, u64) {
    let engine = sim::engine();
    create(&engine, "burst", BillingMode::PayPerRequest);
    let items: Vec<Item> = (0..calls * 25).map(|i| item(&format!("id{}-{}", i / 25, i % 25), 0)).collect();
    let (written, lost) = sim::fire_and_forget(&engine, "burst", items);
    (lost, written + lost)
}

#[test]
fn seed002_batches_fired_at_once_leave_items_unprocessed() {
    let (unprocessed, sent) = fire_at_once(400);
    println!("400 calls: {unprocessed} of {sent} unprocessed");
    assert!(unprocessed > 0 && unprocessed < sent, "some but not all: {unprocessed}/{sent}");
    let (unprocessed, sent) = fire_at_once(4000);
    println!("4,000 calls: {unprocessed} of {sent} unprocessed");
    assert!(unprocessed * 2 > sent, "most: {unprocessed}/{sent}");
}

/// Seed 002's on-demand table as modelled: 1 KB items with random keys,
/// fired in batches of 25 at the table after it idled for minutes.
fn seed002_table(items: usize, spread: Option<(u64, u64)>) -> (u64, u64) {
    let engine = sim::engine();
    create(&engine, "seed002", BillingMode::PayPerRequest);
    let mut keys = Rng::new(2);
    let items: Vec<Item> = (0..items).map(|_| item(&format!("{:016x}", keys.next_u64()), 0)).collect();
    sim::seed002_burst(&engine, "seed002", items, spread, &mut Rng::new(3))
}

#[test]
fn seed002_its_own_table_admits_within_25_percent_of_what_the_seed_saw() {
    // 400 calls of 25 at once: the seed lost "about 20%", so about 8,000
    // were written.
    let (written, lost) = seed002_table(10_000, None);
    println!("seed 002, 10,000 at once: {written} written, {lost} unprocessed");
    assert_eq!(written + lost, 10_000);
    assert!((6_000..=10_000).contains(&written), "{written} written, the seed about 8,000");
    // 100,000 over about 2 s (random 100-2,000 ms delays): the seed got
    // 16,405 written.
    let (written, lost) = seed002_table(100_000, Some((100, 2_000)));
    println!("seed 002, 100,000 over 2 s: {written} written, {lost} unprocessed");
    assert_eq!(written + lost, 100_000);
    let seed = 16_405.0;
    assert!((written as f64 - seed).abs() <= 0.25 * seed, "{written} written, the seed 16,405");
}
