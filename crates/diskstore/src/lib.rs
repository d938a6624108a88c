//! Durable storage for `dynaburst serve --data-dir DIR`: the engine's
//! [`Storage`] seam on disk, as a write-ahead log (`DIR/wal-*`, `wal.rs`)
//! in front of a fjall database (`DIR/db`, an LSM tree: writes go into a
//! sorted in-memory table, written out to sorted files and merged in the
//! background; docs/storage-engine.md says why fjall).
//!
//! Keyspaces of the database: `catalog` maps each table name to its
//! storage id and its [`TableMeta`] (every setting; `codec.rs`); `k{id}`
//! holds the table's items, `store::encode_store_key` bytes (which order
//! as the engine orders keys, partition hash first) to stored item bytes
//! (DynamoDB size first); `x{id}` holds the entries of every secondary
//! index of the table, under [`index_prefix`] of the index's name and
//! `store::encode_index_key`, to stored projected items; `stats` holds
//! each table's item count and bytes, `sizes` its bytes by partition-hash
//! range (the capacity model's partition sizes after a restart),
//! `index_sizes` each index's entry count and bytes by
//! index-partition-hash range; `meta` holds the sequence number of the
//! last batch the database holds and the layout version ([`FORMAT`]). All
//! of a batch's writes go in one atomic fjall batch with the counts they
//! change and the applied mark: after any crash items, entries and counts
//! agree. A dropped table's keyspaces and rows go with it (a keyspace the
//! catalog does not name is deleted at start-up); a dropped index's
//! entries and rows (`Storage::drop_index`). A directory of the layout
//! before (one redb file, [`OLD_DB_FILE`]) is refused with what to do.
//!
//! **Write path and group commit.** [`Storage::commit`] reads what each
//! write replaces, then queues the batch's encoded writes (each with the
//! size of what it replaces, so the database's counts follow without a
//! read) with a sequence number and, in the same step, puts them in the
//! tables' overlays (under the engine's table locks, so readers never see
//! half of a batch). The committer thread takes every batch waiting,
//! appends them to the log and syncs once: concurrent writers share a
//! sync, and a batch is one checksummed frame, whole or (torn by a crash)
//! ignored, so a transaction is all or nothing. The applier thread then
//! writes the durable batches into the database in large atomic batches
//! (a few small batches wait up to [`APPLY_GATHER_WAIT`] for more), off the
//! answer's path, at a lower CPU priority ([`APPLIER_NICE`]). fjall's
//! journal is not synced for them (the log already made their batches
//! durable) except every [`DURABLE_APPLY_BYTES`] and when no batch has come
//! for [`IDLE_DURABLE_WAIT`]; after such a sync the applier retires the log
//! files the database holds entirely (`wal.rs`: kept as spares, which later
//! log files reuse, or deleted). A crash
//! takes the database back to a prefix of its batches (fjall's journal is
//! ordered and checksummed), never older than its last synced state, and
//! the replay at start-up writes the batches after its applied mark (one
//! log file at a time) and reads the catalog, not the items. Both queues
//! are bounded in bytes ([`MAX_QUEUED_BYTES`], [`MAX_BACKLOG_BYTES`]): a
//! writer that finds them full waits. The server answers a request only
//! after [`Durability::settle`] says every batch queued before the answer
//! is in the log, so a 200 never leaves before its data is durable, and no
//! answer shows data that a crash could take back.
//!
//! **Reads and memory.** Items and index entries are served from the
//! database (fjall's block cache is [`DiskOptions::cache_bytes`]) merged
//! with each table's overlay (one map for its items, one per index for its
//! entries): the writes committed (queued, or in the log) but not yet in
//! the database, deletes as tombstones. The applier removes a write from
//! the overlay once the database holds it, so reads see every
//! acknowledged write. The overlays are bounded ([`MAX_OVERLAY_BYTES`] of
//! encoded writes): a commit that finds them full waits for the applier.
//! A point read of a key that the table's key filter (`filter.rs`) says
//! was never written answers at once, without the database: the filter
//! holds every item key written since the table held no item anywhere
//! (created by this process, or empty at start-up), so a bulk load into a
//! new table reads nothing for the items its writes replace. Memory is the
//! cache, fjall's memtables ([`MEMTABLE_BYTES`] a keyspace, all of them
//! about [`JOURNAL_BYTES`] at most), the overlays, the queues and the key
//! filters (at most [`KEY_FILTER_BYTES`]), whatever the data: start-up
//! reads the catalog and the stored counts, no item and no index entry.
//!
//! **Failure.** A failed log write or sync (or a failed write into the
//! database) poisons the storage: the requests waiting on it, and every
//! request after it, get an error carrying the first failure's I/O error
//! (a full disk says so; [`Durability::failure`] hands it to the server's
//! log) until the server is restarted; the disk keeps exactly the batches
//! synced before (the overlays may hold the failed ones, so the server
//! answers nothing more). A panic in the committer or the applier (fjall's
//! included) poisons it the same way.
//!
//! A lock on `DIR/LOCK` keeps a second server off the same directory.

mod codec;
mod filter;
mod wal;

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::fmt;
use std::fs::File;
use std::ops::{Bound, ControlFlow};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;

use dynaburst_engine::store::{
    decode_index_key, decode_store_key, encode_index_key, encode_store_key, size_range_start, Direction, IndexKey,
    IndexSpan, IndexVisit, KeySpan, Storage, StoreError, StoreKey, TableMeta, TableStore, Visit, WriteBatch,
};
use dynaburst_model::Item;
use parking_lot::{Condvar, Mutex, RwLock};
use tokio::sync::watch;

pub use codec::{decode_item, decode_meta, decode_stored, encode_item, encode_meta, encode_stored};

/// The database (fjall's directory) inside the data directory.
pub const DB_DIR: &str = "db";
/// Log files in a data directory (for tests and tools).
pub fn wal_files(dir: &Path) -> std::io::Result<usize> {
    wal::list(dir).map(|files| files.len())
}

/// Spare (retired, kept for reuse) log files in a data directory (for
/// tests and tools).
pub fn spare_wal_files(dir: &Path) -> std::io::Result<usize> {
    wal::list_spares(dir).map(|files| files.len())
}

pub use wal::{MAX_SPARE_LOGS, WAL_ROTATE_BYTES};

/// The lock file inside the data directory.
pub const LOCK_FILE: &str = "LOCK";
/// Default block cache of the database.
pub const DEFAULT_CACHE_BYTES: usize = 256 * 1024 * 1024;
/// Most bytes of encoded writes waiting for the committer; a writer that
/// would pass it waits.
pub const MAX_QUEUED_BYTES: usize = 64 * 1024 * 1024;
/// Most writes one log sync takes (more wait for the next).
pub const MAX_WRITES_PER_SYNC: usize = 64 * 1024;
/// How much the applier thread raises its nice value above the process's
/// (on Linux, of that thread alone). Its work is off the answers' path (the
/// batches are already durable in the log), so it yields the CPU to the
/// request threads and the committer, as RocksDB can lower its background
/// threads' CPU priority (`Env::LowerThreadPoolCPUPriority`); when it falls
/// behind, the bounded overlays make commits wait for it. Measured:
/// docs/storage-engine.md.
pub const APPLIER_NICE: i32 = 10;
/// Most bytes of durable writes waiting to be written into the database
/// file; the committer waits past it.
pub const MAX_BACKLOG_BYTES: usize = 128 * 1024 * 1024;
/// Bytes of batches the applier writes into the database file between
/// durable (synced) states of the database; the commits between are not
/// synced (the log holds their batches until a durable commit does).
/// Log files retire at each durable state: two log files
/// ([`wal::WAL_ROTATE_BYTES`]) apart, the committer finds a spare at
/// nearly every rotation (at 256 MiB, four 64 MiB files apart, it found
/// none at most of them, and recycling gained nothing measurable). fjall
/// syncs its journal whenever it starts a new one anyway: durable states
/// more often cost no measurable rate (docs/storage-engine.md).
pub const DURABLE_APPLY_BYTES: usize = 64 * 1024 * 1024;
/// Bytes of waiting batches the applier writes at once; fewer wait up to
/// [`APPLY_GATHER_WAIT`] for more (see `gather`). Under a bulk load a
/// table's writes of one commit then go into the database as one sorted
/// table of about a memtable's size ([`INGEST_MIN_BYTES`]): as many
/// tables for compaction to merge as fjall's memtables made, without its
/// journal and memtable (measured: docs/storage-engine.md).
pub const APPLY_GATHER_BYTES: usize = 64 * 1024 * 1024;
/// Longest the applier waits for batches to gather (they are in the log
/// already: only the overlay holds them meanwhile). Not when someone
/// waits for the database to hold them (a dropped index).
pub const APPLY_GATHER_WAIT: std::time::Duration = std::time::Duration::from_millis(1000);
/// How long the applier waits for more batches, with none waiting, before
/// it makes the database durable (an idle server's database is up to date on disk).
/// Under load the next batch comes within a log sync, so the applier's
/// commits stay unsynced until [`DURABLE_APPLY_BYTES`].
pub const IDLE_DURABLE_WAIT: std::time::Duration = std::time::Duration::from_millis(100);
/// Default of [`DiskOptions::overlay_bytes`]: most bytes of encoded writes
/// the overlays hold (committed, not yet in the database); a commit that would
/// pass it waits for the applier. Three gathers ([`APPLY_GATHER_BYTES`]):
/// the one being written, the next gathering, and room; the applier stops
/// gathering at half.
pub const MAX_OVERLAY_BYTES: usize = 192 * 1024 * 1024;

/// Bytes all tables' key filters (`filter.rs`) may take together, at 1.5
/// bytes a key: one table's filter, grown by doubling segments, holds up
/// to about 16.7 million keys (24 MiB) within it. A table whose filter
/// would go over loses it (its reads go to the database) before the segment
/// is allocated, and the bytes come back.
pub const KEY_FILTER_BYTES: usize = 32 * 1024 * 1024;

/// Keyspaces of the database (the `DIR/db` directory). `catalog`: table
/// name to [`encode_meta`] value.
const CATALOG: &str = "catalog";
/// The file's own state: the last batch it holds ([`APPLIED_SEQ`]) and
/// its layout ([`FORMAT_KEY`]), each a big-endian u64.
const META: &str = "meta";
const APPLIED_SEQ: &[u8] = b"applied_seq";
/// Each table's item count and the sum of its items' DynamoDB sizes
/// (two big-endian u64), by storage id (big-endian u64), written in the
/// same batch as the items.
const STATS: &str = "stats";
/// Each table's item bytes (big-endian u64) by partition-hash range
/// (storage id, then the range's first hash, `store::size_range_start`,
/// big-endian), written in the same batch as the items: the capacity
/// model's partition sizes after a restart.
const SIZES: &str = "sizes";
/// Each index's entry count and the sum of its entries' DynamoDB sizes
/// (two big-endian u64) by index-partition-hash range: storage id,
/// [`index_prefix`] of the index name, the range's first hash. Written in
/// the same batch as the entries; a row goes when its count reaches 0.
const INDEX_SIZES: &str = "index_sizes";
/// The layout of the database ([`FORMAT`]).
const FORMAT_KEY: &[u8] = b"format";
/// Items in `k{id}` keyspaces under `store::encode_store_key` (bytes that
/// order as the engine orders keys), index entries in `x{id}` keyspaces
/// under [`index_prefix`] and `store::encode_index_key`.
const FORMAT: u64 = 5;
/// The file an older dynaburst kept a data directory's tables in (one
/// redb file): such a directory is refused, with what to do.
pub const OLD_DB_FILE: &str = "dynaburst.redb";

/// The keyspace of the items of the table of storage id `id`.
fn items_keyspace(id: u64) -> String {
    format!("k{id}")
}

/// The keyspace of every index entry of the table of storage id `id`.
fn entries_keyspace(id: u64) -> String {
    format!("x{id}")
}

/// The storage id an item (`k{id}`) or entry (`x{id}`) keyspace belongs
/// to; `None` for the database's other keyspaces.
fn stored_table_id(name: &str) -> Option<u64> {
    name.strip_prefix('k').or_else(|| name.strip_prefix('x'))?.parse().ok()
}

/// What every key of index `index`'s entries (and of its rows in
/// [`INDEX_SIZES`], after the storage id) starts with: the name's length
/// (big-endian u16) and the name, so that no index's keys are a prefix of
/// another's.
fn index_prefix(index: &str) -> Vec<u8> {
    let len = u16::try_from(index.len()).unwrap_or(u16::MAX);
    let mut out = Vec::with_capacity(2 + index.len() + 64);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(index.as_bytes());
    out
}

/// The first key after every key that starts with `prefix` (`None`: no
/// such key, the prefix is all 0xFF).
fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < u8::MAX {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

fn u64_be(bytes: &[u8]) -> u64 {
    bytes.get(..8).and_then(|b| b.try_into().ok()).map_or(0, u64::from_be_bytes)
}

fn pair_be(bytes: &[u8]) -> (u64, u64) {
    (u64_be(bytes), bytes.get(8..).map_or(0, u64_be))
}

fn pair_bytes((a, b): (u64, u64)) -> [u8; 16] {
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&a.to_be_bytes());
    out[8..].copy_from_slice(&b.to_be_bytes());
    out
}

/// A stats or sizes key: storage id, then `rest`.
fn id_key(id: u64, rest: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + rest.len());
    out.extend_from_slice(&id.to_be_bytes());
    out.extend_from_slice(rest);
    out
}

/// The database: fjall's keyspaces, opened once.
struct Files {
    db: fjall::Database,
    catalog: fjall::Keyspace,
    meta: fjall::Keyspace,
    stats: fjall::Keyspace,
    sizes: fjall::Keyspace,
    index_sizes: fjall::Keyspace,
    /// Item and entry keyspaces opened so far, by name.
    tables: Mutex<HashMap<String, fjall::Keyspace>>,
    /// Storage ids of the tables dropped since the process started: their
    /// writes still in the backlog (a write that raced its table's drop)
    /// are not written.
    dropped: Mutex<BTreeSet<u64>>,
    /// The applier's copy of the counts' rows.
    counts: Mutex<CountRows>,
    /// Fewest writes of a keyspace in one commit that are ingested
    /// ([`DiskOptions::ingest_min_bytes`]).
    ingest_min_bytes: usize,
    /// Test hook: the next commit that ingests fails after its ingestions,
    /// before its batch (and its applied mark).
    fail_after_ingest: AtomicBool,
}

/// Most bytes of one keyspace's memtable before fjall writes it out
/// (fjall's default; 16 MiB measured about twice fjall's CPU per item
/// under a bulk load: more, smaller tables to compact).
const MEMTABLE_BYTES: u64 = 64 * 1024 * 1024;
/// fjall's flush and compaction threads. One: with two or more, fjall's
/// first worker hands every compaction request back to the queue and
/// takes it again until another worker is free (fjall 3.1
/// `worker_pool.rs`), which spun half a core of this 2-core machine away
/// under a bulk load (0.52 cores of fjall threads with two, 0.27 with one,
/// at the same rate).
const FJALL_WORKERS: usize = 1;
/// Most bytes of fjall's own journal: past it, the memtables that hold its
/// oldest writes are written out, which bounds all memtables together.
/// 256 MiB and [`L0_TABLES`] 8 (against 64 MiB, fjall's minimum, and its
/// default of 4) measured 69,148 and 71,833 items/s against 62,010 and
/// 64,079 under `loadgen --mode batch` (12 s runs, interleaved): fewer
/// forced writes of half-full memtables and fewer compactions, which on
/// this machine's one fjall worker held up the memtables' writes and
/// stalled the applier.
const JOURNAL_BYTES: u64 = 256 * 1024 * 1024;
/// Tables of level 0 (each a written-out memtable) that start a
/// compaction into level 1.
const L0_TABLES: u8 = 8;
/// Fewest bytes (keys and values) of one keyspace's writes in one of the
/// applier's commits that go in as sorted tables of their own ([`ingest`])
/// rather than through fjall's journal and memtable: half a memtable, so
/// that an ingestion makes a table of about the size a memtable's flush
/// would (smaller ones, many more, would be merged into level 1 as often,
/// each time rewriting it). Only a bulk load's commits are that large
/// ([`APPLY_GATHER_BYTES`]).
pub const INGEST_MIN_BYTES: usize = MEMTABLE_BYTES as usize / 2;
/// Tables of level 0 from which a keyspace's writes go through fjall's
/// batches even when large: fjall slows and halts batches while level 0 is
/// long, and asks its worker for compactions as it does, but not
/// ingestions (each asks for one compaction, which may pick another level).
const INGEST_L0_LIMIT: usize = L0_TABLES as usize + 4;
/// Most removals in one batch when a dropped index's entries are deleted.
const DROP_CHUNK: usize = 64 * 1024;

/// A keyspace's options. Data blocks are LZ4-compressed on every level
/// (fjall's default leaves levels 0 and 1 uncompressed): a bulk load is
/// bound by the disk's writes, which the log's syncs wait behind, not by
/// the CPU that LZ4 takes. Measured (docs/storage-engine.md): a million
/// seed-000 people take 525 MB of disk against 706, with point Queries at
/// the same rate and a Scan within 5% (one run each). A keyspace keeps the
/// options it was created with.
fn keyspace_options() -> fjall::KeyspaceCreateOptions {
    let compaction = fjall::compaction::Leveled::default().with_l0_threshold(L0_TABLES);
    fjall::KeyspaceCreateOptions::default()
        .max_memtable_size(MEMTABLE_BYTES)
        .compaction_strategy(Arc::new(compaction))
        .data_block_compression_policy(fjall::config::CompressionPolicy::all(fjall::CompressionType::Lz4))
}

impl Files {
    fn open(path: &Path, cache_bytes: usize, ingest_min_bytes: usize) -> Result<Files, fjall::Error> {
        let db = fjall::Database::builder(path)
            .cache_size(cache_bytes as u64)
            // The write-ahead log makes batches durable; fjall's journal
            // is synced only when the applier makes the database durable.
            .manual_journal_persist(true)
            .max_journaling_size(JOURNAL_BYTES)
            .worker_threads(FJALL_WORKERS)
            .open()?;
        let ks = |name: &str| db.keyspace(name, keyspace_options);
        Ok(Files {
            catalog: ks(CATALOG)?,
            meta: ks(META)?,
            stats: ks(STATS)?,
            sizes: ks(SIZES)?,
            index_sizes: ks(INDEX_SIZES)?,
            tables: Mutex::new(HashMap::new()),
            dropped: Mutex::new(BTreeSet::new()),
            counts: Mutex::new(CountRows::default()),
            ingest_min_bytes: ingest_min_bytes.max(1),
            fail_after_ingest: AtomicBool::new(false),
            db,
        })
    }

    /// The keyspace `name` (an item or entry keyspace), created when
    /// `create`; `None` when it does not exist and is not to be created.
    fn table(&self, name: &str, create: bool) -> Result<Option<fjall::Keyspace>, fjall::Error> {
        let mut tables = self.tables.lock();
        if let Some(ks) = tables.get(name) {
            return Ok(Some(ks.clone()));
        }
        if !create && !self.db.keyspace_exists(name) {
            return Ok(None);
        }
        let ks = self.db.keyspace(name, keyspace_options)?;
        tables.insert(name.to_string(), ks.clone());
        Ok(Some(ks))
    }

    /// Deletes the keyspace `name` if it exists.
    fn delete(&self, name: &str) -> Result<(), fjall::Error> {
        let cached = self.tables.lock().remove(name);
        let handle = match cached {
            Some(ks) => ks,
            None if self.db.keyspace_exists(name) => self.db.keyspace(name, keyspace_options)?,
            None => return Ok(()),
        };
        self.db.delete_keyspace(handle)
    }

    fn get_u64(&self, key: &[u8]) -> Result<Option<u64>, fjall::Error> {
        Ok(self.meta.get(key)?.map(|v| u64_be(&v)))
    }

    /// Every key of `ks` that starts with `prefix`.
    fn keys_with_prefix(ks: &fjall::Keyspace, prefix: &[u8]) -> Result<Vec<fjall::UserKey>, fjall::Error> {
        ks.prefix(prefix).map(|g| g.key()).collect()
    }
}

/// Why a data directory could not be opened.
#[derive(Debug)]
pub enum OpenError {
    /// Another process holds the directory's lock.
    Locked { dir: PathBuf },
    /// A file of the directory could not be created or opened.
    Io { path: PathBuf, source: std::io::Error },
    /// The database engine refused the data directory's database.
    Database { path: PathBuf, message: String },
    /// A stored table or item does not decode.
    Corrupt(StoreError),
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpenError::Locked { dir } => write!(
                f,
                "data directory {} is in use by another dynaburst server (it holds {}); stop that server or pass another --data-dir",
                dir.display(),
                dir.join(LOCK_FILE).display()
            ),
            OpenError::Io { path, source } => write!(f, "cannot open {}: {source}", path.display()),
            OpenError::Database { path, message } => write!(f, "cannot open database {}: {message}", path.display()),
            OpenError::Corrupt(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for OpenError {}

/// Options of [`DiskStorage::open`].
#[derive(Clone, Debug)]
pub struct DiskOptions {
    /// The database's block cache.
    pub cache_bytes: usize,
    /// Size past which the committer starts a new log file.
    pub wal_rotate_bytes: u64,
    /// Most encoded bytes of writes the overlays hold before commits wait
    /// for the applier.
    pub overlay_bytes: usize,
    /// Most bytes the tables' key filters take together
    /// ([`KEY_FILTER_BYTES`]).
    pub key_filter_bytes: usize,
    /// Fewest writes of one table (items, or index entries) in one of the
    /// applier's commits that go into the database as sorted tables of
    /// their own rather than through its journal and memtable
    /// ([`INGEST_MIN_BYTES`]; tests lower it to ingest every write).
    pub ingest_min_bytes: usize,
}

impl Default for DiskOptions {
    fn default() -> DiskOptions {
        DiskOptions {
            cache_bytes: DEFAULT_CACHE_BYTES,
            wal_rotate_bytes: wal::WAL_ROTATE_BYTES,
            overlay_bytes: MAX_OVERLAY_BYTES,
            key_filter_bytes: KEY_FILTER_BYTES,
            ingest_min_bytes: INGEST_MIN_BYTES,
        }
    }
}

/// One write the committer makes.
pub(crate) enum Record {
    /// An item written: stored key (`store::encode_store_key`) and stored
    /// item.
    Put {
        id: u64,
        key: Vec<u8>,
        /// Shared with the overlay, which holds the write until the database
        /// does, and handed to the database as it is (a `fjall::Slice`: no
        /// copy).
        value: StoredBytes,
        /// The DynamoDB size of the item it replaces (`None`: none), as the
        /// commit read it: the database's counts follow without a read.
        replaced: Option<u64>,
    },
    /// An item deleted.
    Delete {
        id: u64,
        key: Vec<u8>,
        /// As a `Put`'s.
        replaced: Option<u64>,
    },
    /// A table's catalog entry (created or changed).
    Catalog { name: String, value: Vec<u8> },
    /// A table dropped: its entry, its items and its index entries.
    Drop { name: String, id: u64 },
    /// An index entry written: stored index key (`store::encode_index_key`)
    /// and stored projected item.
    IndexPut {
        id: u64,
        index: String,
        key: Vec<u8>,
        /// Shared with the overlay, as a `Put`'s.
        value: StoredBytes,
        /// The DynamoDB size of the entry it replaces, as a `Put`'s.
        replaced: Option<u64>,
    },
    /// An index entry deleted.
    IndexDelete {
        id: u64,
        index: String,
        key: Vec<u8>,
        /// As a `Put`'s.
        replaced: Option<u64>,
    },
    /// Every entry of an index dropped.
    DropIndex { id: u64, index: String },
}

impl Record {
    pub(crate) fn bytes(&self) -> usize {
        match self {
            Record::Put { key, value, .. } => key.len() + value.len(),
            Record::Delete { key, .. } => key.len(),
            Record::Catalog { name, value } => name.len() + value.len(),
            Record::Drop { name, .. } => name.len(),
            Record::IndexPut { index, key, value, .. } => index.len() + key.len() + value.len(),
            Record::IndexDelete { index, key, .. } => index.len() + key.len(),
            Record::DropIndex { index, .. } => index.len(),
        }
    }
}

/// The writes waiting for the committer.
#[derive(Default)]
struct Queue {
    /// Batches in commit order, each with its sequence number.
    batches: VecDeque<(u64, Vec<Record>)>,
    bytes: usize,
    next_seq: u64,
    stop: bool,
}

/// What is on disk: every batch up to `seq`, unless `failed`.
#[derive(Clone, Copy, Debug, Default)]
struct Synced {
    seq: u64,
    failed: bool,
}

/// A table in the catalog.
struct Entry {
    id: u64,
    meta: TableMeta,
    overlay: Arc<Overlay>,
}

/// One table's writes that are committed but not yet in the database, newest
/// per key (`None`: a delete). Readers look here before the database.
#[derive(Default)]
struct Overlay {
    writes: RwLock<BTreeMap<StoreKey, Pending>>,
    /// The same for the table's index entries, by index name.
    index_writes: RwLock<HashMap<String, BTreeMap<IndexKey, Pending>>>,
    /// The table's item keyspace in the database, once it has one (the
    /// applier sets it before it first writes there: a reader that finds
    /// it unset finds every write in `writes`).
    items: OnceLock<fjall::Keyspace>,
    /// The same for its index entries.
    entries: OnceLock<fjall::Keyspace>,
    /// Every item key written to the table since neither the database nor the
    /// overlay held any of its items (a table created by this process, or
    /// empty at start-up): a key it does not hold is in neither, and is not
    /// looked for in the database. `None`: the table held items at start-up,
    /// or its filter went over [`KEY_FILTER_BYTES`].
    filter: RwLock<Option<filter::KeyFilter>>,
    /// Set (under the queue's lock, as the drop is queued) when the table
    /// is dropped: a commit that raced the drop and is queued after it
    /// still queues its batch (which the applier skips, as the drop's) but
    /// puts nothing here, where no prune would find it.
    dropped: AtomicBool,
}

impl Overlay {
    /// An overlay whose table holds no item anywhere yet.
    fn empty_table() -> Overlay {
        Overlay { filter: RwLock::new(Some(filter::KeyFilter::default())), ..Overlay::default() }
    }
}

/// A write on its way into an overlay: the table's overlay, key, stored
/// item (`None` deletes) and encoded bytes.
type OverlayWrite = (Arc<Overlay>, StoreKey, Option<StoredBytes>, usize);

/// An index entry write on its way into an overlay: the table's overlay,
/// index name, entry key, stored entry (`None` deletes) and encoded bytes.
type IndexOverlayWrite = (Arc<Overlay>, String, IndexKey, Option<StoredBytes>, usize);

/// An encoded item or index entry, shared by the log's record, the overlay
/// and the database's write batch (reference-counted, never copied after
/// its encoding).
pub(crate) type StoredBytes = fjall::Slice;

/// A committed write waiting for the applier.
struct Pending {
    /// The item as stored (`codec::encode_stored`, the bytes the log's
    /// record holds, not a copy), decoded when read; `None`: deleted.
    value: Option<StoredBytes>,
    /// The batch that wrote it: the applier removes it once the database holds
    /// that batch (unless a later batch replaced it).
    seq: u64,
    /// Its encoded bytes (what [`MAX_OVERLAY_BYTES`] counts).
    bytes: usize,
}

struct Shared {
    files: Files,
    catalog: Mutex<BTreeMap<String, Entry>>,
    /// Each table's overlay by storage id (the applier's way to them).
    overlays: Mutex<HashMap<u64, Arc<Overlay>>>,
    /// Encoded bytes of every overlay's writes.
    overlay_bytes: AtomicUsize,
    /// Bytes of every overlay's key filter, and their bound
    /// ([`DiskOptions::key_filter_bytes`]).
    filter_bytes: AtomicUsize,
    filter_limit: usize,
    /// Point reads of an item that went to the database (the overlay and the
    /// key filter could not answer them).
    file_reads: AtomicU64,
    /// Their bound ([`DiskOptions::overlay_bytes`]).
    overlay_limit: usize,
    next_id: AtomicU64,
    queue: Mutex<Queue>,
    /// Signalled when a batch is queued or the committer must stop.
    work: Condvar,
    /// Signalled when the committer has taken batches off the queue.
    space: Condvar,
    /// Sequence number of the last batch queued.
    queued: AtomicU64,
    synced: watch::Sender<Synced>,
    poisoned: AtomicBool,
    /// What poisoned the storage (the first failure), which every later
    /// request's error carries.
    failure: Mutex<Option<Failure>>,
    /// Fault injection: the next disk transaction fails.
    fail_next_sync: AtomicBool,
    /// Fault injection: the applier's next write into the database fails.
    fail_next_apply: AtomicBool,
    /// Fault injection: the applier's next write into the database panics.
    panic_next_apply: AtomicBool,
    /// Write-ahead log syncs made so far.
    syncs: AtomicU64,
    /// Retired log files kept for reuse (`wal::retire`), at most
    /// [`wal::MAX_SPARE_LOGS`]: the committer's next files.
    spares: Mutex<Vec<PathBuf>>,
    /// Durable batches the applier has not yet written into the database.
    backlog: Mutex<Backlog>,
    /// Signalled when the backlog has work or the applier must stop.
    apply: Condvar,
    /// Signalled when the applier has taken the backlog.
    applied: Condvar,
}

/// Durable batches (in the log) waiting for the applier.
#[derive(Default)]
struct Backlog {
    batches: Vec<(u64, Vec<Record>)>,
    bytes: usize,
    /// Log files complete (the committer moved on), in order: retired once
    /// their batches are in the database.
    done_files: Vec<u64>,
    stop: bool,
    /// Tests: the applier writes only batches up to this one into the database.
    hold_after: Option<u64>,
    /// The last batch the database holds.
    applied_seq: u64,
    /// The last batch someone waits for the database to hold
    /// (`wait_applied_to`): the applier writes what it has without
    /// gathering more.
    wanted_seq: u64,
}

/// The engine's storage on disk. Open with [`DiskStorage::open`]; hand it
/// to `Engine::open`, and its [`Durability`] to the server.
pub struct DiskStorage {
    shared: Arc<Shared>,
    committer: Mutex<Option<JoinHandle<()>>>,
    applier: Mutex<Option<JoinHandle<()>>>,
    /// Held (locked) for as long as the storage lives.
    _lock: File,
}

/// Lets the server wait until what it answers is on disk.
#[derive(Clone)]
pub struct Durability {
    shared: Arc<Shared>,
}

impl Durability {
    /// Waits until every batch committed so far is on disk. Err when the
    /// storage failed (then every later call fails too).
    pub async fn settle(&self) -> Result<(), StoreError> {
        let target = self.shared.queued.load(Ordering::Acquire);
        let failed = |s: &Synced| if s.failed { Err(self.shared.failed()) } else { Ok(()) };
        let now = *self.shared.synced.borrow();
        if now.failed || now.seq >= target {
            return failed(&now);
        }
        let mut rx = self.shared.synced.subscribe();
        let reached = match rx.wait_for(|s| s.failed || s.seq >= target).await {
            Ok(s) => *s,
            Err(_) => return Err(self.shared.failed()),
        };
        failed(&reached)
    }

    /// Waits until the storage fails, and returns the failure that every
    /// request gets from then on (for the server's log); `None` if the
    /// storage went away without failing.
    pub async fn failure(&self) -> Option<StoreError> {
        let mut rx = self.shared.synced.subscribe();
        let failed = rx.wait_for(|s| s.failed).await.is_ok();
        failed.then(|| self.shared.failed())
    }

    /// Makes the next log write fail as a full disk would (ENOSPC), for
    /// fault-injection tests.
    pub fn fail_next_sync(&self) {
        self.shared.fail_next_sync.store(true, Ordering::SeqCst);
    }

    /// Makes the applier's next write into the database file fail (for
    /// fault-injection tests).
    pub fn fail_next_apply(&self) {
        self.shared.fail_next_apply.store(true, Ordering::SeqCst);
    }

    /// Makes the applier's next commit that ingests a table's writes
    /// fail after the ingestion, before its batch and applied mark are
    /// written (for tests of a crash at that point).
    pub fn fail_after_next_ingest(&self) {
        self.shared.files.fail_after_ingest.store(true, Ordering::SeqCst);
    }

    /// Makes the applier's next write into the database panic (for tests of
    /// what a panic in a storage thread does).
    pub fn panic_next_apply(&self) {
        self.shared.panic_next_apply.store(true, Ordering::SeqCst);
    }
}

/// The first failure that poisoned the storage: the operation and the
/// error, as every later request reports it.
#[derive(Clone, Debug)]
struct Failure {
    operation: &'static str,
    kind: std::io::ErrorKind,
    message: String,
}

impl Failure {
    fn io(operation: &'static str, e: &std::io::Error) -> Failure {
        Failure { operation, kind: e.kind(), message: e.to_string() }
    }

    /// A failure of the database (its I/O error's kind when it is one).
    fn db(operation: &'static str, e: &fjall::Error) -> Failure {
        match e {
            fjall::Error::Io(io) | fjall::Error::Storage(fjall::LsmError::Io(io)) => Failure::io(operation, io),
            other => Failure { operation, kind: std::io::ErrorKind::Other, message: other.to_string() },
        }
    }

    /// What fault injection fails with: a full disk.
    fn injected(operation: &'static str) -> Failure {
        Failure::io(operation, &std::io::Error::from_raw_os_error(ENOSPC))
    }
}

/// The OS error of a full disk (Linux).
const ENOSPC: i32 = 28;

impl Shared {
    /// The error of a request refused because the storage failed.
    fn failed(&self) -> StoreError {
        match self.failure.lock().clone() {
            Some(f) => StoreError::Failed { operation: f.operation, kind: f.kind, cause: f.message },
            // Stopped (closed), not failed.
            None => StoreError::Io { operation: "sync", kind: std::io::ErrorKind::Other },
        }
    }
}

fn db_error(path: &Path, e: impl fmt::Display) -> OpenError {
    OpenError::Database { path: path.to_path_buf(), message: e.to_string() }
}

impl DiskStorage {
    /// Opens (or creates) the database in `dir`, taking its lock, replays
    /// the log into the database, reads the catalog (not the items) and starts
    /// the committer and the applier.
    pub fn open(dir: &Path, options: &DiskOptions) -> Result<DiskStorage, OpenError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| OpenError::Io { path, source }
        };
        // The directories created here, each one's entry synced in its
        // parent: a crash (a power loss) cannot take away a directory whose
        // writes were acknowledged (the files in it are synced with it later).
        let created: Vec<&Path> = dir.ancestors().take_while(|p| !p.as_os_str().is_empty() && !p.exists()).collect();
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        for new in created.iter().rev() {
            // A relative path's first component is in the working directory.
            let parent = new.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            wal::sync_dir(parent).map_err(io(parent))?;
        }
        let lock_path = dir.join(LOCK_FILE);
        let lock = File::options().create(true).truncate(false).write(true).open(&lock_path).map_err(io(&lock_path))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => return Err(OpenError::Locked { dir: dir.to_path_buf() }),
            Err(std::fs::TryLockError::Error(e)) => return Err(OpenError::Io { path: lock_path, source: e }),
        }
        let old = dir.join(OLD_DB_FILE);
        if old.exists() {
            return Err(db_error(
                &old,
                format!(
                    "it was written by an older dynaburst (one redb file; this version keeps a data directory's \
                     tables in {}): dump its tables with the dynaburst that wrote it (`dynaburst dump`) and load \
                     them into a new --data-dir",
                    dir.join(DB_DIR).display()
                ),
            ));
        }
        let path = dir.join(DB_DIR);
        let fresh = !path.exists();
        let files =
            Files::open(&path, options.cache_bytes, options.ingest_min_bytes).map_err(|e| db_error(&path, e))?;
        match files.get_u64(FORMAT_KEY).map_err(|e| db_error(&path, e))? {
            Some(FORMAT) => {}
            None if fresh || files.catalog.is_empty().map_err(|e| db_error(&path, e))? => {
                files.meta.insert(FORMAT_KEY, FORMAT.to_be_bytes()).map_err(|e| db_error(&path, e))?;
                files.db.persist(fjall::PersistMode::SyncAll).map_err(|e| db_error(&path, e))?;
            }
            Some(other) => {
                return Err(db_error(
                    &path,
                    format!(
                        "its layout ({other}) is not this dynaburst's ({FORMAT}): open it with the dynaburst \
                     that wrote it"
                    ),
                ))
            }
            None => return Err(db_error(&path, "it has tables but no layout mark: it was not written by dynaburst")),
        }
        // Spares kept by an earlier run (past MAX_SPARE_LOGS: deleted).
        let found = wal::list_spares(dir).map_err(io(dir))?;
        // Generations go on past the spares' too: a retired file's spare
        // name is its generation's, and must not meet one kept already.
        let spare_generations = found.last().map_or(0, |(g, _)| *g);
        let mut spares: Vec<PathBuf> = found.into_iter().map(|(_, p)| p).collect();
        for extra in spares.split_off(spares.len().min(wal::MAX_SPARE_LOGS)) {
            std::fs::remove_file(&extra).map_err(io(&extra))?;
        }
        let (seq, generation) = replay(&files, dir, &mut spares).map_err(|e| match e {
            LoadError::Store(e) => OpenError::Corrupt(e),
            LoadError::Db(message) => OpenError::Database { path: path.clone(), message },
        })?;
        let generation = generation.max(spare_generations + 1);
        let log = wal::Wal::create(dir, generation, options.wal_rotate_bytes, spares.pop())
            .map_err(io(&wal::path(dir, generation)))?;
        let (catalog, next_id) = load(&files).map_err(|e| match e {
            LoadError::Store(e) => OpenError::Corrupt(e),
            LoadError::Db(message) => OpenError::Database { path: path.clone(), message },
        })?;
        // Past the ids of tables the replay dropped too: their keyspaces are
        // gone, so `load` does not see them, but the applier skips every
        // write to an id it saw dropped (`Files::dropped`).
        let next_id = next_id.max(files.dropped.lock().last().map_or(0, |id| id.saturating_add(1)));
        let overlays = catalog.values().map(|e| (e.id, e.overlay.clone())).collect();
        let shared = Arc::new(Shared {
            files,
            catalog: Mutex::new(catalog),
            overlays: Mutex::new(overlays),
            overlay_bytes: AtomicUsize::new(0),
            filter_bytes: AtomicUsize::new(0),
            filter_limit: options.key_filter_bytes,
            file_reads: AtomicU64::new(0),
            overlay_limit: options.overlay_bytes,
            next_id: AtomicU64::new(next_id),
            queue: Mutex::new(Queue { next_seq: seq, ..Queue::default() }),
            work: Condvar::new(),
            space: Condvar::new(),
            queued: AtomicU64::new(seq),
            synced: watch::Sender::new(Synced { seq, failed: false }),
            poisoned: AtomicBool::new(false),
            failure: Mutex::new(None),
            fail_next_sync: AtomicBool::new(false),
            fail_next_apply: AtomicBool::new(false),
            panic_next_apply: AtomicBool::new(false),
            syncs: AtomicU64::new(0),
            spares: Mutex::new(spares),
            backlog: Mutex::new(Backlog { applied_seq: seq, ..Backlog::default() }),
            apply: Condvar::new(),
            applied: Condvar::new(),
        });
        let committer = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("dynaburst-committer".into())
                .spawn(move || {
                    let _guard = PoisonOnPanic { shared: &shared, thread: "committer" };
                    commit_loop(log, &shared);
                })
                .map_err(io(dir))?
        };
        let applier = {
            let (shared, owned) = (shared.clone(), dir.to_path_buf());
            std::thread::Builder::new()
                .name("dynaburst-applier".into())
                .spawn(move || {
                    let _guard = PoisonOnPanic { shared: &shared, thread: "applier" };
                    apply_loop(&owned, &shared);
                })
                .map_err(io(dir))?
        };
        Ok(DiskStorage {
            shared,
            committer: Mutex::new(Some(committer)),
            applier: Mutex::new(Some(applier)),
            _lock: lock,
        })
    }

    /// The handle the server waits on.
    pub fn durability(&self) -> Durability {
        Durability { shared: self.shared.clone() }
    }

    /// Write-ahead log syncs made since the storage was opened.
    pub fn sync_count(&self) -> u64 {
        self.shared.syncs.load(Ordering::SeqCst)
    }

    /// Tests: holds the applier (`true`: durable batches wait in the
    /// overlays and the log, the database does not change) or lets it go on.
    pub fn hold_applier(&self, hold: bool) {
        let mut b = self.shared.backlog.lock();
        b.hold_after = if hold { Some(b.applied_seq) } else { None };
        drop(b);
        self.shared.apply.notify_all();
    }

    /// Tests: lets a held applier write the batches up to `seq` (a
    /// [`DiskStorage::committed_seq`]) into the database, and waits until it has.
    pub fn apply_until(&self, seq: u64) -> Result<(), StoreError> {
        let mut b = self.shared.backlog.lock();
        if let Some(at) = b.hold_after.as_mut() {
            *at = (*at).max(seq);
        }
        drop(b);
        self.shared.apply.notify_all();
        self.wait_applied_to(seq)
    }

    /// The sequence number of the last batch committed.
    pub fn committed_seq(&self) -> u64 {
        self.shared.queued.load(Ordering::Acquire)
    }

    /// Waits until the database file holds every batch committed so far
    /// (the applier must not be held). Err when the storage failed.
    pub fn wait_applied(&self) -> Result<(), StoreError> {
        self.wait_applied_to(self.committed_seq())
    }

    fn wait_applied_to(&self, target: u64) -> Result<(), StoreError> {
        let mut b = self.shared.backlog.lock();
        if b.applied_seq < target {
            b.wanted_seq = b.wanted_seq.max(target);
            self.shared.apply.notify_all();
        }
        while b.applied_seq < target {
            self.check_healthy()?;
            // Short waits: a failure wakes no one here.
            self.shared.applied.wait_for(&mut b, std::time::Duration::from_millis(20));
        }
        Ok(())
    }

    /// Tests and tools: the indexes whose entries the database holds, as
    /// `i{storage id}/{index name}`, in name order (the database's state:
    /// call [`DiskStorage::wait_applied`] first for the writes committed).
    pub fn stored_indexes(&self) -> Result<Vec<String>, StoreError> {
        let mut names = BTreeSet::new();
        for row in self.shared.files.index_sizes.iter() {
            let key = row.key().map_err(read_failed)?;
            if let Some((id, index)) = index_sizes_key(&key) {
                names.insert(format!("i{id}/{index}"));
            }
        }
        Ok(names.into_iter().collect())
    }

    /// Encoded bytes the overlays hold (committed writes the database lacks).
    pub fn overlay_bytes(&self) -> usize {
        self.shared.overlay_bytes.load(Ordering::SeqCst)
    }

    /// Writes what is queued, stops the committer and waits for it. Later
    /// commits fail. Called on a clean shutdown (and on drop).
    pub fn close(&self) {
        self.shared.queue.lock().stop = true;
        self.shared.work.notify_all();
        if let Some(handle) = self.committer.lock().take() {
            // A panicked committer has nothing left to write.
            let _ = handle.join();
        }
        self.shared.backlog.lock().stop = true;
        self.shared.apply.notify_all();
        if let Some(handle) = self.applier.lock().take() {
            // What a panicked applier did not write is in the log.
            let _ = handle.join();
        }
    }

    /// Queues one batch of writes, waiting while the queue is full.
    fn enqueue(&self, records: Vec<Record>) -> Result<(), StoreError> {
        self.enqueue_with(records, Vec::new(), Vec::new(), None)
    }

    /// Queues one batch of writes and puts `overlay` (each write's table,
    /// key, item and encoded bytes) in the overlays, in one step under the
    /// queue's lock: the applier cannot take the batch before its writes
    /// are there. Waits while the queue or the overlays are full.
    ///
    /// `dropping`: the overlay of a table whose drop `records` holds, marked
    /// dropped in the same step as the drop is queued: a commit queued before
    /// it still enters the overlay (and is read until the drop), one queued
    /// after it puts nothing there (see [`Overlay::dropped`]).
    fn enqueue_with(
        &self,
        records: Vec<Record>,
        overlay: Vec<OverlayWrite>,
        index_overlay: Vec<IndexOverlayWrite>,
        dropping: Option<&Overlay>,
    ) -> Result<(), StoreError> {
        let bytes: usize = records.iter().map(Record::bytes).sum();
        let adds: usize = overlay.iter().map(|w| w.3).sum::<usize>() + index_overlay.iter().map(|w| w.4).sum::<usize>();
        let shared = &self.shared;
        let mut q = shared.queue.lock();
        loop {
            if q.stop || shared.poisoned.load(Ordering::SeqCst) {
                return Err(shared.failed());
            }
            let held = shared.overlay_bytes.load(Ordering::SeqCst);
            let queue_full = !q.batches.is_empty() && q.bytes + bytes > MAX_QUEUED_BYTES;
            let overlay_full = adds > 0 && held > 0 && held + adds > shared.overlay_limit;
            if !queue_full && !overlay_full {
                break;
            }
            shared.space.wait(&mut q);
        }
        if let Some(dropped) = dropping {
            dropped.dropped.store(true, Ordering::SeqCst);
        }
        q.next_seq += 1;
        let seq = q.next_seq;
        // Bytes the overlays gain (each write's) and lose (what it replaced).
        let (mut added, mut replaced) = (0, 0);
        let mut writes = overlay.into_iter().peekable();
        while let Some((table, key, value, bytes)) = writes.next() {
            if table.dropped.load(Ordering::SeqCst) {
                continue;
            }
            // One hold of a table's lock for its run of writes.
            let mut map = table.writes.write();
            let mut next = Some((key, value, bytes));
            while let Some((key, value, bytes)) = next.take() {
                added += bytes;
                replaced += map.insert(key, Pending { value, seq, bytes }).map_or(0, |old| old.bytes);
                next = writes.next_if(|w| Arc::ptr_eq(&w.0, &table)).map(|(_, k, v, b)| (k, v, b));
            }
        }
        for (table, index, key, value, bytes) in index_overlay {
            if table.dropped.load(Ordering::SeqCst) {
                continue;
            }
            let old = table.index_writes.write().entry(index).or_default().insert(key, Pending { value, seq, bytes });
            added += bytes;
            replaced += old.map_or(0, |old| old.bytes);
        }
        shared.overlay_bytes.fetch_add(added, Ordering::SeqCst);
        shared.overlay_bytes.fetch_sub(replaced, Ordering::SeqCst);
        q.bytes += bytes;
        q.batches.push_back((seq, records));
        self.shared.queued.store(seq, Ordering::Release);
        drop(q);
        self.shared.work.notify_one();
        Ok(())
    }

    /// The table's storage id when the database holds all its writes (its
    /// overlay is empty, as at start-up after the replay), else `None`.
    fn settled_id(&self, name: &str) -> Result<Option<u64>, StoreError> {
        match self.shared.catalog.lock().get(name) {
            Some(e)
                if e.overlay.writes.read().is_empty()
                    && e.overlay.index_writes.read().values().all(|m| m.is_empty()) =>
            {
                Ok(Some(e.id))
            }
            Some(_) => Ok(None),
            None => Err(StoreError::NoSuchTable(name.to_string())),
        }
    }

    /// Adds an item key (its [`filter::hashes`]) about to be written to its table's filter (before
    /// the write reaches the overlay, so no read misses it), dropping the
    /// filter when all filters would go over [`KEY_FILTER_BYTES`].
    fn note_key(&self, overlay: &Overlay, hash: (u64, u64)) {
        let mut slot = overlay.filter.write();
        let Some(f) = slot.as_mut() else { return };
        let growth = f.growth_bytes();
        if growth > 0 {
            let before = self.shared.filter_bytes.fetch_add(growth, Ordering::SeqCst);
            if before + growth > self.shared.filter_limit {
                // Over the bound: the filter goes (before its next segment
                // is allocated), and its bytes come back.
                self.shared.filter_bytes.fetch_sub(growth + f.bytes(), Ordering::SeqCst);
                *slot = None;
                return;
            }
        }
        f.insert_hashed(hash);
    }

    /// Bytes all key filters take.
    pub fn key_filter_bytes(&self) -> usize {
        self.shared.filter_bytes.load(Ordering::SeqCst)
    }

    /// Point reads of an item that went to the database so far.
    pub fn file_reads(&self) -> u64 {
        self.shared.file_reads.load(Ordering::Relaxed)
    }

    fn check_healthy(&self) -> Result<(), StoreError> {
        if self.shared.poisoned.load(Ordering::SeqCst) {
            Err(self.shared.failed())
        } else {
            Ok(())
        }
    }
}

impl Drop for DiskStorage {
    fn drop(&mut self) {
        self.close();
    }
}

enum LoadError {
    Store(StoreError),
    Db(String),
}

impl From<StoreError> for LoadError {
    fn from(e: StoreError) -> LoadError {
        LoadError::Store(e)
    }
}

fn db<E: fmt::Display>(e: E) -> LoadError {
    LoadError::Db(e.to_string())
}

/// Writes the batches of the log files left by the last run into the
/// database (those it does not hold yet), then deletes the files.
/// Returns the last sequence number and the next log generation.
fn replay(files: &Files, dir: &Path, spares: &mut Vec<PathBuf>) -> Result<(u64, u64), LoadError> {
    let applied = files.get_u64(APPLIED_SEQ).map_err(self::db)?.unwrap_or(0);
    let list = wal::list(dir).map_err(self::db)?;
    // One file at a time (memory holds one), unsynced: a crash meanwhile
    // leaves the log files in place.
    let mut last = applied;
    for (i, (_, path)) in list.iter().enumerate() {
        let bytes = std::fs::read(path).map_err(self::db)?;
        let (read, tail) = wal::decode(&bytes);
        drop(bytes);
        // Only the newest file can end in a torn frame (a crash mid-append,
        // or the old life of a recycled file the committer had not moved on
        // from): the others end in their end frame (or, never recycled, at
        // the last frame).
        if tail == wal::Tail::Torn && i + 1 < list.len() {
            return Err(StoreError::Corrupt { what: "write-ahead log" }.into());
        }
        let batches: Vec<_> = read.into_iter().filter(|(seq, _)| *seq > last).collect();
        if let Some((seq, _)) = batches.last() {
            last = *seq;
            write_batches(files, None, &batches, false).map_err(self::db)?;
        }
    }
    // Synced before any log file goes, even when nothing was replayed: the
    // journal fjall recovered may hold batches it never synced (a kill
    // during its sync), which only the log files have on stable storage.
    if !list.is_empty() {
        mark_durable(files).map_err(self::db)?;
    }
    for (generation, _) in &list {
        wal::retire(dir, *generation, 0, spares).map_err(self::db)?;
    }
    wal::sync_dir(dir).map_err(self::db)?;
    Ok((last, list.last().map_or(1, |(g, _)| g + 1)))
}

/// Every table of the catalog (not its items: they stay in the
/// database), and the next free id: past every id of the catalog and of
/// every item or entry keyspace. A keyspace, count or size of a storage
/// id the catalog does not hold (a crash between a table's drop and the
/// deletion of its keyspaces) is deleted here.
fn load(files: &Files) -> Result<(BTreeMap<String, Entry>, u64), LoadError> {
    let mut tables = BTreeMap::new();
    let mut next_id = 1;
    let mut ids = BTreeSet::new();
    for row in files.catalog.iter() {
        let (name, value) = row.into_inner().map_err(self::db)?;
        let (id, meta) = decode_meta(&value)?;
        if meta.name.as_bytes() != &*name {
            return Err(StoreError::Corrupt { what: "catalog" }.into());
        }
        next_id = next_id.max(id + 1);
        ids.insert(id);
        let overlay = Overlay::default();
        let mut empty = true;
        if let Some(ks) = files.table(&items_keyspace(id), false).map_err(self::db)? {
            empty = ks.first_key_value().is_none();
            let _ = overlay.items.set(ks);
        }
        if let Some(ks) = files.table(&entries_keyspace(id), false).map_err(self::db)? {
            let _ = overlay.entries.set(ks);
        }
        // The replay is done: the database holds everything; a table
        // without items in it holds none anywhere.
        let overlay = if empty {
            Overlay { filter: RwLock::new(Some(filter::KeyFilter::default())), ..overlay }
        } else {
            overlay
        };
        tables.insert(meta.name.clone(), Entry { id, meta, overlay: Arc::new(overlay) });
    }
    for name in files.db.list_keyspace_names() {
        let Some(id) = stored_table_id(&name) else { continue };
        next_id = next_id.max(id.saturating_add(1));
        if !ids.contains(&id) {
            files.delete(&name).map_err(self::db)?;
        }
    }
    let mut orphans = files.db.batch();
    for ks in [&files.stats, &files.sizes, &files.index_sizes] {
        for row in ks.iter() {
            let key = row.key().map_err(self::db)?;
            if !ids.contains(&u64_be(&key)) {
                orphans.remove(ks, key);
            }
        }
    }
    if !orphans.is_empty() {
        files.counts.lock().clear();
        orphans.commit().map_err(self::db)?;
        files.db.persist(fjall::PersistMode::SyncAll).map_err(self::db)?;
    }
    Ok((tables, next_id))
}

/// The committer: takes every batch waiting (up to [`MAX_WRITES_PER_SYNC`]
/// writes), appends them to the write-ahead log, syncs it once, publishes
/// what is durable and hands the batches to the applier. Ends when asked
/// to and the queue is empty.
fn commit_loop(mut wal: wal::Wal, shared: &Shared) {
    loop {
        let mut taken = Vec::new();
        {
            let mut q = shared.queue.lock();
            while q.batches.is_empty() && !q.stop {
                shared.work.wait(&mut q);
            }
            if q.batches.is_empty() {
                return;
            }
            let mut writes = 0;
            while let Some((_, records)) = q.batches.front() {
                if writes > 0 && writes + records.len() > MAX_WRITES_PER_SYNC {
                    break;
                }
                writes += records.len();
                if let Some(batch) = q.batches.pop_front() {
                    q.bytes -= batch.1.iter().map(Record::bytes).sum::<usize>();
                    taken.push(batch);
                }
            }
        }
        shared.space.notify_all();
        let last = taken.last().map_or(0, |(seq, _)| *seq);
        if shared.poisoned.load(Ordering::SeqCst) {
            // Already failed: the waiting requests' error is set.
            shared.synced.send_modify(|s| s.failed = true);
            continue;
        }
        let written = if shared.fail_next_sync.swap(false, Ordering::SeqCst) {
            Err(Failure::injected("sync"))
        } else {
            wal.append(&taken).map_err(|e| Failure::io("sync", &e))
        };
        if let Err(failure) = written {
            poison(shared, failure);
            continue;
        }
        shared.syncs.fetch_add(1, Ordering::SeqCst);
        shared.synced.send_modify(|s| s.seq = last);
        let bytes: usize = taken.iter().flat_map(|(_, r)| r).map(Record::bytes).sum();
        let mut b = shared.backlog.lock();
        while b.bytes > 0 && b.bytes + bytes > MAX_BACKLOG_BYTES && !shared.poisoned.load(Ordering::SeqCst) {
            shared.applied.wait(&mut b);
        }
        b.bytes += bytes;
        b.batches.extend(taken);
        if wal.bytes >= wal.rotate_bytes {
            let spare = shared.spares.lock().pop();
            match wal.rotate(spare) {
                Ok(done) => b.done_files.push(done),
                Err(e) => {
                    drop(b);
                    poison(shared, Failure::io("log rotation", &e));
                    continue;
                }
            }
        }
        drop(b);
        shared.apply.notify_one();
    }
}

/// Fails the storage when the storage thread holding it unwinds (a panic
/// in the committer or the applier, fjall's included): the requests waiting
/// on that thread, and every request after, get an error instead of
/// waiting for ever.
struct PoisonOnPanic<'a> {
    shared: &'a Shared,
    thread: &'static str,
}

impl Drop for PoisonOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let message = format!("the storage's {} thread panicked", self.thread);
            poison(self.shared, Failure { operation: self.thread, kind: std::io::ErrorKind::Other, message });
        }
    }
}

/// Marks the storage failed (keeping the first failure, which
/// [`Durability::failure`] reports) and wakes everyone who waits on it.
fn poison(shared: &Shared, failure: Failure) {
    {
        let mut first = shared.failure.lock();
        if first.is_none() {
            *first = Some(failure);
        }
    }
    shared.poisoned.store(true, Ordering::SeqCst);
    shared.synced.send_modify(|s| s.failed = true);
    shared.applied.notify_all();
    wake_writers(shared);
}

/// Wakes the writers waiting for room in the queue or the overlays. Taking
/// the queue's lock first means a writer that just found no room is
/// already waiting (no lost wake-up).
fn wake_writers(shared: &Shared) {
    drop(shared.queue.lock());
    shared.space.notify_all();
}

/// Stored keys written, each with the batch that wrote it.
type KeysWritten<'a> = Vec<(u64, &'a [u8])>;

/// Most overlay writes [`prune`] removes under one hold of an overlay's
/// lock: the table's writers wait for it.
const PRUNE_CHUNK: usize = 256;

/// Removes from the overlays the writes of `batches`, which the database now
/// holds, unless a later batch replaced them, and wakes writers waiting
/// for room.
fn prune(shared: &Shared, batches: &[(u64, Vec<Record>)]) {
    let mut by_table: HashMap<u64, KeysWritten<'_>> = HashMap::new();
    let mut by_index: HashMap<(u64, &str), KeysWritten<'_>> = HashMap::new();
    for (seq, records) in batches {
        for record in records {
            match record {
                Record::Put { id, key, .. } | Record::Delete { id, key, .. } => {
                    by_table.entry(*id).or_default().push((*seq, key));
                }
                Record::IndexPut { id, index, key, .. } | Record::IndexDelete { id, index, key, .. } => {
                    by_index.entry((*id, index)).or_default().push((*seq, key));
                }
                _ => {}
            }
        }
    }
    let mut freed = 0;
    for ((id, index), mut writes) in by_index {
        let Some(overlay) = shared.overlays.lock().get(&id).cloned() else { continue };
        // In key order (the encoded keys order as the decoded ones do):
        // each search then follows the one before down the overlay's tree,
        // through nodes still in the cache.
        writes.sort_by(|a, b| a.1.cmp(b.1));
        // Keys were encoded from `IndexKey`s: they decode. Decoded before
        // the overlay's lock, which writers of the table wait for.
        let mut keys = writes.into_iter().filter_map(|(seq, key)| Some((seq, decode_index_key(key).ok()?))).peekable();
        while keys.peek().is_some() {
            let mut indexes = overlay.index_writes.write();
            // A dropped index's overlay went with it.
            let Some(map) = indexes.get_mut(index) else { break };
            freed += prune_chunk(map, keys.by_ref().take(PRUNE_CHUNK));
            if map.is_empty() {
                indexes.remove(index);
            }
        }
    }
    for (id, mut writes) in by_table {
        // A dropped table's overlay went with it.
        let Some(overlay) = shared.overlays.lock().get(&id).cloned() else { continue };
        writes.sort_by(|a, b| a.1.cmp(b.1));
        let mut keys = writes.into_iter().filter_map(|(seq, key)| Some((seq, decode_store_key(key).ok()?))).peekable();
        while keys.peek().is_some() {
            freed += prune_chunk(&mut overlay.writes.write(), keys.by_ref().take(PRUNE_CHUNK));
        }
    }
    if freed > 0 {
        shared.overlay_bytes.fetch_sub(freed, Ordering::SeqCst);
        wake_writers(shared);
    }
}

/// Removes from `map` each of `keys` whose pending write is the one the
/// database now holds (or an older one: the write of batch `seq` or
/// before); returns the bytes freed.
fn prune_chunk<K: Ord>(map: &mut BTreeMap<K, Pending>, keys: impl Iterator<Item = (u64, K)>) -> usize {
    let mut freed = 0;
    for (seq, key) in keys {
        if let std::collections::btree_map::Entry::Occupied(e) = map.entry(key) {
            if e.get().seq <= seq {
                freed += e.remove().bytes;
            }
        }
    }
    freed
}

/// The applier: writes every durable batch the committer handed over into
/// the database file, as many as are waiting in one transaction, and
/// retires the log files the database holds entirely once a durable commit
/// holds them. Ends when asked to and the backlog is empty.
fn apply_loop(dir: &Path, shared: &Shared) {
    lower_priority();
    // Bytes of batches written into the database by commits not yet durable.
    let mut since_durable = 0usize;
    // Completed log files whose batches are all in the database, by commits
    // not yet durable: deleted after the next durable commit.
    let mut applied_files: Vec<u64> = Vec::new();
    // Until when the applier waits for more batches to gather.
    let mut gathering: Option<std::time::Instant> = None;
    loop {
        let (batches, idle) = {
            let mut b = shared.backlog.lock();
            let limit = loop {
                let limit = if b.stop { u64::MAX } else { b.hold_after.unwrap_or(u64::MAX) };
                let ready = b.batches.first().is_some_and(|(seq, _)| *seq <= limit);
                if ready && gather(shared, &b, &mut gathering) {
                    // A few small batches: wait (briefly) for more, so that
                    // one transaction takes many.
                    shared.apply.wait_until(&mut b, gathering.unwrap_or_else(std::time::Instant::now));
                    continue;
                }
                if ready || (b.batches.is_empty() && !b.done_files.is_empty()) {
                    break limit;
                }
                if since_durable > 0 && !shared.poisoned.load(Ordering::SeqCst) {
                    // Nothing to write: make what the database holds durable,
                    // once no batch has come for IDLE_DURABLE_WAIT (under
                    // load the next one comes within a log sync).
                    if b.stop || shared.apply.wait_for(&mut b, IDLE_DURABLE_WAIT).timed_out() {
                        break 0;
                    }
                    continue;
                }
                if b.stop {
                    return;
                }
                shared.apply.wait(&mut b);
            };
            let n = b.batches.iter().take_while(|(seq, _)| *seq <= limit).count();
            let batches: Vec<_> = b.batches.drain(..n).collect();
            b.bytes -= batches.iter().flat_map(|(_, r)| r).map(Record::bytes).sum::<usize>();
            // A completed log file's batches were all handed over before
            // its marker: once every batch before it is in this commit,
            // the database holds them all.
            if b.batches.is_empty() {
                applied_files.append(&mut b.done_files);
            }
            (batches, n == 0)
        };
        shared.applied.notify_all();
        if shared.poisoned.load(Ordering::SeqCst) {
            // The log keeps them; the next start replays it.
            continue;
        }
        let bytes: usize = batches.iter().flat_map(|(_, r)| r).map(Record::bytes).sum();
        since_durable = since_durable.saturating_add(bytes);
        // The file's commit is durable every [`DURABLE_APPLY_BYTES`] and
        // when the backlog ran dry (an idle server's database is up to date on
        // disk); only then do the log files it holds go.
        let durable = since_durable >= DURABLE_APPLY_BYTES || idle;
        if let Some((last, _)) = batches.last() {
            if shared.panic_next_apply.swap(false, Ordering::SeqCst) {
                panic!("injected panic in the applier");
            }
            let written = if shared.fail_next_apply.swap(false, Ordering::SeqCst) {
                Err(Failure::injected("write"))
            } else {
                write_batches(&shared.files, Some(&shared.overlays), &batches, durable)
                    .map_err(|e| Failure::db("write", &e))
            };
            if let Err(failure) = written {
                poison(shared, failure);
                continue;
            }
            prune(shared, &batches);
            shared.backlog.lock().applied_seq = *last;
            shared.applied.notify_all();
        } else if durable && since_durable > 0 {
            if let Err(e) = mark_durable(&shared.files) {
                poison(shared, Failure::db("write", &e));
                continue;
            }
        }
        if !durable {
            continue;
        }
        since_durable = 0;
        // The file holds every batch of these files on disk now: they
        // become spares or go.
        // The committer gets the new spares only once their renames are
        // on disk (see `wal::retire`).
        let files = std::mem::take(&mut applied_files);
        let held = shared.spares.lock().len();
        let mut fresh = Vec::new();
        let retired = files.iter().try_for_each(|g| wal::retire(dir, *g, held, &mut fresh));
        let synced = || if files.is_empty() { Ok(()) } else { wal::sync_dir(dir) };
        match retired.and_then(|()| synced()) {
            Ok(()) => shared.spares.lock().extend(fresh),
            Err(e) => poison(shared, Failure::io("log removal", &e)),
        }
    }
}

/// Lowers the calling thread's CPU priority by [`APPLIER_NICE`] (relative
/// to the nice value it has, at most 19). Linux only, where a nice value
/// belongs to a thread (elsewhere `setpriority` would lower the whole
/// process). Best effort: where it fails the thread keeps its priority.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    if let Ok(nice) = rustix::process::getpriority_process(None) {
        let _ = rustix::process::setpriority_process(None, (nice + APPLIER_NICE).min(19));
    }
}

/// True while the applier should wait for more batches before it writes
/// the waiting ones: they are fewer than [`APPLY_GATHER_BYTES`], nobody
/// waits on them (no stop, no room wanted in the overlays) and the wait
/// that started with them ([`APPLY_GATHER_WAIT`], in `until`) is not over.
/// Each transaction of the database costs about as much whatever it holds (its
/// commit rewrites the path to every page it changed, and checksums it),
/// so single puts, a sync's few writes at a time, would otherwise make one
/// each.
fn gather(shared: &Shared, b: &Backlog, until: &mut Option<std::time::Instant>) -> bool {
    let room_wanted = shared.overlay_bytes.load(Ordering::SeqCst) >= shared.overlay_limit / 2;
    let awaited = b.wanted_seq > b.applied_seq;
    if b.stop || b.hold_after.is_some() || room_wanted || awaited || b.bytes >= APPLY_GATHER_BYTES {
        *until = None;
        return false;
    }
    let now = std::time::Instant::now();
    let deadline = *until.get_or_insert(now + APPLY_GATHER_WAIT);
    if now >= deadline {
        *until = None;
        return false;
    }
    true
}

/// Makes every batch the database holds durable (fjall's journal synced).
fn mark_durable(files: &Files) -> Result<(), fjall::Error> {
    files.db.persist(fjall::PersistMode::SyncAll)
}

/// One keyspace's writes in a commit: stored key to stored value (`None`
/// deletes), the last write of each key.
type KeyWrites<'a> = Vec<(&'a [u8], Option<&'a StoredBytes>)>;

/// Running counts of a commit, by what they count (a table, a table's size
/// range, an index's size range): rows added less removed and bytes added
/// less removed.
type Deltas<K> = HashMap<K, (i64, i64)>;

/// Adds a write's change to `deltas[key]`: a row added when it replaces
/// nothing, removed when a delete replaces one; bytes the new value's less
/// the replaced one's.
fn note_delta<K: std::hash::Hash + Eq>(deltas: &mut Deltas<K>, key: K, value: Option<&[u8]>, replaced: Option<u64>) {
    let count = match (value, replaced) {
        (Some(_), None) => 1,
        (None, Some(_)) => -1,
        _ => 0,
    };
    let bytes = value.map_or(0, stored_bytes) - replaced.map_or(0, |n| i64::try_from(n).unwrap_or(i64::MAX));
    if count != 0 || bytes != 0 {
        let d = deltas.entry(key).or_default();
        (d.0, d.1) = (d.0 + count, d.1 + bytes);
    }
}

/// Most rows [`CountRows`] keeps (about 100 bytes each: a few MB); past
/// it, it starts over empty (its rows are read again from the database as
/// commits need them). 256 tables' size rows, or fewer tables with indexes.
const COUNT_ROWS_MAX: usize = 1 << 16;

/// The applier's copy of the rows of `stats`, `sizes` and `index_sizes` it
/// read or wrote, by keyspace and row key (a size row as `(0, bytes)`).
/// The applier is their only writer, so a commit's new counts start from
/// here instead of a read of the database for each row (a bulk load into
/// a table touches all 256 of its size rows in every commit). A row holds
/// what a read of the database would return (`(0, 0)` for one removed). Emptied
/// whenever the rows change another way (a table's or index's drop, the
/// orphans' removal at start-up) and when a commit fails.
#[derive(Default)]
struct CountRows {
    /// By [`Counts`] (its index).
    rows: [HashMap<Vec<u8>, (u64, u64)>; 3],
}

/// The keyspaces of the counts, as [`CountRows`] keeps their rows.
#[derive(Clone, Copy)]
enum Counts {
    /// [`STATS`]: a table's item count and bytes.
    Stats = 0,
    /// [`SIZES`]: a table's bytes in a size range (held as `(0, bytes)`).
    Sizes = 1,
    /// [`INDEX_SIZES`]: an index's entry count and bytes in a size range.
    IndexSizes = 2,
}

impl CountRows {
    fn clear(&mut self) {
        self.rows.iter_mut().for_each(HashMap::clear);
    }

    /// Row `key` of keyspace `which`, from the copy or else the database;
    /// `(0, 0)` when there is none.
    fn get(&self, files: &Files, which: Counts, key: &[u8]) -> Result<(u64, u64), fjall::Error> {
        if let Some(row) = self.rows[which as usize].get(key) {
            return Ok(*row);
        }
        Ok(match which {
            Counts::Stats => files.stats.get(key)?.map_or((0, 0), |v| pair_be(&v)),
            Counts::Sizes => (0, files.sizes.get(key)?.map_or(0, |v| u64_be(&v))),
            Counts::IndexSizes => files.index_sizes.get(key)?.map_or((0, 0), |v| pair_be(&v)),
        })
    }

    /// Keeps the rows a commit wrote (`(0, 0)`: removed).
    fn keep(&mut self, written: Vec<(Counts, Vec<u8>, (u64, u64))>) {
        if self.rows.iter().map(HashMap::len).sum::<usize>() + written.len() > COUNT_ROWS_MAX {
            self.clear();
        }
        for (which, key, row) in written {
            self.rows[which as usize].insert(key, row);
        }
    }
}

/// A size range's counts key (`range` big-endian after the storage id, and
/// after the index's prefix for an index's range).
fn range_key(id: u64, index: Option<&str>, range: u128) -> Vec<u8> {
    match index {
        Some(index) => id_key(id, &[&index_prefix(index)[..], &range.to_be_bytes()].concat()),
        None => id_key(id, &range.to_be_bytes()),
    }
}

/// Writes `batches` into the database, each group of batches between two
/// drops in one atomic fjall batch that also moves the applied mark to
/// its last batch; a table's or index's drop is a step of its own. Unless
/// `durable`, nothing is synced: a crash takes the database back to a
/// prefix of its batches (fjall's journal is ordered and checksummed), no
/// older than its last durable state, and the log, whose files go only
/// after a durable commit holds them, still has every batch after the
/// applied mark. `overlays` (the server's; none during the replay) learn
/// each keyspace created for them before it is written.
fn write_batches(
    files: &Files,
    overlays: Option<&Mutex<HashMap<u64, Arc<Overlay>>>>,
    batches: &[(u64, Vec<Record>)],
    durable: bool,
) -> Result<(), fjall::Error> {
    let mut start = 0;
    for (i, (seq, records)) in batches.iter().enumerate() {
        let drop = records.iter().any(|r| matches!(r, Record::Drop { .. } | Record::DropIndex { .. }));
        if !drop {
            continue;
        }
        write_group(files, overlays, &batches[start..i])?;
        for record in records {
            match record {
                Record::Drop { name, id } => drop_table(files, name, *id, *seq)?,
                Record::DropIndex { id, index } => drop_index(files, *id, index, *seq)?,
                // A drop's batch holds it alone.
                _ => {}
            }
        }
        start = i + 1;
    }
    write_group(files, overlays, &batches[start..])?;
    if durable {
        mark_durable(files)?;
    }
    Ok(())
}

/// The keyspace of one table (`items` or its entries), created if need be,
/// and told to the table's overlay.
fn table_keyspace(
    files: &Files,
    overlays: Option<&Mutex<HashMap<u64, Arc<Overlay>>>>,
    id: u64,
    items: bool,
) -> Result<fjall::Keyspace, fjall::Error> {
    let name = if items { items_keyspace(id) } else { entries_keyspace(id) };
    let ks = files.table(&name, true)?.ok_or_else(|| fjall::Error::Io(std::io::Error::other("keyspace")))?;
    if let Some(overlay) = overlays.and_then(|o| o.lock().get(&id).cloned()) {
        let cell = if items { &overlay.items } else { &overlay.entries };
        let _ = cell.set(ks.clone());
    }
    Ok(ks)
}

/// Writes `batches` (none of them a drop) in one fjall batch, with the
/// applied mark at the last.
fn write_group(
    files: &Files,
    overlays: Option<&Mutex<HashMap<u64, Arc<Overlay>>>>,
    batches: &[(u64, Vec<Record>)],
) -> Result<(), fjall::Error> {
    let Some((applied, _)) = batches.last() else { return Ok(()) };
    let dropped = files.dropped.lock().clone();
    // Per table, its items' writes in order (the last write of each key
    // is the one written); per table, its entries' (keyed by index prefix
    // and entry key).
    let mut items: BTreeMap<u64, KeyWrites<'_>> = BTreeMap::new();
    let mut entries: BTreeMap<u64, BTreeMap<Vec<u8>, Option<&StoredBytes>>> = BTreeMap::new();
    let mut catalog: BTreeMap<&str, &[u8]> = BTreeMap::new();
    // Stats by storage id; sizes by (id, range); index sizes by (id,
    // index, range).
    let mut stats: Deltas<u64> = Deltas::new();
    let mut sizes: Deltas<(u64, u128)> = Deltas::new();
    let mut index_sizes: Deltas<(u64, &str, u128)> = Deltas::new();
    for record in batches.iter().flat_map(|(_, records)| records) {
        match record {
            Record::Put { id, key, value, replaced } if !dropped.contains(id) => {
                items.entry(*id).or_default().push((key, Some(value)));
                note_delta(&mut stats, *id, Some(value), *replaced);
                note_delta(&mut sizes, (*id, size_range(key)), Some(value), *replaced);
            }
            Record::Delete { id, key, replaced } if !dropped.contains(id) => {
                items.entry(*id).or_default().push((key, None));
                note_delta(&mut stats, *id, None, *replaced);
                note_delta(&mut sizes, (*id, size_range(key)), None, *replaced);
            }
            Record::IndexPut { id, index, key, value, replaced } if !dropped.contains(id) => {
                note_delta(&mut index_sizes, (*id, index.as_str(), size_range(key)), Some(value), *replaced);
                let mut prefix = index_prefix(index);
                prefix.extend_from_slice(key);
                entries.entry(*id).or_default().insert(prefix, Some(value));
            }
            Record::IndexDelete { id, index, key, replaced } if !dropped.contains(id) => {
                note_delta(&mut index_sizes, (*id, index.as_str(), size_range(key)), None, *replaced);
                let mut prefix = index_prefix(index);
                prefix.extend_from_slice(key);
                entries.entry(*id).or_default().insert(prefix, None);
            }
            Record::Catalog { name, value } => {
                catalog.insert(name, value);
            }
            _ => {}
        }
    }
    for writes in items.values_mut() {
        // Stable: a key's writes stay in order, and the last one stays.
        writes.sort_by(|a, b| a.0.cmp(b.0));
        let mut last: Vec<(&[u8], Option<&StoredBytes>)> = Vec::with_capacity(writes.len());
        for w in writes.drain(..) {
            match last.last_mut() {
                Some(l) if l.0 == w.0 => *l = w,
                _ => last.push(w),
            }
        }
        *writes = last;
    }
    let writes: usize =
        items.values().map(Vec::len).sum::<usize>() + entries.values().map(BTreeMap::len).sum::<usize>();
    let mut b = fjall::OwnedWriteBatch::with_capacity(files.db.clone(), writes + 16);
    b.insert(&files.meta, APPLIED_SEQ, applied.to_be_bytes());
    for (name, value) in catalog {
        b.insert(&files.catalog, name, value);
    }
    // A table's writes, many enough, go in as sorted tables of their own
    // before the batch: a crash between leaves them in the database past
    // the applied mark, which the replay writes again to the same values,
    // while the counts, written with the mark, count them once. (An
    // ingestion first writes out the keyspace's memtable, whose writes of
    // earlier commits fjall's journal may not hold synced: after a power
    // loss those are in the database and their commits' marks and counts
    // are not. They are past the last durable mark, so the log still
    // holds them, and the replay covers them the same way.)
    let ingest_here =
        |ks: &fjall::Keyspace, bytes: usize| bytes >= files.ingest_min_bytes && ks.l0_table_count() < INGEST_L0_LIMIT;
    let mut ingested = false;
    for (id, writes) in items {
        let ks = table_keyspace(files, overlays, id, true)?;
        if ingest_here(&ks, write_bytes(writes.iter().copied())) {
            ingest(&ks, writes)?;
            ingested = true;
        } else {
            write_keys(&mut b, &ks, writes);
        }
    }
    for (id, writes) in entries {
        let ks = table_keyspace(files, overlays, id, false)?;
        if ingest_here(&ks, write_bytes(writes.iter().map(|(k, v)| (k.as_slice(), *v)))) {
            ingest(&ks, writes)?;
            ingested = true;
        } else {
            write_keys(&mut b, &ks, writes);
        }
    }
    if ingested && files.fail_after_ingest.swap(false, Ordering::SeqCst) {
        return Err(fjall::Error::Io(std::io::Error::other("injected failure after an ingestion")));
    }
    let mut counts = files.counts.lock();
    let mut written = Vec::with_capacity(stats.len() + sizes.len() + index_sizes.len());
    for (id, (count, bytes)) in stats {
        let key = id.to_be_bytes().to_vec();
        let (c, n) = counts.get(files, Counts::Stats, &key)?;
        let now = (c.saturating_add_signed(count), n.saturating_add_signed(bytes));
        b.insert(&files.stats, &key[..], pair_bytes(now));
        written.push((Counts::Stats, key, now));
    }
    for ((id, range), (_, bytes)) in sizes {
        let key = range_key(id, None, range);
        let now = counts.get(files, Counts::Sizes, &key)?.1.saturating_add_signed(bytes);
        if now == 0 {
            b.remove(&files.sizes, &key[..]);
        } else {
            b.insert(&files.sizes, &key[..], now.to_be_bytes());
        }
        written.push((Counts::Sizes, key, (0, now)));
    }
    for ((id, index, range), (count, bytes)) in index_sizes {
        let key = range_key(id, Some(index), range);
        let (c, n) = counts.get(files, Counts::IndexSizes, &key)?;
        let now = (c.saturating_add_signed(count), n.saturating_add_signed(bytes));
        if now.0 == 0 {
            // Removed: the copy holds what a read would find, nothing (the
            // bytes left over, if the sizes disagreed, go with the row).
            b.remove(&files.index_sizes, &key[..]);
            written.push((Counts::IndexSizes, key, (0, 0)));
        } else {
            b.insert(&files.index_sizes, &key[..], pair_bytes(now));
            written.push((Counts::IndexSizes, key, now));
        }
    }
    match b.commit() {
        Ok(()) => {
            counts.keep(written);
            Ok(())
        }
        Err(e) => {
            counts.clear();
            Err(e)
        }
    }
}

/// Writes `writes` (stored key to stored value, `None` deletes; in key
/// order, one write a key) into keyspace `ks` as sorted tables of their own
/// (fjall's ingestion: no journal, no memtable; the tables are synced and
/// registered when it returns).
fn ingest<'a, K: AsRef<[u8]>>(
    ks: &fjall::Keyspace,
    writes: impl IntoIterator<Item = (K, Option<&'a StoredBytes>)>,
) -> Result<(), fjall::Error> {
    let mut ingestion = ks.start_ingestion()?;
    for (key, value) in writes {
        match value {
            Some(v) => ingestion.write(key.as_ref(), v.clone())?,
            None => ingestion.write_tombstone(key.as_ref())?,
        }
    }
    ingestion.finish()
}

/// The overlay of the table of slot `slot` of a commit. A store whose
/// table is no longer in the catalog (a write that raced DeleteTable: it
/// found the table before the drop) gets `NoSuchTable`, which the engine
/// answers as DynamoDB does a table that is gone; a slot without a store
/// is the caller's mistake (`BadBatch`).
fn slot_overlay<'a>(
    overlays: &'a [Option<Arc<Overlay>>],
    stores: &[&mut dyn TableStore],
    slot: usize,
) -> Result<&'a Arc<Overlay>, StoreError> {
    match (stores.get(slot), overlays.get(slot)) {
        (Some(_), Some(Some(overlay))) => Ok(overlay),
        (Some(store), Some(None)) if store.storage_id().is_some() => Err(StoreError::NoSuchTable(String::new())),
        _ => Err(StoreError::BadBatch { slot }),
    }
}

/// Bytes of `writes`' keys and values.
fn write_bytes<'a>(writes: impl Iterator<Item = (&'a [u8], Option<&'a StoredBytes>)>) -> usize {
    writes.map(|(k, v)| k.len() + v.map_or(0, |v| v.len())).sum()
}

/// Adds `writes` (stored key to stored value, `None` deletes) of keyspace
/// `ks` to `b`.
fn write_keys<'a, K: AsRef<[u8]>>(
    b: &mut fjall::OwnedWriteBatch,
    ks: &fjall::Keyspace,
    writes: impl IntoIterator<Item = (K, Option<&'a StoredBytes>)>,
) {
    for (key, value) in writes {
        match value {
            Some(v) => b.insert(ks, key.as_ref(), v.clone()),
            None => b.remove(ks, key.as_ref()),
        }
    }
}

/// Drops the table of storage id `id` (batch `seq`): its catalog entry,
/// counts and sizes in one batch with the applied mark, then its
/// keyspaces (a crash between leaves them to `load`, which deletes what
/// the catalog does not hold).
fn drop_table(files: &Files, name: &str, id: u64, seq: u64) -> Result<(), fjall::Error> {
    files.dropped.lock().insert(id);
    files.counts.lock().clear();
    let mut b = files.db.batch();
    b.insert(&files.meta, APPLIED_SEQ, seq.to_be_bytes());
    b.remove(&files.catalog, name);
    b.remove(&files.stats, id.to_be_bytes());
    for ks in [&files.sizes, &files.index_sizes] {
        for key in Files::keys_with_prefix(ks, &id.to_be_bytes())? {
            b.remove(ks, key);
        }
    }
    b.commit()?;
    files.delete(&items_keyspace(id))?;
    files.delete(&entries_keyspace(id))
}

/// Drops every entry of index `index` of the table of storage id `id`
/// (batch `seq`), and its sizes, in batches of at most [`DROP_CHUNK`]
/// removals; the last moves the applied mark (a crash before it drops the
/// rest again at the replay).
fn drop_index(files: &Files, id: u64, index: &str, seq: u64) -> Result<(), fjall::Error> {
    files.counts.lock().clear();
    let prefix = index_prefix(index);
    let mut b = files.db.batch();
    if let Some(ks) = files.table(&entries_keyspace(id), false)? {
        // The applier is the only writer, and it removes only keys the
        // iterator has passed.
        for row in ks.prefix(&prefix) {
            b.remove(&ks, row.key()?);
            if b.len() >= DROP_CHUNK {
                std::mem::replace(&mut b, files.db.batch()).commit()?;
            }
        }
    }
    for key in Files::keys_with_prefix(&files.index_sizes, &id_key(id, &prefix))? {
        b.remove(&files.index_sizes, key);
    }
    b.insert(&files.meta, APPLIED_SEQ, seq.to_be_bytes());
    b.commit()
}

/// Stored values begin with their size (they were encoded by
/// `encode_stored`); one that does not counts as nothing.
fn stored_bytes(v: &[u8]) -> i64 {
    codec::stored_size(v).map_or(0, |n| n as i64)
}

/// The size range (`store::size_range_start`) of a stored key (an item's
/// or an index entry's): its hash comes first, big-endian.
fn size_range(key: &[u8]) -> u128 {
    let mut hash = [0u8; 16];
    if let Some(bytes) = key.get(..hash.len()) {
        hash.copy_from_slice(bytes);
    }
    size_range_start(u128::from_be_bytes(hash))
}

/// The storage id and index name of an [`INDEX_SIZES`] key.
fn index_sizes_key(key: &[u8]) -> Option<(u64, String)> {
    let len = usize::from(u16::from_be_bytes(key.get(8..10)?.try_into().ok()?));
    let name = std::str::from_utf8(key.get(10..10 + len)?).ok()?;
    Some((u64_be(key), name.to_string()))
}

/// One table's items: the database's, under the table's overlay.
struct DiskTable {
    id: u64,
    overlay: Arc<Overlay>,
    shared: Arc<Shared>,
}

fn read_failed<E>(_: E) -> StoreError {
    StoreError::Io { operation: "read", kind: std::io::ErrorKind::Other }
}

/// Longest key fjall takes (its keys' length is a u16); a longer one
/// panics in it.
const MAX_KEY_BYTES: usize = u16::MAX as usize;

/// A range bound fjall takes: cut to [`MAX_KEY_BYTES`]. Every stored key is
/// far shorter (the engine refuses key values past DynamoDB's limits), so
/// a stored key compares with the cut bound as with the whole one: it
/// differs from both within its own length, or is a prefix of both and
/// below both. (A Query's key condition is not held to those limits: a
/// 70 KB partition key value in one must find nothing, not panic.)
fn bound_bytes(mut bytes: Vec<u8>) -> Vec<u8> {
    bytes.truncate(MAX_KEY_BYTES);
    bytes
}

/// True when `(start, end)` holds no key (inverted or empty), which
/// `BTreeMap::range` would panic on.
fn holds_nothing<K: Ord>(start: Bound<&K>, end: Bound<&K>) -> bool {
    match (start, end) {
        (Bound::Included(s), Bound::Included(e)) => s > e,
        (Bound::Included(s) | Bound::Excluded(s), Bound::Included(e) | Bound::Excluded(e)) => s >= e,
        _ => false,
    }
}

impl TableStore for DiskTable {
    fn get(&self, key: &StoreKey) -> Result<Option<Arc<Item>>, StoreError> {
        let bytes = encode_store_key(key);
        if bytes.len() > MAX_KEY_BYTES {
            // Longer than any key fjall holds (the engine refuses key values
            // past DynamoDB's limits when it writes them).
            return Ok(None);
        }
        if self.overlay.filter.read().as_ref().is_some_and(|f| !f.may_hold(&bytes)) {
            // Never written since the table held no item: in neither the
            // overlay (a key enters the filter before it) nor the database.
            return Ok(None);
        }
        if let Some(p) = self.overlay.writes.read().get(key) {
            return p.item();
        }
        // Looked at after the overlay: a write the applier removed from it
        // since is in the keyspace, which it set before writing there.
        let Some(ks) = self.overlay.items.get() else { return Ok(None) };
        self.shared.file_reads.fetch_add(1, Ordering::Relaxed);
        match ks.get(&bytes).map_err(read_failed)? {
            Some(v) => Ok(Some(Arc::new(decode_stored(&v)?))),
            None => Ok(None),
        }
    }

    /// Refused: [`DiskStorage::commit`] writes through the log and the
    /// overlay, never through a store.
    fn write(&mut self, _key: StoreKey, _item: Option<Arc<Item>>) -> Result<Option<Arc<Item>>, StoreError> {
        Err(StoreError::Io { operation: "write", kind: std::io::ErrorKind::Unsupported })
    }

    /// Walks the overlay and the database together in key order; the overlay's
    /// write wins over the database's item under the same key, and its deletes
    /// hide them. The overlay stays read-locked during the walk, so the
    /// applier removes nothing from it meanwhile.
    fn range(&self, (start, end): KeySpan<'_>, direction: Direction, visit: Visit<'_>) -> Result<(), StoreError> {
        if holds_nothing(start, end) {
            return Ok(());
        }
        let overlay = self.overlay.writes.read();
        let pending = overlay.range::<StoreKey, _>((start, end));
        let Some(ks) = self.overlay.items.get() else {
            return walk(pending, direction, visit);
        };
        let (lo, hi) = (start.map(|k| bound_bytes(encode_store_key(k))), end.map(|k| bound_bytes(encode_store_key(k))));
        let decode = |row: fjall::Guard| {
            let (k, v) = row.into_inner().map_err(read_failed)?;
            Ok((decode_store_key(&k)?, v))
        };
        merge_walk(pending, ks.range((lo, hi)), decode, direction, visit)
    }

    fn holds_items_in_memory(&self) -> bool {
        false
    }

    fn storage_id(&self) -> Option<u64> {
        Some(self.id)
    }

    fn stores_index_entries(&self) -> bool {
        true
    }

    /// Walks the index's overlay and its table in the database together, as
    /// `range` walks the items.
    fn index_range(
        &self,
        index: &str,
        (start, end): IndexSpan<'_>,
        dir: Direction,
        visit: IndexVisit<'_>,
    ) -> Result<(), StoreError> {
        if holds_nothing(start, end) {
            return Ok(());
        }
        let overlay = self.overlay.index_writes.read();
        let none = BTreeMap::new();
        let pending = overlay.get(index).unwrap_or(&none).range::<IndexKey, _>((start, end));
        let Some(ks) = self.overlay.entries.get() else {
            return walk(pending, dir, visit);
        };
        let prefix = index_prefix(index);
        let bound = |b: Bound<&IndexKey>| b.map(|k| bound_bytes([&prefix[..], &encode_index_key(k)].concat()));
        let lo = match bound(start) {
            Bound::Unbounded => Bound::Included(prefix.clone()),
            b => b,
        };
        let hi = match bound(end) {
            Bound::Unbounded => prefix_end(&prefix).map_or(Bound::Unbounded, Bound::Excluded),
            b => b,
        };
        let decode = |row: fjall::Guard| {
            let (k, v) = row.into_inner().map_err(read_failed)?;
            let key = k.get(prefix.len()..).ok_or(StoreError::Corrupt { what: "index key" })?;
            Ok((decode_index_key(key)?, v))
        };
        merge_walk(pending, ks.range((lo, hi)), decode, dir, visit)
    }
}

impl Pending {
    /// The item written (`None`: deleted).
    fn item(&self) -> Result<Option<Arc<Item>>, StoreError> {
        self.value.as_deref().map(|v| decode_stored(v).map(Arc::new)).transpose()
    }

    /// Visits the item written, if any.
    fn visit<K>(&self, key: &K, visit: KeyVisit<'_, K>) -> Result<ControlFlow<()>, StoreError> {
        Ok(match self.item()? {
            Some(item) => visit(key, &item),
            None => ControlFlow::Continue(()),
        })
    }
}

/// A visitor over stored items (or index entries) under keys of type `K`.
type KeyVisit<'a, K> = &'a mut dyn FnMut(&K, &Arc<Item>) -> ControlFlow<()>;

/// Visits overlay items alone (the database has no table yet).
fn walk<'a, K: 'a>(
    pending: impl DoubleEndedIterator<Item = (&'a K, &'a Pending)>,
    direction: Direction,
    visit: KeyVisit<'_, K>,
) -> Result<(), StoreError> {
    let mut each = |(k, p): (&K, &Pending)| p.visit(k, &mut *visit).map(|flow| flow.is_break());
    match direction {
        Direction::Forward => {
            for entry in pending {
                if each(entry)? {
                    break;
                }
            }
        }
        Direction::Backward => {
            for entry in pending.rev() {
                if each(entry)? {
                    break;
                }
            }
        }
    }
    Ok(())
}

/// A row of the database with its key decoded (the stored value not yet).
type Row<K> = Result<(K, fjall::UserValue), StoreError>;

/// Merges overlay writes and file rows that both come in walk order
/// (`first` is how a key that comes first compares with a later one).
fn merge<'a, K: Ord + 'a>(
    pending: impl Iterator<Item = (&'a K, &'a Pending)>,
    rows: impl Iterator<Item = Row<K>>,
    first: std::cmp::Ordering,
    visit: KeyVisit<'_, K>,
) -> Result<(), StoreError> {
    let mut pending = pending.peekable();
    for row in rows {
        let (key, v) = row?;
        // Overlay writes up to this key first.
        while let Some((pk, p)) = pending.next_if(|(pk, _)| (*pk).cmp(&key) == first) {
            if p.visit(pk, &mut *visit)?.is_break() {
                return Ok(());
            }
        }
        if let Some((pk, p)) = pending.next_if(|(pk, _)| **pk == key) {
            // The overlay's write replaces (or deletes) the database's item.
            if p.visit(pk, &mut *visit)?.is_break() {
                return Ok(());
            }
            continue;
        }
        let item = Arc::new(decode_stored(&v)?);
        if visit(&key, &item).is_break() {
            return Ok(());
        }
    }
    for (pk, p) in pending {
        if p.visit(pk, &mut *visit)?.is_break() {
            return Ok(());
        }
    }
    Ok(())
}

/// Walks `pending` (an overlay's writes in the walk's span) and `rows` (the
/// file's, in the same span, in key order) together in `direction`.
fn merge_walk<'a, K: Ord + 'a, R>(
    pending: impl DoubleEndedIterator<Item = (&'a K, &'a Pending)>,
    rows: R,
    decode: impl Fn(R::Item) -> Row<K>,
    direction: Direction,
    visit: KeyVisit<'_, K>,
) -> Result<(), StoreError>
where
    R: DoubleEndedIterator,
{
    match direction {
        Direction::Forward => merge(pending, rows.map(decode), std::cmp::Ordering::Less, visit),
        Direction::Backward => merge(pending.rev(), rows.rev().map(decode), std::cmp::Ordering::Greater, visit),
    }
}

impl Storage for DiskStorage {
    fn create_table(&self, meta: &TableMeta) -> Result<Box<dyn TableStore>, StoreError> {
        self.check_healthy()?;
        let mut catalog = self.shared.catalog.lock();
        if catalog.contains_key(&meta.name) {
            return Err(StoreError::TableExists(meta.name.clone()));
        }
        let id = self.shared.next_id.fetch_add(1, Ordering::SeqCst);
        self.enqueue(vec![Record::Catalog { name: meta.name.clone(), value: encode_meta(id, meta) }])?;
        let overlay = Arc::new(Overlay::empty_table());
        self.shared.overlays.lock().insert(id, overlay.clone());
        catalog.insert(meta.name.clone(), Entry { id, meta: meta.clone(), overlay: overlay.clone() });
        Ok(Box::new(DiskTable { id, overlay, shared: self.shared.clone() }))
    }

    fn open_table(&self, name: &str) -> Result<Box<dyn TableStore>, StoreError> {
        match self.shared.catalog.lock().get(name) {
            Some(e) => Ok(Box::new(DiskTable { id: e.id, overlay: e.overlay.clone(), shared: self.shared.clone() })),
            None => Err(StoreError::NoSuchTable(name.to_string())),
        }
    }

    fn list_tables(&self) -> Result<Vec<TableMeta>, StoreError> {
        Ok(self.shared.catalog.lock().values().map(|e| e.meta.clone()).collect())
    }

    fn save_table_meta(&self, meta: &TableMeta) -> Result<(), StoreError> {
        self.check_healthy()?;
        let mut catalog = self.shared.catalog.lock();
        let Some(entry) = catalog.get_mut(&meta.name) else { return Err(StoreError::NoSuchTable(meta.name.clone())) };
        self.enqueue(vec![Record::Catalog { name: meta.name.clone(), value: encode_meta(entry.id, meta) }])?;
        entry.meta = meta.clone();
        Ok(())
    }

    /// The counts in the database, when the table's overlay is empty (at
    /// start-up, after the replay, it is); otherwise `None`.
    fn table_stats(&self, name: &str) -> Result<Option<(u64, u64)>, StoreError> {
        let Some(id) = self.settled_id(name)? else { return Ok(None) };
        let row = self.shared.files.stats.get(id.to_be_bytes()).map_err(read_failed)?;
        Ok(Some(row.map_or((0, 0), |v| pair_be(&v))))
    }

    /// The sizes in the database, when the table's overlay is empty (at
    /// start-up, after the replay, it is); otherwise `None`.
    fn table_sizes(&self, name: &str) -> Result<Option<Vec<(u128, u64)>>, StoreError> {
        let Some(id) = self.settled_id(name)? else { return Ok(None) };
        let mut out = Vec::new();
        for row in self.shared.files.sizes.prefix(id.to_be_bytes()) {
            let (k, v) = row.into_inner().map_err(read_failed)?;
            let range = k.get(8..24).and_then(|b| b.try_into().ok()).map(u128::from_be_bytes);
            out.push((range.ok_or(StoreError::Corrupt { what: "sizes" })?, u64_be(&v)));
        }
        Ok(Some(out))
    }

    /// The sizes in the database, when the table's overlay is empty (at
    /// start-up, after the replay, it is); otherwise `None`.
    fn index_sizes(
        &self,
        name: &str,
        index: &str,
    ) -> Result<Option<Vec<dynaburst_engine::store::IndexRange>>, StoreError> {
        let Some(id) = self.settled_id(name)? else { return Ok(None) };
        let prefix = id_key(id, &index_prefix(index));
        let mut out = Vec::new();
        for row in self.shared.files.index_sizes.prefix(&prefix) {
            let (k, v) = row.into_inner().map_err(read_failed)?;
            let range = k.get(prefix.len()..).and_then(|b| b.try_into().ok()).map(u128::from_be_bytes);
            let (entries, bytes) = pair_be(&v);
            out.push((range.ok_or(StoreError::Corrupt { what: "index sizes" })?, entries, bytes));
        }
        Ok(Some(out))
    }

    /// The indexes of the table whose entries the database holds, and the
    /// indexes its overlay holds entries of.
    fn stored_index_names(&self, name: &str) -> Result<Vec<String>, StoreError> {
        let (id, pending) = {
            let catalog = self.shared.catalog.lock();
            let Some(e) = catalog.get(name) else { return Err(StoreError::NoSuchTable(name.to_string())) };
            let pending: Vec<String> = e.overlay.index_writes.read().keys().cloned().collect();
            (e.id, pending)
        };
        let mut names: BTreeSet<String> = pending.into_iter().collect();
        for row in self.shared.files.index_sizes.prefix(id.to_be_bytes()) {
            let key = row.key().map_err(read_failed)?;
            if let Some((_, index)) = index_sizes_key(&key) {
                names.insert(index);
            }
        }
        Ok(names.into_iter().collect())
    }

    /// Queues the drop, forgets the index's overlay, and waits until the
    /// file has dropped its entries (so that no later read merges them
    /// with the entries of a new index of the same name; a held applier
    /// is let go that far).
    fn drop_index(&self, name: &str, index: &str) -> Result<(), StoreError> {
        self.check_healthy()?;
        {
            let catalog = self.shared.catalog.lock();
            let Some(e) = catalog.get(name) else { return Err(StoreError::NoSuchTable(name.to_string())) };
            self.enqueue(vec![Record::DropIndex { id: e.id, index: index.to_string() }])?;
            let pending = e.overlay.index_writes.write().remove(index);
            let freed: usize = pending.map_or(0, |m| m.values().map(|p| p.bytes).sum());
            self.shared.overlay_bytes.fetch_sub(freed, Ordering::SeqCst);
        }
        wake_writers(&self.shared);
        self.apply_until(self.committed_seq())
    }

    fn drop_table(&self, name: &str) -> Result<(), StoreError> {
        self.check_healthy()?;
        let mut catalog = self.shared.catalog.lock();
        let Some(entry) = catalog.get(name) else { return Err(StoreError::NoSuchTable(name.to_string())) };
        // Once the drop is queued no commit puts writes in its overlay: those
        // already there are taken below, so none stays counted in
        // `overlay_bytes`.
        self.enqueue_with(
            vec![Record::Drop { name: name.to_string(), id: entry.id }],
            Vec::new(),
            Vec::new(),
            Some(&entry.overlay),
        )?;
        // Its overlay's writes will never be read: give their room back.
        if let Some(overlay) = self.shared.overlays.lock().remove(&entry.id) {
            if let Some(f) = overlay.filter.write().take() {
                self.shared.filter_bytes.fetch_sub(f.bytes(), Ordering::SeqCst);
            }
            let indexes = std::mem::take(&mut *overlay.index_writes.write());
            let freed: usize = std::mem::take(&mut *overlay.writes.write()).values().map(|p| p.bytes).sum::<usize>()
                + indexes.values().flat_map(|m| m.values()).map(|p| p.bytes).sum::<usize>();
            self.shared.overlay_bytes.fetch_sub(freed, Ordering::SeqCst);
            wake_writers(&self.shared);
        }
        catalog.remove(name);
        Ok(())
    }

    fn commit(
        &self,
        batch: WriteBatch,
        stores: &mut [&mut dyn TableStore],
    ) -> Result<Vec<Option<Arc<Item>>>, StoreError> {
        self.check_healthy()?;
        // Encode and read first: a batch that cannot be written, or whose
        // replaced items cannot be read, changes nothing.
        let overlays: Vec<Option<Arc<Overlay>>> = {
            let map = self.shared.overlays.lock();
            stores.iter().map(|s| s.storage_id().and_then(|id| map.get(&id).cloned())).collect()
        };
        let mut records = Vec::with_capacity(batch.len());
        let mut writes: Vec<OverlayWrite> = Vec::with_capacity(batch.len());
        let mut replaced: Vec<Option<Arc<Item>>> = Vec::with_capacity(batch.len());
        for m in batch.mutations {
            let bad = StoreError::BadBatch { slot: m.table };
            let overlay = slot_overlay(&overlays, stores, m.table)?;
            let store = stores.get(m.table).ok_or(bad.clone())?;
            let id = store.storage_id().ok_or(bad)?;
            let key = encode_store_key(&m.key);
            let hash = filter::hashes(&key);
            let value: Option<StoredBytes> = m.item.as_deref().map(|item| encode_stored(item).into());
            // A key written earlier in this batch replaced what that write put.
            let earlier = writes.iter().rev().find(|w: &&OverlayWrite| Arc::ptr_eq(&w.0, overlay) && w.1 == m.key);
            let (old, old_size) = match earlier {
                Some(w) => match w.2.as_deref() {
                    Some(v) => (Some(Arc::new(decode_stored(v)?)), Some(codec::stored_size(v)?)),
                    None => (None, None),
                },
                None => {
                    // Not in the filter: never written since the table held
                    // no item (see `DiskTable::get`), so nothing to read.
                    let absent = overlay.filter.read().as_ref().is_some_and(|f| !f.may_hold_hashed(hash));
                    let old = if absent { None } else { store.get(&m.key)? };
                    let size = old.as_deref().map(|item| dynaburst_model::item_size(item) as u64);
                    (old, size)
                }
            };
            replaced.push(old);
            // Into the filter after the read above, which it spares.
            if value.is_some() {
                self.note_key(overlay, hash);
            }
            let record = match &value {
                Some(value) => Record::Put { id, key, value: value.clone(), replaced: old_size },
                None => Record::Delete { id, key, replaced: old_size },
            };
            writes.push((overlay.clone(), m.key, value, record.bytes()));
            records.push(record);
        }
        let mut index_writes: Vec<IndexOverlayWrite> = Vec::with_capacity(batch.index_writes.len());
        for w in batch.index_writes {
            let bad = StoreError::BadBatch { slot: w.table };
            let overlay = slot_overlay(&overlays, stores, w.table)?;
            let store = stores.get(w.table).ok_or(bad.clone())?;
            let id = store.storage_id().ok_or(bad)?;
            let key = encode_index_key(&w.key);
            let value: Option<StoredBytes> = w.entry.as_deref().map(|entry| encode_stored(entry).into());
            let replaced = w.replaced;
            let record = match &value {
                Some(value) => Record::IndexPut { id, index: w.index.clone(), key, value: value.clone(), replaced },
                None => Record::IndexDelete { id, index: w.index.clone(), key, replaced },
            };
            index_writes.push((overlay.clone(), w.index, w.key, value, record.bytes()));
            records.push(record);
        }
        // The engine holds every table lock of the batch: batches on a table
        // are queued (and enter the overlay) in the order they were made.
        self.enqueue_with(records, writes, index_writes, None)?;
        Ok(replaced)
    }
}
