//! The storage seam: everything the engine needs from storage, so that a
//! durable backend plugs in without the operations changing.
//!
//! Two traits:
//! - [`Storage`] is the database: a **catalog** of tables (create, open,
//!   list, drop, and each table's metadata, everything needed to rebuild it
//!   at start-up) and the **atomic commit** of a [`WriteBatch`].
//! - [`TableStore`] is one table's ordered items: point reads, range walks,
//!   and the single-key write that an in-memory commit is made of; and,
//!   for a backend that keeps them ([`TableStore::stores_index_entries`]),
//!   its secondary-index entries ([`TableStore::index_range`]), written
//!   from a batch's [`IndexMutation`]s. An in-memory table's entries stay
//!   in the engine ([`MemIndex`]).
//!
//! Contract (what a backend may assume, and what it must guarantee):
//! - **Locking is the engine's.** The engine holds a table's write lock
//!   around every `commit` that touches it (all of a commit's tables are
//!   locked in table-name order first), and its read lock around reads. A
//!   backend never sees two commits on one table at once, nor a read of a
//!   table during a commit to it; it needs no locking of its own for that.
//!   `create_table` and `drop_table` run under the engine's registry lock
//!   (one at a time); `save_table_meta` runs under the table's settings
//!   lock, so it may run beside catalog calls for other tables, and must
//!   report `NoSuchTable` if its table was dropped meanwhile.
//! - **A commit is all or nothing.** After `commit` returns `Ok`, every
//!   mutation of the batch is visible; after it returns `Err`, none is
//!   (also after a restart, for a durable backend). A disk backend
//!   implements it as one storage transaction across the tables involved.
//! - **Failures are values.** Every operation that can fail returns
//!   [`StoreError`]; the engine answers the request with
//!   InternalServerError and never panics. A `commit` to a store whose
//!   table was dropped after the engine handed it out (a write racing
//!   DeleteTable) returns `NoSuchTable`, which the engine answers as a
//!   table that is gone (ResourceNotFoundException).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::ops::{Bound, ControlFlow};
use std::sync::Arc;

use dynaburst_model::codec::{self, CodecError, Reader};
use dynaburst_model::{Item, KeyValue, Millis, ScalarType};
use parking_lot::{Mutex, RwLock};

use crate::table::{KeySchema, TableSettings};

/// A storage failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreError {
    /// The catalog has no table of this name.
    NoSuchTable(String),
    /// The catalog already has a table of this name.
    TableExists(String),
    /// The backend's I/O failed (the operation that failed, and how).
    Io { operation: &'static str, kind: std::io::ErrorKind },
    /// Stored data could not be decoded.
    Corrupt { what: &'static str },
    /// A write batch named a table slot that has no store.
    BadBatch { slot: usize },
    /// The backend failed and refuses requests until a restart: the first
    /// failure's operation, kind and message (a full disk says so).
    Failed { operation: &'static str, kind: std::io::ErrorKind, cause: String },
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::NoSuchTable(name) => write!(f, "storage has no table {name}"),
            StoreError::TableExists(name) => write!(f, "storage already has a table {name}"),
            StoreError::Io { operation, kind } => write!(f, "storage {operation} failed: {kind}"),
            StoreError::Corrupt { what } => write!(f, "stored {what} is corrupt"),
            StoreError::BadBatch { slot } => write!(f, "write batch names table slot {slot}, which it was not given"),
            StoreError::Failed { operation, kind, cause } => write!(f, "storage {operation} failed ({kind}): {cause}"),
        }
    }
}

impl std::error::Error for StoreError {}

/// Leading bits of the partition hash that name a size range: backends
/// that keep their items' sizes by hash range ([`Storage::table_sizes`])
/// keep `2^SIZE_RANGE_BITS` ranges per table (partitions split for size
/// at halves of the hash space, which these ranges follow for 8 splits).
pub const SIZE_RANGE_BITS: u32 = 8;

/// The first hash of the size range `hash` falls in.
pub fn size_range_start(hash: u128) -> u128 {
    hash >> (u128::BITS - SIZE_RANGE_BITS) << (u128::BITS - SIZE_RANGE_BITS)
}

impl From<dynaburst_model::codec::CodecError> for StoreError {
    fn from(e: dynaburst_model::codec::CodecError) -> StoreError {
        StoreError::Corrupt { what: e.what }
    }
}

/// Where a sort key sits in the ordered key space. `Low` and `High` are
/// sentinels for open query bounds; hash-only tables store `Absent`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SortSlot {
    Low,
    Absent,
    Value(KeyValue),
    High,
}

/// A primary key placed in the table's key space: ordered by the partition
/// key's hash (as DynamoDB lays items out across partitions, and as Scan
/// returns them), then partition key, then sort key.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StoreKey {
    pub hash: u128,
    pub partition: KeyValue,
    pub sort: SortSlot,
}

impl StoreKey {
    /// The key of an item with this partition and (optional) sort key.
    pub fn new(partition: KeyValue, sort: Option<KeyValue>) -> StoreKey {
        StoreKey {
            hash: partition.partition_hash(),
            partition,
            sort: match sort {
                Some(v) => SortSlot::Value(v),
                None => SortSlot::Absent,
            },
        }
    }
}

/// Where a primary key sits after an index key; `Low` and `High` bound all
/// the entries of one index key.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PrimarySlot {
    Low,
    Key(StoreKey),
    High,
}

/// The key of a secondary-index entry: the index key (the hash of its
/// partition-key components, those components, its sort-key components)
/// followed by the table's primary key. A single-attribute index key has
/// one partition component and at most one sort component; a
/// multi-attribute GSI key up to four of each, sorted component after
/// component. Index keys need not be unique; the primary key makes each
/// entry distinct and orders entries with equal index keys, as DynamoDB
/// orders them.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IndexKey {
    pub hash: u128,
    pub partition: Vec<KeyValue>,
    /// Sort components; `SortSlot::Low`/`High` as the last one bound a
    /// query's range.
    pub sort: Vec<SortSlot>,
    pub primary: PrimarySlot,
}

/// The partition hash of an index partition key: a single component
/// hashes as a table's partition key does; several are folded in order.
pub fn index_partition_hash(partition: &[KeyValue]) -> u128 {
    match partition {
        [one] => one.partition_hash(),
        many => many.iter().fold(0u128, |h, v| h.rotate_left(29) ^ v.partition_hash()),
    }
}

impl IndexKey {
    /// The entry of the item with primary key `primary` under index key
    /// (`partition`, `sort`).
    pub fn new(partition: Vec<KeyValue>, sort: Vec<KeyValue>, primary: StoreKey) -> IndexKey {
        IndexKey {
            hash: index_partition_hash(&partition),
            partition,
            sort: sort.into_iter().map(SortSlot::Value).collect(),
            primary: PrimarySlot::Key(primary),
        }
    }

    /// A bound in index partition `partition` at sort position `sort`, before
    /// (`Low`) or after (`High`) every primary key there.
    pub fn bound(hash: u128, partition: &[KeyValue], sort: Vec<SortSlot>, primary: PrimarySlot) -> IndexKey {
        IndexKey { hash, partition: partition.to_vec(), sort, primary }
    }

    /// The least key with this partition hash (for parallel-scan segments).
    pub fn hash_floor(hash: u128) -> IndexKey {
        IndexKey { hash, partition: Vec::new(), sort: Vec::new(), primary: PrimarySlot::Low }
    }
}

/// Which way a range is walked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Forward,
    Backward,
}

/// One range of an index's stored sizes: (first hash of the range, entries,
/// bytes of the entries).
pub type IndexRange = (u128, u64, u64);

/// The keys a range walk covers: `(start, end)`.
pub type KeySpan<'a> = (Bound<&'a StoreKey>, Bound<&'a StoreKey>);

/// Every key: a walk over the whole table.
pub const ALL_KEYS: KeySpan<'static> = (Bound::Unbounded, Bound::Unbounded);

/// A visitor over stored items; return `ControlFlow::Break(())` to stop.
pub type Visit<'a> = &'a mut dyn FnMut(&StoreKey, &Arc<Item>) -> ControlFlow<()>;

/// One table's ordered items. Items are shared (`Arc`) so that reads never
/// copy a whole item while holding the table's lock.
pub trait TableStore: Send + Sync {
    /// The item stored under `key`.
    fn get(&self, key: &StoreKey) -> Result<Option<Arc<Item>>, StoreError>;
    /// Stores `item` under `key` (`None` deletes), returning the item it
    /// replaced. Only [`Storage::commit`] calls it: a durable backend whose
    /// commit writes through its own transaction may use it to update a
    /// cache, or refuse it.
    fn write(&mut self, key: StoreKey, item: Option<Arc<Item>>) -> Result<Option<Arc<Item>>, StoreError>;
    /// Visits items with keys in `span` in `direction`. An empty or
    /// inverted span visits nothing.
    fn range(&self, span: KeySpan<'_>, direction: Direction, visit: Visit<'_>) -> Result<(), StoreError>;
    /// True when `write` cannot fail (memory): a commit then keeps no undo
    /// log, so it copies no keys.
    fn writes_are_infallible(&self) -> bool {
        false
    }
    /// True when the items live in memory (and count against the engine's
    /// memory budget); a disk backend's live in its file.
    fn holds_items_in_memory(&self) -> bool {
        true
    }
    /// The backend's own id of this table, for a backend whose `commit`
    /// writes each slot's mutations to its own table (memory: none).
    fn storage_id(&self) -> Option<u64> {
        None
    }
    /// True when the backend stores the table's secondary-index entries
    /// (a durable one: written from [`WriteBatch::index_writes`], read with
    /// [`TableStore::index_range`]); the engine then keeps none in memory.
    /// False (memory): the engine keeps them in a [`MemIndex`] per index.
    fn stores_index_entries(&self) -> bool {
        false
    }
    /// Visits the entries of index `index` with keys in `span` in
    /// direction `dir` (a backend that stores index entries). An empty or
    /// inverted span visits nothing.
    fn index_range(
        &self,
        _index: &str,
        _span: IndexSpan<'_>,
        _dir: Direction,
        _visit: IndexVisit<'_>,
    ) -> Result<(), StoreError> {
        Err(StoreError::Io { operation: "index read", kind: std::io::ErrorKind::Unsupported })
    }
}

/// The index keys a range walk covers: `(start, end)`.
pub type IndexSpan<'a> = (Bound<&'a IndexKey>, Bound<&'a IndexKey>);

/// A visitor over stored index entries; return `ControlFlow::Break(())` to
/// stop.
pub type IndexVisit<'a> = &'a mut dyn FnMut(&IndexKey, &Arc<Item>) -> ControlFlow<()>;

/// One write of a secondary-index entry: `entry` (the projected item)
/// under `key` in index `index` of the batch's table slot `table` (`None`
/// deletes). Only for stores that [`TableStore::stores_index_entries`].
#[derive(Clone, Debug)]
pub struct IndexMutation {
    pub table: usize,
    pub index: String,
    pub key: IndexKey,
    pub entry: Option<Arc<Item>>,
    /// The DynamoDB size of the entry under `key` this write replaces
    /// (`None`: there is none), so a store's counts need no read.
    pub replaced: Option<u64>,
}

/// One write of a batch: `item` under `key` in the batch's table slot
/// `table` (`None` deletes).
#[derive(Clone, Debug)]
pub struct Mutation {
    pub table: usize,
    pub key: StoreKey,
    pub item: Option<Arc<Item>>,
}

/// Writes that commit together or not at all. `table` slots index the
/// stores handed to [`Storage::commit`] with the batch.
///
/// Hook point: this is what the engine's write funnel (`write.rs`) builds
/// for every mutation of every operation. For tables whose store keeps
/// index entries, the funnel adds the entries the items' writes change
/// (`index_writes`), so they commit atomically with the items they
/// describe.
#[derive(Clone, Debug, Default)]
pub struct WriteBatch {
    pub mutations: Vec<Mutation>,
    /// Index entries written with the items (stores that keep them).
    pub index_writes: Vec<IndexMutation>,
}

impl WriteBatch {
    /// An empty batch with room for `n` mutations.
    pub fn with_capacity(n: usize) -> WriteBatch {
        WriteBatch { mutations: Vec::with_capacity(n), index_writes: Vec::new() }
    }

    /// Number of item mutations.
    pub fn len(&self) -> usize {
        self.mutations.len()
    }

    /// True when the batch writes nothing.
    pub fn is_empty(&self) -> bool {
        self.mutations.is_empty() && self.index_writes.is_empty()
    }
}

/// Everything needed to rebuild a table at start-up.
#[derive(Clone, Debug, PartialEq)]
pub struct TableMeta {
    pub name: String,
    pub table_id: String,
    /// ARN parts: `arn:aws:dynamodb:{region}:{account_id}:table/{name}`.
    pub region: String,
    pub account_id: String,
    pub key_schema: KeySchema,
    pub attribute_definitions: Vec<(String, ScalarType)>,
    /// Billing mode and the history UpdateTable keeps.
    pub settings: TableSettings,
    pub created_at: Millis,
    /// Secondary index definitions (a store that keeps index entries keeps
    /// them; otherwise they are rebuilt from the items when the table is
    /// opened).
    pub indexes: Vec<crate::index::IndexDef>,
    /// The table's tags, in the order they were first set.
    pub tags: Vec<(String, String)>,
}

impl TableMeta {
    /// The table's ARN.
    pub fn arn(&self) -> String {
        format!("arn:aws:dynamodb:{}:{}:table/{}", self.region, self.account_id, self.name)
    }
}

/// The database: a catalog of tables and the atomic commit.
pub trait Storage: Send + Sync {
    /// Records a new table and returns its (empty) store.
    fn create_table(&self, meta: &TableMeta) -> Result<Box<dyn TableStore>, StoreError>;
    /// The store of a table the catalog holds.
    fn open_table(&self, name: &str) -> Result<Box<dyn TableStore>, StoreError>;
    /// Every table's metadata, in name order.
    fn list_tables(&self) -> Result<Vec<TableMeta>, StoreError>;
    /// Replaces a table's metadata (UpdateTable).
    fn save_table_meta(&self, meta: &TableMeta) -> Result<(), StoreError>;
    /// Forgets a table and its items.
    fn drop_table(&self, name: &str) -> Result<(), StoreError>;
    /// The table's item count and the sum of its items' sizes, when the
    /// backend keeps them (a durable one, so that start-up need not read
    /// every item); `None` makes the engine count by walking the items.
    fn table_stats(&self, _name: &str) -> Result<Option<(u64, u64)>, StoreError> {
        Ok(None)
    }
    /// The sum of the table's items' sizes by partition-hash range, as
    /// `(first hash of the range, bytes)` in hash order, when the backend
    /// keeps them (so that the capacity model restarts with its
    /// partitions' sizes); `None` makes the engine measure them by walking
    /// the items when it walks them, or start them at zero.
    fn table_sizes(&self, _name: &str) -> Result<Option<Vec<(u128, u64)>>, StoreError> {
        Ok(None)
    }
    /// The entry count and the sum of the entries' sizes of index `index`
    /// of table `name` by index-partition-hash range, as `(first hash of
    /// the range, entries, bytes)` in hash order, when the backend stores
    /// index entries and keeps their counts (so that start-up reads no
    /// entry: the index's counts, and its GSI's partition sizes); `None`
    /// makes the engine count them by walking the items.
    fn index_sizes(&self, _name: &str, _index: &str) -> Result<Option<Vec<IndexRange>>, StoreError> {
        Ok(None)
    }
    /// The names of the indexes of table `name` whose entries the backend
    /// stores (empty for a backend that stores none).
    fn stored_index_names(&self, _name: &str) -> Result<Vec<String>, StoreError> {
        Ok(Vec::new())
    }
    /// Forgets every stored entry of index `index` of table `name` (an
    /// index deleted by UpdateTable, or the leftovers of one whose creation
    /// did not finish); a no-op for a backend that stores none. When it
    /// returns, no read of that index sees an entry written before it.
    fn drop_index(&self, _name: &str, _index: &str) -> Result<(), StoreError> {
        Ok(())
    }
    /// Applies every mutation of `batch`, all or nothing; `stores[slot]` is
    /// the (write-locked) store of table slot `slot`. Returns the item each
    /// mutation replaced, in batch order. The default applies the writes
    /// one by one and undoes the applied ones if one fails, which is atomic
    /// for stores whose undo cannot fail (memory); a durable backend
    /// overrides it with one storage transaction.
    fn commit(
        &self,
        batch: WriteBatch,
        stores: &mut [&mut dyn TableStore],
    ) -> Result<Vec<Option<Arc<Item>>>, StoreError> {
        apply_with_undo(batch, stores)
    }
}

/// Applies `batch` write by write; on a failure, restores what it had
/// already replaced (newest first) and returns the error. When every store
/// is infallible nothing is logged, so a memory commit copies no keys.
pub fn apply_with_undo(
    batch: WriteBatch,
    stores: &mut [&mut dyn TableStore],
) -> Result<Vec<Option<Arc<Item>>>, StoreError> {
    if let Some(w) = batch.index_writes.first() {
        // Stores this commit applies keep no index entries.
        return Err(StoreError::BadBatch { slot: w.table });
    }
    let n = batch.mutations.len();
    let mut replaced: Vec<Option<Arc<Item>>> = Vec::with_capacity(n);
    // (position in the batch, slot, key) of each logged write.
    let mut undo: Vec<(usize, usize, StoreKey)> = Vec::new();
    let log = stores.iter().any(|s| !s.writes_are_infallible());
    for (i, m) in batch.mutations.into_iter().enumerate() {
        let Some(store) = stores.get_mut(m.table) else {
            undo_writes(undo, &mut replaced, stores);
            return Err(StoreError::BadBatch { slot: m.table });
        };
        // The last write needs no undo: nothing after it can fail.
        if log && i + 1 < n {
            undo.push((i, m.table, m.key.clone()));
        }
        match store.write(m.key, m.item) {
            Ok(old) => replaced.push(old),
            Err(e) => {
                // The failed write changed nothing.
                if undo.last().is_some_and(|(at, _, _)| *at == i) {
                    undo.pop();
                }
                undo_writes(undo, &mut replaced, stores);
                return Err(e);
            }
        }
    }
    Ok(replaced)
}

fn undo_writes(
    undo: Vec<(usize, usize, StoreKey)>,
    replaced: &mut [Option<Arc<Item>>],
    stores: &mut [&mut dyn TableStore],
) {
    for (at, slot, key) in undo.into_iter().rev() {
        if let (Some(store), Some(old)) = (stores.get_mut(slot), replaced.get_mut(at)) {
            // Best effort: restoring the replaced item is the same write
            // the store just accepted for this key.
            let _ = store.write(key, old.take());
        }
    }
}

/// Walks `map` over `(start, end)` in `direction`. An empty or inverted
/// range visits nothing (`BTreeMap::range` would panic).
pub fn walk_range<K: Ord, V>(
    map: &BTreeMap<K, V>,
    start: Bound<&K>,
    end: Bound<&K>,
    direction: Direction,
    visit: &mut dyn FnMut(&K, &V) -> ControlFlow<()>,
) {
    if let (Bound::Included(s) | Bound::Excluded(s), Bound::Included(e) | Bound::Excluded(e)) = (start, end) {
        if s > e || (s == e && !(matches!(start, Bound::Included(_)) && matches!(end, Bound::Included(_)))) {
            return;
        }
    }
    let range = map.range::<K, _>((start, end));
    match direction {
        Direction::Forward => {
            for (k, v) in range {
                if visit(k, v).is_break() {
                    return;
                }
            }
        }
        Direction::Backward => {
            for (k, v) in range.rev() {
                if visit(k, v).is_break() {
                    return;
                }
            }
        }
    }
}

/// A store's entry: the key's hash inline, so that the ordered set's
/// searches compare hashes within its nodes and follow a pointer only when
/// two hashes tie; and one allocation holding the length of the rest of
/// the key's ordered form (LEB128), that rest (the key values, in bytes
/// that compare as the keys do), then the item in `dynaburst_model::codec`'s
/// compact form, with its key attributes as references to the key. Entries
/// order by (hash, key bytes); a probe is an entry without an item.
struct Entry {
    hash: u128,
    bytes: Box<[u8]>,
}

/// `v` in LEB128, and how many of the bytes it takes.
fn leb128(mut v: usize) -> ([u8; 10], usize) {
    let mut out = [0u8; 10];
    for (n, slot) in out.iter_mut().enumerate() {
        *slot = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            return (out, n + 1);
        }
        *slot |= 0x80;
    }
    (out, 10)
}

/// Where an entry's key bytes start and end.
fn key_span(bytes: &[u8]) -> (usize, usize) {
    let mut len = 0usize;
    for (i, &b) in bytes.iter().enumerate().take(10) {
        len |= usize::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return (i + 1, (i + 1).saturating_add(len).min(bytes.len()));
        }
    }
    (bytes.len(), bytes.len())
}

impl Entry {
    /// The entry of `item` (when given, with the key values it may refer
    /// to) under the key of hash `hash` whose other bytes `key` writes;
    /// `scratch` is reused between entries. Allocates exactly once.
    fn new(
        hash: u128,
        key: impl FnOnce(&mut Vec<u8>),
        item: Option<(&Item, &[&KeyValue])>,
        scratch: &mut Vec<u8>,
    ) -> Entry {
        scratch.clear();
        key(scratch);
        let (head, n) = leb128(scratch.len());
        if let Some((item, keys)) = item {
            codec::write_compact(scratch, item, keys);
        }
        let mut bytes = Vec::with_capacity(n + scratch.len());
        bytes.extend_from_slice(&head[..n]);
        bytes.extend_from_slice(scratch);
        Entry { hash, bytes: bytes.into_boxed_slice() }
    }

    /// A key to look entries up by.
    fn probe(hash: u128, key: impl FnOnce(&mut Vec<u8>)) -> Entry {
        Entry::new(hash, key, None, &mut Vec::with_capacity(64))
    }

    fn key(&self) -> &[u8] {
        let (start, end) = key_span(&self.bytes);
        &self.bytes[start..end]
    }

    fn item(&self, keys: &[&KeyValue]) -> Result<Arc<Item>, StoreError> {
        let (_, end) = key_span(&self.bytes);
        Ok(Arc::new(codec::read_compact(&self.bytes[end..], keys)?))
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Entry) -> bool {
        self.hash == other.hash && self.key() == other.key()
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Entry) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    fn cmp(&self, other: &Entry) -> std::cmp::Ordering {
        self.hash.cmp(&other.hash).then_with(|| self.key().cmp(other.key()))
    }
}

/// Order bytes of a sort slot: `Low` < `Absent` < a value < `High`.
fn write_sort_slot(buf: &mut Vec<u8>, slot: &SortSlot) {
    match slot {
        SortSlot::Low => buf.push(0),
        SortSlot::Absent => buf.push(1),
        SortSlot::Value(v) => {
            buf.push(2);
            codec::write_ordered(buf, v);
        }
        SortSlot::High => buf.push(3),
    }
}

fn read_sort_slot(r: &mut Reader<'_>) -> Result<SortSlot, CodecError> {
    Ok(match r.u8()? {
        0 => SortSlot::Low,
        1 => SortSlot::Absent,
        2 => SortSlot::Value(r.ordered()?),
        3 => SortSlot::High,
        _ => return Err(r.corrupt()),
    })
}

/// A primary key's ordered form after its hash: the partition key, the
/// sort slot. With the hash first, its bytes order as [`StoreKey`]s do.
fn write_store_key_rest(buf: &mut Vec<u8>, key: &StoreKey) {
    codec::write_ordered(buf, &key.partition);
    write_sort_slot(buf, &key.sort);
}

fn read_store_key_rest(hash: u128, r: &mut Reader<'_>) -> Result<StoreKey, CodecError> {
    Ok(StoreKey { hash, partition: r.ordered()?, sort: read_sort_slot(r)? })
}

fn read_hash(r: &mut Reader<'_>) -> Result<u128, CodecError> {
    r.take(16)?.try_into().map(u128::from_be_bytes).map_err(|_| r.corrupt())
}

fn store_probe(key: &StoreKey) -> Entry {
    Entry::probe(key.hash, |buf| write_store_key_rest(buf, key))
}

/// The key values a stored item refers to: its partition and sort key.
fn store_key_values(key: &StoreKey) -> ([&KeyValue; 2], usize) {
    match &key.sort {
        SortSlot::Value(v) => ([&key.partition, v], 2),
        _ => ([&key.partition, &key.partition], 1),
    }
}

/// A sequence in order: each element after a 1, the end a 0 (so a shorter
/// sequence that is a prefix of a longer one orders first, as `Vec` does).
fn write_ordered_seq<T>(buf: &mut Vec<u8>, items: &[T], write: impl Fn(&mut Vec<u8>, &T)) {
    for item in items {
        buf.push(1);
        write(buf, item);
    }
    buf.push(0);
}

fn read_ordered_seq<T>(
    r: &mut Reader<'_>,
    read: impl Fn(&mut Reader<'_>) -> Result<T, CodecError>,
) -> Result<Vec<T>, CodecError> {
    let mut out = Vec::new();
    // Each element takes at least two bytes, so the input bounds the loop.
    while r.u8()? == 1 {
        out.push(read(r)?);
    }
    Ok(out)
}

/// An index key's ordered form after its hash: partition components, sort
/// components, then the primary key (hash and all). With the hash first,
/// its bytes order as [`IndexKey`]s do.
fn write_index_key_rest(buf: &mut Vec<u8>, key: &IndexKey) {
    write_ordered_seq(buf, &key.partition, codec::write_ordered);
    write_ordered_seq(buf, &key.sort, write_sort_slot);
    match &key.primary {
        PrimarySlot::Low => buf.push(0),
        PrimarySlot::Key(k) => {
            buf.push(1);
            buf.extend_from_slice(&k.hash.to_be_bytes());
            write_store_key_rest(buf, k);
        }
        PrimarySlot::High => buf.push(2),
    }
}

fn read_index_key_rest(hash: u128, r: &mut Reader<'_>) -> Result<IndexKey, CodecError> {
    let partition = read_ordered_seq(r, |r| r.ordered())?;
    let sort = read_ordered_seq(r, read_sort_slot)?;
    let primary = match r.u8()? {
        0 => PrimarySlot::Low,
        1 => {
            let h = read_hash(r)?;
            PrimarySlot::Key(read_store_key_rest(h, r)?)
        }
        2 => PrimarySlot::High,
        _ => return Err(r.corrupt()),
    };
    Ok(IndexKey { hash, partition, sort, primary })
}

/// An index key as bytes that compare (bytewise) as the keys do: the
/// partition hash (big-endian), then the rest of its ordered form. For a
/// backend that stores index entries under their keys.
pub fn encode_index_key(key: &IndexKey) -> Vec<u8> {
    let mut buf = Vec::with_capacity(64);
    buf.extend_from_slice(&key.hash.to_be_bytes());
    write_index_key_rest(&mut buf, key);
    buf
}

/// The index key of [`encode_index_key`]'s bytes.
pub fn decode_index_key(bytes: &[u8]) -> Result<IndexKey, StoreError> {
    let mut r = Reader::new(bytes, "index key");
    let hash = read_hash(&mut r)?;
    let key = read_index_key_rest(hash, &mut r)?;
    r.end()?;
    Ok(key)
}

/// A primary key (or a query's bound, `SortSlot::Low`/`High` included) as
/// bytes that compare (bytewise) as the keys do: the partition hash
/// (big-endian), then the rest of its ordered form. For a backend that
/// stores items under their keys in a bytewise-ordered file.
pub fn encode_store_key(key: &StoreKey) -> Vec<u8> {
    let mut buf = Vec::with_capacity(48);
    buf.extend_from_slice(&key.hash.to_be_bytes());
    write_store_key_rest(&mut buf, key);
    buf
}

/// The primary key of [`encode_store_key`]'s bytes.
pub fn decode_store_key(bytes: &[u8]) -> Result<StoreKey, StoreError> {
    let mut r = Reader::new(bytes, "key");
    let hash = read_hash(&mut r)?;
    let key = read_store_key_rest(hash, &mut r)?;
    r.end()?;
    Ok(key)
}

fn index_probe(key: &IndexKey) -> Entry {
    Entry::probe(key.hash, |buf| write_index_key_rest(buf, key))
}

/// The key values an index entry refers to: its index key's components
/// and its primary key.
fn index_key_values(key: &IndexKey) -> Vec<&KeyValue> {
    let sort = key.sort.iter().filter_map(|s| match s {
        SortSlot::Value(v) => Some(v),
        _ => None,
    });
    let primary = match &key.primary {
        PrimarySlot::Key(k) => {
            let (values, n) = store_key_values(k);
            values.into_iter().take(n).collect()
        }
        _ => Vec::new(),
    };
    key.partition.iter().chain(sort).chain(primary).collect()
}

/// A bound as a probe entry.
fn probe_bound<K>(bound: Bound<&K>, probe: impl Fn(&K) -> Entry) -> Bound<Entry> {
    match bound {
        Bound::Included(k) => Bound::Included(probe(k)),
        Bound::Excluded(k) => Bound::Excluded(probe(k)),
        Bound::Unbounded => Bound::Unbounded,
    }
}

/// Walks the entries of `set` in `(start, end)` in `direction`. An empty
/// or inverted range visits nothing (`BTreeSet::range` would panic).
fn walk_entries(
    set: &BTreeSet<Entry>,
    start: Bound<Entry>,
    end: Bound<Entry>,
    direction: Direction,
    visit: &mut dyn FnMut(&Entry) -> Result<ControlFlow<()>, StoreError>,
) -> Result<(), StoreError> {
    if let (Bound::Included(s) | Bound::Excluded(s), Bound::Included(e) | Bound::Excluded(e)) = (&start, &end) {
        if s > e || (s == e && !(matches!(start, Bound::Included(_)) && matches!(end, Bound::Included(_)))) {
            return Ok(());
        }
    }
    let range = set.range::<Entry, _>((start.as_ref(), end.as_ref()));
    match direction {
        Direction::Forward => {
            for entry in range {
                if visit(entry)?.is_break() {
                    break;
                }
            }
        }
        Direction::Backward => {
            for entry in range.rev() {
                if visit(entry)?.is_break() {
                    break;
                }
            }
        }
    }
    Ok(())
}

/// The items of a [`MemStore`], and the buffer entries are encoded in.
#[derive(Default)]
struct MemItems {
    entries: BTreeSet<Entry>,
    scratch: Vec<u8>,
}

/// The in-memory table store: the items as compact entries (see `Entry`)
/// in one ordered set, shared with the catalog of the [`MemStorage`] that
/// made it so that `open_table` finds the items. Reads decode the entries
/// they return. The inner lock is uncontended: the engine's table lock
/// serializes.
#[derive(Clone, Default)]
pub struct MemStore {
    items: Arc<RwLock<MemItems>>,
}

impl MemStore {
    /// An empty store.
    pub fn new() -> MemStore {
        MemStore::default()
    }

    /// Number of items stored.
    pub fn len(&self) -> usize {
        self.items.read().entries.len()
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.items.read().entries.is_empty()
    }
}

impl TableStore for MemStore {
    fn get(&self, key: &StoreKey) -> Result<Option<Arc<Item>>, StoreError> {
        let items = self.items.read();
        let Some(entry) = items.entries.get(&store_probe(key)) else { return Ok(None) };
        let (values, n) = store_key_values(key);
        entry.item(&values[..n]).map(Some)
    }

    fn write(&mut self, key: StoreKey, item: Option<Arc<Item>>) -> Result<Option<Arc<Item>>, StoreError> {
        let mut items = self.items.write();
        let MemItems { entries, scratch } = &mut *items;
        let (values, n) = store_key_values(&key);
        let write_key = |buf: &mut Vec<u8>| write_store_key_rest(buf, &key);
        let old = match item {
            Some(item) => entries.replace(Entry::new(key.hash, write_key, Some((&item, &values[..n])), scratch)),
            None => entries.take(&Entry::new(key.hash, write_key, None, scratch)),
        };
        old.map(|e| e.item(&values[..n])).transpose()
    }

    fn range(&self, (start, end): KeySpan<'_>, direction: Direction, visit: Visit<'_>) -> Result<(), StoreError> {
        let items = self.items.read();
        let (start, end) = (probe_bound(start, store_probe), probe_bound(end, store_probe));
        walk_entries(&items.entries, start, end, direction, &mut |entry| {
            let key = read_store_key_rest(entry.hash, &mut Reader::new(entry.key(), "key"))?;
            let (values, n) = store_key_values(&key);
            let item = entry.item(&values[..n])?;
            Ok(visit(&key, &item))
        })
    }

    fn writes_are_infallible(&self) -> bool {
        true
    }
}

/// The in-memory index store: entries ordered by [`IndexKey`], each
/// holding its projected item, compact as a [`MemStore`]'s items (the index
/// key's components and the primary key are not stored twice).
#[derive(Default)]
pub struct MemIndex {
    entries: BTreeSet<Entry>,
    scratch: Vec<u8>,
}

impl MemIndex {
    /// An empty index.
    pub fn new() -> MemIndex {
        MemIndex::default()
    }

    /// Adds (or replaces) the entry under `key`; true when it replaced one.
    pub fn insert(&mut self, key: IndexKey, item: &Item) -> bool {
        let values = index_key_values(&key);
        let entry =
            Entry::new(key.hash, |buf| write_index_key_rest(buf, &key), Some((item, &values)), &mut self.scratch);
        self.entries.replace(entry).is_some()
    }

    /// Removes the entry under `key`; true when there was one.
    pub fn remove(&mut self, key: &IndexKey) -> bool {
        self.entries.remove(&index_probe(key))
    }

    /// Visits entries with keys in `(start, end)` in `direction`.
    pub fn range(
        &self,
        start: Bound<&IndexKey>,
        end: Bound<&IndexKey>,
        direction: Direction,
        visit: &mut dyn FnMut(&IndexKey, &Arc<Item>) -> ControlFlow<()>,
    ) -> Result<(), StoreError> {
        let (start, end) = (probe_bound(start, index_probe), probe_bound(end, index_probe));
        walk_entries(&self.entries, start, end, direction, &mut |entry| {
            let key = read_index_key_rest(entry.hash, &mut Reader::new(entry.key(), "index key"))?;
            let item = entry.item(&index_key_values(&key))?;
            Ok(visit(&key, &item))
        })
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when the index has no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The in-memory database: the catalog in a map. Items live as long as the
/// `MemStorage` (an engine reopened on it finds them).
#[derive(Default)]
pub struct MemStorage {
    tables: Mutex<BTreeMap<String, (TableMeta, MemStore)>>,
}

impl MemStorage {
    /// An empty database.
    pub fn new() -> MemStorage {
        MemStorage::default()
    }
}

impl Storage for MemStorage {
    fn create_table(&self, meta: &TableMeta) -> Result<Box<dyn TableStore>, StoreError> {
        let mut tables = self.tables.lock();
        if tables.contains_key(&meta.name) {
            return Err(StoreError::TableExists(meta.name.clone()));
        }
        let store = MemStore::new();
        tables.insert(meta.name.clone(), (meta.clone(), store.clone()));
        Ok(Box::new(store))
    }

    fn open_table(&self, name: &str) -> Result<Box<dyn TableStore>, StoreError> {
        match self.tables.lock().get(name) {
            Some((_, store)) => Ok(Box::new(store.clone())),
            None => Err(StoreError::NoSuchTable(name.to_string())),
        }
    }

    fn list_tables(&self) -> Result<Vec<TableMeta>, StoreError> {
        Ok(self.tables.lock().values().map(|(meta, _)| meta.clone()).collect())
    }

    fn save_table_meta(&self, meta: &TableMeta) -> Result<(), StoreError> {
        match self.tables.lock().get_mut(&meta.name) {
            Some((m, _)) => {
                *m = meta.clone();
                Ok(())
            }
            None => Err(StoreError::NoSuchTable(meta.name.clone())),
        }
    }

    fn drop_table(&self, name: &str) -> Result<(), StoreError> {
        match self.tables.lock().remove(name) {
            Some(_) => Ok(()),
            None => Err(StoreError::NoSuchTable(name.to_string())),
        }
    }
}

/// Marks the stored names of the tables of a region other than the
/// storage's home region: `@{region}/{name}`. Table names hold only
/// `[a-zA-Z0-9_.-]` and hidden ones start with `#`, so no table name of
/// the home region starts with it, and a region name holds no `/`.
const REGION_MARK: char = '@';

/// One region's tables in a storage that holds every region's (DynamoDB
/// scopes tables by region, S166). The home region's tables keep their
/// names as they are, so a storage written before regions were stored
/// reads the same; another region's are stored as `@{region}/{name}`.
/// Every call maps the names both ways; the commit and the table stores
/// pass through.
pub struct RegionStorage {
    inner: Arc<dyn Storage>,
    /// `@{region}/`, or empty for the home region.
    prefix: String,
}

impl RegionStorage {
    /// Region `region`'s tables in `inner`, whose unmarked tables are
    /// region `home`'s.
    pub fn new(inner: Arc<dyn Storage>, home: &str, region: &str) -> RegionStorage {
        let prefix = if region == home { String::new() } else { format!("{REGION_MARK}{region}/") };
        RegionStorage { inner, prefix }
    }

    /// The regions other than the home region that `inner` holds tables
    /// of, in name order.
    pub fn other_regions(inner: &dyn Storage) -> Result<Vec<String>, StoreError> {
        let regions: BTreeSet<String> = inner
            .list_tables()?
            .into_iter()
            .filter_map(|m| Some(m.name.strip_prefix(REGION_MARK)?.split_once('/')?.0.to_string()))
            .collect();
        Ok(regions.into_iter().collect())
    }

    fn stored(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// The region's own name of stored name `stored`; `None` for another
    /// region's table.
    fn own<'a>(&self, stored: &'a str) -> Option<&'a str> {
        match self.prefix.is_empty() {
            true => (!stored.starts_with(REGION_MARK)).then_some(stored),
            false => stored.strip_prefix(self.prefix.as_str()),
        }
    }

    fn stored_meta(&self, meta: &TableMeta) -> TableMeta {
        TableMeta { name: self.stored(&meta.name), ..meta.clone() }
    }

    /// `e` with the region's own table names.
    fn own_error(&self, e: StoreError) -> StoreError {
        match e {
            StoreError::NoSuchTable(n) => StoreError::NoSuchTable(self.own(&n).map_or(n.clone(), str::to_string)),
            StoreError::TableExists(n) => StoreError::TableExists(self.own(&n).map_or(n.clone(), str::to_string)),
            e => e,
        }
    }
}

impl Storage for RegionStorage {
    fn create_table(&self, meta: &TableMeta) -> Result<Box<dyn TableStore>, StoreError> {
        self.inner.create_table(&self.stored_meta(meta)).map_err(|e| self.own_error(e))
    }
    fn open_table(&self, name: &str) -> Result<Box<dyn TableStore>, StoreError> {
        self.inner.open_table(&self.stored(name)).map_err(|e| self.own_error(e))
    }
    fn list_tables(&self) -> Result<Vec<TableMeta>, StoreError> {
        let metas = self.inner.list_tables()?;
        Ok(metas
            .into_iter()
            .filter_map(|m| {
                let name = self.own(&m.name)?.to_string();
                Some(TableMeta { name, ..m })
            })
            .collect())
    }
    fn save_table_meta(&self, meta: &TableMeta) -> Result<(), StoreError> {
        self.inner.save_table_meta(&self.stored_meta(meta)).map_err(|e| self.own_error(e))
    }
    fn drop_table(&self, name: &str) -> Result<(), StoreError> {
        self.inner.drop_table(&self.stored(name)).map_err(|e| self.own_error(e))
    }
    fn table_stats(&self, name: &str) -> Result<Option<(u64, u64)>, StoreError> {
        self.inner.table_stats(&self.stored(name)).map_err(|e| self.own_error(e))
    }
    fn table_sizes(&self, name: &str) -> Result<Option<Vec<(u128, u64)>>, StoreError> {
        self.inner.table_sizes(&self.stored(name)).map_err(|e| self.own_error(e))
    }
    fn index_sizes(&self, name: &str, index: &str) -> Result<Option<Vec<IndexRange>>, StoreError> {
        self.inner.index_sizes(&self.stored(name), index).map_err(|e| self.own_error(e))
    }
    fn stored_index_names(&self, name: &str) -> Result<Vec<String>, StoreError> {
        self.inner.stored_index_names(&self.stored(name)).map_err(|e| self.own_error(e))
    }
    fn drop_index(&self, name: &str, index: &str) -> Result<(), StoreError> {
        self.inner.drop_index(&self.stored(name), index).map_err(|e| self.own_error(e))
    }
    fn commit(
        &self,
        batch: WriteBatch,
        stores: &mut [&mut dyn TableStore],
    ) -> Result<Vec<Option<Arc<Item>>>, StoreError> {
        self.inner.commit(batch, stores)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::KeyAttr;
    use crate::types::BillingMode;
    use dynaburst_model::{AttributeValue, Number};

    fn key(pk: &str, sk: i64) -> StoreKey {
        StoreKey::new(KeyValue::S(pk.into()), Some(KeyValue::N(Number::from_i64(sk))))
    }

    fn item(i: i64) -> Arc<Item> {
        let mut item = Item::new();
        item.insert("i".into(), AttributeValue::N(Number::from_i64(i)));
        Arc::new(item)
    }

    /// How many entries a walk visits (`walk` calls its argument for each).
    fn visits(walk: impl FnOnce(&mut dyn FnMut() -> ControlFlow<()>)) -> usize {
        let mut n = 0;
        walk(&mut || {
            n += 1;
            ControlFlow::Continue(())
        });
        n
    }

    fn count_items(s: &MemStore, start: Bound<&StoreKey>, end: Bound<&StoreKey>) -> usize {
        visits(|v| s.range((start, end), Direction::Forward, &mut |_, _| v()).unwrap())
    }

    fn count_entries(ix: &MemIndex, start: Bound<&IndexKey>, end: Bound<&IndexKey>) -> usize {
        visits(|v| ix.range(start, end, Direction::Forward, &mut |_, _| v()).unwrap())
    }

    fn sort_text(k: &StoreKey) -> String {
        match &k.sort {
            SortSlot::Value(KeyValue::N(n)) => n.to_string(),
            other => format!("{other:?}"),
        }
    }

    #[test]
    fn ranges_walk_both_ways_and_empty_ranges_do_not_panic() {
        let mut s = MemStore::new();
        for i in 0..5 {
            s.write(key("a", i), Some(item(i))).unwrap();
        }
        let mut seen = vec![];
        s.range((Bound::Included(&key("a", 1)), Bound::Excluded(&key("a", 4))), Direction::Backward, &mut |k, _| {
            seen.push(sort_text(k));
            ControlFlow::Continue(())
        })
        .unwrap();
        assert_eq!(seen, ["3", "2", "1"]);
        assert_eq!(count_items(&s, Bound::Excluded(&key("a", 3)), Bound::Excluded(&key("a", 1))), 0);
        assert_eq!(count_items(&s, Bound::Excluded(&key("a", 3)), Bound::Excluded(&key("a", 3))), 0);
        assert_eq!(count_items(&s, Bound::Included(&key("a", 1)), Bound::Included(&key("a", 3))), 3);
    }

    #[test]
    fn write_returns_the_replaced_item_and_none_deletes() {
        let mut s = MemStore::new();
        assert_eq!(s.write(key("a", 1), Some(item(1))).unwrap(), None);
        assert_eq!(s.write(key("a", 1), Some(item(2))).unwrap().as_deref(), Some(&*item(1)));
        assert_eq!(s.get(&key("a", 1)).unwrap().as_deref(), Some(&*item(2)));
        assert_eq!(s.write(key("a", 1), None).unwrap().as_deref(), Some(&*item(2)));
        assert_eq!(s.get(&key("a", 1)).unwrap(), None);
        assert!(s.is_empty());
    }

    fn index_key(ipk: &str, isk: i64, pk: &str) -> IndexKey {
        IndexKey::new(
            vec![KeyValue::S(ipk.into())],
            vec![KeyValue::N(Number::from_i64(isk))],
            StoreKey::new(KeyValue::S(pk.into()), None),
        )
    }

    /// Bounds of every entry of index partition `ipk` whose sort key is `isk`.
    fn bounds_of(ipk: &str, isk: i64) -> (IndexKey, IndexKey) {
        let p = [KeyValue::S(ipk.into())];
        let h = index_partition_hash(&p);
        let sort = vec![SortSlot::Value(KeyValue::N(Number::from_i64(isk)))];
        (IndexKey::bound(h, &p, sort.clone(), PrimarySlot::Low), IndexKey::bound(h, &p, sort, PrimarySlot::High))
    }

    #[test]
    fn index_entries_with_equal_index_keys_are_distinct_and_ordered_by_primary_key() {
        let mut ix = MemIndex::new();
        // Three items share index key ("g", 7); one sits at ("g", 8).
        for pk in ["c", "a", "b"] {
            assert!(!ix.insert(index_key("g", 7, pk), &item(7)));
        }
        ix.insert(index_key("g", 8, "a"), &item(8));
        assert_eq!(ix.len(), 4);
        let (lo, hi) = bounds_of("g", 7);
        let mut seen = vec![];
        ix.range(Bound::Included(&lo), Bound::Included(&hi), Direction::Forward, &mut |k, _| {
            if let PrimarySlot::Key(p) = &k.primary {
                seen.push(p.partition.clone());
            }
            ControlFlow::Continue(())
        })
        .unwrap();
        // Ordered by the primary key's place in the key space (its hash
        // first), so compare with the keys sorted the same way.
        let mut expected: Vec<StoreKey> =
            ["a", "b", "c"].iter().map(|p| StoreKey::new(KeyValue::S(p.to_string()), None)).collect();
        expected.sort();
        assert_eq!(seen, expected.iter().map(|k| k.partition.clone()).collect::<Vec<_>>());
        // Backward, and paging: resume after the first entry seen.
        let mut back = vec![];
        let after = IndexKey { primary: PrimarySlot::Key(expected[2].clone()), ..lo.clone() };
        ix.range(Bound::Included(&lo), Bound::Excluded(&after), Direction::Backward, &mut |k, _| {
            if let PrimarySlot::Key(p) = &k.primary {
                back.push(p.partition.clone());
            }
            ControlFlow::Continue(())
        })
        .unwrap();
        assert_eq!(back, vec![expected[1].partition.clone(), expected[0].partition.clone()]);
        // Removing one entry leaves the others with the same index key.
        assert!(ix.remove(&index_key("g", 7, "b")));
        assert_eq!(count_entries(&ix, Bound::Included(&lo), Bound::Included(&hi)), 2);
        // The whole index partition ("g", Low..High) spans both index keys.
        let p = [KeyValue::S("g".into())];
        let h = index_partition_hash(&p);
        let all_lo = IndexKey::bound(h, &p, vec![SortSlot::Low], PrimarySlot::Low);
        let all_hi = IndexKey::bound(h, &p, vec![SortSlot::High], PrimarySlot::High);
        assert_eq!(count_entries(&ix, Bound::Included(&all_lo), Bound::Included(&all_hi)), 3);
    }

    #[test]
    fn multi_attribute_sort_keys_order_component_after_component() {
        let p = [KeyValue::S("g".into()), KeyValue::N(Number::from_i64(1))];
        let entry = |a: &str, b: i64| {
            IndexKey::new(
                p.to_vec(),
                vec![KeyValue::S(a.into()), KeyValue::N(Number::from_i64(b))],
                StoreKey::new(KeyValue::S(format!("{a}{b}")), None),
            )
        };
        let mut ix = MemIndex::new();
        for (a, b) in [("y", 1), ("x", 3), ("x", 1), ("z", 0)] {
            ix.insert(entry(a, b), &item(b));
        }
        // `a = "x"` then everything: a prefix of the sort components.
        let h = index_partition_hash(&p);
        let x = SortSlot::Value(KeyValue::S("x".into()));
        let lo = IndexKey::bound(h, &p, vec![x.clone(), SortSlot::Low], PrimarySlot::Low);
        let hi = IndexKey::bound(h, &p, vec![x, SortSlot::High], PrimarySlot::High);
        let mut seen = vec![];
        ix.range(Bound::Included(&lo), Bound::Included(&hi), Direction::Forward, &mut |k, _| {
            seen.push(k.sort.clone());
            ControlFlow::Continue(())
        })
        .unwrap();
        let n = |v: i64| SortSlot::Value(KeyValue::N(Number::from_i64(v)));
        let xs = SortSlot::Value(KeyValue::S("x".into()));
        assert_eq!(seen, vec![vec![xs.clone(), n(1)], vec![xs, n(3)]]);
        assert_ne!(index_partition_hash(&p), index_partition_hash(&[p[1].clone(), p[0].clone()]), "order matters");
    }

    fn meta(name: &str) -> TableMeta {
        TableMeta {
            name: name.to_string(),
            table_id: format!("id-{name}"),
            region: "us-east-1".into(),
            account_id: "000000000000".into(),
            key_schema: KeySchema { hash: KeyAttr { name: "pk".into(), ty: ScalarType::S }, range: None },
            indexes: Vec::new(),
            tags: Vec::new(),
            attribute_definitions: vec![("pk".into(), ScalarType::S)],
            settings: TableSettings::new(BillingMode::PayPerRequest, Millis(5)),
            created_at: Millis(5),
        }
    }

    #[test]
    fn the_catalog_creates_opens_lists_updates_and_drops_tables() {
        let db = MemStorage::new();
        let mut a = db.create_table(&meta("a")).unwrap();
        db.create_table(&meta("b")).unwrap();
        assert_eq!(db.create_table(&meta("a")).err(), Some(StoreError::TableExists("a".into())));
        a.write(key("x", 1), Some(item(1))).unwrap();
        // Opening finds the items written through the first handle.
        let opened = db.open_table("a").unwrap();
        assert_eq!(opened.get(&key("x", 1)).unwrap().as_deref(), Some(&*item(1)));
        let names: Vec<String> = db.list_tables().unwrap().into_iter().map(|m| m.name).collect();
        assert_eq!(names, ["a", "b"]);
        let mut changed = meta("b");
        changed.settings.billing = BillingMode::Provisioned { read: 5, write: 6 };
        db.save_table_meta(&changed).unwrap();
        assert_eq!(db.list_tables().unwrap()[1], changed);
        db.drop_table("a").unwrap();
        assert_eq!(db.open_table("a").err(), Some(StoreError::NoSuchTable("a".into())));
        assert_eq!(db.drop_table("a"), Err(StoreError::NoSuchTable("a".into())));
        assert_eq!(db.list_tables().unwrap().len(), 1);
        assert_eq!(meta("a").arn(), "arn:aws:dynamodb:us-east-1:000000000000:table/a");
    }

    #[test]
    fn a_failed_write_undoes_the_batch_across_tables() {
        let mut a = MemStore::new();
        a.write(key("x", 1), Some(item(1))).unwrap();
        let faults = crate::faults::Faults::default();
        let mut b = crate::faults::FaultyStore::new(Box::new(MemStore::new()), faults.clone());
        faults.fail_write_after(1);
        let batch = WriteBatch {
            mutations: vec![
                Mutation { table: 0, key: key("x", 1), item: Some(item(10)) },
                Mutation { table: 0, key: key("x", 2), item: Some(item(20)) },
                Mutation { table: 1, key: key("y", 1), item: Some(item(30)) },
                Mutation { table: 1, key: key("y", 2), item: Some(item(40)) },
            ],
            ..WriteBatch::default()
        };
        let err = apply_with_undo(batch, &mut [&mut a, &mut b]).unwrap_err();
        assert_eq!(err, StoreError::Io { operation: "write", kind: std::io::ErrorKind::Other });
        // Everything as before: x1 restored, x2 and y1 removed.
        assert_eq!(a.get(&key("x", 1)).unwrap().as_deref(), Some(&*item(1)));
        assert_eq!(a.len(), 1);
        assert_eq!((b.get(&key("y", 1)).unwrap(), b.get(&key("y", 2)).unwrap()), (None, None));
        // A batch naming a slot it was not given fails before writing.
        let bad = WriteBatch {
            mutations: vec![Mutation { table: 3, key: key("x", 9), item: Some(item(9)) }],
            ..WriteBatch::default()
        };
        assert_eq!(apply_with_undo(bad, &mut [&mut a]).unwrap_err(), StoreError::BadBatch { slot: 3 });
        assert_eq!(a.len(), 1);
        // And a good one returns what each write replaced.
        let ok = WriteBatch {
            mutations: vec![
                Mutation { table: 0, key: key("x", 1), item: None },
                Mutation { table: 0, key: key("x", 5), item: Some(item(5)) },
            ],
            ..WriteBatch::default()
        };
        let replaced = apply_with_undo(ok, &mut [&mut a]).unwrap();
        assert_eq!(replaced, vec![Some(item(1)), None]);
    }

    fn key_value() -> impl proptest::strategy::Strategy<Value = KeyValue> {
        use proptest::prelude::*;
        prop_oneof![
            "[ab\\x00]{0,3}".prop_map(KeyValue::S),
            (-20i64..20).prop_map(|v| KeyValue::N(Number::from_i64(v))),
            proptest::collection::vec(0u8..3, 0..3).prop_map(KeyValue::B),
        ]
    }

    fn sort_slot() -> impl proptest::strategy::Strategy<Value = SortSlot> {
        use proptest::prelude::*;
        prop_oneof![
            Just(SortSlot::Low),
            Just(SortSlot::Absent),
            key_value().prop_map(SortSlot::Value),
            Just(SortSlot::High)
        ]
    }

    fn store_key() -> impl proptest::strategy::Strategy<Value = StoreKey> {
        use proptest::prelude::*;
        // Few hashes, so that keys often tie on them and on partitions.
        (0u128..3, key_value(), sort_slot()).prop_map(|(h, partition, sort)| StoreKey {
            hash: h << 120 | h,
            partition,
            sort,
        })
    }

    fn any_index_key() -> impl proptest::strategy::Strategy<Value = IndexKey> {
        use proptest::prelude::*;
        let primary =
            prop_oneof![Just(PrimarySlot::Low), store_key().prop_map(PrimarySlot::Key), Just(PrimarySlot::High)];
        (0u128..3, proptest::collection::vec(key_value(), 0..3), proptest::collection::vec(sort_slot(), 0..3), primary)
            .prop_map(|(hash, partition, sort, primary)| IndexKey { hash, partition, sort, primary })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 3_000, ..Default::default() })]

        /// The stores order entries by key bytes: those must order as the
        /// keys do, and decode back to them.
        #[test]
        fn key_bytes_order_as_keys_and_decode_back(a in store_key(), b in store_key(), x in any_index_key(), y in any_index_key()) {
            let (ea, eb) = (store_probe(&a), store_probe(&b));
            proptest::prop_assert_eq!(ea.cmp(&eb), a.cmp(&b));
            proptest::prop_assert_eq!(read_store_key_rest(a.hash, &mut Reader::new(ea.key(), "key")).unwrap(), a.clone());
            let (ex, ey) = (index_probe(&x), index_probe(&y));
            proptest::prop_assert_eq!(ex.cmp(&ey), x.cmp(&y));
            proptest::prop_assert_eq!(read_index_key_rest(x.hash, &mut Reader::new(ex.key(), "index key")).unwrap(), x.clone());
            // The stored form (hash first) orders bytewise as the keys do.
            let (sx, sy) = (encode_index_key(&x), encode_index_key(&y));
            proptest::prop_assert_eq!(sx.cmp(&sy), x.cmp(&y));
            proptest::prop_assert_eq!(decode_index_key(&sx).unwrap(), x);
            let (sa, sb) = (encode_store_key(&a), encode_store_key(&b));
            proptest::prop_assert_eq!(sa.cmp(&sb), a.cmp(&b));
            proptest::prop_assert_eq!(decode_store_key(&sa).unwrap(), a);
            // Cut short or padded, the bytes are an error, never a panic.
            for cut in 0..sa.len() {
                proptest::prop_assert!(decode_store_key(&sa[..cut]).is_err());
            }
            proptest::prop_assert!(decode_store_key(&[&sa[..], &[0]].concat()).is_err());
        }
    }

    #[test]
    fn items_come_back_with_their_key_attributes_and_a_rewritten_index_entry_replaces_the_old() {
        let mut s = MemStore::new();
        let k = key("p", 7);
        let mut it = Item::new();
        it.insert("pk".into(), AttributeValue::S("p".into()));
        it.insert("sk".into(), AttributeValue::N(Number::from_i64(7)));
        it.insert("copy".into(), AttributeValue::S("p".into()));
        it.insert("other".into(), AttributeValue::S("q".into()));
        s.write(k.clone(), Some(Arc::new(it.clone()))).unwrap();
        assert_eq!(s.get(&k).unwrap().as_deref(), Some(&it));
        let mut ix = MemIndex::new();
        let ik = IndexKey::new(vec![KeyValue::S("q".into())], vec![], k.clone());
        assert!(!ix.insert(ik.clone(), &it));
        assert!(ix.insert(ik.clone(), &it));
        let mut seen = vec![];
        ix.range(Bound::Unbounded, Bound::Unbounded, Direction::Forward, &mut |key, entry| {
            seen.push((key.clone(), (**entry).clone()));
            ControlFlow::Continue(())
        })
        .unwrap();
        assert_eq!(seen, vec![(ik, it)]);
    }
}
