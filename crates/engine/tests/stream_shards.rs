//! Stream shards follow the table's partitions: random writes interleaved
//! with partition splits (UpdateTable raising provisioned throughput),
//! then a consumer that
//! pages DescribeStream and reads every shard after its parent must see
//! each item's changes exactly once and in the order they were made,
//! checked against a `BTreeMap` model of the table.

use std::collections::{BTreeMap, HashMap};

use dynaburst_engine::stream::{EventName, IteratorType, StreamViewType};
use dynaburst_engine::*;
use dynaburst_model::{AttributeValue, Item, Number, ScalarType};
use proptest::prelude::*;

const KEYS: u8 = 24;
/// The provisioned write units each raise doubles (1,000 WCU is one
/// partition's worth, so each step splits partitions).
const BASE_WCU: u64 = 900;
const MAX_RAISES: u32 = 4;

#[derive(Clone, Debug)]
enum Op {
    Put {
        key: u8,
        v: i64,
    },
    Delete {
        key: u8,
    },
    /// UpdateTable to the next provisioned throughput step.
    Raise,
    /// Let modelled time pass (ms).
    Wait(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..KEYS, 0i64..3).prop_map(|(key, v)| Op::Put { key, v }),
        2 => (0..KEYS).prop_map(|key| Op::Delete { key }),
        1 => Just(Op::Raise),
        1 => (1u64..5_000).prop_map(Op::Wait),
    ]
}

fn item(key: u8, v: Option<i64>) -> Item {
    let mut i = Item::new();
    i.insert("pk".into(), AttributeValue::S(format!("k{key}")));
    if let Some(v) = v {
        i.insert("v".into(), AttributeValue::N(Number::parse(&v.to_string()).unwrap()));
    }
    i
}

fn v_of(item: Option<&Item>) -> Option<String> {
    match item?.get("v") {
        Some(AttributeValue::N(n)) => Some(n.to_string()),
        _ => None,
    }
}

fn create(engine: &Engine, now: Millis) {
    engine
        .create_table(
            CreateTableInput {
                stream: Some((true, Some(StreamViewType::NewAndOldImages))),
                ..CreateTableInput::new(
                    "t",
                    vec![("pk".into(), KeyRole::Hash)],
                    vec![("pk".into(), ScalarType::S)],
                    BillingMode::Provisioned { read: 30, write: BASE_WCU },
                )
            },
            now,
        )
        .unwrap();
}

fn raise(engine: &Engine, step: u32, now: Millis) {
    engine
        .update_table(UpdateTableInput { throughput: Some((30, BASE_WCU << step)), ..UpdateTableInput::new("t") }, now)
        .unwrap();
}

/// (event, old v, new v) per key, as the model expects them.
type Changes = HashMap<String, Vec<(EventName, Option<String>, Option<String>)>>;

/// Runs `ops` on the engine and the model; returns the expected records
/// per key and the time reached.
fn run(engine: &Engine, ops: &[Op], start: Millis) -> (Changes, Millis) {
    let mut model: BTreeMap<u8, i64> = BTreeMap::new();
    let mut expected: Changes = HashMap::new();
    let mut now = start;
    let mut raises = 0;
    for op in ops {
        now = Millis(now.0 + 10);
        match op {
            Op::Put { key, v } => {
                let input =
                    PutItemInput { table_name: "t".into(), item: item(*key, Some(*v)), options: Default::default() };
                // A throttled write changes nothing and records nothing.
                if engine.put_item(input, now).is_ok() {
                    let old = model.insert(*key, *v);
                    let event = match old {
                        None => Some(EventName::Insert),
                        Some(o) if o != *v => Some(EventName::Modify),
                        Some(_) => None,
                    };
                    if let Some(e) = event {
                        let changes = expected.entry(format!("k{key}")).or_default();
                        changes.push((e, old.map(|o| o.to_string()), Some(v.to_string())));
                    }
                }
            }
            Op::Delete { key } => {
                let input =
                    DeleteItemInput { table_name: "t".into(), key: item(*key, None), options: Default::default() };
                if engine.delete_item(input, now).is_ok() {
                    if let Some(old) = model.remove(key) {
                        let changes = expected.entry(format!("k{key}")).or_default();
                        changes.push((EventName::Remove, Some(old.to_string()), None));
                    }
                }
            }
            Op::Raise if raises < MAX_RAISES => {
                raises += 1;
                raise(engine, raises, now);
            }
            Op::Raise => {}
            Op::Wait(ms) => now = Millis(now.0 + ms),
        }
    }
    (expected, now)
}

/// Reads the whole stream as a consumer does: DescribeStream page by page
/// (`page` shards each), then each shard from its trim horizon to its end
/// (closed) or to an empty page (open), a parent before its children.
/// Returns the records per key and the shards (id, parent, closed).
fn consume(engine: &Engine, page: usize, now: Millis) -> (Changes, Vec<(String, Option<String>, bool)>) {
    let arn = engine.list_streams(Some("t"), 10, None, Millis(0)).unwrap().0[0].arn.clone();
    let mut shards = Vec::new();
    let mut start: Option<String> = None;
    for _ in 0..10_000 {
        let d = engine.describe_stream(&arn, page, start.as_deref(), None, now).unwrap();
        assert!(d.shards.len() <= page);
        shards.extend(d.shards);
        match d.last_evaluated_shard {
            Some(last) => start = Some(last),
            None => break,
        }
    }
    let mut seen: Changes = HashMap::new();
    let mut read: Vec<String> = Vec::new();
    let mut listed = Vec::new();
    for shard in &shards {
        if let Some(parent) = &shard.parent {
            assert!(read.contains(parent), "parent {parent} is listed before its child {}", shard.shard_id);
        }
        let mut it =
            Some(engine.get_shard_iterator(&arn, &shard.shard_id, IteratorType::TrimHorizon, None, now).unwrap());
        let mut last_sequence = 0;
        for _ in 0..10_000 {
            let Some(current) = it.take() else { break };
            let records = engine.get_records(&current, 7, now).unwrap();
            for r in &records.records {
                assert!(r.sequence > last_sequence, "sequence numbers increase within a shard");
                last_sequence = r.sequence;
                let key = match r.keys.get("pk") {
                    Some(AttributeValue::S(s)) => s.clone(),
                    other => panic!("a record without its key: {other:?}"),
                };
                let change = (r.event, v_of(r.old.as_deref()), v_of(r.new.as_deref()));
                seen.entry(key).or_default().push(change);
            }
            if records.records.is_empty() && shard.ending_sequence.is_none() {
                break;
            }
            it = records.next_iterator;
        }
        assert!(it.is_none() || shard.ending_sequence.is_none(), "a closed shard reads to its end");
        read.push(shard.shard_id.clone());
        listed.push((shard.shard_id.clone(), shard.parent.clone(), shard.ending_sequence.is_some()));
    }
    (seen, listed)
}

fn check(ops: &[Op], page: usize) -> Result<usize, TestCaseError> {
    let engine = Engine::new(EngineConfig::local());
    let t0 = Millis(1_000_000);
    create(&engine, t0);
    let (expected, now) = run(&engine, ops, t0);
    let (seen, shards) = consume(&engine, page, now);
    prop_assert_eq!(&seen, &expected);
    // Every closed shard was split in two; the open ones cover the
    // table's partitions, one each.
    for (id, _, closed) in &shards {
        let children = shards.iter().filter(|(_, p, _)| p.as_deref() == Some(id)).count();
        prop_assert_eq!(children, if *closed { 2 } else { 0 }, "shard {}", id);
    }
    let open = shards.iter().filter(|(_, _, closed)| !closed).count();
    let partitions = engine.describe_table("t", now).unwrap().partition_count;
    prop_assert_eq!(Some(open), partitions);
    Ok(shards.len())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn a_consumer_reading_parents_first_sees_every_change_once_in_order(
        mut ops in prop::collection::vec(op(), 1..60),
        at in any::<prop::sample::Index>(),
        page in 1usize..5,
    ) {
        // At least one split in every sequence.
        let at = at.index(ops.len() + 1);
        ops.insert(at, Op::Raise);
        check(&ops, page)?;
    }
}

#[test]
fn a_raise_in_throughput_closes_the_shard_and_opens_two_children() {
    let ops = [
        Op::Put { key: 1, v: 1 },
        Op::Put { key: 2, v: 1 },
        Op::Raise,
        Op::Put { key: 1, v: 2 },
        Op::Delete { key: 2 },
        Op::Put { key: 1, v: 2 },
    ];
    let shards = check(&ops, 100).unwrap();
    // One root (900 WCU: one partition), closed, and its two children
    // (1,800 WCU: two partitions).
    assert_eq!(shards, 3);
}

/// The one shard of a new 900-WCU table "t" (one partition).
fn only_shard(engine: &Engine, now: Millis) -> (String, String) {
    let arn = engine.list_streams(Some("t"), 10, None, Millis(0)).unwrap().0[0].arn.clone();
    let d = engine.describe_stream(&arn, 100, None, None, now).unwrap();
    assert_eq!(d.shards.len(), 1);
    (arn, d.shards[0].shard_id.clone())
}

fn put(engine: &Engine, item: Item, now: Millis) {
    engine.put_item(PutItemInput { table_name: "t".into(), item, options: Default::default() }, now).unwrap();
}

#[test]
fn records_older_than_24_hours_are_trimmed_and_reading_them_is_refused() {
    let engine = Engine::new(EngineConfig::local());
    let t0 = Millis(1_000_000);
    create(&engine, t0);
    put(&engine, item(1, Some(1)), t0);
    let (arn, shard) = only_shard(&engine, t0);
    let it = engine.get_shard_iterator(&arn, &shard, IteratorType::TrimHorizon, None, t0).unwrap();
    let first = engine.get_records(&it, 10, t0).unwrap().records[0].sequence;
    let first_text = dynaburst_engine::stream::sequence_text(first);
    // An iterator is good for 15 minutes of modelled time.
    let later = Millis(t0.0 + 15 * 60 * 1000 + 1);
    assert!(matches!(engine.get_records(&it, 10, later), Err(EngineError::ExpiredIterator)));
    // An iterator issued a minute before the first record is 24 hours old.
    let day = Millis(t0.0 + 24 * 60 * 60 * 1000 + 1);
    let before = Millis(day.0 - 60_000);
    let stale = engine.get_shard_iterator(&arn, &shard, IteratorType::AtSequenceNumber, Some(&first_text), before);
    let stale = stale.expect("not yet trimmed a minute before the day is up");
    // 24 hours on, the first record is gone; a new one is kept.
    put(&engine, item(2, Some(1)), day);
    let fresh = engine.get_shard_iterator(&arn, &shard, IteratorType::TrimHorizon, None, day).unwrap();
    let kept = engine.get_records(&fresh, 10, day).unwrap().records;
    assert_eq!(kept.iter().map(|r| r.keys.clone()).collect::<Vec<_>>(), [item(2, None)]);
    let at = engine.get_shard_iterator(&arn, &shard, IteratorType::AtSequenceNumber, Some(&first_text), day);
    assert!(matches!(at, Err(EngineError::TrimmedDataAccess)), "{at:?}");
    // The iterator issued before the trim, still fresh, is refused too.
    assert!(matches!(engine.get_records(&stale, 10, day), Err(EngineError::TrimmedDataAccess)));
}

#[test]
fn get_records_returns_at_most_one_megabyte() {
    let engine = Engine::new(EngineConfig::local());
    let t0 = Millis(1_000_000);
    create(&engine, t0);
    // Five items of about 300 KB: NEW_AND_OLD_IMAGES records of ~300 KB.
    for key in 0..5u8 {
        let mut i = item(key, Some(1));
        i.insert("pad".into(), AttributeValue::S("x".repeat(300_000)));
        put(&engine, i, Millis(t0.0 + u64::from(key) * 1000));
    }
    let now = Millis(t0.0 + 10_000);
    let (arn, shard) = only_shard(&engine, now);
    let it = engine.get_shard_iterator(&arn, &shard, IteratorType::TrimHorizon, None, now).unwrap();
    let page = engine.get_records(&it, 1000, now).unwrap();
    let bytes: usize = page.records.iter().map(|r| r.size_bytes(page.view)).sum();
    assert_eq!(page.records.len(), 3, "three records fit in 1 MB, four do not");
    assert!(bytes <= dynaburst_engine::stream::MAX_GET_RECORDS_BYTES);
    let rest = engine.get_records(&page.next_iterator.unwrap(), 1000, now).unwrap();
    assert_eq!(rest.records.len(), 2);
}
