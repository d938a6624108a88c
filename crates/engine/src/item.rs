//! Single-item operations: PutItem, GetItem, DeleteItem, UpdateItem.

use std::sync::Arc;

use dynaburst_capacity::Op;
use dynaburst_expr::Condition;
use dynaburst_model::{item_size, read_units, Item};

use crate::engine::{
    apply_update, check_item_size, check_put_return_values, check_scalar_keys, check_update_spares_index_keys,
    check_update_spares_key, condition_holds, consumed, parse_projection_only, parse_write_exprs, projected, read_kind,
    throttled, update_return_values, Engine, ITEM_TOO_BIG,
};
use crate::error::EngineError;
use crate::index;
use crate::store::StoreKey;
use crate::table::Table;
use crate::types::*;
use crate::write::{self, OneWrite, Writes};

/// ConditionalCheckFailedException, with the old item when asked for.
fn condition_failed(old: Option<&Item>, options: &WriteOptions) -> EngineError {
    EngineError::ConditionalCheckFailed {
        item: if options.return_old_on_condition_failure { old.cloned() } else { None },
    }
}

/// The ItemCollectionMetrics of a single-item write, when asked for.
fn collection_of(table: &Table, committed: &write::Committed, options: &WriteOptions) -> Option<ItemCollection> {
    if !options.return_item_collection_metrics {
        return None;
    }
    committed.collections_of(0, table).into_iter().next()
}

/// The item a single-item write targets: its table (as the caller named
/// it, and resolved) and its key.
struct Target<'a> {
    sent_name: &'a str,
    table: &'a Table,
    key: StoreKey,
}

impl Engine {
    /// PutItem. A throttled write is refused before its condition is
    /// evaluated.
    pub fn put_item(&self, input: PutItemInput, now: Millis) -> Result<WriteOutput, EngineError> {
        let (table, condition) = self.open_replace(&input.table_name, &input.options)?;
        let key = table.key_schema.key_of_item(&input.item)?;
        let new_size = check_item_size(&input.item, ITEM_TOO_BIG)?;
        let target = Target { sent_name: &input.table_name, table: &table, key };
        self.replace_one(target, Some((input.item, new_size)), &condition, &input.options, now)
    }

    /// GetItem.
    pub fn get_item(&self, input: GetItemInput, now: Millis) -> Result<GetItemOutput, EngineError> {
        let table = self.table(&input.table_name)?;
        let projection = parse_projection_only(input.projection.as_deref(), input.names.as_ref())?;
        check_scalar_keys(&table, projection.iter().flatten())?;
        let key = table.key_schema.key_of_key(&input.key)?;
        let found = table.data.read().store.get(&key)?;
        let size = found.as_ref().map(|i| item_size(i)).unwrap_or(0);
        let units = read_units(size, read_kind(input.consistent_read));
        let admitted = table.admit(Op::Read, key.hash, units, now);
        table.note_key(&key, Op::Read, units, admitted.is_err(), now);
        throttled(&table, now, admitted)?;
        let item = found.map(|i| projected(&i, &projection));
        Ok(GetItemOutput { item, consumed: consumed(input.return_capacity, &input.table_name, units, 0.0) })
    }

    /// DeleteItem. A throttled write is refused before its condition is
    /// evaluated.
    pub fn delete_item(&self, input: DeleteItemInput, now: Millis) -> Result<WriteOutput, EngineError> {
        let (table, condition) = self.open_replace(&input.table_name, &input.options)?;
        let key = table.key_schema.key_of_key(&input.key)?;
        self.replace_one(
            Target { sent_name: &input.table_name, table: &table, key },
            None,
            &condition,
            &input.options,
            now,
        )
    }

    /// PutItem's and DeleteItem's checks before the key, in DynamoDB's
    /// order: ReturnValues, the table, the condition expression.
    fn open_replace(
        &self,
        table_name: &str,
        options: &WriteOptions,
    ) -> Result<(Arc<Table>, Option<Condition>), EngineError> {
        check_put_return_values(options.return_values, "")?;
        let table = self.table(table_name)?;
        let exprs = parse_write_exprs(options.condition.as_deref(), None, &options.expr)?;
        Ok((table, exprs.condition))
    }

    /// PutItem's and DeleteItem's write: the item at `key` becomes `new`
    /// (with its size), or is deleted when `new` is None. Admission comes
    /// before the condition; the old item is returned for ALL_OLD.
    fn replace_one(
        &self,
        target: Target<'_>,
        new: Option<(Item, usize)>,
        condition: &Option<Condition>,
        options: &WriteOptions,
        now: Millis,
    ) -> Result<WriteOutput, EngineError> {
        let Target { sent_name, table, key } = target;
        let mut data = table.data.write();
        if let Some((item, _)) = &new {
            write::check_indexes(&data, item)?;
        }
        let old = data.store.get(&key)?;
        let old_size = old.as_ref().map(|o| item_size(o)).unwrap_or(0);
        let units = write::units(old_size, new.as_ref().map_or(0, |(_, size)| *size));
        let changes = write::index_changes(table, &data, &key, old.as_deref(), new.as_ref().map(|(i, _)| i));
        write::admit_write(
            table,
            &data,
            OneWrite { key: &key, units: units + write::local_units(&data, &changes), changes: &changes },
            now,
        )?;
        if !condition_holds(condition, old.as_deref())? {
            return Err(condition_failed(old.as_deref(), options));
        }
        let mut consumed = consumed(options.return_capacity, sent_name, 0.0, units);
        write::report_index_writes(&mut consumed, &data, &changes);
        let mut writes = Writes::with_capacity(1);
        match new {
            Some((item, size)) => writes.put(0, key, item, size, Some(old_size), changes),
            // Deleting what is not there writes nothing.
            None if old.is_some() => writes.delete(0, key, Some(old_size), changes),
            None => {}
        }
        let mut item_collection = None;
        if writes.len() > 0 {
            let committed =
                write::commit(&*self.storage, &self.commit_limits(), &[table], &mut [&mut *data], writes, now)?;
            item_collection = collection_of(table, &committed, options);
        }
        drop(data);
        Ok(WriteOutput {
            attributes: match options.return_values {
                ReturnValues::AllOld => old.map(|o| (*o).clone()),
                _ => None,
            },
            consumed,
            item_collection,
        })
    }

    /// UpdateItem. The condition is evaluated first; a failed condition is
    /// still charged, on the old item's size (B6).
    pub fn update_item(&self, input: UpdateItemInput, now: Millis) -> Result<WriteOutput, EngineError> {
        let options = &input.options;
        let table = self.table(&input.table_name)?;
        let exprs = parse_write_exprs(options.condition.as_deref(), input.update.as_deref(), &options.expr)?;
        check_update_spares_index_keys(&table, &exprs.update)?;
        let key = table.key_schema.key_of_key(&input.key)?;
        let mut data = table.data.write();
        let old = data.store.get(&key)?;
        let old_size = old.as_ref().map(|o| item_size(o)).unwrap_or(0);
        if !condition_holds(&exprs.condition, old.as_deref())? {
            // A failed condition is charged on the old item, to the table.
            write::admit_write(
                &table,
                &data,
                OneWrite { key: &key, units: write::units(old_size, 0), changes: &[] },
                now,
            )?;
            return Err(condition_failed(old.as_deref(), options));
        }
        if old.is_none() && (input.keep_missing || exprs.only_removes()) {
            if let Some(update) = &exprs.update {
                check_update_spares_key(&table.key_schema, update)?;
            }
            let units = write::units(0, 0);
            write::admit_write(&table, &data, OneWrite { key: &key, units, changes: &[] }, now)?;
            return Ok(WriteOutput {
                attributes: None,
                consumed: consumed(options.return_capacity, &input.table_name, 0.0, units),
                item_collection: None,
            });
        }
        let (new_item, new_size) = apply_update(&table.key_schema, &input.key, old.as_deref(), &exprs.update)?;
        write::check_indexes(&data, &new_item).map_err(index::as_update_error)?;
        let units = write::units(old_size, new_size);
        let changes = write::index_changes(&table, &data, &key, old.as_deref(), Some(&new_item));
        write::admit_write(
            &table,
            &data,
            OneWrite { key: &key, units: units + write::local_units(&data, &changes), changes: &changes },
            now,
        )?;
        let attributes = update_return_values(options.return_values, old.as_deref(), &new_item, &exprs.update);
        let mut consumed = consumed(options.return_capacity, &input.table_name, 0.0, units);
        write::report_index_writes(&mut consumed, &data, &changes);
        let mut writes = Writes::with_capacity(1);
        writes.put(0, key, new_item, new_size, Some(old_size), changes);
        let committed =
            write::commit(&*self.storage, &self.commit_limits(), &[&table], &mut [&mut *data], writes, now)?;
        drop(data);
        let item_collection = collection_of(&table, &committed, options);
        Ok(WriteOutput { attributes, consumed, item_collection })
    }
}
