//! The engine's operations through the write funnel: size and unit
//! accounting per operation, partial admission of batches, atomicity of
//! transactions, the catalog, and storage failures (a store whose commit
//! fails answers InternalServerError and changes nothing).

use std::ops::ControlFlow;
use std::sync::Arc;

use dynaburst_engine::faults::FaultyStorage;
use dynaburst_engine::store::{Direction, MemStorage, Storage, StoreError};
use dynaburst_engine::*;
use dynaburst_model::{item_size, AttributeValue, Item, Number, ScalarType};

const T0: Millis = Millis(1_000);

fn pad_item(pk: &str, bytes: usize) -> Item {
    let mut i = Item::new();
    i.insert("pk".into(), AttributeValue::S(pk.to_string()));
    let used = item_size(&i) + "pad".len();
    i.insert("pad".into(), AttributeValue::S("x".repeat(bytes - used)));
    assert_eq!(item_size(&i), bytes);
    i
}

fn key(pk: &str) -> Item {
    let mut i = Item::new();
    i.insert("pk".into(), AttributeValue::S(pk.to_string()));
    i
}

fn create(engine: &Engine, name: &str, billing: BillingMode) {
    engine
        .create_table(
            CreateTableInput::new(
                name,
                vec![("pk".into(), KeyRole::Hash)],
                vec![("pk".into(), ScalarType::S)],
                billing,
            ),
            Millis(0),
        )
        .unwrap();
}

fn total() -> WriteOptions {
    WriteOptions { return_capacity: ReturnCapacity::Total, ..WriteOptions::default() }
}

fn put(engine: &Engine, table: &str, item: Item, options: WriteOptions) -> Result<WriteOutput, EngineError> {
    engine.put_item(PutItemInput { table_name: table.into(), item, options }, T0)
}

fn get(engine: &Engine, table: &str, pk: &str) -> Option<Item> {
    engine
        .get_item(
            GetItemInput {
                table_name: table.into(),
                key: key(pk),
                projection: None,
                names: None,
                consistent_read: true,
                return_capacity: ReturnCapacity::None,
            },
            T0,
        )
        .unwrap()
        .item
}

fn write_units_consumed(out: &WriteOutput) -> f64 {
    out.consumed.as_ref().map(|c| c.write_units).unwrap_or(-1.0)
}

/// (item count, bytes) DescribeTable reports, and the bytes the capacity
/// model's partitions hold.
fn stats(engine: &Engine, table: &str) -> (u64, u64, u64) {
    let d = engine.describe_table(table, Millis(0)).unwrap();
    let model: u64 = engine
        .capacity_reports(T0)
        .into_iter()
        .filter(|r| r.table_name == table)
        .flat_map(|r| r.partitions)
        .map(|p| p.size_bytes)
        .sum();
    (d.item_count, d.size_bytes, model)
}

fn total_write_units(engine: &Engine, table: &str) -> f64 {
    engine.capacity_reports(T0).into_iter().find(|r| r.table_name == table).unwrap().metrics.total_write_units
}

#[test]
fn put_charges_the_larger_of_old_and_new_and_keeps_sizes() {
    let engine = Engine::new(EngineConfig::local());
    create(&engine, "t", BillingMode::PayPerRequest);
    let out = put(&engine, "t", pad_item("a", 1_500), total()).unwrap();
    assert_eq!(write_units_consumed(&out), 2.0);
    assert_eq!(stats(&engine, "t"), (1, 1_500, 1_500));
    // Replacing with a bigger item: charged on the new size.
    let out = put(&engine, "t", pad_item("a", 3_000), total()).unwrap();
    assert_eq!(write_units_consumed(&out), 3.0);
    assert_eq!(stats(&engine, "t"), (1, 3_000, 3_000));
    // With a smaller one: still charged on the old size.
    let out = put(&engine, "t", pad_item("a", 500), total()).unwrap();
    assert_eq!(write_units_consumed(&out), 3.0);
    assert_eq!(stats(&engine, "t"), (1, 500, 500));
    put(&engine, "t", pad_item("b", 2_000), total()).unwrap();
    assert_eq!(stats(&engine, "t"), (2, 2_500, 2_500));
    assert_eq!(total_write_units(&engine, "t"), 2.0 + 3.0 + 3.0 + 2.0);
}

#[test]
fn a_failed_put_condition_is_charged_and_changes_nothing() {
    let engine = Engine::new(EngineConfig::local());
    create(&engine, "t", BillingMode::PayPerRequest);
    put(&engine, "t", pad_item("a", 2_500), total()).unwrap();
    let options = WriteOptions {
        condition: Some("attribute_not_exists(pk)".into()),
        return_old_on_condition_failure: true,
        ..total()
    };
    let err = put(&engine, "t", pad_item("a", 100), options).unwrap_err();
    assert_eq!(err, EngineError::ConditionalCheckFailed { item: Some(pad_item("a", 2_500)) });
    assert_eq!(total_write_units(&engine, "t"), 3.0 + 3.0);
    assert_eq!(stats(&engine, "t"), (1, 2_500, 2_500));
}

#[test]
fn delete_charges_the_old_item_and_at_least_one_unit() {
    let engine = Engine::new(EngineConfig::local());
    create(&engine, "t", BillingMode::PayPerRequest);
    put(&engine, "t", pad_item("a", 4_500), total()).unwrap();
    let del = |pk: &str| {
        engine
            .delete_item(
                DeleteItemInput {
                    table_name: "t".into(),
                    key: key(pk),
                    options: WriteOptions { return_values: ReturnValues::AllOld, ..total() },
                },
                T0,
            )
            .unwrap()
    };
    let out = del("a");
    assert_eq!(write_units_consumed(&out), 5.0);
    assert_eq!(out.attributes, Some(pad_item("a", 4_500)));
    assert_eq!(stats(&engine, "t"), (0, 0, 0));
    let out = del("a");
    assert_eq!(write_units_consumed(&out), 1.0);
    assert_eq!(out.attributes, None);
}

#[test]
fn update_charges_a_failed_condition_on_the_old_size() {
    let engine = Engine::new(EngineConfig::local());
    create(&engine, "t", BillingMode::PayPerRequest);
    put(&engine, "t", pad_item("a", 2_048), total()).unwrap();
    let update = |cond: &str| {
        engine.update_item(
            UpdateItemInput {
                table_name: "t".into(),
                key: key("a"),
                update: Some("SET #c = #p".into()),
                options: WriteOptions {
                    condition: Some(cond.into()),
                    expr: ExprArgs {
                        names: Some(
                            [("#c".to_string(), "pad2".to_string()), ("#p".to_string(), "pad".to_string())].into(),
                        ),
                        values: None,
                    },
                    ..total()
                },
                keep_missing: false,
            },
            T0,
        )
    };
    let before = total_write_units(&engine, "t");
    assert_eq!(update("attribute_not_exists(pk)").unwrap_err(), EngineError::ConditionalCheckFailed { item: None });
    assert_eq!(total_write_units(&engine, "t") - before, 2.0);
    assert_eq!(stats(&engine, "t"), (1, 2_048, 2_048));
    // A successful update doubles the item: charged on the new size.
    let out = update("attribute_exists(pk)").unwrap();
    let new_size = item_size(&get(&engine, "t", "a").unwrap()) as u64;
    // pad2 (4 bytes) plus a copy of pad's 2,042.
    assert_eq!(new_size, 2_048 + 4 + 2_042);
    assert_eq!(write_units_consumed(&out), 4.0);
    assert_eq!(stats(&engine, "t"), (1, new_size, new_size));
}

fn batch(
    engine: &Engine,
    requests: Vec<(&str, Vec<WriteRequest>)>,
    now: Millis,
) -> Result<BatchWriteOutput, EngineError> {
    engine.batch_write_item(
        BatchWriteInput {
            requests: requests.into_iter().map(|(t, r)| (t.to_string(), r)).collect(),
            return_capacity: ReturnCapacity::Total,
            return_item_collection_metrics: false,
        },
        now,
    )
}

#[test]
fn batch_units_are_summed_per_table_with_and_without_the_capacity_model() {
    for config in [EngineConfig::local(), EngineConfig { capacity: None, ..EngineConfig::local() }] {
        let engine = Engine::new(config);
        create(&engine, "a", BillingMode::PayPerRequest);
        create(&engine, "b", BillingMode::PayPerRequest);
        put(&engine, "a", pad_item("old", 3_000), total()).unwrap();
        let out = batch(
            &engine,
            vec![
                ("b", vec![WriteRequest::Put(pad_item("x", 1_100))]),
                (
                    "a",
                    vec![
                        // Replaces 3,000 bytes with 10: 3 units.
                        WriteRequest::Put(pad_item("old", 10)),
                        WriteRequest::Put(pad_item("new", 2_100)),
                        WriteRequest::Delete(key("absent")),
                    ],
                ),
            ],
            T0,
        )
        .unwrap();
        assert!(out.unprocessed.is_empty());
        let consumed: Vec<(String, f64)> = out.consumed.iter().map(|c| (c.table_name.clone(), c.write_units)).collect();
        assert_eq!(consumed, [("b".to_string(), 2.0), ("a".to_string(), 3.0 + 3.0 + 1.0)]);
        assert_eq!(engine.describe_table("a", Millis(0)).unwrap().item_count, 2);
        assert_eq!(engine.describe_table("a", Millis(0)).unwrap().size_bytes, 2_110);
        assert_eq!(engine.describe_table("b", Millis(0)).unwrap().size_bytes, 1_100);
    }
}

#[test]
fn a_batch_is_admitted_item_by_item_and_fails_only_when_nothing_was_admitted() {
    let engine = Engine::new(EngineConfig::local());
    // Reads are plentiful; writes are 10 WCU with what burst the model
    // allows. Batches of 25 items of 293 units each, all at one instant,
    // until the model refuses some.
    create(&engine, "t", BillingMode::Provisioned { read: 40_000, write: 10 });
    let now = Millis(1_000);
    let mut written = 0usize;
    let mut partial = None;
    for round in 0..40 {
        let items: Vec<Item> = (0..25).map(|i| pad_item(&format!("k{round}-{i}"), 300_000)).collect();
        let out = batch(&engine, vec![("t", items.into_iter().map(WriteRequest::Put).collect())], now).unwrap();
        let unprocessed = out.unprocessed.first().map(|(_, r)| r.len()).unwrap_or(0);
        let admitted = 25 - unprocessed;
        assert_eq!(out.consumed[0].write_units, admitted as f64 * 293.0);
        written += admitted;
        if unprocessed > 0 {
            partial = Some((round, admitted, out.unprocessed));
            break;
        }
    }
    let Some((round, admitted, unprocessed)) = partial else { panic!("the model never refused a write") };
    assert!(admitted > 0, "round {round}: some of the batch was admitted");
    assert_eq!(engine.describe_table("t", Millis(0)).unwrap().item_count, written as u64);
    // What was admitted is written; what came back is not.
    let present = (0..25).filter(|i| get(&engine, "t", &format!("k{round}-{i}")).is_some()).count();
    assert_eq!(present, admitted);
    for r in &unprocessed[0].1 {
        let WriteRequest::Put(item) = r else { panic!("only puts were sent") };
        let Some(AttributeValue::S(pk)) = item.get("pk") else { panic!("every item has a pk") };
        assert_eq!(get(&engine, "t", pk), None, "{pk} came back unprocessed but was written");
    }
    // At the same instant nothing more can be admitted: the request fails
    // whole, and writes nothing.
    let again = batch(&engine, vec![("t", vec![WriteRequest::Put(pad_item("late", 300_000))])], now);
    assert!(matches!(again, Err(EngineError::Throttled { provisioned: true, .. })), "{again:?}");
    assert_eq!(get(&engine, "t", "late"), None);
    assert_eq!(engine.describe_table("t", Millis(0)).unwrap().item_count, written as u64);
}

fn tx_put(table: &str, item: Item, condition: Option<&str>) -> TransactAction {
    TransactAction {
        table_name: table.into(),
        op: TransactOp::Put { item },
        condition: condition.map(str::to_string),
        expr: ExprArgs::default(),
        return_old_on_failure: false,
    }
}

fn transact(engine: &Engine, actions: Vec<TransactAction>, now: Millis) -> Result<TransactWriteOutput, EngineError> {
    transact_with(engine, actions, false, now)
}

fn transact_with(
    engine: &Engine,
    actions: Vec<TransactAction>,
    return_item_collection_metrics: bool,
    now: Millis,
) -> Result<TransactWriteOutput, EngineError> {
    let return_capacity = ReturnCapacity::Total;
    let input = TransactWriteInput { actions, client_token: None, return_capacity, return_item_collection_metrics };
    engine.transact_write_items(input, now)
}

#[test]
fn a_transaction_commits_whole_or_not_at_all() {
    let engine = Engine::new(EngineConfig::local());
    create(&engine, "a", BillingMode::PayPerRequest);
    create(&engine, "b", BillingMode::PayPerRequest);
    put(&engine, "b", pad_item("taken", 100), total()).unwrap();
    // The second action's condition fails: the first is not written.
    let err = transact(
        &engine,
        vec![
            tx_put("a", pad_item("x", 100), None),
            tx_put("b", pad_item("taken", 200), Some("attribute_not_exists(pk)")),
        ],
        T0,
    )
    .unwrap_err();
    let EngineError::TransactionCanceled { reasons } = err else { panic!("cancelled: {err:?}") };
    assert_eq!(reasons.iter().map(|r| r.code).collect::<Vec<_>>(), ["None", "ConditionalCheckFailed"]);
    assert_eq!(get(&engine, "a", "x"), None);
    assert_eq!(get(&engine, "b", "taken"), Some(pad_item("taken", 100)));
    assert_eq!(stats(&engine, "a"), (0, 0, 0));
    // Both succeed together, charged twice the units per item.
    let out = transact(
        &engine,
        vec![
            tx_put("a", pad_item("x", 1_500), None),
            tx_put("b", pad_item("taken", 200), Some("attribute_exists(pk)")),
        ],
        T0,
    )
    .unwrap();
    let consumed: Vec<(String, f64)> = out.consumed.iter().map(|c| (c.table_name.clone(), c.write_units)).collect();
    assert_eq!(consumed, [("a".to_string(), 4.0), ("b".to_string(), 2.0)]);
    assert_eq!(stats(&engine, "a"), (1, 1_500, 1_500));
    assert_eq!(stats(&engine, "b"), (1, 200, 200));
}

#[test]
fn a_throttled_transaction_is_cancelled_whole() {
    let engine = Engine::new(EngineConfig::local());
    create(&engine, "a", BillingMode::Provisioned { read: 40_000, write: 1 });
    create(&engine, "b", BillingMode::PayPerRequest);
    // Transactions of one small write to b and four large ones to a, all
    // at one instant, until the model refuses one.
    let now = Millis(1_000);
    for round in 0..40 {
        let mut actions = vec![tx_put("b", pad_item(&format!("x{round}"), 100), None)];
        actions.extend((0..4).map(|i| tx_put("a", pad_item(&format!("k{round}-{i}"), 390_000), None)));
        match transact(&engine, actions, now) {
            Ok(_) => continue,
            Err(EngineError::TransactionCanceled { reasons }) => {
                assert_eq!(reasons.len(), 5);
                assert!(reasons.iter().all(|r| r.code == "ProvisionedThroughputExceeded"), "{reasons:?}");
                // Nothing of it was written, in either table.
                assert_eq!(get(&engine, "b", &format!("x{round}")), None);
                assert_eq!(engine.describe_table("a", Millis(0)).unwrap().item_count, 4 * round);
                assert_eq!(engine.describe_table("b", Millis(0)).unwrap().item_count, round);
                return;
            }
            Err(e) => panic!("round {round}: {e:?}"),
        }
    }
    panic!("the model never refused a transaction");
}

#[test]
fn an_engine_reopened_on_its_storage_finds_its_tables_and_items() {
    let storage = Arc::new(MemStorage::new());
    let config = EngineConfig::local();
    let engine = Engine::open(config.clone(), storage.clone(), Millis(0)).unwrap();
    create(&engine, "a", BillingMode::PayPerRequest);
    create(&engine, "b", BillingMode::PayPerRequest);
    put(&engine, "a", pad_item("x", 1_000), total()).unwrap();
    put(&engine, "a", pad_item("y", 2_000), total()).unwrap();
    engine
        .update_table(
            UpdateTableInput {
                billing_mode_pay_per_request: Some(false),
                throughput: Some((7, 9)),
                ..UpdateTableInput::new("a")
            },
            Millis(500),
        )
        .unwrap();
    engine.delete_table("b", Millis(0)).unwrap();
    let before = engine.describe_table("a", Millis(0)).unwrap();
    drop(engine);
    assert_eq!(storage.list_tables().unwrap().iter().map(|m| m.name.as_str()).collect::<Vec<_>>(), ["a"]);

    let engine = Engine::open(config, storage, Millis(2_000)).unwrap();
    let after = engine.describe_table("a", Millis(0)).unwrap();
    assert_eq!(after.table_id, before.table_id);
    assert_eq!(after.arn, before.arn);
    assert_eq!(after.created_at, before.created_at);
    assert_eq!(after.settings.billing, BillingMode::Provisioned { read: 7, write: 9 });
    assert_eq!(after.settings.last_pay_per_request_switch, Some(Millis(0)));
    assert_eq!((after.item_count, after.size_bytes), (2, 3_000));
    assert_eq!(get(&engine, "a", "y"), Some(pad_item("y", 2_000)));
    assert!(matches!(engine.describe_table("b", Millis(0)), Err(EngineError::ResourceNotFound(_))));
    let names = engine.list_tables(ListTablesInput { exclusive_start: None, limit: 10 }).names;
    assert_eq!(names, ["a"]);
}

#[test]
fn each_region_keeps_its_own_tables_in_one_storage() {
    use dynaburst_engine::store::RegionStorage;
    let storage: Arc<dyn Storage> = Arc::new(MemStorage::new());
    let region = |name: &str| EngineConfig { region: name.to_string(), ..EngineConfig::local() };
    let view = |name: &str| Arc::new(RegionStorage::new(storage.clone(), "us-east-1", name));
    let open = |name: &str| Engine::open(region(name), view(name), Millis(0)).unwrap();
    let (home, eu, local) = (open("us-east-1"), open("eu-west-1"), open("localhost"));
    for (engine, bytes) in [(&home, 1_000), (&eu, 2_000), (&local, 3_000)] {
        create(engine, "t", BillingMode::PayPerRequest);
        put(engine, "t", pad_item("x", bytes), total()).unwrap();
    }
    create(&eu, "only-eu", BillingMode::PayPerRequest);
    // The home region's names are stored as they are (a storage written
    // before regions were stored reads the same); the others' are marked.
    let stored: Vec<String> = storage.list_tables().unwrap().into_iter().map(|m| m.name).collect();
    assert_eq!(stored, ["@eu-west-1/only-eu", "@eu-west-1/t", "@localhost/t", "t"]);
    assert_eq!(RegionStorage::other_regions(storage.as_ref()).unwrap(), ["eu-west-1", "localhost"]);
    assert_eq!(
        view("eu-west-1").list_tables().unwrap().iter().map(|m| m.name.as_str()).collect::<Vec<_>>(),
        ["only-eu", "t"]
    );
    // A storage error names the table as its region does.
    assert_eq!(view("localhost").open_table("nope").err(), Some(StoreError::NoSuchTable("nope".to_string())));
    drop((home, eu, local));

    let (home, eu, local) = (open("us-east-1"), open("eu-west-1"), open("localhost"));
    for (engine, bytes) in [(&home, 1_000), (&eu, 2_000), (&local, 3_000)] {
        assert_eq!(get(engine, "t", "x"), Some(pad_item("x", bytes)));
        assert_eq!(stats(engine, "t").0, 1);
    }
    let list = |engine: &Engine| engine.list_tables(ListTablesInput { exclusive_start: None, limit: 10 }).names;
    assert_eq!(list(&home), ["t"]);
    assert_eq!(list(&eu), ["only-eu", "t"]);
    assert_eq!(list(&local), ["t"]);
    assert_eq!(eu.describe_table("t", Millis(0)).unwrap().arn, "arn:aws:dynamodb:eu-west-1:000000000000:table/t");
    // Dropping a table in one region leaves the same name in the others.
    eu.delete_table("t", Millis(0)).unwrap();
    assert_eq!(get(&home, "t", "x"), Some(pad_item("x", 1_000)));
    assert_eq!(get(&local, "t", "x"), Some(pad_item("x", 3_000)));
    let stored: Vec<String> = storage.list_tables().unwrap().into_iter().map(|m| m.name).collect();
    assert_eq!(stored, ["@eu-west-1/only-eu", "@localhost/t", "t"]);
}

// ----- storage failures ------------------------------------------------

/// A write that found its table before a DeleteTable dropped it, and
/// commits after (the durable storage refuses it as a table it no longer
/// has), is answered as a table that is gone, not as an internal error.
#[test]
fn a_write_whose_table_is_dropped_under_it_is_resource_not_found() {
    let storage = Arc::new(FaultyStorage::new());
    let engine = Engine::open(EngineConfig::local(), storage.clone(), Millis(0)).unwrap();
    create(&engine, "t", BillingMode::PayPerRequest);
    storage.faults().drop_tables_under_commits(true);
    let err = put(&engine, "t", pad_item("x", 100), total()).unwrap_err();
    assert!(matches!(&err, EngineError::ResourceNotFound(m) if m == "Requested resource not found"), "{err:?}");
    storage.faults().drop_tables_under_commits(false);
    assert_eq!(get(&engine, "t", "x"), None);
    assert_eq!(stats(&engine, "t"), (0, 0, 0));
}

fn every_item(engine: &Engine, table: &str) -> Vec<Item> {
    let mut out = engine.read(ReadInput { consistent_read: true, ..ReadInput::scan(table) }, T0).unwrap().items;
    out.sort_by_key(|i| format!("{:?}", i.get("pk")));
    out
}

fn is_internal(r: Result<impl std::fmt::Debug, EngineError>) -> bool {
    matches!(r, Err(EngineError::Internal(StoreError::Io { .. })))
}

/// Every writing operation, against tables `a` and `b`, each after
/// `arm()`: whether each answered InternalServerError.
fn every_write(engine: &Engine, arm: &dyn Fn()) -> Vec<(&'static str, bool)> {
    let update = UpdateItemInput {
        table_name: "a".into(),
        key: key("x"),
        update: Some("SET n = :n".into()),
        options: WriteOptions {
            expr: ExprArgs {
                names: None,
                values: Some([(":n".to_string(), AttributeValue::N(Number::from_i64(1)))].into()),
            },
            ..total()
        },
        keep_missing: false,
    };
    let delete = DeleteItemInput { table_name: "a".into(), key: key("x"), options: total() };
    let batch_requests = vec![
        ("a", vec![WriteRequest::Put(pad_item("n1", 100)), WriteRequest::Delete(key("x"))]),
        ("b", vec![WriteRequest::Put(pad_item("n2", 100)), WriteRequest::Delete(key("y"))]),
    ];
    let actions = vec![tx_put("a", pad_item("t1", 100), None), tx_put("b", pad_item("y", 50), None)];
    let mut out = Vec::new();
    arm();
    out.push(("put", is_internal(put(engine, "a", pad_item("new", 100), total()))));
    arm();
    out.push(("replace", is_internal(put(engine, "a", pad_item("x", 300), total()))));
    arm();
    out.push(("update", is_internal(engine.update_item(update, T0))));
    arm();
    out.push(("delete", is_internal(engine.delete_item(delete, T0))));
    arm();
    out.push(("batch", is_internal(batch(engine, batch_requests, T0))));
    arm();
    out.push(("transaction", is_internal(transact(engine, actions, T0))));
    out
}

#[test]
fn a_storage_failure_answers_internal_server_error_and_applies_nothing() {
    for capacity in [true, false] {
        let storage = Arc::new(FaultyStorage::new());
        let faults = storage.faults();
        let mut config = EngineConfig::local();
        if !capacity {
            config.capacity = None;
        }
        let engine = Engine::open(config, storage.clone(), Millis(0)).unwrap();
        create(&engine, "a", BillingMode::PayPerRequest);
        create(&engine, "b", BillingMode::PayPerRequest);
        put(&engine, "a", pad_item("x", 200), total()).unwrap();
        put(&engine, "b", pad_item("y", 400), total()).unwrap();
        let before = (every_item(&engine, "a"), every_item(&engine, "b"), stats(&engine, "a"), stats(&engine, "b"));
        faults.fail_commits(true);
        for (op, internal) in every_write(&engine, &|| {}) {
            assert!(internal, "{op} (capacity {capacity})");
        }
        faults.fail_commits(false);
        let after = (every_item(&engine, "a"), every_item(&engine, "b"), stats(&engine, "a"), stats(&engine, "b"));
        assert_eq!(after, before, "capacity {capacity}: nothing was applied");
    }
}

#[test]
fn a_failed_second_write_leaves_batches_and_transactions_unapplied() {
    let storage = Arc::new(FaultyStorage::new());
    let faults = storage.faults();
    let engine = Engine::open(EngineConfig::local(), storage.clone(), Millis(0)).unwrap();
    create(&engine, "a", BillingMode::PayPerRequest);
    create(&engine, "b", BillingMode::PayPerRequest);
    put(&engine, "a", pad_item("x", 200), total()).unwrap();
    put(&engine, "b", pad_item("y", 400), total()).unwrap();
    let before = (every_item(&engine, "a"), every_item(&engine, "b"), stats(&engine, "a"), stats(&engine, "b"));
    let arm_second_write = || {
        faults.fail_write_after(1);
    };
    let answers = every_write(&engine, &arm_second_write);
    faults.disarm_writes();
    // A single-item write has no second write: it succeeds. A batch or a
    // transaction fails whole, its first write undone.
    let internal: Vec<(&str, bool)> = answers;
    assert_eq!(
        internal,
        [
            ("put", false),
            ("replace", false),
            ("update", false),
            ("delete", false),
            ("batch", true),
            ("transaction", true)
        ]
    );
    // What the single-item writes did, and nothing of the batch or the
    // transaction: a holds `new` only (x was replaced, updated, deleted).
    let a: Vec<Option<AttributeValue>> = every_item(&engine, "a").iter().map(|i| i.get("pk").cloned()).collect();
    assert_eq!(a, [Some(AttributeValue::S("new".into()))]);
    assert_eq!(stats(&engine, "a"), (1, 100, 100));
    assert_eq!((every_item(&engine, "b"), stats(&engine, "b")), (before.1, before.3));
    // The engine still works, and counts from the right place.
    put(&engine, "a", pad_item("n1", 100), total()).unwrap();
    assert_eq!(stats(&engine, "a"), (2, 200, 200));
    let mut seen = 0;
    storage
        .open_table("a")
        .unwrap()
        .range(dynaburst_engine::store::ALL_KEYS, Direction::Forward, &mut |_, _| {
            seen += 1;
            ControlFlow::Continue(())
        })
        .unwrap();
    assert_eq!(seen, 2);
}

// ----- secondary indexes -------------------------------------------------

/// A table keyed by pk with GSI `by_g` on g (S), projecting everything.
fn create_indexed(engine: &Engine, name: &str) {
    engine
        .create_table(
            CreateTableInput {
                global_indexes: Some(vec![IndexSpec {
                    name: "by_g".into(),
                    key_schema: vec![("g".into(), KeyRole::Hash)],
                    projection_type: Some(ProjectionType::All),
                    non_key_attributes: None,
                    throughput: None,
                    on_demand: None,
                    warm: None,
                }]),
                ..CreateTableInput::new(
                    name,
                    vec![("pk".into(), KeyRole::Hash)],
                    vec![("pk".into(), ScalarType::S), ("g".into(), ScalarType::S)],
                    BillingMode::PayPerRequest,
                )
            },
            Millis(0),
        )
        .unwrap();
}

/// The pk of every entry of `by_g` under g = `g`, in index order.
fn index_entries(engine: &Engine, table: &str, g: &str) -> Vec<String> {
    let values = std::collections::HashMap::from([(":g".to_string(), AttributeValue::S(g.into()))]);
    let out = engine
        .read(
            ReadInput {
                index_name: Some("by_g".into()),
                expr: ExprArgs { names: None, values: Some(values) },
                ..ReadInput::query(table, "g = :g")
            },
            T0,
        )
        .unwrap();
    out.items.iter().map(|i| format!("{:?}", i.get("pk"))).collect()
}

fn with_g(pk: &str, g: Option<&str>) -> Item {
    let mut i = key(pk);
    if let Some(g) = g {
        i.insert("g".into(), AttributeValue::S(g.into()));
    }
    i
}

/// Puts a and b under g = x, c without g and d under y; then moves b to
/// y and deletes d.
fn put_move_and_delete(engine: &Engine, table: &str) {
    for (pk, g) in [("a", Some("x")), ("b", Some("x")), ("c", None), ("d", Some("y"))] {
        put(engine, table, with_g(pk, g), WriteOptions::default()).unwrap();
    }
    put(engine, table, with_g("b", Some("y")), WriteOptions::default()).unwrap();
    engine
        .delete_item(DeleteItemInput { table_name: table.into(), key: key("d"), options: WriteOptions::default() }, T0)
        .unwrap();
}

/// Bytes the partitions of `table`'s GSI `by_g` hold in its capacity model.
fn gsi_partition_bytes(engine: &Engine, table: &str) -> Vec<u64> {
    let reports = engine.capacity_reports(T0).into_iter();
    let mut gsi = reports.filter(|r| r.table_name == table && r.index_name.as_deref() == Some("by_g"));
    gsi.next().unwrap().partitions.iter().map(|p| p.size_bytes).collect()
}

#[test]
fn a_gsi_partitions_hold_its_entries_bytes_and_get_them_back_when_the_storage_is_reopened() {
    let storage = Arc::new(MemStorage::new());
    let engine = Engine::open(EngineConfig::local(), storage.clone(), Millis(0)).unwrap();
    create_indexed(&engine, "t");
    assert_eq!(gsi_partition_bytes(&engine, "t"), vec![0; 4], "a new on-demand GSI: 4 empty partitions");
    // a and b under x, c in no entry, d under y; then b moves to y and d
    // leaves; then a's entry is rewritten in place with a longer attribute.
    put_move_and_delete(&engine, "t");
    let mut a = with_g("a", Some("x"));
    a.insert("note".into(), AttributeValue::S("twelve bytes".into()));
    put(&engine, "t", a.clone(), WriteOptions::default()).unwrap();
    // Each entry (projecting every attribute) is its item plus the 100
    // bytes of an index entry's overhead.
    let expected = (item_size(&a) + item_size(&with_g("b", Some("y"))) + 2 * 100) as u64;
    let bytes = gsi_partition_bytes(&engine, "t");
    assert_eq!(bytes.iter().sum::<u64>(), expected, "{bytes:?}");
    assert_eq!(bytes.iter().filter(|b| **b > 0).count(), 2, "x and y hash to two partitions: {bytes:?}");
    let reopened = Engine::open(EngineConfig::local(), storage, Millis(0)).unwrap();
    assert_eq!(gsi_partition_bytes(&reopened, "t"), bytes);
}

#[test]
fn index_entries_follow_every_write_and_are_rebuilt_when_the_storage_is_reopened() {
    let storage = Arc::new(MemStorage::new());
    let engine = Engine::open(EngineConfig::local(), storage.clone(), Millis(0)).unwrap();
    create_indexed(&engine, "t");
    put_move_and_delete(&engine, "t");
    // A failed condition that changes nothing.
    let refused = WriteOptions { condition: Some("attribute_not_exists(pk)".into()), ..WriteOptions::default() };
    assert!(matches!(
        put(&engine, "t", with_g("a", Some("z")), refused),
        Err(EngineError::ConditionalCheckFailed { .. })
    ));
    let expected = (
        vec![format!("{:?}", Some(AttributeValue::S("a".into())))],
        vec![format!("{:?}", Some(AttributeValue::S("b".into())))],
    );
    assert_eq!((index_entries(&engine, "t", "x"), index_entries(&engine, "t", "y")), expected);
    assert_eq!(index_entries(&engine, "t", "z"), Vec::<String>::new());
    let described = engine.describe_table("t", T0).unwrap();
    assert_eq!((described.indexes[0].item_count, described.item_count), (2, 3), "c has no g");
    // A wrong-typed index key is refused and nothing changes.
    let mut bad = key("e");
    bad.insert("g".into(), AttributeValue::N(Number::from_i64(1)));
    assert_eq!(
        put(&engine, "t", bad, WriteOptions::default()).unwrap_err(),
        EngineError::Validation(
            "One or more parameter values were invalid: Type mismatch for Index Key g Expected: S Actual: N IndexName: by_g".into()
        )
    );
    // The same storage opened again rebuilds the entries from the items.
    drop(engine);
    let reopened = Engine::open(EngineConfig::local(), storage, Millis(0)).unwrap();
    assert_eq!((index_entries(&reopened, "t", "x"), index_entries(&reopened, "t", "y")), expected);
    assert_eq!(reopened.describe_table("t", T0).unwrap().indexes[0].item_count, 2);
}

/// A pk/sk table with LSI `by_v` on (pk, v: N), projecting everything.
fn create_with_lsi(engine: &Engine, name: &str) {
    engine
        .create_table(
            CreateTableInput {
                local_indexes: Some(vec![IndexSpec {
                    name: "by_v".into(),
                    key_schema: vec![("pk".into(), KeyRole::Hash), ("v".into(), KeyRole::Range)],
                    projection_type: Some(ProjectionType::All),
                    non_key_attributes: None,
                    throughput: None,
                    on_demand: None,
                    warm: None,
                }]),
                ..CreateTableInput::new(
                    name,
                    vec![("pk".into(), KeyRole::Hash), ("sk".into(), KeyRole::Range)],
                    vec![("pk".into(), ScalarType::S), ("sk".into(), ScalarType::N), ("v".into(), ScalarType::N)],
                    BillingMode::PayPerRequest,
                )
            },
            Millis(0),
        )
        .unwrap();
}

/// An item of the LSI table: pk, sk and v = sk, padded by `pad` bytes.
fn lsi_item(pk: &str, sk: i64, pad: usize) -> Item {
    let mut i = Item::new();
    i.insert("pk".into(), AttributeValue::S(pk.into()));
    i.insert("sk".into(), AttributeValue::N(Number::from_i64(sk)));
    i.insert("v".into(), AttributeValue::N(Number::from_i64(sk)));
    i.insert("pad".into(), AttributeValue::S("x".repeat(pad)));
    i
}

#[test]
fn an_item_collection_stops_at_its_limit_and_shrinking_writes_still_pass() {
    let config = EngineConfig { item_collection_limit_bytes: 3_000, ..EngineConfig::local() };
    let engine = Engine::new(config);
    create_with_lsi(&engine, "t");
    let item = lsi_item;
    let metrics = WriteOptions { return_item_collection_metrics: true, ..WriteOptions::default() };
    // Each item counts twice: once in the table, once as its LSI entry.
    let first = put(&engine, "t", item("a", 1, 600), metrics.clone()).unwrap();
    let size = 2 * item_size(&item("a", 1, 600)) as u64;
    let mut key = Item::new();
    key.insert("pk".into(), AttributeValue::S("a".into()));
    assert_eq!(first.item_collection, Some(ItemCollection { key: key.clone(), size_bytes: size }));
    put(&engine, "t", item("a", 2, 600), WriteOptions::default()).unwrap();
    assert_eq!(
        put(&engine, "t", item("a", 3, 600), WriteOptions::default()).unwrap_err(),
        EngineError::ItemCollectionSizeLimitExceeded
    );
    assert_eq!(engine.describe_table("t", T0).unwrap().item_count, 2, "the refused item was not written");
    // Another partition key has a collection of its own; a smaller item
    // in a full collection is a shrinking write.
    put(&engine, "t", item("b", 1, 600), WriteOptions::default()).unwrap();
    let shrunk = put(&engine, "t", item("a", 2, 10), metrics).unwrap();
    let expected = 2 * (item_size(&item("a", 1, 600)) + item_size(&item("a", 2, 10))) as u64;
    assert_eq!(shrunk.item_collection.map(|c| c.size_bytes), Some(expected));
    // Without an LSI there is no collection to report.
    create(&engine, "plain", BillingMode::PayPerRequest);
    let plain = put(
        &engine,
        "plain",
        pad_item("x", 100),
        WriteOptions { return_item_collection_metrics: true, ..WriteOptions::default() },
    );
    assert_eq!(plain.unwrap().item_collection, None);
}

/// Creates on-demand table `name` (pk S) with a KEYS_ONLY stream.
fn create_streamed(engine: &Engine, name: &str) {
    engine
        .create_table(
            CreateTableInput {
                stream: Some((true, Some(dynaburst_engine::stream::StreamViewType::KeysOnly))),
                ..CreateTableInput::new(
                    name,
                    vec![("pk".into(), KeyRole::Hash)],
                    vec![("pk".into(), ScalarType::S)],
                    BillingMode::PayPerRequest,
                )
            },
            Millis(0),
        )
        .unwrap();
}

#[test]
fn a_reopened_table_keeps_its_stream_on_and_skips_empty_index_keys() {
    let storage = Arc::new(MemStorage::new());
    let engine = Engine::open(EngineConfig::local(), storage.clone(), Millis(0)).unwrap();
    create_streamed(&engine, "s");
    create_indexed(&engine, "t");
    // An empty index key: the write is refused, so put the item before the
    // index exists through the same storage and reopen.
    drop(engine);
    let reopened = Engine::open(EngineConfig::local(), storage, Millis(0)).unwrap();
    put(&reopened, "s", key("a"), WriteOptions::default()).unwrap();
    let arn = reopened.describe_table("s", T0).unwrap().arn;
    let (streams, _) = reopened.list_streams(Some("s"), 10, None, Millis(0)).unwrap();
    assert_eq!(streams.len(), 1, "the stream goes on after a reopen");
    let d = reopened.describe_stream(&streams[0].arn, 100, None, None, T0).unwrap();
    assert_eq!((d.status, d.summary.arn.starts_with(&arn)), ("ENABLED", true));
    let mut recorded = 0;
    for shard in &d.shards {
        let it = reopened
            .get_shard_iterator(
                &streams[0].arn,
                &shard.shard_id,
                dynaburst_engine::stream::IteratorType::TrimHorizon,
                None,
                T0,
            )
            .unwrap();
        recorded += reopened.get_records(&it, 10, T0).unwrap().records.len();
    }
    assert_eq!(recorded, 1, "the write after the reopen is recorded");
    // An item whose index key is an empty string is in no index.
    let mut empty = key("e");
    empty.insert("g".into(), AttributeValue::S(String::new()));
    assert!(matches!(put(&reopened, "t", empty, WriteOptions::default()), Err(EngineError::Validation(_))));
    assert_eq!(index_entries(&reopened, "t", ""), Vec::<String>::new());
}

/// Adds GSI `by_g` on g (S) with `write` provisioned WCU to table `name`
/// at `now`.
fn add_by_g(engine: &Engine, name: &str, write: u64, now: Millis) {
    let spec = IndexSpec {
        name: "by_g".into(),
        key_schema: vec![("g".into(), KeyRole::Hash)],
        projection_type: Some(ProjectionType::All),
        non_key_attributes: None,
        throughput: Some((5, write)),
        on_demand: None,
        warm: None,
    };
    let input = UpdateTableInput {
        attribute_definitions: vec![("g".into(), ScalarType::S)],
        index_updates: Some(vec![IndexUpdate::Create(spec)]),
        ..UpdateTableInput::new(name)
    };
    engine.update_table(input, now).unwrap();
}

fn index_status(engine: &Engine, table: &str, at: u64) -> &'static str {
    engine.describe_table(table, Millis(at)).unwrap().indexes[0].status
}

#[test]
fn a_backfill_is_written_at_the_index_write_capacity_and_yields_to_writes_into_the_index() {
    let engine = Engine::new(EngineConfig::local());
    for table in ["idle", "busy"] {
        create(&engine, table, BillingMode::Provisioned { read: 1_000, write: 1_000 });
        for i in 0..100 {
            put(&engine, table, with_g(&format!("{i}"), Some("x")), WriteOptions::default()).unwrap();
        }
        // 100 index write units to backfill at 10 WCU: 10 s after the
        // allocation step (500 ms).
        add_by_g(&engine, table, 10, Millis(2_000));
    }
    let write_at = |table: &str, pk: String, at: u64| {
        let input = PutItemInput { table_name: table.into(), item: with_g(&pk, Some("y")), options: total() };
        engine.put_item(input, Millis(at)).unwrap()
    };
    // "busy" gets one item a tenth of a second for the index, all of its
    // 10 WCU; "idle" gets none. Both are polled as often.
    for step in 0..100u64 {
        let at = 2_500 + step * 100;
        let out = write_at("busy", format!("new{step}"), at);
        assert_eq!(out.consumed.map(|c| c.write_units), Some(1.0));
        assert_eq!((index_status(&engine, "idle", at), index_status(&engine, "busy", at)), ("CREATING", "CREATING"));
    }
    assert_eq!(index_status(&engine, "idle", 12_400), "CREATING");
    assert_eq!(index_status(&engine, "idle", 12_500), "ACTIVE");
    // The busy index's backfill only had what its first seconds had
    // banked: it is still being built, and finishes once the writes stop.
    assert_eq!(index_status(&engine, "busy", 12_600), "CREATING");
    assert_eq!(index_status(&engine, "busy", 30_000), "ACTIVE");
    // The backfill's units were charged to each index's own model.
    let index_units = |table: &str| {
        let reports = engine.capacity_reports(Millis(30_000));
        let report = reports.into_iter().find(|r| r.table_name == table && r.index_name.is_some()).unwrap();
        report.metrics.total_write_units
    };
    assert!((index_units("idle") - 100.0).abs() < 1e-6, "idle: {}", index_units("idle"));
    assert!((index_units("busy") - 200.0).abs() < 1e-6, "busy: {}", index_units("busy"));
}

#[test]
fn a_transaction_that_would_outgrow_an_item_collection_is_cancelled_naming_the_put() {
    let config = EngineConfig { item_collection_limit_bytes: 3_000, ..EngineConfig::local() };
    let engine = Engine::new(config);
    create_with_lsi(&engine, "t");
    // A collection of 2 x 2 x ~620 bytes, reported per table when asked.
    let out = transact_with(
        &engine,
        vec![tx_put("t", lsi_item("a", 1, 600), None), tx_put("t", lsi_item("b", 1, 600), None)],
        true,
        T0,
    )
    .unwrap();
    let sizes: Vec<u64> = out.item_collections.iter().flat_map(|(_, cs)| cs.iter().map(|c| c.size_bytes)).collect();
    assert_eq!(out.item_collections.iter().map(|(t, _)| t.as_str()).collect::<Vec<_>>(), vec!["t"]);
    assert_eq!(sizes, vec![2 * item_size(&lsi_item("a", 1, 600)) as u64; 2]);
    put(&engine, "t", lsi_item("a", 2, 600), WriteOptions::default()).unwrap();
    // A third item in "a" would outgrow it: the put is named, the others
    // pass, and nothing is written.
    let err =
        transact(&engine, vec![tx_put("t", lsi_item("b", 2, 10), None), tx_put("t", lsi_item("a", 3, 600), None)], T0)
            .unwrap_err();
    let EngineError::TransactionCanceled { reasons } = err else { panic!("expected a cancellation, got {err:?}") };
    let codes: Vec<(&str, Option<&str>)> = reasons.iter().map(|r| (r.code, r.message.as_deref())).collect();
    assert_eq!(codes, vec![("None", None), ("ItemCollectionSizeLimitExceeded", Some("Collection size exceeded."))]);
    assert_eq!(engine.describe_table("t", T0).unwrap().item_count, 3, "nothing was written");
}

/// UpdateTimeToLive's errors and the expirer in modelled time (S117-S120):
/// a change within the hour is refused; after it, enabling again and
/// disabling on another attribute are refused, disabling on the same one
/// works. An expired item's delete costs no write units and is a REMOVE
/// record by the service.
#[test]
fn time_to_live_changes_and_expiry_in_modelled_time() {
    let engine = Engine::new(EngineConfig::local());
    create_streamed(&engine, "ttl");
    let message = |r: Result<(), EngineError>| match r {
        Err(EngineError::Validation(m)) => m,
        other => panic!("expected a ValidationException, got {other:?}"),
    };
    let t0 = Millis(1_000);
    engine.update_time_to_live("ttl", true, "exp", t0).unwrap();
    let hour = dynaburst_engine::ttl::TTL_COOLDOWN_MS;
    assert_eq!(
        message(engine.update_time_to_live("ttl", false, "exp", Millis(t0.0 + hour - 1))),
        "Time to live has been modified multiple times within a fixed interval"
    );
    let after = Millis(t0.0 + hour);
    assert_eq!(message(engine.update_time_to_live("ttl", true, "exp", after)), "TimeToLive is already enabled");
    for enable in [false, true] {
        assert_eq!(
            message(engine.update_time_to_live("ttl", enable, "other", after)),
            "TimeToLive is active on a different AttributeName: current AttributeName is exp"
        );
    }
    // An item that expired a second ago is deleted by the next sweep.
    let now_secs = after.0 / 1000;
    let mut expiring = key("gone");
    expiring.insert("exp".into(), AttributeValue::N(Number::parse(&(now_secs - 1).to_string()).unwrap()));
    put(&engine, "ttl", expiring, WriteOptions::default()).unwrap();
    let units = total_write_units(&engine, "ttl");
    assert_eq!(engine.expire(after).unwrap(), 1);
    assert_eq!(total_write_units(&engine, "ttl"), units, "a TTL delete consumes no write capacity");
    assert_eq!(get(&engine, "ttl", "gone"), None);
    let arn = engine.list_streams(Some("ttl"), 10, None, Millis(0)).unwrap().0[0].arn.clone();
    let mut removes = Vec::new();
    for shard in engine.describe_stream(&arn, 100, None, None, after).unwrap().shards {
        let it = engine
            .get_shard_iterator(&arn, &shard.shard_id, dynaburst_engine::stream::IteratorType::TrimHorizon, None, after)
            .unwrap();
        let page = engine.get_records(&it, 100, after).unwrap();
        removes.extend(
            page.records
                .into_iter()
                .filter(|r| r.event == dynaburst_engine::stream::EventName::Remove)
                .map(|r| r.by_service),
        );
    }
    assert_eq!(removes, [true], "one REMOVE, by the service");
    engine.update_time_to_live("ttl", false, "exp", after).unwrap();
    assert_eq!(engine.describe_time_to_live("ttl").unwrap().status, "DISABLED");
}

#[test]
fn the_memory_budget_refuses_growth_past_it_and_frees_what_deletes_free() {
    let item = |pk: &str| pad_item(pk, 1_000);
    let per_item = item_size(&item("a")) as u64 + STORED_ITEM_OVERHEAD_BYTES;
    let budget = Arc::new(MemoryBudget::new(3 * per_item));
    let engine = Engine::new(EngineConfig { memory: Some(budget.clone()), ..EngineConfig::local() });
    create(&engine, "t", BillingMode::PayPerRequest);
    for pk in ["a", "b", "c"] {
        put(&engine, "t", item(pk), WriteOptions::default()).unwrap();
    }
    assert_eq!(budget.used(), 3 * per_item);
    // Overwriting an item with one of its size takes nothing more.
    put(&engine, "t", item("a"), WriteOptions::default()).unwrap();
    assert_eq!(budget.used(), 3 * per_item);
    let EngineError::LimitExceeded(message) = put(&engine, "t", item("d"), WriteOptions::default()).unwrap_err() else {
        panic!("a write past the budget is LimitExceeded")
    };
    assert!(message.contains("(serve --max-memory)") && message.contains("--data-dir"), "{message}");
    assert_eq!(engine.describe_table("t", T0).unwrap().item_count, 3, "the refused item was not written");
    assert_eq!(budget.used(), 3 * per_item, "a refused write gives its reservation back");
    let delete = DeleteItemInput { table_name: "t".into(), key: key("b"), options: WriteOptions::default() };
    engine.delete_item(delete, T0).unwrap();
    assert_eq!(budget.used(), 2 * per_item);
    put(&engine, "t", item("d"), WriteOptions::default()).unwrap();
    engine.delete_table("t", T0).unwrap();
    assert_eq!(budget.used(), 0, "a dropped table gives back all it held");
}

/// A deleted table's stream stays readable, DISABLED with its shards
/// closed, for 24 hours, and ListStreams lists it under the table's name
/// before the streams of a table re-created with that name (S102;
/// ack-api-quirks DDB-TABLE-378 and DDB-TABLE-386, live AWS).
#[test]
fn a_deleted_tables_stream_stays_readable_for_its_retention() {
    use dynaburst_engine::stream::{EventName, IteratorType, StreamViewType, STREAM_RETENTION_MS};
    let engine = Engine::new(EngineConfig::local());
    let create = |now: Millis| {
        let input = CreateTableInput {
            stream: Some((true, Some(StreamViewType::NewImage))),
            ..CreateTableInput::new(
                "s",
                vec![("pk".into(), KeyRole::Hash)],
                vec![("pk".into(), ScalarType::S)],
                BillingMode::PayPerRequest,
            )
        };
        engine.create_table(input, now).unwrap();
        engine.list_streams(Some("s"), 10, None, now).unwrap().0.last().unwrap().arn.clone()
    };
    let old = create(Millis(1_000));
    put(&engine, "s", key("a"), WriteOptions::default()).unwrap();
    let deleted_at = Millis(2_000);
    engine.delete_table("s", deleted_at).unwrap();

    let listed = engine.list_streams(Some("s"), 10, None, deleted_at).unwrap().0;
    assert_eq!(
        listed.iter().map(|s| (s.arn.as_str(), s.table_name.as_str())).collect::<Vec<_>>(),
        [(old.as_str(), "s")]
    );
    let d = engine.describe_stream(&old, 100, None, None, deleted_at).unwrap();
    assert_eq!((d.status, d.summary.table_name.as_str(), d.view), ("DISABLED", "s", StreamViewType::NewImage));
    assert_eq!(d.key_schema.hash.name, "pk");
    assert!(!d.shards.is_empty() && d.shards.iter().all(|s| s.ending_sequence.is_some()), "{:?}", d.shards);
    let read = |arn: &str, now: Millis| -> Result<Vec<EventName>, EngineError> {
        let mut events = Vec::new();
        for shard in engine.describe_stream(arn, 100, None, None, now)?.shards {
            let it = engine.get_shard_iterator(arn, &shard.shard_id, IteratorType::TrimHorizon, None, now)?;
            let page = engine.get_records(&it, 100, now)?;
            assert!(page.next_iterator.is_none(), "a closed shard read to its end has no next iterator");
            events.extend(page.records.into_iter().map(|r| r.event));
        }
        Ok(events)
    };
    assert_eq!(read(&old, deleted_at).unwrap(), [EventName::Insert]);

    // Re-created under the same name: a new stream, listed after the old.
    let new = create(Millis(3_000));
    assert_ne!(new, old);
    put(&engine, "s", key("b"), WriteOptions::default()).unwrap();
    let arns = |name: Option<&str>, now: Millis| -> Vec<String> {
        engine.list_streams(name, 10, None, now).unwrap().0.into_iter().map(|s| s.arn).collect()
    };
    assert_eq!(arns(Some("s"), Millis(3_000)), [old.clone(), new.clone()]);
    assert_eq!(arns(None, Millis(3_000)), [old.clone(), new.clone()]);
    let page = engine.list_streams(None, 1, None, Millis(3_000)).unwrap();
    assert_eq!((page.0.len(), page.1.as_deref()), (1, Some(old.as_str())), "paged one at a time");
    let live = engine.describe_stream(&new, 100, None, None, Millis(3_000)).unwrap();
    assert_eq!((live.status, live.view), ("ENABLED", StreamViewType::NewImage));
    assert_eq!(
        read(&old, Millis(3_000)).unwrap(),
        [EventName::Insert],
        "the live table's writes are not in the old stream"
    );

    // Gone once its retention has passed since the deletion.
    let last_day = Millis(deleted_at.0 + STREAM_RETENTION_MS);
    assert_eq!(engine.describe_stream(&old, 100, None, None, last_day).unwrap().status, "DISABLED");
    let after = Millis(last_day.0 + 1);
    assert!(matches!(engine.describe_stream(&old, 100, None, None, after), Err(EngineError::ResourceNotFound(_))));
    assert_eq!(arns(Some("s"), after), std::slice::from_ref(&new));
    engine.delete_table("s", after).unwrap();
    assert_eq!(arns(Some("s"), after), [new]);
    // A name with no table and no kept stream is not found, as before.
    assert!(matches!(engine.list_streams(Some("never"), 10, None, after), Err(EngineError::ResourceNotFound(_))));
}

/// A switch between billing modes takes a GSI's units and warm throughput
/// along as DynamoDB does: onto PROVISIONED only with units of its own (a
/// warm throughput alone is not enough), onto PAY_PER_REQUEST keeping its
/// warm throughput at least at the units it had, in the capacity model at
/// once and in the catalog (ack-api-quirks DDB-TABLE-134, -152, -153).
#[test]
fn a_billing_switch_takes_a_gsis_units_and_warm_throughput_along() {
    let storage = Arc::new(MemStorage::new());
    let engine = Engine::open(EngineConfig::local(), storage.clone(), Millis(0)).unwrap();
    create_indexed(&engine, "sw");
    let gsi_update = |throughput, warm| IndexUpdate::Update { name: "by_g".into(), throughput, on_demand: None, warm };
    let switch = |updates| UpdateTableInput {
        billing_mode_pay_per_request: Some(false),
        throughput: Some((10, 10)),
        index_updates: Some(updates),
        ..UpdateTableInput::new("sw")
    };
    let EngineError::Validation(message) =
        engine.update_table(switch(vec![gsi_update(None, Some((None, Some(5_000))))]), T0).unwrap_err()
    else {
        panic!("a warm throughput alone does not give the GSI units")
    };
    assert_eq!(
        message,
        "One or more parameter values were invalid: ProvisionedThroughput must be specified for index: by_g"
    );
    engine.update_table(switch(vec![gsi_update(Some((10, 20_000)), None)]), T0).unwrap();
    let gsi = |e: &Engine| e.describe_table("sw", T0).unwrap().indexes.into_iter().next().unwrap();
    assert_eq!(gsi(&engine).def.throughput, Some((10, 20_000)));
    let back = UpdateTableInput { billing_mode_pay_per_request: Some(true), ..UpdateTableInput::new("sw") };
    engine.update_table(back, Millis(T0.0 + 1)).unwrap();
    for e in [&engine, &Engine::open(EngineConfig::local(), storage, Millis(0)).unwrap()] {
        let g = gsi(e);
        assert_eq!((g.def.throughput, g.def.warm), (None, Some((10, 20_000))));
        assert_eq!(index_warm_shown(&g.def, g.warm_throughput), (12_000, 20_000));
        let (_, model_write) = g.warm_throughput.unwrap();
        assert!(model_write >= 20_000.0, "the on-demand model takes the kept units at once: {model_write}");
    }
}

/// A stream's label (and so its ARN) is new even when the stream is
/// enabled in the same millisecond as one before it: a table deleted and
/// re-created at once, or a stream turned off and on again.
#[test]
fn streams_enabled_in_the_same_millisecond_get_labels_of_their_own() {
    let engine = Engine::new(EngineConfig::local());
    let at = Millis(5_000);
    create_streamed(&engine, "same");
    engine.delete_table("same", at).unwrap();
    create_streamed(&engine, "same");
    let flip = |enable: bool| UpdateTableInput {
        stream: Some((enable, enable.then_some(dynaburst_engine::stream::StreamViewType::KeysOnly))),
        ..UpdateTableInput::new("same")
    };
    engine.update_table(flip(false), Millis(0)).unwrap();
    engine.update_table(flip(true), Millis(0)).unwrap();
    let mut arns = Vec::new();
    let mut start: Option<String> = None;
    for _ in 0..10 {
        let (page, next) = engine.list_streams(Some("same"), 1, start.as_deref(), at).unwrap();
        arns.extend(page.into_iter().map(|s| s.arn));
        match next {
            Some(n) => start = Some(n),
            None => break,
        }
    }
    assert_eq!(arns.len(), 3, "{arns:?}");
    let labels: std::collections::BTreeSet<&str> = arns.iter().map(|a| a.rsplit('/').next().unwrap()).collect();
    assert_eq!(
        labels.into_iter().collect::<Vec<_>>(),
        ["1970-01-01T00:00:00.000", "1970-01-01T00:00:00.001", "1970-01-01T00:00:00.002"]
    );
}

/// Provisioned-throughput decreases: four a UTC day, then one an hour after
/// the last accepted one, counted again from 00:00 UTC, with DynamoDB's
/// text; increases are never limited (ack-api-quirks DDB-TABLE-184, -326).
#[test]
fn decreases_are_limited_per_utc_day_as_dynamodb_limits_them() {
    let engine = Engine::new(EngineConfig::local());
    let day = dynaburst_model::time::days_from_civil(2026, 10, 9) as u64 * 86_400_000;
    let at = |h: u64, m: u64, s: u64| Millis(day + ((h * 60 + m) * 60 + s) * 1000);
    create(&engine, "dec", BillingMode::Provisioned { read: 10, write: 10 });
    let set = |read: u64, write: u64, now: Millis| {
        engine.update_table(UpdateTableInput { throughput: Some((read, write)), ..UpdateTableInput::new("dec") }, now)
    };
    for (i, read) in [9, 8, 7, 6].into_iter().enumerate() {
        set(read, 10, at(0, 20, i as u64)).unwrap();
    }
    let last = at(0, 20, 3);
    let refused = |r: Result<TableDescription, EngineError>| match r {
        Err(EngineError::LimitExceeded(m)) => m,
        other => panic!("expected LimitExceeded, got {other:?}"),
    };
    let text = |n: u64, last: &str, next: &str| {
        format!("Subscriber limit exceeded: Provisioned throughput decreases are limited within a given UTC day. After the first 4 decreases, each subsequent decrease in the same UTC day can be performed at most once every 3600 seconds. Number of decreases today: {n}. Last decrease at Friday, October 9, 2026 at {last} Coordinated Universal Time. Next decrease can be made at Friday, October 9, 2026 at {next} Coordinated Universal Time.")
    };
    assert_eq!(refused(set(5, 10, at(0, 21, 34))), text(4, "12:20:03 AM", "1:20:03 AM"));
    // A mixed request that lowers one side is a decrease; raising is never limited.
    assert_eq!(refused(set(5, 11, at(0, 30, 0))), text(4, "12:20:03 AM", "1:20:03 AM"));
    set(7, 11, at(0, 40, 0)).unwrap();
    assert_eq!(refused(set(6, 11, Millis(last.0 + 3_599_999))), text(4, "12:20:03 AM", "1:20:03 AM"));
    set(6, 11, Millis(last.0 + 3_600_000)).unwrap();
    assert_eq!(engine.describe_table("dec", at(1, 20, 4)).unwrap().settings.changes.decreases_today, 5);
    assert_eq!(refused(set(5, 11, at(1, 20, 5))), text(5, "1:20:03 AM", "2:20:03 AM"));
    // A new UTC day starts the count again.
    let tomorrow = Millis(day + 86_400_000);
    assert_eq!(engine.describe_table("dec", tomorrow).unwrap().settings.changes.decreases_today, 0);
    set(5, 11, tomorrow).unwrap();
    assert_eq!(engine.describe_table("dec", tomorrow).unwrap().settings.changes.decreases_today, 1);
}

/// Creates PROVISIONED table `name` (`units` read and write) keyed by pk,
/// with GSI `gsi1` on g (S) provisioned at `gsi_units`, at time 0.
fn create_with_gsi1(engine: &Engine, name: &str, units: u64, gsi_units: u64) {
    let spec = IndexSpec {
        name: "gsi1".into(),
        key_schema: vec![("g".into(), KeyRole::Hash)],
        projection_type: Some(ProjectionType::All),
        non_key_attributes: None,
        throughput: Some((gsi_units, gsi_units)),
        on_demand: None,
        warm: None,
    };
    let input = CreateTableInput {
        global_indexes: Some(vec![spec]),
        ..CreateTableInput::new(
            name,
            vec![("pk".into(), KeyRole::Hash)],
            vec![("pk".into(), ScalarType::S), ("g".into(), ScalarType::S)],
            BillingMode::Provisioned { read: units, write: units },
        )
    };
    engine.create_table(input, Millis(0)).unwrap();
}

/// A GSI's provisioned-throughput decreases have a budget of their own,
/// apart from its table's, with the same rules and text; a request that
/// lowers both is refused whole when either budget is spent, and changes
/// nothing (ack-api-quirks DDB-TABLE-157).
#[test]
fn a_gsis_decreases_are_counted_apart_from_its_tables() {
    let engine = Engine::new(EngineConfig::local());
    let day = dynaburst_model::time::days_from_civil(2026, 10, 8) as u64 * 86_400_000;
    let at = |h: u64, m: u64, s: u64| Millis(day + ((h * 60 + m) * 60 + s) * 1000);
    create_with_gsi1(&engine, "budgets", 50, 50);
    let update = |table: Option<(u64, u64)>, gsi: Option<(u64, u64)>, now: Millis| {
        let updates = gsi.map(|t| {
            vec![IndexUpdate::Update { name: "gsi1".into(), throughput: Some(t), on_demand: None, warm: None }]
        });
        engine.update_table(
            UpdateTableInput { throughput: table, index_updates: updates, ..UpdateTableInput::new("budgets") },
            now,
        )
    };
    let gsi = |now: Millis| engine.describe_table("budgets", now).unwrap().indexes.remove(0).def;
    // Four table decreases (one lowering reads while raising writes): the
    // GSI's count stays at 0.
    for (i, t) in [(40, 40), (30, 60), (20, 20), (10, 10)].into_iter().enumerate() {
        update(Some(t), None, at(1, 0, i as u64)).unwrap();
    }
    let described = engine.describe_table("budgets", at(1, 0, 5)).unwrap();
    assert_eq!(described.settings.changes.decreases_today, 4);
    assert_eq!(gsi(at(1, 0, 5)).changes, ThroughputChanges::default());
    // A fifth that lowers the table and the GSI: refused whole.
    let text = |n: u64, last: &str, next: &str| {
        format!("Subscriber limit exceeded: Provisioned throughput decreases are limited within a given UTC day. After the first 4 decreases, each subsequent decrease in the same UTC day can be performed at most once every 3600 seconds. Number of decreases today: {n}. Last decrease at Thursday, October 8, 2026 at {last} Coordinated Universal Time. Next decrease can be made at Thursday, October 8, 2026 at {next} Coordinated Universal Time.")
    };
    match update(Some((5, 5)), Some((40, 40)), at(1, 0, 6)) {
        Err(EngineError::LimitExceeded(m)) => assert_eq!(m, text(4, "1:00:03 AM", "2:00:03 AM")),
        other => panic!("expected LimitExceeded, got {other:?}"),
    }
    let after = gsi(at(1, 0, 7));
    assert_eq!((after.throughput, after.changes), (Some((50, 50)), ThroughputChanges::default()));
    let table = engine.describe_table("budgets", at(1, 0, 7)).unwrap().settings;
    assert_eq!((table.billing, table.changes.decreases_today), (BillingMode::Provisioned { read: 10, write: 10 }, 4));
    // The GSI alone: four decreases, then its own fifth is refused.
    for (i, t) in [(40, 40), (30, 30), (20, 20), (10, 10)].into_iter().enumerate() {
        update(None, Some(t), at(2, 0, i as u64)).unwrap();
        assert_eq!(gsi(at(2, 0, 10)).changes.decreases_today, i as u64 + 1);
    }
    assert_eq!(
        gsi(at(2, 0, 10)).changes,
        ThroughputChanges { last_increase: None, last_decrease: Some(at(2, 0, 3)), decreases_today: 4 }
    );
    match update(None, Some((5, 5)), at(2, 0, 11)) {
        Err(EngineError::LimitExceeded(m)) => assert_eq!(m, text(4, "2:00:03 AM", "3:00:03 AM")),
        other => panic!("expected LimitExceeded, got {other:?}"),
    }
    // Raising is never limited, and is shown.
    update(None, Some((20, 20)), at(2, 30, 0)).unwrap();
    assert_eq!(gsi(at(2, 30, 1)).changes.last_increase, Some(at(2, 30, 0)));
    assert_eq!(engine.describe_table("budgets", at(2, 30, 1)).unwrap().settings.changes.decreases_today, 4);
    // A new UTC day: both counts start again.
    let tomorrow = Millis(day + 86_400_000);
    assert_eq!(gsi(tomorrow).changes.decreases_today, 0);
    update(None, Some((10, 10)), tomorrow).unwrap();
    assert_eq!(gsi(tomorrow).changes.decreases_today, 1);
    // The GSI's budget spent, the table's not: a request lowering both is
    // refused whole, the table's units and count as they were.
    for (i, units) in [9, 8, 7].into_iter().enumerate() {
        update(None, Some((units, units)), Millis(tomorrow.0 + 1000 * (i as u64 + 1))).unwrap();
    }
    let late = Millis(tomorrow.0 + 10_000);
    match update(Some((5, 5)), Some((6, 6)), late) {
        Err(EngineError::LimitExceeded(m)) => assert!(m.contains("Number of decreases today: 4."), "{m}"),
        other => panic!("expected LimitExceeded, got {other:?}"),
    }
    let table = engine.describe_table("budgets", late).unwrap().settings;
    assert_eq!((table.billing, table.changes.decreases_today), (BillingMode::Provisioned { read: 10, write: 10 }, 0));
    assert_eq!(gsi(late).throughput, Some((7, 7)));
}

/// UpdateTable is all or nothing when the catalog save fails, whichever
/// save of the request it is: a request that lowers the table and its GSI
/// either changes both (units and day's counts) or neither.
#[test]
fn a_failed_catalog_save_leaves_update_table_unapplied() {
    let input = UpdateTableInput {
        throughput: Some((40, 40)),
        index_updates: Some(vec![IndexUpdate::Update {
            name: "gsi1".into(),
            throughput: Some((30, 30)),
            on_demand: None,
            warm: None,
        }]),
        ..UpdateTableInput::new("atomic")
    };
    let shown = |engine: &Engine| {
        let d = engine.describe_table("atomic", Millis(10)).unwrap();
        let gsi = &d.indexes[0].def;
        (d.settings.billing, d.settings.changes.decreases_today, gsi.throughput, gsi.changes.decreases_today)
    };
    let before = (BillingMode::Provisioned { read: 50, write: 50 }, 0, Some((50, 50)), 0);
    let after = (BillingMode::Provisioned { read: 40, write: 40 }, 1, Some((30, 30)), 1);
    for passes in 0..3 {
        let storage = Arc::new(FaultyStorage::new());
        let engine = Engine::open(EngineConfig::local(), storage.clone(), Millis(0)).unwrap();
        create_with_gsi1(&engine, "atomic", 50, 50);
        storage.faults().fail_save_after(passes);
        let result = engine.update_table(input.clone(), Millis(10));
        storage.faults().disarm_saves();
        // The request makes one save: only the first fails it.
        assert_eq!(result.is_err(), passes == 0, "{result:?}");
        match result {
            Ok(_) => assert_eq!(shown(&engine), after, "the save after {passes} passed"),
            Err(e) => {
                assert!(matches!(e, EngineError::Internal(_)), "{e:?}");
                assert_eq!(shown(&engine), before, "a failed save after {passes} applied part of the request");
            }
        }
    }
}

/// A stream change is saved with the rest of its UpdateTable, in one
/// catalog save: when that save fails, neither the switch to
/// PAY_PER_REQUEST, nor the GSI's change, nor the stream is applied, and
/// the capacity model stays as it was; when it passes, all are, and
/// the stream's change records are open.
#[test]
fn a_stream_change_is_saved_with_the_rest_of_update_table() {
    for (with_gsi, fail) in [(false, true), (true, true), (false, false), (true, false)] {
        let storage = Arc::new(FaultyStorage::new());
        let engine = Engine::open(EngineConfig::local(), storage.clone(), Millis(0)).unwrap();
        if with_gsi {
            create_with_gsi1(&engine, "follow", 1, 1);
        } else {
            create(&engine, "follow", BillingMode::Provisioned { read: 1, write: 1 });
        }
        let (_, write_before) = engine.describe_table("follow", Millis(5)).unwrap().warm_throughput.unwrap();
        // Failing: the request's first save fails (the old code, whose
        // first save held the settings, applied nothing then either).
        // Passing: its first save passes and a second one would fail (the
        // old code's stream save).
        storage.faults().fail_save_after(usize::from(!fail));
        let input = UpdateTableInput {
            billing_mode_pay_per_request: Some(true),
            stream: Some((true, Some(dynaburst_engine::stream::StreamViewType::NewImage))),
            index_updates: with_gsi.then(|| {
                vec![IndexUpdate::Update {
                    name: "gsi1".into(),
                    throughput: None,
                    on_demand: Some((Some(100), None)),
                    warm: None,
                }]
            }),
            ..UpdateTableInput::new("follow")
        };
        let result = engine.update_table(input, Millis(10));
        if !fail {
            // One save: the failure armed for a second is still armed.
            let probe = engine.tag_resource(
                "arn:aws:dynamodb:us-east-1:000000000000:table/follow",
                &[("k".to_string(), "v".to_string())],
            );
            assert!(
                matches!(probe, Err(EngineError::Internal(_))),
                "with GSI {with_gsi}: the request made more than one save: {probe:?}"
            );
        }
        storage.faults().disarm_saves();
        let d = engine.describe_table("follow", Millis(20)).unwrap();
        let streams = engine.list_streams(Some("follow"), 10, None, Millis(20)).unwrap().0;
        let (_, write) = d.warm_throughput.expect("the capacity model is on");
        if fail {
            assert!(matches!(result, Err(EngineError::Internal(_))), "with GSI {with_gsi}: {result:?}");
            assert_eq!(d.settings.billing, BillingMode::Provisioned { read: 1, write: 1 }, "with GSI {with_gsi}");
            assert_eq!(d.settings.stream, None, "with GSI {with_gsi}");
            assert!(streams.is_empty(), "with GSI {with_gsi}: {streams:?}");
            assert_eq!(write, write_before, "with GSI {with_gsi}: the model follows a change that was not saved");
            if with_gsi {
                assert_eq!(d.indexes[0].def.throughput, Some((1, 1)));
            }
        } else {
            assert!(result.is_ok(), "with GSI {with_gsi}: {result:?}");
            assert_eq!(d.settings.billing, BillingMode::PayPerRequest, "with GSI {with_gsi}");
            let stream = d.settings.stream.clone().expect("the stream is on");
            assert!(stream.enabled, "with GSI {with_gsi}");
            assert_eq!(streams.len(), 1, "with GSI {with_gsi}: {streams:?}");
            assert_eq!(streams[0].label, stream.label);
            // The stream starts on the partitions the table has after the
            // switch (an on-demand table's four), not on the provisioned
            // table's one, split at once.
            let shards = engine.describe_stream(&streams[0].arn, 100, None, None, Millis(20)).unwrap().shards;
            assert_eq!(shards.len(), 4, "with GSI {with_gsi}: {shards:?}");
            assert!(
                shards.iter().all(|s| s.parent.is_none() && s.ending_sequence.is_none()),
                "with GSI {with_gsi}: {shards:?}"
            );
            assert!(write >= 4000.0, "with GSI {with_gsi}: the model serves {write} WCU, it did not follow the switch");
            if with_gsi {
                assert_eq!(d.indexes[0].def.throughput, None);
            }
        }
        // What a restart reads is what the engine shows.
        let stored = storage.list_tables().unwrap();
        let meta = stored.iter().find(|m| m.name == "follow").unwrap();
        assert_eq!(meta.settings.stream, d.settings.stream, "with GSI {with_gsi}, fail {fail}");
        assert_eq!(meta.settings.billing, d.settings.billing, "with GSI {with_gsi}, fail {fail}");
    }
}

/// CreateTable with a StreamSpecification writes the table and its stream
/// in one catalog record (no second save a failure or a crash could cut
/// off): a save armed to fail stays armed, the stored table has the stream,
/// and a reopened engine serves the same stream.
#[test]
fn create_table_records_its_stream_with_the_table() {
    let storage = Arc::new(FaultyStorage::new());
    let engine = Engine::open(EngineConfig::local(), storage.clone(), Millis(0)).unwrap();
    storage.faults().fail_save_after(0);
    let input = CreateTableInput {
        stream: Some((true, Some(dynaburst_engine::stream::StreamViewType::KeysOnly))),
        ..CreateTableInput::new(
            "streamed",
            vec![("pk".into(), KeyRole::Hash)],
            vec![("pk".into(), ScalarType::S)],
            BillingMode::PayPerRequest,
        )
    };
    engine.create_table(input, Millis(5)).unwrap();
    let probe = engine
        .tag_resource("arn:aws:dynamodb:us-east-1:000000000000:table/streamed", &[("k".to_string(), "v".to_string())]);
    storage.faults().disarm_saves();
    assert!(matches!(probe, Err(EngineError::Internal(_))), "CreateTable used the save armed to fail: {probe:?}");
    let shown = engine.describe_table("streamed", Millis(7)).unwrap().settings.stream.expect("a stream");
    let stored = storage.list_tables().unwrap();
    assert_eq!(stored[0].settings.stream.as_ref(), Some(&shown));
    assert!(shown.enabled);
    assert_eq!(shown.view, dynaburst_engine::stream::StreamViewType::KeysOnly);
    let streams = engine.list_streams(Some("streamed"), 10, None, Millis(7)).unwrap().0;
    assert_eq!(streams.iter().map(|s| s.label.as_str()).collect::<Vec<_>>(), [shown.label.as_str()]);
    drop(engine);
    let reopened = Engine::open(EngineConfig::local(), storage, Millis(8)).unwrap();
    let streams = reopened.list_streams(Some("streamed"), 10, None, Millis(9)).unwrap().0;
    assert_eq!(streams.iter().map(|s| s.label.as_str()).collect::<Vec<_>>(), [shown.label.as_str()]);
}
