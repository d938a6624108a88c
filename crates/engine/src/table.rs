//! A table: its key schema, settings, statistics and storage.

use dynaburst_capacity::{CapacitySettings, Mode, Op, TableCapacity, Throttle};
use dynaburst_model::{item_size, Item, KeyValue, Millis, ScalarType};
use parking_lot::{Mutex, RwLock};

use crate::error::EngineError;
use crate::index::{IndexData, IndexDef, IndexKind};
use crate::insights::Insights;
use crate::store::{SortSlot, StoreError, StoreKey, TableMeta, TableStore};
use crate::types::{BillingMode, IndexDescription, KeyRole, TableDescription};

/// Largest partition-key value, in bytes.
pub const MAX_PARTITION_KEY_BYTES: usize = 2048;
/// Largest sort-key value, in bytes.
pub const MAX_SORT_KEY_BYTES: usize = 1024;

/// One key attribute: name and scalar type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyAttr {
    pub name: String,
    pub ty: ScalarType,
}

/// A table's primary key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeySchema {
    pub hash: KeyAttr,
    pub range: Option<KeyAttr>,
}

impl KeySchema {
    /// True when `name` is one of the key attributes.
    pub fn is_key_attribute(&self, name: &str) -> bool {
        self.hash.name == name || self.range.as_ref().is_some_and(|r| r.name == name)
    }

    /// The store key of a full item, validating its key attributes with
    /// PutItem's messages.
    pub fn key_of_item(&self, item: &Item) -> Result<StoreKey, EngineError> {
        let hash = item_key_value(item, &self.hash, true)?;
        let range = match &self.range {
            Some(r) => Some(item_key_value(item, r, false)?),
            None => None,
        };
        Ok(StoreKey::new(hash, range))
    }

    /// The store key of a `Key` parameter: exactly the key attributes, of
    /// the right types.
    pub fn key_of_key(&self, key: &Item) -> Result<StoreKey, EngineError> {
        let expected = 1 + usize::from(self.range.is_some());
        if key.len() != expected {
            return Err(schema_mismatch());
        }
        let hash = key_param_value(key, &self.hash, true)?;
        let range = match &self.range {
            Some(r) => Some(key_param_value(key, r, false)?),
            None => None,
        };
        Ok(StoreKey::new(hash, range))
    }

    /// The `Key` item (key attributes only) of a stored item.
    pub fn key_item(&self, item: &Item) -> Item {
        let mut key = Item::new();
        for attr in std::iter::once(&self.hash).chain(self.range.as_ref()) {
            if let Some(v) = item.get(&attr.name) {
                key.insert(attr.name.clone(), v.clone());
            }
        }
        key
    }

    /// The key attribute names, partition key first.
    pub fn pairs_names(&self) -> Vec<&str> {
        std::iter::once(self.hash.name.as_str()).chain(self.range.as_ref().map(|r| r.name.as_str())).collect()
    }

    /// The key schema as (name, role) pairs.
    pub fn pairs(&self) -> Vec<(String, KeyRole)> {
        let mut v = vec![(self.hash.name.clone(), KeyRole::Hash)];
        if let Some(r) = &self.range {
            v.push((r.name.clone(), KeyRole::Range));
        }
        v
    }
}

/// "The provided key element does not match the schema".
pub(crate) fn schema_mismatch() -> EngineError {
    EngineError::validation(SCHEMA_MISMATCH)
}

/// A `Key` parameter that does not match the table's key schema.
pub(crate) const SCHEMA_MISMATCH: &str = "The provided key element does not match the schema";
/// How a wrong-typed key value's message starts.
pub(crate) const KEY_TYPE_MISMATCH: &str = "One or more parameter values were invalid: Type mismatch for key ";

fn check_key_value(attr: &KeyAttr, value: &KeyValue, is_hash: bool) -> Result<(), EngineError> {
    match value {
        KeyValue::S(s) if s.is_empty() => {
            return Err(EngineError::validation(format!(
                "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: {}",
                attr.name
            )))
        }
        KeyValue::B(b) if b.is_empty() => {
            return Err(EngineError::validation(format!(
                "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty binary value. Key: {}",
                attr.name
            )))
        }
        _ => {}
    }
    let size = value.size_bytes();
    if is_hash && size > MAX_PARTITION_KEY_BYTES {
        return Err(EngineError::validation(
            "One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of2048 bytes",
        ));
    }
    if !is_hash && size > MAX_SORT_KEY_BYTES {
        return Err(EngineError::validation(
            "One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of 1024 bytes",
        ));
    }
    Ok(())
}

fn item_key_value(item: &Item, attr: &KeyAttr, is_hash: bool) -> Result<KeyValue, EngineError> {
    let Some(value) = item.get(&attr.name) else {
        return Err(EngineError::validation(format!(
            "One or more parameter values were invalid: Missing the key {} in the item",
            attr.name
        )));
    };
    let key = match KeyValue::from_attribute(value) {
        Some(k) if k.key_type() == attr.ty => k,
        _ => {
            return Err(EngineError::validation(format!(
                "{KEY_TYPE_MISMATCH}{} expected: {} actual: {}",
                attr.name,
                attr.ty.descriptor(),
                value.value_type().descriptor()
            )))
        }
    };
    check_key_value(attr, &key, is_hash)?;
    Ok(key)
}

fn key_param_value(key: &Item, attr: &KeyAttr, is_hash: bool) -> Result<KeyValue, EngineError> {
    let value = key.get(&attr.name).ok_or_else(schema_mismatch)?;
    let kv = match KeyValue::from_attribute(value) {
        Some(k) if k.key_type() == attr.ty => k,
        _ => return Err(schema_mismatch()),
    };
    check_key_value(attr, &kv, is_hash)?;
    Ok(kv)
}

/// Settings that UpdateTable changes.
#[derive(Clone, Debug, PartialEq)]
pub struct TableSettings {
    pub billing: BillingMode,
    /// When the table's provisioned throughput was last raised and lowered,
    /// and how often it was lowered today.
    pub changes: ThroughputChanges,
    /// Set when billing mode was last changed to PAY_PER_REQUEST.
    pub last_pay_per_request_switch: Option<Millis>,
    /// Time to live: the attribute, whether it is on, and when it last changed.
    pub ttl: Option<TimeToLive>,
    /// The stream: on or off, its view type and latest label.
    pub stream: Option<crate::stream::StreamSetting>,
    /// OnDemandThroughput: the most read and write request units a second
    /// the table may take on demand, -1 for no maximum (A13).
    pub on_demand_max: Option<(i64, i64)>,
    /// WarmThroughput asked for: read and write units a second the table
    /// takes at once (A14); the model's own figure may be higher.
    pub warm: Option<(u64, u64)>,
    /// DeletionProtectionEnabled: DeleteTable refuses the table while set.
    pub deletion_protection: bool,
    /// TableClass, once CreateTable or UpdateTable named one: DynamoDB
    /// shows no TableClassSummary for a table that never did.
    pub table_class: Option<TableClassSetting>,
    /// The ARN of the KMS key the table is encrypted with
    /// (SSESpecification Enabled); None for an AWS owned key, DynamoDB's
    /// default, which DescribeTable does not show.
    pub sse_kms_key: Option<String>,
    /// Resource-based policies: the table's slot and its streams'
    /// (`policy.rs`).
    pub policies: crate::policy::Policies,
}

const DAY_MS: u64 = 24 * 60 * 60 * 1000;
/// Provisioned-throughput decreases a UTC day allows at any time (S-limits;
/// ack-api-quirks DDB-TABLE-184).
pub const FREE_DECREASES_A_DAY: u64 = 4;
/// After them, one more decrease this long after the last one (DDB-TABLE-326).
pub const DECREASE_INTERVAL_MS: u64 = 60 * 60 * 1000;

/// When provisioned throughput was last raised and lowered, and how often
/// it was lowered on the UTC day of the last decrease: a table's, and each
/// provisioned GSI's own (separate budgets: a GSI's decreases do not count
/// against its table's, ack-api-quirks DDB-TABLE-157).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThroughputChanges {
    pub last_increase: Option<Millis>,
    pub last_decrease: Option<Millis>,
    pub decreases_today: u64,
}

impl ThroughputChanges {
    /// NumberOfDecreasesToday at `now`: the decreases of the current UTC day
    /// (the count starts again at 00:00 UTC).
    pub fn decreases_on(&self, now: Millis) -> u64 {
        match self.last_decrease {
            Some(last) if last.0 / DAY_MS == now.0 / DAY_MS => self.decreases_today,
            _ => 0,
        }
    }

    /// As DescribeTable shows them at `now`.
    pub fn at(self, now: Millis) -> ThroughputChanges {
        ThroughputChanges { decreases_today: self.decreases_on(now), ..self }
    }

    /// Whether going from `old` to `new` (read, write) units lowers either.
    pub fn lowers(old: (u64, u64), new: (u64, u64)) -> bool {
        new.0 < old.0 || new.1 < old.1
    }

    /// Notes a change from `old` to `new` units at `now`: raising either is
    /// an increase, lowering either a decrease (one call that does both is
    /// one of each).
    pub fn record(&mut self, old: (u64, u64), new: (u64, u64), now: Millis) {
        if new.0 > old.0 || new.1 > old.1 {
            self.last_increase = Some(now);
        }
        if ThroughputChanges::lowers(old, new) {
            self.decreases_today = self.decreases_on(now) + 1;
            self.last_decrease = Some(now);
        }
    }

    /// Refuses a decrease past the day's budget: after
    /// [`FREE_DECREASES_A_DAY`], one per [`DECREASE_INTERVAL_MS`] after the
    /// last accepted one, until the UTC day ends (ack-api-quirks
    /// DDB-TABLE-184, -326, -157; live texts: a GSI's refusal reads as a
    /// table's).
    pub(crate) fn check_decrease(&self, now: Millis) -> Result<(), crate::error::EngineError> {
        let decreases = self.decreases_on(now);
        let Some(last) = self.last_decrease.filter(|_| decreases >= FREE_DECREASES_A_DAY) else { return Ok(()) };
        let next = (last.0 + DECREASE_INTERVAL_MS).min((now.0 / DAY_MS + 1) * DAY_MS);
        if now.0 >= next {
            return Ok(());
        }
        let long = |t: u64| dynaburst_model::time::long_date(i64::try_from(t).unwrap_or(i64::MAX));
        Err(crate::error::EngineError::LimitExceeded(format!(
            "Subscriber limit exceeded: Provisioned throughput decreases are limited within a given UTC day. After the first {FREE_DECREASES_A_DAY} decreases, each subsequent decrease in the same UTC day can be performed at most once every {} seconds. Number of decreases today: {decreases}. Last decrease at {}. Next decrease can be made at {}.",
            DECREASE_INTERVAL_MS / 1000,
            long(last.0),
            long(next)
        )))
    }
}

/// The WarmThroughput of a new PAY_PER_REQUEST table and of each of its
/// GSIs, (read, write) units a second (A14; ack-api-quirks DDB-TABLE-032).
pub const ON_DEMAND_INITIAL_WARM: (u64, u64) = (12_000, 4_000);

/// What a billing mode alone makes a table's warm throughput at least:
/// the on-demand initial throughput, or the provisioned units.
pub fn warm_floor(billing: BillingMode) -> (u64, u64) {
    match billing {
        BillingMode::PayPerRequest => ON_DEMAND_INITIAL_WARM,
        BillingMode::Provisioned { read, write } => (read, write),
    }
}

/// TableClass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableClass {
    Standard,
    StandardInfrequentAccess,
}

impl TableClass {
    /// DynamoDB's name.
    pub fn name(self) -> &'static str {
        match self {
            TableClass::Standard => "STANDARD",
            TableClass::StandardInfrequentAccess => "STANDARD_INFREQUENT_ACCESS",
        }
    }

    /// The class DynamoDB names `name` (case-sensitive), if any.
    pub fn parse(name: &str) -> Option<TableClass> {
        match name {
            "STANDARD" => Some(TableClass::Standard),
            "STANDARD_INFREQUENT_ACCESS" => Some(TableClass::StandardInfrequentAccess),
            _ => None,
        }
    }
}

/// A table's class, and when UpdateTable last changed it (None when only
/// CreateTable set it: TableClassSummary then has no LastUpdateDateTime).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableClassSetting {
    pub class: TableClass,
    pub updated_at: Option<Millis>,
}

/// A table's time-to-live setting.
#[derive(Clone, Debug, PartialEq)]
pub struct TimeToLive {
    pub attribute: String,
    pub enabled: bool,
    pub changed_at: Millis,
}

impl TableSettings {
    /// The WarmThroughput DescribeTable shows, (read, write) units a
    /// second: never below what was asked for or the units a provisioned
    /// table had (`warm`, which UpdateTable keeps), an on-demand table's
    /// initial throughput or a provisioned table's units; for an on-demand
    /// table, also what the capacity model has grown to (`model`). A
    /// provisioned table's shows the most units it ever had (ack-api-quirks
    /// DDB-TABLE-028, -032, -061, -068, live 2026-10).
    pub fn warm_shown(&self, model: Option<(f64, f64)>) -> (u64, u64) {
        let floor = self.warm_floor();
        let grown = match (self.billing, model) {
            (BillingMode::PayPerRequest, Some((read, write))) => (read as u64, write as u64),
            _ => (0, 0),
        };
        let kept = self.warm.unwrap_or((0, 0));
        (floor.0.max(grown.0).max(kept.0), floor.1.max(grown.1).max(kept.1))
    }

    /// What the billing mode alone makes the warm throughput at least.
    pub fn warm_floor(&self) -> (u64, u64) {
        warm_floor(self.billing)
    }

    /// The settings of a table created at `now` with `billing`.
    pub fn new(billing: BillingMode, now: Millis) -> TableSettings {
        TableSettings {
            billing,
            changes: ThroughputChanges::default(),
            last_pay_per_request_switch: match billing {
                BillingMode::PayPerRequest => Some(now),
                BillingMode::Provisioned { .. } => None,
            },
            ttl: None,
            stream: None,
            on_demand_max: None,
            warm: None,
            deletion_protection: false,
            table_class: None,
            sse_kms_key: None,
            policies: crate::policy::Policies::new(),
        }
    }
}

/// The stored items and their running statistics, behind one lock. Only
/// the write funnel (`write.rs`) changes them.
pub struct TableData {
    pub store: Box<dyn TableStore>,
    pub size_bytes: u64,
    pub item_count: u64,
    /// The secondary indexes, in definition order (GSIs, then LSIs).
    pub indexes: Vec<IndexData>,
    /// Bytes of each item collection (a partition key's items and their LSI
    /// entries), kept only for tables with local secondary indexes.
    pub collections: std::collections::HashMap<KeyValue, u64>,
    /// True when `collections` holds only some item collections (a table
    /// opened without walking its items, or one whose items live in
    /// storage, which keeps at most `EngineConfig::item_collection_cache`
    /// of them): a write to another one measures it first
    /// ([`TableData::measure_collection`]).
    pub collections_unmeasured: bool,
    /// Where the time-to-live sweep goes on from (the last key it looked at).
    pub ttl_cursor: Option<StoreKey>,
    /// Change records of the table's streams (the latest last; disabled
    /// ones stay readable for 24 hours).
    pub streams: Vec<crate::stream::StreamLog>,
    /// Point-in-time history, while point-in-time recovery is on.
    pub pitr: Option<crate::backup::PitrLog>,
}

impl TableData {
    /// A table's data: `store` holding `item_count` items of `size_bytes`,
    /// and empty indexes for `defs` (GSI capacity models, when `capacity`
    /// is set, start at `now`).
    pub fn new(
        store: Box<dyn TableStore>,
        (item_count, size_bytes): (u64, u64),
        defs: &[IndexDef],
        capacity: Option<&CapacitySettings>,
        now: Millis,
    ) -> TableData {
        let indexes = defs.iter().map(|d| IndexData::new(d.clone(), index_capacity(d, capacity, now))).collect();
        // Items in storage: their collections' sizes are measured from it
        // when written (memory does not grow with the collections).
        let measured_when_written = !store.holds_items_in_memory() && defs.iter().any(|d| d.kind == IndexKind::Local);
        TableData {
            store,
            size_bytes,
            item_count,
            indexes,
            collections: Default::default(),
            collections_unmeasured: measured_when_written,
            ttl_cursor: None,
            streams: Vec::new(),
            pitr: None,
        }
    }

    /// True when the table has local secondary indexes (and so item
    /// collections to keep).
    pub fn has_local_indexes(&self) -> bool {
        self.indexes.iter().any(|i| i.def.kind == IndexKind::Local)
    }

    /// Measures the item collection of `partition` (its items and their
    /// LSI entries) into `collections` when it may be missing from them (a
    /// table opened without walking its items), by walking that partition.
    pub fn measure_collection(&mut self, schema: &KeySchema, partition: &KeyValue) -> Result<(), StoreError> {
        if !self.collections_unmeasured || self.collections.contains_key(partition) {
            return Ok(());
        }
        let low = StoreKey { hash: partition.partition_hash(), partition: partition.clone(), sort: SortSlot::Low };
        let high = StoreKey { sort: SortSlot::High, ..low.clone() };
        let locals: Vec<&IndexDef> =
            self.indexes.iter().map(|i| &i.def).filter(|d| d.kind == IndexKind::Local).collect();
        let mut bytes = 0u64;
        let span = (std::ops::Bound::Included(&low), std::ops::Bound::Included(&high));
        self.store.range(span, crate::store::Direction::Forward, &mut |key, item| {
            bytes += item_size(item) as u64;
            for def in &locals {
                if def.entry_key(key, item).is_some() {
                    bytes += item_size(&def.entry(schema, item)) as u64;
                }
            }
            std::ops::ControlFlow::Continue(())
        })?;
        if bytes > 0 {
            self.collections.insert(partition.clone(), bytes);
        }
        Ok(())
    }

    /// The position of the index named `name`.
    pub fn index_position(&self, name: &str) -> Option<usize> {
        self.indexes.iter().position(|i| i.def.name == name)
    }

    /// Visits the entries of the index at `position` with keys in
    /// `(start, end)` in `direction`: from the store when it keeps index
    /// entries, else from memory.
    pub fn index_range(
        &self,
        position: usize,
        start: std::ops::Bound<&crate::store::IndexKey>,
        end: std::ops::Bound<&crate::store::IndexKey>,
        direction: crate::store::Direction,
        visit: crate::store::IndexVisit<'_>,
    ) -> Result<(), crate::store::StoreError> {
        let Some(ix) = self.indexes.get(position) else { return Ok(()) };
        if self.store.stores_index_entries() {
            self.store.index_range(&ix.def.name, (start, end), direction, visit)
        } else {
            ix.entries.range(start, end, direction, visit)
        }
    }
}

/// A GSI's capacity model: its own partitions, on its own throughput (or
/// on demand). LSIs use the table's.
pub(crate) fn index_capacity(
    def: &IndexDef,
    capacity: Option<&CapacitySettings>,
    now: Millis,
) -> Option<TableCapacity> {
    match (def.kind, capacity) {
        (IndexKind::Global, Some(settings)) => {
            let mode = match def.throughput {
                Some((read, write)) => Mode::Provisioned { read: read as f64, write: write as f64 },
                None => Mode::OnDemand,
            };
            // A GSI is written by DynamoDB itself, propagating base-table
            // writes, not by clients' bursts of requests: its partitions
            // keep no bank (A39's bank absorbs a client's burst on the
            // table), so a GSI holds a load to its partitions' maximum.
            let settings = CapacitySettings { partition_bank_seconds: 0.0, ..settings.clone() };
            let mut model = TableCapacity::new(mode, settings, now);
            apply_index_limits(&mut model, def, now);
            Some(model)
        }
        _ => None,
    }
}

/// The WarmThroughput DescribeTable shows for a GSI, as a table's: what
/// its billing makes it at least (the on-demand initial throughput, or its
/// units), what was asked for, and for an on-demand one what its capacity
/// model has grown to (`model`).
pub fn index_warm_shown(def: &IndexDef, model: Option<(f64, f64)>) -> (u64, u64) {
    let floor = match def.throughput {
        Some(units) => units,
        None => ON_DEMAND_INITIAL_WARM,
    };
    let grown = match (def.throughput, model) {
        (None, Some((read, write))) => (read as u64, write as u64),
        _ => (0, 0),
    };
    let kept = def.warm.unwrap_or((0, 0));
    (floor.0.max(grown.0).max(kept.0), floor.1.max(grown.1).max(kept.1))
}

/// Gives the capacity model the limits the table's owner set: the
/// on-demand maximums and the asked-for warm throughput.
pub(crate) fn apply_limits(model: &mut TableCapacity, settings: &TableSettings, now: Millis) {
    set_limits(model, settings.on_demand_max, settings.warm, now);
}

/// Gives a GSI's capacity model the limits its owner set, as a table's.
pub(crate) fn apply_index_limits(model: &mut TableCapacity, def: &IndexDef, now: Millis) {
    set_limits(model, def.on_demand_max, def.warm, now);
}

fn set_limits(model: &mut TableCapacity, on_demand_max: Option<(i64, i64)>, warm: Option<(u64, u64)>, now: Millis) {
    let positive = |v: i64| (v > 0).then_some(v as f64);
    let (read, write) = on_demand_max.unwrap_or((-1, -1));
    model.set_on_demand_max(positive(read), positive(write), now);
    if let Some((read, write)) = warm {
        model.prewarm(read as f64, write as f64, now);
    }
}

/// The capacity model's mode for a billing mode.
pub(crate) fn capacity_mode(billing: BillingMode) -> Mode {
    match billing {
        BillingMode::PayPerRequest => Mode::OnDemand,
        BillingMode::Provisioned { read, write } => Mode::Provisioned { read: read as f64, write: write as f64 },
    }
}

/// One table.
pub struct Table {
    pub name: String,
    pub table_id: String,
    pub arn: String,
    pub region: String,
    pub account_id: String,
    pub key_schema: KeySchema,
    pub attribute_definitions: Vec<(String, ScalarType)>,
    pub created_at: Millis,
    pub settings: Mutex<TableSettings>,
    /// Tags, in the order they were first set (locked after `data`).
    pub tags: Mutex<Vec<(String, String)>>,
    pub data: RwLock<TableData>,
    /// The capacity model's state; None when the model is off. Locked after
    /// `data` when both are held.
    pub capacity: Mutex<Option<TableCapacity>>,
    /// Top keys and Contributor Insights settings; locked on its own,
    /// never while taking another lock.
    pub insights: Mutex<Insights>,
    /// Held by UpdateTable from its first look at the settings to its last
    /// change, so that two UpdateTables of one table cannot both pass a
    /// check only one of them should (the day's budget of decreases, a
    /// stream change). Taken before any other lock of the table.
    pub(crate) updating: Mutex<()>,
}

impl Table {
    /// A table rebuilt from its catalog entry and store, holding
    /// `item_count` items of `size_bytes`; its capacity model (when
    /// `capacity` is set) starts at `now`.
    pub fn from_meta(meta: TableMeta, data: TableData, capacity: Option<CapacitySettings>, now: Millis) -> Table {
        let arn = meta.arn();
        let mode = capacity_mode(meta.settings.billing);
        let model = capacity.map(|capacity| {
            let mut model = TableCapacity::new(mode, capacity, now);
            apply_limits(&mut model, &meta.settings, now);
            model
        });
        Table {
            name: meta.name,
            table_id: meta.table_id,
            arn,
            region: meta.region,
            account_id: meta.account_id,
            key_schema: meta.key_schema,
            attribute_definitions: meta.attribute_definitions,
            created_at: meta.created_at,
            settings: Mutex::new(meta.settings),
            tags: Mutex::new(meta.tags),
            data: RwLock::new(data),
            capacity: Mutex::new(model),
            insights: Mutex::new(Insights::default()),
            updating: Mutex::new(()),
        }
    }

    /// The definitions of the table's indexes.
    pub fn index_defs(&self) -> Vec<IndexDef> {
        self.data.read().indexes.iter().map(|i| i.def.clone()).collect()
    }

    /// The catalog entry of this table with `settings` and `indexes`.
    pub fn meta_with(&self, settings: TableSettings, indexes: Vec<IndexDef>) -> TableMeta {
        TableMeta {
            name: self.name.clone(),
            table_id: self.table_id.clone(),
            region: self.region.clone(),
            account_id: self.account_id.clone(),
            key_schema: self.key_schema.clone(),
            attribute_definitions: self.attribute_definitions.clone(),
            settings,
            created_at: self.created_at,
            indexes,
            tags: self.tags.lock().clone(),
        }
    }

    pub(crate) fn throttle_error(&self, t: Throttle) -> EngineError {
        let provisioned = matches!(self.settings.lock().billing, BillingMode::Provisioned { .. });
        EngineError::Throttled { provisioned, reason: t.reason(), resource: self.arn.clone() }
    }

    /// Asks the capacity model for `units` on the partition of `hash`.
    pub fn admit(&self, op: Op, hash: u128, units: f64, now: Millis) -> Result<(), EngineError> {
        self.admit_all(op, &[(hash, units)], now)
    }

    /// All-or-nothing admission of several items (transactions).
    pub fn admit_all(&self, op: Op, items: &[(u128, f64)], now: Millis) -> Result<(), EngineError> {
        self.admit_items(op, items, true, now)
    }

    /// Starts a request whose items are admitted one by one with
    /// [`Table::admit_in_request`] against the state it arrived to (A39).
    pub fn begin_request(&self, op: Op) {
        if let Some(model) = self.capacity.lock().as_mut() {
            model.begin_request(op);
        }
    }

    /// Admits one item of the request begun by [`Table::begin_request`].
    pub fn admit_in_request(&self, op: Op, hash: u128, units: f64, now: Millis) -> Result<(), EngineError> {
        self.admit_items(op, &[(hash, units)], false, now)
    }

    fn admit_items(&self, op: Op, items: &[(u128, f64)], own_request: bool, now: Millis) -> Result<(), EngineError> {
        let mut capacity = self.capacity.lock();
        let Some(model) = capacity.as_mut() else { return Ok(()) };
        if own_request {
            model.begin_request(op);
        }
        match model.check_in_request(op, items, now) {
            Ok(admission) => {
                model.consume(admission);
                Ok(())
            }
            Err(t) => {
                drop(capacity);
                Err(self.throttle_error(t))
            }
        }
    }

    /// Counts one item's access (or refusal) in the table's top keys.
    pub fn note_key(&self, key: &StoreKey, op: Op, units: f64, throttled: bool, now: Millis) {
        self.insights.lock().top.observe(key, op, units, throttled, now);
    }

    /// Records that a whole request was answered with a throttling error.
    pub fn note_throttled_request(&self, now: Millis) {
        if let Some(model) = self.capacity.lock().as_mut() {
            model.note_throttled_request(now);
        }
    }

    /// Tells the capacity model that the bytes stored under `hash` changed.
    pub fn note_size(&self, hash: u128, delta: i64, now: Millis) {
        if delta != 0 {
            if let Some(model) = self.capacity.lock().as_mut() {
                model.note_size(hash, delta, now);
            }
        }
    }

    /// A snapshot for DescribeTable.
    pub fn describe(&self, status: &'static str, now: Millis) -> TableDescription {
        let mut settings = self.settings.lock().clone();
        settings.changes = settings.changes.at(now);
        let (warm_throughput, partition_count) = match self.capacity.lock().as_ref() {
            Some(m) => (Some(m.warm_throughput()), Some(m.partition_count())),
            None => (None, None),
        };
        let (item_count, size_bytes, indexes) = {
            let data = self.data.read();
            let indexes: Vec<IndexDescription> = data
                .indexes
                .iter()
                .map(|ix| IndexDescription {
                    def: IndexDef { changes: ix.def.changes.at(now), ..ix.def.clone() },
                    arn: ix.def.arn(&self.arn),
                    status: if ix.is_active(now) { "ACTIVE" } else { "CREATING" },
                    item_count: ix.item_count,
                    size_bytes: ix.size_bytes,
                    warm_throughput: ix.capacity.lock().as_ref().map(|m| m.warm_throughput()),
                })
                .collect();
            (data.item_count, data.size_bytes, indexes)
        };
        // The definitions of the key attributes in use, the table's and its
        // indexes' (those of a deleted index go with it), each once and
        // sorted by name, as DynamoDB answers them (S40; ack-api-quirks
        // DDB-TABLE-125).
        let mut attribute_definitions: Vec<(String, ScalarType)> = std::iter::once(&self.key_schema.hash)
            .chain(&self.key_schema.range)
            .map(|a| (a.name.clone(), a.ty))
            .collect();
        for ix in &indexes {
            for attr in ix.def.schema.attrs() {
                if !attribute_definitions.iter().any(|(n, _)| *n == attr.name) {
                    attribute_definitions.push((attr.name.clone(), attr.ty));
                }
            }
        }
        attribute_definitions.sort_by(|a, b| a.0.cmp(&b.0));
        TableDescription {
            table_name: self.name.clone(),
            table_id: self.table_id.clone(),
            arn: self.arn.clone(),
            status,
            key_schema: self.key_schema.pairs(),
            attribute_definitions,
            settings,
            created_at: self.created_at,
            item_count,
            size_bytes,
            warm_throughput,
            partition_count,
            indexes,
            restore: None,
        }
    }
}
