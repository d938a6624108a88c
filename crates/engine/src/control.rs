//! The control plane: CreateTable, DescribeTable, DeleteTable, ListTables,
//! UpdateTable. Tables are recorded in the storage's catalog.

use std::collections::HashMap;
use std::ops::Bound;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::engine::{Engine, MAX_TABLES};
use crate::error::EngineError;
use crate::store::TableMeta;
use crate::table::{capacity_mode, KeyAttr, KeySchema, Table, TableData, TableSettings};
use crate::types::*;

impl Engine {
    /// CreateTable.
    pub fn create_table(&self, input: CreateTableInput, now: Millis) -> Result<TableDescription, EngineError> {
        if input.has_indexes {
            return Err(EngineError::validation(
                "dynaburst does not support secondary indexes yet: remove GlobalSecondaryIndexes and LocalSecondaryIndexes",
            ));
        }
        let defs: HashMap<&str, _> = input.attribute_definitions.iter().map(|(n, t)| (n.as_str(), *t)).collect();
        if defs.len() != input.attribute_definitions.len() {
            return Err(EngineError::validation("Cannot have two attributes with the same name"));
        }
        let mut hash: Option<KeyAttr> = None;
        let mut range: Option<KeyAttr> = None;
        let key_names: Vec<&str> = input.key_schema.iter().map(|(n, _)| n.as_str()).collect();
        let def_names: Vec<&str> = input.attribute_definitions.iter().map(|(n, _)| n.as_str()).collect();
        for (name, role) in &input.key_schema {
            let Some(ty) = defs.get(name.as_str()) else {
                return Err(EngineError::validation(format!(
                    "One or more parameter values were invalid: Some index key attributes are not defined in AttributeDefinitions. Keys: [{}], AttributeDefinitions: [{}]",
                    key_names.join(", "),
                    def_names.join(", ")
                )));
            };
            let attr = KeyAttr { name: name.clone(), ty: *ty };
            match role {
                KeyRole::Hash if hash.is_none() => hash = Some(attr),
                KeyRole::Range if range.is_none() => range = Some(attr),
                _ => {
                    return Err(EngineError::validation(
                        "Invalid KeySchema: Some index key attribute have no definition",
                    ))
                }
            }
        }
        let Some(hash) = hash else {
            return Err(EngineError::validation(
                "Invalid KeySchema: The first KeySchemaElement is not a HASH key type",
            ));
        };
        if input.key_schema.first().map(|(_, r)| *r) != Some(KeyRole::Hash) {
            return Err(EngineError::validation(
                "Invalid KeySchema: The first KeySchemaElement is not a HASH key type",
            ));
        }
        if let Some(r) = &range {
            if r.name == hash.name {
                return Err(EngineError::validation(
                    "Both the Hash Key and the Range Key element in the KeySchema have the same name",
                ));
            }
        }
        if input.attribute_definitions.len() != input.key_schema.len() {
            return Err(EngineError::validation(
                "One or more parameter values were invalid: Number of attributes in KeySchema does not exactly match number of attributes defined in AttributeDefinitions"
            ));
        }
        let mut tables = self.tables.write();
        if tables.contains_key(&input.table_name) {
            return Err(EngineError::ResourceInUse(format!("Table already exists: {}", input.table_name)));
        }
        if tables.len() >= MAX_TABLES {
            return Err(EngineError::LimitExceeded(format!(
                "Subscriber limit exceeded: Table count limit of {MAX_TABLES} reached"
            )));
        }
        let counter = self.table_counter.fetch_add(1, Ordering::Relaxed);
        let meta = TableMeta {
            name: input.table_name.clone(),
            table_id: table_id(&input.table_name, now, counter),
            region: self.config.region.clone(),
            account_id: self.config.account_id.clone(),
            key_schema: KeySchema { hash, range },
            attribute_definitions: input.attribute_definitions.clone(),
            settings: TableSettings::new(input.billing, now),
            created_at: now,
        };
        let store = self.storage.create_table(&meta)?;
        let data = TableData { store, size_bytes: 0, item_count: 0 };
        let table = Table::from_meta(meta, data, self.config.capacity.clone(), now);
        let table = Arc::new(table);
        tables.insert(input.table_name.clone(), table.clone());
        // DynamoDB answers CreateTable with CREATING; tables here are ready
        // at once, so DescribeTable says ACTIVE from the next call on.
        Ok(table.describe("CREATING"))
    }

    /// DescribeTable.
    pub fn describe_table(&self, name: &str) -> Result<TableDescription, EngineError> {
        let table = self.tables.read().get(name).cloned().ok_or_else(|| EngineError::table_not_found_named(name))?;
        Ok(table.describe("ACTIVE"))
    }

    /// DeleteTable.
    pub fn delete_table(&self, name: &str) -> Result<TableDescription, EngineError> {
        let mut tables = self.tables.write();
        if !tables.contains_key(name) {
            return Err(EngineError::table_not_found_named(name));
        }
        // The store goes first: if dropping it fails, the table stays.
        self.storage.drop_table(name)?;
        let table = tables.remove(name).ok_or_else(|| EngineError::table_not_found_named(name))?;
        drop(tables);
        Ok(table.describe("DELETING"))
    }

    /// ListTables.
    pub fn list_tables(&self, input: ListTablesInput) -> ListTablesOutput {
        let tables = self.tables.read();
        let start = match &input.exclusive_start {
            Some(s) => Bound::Excluded(s.clone()),
            None => Bound::Unbounded,
        };
        let mut names: Vec<String> = tables
            .range::<String, _>((start, Bound::Unbounded))
            .take(input.limit + 1)
            .map(|(k, _)| k.clone())
            .collect();
        let last_evaluated = if names.len() > input.limit {
            names.truncate(input.limit);
            names.last().cloned()
        } else {
            None
        };
        ListTablesOutput { names, last_evaluated }
    }

    /// UpdateTable: billing mode and provisioned throughput.
    pub fn update_table(&self, input: UpdateTableInput, now: Millis) -> Result<TableDescription, EngineError> {
        let table = self
            .tables
            .read()
            .get(&input.table_name)
            .cloned()
            .ok_or_else(|| EngineError::table_not_found_named(&input.table_name))?;
        {
            // Changed on a copy, which the catalog stores before the table
            // takes it.
            let mut guard = table.settings.lock();
            let mut settings = guard.clone();
            let currently_ppr = matches!(settings.billing, BillingMode::PayPerRequest);
            let want_ppr = input.billing_mode_pay_per_request.unwrap_or(currently_ppr);
            if input.billing_mode_pay_per_request.is_none() && input.throughput.is_none() {
                return Err(EngineError::validation(
                    "At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, GlobalSecondaryIndexUpdates or SSESpecification or ReplicaUpdates is required",
                ));
            }
            if want_ppr {
                if input.throughput.is_some() {
                    return Err(EngineError::validation(
                        "One or more parameter values were invalid: Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST",
                    ));
                }
                if !currently_ppr {
                    settings.billing = BillingMode::PayPerRequest;
                    settings.last_pay_per_request_switch = Some(now);
                }
                let mode = capacity_mode(settings.billing);
                self.storage.save_table_meta(&table.meta_with(settings.clone()))?;
                *guard = settings;
                drop(guard);
                if let Some(model) = table.capacity.lock().as_mut() {
                    model.set_mode(mode, now);
                }
                return Ok(table.describe("UPDATING"));
            } else {
                let Some((read, write)) = input.throughput else {
                    return Err(EngineError::validation(
                        "One or more parameter values were invalid: ProvisionedThroughput must be specified when BillingMode is PROVISIONED",
                    ));
                };
                if let BillingMode::Provisioned { read: r0, write: w0 } = settings.billing {
                    if r0 == read && w0 == write && input.billing_mode_pay_per_request.is_none() {
                        return Err(EngineError::validation(format!(
                            "The provisioned throughput for the table will not change. The requested value equals the current value. Current ReadCapacityUnits provisioned for the table: {r0}. Requested ReadCapacityUnits: {read}. Current WriteCapacityUnits provisioned for the table: {w0}. Requested WriteCapacityUnits: {write}. Refer to the Amazon DynamoDB Developer Guide for current limits and how to request higher limits."
                        )));
                    }
                    if read > r0 || write > w0 {
                        settings.last_increase = Some(now);
                    }
                    if read < r0 || write < w0 {
                        settings.last_decrease = Some(now);
                        settings.decreases_today += 1;
                    }
                }
                settings.billing = BillingMode::Provisioned { read, write };
            }
            let mode = capacity_mode(settings.billing);
            self.storage.save_table_meta(&table.meta_with(settings.clone()))?;
            *guard = settings;
            drop(guard);
            if let Some(model) = table.capacity.lock().as_mut() {
                model.set_mode(mode, now);
            }
        }
        Ok(table.describe("UPDATING"))
    }
}

/// A table id shaped like a UUID, derived from the name, the creation time
/// and a counter with xxh3-128 (no randomness needed: it only has to be
/// unique here).
fn table_id(name: &str, now: Millis, counter: u64) -> String {
    let mut bytes = Vec::with_capacity(name.len() + 16);
    bytes.extend_from_slice(name.as_bytes());
    bytes.extend_from_slice(&now.0.to_le_bytes());
    bytes.extend_from_slice(&counter.to_le_bytes());
    let s = format!("{:032x}", xxhash_rust::xxh3::xxh3_128(&bytes));
    format!("{}-{}-{}-{}-{}", &s[0..8], &s[8..12], &s[12..16], &s[16..20], &s[20..32])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_ids_are_uuid_shaped_and_differ_by_name_time_and_counter() {
        let id = table_id("t", Millis(1), 0);
        let parts: Vec<usize> = id.split('-').map(str::len).collect();
        assert_eq!(parts, [8, 4, 4, 4, 12]);
        assert!(id.chars().all(|c| c == '-' || c.is_ascii_hexdigit()));
        assert_eq!(id, table_id("t", Millis(1), 0));
        assert_ne!(id, table_id("u", Millis(1), 0));
        assert_ne!(id, table_id("t", Millis(2), 0));
        assert_ne!(id, table_id("t", Millis(1), 1));
    }
}
