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
    IndexDef, IndexKind, IndexProjection, IndexSchema, MAX_GLOBAL_INDEXES, MAX_KEY_COMPONENTS, MAX_LOCAL_INDEXES,
    MAX_PROJECTED_ATTRIBUTES,
};
use crate::store::TableMeta;
use crate::table::{warm_floor, KeyAttr, KeySchema, Table, TableClassSetting, TableData, TableSettings};
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
        // The key schema's shape first, then its definitions (DynamoDB's
        // order and texts: ack-api-quirks DDB-TABLE-042, -123, -127, live
        // 2026-10).
        if input.key_schema.first().map(|(_, r)| *r) != Some(KeyRole::Hash) {
            return Err(EngineError::validation(
                "Invalid KeySchema: The first KeySchemaElement is not a HASH key type",
            ));
        }
        if input.key_schema.get(1).is_some_and(|(_, r)| *r != KeyRole::Range) {
            return Err(EngineError::validation(
                "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type",
            ));
        }
        if let [(h, _), (r, _)] = input.key_schema.as_slice() {
            if h == r {
                return Err(EngineError::validation(
                    "Both the Hash Key and the Range Key element in the KeySchema have the same name",
                ));
            }
        }
        let key_names: Vec<&str> = input.key_schema.iter().map(|(n, _)| n.as_str()).collect();
        let def_names: Vec<&str> = input.attribute_definitions.iter().map(|(n, _)| n.as_str()).collect();
        let attr = |name: &str| -> Result<KeyAttr, EngineError> {
            match defs.get(name) {
                Some(ty) => Ok(KeyAttr { name: name.to_string(), ty: *ty }),
                None if defs.is_empty() => {
                    Err(EngineError::validation("Invalid KeySchema: Some index key attribute have no definition"))
                }
                None => Err(invalid(format!(
                    "Some index key attributes are not defined in AttributeDefinitions. Keys: [{}], AttributeDefinitions: [{}]",
                    key_names.join(", "),
                    def_names.join(", ")
                ))),
            }
        };
        let hash = attr(key_names[0])?;
        let range = key_names.get(1).map(|n| attr(n)).transpose()?;
        let key_schema = KeySchema { hash, range };
        // Every definition must be some key's: with indexes, DynamoDB checks
        // this before anything else about them and names what is unused.
        check_index_lists(&input)?;
        let mut used: Vec<&str> = key_names.clone();
        for spec in input.global_indexes.iter().chain(&input.local_indexes).flatten() {
            used.extend(spec.key_schema.iter().map(|(n, _)| n.as_str()));
        }
        let used = java_hash_set_order(&used);
        if def_names.iter().any(|d| !used.contains(d)) {
            let indexes = input.global_indexes.is_some() || input.local_indexes.is_some();
            return Err(invalid(if indexes {
                format!(
                    "Some AttributeDefinitions are not used. AttributeDefinitions: [{}], keys used: [{}]",
                    def_names.join(", "),
                    used.join(", ")
                )
            } else {
                "Number of attributes in KeySchema does not exactly match number of attributes defined in AttributeDefinitions".to_string()
            }));
        }
        let indexes = index_defs(&input, &key_schema, &defs, &def_names, &self.config.region, now)?;
        check_create_limits(&input, &self.config.region)?;
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
                // A member not given starts where the table would anyway.
                warm: input.warm.map(|w| merge_limits(warm_floor(input.billing), w)),
                deletion_protection: input.deletion_protection.unwrap_or(false),
                table_class: input.table_class.map(|class| TableClassSetting { class, updated_at: None }),
                sse_kms_key: input.sse.as_ref().and_then(|spec| self.sse_key_arn(spec)),
                // A policy given with the table has the table's creation
                // as its revision (ack-api-quirks DDB-TABLE-233).
                policies: input
                    .resource_policy
                    .clone()
                    .map(|document| {
                        let slot = crate::policy::PolicySlot { document: Some(document), revision: now.0 };
                        crate::policy::Policies::from([(crate::policy::TABLE_SLOT.to_string(), slot)])
                    })
                    .unwrap_or_default(),
                ..TableSettings::new(input.billing, now)
            },
            created_at: now,
            indexes,
            tags: Vec::new(),
        };
        let mut meta = TableMeta { tags: merged_tags(Vec::new(), &input.tags)?, ..meta };
        // The stream is in the table's first catalog record: a crash or a
        // failed save leaves no table without the stream it was asked with.
        let stream = match stream_view {
            Some(view) => {
                let change = self.prepare_stream_change((&meta.name, &meta.arn()), &[], None, Some(view), now)?;
                meta.settings.stream = Some(change.setting.clone());
                Some(change)
            }
            None => None,
        };
        let store = self.storage.create_table(&meta)?;
        let data = TableData::new(store, (0, 0), &meta.indexes, self.config.capacity.as_ref(), now);
        let table = Arc::new(Table::from_meta(meta, data, self.config.capacity.clone(), now));
        if let Some(change) = stream {
            crate::stream::apply_stream_change(&table, &mut table.data.write(), &change, now);
        }
        tables.insert(input.table_name.clone(), table.clone());
        // DynamoDB answers CreateTable with CREATING; tables here are ready
        // at once, so DescribeTable says ACTIVE from the next call on.
        Ok(table.describe("CREATING", now))
    }

    /// DescribeTable.
    pub fn describe_table(&self, name: &str, now: Millis) -> Result<TableDescription, EngineError> {
        // A restored table shows its RestoreSummary only while CREATING,
        // which here is only RestoreTableFromBackup's own answer
        // (ack-api-quirks DDB-TABLE-216, live 2026-10).
        Ok(self.table_named(name)?.describe("ACTIVE", now))
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
        // Its streams stay readable: moved while no reader can look.
        self.retire_streams(&table, now);
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
}

/// `current` with the parts of `update` that were given.
pub(crate) fn merge_limits<T: Copy>(current: (T, T), update: (Option<T>, Option<T>)) -> (T, T) {
    (update.0.unwrap_or(current.0), update.1.unwrap_or(current.1))
}

/// Tags a resource carries at most (S145). AWS's own `aws:` tags cannot be
/// set through the API (the wire layer refuses such keys).
pub const MAX_TAGS: usize = 50;

/// DynamoDB's answer when a request would leave more than [`MAX_TAGS`] tags,
/// or names more than that many keys to remove (a ValidationException, not
/// a LimitExceededException: ack-api-quirks DDB-TABLE-107 and -110, live
/// 2026-10).
pub const TOO_MANY_TAGS: &str = "Number of Tags exceed the current limit for the provided ResourceArn";

/// `current` with `added` set (re-tagging a key overwrites it), checked
/// against [`MAX_TAGS`] after the merge. The tags themselves were checked
/// by the wire layer.
fn merged_tags(
    mut current: Vec<(String, String)>,
    added: &[(String, String)],
) -> Result<Vec<(String, String)>, EngineError> {
    for (key, value) in added {
        match current.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value.clone(),
            None => current.push((key.clone(), value.clone())),
        }
    }
    if current.len() > MAX_TAGS {
        return Err(EngineError::validation(TOO_MANY_TAGS));
    }
    Ok(current)
}

impl Engine {
    /// The table a tag operation's ResourceArn names (S147, as DynamoDB
    /// answers today: ack-api-quirks DDB-TABLE-011, -070 and -071).
    fn tagged_table(&self, arn: &str) -> Result<Arc<Table>, EngineError> {
        if !arn.starts_with("arn:") {
            return Err(not_an_arn(arn));
        }
        let wrong =
            || EngineError::validation(format!("Invalid TableArn: Invalid ResourceArn provided as input {arn}"));
        let foreign = || invalid(format!("Provided Arn is not a DynamoDB resource arn: {arn}"));
        let parsed = Arn::parse(arn).ok_or_else(wrong)?;
        if parsed.service != "dynamodb" {
            return Err(foreign());
        }
        if parsed.account != self.config.account_id {
            return Err(EngineError::AccessDenied("Access is denied".to_string()));
        }
        if parsed.region != self.config.region {
            return Err(wrong());
        }
        let not_found =
            || EngineError::ResourceNotFound(format!("Requested resource not found: ResourceArn: {arn} not found"));
        let mut segments = parsed.table_path().ok_or_else(wrong)?;
        let name = segments.next().unwrap_or_default();
        match (segments.next(), segments.next()) {
            (None, _) => {}
            // A stream's ARN names its table's tags.
            (Some("stream"), Some(_)) => {}
            // A backup is not a resource the tag operations know.
            (Some("backup"), Some(_)) => return Err(foreign()),
            _ => {
                return Err(invalid(format!(
                    "Invalid resource arn provided, only table or stream is accepted. Provided resource arn: {arn}"
                )))
            }
        }
        self.tables.read().get(name).cloned().ok_or_else(not_found)
    }

    /// TagResource.
    pub fn tag_resource(&self, arn: &str, tags: &[(String, String)]) -> Result<(), EngineError> {
        let table = self.tagged_table(arn)?;
        self.retag(&table, |current| merged_tags(current.to_vec(), tags))
    }

    /// UntagResource: keys the table does not carry are ignored.
    pub fn untag_resource(&self, arn: &str, keys: &[String]) -> Result<(), EngineError> {
        let table = self.tagged_table(arn)?;
        self.retag(&table, |current| Ok(current.iter().filter(|(k, _)| !keys.contains(k)).cloned().collect()))
    }

    /// Replaces `table`'s tags with what `change` makes of them, in the
    /// catalog first.
    fn retag(
        &self,
        table: &Table,
        change: impl FnOnce(&[(String, String)]) -> Result<Vec<(String, String)>, EngineError>,
    ) -> Result<(), EngineError> {
        // Every lock the catalog entry reads from, held to the save (data,
        // settings, then tags: the engine's order), so that no concurrent
        // change of another setting is saved over.
        let data = table.data.read();
        let settings = table.settings.lock();
        let base = table.meta_with(settings.clone(), data.indexes.iter().map(|i| i.def.clone()).collect());
        let mut guard = table.tags.lock();
        let updated = change(&guard)?;
        if updated == *guard {
            return Ok(());
        }
        self.storage.save_table_meta(&TableMeta { tags: updated.clone(), ..base })?;
        *guard = updated;
        Ok(())
    }

    /// ListTagsOfResource: every tag, in one page. DynamoDB answers all of a
    /// table's tags at once (ScyllaDB's Alternator suite, run against
    /// DynamoDB, lists 40 without following NextToken) and ignores a
    /// NextToken it did not issue (ack-api-quirks DDB-TABLE-073).
    pub fn list_tags(&self, arn: &str) -> Result<Vec<(String, String)>, EngineError> {
        let table = self.tagged_table(arn)?;
        let tags = table.tags.lock().clone();
        Ok(tags)
    }
}

/// Ok when DeleteTable may delete `table`: not protected, and no index
/// being built (S42).
fn deletable(table: &Table, now: Millis) -> Result<(), EngineError> {
    if table.settings.lock().deletion_protection {
        return Err(EngineError::validation(DELETION_PROTECTED));
    }
    if table.data.read().indexes.iter().any(|ix| !ix.is_active(now)) {
        return Err(EngineError::ResourceInUse(
            "Attempt to change a resource which is still in use: Cannot delete table while indexes are being created, updated, or deleted.".to_string(),
        ));
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
}

/// A StreamSpecification as the stream to enable (Some view type) or to
/// disable (None), checked with DynamoDB's messages (S100).
pub(crate) fn stream_request(
    (enabled, view): (bool, Option<crate::stream::StreamViewType>),
    creating: bool,
) -> Result<Option<crate::stream::StreamViewType>, EngineError> {
    match (enabled, view) {
        (true, Some(v)) => Ok(Some(v)),
        (true, None) if creating => {
            Err(invalid("Table is being created with a stream enabled, UpdateViewType is required"))
        }
        (true, None) => Err(invalid("If stream is being enabled then UpdateViewType is required")),
        (false, Some(_)) if creating => {
            Err(invalid("Table is being created with a stream disabled, UpdateViewType should not be specified"))
        }
        (false, Some(_)) => Err(invalid("If stream is being disabled, then UpdateViewType must not be specified")),
        (false, None) => Ok(None),
    }
}

/// An ARN's parts, for the operations that take one (each answers a bad
/// one with its own texts).
pub(crate) struct Arn<'a> {
    pub partition: &'a str,
    pub service: &'a str,
    pub region: &'a str,
    pub account: &'a str,
    pub resource: &'a str,
}

impl<'a> Arn<'a> {
    /// The parts of `text`: None unless it starts with `arn:` and has all six.
    pub(crate) fn parse(text: &'a str) -> Option<Arn<'a>> {
        let parts: Vec<&str> = text.strip_prefix("arn:")?.splitn(5, ':').collect();
        let [partition, service, region, account, resource] = parts.as_slice() else { return None };
        Some(Arn { partition, service, region, account, resource })
    }

    /// The segments after `table/` (the table's name, then any sub-resource:
    /// `stream`, a label, ...); None for a resource that is not a table's.
    pub(crate) fn table_path(&self) -> Option<std::str::Split<'a, char>> {
        self.resource.strip_prefix("table/").map(|path| path.split('/'))
    }

    /// The table a plain table ARN names (no index, stream or backup).
    pub(crate) fn table(&self) -> Option<&'a str> {
        self.resource.strip_prefix("table/").filter(|t| !t.is_empty() && !t.contains('/'))
    }
}

/// ValidationException for a ResourceArn that is not an ARN.
pub(crate) fn not_an_arn(text: &str) -> EngineError {
    invalid(format!("ARNs must start with 'arn:': {text}"))
}

pub(crate) fn invalid(message: impl std::fmt::Display) -> EngineError {
    EngineError::validation(format!("One or more parameter values were invalid: {message}"))
}

/// CreateTable's index lists: not empty, not too long.
fn check_index_lists(input: &CreateTableInput) -> Result<(), EngineError> {
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
    Ok(())
}

/// The index definitions of a CreateTable, checked against the table's key
/// and attribute definitions with DynamoDB's messages (S1-S18).
fn index_defs(
    input: &CreateTableInput,
    table: &KeySchema,
    defs: &HashMap<&str, ScalarType>,
    def_order: &[&str],
    region: &str,
    now: Millis,
) -> Result<Vec<IndexDef>, EngineError> {
    let mut out: Vec<IndexDef> = Vec::new();
    for (kind, list) in [(IndexKind::Global, &input.global_indexes), (IndexKind::Local, &input.local_indexes)] {
        for spec in list.iter().flatten() {
            if out.iter().any(|d| d.name == spec.name) {
                return Err(invalid(format!("Duplicate index name: {}", spec.name)));
            }
            let schema = index_schema(kind, spec, table, defs, def_order)?;
            out.push(index_def(kind, spec, schema, input.billing, IndexContext::CreateTable, region, now)?);
        }
    }
    check_projected_total(&out)?;
    Ok(out)
}

/// NonKeyAttributes summed over a table's indexes, each name counted once
/// per index, may not pass 100 (S18): at CreateTable, and again when
/// UpdateTable adds a GSI.
pub(crate) fn check_projected_total<'d>(defs: impl IntoIterator<Item = &'d IndexDef>) -> Result<(), EngineError> {
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
pub(crate) fn index_def(
    kind: IndexKind,
    spec: &IndexSpec,
    schema: IndexSchema,
    billing: BillingMode,
    context: IndexContext,
    region: &str,
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
                return Err(invalid(format!("Duplicate element in NonKeyAttributes: {dup}")));
            }
            IndexProjection::Include(names.clone())
        }
    };
    let throughput = match (kind, billing, spec.throughput) {
        (IndexKind::Local, _, _) => None,
        (IndexKind::Global, BillingMode::PayPerRequest, Some(_)) => {
            return Err(invalid(match context {
                IndexContext::CreateTable => format!(
                    "ProvisionedThroughput should not be specified for index: {} when BillingMode is PAY_PER_REQUEST",
                    spec.name
                ),
                IndexContext::UpdateTable => format!(
                    "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified for index: {} when BillingMode is PAY_PER_REQUEST",
                    spec.name
                ),
            }))
        }
        (IndexKind::Global, BillingMode::PayPerRequest, None) => None,
        (IndexKind::Global, BillingMode::Provisioned { .. }, None) => {
            return Err(invalid(match context {
                IndexContext::CreateTable => format!("ProvisionedThroughput is not specified for index: {}", spec.name),
                IndexContext::UpdateTable => {
                    format!("Both ReadCapacityUnits and WriteCapacityUnits must be specified for index: {}", spec.name)
                }
            }))
        }
        (IndexKind::Global, BillingMode::Provisioned { .. }, Some(t)) => Some(t),
    };
    let (on_demand_max, warm) = match kind {
        IndexKind::Local => (None, None),
        IndexKind::Global => index_limits(spec, throughput, region)?,
    };
    Ok(IndexDef {
        name: spec.name.clone(),
        kind,
        schema,
        projection,
        throughput,
        on_demand_max,
        warm,
        changes: crate::table::ThroughputChanges::default(),
        created_at: now,
        backfilled_at: None,
    })
}

/// A GSI's on-demand maxima and asked-for warm throughput.
type IndexLimits = (Option<(i64, i64)>, Option<(u64, u64)>);

/// A new GSI's OnDemandThroughput and WarmThroughput, checked as a
/// table's: maxima only on demand (`throughput` None), each at least 1 and
/// at most the per-table limit; warm throughput not below what the index
/// starts with (the on-demand initial throughput, or its provisioned units).
fn index_limits(spec: &IndexSpec, throughput: Option<(u64, u64)>, region: &str) -> Result<IndexLimits, EngineError> {
    let billing = match throughput {
        Some((read, write)) => BillingMode::Provisioned { read, write },
        None => BillingMode::PayPerRequest,
    };
    let on_demand = match spec.on_demand.filter(|m| m.0.is_some() || m.1.is_some()) {
        Some(m) => {
            if throughput.is_some() {
                return Err(invalid(format!(
                    "{} for OnDemandThroughput for index: {} cannot be specified when table BillingMode is PROVISIONED.",
                    on_demand_member(m),
                    spec.name
                )));
            }
            check_on_demand(m, false, &index_subject(&spec.name), region)?;
            Some(merge_limits((-1, -1), m))
        }
        None => None,
    };
    let warm = match spec.warm.filter(|w| w.0.is_some() || w.1.is_some()) {
        Some(w) => {
            check_initial_warm(w, billing, &format!("index {}", spec.name))?;
            Some(merge_limits(warm_floor(billing), w))
        }
        None => None,
    };
    Ok((on_demand, warm))
}

/// An index's key schema, checked: defined attributes, HASH before RANGE,
/// one of each for LSIs (sharing the table's HASH) and up to four of each
/// for GSIs.
pub(crate) fn index_schema(
    kind: IndexKind,
    spec: &IndexSpec,
    table: &KeySchema,
    defs: &HashMap<&str, ScalarType>,
    def_order: &[&str],
) -> Result<IndexSchema, EngineError> {
    // The shape of the key schema first, in DynamoDB's order and words
    // (ack-api-quirks DDB-TABLE-123, -124, live 2026-10).
    if spec.key_schema.first().map(|(_, r)| *r) != Some(KeyRole::Hash) {
        return Err(EngineError::validation("Invalid KeySchema: The first KeySchemaElement is not a HASH key type"));
    }
    let hashes = spec.key_schema.iter().filter(|(_, r)| *r == KeyRole::Hash).count();
    let ranges = spec.key_schema.len() - hashes;
    for (count, role) in [(hashes, "HASH"), (ranges, "RANGE")] {
        if kind == IndexKind::Global && count > MAX_KEY_COMPONENTS {
            return Err(invalid(format!("The KeySchema exceeds the maximum allowed number of {role} key attributes")));
        }
    }
    if spec.key_schema.iter().skip_while(|(_, r)| *r == KeyRole::Hash).any(|(_, r)| *r == KeyRole::Hash) {
        return Err(invalid("All HASH key attributes must precede RANGE key attributes in the KeySchema"));
    }
    let names: Vec<&str> = spec.key_schema.iter().map(|(n, _)| n.as_str()).collect();
    if names.iter().enumerate().any(|(i, n)| names[..i].contains(n)) {
        return Err(EngineError::validation("The KeySchema contains multiple key attributes with the same name"));
    }
    if names.iter().any(|n| !defs.contains_key(*n)) {
        return Err(invalid(format!(
            "Some index key attributes are not defined in AttributeDefinitions. Keys: [{}], AttributeDefinitions: [{}]",
            names.join(", "),
            def_order.join(", ")
        )));
    }
    let mut schema = IndexSchema { hash: Vec::new(), range: Vec::new() };
    for (name, role) in &spec.key_schema {
        let attr = KeyAttr { name: name.clone(), ty: defs[name.as_str()] };
        match role {
            KeyRole::Hash => schema.hash.push(attr),
            KeyRole::Range => schema.range.push(attr),
        }
    }
    if kind == IndexKind::Local {
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
    Ok(schema)
}

/// Which request an index definition comes from: UpdateTable words some
/// throughput refusals differently (ack-api-quirks DDB-TABLE-152, -442).
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum IndexContext {
    CreateTable,
    UpdateTable,
}

/// `names` (first occurrence of each) in the order a Java `HashSet<String>`
/// iterates them, which is the order DynamoDB prints such a set in its
/// messages ("keys used: [a, sk, pk]" for pk, sk and a: ack-api-quirks
/// DDB-TABLE-127): by bucket of `String.hashCode` (spread as `h ^ h >>> 16`)
/// in a table of 16 buckets doubled while more than three quarters full,
/// and by insertion within a bucket.
fn java_hash_set_order<'a>(names: &[&'a str]) -> Vec<&'a str> {
    let mut unique: Vec<&'a str> = Vec::with_capacity(names.len());
    for n in names {
        if !unique.contains(n) {
            unique.push(n);
        }
    }
    let mut buckets = 16usize;
    while unique.len() * 4 > buckets * 3 {
        buckets *= 2;
    }
    let bucket = |s: &str| {
        let h = s.encode_utf16().fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c))) as u32;
        ((h ^ (h >> 16)) as usize) & (buckets - 1)
    };
    // A stable sort keeps insertion order within a bucket.
    unique.sort_by_key(|s| bucket(s));
    unique
}

/// Most read or write capacity units one table or index may provision
/// (DescribeLimits' TableMaxReadCapacityUnits), and most on-demand request
/// units a second it may be capped at.
pub const MAX_TABLE_CAPACITY_UNITS: u64 = 40_000;

/// DynamoDB's refusal of provisioned units above [`MAX_TABLE_CAPACITY_UNITS`]
/// (a LimitExceededException; ack-api-quirks DDB-TABLE-170 and -393).
pub(crate) fn check_provisioned_limit(
    read: u64,
    write: u64,
    index: Option<&str>,
    region: &str,
) -> Result<(), EngineError> {
    for (unit, asked) in [("ReadCapacityUnits", read), ("WriteCapacityUnits", write)] {
        if asked > MAX_TABLE_CAPACITY_UNITS {
            let what = match index {
                Some(name) => format!("{unit} for index {name}, {asked}, is above the per index maximum"),
                None => format!("{unit}, {asked}, is above the per table maximum"),
            };
            return Err(EngineError::LimitExceeded(format!(
                "The requested {what} for the account in {region}. Per table maximum: {MAX_TABLE_CAPACITY_UNITS}. Refer to the Amazon DynamoDB Developer Guide for current limits and how to request higher limits."
            )));
        }
    }
    Ok(())
}

/// OnDemandThroughput's members, checked: at least 1 (-1, no maximum, only
/// where `clearing` is allowed: UpdateTable), at most
/// [`MAX_TABLE_CAPACITY_UNITS`] (ack-api-quirks DDB-TABLE-039, -051, -393).
/// `subject` is what the texts name: `table`, or a GSI's `index : <name>`
/// (DDB-TABLE-128, -154, -442).
pub(crate) fn check_on_demand(
    on_demand: (Option<i64>, Option<i64>),
    clearing: bool,
    subject: &str,
    region: &str,
) -> Result<(), EngineError> {
    for (unit, asked) in [("Read", on_demand.0), ("Write", on_demand.1)] {
        let Some(asked) = asked else { continue };
        if asked < 1 && !(clearing && asked == -1) {
            return Err(invalid(format!(
                "Requested Max{unit}RequestUnits for OnDemandThroughput for {subject} is outside of valid range"
            )));
        }
        if asked > MAX_TABLE_CAPACITY_UNITS as i64 {
            return Err(EngineError::LimitExceeded(format!(
                "Subscriber limit exceeded: Requested Max{unit}RequestUnits for OnDemandThroughput for {subject} exceeds TableMax{unit}CapacityUnits of the account in region {region}"
            )));
        }
    }
    Ok(())
}

/// What OnDemandThroughput texts call a GSI.
pub(crate) fn index_subject(name: &str) -> String {
    format!("index : {name}")
}

/// The member an OnDemandThroughput refusal names: the read one if given.
pub(crate) fn on_demand_member(on_demand: (Option<i64>, Option<i64>)) -> &'static str {
    if on_demand.0.is_some() || on_demand.1.is_none() {
        "MaxReadRequestUnits"
    } else {
        "MaxWriteRequestUnits"
    }
}

/// WarmThroughput at CreateTable may not be below what the table (or the
/// GSI: `subject` is `index <name>`) starts with: the on-demand initial
/// throughput, or the provisioned units (ack-api-quirks DDB-TABLE-039, -128).
fn check_initial_warm(
    warm: (Option<u64>, Option<u64>),
    billing: BillingMode,
    subject: &str,
) -> Result<(), EngineError> {
    let floor = warm_floor(billing);
    for (unit, asked, floor, units) in [
        ("ReadUnitsPerSecond", warm.0, floor.0, "ReadCapacityUnits"),
        ("WriteUnitsPerSecond", warm.1, floor.1, "WriteCapacityUnits"),
    ] {
        if asked.is_none_or(|asked| asked >= floor) {
            continue;
        }
        return Err(invalid(match billing {
            BillingMode::PayPerRequest => format!(
                "Requested {unit} for WarmThroughput for {subject} is lower than initial throughput for OnDemand. See: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/on-demand-capacity-mode.html#on-demand-capacity-mode-initial"
            ),
            BillingMode::Provisioned { .. } => {
                format!("Requested {unit} for WarmThroughput for {subject} is lower than {units} of ProvisionedThroughput")
            }
        }));
    }
    Ok(())
}

/// CreateTable's throughput settings, checked.
fn check_create_limits(input: &CreateTableInput, region: &str) -> Result<(), EngineError> {
    if let BillingMode::Provisioned { read, write } = input.billing {
        check_provisioned_limit(read, write, None, region)?;
    }
    for spec in input.global_indexes.iter().flatten() {
        if let Some((read, write)) = spec.throughput {
            check_provisioned_limit(read, write, Some(&spec.name), region)?;
        }
    }
    if let Some(m) = input.on_demand.filter(|m| m.0.is_some() || m.1.is_some()) {
        if matches!(input.billing, BillingMode::Provisioned { .. }) {
            return Err(invalid(format!(
                "{} for OnDemandThroughput cannot be specified when table BillingMode is PROVISIONED.",
                on_demand_member(m)
            )));
        }
        check_on_demand(m, false, "table", region)?;
    }
    if let Some(w) = input.warm {
        check_initial_warm(w, input.billing, "table")?;
    }
    Ok(())
}

/// A table id shaped like a UUID, derived from the name, the creation time
/// and a counter with xxh3-128 (no randomness needed: it only has to be
/// unique here).
fn table_id(name: &str, now: Millis, counter: u64) -> String {
    let mut bytes = Vec::with_capacity(name.len() + 16);
    bytes.extend_from_slice(name.as_bytes());
    bytes.extend_from_slice(&now.0.to_le_bytes());
    bytes.extend_from_slice(&counter.to_le_bytes());
    // Shaped as a random (version 4, RFC 4122 variant) UUID, as DynamoDB's
    // TableIds are (ack-api-quirks DDB-TABLE-013): a client may check.
    let h = xxhash_rust::xxh3::xxh3_128(&bytes);
    let h = (h & !(0xf << 76) & !(0x3 << 62)) | (0x4 << 76) | (0x2 << 62);
    let s = format!("{h:032x}");
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
        // Version 4, variant 10xx.
        assert_eq!(&id[14..15], "4");
        assert!("89ab".contains(&id[19..20]), "{id}");
        assert_eq!(id, table_id("t", Millis(1), 0));
        assert_ne!(id, table_id("u", Millis(1), 0));
        assert_ne!(id, table_id("t", Millis(2), 0));
        assert_ne!(id, table_id("t", Millis(1), 1));
    }
}
