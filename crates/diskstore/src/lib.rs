//! Durable storage for `dynaburst serve --data-dir DIR`: the engine's
//! [`Storage`] seam on disk, as a write-ahead log (`DIR/wal-*`, `wal.rs`)
//! in front of one redb database file (`DIR/dynaburst.redb`;
//! docs/storage-engine.md says why redb).
//!
//! Layout of the file: a `catalog` table maps each table name to its storage
//! id and its [`TableMeta`] (every setting; `codec.rs`); table `k{id}` holds
//! its items, stored key bytes (partition hash first) to stored item bytes
//! (DynamoDB size first), ordered as the engine orders keys ([`ItemKey`]);
//! `stats` holds each table's item count and bytes, and `sizes` its bytes
//! by partition-hash range (the capacity model's partition sizes after a
//! restart), both updated in the same transaction as its items; table
//! `i{id}/{index}` holds the entries of one secondary index of table `id`,
//! stored index key (`store::encode_index_key`, bytes in the engine's
//! index-key order) to stored projected item, and `index_sizes` each
//! index's entry count and bytes by index-partition-hash range (its
//! counts, and its GSI's partition sizes after a restart), both written in the same transaction as
//! the items whose writes they follow (the engine puts the entry writes
//! in the items' batch, so they share its log frame too: after any crash
//! items and entries agree); `meta`
//! holds the sequence number of the last batch the file holds and the
//! layout version ([`FORMAT`]; a file of the layout before `sizes` gets
//! them measured once, at open, and one of the layout before index tables
//! gets its index entries built from its items once, at open, after the
//! replay). A dropped table's id is never reused; a dropped table or
//! index (`Storage::drop_index`) takes its index tables with it.
//!
//! **Write path and group commit.** [`Storage::commit`] reads what each
//! write replaces, then queues the batch's encoded writes with a sequence
//! number and, in the same step, puts them in the tables' overlays (under
//! the engine's table locks, so readers never see half of a batch). The
//! committer thread takes every batch waiting, appends
//! them to the log and syncs once: concurrent writers share a sync, and a
//! batch is one checksummed frame, whole or (torn by a crash) ignored, so
//! a transaction is all or nothing. The applier thread then writes the
//! durable batches into the redb file in large transactions (each table's
//! writes in key order; a few small batches wait up to
//! [`APPLY_GATHER_WAIT`] for more), off the answer's path. Those transactions are not
//! synced (the log already made their batches durable) except every
//! [`DURABLE_APPLY_BYTES`] and when no batch has come for
//! [`IDLE_DURABLE_WAIT`]; after such a synced commit the applier deletes
//! the log files the file holds entirely. A crash takes the file back to
//! its last synced commit, whose applied mark tells the replay where to
//! start in the log, still there. Start-up replays the batches the file
//! lacks (one log file at a time) and reads the catalog, not the items. Both queues are bounded in bytes
//! ([`MAX_QUEUED_BYTES`], [`MAX_BACKLOG_BYTES`]): a writer that finds them
//! full waits. The server answers a request only after
//! [`Durability::settle`] says every batch queued before the answer is in
//! the log, so a 200 never leaves before its data is durable, and no answer
//! shows data that a crash could take back.
//!
//! **Reads and memory.** Items and index entries are served from the file
//! (a read transaction; redb's page cache is [`DiskOptions::cache_bytes`])
//! merged with each table's overlay (one map for its items, one per index
//! for its entries): the writes committed (queued, or in the log)
//! but not yet in the file, deletes as tombstones. The applier removes a
//! write from the overlay once the file holds it, so reads see every
//! acknowledged write. The overlays are bounded ([`MAX_OVERLAY_BYTES`] of
//! encoded writes): a commit that finds them full waits for the applier.
//! A point read of a key that the table's key filter (`filter.rs`) says
//! was never written answers at once, without the file: the filter holds
//! every item key written since the table held no item anywhere (created
//! by this process, or empty at start-up), so a bulk load into a new table
//! reads nothing for the items its writes replace.
//! Memory is the cache, the overlays, the queues and the key filters (at
//! most [`KEY_FILTER_BYTES`]), whatever the data:
//! start-up reads the catalog and the stored counts, no item and no index
//! entry.
//!
//! **Failure.** A failed log write or sync (or a failed write into the
//! file) poisons the storage: the requests waiting on it, and every request
//! after it, get an error carrying the first failure's I/O error (a full
//! disk says so; [`Durability::failure`] hands it to the server's log)
//! until the server is restarted; the disk keeps
//! exactly the batches synced before (the overlays may hold the failed
//! ones, so the server answers nothing more).
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
use std::sync::Arc;
use std::thread::JoinHandle;

use dynaburst_engine::store::{
    decode_index_key, encode_index_key, size_range_start, Direction, IndexKey, IndexSpan, IndexVisit, KeySpan, Storage,
    StoreError, StoreKey, TableMeta, TableStore, Visit, WriteBatch,
};
use dynaburst_model::Item;
use parking_lot::{Condvar, Mutex, RwLock};
use redb::{ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition, TableHandle};
use tokio::sync::watch;

pub use codec::{
    decode_item, decode_key, decode_meta, decode_stored, encode_item, encode_key, encode_meta, encode_stored,
};

/// The database file inside the data directory.
pub const DB_FILE: &str = "dynaburst.redb";
/// Log files in a data directory (for tests and tools).
pub fn wal_files(dir: &Path) -> std::io::Result<usize> {
    wal::list(dir).map(|files| files.len())
}

/// The lock file inside the data directory.
pub const LOCK_FILE: &str = "LOCK";
/// Default page cache of the database file.
pub const DEFAULT_CACHE_BYTES: usize = 256 * 1024 * 1024;
/// Most bytes of encoded writes waiting for the committer; a writer that
/// would pass it waits.
pub const MAX_QUEUED_BYTES: usize = 64 * 1024 * 1024;
/// Most writes one log sync takes (more wait for the next).
pub const MAX_WRITES_PER_SYNC: usize = 64 * 1024;
/// Most bytes of durable writes waiting to be written into the database
/// file; the committer waits past it.
pub const MAX_BACKLOG_BYTES: usize = 128 * 1024 * 1024;
/// Bytes of batches the applier writes into the database file between
/// durable (synced) commits of the file; the commits between are not
/// synced (the log holds their batches until a durable commit does).
pub const DURABLE_APPLY_BYTES: usize = 256 * 1024 * 1024;
/// Bytes of waiting batches the applier writes at once; fewer wait up to
/// [`APPLY_GATHER_WAIT`] for more (see `gather`).
pub const APPLY_GATHER_BYTES: usize = 4 * 1024 * 1024;
/// Longest the applier waits for batches to gather (they are in the log
/// already: only the overlay holds them meanwhile).
pub const APPLY_GATHER_WAIT: std::time::Duration = std::time::Duration::from_millis(20);
/// How long the applier waits for more batches, with none waiting, before
/// it makes the file durable (an idle server's file is up to date on disk).
/// Under load the next batch comes within a log sync, so the applier's
/// commits stay unsynced until [`DURABLE_APPLY_BYTES`].
pub const IDLE_DURABLE_WAIT: std::time::Duration = std::time::Duration::from_millis(100);
/// Default of [`DiskOptions::overlay_bytes`]: most bytes of encoded writes
/// the overlays hold (committed, not yet in the file); a commit that would
/// pass it waits for the applier.
pub const MAX_OVERLAY_BYTES: usize = 64 * 1024 * 1024;

/// Bytes all tables' key filters (`filter.rs`) may take together, at 1.5
/// bytes a key: one table's filter, grown by doubling segments, holds up
/// to about 16.7 million keys (24 MiB) within it. A table whose filter
/// would go over loses it (its reads go to the file) before the segment
/// is allocated, and the bytes come back.
pub const KEY_FILTER_BYTES: usize = 32 * 1024 * 1024;

const CATALOG: TableDefinition<&str, &[u8]> = TableDefinition::new("catalog");
/// The file's own state: the last batch it holds ([`APPLIED_SEQ`]).
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
const APPLIED_SEQ: &str = "applied_seq";
/// Each table's item count and the sum of its items' DynamoDB sizes, by
/// storage id, written in the same transaction as the items.
const STATS: TableDefinition<u64, (u64, u64)> = TableDefinition::new("stats");
/// Each table's item bytes by partition-hash range (storage id, first hash
/// of the range: `store::size_range_start`), written in the same
/// transaction as the items: the capacity model's partition sizes after a
/// restart.
const SIZES: TableDefinition<(u64, u128), u64> = TableDefinition::new("sizes");
/// The layout of the file ([`FORMAT`]); absent in files written before
/// items were kept in key order.
const FORMAT_KEY: &str = "format";
/// Items in `k{id}` tables keyed by [`ItemKey`] (hash-prefixed keys in
/// the engine's key order), [`SIZES`], and index entries in `i{id}/{index}`
/// tables with [`INDEX_SIZES`].
const FORMAT: u64 = 4;
/// The layout before index entries were stored: opened, its index entries
/// built from the items once (after the log's replay).
const FORMAT_WITHOUT_INDEXES: u64 = 3;
/// The layout before [`SIZES`]: opened, its sizes measured once (and its
/// index entries built).
const FORMAT_WITHOUT_SIZES: u64 = 2;

fn items_table(id: u64) -> String {
    format!("k{id}")
}

/// The storage id an item table (`k{id}`) or index table (`i{id}/...`) of
/// the file belongs to; `None` for the file's other tables.
fn stored_table_id(name: &str) -> Option<u64> {
    let digits = name.strip_prefix('k').or_else(|| name.strip_prefix('i').and_then(|rest| rest.split('/').next()))?;
    digits.parse().ok()
}

/// Each index's entry count and the sum of its entries' DynamoDB sizes by
/// index-partition-hash range, by (storage id, index name, first hash of
/// the range: `store::size_range_start`), written in the same transaction
/// as the entries.
const INDEX_SIZES: TableDefinition<(u64, &str, u128), (u64, u64)> = TableDefinition::new("index_sizes");

/// The table of index `index`'s entries of the table of storage id `id`:
/// stored index keys (`store::encode_index_key`, which order bytewise as
/// the engine orders index keys) to stored projected items.
fn index_table(id: u64, index: &str) -> String {
    format!("{}{index}", index_table_prefix(id))
}

/// What the names of the table of storage id `id`'s index tables start with.
fn index_table_prefix(id: u64) -> String {
    format!("i{id}/")
}

fn index_def(name: &str) -> TableDefinition<'_, &'static [u8], &'static [u8]> {
    TableDefinition::new(name)
}

/// Keys of an items table: stored key bytes (`codec::encode_key`) ordered
/// as the engine orders [`StoreKey`]s, so that range walks on the file run
/// in key order.
#[derive(Debug)]
struct ItemKey;

impl redb::Value for ItemKey {
    type SelfType<'a> = &'a [u8];
    type AsBytes<'a> = &'a [u8];

    fn fixed_width() -> Option<usize> {
        None
    }

    fn from_bytes<'a>(data: &'a [u8]) -> &'a [u8]
    where
        Self: 'a,
    {
        data
    }

    fn as_bytes<'a, 'b: 'a>(value: &'a &'b [u8]) -> &'a [u8]
    where
        Self: 'b,
    {
        value
    }

    fn type_name() -> redb::TypeName {
        redb::TypeName::new("dynaburst::StoreKey")
    }
}

impl redb::Key for ItemKey {
    fn compare(data1: &[u8], data2: &[u8]) -> std::cmp::Ordering {
        codec::compare_keys(data1, data2)
    }
}

fn items_def(name: &str) -> TableDefinition<'_, ItemKey, &'static [u8]> {
    TableDefinition::new(name)
}

/// Why a data directory could not be opened.
#[derive(Debug)]
pub enum OpenError {
    /// Another process holds the directory's lock.
    Locked { dir: PathBuf },
    /// A file of the directory could not be created or opened.
    Io { path: PathBuf, source: std::io::Error },
    /// The database engine refused the file.
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
    /// The database file's page cache.
    pub cache_bytes: usize,
    /// Size past which the committer starts a new log file.
    pub wal_rotate_bytes: u64,
    /// Most encoded bytes of writes the overlays hold before commits wait
    /// for the applier.
    pub overlay_bytes: usize,
    /// Most bytes the tables' key filters take together
    /// ([`KEY_FILTER_BYTES`]).
    pub key_filter_bytes: usize,
}

impl Default for DiskOptions {
    fn default() -> DiskOptions {
        DiskOptions {
            cache_bytes: DEFAULT_CACHE_BYTES,
            wal_rotate_bytes: wal::WAL_ROTATE_BYTES,
            overlay_bytes: MAX_OVERLAY_BYTES,
            key_filter_bytes: KEY_FILTER_BYTES,
        }
    }
}

/// One write the committer makes.
pub(crate) enum Record {
    Put {
        id: u64,
        key: Vec<u8>,
        /// Shared with the overlay, which holds the write until the file does.
        value: Arc<[u8]>,
    },
    Delete {
        id: u64,
        key: Vec<u8>,
    },
    /// A table's catalog entry (created or changed).
    Catalog {
        name: String,
        value: Vec<u8>,
    },
    /// A table dropped: its entry, its items and its index entries.
    Drop {
        name: String,
        id: u64,
    },
    /// An index entry written: stored index key (`store::encode_index_key`)
    /// and stored projected item.
    IndexPut {
        id: u64,
        index: String,
        key: Vec<u8>,
        /// Shared with the overlay, as a `Put`'s.
        value: Arc<[u8]>,
    },
    /// An index entry deleted.
    IndexDelete {
        id: u64,
        index: String,
        key: Vec<u8>,
    },
    /// Every entry of an index dropped.
    DropIndex {
        id: u64,
        index: String,
    },
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

/// One table's writes that are committed but not yet in the file, newest
/// per key (`None`: a delete). Readers look here before the file.
#[derive(Default)]
struct Overlay {
    writes: RwLock<BTreeMap<StoreKey, Pending>>,
    /// The same for the table's index entries, by index name.
    index_writes: RwLock<HashMap<String, BTreeMap<IndexKey, Pending>>>,
    /// A read snapshot of the table in the file, reused by point reads
    /// until the applier next changes the file (it empties this before it
    /// removes anything from `writes`, so a reader that misses a write in
    /// `writes` never finds it missing from the snapshot too).
    snapshot: Mutex<Option<redb::ReadOnlyTable<ItemKey, &'static [u8]>>>,
    /// Every item key written to the table since neither the file nor the
    /// overlay held any of its items (a table created by this process, or
    /// empty at start-up): a key it does not hold is in neither, and is not
    /// looked for in the file. `None`: the table held items at start-up,
    /// or its filter went over [`KEY_FILTER_BYTES`].
    filter: RwLock<Option<filter::KeyFilter>>,
}

impl Overlay {
    /// An overlay whose table holds no item anywhere yet.
    fn empty_table() -> Overlay {
        Overlay { filter: RwLock::new(Some(filter::KeyFilter::default())), ..Overlay::default() }
    }
}

/// A write on its way into an overlay: the table's overlay, key, stored
/// item (`None` deletes) and encoded bytes.
type OverlayWrite = (Arc<Overlay>, StoreKey, Option<Arc<[u8]>>, usize);

/// An index entry write on its way into an overlay: the table's overlay,
/// index name, entry key, stored entry (`None` deletes) and encoded bytes.
type IndexOverlayWrite = (Arc<Overlay>, String, IndexKey, Option<Arc<[u8]>>, usize);

/// A committed write waiting for the applier.
struct Pending {
    /// The item as stored (`codec::encode_stored`, the bytes the log's
    /// record holds, not a copy), decoded when read; `None`: deleted.
    value: Option<Arc<[u8]>>,
    /// The batch that wrote it: the applier removes it once the file holds
    /// that batch (unless a later batch replaced it).
    seq: u64,
    /// Its encoded bytes (what [`MAX_OVERLAY_BYTES`] counts).
    bytes: usize,
}

struct Shared {
    db: redb::Database,
    catalog: Mutex<BTreeMap<String, Entry>>,
    /// Each table's overlay by storage id (the applier's way to them).
    overlays: Mutex<HashMap<u64, Arc<Overlay>>>,
    /// Encoded bytes of every overlay's writes.
    overlay_bytes: AtomicUsize,
    /// Bytes of every overlay's key filter, and their bound
    /// ([`DiskOptions::key_filter_bytes`]).
    filter_bytes: AtomicUsize,
    filter_limit: usize,
    /// Point reads of an item that went to the file (the overlay and the
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
    /// Fault injection: the applier's next write into the file fails.
    fail_next_apply: AtomicBool,
    /// Write-ahead log syncs made so far.
    syncs: AtomicU64,
    /// Durable batches the applier has not yet written into the file.
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
    /// Log files complete (the committer moved on), in order: deleted once
    /// their batches are in the file.
    done_files: Vec<u64>,
    stop: bool,
    /// Tests: the applier writes only batches up to this one into the file.
    hold_after: Option<u64>,
    /// The last batch the file holds.
    applied_seq: u64,
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

    /// A failure of the database file (its I/O error's kind when it is one).
    fn db(operation: &'static str, e: &redb::Error) -> Failure {
        match e {
            redb::Error::Io(io) => Failure::io(operation, io),
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
    /// the log into the file, reads the catalog (not the items) and starts
    /// the committer and the applier.
    pub fn open(dir: &Path, options: &DiskOptions) -> Result<DiskStorage, OpenError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| OpenError::Io { path, source }
        };
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let lock_path = dir.join(LOCK_FILE);
        let lock = File::options().create(true).truncate(false).write(true).open(&lock_path).map_err(io(&lock_path))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => return Err(OpenError::Locked { dir: dir.to_path_buf() }),
            Err(std::fs::TryLockError::Error(e)) => return Err(OpenError::Io { path: lock_path, source: e }),
        }
        let path = dir.join(DB_FILE);
        let db =
            redb::Builder::new().set_cache_size(options.cache_bytes).create(&path).map_err(|e| db_error(&path, e))?;
        let tx = begin_write(&db).map_err(|e| db_error(&path, e))?;
        {
            let catalog = tx.open_table(CATALOG).map_err(|e| db_error(&path, e))?;
            let mut meta = tx.open_table(META).map_err(|e| db_error(&path, e))?;
            tx.open_table(STATS).map_err(|e| db_error(&path, e))?;
            tx.open_table(SIZES).map_err(|e| db_error(&path, e))?;
            tx.open_table(INDEX_SIZES).map_err(|e| db_error(&path, e))?;
            let format = meta.get(FORMAT_KEY).map_err(|e| db_error(&path, e))?.map(|v| v.value());
            let empty =
                catalog.is_empty().map_err(|e| db_error(&path, e))? && wal::list(dir).map_err(io(dir))?.is_empty();
            match format {
                Some(FORMAT | FORMAT_WITHOUT_INDEXES) => {}
                None if empty => {
                    meta.insert(FORMAT_KEY, FORMAT).map_err(|e| db_error(&path, e))?;
                }
                Some(FORMAT_WITHOUT_SIZES) => {
                    measure_sizes(&tx, &catalog).map_err(|e| db_error(&path, e))?;
                    // Its index entries are built after the replay.
                    meta.insert(FORMAT_KEY, FORMAT_WITHOUT_INDEXES).map_err(|e| db_error(&path, e))?;
                }
                _ => return Err(db_error(
                    &path,
                    "it was written by an older dynaburst (another layout); load its data again into a new --data-dir",
                )),
            }
        }
        tx.commit().map_err(|e| db_error(&path, e))?;
        let (seq, generation) = replay(&db, dir).map_err(|e| match e {
            LoadError::Store(e) => OpenError::Corrupt(e),
            LoadError::Db(message) => OpenError::Database { path: path.clone(), message },
        })?;
        build_indexes(&db).map_err(|e| match e {
            LoadError::Store(e) => OpenError::Corrupt(e),
            LoadError::Db(message) => OpenError::Database { path: path.clone(), message },
        })?;
        let log =
            wal::Wal::create(dir, generation, options.wal_rotate_bytes).map_err(io(&wal::path(dir, generation)))?;
        let (catalog, next_id) = load(&db).map_err(|e| match e {
            LoadError::Store(e) => OpenError::Corrupt(e),
            LoadError::Db(message) => OpenError::Database { path: path.clone(), message },
        })?;
        let overlays = catalog.values().map(|e| (e.id, e.overlay.clone())).collect();
        let shared = Arc::new(Shared {
            db,
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
            syncs: AtomicU64::new(0),
            backlog: Mutex::new(Backlog { applied_seq: seq, ..Backlog::default() }),
            apply: Condvar::new(),
            applied: Condvar::new(),
        });
        let committer = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("dynaburst-committer".into())
                .spawn(move || commit_loop(log, &shared))
                .map_err(io(dir))?
        };
        let applier = {
            let (shared, owned) = (shared.clone(), dir.to_path_buf());
            std::thread::Builder::new()
                .name("dynaburst-applier".into())
                .spawn(move || apply_loop(&owned, &shared))
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
    /// overlays and the log, the file does not change) or lets it go on.
    pub fn hold_applier(&self, hold: bool) {
        let mut b = self.shared.backlog.lock();
        b.hold_after = if hold { Some(b.applied_seq) } else { None };
        drop(b);
        self.shared.apply.notify_all();
    }

    /// Tests: lets a held applier write the batches up to `seq` (a
    /// [`DiskStorage::committed_seq`]) into the file, and waits until it has.
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
        while b.applied_seq < target {
            self.check_healthy()?;
            // Short waits: a failure wakes no one here.
            self.shared.applied.wait_for(&mut b, std::time::Duration::from_millis(20));
        }
        Ok(())
    }

    /// Tests and tools: the index tables the file holds, as `i{storage
    /// id}/{index name}`, in name order (the file's state: call
    /// [`DiskStorage::wait_applied`] first for the writes committed).
    pub fn stored_indexes(&self) -> Result<Vec<String>, StoreError> {
        let tx = self.shared.db.begin_read().map_err(read_failed)?;
        let tables = tx.list_tables().map_err(read_failed)?;
        let index_table = |n: &str| {
            n.strip_prefix('i').and_then(|rest| rest.split_once('/')).is_some_and(|(id, _)| id.parse::<u64>().is_ok())
        };
        let mut names: Vec<String> = tables.map(|t| t.name().to_string()).filter(|n| index_table(n)).collect();
        names.sort();
        Ok(names)
    }

    /// Encoded bytes the overlays hold (committed writes the file lacks).
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
        self.enqueue_with(records, Vec::new(), Vec::new())
    }

    /// Queues one batch of writes and puts `overlay` (each write's table,
    /// key, item and encoded bytes) in the overlays, in one step under the
    /// queue's lock: the applier cannot take the batch before its writes
    /// are there. Waits while the queue or the overlays are full.
    fn enqueue_with(
        &self,
        records: Vec<Record>,
        overlay: Vec<OverlayWrite>,
        index_overlay: Vec<IndexOverlayWrite>,
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
        q.next_seq += 1;
        let seq = q.next_seq;
        for (table, key, value, bytes) in overlay {
            let old = table.writes.write().insert(key, Pending { value, seq, bytes });
            shared.overlay_bytes.fetch_add(bytes, Ordering::SeqCst);
            if let Some(old) = old {
                shared.overlay_bytes.fetch_sub(old.bytes, Ordering::SeqCst);
            }
        }
        for (table, index, key, value, bytes) in index_overlay {
            let old = table.index_writes.write().entry(index).or_default().insert(key, Pending { value, seq, bytes });
            shared.overlay_bytes.fetch_add(bytes, Ordering::SeqCst);
            if let Some(old) = old {
                shared.overlay_bytes.fetch_sub(old.bytes, Ordering::SeqCst);
            }
        }
        q.bytes += bytes;
        q.batches.push_back((seq, records));
        self.shared.queued.store(seq, Ordering::Release);
        drop(q);
        self.shared.work.notify_one();
        Ok(())
    }

    /// The table's storage id when the file holds all its writes (its
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

    /// Adds an item key about to be written to its table's filter (before
    /// the write reaches the overlay, so no read misses it), dropping the
    /// filter when all filters would go over [`KEY_FILTER_BYTES`].
    fn note_key(&self, overlay: &Overlay, key: &[u8]) {
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
        f.insert(key);
    }

    /// Bytes all key filters take.
    pub fn key_filter_bytes(&self) -> usize {
        self.shared.filter_bytes.load(Ordering::SeqCst)
    }

    /// Point reads of an item that went to the file so far.
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
/// database file (those it does not hold yet), then deletes the files.
/// Returns the last sequence number and the next log generation.
fn replay(db: &redb::Database, dir: &Path) -> Result<(u64, u64), LoadError> {
    let applied = {
        let tx = db.begin_read().map_err(self::db)?;
        let meta = tx.open_table(META).map_err(self::db)?;
        let seq = meta.get(APPLIED_SEQ).map_err(self::db)?.map(|v| v.value());
        seq.unwrap_or(0)
    };
    let files = wal::list(dir).map_err(self::db)?;
    // One file at a time (memory holds one), each in a commit not synced
    // but the last: a crash meanwhile leaves the log files in place.
    let mut last = applied;
    let mut unsynced = false;
    for (i, (_, path)) in files.iter().enumerate() {
        let bytes = std::fs::read(path).map_err(self::db)?;
        let (read, torn) = wal::decode(&bytes);
        drop(bytes);
        // Only the newest file can end in a torn frame (a crash mid-append).
        if torn && i + 1 < files.len() {
            return Err(StoreError::Corrupt { what: "write-ahead log" }.into());
        }
        let batches: Vec<_> = read.into_iter().filter(|(seq, _)| *seq > last).collect();
        let newest = i + 1 == files.len();
        if let Some((seq, _)) = batches.last() {
            last = *seq;
            write_batches(db, &batches, last, newest).map_err(self::db)?;
            unsynced = !newest;
        }
    }
    if unsynced {
        mark_durable(db).map_err(self::db)?;
    }
    for (_, path) in &files {
        std::fs::remove_file(path).map_err(self::db)?;
    }
    wal::sync_dir(dir).map_err(self::db)?;
    Ok((last, files.last().map_or(1, |(g, _)| g + 1)))
}

/// A file of the layout before index entries were stored
/// ([`FORMAT_WITHOUT_INDEXES`], its log replayed): builds every index's
/// entries and counts from the items, once, in one transaction that also
/// moves the file to [`FORMAT`]. Any other file is left as it is.
fn build_indexes(db: &redb::Database) -> Result<(), LoadError> {
    // Looked at in a read transaction: a file of the current layout gets
    // no write transaction (not even an aborted one) at start-up.
    let format = {
        let tx = db.begin_read().map_err(self::db)?;
        let meta = tx.open_table(META).map_err(self::db)?;
        meta.get(FORMAT_KEY).map_err(self::db)?.map(|v| v.value())
    };
    if format != Some(FORMAT_WITHOUT_INDEXES) {
        return Ok(());
    }
    let tx = begin_write(db).map_err(self::db)?;
    {
        let mut meta = tx.open_table(META).map_err(self::db)?;
        let catalog = tx.open_table(CATALOG).map_err(self::db)?;
        let mut sizes = tx.open_table(INDEX_SIZES).map_err(self::db)?;
        for row in catalog.iter().map_err(self::db)? {
            let (_, value) = row.map_err(self::db)?;
            let (id, table) = decode_meta(value.value())?;
            if table.indexes.is_empty() {
                continue;
            }
            let items = match tx.open_table(items_def(&items_table(id))) {
                Ok(items) => items,
                Err(redb::TableError::TableDoesNotExist(_)) => continue,
                Err(e) => return Err(self::db(e)),
            };
            for def in &table.indexes {
                let mut entries = tx.open_table(index_def(&index_table(id, &def.name))).map_err(self::db)?;
                let mut ranges: BTreeMap<u128, (u64, u64)> = BTreeMap::new();
                for row in items.iter().map_err(self::db)? {
                    let (k, v) = row.map_err(self::db)?;
                    let key = decode_key(k.value())?;
                    let item = decode_stored(v.value())?;
                    let Some(entry_key) = def.entry_key(&key, &item) else { continue };
                    let entry = encode_stored(&def.entry(&table.key_schema, &item));
                    let range = ranges.entry(size_range_start(entry_key.hash)).or_default();
                    (range.0, range.1) = (range.0 + 1, range.1 + codec::stored_size(&entry)?);
                    entries.insert(encode_index_key(&entry_key).as_slice(), entry.as_slice()).map_err(self::db)?;
                }
                for (start, counts) in ranges {
                    sizes.insert((id, def.name.as_str(), start), counts).map_err(self::db)?;
                }
            }
        }
        meta.insert(FORMAT_KEY, FORMAT).map_err(self::db)?;
    }
    tx.commit().map_err(self::db)?;
    Ok(())
}

/// Every table of the catalog (not its items: they stay in the file), and
/// the next free id: past every id of the catalog and of every item or
/// index table in the file, so that an id is never used twice (a write
/// that raced its table's DeleteTable can leave that table's items behind
/// the catalog; a new table given its id would find them).
fn load(db: &redb::Database) -> Result<(BTreeMap<String, Entry>, u64), LoadError> {
    let tx = db.begin_read().map_err(self::db)?;
    let catalog = tx.open_table(CATALOG).map_err(self::db)?;
    let mut tables = BTreeMap::new();
    let mut next_id = 1;
    for table in tx.list_tables().map_err(self::db)? {
        if let Some(id) = stored_table_id(table.name()) {
            next_id = next_id.max(id.saturating_add(1));
        }
    }
    for row in catalog.iter().map_err(self::db)? {
        let (name, value) = row.map_err(self::db)?;
        let (id, meta) = decode_meta(value.value())?;
        if meta.name != name.value() {
            return Err(StoreError::Corrupt { what: "catalog" }.into());
        }
        next_id = next_id.max(id + 1);
        // The replay is done: the file holds everything; a table without
        // items in it holds none anywhere.
        let empty = match tx.open_table(items_def(&items_table(id))) {
            Ok(items) => items.is_empty().map_err(self::db)?,
            Err(redb::TableError::TableDoesNotExist(_)) => true,
            Err(e) => return Err(self::db(e)),
        };
        let overlay = if empty { Overlay::empty_table() } else { Overlay::default() };
        tables.insert(meta.name.clone(), Entry { id, meta, overlay: Arc::new(overlay) });
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
            match wal.rotate() {
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

/// Removes from the overlays the writes of `batches`, which the file now
/// holds, unless a later batch replaced them, and wakes writers waiting
/// for room.
fn prune(shared: &Shared, batches: &[(u64, Vec<Record>)]) {
    // Snapshots older than the file's last commit go first.
    let all: Vec<Arc<Overlay>> = shared.overlays.lock().values().cloned().collect();
    for overlay in all {
        *overlay.snapshot.lock() = None;
    }
    let mut by_table: HashMap<u64, KeysWritten<'_>> = HashMap::new();
    let mut by_index: HashMap<(u64, &str), KeysWritten<'_>> = HashMap::new();
    for (seq, records) in batches {
        for record in records {
            match record {
                Record::Put { id, key, .. } | Record::Delete { id, key } => {
                    by_table.entry(*id).or_default().push((*seq, key));
                }
                Record::IndexPut { id, index, key, .. } | Record::IndexDelete { id, index, key } => {
                    by_index.entry((*id, index)).or_default().push((*seq, key));
                }
                _ => {}
            }
        }
    }
    let mut freed = 0;
    for ((id, index), writes) in by_index {
        let Some(overlay) = shared.overlays.lock().get(&id).cloned() else { continue };
        let mut indexes = overlay.index_writes.write();
        // A dropped index's overlay went with it.
        let Some(map) = indexes.get_mut(index) else { continue };
        for (seq, key) in writes {
            let Ok(key) = decode_index_key(key) else { continue };
            if map.get(&key).is_some_and(|p| p.seq <= seq) {
                if let Some(p) = map.remove(&key) {
                    freed += p.bytes;
                }
            }
        }
        if map.is_empty() {
            indexes.remove(index);
        }
    }
    for (id, writes) in by_table {
        // A dropped table's overlay went with it.
        let Some(overlay) = shared.overlays.lock().get(&id).cloned() else { continue };
        let mut map = overlay.writes.write();
        for (seq, key) in writes {
            // Keys were encoded from `StoreKey`s: they decode.
            let Ok(key) = decode_key(key) else { continue };
            if map.get(&key).is_some_and(|p| p.seq <= seq) {
                if let Some(p) = map.remove(&key) {
                    freed += p.bytes;
                }
            }
        }
    }
    if freed > 0 {
        shared.overlay_bytes.fetch_sub(freed, Ordering::SeqCst);
        wake_writers(shared);
    }
}

/// The applier: writes every durable batch the committer handed over into
/// the database file, as many as are waiting in one transaction, and
/// deletes the log files the file holds entirely once a durable commit
/// holds them. Ends when asked to and the backlog is empty.
fn apply_loop(dir: &Path, shared: &Shared) {
    // Bytes of batches written into the file by commits not yet durable.
    let mut since_durable = 0usize;
    // Completed log files whose batches are all in the file, by commits
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
                    // Nothing to write: make what the file holds durable,
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
            // the file holds them all.
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
        // when the backlog ran dry (an idle server's file is up to date on
        // disk); only then do the log files it holds go.
        let durable = since_durable >= DURABLE_APPLY_BYTES || idle;
        if let Some((last, _)) = batches.last() {
            let written = if shared.fail_next_apply.swap(false, Ordering::SeqCst) {
                Err(Failure::injected("write"))
            } else {
                write_batches(&shared.db, &batches, *last, durable).map_err(|e| Failure::db("write", &e))
            };
            if let Err(failure) = written {
                poison(shared, failure);
                continue;
            }
            prune(shared, &batches);
            shared.backlog.lock().applied_seq = *last;
            shared.applied.notify_all();
        } else if durable && since_durable > 0 {
            if let Err(e) = mark_durable(&shared.db) {
                poison(shared, Failure::db("write", &e));
                continue;
            }
        }
        if !durable {
            continue;
        }
        since_durable = 0;
        // The file holds every batch of these files on disk now.
        let files = std::mem::take(&mut applied_files);
        let removed = files.iter().try_for_each(|g| std::fs::remove_file(wal::path(dir, *g)));
        let synced = || if files.is_empty() { Ok(()) } else { wal::sync_dir(dir) };
        if let Err(e) = removed.and_then(|()| synced()) {
            poison(shared, Failure::io("log removal", &e));
        }
    }
}

/// True while the applier should wait for more batches before it writes
/// the waiting ones: they are fewer than [`APPLY_GATHER_BYTES`], nobody
/// waits on them (no stop, no room wanted in the overlays) and the wait
/// that started with them ([`APPLY_GATHER_WAIT`], in `until`) is not over.
/// Each transaction of the file costs about as much whatever it holds (its
/// commit rewrites the path to every page it changed, and checksums it),
/// so single puts, a sync's few writes at a time, would otherwise make one
/// each.
fn gather(shared: &Shared, b: &Backlog, until: &mut Option<std::time::Instant>) -> bool {
    let room_wanted = shared.overlay_bytes.load(Ordering::SeqCst) >= shared.overlay_limit / 2;
    if b.stop || b.hold_after.is_some() || room_wanted || b.bytes >= APPLY_GATHER_BYTES {
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

/// One table's item writes in a transaction: stored key and stored item
/// (`None` deletes), in commit order.
type ItemWrites<'a> = Vec<(&'a [u8], Option<&'a [u8]>)>;

/// Begins a write transaction whose durable commit records redb's
/// allocator state (quick repair, with a two-phase commit), so that opening
/// the file after a crash loads that state instead of walking the whole
/// file to rebuild it (seconds per gigabyte). The applier's unsynced
/// commits do not record it (`write_batches`).
fn begin_write(db: &redb::Database) -> Result<redb::WriteTransaction, redb::TransactionError> {
    let mut tx = db.begin_write()?;
    tx.set_quick_repair(true);
    Ok(tx)
}

/// Makes every commit the file has had durable (a durable commit of the
/// applied mark as it is).
fn mark_durable(db: &redb::Database) -> Result<(), redb::Error> {
    let tx = begin_write(db)?;
    {
        let mut meta = tx.open_table(META)?;
        let applied = meta.get(APPLIED_SEQ)?.map_or(0, |v| v.value());
        meta.insert(APPLIED_SEQ, applied)?;
    }
    tx.commit()?;
    Ok(())
}

/// Writes `batches` in one transaction, with `applied` (the last batch's
/// sequence number) as the file's applied mark. Unless `durable`, the
/// commit is not synced: a crash takes the file back to its last durable
/// commit, and the log, whose files go only after a durable commit holds
/// them, still has every batch after that commit's applied mark.
fn write_batches(
    db: &redb::Database,
    batches: &[(u64, Vec<Record>)],
    applied: u64,
    durable: bool,
) -> Result<(), redb::Error> {
    let mut tx = begin_write(db)?;
    if !durable {
        tx.set_quick_repair(false);
        tx.set_durability(redb::Durability::None)?;
    }
    {
        tx.open_table(META)?.insert(APPLIED_SEQ, applied)?;
        let mut catalog = tx.open_table(CATALOG)?;
        // Per table: items added less removed, bytes added less removed;
        // and bytes by size range.
        let mut deltas: HashMap<u64, (i64, i64)> = HashMap::new();
        let mut ranges: BTreeMap<(u64, u128), i64> = BTreeMap::new();
        // Catalog changes in order; item writes gathered per table, then
        // written in key order (a key's writes keep their order), which
        // walks the B-tree's pages once rather than at random. A table
        // dropped here gets none of its writes (its id is never reused).
        let mut writes: BTreeMap<u64, ItemWrites<'_>> = BTreeMap::new();
        // Index entry writes the same way, per index; a dropped index gets
        // the writes made before its drop.
        let mut index_writes: BTreeMap<(u64, &str), ItemWrites<'_>> = BTreeMap::new();
        let mut dropped = Vec::new();
        for record in batches.iter().flat_map(|(_, records)| records) {
            match record {
                Record::Put { id, key, value } => writes.entry(*id).or_default().push((key, Some(&value[..]))),
                Record::Delete { id, key } => writes.entry(*id).or_default().push((key, None)),
                Record::IndexPut { id, index, key, value } => {
                    index_writes.entry((*id, index)).or_default().push((key, Some(&value[..])));
                }
                Record::IndexDelete { id, index, key } => {
                    index_writes.entry((*id, index)).or_default().push((key, None));
                }
                Record::Catalog { name, value } => {
                    catalog.insert(name.as_str(), value.as_slice())?;
                }
                Record::DropIndex { id, index } => {
                    index_writes.remove(&(*id, index.as_str()));
                    let all = (*id, index.as_str(), 0)..=(*id, index.as_str(), u128::MAX);
                    tx.open_table(INDEX_SIZES)?.retain_in(all, |_, _| false)?;
                    tx.delete_table(index_def(&index_table(*id, index)))?;
                }
                Record::Drop { name, id } => {
                    catalog.remove(name.as_str())?;
                    dropped.push(*id);
                    tx.open_table(STATS)?.remove(*id)?;
                    tx.open_table(SIZES)?.retain_in((*id, 0)..=(*id, u128::MAX), |_, _| false)?;
                    tx.delete_table(items_def(&items_table(*id)))?;
                    drop_index_tables(&tx, *id)?;
                }
            }
        }
        // Per (index, size range): entries added less removed, bytes added
        // less removed.
        let mut index_deltas: BTreeMap<(u64, &str, u128), (i64, i64)> = BTreeMap::new();
        for ((id, index), mut writes) in index_writes {
            if dropped.contains(&id) {
                continue;
            }
            writes.sort_by(|a, b| a.0.cmp(b.0));
            let mut t = tx.open_table(index_def(&index_table(id, index)))?;
            write_rows(&mut t, writes, |key, count, bytes| {
                let d = index_deltas.entry((id, index, size_range(key))).or_default();
                (d.0, d.1) = (d.0 + count, d.1 + bytes);
            })?;
        }
        let mut index_sizes = tx.open_table(INDEX_SIZES)?;
        for (key, (count, bytes)) in index_deltas {
            let (c, b): (u64, u64) = index_sizes.get(key)?.map_or((0, 0), |v| v.value());
            let now = (c.saturating_add_signed(count), b.saturating_add_signed(bytes));
            if now.0 == 0 {
                index_sizes.remove(key)?;
            } else {
                index_sizes.insert(key, now)?;
            }
        }
        drop(index_sizes);
        for (id, mut writes) in writes {
            if dropped.contains(&id) {
                continue;
            }
            writes.sort_by(|a, b| codec::compare_keys(a.0, b.0));
            let mut t = tx.open_table(items_def(&items_table(id)))?;
            let (count, bytes) = write_rows(&mut t, writes, |key, _, bytes| {
                *ranges.entry((id, size_range(key))).or_default() += bytes;
            })?;
            let d = deltas.entry(id).or_default();
            (d.0, d.1) = (d.0 + count, d.1 + bytes);
        }
        let mut stats = tx.open_table(STATS)?;
        for (id, (count, bytes)) in deltas {
            let (c, b) = stats.get(id)?.map_or((0, 0), |v| v.value());
            stats.insert(id, (c.saturating_add_signed(count), b.saturating_add_signed(bytes)))?;
        }
        let mut sizes = tx.open_table(SIZES)?;
        for (range, bytes) in ranges {
            let now = sizes.get(range)?.map_or(0, |v| v.value()).saturating_add_signed(bytes);
            if now == 0 {
                sizes.remove(range)?;
            } else {
                sizes.insert(range, now)?;
            }
        }
    }
    tx.commit()?;
    Ok(())
}

/// Stored values begin with their size (they were encoded by
/// `encode_stored`); one that does not counts as nothing.
fn stored_bytes(v: &[u8]) -> i64 {
    codec::stored_size(v).map_or(0, |n| n as i64)
}

/// Writes `writes` (stored key, stored value or `None` to delete) into
/// `t` in their order; returns the rows added less removed and the stored
/// bytes added less removed, and tells `changed` each key whose row or
/// bytes changed, with the changes.
fn write_rows<K>(
    t: &mut redb::Table<'_, K, &'static [u8]>,
    writes: ItemWrites<'_>,
    mut changed: impl FnMut(&[u8], i64, i64),
) -> Result<(i64, i64), redb::Error>
where
    K: for<'a> redb::Key<SelfType<'a> = &'a [u8]> + 'static,
{
    let (mut rows, mut total) = (0, 0);
    for (key, value) in writes {
        let (count, bytes) = match value {
            Some(value) => {
                let old = t.insert(key, value)?.map(|v| stored_bytes(v.value()));
                (i64::from(old.is_none()), stored_bytes(value) - old.unwrap_or(0))
            }
            None => match t.remove(key)? {
                Some(old) => (-1, -stored_bytes(old.value())),
                None => (0, 0),
            },
        };
        rows += count;
        total += bytes;
        if count != 0 || bytes != 0 {
            changed(key, count, bytes);
        }
    }
    Ok((rows, total))
}

/// Deletes every index table of the table of storage id `id`, and their
/// counts.
fn drop_index_tables(tx: &redb::WriteTransaction, id: u64) -> Result<(), redb::Error> {
    let prefix = index_table_prefix(id);
    let tables: Vec<_> = tx.list_tables()?.filter(|t| t.name().starts_with(&prefix)).collect();
    for table in tables {
        tx.delete_table(table)?;
    }
    tx.open_table(INDEX_SIZES)?.retain_in((id, "", 0)..(id.saturating_add(1), "", 0), |_, _| false)?;
    Ok(())
}

/// The size range (`store::size_range_start`) of a stored key: its hash
/// comes first, big-endian.
fn size_range(key: &[u8]) -> u128 {
    let mut hash = [0u8; 16];
    if let Some(bytes) = key.get(..hash.len()) {
        hash.copy_from_slice(bytes);
    }
    size_range_start(u128::from_be_bytes(hash))
}

/// Fills [`SIZES`] from the items of every table in `catalog` (a file of
/// the layout before it), once.
fn measure_sizes(
    tx: &redb::WriteTransaction,
    catalog: &redb::Table<'_, &'static str, &'static [u8]>,
) -> Result<(), redb::Error> {
    let mut ranges: BTreeMap<(u64, u128), u64> = BTreeMap::new();
    for row in catalog.iter()? {
        let (_, value) = row?;
        // An entry that does not decode is refused later, by `load`.
        let Ok((id, _)) = decode_meta(value.value()) else { continue };
        let items = match tx.open_table(items_def(&items_table(id))) {
            Ok(items) => items,
            Err(redb::TableError::TableDoesNotExist(_)) => continue,
            Err(e) => return Err(e.into()),
        };
        for row in items.iter()? {
            let (k, v) = row?;
            let bytes = codec::stored_size(v.value()).unwrap_or(0);
            *ranges.entry((id, size_range(k.value()))).or_default() += bytes;
        }
    }
    let mut sizes = tx.open_table(SIZES)?;
    for (range, bytes) in ranges {
        sizes.insert(range, bytes)?;
    }
    Ok(())
}

/// One table's items: the file's, under the table's overlay.
struct DiskTable {
    id: u64,
    overlay: Arc<Overlay>,
    shared: Arc<Shared>,
}

fn read_failed<E>(_: E) -> StoreError {
    StoreError::Io { operation: "read", kind: std::io::ErrorKind::Other }
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

impl DiskTable {
    /// The table's items in the file as of now (None: no item was ever
    /// written). Called after looking at the overlay: a write the applier
    /// removed from it since is in this snapshot.
    fn snapshot(&self) -> Result<Option<redb::ReadOnlyTable<ItemKey, &'static [u8]>>, StoreError> {
        let tx = self.shared.db.begin_read().map_err(read_failed)?;
        match tx.open_table(items_def(&items_table(self.id))) {
            Ok(t) => Ok(Some(t)),
            Err(redb::TableError::TableDoesNotExist(_)) => Ok(None),
            Err(e) => Err(read_failed(e)),
        }
    }
}

impl TableStore for DiskTable {
    fn get(&self, key: &StoreKey) -> Result<Option<Arc<Item>>, StoreError> {
        let bytes = encode_key(key).ok_or(StoreError::Corrupt { what: "key" })?;
        if self.overlay.filter.read().as_ref().is_some_and(|f| !f.may_hold(&bytes)) {
            // Never written since the table held no item: in neither the
            // overlay (a key enters the filter before it) nor the file.
            return Ok(None);
        }
        if let Some(p) = self.overlay.writes.read().get(key) {
            return p.item();
        }
        self.shared.file_reads.fetch_add(1, Ordering::Relaxed);
        let read = |table: &redb::ReadOnlyTable<ItemKey, &'static [u8]>| match table
            .get(bytes.as_slice())
            .map_err(read_failed)?
        {
            Some(v) => Ok(Some(Arc::new(decode_stored(v.value())?))),
            None => Ok(None),
        };
        // The shared snapshot when no other reader holds it, else a fresh one.
        if let Some(mut cached) = self.overlay.snapshot.try_lock() {
            if cached.is_none() {
                *cached = self.snapshot()?;
            }
            return cached.as_ref().map_or(Ok(None), read);
        }
        self.snapshot()?.as_ref().map_or(Ok(None), read)
    }

    /// Refused: [`DiskStorage::commit`] writes through the log and the
    /// overlay, never through a store.
    fn write(&mut self, _key: StoreKey, _item: Option<Arc<Item>>) -> Result<Option<Arc<Item>>, StoreError> {
        Err(StoreError::Io { operation: "write", kind: std::io::ErrorKind::Unsupported })
    }

    /// Walks the overlay and the file together in key order; the overlay's
    /// write wins over the file's item under the same key, and its deletes
    /// hide them. The overlay stays read-locked during the walk, so the
    /// applier removes nothing from it meanwhile.
    fn range(&self, (start, end): KeySpan<'_>, direction: Direction, visit: Visit<'_>) -> Result<(), StoreError> {
        if holds_nothing(start, end) {
            return Ok(());
        }
        let overlay = self.overlay.writes.read();
        let pending = overlay.range::<StoreKey, _>((start, end));
        let Some(table) = self.snapshot()? else {
            return walk(pending, direction, visit);
        };
        let (lo, hi) = (start.map(codec::encode_bound), end.map(codec::encode_bound));
        fn bound(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
            b.as_ref().map(Vec::as_slice)
        }
        let rows = table.range::<&[u8]>((bound(&lo), bound(&hi))).map_err(read_failed)?;
        let decode = |row: redb::Result<(redb::AccessGuard<'static, ItemKey>, _)>| {
            let (k, v) = row.map_err(read_failed)?;
            Ok((decode_key(k.value())?, v))
        };
        merge_walk(pending, rows, decode, direction, visit)
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

    /// Walks the index's overlay and its table in the file together, as
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
        let tx = self.shared.db.begin_read().map_err(read_failed)?;
        let table = match tx.open_table(index_def(&index_table(self.id, index))) {
            Ok(t) => t,
            Err(redb::TableError::TableDoesNotExist(_)) => return walk(pending, dir, visit),
            Err(e) => return Err(read_failed(e)),
        };
        let (lo, hi) = (start.map(encode_index_key), end.map(encode_index_key));
        let rows = table.range::<&[u8]>((lo.as_ref().map(Vec::as_slice), hi.as_ref().map(Vec::as_slice)));
        let decode = |row: redb::Result<(redb::AccessGuard<'static, &'static [u8]>, _)>| {
            let (k, v) = row.map_err(read_failed)?;
            Ok((decode_index_key(k.value())?, v))
        };
        merge_walk(pending, rows.map_err(read_failed)?, decode, dir, visit)
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

/// Visits overlay items alone (the file has no table yet).
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

/// A row of the file with its key decoded (the stored value not yet).
type Row<K> = Result<(K, redb::AccessGuard<'static, &'static [u8]>), StoreError>;

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
            // The overlay's write replaces (or deletes) the file's item.
            if p.visit(pk, &mut *visit)?.is_break() {
                return Ok(());
            }
            continue;
        }
        let item = Arc::new(decode_stored(v.value())?);
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

    /// The counts in the file, when the table's overlay is empty (at
    /// start-up, after the replay, it is); otherwise `None`.
    fn table_stats(&self, name: &str) -> Result<Option<(u64, u64)>, StoreError> {
        let Some(id) = self.settled_id(name)? else { return Ok(None) };
        let tx = self.shared.db.begin_read().map_err(read_failed)?;
        let stats = tx.open_table(STATS).map_err(read_failed)?;
        Ok(Some(stats.get(id).map_err(read_failed)?.map_or((0, 0), |v| v.value())))
    }

    /// The sizes in the file, when the table's overlay is empty (at
    /// start-up, after the replay, it is); otherwise `None`.
    fn table_sizes(&self, name: &str) -> Result<Option<Vec<(u128, u64)>>, StoreError> {
        let Some(id) = self.settled_id(name)? else { return Ok(None) };
        let tx = self.shared.db.begin_read().map_err(read_failed)?;
        let sizes = tx.open_table(SIZES).map_err(read_failed)?;
        let mut out = Vec::new();
        for row in sizes.range((id, 0)..=(id, u128::MAX)).map_err(read_failed)? {
            let (k, v) = row.map_err(read_failed)?;
            out.push((k.value().1, v.value()));
        }
        Ok(Some(out))
    }

    /// The sizes in the file, when the table's overlay is empty (at
    /// start-up, after the replay, it is); otherwise `None`.
    fn index_sizes(
        &self,
        name: &str,
        index: &str,
    ) -> Result<Option<Vec<dynaburst_engine::store::IndexRange>>, StoreError> {
        let Some(id) = self.settled_id(name)? else { return Ok(None) };
        let tx = self.shared.db.begin_read().map_err(read_failed)?;
        let sizes = tx.open_table(INDEX_SIZES).map_err(read_failed)?;
        let mut out = Vec::new();
        for row in sizes.range((id, index, 0)..=(id, index, u128::MAX)).map_err(read_failed)? {
            let (k, v) = row.map_err(read_failed)?;
            let (entries, bytes) = v.value();
            out.push((k.value().2, entries, bytes));
        }
        Ok(Some(out))
    }

    /// The index tables of the table's storage id in the file, and the
    /// indexes its overlay holds entries of.
    fn stored_index_names(&self, name: &str) -> Result<Vec<String>, StoreError> {
        let (id, pending) = {
            let catalog = self.shared.catalog.lock();
            let Some(e) = catalog.get(name) else { return Err(StoreError::NoSuchTable(name.to_string())) };
            let pending: Vec<String> = e.overlay.index_writes.read().keys().cloned().collect();
            (e.id, pending)
        };
        let prefix = index_table_prefix(id);
        let tx = self.shared.db.begin_read().map_err(read_failed)?;
        let mut names: BTreeSet<String> = pending.into_iter().collect();
        for t in tx.list_tables().map_err(read_failed)? {
            if let Some(index) = t.name().strip_prefix(&prefix) {
                names.insert(index.to_string());
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
        self.enqueue(vec![Record::Drop { name: name.to_string(), id: entry.id }])?;
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
            let (Some(store), Some(Some(overlay))) = (stores.get(m.table), overlays.get(m.table)) else {
                return Err(bad);
            };
            let id = store.storage_id().ok_or(bad)?;
            let key = encode_key(&m.key).ok_or(StoreError::Corrupt { what: "key" })?;
            let value: Option<Arc<[u8]>> = m.item.as_deref().map(|item| encode_stored(item).into());
            let record = match &value {
                Some(value) => Record::Put { id, key, value: value.clone() },
                None => Record::Delete { id, key },
            };
            // A key written earlier in this batch replaced what that write put.
            let earlier = writes.iter().rev().find(|w: &&OverlayWrite| Arc::ptr_eq(&w.0, overlay) && w.1 == m.key);
            replaced.push(match earlier {
                Some(w) => w.2.as_deref().map(|v| decode_stored(v).map(Arc::new)).transpose()?,
                None => store.get(&m.key)?,
            });
            // Into the filter after the read above, which it spares.
            if let Record::Put { key, .. } = &record {
                self.note_key(overlay, key);
            }
            writes.push((overlay.clone(), m.key, value, record.bytes()));
            records.push(record);
        }
        let mut index_writes: Vec<IndexOverlayWrite> = Vec::with_capacity(batch.index_writes.len());
        for w in batch.index_writes {
            let bad = StoreError::BadBatch { slot: w.table };
            let (Some(store), Some(Some(overlay))) = (stores.get(w.table), overlays.get(w.table)) else {
                return Err(bad);
            };
            let id = store.storage_id().ok_or(bad)?;
            let key = encode_index_key(&w.key);
            let value: Option<Arc<[u8]>> = w.entry.as_deref().map(|entry| encode_stored(entry).into());
            let record = match &value {
                Some(value) => Record::IndexPut { id, index: w.index.clone(), key, value: value.clone() },
                None => Record::IndexDelete { id, index: w.index.clone(), key },
            };
            index_writes.push((overlay.clone(), w.index, w.key, value, record.bytes()));
            records.push(record);
        }
        // The engine holds every table lock of the batch: batches on a table
        // are queued (and enter the overlay) in the order they were made.
        self.enqueue_with(records, writes, index_writes)?;
        Ok(replaced)
    }
}
