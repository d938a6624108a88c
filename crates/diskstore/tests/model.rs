//! The disk store against a model: random puts, deletes, batches, point
//! reads and range walks (both directions, query sentinels, early stops)
//! on a table served from the database under its overlay give exactly
//! what a `BTreeMap` gives, whether the applier has written the batches
//! into the file or holds them back, and after the storage is reopened
//! (items, counts, and bytes by size range). Each batch also writes the
//! entries of an index (as the engine's write funnel does), which index
//! range walks must give as a `BTreeMap` of entries does, with their
//! counts, also after a reopen and after the index is dropped.

mod common;

use std::collections::BTreeMap;
use std::ops::{Bound, ControlFlow};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::meta;
use dynaburst_diskstore::{DiskOptions, DiskStorage};
use dynaburst_engine::store::{
    index_partition_hash, size_range_start, walk_range, Direction, IndexKey, IndexMutation, Mutation, PrimarySlot,
    SortSlot, Storage, StoreKey, TableStore, WriteBatch, ALL_KEYS,
};
use dynaburst_model::{item_size, AttributeValue, Item, KeyValue, Number};
use proptest::prelude::*;

fn fresh_dir() -> PathBuf {
    common::fresh_dir("dynaburst-diskmodel")
}

fn key(pk: u8, sk: i64) -> StoreKey {
    StoreKey::new(KeyValue::S(format!("p{pk}")), Some(KeyValue::N(Number::from_i64(sk))))
}

fn item(pk: u8, sk: i64, v: u16) -> Arc<Item> {
    let mut item = Item::new();
    item.insert("pk".into(), AttributeValue::S(format!("p{pk}")));
    item.insert("sk".into(), AttributeValue::N(Number::from_i64(sk)));
    // Sizes vary, so the counted bytes mean something.
    item.insert("v".into(), AttributeValue::S("x".repeat(usize::from(v % 40))));
    Arc::new(item)
}

/// The index the batches keep: an item's entry sits in index partition
/// `g{v % 3}` under its sort key, with the whole item.
const INDEX: &str = "g";

fn index_key(pk: u8, sk: i64, item: &Item) -> IndexKey {
    let v = match item.get("v") {
        Some(AttributeValue::S(s)) => s.len() % 3,
        _ => 0,
    };
    IndexKey::new(vec![KeyValue::S(format!("g{v}"))], vec![KeyValue::N(Number::from_i64(sk))], key(pk, sk))
}

/// Bounds of index partition `g{part}` (its whole sort range).
fn index_bounds(part: u8) -> (IndexKey, IndexKey) {
    let p = [KeyValue::S(format!("g{part}"))];
    let h = index_partition_hash(&p);
    (
        IndexKey::bound(h, &p, vec![SortSlot::Low], PrimarySlot::Low),
        IndexKey::bound(h, &p, vec![SortSlot::High], PrimarySlot::High),
    )
}

type Entries = BTreeMap<IndexKey, Arc<Item>>;

/// The entries' count and bytes by size range of their index partition
/// hash, as the storage keeps them.
fn index_sizes(entries: &Entries) -> Vec<dynaburst_engine::store::IndexRange> {
    let mut ranges: BTreeMap<u128, (u64, u64)> = BTreeMap::new();
    for (k, i) in entries {
        let r = ranges.entry(size_range_start(k.hash)).or_default();
        (r.0, r.1) = (r.0 + 1, r.1 + item_size(i) as u64);
    }
    ranges.into_iter().map(|(start, (n, bytes))| (start, n, bytes)).collect()
}

/// Up to `limit` entries of `store`'s index (in index partition `part`, or
/// all) in one direction, and the same walk over the model's entries.
type Walked = Vec<(IndexKey, Arc<Item>)>;

fn index_walks(
    store: &dyn TableStore,
    entries: &Entries,
    part: Option<u8>,
    backward: bool,
    limit: usize,
) -> (Walked, Walked) {
    let bounds = part.map(index_bounds);
    let (lo, hi) = match &bounds {
        Some((lo, hi)) => (Bound::Included(lo), Bound::Included(hi)),
        None => (Bound::Unbounded, Bound::Unbounded),
    };
    let direction = if backward { Direction::Backward } else { Direction::Forward };
    let mut got = Vec::new();
    store.index_range(INDEX, (lo, hi), direction, &mut |k, i| collect(&mut got, limit, k, i)).expect("index range");
    let mut want = Vec::new();
    walk_range(entries, lo, hi, direction, &mut |k, i| collect(&mut want, limit, k, i));
    (got, want)
}

/// Adds an entry to `seen`, and stops a walk once it holds `limit`.
fn collect<K: Clone>(seen: &mut Vec<(K, Arc<Item>)>, limit: usize, k: &K, i: &Arc<Item>) -> ControlFlow<()> {
    seen.push((k.clone(), i.clone()));
    if seen.len() >= limit {
        ControlFlow::Break(())
    } else {
        ControlFlow::Continue(())
    }
}

#[derive(Clone, Debug)]
enum Op {
    /// Index range walk: one index partition or all, direction, limit.
    IndexRange(Option<u8>, bool, usize),
    /// Drop the index (its entries go; later writes start it again).
    DropIndex,
    /// One batch of writes (`None` deletes); a key may repeat.
    Write(Vec<(u8, i64, Option<u16>)>),
    Get(u8, i64),
    Range {
        start: BoundSpec,
        end: BoundSpec,
        backward: bool,
        limit: usize,
    },
    /// Let the applier write everything into the file, then hold it again.
    Apply,
    /// Let the applier write the batches up to the one of one of the last
    /// three write ops (0: the last), later ones pending.
    ApplySome(usize),
    /// Close and reopen the storage (the applier finishes on close).
    Reopen,
}

#[derive(Clone, Debug)]
enum BoundSpec {
    Unbounded,
    Included(u8, SortSpec),
    Excluded(u8, SortSpec),
}

#[derive(Clone, Debug)]
enum SortSpec {
    Low,
    At(i64),
    High,
}

fn bound_key(pk: u8, sort: &SortSpec) -> StoreKey {
    let base = key(pk, 0);
    StoreKey {
        sort: match sort {
            SortSpec::Low => SortSlot::Low,
            SortSpec::At(v) => SortSlot::Value(KeyValue::N(Number::from_i64(*v))),
            SortSpec::High => SortSlot::High,
        },
        ..base
    }
}

fn bound(spec: &BoundSpec) -> Bound<StoreKey> {
    match spec {
        BoundSpec::Unbounded => Bound::Unbounded,
        BoundSpec::Included(p, s) => Bound::Included(bound_key(*p, s)),
        BoundSpec::Excluded(p, s) => Bound::Excluded(bound_key(*p, s)),
    }
}

fn op() -> impl Strategy<Value = Op> {
    let pk = 0u8..3;
    // Few keys, so that they are written again while pending; negative and
    // multi-digit sort keys, which the file must order as numbers.
    let sk = prop::sample::select(vec![-12i64, -3, 0, 2, 9, 10]);
    let write = (pk.clone(), sk.clone(), prop::option::weighted(0.75, any::<u16>()));
    let sort = prop_oneof![Just(SortSpec::Low), sk.clone().prop_map(SortSpec::At), Just(SortSpec::High)];
    let spec = prop_oneof![
        Just(BoundSpec::Unbounded),
        (pk.clone(), sort.clone()).prop_map(|(p, s)| BoundSpec::Included(p, s)),
        (pk.clone(), sort).prop_map(|(p, s)| BoundSpec::Excluded(p, s)),
    ];
    prop_oneof![
        6 => prop::collection::vec(write, 1..6).prop_map(Op::Write),
        3 => (pk, sk).prop_map(|(p, s)| Op::Get(p, s)),
        3 => (spec.clone(), spec, any::<bool>(), 1usize..40)
            .prop_map(|(start, end, backward, limit)| Op::Range { start, end, backward, limit }),
        1 => Just(Op::Apply),
        2 => (0usize..3).prop_map(Op::ApplySome),
        1 => Just(Op::Reopen),
        3 => (prop::option::of(0u8..3), any::<bool>(), 1usize..40).prop_map(|(p, b, l)| Op::IndexRange(p, b, l)),
        1 => Just(Op::DropIndex),
    ]
}

/// Small log files: the ops rotate through them, recycle retired ones and
/// replay them at each reopen. A table's writes in one of the applier's
/// commits go in as sorted tables of their own from `ingest` bytes of them
/// on (1: all; `usize::MAX`: none, all through fjall's batches).
fn options(ingest: usize) -> DiskOptions {
    DiskOptions { wal_rotate_bytes: 700, ingest_min_bytes: ingest, ..DiskOptions::default() }
}

fn open(dir: &Path, ingest: usize) -> (DiskStorage, Box<dyn TableStore>) {
    let disk = DiskStorage::open(dir, &options(ingest)).expect("open");
    disk.hold_applier(true);
    let store = disk.open_table("t").expect("the table");
    (disk, store)
}

fn counts(model: &BTreeMap<StoreKey, Arc<Item>>) -> (u64, u64) {
    (model.len() as u64, model.values().map(|i| item_size(i) as u64).sum())
}

/// The items' bytes by size range (`store::size_range_start`), as the
/// storage keeps them for the capacity model.
fn sizes(model: &BTreeMap<StoreKey, Arc<Item>>) -> Vec<(u128, u64)> {
    let mut ranges = BTreeMap::new();
    for (k, i) in model {
        *ranges.entry(size_range_start(k.hash)).or_insert(0) += item_size(i) as u64;
    }
    ranges.into_iter().filter(|(_, bytes)| *bytes > 0).collect()
}

fn check(ops: Vec<Op>, ingest: usize) -> Result<(), TestCaseError> {
    let dir = fresh_dir();
    {
        let disk = DiskStorage::open(&dir, &options(ingest)).expect("create");
        disk.create_table(&meta("t")).expect("create the table");
    }
    let (mut disk, mut store) = open(&dir, ingest);
    let mut model: BTreeMap<StoreKey, Arc<Item>> = BTreeMap::new();
    let mut entries: Entries = BTreeMap::new();
    // The batch each write op committed.
    let mut seqs = Vec::new();
    for op in ops {
        match op {
            Op::Write(writes) => {
                let mut batch = WriteBatch::default();
                let mut expected = Vec::new();
                let mut after = model.clone();
                let mut after_entries = entries.clone();
                for (p, s, v) in writes {
                    let new = v.map(|v| item(p, s, v));
                    let old = match &new {
                        Some(i) => after.insert(key(p, s), i.clone()),
                        None => after.remove(&key(p, s)),
                    };
                    // The entry writes the engine would add: the old
                    // entry's delete (unless rewritten), the new entry.
                    let old_key = old.as_ref().map(|o| index_key(p, s, o));
                    let new_key = new.as_ref().map(|n| index_key(p, s, n));
                    // Each with the size of the entry it replaces in the
                    // index, as the engine tells it (none after a drop).
                    let size = |e: Arc<Item>| item_size(&e) as u64;
                    let removed = old_key
                        .filter(|k| Some(k) != new_key.as_ref())
                        .map(|k| (after_entries.remove(&k).map(size), k, None));
                    let added = match (new_key, &new) {
                        (Some(k), Some(n)) => {
                            Some((after_entries.insert(k.clone(), n.clone()).map(size), k, Some(n.clone())))
                        }
                        _ => None,
                    };
                    for (replaced, key, entry) in removed.into_iter().chain(added) {
                        batch.index_writes.push(IndexMutation { table: 0, index: INDEX.into(), key, entry, replaced });
                    }
                    expected.push(old);
                    batch.mutations.push(Mutation { table: 0, key: key(p, s), item: new });
                }
                let replaced = disk.commit(batch, &mut [&mut *store]).expect("commit");
                prop_assert_eq!(replaced, expected);
                model = after;
                entries = after_entries;
                seqs.push(disk.committed_seq());
            }
            Op::Get(p, s) => {
                prop_assert_eq!(store.get(&key(p, s)).expect("get"), model.get(&key(p, s)).cloned());
            }
            Op::Range { start, end, backward, limit } => {
                let (start, end) = (bound(&start), bound(&end));
                let direction = if backward { Direction::Backward } else { Direction::Forward };
                let mut got = Vec::new();
                store
                    .range((start.as_ref(), end.as_ref()), direction, &mut |k, i| collect(&mut got, limit, k, i))
                    .expect("range");
                let mut want = Vec::new();
                walk_range(&model, start.as_ref(), end.as_ref(), direction, &mut |k, i| {
                    collect(&mut want, limit, k, i)
                });
                prop_assert_eq!(got, want);
            }
            Op::IndexRange(part, backward, limit) => {
                let (got, want) = index_walks(&*store, &entries, part, backward, limit);
                prop_assert_eq!(got, want);
            }
            Op::DropIndex => {
                disk.drop_index("t", INDEX).expect("drop index");
                entries.clear();
                prop_assert_eq!(index_walks(&*store, &entries, None, false, usize::MAX).0, vec![]);
                prop_assert_eq!(disk.index_sizes("t", INDEX).expect("index sizes").unwrap_or_default(), vec![]);
            }
            Op::Apply => {
                disk.hold_applier(false);
                disk.wait_applied().expect("applied");
                prop_assert_eq!(disk.overlay_bytes(), 0);
                prop_assert_eq!(disk.index_sizes("t", INDEX).expect("index sizes"), Some(index_sizes(&entries)));
                prop_assert_eq!(disk.table_stats("t").expect("stats"), Some(counts(&model)));
                prop_assert_eq!(disk.table_sizes("t").expect("sizes"), Some(sizes(&model)));
                disk.hold_applier(true);
            }
            Op::ApplySome(i) => {
                if let Some(seq) = seqs.iter().rev().nth(i).or(seqs.first()) {
                    disk.apply_until(*seq).expect("applied");
                }
            }
            Op::Reopen => {
                drop(store);
                drop(disk);
                (disk, store) = open(&dir, ingest);
                prop_assert_eq!(disk.table_stats("t").expect("stats"), Some(counts(&model)));
                prop_assert_eq!(disk.table_sizes("t").expect("sizes"), Some(sizes(&model)));
                prop_assert_eq!(disk.index_sizes("t", INDEX).expect("index sizes"), Some(index_sizes(&entries)));
            }
        }
    }
    // Everything, both ways, after the last op and after a reopen.
    for round in 0..2 {
        for direction in [Direction::Forward, Direction::Backward] {
            let mut got = Vec::new();
            store
                .range(ALL_KEYS, direction, &mut |k, i| {
                    got.push((k.clone(), i.clone()));
                    ControlFlow::Continue(())
                })
                .expect("scan");
            let mut want: Vec<_> = model.iter().map(|(k, i)| (k.clone(), i.clone())).collect();
            if direction == Direction::Backward {
                want.reverse();
            }
            prop_assert_eq!(got, want, "round {}", round);
            let backward = direction == Direction::Backward;
            let (got, want) = index_walks(&*store, &entries, None, backward, usize::MAX);
            prop_assert_eq!(got, want, "round {}", round);
        }
        if round == 0 {
            drop(store);
            drop(disk);
            (disk, store) = open(&dir, ingest);
            prop_assert_eq!(disk.table_stats("t").expect("stats"), Some(counts(&model)));
            prop_assert_eq!(disk.table_sizes("t").expect("sizes"), Some(sizes(&model)));
        }
    }
    drop(store);
    drop(disk);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn the_disk_store_behaves_as_an_ordered_map(
        ops in prop::collection::vec(op(), 1..60),
        ingest in prop_oneof![Just(1usize), Just(300), Just(usize::MAX)],
    ) {
        check(ops, ingest)?;
    }
}

/// The overlays are bounded: with the applier held, writers wait once they
/// are full (the writes stay committed in the log, readable), and go on
/// when the applier frees room; the bound holds throughout.
#[test]
fn a_full_overlay_makes_commits_wait_for_the_applier() {
    let dir = fresh_dir();
    let limit = 4096;
    let disk = Arc::new(
        DiskStorage::open(&dir, &DiskOptions { overlay_bytes: limit, ..DiskOptions::default() }).expect("open"),
    );
    let mut store = disk.create_table(&meta("t")).expect("create");
    disk.hold_applier(true);
    let one = |store: &mut Box<dyn TableStore>, disk: &DiskStorage, sk: i64| {
        let batch = WriteBatch {
            mutations: vec![Mutation { table: 0, key: key(1, sk), item: Some(item(1, sk, 30)) }],
            ..WriteBatch::default()
        };
        disk.commit(batch, &mut [&mut **store]).expect("commit");
    };
    let mut sk = 0;
    while disk.overlay_bytes() + 100 <= limit {
        one(&mut store, &disk, sk);
        sk += 1;
    }
    let held = disk.overlay_bytes();
    // This one does not fit: it waits until the applier runs.
    let writer = {
        let (disk, mut store) = (disk.clone(), disk.open_table("t").expect("open"));
        std::thread::spawn(move || {
            for extra in 0..50 {
                one(&mut store, &disk, 1000 + extra);
                assert!(disk.overlay_bytes() <= limit, "the overlay passed its bound");
            }
        })
    };
    assert!(disk.overlay_bytes() <= limit);
    assert_eq!(store.get(&key(1, 0)).expect("get"), Some(item(1, 0, 30)), "held writes are readable");
    disk.hold_applier(false);
    writer.join().expect("the writer finishes once the applier runs");
    assert!(held > 0);
    disk.wait_applied().expect("applied");
    assert_eq!(disk.overlay_bytes(), 0);
    assert_eq!(disk.table_stats("t").expect("stats").map(|s| s.0), Some(sk as u64 + 50));
    drop(store);
    drop(disk);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Recycled log files. A first life of large batches fills small log
/// files, which a clean close retires (the spares); a second life of small
/// batches rewrites some of the items through those spares only (so each
/// file, the newest too, ends before its old life's frames do), and a
/// failed write into the database keeps every log file as a crash would.
/// The reopen replays them: each item has its last value, none an older
/// one.
#[test]
fn a_reopen_replays_the_new_life_of_recycled_log_files_and_not_their_old_one() {
    let dir = fresh_dir();
    let options = DiskOptions { wal_rotate_bytes: 2048, ..DiskOptions::default() };
    // Items the second life rewrites: two or three of its small files.
    const REWRITTEN: i64 = 60;
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
    // One batch, synced before the next (each its own log sync, so that the
    // log rotates between batches).
    let commit = |disk: &DiskStorage, store: &mut Box<dyn TableStore>, sks: std::ops::Range<i64>, v: u16| {
        let mutations = sks.map(|sk| Mutation { table: 0, key: key(1, sk), item: Some(item(1, sk, v)) }).collect();
        disk.commit(WriteBatch { mutations, ..WriteBatch::default() }, &mut [&mut **store]).expect("commit");
        runtime.block_on(disk.durability().settle()).expect("synced");
    };
    {
        let disk = DiskStorage::open(&dir, &options).expect("create");
        let mut store = disk.create_table(&meta("t")).expect("create");
        for b in 0..30 {
            commit(&disk, &mut store, b * 12..(b + 1) * 12, 1);
        }
        drop(store);
        disk.close();
    }
    assert_eq!(dynaburst_diskstore::spare_wal_files(&dir).expect("spares"), dynaburst_diskstore::MAX_SPARE_LOGS);
    {
        let disk = DiskStorage::open(&dir, &options).expect("reopen");
        let mut store = disk.open_table("t").expect("the table");
        disk.hold_applier(true);
        for sk in 0..REWRITTEN {
            commit(&disk, &mut store, sk..sk + 1, 2);
        }
        // Every log file is a spare again, its old life past its new one (a
        // spare is left: no file was a new one).
        assert!(dynaburst_diskstore::wal_files(&dir).expect("logs") >= 2);
        assert!(dynaburst_diskstore::spare_wal_files(&dir).expect("spares") >= 1);
        disk.durability().fail_next_apply();
        disk.hold_applier(false);
        assert!(disk.wait_applied().is_err(), "the database write failed");
        drop(store);
        disk.close();
    }
    assert!(dynaburst_diskstore::wal_files(&dir).expect("logs") >= 2);
    let (disk, store) = open(&dir, dynaburst_diskstore::INGEST_MIN_BYTES);
    for sk in 0..360 {
        let v = if sk < REWRITTEN { 2 } else { 1 };
        assert_eq!(store.get(&key(1, sk)).expect("get"), Some(item(1, sk, v)), "item {sk}");
    }
    assert_eq!(disk.table_stats("t").expect("stats").map(|s| s.0), Some(360));
    drop(store);
    drop(disk);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The generations of the data directory's files named `prefix` + number.
fn generations(dir: &Path, prefix: &str) -> Vec<u64> {
    let mut out: Vec<u64> = std::fs::read_dir(dir)
        .expect("list")
        .filter_map(|e| e.ok()?.file_name().to_str()?.strip_prefix(prefix)?.parse().ok())
        .collect();
    out.sort();
    out
}

/// A crash after start-up retired every log file and before it started the
/// next one leaves spares only: the next start's log file takes a
/// generation past theirs (a retired file's spare name is its generation's,
/// and must not meet a kept spare's).
#[test]
fn a_new_log_file_s_generation_is_past_the_spares() {
    let dir = fresh_dir();
    let options = DiskOptions { wal_rotate_bytes: 2048, ..DiskOptions::default() };
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
    {
        let disk = DiskStorage::open(&dir, &options).expect("create");
        let mut store = disk.create_table(&meta("t")).expect("create");
        for sk in 0..200 {
            let mutations = vec![Mutation { table: 0, key: key(1, sk), item: Some(item(1, sk, 1)) }];
            disk.commit(WriteBatch { mutations, ..WriteBatch::default() }, &mut [&mut *store]).expect("commit");
            runtime.block_on(disk.durability().settle()).expect("synced");
        }
        drop(store);
        disk.close();
    }
    let spares = generations(&dir, "spare-");
    assert_eq!(spares.len(), dynaburst_diskstore::MAX_SPARE_LOGS);
    for g in generations(&dir, "wal-") {
        std::fs::remove_file(dir.join(format!("wal-{g:016}"))).expect("remove");
    }
    let (disk, store) = open(&dir, dynaburst_diskstore::INGEST_MIN_BYTES);
    let logs = generations(&dir, "wal-");
    assert_eq!(logs.len(), 1);
    assert!(logs[0] > spares[spares.len() - 1], "log file {} beside spares {spares:?}", logs[0]);
    assert_eq!(store.get(&key(1, 199)).expect("get"), Some(item(1, 199, 1)));
    drop(store);
    drop(disk);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_later_write_stays_in_the_overlay_when_an_earlier_one_reaches_the_file() {
    let ops = vec![
        Op::Write(vec![(1, 1, Some(1))]),
        Op::Write(vec![(1, 1, Some(2))]),
        Op::ApplySome(1),
        Op::Get(1, 1),
        Op::Write(vec![(1, 2, Some(3))]),
        Op::Write(vec![(1, 2, None)]),
        Op::ApplySome(1),
        Op::Range { start: BoundSpec::Unbounded, end: BoundSpec::Unbounded, backward: false, limit: 10 },
    ];
    for ingest in [1, usize::MAX] {
        check(ops.clone(), ingest).expect("matches the model");
    }
}

/// A data directory an older dynaburst wrote (its tables in one redb
/// file) is refused with what to do, and left as it was.
#[test]
fn a_directory_of_the_redb_layout_is_refused_with_what_to_do() {
    let dir = fresh_dir();
    std::fs::create_dir_all(&dir).expect("dir");
    let old = dir.join(dynaburst_diskstore::OLD_DB_FILE);
    std::fs::write(&old, b"an older dynaburst's file").expect("write");
    let err = DiskStorage::open(&dir, &DiskOptions::default()).err().expect("refused");
    let message = err.to_string();
    assert!(
        message.starts_with(&format!("cannot open database {}: it was written by an older dynaburst", old.display())),
        "{message}"
    );
    assert!(message.contains("`dynaburst dump`") && message.contains("a new --data-dir"), "{message}");
    assert_eq!(std::fs::read(&old).expect("still there"), b"an older dynaburst's file");
    assert!(!dir.join(dynaburst_diskstore::DB_DIR).exists(), "nothing created beside it");
    let _ = std::fs::remove_dir_all(&dir);
}
