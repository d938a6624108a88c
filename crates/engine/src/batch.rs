//! BatchWriteItem and BatchGetItem.

use std::collections::HashSet;
use std::sync::Arc;

use dynaburst_capacity::Op;
use dynaburst_model::{item_size, read_units, Item};

use crate::engine::{
    check_item_size, check_scalar_keys, consumed, parse_projection_only, projected, read_kind, Engine, ITEM_TOO_BIG,
    MAX_BATCH_GET_KEYS,
};
use crate::error::EngineError;
use crate::index::IndexChange;
use crate::store::StoreKey;
use crate::table::{Table, TableData};
use crate::types::*;
use crate::write::{self, OneWrite, Writes};

/// The distinct tables of a request in name order (the order their locks
/// are taken in), and the slot among them of each table in `named`.
pub(crate) fn table_slots(named: &[Arc<Table>]) -> Result<(Vec<Arc<Table>>, Vec<usize>), EngineError> {
    let mut tables = named.to_vec();
    tables.sort_unstable_by(|a, b| a.name.cmp(&b.name));
    tables.dedup_by(|a, b| a.name == b.name);
    // Every table is in `tables`; a miss would be a bug, reported as the
    // table not found rather than routed to another table.
    let slots = named
        .iter()
        .map(|t| tables.binary_search_by(|x| x.name.cmp(&t.name)).map_err(|_| EngineError::table_not_found()))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((tables, slots))
}

/// How one table's requests of a BatchWriteItem were handled.
struct Handled {
    table_name: String,
    /// Units charged (known at admission when the capacity model is on).
    units: f64,
    /// Without a capacity model: the positions of this table's writes in
    /// the batch, charged from the items they replace after commit.
    unmetered: Option<std::ops::Range<usize>>,
    unprocessed: Vec<WriteRequest>,
    /// The index changes of the admitted writes, for ConsumedCapacity.
    indexes: Vec<IndexChange>,
}

impl Engine {
    /// BatchWriteItem. The whole batch is validated before anything is
    /// written; each item is then admitted on its own, and the admitted
    /// writes of every table commit together.
    pub fn batch_write_item(&self, input: BatchWriteInput, now: Millis) -> Result<BatchWriteOutput, EngineError> {
        let mut plan = Vec::with_capacity(input.requests.len());
        let mut named = Vec::with_capacity(input.requests.len());
        for (table_name, requests) in &input.requests {
            let table = self.table(table_name)?;
            // Each key with the size of the item put (0 for a delete).
            let mut keyed: Vec<(StoreKey, usize)> = Vec::with_capacity(requests.len());
            for request in requests {
                let (key, size) = match request {
                    WriteRequest::Put(item) => {
                        let key = table.key_schema.key_of_item(item)?;
                        (key, check_item_size(item, ITEM_TOO_BIG)?)
                    }
                    WriteRequest::Delete(k) => (table.key_schema.key_of_key(k)?, 0),
                };
                // At most 25 keys: compare the partition hash each key
                // carries, and whole keys only when it matches.
                if keyed.iter().any(|(k, _)| k.hash == key.hash && *k == key) {
                    return Err(EngineError::validation("Provided list of item keys contains duplicates"));
                }
                keyed.push((key, size));
            }
            plan.push(keyed);
            named.push(table);
        }
        let (tables, slots) = table_slots(&named)?;
        drop(named);
        // A name and an ARN of one table are one table: its keys must be
        // distinct across both entries too (S165).
        // (Checked only when a table is named twice: each entry's own keys
        // were checked above.)
        if slots.iter().enumerate().any(|(i, s)| slots[..i].contains(s)) {
            let mut seen = HashSet::new();
            for (keys, &slot) in plan.iter().zip(&slots) {
                if keys.iter().any(|(k, _)| !seen.insert((slot, k.clone()))) {
                    return Err(EngineError::validation("Provided list of item keys contains duplicates"));
                }
            }
        }
        let total: usize = plan.iter().map(Vec::len).sum();
        let mut guards: Vec<_> = tables.iter().map(|t| t.data.write()).collect();
        // Index key values are checked for the whole batch first: one bad
        // item fails the request (S22, S31).
        for ((_, requests), &slot) in input.requests.iter().zip(&slots) {
            for request in requests {
                if let WriteRequest::Put(item) = request {
                    write::check_indexes(&guards[slot], item)?;
                }
            }
        }
        // Each item is admitted on its own; what the capacity model refuses
        // comes back in UnprocessedItems. Only when nothing at all was
        // admitted does the request fail with the throttling error (A32).
        let mut writes = Writes::with_capacity(total);
        let mut handled = Vec::with_capacity(plan.len());
        let mut admitted_any = false;
        let mut refusal: Option<EngineError> = None;
        for ((keys, (table_name, requests)), &slot) in plan.into_iter().zip(input.requests).zip(&slots) {
            let table = &tables[slot];
            let data = &guards[slot];
            if table.capacity.lock().is_none() {
                // No capacity model: nothing to admit, so each item is one
                // store write, charged from the item it replaced (read here
                // only when indexes need it).
                let start = writes.len();
                let mut index_units: Vec<IndexChange> = Vec::new();
                for ((key, new_size), request) in keys.into_iter().zip(requests) {
                    let (old, changes) = if data.indexes.is_empty() {
                        (None, Vec::new())
                    } else {
                        let old = data.store.get(&key)?;
                        let changes = write::index_changes(table, data, &key, old.as_deref(), request.put_item());
                        index_units.extend(changes.iter().cloned());
                        (Some(old.map(|o| item_size(&o)).unwrap_or(0)), changes)
                    };
                    match request {
                        WriteRequest::Put(item) => writes.put(slot, key, item, new_size, old, changes),
                        WriteRequest::Delete(_) => writes.delete(slot, key, old, changes),
                    }
                }
                admitted_any = true;
                handled.push(Handled {
                    table_name,
                    units: 0.0,
                    unmetered: Some(start..writes.len()),
                    unprocessed: Vec::new(),
                    indexes: index_units,
                });
                continue;
            }
            let mut units = 0.0;
            let mut unprocessed = Vec::new();
            let mut index_units: Vec<IndexChange> = Vec::new();
            write::begin_batch(table, data);
            for ((key, new_size), request) in keys.into_iter().zip(requests) {
                let old = data.store.get(&key)?;
                let old_size = old.as_ref().map(|o| item_size(o)).unwrap_or(0);
                let item_units = write::units(old_size, new_size);
                let changes = write::index_changes(table, data, &key, old.as_deref(), request.put_item());
                let table_units = item_units + write::local_units(data, &changes);
                if !write::admit_batch_item(
                    table,
                    data,
                    OneWrite { key: &key, units: table_units, changes: &changes },
                    now,
                    &mut refusal,
                )? {
                    unprocessed.push(request);
                    continue;
                }
                admitted_any = true;
                units += item_units;
                index_units.extend(changes.iter().cloned());
                match request {
                    WriteRequest::Put(item) => writes.put(slot, key, item, new_size, Some(old_size), changes),
                    WriteRequest::Delete(_) => writes.delete(slot, key, Some(old_size), changes),
                }
                writes.note_last(table, now);
            }
            handled.push(Handled { table_name, units, unmetered: None, unprocessed, indexes: index_units });
        }
        let table_refs: Vec<&Table> = tables.iter().map(|t| &**t).collect();
        let mut data: Vec<&mut TableData> = guards.iter_mut().map(|g| &mut **g).collect();
        let committed = write::commit(&*self.storage, &self.commit_limits(), &table_refs, &mut data, writes, now)?;
        drop(data);
        let mut out = BatchWriteOutput::default();
        if input.return_item_collection_metrics {
            for (h, &slot) in handled.iter().zip(&slots) {
                let collections = committed.collections_of(slot, &tables[slot]);
                if !collections.is_empty() {
                    out.item_collections.push((h.table_name.clone(), collections));
                }
            }
        }
        let mut throttled_tables = Vec::new();
        for (h, &slot) in handled.into_iter().zip(&slots) {
            let table = &tables[slot];
            let units = match h.unmetered {
                Some(range) => committed.units(range),
                None => h.units,
            };
            if !h.unprocessed.is_empty() {
                throttled_tables.push(table.clone());
                out.unprocessed.push((h.table_name.clone(), h.unprocessed));
            }
            // Keyed as the caller named the table (its name or ARN, S165).
            let mut c = consumed(input.return_capacity, &h.table_name, 0.0, units);
            write::report_index_writes(&mut c, &guards[slot], &h.indexes);
            out.consumed.extend(c);
        }
        drop(guards);
        refuse_if_nothing_admitted(admitted_any, refusal, &throttled_tables, now)?;
        Ok(out)
    }

    /// BatchGetItem.
    pub fn batch_get_item(&self, input: BatchGetInput, now: Millis) -> Result<BatchGetOutput, EngineError> {
        let total: usize = input.requests.iter().map(|(_, r)| r.keys.len()).sum();
        if total > MAX_BATCH_GET_KEYS {
            return Err(EngineError::validation("Too many items requested for the BatchGetItem call"));
        }
        let mut plan: Vec<BatchGetPlan> = Vec::with_capacity(input.requests.len());
        for (table_name, request) in &input.requests {
            let table = self.table(table_name)?;
            let projection = parse_projection_only(request.projection.as_deref(), request.names.as_ref())?;
            check_scalar_keys(&table, projection.iter().flatten())?;
            let mut seen = HashSet::with_capacity(request.keys.len());
            let mut keys = Vec::with_capacity(request.keys.len());
            for k in &request.keys {
                let key = table.key_schema.key_of_key(k)?;
                if !seen.insert(key.clone()) {
                    return Err(EngineError::validation("Provided list of item keys contains duplicates"));
                }
                keys.push((key, k.clone()));
            }
            // A table named by its name and by its ARN is one entry, under
            // the first form sent, each key read once (S165).
            if let Some(first) = plan.iter_mut().find(|p| Arc::ptr_eq(&p.table, &table)) {
                for (key, sent) in keys {
                    if !first.keys.iter().any(|(k, _)| *k == key) {
                        first.keys.push((key, sent));
                    }
                }
                continue;
            }
            plan.push(BatchGetPlan { sent: table_name, table, projection, keys, request });
        }
        let mut out = BatchGetOutput::default();
        let mut admitted_any = false;
        let mut refusal: Option<EngineError> = None;
        let mut throttled_tables = Vec::new();
        // Answers are keyed as the caller named each table (name or ARN, S165).
        for BatchGetPlan { sent, table, projection, keys, request } in plan {
            let mut units = 0.0;
            let mut items = Vec::new();
            let mut unprocessed = Vec::new();
            let data = table.data.read();
            table.begin_request(Op::Read);
            for (key, key_item) in keys {
                let found = data.store.get(&key)?;
                let item_units =
                    read_units(found.as_ref().map(|i| item_size(i)).unwrap_or(0), read_kind(request.consistent_read));
                let admitted = table.admit_in_request(Op::Read, key.hash, item_units, now);
                table.note_key(&key, Op::Read, item_units, admitted.is_err(), now);
                match admitted {
                    Ok(()) => {}
                    Err(e @ EngineError::Throttled { .. }) => {
                        refusal.get_or_insert(e);
                        unprocessed.push(key_item);
                        continue;
                    }
                    Err(e) => return Err(e),
                }
                admitted_any = true;
                units += item_units;
                if let Some(i) = found {
                    items.push(projected(&i, &projection));
                }
            }
            drop(data);
            if !unprocessed.is_empty() {
                throttled_tables.push(table.clone());
                out.unprocessed.push((
                    sent.clone(),
                    KeysAndAttributes {
                        keys: unprocessed,
                        projection: request.projection.clone(),
                        names: request.names.clone(),
                        consistent_read: request.consistent_read,
                    },
                ));
            }
            out.consumed.extend(consumed(input.return_capacity, sent, units, 0.0));
            out.responses.push((sent.clone(), items));
        }
        refuse_if_nothing_admitted(admitted_any, refusal, &throttled_tables, now)?;
        Ok(out)
    }
}

/// One table's part of a BatchGetItem: the table as the caller first named
/// it, its projection, and its keys (each with the key as sent).
struct BatchGetPlan<'a> {
    sent: &'a String,
    table: Arc<Table>,
    projection: Option<Vec<dynaburst_expr::Path>>,
    keys: Vec<(StoreKey, Item)>,
    request: &'a KeysAndAttributes,
}

/// A batch of which no item was admitted fails whole with its first
/// throttling error, each throttled table counting one throttled request;
/// one that admitted anything succeeds, its refused items unprocessed.
fn refuse_if_nothing_admitted(
    admitted_any: bool,
    refusal: Option<EngineError>,
    throttled_tables: &[Arc<Table>],
    now: Millis,
) -> Result<(), EngineError> {
    match refusal {
        Some(e) if !admitted_any => {
            for t in throttled_tables {
                t.note_throttled_request(now);
            }
            Err(e)
        }
        _ => Ok(()),
    }
}
