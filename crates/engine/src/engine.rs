//! The engine: the registry of tables and what its operations share. The
//! operations live beside it: `control.rs` (tables), `item.rs` (single
//! items), `batch.rs`, `transact.rs`, `read.rs` (Query and Scan), all
//! writing through the funnel in `write.rs`.

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use dynaburst_capacity::{CapacitySettings, Mode};
use dynaburst_expr::{
    parse_condition, parse_projection, parse_update, project, Condition, ExprKind, Path, Placeholders, UpdateAction,
    UpdateExpr,
};
use dynaburst_model::{item_size, Item, ReadKind, MAX_ITEM_BYTES};
use parking_lot::{Mutex, RwLock};

use crate::error::EngineError;
use crate::index;
use crate::store::{Direction, MemStorage, Storage};
use crate::table::{KeySchema, Table, TableData};
use crate::tokens::TokenCache;
use crate::types::*;

/// Most items a Query or Scan page reads: 1 MB.
pub const MAX_PAGE_BYTES: usize = 1024 * 1024;
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
    /// Set for a global secondary index's own model (the table's report
    /// comes first).
    pub index_name: Option<String>,
    pub mode: Mode,
    pub partitions: Vec<dynaburst_capacity::PartitionInfo>,
    pub warm_throughput: (f64, f64),
    /// Read and write units per second one partition serves.
    pub partition_max: (f64, f64),
    /// Read and write units per second an on-demand table may reach.
    pub table_max: (f64, f64),
    /// An on-demand table's current ceiling (None when provisioned).
    pub on_demand_ceiling: Option<(f64, f64)>,
    pub item_count: u64,
    pub size_bytes: u64,
    /// The table's top keys (None for a GSI's model).
    pub top_keys: Option<crate::insights::TopKeysReport>,
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
    /// Largest item collection (a partition key's items and LSI entries) of
    /// a table with local secondary indexes ([`ITEM_COLLECTION_LIMIT_BYTES`]).
    pub item_collection_limit_bytes: u64,
    /// Item-collection sizes a table whose items live in storage (not in
    /// memory) keeps in memory at most ([`ITEM_COLLECTION_CACHE`]): past
    /// it, sizes not just written are dropped, and measured again from
    /// the storage when a write next touches them.
    pub item_collection_cache: usize,
    /// The budget of the bytes in-memory tables may hold, shared by every
    /// engine (region) of a server; None holds without a bound.
    pub memory: Option<Arc<MemoryBudget>>,
}

/// What one stored item costs the memory budget beyond its DynamoDB size:
/// its share of the ordered set's node (with the key's 16-byte hash), the
/// key's ordered form (the key values again), the compact form's per-attribute bytes
/// (lengths and types) and the allocator's rounding. Measured with
/// `bench/memory/run.sh` (server RSS per item less the mean DynamoDB size):
/// 80 bytes for 1,000,000 items of 24 bytes, 95 for items of 127 bytes
/// and 116 for seed 000's people of 329 bytes (bench/memory/README.md).
pub const STORED_ITEM_OVERHEAD_BYTES: u64 = 128;

/// What a table's items take of the memory budget.
pub(crate) fn memory_held(data: &crate::table::TableData) -> u64 {
    if !data.store.holds_items_in_memory() {
        return 0;
    }
    data.size_bytes + data.item_count * STORED_ITEM_OVERHEAD_BYTES
}

/// A bound on the memory in-memory tables take: every write's growth (its
/// items' DynamoDB sizes plus [`STORED_ITEM_OVERHEAD_BYTES`] each, less
/// what it replaces) is reserved before the commit and refused with
/// LimitExceededException when it would pass the limit, instead of the
/// process growing until the kernel kills it.
#[derive(Debug)]
pub struct MemoryBudget {
    limit: u64,
    used: AtomicU64,
}

impl MemoryBudget {
    /// A budget of `limit` bytes, none used.
    pub fn new(limit: u64) -> MemoryBudget {
        MemoryBudget { limit, used: AtomicU64::new(0) }
    }

    /// The budget's bound, in bytes.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Bytes the tables hold by the budget's count.
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }

    /// Takes `bytes` from the budget, or says how much is used when they
    /// do not fit.
    pub(crate) fn reserve(&self, bytes: u64) -> Result<(), EngineError> {
        self.used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                used.checked_add(bytes).filter(|total| *total <= self.limit)
            })
            .map(|_| ())
            .map_err(|used| {
                EngineError::LimitExceeded(format!(
                    "dynaburst's in-memory tables hold {used} bytes and this write needs {bytes} more, past the \
                     memory budget of {} bytes (serve --max-memory). Raise --max-memory if the machine has the \
                     memory, or delete items or tables; serving with --data-dir keeps tables on disk but holds \
                     their items in memory too.",
                    self.limit
                ))
            })
    }

    /// Gives back (negative) or takes (positive) `delta` bytes whatever
    /// the bound: what a commit's writes turned out to replace.
    pub(crate) fn adjust(&self, delta: i64) {
        let _ = self.used.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
            Some(if delta < 0 { used.saturating_sub(delta.unsigned_abs()) } else { used.saturating_add(delta as u64) })
        });
    }
}

/// DynamoDB's item-collection limit: 10 GB (S61).
pub const ITEM_COLLECTION_LIMIT_BYTES: u64 = 10 * 1024 * 1024 * 1024;
/// Item-collection sizes kept in memory for each durable table with LSIs
/// (about 80 bytes each: 5 MiB a table).
pub const ITEM_COLLECTION_CACHE: usize = 65_536;

impl EngineConfig {
    /// us-east-1, account 000000000000 (as DynamoDB Local), and the capacity
    /// model on with DynamoDB's numbers.
    pub fn local() -> EngineConfig {
        EngineConfig {
            region: "us-east-1".to_string(),
            account_id: "000000000000".to_string(),
            capacity: Some(CapacitySettings::dynamodb()),
            item_collection_limit_bytes: ITEM_COLLECTION_LIMIT_BYTES,
            item_collection_cache: ITEM_COLLECTION_CACHE,
            memory: None,
        }
    }
}
/// The DynamoDB engine. Thread-safe: every operation takes `&self`.
///
/// Consistency: a single-item operation holds its table's write lock for
/// the read-check-write, so it is atomic. Batches and transactions take the
/// write locks of all their tables in name order before reading anything
/// and release them after one atomic commit, so they serialize and no
/// reader sees half of one.
pub struct Engine {
    pub(crate) config: EngineConfig,
    pub(crate) tables: RwLock<BTreeMap<String, Arc<Table>>>,
    pub(crate) storage: Arc<dyn Storage>,
    pub(crate) tokens: Mutex<TokenCache>,
    pub(crate) table_counter: AtomicU64,
    /// On-demand backups, point-in-time settings and restore summaries
    /// (`backup.rs`); locked after a table's data when both are held.
    pub(crate) backups: Mutex<crate::backup::Backups>,
    /// The streams of deleted tables, readable until their retention
    /// passes (`stream.rs`); locked last (after the table map and a table's
    /// data, never before another lock).
    pub(crate) retired_streams: Mutex<crate::stream::RetiredStreams>,
}

impl Engine {
    /// An empty engine on a fresh in-memory storage.
    pub fn new(config: EngineConfig) -> Engine {
        Engine {
            config,
            tables: RwLock::new(BTreeMap::new()),
            storage: Arc::new(MemStorage::new()),
            tokens: Mutex::new(TokenCache::default()),
            table_counter: AtomicU64::new(0),
            backups: Mutex::new(crate::backup::Backups::default()),
            retired_streams: Mutex::new(crate::stream::RetiredStreams::default()),
        }
    }

    /// An engine over `storage`, with every table its catalog holds (their
    /// capacity models, when on, start at `now`).
    pub fn open(config: EngineConfig, storage: Arc<dyn Storage>, now: Millis) -> Result<Engine, EngineError> {
        let mut tables = BTreeMap::new();
        // Backups and notes about tables are hidden catalog entries.
        let (hidden, metas): (Vec<_>, Vec<_>) =
            storage.list_tables()?.into_iter().partition(|m| crate::backup::is_hidden(&m.name));
        let (backups, unfinished, half_restored) = crate::backup::Backups::load(&hidden)?;
        for name in unfinished {
            storage.drop_table(&name)?;
        }
        let (dropped, metas): (Vec<_>, Vec<_>) = metas
            .into_iter()
            .partition(|m| half_restored.iter().any(|(name, id)| *name == m.name && *id == m.table_id));
        for meta in dropped {
            storage.drop_table(&meta.name)?;
        }
        for meta in metas {
            let store = storage.open_table(&meta.name)?;
            // Entries of an index the catalog does not name: a GSI whose
            // backfill a crash cut short (UpdateTable records the index
            // only once its entries are written). They go now.
            for stale in storage.stored_index_names(&meta.name)? {
                if !meta.indexes.iter().any(|d| d.name == stale) {
                    storage.drop_index(&meta.name, &stale)?;
                }
            }
            // Count the items unless the storage keeps the counts. A store
            // that keeps index entries keeps their counts too, so start-up
            // reads neither items nor entries; otherwise the entries are
            // rebuilt once here, item by item (never all the items in
            // memory at once).
            let mut data = TableData::new(store, (0, 0), &meta.indexes, config.capacity.as_ref(), now);
            let stats = storage.table_stats(&meta.name)?;
            let stored = data.store.stores_index_entries();
            let index_sizes: Option<Vec<Vec<crate::store::IndexRange>>> = match stored {
                true => meta
                    .indexes
                    .iter()
                    .map(|d| storage.index_sizes(&meta.name, &d.name))
                    .collect::<Result<Option<Vec<_>>, _>>()?,
                false => None,
            };
            // The items' sizes by partition-hash range, for the capacity
            // model's partition sizes (a walk measures them itself).
            let mut sizes = storage.table_sizes(&meta.name)?;
            match (stats, index_sizes) {
                (Some(counts), _) if meta.indexes.is_empty() => (data.item_count, data.size_bytes) = counts,
                (Some(counts), Some(index_sizes)) => {
                    (data.item_count, data.size_bytes) = counts;
                    for (ix, ranges) in data.indexes.iter_mut().zip(index_sizes) {
                        index::restore_sizes(ix, &ranges, now);
                    }
                    // Item collections are measured when a write first
                    // touches them.
                    data.collections_unmeasured = data.has_local_indexes();
                }
                _ => {
                    let mut walked = SizeRanges::default();
                    let local = data.has_local_indexes();
                    let TableData { store, indexes, collections, item_count, size_bytes, .. } = &mut data;
                    store.range(crate::store::ALL_KEYS, Direction::Forward, &mut |key, item| {
                        *item_count += 1;
                        *size_bytes += item_size(item) as u64;
                        walked.add(key.hash, item_size(item) as u64);
                        let mut collection = item_size(item) as u64;
                        for change in index::changes(indexes, &meta.key_schema, key, None, Some(item)) {
                            let ix = change.index;
                            if indexes[ix].def.kind == index::IndexKind::Local {
                                collection += change.insert.as_ref().map_or(0, |(_, _, n)| *n as u64);
                            }
                            index::apply(&mut indexes[ix], change, stored, now);
                        }
                        if local {
                            *collections.entry(key.partition.clone()).or_insert(0) += collection;
                        }
                        ControlFlow::Continue(())
                    })?;
                    sizes = sizes.or(Some(walked.ranges()));
                }
            }
            // A stream that was on goes on with a fresh log (records are
            // not stored).
            if let Some(stream) = meta.settings.stream.as_ref().filter(|s| s.enabled) {
                data.streams.push(crate::stream::StreamLog::new(stream.label.clone(), stream.view, now));
            }
            let name = meta.name.clone();
            let table = Table::from_meta(meta, data, config.capacity.clone(), now);
            // The partitions' sizes as they were (splitting for size again
            // where a partition holds more than a partition may).
            for (hash, bytes) in sizes.unwrap_or_default() {
                table.note_size(hash, i64::try_from(bytes).unwrap_or(i64::MAX), now);
            }
            tables.insert(name, Arc::new(table));
        }
        let counter = tables.len() as u64;
        // Point-in-time history is kept from now on for the tables with
        // recovery on (what came before the restart is not).
        for (name, table) in &tables {
            if backups.pitr.get(name).is_some_and(|p| p.table_id == table.table_id) {
                table.data.write().pitr = Some(crate::backup::PitrLog::new(now));
            }
        }
        if let Some(memory) = &config.memory {
            let held: u64 = tables.values().map(|t| memory_held(&t.data.read())).sum();
            memory.adjust(held as i64);
            for backup in backups.backups.values() {
                if storage.open_table(backup.storage_name())?.holds_items_in_memory() {
                    memory.adjust(backup.memory_held() as i64);
                }
            }
        }
        Ok(Engine {
            config,
            tables: RwLock::new(tables),
            storage,
            tokens: Mutex::new(TokenCache::default()),
            table_counter: AtomicU64::new(counter),
            backups: Mutex::new(backups),
            retired_streams: Mutex::new(crate::stream::RetiredStreams::default()),
        })
    }

    /// What a commit enforces.
    pub(crate) fn commit_limits(&self) -> crate::write::CommitLimits<'_> {
        crate::write::CommitLimits {
            item_collection_bytes: self.config.item_collection_limit_bytes,
            item_collection_cache: self.config.item_collection_cache,
            memory: self.config.memory.as_deref(),
        }
    }

    /// The engine's settings.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    pub(crate) fn table(&self, name: &str) -> Result<Arc<Table>, EngineError> {
        let name = self.resolve_name(name)?;
        self.tables.read().get(name).cloned().ok_or_else(EngineError::table_not_found)
    }

    /// The table, for the table-level operations, whose not-found message
    /// names it.
    pub(crate) fn table_named(&self, name: &str) -> Result<Arc<Table>, EngineError> {
        let name = self.resolve_name(name)?;
        self.tables.read().get(name).cloned().ok_or_else(|| EngineError::table_not_found_named(name))
    }

    /// A table name as given, or the name inside the table's ARN: DynamoDB
    /// accepts a same-account, same-region table ARN wherever it takes a
    /// TableName (S163, S164); an index, stream or malformed ARN is refused,
    /// and another region's ARN too (S168).
    pub fn resolve_name<'a>(&self, name: &'a str) -> Result<&'a str, EngineError> {
        if !name.starts_with("arn:") {
            return Ok(name);
        }
        let malformed =
            || EngineError::validation(format!("Invalid TableArn: Invalid ResourceArn provided as input {name}"));
        let arn = crate::control::Arn::parse(name).filter(|a| a.service == "dynamodb").ok_or_else(malformed)?;
        let (region, account) = (arn.region, arn.account);
        let table = arn.table().ok_or_else(malformed)?;
        // As DynamoDB answers today (ack-api-quirks DDB-TABLE-011 and -442,
        // live 2026-10): another region's ARN fails the TableName member's
        // own validation, another account's is denied.
        if region != self.config.region {
            return Err(EngineError::validation(format!(
                "1 validation error detected: Invalid AWS region in '{name}'"
            )));
        }
        if account != self.config.account_id {
            return Err(EngineError::AccessDenied("Access is denied".to_string()));
        }
        Ok(table)
    }

    /// The named table, if it exists (for layers that keep per-table state).
    pub fn get_table(&self, name: &str) -> Option<Arc<Table>> {
        self.tables.read().get(name).cloned()
    }

    /// The capacity model's view of every table, advanced to `now`: what
    /// /metrics shows and the bench charts. Empty when the model is off.
    pub fn capacity_reports(&self, now: Millis) -> Vec<CapacityReport> {
        self.capacity_reports_since(now, None)
    }

    /// [`Engine::capacity_reports`] with only the seconds at or after
    /// `since` (the web view polls for what is new).
    pub fn capacity_reports_since(&self, now: Millis, since: Option<u64>) -> Vec<CapacityReport> {
        let tables: Vec<Arc<Table>> = self.tables.read().values().cloned().collect();
        let mut out = Vec::with_capacity(tables.len());
        for table in tables {
            let mut capacity = table.capacity.lock();
            let Some(model) = capacity.as_mut() else { continue };
            let mut report = report_of(&table.name, None, model, now, since);
            drop(capacity);
            let top_keys = table.insights.lock().top.report(now);
            let (item_count, size_bytes) = {
                let data = table.data.read();
                (data.item_count, data.size_bytes)
            };
            report.item_count = item_count;
            report.size_bytes = size_bytes;
            report.top_keys = Some(top_keys);
            out.push(report);
            // Then the GSIs (data lock before their capacity locks).
            let data = table.data.read();
            for ix in &data.indexes {
                if let Some(model) = ix.capacity.lock().as_mut() {
                    let mut report = report_of(&table.name, Some(&ix.def.name), model, now, since);
                    report.item_count = ix.item_count;
                    report.size_bytes = ix.size_bytes;
                    out.push(report);
                }
            }
        }
        out
    }
}

/// One capacity model's report, advanced to `now`, with the seconds at or
/// after `since`.
fn report_of(
    table: &str,
    index: Option<&str>,
    model: &mut dynaburst_capacity::TableCapacity,
    now: Millis,
    since: Option<u64>,
) -> CapacityReport {
    model.tick(now);
    let m = model.metrics();
    let metrics = dynaburst_capacity::Metrics {
        seconds: m.seconds.iter().filter(|s| since.is_none_or(|t| s.second >= t)).cloned().collect(),
        splits: m.splits.clone(),
        throttles: m.throttles.clone(),
        total_read_units: m.total_read_units,
        total_write_units: m.total_write_units,
        total_throttled_requests: m.total_throttled_requests,
        total_throttled_items: m.total_throttled_items,
    };
    let settings = model.settings();
    CapacityReport {
        table_name: table.to_string(),
        index_name: index.map(str::to_string),
        mode: model.mode(),
        partitions: model.partitions(),
        warm_throughput: model.warm_throughput(),
        partition_max: (settings.partition_read_max, settings.partition_write_max),
        table_max: (settings.table_max_read, settings.table_max_write),
        on_demand_ceiling: model.on_demand_ceiling(),
        item_count: 0,
        size_bytes: 0,
        top_keys: None,
        metrics,
    }
}

/// Records a throttled request and passes the error on.
pub(crate) fn throttled<T>(table: &Table, now: Millis, result: Result<T, EngineError>) -> Result<T, EngineError> {
    if let Err(EngineError::Throttled { .. }) = &result {
        table.note_throttled_request(now);
    }
    result
}

/// The cancellation of a transaction the capacity model refused: every
/// item carries the throttling code (A34).
pub(crate) fn throttle_cancellation(e: &EngineError, items: usize) -> EngineError {
    let (code, message) = match e {
        EngineError::Throttled { provisioned: true, .. } => ("ProvisionedThroughputExceeded", e.message()),
        _ => ("ThrottlingError", e.message()),
    };
    EngineError::TransactionCanceled {
        reasons: (0..items).map(|_| CancellationReason { code, message: Some(message.clone()), item: None }).collect(),
    }
}

pub(crate) fn consumed(rc: ReturnCapacity, table: &str, read: f64, write: f64) -> Option<ConsumedCapacity> {
    match rc {
        ReturnCapacity::None => None,
        ReturnCapacity::Total | ReturnCapacity::Indexes => Some(ConsumedCapacity {
            table_name: table.to_string(),
            read_units: read,
            write_units: write,
            include_table_detail: rc == ReturnCapacity::Indexes,
            indexes: Vec::new(),
        }),
    }
}

pub(crate) fn read_kind(consistent: bool) -> ReadKind {
    if consistent {
        ReadKind::Strong
    } else {
        ReadKind::Eventual
    }
}

/// The item's size, refused with `message` when over the limit.
pub(crate) fn check_item_size(item: &Item, message: &str) -> Result<usize, EngineError> {
    let size = item_size(item);
    if size > MAX_ITEM_BYTES {
        return Err(EngineError::validation(message));
    }
    Ok(size)
}

pub(crate) const ITEM_TOO_BIG: &str = "Item size has exceeded the maximum allowed size";
pub(crate) const UPDATE_TOO_BIG: &str = "Item size to update has exceeded the maximum allowed size";

/// Expressions of one write request, parsed and checked together.
pub(crate) struct WriteExprs {
    pub(crate) condition: Option<Condition>,
    pub(crate) update: Option<UpdateExpr>,
}

impl WriteExprs {
    /// An update expression made only of REMOVE and DELETE actions: on an
    /// item that does not exist it writes nothing (DynamoDB does not create
    /// an item to remove attributes from), where SET or ADD, or no
    /// expression at all, create it.
    pub(crate) fn only_removes(&self) -> bool {
        self.update.as_ref().is_some_and(|u| {
            !u.actions.is_empty()
                && u.actions.iter().all(|a| matches!(a, UpdateAction::Remove { .. } | UpdateAction::Delete { .. }))
        })
    }
}

pub(crate) fn no_expression_args(expr: &ExprArgs) -> Result<(), EngineError> {
    if expr.names.is_some() {
        return Err(EngineError::validation("ExpressionAttributeNames can only be specified when using expressions"));
    }
    if expr.values.is_some() {
        return Err(EngineError::validation("ExpressionAttributeValues can only be specified when using expressions"));
    }
    Ok(())
}

pub(crate) fn parse_write_exprs(
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

pub(crate) fn parse_projection_only(
    projection: Option<&str>,
    names: Option<&Names>,
) -> Result<Option<Vec<Path>>, EngineError> {
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

pub(crate) fn condition_holds(condition: &Option<Condition>, current: Option<&Item>) -> Result<bool, EngineError> {
    match condition {
        None => Ok(true),
        Some(c) => {
            let empty = Item::new();
            Ok(c.evaluate(current.unwrap_or(&empty))?)
        }
    }
}

/// Applies an update to the current item (or a new one made of the key),
/// checking that no key attribute is touched and the result fits; returns
/// the new item and its size.
pub(crate) fn apply_update(
    schema: &KeySchema,
    key: &Item,
    current: Option<&Item>,
    update: &Option<UpdateExpr>,
) -> Result<(Item, usize), EngineError> {
    let mut new_item = match current {
        Some(c) => c.clone(),
        None => key.clone(),
    };
    if let Some(u) = update {
        check_update_spares_key(schema, u)?;
        u.apply(&mut new_item)?;
    }
    let size = check_item_size(&new_item, UPDATE_TOO_BIG)?;
    Ok((new_item, size))
}

/// Refuses a nested path (`k.x`, `k[0]`) into a key attribute of the table
/// (`Key: k`) or of one of its indexes (`IndexKey: k`): key attributes are
/// scalars (S34). Used on projections, filters and updates.
pub(crate) fn check_scalar_keys<'p>(
    table: &Table,
    paths: impl IntoIterator<Item = &'p Path>,
) -> Result<(), EngineError> {
    let nested: Vec<&str> = paths.into_iter().filter(|p| p.0.len() > 1).filter_map(Path::top_level_name).collect();
    if nested.is_empty() {
        return Ok(());
    }
    let refuse = |role: &str, name: &str| {
        EngineError::validation(format!(
            "Key attributes must be scalars; list random access '[]' and map lookup '.' are not allowed: {role}: {name}"
        ))
    };
    if let Some(name) = nested.iter().find(|n| table.key_schema.is_key_attribute(n)) {
        return Err(refuse("Key", name));
    }
    let defs = table.index_defs();
    if let Some(name) = nested.iter().find(|n| defs.iter().any(|d| d.schema.is_key_attribute(n))) {
        return Err(refuse("IndexKey", name));
    }
    Ok(())
}

/// An update may not write into an index key attribute's value (S34); a
/// table key attribute is refused whole by `check_update_spares_key`.
pub(crate) fn check_update_spares_index_keys(table: &Table, update: &Option<UpdateExpr>) -> Result<(), EngineError> {
    let Some(update) = update else { return Ok(()) };
    let paths = update.paths();
    let schema = &table.key_schema;
    check_scalar_keys(table, paths.iter().filter(|p| p.top_level_name().is_some_and(|n| !schema.is_key_attribute(n))))
}

/// An update may not write or remove a key attribute.
pub(crate) fn check_update_spares_key(schema: &KeySchema, update: &UpdateExpr) -> Result<(), EngineError> {
    for name in update.top_level_names() {
        if schema.is_key_attribute(&name) {
            return Err(EngineError::validation(format!(
                "One or more parameter values were invalid: Cannot update attribute {name}. This attribute is part of the key"
            )));
        }
    }
    Ok(())
}

pub(crate) fn update_return_values(
    rv: ReturnValues,
    old: Option<&Item>,
    new: &Item,
    update: &Option<UpdateExpr>,
) -> Option<Item> {
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

pub(crate) fn check_put_return_values(rv: ReturnValues, op: &str) -> Result<(), EngineError> {
    match rv {
        ReturnValues::None | ReturnValues::AllOld => Ok(()),
        _ => Err(EngineError::validation(format!("ReturnValues can only be ALL_OLD or NONE{op}"))),
    }
}

/// The projected copy of a stored item.
pub(crate) fn projected(item: &Item, projection: &Option<Vec<Path>>) -> Item {
    match projection {
        Some(p) => project(item, p),
        None => item.clone(),
    }
}

/// Items' bytes by partition-hash range ([`crate::store::SIZE_RANGE_BITS`] leading bits
/// of the hash), measured by walking a table's items at start-up.
#[derive(Default)]
struct SizeRanges(BTreeMap<u128, u64>);

impl SizeRanges {
    fn add(&mut self, hash: u128, bytes: u64) {
        let start = crate::store::size_range_start(hash);
        *self.0.entry(start).or_insert(0) += bytes;
    }

    fn ranges(self) -> Vec<(u128, u64)> {
        self.0.into_iter().collect()
    }
}
