//! Secondary indexes: their definitions, the entry each item makes in
//! them, the checks an item must pass before it is written, what a write
//! changes in each index, and each index's state.
//!
//! Entries live beside the table's items, under the same lock, and the
//! write funnel (`write.rs`) changes them in the same step as the items,
//! so no reader sees an entry without its item or the reverse. Where they
//! live is the store's choice ([`crate::store::TableStore::stores_index_entries`]):
//! an in-memory table keeps them in a [`MemIndex`] per index
//! (`IndexData::entries`), rebuilt from the items when the table is opened
//! from storage; a durable store keeps them on disk beside the items, the
//! funnel adding each write's entry writes ([`store_writes`]) to the
//! items' [`crate::store::WriteBatch`], so items and entries commit
//! atomically, and start-up reads neither (the entry counts come from the
//! store: `Storage::index_sizes`, with the GSI partitions' sizes).

use std::sync::Arc;

use dynaburst_capacity::TableCapacity;
use dynaburst_model::{item_size, write_units, AttributeValue, Item, KeyValue, Millis};
use parking_lot::Mutex;

use crate::error::EngineError;
use crate::store::{IndexKey, IndexMutation, MemIndex, StoreKey};
use crate::table::{KeyAttr, KeySchema, MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES};
use crate::types::KeyRole;

/// Global secondary indexes per table (S1: the default quota).
pub const MAX_GLOBAL_INDEXES: usize = 20;
/// Local secondary indexes per table (S1).
pub const MAX_LOCAL_INDEXES: usize = 5;
/// Partition-key or sort-key components of a multi-attribute GSI key (S19).
pub const MAX_KEY_COMPONENTS: usize = 4;
/// NonKeyAttributes summed over every index of a table (S18).
pub const MAX_PROJECTED_ATTRIBUTES: usize = 100;
/// Bytes an index entry adds to its projected attributes (DG LSI, "Item
/// collections": the 100-byte overhead per entry).
pub const INDEX_ENTRY_OVERHEAD_BYTES: usize = 100;

/// How a wrong-typed index key value's message starts (S31), the item's
/// fault that a transaction reports as a cancellation reason.
pub(crate) const INDEX_TYPE_MISMATCH: &str = "One or more parameter values were invalid: Type mismatch for Index Key ";

/// How an empty index key value's message starts (S33), up to the kind of
/// value ("string" or "binary").
const INDEX_KEY_EMPTY: &str = "One or more parameter values are not valid. A value specified for a secondary index key is not supported. The AttributeValue for a key attribute cannot contain an empty ";

/// An index key check's error as an UpdateItem (or a transaction's Update)
/// reports it: an empty value that an update expression wrote has its own
/// message, naming neither index nor attribute (S33).
pub(crate) fn as_update_error(e: EngineError) -> EngineError {
    match &e {
        EngineError::Validation(m) if m.starts_with(INDEX_KEY_EMPTY) => {
            let kind = if m[INDEX_KEY_EMPTY.len()..].starts_with("binary") { "binary" } else { "string" };
            EngineError::validation(format!("{INDEX_KEY_EMPTY_BY_UPDATE}{kind} value."))
        }
        _ => e,
    }
}

/// How an empty index key value written by an update expression is
/// reported (S33), up to the kind of value.
const INDEX_KEY_EMPTY_BY_UPDATE: &str = "One or more parameter values are not valid. The update expression attempted to update a secondary index key to a value that is not supported. The AttributeValue for a key attribute cannot contain an empty ";

/// True for an empty index key value, in either form: a transaction
/// refuses the whole request for it rather than cancelling.
pub(crate) fn is_empty_index_key(e: &EngineError) -> bool {
    matches!(e, EngineError::Validation(m) if m.starts_with(INDEX_KEY_EMPTY) || m.starts_with(INDEX_KEY_EMPTY_BY_UPDATE))
}

/// True for an item's fault that a transaction reports as a cancellation
/// reason (ValidationError) rather than refusing the whole request: a
/// wrong-typed table or index key value. Empty values refuse the request.
pub(crate) fn is_cancelling_fault(e: &EngineError) -> bool {
    matches!(e, EngineError::Validation(m)
        if m.starts_with(INDEX_TYPE_MISMATCH) || m.starts_with(crate::table::KEY_TYPE_MISMATCH) || m == crate::table::SCHEMA_MISMATCH)
}

/// Global (own partitions and capacity) or local (the table's partition
/// key, the table's capacity).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexKind {
    Global,
    Local,
}

/// Which attributes an index entry carries besides the keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IndexProjection {
    All,
    KeysOnly,
    Include(Vec<String>),
}

impl IndexProjection {
    /// DynamoDB's name for the projection type.
    pub fn type_name(&self) -> &'static str {
        match self {
            IndexProjection::All => "ALL",
            IndexProjection::KeysOnly => "KEYS_ONLY",
            IndexProjection::Include(_) => "INCLUDE",
        }
    }
}

/// An index key: 1 to 4 partition-key components and 0 to 4 sort-key
/// components (tables and LSIs: one of each at most).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexSchema {
    pub hash: Vec<KeyAttr>,
    pub range: Vec<KeyAttr>,
}

impl IndexSchema {
    /// Every component, partition key first.
    pub fn attrs(&self) -> impl Iterator<Item = &KeyAttr> {
        self.hash.iter().chain(&self.range)
    }

    /// True when `name` is one of the components.
    pub fn is_key_attribute(&self, name: &str) -> bool {
        self.attrs().any(|a| a.name == name)
    }

    /// The key schema as (name, role) pairs, as DescribeTable lists it.
    pub fn pairs(&self) -> Vec<(String, KeyRole)> {
        let hash = self.hash.iter().map(|a| (a.name.clone(), KeyRole::Hash));
        hash.chain(self.range.iter().map(|a| (a.name.clone(), KeyRole::Range))).collect()
    }
}

/// A secondary index as CreateTable or UpdateTable defined it.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexDef {
    pub name: String,
    pub kind: IndexKind,
    pub schema: IndexSchema,
    pub projection: IndexProjection,
    /// A GSI's own provisioned (read, write) units; None on demand and for
    /// LSIs (which use the table's).
    pub throughput: Option<(u64, u64)>,
    /// A GSI's OnDemandThroughput: the most read and write request units a
    /// second it may take on demand, -1 for no maximum (as a table's, A13);
    /// None when never set.
    pub on_demand_max: Option<(i64, i64)>,
    /// A GSI's WarmThroughput asked for (read, write units a second; as a
    /// table's, A14); the model's own figure may be higher.
    pub warm: Option<(u64, u64)>,
    /// When a GSI's provisioned throughput was last raised and lowered
    /// (its own budget of decreases, apart from its table's).
    pub changes: crate::table::ThroughputChanges,
    pub created_at: Millis,
    /// For a GSI added by UpdateTable: the earliest it can turn ACTIVE
    /// (its allocation step); it stays CREATING after it until its backfill
    /// is written (`IndexData::is_active`). None for indexes created with
    /// their table.
    pub backfilled_at: Option<Millis>,
}

impl IndexDef {
    /// The ARN of the index of the table whose ARN is `table_arn`.
    pub fn arn(&self, table_arn: &str) -> String {
        format!("{table_arn}/index/{}", self.name)
    }

    /// The key of `item`'s entry (its primary key is `primary`); None when
    /// the item lacks a component or holds one an index cannot hold (of
    /// another type, empty): the item is not in the index (sparse index;
    /// a backfill and a rebuild skip such items alike, S35).
    pub fn entry_key(&self, primary: &StoreKey, item: &Item) -> Option<IndexKey> {
        let component = |a: &KeyAttr| {
            item.get(&a.name).and_then(KeyValue::from_attribute).filter(|k| {
                k.key_type() == a.ty
                    && match k {
                        KeyValue::S(s) => !s.is_empty(),
                        KeyValue::B(b) => !b.is_empty(),
                        KeyValue::N(_) => true,
                    }
            })
        };
        let partition: Option<Vec<KeyValue>> = self.schema.hash.iter().map(component).collect();
        let sort: Option<Vec<KeyValue>> = self.schema.range.iter().map(component).collect();
        Some(IndexKey::new(partition?, sort?, primary.clone()))
    }

    /// Refuses an item to be written whose value for an index key component
    /// has the wrong type (NULL included), is an empty string or binary, or
    /// is too large (S31-S33). An absent component is fine (sparse).
    pub fn check_item(&self, item: &Item) -> Result<(), EngineError> {
        for (position, attr) in self.schema.attrs().enumerate() {
            let Some(value) = item.get(&attr.name) else { continue };
            let key = match KeyValue::from_attribute(value) {
                Some(k) if k.key_type() == attr.ty => k,
                _ => {
                    return Err(EngineError::validation(format!(
                        "{INDEX_TYPE_MISMATCH}{} Expected: {} Actual: {} IndexName: {}",
                        attr.name,
                        attr.ty.descriptor(),
                        value.value_type().descriptor(),
                        self.name
                    )))
                }
            };
            let empty = match &key {
                KeyValue::S(s) => s.is_empty().then_some("string"),
                KeyValue::B(b) => b.is_empty().then_some("binary"),
                KeyValue::N(_) => None,
            };
            if let Some(kind) = empty {
                return Err(EngineError::validation(format!(
                    "{INDEX_KEY_EMPTY}{kind} value. IndexName: {}, IndexKey: {}",
                    self.name, attr.name
                )));
            }
            let is_hash = position < self.schema.hash.len();
            if is_hash && key.size_bytes() > MAX_PARTITION_KEY_BYTES {
                return Err(EngineError::validation(
                    "One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of2048 bytes",
                ));
            }
            if !is_hash && key.size_bytes() > MAX_SORT_KEY_BYTES {
                return Err(EngineError::validation(
                    "One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of 1024 bytes",
                ));
            }
        }
        Ok(())
    }

    /// True when the index's entries carry attribute `name` (of a table
    /// whose key is `table`).
    pub fn projects(&self, table: &KeySchema, name: &str) -> bool {
        table.is_key_attribute(name)
            || self.schema.is_key_attribute(name)
            || match &self.projection {
                IndexProjection::All => true,
                IndexProjection::KeysOnly => false,
                IndexProjection::Include(names) => names.iter().any(|n| n == name),
            }
    }

    /// The entry `item` makes: the table's and the index's key attributes
    /// plus the projected ones.
    pub fn entry(&self, table: &KeySchema, item: &Item) -> Item {
        match &self.projection {
            IndexProjection::All => item.clone(),
            _ => item.iter().filter(|(n, _)| self.projects(table, n)).map(|(n, v)| (n.clone(), v.clone())).collect(),
        }
    }

    /// The key attributes of an entry, as LastEvaluatedKey gives them: the
    /// table's key plus the index's.
    pub fn position_of(&self, table: &KeySchema, entry: &Item) -> Item {
        entry
            .iter()
            .filter(|(n, _)| table.is_key_attribute(n) || self.schema.is_key_attribute(n))
            .map(|(n, v)| (n.clone(), v.clone()))
            .collect()
    }

    /// The entry key of an ExclusiveStartKey: exactly the table's and the
    /// index's key attributes, of the right types (S52).
    pub fn start_key(&self, table: &KeySchema, key: &Item) -> Result<IndexKey, EngineError> {
        let invalid = || EngineError::validation("The provided starting key is invalid");
        let wanted = self
            .schema
            .attrs()
            .map(|a| &a.name)
            .chain(std::iter::once(&table.hash.name))
            .chain(table.range.as_ref().map(|r| &r.name));
        let mut names: Vec<&String> = wanted.collect();
        names.sort();
        names.dedup();
        if key.len() != names.len() || names.iter().any(|n| !key.contains_key(n.as_str())) {
            return Err(invalid());
        }
        let primary = table.key_of_key(&table.key_item(key)).map_err(|_| invalid())?;
        self.entry_key(&primary, key).ok_or_else(invalid)
    }
}

/// A secondary index's entries and statistics, kept with the table's
/// items under the table's lock.
pub struct IndexData {
    pub def: IndexDef,
    /// The entries, when the table's store does not keep them (memory);
    /// empty otherwise.
    pub entries: MemIndex,
    pub item_count: u64,
    pub size_bytes: u64,
    /// A GSI's capacity model (None for LSIs, and when the model is off).
    /// Locked after the table's data.
    pub capacity: Mutex<Option<TableCapacity>>,
    /// The backfill of a GSI that UpdateTable added, while it runs.
    /// Locked after the table's data and before `capacity`.
    pub backfill: Mutex<Option<Backfill>>,
}

/// Index write units per second a backfill runs at on an on-demand GSI
/// (its initial write throughput), or on any GSI when the capacity model
/// is off.
pub const BACKFILL_UNITS_PER_SECOND: f64 = 4_000.0;

/// A GSI's backfill in progress: the index write units it has still to
/// write, and when it last progressed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Backfill {
    pub remaining: f64,
    pub last: Millis,
}

impl IndexData {
    /// An empty index.
    pub fn new(def: IndexDef, capacity: Option<TableCapacity>) -> IndexData {
        IndexData {
            def,
            entries: MemIndex::new(),
            item_count: 0,
            size_bytes: 0,
            capacity: Mutex::new(capacity),
            backfill: Mutex::new(None),
        }
    }

    /// ACTIVE at `now`, or CREATING while it is being built. A backfill
    /// first advances to `now`: it writes at the index's write throughput
    /// (provisioned, or `BACKFILL_UNITS_PER_SECOND` on demand), charged to
    /// the index's capacity model, where it gets only what the table's
    /// writes into the index left spare; so writes during a backfill slow
    /// it down, and raising the index's throughput speeds it up.
    pub fn is_active(&self, now: Millis) -> bool {
        if self.def.backfilled_at.is_some_and(|t| now < t) {
            return false;
        }
        let mut guard = self.backfill.lock();
        let Some(backfill) = guard.as_mut() else { return true };
        if now > backfill.last {
            let rate = match self.def.throughput {
                Some((_, write)) => write as f64,
                None => BACKFILL_UNITS_PER_SECOND,
            };
            let budget = (rate * (now.0 - backfill.last.0) as f64 / 1000.0).min(backfill.remaining);
            let taken = match self.capacity.lock().as_mut() {
                Some(model) => model.take_spare(dynaburst_capacity::Op::Write, budget, now),
                None => budget,
            };
            backfill.remaining -= taken;
            backfill.last = now;
        }
        if backfill.remaining > BACKFILL_DONE_EPSILON {
            return false;
        }
        *guard = None;
        true
    }
}

/// Units of a backfill small enough to count as written (float dust).
const BACKFILL_DONE_EPSILON: f64 = 1e-6;

/// What one write of an item does to one index.
#[derive(Clone, Debug)]
pub struct IndexChange {
    /// Position of the index in the table's list.
    pub index: usize,
    /// The entry removed, with its size.
    pub remove: Option<(IndexKey, usize)>,
    /// The entry written, with its size.
    pub insert: Option<(IndexKey, Arc<Item>, usize)>,
    /// Index write units (B10): 1 write to add or remove an entry, or to
    /// rewrite one under the same key; 2 when its key changes.
    pub units: f64,
}

/// Units of writing an index entry of `size` bytes.
fn entry_units(size: usize) -> f64 {
    write_units(size + INDEX_ENTRY_OVERHEAD_BYTES)
}

/// What replacing `old` by `new` (None: absent) under primary key
/// `primary` does to each index. An index the item is in neither before
/// nor after, or whose entry does not change, is left out.
pub fn changes(
    indexes: &[IndexData],
    table: &KeySchema,
    primary: &StoreKey,
    old: Option<&Item>,
    new: Option<&Item>,
) -> Vec<IndexChange> {
    let mut out = Vec::new();
    for (i, ix) in indexes.iter().enumerate() {
        let before = old.and_then(|o| ix.def.entry_key(primary, o).map(|k| (k, ix.def.entry(table, o))));
        let after = new.and_then(|n| ix.def.entry_key(primary, n).map(|k| (k, ix.def.entry(table, n))));
        let change = match (before, after) {
            (None, None) => continue,
            (Some((bk, be)), Some((ak, ae))) if bk == ak => {
                if be == ae {
                    continue;
                }
                let (bs, as_) = (item_size(&be), item_size(&ae));
                IndexChange {
                    index: i,
                    remove: None,
                    insert: Some((ak, Arc::new(ae), as_)),
                    units: entry_units(bs.max(as_)),
                }
                .replacing(bk, bs)
            }
            (before, after) => {
                let remove = before.map(|(k, e)| (k, item_size(&e)));
                let insert = after.map(|(k, e)| {
                    let size = item_size(&e);
                    (k, Arc::new(e), size)
                });
                let units = remove.as_ref().map_or(0.0, |(_, s)| entry_units(*s))
                    + insert.as_ref().map_or(0.0, |(_, _, s)| entry_units(*s));
                IndexChange { index: i, remove, insert, units }
            }
        };
        out.push(change);
    }
    out
}

impl IndexChange {
    /// The same change, replacing the entry under `key` (of `size` bytes)
    /// in place: its size leaves the statistics, and no key is removed.
    fn replacing(mut self, key: IndexKey, size: usize) -> IndexChange {
        self.remove = Some((key, size));
        self
    }

    /// Partition hashes and units this change asks of a GSI's capacity
    /// model: a rewrite under one key is one write there.
    pub fn admissions(&self) -> Vec<(u128, f64)> {
        match (&self.remove, &self.insert) {
            (Some((r, _)), Some((i, _, _))) if r == i => vec![(i.hash, self.units)],
            _ => {
                let removed = self.remove.iter().map(|(k, s)| (k.hash, entry_units(*s)));
                removed.chain(self.insert.iter().map(|(k, _, s)| (k.hash, entry_units(*s)))).collect()
            }
        }
    }
}

/// Applies `change` to `ix` (after the items it follows were committed):
/// to its in-memory entries and its statistics, or, when the table's store
/// keeps the entries (`stored`: the commit wrote them, see
/// [`store_writes`]), to its statistics alone; and tells a GSI's capacity
/// model the bytes its partitions gain or lose (an entry's size plus the
/// 100-byte overhead, as DynamoDB sizes an index), so GSI partitions report
/// their sizes and split for size.
pub fn apply(ix: &mut IndexData, change: IndexChange, stored: bool, now: Millis) {
    if let Some(model) = ix.capacity.get_mut().as_mut() {
        let bytes = |size: usize| i64::try_from(size + INDEX_ENTRY_OVERHEAD_BYTES).unwrap_or(i64::MAX);
        if let Some((key, size)) = &change.remove {
            model.note_size(key.hash, -bytes(*size), now);
        }
        if let Some((key, _, size)) = &change.insert {
            model.note_size(key.hash, bytes(*size), now);
        }
    }
    if let Some((key, size)) = change.remove {
        if stored || ix.entries.remove(&key) {
            ix.item_count = ix.item_count.saturating_sub(1);
            ix.size_bytes = ix.size_bytes.saturating_sub(size as u64);
        }
    }
    if let Some((key, entry, size)) = change.insert {
        if stored || !ix.entries.insert(key, &entry) {
            ix.item_count += 1;
        }
        ix.size_bytes += size as u64;
    }
}

/// Sets the counts of `ix` from its stored sizes by index-partition-hash
/// range (`(first hash, entries, bytes)`), and tells a GSI's capacity model
/// each range's bytes (entry sizes plus the overhead), as [`apply`] told it
/// of every entry before a restart.
pub fn restore_sizes(ix: &mut IndexData, ranges: &[crate::store::IndexRange], now: Millis) {
    ix.item_count = ranges.iter().map(|r| r.1).sum();
    ix.size_bytes = ranges.iter().map(|r| r.2).sum();
    if let Some(model) = ix.capacity.get_mut().as_mut() {
        for &(hash, entries, bytes) in ranges {
            let total = bytes.saturating_add(entries.saturating_mul(INDEX_ENTRY_OVERHEAD_BYTES as u64));
            model.note_size(hash, i64::try_from(total).unwrap_or(i64::MAX), now);
        }
    }
}

/// The entry writes of `change` to index `name`, for a store that keeps
/// index entries: the removed entry deleted (unless the same key is
/// rewritten), then the new one written.
pub fn store_writes(change: &IndexChange, name: &str, slot: usize, out: &mut Vec<IndexMutation>) {
    let rewritten = |key: &IndexKey| change.insert.as_ref().is_some_and(|(k, _, _)| k == key);
    let size = |n: usize| Some(n as u64);
    if let Some((key, removed)) = change.remove.as_ref().filter(|(k, _)| !rewritten(k)) {
        let replaced = size(*removed);
        out.push(IndexMutation { table: slot, index: name.to_string(), key: key.clone(), entry: None, replaced });
    }
    if let Some((key, entry, _)) = &change.insert {
        // An entry's key holds its item's primary key: the only entry it
        // can replace is the one the change removes under the same key.
        let replaced = change.remove.as_ref().filter(|(k, _)| k == key).and_then(|(_, n)| size(*n));
        let entry = Some(entry.clone());
        out.push(IndexMutation { table: slot, index: name.to_string(), key: key.clone(), entry, replaced });
    }
}

/// The value of `attr` as a key value of its declared type, if it is one.
pub fn typed_component(attr: &KeyAttr, value: &AttributeValue) -> Option<KeyValue> {
    KeyValue::from_attribute(value).filter(|k| k.key_type() == attr.ty)
}
