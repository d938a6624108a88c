//! The applier's bookkeeping: the counts it keeps beside the items
//! (ItemCount, TableSizeBytes, each index's size ranges) from its own copy
//! of their rows, the overlay it prunes as the database takes the writes,
//! and batches that write to several tables at once.

mod common;

use std::path::Path;
use std::sync::Arc;

use common::{key, meta};
use dynaburst_diskstore::{DiskOptions, DiskStorage};
use dynaburst_engine::store::{IndexKey, IndexMutation, Mutation, Storage, StoreError, WriteBatch};
use dynaburst_model::{item_size, AttributeValue, Item, KeyValue, Number};

fn item(sk: i64, pad: usize) -> Arc<Item> {
    let mut item = Item::new();
    item.insert("pk".into(), AttributeValue::S("p".into()));
    item.insert("sk".into(), AttributeValue::N(Number::from_i64(sk)));
    item.insert("v".into(), AttributeValue::S("x".repeat(pad)));
    Arc::new(item)
}

fn index_key(sk: i64) -> IndexKey {
    IndexKey::new(vec![KeyValue::S("g".into())], vec![KeyValue::N(Number::from_i64(sk))], key(sk))
}

fn entry_write(sk: i64, entry: &Arc<Item>, replaced: Option<u64>) -> IndexMutation {
    IndexMutation { table: 0, index: "g".into(), key: index_key(sk), entry: Some(entry.clone()), replaced }
}

/// (entries, bytes) of index `g` of table `t`, over all its size ranges.
fn index_totals(disk: &DiskStorage) -> (u64, u64) {
    let ranges = disk.index_sizes("t", "g").expect("index sizes").unwrap_or_default();
    (ranges.iter().map(|r| r.1).sum(), ranges.iter().map(|r| r.2).sum())
}

fn open(dir: &Path) -> DiskStorage {
    DiskStorage::open(dir, &DiskOptions::default()).expect("open")
}

/// An index size row whose entry count comes to 0 is removed from the
/// database with whatever bytes it still counted (the engine said an
/// entry was replaced that the row never counted); the next write to that
/// range starts from nothing, as it would after a restart, not from the
/// removed row's bytes.
#[test]
fn a_removed_index_size_row_counts_nothing_afterwards() {
    let dir = common::fresh_dir("dynaburst-applier-removed");
    let disk = open(&dir);
    let mut store = disk.create_table(&meta("t")).expect("create");
    let first = item(1, 100);
    let batch = WriteBatch { index_writes: vec![entry_write(1, &first, Some(10))], ..WriteBatch::default() };
    disk.commit(batch, &mut [&mut *store]).expect("commit");
    disk.wait_applied().expect("applied");
    assert_eq!(index_totals(&disk), (0, 0));
    let second = item(2, 5);
    let batch = WriteBatch { index_writes: vec![entry_write(2, &second, None)], ..WriteBatch::default() };
    disk.commit(batch, &mut [&mut *store]).expect("commit");
    disk.wait_applied().expect("applied");
    let expected = (1, item_size(&second) as u64);
    assert_eq!(index_totals(&disk), expected);
    drop(store);
    drop(disk);
    let disk = open(&dir);
    assert_eq!(index_totals(&disk), expected);
    drop(disk);
    let _ = std::fs::remove_dir_all(&dir);
}

/// One batch writing to two tables, interleaved (a, b, a, a): each table
/// gets only its writes, the second write of a key in the batch replaces
/// the first, and once applied the overlays hold nothing and the counts
/// are each table's.
#[test]
fn a_batch_over_two_tables_keeps_each_tables_writes_apart() {
    let dir = common::fresh_dir("dynaburst-applier-two");
    let disk = open(&dir);
    let mut a = disk.create_table(&meta("a")).expect("create a");
    let mut b = disk.create_table(&meta("b")).expect("create b");
    disk.wait_applied().expect("applied");
    disk.hold_applier(true);
    let batch = WriteBatch {
        mutations: vec![
            Mutation { table: 0, key: key(1), item: Some(item(1, 1)) },
            Mutation { table: 1, key: key(2), item: Some(item(2, 2)) },
            Mutation { table: 0, key: key(3), item: Some(item(3, 3)) },
            Mutation { table: 0, key: key(1), item: Some(item(1, 4)) },
        ],
        ..WriteBatch::default()
    };
    let replaced = disk.commit(batch, &mut [&mut *a, &mut *b]).expect("commit");
    assert_eq!(replaced, vec![None, None, None, Some(item(1, 1))]);
    assert!(disk.overlay_bytes() > 0);
    assert_eq!(a.get(&key(1)).expect("get"), Some(item(1, 4)));
    assert_eq!(a.get(&key(2)).expect("get"), None);
    assert_eq!(a.get(&key(3)).expect("get"), Some(item(3, 3)));
    assert_eq!(b.get(&key(2)).expect("get"), Some(item(2, 2)));
    assert_eq!(b.get(&key(1)).expect("get"), None);
    disk.hold_applier(false);
    disk.wait_applied().expect("applied");
    assert_eq!(disk.overlay_bytes(), 0);
    let size_a = (item_size(&item(1, 4)) + item_size(&item(3, 3))) as u64;
    assert_eq!(disk.table_stats("a").expect("stats"), Some((2, size_a)));
    assert_eq!(disk.table_stats("b").expect("stats"), Some((1, item_size(&item(2, 2)) as u64)));
    assert_eq!(a.get(&key(1)).expect("get"), Some(item(1, 4)));
    assert_eq!(b.get(&key(2)).expect("get"), Some(item(2, 2)));
    drop((a, b));
    drop(disk);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Three batches of 300 index entries each held back and then applied at
/// once (the overlay is pruned a few hundred removals at a time): the
/// overlay ends empty and the index counts 300 entries; after the index is
/// dropped and one entry written again, it counts 1, also after a reopen.
#[test]
fn index_writes_pruned_in_chunks_then_the_index_dropped_and_written_again() {
    let dir = common::fresh_dir("dynaburst-applier-chunks");
    let entry = |sk: i64| item(sk, 3);
    {
        let disk = open(&dir);
        let mut store = disk.create_table(&meta("t")).expect("create");
        disk.hold_applier(true);
        for round in 0..3 {
            let writes = (0..300)
                .map(|sk| {
                    let replaced = (round > 0).then(|| item_size(&entry(sk)) as u64);
                    entry_write(sk, &entry(sk), replaced)
                })
                .collect();
            let batch = WriteBatch { index_writes: writes, ..WriteBatch::default() };
            disk.commit(batch, &mut [&mut *store]).expect("commit");
        }
        assert!(disk.overlay_bytes() > 0);
        disk.hold_applier(false);
        disk.wait_applied().expect("applied");
        assert_eq!(disk.overlay_bytes(), 0);
        let bytes: u64 = (0..300).map(|sk| item_size(&entry(sk)) as u64).sum();
        assert_eq!(index_totals(&disk), (300, bytes));
        disk.drop_index("t", "g").expect("drop index");
        let batch = WriteBatch { index_writes: vec![entry_write(7, &entry(7), None)], ..WriteBatch::default() };
        disk.commit(batch, &mut [&mut *store]).expect("commit");
        disk.wait_applied().expect("applied");
        assert_eq!(index_totals(&disk), (1, item_size(&entry(7)) as u64));
    }
    let disk = open(&dir);
    assert_eq!(index_totals(&disk), (1, item_size(&entry(7)) as u64));
    drop(disk);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A table whose drop only the replay at start-up writes into the database
/// (the applier's write of it failed before a crash) does not lend its
/// storage id to the next table created: the applier skips every write to
/// an id it saw dropped, so the new table's writes would be acknowledged,
/// pruned from the overlay and never stored.
#[test]
fn a_table_dropped_by_the_replay_does_not_lend_its_id_to_the_next_table() {
    let dir = common::fresh_dir("dynaburst-applier-drop-replay");
    let dropped_id;
    {
        let disk = open(&dir);
        let mut t = disk.create_table(&meta("t")).expect("create t");
        dropped_id = t.storage_id();
        let batch = WriteBatch {
            mutations: vec![Mutation { table: 0, key: key(1), item: Some(item(1, 10)) }],
            ..WriteBatch::default()
        };
        disk.commit(batch, &mut [&mut *t]).expect("commit");
        disk.wait_applied().expect("applied");
        disk.hold_applier(true);
        disk.drop_table("t").expect("drop");
        // The drop is in the log; the database's write of it fails.
        disk.durability().fail_next_apply();
        disk.hold_applier(false);
        disk.wait_applied().expect_err("the failed write poisons the storage");
        disk.close();
    }
    let disk = open(&dir);
    assert_eq!(disk.list_tables().expect("list").len(), 0, "the replay dropped t");
    let mut u = disk.create_table(&meta("u")).expect("create u");
    let ids = format!("u has storage id {:?}, t had {dropped_id:?}", u.storage_id());
    let batch = WriteBatch {
        mutations: (1..=3).map(|sk| Mutation { table: 0, key: key(sk), item: Some(item(sk, 5)) }).collect(),
        ..WriteBatch::default()
    };
    disk.commit(batch, &mut [&mut *u]).expect("commit");
    disk.wait_applied().expect("applied");
    assert_eq!(disk.overlay_bytes(), 0, "pruned: reads now go to the database");
    assert_eq!(u.get(&key(2)).expect("get"), Some(item(2, 5)), "{ids}");
    assert_eq!(disk.table_stats("u").expect("stats"), Some((3, 3 * item_size(&item(1, 5)) as u64)), "{ids}");
    drop(u);
    disk.close();
    drop(disk);
    let disk = open(&dir);
    let u = disk.open_table("u").expect("open u");
    assert_eq!(u.get(&key(3)).expect("get"), Some(item(3, 5)));
    assert_eq!(disk.table_stats("u").expect("stats"), Some((3, 3 * item_size(&item(1, 5)) as u64)));
    drop(u);
    drop(disk);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Commits that race their table's drop (a thread committing to the table
/// while another drops it: a commit that found the table's overlay before
/// the drop queues after it) leave nothing counted in the overlays: such a
/// batch is queued (the applier skips it, as the drop's) but none of its
/// writes stays in an overlay no prune will find, where their bytes would
/// count against the overlays' bound for good. A commit that starts after
/// the drop is refused, as a table that no longer exists.
#[test]
fn commits_racing_their_tables_drop_leave_no_overlay_bytes() {
    const ROUNDS: usize = 40;
    const MOST_COMMITS: i64 = 200_000;
    let dir = common::fresh_dir("dynaburst-applier-drop-race");
    let disk = Arc::new(open(&dir));
    for round in 0..ROUNDS {
        let name = format!("t{round}");
        let mut t = disk.create_table(&meta(&name)).expect("create");
        let (started, committing) = std::sync::mpsc::channel();
        let writer = {
            let disk = disk.clone();
            std::thread::spawn(move || {
                // Commits until one is refused (the table dropped); bounded.
                for sk in 0..MOST_COMMITS {
                    let batch = WriteBatch {
                        mutations: vec![Mutation { table: 0, key: key(sk), item: Some(item(sk, 200)) }],
                        ..WriteBatch::default()
                    };
                    if let Err(e) = disk.commit(batch, &mut [&mut *t]) {
                        return (sk, Some(e));
                    }
                    if sk == 0 {
                        let _ = started.send(());
                    }
                }
                (MOST_COMMITS, None)
            })
        };
        // The drop comes while the writer is committing.
        committing.recv().expect("the writer committed once");
        disk.drop_table(&name).expect("drop");
        let (accepted, refused) = writer.join().expect("writer");
        assert!(accepted >= 1, "round {round}: {accepted} commits");
        // Refused as a table that is gone (the engine answers
        // ResourceNotFoundException), not as a malformed batch.
        assert_eq!(refused, Some(StoreError::NoSuchTable(String::new())), "round {round}");
        disk.wait_applied().expect("applied");
        assert_eq!(disk.overlay_bytes(), 0, "round {round}: bytes left counted for a dropped table");
    }
    assert_eq!(disk.list_tables().expect("list").len(), 0);
    drop(disk);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A panic in the applier (here injected; fjall's own panics unwind the
/// same way) fails the storage: waiting for the applier ends in an error
/// that says so, later commits are refused, closing does not hang, and
/// the write the applier did not take is replayed from the log at the
/// next start.
#[test]
fn a_panic_in_the_applier_fails_the_storage_instead_of_hanging() {
    let dir = common::fresh_dir("dynaburst-applier-panic");
    {
        let disk = open(&dir);
        let mut t = disk.create_table(&meta("t")).expect("create t");
        disk.wait_applied().expect("applied");
        disk.durability().panic_next_apply();
        let batch = WriteBatch {
            mutations: vec![Mutation { table: 0, key: key(1), item: Some(item(1, 10)) }],
            ..WriteBatch::default()
        };
        disk.commit(batch, &mut [&mut *t]).expect("queued before the applier panics");
        let failed = disk.wait_applied().expect_err("a panicked applier fails the storage");
        assert_eq!(failed.to_string(), "storage applier failed (other error): the storage's applier thread panicked");
        let batch = WriteBatch {
            mutations: vec![Mutation { table: 0, key: key(2), item: Some(item(2, 10)) }],
            ..WriteBatch::default()
        };
        let refused = disk.commit(batch, &mut [&mut *t]).expect_err("refused after the panic");
        assert!(matches!(refused, StoreError::Failed { operation: "applier", .. }), "{refused:?}");
        drop(t);
        disk.close();
    }
    let disk = open(&dir);
    let t = disk.open_table("t").expect("open t");
    assert_eq!(t.get(&key(1)).expect("get"), Some(item(1, 10)), "replayed from the log");
    assert_eq!(t.get(&key(2)).expect("get"), None);
    drop(t);
    drop(disk);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A crash after one of the applier's commits wrote a table's writes as
/// sorted tables of their own (fjall's ingestion), before the batch with
/// its counts and applied mark: the ingested writes are in the database
/// past the mark. The replay writes them again, to the same values, and
/// the counts (items, bytes, size ranges, index entries) count them once.
#[test]
fn writes_ingested_before_a_failed_batch_are_counted_once_after_the_replay() {
    let dir = common::fresh_dir("dynaburst-applier-ingest");
    let options = DiskOptions { ingest_min_bytes: 1, ..DiskOptions::default() };
    let open = |dir: &Path| DiskStorage::open(dir, &options).expect("open");
    let entry = |sk: i64| item(sk, 3);
    let write = |disk: &DiskStorage, store: &mut Box<dyn dynaburst_engine::store::TableStore>, sks: &[i64], pad| {
        let batch = WriteBatch {
            mutations: sks.iter().map(|&sk| Mutation { table: 0, key: key(sk), item: Some(item(sk, pad)) }).collect(),
            // An entry written before is replaced (as the engine says).
            index_writes: sks
                .iter()
                .map(|&sk| entry_write(sk, &entry(sk), (pad == 20 && sk < 8).then(|| item_size(&entry(sk)) as u64)))
                .collect(),
        };
        disk.commit(batch, &mut [&mut **store]).expect("commit")
    };
    {
        let disk = open(&dir);
        let mut store = disk.create_table(&meta("t")).expect("create");
        // Ingested and marked: 0..8.
        write(&disk, &mut store, &(0..8).collect::<Vec<_>>(), 10);
        disk.wait_applied().expect("applied");
        // Ingested, then the batch fails: 4..8 rewritten larger, 8..14 new,
        // 0 and 1 deleted (their entries too).
        disk.hold_applier(true);
        write(&disk, &mut store, &(4..14).collect::<Vec<_>>(), 20);
        let deletes = WriteBatch {
            mutations: (0..2).map(|sk| Mutation { table: 0, key: key(sk), item: None }).collect(),
            index_writes: (0..2)
                .map(|sk| IndexMutation {
                    table: 0,
                    index: "g".into(),
                    key: index_key(sk),
                    entry: None,
                    replaced: Some(item_size(&entry(sk)) as u64),
                })
                .collect(),
        };
        disk.commit(deletes, &mut [&mut *store]).expect("commit");
        disk.durability().fail_after_next_ingest();
        disk.hold_applier(false);
        disk.wait_applied().expect_err("the failed batch poisons the storage");
        drop(store);
        disk.close();
    }
    let expected: Vec<(i64, usize)> = (2..14).map(|sk| (sk, if sk < 4 { 10 } else { 20 })).collect();
    let bytes: u64 = expected.iter().map(|&(sk, pad)| item_size(&item(sk, pad)) as u64).sum();
    let entry_bytes: u64 = (2..14).map(|sk| item_size(&entry(sk)) as u64).sum();
    for round in 0..2 {
        let disk = open(&dir);
        let store = disk.open_table("t").expect("open");
        for sk in 0..16 {
            let want = expected.iter().find(|e| e.0 == sk).map(|&(sk, pad)| item(sk, pad));
            assert_eq!(store.get(&key(sk)).expect("get"), want, "item {sk}, round {round}");
        }
        assert_eq!(disk.table_stats("t").expect("stats"), Some((12, bytes)), "round {round}");
        let ranges = disk.table_sizes("t").expect("sizes").expect("kept");
        assert_eq!(ranges.iter().map(|r| r.1).sum::<u64>(), bytes, "round {round}");
        assert_eq!(index_totals(&disk), (12, entry_bytes), "round {round}");
        drop(store);
        disk.close();
    }
    let _ = std::fs::remove_dir_all(&dir);
}
