//! Model-based test: random sequences of operations run against the engine
//! (capacity model off) and against a plain `BTreeMap` model of the same
//! tables; every answer is compared: items, conditional failures,
//! transaction cancellations, and Query/Scan pages.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use dynaburst_engine::*;
use dynaburst_model::{AttributeValue, Item, KeyValue, Number, ScalarType};
use proptest::prelude::*;

const TABLES: [&str; 2] = ["a", "b"];
const PARTITIONS: u8 = 3;
const SORTS: u8 = 4;

/// A key as the model holds it: partition index and sort value (ignored
/// by hash-only tables).
type Key = (u8, u8);

#[derive(Clone, Debug)]
enum Cond {
    /// attribute_not_exists(pk)
    NotExists,
    /// attribute_exists(pk)
    Exists,
    /// v = :c
    VEquals(i64),
}

#[derive(Clone, Debug)]
enum TxKind {
    Put(i64),
    Update(i64),
    Delete,
    Check,
}

#[derive(Clone, Debug)]
enum Op {
    Create { table: usize, range: bool },
    Drop { table: usize },
    Put { table: usize, key: Key, v: i64, cond: Option<Cond> },
    Update { table: usize, key: Key, add: i64, cond: Option<Cond> },
    Delete { table: usize, key: Key, cond: Option<Cond> },
    Get { table: usize, key: Key },
    Batch { table: usize, writes: Vec<(Key, Option<i64>)> },
    Transact { actions: Vec<(usize, Key, TxKind, Option<Cond>)> },
    Query { table: usize, partition: u8, sort: Option<(u8, u8)>, forward: bool, limit: Option<usize> },
    Scan { table: usize, limit: Option<usize>, segments: Option<u32> },
}

fn cond() -> impl Strategy<Value = Option<Cond>> {
    prop_oneof![
        2 => Just(None),
        1 => Just(Some(Cond::NotExists)),
        1 => Just(Some(Cond::Exists)),
        1 => (0i64..3).prop_map(|v| Some(Cond::VEquals(v))),
    ]
}

fn key() -> impl Strategy<Value = Key> {
    (0..PARTITIONS, 0..SORTS)
}

fn op() -> impl Strategy<Value = Op> {
    let table = 0..TABLES.len();
    prop_oneof![
        1 => (table.clone(), any::<bool>()).prop_map(|(table, range)| Op::Create { table, range }),
        1 => table.clone().prop_map(|table| Op::Drop { table }),
        4 => (table.clone(), key(), 0i64..3, cond()).prop_map(|(table, key, v, cond)| Op::Put { table, key, v, cond }),
        3 => (table.clone(), key(), -2i64..3, cond())
            .prop_map(|(table, key, add, cond)| Op::Update { table, key, add, cond }),
        2 => (table.clone(), key(), cond()).prop_map(|(table, key, cond)| Op::Delete { table, key, cond }),
        2 => (table.clone(), key()).prop_map(|(table, key)| Op::Get { table, key }),
        2 => (table.clone(), prop::collection::vec((key(), prop::option::of(0i64..3)), 1..5))
            .prop_map(|(table, writes)| Op::Batch { table, writes }),
        2 => prop::collection::vec(
            (
                table.clone(),
                key(),
                prop_oneof![
                    (0i64..3).prop_map(TxKind::Put),
                    (-2i64..3).prop_map(TxKind::Update),
                    Just(TxKind::Delete),
                    Just(TxKind::Check),
                ],
                cond(),
            ),
            1..4,
        )
        .prop_map(|actions| Op::Transact { actions }),
        3 => (
            table.clone(),
            0..PARTITIONS,
            prop::option::of((0u8..5, 0..SORTS)),
            any::<bool>(),
            prop::option::of(1usize..4)
        )
            .prop_map(|(table, partition, sort, forward, limit)| Op::Query { table, partition, sort, forward, limit }),
        2 => (table, prop::option::of(1usize..4), prop::option::of(1u32..4))
            .prop_map(|(table, limit, segments)| Op::Scan { table, limit, segments }),
    ]
}

// ----- the model -------------------------------------------------------

#[derive(Default, Clone)]
struct ModelTable {
    range: bool,
    items: BTreeMap<Key, Item>,
}

impl ModelTable {
    /// The key the table's schema sees (hash-only tables ignore the sort).
    fn key(&self, k: Key) -> Key {
        if self.range {
            k
        } else {
            (k.0, 0)
        }
    }
}

/// What an operation answered, in a form both sides produce.
#[derive(Debug, PartialEq)]
enum Answer {
    Ok,
    Item(Option<Item>),
    /// ConditionalCheckFailedException with the old item (always asked).
    CheckFailed(Option<Item>),
    /// TransactionCanceledException reason codes.
    Canceled(Vec<&'static str>),
    NotFound,
    InUse,
    Validation,
    /// Pages: items and whether a LastEvaluatedKey came back.
    Pages(Vec<(Vec<Item>, bool)>),
    /// Scan segments: every item seen, per segment.
    Segments(Vec<BTreeSet<String>>),
}

fn pk(p: u8) -> AttributeValue {
    AttributeValue::S(format!("p{p}"))
}

fn num(n: i64) -> AttributeValue {
    AttributeValue::N(Number::from_i64(n))
}

fn model_item(range: bool, k: Key, v: i64) -> Item {
    let mut item = Item::new();
    item.insert("pk".into(), pk(k.0));
    // Hash-only tables store the sort value as an ordinary attribute of
    // the item put, so the engine sees the same item.
    item.insert("sk".into(), num(i64::from(k.1)));
    item.insert("v".into(), num(v));
    let _ = range;
    item
}

fn key_item(range: bool, k: Key) -> Item {
    let mut item = Item::new();
    item.insert("pk".into(), pk(k.0));
    if range {
        item.insert("sk".into(), num(i64::from(k.1)));
    }
    item
}

fn v_of(item: &Item) -> Option<i64> {
    match item.get("v") {
        Some(AttributeValue::N(n)) => n.to_string().parse().ok(),
        _ => None,
    }
}

fn holds(cond: &Option<Cond>, current: Option<&Item>) -> bool {
    match cond {
        None => true,
        Some(Cond::NotExists) => current.is_none(),
        Some(Cond::Exists) => current.is_some(),
        Some(Cond::VEquals(c)) => current.and_then(v_of) == Some(*c),
    }
}

/// The item after `ADD v :d`.
fn added(range: bool, k: Key, current: Option<&Item>, d: i64) -> Item {
    let mut item = match current {
        Some(c) => c.clone(),
        None => key_item(range, k),
    };
    let v = current.and_then(v_of).unwrap_or(0) + d;
    item.insert("v".into(), num(v));
    item
}

struct Model {
    tables: BTreeMap<usize, ModelTable>,
}

impl Model {
    fn apply(&mut self, op: &Op) -> Answer {
        match op {
            Op::Create { table, range } => {
                if self.tables.contains_key(table) {
                    return Answer::InUse;
                }
                self.tables.insert(*table, ModelTable { range: *range, items: BTreeMap::new() });
                Answer::Ok
            }
            Op::Drop { table } => match self.tables.remove(table) {
                Some(_) => Answer::Ok,
                None => Answer::NotFound,
            },
            Op::Put { table, key, v, cond } => {
                let Some(t) = self.tables.get_mut(table) else { return Answer::NotFound };
                let k = t.key(*key);
                let old = t.items.get(&k).cloned();
                if !holds(cond, old.as_ref()) {
                    return Answer::CheckFailed(old);
                }
                t.items.insert(k, model_item(t.range, *key, *v));
                Answer::Item(old)
            }
            Op::Update { table, key, add, cond } => {
                let Some(t) = self.tables.get_mut(table) else { return Answer::NotFound };
                let k = t.key(*key);
                let old = t.items.get(&k).cloned();
                if !holds(cond, old.as_ref()) {
                    return Answer::CheckFailed(old);
                }
                let new = added(t.range, *key, old.as_ref(), *add);
                t.items.insert(k, new.clone());
                Answer::Item(Some(new))
            }
            Op::Delete { table, key, cond } => {
                let Some(t) = self.tables.get_mut(table) else { return Answer::NotFound };
                let k = t.key(*key);
                let old = t.items.get(&k).cloned();
                if !holds(cond, old.as_ref()) {
                    return Answer::CheckFailed(old);
                }
                t.items.remove(&k);
                Answer::Item(old)
            }
            Op::Get { table, key } => {
                let Some(t) = self.tables.get(table) else { return Answer::NotFound };
                Answer::Item(t.items.get(&t.key(*key)).cloned())
            }
            Op::Batch { table, writes } => {
                let Some(t) = self.tables.get_mut(table) else { return Answer::NotFound };
                let keys: Vec<Key> = writes.iter().map(|(k, _)| t.key(*k)).collect();
                if keys.iter().collect::<BTreeSet<_>>().len() != keys.len() {
                    return Answer::Validation;
                }
                for ((k, v), mk) in writes.iter().zip(keys) {
                    match v {
                        Some(v) => t.items.insert(mk, model_item(t.range, *k, *v)),
                        None => t.items.remove(&mk),
                    };
                }
                Answer::Ok
            }
            Op::Transact { actions } => {
                // Tables are looked up first, then keys checked for repeats.
                if actions.iter().any(|(t, ..)| !self.tables.contains_key(t)) {
                    return Answer::NotFound;
                }
                let mut seen = BTreeSet::new();
                for (t, k, kind, cond) in actions {
                    // ConditionCheck without a condition is not generated.
                    let _ = (kind, cond);
                    if !seen.insert((*t, self.tables[t].key(*k))) {
                        return Answer::Validation;
                    }
                }
                let mut codes = Vec::new();
                let mut failed = false;
                for (t, k, kind, cond) in actions {
                    let table = &self.tables[t];
                    let old = table.items.get(&table.key(*k));
                    let cond = effective_cond(kind, cond);
                    if holds(&cond, old) {
                        codes.push("None");
                    } else {
                        codes.push("ConditionalCheckFailed");
                        failed = true;
                    }
                }
                if failed {
                    return Answer::Canceled(codes);
                }
                for (t, k, kind, _) in actions {
                    let Some(table) = self.tables.get_mut(t) else { continue };
                    let mk = table.key(*k);
                    match kind {
                        TxKind::Put(v) => {
                            table.items.insert(mk, model_item(table.range, *k, *v));
                        }
                        TxKind::Update(d) => {
                            let new = added(table.range, *k, table.items.get(&mk), *d);
                            table.items.insert(mk, new);
                        }
                        TxKind::Delete => {
                            table.items.remove(&mk);
                        }
                        TxKind::Check => {}
                    }
                }
                Answer::Ok
            }
            Op::Query { table, partition, sort, forward, limit } => {
                let Some(t) = self.tables.get(table) else { return Answer::NotFound };
                let mut items: Vec<Item> = t
                    .items
                    .iter()
                    .filter(|((p, s), _)| {
                        *p == *partition
                            && match (t.range, sort) {
                                (true, Some((op, c))) => sort_matches(*op, *s, *c),
                                _ => true,
                            }
                    })
                    .map(|(_, i)| i.clone())
                    .collect();
                if !forward {
                    items.reverse();
                }
                Answer::Pages(paginate(items, *limit))
            }
            Op::Scan { table, limit, segments } => {
                let Some(t) = self.tables.get(table) else { return Answer::NotFound };
                match segments {
                    Some(n) => {
                        // Segments are disjoint and together hold every item;
                        // which item lands in which segment is the engine's.
                        let mut sets = vec![BTreeSet::new(); *n as usize];
                        sets[0] = t.items.values().map(item_id).collect();
                        Answer::Segments(sets)
                    }
                    None => {
                        let mut items: Vec<(u128, Key, Item)> = t
                            .items
                            .iter()
                            .map(|(k, i)| (KeyValue::S(format!("p{}", k.0)).partition_hash(), *k, i.clone()))
                            .collect();
                        // Scan order: partition-key hash, partition key, sort key.
                        items.sort_by_key(|(hash, k, _)| (*hash, format!("p{}", k.0), k.1));
                        Answer::Pages(paginate(items.into_iter().map(|(_, _, i)| i).collect(), *limit))
                    }
                }
            }
        }
    }
}

/// A transaction action's condition: a ConditionCheck always has one.
fn effective_cond(kind: &TxKind, cond: &Option<Cond>) -> Option<Cond> {
    match (kind, cond) {
        (TxKind::Check, None) => Some(Cond::Exists),
        (_, c) => c.clone(),
    }
}

fn sort_matches(op: u8, s: u8, c: u8) -> bool {
    match op {
        0 => s == c,
        1 => s < c,
        2 => s <= c,
        3 => s > c,
        _ => s >= c,
    }
}

/// Pages of `limit` items: a page that reaches the limit carries a
/// LastEvaluatedKey, so an exact multiple ends with an empty page.
fn paginate(items: Vec<Item>, limit: Option<usize>) -> Vec<(Vec<Item>, bool)> {
    let Some(limit) = limit else { return vec![(items, false)] };
    let mut pages: Vec<(Vec<Item>, bool)> = items.chunks(limit).map(|c| (c.to_vec(), c.len() == limit)).collect();
    if matches!(pages.last(), None | Some((_, true))) {
        pages.push((Vec::new(), false));
    }
    pages
}

fn item_id(item: &Item) -> String {
    format!("{:?}/{:?}", item.get("pk"), item.get("sk"))
}

// ----- the engine side -------------------------------------------------

fn condition_args(cond: &Option<Cond>) -> (Option<String>, ExprArgs) {
    match cond {
        None => (None, ExprArgs::default()),
        Some(Cond::NotExists) => (Some("attribute_not_exists(pk)".into()), ExprArgs::default()),
        Some(Cond::Exists) => (Some("attribute_exists(pk)".into()), ExprArgs::default()),
        Some(Cond::VEquals(c)) => (
            Some("v = :c".into()),
            ExprArgs { names: None, values: Some(HashMap::from([(":c".to_string(), num(*c))])) },
        ),
    }
}

/// Condition and update sharing one set of values.
fn update_args(cond: &Option<Cond>, d: i64) -> (Option<String>, ExprArgs) {
    let (c, mut args) = condition_args(cond);
    args.values.get_or_insert_with(HashMap::new).insert(":d".into(), num(d));
    (c, args)
}

fn answer_of_error(e: EngineError) -> Answer {
    match e {
        EngineError::ConditionalCheckFailed { item } => Answer::CheckFailed(item),
        EngineError::TransactionCanceled { reasons } => Answer::Canceled(reasons.iter().map(|r| r.code).collect()),
        EngineError::ResourceNotFound(_) => Answer::NotFound,
        EngineError::ResourceInUse(_) => Answer::InUse,
        EngineError::Validation(_) => Answer::Validation,
        other => panic!("unexpected engine error {other:?}"),
    }
}

fn options(cond: Option<String>, expr: ExprArgs, return_values: ReturnValues) -> WriteOptions {
    WriteOptions {
        condition: cond,
        expr,
        return_values,
        return_capacity: ReturnCapacity::None,
        return_old_on_condition_failure: true,
        return_item_collection_metrics: false,
    }
}

/// Runs `op` on the engine. `range` is whether the model says the table
/// has a sort key (how keys are spelled; irrelevant when it is missing).
fn run(engine: &Engine, op: &Op, range: impl Fn(usize) -> bool, now: Millis) -> Answer {
    let name = |t: usize| TABLES[t].to_string();
    let result: Result<Answer, EngineError> = match op {
        Op::Create { table, range } => {
            let mut key_schema = vec![("pk".to_string(), KeyRole::Hash)];
            let mut defs = vec![("pk".to_string(), ScalarType::S)];
            if *range {
                key_schema.push(("sk".into(), KeyRole::Range));
                defs.push(("sk".into(), ScalarType::N));
            }
            engine
                .create_table(CreateTableInput::new(name(*table), key_schema, defs, BillingMode::PayPerRequest), now)
                .map(|_| Answer::Ok)
        }
        Op::Drop { table } => engine.delete_table(&name(*table), Millis(0)).map(|_| Answer::Ok),
        Op::Put { table, key, v, cond } => {
            let (c, expr) = condition_args(cond);
            engine
                .put_item(
                    PutItemInput {
                        table_name: name(*table),
                        item: model_item(range(*table), *key, *v),
                        options: options(c, expr, ReturnValues::AllOld),
                    },
                    now,
                )
                .map(|o| Answer::Item(o.attributes))
        }
        Op::Update { table, key, add, cond } => {
            let (c, expr) = update_args(cond, *add);
            engine
                .update_item(
                    UpdateItemInput {
                        table_name: name(*table),
                        key: key_item(range(*table), *key),
                        update: Some("ADD v :d".into()),
                        options: options(c, expr, ReturnValues::AllNew),
                        keep_missing: false,
                    },
                    now,
                )
                .map(|o| Answer::Item(o.attributes))
        }
        Op::Delete { table, key, cond } => {
            let (c, expr) = condition_args(cond);
            engine
                .delete_item(
                    DeleteItemInput {
                        table_name: name(*table),
                        key: key_item(range(*table), *key),
                        options: options(c, expr, ReturnValues::AllOld),
                    },
                    now,
                )
                .map(|o| Answer::Item(o.attributes))
        }
        Op::Get { table, key } => engine
            .get_item(
                GetItemInput {
                    table_name: name(*table),
                    key: key_item(range(*table), *key),
                    projection: None,
                    names: None,
                    consistent_read: true,
                    return_capacity: ReturnCapacity::None,
                },
                now,
            )
            .map(|o| Answer::Item(o.item)),
        Op::Batch { table, writes } => {
            let requests = writes
                .iter()
                .map(|(k, v)| match v {
                    Some(v) => WriteRequest::Put(model_item(range(*table), *k, *v)),
                    None => WriteRequest::Delete(key_item(range(*table), *k)),
                })
                .collect();
            engine
                .batch_write_item(
                    BatchWriteInput {
                        requests: vec![(name(*table), requests)],
                        return_capacity: ReturnCapacity::None,
                        return_item_collection_metrics: false,
                    },
                    now,
                )
                .map(|o| {
                    assert!(o.unprocessed.is_empty(), "nothing is throttled without a capacity model");
                    Answer::Ok
                })
        }
        Op::Transact { actions } => {
            let actions = actions
                .iter()
                .map(|(t, k, kind, cond)| {
                    let table_name = name(*t);
                    let r = range(*t);
                    let (op, (condition, expr)) = match kind {
                        TxKind::Put(v) => (TransactOp::Put { item: model_item(r, *k, *v) }, condition_args(cond)),
                        TxKind::Update(d) => (
                            TransactOp::Update { key: key_item(r, *k), update: "ADD v :d".into() },
                            update_args(cond, *d),
                        ),
                        TxKind::Delete => (TransactOp::Delete { key: key_item(r, *k) }, condition_args(cond)),
                        TxKind::Check => (
                            TransactOp::ConditionCheck { key: key_item(r, *k) },
                            condition_args(&effective_cond(kind, cond)),
                        ),
                    };
                    TransactAction { table_name, op, condition, expr, return_old_on_failure: false }
                })
                .collect();
            engine
                .transact_write_items(
                    TransactWriteInput {
                        actions,
                        client_token: None,
                        return_capacity: ReturnCapacity::None,
                        return_item_collection_metrics: false,
                    },
                    now,
                )
                .map(|_| Answer::Ok)
        }
        Op::Query { table, partition, sort, forward, limit } => {
            let mut values = HashMap::from([(":p".to_string(), pk(*partition))]);
            let mut kc = "pk = :p".to_string();
            if let (true, Some((op, c))) = (range(*table), sort) {
                let sym = ["=", "<", "<=", ">", ">="][usize::from(*op)];
                kc.push_str(&format!(" AND sk {sym} :s"));
                values.insert(":s".into(), num(i64::from(*c)));
            }
            let input = ReadInput {
                expr: ExprArgs { names: None, values: Some(values) },
                limit: *limit,
                forward: *forward,
                consistent_read: true,
                ..ReadInput::query(name(*table), kc)
            };
            pages(engine, input, now).map(Answer::Pages)
        }
        Op::Scan { table, limit, segments } => {
            let input = |segment| ReadInput { limit: *limit, segment, ..ReadInput::scan(name(*table)) };
            match segments {
                None => pages(engine, input(None), now).map(Answer::Pages),
                Some(n) => (0..*n)
                    .map(|s| {
                        pages(engine, input(Some((s, *n))), now)
                            .map(|ps| ps.into_iter().flat_map(|(items, _)| items).map(|i| item_id(&i)).collect())
                    })
                    .collect::<Result<Vec<BTreeSet<String>>, _>>()
                    .map(Answer::Segments),
            }
        }
    };
    result.unwrap_or_else(answer_of_error)
}

/// Every page of a Query or Scan, following LastEvaluatedKey.
fn pages(engine: &Engine, mut input: ReadInput, now: Millis) -> Result<Vec<(Vec<Item>, bool)>, EngineError> {
    let mut out = Vec::new();
    loop {
        let page = engine.read(input.clone(), now)?;
        assert_eq!(page.count, page.items.len());
        assert_eq!(page.scanned_count, page.items.len(), "no filter: every item read is returned");
        let more = page.last_evaluated_key.is_some();
        out.push((page.items, more));
        match page.last_evaluated_key {
            Some(k) => input.exclusive_start_key = Some(k),
            None => return Ok(out),
        }
        assert!(out.len() <= 100, "paging terminates");
    }
}

/// Segments are compared as a partition of the model's items.
fn same_segments(engine: &[BTreeSet<String>], model: &[BTreeSet<String>]) -> bool {
    let all: BTreeSet<String> = model.iter().flatten().cloned().collect();
    let union: BTreeSet<String> = engine.iter().flatten().cloned().collect();
    let total: usize = engine.iter().map(BTreeSet::len).sum();
    engine.len() == model.len() && union == all && total == all.len()
}

fn check_sequence(ops: &[Op]) -> Result<(), TestCaseError> {
    let engine = Engine::new(EngineConfig { capacity: None, ..EngineConfig::local() });
    let mut model = Model { tables: BTreeMap::new() };
    for (i, op) in ops.iter().enumerate() {
        let ranges: BTreeMap<usize, bool> = model.tables.iter().map(|(t, m)| (*t, m.range)).collect();
        let now = Millis(1_000 + i as u64);
        let got = run(&engine, op, |t| ranges.get(&t).copied().unwrap_or(false), now);
        let want = model.apply(op);
        match (&got, &want) {
            (Answer::Segments(g), Answer::Segments(w)) => {
                prop_assert!(same_segments(g, w), "op {i} {op:?}: segments {g:?}, model {w:?}")
            }
            _ => prop_assert_eq!(&got, &want, "op {} {:?}", i, op),
        }
        // The table statistics follow the items.
        for (t, m) in &model.tables {
            let d = engine.describe_table(TABLES[*t], Millis(0)).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(d.item_count, m.items.len() as u64, "item count of {} after op {}", TABLES[*t], i);
            let size: u64 = m.items.values().map(|i| dynaburst_model::item_size(i) as u64).sum();
            prop_assert_eq!(d.size_bytes, size, "size of {} after op {}", TABLES[*t], i);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10_000, max_shrink_iters: 2_000, ..ProptestConfig::default() })]

    #[test]
    fn engine_matches_a_btreemap_model(ops in prop::collection::vec(op(), 1..30)) {
        check_sequence(&ops)?;
    }
}

/// A fixed sequence that walks every operation at least once, so a
/// regression shows even without the random cases.
#[test]
fn a_fixed_sequence_matches_the_model() {
    let ops = vec![
        Op::Create { table: 0, range: true },
        Op::Create { table: 0, range: false },
        Op::Create { table: 1, range: false },
        Op::Put { table: 0, key: (0, 1), v: 1, cond: None },
        Op::Put { table: 0, key: (0, 1), v: 2, cond: Some(Cond::NotExists) },
        Op::Put { table: 0, key: (0, 2), v: 2, cond: Some(Cond::NotExists) },
        Op::Update { table: 0, key: (0, 2), add: 3, cond: Some(Cond::VEquals(2)) },
        Op::Update { table: 1, key: (1, 3), add: 1, cond: None },
        Op::Batch { table: 1, writes: vec![((2, 0), Some(1)), ((1, 0), None)] },
        Op::Batch { table: 1, writes: vec![((2, 0), Some(1)), ((2, 3), None)] },
        Op::Transact {
            actions: vec![(0, (0, 1), TxKind::Delete, None), (1, (2, 0), TxKind::Check, Some(Cond::VEquals(7)))],
        },
        Op::Transact {
            actions: vec![(0, (0, 1), TxKind::Delete, None), (1, (2, 0), TxKind::Update(4), Some(Cond::Exists))],
        },
        Op::Query { table: 0, partition: 0, sort: Some((4, 0)), forward: false, limit: Some(1) },
        Op::Scan { table: 1, limit: Some(1), segments: None },
        Op::Scan { table: 0, limit: None, segments: Some(3) },
        Op::Get { table: 1, key: (2, 0) },
        Op::Delete { table: 0, key: (0, 2), cond: Some(Cond::VEquals(0)) },
        Op::Drop { table: 0 },
        Op::Get { table: 0, key: (0, 2) },
    ];
    check_sequence(&ops).unwrap();
}
