//! TransactWriteItems and TransactGetItems: all or nothing.

use std::collections::HashSet;
use std::sync::Arc;

use dynaburst_capacity::Op;
use dynaburst_model::{item_size, read_units, Item, KeyValue, ReadKind};

use crate::engine::{
    apply_update, check_item_size, check_scalar_keys, check_update_spares_index_keys, check_update_spares_key,
    condition_holds, consumed, parse_projection_only, parse_write_exprs, projected, throttle_cancellation, Engine,
    WriteExprs, ITEM_TOO_BIG,
};
use crate::error::EngineError;
use crate::index::{self, IndexChange, IndexKind};
use crate::store::StoreKey;
use crate::table::{Table, TableData};
use crate::types::*;
use crate::write::{self, Writes};

/// A cancellation reason's message for an item collection that would
/// outgrow its limit (TransactWriteItems API reference).
const COLLECTION_SIZE_EXCEEDED: &str = "Collection size exceeded.";

/// A ValidationError cancellation reason with `message`, or "None" for an
/// action that would have passed.
fn validation_reason(message: Option<String>) -> CancellationReason {
    match message {
        Some(m) => CancellationReason { code: "ValidationError", message: Some(m), item: None },
        None => CancellationReason { code: "None", message: None, item: None },
    }
}

/// One action, checked before any table is locked.
struct Planned {
    slot: usize,
    key: StoreKey,
    key_item: Item,
    exprs: WriteExprs,
    /// The Put's item size.
    put_size: usize,
}

/// What an action will do once every condition held.
enum Apply {
    Put(Item, usize),
    Delete,
    Nothing,
}

impl Engine {
    /// The distinct tables `names` refer to, in name order (the order their
    /// locks are taken in), and each name's slot among them. Looked up in
    /// name order, so the first missing table in that order is reported.
    fn tables_in_name_order<'a>(
        &self,
        names: impl Iterator<Item = &'a str>,
    ) -> Result<(Vec<Arc<Table>>, Vec<usize>), EngineError> {
        let names: Vec<&str> = names.collect();
        // Resolved first (a name and an ARN of one table are one table,
        // locked once), looked up in name order so that the first missing
        // table in that order is the one reported.
        let mut sorted = names.iter().map(|n| self.resolve_name(n)).collect::<Result<Vec<_>, _>>()?;
        sorted.sort_unstable();
        sorted.dedup();
        for n in &sorted {
            self.table(n)?;
        }
        let named = names.iter().map(|n| self.table(n)).collect::<Result<Vec<_>, _>>()?;
        crate::batch::table_slots(&named)
    }

    /// TransactWriteItems: all or nothing.
    pub fn transact_write_items(
        &self,
        input: TransactWriteInput,
        now: Millis,
    ) -> Result<TransactWriteOutput, EngineError> {
        if let Some((token, fingerprint)) = &input.client_token {
            if let Some(output) = self.tokens.lock().replay(token, *fingerprint, input.return_capacity, now)? {
                return Ok(output);
            }
        }
        // Static validation: tables, keys, sizes, expressions, one action per item.
        let (tables, slots) = self.tables_in_name_order(input.actions.iter().map(|a| a.table_name.as_str()))?;
        // Each table as the caller first named it (name or ARN, S165).
        let sent = sent_names(&tables, &slots, input.actions.iter().map(|a| a.table_name.as_str()));
        let mut planned = Vec::with_capacity(input.actions.len());
        let mut seen: HashSet<(usize, StoreKey)> = HashSet::new();
        // A wrong-typed key cancels the transaction with a ValidationError
        // reason for its action (an empty one refuses the request).
        let mut key_faults: Vec<Option<String>> = vec![None; input.actions.len()];
        for (position, (action, &slot)) in input.actions.iter().zip(&slots).enumerate() {
            let schema = &tables[slot].key_schema;
            let mut put_size = 0;
            let (condition, expr) = (action.condition.as_deref(), &action.expr);
            let key_of = |key: Result<StoreKey, EngineError>, faults: &mut Vec<Option<String>>| match key {
                Err(e) if index::is_cancelling_fault(&e) => {
                    faults[position] = Some(e.message());
                    Ok(None)
                }
                other => other.map(Some),
            };
            let (key, key_item, exprs) = match &action.op {
                TransactOp::Put { item } => {
                    let Some(key) = key_of(schema.key_of_item(item), &mut key_faults)? else { continue };
                    put_size = check_item_size(item, ITEM_TOO_BIG)?;
                    (key, schema.key_item(item), parse_write_exprs(condition, None, expr)?)
                }
                TransactOp::Update { key, update } => {
                    let Some(k) = key_of(schema.key_of_key(key), &mut key_faults)? else { continue };
                    let exprs = parse_write_exprs(condition, Some(update), expr)?;
                    if let Some(u) = &exprs.update {
                        check_update_spares_key(schema, u)?;
                    }
                    check_update_spares_index_keys(&tables[slot], &exprs.update)?;
                    (k, key.clone(), exprs)
                }
                TransactOp::Delete { key } => {
                    let Some(k) = key_of(schema.key_of_key(key), &mut key_faults)? else { continue };
                    (k, key.clone(), parse_write_exprs(condition, None, expr)?)
                }
                TransactOp::ConditionCheck { key } => {
                    let Some(k) = key_of(schema.key_of_key(key), &mut key_faults)? else { continue };
                    (k, key.clone(), parse_write_exprs(Some(condition.unwrap_or_default()), None, expr)?)
                }
            };
            if !seen.insert((slot, key.clone())) {
                return Err(EngineError::validation(
                    "Transaction request cannot include multiple operations on one item",
                ));
            }
            planned.push(Planned { slot, key, key_item, exprs, put_size });
        }
        if key_faults.iter().any(Option::is_some) {
            // DynamoDB stops at the first action that fails validation: the
            // actions after it are reported as None, whatever they hold.
            let first = key_faults.iter().position(Option::is_some);
            let reasons = key_faults
                .into_iter()
                .enumerate()
                .map(|(i, fault)| validation_reason(fault.filter(|_| Some(i) == first)))
                .collect();
            return Err(EngineError::TransactionCanceled { reasons });
        }
        // Lock every table in name order, then check every condition.
        let mut guards: Vec<_> = tables.iter().map(|t| t.data.write()).collect();
        let mut reasons = Vec::with_capacity(planned.len());
        let mut applies: Vec<(Apply, usize)> = Vec::with_capacity(planned.len());
        let mut units_per_table = vec![0.0; tables.len()];
        let mut admissions: Vec<Vec<(u128, f64)>> = vec![Vec::new(); tables.len()];
        let mut index_changes: Vec<Vec<IndexChange>> = vec![Vec::new(); tables.len()];
        let mut per_action_changes: Vec<Vec<IndexChange>> = Vec::with_capacity(planned.len());
        let mut failed = false;
        for (plan, action) in planned.iter().zip(&input.actions) {
            let old = guards[plan.slot].store.get(&plan.key)?;
            let old_size = old.as_ref().map(|o| item_size(o)).unwrap_or(0);
            let return_old = action.return_old_on_failure;
            if !condition_holds(&plan.exprs.condition, old.as_deref())? {
                failed = true;
                reasons.push(CancellationReason {
                    code: "ConditionalCheckFailed",
                    message: Some("The conditional request failed".to_string()),
                    item: if return_old { old.map(|o| (*o).clone()) } else { None },
                });
                applies.push((Apply::Nothing, old_size));
                per_action_changes.push(Vec::new());
                let units = write::transactional_units(old_size, 0);
                units_per_table[plan.slot] += units;
                admissions[plan.slot].push((plan.key.hash, units));
                continue;
            }
            let (apply, new_size) = match &action.op {
                TransactOp::Put { item } => match write::check_indexes(&guards[plan.slot], item) {
                    Ok(()) => (Apply::Put(item.clone(), plan.put_size), plan.put_size),
                    Err(e) if index::is_cancelling_fault(&e) => {
                        failed = true;
                        admissions[plan.slot].push((plan.key.hash, write::transactional_units(old_size, 0)));
                        reasons.push(validation_reason(Some(e.message())));
                        applies.push((Apply::Nothing, old_size));
                        per_action_changes.push(Vec::new());
                        continue;
                    }
                    Err(e) => return Err(e),
                },
                TransactOp::Delete { .. } => (Apply::Delete, 0),
                TransactOp::ConditionCheck { .. } => (Apply::Nothing, 0),
                // Nothing to remove from an item that is not there.
                TransactOp::Update { .. } if old.is_none() && plan.exprs.only_removes() => (Apply::Nothing, 0),
                TransactOp::Update { .. } => {
                    let updated =
                        apply_update(&tables[plan.slot].key_schema, &plan.key_item, old.as_deref(), &plan.exprs.update);
                    let updated = updated.and_then(|(item, size)| {
                        write::check_indexes(&guards[plan.slot], &item).map_err(index::as_update_error)?;
                        Ok((item, size))
                    });
                    match updated {
                        Ok((new_item, size)) => (Apply::Put(new_item, size), size),
                        // An empty index key refuses the whole request.
                        Err(e) if index::is_empty_index_key(&e) => return Err(e),
                        // What only shows when applied (a type mismatch, a
                        // missing operand, an item grown too big) cancels
                        // the transaction with a ValidationError reason.
                        Err(EngineError::Validation(message)) => {
                            failed = true;
                            admissions[plan.slot].push((plan.key.hash, write::transactional_units(old_size, 0)));
                            reasons.push(validation_reason(Some(message)));
                            applies.push((Apply::Nothing, old_size));
                            per_action_changes.push(Vec::new());
                            continue;
                        }
                        Err(e) => return Err(e),
                    }
                }
            };
            let units = write::transactional_units(old_size, new_size);
            let new_item = match &apply {
                Apply::Put(item, _) => Some(item),
                Apply::Delete => None,
                Apply::Nothing => old.as_deref(),
            };
            let table = &tables[plan.slot];
            let changes = write::index_changes(table, &guards[plan.slot], &plan.key, old.as_deref(), new_item);
            let local = write::local_units(&guards[plan.slot], &changes);
            units_per_table[plan.slot] += units;
            admissions[plan.slot].push((plan.key.hash, units + local));
            index_changes[plan.slot].extend(changes.iter().cloned());
            per_action_changes.push(changes);
            reasons.push(CancellationReason { code: "None", message: None, item: None });
            applies.push((apply, old_size));
        }
        // Capacity: a transaction cancelled by its conditions is charged
        // and answered with their failure; one the model cannot admit is
        // cancelled whole (A34).
        {
            let data: Vec<&TableData> = guards.iter().map(|g| &**g).collect();
            if failed {
                write::charge_transaction(&tables, &admissions, now);
                return Err(EngineError::TransactionCanceled { reasons });
            }
            write::admit_transaction(&tables, &data, &admissions, &index_changes, planned.len(), now)?;
        }
        let mut writes = Writes::with_capacity(planned.len());
        // Each action's item collection, and whether it writes an item there.
        let targets: Vec<(usize, KeyValue, bool)> = planned
            .iter()
            .zip(&applies)
            .map(|(plan, (apply, _))| (plan.slot, plan.key.partition.clone(), matches!(apply, Apply::Put(..))))
            .collect();
        for ((plan, (apply, old_size)), changes) in planned.into_iter().zip(applies).zip(per_action_changes) {
            match apply {
                Apply::Put(item, size) => writes.put(plan.slot, plan.key, item, size, Some(old_size), changes),
                Apply::Delete => writes.delete(plan.slot, plan.key, Some(old_size), changes),
                Apply::Nothing => {}
            }
        }
        // (index name, global, write units) per table, for ConsumedCapacity.
        let index_reports: Vec<Vec<(String, bool, f64)>> = index_changes
            .iter()
            .zip(&guards)
            .map(|(changes, data)| {
                changes
                    .iter()
                    .map(|c| {
                        let def = &data.indexes[c.index].def;
                        (def.name.clone(), def.kind == IndexKind::Global, c.units)
                    })
                    .collect()
            })
            .collect();
        // An item collection of a table with LSIs that would outgrow its
        // limit cancels the transaction, naming the puts into it.
        let limits = self.commit_limits();
        {
            let table_refs: Vec<&Table> = tables.iter().map(|t| &**t).collect();
            let mut data: Vec<&mut TableData> = guards.iter_mut().map(|g| &mut **g).collect();
            writes.measure_collections(&table_refs, &mut data)?;
        }
        if let Some((slot, partition)) = writes.collection_overflow(&guards, limits.item_collection_bytes) {
            let reasons = targets
                .iter()
                .map(|(s, p, put)| match *s == slot && *p == partition && *put {
                    true => CancellationReason {
                        code: "ItemCollectionSizeLimitExceeded",
                        message: Some(COLLECTION_SIZE_EXCEEDED.to_string()),
                        item: None,
                    },
                    false => CancellationReason { code: "None", message: None, item: None },
                })
                .collect();
            return Err(EngineError::TransactionCanceled { reasons });
        }
        let table_refs: Vec<&Table> = tables.iter().map(|t| &**t).collect();
        let mut data: Vec<&mut TableData> = guards.iter_mut().map(|g| &mut **g).collect();
        let committed = write::commit(&*self.storage, &limits, &table_refs, &mut data, writes, now)?;
        drop(data);
        drop(guards);
        let mut item_collections = Vec::new();
        if input.return_item_collection_metrics {
            for (slot, (table, name)) in tables.iter().zip(&sent).enumerate() {
                let changed = committed.collections_of(slot, table);
                if !changed.is_empty() {
                    item_collections.push((name.to_string(), changed));
                }
            }
        }
        if let Some((token, fingerprint)) = input.client_token {
            // Named as the caller named them, for the replay's answer.
            let all = tables
                .iter()
                .zip(&units_per_table)
                .zip(&sent)
                .filter_map(|((_, units), name)| consumed(ReturnCapacity::Total, name, 0.0, *units))
                .collect::<Vec<_>>();
            let output = TransactWriteOutput { consumed: all, item_collections: Vec::new() };
            self.tokens.lock().remember(token, fingerprint, output, now);
        }
        Ok(TransactWriteOutput {
            consumed: tables
                .iter()
                .zip(units_per_table)
                .zip(&index_reports)
                .zip(&sent)
                .filter_map(|(((_, units), report), name)| {
                    let mut c = consumed(input.return_capacity, name, 0.0, units);
                    if let Some(c) = c.as_mut() {
                        for (name, global, w) in report {
                            c.add_index(name, *global, 0.0, *w);
                        }
                    }
                    c
                })
                .collect(),
            item_collections,
        })
    }

    /// TransactGetItems: a consistent snapshot of up to 100 items.
    pub fn transact_get_items(&self, input: TransactGetInput, now: Millis) -> Result<TransactGetOutput, EngineError> {
        let (tables, slots) = self.tables_in_name_order(input.gets.iter().map(|g| g.table_name.as_str()))?;
        let sent = sent_names(&tables, &slots, input.gets.iter().map(|g| g.table_name.as_str()));
        let mut planned = Vec::with_capacity(input.gets.len());
        let mut seen = HashSet::new();
        for (get, &idx) in input.gets.iter().zip(&slots) {
            let key = tables[idx].key_schema.key_of_key(&get.key)?;
            let projection = parse_projection_only(get.projection.as_deref(), get.names.as_ref())?;
            check_scalar_keys(&tables[idx], projection.iter().flatten())?;
            if !seen.insert((idx, key.clone())) {
                return Err(EngineError::validation(
                    "Transaction request cannot include multiple operations on one item",
                ));
            }
            planned.push((idx, key, projection));
        }
        let guards: Vec<_> = tables.iter().map(|t| t.data.read()).collect();
        let mut units = vec![0.0; tables.len()];
        let mut admissions: Vec<Vec<(u128, f64)>> = vec![Vec::new(); tables.len()];
        let mut found_items = Vec::with_capacity(planned.len());
        for (idx, key, projection) in planned {
            let found = guards[idx].store.get(&key)?;
            let u = read_units(found.as_ref().map(|i| item_size(i)).unwrap_or(0), ReadKind::Transactional);
            units[idx] += u;
            admissions[idx].push((key.hash, u));
            found_items.push((found, projection));
        }
        let n = found_items.len();
        for (table, items) in tables.iter().zip(&admissions) {
            if let Err(e) = table.admit_all(Op::Read, items, now) {
                table.note_throttled_request(now);
                return Err(throttle_cancellation(&e, n));
            }
        }
        let mut items = Vec::with_capacity(n);
        for (found, projection) in found_items {
            items.push(found.map(|i| projected(&i, &projection)));
        }
        drop(guards);
        Ok(TransactGetOutput {
            items,
            consumed: units
                .into_iter()
                .zip(&sent)
                .filter_map(|(u, name)| consumed(input.return_capacity, name, u, 0.0))
                .collect(),
        })
    }
}

/// For each table slot, the name the request first used for it (name or
/// ARN, S165); the table's name if the request named it nowhere.
fn sent_names<'a>(tables: &'a [Arc<Table>], slots: &[usize], names: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out = vec![""; tables.len()];
    for (name, &slot) in names.zip(slots) {
        if let Some(s) = out.get_mut(slot).filter(|s| s.is_empty()) {
            *s = name;
        }
    }
    for (s, t) in out.iter_mut().zip(tables) {
        if s.is_empty() {
            *s = &t.name;
        }
    }
    out
}
