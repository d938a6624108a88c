//! On-demand backups in the engine: a backup is one consistent snapshot
//! even while writers run (every batch lands in it whole or not at all),
//! larger than one copy batch; a restore brings back the items, counts and
//! index entries; and backups survive reopening the storage, where a
//! backup a crash left half copied is dropped.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use dynaburst_engine::backup::{
    Backup, BackupKind, BackupStatus, ListBackupsInput, RestoreInput, SNAPSHOT_BATCH_ITEMS,
};
use dynaburst_engine::store::{MemStorage, Storage};
use dynaburst_engine::*;
use dynaburst_model::{AttributeValue, Item, Number, ScalarType};

/// Items rewritten together by every batch of the writer.
const GROUP: usize = 20;
/// Items no one touches, so that a snapshot spans several copy batches.
const FILLER: usize = 2 * SNAPSHOT_BATCH_ITEMS + 17;

fn config() -> EngineConfig {
    EngineConfig { capacity: None, ..EngineConfig::local() }
}

fn create(engine: &Engine, name: &str) {
    let mut input = CreateTableInput::new(
        name,
        vec![("pk".into(), KeyRole::Hash)],
        vec![("pk".into(), ScalarType::S), ("g".into(), ScalarType::N)],
        BillingMode::PayPerRequest,
    );
    let keys_only = Some(ProjectionType::KeysOnly);
    let gsi_key = vec![("g".into(), KeyRole::Hash)];
    input.global_indexes = Some(vec![IndexSpec {
        name: "by-g".into(),
        key_schema: gsi_key,
        projection_type: keys_only,
        non_key_attributes: None,
        throughput: None,
        on_demand: None,
        warm: None,
    }]);
    engine.create_table(input, Millis(0)).unwrap();
}

fn item(pk: &str, generation: u64) -> Item {
    Item::from([
        ("pk".to_string(), AttributeValue::S(pk.to_string())),
        ("g".to_string(), AttributeValue::N(Number::parse(&generation.to_string()).unwrap())),
    ])
}

/// One BatchWriteItem of `items` into table t, every item admitted.
fn batch_put(engine: &Engine, items: impl Iterator<Item = Item>, now: Millis) {
    let requests = items.map(WriteRequest::Put).collect();
    let input = BatchWriteInput {
        requests: vec![("t".to_string(), requests)],
        return_capacity: ReturnCapacity::None,
        return_item_collection_metrics: false,
    };
    assert!(engine.batch_write_item(input, now).unwrap().unprocessed.is_empty());
}

/// One atomic batch: every group item at `generation`.
fn write_group(engine: &Engine, generation: u64, now: Millis) {
    batch_put(engine, (0..GROUP).map(|i| item(&format!("group-{i}"), generation)), now);
}

fn fill(engine: &Engine) {
    for chunk in (0..FILLER).collect::<Vec<_>>().chunks(25) {
        batch_put(engine, chunk.iter().map(|i| item(&format!("filler-{i}"), 0)), Millis(1));
    }
}

/// An engine over `storage` with table t filled.
fn filled_on(storage: &Arc<MemStorage>) -> Engine {
    let engine = Engine::open(config(), storage.clone(), Millis(0)).unwrap();
    create(&engine, "t");
    fill(&engine);
    engine
}

/// Sets tag `key` of a hidden catalog entry to `value`.
fn set_tag(meta: &mut dynaburst_engine::store::TableMeta, key: &str, value: String) {
    if let Some((_, v)) = meta.tags.iter_mut().find(|(k, _)| k == key) {
        *v = value;
    }
}

fn scan(engine: &Engine, table: &str) -> Vec<Item> {
    let mut items = Vec::new();
    let mut input = ReadInput::scan(table);
    loop {
        let out = engine.read(input.clone(), Millis(10_000)).unwrap();
        items.extend(out.items);
        match out.last_evaluated_key {
            Some(k) => input.exclusive_start_key = Some(k),
            None => return items,
        }
    }
}

fn generation(item: &Item) -> u64 {
    match item.get("g") {
        Some(AttributeValue::N(n)) => n.to_string().parse().unwrap(),
        other => panic!("no generation: {other:?}"),
    }
}

fn restore(engine: &Engine, arn: &str, target: &str, now: Millis) {
    engine
        .restore_table_from_backup(
            RestoreInput { target_table_name: target.into(), backup_arn: arn.into(), ..RestoreInput::default() },
            now,
        )
        .unwrap();
}

#[test]
fn backups_taken_while_a_writer_runs_are_consistent_snapshots() {
    let engine = Arc::new(Engine::new(config()));
    create(&engine, "t");
    fill(&engine);
    write_group(&engine, 0, Millis(1));
    let stop = Arc::new(AtomicBool::new(false));
    // The writer tells of each group it has written.
    let (written_tx, groups) = std::sync::mpsc::channel::<u64>();
    let writer = {
        let (engine, stop) = (engine.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut generation = 1;
            // Bounded: the backups below stop it long before.
            while !stop.load(Ordering::Relaxed) && generation < 1_000_000 {
                write_group(&engine, generation, Millis(2));
                let _ = written_tx.send(generation);
                generation += 1;
            }
            generation
        })
    };
    let mut arns = Vec::new();
    for i in 0..4u64 {
        // Each backup starts once the writer has written another group
        // since the one before (on a busy machine it may not have run at
        // all yet): the backups interleave with its writes.
        while groups.try_recv().is_ok() {}
        groups.recv().unwrap_or_else(|_| panic!("the writer wrote no group before backup {i}"));
        let backup = engine.create_backup("t", &format!("b{i}"), Millis(100 + i)).unwrap();
        assert_eq!(backup.status, BackupStatus::Available);
        assert_eq!(backup.item_count, (FILLER + GROUP) as u64);
        arns.push(backup.arn);
    }
    stop.store(true, Ordering::Relaxed);
    let written = writer.join().unwrap();
    assert!(written > 1);
    let mut seen = Vec::new();
    for (i, arn) in arns.iter().enumerate() {
        let target = format!("r{i}");
        restore(&engine, arn, &target, Millis(1_000));
        let items = scan(&engine, &target);
        assert_eq!(items.len(), FILLER + GROUP);
        let group: Vec<u64> = items
            .iter()
            .filter(|i| matches!(i.get("pk"), Some(AttributeValue::S(s)) if s.starts_with("group-")))
            .map(generation)
            .collect();
        assert_eq!(group.len(), GROUP);
        // Every group item at one generation: no batch was half copied.
        assert!(group.iter().all(|g| *g == group[0]), "backup {i} mixes generations: {group:?}");
        seen.push(group[0]);
        let d = engine.describe_table(&target, Millis(1_000)).unwrap();
        assert_eq!(d.item_count, (FILLER + GROUP) as u64);
        assert_eq!(d.indexes[0].item_count, (FILLER + GROUP) as u64);
        let restored = engine.restore_summary(&engine.get_table(&target).unwrap());
        assert_eq!(restored.as_ref().map(|r| r.source_backup_arn.as_str()), Some(arn.as_str()));
    }
    // Later backups never see older generations.
    assert!(seen.windows(2).all(|w| w[0] <= w[1]), "{seen:?}");
}

#[test]
fn backups_survive_reopening_and_a_half_copied_one_is_dropped() {
    let storage: Arc<MemStorage> = Arc::new(MemStorage::new());
    let engine = filled_on(&storage);
    let kept = engine.create_backup("t", "kept", Millis(5)).unwrap();
    engine.update_continuous_backups("t", true, Some(3), Millis(6)).unwrap();
    // What a crash in the middle of CreateBackup leaves: a catalog entry
    // still CREATING.
    let creating = storage
        .list_tables()
        .unwrap()
        .into_iter()
        .find(|m| m.name.starts_with("#backup/"))
        .map(|m| {
            let mut m = m;
            m.name = "#backup/t/00000000000007-deadbeef".into();
            set_tag(&mut m, "backup:status", "CREATING".into());
            set_tag(&mut m, "backup:arn", format!("{}x", kept.arn));
            m
        })
        .unwrap();
    storage.create_table(&creating).unwrap();
    drop(engine);
    let engine = Engine::open(config(), storage.clone(), Millis(50)).unwrap();
    assert!(!storage.list_tables().unwrap().iter().any(|m| m.name == creating.name));
    let page = engine
        .list_backups(&ListBackupsInput { user: true, system: false, limit: 100, ..ListBackupsInput::default() })
        .unwrap();
    assert_eq!(page.backups, vec![kept.clone()]);
    let pitr = engine.describe_continuous_backups("t", Millis(60)).unwrap().pitr.unwrap();
    assert_eq!((pitr.enabled_at, pitr.recovery_period_days), (Millis(6), 3));
    // Hidden entries are not tables.
    assert_eq!(engine.list_tables(ListTablesInput { exclusive_start: None, limit: 100 }).names, ["t"]);
    restore(&engine, &kept.arn, "again", Millis(70));
    assert_eq!(scan(&engine, "again").len(), FILLER);
    assert_eq!(engine.describe_table("again", Millis(70)).unwrap().indexes[0].item_count, FILLER as u64);
    // Deleting the table keeps its backups and forgets its setting.
    engine.delete_table("t", Millis(80)).unwrap();
    assert_eq!(engine.describe_backup(&kept.arn).unwrap().item_count, FILLER as u64);
    assert!(!storage.list_tables().unwrap().iter().any(|m| m.name.starts_with("#pitr/")));
    let deleted = engine.delete_backup(&kept.arn).unwrap();
    assert_eq!(deleted.status, BackupStatus::Deleted);
    assert!(
        matches!(engine.describe_backup(&kept.arn), Err(EngineError::BackupNotFound(m)) if m == format!("Backup not found: {}", kept.arn))
    );
}

#[test]
fn a_table_whose_restore_a_crash_cut_short_is_dropped_on_reopening() {
    let storage: Arc<MemStorage> = Arc::new(MemStorage::new());
    let engine = filled_on(&storage);
    let backup = engine.create_backup("t", "b", Millis(5)).unwrap();
    restore(&engine, &backup.arn, "done", Millis(6));
    restore(&engine, &backup.arn, "cut", Millis(7));
    // What a crash while "cut" was being written leaves: its note still
    // says the items are not all there.
    let mut note = storage.list_tables().unwrap().into_iter().find(|m| m.name == "#restored/cut").unwrap();
    set_tag(&mut note, "restore:done", "false".into());
    storage.drop_table(&note.name).unwrap();
    storage.create_table(&note).unwrap();
    drop(engine);
    let engine = Engine::open(config(), storage.clone(), Millis(50)).unwrap();
    assert_eq!(engine.list_tables(ListTablesInput { exclusive_start: None, limit: 100 }).names, ["done", "t"]);
    assert!(!storage.list_tables().unwrap().iter().any(|m| m.name.ends_with("cut")));
    let done = engine.describe_table("done", Millis(50)).unwrap();
    assert_eq!(done.item_count, FILLER as u64);
    // DescribeTable no longer shows it (DynamoDB shows it only while
    // CREATING), but what the restore recorded survives the reopening.
    assert!(done.restore.is_none());
    let table = engine.get_table("done").unwrap();
    assert!(engine.restore_summary(&table).is_some_and(|r| !r.in_progress && r.source_backup_arn == backup.arn));
}

/// An in-memory engine with table t filled, under a memory budget of
/// `limit` bytes.
fn filled_within(limit: u64) -> (Engine, Arc<MemoryBudget>) {
    let budget = Arc::new(MemoryBudget::new(limit));
    let engine = Engine::new(EngineConfig { memory: Some(budget.clone()), ..config() });
    create(&engine, "t");
    fill(&engine);
    (engine, budget)
}

#[test]
fn in_memory_backups_take_their_share_of_the_memory_budget() {
    let (engine, budget) = filled_within(u64::MAX / 2);
    let tables = budget.used();
    let backup = engine.create_backup("t", "b", Millis(5)).unwrap();
    let held = backup.size_bytes + backup.item_count * STORED_ITEM_OVERHEAD_BYTES;
    assert_eq!(budget.used(), tables + held);
    engine.delete_backup(&backup.arn).unwrap();
    assert_eq!(budget.used(), tables);
    // A snapshot past the budget is refused, and takes nothing.
    let (engine, tight) = filled_within(tables + held - 1);
    let used = tight.used();
    assert!(matches!(engine.create_backup("t", "b", Millis(5)), Err(EngineError::LimitExceeded(_))));
    assert_eq!(tight.used(), used);
    let page = engine
        .list_backups(&ListBackupsInput { user: true, system: false, limit: 100, ..ListBackupsInput::default() })
        .unwrap();
    assert!(page.backups.is_empty());
}

#[test]
fn deleting_a_table_with_point_in_time_recovery_keeps_one_system_backup_whatever_the_budget() {
    // A budget the table fills: a USER backup could not be taken.
    let (_, probe) = filled_within(u64::MAX / 2);
    let (engine, tight) = filled_within(probe.used() + 1);
    let table_share = tight.used();
    assert!(matches!(engine.create_backup("t", "b", Millis(5)), Err(EngineError::LimitExceeded(_))));
    engine.update_continuous_backups("t", true, None, Millis(6)).unwrap();
    // The SYSTEM backup is charged without a check; the table gives its
    // share back: the budget holds the copy instead of the table.
    engine.delete_table("t", Millis(7)).unwrap();
    let all = ListBackupsInput { user: true, system: true, limit: 100, ..ListBackupsInput::default() };
    let page = engine.list_backups(&all).unwrap();
    assert_eq!(page.backups.len(), 1);
    let system = &page.backups[0];
    assert_eq!((system.name.as_str(), system.kind), ("t$DeletedTableBackup", BackupKind::System));
    assert_eq!(system.item_count, FILLER as u64);
    assert_eq!(system.expires_at(), Some(Millis(system.created_at.0 + 35 * 24 * 60 * 60 * 1000)));
    assert_eq!(tight.used(), system.size_bytes + system.item_count * STORED_ITEM_OVERHEAD_BYTES);
    assert!(tight.used() <= table_share, "{} > {table_share}", tight.used());
    // Not the user's to delete; the expirer drops it at its expiry.
    let refused = engine.delete_backup(&system.arn).unwrap_err();
    assert!(
        refused.message().starts_with(&format!(
            "Invalid Request: User is not allowed to delete the system backup with arn {}. It will automatically expire on ",
            system.arn
        )),
        "{}",
        refused.message()
    );
    let expiry = system.expires_at().unwrap();
    engine.expire(Millis(expiry.0 - 1)).unwrap();
    assert_eq!(engine.list_backups(&all).unwrap().backups.len(), 1, "kept until its expiry");
    engine.expire(expiry).unwrap();
    assert!(engine.list_backups(&all).unwrap().backups.is_empty());
    assert_eq!(tight.used(), 0, "its share of the budget given back");
}

#[test]
fn a_repeated_delete_of_the_same_table_keeps_one_system_backup() {
    // A crash after the SYSTEM backup and before the drop leaves both; the
    // client, unanswered, deletes again. Here: a backup of the same table
    // id left by a DeleteTable whose drop failed, then a DeleteTable.
    let storage = Arc::new(MemStorage::new());
    let engine = filled_on(&storage);
    engine.update_continuous_backups("t", true, None, Millis(6)).unwrap();
    let table = engine.get_table("t").unwrap();
    let left = engine.deleted_table_backup(&table, Millis(7)).unwrap().expect("point-in-time recovery is on");
    engine.delete_table("t", Millis(8)).unwrap();
    let all = ListBackupsInput { user: true, system: true, limit: 100, ..ListBackupsInput::default() };
    let page = engine.list_backups(&all).unwrap();
    assert_eq!(page.backups.len(), 1, "{:?}", page.backups.iter().map(|b| &b.arn).collect::<Vec<_>>());
    assert_ne!(page.backups[0].arn, left.arn, "the later one stays");
    assert!(engine.describe_backup(&left.arn).is_err());
}

#[test]
fn backups_made_in_one_millisecond_list_in_the_order_they_were_made() {
    let engine = Engine::new(config());
    create(&engine, "t");
    let made: Vec<Backup> = (0..5).map(|i| engine.create_backup("t", &format!("b{i}"), Millis(7)).unwrap()).collect();
    let times: Vec<u64> = made.iter().map(|b| b.created_at.0).collect();
    assert_eq!(times, [7, 8, 9, 10, 11]);
    assert!(made.iter().all(|b| b.arn.contains(&format!("/backup/{:014}-", b.created_at.0))));
    let page = engine
        .list_backups(&ListBackupsInput { user: true, system: false, limit: 2, ..ListBackupsInput::default() })
        .unwrap();
    assert_eq!(page.backups, made[..2]);
    assert_eq!(page.last_evaluated.as_deref(), Some(made[1].arn.as_str()));
}

/// RestoreTableToPointInTime in modelled time: the table as it was at the
/// time restored, from the point-in-time history kept since recovery came
/// on (or the engine opened), with DynamoDB's checks in its order
/// (ack-api-quirks DDB-TABLE-272, -100, -086, -087).
#[test]
fn a_point_in_time_restore_gives_the_table_as_it_was() {
    use dynaburst_engine::backup::{RestoreInput, RestorePoint, PITR_LAG_MS};
    use dynaburst_engine::{DeleteItemInput, PutItemInput, ReadInput, WriteOptions};
    let storage = std::sync::Arc::new(dynaburst_engine::store::MemStorage::new());
    let engine = Engine::open(EngineConfig::local(), storage.clone(), Millis(0)).unwrap();
    create(&engine, "src");
    let item = |pk: &str, v: &str| {
        let mut i = dynaburst_model::Item::new();
        i.insert("pk".into(), AttributeValue::S(pk.into()));
        i.insert("v".into(), AttributeValue::S(v.into()));
        i
    };
    let put = |pk: &str, v: &str, at: u64| {
        let input = PutItemInput { table_name: "src".into(), item: item(pk, v), options: WriteOptions::default() };
        engine.put_item(input, Millis(at)).unwrap();
    };
    put("a", "1", 1_000);
    put("b", "1", 1_000);
    let enabled = Millis(10_000);
    engine.update_continuous_backups("src", true, None, enabled).unwrap();
    put("c", "1", 20_000);
    let key = |pk: &str| {
        let mut k = dynaburst_model::Item::new();
        k.insert("pk".into(), AttributeValue::S(pk.into()));
        k
    };
    engine
        .delete_item(
            DeleteItemInput { table_name: "src".into(), key: key("a"), options: WriteOptions::default() },
            Millis(30_000),
        )
        .unwrap();
    put("b", "2", 40_000);
    let now = Millis(400_000);
    let c = engine.describe_continuous_backups("src", now).unwrap();
    assert_eq!(c.restorable, Some((enabled, Millis(now.0 - PITR_LAG_MS))));
    let target = |name: &str| RestoreInput {
        target_table_name: name.into(),
        backup_arn: String::new(),
        billing_override: None,
        throughput_override: None,
        global_index_override: None,
        local_index_override: None,
        on_demand_override: None,
        sse_override: None,
    };
    let restore =
        |name: &str, point| engine.restore_table_to_point_in_time(Some("src"), None, point, target(name), now);
    let contents = |name: &str| -> Vec<(String, String)> {
        let items = engine.read(ReadInput { consistent_read: true, ..ReadInput::scan(name) }, now).unwrap().items;
        let text = |i: &dynaburst_model::Item, k: &str| match i.get(k) {
            Some(AttributeValue::S(s)) => s.clone(),
            other => panic!("{other:?}"),
        };
        let mut out: Vec<(String, String)> = items.iter().map(|i| (text(i, "pk"), text(i, "v"))).collect();
        out.sort();
        out
    };
    let s = |a: &str, b: &str| (a.to_string(), b.to_string());
    let (description, summary) = restore("at-25", RestorePoint::At(Millis(25_000))).unwrap();
    assert_eq!(description.status, "CREATING");
    assert_eq!((summary.restored_at, summary.source_backup_arn.as_str()), (Millis(25_000), ""));
    assert_eq!(contents("at-25"), [s("a", "1"), s("b", "1"), s("c", "1")]);
    restore("at-35", RestorePoint::At(Millis(35_000))).unwrap();
    assert_eq!(contents("at-35"), [s("b", "1"), s("c", "1")]);
    restore("at-enable", RestorePoint::At(enabled)).unwrap();
    assert_eq!(contents("at-enable"), [s("a", "1"), s("b", "1")]);
    restore("latest", RestorePoint::Latest).unwrap();
    assert_eq!(contents("latest"), [s("b", "2"), s("c", "1")]);
    assert_eq!(engine.describe_table("latest", now).unwrap().item_count, 2);

    let refused = |r: Result<_, EngineError>| {
        format!("{:?}", r.map(|_: (dynaburst_engine::TableDescription, _)| ()).unwrap_err())
    };
    assert_eq!(
        refused(restore("early", RestorePoint::At(Millis(9_000)))),
        "InvalidRestoreTime(\"RestoreDateTime '1970-01-01T00:00:09Z' must be within EarliestRestorableDateTime '1970-01-01T00:00:10Z' and LatestRestorableDateTime '1970-01-01T00:01:40Z'\")"
    );
    assert_eq!(
        refused(restore("latest", RestorePoint::Latest)),
        "TableAlreadyExists(\"Table already exists: latest\")"
    );
    assert_eq!(
        refused(engine.restore_table_to_point_in_time(Some("nope"), None, RestorePoint::Latest, target("x"), now)),
        "TableNotFound(\"Table not found: nope\")"
    );
    assert_eq!(
        refused(engine.restore_table_to_point_in_time(Some("latest"), None, RestorePoint::Latest, target("x"), now)),
        "PointInTimeRecoveryUnavailable(\"Point in time recovery is not enabled for table 'latest'\")"
    );
    // After a restart the history starts again: nothing earlier is restorable.
    let reopened = Engine::open(EngineConfig::local(), storage, Millis(500_000)).unwrap();
    let c = reopened.describe_continuous_backups("src", Millis(900_000)).unwrap();
    assert_eq!(c.restorable, Some((Millis(500_000), Millis(600_000))));
}
