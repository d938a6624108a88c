//! Durable storage for `dynaburst serve --data-dir DIR`: the engine's
//! [`Storage`] seam on disk, as a write-ahead log (`DIR/wal-*`, `wal.rs`)
//! in front of one redb database file (`DIR/dynaburst.redb`;
//! docs/storage-engine.md says why redb).
//!
//! Layout of the file: a `catalog` table maps each table name to its storage
//! id and its [`TableMeta`] (every setting; `codec.rs`); table `t{id}` holds
//! its items, key bytes to item bytes; `meta` holds the sequence number of
//! the last batch the file holds. A dropped table's id is never reused.
//!
//! **Write path and group commit.** [`Storage::commit`] applies a batch to
//! the table's in-memory copy (under the engine's table locks, so readers
//! never see half of it), then queues the batch's encoded writes with a
//! sequence number. The committer thread takes every batch waiting, appends
//! them to the log and syncs once: concurrent writers share a sync, and a
//! batch is one checksummed frame, whole or (torn by a crash) ignored, so
//! a transaction is all or nothing. The applier thread then writes the
//! durable batches into the redb file in large transactions, off the
//! answer's path, and deletes log files the file holds entirely; start-up
//! replays the batches the file lacks. Both queues are bounded in bytes
//! ([`MAX_QUEUED_BYTES`], [`MAX_BACKLOG_BYTES`]): a writer that finds them
//! full waits. The server answers a request only after
//! [`Durability::settle`] says every batch queued before the answer is in
//! the log, so a 200 never leaves before its data is durable, and no answer
//! shows data that a crash could take back.
//!
//! **Failure.** A failed log write or sync (or a failed write into the
//! file) poisons the storage: the requests waiting on it, and every request
//! after it, get an error until the server is restarted; the disk keeps
//! exactly the batches synced before (the memory copy may hold the failed
//! ones, so nothing is served from it any more).
//!
//! **Memory.** Items are kept in memory beside the file (the engine's
//! `MemStore`), loaded at start-up: reads never touch the disk, and memory
//! still grows with the data (see ARCHITECTURE.md).
//!
//! A lock on `DIR/LOCK` keeps a second server off the same directory.

mod codec;
mod wal;

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fmt;
use std::fs::File;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use dynaburst_engine::store::{
    apply_with_undo, Direction, MemStore, Storage, StoreError, StoreKey, TableMeta, TableStore, Visit, WriteBatch,
};
use dynaburst_model::Item;
use parking_lot::{Condvar, Mutex};
use redb::{ReadableDatabase, ReadableTable, TableDefinition};
use tokio::sync::watch;

pub use codec::{decode_item, decode_key, decode_meta, encode_item, encode_key, encode_meta};

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

const CATALOG: TableDefinition<&str, &[u8]> = TableDefinition::new("catalog");
/// The file's own state: the last batch it holds ([`APPLIED_SEQ`]).
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
const APPLIED_SEQ: &str = "applied_seq";

fn items_table(id: u64) -> String {
    format!("t{id}")
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
}

impl Default for DiskOptions {
    fn default() -> DiskOptions {
        DiskOptions { cache_bytes: DEFAULT_CACHE_BYTES, wal_rotate_bytes: wal::WAL_ROTATE_BYTES }
    }
}

/// One write the committer makes.
pub(crate) enum Record {
    Put {
        id: u64,
        key: Vec<u8>,
        value: Vec<u8>,
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
    /// A table dropped: its entry and its items.
    Drop {
        name: String,
        id: u64,
    },
}

impl Record {
    pub(crate) fn bytes(&self) -> usize {
        match self {
            Record::Put { key, value, .. } => key.len() + value.len(),
            Record::Delete { key, .. } => key.len(),
            Record::Catalog { name, value } => name.len() + value.len(),
            Record::Drop { name, .. } => name.len(),
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
    items: MemStore,
}

struct Shared {
    catalog: Mutex<BTreeMap<String, Entry>>,
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
    /// Fault injection: the next disk transaction fails.
    fail_next_sync: AtomicBool,
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
        let failed = |s: &Synced| if s.failed { Err(sync_failed()) } else { Ok(()) };
        let now = *self.shared.synced.borrow();
        if now.failed || now.seq >= target {
            return failed(&now);
        }
        let mut rx = self.shared.synced.subscribe();
        let reached = match rx.wait_for(|s| s.failed || s.seq >= target).await {
            Ok(s) => *s,
            Err(_) => return Err(sync_failed()),
        };
        failed(&reached)
    }

    /// Makes the next disk transaction fail, as a failing disk would (for
    /// fault-injection tests).
    pub fn fail_next_sync(&self) {
        self.shared.fail_next_sync.store(true, Ordering::SeqCst);
    }
}

fn sync_failed() -> StoreError {
    StoreError::Io { operation: "sync", kind: std::io::ErrorKind::Other }
}

fn db_error(path: &Path, e: impl fmt::Display) -> OpenError {
    OpenError::Database { path: path.to_path_buf(), message: e.to_string() }
}

impl DiskStorage {
    /// Opens (or creates) the database in `dir`, taking its lock, loads
    /// every table and starts the committer.
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
        let tx = db.begin_write().map_err(|e| db_error(&path, e))?;
        tx.open_table(CATALOG).map_err(|e| db_error(&path, e))?;
        tx.open_table(META).map_err(|e| db_error(&path, e))?;
        tx.commit().map_err(|e| db_error(&path, e))?;
        let (seq, generation) = replay(&db, dir).map_err(|e| match e {
            LoadError::Store(e) => OpenError::Corrupt(e),
            LoadError::Db(message) => OpenError::Database { path: path.clone(), message },
        })?;
        let log =
            wal::Wal::create(dir, generation, options.wal_rotate_bytes).map_err(io(&wal::path(dir, generation)))?;
        let (catalog, next_id) = load(&db).map_err(|e| match e {
            LoadError::Store(e) => OpenError::Corrupt(e),
            LoadError::Db(message) => OpenError::Database { path: path.clone(), message },
        })?;
        let shared = Arc::new(Shared {
            catalog: Mutex::new(catalog),
            next_id: AtomicU64::new(next_id),
            queue: Mutex::new(Queue { next_seq: seq, ..Queue::default() }),
            work: Condvar::new(),
            space: Condvar::new(),
            queued: AtomicU64::new(seq),
            synced: watch::Sender::new(Synced { seq, failed: false }),
            poisoned: AtomicBool::new(false),
            fail_next_sync: AtomicBool::new(false),
            syncs: AtomicU64::new(0),
            backlog: Mutex::new(Backlog::default()),
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
                .spawn(move || apply_loop(&db, &owned, &shared))
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
        let bytes: usize = records.iter().map(Record::bytes).sum();
        let mut q = self.shared.queue.lock();
        while !q.batches.is_empty() && q.bytes + bytes > MAX_QUEUED_BYTES && !q.stop {
            self.shared.space.wait(&mut q);
        }
        if q.stop || self.shared.poisoned.load(Ordering::SeqCst) {
            return Err(sync_failed());
        }
        q.next_seq += 1;
        let seq = q.next_seq;
        q.bytes += bytes;
        q.batches.push_back((seq, records));
        self.shared.queued.store(seq, Ordering::Release);
        drop(q);
        self.shared.work.notify_one();
        Ok(())
    }

    fn check_healthy(&self) -> Result<(), StoreError> {
        if self.shared.poisoned.load(Ordering::SeqCst) {
            Err(sync_failed())
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
    let mut batches = Vec::new();
    for (i, (_, path)) in files.iter().enumerate() {
        let bytes = std::fs::read(path).map_err(self::db)?;
        let (read, torn) = wal::decode(&bytes);
        // Only the newest file can end in a torn frame (a crash mid-append).
        if torn && i + 1 < files.len() {
            return Err(StoreError::Corrupt { what: "write-ahead log" }.into());
        }
        batches.extend(read.into_iter().filter(|(seq, _)| *seq > applied));
    }
    let last = batches.last().map_or(applied, |(seq, _)| *seq);
    if !batches.is_empty() {
        write_batches(db, &batches, last).map_err(self::db)?;
    }
    for (_, path) in &files {
        std::fs::remove_file(path).map_err(self::db)?;
    }
    wal::sync_dir(dir).map_err(self::db)?;
    Ok((last, files.last().map_or(1, |(g, _)| g + 1)))
}

/// Every table of the catalog with its items, and the next free id.
fn load(db: &redb::Database) -> Result<(BTreeMap<String, Entry>, u64), LoadError> {
    let tx = db.begin_read().map_err(self::db)?;
    let catalog = tx.open_table(CATALOG).map_err(self::db)?;
    let mut tables = BTreeMap::new();
    let mut next_id = 1;
    for row in catalog.iter().map_err(self::db)? {
        let (name, value) = row.map_err(self::db)?;
        let (id, meta) = decode_meta(value.value())?;
        if meta.name != name.value() {
            return Err(StoreError::Corrupt { what: "catalog" }.into());
        }
        next_id = next_id.max(id + 1);
        let mut items = MemStore::new();
        let name = items_table(id);
        match tx.open_table(TableDefinition::<&[u8], &[u8]>::new(&name)) {
            Ok(t) => {
                for row in t.iter().map_err(self::db)? {
                    let (k, v) = row.map_err(self::db)?;
                    items.write(decode_key(k.value())?, Some(Arc::new(decode_item(v.value())?)))?;
                }
            }
            // Created with its first item.
            Err(redb::TableError::TableDoesNotExist(_)) => {}
            Err(e) => return Err(self::db(e)),
        }
        tables.insert(meta.name.clone(), Entry { id, meta, items });
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
        let injected = shared.fail_next_sync.swap(false, Ordering::SeqCst);
        let ok = !shared.poisoned.load(Ordering::SeqCst) && !injected && wal.append(&taken).is_ok();
        if !ok {
            poison(shared);
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
                Err(_) => {
                    drop(b);
                    poison(shared);
                    continue;
                }
            }
        }
        drop(b);
        shared.apply.notify_one();
    }
}

/// Marks the storage failed and wakes everyone who waits on it.
fn poison(shared: &Shared) {
    shared.poisoned.store(true, Ordering::SeqCst);
    shared.synced.send_modify(|s| s.failed = true);
    shared.applied.notify_all();
    shared.space.notify_all();
}

/// The applier: writes every durable batch the committer handed over into
/// the database file, as many as are waiting in one transaction, then
/// deletes the log files the file now holds entirely. Ends when asked to
/// and the backlog is empty.
fn apply_loop(db: &redb::Database, dir: &Path, shared: &Shared) {
    loop {
        let (batches, files) = {
            let mut b = shared.backlog.lock();
            while b.batches.is_empty() && b.done_files.is_empty() && !b.stop {
                shared.apply.wait(&mut b);
            }
            if b.batches.is_empty() && b.done_files.is_empty() {
                return;
            }
            b.bytes = 0;
            (std::mem::take(&mut b.batches), std::mem::take(&mut b.done_files))
        };
        shared.applied.notify_all();
        if shared.poisoned.load(Ordering::SeqCst) {
            // The log keeps them; the next start replays it.
            continue;
        }
        if let Some((last, _)) = batches.last() {
            if write_batches(db, &batches, *last).is_err() {
                poison(shared);
                continue;
            }
        }
        // Each completed file's batches were handed over before its marker.
        let removed = files.iter().all(|g| std::fs::remove_file(wal::path(dir, *g)).is_ok());
        if !removed || (!files.is_empty() && wal::sync_dir(dir).is_err()) {
            poison(shared);
        }
    }
}

/// Writes `batches` in one durable transaction, with `applied` (the last
/// batch's sequence number) as the file's applied mark.
fn write_batches(db: &redb::Database, batches: &[(u64, Vec<Record>)], applied: u64) -> Result<(), redb::Error> {
    let tx = db.begin_write()?;
    {
        tx.open_table(META)?.insert(APPLIED_SEQ, applied)?;
        let mut catalog = tx.open_table(CATALOG)?;
        let mut open: HashMap<u64, redb::Table<&[u8], &[u8]>> = HashMap::new();
        for (_, records) in batches {
            for record in records {
                match record {
                    Record::Put { id, key, value } => {
                        if !open.contains_key(id) {
                            let t = tx.open_table(TableDefinition::<&[u8], &[u8]>::new(&items_table(*id)))?;
                            open.insert(*id, t);
                        }
                        if let Some(t) = open.get_mut(id) {
                            t.insert(key.as_slice(), value.as_slice())?;
                        }
                    }
                    Record::Delete { id, key } => {
                        if !open.contains_key(id) {
                            let t = tx.open_table(TableDefinition::<&[u8], &[u8]>::new(&items_table(*id)))?;
                            open.insert(*id, t);
                        }
                        if let Some(t) = open.get_mut(id) {
                            t.remove(key.as_slice())?;
                        }
                    }
                    Record::Catalog { name, value } => {
                        catalog.insert(name.as_str(), value.as_slice())?;
                    }
                    Record::Drop { name, id } => {
                        catalog.remove(name.as_str())?;
                        open.remove(id);
                        tx.delete_table(TableDefinition::<&[u8], &[u8]>::new(&items_table(*id)))?;
                    }
                }
            }
        }
    }
    tx.commit()?;
    Ok(())
}

/// One table's items: the in-memory copy, and the table's storage id.
struct DiskTable {
    id: u64,
    items: MemStore,
}

impl TableStore for DiskTable {
    fn get(&self, key: &StoreKey) -> Result<Option<Arc<Item>>, StoreError> {
        self.items.get(key)
    }

    /// The memory half of a commit ([`Storage::commit`] queues the disk half).
    fn write(&mut self, key: StoreKey, item: Option<Arc<Item>>) -> Result<Option<Arc<Item>>, StoreError> {
        self.items.write(key, item)
    }

    fn range(
        &self,
        start: Bound<&StoreKey>,
        end: Bound<&StoreKey>,
        direction: Direction,
        visit: Visit<'_>,
    ) -> Result<(), StoreError> {
        self.items.range(start, end, direction, visit)
    }

    fn writes_are_infallible(&self) -> bool {
        true
    }

    fn storage_id(&self) -> Option<u64> {
        Some(self.id)
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
        let items = MemStore::new();
        catalog.insert(meta.name.clone(), Entry { id, meta: meta.clone(), items: items.clone() });
        Ok(Box::new(DiskTable { id, items }))
    }

    fn open_table(&self, name: &str) -> Result<Box<dyn TableStore>, StoreError> {
        match self.shared.catalog.lock().get(name) {
            Some(e) => Ok(Box::new(DiskTable { id: e.id, items: e.items.clone() })),
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

    fn drop_table(&self, name: &str) -> Result<(), StoreError> {
        self.check_healthy()?;
        let mut catalog = self.shared.catalog.lock();
        let Some(entry) = catalog.get(name) else { return Err(StoreError::NoSuchTable(name.to_string())) };
        self.enqueue(vec![Record::Drop { name: name.to_string(), id: entry.id }])?;
        catalog.remove(name);
        Ok(())
    }

    fn commit(
        &self,
        batch: WriteBatch,
        stores: &mut [&mut dyn TableStore],
    ) -> Result<Vec<Option<Arc<Item>>>, StoreError> {
        self.check_healthy()?;
        // Encode first: a batch that cannot be written changes nothing.
        let mut records = Vec::with_capacity(batch.len());
        for m in &batch.mutations {
            let id = stores.get(m.table).and_then(|s| s.storage_id()).ok_or(StoreError::BadBatch { slot: m.table })?;
            let key = encode_key(&m.key).ok_or(StoreError::Corrupt { what: "key" })?;
            records.push(match &m.item {
                Some(item) => Record::Put { id, key, value: encode_item(item) },
                None => Record::Delete { id, key },
            });
        }
        let replaced = apply_with_undo(batch, stores)?;
        // The engine holds every table lock of the batch: batches on a table
        // are queued in the order they were applied.
        self.enqueue(records)?;
        Ok(replaced)
    }
}
