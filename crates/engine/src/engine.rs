//! The engine: a registry of tables and DynamoDB's operations over them.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::ops::{Bound, ControlFlow};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use dynaburst_capacity::{CapacitySettings, Mode, Op, TableCapacity};
use dynaburst_expr::{
    parse_condition, parse_key_condition, parse_projection, parse_update, project, Condition, ExprKind, KeyOp, Path,
    Placeholders, UpdateExpr,
};
use dynaburst_model::{
    item_size, read_units, transactional_write_units, write_units, AttributeValue, Item, KeyValue, ReadKind,
    MAX_ITEM_BYTES,
};
use parking_lot::{Mutex, RwLock, RwLockWriteGuard};

use crate::error::EngineError;
use crate::store::{Direction, SortSlot, StoreFactory, StoreKey};
use crate::table::{KeyAttr, KeySchema, Table, TableData, TableSettings};
use crate::types::*;

/// Most items a Query or Scan page reads: 1 MB.
pub const MAX_PAGE_BYTES: usize = 1024 * 1024;
/// How long a ClientRequestToken is remembered after its request completes.
pub const IDEMPOTENCY_WINDOW_MS: u64 = 10 * 60 * 1000;
/// Most remembered ClientRequestTokens (oldest are forgotten first).
pub const MAX_REMEMBERED_TOKENS: usize = 100_000;
/// Read units a replayed TransactWriteItems (same ClientRequestToken)
/// reports per table.
pub const IDEMPOTENT_REPLAY_READ_UNITS: f64 = 2.0;
/// Most tables one engine holds (DynamoDB's default per-Region quota).
pub const MAX_TABLES: usize = 2500;
/// Most keys in one BatchGetItem.
pub const MAX_BATCH_GET_KEYS: usize = 100;

/// One table's capacity state and metrics.
#[derive(Clone, Debug)]
pub struct CapacityReport {
    pub table_name: String,
    pub mode: Mode,
    pub partitions: Vec<dynaburst_capacity::PartitionInfo>,
    pub warm_throughput: (f64, f64),
    pub metrics: dynaburst_capacity::Metrics,
}

/// Fixed settings of an engine.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// Region in ARNs.
    pub region: String,
    /// Account id in ARNs.
    pub account_id: String,
    /// The capacity model's settings; None serves without limits.
    pub capacity: Option<CapacitySettings>,
}

impl EngineConfig {
    /// us-east-1, account 000000000000 (as DynamoDB Local), and the capacity
    /// model on with DynamoDB's numbers.
    pub fn local() -> EngineConfig {
        EngineConfig {
            region: "us-east-1".to_string(),
            account_id: "000000000000".to_string(),
            capacity: Some(CapacitySettings::dynamodb()),
        }
    }
}

struct TokenEntry {
    fingerprint: u64,
    completed_at: Millis,
    output: TransactWriteOutput,
}

#[derive(Default)]
struct TokenCache {
    entries: HashMap<String, TokenEntry>,
    order: VecDeque<(Millis, String)>,
}

impl TokenCache {
    fn prune(&mut self, now: Millis) {
        while let Some((t, _)) = self.order.front() {
            let expired = now.0.saturating_sub(t.0) > IDEMPOTENCY_WINDOW_MS;
            if !expired && self.order.len() <= MAX_REMEMBERED_TOKENS {
                break;
            }
            if let Some((t, token)) = self.order.pop_front() {
                if self.entries.get(&token).is_some_and(|e| e.completed_at == t) {
                    self.entries.remove(&token);
                }
            }
        }
    }
}

/// The DynamoDB engine. Thread-safe: every operation takes `&self`.
///
/// Consistency: a single-item operation holds its table's write lock for
/// the read-check-write, so it is atomic. A transaction takes the write
/// locks of all its tables in name order before checking any condition and
/// releases them after applying every action, so transactions serialize
/// and no reader sees half of one.
pub struct Engine {
    config: EngineConfig,
    tables: RwLock<BTreeMap<String, Arc<Table>>>,
    store_factory: Box<dyn StoreFactory>,
    tokens: Mutex<TokenCache>,
    table_counter: AtomicU64,
}

fn capacity_mode(billing: BillingMode) -> Mode {
    match billing {
        BillingMode::PayPerRequest => Mode::OnDemand,
        BillingMode::Provisioned { read, write } => Mode::Provisioned { read: read as f64, write: write as f64 },
    }
}

/// Bytes changed by replacing `old` with `new`.
fn size_delta(old: Option<&Item>, new: Option<&Item>) -> i64 {
    new.map(|i| item_size(i) as i64).unwrap_or(0) - old.map(|i| item_size(i) as i64).unwrap_or(0)
}

/// Records a throttled request and passes the error on.
fn throttled<T>(table: &Table, now: Millis, result: Result<T, EngineError>) -> Result<T, EngineError> {
    if let Err(EngineError::Throttled { .. }) = &result {
        table.note_throttled_request(now);
    }
    result
}

/// The cancellation of a transaction the capacity model refused: every
/// item carries the throttling code (A34).
fn throttle_cancellation(e: &EngineError, items: usize) -> EngineError {
    let (code, message) = match e {
        EngineError::Throttled { provisioned: true, .. } => ("ProvisionedThroughputExceeded", e.message()),
        _ => ("ThrottlingError", e.message()),
    };
    EngineError::TransactionCanceled {
        reasons: (0..items).map(|_| CancellationReason { code, message: Some(message.clone()), item: None }).collect(),
    }
}

fn consumed(rc: ReturnCapacity, table: &str, read: f64, write: f64) -> Option<ConsumedCapacity> {
    match rc {
        ReturnCapacity::None => None,
        ReturnCapacity::Total | ReturnCapacity::Indexes => Some(ConsumedCapacity {
            table_name: table.to_string(),
            read_units: read,
            write_units: write,
            include_table_detail: rc == ReturnCapacity::Indexes,
        }),
    }
}

fn read_kind(consistent: bool) -> ReadKind {
    if consistent {
        ReadKind::Strong
    } else {
        ReadKind::Eventual
    }
}

fn check_item_size(item: &Item, message: &str) -> Result<usize, EngineError> {
    let size = item_size(item);
    if size > MAX_ITEM_BYTES {
        return Err(EngineError::validation(message));
    }
    Ok(size)
}

const ITEM_TOO_BIG: &str = "Item size has exceeded the maximum allowed size";
const UPDATE_TOO_BIG: &str = "Item size to update has exceeded the maximum allowed size";

/// Expressions of one write request, parsed and checked together.
struct WriteExprs {
    condition: Option<Condition>,
    update: Option<UpdateExpr>,
}

fn no_expression_args(expr: &ExprArgs) -> Result<(), EngineError> {
    if expr.names.is_some() {
        return Err(EngineError::validation("ExpressionAttributeNames can only be specified when using expressions"));
    }
    if expr.values.is_some() {
        return Err(EngineError::validation("ExpressionAttributeValues can only be specified when using expressions"));
    }
    Ok(())
}

fn parse_write_exprs(
    condition: Option<&str>,
    update: Option<&str>,
    expr: &ExprArgs,
) -> Result<WriteExprs, EngineError> {
    if condition.is_none() && update.is_none() {
        no_expression_args(expr)?;
        return Ok(WriteExprs { condition: None, update: None });
    }
    let mut ph = Placeholders::new(expr.names.as_ref(), expr.values.as_ref());
    let update = update.map(|u| parse_update(u, &mut ph)).transpose()?;
    let condition = condition.map(|c| parse_condition(c, ExprKind::Condition, &mut ph)).transpose()?;
    ph.check_all_used()?;
    Ok(WriteExprs { condition, update })
}

fn parse_projection_only(projection: Option<&str>, names: Option<&Names>) -> Result<Option<Vec<Path>>, EngineError> {
    let Some(p) = projection else {
        if names.is_some() {
            return Err(EngineError::validation(
                "ExpressionAttributeNames can only be specified when using expressions",
            ));
        }
        return Ok(None);
    };
    let mut ph = Placeholders::new(names, None);
    let paths = parse_projection(p, &mut ph)?;
    ph.check_all_used()?;
    Ok(Some(paths))
}

fn condition_holds(condition: &Option<Condition>, current: Option<&Item>) -> Result<bool, EngineError> {
    match condition {
        None => Ok(true),
        Some(c) => {
            let empty = Item::new();
            Ok(c.evaluate(current.unwrap_or(&empty))?)
        }
    }
}

/// Applies an update to the current item (or a new one made of the key),
/// checking that no key attribute is touched and the result fits.
fn apply_update(
    schema: &KeySchema,
    key: &Item,
    current: Option<&Item>,
    update: &Option<UpdateExpr>,
) -> Result<Item, EngineError> {
    let mut new_item = match current {
        Some(c) => c.clone(),
        None => key.clone(),
    };
    if let Some(u) = update {
        check_update_spares_key(schema, u)?;
        u.apply(&mut new_item)?;
    }
    check_item_size(&new_item, UPDATE_TOO_BIG)?;
    Ok(new_item)
}

/// An update may not write or remove a key attribute.
fn check_update_spares_key(schema: &KeySchema, update: &UpdateExpr) -> Result<(), EngineError> {
    for name in update.top_level_names() {
        if schema.is_key_attribute(&name) {
            return Err(EngineError::validation(format!(
                "One or more parameter values were invalid: Cannot update attribute {name}. This attribute is part of the key"
            )));
        }
    }
    Ok(())
}

fn update_return_values(rv: ReturnValues, old: Option<&Item>, new: &Item, update: &Option<UpdateExpr>) -> Option<Item> {
    let paths = || update.as_ref().map(|u| u.paths()).unwrap_or_default();
    let out = match rv {
        ReturnValues::None => return None,
        ReturnValues::AllOld => old.cloned()?,
        ReturnValues::AllNew => new.clone(),
        ReturnValues::UpdatedOld => project(old?, &paths()),
        ReturnValues::UpdatedNew => project(new, &paths()),
    };
    if out.is_empty() {
        None
    } else {
        Some(out)
    }
}

fn check_put_return_values(rv: ReturnValues, op: &str) -> Result<(), EngineError> {
    match rv {
        ReturnValues::None | ReturnValues::AllOld => Ok(()),
        _ => Err(EngineError::validation(format!("ReturnValues can only be ALL_OLD or NONE{op}"))),
    }
}

/// Key-space bounds of one hash segment of a parallel Scan.
fn segment_bounds(segment: u32, total: u32) -> (u128, Option<u128>) {
    let width = u128::MAX / u128::from(total);
    let lo = width * u128::from(segment);
    let hi = if segment + 1 == total { None } else { Some(width * u128::from(segment + 1)) };
    (lo, hi)
}

/// The least key with this hash: partition keys are never empty strings,
/// and an empty string sorts before every S, N and B key value.
fn hash_floor(hash: u128) -> StoreKey {
    StoreKey { hash, partition: KeyValue::S(String::new()), sort: SortSlot::Low }
}

impl Engine {
    /// An empty engine whose tables are stored by `store_factory`.
    pub fn new(config: EngineConfig, store_factory: Box<dyn StoreFactory>) -> Engine {
        Engine {
            config,
            tables: RwLock::new(BTreeMap::new()),
            store_factory,
            tokens: Mutex::new(TokenCache::default()),
            table_counter: AtomicU64::new(0),
        }
    }

    /// The engine's settings.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    fn table(&self, name: &str) -> Result<Arc<Table>, EngineError> {
        self.tables.read().get(name).cloned().ok_or_else(EngineError::table_not_found)
    }

    /// The named table, if it exists (for layers that keep per-table state).
    pub fn get_table(&self, name: &str) -> Option<Arc<Table>> {
        self.tables.read().get(name).cloned()
    }

    /// The capacity model's view of every table, advanced to `now`: what
    /// /metrics shows and the bench charts. Empty when the model is off.
    pub fn capacity_reports(&self, now: Millis) -> Vec<CapacityReport> {
        let tables: Vec<Arc<Table>> = self.tables.read().values().cloned().collect();
        let mut out = Vec::with_capacity(tables.len());
        for table in tables {
            let mut capacity = table.capacity.lock();
            let Some(model) = capacity.as_mut() else { continue };
            model.tick(now);
            out.push(CapacityReport {
                table_name: table.name.clone(),
                mode: model.mode(),
                partitions: model.partitions(),
                warm_throughput: model.warm_throughput(),
                metrics: model.metrics().clone(),
            });
        }
        out
    }

    // ----- control plane -------------------------------------------------

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
            return Err(EngineError::validation(format!(
                "One or more parameter values were invalid: Number of attributes in KeySchema does not exactly match number of attributes defined in AttributeDefinitions"
            )));
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
        let id_hash = xxhash_free_uuid(&input.table_name, now, counter);
        let table = Table {
            name: input.table_name.clone(),
            table_id: id_hash,
            arn: format!(
                "arn:aws:dynamodb:{}:{}:table/{}",
                self.config.region, self.config.account_id, input.table_name
            ),
            key_schema: KeySchema { hash, range },
            attribute_definitions: input.attribute_definitions.clone(),
            created_at: now,
            settings: Mutex::new(TableSettings {
                billing: input.billing,
                last_increase: None,
                last_decrease: None,
                decreases_today: 0,
                last_pay_per_request_switch: match input.billing {
                    BillingMode::PayPerRequest => Some(now),
                    BillingMode::Provisioned { .. } => None,
                },
            }),
            data: RwLock::new(TableData { store: self.store_factory.create(&input.table_name), size_bytes: 0 }),
            capacity: Mutex::new(
                self.config
                    .capacity
                    .clone()
                    .map(|settings| TableCapacity::new(capacity_mode(input.billing), settings, now)),
            ),
        };
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
        let table = self.tables.write().remove(name).ok_or_else(|| EngineError::table_not_found_named(name))?;
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
            let mut settings = table.settings.lock();
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
                drop(settings);
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
            drop(settings);
            if let Some(model) = table.capacity.lock().as_mut() {
                model.set_mode(mode, now);
            }
        }
        Ok(table.describe("UPDATING"))
    }

    // ----- single items ---------------------------------------------------

    /// PutItem.
    pub fn put_item(&self, input: PutItemInput, now: Millis) -> Result<WriteOutput, EngineError> {
        check_put_return_values(input.return_values, "")?;
        let table = self.table(&input.table_name)?;
        let exprs = parse_write_exprs(input.condition.as_deref(), None, &input.expr)?;
        let key = table.key_schema.key_of_item(&input.item)?;
        let new_size = check_item_size(&input.item, ITEM_TOO_BIG)?;
        let mut data = table.data.write();
        let old = data.store.get(&key);
        let old_size = old.as_ref().map(|o| item_size(o)).unwrap_or(0);
        let units = write_units(new_size.max(old_size));
        throttled(&table, now, table.admit(Op::Write, key.hash, units, now))?;
        if !condition_holds(&exprs.condition, old.as_deref())? {
            return Err(EngineError::ConditionalCheckFailed {
                item: if input.return_old_on_condition_failure { old.map(|o| (*o).clone()) } else { None },
            });
        }
        let hash = key.hash;
        table.note_size(hash, size_delta(old.as_deref(), Some(&input.item)), now);
        data.put(key, Arc::new(input.item));
        drop(data);
        Ok(WriteOutput {
            attributes: match input.return_values {
                ReturnValues::AllOld => old.map(|o| (*o).clone()),
                _ => None,
            },
            consumed: consumed(input.return_capacity, &table.name, 0.0, units),
        })
    }

    /// GetItem.
    pub fn get_item(&self, input: GetItemInput, now: Millis) -> Result<GetItemOutput, EngineError> {
        let table = self.table(&input.table_name)?;
        let projection = parse_projection_only(input.projection.as_deref(), input.names.as_ref())?;
        let key = table.key_schema.key_of_key(&input.key)?;
        let found = table.data.read().store.get(&key);
        let size = found.as_ref().map(|i| item_size(i)).unwrap_or(0);
        let units = read_units(size, read_kind(input.consistent_read));
        throttled(&table, now, table.admit(Op::Read, key.hash, units, now))?;
        let item = found.map(|i| match &projection {
            Some(p) => project(&i, p),
            None => (*i).clone(),
        });
        Ok(GetItemOutput { item, consumed: consumed(input.return_capacity, &table.name, units, 0.0) })
    }

    /// DeleteItem.
    pub fn delete_item(&self, input: DeleteItemInput, now: Millis) -> Result<WriteOutput, EngineError> {
        check_put_return_values(input.return_values, "")?;
        let table = self.table(&input.table_name)?;
        let exprs = parse_write_exprs(input.condition.as_deref(), None, &input.expr)?;
        let key = table.key_schema.key_of_key(&input.key)?;
        let mut data = table.data.write();
        let old = data.store.get(&key);
        let units = write_units(old.as_ref().map(|o| item_size(o)).unwrap_or(0));
        throttled(&table, now, table.admit(Op::Write, key.hash, units, now))?;
        if !condition_holds(&exprs.condition, old.as_deref())? {
            return Err(EngineError::ConditionalCheckFailed {
                item: if input.return_old_on_condition_failure { old.map(|o| (*o).clone()) } else { None },
            });
        }
        if old.is_some() {
            table.note_size(key.hash, size_delta(old.as_deref(), None), now);
            data.delete(&key);
        }
        drop(data);
        Ok(WriteOutput {
            attributes: match input.return_values {
                ReturnValues::AllOld => old.map(|o| (*o).clone()),
                _ => None,
            },
            consumed: consumed(input.return_capacity, &table.name, 0.0, units),
        })
    }

    /// UpdateItem.
    pub fn update_item(&self, input: UpdateItemInput, now: Millis) -> Result<WriteOutput, EngineError> {
        let table = self.table(&input.table_name)?;
        let exprs = parse_write_exprs(input.condition.as_deref(), input.update.as_deref(), &input.expr)?;
        let key = table.key_schema.key_of_key(&input.key)?;
        let mut data = table.data.write();
        let old = data.store.get(&key);
        let old_size = old.as_ref().map(|o| item_size(o)).unwrap_or(0);
        if !condition_holds(&exprs.condition, old.as_deref())? {
            // A failed condition is still charged, on the item's size (B6).
            throttled(&table, now, table.admit(Op::Write, key.hash, write_units(old_size), now))?;
            return Err(EngineError::ConditionalCheckFailed {
                item: if input.return_old_on_condition_failure { old.map(|o| (*o).clone()) } else { None },
            });
        }
        let new_item = apply_update(&table.key_schema, &input.key, old.as_deref(), &exprs.update)?;
        let new_size = item_size(&new_item);
        let units = write_units(new_size.max(old_size));
        throttled(&table, now, table.admit(Op::Write, key.hash, units, now))?;
        let attributes = update_return_values(input.return_values, old.as_deref(), &new_item, &exprs.update);
        table.note_size(key.hash, size_delta(old.as_deref(), Some(&new_item)), now);
        data.put(key, Arc::new(new_item));
        drop(data);
        Ok(WriteOutput { attributes, consumed: consumed(input.return_capacity, &table.name, 0.0, units) })
    }

    // ----- batches --------------------------------------------------------

    /// BatchWriteItem. The whole batch is validated before anything is
    /// written; then each request is applied in order.
    pub fn batch_write_item(&self, input: BatchWriteInput, now: Millis) -> Result<BatchWriteOutput, EngineError> {
        let mut plan = Vec::with_capacity(input.requests.len());
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
            plan.push((table, keyed));
        }
        // Each item is admitted on its own; what the capacity model refuses
        // comes back in UnprocessedItems. Only when nothing at all was
        // admitted does the request fail with the throttling error (A32).
        let mut out = BatchWriteOutput::default();
        let mut admitted_any = false;
        let mut refusal: Option<EngineError> = None;
        let mut throttled_tables = Vec::new();
        for ((table, keys), (table_name, requests)) in plan.into_iter().zip(input.requests) {
            let mut units = 0.0;
            let mut unprocessed = Vec::new();
            let mut data = table.data.write();
            if table.capacity.lock().is_none() {
                // No capacity model: nothing to admit, so each item is one
                // tree operation, charged from the item it replaced.
                for ((key, new_size), request) in keys.into_iter().zip(requests) {
                    units += match request {
                        WriteRequest::Put(item) => {
                            let old_size = data.put_sized(key, Arc::new(item), new_size).map(|(_, s)| s).unwrap_or(0);
                            write_units(new_size.max(old_size))
                        }
                        WriteRequest::Delete(_) => write_units(data.delete(&key).map(|o| item_size(&o)).unwrap_or(0)),
                    };
                }
                admitted_any = true;
                drop(data);
                out.consumed.extend(consumed(input.return_capacity, &table.name, 0.0, units));
                continue;
            }
            for ((key, _), request) in keys.into_iter().zip(requests) {
                let old_size = data.store.get(&key).map(|o| item_size(&o)).unwrap_or(0);
                let item_units = match &request {
                    WriteRequest::Put(item) => write_units(item_size(item).max(old_size)),
                    WriteRequest::Delete(_) => write_units(old_size),
                };
                match table.admit(Op::Write, key.hash, item_units, now) {
                    Ok(()) => {}
                    Err(e @ EngineError::Throttled { .. }) => {
                        refusal.get_or_insert(e);
                        unprocessed.push(request);
                        continue;
                    }
                    Err(e) => return Err(e),
                }
                admitted_any = true;
                units += item_units;
                match request {
                    WriteRequest::Put(item) => {
                        let new_size = item_size(&item) as i64;
                        table.note_size(key.hash, new_size - old_size as i64, now);
                        data.put(key, Arc::new(item));
                    }
                    WriteRequest::Delete(_) => {
                        table.note_size(key.hash, -(old_size as i64), now);
                        data.delete(&key);
                    }
                }
            }
            drop(data);
            if !unprocessed.is_empty() {
                throttled_tables.push(table.clone());
                out.unprocessed.push((table_name, unprocessed));
            }
            out.consumed.extend(consumed(input.return_capacity, &table.name, 0.0, units));
        }
        if !admitted_any {
            if let Some(e) = refusal {
                for t in &throttled_tables {
                    t.note_throttled_request(now);
                }
                return Err(e);
            }
        }
        Ok(out)
    }

    /// BatchGetItem.
    pub fn batch_get_item(&self, input: BatchGetInput, now: Millis) -> Result<BatchGetOutput, EngineError> {
        let total: usize = input.requests.iter().map(|(_, r)| r.keys.len()).sum();
        if total > MAX_BATCH_GET_KEYS {
            return Err(EngineError::validation("Too many items requested for the BatchGetItem call"));
        }
        let mut plan = Vec::with_capacity(input.requests.len());
        for (table_name, request) in &input.requests {
            let table = self.table(table_name)?;
            let projection = parse_projection_only(request.projection.as_deref(), request.names.as_ref())?;
            let mut seen = HashSet::with_capacity(request.keys.len());
            let mut keys = Vec::with_capacity(request.keys.len());
            for k in &request.keys {
                let key = table.key_schema.key_of_key(k)?;
                if !seen.insert(key.clone()) {
                    return Err(EngineError::validation("Provided list of item keys contains duplicates"));
                }
                keys.push(key);
            }
            plan.push((table, projection, keys, request));
        }
        let mut out = BatchGetOutput::default();
        let mut admitted_any = false;
        let mut refusal: Option<EngineError> = None;
        let mut throttled_tables = Vec::new();
        for (table, projection, keys, request) in plan {
            let mut units = 0.0;
            let mut items = Vec::new();
            let mut unprocessed = Vec::new();
            let data = table.data.read();
            for (key, key_item) in keys.into_iter().zip(&request.keys) {
                let found = data.store.get(&key);
                let item_units =
                    read_units(found.as_ref().map(|i| item_size(i)).unwrap_or(0), read_kind(request.consistent_read));
                match table.admit(Op::Read, key.hash, item_units, now) {
                    Ok(()) => {}
                    Err(e @ EngineError::Throttled { .. }) => {
                        refusal.get_or_insert(e);
                        unprocessed.push(key_item.clone());
                        continue;
                    }
                    Err(e) => return Err(e),
                }
                admitted_any = true;
                units += item_units;
                if let Some(i) = found {
                    items.push(match &projection {
                        Some(p) => project(&i, p),
                        None => (*i).clone(),
                    });
                }
            }
            drop(data);
            if !unprocessed.is_empty() {
                throttled_tables.push(table.clone());
                out.unprocessed.push((
                    table.name.clone(),
                    KeysAndAttributes {
                        keys: unprocessed,
                        projection: request.projection.clone(),
                        names: request.names.clone(),
                        consistent_read: request.consistent_read,
                    },
                ));
            }
            out.consumed.extend(consumed(input.return_capacity, &table.name, units, 0.0));
            out.responses.push((table.name.clone(), items));
        }
        if !admitted_any {
            if let Some(e) = refusal {
                for t in &throttled_tables {
                    t.note_throttled_request(now);
                }
                return Err(e);
            }
        }
        Ok(out)
    }

    // ----- transactions ---------------------------------------------------

    /// TransactWriteItems: all or nothing.
    pub fn transact_write_items(
        &self,
        input: TransactWriteInput,
        now: Millis,
    ) -> Result<TransactWriteOutput, EngineError> {
        if let Some((token, fingerprint)) = &input.client_token {
            let mut tokens = self.tokens.lock();
            tokens.prune(now);
            if let Some(entry) = tokens.entries.get(token) {
                if entry.fingerprint != *fingerprint {
                    return Err(EngineError::IdempotentParameterMismatch);
                }
                // A replay reads the recorded result: 2 read units, no
                // writes (reference B11; the API model: "Subsequent calls
                // ... return the number of read capacity units consumed").
                let mut output = entry.output.clone();
                for c in &mut output.consumed {
                    c.read_units = IDEMPOTENT_REPLAY_READ_UNITS;
                    c.write_units = 0.0;
                    c.include_table_detail = input.return_capacity == ReturnCapacity::Indexes;
                }
                if input.return_capacity == ReturnCapacity::None {
                    output.consumed.clear();
                }
                return Ok(output);
            }
        }
        // Static validation: tables, keys, sizes, expressions, one action per item.
        struct Planned {
            table_idx: usize,
            key: StoreKey,
            key_item: Item,
            exprs: WriteExprs,
        }
        let mut table_names: Vec<String> = input.actions.iter().map(|a| a.table_name().to_string()).collect();
        table_names.sort();
        table_names.dedup();
        let tables: Vec<Arc<Table>> = table_names.iter().map(|n| self.table(n)).collect::<Result<_, _>>()?;
        let index_of = |name: &str| table_names.binary_search_by(|n| n.as_str().cmp(name)).unwrap_or(0);
        let mut planned = Vec::with_capacity(input.actions.len());
        let mut seen: HashSet<(usize, StoreKey)> = HashSet::new();
        for action in &input.actions {
            let table_idx = index_of(action.table_name());
            let schema = &tables[table_idx].key_schema;
            let (key, key_item, exprs) = match action {
                TransactAction::Put { item, condition, expr, .. } => {
                    let key = schema.key_of_item(item)?;
                    check_item_size(item, ITEM_TOO_BIG)?;
                    (key, schema.key_item(item), parse_write_exprs(condition.as_deref(), None, expr)?)
                }
                TransactAction::Update { key, update, condition, expr, .. } => {
                    let k = schema.key_of_key(key)?;
                    let exprs = parse_write_exprs(condition.as_deref(), Some(update), expr)?;
                    if let Some(u) = &exprs.update {
                        check_update_spares_key(schema, u)?;
                    }
                    (k, key.clone(), exprs)
                }
                TransactAction::Delete { key, condition, expr, .. } => {
                    let k = schema.key_of_key(key)?;
                    (k, key.clone(), parse_write_exprs(condition.as_deref(), None, expr)?)
                }
                TransactAction::ConditionCheck { key, condition, expr, .. } => {
                    let k = schema.key_of_key(key)?;
                    (k, key.clone(), parse_write_exprs(Some(condition), None, expr)?)
                }
            };
            if !seen.insert((table_idx, key.clone())) {
                return Err(EngineError::validation(
                    "Transaction request cannot include multiple operations on one item",
                ));
            }
            planned.push(Planned { table_idx, key, key_item, exprs });
        }
        // Lock every table in name order, then check and apply.
        let mut guards: Vec<RwLockWriteGuard<'_, TableData>> = tables.iter().map(|t| t.data.write()).collect();
        let mut reasons = Vec::with_capacity(planned.len());
        let mut writes: Vec<Option<Option<Item>>> = Vec::with_capacity(planned.len());
        let mut units_per_table = vec![0.0; tables.len()];
        let mut admissions: Vec<Vec<(u128, f64)>> = vec![Vec::new(); tables.len()];
        let mut failed = false;
        for (plan, action) in planned.iter().zip(&input.actions) {
            let data = &guards[plan.table_idx];
            let old = data.store.get(&plan.key);
            let old_size = old.as_ref().map(|o| item_size(o)).unwrap_or(0);
            let return_old = match action {
                TransactAction::Put { return_old_on_failure, .. }
                | TransactAction::Update { return_old_on_failure, .. }
                | TransactAction::Delete { return_old_on_failure, .. }
                | TransactAction::ConditionCheck { return_old_on_failure, .. } => *return_old_on_failure,
            };
            if !condition_holds(&plan.exprs.condition, old.as_deref())? {
                failed = true;
                reasons.push(CancellationReason {
                    code: "ConditionalCheckFailed",
                    message: Some("The conditional request failed".to_string()),
                    item: if return_old { old.map(|o| (*o).clone()) } else { None },
                });
                writes.push(None);
                let units = transactional_write_units(old_size);
                units_per_table[plan.table_idx] += units;
                admissions[plan.table_idx].push((plan.key.hash, units));
                continue;
            }
            let (write, new_size) = match action {
                TransactAction::Put { item, .. } => (Some(Some(item.clone())), item_size(item)),
                TransactAction::Delete { .. } => (Some(None), 0),
                TransactAction::ConditionCheck { .. } => (None, 0),
                TransactAction::Update { .. } => {
                    match apply_update(
                        &tables[plan.table_idx].key_schema,
                        &plan.key_item,
                        old.as_deref(),
                        &plan.exprs.update,
                    ) {
                        Ok(new_item) => {
                            let size = item_size(&new_item);
                            (Some(Some(new_item)), size)
                        }
                        // What only shows when applied (a type mismatch, a
                        // missing operand, an item grown too big) cancels
                        // the transaction with a ValidationError reason.
                        Err(EngineError::Validation(message)) => {
                            failed = true;
                            admissions[plan.table_idx].push((plan.key.hash, transactional_write_units(old_size)));
                            reasons.push(CancellationReason {
                                code: "ValidationError",
                                message: Some(message),
                                item: None,
                            });
                            writes.push(None);
                            continue;
                        }
                        Err(e) => return Err(e),
                    }
                }
            };
            let units = transactional_write_units(old_size.max(new_size));
            units_per_table[plan.table_idx] += units;
            admissions[plan.table_idx].push((plan.key.hash, units));
            reasons.push(CancellationReason { code: "None", message: None, item: None });
            writes.push(write);
        }
        // Capacity: a transaction the model cannot admit is cancelled whole
        // (A34); cancelled transactions are charged too.
        for (table, items) in tables.iter().zip(&admissions) {
            if let Err(e) = table.admit_all(Op::Write, items, now) {
                table.note_throttled_request(now);
                return Err(throttle_cancellation(&e, planned.len()));
            }
        }
        if failed {
            return Err(EngineError::TransactionCanceled { reasons });
        }
        for (plan, write) in planned.into_iter().zip(writes) {
            let data = &mut guards[plan.table_idx];
            let table = &tables[plan.table_idx];
            match write {
                Some(Some(item)) => {
                    let hash = plan.key.hash;
                    let new_size = item_size(&item) as i64;
                    if let Some(old) = data.put(plan.key, Arc::new(item)) {
                        table.note_size(hash, new_size - item_size(&old) as i64, now);
                    } else {
                        table.note_size(hash, new_size, now);
                    }
                }
                Some(None) => {
                    if let Some(old) = data.delete(&plan.key) {
                        table.note_size(plan.key.hash, -(item_size(&old) as i64), now);
                    }
                }
                None => {}
            }
        }
        drop(guards);
        let all = tables
            .iter()
            .zip(&units_per_table)
            .filter_map(|(t, units)| consumed(ReturnCapacity::Total, &t.name, 0.0, *units))
            .collect::<Vec<_>>();
        if let Some((token, fingerprint)) = input.client_token {
            let mut tokens = self.tokens.lock();
            tokens.order.push_back((now, token.clone()));
            let recorded = TransactWriteOutput { consumed: all };
            tokens.entries.insert(token, TokenEntry { fingerprint, completed_at: now, output: recorded });
            tokens.prune(now);
        }
        let output = TransactWriteOutput {
            consumed: tables
                .iter()
                .zip(units_per_table)
                .filter_map(|(t, units)| consumed(input.return_capacity, &t.name, 0.0, units))
                .collect(),
        };
        Ok(output)
    }

    /// TransactGetItems: a consistent snapshot of up to 100 items.
    pub fn transact_get_items(&self, input: TransactGetInput, now: Millis) -> Result<TransactGetOutput, EngineError> {
        let mut table_names: Vec<String> = input.gets.iter().map(|g| g.table_name.clone()).collect();
        table_names.sort();
        table_names.dedup();
        let tables: Vec<Arc<Table>> = table_names.iter().map(|n| self.table(n)).collect::<Result<_, _>>()?;
        let index_of = |name: &str| table_names.binary_search_by(|n| n.as_str().cmp(name)).unwrap_or(0);
        let mut planned = Vec::with_capacity(input.gets.len());
        let mut seen = HashSet::new();
        for get in &input.gets {
            let idx = index_of(&get.table_name);
            let key = tables[idx].key_schema.key_of_key(&get.key)?;
            let projection = parse_projection_only(get.projection.as_deref(), get.names.as_ref())?;
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
            let found = guards[idx].store.get(&key);
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
            items.push(found.map(|i| match &projection {
                Some(p) => project(&i, p),
                None => (*i).clone(),
            }));
        }
        drop(guards);
        Ok(TransactGetOutput {
            items,
            consumed: tables
                .iter()
                .zip(units)
                .filter_map(|(t, u)| consumed(input.return_capacity, &t.name, u, 0.0))
                .collect(),
        })
    }

    // ----- Query and Scan ---------------------------------------------------

    /// Query (when `key_condition` is set) or Scan.
    pub fn read(&self, input: ReadInput, now: Millis) -> Result<ReadOutput, EngineError> {
        let table = self.table(&input.table_name)?;
        if input.index_name.is_some() {
            return Err(EngineError::validation("dynaburst does not support secondary indexes yet: remove IndexName"));
        }
        let select = input.select.unwrap_or(if input.projection.is_some() {
            Select::SpecificAttributes
        } else {
            Select::AllAttributes
        });
        match select {
            Select::AllProjectedAttributes => {
                return Err(EngineError::validation(
                    "One or more parameter values were invalid: Select type ALL_PROJECTED_ATTRIBUTES is not supported for a table",
                ))
            }
            Select::SpecificAttributes if input.projection.is_none() => {
                return Err(EngineError::validation(
                    "One or more parameter values were invalid: Select type SPECIFIC_ATTRIBUTES requires ProjectionExpression or AttributesToGet",
                ))
            }
            // Live captures: Query wraps this one in the constraint envelope,
            // Scan does not.
            Select::Count if input.projection.is_some() => {
                return Err(EngineError::validation(format!(
                    "{}Cannot specify the ProjectionExpression when choosing to get only the Count",
                    if input.key_condition.is_some() { "1 validation error detected: " } else { "" }
                )))
            }
            Select::AllAttributes if input.projection.is_some() => {
                return Err(EngineError::validation(
                    "One or more parameter values were invalid: Cannot specify the ProjectionExpression when choosing to get ALL_ATTRIBUTES",
                ))
            }
            _ => {}
        }
        if input.key_condition.is_none() && input.filter.is_none() && input.projection.is_none() {
            no_expression_args(&input.expr)?;
        }
        let mut ph = Placeholders::new(input.expr.names.as_ref(), input.expr.values.as_ref());
        let key_condition = input.key_condition.as_deref().map(|k| parse_key_condition(k, &mut ph)).transpose()?;
        let filter = input.filter.as_deref().map(|f| parse_condition(f, ExprKind::Filter, &mut ph)).transpose()?;
        let projection = input.projection.as_deref().map(|p| parse_projection(p, &mut ph)).transpose()?;
        ph.check_all_used()?;
        let schema = &table.key_schema;
        let start_key = input
            .exclusive_start_key
            .as_ref()
            .map(|k| {
                schema.key_of_key(k).map_err(|e| match e {
                    EngineError::Validation(m) => {
                        EngineError::Validation(format!("The provided starting key is invalid: {m}"))
                    }
                    other => other,
                })
            })
            .transpose()?;

        let mut start_hash: u128 = 0;
        // The walk: a key range and a direction, plus (for begins_with)
        // a predicate on the sort key.
        let (lower, upper, direction, sort_filter) = if let Some(kc) = key_condition {
            let plan = plan_query(schema, kc)?;
            let pk = plan.partition;
            let hash = pk.partition_hash();
            start_hash = hash;
            let mk = |sort: SortSlot| StoreKey { hash, partition: pk.clone(), sort };
            let (lo, hi) = match plan.sort {
                None => (Bound::Included(mk(SortSlot::Low)), Bound::Included(mk(SortSlot::High))),
                Some(SortRange { lower, upper, .. }) => (
                    map_bound(lower, |v| mk(SortSlot::Value(v)), mk(SortSlot::Low)),
                    map_bound(upper, |v| mk(SortSlot::Value(v)), mk(SortSlot::High)),
                ),
            };
            let direction = if input.forward { Direction::Forward } else { Direction::Backward };
            if let Some(sk) = &start_key {
                if sk.partition != pk {
                    return Err(EngineError::validation(
                        "The provided starting key is outside query boundaries based on provided conditions",
                    ));
                }
            }
            (lo, hi, direction, plan.prefix)
        } else {
            let (lo, hi) = match input.segment {
                Some((segment, total)) => {
                    let (lo, hi) = segment_bounds(segment, total);
                    start_hash = lo;
                    if let Some(sk) = &start_key {
                        if sk.hash < lo || hi.is_some_and(|h| sk.hash >= h) {
                            return Err(EngineError::validation(format!(
                                "The provided Exclusive start key does not map to the provided segment: {segment}"
                            )));
                        }
                    }
                    (
                        Bound::Included(hash_floor(lo)),
                        hi.map(|h| Bound::Excluded(hash_floor(h))).unwrap_or(Bound::Unbounded),
                    )
                }
                None => (Bound::Unbounded, Bound::Unbounded),
            };
            (lo, hi, Direction::Forward, None)
        };
        let (lower, upper) = match (&start_key, direction) {
            (Some(k), Direction::Forward) => (Bound::Excluded(k.clone()), upper),
            (Some(k), Direction::Backward) => (lower, Bound::Excluded(k.clone())),
            (None, _) => (lower, upper),
        };

        let limit = input.limit.unwrap_or(usize::MAX);
        let count_only = select == Select::Count;
        let mut out = ReadOutput { count_only, ..ReadOutput::default() };
        let mut bytes = 0usize;
        let mut failure: Option<EngineError> = None;
        let mut matched_prefix = false;
        // Bytes read per partition hash, for the capacity model.
        let mut read_by_hash: Vec<(u128, usize)> = Vec::new();
        let data = table.data.read();
        data.store.range(bound_ref(&lower), bound_ref(&upper), direction, &mut |key, item| {
            if let Some(prefix) = &sort_filter {
                let matches = match &key.sort {
                    SortSlot::Value(v) => prefix.is_prefix_of(v),
                    _ => false,
                };
                if !matches {
                    // Matching keys are contiguous: stop once past them.
                    return if matched_prefix { ControlFlow::Break(()) } else { ControlFlow::Continue(()) };
                }
                matched_prefix = true;
            }
            out.scanned_count += 1;
            let size = item_size(item);
            bytes += size;
            match read_by_hash.last_mut() {
                Some((h, b)) if *h == key.hash => *b += size,
                _ => read_by_hash.push((key.hash, size)),
            }
            let keep = match &filter {
                Some(f) => match f.evaluate(item) {
                    Ok(k) => k,
                    Err(e) => {
                        failure = Some(e.into());
                        return ControlFlow::Break(());
                    }
                },
                None => true,
            };
            if keep {
                out.count += 1;
                if !count_only {
                    out.items.push(match &projection {
                        Some(p) => project(item, p),
                        None => (**item).clone(),
                    });
                }
            }
            if out.scanned_count >= limit || bytes >= MAX_PAGE_BYTES {
                out.last_evaluated_key = Some(schema.key_item(item));
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        });
        drop(data);
        if let Some(e) = failure {
            return Err(e);
        }
        // Units are rounded once on the sum (B8) and charged to the
        // partitions in proportion to what each served. A page the model
        // refuses fails whole (no partial pages).
        let units = read_units(bytes, read_kind(input.consistent_read));
        let admissions: Vec<(u128, f64)> = if bytes == 0 {
            vec![(read_by_hash.first().map(|(h, _)| *h).unwrap_or(start_hash), units)]
        } else {
            read_by_hash.iter().map(|(h, b)| (*h, units * *b as f64 / bytes as f64)).collect()
        };
        throttled(&table, now, table.admit_all(Op::Read, &admissions, now))?;
        out.consumed = consumed(input.return_capacity, &table.name, units, 0.0);
        Ok(out)
    }
}

fn bound_ref(b: &Bound<StoreKey>) -> Bound<&StoreKey> {
    match b {
        Bound::Included(k) => Bound::Included(k),
        Bound::Excluded(k) => Bound::Excluded(k),
        Bound::Unbounded => Bound::Unbounded,
    }
}

fn map_bound(b: Bound<KeyValue>, f: impl Fn(KeyValue) -> StoreKey, open: StoreKey) -> Bound<StoreKey> {
    match b {
        Bound::Included(v) => Bound::Included(f(v)),
        Bound::Excluded(v) => Bound::Excluded(f(v)),
        Bound::Unbounded => Bound::Included(open),
    }
}

/// A begins_with prefix on the sort key.
enum Prefix {
    S(String),
    B(Vec<u8>),
}

impl Prefix {
    fn is_prefix_of(&self, v: &KeyValue) -> bool {
        match (self, v) {
            (Prefix::S(p), KeyValue::S(s)) => s.as_bytes().starts_with(p.as_bytes()),
            (Prefix::B(p), KeyValue::B(b)) => b.starts_with(p),
            _ => false,
        }
    }
}

struct SortRange {
    lower: Bound<KeyValue>,
    upper: Bound<KeyValue>,
}

struct QueryPlan {
    partition: KeyValue,
    sort: Option<SortRange>,
    prefix: Option<Prefix>,
}

fn condition_type_mismatch() -> EngineError {
    EngineError::validation(
        "One or more parameter values were invalid: Condition parameter type does not match schema type",
    )
}

fn typed_key(attr: &KeyAttr, v: &AttributeValue) -> Result<KeyValue, EngineError> {
    match KeyValue::from_attribute(v) {
        Some(k) if k.key_type() == attr.ty => Ok(k),
        _ => Err(condition_type_mismatch()),
    }
}

/// Matches a parsed key condition against the table's key schema.
fn plan_query(schema: &KeySchema, kc: dynaburst_expr::KeyCondition) -> Result<QueryPlan, EngineError> {
    let mut partition = None;
    let mut sort = None;
    let mut prefix = None;
    for part in kc.parts {
        if part.attribute == schema.hash.name {
            if partition.is_some() {
                return Err(EngineError::validation("KeyConditionExpressions must only contain one condition per key"));
            }
            match &part.op {
                KeyOp::Eq(v) => partition = Some(typed_key(&schema.hash, v)?),
                _ => return Err(EngineError::validation("Query key condition not supported")),
            }
        } else if let Some(range) = schema.range.as_ref().filter(|r| r.name == part.attribute) {
            if sort.is_some() {
                return Err(EngineError::validation("KeyConditionExpressions must only contain one condition per key"));
            }
            let (lower, upper) = match &part.op {
                KeyOp::Eq(v) => {
                    let k = typed_key(range, v)?;
                    (Bound::Included(k.clone()), Bound::Included(k))
                }
                KeyOp::Lt(v) => (Bound::Unbounded, Bound::Excluded(typed_key(range, v)?)),
                KeyOp::Le(v) => (Bound::Unbounded, Bound::Included(typed_key(range, v)?)),
                KeyOp::Gt(v) => (Bound::Excluded(typed_key(range, v)?), Bound::Unbounded),
                KeyOp::Ge(v) => (Bound::Included(typed_key(range, v)?), Bound::Unbounded),
                KeyOp::Between(a, b) => {
                    let (a, b) = (typed_key(range, a)?, typed_key(range, b)?);
                    if a > b {
                        return Err(EngineError::validation(format!(
                            "Invalid KeyConditionExpression: The BETWEEN operator requires upper bound to be greater than or equal to lower bound; lower bound operand: AttributeValue: {{{}:{}}}, upper bound operand: AttributeValue: {{{}:{}}}",
                            a.key_type().descriptor(), key_text(&a), b.key_type().descriptor(), key_text(&b)
                        )));
                    }
                    (Bound::Included(a), Bound::Included(b))
                }
                KeyOp::BeginsWith(v) => {
                    let k = typed_key(range, v)?;
                    let p = match &k {
                        KeyValue::S(s) => Prefix::S(s.clone()),
                        KeyValue::B(b) => Prefix::B(b.clone()),
                        KeyValue::N(_) => {
                            return Err(EngineError::validation(
                                "Invalid KeyConditionExpression: Incorrect operand type for operator or function; operator or function: begins_with, operand type: N",
                            ))
                        }
                    };
                    prefix = Some(p);
                    (Bound::Included(k), Bound::Unbounded)
                }
            };
            sort = Some(SortRange { lower, upper });
        } else {
            return Err(EngineError::validation(format!(
                "Query condition missed key schema element: {}",
                if partition.is_none() {
                    &schema.hash.name
                } else {
                    schema.range.as_ref().map(|r| &r.name).unwrap_or(&schema.hash.name)
                }
            )));
        }
    }
    let Some(partition) = partition else {
        return Err(EngineError::validation(format!(
            "Query condition missed key schema element: {}",
            schema.hash.name
        )));
    };
    Ok(QueryPlan { partition, sort, prefix })
}

fn key_text(k: &KeyValue) -> String {
    match k {
        KeyValue::S(s) => s.clone(),
        KeyValue::N(n) => n.to_string(),
        KeyValue::B(b) => format!("{b:?}"),
    }
}

/// A table id shaped like a UUID, derived from the name, the creation time
/// and a counter (no randomness needed: it only has to be unique here).
fn xxhash_free_uuid(name: &str, now: Millis, counter: u64) -> String {
    // FNV-1a over the inputs, twice with different seeds, for 128 bits.
    let mut h1: u64 = 0xcbf2_9ce4_8422_2325;
    let mut h2: u64 = 0x8422_2325_cbf2_9ce4;
    for b in name.bytes().chain(now.0.to_le_bytes()).chain(counter.to_le_bytes()) {
        h1 = (h1 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        h2 = (h2 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3 ^ 0x5bd1_e995);
    }
    let v = (u128::from(h1) << 64) | u128::from(h2);
    let s = format!("{v:032x}");
    format!("{}-{}-{}-{}-{}", &s[0..8], &s[8..12], &s[12..16], &s[16..20], &s[20..32])
}
