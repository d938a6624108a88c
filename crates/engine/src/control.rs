//! The control plane: CreateTable, DescribeTable, DeleteTable, ListTables,
//! UpdateTable. Tables are recorded in the storage's catalog.

use std::collections::HashMap;
use std::ops::Bound;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use dynaburst_model::ScalarType;

use crate::engine::{Engine, MAX_TABLES};
use crate::error::EngineError;
use crate::index::{
    self, IndexData, IndexDef, IndexKind, IndexProjection, IndexSchema, MAX_GLOBAL_INDEXES, MAX_KEY_COMPONENTS,
    MAX_LOCAL_INDEXES, MAX_PROJECTED_ATTRIBUTES,
};
use crate::store::TableMeta;
use crate::table::{
    apply_limits, capacity_mode, index_capacity, KeyAttr, KeySchema, Table, TableClassSetting, TableData, TableSettings,
};
use crate::types::*;

impl Engine {
    /// CreateTable.
    pub fn create_table(&self, input: CreateTableInput, now: Millis) -> Result<TableDescription, EngineError> {
        let mut defs: HashMap<&str, _> = HashMap::with_capacity(input.attribute_definitions.len());
        for (n, t) in &input.attribute_definitions {
            if defs.insert(n.as_str(), *t).is_some() {
                return Err(EngineError::validation(format!("Attribute Name is duplicated: {n}")));
            }
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
        let key_schema = KeySchema { hash, range };
        let indexes = index_defs(&input, &key_schema, &defs, now)?;
        let mut used: Vec<&str> = key_schema.pairs_names();
        for ix in &indexes {
            used.extend(ix.schema.attrs().map(|a| a.name.as_str()));
        }
        used.sort_unstable();
        used.dedup();
        if input.attribute_definitions.len() != used.len() {
            return Err(EngineError::validation(
                "One or more parameter values were invalid: Number of attributes in KeySchema does not exactly match number of attributes defined in AttributeDefinitions"
            ));
        }
        // Every check that can fail comes before the catalog is touched.
        let stream_view = match input.stream {
            Some(spec) => stream_request(spec, true)?,
            None => None,
        };
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
            key_schema,
            attribute_definitions: input.attribute_definitions.clone(),
            settings: TableSettings {
                on_demand_max: input.on_demand.map(|m| merge_limits((-1, -1), m)),
                warm: input.warm.map(|w| merge_limits((0, 0), w)),
                deletion_protection: input.deletion_protection.unwrap_or(false),
                table_class: input.table_class.map(|class| TableClassSetting { class, updated_at: None }),
                sse_kms_key: input.sse.as_ref().and_then(|spec| self.sse_key_arn(spec)),
                ..TableSettings::new(input.billing, now)
            },
            created_at: now,
            indexes,
            tags: Vec::new(),
        };
        let meta = TableMeta { tags: checked_tags(&meta.arn(), Vec::new(), &input.tags)?, ..meta };
        let store = self.storage.create_table(&meta)?;
        let data = TableData::new(store, (0, 0), &meta.indexes, self.config.capacity.as_ref(), now);
        let table = Table::from_meta(meta, data, self.config.capacity.clone(), now);
        let table = Arc::new(table);
        if let Some(view) = stream_view {
            self.set_stream(&table, Some(view), now)?;
        }
        tables.insert(input.table_name.clone(), table.clone());
        // DynamoDB answers CreateTable with CREATING; tables here are ready
        // at once, so DescribeTable says ACTIVE from the next call on.
        Ok(table.describe("CREATING", now))
    }

    /// DescribeTable.
    pub fn describe_table(&self, name: &str, now: Millis) -> Result<TableDescription, EngineError> {
        let table = self.table_named(name)?;
        let restore = self.restore_summary(&table);
        Ok(TableDescription { restore, ..table.describe("ACTIVE", now) })
    }

    /// DeleteTable.
    pub fn delete_table(&self, name: &str, now: Millis) -> Result<TableDescription, EngineError> {
        let name = self.resolve_name(name)?;
        let candidate =
            self.tables.read().get(name).cloned().ok_or_else(|| EngineError::table_not_found_named(name))?;
        deletable(&candidate, now)?;
        // With point-in-time recovery on, DynamoDB keeps a SYSTEM backup of
        // the table as it was just before the deletion. It copies every
        // item, so it is taken without the table map's lock, which every
        // request takes to find its table.
        let system_backup = self.deleted_table_backup(&candidate, now)?;
        let discard = |backup: &Option<crate::backup::Backup>| {
            if let Some(backup) = backup {
                self.discard_backup(backup);
            }
        };
        let mut tables = self.tables.write();
        // Meanwhile the table may have gone (or come back as another), or
        // been protected.
        let checked = match tables.get(name) {
            Some(table) if Arc::ptr_eq(table, &candidate) => deletable(table, now),
            _ => Err(EngineError::table_not_found_named(name)),
        };
        if let Err(e) = checked {
            drop(tables);
            discard(&system_backup);
            return Err(e);
        }
        // The store goes first: if dropping it fails, the table stays.
        if let Err(e) = self.storage.drop_table(name) {
            drop(tables);
            discard(&system_backup);
            return Err(e.into());
        }
        let table = tables.remove(name).ok_or_else(|| EngineError::table_not_found_named(name))?;
        drop(tables);
        if let Some(memory) = &self.config.memory {
            memory.adjust(-(crate::engine::memory_held(&table.data.read()) as i64));
        }
        self.forget_table_notes(&table.name);
        Ok(table.describe("DELETING", now))
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
        let name = self.resolve_name(&input.table_name)?;
        let table = self.tables.read().get(name).cloned().ok_or_else(|| EngineError::table_not_found_named(name))?;
        // Checks that need no table state come before any change (M1).
        only_operation(&input)?;
        let sse_key = input.sse.as_ref().map(|spec| self.sse_key_arn(spec));
        // So do those that read the settings but change nothing.
        check_settings_change(&table, &input, sse_key.as_ref())?;
        let stream = input.stream.map(|spec| stream_request(spec, false)).transpose()?;
        if input.billing_mode_pay_per_request == Some(true) && input.throughput.is_some() {
            return Err(EngineError::validation(
                "One or more parameter values were invalid: Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST",
            ));
        }
        // The billing mode the index updates are checked against: the one
        // this request switches to, if it switches.
        let current = table.settings.lock().billing;
        let billing = match (input.billing_mode_pay_per_request, input.throughput) {
            (Some(true), _) => BillingMode::PayPerRequest,
            (Some(false), Some((read, write))) => BillingMode::Provisioned { read, write },
            _ => current,
        };
        // A switch to PROVISIONED must give every GSI its own throughput,
        // already set or in this request's index updates.
        if matches!(current, BillingMode::PayPerRequest) && input.billing_mode_pay_per_request == Some(false) {
            let updated = |name: &str| {
                input
                    .index_updates
                    .iter()
                    .flatten()
                    .any(|u| matches!(u, IndexUpdate::Update { name: n, .. } if n == name))
            };
            let defs = table.index_defs();
            let missing =
                defs.iter().find(|d| d.kind == IndexKind::Global && d.throughput.is_none() && !updated(&d.name));
            if let Some(ix) = missing {
                return Err(invalid(format!("ProvisionedThroughput is not specified for index: {}", ix.name)));
            }
        }
        let mut index_changed = match &input.index_updates {
            Some(updates) => {
                self.update_indexes(&table, updates, &input.attribute_definitions, billing, now)?;
                true
            }
            None => false,
        };
        if let Some(view) = stream {
            self.set_stream(&table, view, now)?;
            index_changed = true;
        }
        // Read before the settings lock: the data lock comes first.
        let index_defs = table.index_defs();
        // Settings that change nothing else, saved with whatever else this
        // request changes.
        let plain = input.deletion_protection.is_some() || input.table_class.is_some() || input.sse.is_some();
        {
            // Changed on a copy, which the catalog stores before the table
            // takes it.
            let mut guard = table.settings.lock();
            let mut settings = guard.clone();
            if let Some(on) = input.deletion_protection {
                settings.deletion_protection = on;
            }
            if let Some(class) = input.table_class {
                settings.table_class = Some(TableClassSetting { class, updated_at: Some(now) });
            }
            if let Some(key) = sse_key {
                settings.sse_kms_key = key;
            }
            let currently_ppr = matches!(settings.billing, BillingMode::PayPerRequest);
            let want_ppr = input.billing_mode_pay_per_request.unwrap_or(currently_ppr);
            if input.billing_mode_pay_per_request.is_none() && input.throughput.is_none() {
                if input.on_demand.is_some() || input.warm.is_some() || plain {
                    if let Some(m) = input.on_demand {
                        settings.on_demand_max = Some(merge_limits(settings.on_demand_max.unwrap_or((-1, -1)), m));
                    }
                    if let Some(w) = input.warm {
                        settings.warm = Some(merge_limits(settings.warm.unwrap_or((0, 0)), w));
                    }
                    self.storage.save_table_meta(&table.meta_with(settings.clone(), index_defs.clone()))?;
                    *guard = settings.clone();
                    drop(guard);
                    if let Some(model) = table.capacity.lock().as_mut() {
                        apply_limits(model, &settings, now);
                    }
                    return Ok(table.describe("UPDATING", now));
                }
                drop(guard);
                if index_changed {
                    return Ok(table.describe("UPDATING", now));
                }
                return Err(EngineError::validation(nothing_to_update(false)));
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
                // The GSIs follow the table onto on-demand capacity.
                let defs: Vec<IndexDef> =
                    index_defs.iter().cloned().map(|d| IndexDef { throughput: None, ..d }).collect();
                self.storage.save_table_meta(&table.meta_with(settings.clone(), defs))?;
                *guard = settings;
                drop(guard);
                if let Some(model) = table.capacity.lock().as_mut() {
                    model.set_mode(mode, now);
                }
                if !currently_ppr {
                    let mut data = table.data.write();
                    for ix in data.indexes.iter_mut().filter(|ix| ix.def.kind == IndexKind::Global) {
                        ix.def.throughput = None;
                        if let Some(model) = ix.capacity.lock().as_mut() {
                            model.set_mode(dynaburst_capacity::Mode::OnDemand, now);
                        }
                    }
                }
                return Ok(table.describe("UPDATING", now));
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
            self.storage.save_table_meta(&table.meta_with(settings.clone(), index_defs.clone()))?;
            *guard = settings;
            drop(guard);
            if let Some(model) = table.capacity.lock().as_mut() {
                model.set_mode(mode, now);
            }
        }
        Ok(table.describe("UPDATING", now))
    }
}

/// `current` with the parts of `update` that were given.
fn merge_limits<T: Copy>(current: (T, T), update: (Option<T>, Option<T>)) -> (T, T) {
    (update.0.unwrap_or(current.0), update.1.unwrap_or(current.1))
}

/// User tags a resource carries at most (S145).
pub const MAX_TAGS: usize = 50;

/// `current` with `added` set (re-tagging a key overwrites it), checked
/// (S145, S146).
fn checked_tags(
    arn: &str,
    mut current: Vec<(String, String)>,
    added: &[(String, String)],
) -> Result<Vec<(String, String)>, EngineError> {
    let allowed = |s: &str| s.chars().all(|c| c.is_alphanumeric() || c.is_whitespace() || "+-=._:/@".contains(c));
    for (key, value) in added {
        if !allowed(key) || !allowed(value) {
            return Err(invalid(format!("Invalid tag: the allowed characters are letters, white space, numbers and + - = . _ : / @ (resource {arn})")));
        }
        match current.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value.clone(),
            None => current.push((key.clone(), value.clone())),
        }
    }
    let user = current.iter().filter(|(k, _)| !k.starts_with("aws:")).count();
    if user > MAX_TAGS {
        return Err(invalid(format!("The number of tags on a resource exceeds the limit of {MAX_TAGS}")));
    }
    Ok(current)
}

impl Engine {
    /// The table a resource ARN names, for the tag operations (S147).
    fn tagged_table(&self, arn: &str, operation: &str, not_found: String) -> Result<Arc<Table>, EngineError> {
        let denied = || {
            EngineError::AccessDenied(format!(
                "User: arn:aws:iam::{}:root is not authorized to perform: dynamodb:{operation} on resource: {arn}",
                self.config.account_id
            ))
        };
        if !arn.starts_with("arn:") || arn.split(':').nth(4).is_some_and(|account| account != self.config.account_id) {
            return Err(denied());
        }
        let name = self.resolve_name(arn)?;
        self.tables.read().get(name).cloned().ok_or(EngineError::ResourceNotFound(not_found))
    }

    /// TagResource.
    pub fn tag_resource(&self, arn: &str, tags: &[(String, String)]) -> Result<(), EngineError> {
        let not_found = format!("Requested resource not found: ResourcArn: {arn} not found");
        let table = self.tagged_table(arn, "TagResource", not_found)?;
        self.retag(&table, |current| checked_tags(arn, current.to_vec(), tags))
    }

    /// UntagResource.
    pub fn untag_resource(&self, arn: &str, keys: &[String]) -> Result<(), EngineError> {
        let table = self.tagged_table(arn, "UntagResource", "Requested resource not found".to_string())?;
        self.retag(&table, |current| Ok(current.iter().filter(|(k, _)| !keys.contains(k)).cloned().collect()))
    }

    /// Replaces `table`'s tags with what `change` makes of them, in the
    /// catalog first.
    fn retag(
        &self,
        table: &Table,
        change: impl FnOnce(&[(String, String)]) -> Result<Vec<(String, String)>, EngineError>,
    ) -> Result<(), EngineError> {
        let settings = table.settings.lock().clone();
        let base = table.meta_with(settings, table.index_defs());
        let mut guard = table.tags.lock();
        let updated = change(&guard)?;
        self.storage.save_table_meta(&TableMeta { tags: updated.clone(), ..base })?;
        *guard = updated;
        Ok(())
    }

    /// ListTagsOfResource: a page of tags after position `start` (the
    /// NextToken, a decimal offset), and the next page's token.
    pub fn list_tags(&self, arn: &str, start: Option<&str>) -> Result<TagPage, EngineError> {
        let table = self.tagged_table(
            arn,
            "ListTagsOfResource",
            format!("Requested resource not found: ResourcArn: {arn} not found"),
        )?;
        let tags = table.tags.lock().clone();
        let offset = match start {
            None => 0,
            Some(t) => t.parse::<usize>().map_err(|_| EngineError::validation(format!("Invalid NextToken: {t}")))?,
        };
        let page: Vec<(String, String)> = tags.iter().skip(offset).take(TAGS_PAGE).cloned().collect();
        let next = (offset + page.len() < tags.len()).then(|| (offset + page.len()).to_string());
        Ok((page, next))
    }
}

/// One ListTagsOfResource page: (key, value) pairs and the next page's token.
pub type TagPage = (Vec<(String, String)>, Option<String>);

/// Tags one ListTagsOfResource page holds: all a table can have. DynamoDB
/// answers 30 and 40 tags in one page (ScyllaDB's Alternator suite, run
/// against DynamoDB: test_tag.py lists them without following NextToken).
const TAGS_PAGE: usize = MAX_TAGS;

/// What UpdateTable may change, as its answer to a request that changes
/// nothing lists them (S39 as DynamoDB words it in 2026: a catalogue of its
/// messages captured from the live service, ack-api-quirks DDB-TABLE-442).
const UPDATABLE: [&str; 13] = [
    "ProvisionedThroughput",
    "BillingMode",
    "UpdateStreamEnabled",
    "GlobalSecondaryIndexUpdates",
    "SSESpecification",
    "ReplicaUpdates",
    "MultiAccountReplicaReady",
    "ReplicaTransitRoleArn",
    "MultiRegionConsistency",
    "DeletionProtectionEnabled",
    "OnDemandThroughput",
    "WarmThroughput",
    "TableClass",
];

/// UpdateTable's answer when it was asked to change nothing: the members
/// it could have changed, but those the request holds (an empty
/// GlobalSecondaryIndexUpdates: `index_updates_given`).
fn nothing_to_update(index_updates_given: bool) -> String {
    let names: Vec<&str> =
        UPDATABLE.into_iter().filter(|n| !(index_updates_given && *n == "GlobalSecondaryIndexUpdates")).collect();
    match names.split_last() {
        Some((last, rest)) => format!("At least one of {} or {last} is required", rest.join(", ")),
        None => String::new(),
    }
}

/// UpdateTable's refusals of a change to what the table's settings already
/// are: the encryption it has, and a warm throughput below what
/// DescribeTable shows (which a request may raise but not lower).
fn check_settings_change(
    table: &Table,
    input: &UpdateTableInput,
    sse_key: Option<&Option<String>>,
) -> Result<(), EngineError> {
    // The capacity model's lock is not held with the settings' one.
    let shown_warm = table.capacity.lock().as_ref().map(|m| {
        let (read, write) = m.warm_throughput();
        (read as u64, write as u64)
    });
    let settings = table.settings.lock().clone();
    match (sse_key, &settings.sse_kms_key) {
        (Some(None), None) => return Err(invalid("Table is already encrypted by default")),
        (Some(Some(new)), Some(old)) if new == old => {
            return Err(invalid(
                "Table is already encrypted with given KMSMasterKeyId. Use KMSMasterKeyId parameter if you want to change Master Key",
            ))
        }
        _ => {}
    }
    if let Some((read, write)) = input.warm {
        let current = shown_warm.or(settings.warm).unwrap_or((0, 0));
        for (unit, asked, shown) in [("ReadUnitsPerSecond", read, current.0), ("WriteUnitsPerSecond", write, current.1)]
        {
            if asked.is_some_and(|asked| asked < shown) {
                return Err(invalid(format!(
                    "Requested {unit} for WarmThroughput for table is lower than current WarmThroughput, decreasing WarmThroughput is not supported"
                )));
            }
        }
    }
    Ok(())
}

/// DynamoDB changes encryption, the table class and deletion protection
/// only in an UpdateTable that changes nothing else.
fn only_operation(input: &UpdateTableInput) -> Result<(), EngineError> {
    let parts = [
        input.billing_mode_pay_per_request.is_some(),
        input.throughput.is_some(),
        input.index_updates.is_some(),
        input.stream.is_some(),
        input.on_demand.is_some(),
        input.warm.is_some(),
        input.sse.is_some(),
        input.table_class.is_some(),
        input.deletion_protection.is_some(),
    ];
    let alone = |given: bool| !given || parts.iter().filter(|p| **p).count() == 1;
    for (given, what) in [
        (input.sse.is_some(), "Server-Side Encryption"),
        (input.table_class.is_some(), "TableClass"),
        (input.deletion_protection.is_some(), "DeletionProtection"),
    ] {
        if !alone(given) {
            return Err(invalid(format!("{what} modification must be the only operation in the request")));
        }
    }
    Ok(())
}

/// Ok when DeleteTable may delete `table`: not protected, and no index
/// being built (S42).
fn deletable(table: &Table, now: Millis) -> Result<(), EngineError> {
    if table.settings.lock().deletion_protection {
        return Err(EngineError::validation(DELETION_PROTECTED));
    }
    if table.data.read().indexes.iter().any(|ix| !ix.is_active(now)) {
        return Err(EngineError::ResourceInUse(format!(
            "Attempt to change a resource which is still in use: Table is being updated: {}",
            table.name
        )));
    }
    Ok(())
}

/// DeleteTable of a table with DeletionProtectionEnabled.
const DELETION_PROTECTED: &str =
    "Resource cannot be deleted as it is currently protected against deletion. Disable deletion protection first.";

impl Engine {
    /// The KMS key ARN an SSESpecification asks for: None for an AWS owned
    /// key (not enabled); the key named (an ARN as given, a key id as the
    /// ARN of this region and account's key); else the AWS managed key of
    /// DynamoDB (`alias/aws/dynamodb`). KMS answers an alias with the ARN of
    /// the key it names, not the alias's: with no KMS here, each alias of an
    /// account and region names one fixed key id.
    pub(crate) fn sse_key_arn(&self, spec: &crate::types::SseSpec) -> Option<String> {
        if !spec.enabled {
            return None;
        }
        let (region, account) = (&self.config.region, &self.config.account_id);
        let key = |id: &str| format!("arn:aws:kms:{region}:{account}:key/{id}");
        let aliased = |alias: &str| {
            let h = xxhash_rust::xxh3::xxh3_128(format!("{alias} {region} {account}").as_bytes());
            let b = h.to_be_bytes();
            let hex = |r: std::ops::Range<usize>| b[r].iter().map(|x| format!("{x:02x}")).collect::<String>();
            key(&format!("{}-{}-{}-{}-{}", hex(0..4), hex(4..6), hex(6..8), hex(8..10), hex(10..16)))
        };
        Some(match spec.kms_key_id.as_deref() {
            Some(arn) if arn.starts_with("arn:") => arn.to_string(),
            Some(alias) if alias.starts_with("alias/") => aliased(alias),
            Some(id) => key(id),
            None => aliased("alias/aws/dynamodb"),
        })
    }

    /// UpdateTable's GlobalSecondaryIndexUpdates (S37-S42): creates (with
    /// a backfill), throughput updates and deletes of GSIs.
    fn update_indexes(
        &self,
        table: &Table,
        updates: &[IndexUpdate],
        definitions: &[(String, ScalarType)],
        billing: BillingMode,
        now: Millis,
    ) -> Result<(), EngineError> {
        if updates.is_empty() {
            return Err(EngineError::validation(nothing_to_update(true)));
        }
        let online = updates.iter().filter(|u| !matches!(u, IndexUpdate::Update { .. })).count();
        if online > 1 {
            return Err(EngineError::LimitExceeded(
                "Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously per table"
                    .into(),
            ));
        }
        for (i, u) in updates.iter().enumerate() {
            if updates[..i].iter().any(|v| v.index_name() == u.index_name()) {
                return Err(invalid(format!(
                    "Only one global secondary index update per index is allowed simultaneously. Index: {}",
                    u.index_name()
                )));
            }
        }
        let mut data = table.data.write();
        // During a backfill the index being built may be deleted, but no
        // other index added or removed (S42).
        let deletes_busy = |busy: &str| {
            updates.iter().all(|u| {
                matches!(u, IndexUpdate::Delete { name } if name == busy) || matches!(u, IndexUpdate::Update { .. })
            })
        };
        if let Some(busy) = data.indexes.iter().find(|ix| !ix.is_active(now)) {
            if online > 0 && !deletes_busy(&busy.def.name) {
                return Err(EngineError::ResourceInUse(format!(
                    "Attempt to change a resource which is still in use: Index is being updated.  Table: {} Index: {}",
                    table.name, busy.def.name
                )));
            }
        }
        let mut deleted = Vec::new();
        for update in updates {
            match update {
                IndexUpdate::Create(spec) => {
                    if data.index_position(&spec.name).is_some() {
                        return Err(invalid(format!("Index {} already exists", spec.name)));
                    }
                    let globals = data.indexes.iter().filter(|i| i.def.kind == IndexKind::Global).count();
                    if globals >= MAX_GLOBAL_INDEXES {
                        return Err(invalid(format!(
                            "GlobalSecondaryIndex count exceeds the per-table limit of {MAX_GLOBAL_INDEXES}"
                        )));
                    }
                    let defs: HashMap<&str, ScalarType> = definitions.iter().map(|(n, t)| (n.as_str(), *t)).collect();
                    // An attribute keeps the type it has elsewhere (S11).
                    for (name, ty) in definitions {
                        let existing = table.key_schema.pairs_names().contains(&name.as_str()).then(|| {
                            if table.key_schema.hash.name == *name {
                                table.key_schema.hash.ty
                            } else {
                                table.key_schema.range.as_ref().map_or(*ty, |r| r.ty)
                            }
                        });
                        let existing = existing.or_else(|| {
                            data.indexes
                                .iter()
                                .flat_map(|i| i.def.schema.attrs())
                                .find(|a| a.name == *name)
                                .map(|a| a.ty)
                        });
                        if existing.is_some_and(|t| t != *ty) {
                            return Err(invalid(format!(
                                "Attributes cannot be redefined. Please check that your attribute has the same type as previously defined. Existing schema: {name}:{} New schema: {name}:{}",
                                existing.map(|t| t.descriptor()).unwrap_or_default(),
                                ty.descriptor()
                            )));
                        }
                    }
                    let schema = index_schema(IndexKind::Global, spec, &table.key_schema, &defs)?;
                    let mut def = index_def(IndexKind::Global, spec, schema, billing, now)?;
                    check_projected_total(data.indexes.iter().map(|i| &i.def).chain([&def]))?;
                    // The backfill: every item's entry is computed now (no
                    // reader sees them while the index is CREATING); their
                    // index write units are then written in the background,
                    // charged to the index (`IndexData::is_active`), after
                    // at least one allocation step.
                    let allocated = Millis(now.0 + BACKFILL_MIN_MS);
                    def.backfilled_at = Some(allocated);
                    let mut ix = IndexData::new(def.clone(), index_capacity(&def, self.config.capacity.as_ref(), now));
                    let units = crate::write::backfill(
                        &*self.storage,
                        table,
                        &mut data,
                        &mut ix,
                        crate::backup::SNAPSHOT_BATCH_ITEMS,
                        now,
                    )?;
                    *ix.backfill.get_mut() = Some(index::Backfill { remaining: units, last: allocated });
                    data.indexes.push(ix);
                }
                IndexUpdate::Update { name, throughput } => {
                    let position = global_position(&data, name)?;
                    if matches!(billing, BillingMode::PayPerRequest) {
                        return Err(invalid(format!(
                            "ProvisionedThroughput should not be specified for index: {name} when BillingMode is PAY_PER_REQUEST"
                        )));
                    }
                    let ix = &mut data.indexes[position];
                    ix.def.throughput = Some(*throughput);
                    if let Some(model) = ix.capacity.lock().as_mut() {
                        model.set_mode(
                            dynaburst_capacity::Mode::Provisioned {
                                read: throughput.0 as f64,
                                write: throughput.1 as f64,
                            },
                            now,
                        );
                    }
                }
                IndexUpdate::Delete { name } => {
                    let position = global_position(&data, name)?;
                    data.indexes.remove(position);
                    deleted.push(name.clone());
                }
            }
        }
        let defs: Vec<IndexDef> = data.indexes.iter().map(|i| i.def.clone()).collect();
        let settings = table.settings.lock().clone();
        self.storage.save_table_meta(&table.meta_with(settings, defs))?;
        // A deleted index's stored entries go once the catalog no longer
        // names it (a crash between leaves entries no index reads, which
        // the next start-up drops, as it drops those of a backfill a crash
        // cut short).
        for name in deleted {
            self.storage.drop_index(&table.name, &name)?;
        }
        Ok(())
    }
}

/// The position of GSI `name`, for a GlobalSecondaryIndexUpdate's Update
/// or Delete: an LSI of that name is not a GSI (LSIs are never updated or
/// deleted, S15), so it is not found as one.
fn global_position(data: &TableData, name: &str) -> Result<usize, EngineError> {
    data.index_position(name)
        .filter(|&p| data.indexes[p].def.kind == IndexKind::Global)
        .ok_or_else(|| EngineError::ResourceNotFound(format!("Requested resource not found: Index: {name} not found")))
}

/// The shortest a GSI stays CREATING after UpdateTable adds it, in
/// milliseconds: long enough for a client to see the backfill.
const BACKFILL_MIN_MS: u64 = 500;

/// A StreamSpecification as the stream to enable (Some view type) or to
/// disable (None), checked with DynamoDB's messages (S100).
fn stream_request(
    (enabled, view): (bool, Option<crate::stream::StreamViewType>),
    creating: bool,
) -> Result<Option<crate::stream::StreamViewType>, EngineError> {
    match (enabled, view) {
        (true, Some(v)) => Ok(Some(v)),
        (true, None) => Err(invalid("StreamViewType is required when StreamEnabled is true")),
        (false, Some(_)) if creating => {
            Err(invalid("Table is being created with a stream disabled, UpdateViewType should not be specified"))
        }
        (false, Some(_)) => Err(invalid("If stream is being disabled, then UpdateViewType must not be specified")),
        (false, None) => Ok(None),
    }
}

fn invalid(message: impl std::fmt::Display) -> EngineError {
    EngineError::validation(format!("One or more parameter values were invalid: {message}"))
}

/// The index definitions of a CreateTable, checked against the table's key
/// and attribute definitions with DynamoDB's messages (S1-S18).
fn index_defs(
    input: &CreateTableInput,
    table: &KeySchema,
    defs: &HashMap<&str, ScalarType>,
    now: Millis,
) -> Result<Vec<IndexDef>, EngineError> {
    let lists = [
        (IndexKind::Global, &input.global_indexes, "GlobalSecondaryIndexes", MAX_GLOBAL_INDEXES),
        (IndexKind::Local, &input.local_indexes, "LocalSecondaryIndexes", MAX_LOCAL_INDEXES),
    ];
    for (kind, list, member, max) in &lists {
        let Some(list) = list else { continue };
        if list.is_empty() {
            return Err(invalid(format!("List of {member} is empty")));
        }
        if list.len() > *max {
            return Err(invalid(match kind {
                IndexKind::Global => format!("GlobalSecondaryIndex count exceeds the per-table limit of {max}"),
                IndexKind::Local => format!("Number of LocalSecondaryIndexes exceeds per-table limit of {max}"),
            }));
        }
    }
    let mut out: Vec<IndexDef> = Vec::new();
    for (kind, list, _, _) in lists {
        for spec in list.iter().flatten() {
            if out.iter().any(|d| d.name == spec.name) {
                return Err(invalid(format!("Duplicate index name: {}", spec.name)));
            }
            let schema = index_schema(kind, spec, table, defs)?;
            out.push(index_def(kind, spec, schema, input.billing, now)?);
        }
    }
    check_projected_total(&out)?;
    Ok(out)
}

/// NonKeyAttributes summed over a table's indexes, each name counted once
/// per index, may not pass 100 (S18): at CreateTable, and again when
/// UpdateTable adds a GSI.
fn check_projected_total<'d>(defs: impl IntoIterator<Item = &'d IndexDef>) -> Result<(), EngineError> {
    let projected: usize = defs
        .into_iter()
        .map(|d| match &d.projection {
            IndexProjection::Include(names) => names.len(),
            _ => 0,
        })
        .sum();
    if projected > MAX_PROJECTED_ATTRIBUTES {
        return Err(invalid(format!(
            "The sum of NonKeyAttributes across all secondary indexes exceeds the limit of {MAX_PROJECTED_ATTRIBUTES}"
        )));
    }
    Ok(())
}

/// An index's definition from its spec and checked key schema: its
/// projection and throughput, checked (S16-S18).
fn index_def(
    kind: IndexKind,
    spec: &IndexSpec,
    schema: IndexSchema,
    billing: BillingMode,
    now: Millis,
) -> Result<IndexDef, EngineError> {
    let projection = match (spec.projection_type, &spec.non_key_attributes) {
        (None, _) => return Err(invalid("Unknown ProjectionType: null")),
        (Some(ProjectionType::All), None) => IndexProjection::All,
        (Some(ProjectionType::KeysOnly), None) => IndexProjection::KeysOnly,
        (Some(ProjectionType::All), Some(_)) => {
            return Err(invalid("ProjectionType is ALL, but NonKeyAttributes is specified"))
        }
        (Some(ProjectionType::KeysOnly), Some(_)) => {
            return Err(invalid("ProjectionType is KEYS_ONLY, but NonKeyAttributes is specified"))
        }
        (Some(ProjectionType::Include), None) => {
            return Err(invalid("ProjectionType is INCLUDE, but NonKeyAttributes is not specified"))
        }
        (Some(ProjectionType::Include), Some(names)) => {
            let mut seen = std::collections::HashSet::new();
            if let Some(dup) = names.iter().find(|n| !seen.insert(n.as_str())) {
                return Err(invalid(format!("Duplicate attribute in NonKeyAttributes: {dup}")));
            }
            IndexProjection::Include(names.clone())
        }
    };
    let throughput = match (kind, billing, spec.throughput) {
        (IndexKind::Local, _, _) => None,
        (IndexKind::Global, BillingMode::PayPerRequest, Some(_)) => {
            return Err(invalid(format!(
                "ProvisionedThroughput should not be specified for index: {} when BillingMode is PAY_PER_REQUEST",
                spec.name
            )))
        }
        (IndexKind::Global, BillingMode::PayPerRequest, None) => None,
        (IndexKind::Global, BillingMode::Provisioned { .. }, None) => {
            return Err(invalid(format!("ProvisionedThroughput is not specified for index: {}", spec.name)))
        }
        (IndexKind::Global, BillingMode::Provisioned { .. }, Some(t)) => Some(t),
    };
    Ok(IndexDef { name: spec.name.clone(), kind, schema, projection, throughput, created_at: now, backfilled_at: None })
}

/// An index's key schema, checked: defined attributes, HASH before RANGE,
/// one of each for LSIs (sharing the table's HASH) and up to four of each
/// for GSIs.
fn index_schema(
    kind: IndexKind,
    spec: &IndexSpec,
    table: &KeySchema,
    defs: &HashMap<&str, ScalarType>,
) -> Result<IndexSchema, EngineError> {
    let names: Vec<&str> = spec.key_schema.iter().map(|(n, _)| n.as_str()).collect();
    if names.iter().any(|n| !defs.contains_key(*n)) {
        let mut def_names: Vec<&str> = defs.keys().copied().collect();
        def_names.sort_unstable();
        return Err(invalid(format!(
            "Some index key attributes are not defined in AttributeDefinitions. Keys: [{}], AttributeDefinitions: [{}]",
            names.join(", "),
            def_names.join(", ")
        )));
    }
    let mut schema = IndexSchema { hash: Vec::new(), range: Vec::new() };
    for (name, role) in &spec.key_schema {
        // DynamoDB's exact text is not recorded; the suites written against
        // it match "Duplicate" (S20) and "same" / "same name" (alternator's
        // LSI and multi-attribute GSI tests), so this says both.
        if schema.is_key_attribute(name) {
            return Err(invalid(format!(
                "Duplicate key attribute {name} in KeySchema of index: {}: two key attributes have the same name",
                spec.name
            )));
        }
        let attr = KeyAttr { name: name.clone(), ty: defs[name.as_str()] };
        match role {
            KeyRole::Hash if !schema.range.is_empty() => {
                return Err(invalid(format!(
                    "Invalid KeySchema: every HASH key attribute must precede the RANGE key attributes for index: {}",
                    spec.name
                )))
            }
            KeyRole::Hash => schema.hash.push(attr),
            KeyRole::Range => schema.range.push(attr),
        }
    }
    if schema.hash.is_empty() {
        return Err(EngineError::validation("Invalid KeySchema: The first KeySchemaElement is not a HASH key type"));
    }
    match kind {
        IndexKind::Global => {
            if schema.hash.len() > MAX_KEY_COMPONENTS || schema.range.len() > MAX_KEY_COMPONENTS {
                return Err(invalid(format!(
                    "Index KeySchema of index {} has more than {MAX_KEY_COMPONENTS} HASH or {MAX_KEY_COMPONENTS} RANGE key attributes",
                    spec.name
                )));
            }
        }
        IndexKind::Local => {
            if table.range.is_none() {
                return Err(invalid(
                    "Table KeySchema does not have a range key, which is required when specifying a LocalSecondaryIndex",
                ));
            }
            if schema.hash.len() != 1 || schema.range.len() > 1 {
                return Err(invalid(format!(
                    "Index KeySchema for a local secondary index must have exactly two elements, one HASH and one RANGE, for index: {}",
                    spec.name
                )));
            }
            if schema.hash[0].name != table.hash.name {
                return Err(invalid(format!(
                    "Index KeySchema does not have the same leading hash key as table KeySchema for index: {}. index hash key: {}, table hash key: {}",
                    spec.name, schema.hash[0].name, table.hash.name
                )));
            }
            if schema.range.is_empty() {
                return Err(invalid(format!("Index KeySchema does not have a range key for index: {}", spec.name)));
            }
        }
    }
    Ok(schema)
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
