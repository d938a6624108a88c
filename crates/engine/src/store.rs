//! The storage seam: everything the engine needs from storage, so that a
//! durable backend plugs in without the operations changing.
//!
//! Two traits:
//! - [`Storage`] is the database: a **catalog** of tables (create, open,
//!   list, drop, and each table's metadata, everything needed to rebuild it
//!   at start-up) and the **atomic commit** of a [`WriteBatch`].
//! - [`TableStore`] is one table's ordered items: point reads, range walks,
//!   and the single-key write that an in-memory commit is made of.
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
//!   InternalServerError and never panics.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::{Bound, ControlFlow};
use std::sync::Arc;

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
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::NoSuchTable(name) => write!(f, "storage has no table {name}"),
            StoreError::TableExists(name) => write!(f, "storage already has a table {name}"),
            StoreError::Io { operation, kind } => write!(f, "storage {operation} failed: {kind}"),
            StoreError::Corrupt { what } => write!(f, "stored {what} is corrupt"),
            StoreError::BadBatch { slot } => write!(f, "write batch names table slot {slot}, which it was not given"),
        }
    }
}

impl std::error::Error for StoreError {}

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
    /// Visits items with keys in `(start, end)` in `direction`. An empty
    /// or inverted range visits nothing.
    fn range(
        &self,
        start: Bound<&StoreKey>,
        end: Bound<&StoreKey>,
        direction: Direction,
        visit: Visit<'_>,
    ) -> Result<(), StoreError>;
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
/// for every mutation of every operation. Secondary-index entries and
/// stream change records will be added to the batch there, so they commit
/// atomically with the items they describe.
#[derive(Clone, Debug, Default)]
pub struct WriteBatch {
    pub mutations: Vec<Mutation>,
}

impl WriteBatch {
    /// An empty batch with room for `n` mutations.
    pub fn with_capacity(n: usize) -> WriteBatch {
        WriteBatch { mutations: Vec::with_capacity(n) }
    }

    /// Number of mutations.
    pub fn len(&self) -> usize {
        self.mutations.len()
    }

    /// True when the batch writes nothing.
    pub fn is_empty(&self) -> bool {
        self.mutations.is_empty()
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
    /// Secondary index definitions (their entries are rebuilt from the
    /// items when the table is opened).
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

/// The in-memory table store: one ordered map, shared with the catalog of
/// the [`MemStorage`] that made it so that `open_table` finds the items.
/// The inner lock is uncontended: the engine's table lock serializes.
#[derive(Clone, Default)]
pub struct MemStore {
    items: Arc<RwLock<BTreeMap<StoreKey, Arc<Item>>>>,
}

impl MemStore {
    /// An empty store.
    pub fn new() -> MemStore {
        MemStore::default()
    }

    /// Number of items stored.
    pub fn len(&self) -> usize {
        self.items.read().len()
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.items.read().is_empty()
    }
}

impl TableStore for MemStore {
    fn get(&self, key: &StoreKey) -> Result<Option<Arc<Item>>, StoreError> {
        Ok(self.items.read().get(key).cloned())
    }

    fn write(&mut self, key: StoreKey, item: Option<Arc<Item>>) -> Result<Option<Arc<Item>>, StoreError> {
        let mut items = self.items.write();
        Ok(match item {
            Some(item) => items.insert(key, item),
            None => items.remove(&key),
        })
    }

    fn range(
        &self,
        start: Bound<&StoreKey>,
        end: Bound<&StoreKey>,
        direction: Direction,
        visit: Visit<'_>,
    ) -> Result<(), StoreError> {
        walk_range(&self.items.read(), start, end, direction, visit);
        Ok(())
    }

    fn writes_are_infallible(&self) -> bool {
        true
    }
}

/// The in-memory index store: entries ordered by [`IndexKey`], each
/// pointing at its item. Not used by any index yet; it fixes the key shape
/// and range behaviour that secondary indexes will rely on.
#[derive(Default)]
pub struct MemIndex {
    entries: BTreeMap<IndexKey, Arc<Item>>,
}

impl MemIndex {
    /// An empty index.
    pub fn new() -> MemIndex {
        MemIndex::default()
    }

    /// Adds (or replaces) the entry under `key`.
    pub fn insert(&mut self, key: IndexKey, item: Arc<Item>) -> Option<Arc<Item>> {
        self.entries.insert(key, item)
    }

    /// Removes the entry under `key`.
    pub fn remove(&mut self, key: &IndexKey) -> Option<Arc<Item>> {
        self.entries.remove(key)
    }

    /// Visits entries with keys in `(start, end)` in `direction`.
    pub fn range(
        &self,
        start: Bound<&IndexKey>,
        end: Bound<&IndexKey>,
        direction: Direction,
        visit: &mut dyn FnMut(&IndexKey, &Arc<Item>) -> ControlFlow<()>,
    ) {
        walk_range(&self.entries, start, end, direction, visit);
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
        s.range(Bound::Included(&key("a", 1)), Bound::Excluded(&key("a", 4)), Direction::Backward, &mut |k, _| {
            seen.push(sort_text(k));
            ControlFlow::Continue(())
        })
        .unwrap();
        assert_eq!(seen, ["3", "2", "1"]);
        let mut count = 0;
        s.range(Bound::Excluded(&key("a", 3)), Bound::Excluded(&key("a", 1)), Direction::Forward, &mut |_, _| {
            count += 1;
            ControlFlow::Continue(())
        })
        .unwrap();
        assert_eq!(count, 0);
        s.range(Bound::Excluded(&key("a", 3)), Bound::Excluded(&key("a", 3)), Direction::Forward, &mut |_, _| {
            count += 1;
            ControlFlow::Continue(())
        })
        .unwrap();
        assert_eq!(count, 0);
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
            assert_eq!(ix.insert(index_key("g", 7, pk), item(7)), None);
        }
        ix.insert(index_key("g", 8, "a"), item(8));
        assert_eq!(ix.len(), 4);
        let (lo, hi) = bounds_of("g", 7);
        let mut seen = vec![];
        ix.range(Bound::Included(&lo), Bound::Included(&hi), Direction::Forward, &mut |k, _| {
            if let PrimarySlot::Key(p) = &k.primary {
                seen.push(p.partition.clone());
            }
            ControlFlow::Continue(())
        });
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
        });
        assert_eq!(back, vec![expected[1].partition.clone(), expected[0].partition.clone()]);
        // Removing one entry leaves the others with the same index key.
        assert!(ix.remove(&index_key("g", 7, "b")).is_some());
        let mut left = 0;
        ix.range(Bound::Included(&lo), Bound::Included(&hi), Direction::Forward, &mut |_, _| {
            left += 1;
            ControlFlow::Continue(())
        });
        assert_eq!(left, 2);
        // The whole index partition ("g", Low..High) spans both index keys.
        let p = [KeyValue::S("g".into())];
        let h = index_partition_hash(&p);
        let all_lo = IndexKey::bound(h, &p, vec![SortSlot::Low], PrimarySlot::Low);
        let all_hi = IndexKey::bound(h, &p, vec![SortSlot::High], PrimarySlot::High);
        let mut all = 0;
        ix.range(Bound::Included(&all_lo), Bound::Included(&all_hi), Direction::Forward, &mut |_, _| {
            all += 1;
            ControlFlow::Continue(())
        });
        assert_eq!(all, 3);
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
            ix.insert(entry(a, b), item(b));
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
        });
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
        };
        let err = apply_with_undo(batch, &mut [&mut a, &mut b]).unwrap_err();
        assert_eq!(err, StoreError::Io { operation: "write", kind: std::io::ErrorKind::Other });
        // Everything as before: x1 restored, x2 and y1 removed.
        assert_eq!(a.get(&key("x", 1)).unwrap().as_deref(), Some(&*item(1)));
        assert_eq!(a.len(), 1);
        assert_eq!((b.get(&key("y", 1)).unwrap(), b.get(&key("y", 2)).unwrap()), (None, None));
        // A batch naming a slot it was not given fails before writing.
        let bad = WriteBatch { mutations: vec![Mutation { table: 3, key: key("x", 9), item: Some(item(9)) }] };
        assert_eq!(apply_with_undo(bad, &mut [&mut a]).unwrap_err(), StoreError::BadBatch { slot: 3 });
        assert_eq!(a.len(), 1);
        // And a good one returns what each write replaced.
        let ok = WriteBatch {
            mutations: vec![
                Mutation { table: 0, key: key("x", 1), item: None },
                Mutation { table: 0, key: key("x", 5), item: Some(item(5)) },
            ],
        };
        let replaced = apply_with_undo(ok, &mut [&mut a]).unwrap();
        assert_eq!(replaced, vec![Some(item(1)), None]);
    }
}
