//! The key filter: a table that held no item when this process opened it
//! (or that it created) answers a read of a key never written to it
//! without reading the file, which is every write of a bulk load into a new
//! table (each write reads the item it replaces). Reads stay exact: the
//! filter never hides a key written, a table that held items at start-up
//! reads the file as before, and a filter over its memory bound is dropped.

mod common;

use std::path::PathBuf;
use std::sync::Arc;

use common::{key, meta};
use dynaburst_diskstore::{DiskOptions, DiskStorage};
use dynaburst_engine::store::{Mutation, Storage, TableStore, WriteBatch};
use dynaburst_model::{AttributeValue, Item, Number};

fn fresh_dir() -> PathBuf {
    common::fresh_dir("dynaburst-diskfilter")
}

fn item(sk: i64, v: i64) -> Arc<Item> {
    let mut item = Item::new();
    item.insert("pk".into(), AttributeValue::S("p".into()));
    item.insert("sk".into(), AttributeValue::N(Number::from_i64(sk)));
    item.insert("v".into(), AttributeValue::N(Number::from_i64(v)));
    Arc::new(item)
}

/// Puts `(sk, v)` in batches of 25; returns what each replaced.
fn put(disk: &DiskStorage, store: &mut Box<dyn TableStore>, items: &[(i64, i64)]) -> Vec<Option<Arc<Item>>> {
    let mut replaced = Vec::new();
    for chunk in items.chunks(25) {
        let mutations =
            chunk.iter().map(|&(sk, v)| Mutation { table: 0, key: key(sk), item: Some(item(sk, v)) }).collect();
        replaced.extend(
            disk.commit(WriteBatch { mutations, ..WriteBatch::default() }, &mut [&mut **store]).expect("commit"),
        );
    }
    replaced
}

#[test]
fn new_keys_of_a_new_table_are_written_and_read_without_reading_the_file() {
    let dir = fresh_dir();
    let disk = DiskStorage::open(&dir, &DiskOptions::default()).expect("open");
    let mut store = disk.create_table(&meta("t")).expect("create");
    let first: Vec<(i64, i64)> = (0..2_000).map(|sk| (sk, 1)).collect();
    assert!(put(&disk, &mut store, &first).iter().all(Option::is_none), "every key is new");
    assert_eq!(store.get(&key(5_000)).expect("get"), None);
    assert_eq!(disk.file_reads(), 0, "2,000 new keys and a missing one: no read of the file");
    assert!(disk.key_filter_bytes() > 0);
    // Once the file holds them (the overlay emptied), rewriting 10 of them
    // reads each replaced item from the file, and finds it.
    disk.wait_applied().expect("applied");
    assert_eq!(disk.overlay_bytes(), 0);
    let again: Vec<(i64, i64)> = (100..110).map(|sk| (sk, 2)).collect();
    let replaced = put(&disk, &mut store, &again);
    assert_eq!(replaced, (100..110).map(|sk| Some(item(sk, 1))).collect::<Vec<_>>());
    assert_eq!(disk.file_reads(), 10);
    assert_eq!(store.get(&key(1_999)).expect("get"), Some(item(1_999, 1)));
    assert_eq!(disk.file_reads(), 11);
    drop(store);
    drop(disk);

    // Reopened: the table holds items, so it has no filter and reads the
    // file for a new key too; a table that was created empty keeps one.
    let disk = DiskStorage::open(&dir, &DiskOptions::default()).expect("reopen");
    let mut store = disk.open_table("t").expect("t");
    assert_eq!(put(&disk, &mut store, &[(9_000, 1)]), [None]);
    assert_eq!(disk.file_reads(), 1, "a table with items at start-up reads the file");
    assert_eq!(store.get(&key(104)).expect("get"), Some(item(104, 2)));
    assert_eq!(disk.key_filter_bytes(), 0);
    let mut empty = disk.create_table(&meta("e")).expect("create e");
    drop(empty);
    drop(store);
    drop(disk);
    let disk = DiskStorage::open(&dir, &DiskOptions::default()).expect("reopen");
    empty = disk.open_table("e").expect("e");
    assert_eq!(put(&disk, &mut empty, &[(1, 1), (2, 1)]), [None, None]);
    assert_eq!(disk.file_reads(), 0, "a table empty at start-up has a filter");
    drop(empty);
    drop(disk);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_filter_over_its_bound_is_dropped_and_reads_go_to_the_file() {
    let dir = fresh_dir();
    // Room for the first segment (65,536 keys, 96 KiB), not the second.
    let options = DiskOptions { key_filter_bytes: 100 * 1024, ..DiskOptions::default() };
    let disk = DiskStorage::open(&dir, &options).expect("open");
    let mut store = disk.create_table(&meta("t")).expect("create");
    let first: Vec<(i64, i64)> = (0..65_536).map(|sk| (sk, 1)).collect();
    assert!(put(&disk, &mut store, &first).iter().all(Option::is_none));
    assert_eq!(disk.key_filter_bytes(), 96 * 1024);
    // A full segment says "maybe" for about 0.3% of keys never written, so
    // a few of these writes read the file (and found nothing).
    let reads = disk.file_reads();
    assert!(reads < 65_536 / 200, "{reads} reads of the file for 65,536 new keys");
    // The 65,537th key needs a second segment: over the bound, the filter
    // goes and its bytes come back.
    assert_eq!(put(&disk, &mut store, &[(65_536, 1)]), [None]);
    assert_eq!(disk.key_filter_bytes(), 0);
    assert_eq!(disk.file_reads(), reads, "that write's read came before its key");
    disk.wait_applied().expect("applied");
    assert_eq!(put(&disk, &mut store, &[(70_000, 1), (3, 2)]), [None, Some(item(3, 1))]);
    assert_eq!(disk.file_reads(), reads + 2, "without a filter every read goes to the file");
    for sk in [0, 65_535, 65_536, 70_000] {
        assert!(store.get(&key(sk)).expect("get").is_some(), "item {sk}");
    }
    drop(store);
    drop(disk);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Storage ids are never used twice, even when the file holds tables of
/// an id the catalog no longer names (a write that raced its table's
/// DeleteTable can leave its items behind): a new table must not find
/// them, and its filter must not hide them from its reads.
#[test]
fn a_new_table_never_gets_the_id_of_items_left_in_the_file() {
    let dir = fresh_dir();
    {
        let disk = DiskStorage::open(&dir, &DiskOptions::default()).expect("open");
        let mut kept = disk.create_table(&meta("kept")).expect("create kept");
        assert_eq!(kept.storage_id(), Some(1));
        put(&disk, &mut kept, &[(1, 1)]);
    }
    // Left behind under ids 2 and 3, which no table of the catalog has.
    {
        let db = fjall::Database::builder(dir.join(dynaburst_diskstore::DB_DIR)).open().expect("the database");
        for name in ["k2", "x3"] {
            let ks = db.keyspace(name, fjall::KeyspaceCreateOptions::default).expect("keyspace");
            ks.insert(&b"not an item"[..], &b"left behind"[..]).expect("row");
        }
        db.persist(fjall::PersistMode::SyncAll).expect("persist");
    }
    let disk = DiskStorage::open(&dir, &DiskOptions::default()).expect("reopen");
    let mut fresh = disk.create_table(&meta("fresh")).expect("create fresh");
    assert_eq!(fresh.storage_id(), Some(4), "past every id of a table in the file");
    let mut seen = 0;
    let all = (std::ops::Bound::Unbounded, std::ops::Bound::Unbounded);
    fresh
        .range(all, dynaburst_engine::store::Direction::Forward, &mut |_, _| {
            seen += 1;
            std::ops::ControlFlow::Continue(())
        })
        .expect("scan");
    assert_eq!(seen, 0, "a new table holds nothing");
    assert_eq!(put(&disk, &mut fresh, &[(7, 2)]), [None]);
    assert_eq!(fresh.get(&key(7)).expect("get"), Some(item(7, 2)));
    drop(fresh);
    drop(disk);
    let _ = std::fs::remove_dir_all(&dir);
}
