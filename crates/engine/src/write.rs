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
//! Hook point for what comes next: secondary-index entries and stream
//! change records are derived from each write's `(table, key, old, new)`
//! in [`commit`], added to the same `WriteBatch`, and so commit (durably,
//! on a disk backend) with the items they describe.

use std::sync::Arc;

use dynaburst_capacity::Op;
use dynaburst_model::{item_size, transactional_write_units, write_units, Item};

use crate::engine::{throttle_cancellation, throttled};
use crate::error::EngineError;
use crate::store::{Mutation, Storage, StoreKey, TableStore, WriteBatch};
use crate::table::{Table, TableData};
use crate::types::Millis;

/// Write units of replacing an item of `old` bytes by one of `new` bytes
/// (0 for an absent item).
pub(crate) fn units(old: usize, new: usize) -> f64 {
    write_units(old.max(new))
}

/// The same in a transaction (twice the units).
pub(crate) fn transactional_units(old: usize, new: usize) -> f64 {
    transactional_write_units(old.max(new))
}

/// Admits one write of a single-item operation; a refusal is counted as a
/// throttled request.
pub(crate) fn admit_one(table: &Table, hash: u128, units: f64, now: Millis) -> Result<(), EngineError> {
    throttled(table, now, table.admit(Op::Write, hash, units, now))
}

/// Admits one item of a batch: `Ok(false)` when the model refuses it (the
/// first refusal is kept in `refusal`; the caller decides whether the
/// request fails).
pub(crate) fn admit_batch_item(
    table: &Table,
    hash: u128,
    units: f64,
    now: Millis,
    refusal: &mut Option<EngineError>,
) -> Result<bool, EngineError> {
    match table.admit(Op::Write, hash, units, now) {
        Ok(()) => Ok(true),
        Err(e @ EngineError::Throttled { .. }) => {
            refusal.get_or_insert(e);
            Ok(false)
        }
        Err(e) => Err(e),
    }
}

/// Admits a transaction's writes all or nothing, table by table; a refusal
/// cancels the whole transaction (A34) with `actions` throttling reasons.
pub(crate) fn admit_transaction(
    tables: &[Arc<Table>],
    admissions: &[Vec<(u128, f64)>],
    actions: usize,
    now: Millis,
) -> Result<(), EngineError> {
    for (table, items) in tables.iter().zip(admissions) {
        if let Err(e) = table.admit_all(Op::Write, items, now) {
            table.note_throttled_request(now);
            return Err(throttle_cancellation(&e, actions));
        }
    }
    Ok(())
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
}

impl Writes {
    /// Room for `n` writes.
    pub(crate) fn with_capacity(n: usize) -> Writes {
        Writes { batch: WriteBatch::with_capacity(n), sizes: Vec::with_capacity(n) }
    }

    /// Puts `item` (of `size` bytes) under `key` in table slot `slot`;
    /// `old` is the replaced item's size when the caller read it.
    pub(crate) fn put(&mut self, slot: usize, key: StoreKey, item: Item, size: usize, old: Option<usize>) {
        self.sizes.push(Sizes { slot, hash: key.hash, old, new: size, put: true, noted: false });
        self.batch.mutations.push(Mutation { table: slot, key, item: Some(Arc::new(item)) });
    }

    /// Deletes `key` in table slot `slot`.
    pub(crate) fn delete(&mut self, slot: usize, key: StoreKey, old: Option<usize>) {
        self.sizes.push(Sizes { slot, hash: key.hash, old, new: 0, put: false, noted: false });
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

/// Commits `writes` atomically: `data[slot]` is the write-locked data of
/// `tables[slot]`. Then keeps each table's item count and size, and tells
/// the capacity model of each size change not yet noted. Returns the sizes
/// of what each write replaced and wrote. On a storage failure nothing
/// was written, the sizes already noted are taken back, and the error is
/// InternalServerError.
pub(crate) fn commit(
    storage: &dyn Storage,
    tables: &[&Table],
    data: &mut [&mut TableData],
    writes: Writes,
    now: Millis,
) -> Result<Committed, EngineError> {
    let Writes { batch, mut sizes } = writes;
    if sizes.is_empty() {
        return Ok(Committed { sizes });
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
            for s in &sizes {
                if let (true, Some(old), Some(table)) = (s.noted, s.old, tables.get(s.slot)) {
                    table.note_size(s.hash, -s.delta(old), now);
                }
            }
            return Err(e.into());
        }
    };
    for (s, old_item) in sizes.iter_mut().zip(&replaced) {
        let old = s.old.unwrap_or_else(|| old_item.as_ref().map(|o| item_size(o)).unwrap_or(0));
        s.old = Some(old);
        if let Some(d) = data.get_mut(s.slot) {
            d.size_bytes = (d.size_bytes + s.new as u64).saturating_sub(old as u64);
            d.item_count = (d.item_count + u64::from(s.put)).saturating_sub(u64::from(old_item.is_some()));
        }
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
    Ok(Committed { sizes })
}

/// The sizes of what a commit wrote and replaced.
pub(crate) struct Committed {
    sizes: Vec<Sizes>,
}

impl Committed {
    /// Write units of the writes at `range` (positions in the batch).
    pub(crate) fn units(&self, range: std::ops::Range<usize>) -> f64 {
        self.sizes.get(range).unwrap_or_default().iter().map(|s| units(s.old.unwrap_or(0), s.new)).sum()
    }
}

/// The store of locked table data, as the commit takes it.
fn store_of<'a>(data: &'a mut TableData) -> &'a mut (dyn TableStore + 'a) {
    data.store.as_mut()
}
