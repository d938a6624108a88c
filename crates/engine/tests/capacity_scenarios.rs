//! Issue 3's load scenarios, through the engine's real BatchWriteItem, in
//! virtual time: a closed-loop writer sends batches of 25 one-kilobyte
//! items, `concurrency` requests per 10 ms round trip, and re-sends what
//! comes back unprocessed. Two modelled minutes take well under a second.

use std::collections::VecDeque;

use dynaburst_engine::*;
use dynaburst_model::{AttributeValue, Item, Number, ScalarType};

const ROUND_TRIP_MS: u64 = 10;
/// Bytes of padding that make each item exactly 1,024 bytes.
fn item(pk: &str, sk: u64) -> Item {
    let mut i = Item::new();
    i.insert("pk".into(), AttributeValue::S(pk.to_string()));
    i.insert("sk".into(), AttributeValue::N(Number::from_i64(sk as i64)));
    let used = dynaburst_model::item_size(&i) + "pad".len();
    i.insert("pad".into(), AttributeValue::S("x".repeat(1024 - used)));
    assert_eq!(dynaburst_model::item_size(&i), 1024);
    i
}

fn engine() -> Engine {
    Engine::new(EngineConfig::local())
}

fn create(engine: &Engine, name: &str, billing: BillingMode) {
    engine
        .create_table(
            CreateTableInput {
                table_name: name.to_string(),
                key_schema: vec![("pk".into(), KeyRole::Hash), ("sk".into(), KeyRole::Range)],
                attribute_definitions: vec![("pk".into(), ScalarType::S), ("sk".into(), ScalarType::N)],
                billing,
                has_indexes: false,
            },
            Millis(0),
        )
        .unwrap();
}

/// What a load achieved.
struct Load {
    /// Items written, by second.
    per_second: Vec<u64>,
    /// Modelled milliseconds from the first request to the last write.
    elapsed_ms: u64,
    written: u64,
    unprocessed_seen: u64,
    throttled_requests: u64,
}

impl Load {
    fn mean_rate(&self) -> f64 {
        self.written as f64 / (self.elapsed_ms as f64 / 1000.0)
    }

    /// Mean of whole seconds in [from, to).
    fn rate_between(&self, from: usize, to: usize) -> f64 {
        let slice = &self.per_second[from..to.min(self.per_second.len())];
        slice.iter().sum::<u64>() as f64 / slice.len() as f64
    }
}

/// Runs the closed-loop writer until everything is written or `limit_ms`.
fn closed_loop(engine: &Engine, table: &str, items: Vec<Item>, concurrency: usize, limit_ms: u64) -> Load {
    let mut queue: VecDeque<Item> = items.into();
    let mut load =
        Load { per_second: Vec::new(), elapsed_ms: 0, written: 0, unprocessed_seen: 0, throttled_requests: 0 };
    let start = 1_000; // the table was created at 0
    let mut now = start;
    while !queue.is_empty() && now - start < limit_ms {
        let second = ((now - start) / 1000) as usize;
        if load.per_second.len() <= second {
            load.per_second.resize(second + 1, 0);
        }
        for _ in 0..concurrency {
            if queue.is_empty() {
                break;
            }
            let n = queue.len().min(25);
            let batch: Vec<Item> = queue.drain(..n).collect();
            let requests = vec![(table.to_string(), batch.iter().cloned().map(WriteRequest::Put).collect())];
            let result = engine
                .batch_write_item(BatchWriteInput { requests, return_capacity: ReturnCapacity::None }, Millis(now));
            let back: Vec<Item> = match result {
                Ok(out) => out
                    .unprocessed
                    .into_iter()
                    .flat_map(|(_, rs)| rs)
                    .map(|r| match r {
                        WriteRequest::Put(i) => i,
                        WriteRequest::Delete(k) => k,
                    })
                    .collect(),
                Err(EngineError::Throttled { .. }) => {
                    // Nothing was admitted: the whole batch is re-sent.
                    load.throttled_requests += 1;
                    batch
                }
                Err(e) => panic!("unexpected error: {e}"),
            };
            load.unprocessed_seen += back.len() as u64;
            let written = n as u64 - back.len() as u64;
            load.written += written;
            load.per_second[second] += written;
            for i in back.into_iter().rev() {
                queue.push_front(i);
            }
        }
        now += ROUND_TRIP_MS;
        load.elapsed_ms = now - start;
    }
    assert!(queue.is_empty() || now - start >= limit_ms);
    load
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

/// A deterministic shuffle (xorshift), so the test needs no random crate.
fn shuffled(mut items: Vec<Item>, seed: u64) -> Vec<Item> {
    let mut state = seed | 1;
    for i in (1..items.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let j = (state % (i as u64 + 1)) as usize;
        items.swap(i, j);
    }
    items
}

#[test]
fn seed004_single_partition_key_levels_off_at_1000_units() {
    let engine = engine();
    create(&engine, "ipranges", BillingMode::PayPerRequest);
    let items: Vec<Item> = (0..150_000).map(|i| item("0", i)).collect();
    let load = closed_loop(&engine, "ipranges", items, 4, 120_000);
    let rate = load.rate_between(0, 120);
    println!("single key: {rate:.1} units/s over 120 s, {} unprocessed re-sent", load.unprocessed_seen);
    assert!((950.0..=1050.0).contains(&rate), "rate {rate}");
    assert!(load.unprocessed_seen > 100_000, "the rest is throttled: {}", load.unprocessed_seen);
    // The throttle names the hot key range.
    let err = engine
        .put_item(
            PutItemInput { table_name: "ipranges".into(), item: item("0", 999_999), options: WriteOptions::default() },
            Millis(1_000 + 119_990),
        )
        .unwrap_err();
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
    let engine = engine();
    create(&engine, "sorted", BillingMode::PayPerRequest);
    // Seed 004's dataset: hundreds of thousands of ranges over ~200 keys.
    let load = closed_loop(&engine, "sorted", octet_dataset(1500), 4, 900_000);
    let rate = load.mean_rate();
    println!("sorted: {rate:.1} units/s over {} ms", load.elapsed_ms);
    assert_eq!(load.written, 300_000);
    assert!(rate <= 1500.0, "rate {rate}");
    assert!(rate >= 900.0, "one partition at a time still runs near its maximum: {rate}");
}

#[test]
fn seed004_shuffled_partition_keys_reach_3200_units() {
    let engine = engine();
    create(&engine, "shuffled", BillingMode::PayPerRequest);
    let load = closed_loop(&engine, "shuffled", shuffled(octet_dataset(600), 4), 8, 600_000);
    let rate = load.mean_rate();
    println!("shuffled: {rate:.1} units/s over {} ms", load.elapsed_ms);
    assert_eq!(load.written, 120_000);
    assert!(rate >= 3200.0, "rate {rate}");
    assert!(rate <= 4000.0, "a new on-demand table takes at most 4,000 WRU: {rate}");
}

#[test]
fn seed004_provisioned_10000_wcu_shuffled_reaches_6000_then_9000_with_many_keys() {
    let engine = engine();
    create(&engine, "prov200", BillingMode::Provisioned { read: 1000, write: 10_000 });
    let load = closed_loop(&engine, "prov200", shuffled(octet_dataset(600), 4), 16, 600_000);
    let rate = load.mean_rate();
    println!("provisioned, 200 keys: {rate:.1} units/s");
    assert!(rate >= 6000.0, "rate {rate}");

    create(&engine, "prov100k", BillingMode::Provisioned { read: 1000, write: 10_000 });
    let items: Vec<Item> = (0..120_000u64).map(|i| item(&format!("k{}", i % 100_000), i)).collect();
    let load = closed_loop(&engine, "prov100k", shuffled(items, 9), 16, 600_000);
    let rate = load.mean_rate();
    println!("provisioned, 100,000 keys: {rate:.1} units/s");
    assert!(rate >= 9000.0, "rate {rate}");
    // Never above the provisioned total since the table was created (one
    // idle second before the load, banked as burst), plus the first
    // second each partition holds at creation.
    let allowed = 10_000.0 * (1.0 + load.elapsed_ms as f64 / 1000.0) + 10_000.0;
    assert!(load.written as f64 <= allowed, "{} written, {allowed} allowed", load.written);
}

fn fire_at_once(calls: usize) -> (u64, u64) {
    let engine = engine();
    create(&engine, "burst", BillingMode::PayPerRequest);
    let (mut unprocessed, mut sent) = (0, 0);
    for c in 0..calls {
        let batch: Vec<WriteRequest> = (0..25).map(|i| WriteRequest::Put(item(&format!("id{c}-{i}"), 0))).collect();
        sent += 25;
        let result = engine.batch_write_item(
            BatchWriteInput { requests: vec![("burst".into(), batch)], return_capacity: ReturnCapacity::None },
            Millis(1_000),
        );
        match result {
            Ok(out) => unprocessed += out.unprocessed.iter().map(|(_, r)| r.len() as u64).sum::<u64>(),
            Err(EngineError::Throttled { .. }) => unprocessed += 25,
            Err(e) => panic!("{e}"),
        }
    }
    (unprocessed, sent)
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
