//! The write funnel. Every mutation of every operation (PutItem,
//! DeleteItem, UpdateItem, BatchWriteItem, TransactWriteItems) passes
//! through here:
//! - write units of a write, from sizes each computed once per item;
//! - capacity admission: one item ([`admit_one`]), per item for batches
//!   ([`admit_batch_item`]), all or nothing for transactions
//!   ([`admit_transaction`]);
//! - the store mutation: operations describe their writes in [`Writes`]
//!   and [`commit`] applies them as one atomic [`WriteBatch`], then keeps
//!   the table's statistics and the capacity model's partition sizes.
//!
//! Secondary indexes hook in here: operations check a new item against
//! every index ([`check_indexes`]), derive each write's index changes from
//! its `(key, old, new)` ([`index_changes`]), admit the write on the table
//! and on every GSI it touches at once ([`admit_write`]), and [`commit`]
//! applies the changes to the index entries in the same step as the items,
//! under the table's lock: for a store that keeps index entries (on disk),
//! as entry writes in the items' own `WriteBatch`; otherwise to the
//! in-memory entries. [`backfill`] writes a new GSI's entries the same
//! way. Stream change records hook in the same way, each to the shard of
//! its partition.

use std::sync::Arc;

use dynaburst_capacity::{Op, TableCapacity};
use dynaburst_model::{item_size, transactional_write_units, write_units, Item, KeyValue};

use crate::engine::{throttle_cancellation, throttled, MemoryBudget, STORED_ITEM_OVERHEAD_BYTES};
use crate::error::EngineError;
use crate::index::{self, IndexChange, IndexKind};
use crate::store::{Mutation, Storage, StoreError, StoreKey, TableStore, WriteBatch};
use crate::table::{Table, TableData};
use crate::types::{ConsumedCapacity, ItemCollection, Millis};

/// Write units of replacing an item of `old` bytes by one of `new` bytes
/// (0 for an absent item).
pub(crate) fn units(old: usize, new: usize) -> f64 {
    write_units(old.max(new))
}

/// The same in a transaction (twice the units).
pub(crate) fn transactional_units(old: usize, new: usize) -> f64 {
    transactional_write_units(old.max(new))
}

/// Refuses a new item whose index key values an index cannot hold (S31-S33),
/// naming the first such index in alphabetical order, as DynamoDB does when
/// several indexes share the attribute.
pub(crate) fn check_indexes(data: &TableData, item: &Item) -> Result<(), EngineError> {
    let mut failed: Option<(&str, EngineError)> = None;
    for ix in &data.indexes {
        if let Err(e) = ix.def.check_item(item) {
            if failed.as_ref().is_none_or(|(name, _)| ix.def.name.as_str() < *name) {
                failed = Some((&ix.def.name, e));
            }
        }
    }
    failed.map_or(Ok(()), |(_, e)| Err(e))
}

/// What replacing `old` by `new` at `key` does to the table's indexes
/// (nothing for a table without indexes).
pub(crate) fn index_changes(
    table: &Table,
    data: &TableData,
    key: &StoreKey,
    old: Option<&Item>,
    new: Option<&Item>,
) -> Vec<IndexChange> {
    if data.indexes.is_empty() {
        return Vec::new();
    }
    index::changes(&data.indexes, &table.key_schema, key, old, new)
}

/// Write units LSI changes add to the table's (B10: LSI writes are
/// charged to the table).
pub(crate) fn local_units(data: &TableData, changes: &[IndexChange]) -> f64 {
    changes.iter().filter(|c| data.indexes[c.index].def.kind == IndexKind::Local).map(|c| c.units).sum()
}

/// Reports index write units of `changes` in `consumed`.
pub(crate) fn report_index_writes(consumed: &mut Option<ConsumedCapacity>, data: &TableData, changes: &[IndexChange]) {
    let Some(c) = consumed.as_mut() else { return };
    for change in changes {
        let def = &data.indexes[change.index].def;
        c.add_index(&def.name, def.kind == IndexKind::Global, 0.0, change.units);
    }
}

/// Admits a write of `items` on the table and `changes` on each GSI they
/// touch, all or nothing (A30: a base-table write needs capacity on the
/// table and on every affected GSI). Nothing is consumed on a refusal,
/// which is not yet counted as a throttled request.
fn admit_set(
    table: &Table,
    data: &TableData,
    items: &[(u128, f64)],
    changes: &[IndexChange],
    arrival: Arrival,
    now: Millis,
) -> Result<(), EngineError> {
    let check = |model: &mut TableCapacity, items: &[(u128, f64)]| match arrival {
        Arrival::Own => model.check_all(Op::Write, items, now),
        Arrival::InBatch => model.check_in_request(Op::Write, items, now),
    };
    let mut capacity = table.capacity.lock();
    let Some(model) = capacity.as_mut() else { return Ok(()) };
    let admitted = match check(model, items) {
        Ok(a) => a,
        Err(t) => {
            drop(capacity);
            return Err(table.throttle_error(t));
        }
    };
    let mut on_indexes = Vec::new();
    for change in changes {
        let ix = &data.indexes[change.index];
        let mut gsi = ix.capacity.lock();
        let Some(gsi_model) = gsi.as_mut() else { continue };
        match check(gsi_model, &change.admissions()) {
            Ok(a) => on_indexes.push((change.index, a)),
            Err(t) => {
                gsi_model.note_throttled_request(now);
                return Err(EngineError::Throttled {
                    provisioned: ix.def.throughput.is_some(),
                    reason: index_reason(t.reason()),
                    resource: ix.def.arn(&table.arn),
                });
            }
        }
    }
    model.consume(admitted);
    drop(capacity);
    for (i, a) in on_indexes {
        if let Some(m) = data.indexes[i].capacity.lock().as_mut() {
            m.consume(a);
        }
    }
    Ok(())
}

/// The index form of a table throttling reason (A28).
pub(crate) fn index_reason(table_reason: &'static str) -> &'static str {
    match table_reason {
        "TableReadKeyRangeThroughputExceeded" => "IndexReadKeyRangeThroughputExceeded",
        "TableWriteKeyRangeThroughputExceeded" => "IndexWriteKeyRangeThroughputExceeded",
        "TableReadProvisionedThroughputExceeded" => "IndexReadProvisionedThroughputExceeded",
        "TableWriteProvisionedThroughputExceeded" => "IndexWriteProvisionedThroughputExceeded",
        "TableReadAccountLimitExceeded" => "IndexReadAccountLimitExceeded",
        "TableWriteAccountLimitExceeded" => "IndexWriteAccountLimitExceeded",
        "TableReadMaxOnDemandThroughputExceeded" => "IndexReadMaxOnDemandThroughputExceeded",
        "TableWriteMaxOnDemandThroughputExceeded" => "IndexWriteMaxOnDemandThroughputExceeded",
        other => other,
    }
}

/// Admits one write of a single-item operation: `units` on the table
/// (LSI units included) and `changes` on the GSIs; a refusal is counted as
/// a throttled request.
pub(crate) fn admit_write(
    table: &Table,
    data: &TableData,
    write: OneWrite<'_>,
    now: Millis,
) -> Result<(), EngineError> {
    let result = admit_set(table, data, &[(write.key.hash, write.units)], write.changes, Arrival::Own, now);
    table.note_key(write.key, Op::Write, write.units, result.is_err(), now);
    throttled(table, now, result)
}

/// Whether the capacity models see a write as a request of its own, or as
/// an item of the batch begun by [`begin_batch`] (checked against the state
/// the batch arrived to: A39).
#[derive(Clone, Copy)]
enum Arrival {
    Own,
    InBatch,
}

/// Starts a batch's writes on `table` and its GSIs: each item admitted
/// after this is checked against what the table had when the batch
/// arrived, as DynamoDB's partitions receive a batch's items together.
pub(crate) fn begin_batch(table: &Table, data: &TableData) {
    if let Some(model) = table.capacity.lock().as_mut() {
        model.begin_request(Op::Write);
    }
    for ix in &data.indexes {
        if let Some(model) = ix.capacity.lock().as_mut() {
            model.begin_request(Op::Write);
        }
    }
}

/// One item's write, as admission sees it: its key (whose hash places
/// it; counted in the table's top keys), its table units (LSI units included) and its GSI changes.
#[derive(Clone, Copy)]
pub(crate) struct OneWrite<'a> {
    pub(crate) key: &'a StoreKey,
    pub(crate) units: f64,
    pub(crate) changes: &'a [IndexChange],
}

/// Admits one item of a batch: `Ok(false)` when the model refuses it (the
/// first refusal is kept in `refusal`; the caller decides whether the
/// request fails).
pub(crate) fn admit_batch_item(
    table: &Table,
    data: &TableData,
    write: OneWrite<'_>,
    now: Millis,
    refusal: &mut Option<EngineError>,
) -> Result<bool, EngineError> {
    let result = admit_set(table, data, &[(write.key.hash, write.units)], write.changes, Arrival::InBatch, now);
    table.note_key(write.key, Op::Write, write.units, result.is_err(), now);
    match result {
        Ok(()) => Ok(true),
        Err(e @ EngineError::Throttled { .. }) => {
            refusal.get_or_insert(e);
            Ok(false)
        }
        Err(e) => Err(e),
    }
}

/// Admits a transaction's writes all or nothing, table by table (each
/// with its GSI changes); a refusal cancels the whole transaction (A34)
/// with `actions` throttling reasons.
pub(crate) fn admit_transaction(
    tables: &[Arc<Table>],
    data: &[&TableData],
    admissions: &[Vec<(u128, f64)>],
    changes: &[Vec<IndexChange>],
    actions: usize,
    now: Millis,
) -> Result<(), EngineError> {
    for (slot, table) in tables.iter().enumerate() {
        let (Some(items), Some(d)) = (admissions.get(slot), data.get(slot)) else { continue };
        let changes = changes.get(slot).map(Vec::as_slice).unwrap_or_default();
        if let Err(e) = admit_set(table, d, items, changes, Arrival::Own, now) {
            table.note_throttled_request(now);
            return Err(throttle_cancellation(&e, actions));
        }
    }
    Ok(())
}

/// Charges a transaction cancelled by its own conditions: its units are
/// taken on each table whatever its buckets hold (nothing is written to
/// its GSIs), and the caller answers with the conditions' failure, not
/// with a throttle.
pub(crate) fn charge_transaction(tables: &[Arc<Table>], admissions: &[Vec<(u128, f64)>], now: Millis) {
    for (table, items) in tables.iter().zip(admissions) {
        if let Some(model) = table.capacity.lock().as_mut() {
            model.charge(Op::Write, items, now);
        }
    }
}

/// What the funnel keeps of each write to account for it after commit.
struct Sizes {
    slot: usize,
    hash: u128,
    /// Size of the replaced item when the operation read it; otherwise
    /// taken from what the store returns.
    old: Option<usize>,
    /// Size of the new item (0 for a delete).
    new: usize,
    put: bool,
    /// True when the capacity model was already told of the size change
    /// (batches tell it at admission, as each item is admitted).
    noted: bool,
    /// What the write does to the table's indexes.
    changes: Vec<IndexChange>,
    /// The item written (None for a delete), for change records.
    item: Option<Arc<Item>>,
}

impl Sizes {
    fn delta(&self, old: usize) -> i64 {
        self.new as i64 - old as i64
    }
}

/// The writes of one request, in order, to be committed together.
pub(crate) struct Writes {
    batch: WriteBatch,
    sizes: Vec<Sizes>,
    /// The writes are the service's (time-to-live deletions): their change
    /// records name it as userIdentity.
    pub(crate) by_service: bool,
}

impl Writes {
    /// Room for `n` writes.
    pub(crate) fn with_capacity(n: usize) -> Writes {
        Writes { batch: WriteBatch::with_capacity(n), sizes: Vec::with_capacity(n), by_service: false }
    }

    /// Puts `item` (of `size` bytes) under `key` in table slot `slot`;
    /// `old` is the replaced item's size when the caller read it.
    pub(crate) fn put(
        &mut self,
        slot: usize,
        key: StoreKey,
        item: Item,
        size: usize,
        old: Option<usize>,
        changes: Vec<IndexChange>,
    ) {
        let item = Arc::new(item);
        self.sizes.push(Sizes {
            slot,
            hash: key.hash,
            old,
            new: size,
            put: true,
            noted: false,
            changes,
            item: Some(item.clone()),
        });
        self.batch.mutations.push(Mutation { table: slot, key, item: Some(item) });
    }

    /// Deletes `key` in table slot `slot`.
    pub(crate) fn delete(&mut self, slot: usize, key: StoreKey, old: Option<usize>, changes: Vec<IndexChange>) {
        self.sizes.push(Sizes { slot, hash: key.hash, old, new: 0, put: false, noted: false, changes, item: None });
        self.batch.mutations.push(Mutation { table: slot, key, item: None });
    }

    /// Tells `table`'s capacity model now of the size change of the last
    /// write added (whose old size must be known). Batches do this as each
    /// item is admitted, so the next admission sees the partition's size.
    pub(crate) fn note_last(&mut self, table: &Table, now: Millis) {
        if let Some(s) = self.sizes.last_mut() {
            if let Some(old) = s.old {
                table.note_size(s.hash, s.delta(old), now);
                s.noted = true;
            }
        }
    }

    /// Number of writes.
    pub(crate) fn len(&self) -> usize {
        self.sizes.len()
    }
}

/// Item collections of tables with LSIs: each write's partition key and
/// how many bytes it adds to its collection (the item and its LSI entries);
/// empty when no table has an LSI.
fn collection_deltas<D: std::ops::Deref<Target = TableData>>(
    sizes: &[Sizes],
    batch: &WriteBatch,
    data: &[D],
) -> Vec<Option<(KeyValue, i64)>> {
    if !data.iter().any(|d| d.has_local_indexes()) {
        return Vec::new();
    }
    sizes
        .iter()
        .zip(&batch.mutations)
        .map(|(s, m)| {
            data.get(s.slot).filter(|d| d.has_local_indexes()).map(|d| {
                let local: i64 = s
                    .changes
                    .iter()
                    .filter(|c| d.indexes.get(c.index).is_some_and(|i| i.def.kind == IndexKind::Local))
                    .map(|c| {
                        c.insert.as_ref().map_or(0, |(_, _, n)| *n as i64)
                            - c.remove.as_ref().map_or(0, |(_, n)| *n as i64)
                    })
                    .sum();
                (m.key.partition.clone(), s.new as i64 - s.old.unwrap_or(0) as i64 + local)
            })
        })
        .collect()
}

/// The first item collection, (table slot, partition key), that writes
/// adding `deltas` would grow past `limit`; checked before anything is
/// written. Shrinking writes always pass.
fn overflow<D: std::ops::Deref<Target = TableData>>(
    sizes: &[Sizes],
    deltas: &[Option<(KeyValue, i64)>],
    data: &[D],
    limit: u64,
) -> Option<(usize, KeyValue)> {
    let mut grown: Vec<((usize, &KeyValue), i64)> = Vec::new();
    for (s, d) in sizes.iter().zip(deltas) {
        if let Some((k, delta)) = d {
            match grown.iter_mut().find(|((slot, key), _)| *slot == s.slot && *key == k) {
                Some((_, total)) => *total += delta,
                None => grown.push(((s.slot, k), *delta)),
            }
        }
    }
    grown.into_iter().find_map(|((slot, key), delta)| {
        let now_bytes = data.get(slot).and_then(|d| d.collections.get(key)).copied().unwrap_or(0);
        (delta > 0 && now_bytes.saturating_add(delta as u64) > limit).then(|| (slot, key.clone()))
    })
}

impl Writes {
    /// Measures the item collections these writes touch that `data` may
    /// not hold yet (tables opened without walking their items), so that
    /// the limit and the metrics see their whole size.
    pub(crate) fn measure_collections(
        &self,
        tables: &[&Table],
        data: &mut [&mut TableData],
    ) -> Result<(), EngineError> {
        for (s, m) in self.sizes.iter().zip(&self.batch.mutations) {
            if let (Some(d), Some(t)) = (data.get_mut(s.slot), tables.get(s.slot)) {
                d.measure_collection(&t.key_schema, &m.key.partition)?;
            }
        }
        Ok(())
    }

    /// The item collection, (table slot, partition key), these writes would
    /// grow past `limit` if committed on `data`, for a transaction to name
    /// in its cancellation reasons.
    pub(crate) fn collection_overflow<D: std::ops::Deref<Target = TableData>>(
        &self,
        data: &[D],
        limit: u64,
    ) -> Option<(usize, KeyValue)> {
        let deltas = collection_deltas(&self.sizes, &self.batch, data);
        overflow(&self.sizes, &deltas, data, limit)
    }
}

/// Commits `writes` atomically: `data[slot]` is the write-locked data of
/// `tables[slot]`. Then keeps each table's item count and size, and tells
/// the capacity model of each size change not yet noted. Returns the sizes
/// of what each write replaced and wrote. On a storage failure nothing
/// was written, the sizes already noted are taken back, and the error is
/// InternalServerError; ResourceNotFoundException when the storage no
/// longer has a table (`NoSuchTable`: it was dropped after the write
/// found it).
pub(crate) fn commit(
    storage: &dyn Storage,
    limits: &CommitLimits<'_>,
    tables: &[&Table],
    data: &mut [&mut TableData],
    writes: Writes,
    now: Millis,
) -> Result<Committed, EngineError> {
    if writes.sizes.is_empty() {
        return Ok(Committed { sizes: writes.sizes, collections: Vec::new() });
    }
    if let Err(e) = writes.measure_collections(tables, data) {
        unnote(tables, &writes.sizes, now);
        return Err(e);
    }
    let Writes { batch, mut sizes, by_service } = writes;
    let collection_deltas = collection_deltas(&sizes, &batch, data);
    if overflow(&sizes, &collection_deltas, data, limits.item_collection_bytes).is_some() {
        unnote(tables, &sizes, now);
        return Err(EngineError::ItemCollectionSizeLimitExceeded);
    }
    // The memory budget: reserve what the writes may add (a replaced item
    // whose size is not known yet counts as nothing), settle after. A disk
    // backend's items take none of it.
    let memory = limits.memory.filter(|_| data.iter().all(|d| d.store.holds_items_in_memory()));
    let reserved: i64 = sizes
        .iter()
        .map(|s| {
            let new = if s.put { stored_bytes(s.new) } else { 0 };
            (new - s.old.map_or(0, stored_bytes)).max(0)
        })
        .sum();
    if let Some(memory) = memory {
        if let Err(e) = memory.reserve(reserved as u64) {
            unnote(tables, &sizes, now);
            return Err(e);
        }
    }
    // Index entries of tables whose store keeps them go in the batch, so
    // they commit with the items.
    let mut batch = batch;
    for s in &sizes {
        let Some(d) = data.get(s.slot).filter(|d| !s.changes.is_empty() && d.store.stores_index_entries()) else {
            continue;
        };
        for change in &s.changes {
            if let Some(ix) = d.indexes.get(change.index) {
                index::store_writes(change, &ix.def.name, s.slot, &mut batch.index_writes);
            }
        }
    }
    let result = match data {
        // One table (every single-item write): no vector of stores.
        [one] => storage.commit(batch, &mut [store_of(one)]),
        _ => {
            let mut stores: Vec<&mut dyn TableStore> = data.iter_mut().map(|d| store_of(d)).collect();
            storage.commit(batch, &mut stores)
        }
    };
    let replaced = match result {
        Ok(replaced) => replaced,
        Err(e) => {
            unnote(tables, &sizes, now);
            if let Some(memory) = memory {
                memory.adjust(-reserved);
            }
            return Err(match e {
                // The table went (DeleteTable) after this write found it.
                StoreError::NoSuchTable(_) => EngineError::table_not_found(),
                e => e.into(),
            });
        }
    };
    let mut collections = Vec::new();
    for (s, delta) in sizes.iter().zip(collection_deltas) {
        let (Some((key, delta)), Some(d)) = (delta, data.get_mut(s.slot)) else { continue };
        let bytes = d.collections.entry(key.clone()).or_insert(0);
        *bytes = (*bytes as i64 + delta).max(0) as u64;
        let total = *bytes;
        if total == 0 {
            d.collections.remove(&key);
        }
        match collections.iter_mut().find(|(slot, k, _)| *slot == s.slot && *k == key) {
            Some(entry) => entry.2 = total,
            None => collections.push((s.slot, key, total)),
        }
    }
    for (slot, d) in data.iter_mut().enumerate() {
        if d.collections_unmeasured && d.collections.len() > limits.item_collection_cache {
            let written: Vec<&KeyValue> = collections.iter().filter(|c| c.0 == slot).map(|c| &c.1).collect();
            forget_collections(&mut d.collections, &written, limits.item_collection_cache);
        }
    }
    // Change records, one per item-level change, in commit order.
    if data.iter().any(|d| d.streams.last().is_some_and(|l| l.closed_at.is_none())) {
        for (s, old_item) in sizes.iter().zip(&replaced) {
            let (Some(d), Some(table)) = (data.get_mut(s.slot), tables.get(s.slot)) else { continue };
            if let Some(log) = d.streams.last_mut().filter(|l| l.closed_at.is_none()) {
                crate::stream::follow_partitions(log, table, now);
                log.append(&table.key_schema, s.hash, old_item.clone(), s.item.clone(), by_service, now);
            }
        }
    }
    // Point-in-time history: what each write replaced.
    if data.iter().any(|d| d.pitr.is_some()) {
        for (s, old_item) in sizes.iter().zip(&replaced) {
            let (Some(d), Some(table)) = (data.get_mut(s.slot), tables.get(s.slot)) else { continue };
            let Some(log) = d.pitr.as_mut() else { continue };
            let Some(item) = s.item.as_deref().or(old_item.as_deref()) else { continue };
            if let Ok(key) = table.key_schema.key_of_item(item) {
                log.note(now, key, old_item.clone());
            }
        }
    }
    for (s, old_item) in sizes.iter_mut().zip(&replaced) {
        let old = s.old.unwrap_or_else(|| old_item.as_ref().map(|o| item_size(o)).unwrap_or(0));
        s.old = Some(old);
        if let Some(d) = data.get_mut(s.slot) {
            d.size_bytes = (d.size_bytes + s.new as u64).saturating_sub(old as u64);
            d.item_count = (d.item_count + u64::from(s.put)).saturating_sub(u64::from(old_item.is_some()));
            let stored = !s.changes.is_empty() && d.store.stores_index_entries();
            for change in std::mem::take(&mut s.changes) {
                if let Some(ix) = d.indexes.get_mut(change.index) {
                    index::apply(ix, change, stored, now);
                }
            }
        }
    }
    if let Some(memory) = memory {
        let stored: i64 = sizes
            .iter()
            .zip(&replaced)
            .map(|(s, old_item)| {
                let new = if s.put { stored_bytes(s.new) } else { 0 };
                new - old_item.as_ref().map_or(0, |_| stored_bytes(s.old.unwrap_or(0)))
            })
            .sum();
        memory.adjust(stored - reserved);
    }
    drop(replaced);
    for (slot, table) in tables.iter().enumerate() {
        let mut capacity = table.capacity.lock();
        let Some(model) = capacity.as_mut() else { continue };
        for s in &sizes {
            let delta = s.delta(s.old.unwrap_or(0));
            if s.slot == slot && !s.noted && delta != 0 {
                model.note_size(s.hash, delta, now);
            }
        }
    }
    Ok(Committed { sizes, collections })
}

/// Takes back the size changes already told to the capacity model, for a
/// commit that wrote nothing.
fn unnote(tables: &[&Table], sizes: &[Sizes], now: Millis) {
    for s in sizes {
        if let (true, Some(old), Some(table)) = (s.noted, s.old, tables.get(s.slot)) {
            table.note_size(s.hash, -s.delta(old), now);
        }
    }
}

/// Drops item-collection sizes from `sizes` (which holds more than `most`)
/// down to half of `most`, keeping those of `keep`; each is measured
/// again from the storage (a read of its partition's items) when a write
/// next touches its collection. Dropping half at once keeps the work of
/// dropping constant per write on average; which go is the map's order,
/// not recency. A refused commit drops none: its measured sizes (at most
/// one request's keys) stay until the next commit that succeeds.
fn forget_collections(sizes: &mut std::collections::HashMap<KeyValue, u64>, keep: &[&KeyValue], most: usize) {
    let excess = sizes.len().saturating_sub(most / 2);
    let dropped: Vec<KeyValue> = sizes.keys().filter(|k| !keep.contains(k)).take(excess).cloned().collect();
    for k in dropped {
        sizes.remove(&k);
    }
}

/// The limits a commit enforces.
pub(crate) struct CommitLimits<'a> {
    /// Largest item collection of a table with LSIs.
    pub(crate) item_collection_bytes: u64,
    /// Item-collection sizes a table that can measure them again keeps.
    pub(crate) item_collection_cache: usize,
    /// The in-memory tables' budget, when bounded.
    pub(crate) memory: Option<&'a MemoryBudget>,
}

/// What a write costs the memory budget: its item and the map entry.
fn stored_bytes(size: usize) -> i64 {
    size as i64 + STORED_ITEM_OVERHEAD_BYTES as i64
}

/// The sizes of what a commit wrote and replaced.
pub(crate) struct Committed {
    sizes: Vec<Sizes>,
    /// Item collections the commit changed: (table slot, partition key,
    /// bytes now).
    pub(crate) collections: Vec<(usize, KeyValue, u64)>,
}

impl Committed {
    /// Write units of the writes at `range` (positions in the batch).
    pub(crate) fn units(&self, range: std::ops::Range<usize>) -> f64 {
        self.sizes.get(range).unwrap_or_default().iter().map(|s| units(s.old.unwrap_or(0), s.new)).sum()
    }

    /// ItemCollectionMetrics of the collections the commit changed in
    /// table slot `slot` (`table`).
    pub(crate) fn collections_of(&self, slot: usize, table: &Table) -> Vec<ItemCollection> {
        self.collections
            .iter()
            .filter(|(s, _, _)| *s == slot)
            .map(|(_, key, size)| ItemCollection {
                key: Item::from([(table.key_schema.hash.name.clone(), key.to_attribute())]),
                size_bytes: *size,
            })
            .collect()
    }
}

/// The store of locked table data, as the commit takes it.
fn store_of<'a>(data: &'a mut TableData) -> &'a mut (dyn TableStore + 'a) {
    data.store.as_mut()
}

/// Copies every item of `from` into `to` (a backup's snapshot store, which
/// no table's data holds), `batch` items per atomic storage commit, so a
/// copy of any size holds one batch in memory. The caller holds `from`'s
/// table's lock throughout, so the copy is one consistent snapshot.
pub(crate) fn copy_items(
    storage: &dyn Storage,
    from: &dyn TableStore,
    to: &mut dyn TableStore,
    batch: usize,
) -> Result<(), StoreError> {
    crate::backup::for_each_chunk(from, batch, |chunk| {
        let mut writes = WriteBatch::with_capacity(chunk.len());
        for (key, item) in chunk {
            writes.mutations.push(Mutation { table: 0, key, item: Some(item) });
        }
        storage.commit(writes, &mut [&mut *to]).map(|_| ())
    })
}

/// Writes the entry of every item of `data` into `ix`, a GSI that
/// UpdateTable adds (not yet among `data.indexes`), `chunk` items per
/// atomic storage commit when the store keeps index entries (after
/// forgetting any entries a creation of the same name left unfinished),
/// or into its in-memory entries. Items the index cannot hold are skipped
/// (S35). Returns the index write units of the entries, which the backfill
/// then charges to the index in the background.
pub(crate) fn backfill(
    storage: &dyn Storage,
    table: &Table,
    data: &mut TableData,
    ix: &mut index::IndexData,
    chunk: usize,
    now: Millis,
) -> Result<f64, EngineError> {
    let stored = data.store.stores_index_entries();
    if stored {
        storage.drop_index(&table.name, &ix.def.name)?;
    }
    let mut units = 0.0;
    let mut after: Option<StoreKey> = None;
    loop {
        let items = crate::backup::read_chunk(&*data.store, after.as_ref(), chunk)?;
        let Some((last, _)) = items.last() else { return Ok(units) };
        after = Some(last.clone());
        let full = items.len() == chunk;
        let mut batch = WriteBatch::default();
        let mut changes = Vec::new();
        for (key, item) in items {
            if ix.def.check_item(&item).is_err() {
                continue;
            }
            for change in index::changes(std::slice::from_ref(ix), &table.key_schema, &key, None, Some(&item)) {
                units += change.units;
                if stored {
                    index::store_writes(&change, &ix.def.name, 0, &mut batch.index_writes);
                }
                changes.push(change);
            }
        }
        if !batch.is_empty() {
            storage.commit(batch, &mut [store_of(data)])?;
        }
        for change in changes {
            index::apply(ix, change, stored, now);
        }
        if !full {
            return Ok(units);
        }
    }
}
