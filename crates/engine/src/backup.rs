//! On-demand backups (CreateBackup, DescribeBackup, ListBackups,
//! DeleteBackup, RestoreTableFromBackup) and the point-in-time recovery
//! setting (DescribeContinuousBackups, UpdateContinuousBackups).
//!
//! Everything lives behind the storage seam, so a durable backend keeps it
//! with nothing of its own to add: a backup is a **hidden table** of the
//! storage's catalog, named `#backup/...` (`#` cannot start a DynamoDB
//! table name), holding the snapshot's items; its `TableMeta` is the source
//! table's at the moment of the snapshot, its tags carrying the backup's
//! own details (name, time, status, counts). The point-in-time recovery
//! setting of a table and the restore summary of a restored table are
//! hidden tables without items (`#pitr/<table>`, `#restored/<table>`).
//! `Engine::open` loads them instead of serving them as tables.
//!
//! A snapshot is consistent: it is copied under the source table's read
//! lock, so no write lands halfway through, in batches of
//! [`SNAPSHOT_BATCH_ITEMS`] (memory stays bounded whatever the table's
//! size). A backup is recorded CREATING first and AVAILABLE once every item
//! is copied; one still CREATING at start-up was cut short by a crash and
//! is dropped. A restore creates the table as CreateTable would (from the
//! backup's settings and the overrides) and writes the items through the
//! write funnel's commit, so indexes, counts and the capacity model's
//! partition sizes are right, again in bounded batches.

use std::collections::BTreeMap;
use std::ops::{Bound, ControlFlow};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use dynaburst_model::{item_size, Item, Millis, ScalarType};

use crate::engine::Engine;
use crate::error::EngineError;
use crate::index::{IndexDef, IndexKind, IndexProjection};
use crate::store::{Direction, StoreKey, TableMeta, TableStore};
use crate::table::{Table, TableSettings};
use crate::types::{BillingMode, CreateTableInput, IndexSpec, KeyRole, ProjectionType, TableDescription};

/// What starts the storage name of everything here that is not a table.
pub const HIDDEN_PREFIX: char = '#';
const BACKUP_PREFIX: &str = "#backup/";
const PITR_PREFIX: &str = "#pitr/";
const RESTORED_PREFIX: &str = "#restored/";
/// Items a snapshot copies, or a restore writes, per storage commit.
pub const SNAPSHOT_BATCH_ITEMS: usize = 1000;
/// Most backups one ListBackups page returns (its Limit's maximum).
pub const MAX_LIST_BACKUPS: usize = 100;
/// RecoveryPeriodInDays when UpdateContinuousBackups names none, and its
/// maximum.
pub const MAX_RECOVERY_PERIOD_DAYS: u32 = 35;
/// Milliseconds in a day.
const DAY_MS: u64 = 24 * 60 * 60 * 1000;
/// How far LatestRestorableDateTime runs behind now (S155: about five
/// minutes).
pub const PITR_LAG_MS: u64 = 5 * 60 * 1000;

/// True when a storage table name is one of this module's, not a table's.
pub fn is_hidden(name: &str) -> bool {
    name.starts_with(HIDDEN_PREFIX)
}

/// BackupStatus.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackupStatus {
    Creating,
    Available,
    Deleted,
}

impl BackupStatus {
    /// DynamoDB's name.
    pub fn name(self) -> &'static str {
        match self {
            BackupStatus::Creating => "CREATING",
            BackupStatus::Available => "AVAILABLE",
            BackupStatus::Deleted => "DELETED",
        }
    }
}

/// BackupType: USER (CreateBackup) or SYSTEM (made by DeleteTable of a
/// table with point-in-time recovery on). AWS_BACKUP backups are made by
/// AWS Backup, which is not here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackupKind {
    User,
    System,
}

impl BackupKind {
    /// DynamoDB's name.
    pub fn name(self) -> &'static str {
        match self {
            BackupKind::User => "USER",
            BackupKind::System => "SYSTEM",
        }
    }
}

/// How long DynamoDB keeps a SYSTEM backup: 35 days from its creation
/// (BackupExpiryDateTime).
pub const SYSTEM_BACKUP_RETENTION_MS: u64 = 35 * DAY_MS;
/// What ends a SYSTEM backup's name: `<table>$DeletedTableBackup`.
pub const SYSTEM_BACKUP_SUFFIX: &str = "$DeletedTableBackup";

/// One on-demand backup.
#[derive(Clone, Debug, PartialEq)]
pub struct Backup {
    pub arn: String,
    pub name: String,
    pub created_at: Millis,
    pub status: BackupStatus,
    pub kind: BackupKind,
    /// The snapshot's item count and the sum of its items' sizes.
    pub item_count: u64,
    pub size_bytes: u64,
    /// The source table as it was at the snapshot (its tags are not kept:
    /// a restore does not restore them).
    pub source: TableMeta,
    /// The hidden storage table holding the items.
    storage_name: String,
}

// Tags of a backup's hidden catalog entry.
const TAG_NAME: &str = "backup:name";
const TAG_ARN: &str = "backup:arn";
const TAG_CREATED: &str = "backup:created";
const TAG_STATUS: &str = "backup:status";
const TAG_ITEMS: &str = "backup:items";
const TAG_BYTES: &str = "backup:bytes";
const TAG_TABLE: &str = "backup:table";
const TAG_KIND: &str = "backup:type";

fn tag<'a>(tags: &'a [(String, String)], key: &str) -> Option<&'a str> {
    tags.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

fn tag_u64(tags: &[(String, String)], key: &str) -> Result<u64, EngineError> {
    tag(tags, key)
        .and_then(|v| v.parse().ok())
        .ok_or(EngineError::Internal(crate::store::StoreError::Corrupt { what: "backup catalog entry" }))
}

impl Backup {
    /// What the snapshot takes of an in-memory store's memory budget, as
    /// a table's items do.
    pub(crate) fn memory_held(&self) -> u64 {
        self.size_bytes + self.item_count * crate::engine::STORED_ITEM_OVERHEAD_BYTES
    }

    /// BackupExpiryDateTime: a SYSTEM backup's, 35 days after its creation,
    /// when the expirer drops it ([`Engine::drop_expired_backups`]).
    pub fn expires_at(&self) -> Option<Millis> {
        (self.kind == BackupKind::System).then(|| Millis(self.created_at.0.saturating_add(SYSTEM_BACKUP_RETENTION_MS)))
    }

    /// The hidden storage table holding the snapshot.
    pub(crate) fn storage_name(&self) -> &str {
        &self.storage_name
    }

    /// The hidden catalog entry recording this backup.
    fn to_meta(&self) -> TableMeta {
        let mut tags = vec![
            (TAG_NAME.to_string(), self.name.clone()),
            (TAG_ARN.to_string(), self.arn.clone()),
            (TAG_CREATED.to_string(), self.created_at.0.to_string()),
            (TAG_STATUS.to_string(), self.status.name().to_string()),
            (TAG_ITEMS.to_string(), self.item_count.to_string()),
            (TAG_BYTES.to_string(), self.size_bytes.to_string()),
            (TAG_TABLE.to_string(), self.source.name.clone()),
        ];
        // Absent for USER, as in entries written before SYSTEM backups.
        if self.kind == BackupKind::System {
            tags.push((TAG_KIND.to_string(), self.kind.name().to_string()));
        }
        TableMeta { name: self.storage_name.clone(), tags, ..self.source.clone() }
    }

    /// The backup a hidden catalog entry records.
    fn from_meta(meta: &TableMeta) -> Result<Backup, EngineError> {
        let corrupt = || EngineError::Internal(crate::store::StoreError::Corrupt { what: "backup catalog entry" });
        let status = match tag(&meta.tags, TAG_STATUS) {
            Some("AVAILABLE") => BackupStatus::Available,
            Some("CREATING") => BackupStatus::Creating,
            _ => return Err(corrupt()),
        };
        Ok(Backup {
            arn: tag(&meta.tags, TAG_ARN).ok_or_else(corrupt)?.to_string(),
            name: tag(&meta.tags, TAG_NAME).ok_or_else(corrupt)?.to_string(),
            created_at: Millis(tag_u64(&meta.tags, TAG_CREATED)?),
            status,
            kind: match tag(&meta.tags, TAG_KIND) {
                None | Some("USER") => BackupKind::User,
                Some("SYSTEM") => BackupKind::System,
                Some(_) => return Err(corrupt()),
            },
            item_count: tag_u64(&meta.tags, TAG_ITEMS)?,
            size_bytes: tag_u64(&meta.tags, TAG_BYTES)?,
            source: TableMeta {
                name: tag(&meta.tags, TAG_TABLE).ok_or_else(corrupt)?.to_string(),
                tags: Vec::new(),
                ..meta.clone()
            },
            storage_name: meta.name.clone(),
        })
    }
}

/// A table's point-in-time recovery setting, when enabled.
#[derive(Clone, Debug, PartialEq)]
pub struct PointInTimeRecovery {
    /// The table it belongs to (a table of the same name created later
    /// starts with it off).
    pub table_id: String,
    pub enabled_at: Millis,
    pub recovery_period_days: u32,
}

/// DescribeContinuousBackups' answer.
#[derive(Clone, Debug, PartialEq)]
pub struct ContinuousBackups {
    /// None when point-in-time recovery is off.
    pub pitr: Option<PointInTimeRecovery>,
    /// Earliest and latest restorable times, when on.
    pub restorable: Option<(Millis, Millis)>,
}

/// A restored table's RestoreSummary.
#[derive(Clone, Debug, PartialEq)]
pub struct RestoreSummary {
    pub source_backup_arn: String,
    pub source_table_arn: String,
    /// RestoreDateTime: the time of the data restored (the backup's
    /// creation), not the time of the restore.
    pub restored_at: Millis,
    pub in_progress: bool,
}

const TAG_PITR_DAYS: &str = "pitr:days";
const TAG_RESTORE_BACKUP: &str = "restore:backup";
const TAG_RESTORE_TABLE: &str = "restore:table";
/// "false" while a restore writes the items: a table whose restore a crash
/// cut short is dropped at start-up (its restore was never answered).
const TAG_RESTORE_DONE: &str = "restore:done";

/// The backup registry, point-in-time settings and restore summaries the
/// engine keeps in memory (the storage holds them too).
#[derive(Default)]
pub(crate) struct Backups {
    /// By ARN.
    pub(crate) backups: BTreeMap<String, Backup>,
    /// By table name.
    pub(crate) pitr: BTreeMap<String, PointInTimeRecovery>,
    /// By table name: (table id, summary).
    pub(crate) restored: BTreeMap<String, (String, RestoreSummary)>,
    /// The latest backup's creation time: each backup is created at least a
    /// millisecond after the one before, so creation times (and the ARNs'
    /// timestamps) order backups as they were made.
    pub(crate) last_created: Millis,
}

impl Backups {
    /// What the hidden catalog entries record. What a crash cut short is
    /// returned apart, to be dropped: backups still CREATING, and restores
    /// still writing their items (the note, and the table when its id is
    /// the note's, as (name, table id)).
    #[allow(clippy::type_complexity)]
    pub(crate) fn load(hidden: &[TableMeta]) -> Result<(Backups, Vec<String>, Vec<(String, String)>), EngineError> {
        let mut out = Backups::default();
        let mut unfinished = Vec::new();
        let mut half_restored = Vec::new();
        for meta in hidden {
            if meta.name.starts_with(BACKUP_PREFIX) {
                let backup = Backup::from_meta(meta)?;
                if backup.status == BackupStatus::Available {
                    out.last_created = out.last_created.max(backup.created_at);
                    out.backups.insert(backup.arn.clone(), backup);
                } else {
                    unfinished.push(meta.name.clone());
                }
            } else if let Some(table) = meta.name.strip_prefix(PITR_PREFIX) {
                let days = tag_u64(&meta.tags, TAG_PITR_DAYS)? as u32;
                out.pitr.insert(
                    table.to_string(),
                    PointInTimeRecovery {
                        table_id: meta.table_id.clone(),
                        enabled_at: meta.created_at,
                        recovery_period_days: days,
                    },
                );
            } else if let Some(table) = meta.name.strip_prefix(RESTORED_PREFIX) {
                if tag(&meta.tags, TAG_RESTORE_DONE) == Some("false") {
                    unfinished.push(meta.name.clone());
                    half_restored.push((table.to_string(), meta.table_id.clone()));
                    continue;
                }
                let summary = RestoreSummary {
                    source_backup_arn: tag(&meta.tags, TAG_RESTORE_BACKUP).unwrap_or_default().to_string(),
                    source_table_arn: tag(&meta.tags, TAG_RESTORE_TABLE).unwrap_or_default().to_string(),
                    restored_at: meta.created_at,
                    in_progress: false,
                };
                out.restored.insert(table.to_string(), (meta.table_id.clone(), summary));
            }
        }
        Ok((out, unfinished, half_restored))
    }
}

/// ListBackups' input.
#[derive(Clone, Debug, Default)]
pub struct ListBackupsInput {
    /// Only this table's backups (a name or ARN).
    pub table_name: Option<String>,
    /// Created at or after, and before.
    pub lower: Option<Millis>,
    pub upper: Option<Millis>,
    /// BackupType: which kinds to list (USER alone by default; AWS_BACKUP
    /// names neither, there being none here).
    pub user: bool,
    pub system: bool,
    pub limit: usize,
    pub exclusive_start: Option<String>,
}

/// One page of ListBackups.
#[derive(Clone, Debug)]
pub struct BackupPage {
    pub backups: Vec<Backup>,
    pub last_evaluated: Option<String>,
}

/// RestoreTableFromBackup's input.
#[derive(Clone, Debug, Default)]
pub struct RestoreInput {
    pub target_table_name: String,
    pub backup_arn: String,
    pub billing_override: Option<BillingModeOverride>,
    /// ProvisionedThroughputOverride (read, write).
    pub throughput_override: Option<(u64, u64)>,
    pub global_index_override: Option<Vec<IndexSpec>>,
    pub local_index_override: Option<Vec<IndexSpec>>,
    /// OnDemandThroughputOverride (MaxReadRequestUnits,
    /// MaxWriteRequestUnits): each one given replaces the backup's.
    pub on_demand_override: Option<(Option<i64>, Option<i64>)>,
    /// SSESpecificationOverride; without it the table is encrypted as the
    /// backup's source was.
    pub sse_override: Option<crate::types::SseSpec>,
}

/// BillingModeOverride.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BillingModeOverride {
    Provisioned,
    PayPerRequest,
}

/// The 8 hex digits after a backup ARN's timestamp: unique per table, time
/// and counter (no randomness needed).
fn backup_suffix(table: &str, now: Millis, counter: u64) -> String {
    let mut bytes = Vec::with_capacity(table.len() + 16);
    bytes.extend_from_slice(table.as_bytes());
    bytes.extend_from_slice(&now.0.to_le_bytes());
    bytes.extend_from_slice(&counter.to_le_bytes());
    format!("{:08x}", xxhash_rust::xxh3::xxh3_64(&bytes) as u32)
}

fn backup_not_found(arn: &str) -> EngineError {
    EngineError::BackupNotFound(format!("Backup not found: {arn}"))
}

/// A BackupArn's form, checked before it is looked up, with DynamoDB's
/// texts (ack-api-quirks DDB-BACKUP-012 and the DDB-TABLE-442 catalogue):
/// not a backup's ARN at all (a table's, or no ARN) is "Invalid Backup ARN";
/// one of another partition or service "BackupArn is not valid".
fn check_backup_arn(arn: &str) -> Result<(), EngineError> {
    let parts: Vec<&str> = arn.splitn(6, ':').collect();
    let [_, partition, service, _region, _account, resource] = parts.as_slice() else {
        return Err(EngineError::validation("Invalid Backup ARN"));
    };
    let is_backup = resource
        .strip_prefix("table/")
        .and_then(|rest| rest.split_once("/backup/"))
        .is_some_and(|(table, id)| !table.is_empty() && !id.is_empty() && !id.contains('/'));
    if !arn.starts_with("arn:") || !is_backup {
        return Err(EngineError::validation("Invalid Backup ARN"));
    }
    if *partition != "aws" || *service != "dynamodb" {
        return Err(EngineError::validation("Invalid Request: BackupArn is not valid"));
    }
    Ok(())
}

fn table_not_found(name: &str) -> EngineError {
    EngineError::TableNotFound(format!("Table not found: {name}"))
}

/// The spec CreateTable would take for an index definition.
fn index_spec(def: &IndexDef) -> IndexSpec {
    let mut key_schema: Vec<(String, KeyRole)> =
        def.schema.hash.iter().map(|a| (a.name.clone(), KeyRole::Hash)).collect();
    key_schema.extend(def.schema.range.iter().map(|a| (a.name.clone(), KeyRole::Range)));
    let (projection_type, non_key_attributes) = match &def.projection {
        IndexProjection::All => (ProjectionType::All, None),
        IndexProjection::KeysOnly => (ProjectionType::KeysOnly, None),
        IndexProjection::Include(names) => (ProjectionType::Include, Some(names.clone())),
    };
    IndexSpec {
        name: def.name.clone(),
        key_schema,
        projection_type: Some(projection_type),
        non_key_attributes,
        throughput: def.throughput,
        // A backup records neither of a GSI's (ack-api-quirks DDB-BACKUP-021).
        on_demand: None,
        warm: None,
    }
}

/// Whether two index specs have the same key schema and projection (the
/// projected names in any order).
fn same_shape(a: &IndexSpec, b: &IndexSpec) -> bool {
    let sorted = |names: &Option<Vec<String>>| {
        names.clone().map(|mut n| {
            n.sort_unstable();
            n
        })
    };
    a.key_schema == b.key_schema
        && a.projection_type == b.projection_type
        && sorted(&a.non_key_attributes) == sorted(&b.non_key_attributes)
}

impl Engine {
    /// The table, for the backup operations, whose not-found error is
    /// TableNotFoundException.
    fn backup_source(&self, name: &str) -> Result<Arc<Table>, EngineError> {
        let resolved = self.resolve_name(name)?;
        self.tables.read().get(resolved).cloned().ok_or_else(|| table_not_found(resolved))
    }

    /// CreateBackup: a consistent snapshot of the table's items and
    /// settings.
    pub fn create_backup(&self, table_name: &str, backup_name: &str, now: Millis) -> Result<Backup, EngineError> {
        let table = self.backup_source(table_name)?;
        self.snapshot(&table, backup_name, BackupKind::User, now)
    }

    /// A backup of `table` (the caller may hold the table map's lock: this
    /// takes only the table's own, the backups' and the storage's).
    pub(crate) fn snapshot(
        &self,
        table: &Table,
        backup_name: &str,
        kind: BackupKind,
        now: Millis,
    ) -> Result<Backup, EngineError> {
        let data = table.data.read();
        // A backup keeps no tags and no resource-based policy.
        let settings = TableSettings { policies: crate::policy::Policies::new(), ..table.settings.lock().clone() };
        let defs: Vec<IndexDef> = data.indexes.iter().map(|i| i.def.clone()).collect();
        let source = TableMeta { tags: Vec::new(), ..table.meta_with(settings, defs) };
        let now = {
            let mut backups = self.backups.lock();
            backups.last_created = Millis(now.0.max(backups.last_created.0 + 1));
            backups.last_created
        };
        let counter = self.table_counter.fetch_add(1, Ordering::Relaxed);
        let id = format!("{:014}-{}", now.0, backup_suffix(&table.name, now, counter));
        let arn = format!("{}/backup/{id}", table.arn);
        let mut backup = Backup {
            arn,
            name: backup_name.to_string(),
            created_at: now,
            status: BackupStatus::Creating,
            kind,
            item_count: data.item_count,
            size_bytes: data.size_bytes,
            source,
            storage_name: format!("{BACKUP_PREFIX}{}/{id}", table.name),
        };
        // An in-memory snapshot takes its share of the memory budget. A
        // SYSTEM backup is charged without a check: the table it copies,
        // which is being deleted, gives its share back at once.
        let memory = self.config.memory.as_deref().filter(|_| data.store.holds_items_in_memory());
        if let Some(memory) = memory {
            match kind {
                BackupKind::User => memory.reserve(backup.memory_held())?,
                BackupKind::System => memory.adjust(backup.memory_held() as i64),
            }
        }
        let mut store = match self.storage.create_table(&backup.to_meta()) {
            Ok(store) => store,
            Err(e) => {
                if let Some(memory) = memory {
                    memory.adjust(-(backup.memory_held() as i64));
                }
                return Err(e.into());
            }
        };
        let copied = crate::write::copy_items(&*self.storage, &*data.store, &mut *store, SNAPSHOT_BATCH_ITEMS)
            .and_then(|_| {
                backup.status = BackupStatus::Available;
                self.storage.save_table_meta(&backup.to_meta())
            });
        drop(data);
        if let Err(e) = copied {
            let _ = self.storage.drop_table(&backup.storage_name);
            if let Some(memory) = memory {
                memory.adjust(-(backup.memory_held() as i64));
            }
            return Err(e.into());
        }
        self.backups.lock().backups.insert(backup.arn.clone(), backup.clone());
        Ok(backup)
    }

    /// DescribeBackup.
    pub fn describe_backup(&self, arn: &str) -> Result<Backup, EngineError> {
        check_backup_arn(arn)?;
        self.backups.lock().backups.get(arn).cloned().ok_or_else(|| backup_not_found(arn))
    }

    /// DeleteBackup: the backup as it was, now DELETED. A SYSTEM backup is
    /// not the user's to delete: it expires (ack-api-quirks' catalogue of
    /// DynamoDB's messages, DDB-TABLE-442; how DynamoDB writes the time is
    /// not recorded there: here as Java's `Date.toString` writes it).
    pub fn delete_backup(&self, arn: &str) -> Result<Backup, EngineError> {
        check_backup_arn(arn)?;
        let expires = self.backups.lock().backups.get(arn).and_then(Backup::expires_at);
        if let Some(at) = expires {
            return Err(EngineError::validation(format!(
                "Invalid Request: User is not allowed to delete the system backup with arn {arn}. It will automatically expire on {}",
                dynaburst_model::time::java_date(at.0 as i64)
            )));
        }
        self.remove_backup(arn)
    }

    /// Drops a backup, whatever its kind.
    fn remove_backup(&self, arn: &str) -> Result<Backup, EngineError> {
        let mut backups = self.backups.lock();
        let Some(backup) = backups.backups.get(arn) else { return Err(backup_not_found(arn)) };
        let in_memory = self.storage.open_table(&backup.storage_name)?.holds_items_in_memory();
        self.storage.drop_table(&backup.storage_name)?;
        if let Some(memory) = self.config.memory.as_deref().filter(|_| in_memory) {
            memory.adjust(-(backup.memory_held() as i64));
        }
        let mut backup = backups.backups.remove(arn).ok_or_else(|| backup_not_found(arn))?;
        backup.status = BackupStatus::Deleted;
        Ok(backup)
    }

    /// ListBackups, in creation order.
    pub fn list_backups(&self, input: &ListBackupsInput) -> Result<BackupPage, EngineError> {
        let table = match &input.table_name {
            Some(name) => Some(self.resolve_name(name)?.to_string()),
            None => None,
        };
        let backups = self.backups.lock();
        let mut all: Vec<&Backup> = backups
            .backups
            .values()
            .filter(|b| match b.kind {
                BackupKind::User => input.user,
                BackupKind::System => input.system,
            })
            .filter(|b| table.as_ref().is_none_or(|t| *t == b.source.name))
            .filter(|b| input.lower.is_none_or(|l| b.created_at >= l))
            .filter(|b| input.upper.is_none_or(|u| b.created_at < u))
            .collect();
        all.sort_by(|a, b| (a.created_at, &a.arn).cmp(&(b.created_at, &b.arn)));
        let start = match &input.exclusive_start {
            Some(arn) => match backups.backups.get(arn) {
                Some(after) => all.iter().position(|b| (b.created_at, &b.arn) > (after.created_at, &after.arn)),
                None => all.iter().position(|b| b.arn > *arn),
            }
            .unwrap_or(all.len()),
            None => 0,
        };
        let limit = input.limit.clamp(1, MAX_LIST_BACKUPS);
        let page: Vec<Backup> = all.iter().skip(start).take(limit).map(|b| (*b).clone()).collect();
        let last_evaluated = (start + page.len() < all.len()).then(|| page.last().map(|b| b.arn.clone())).flatten();
        Ok(BackupPage { backups: page, last_evaluated })
    }

    /// RestoreTableFromBackup: a new table with the backup's settings (as
    /// overridden) and items. Answers with the table CREATING and the
    /// restore in progress, as DynamoDB does; the table is complete when
    /// the call returns.
    pub fn restore_table_from_backup(
        &self,
        input: RestoreInput,
        now: Millis,
    ) -> Result<(TableDescription, RestoreSummary), EngineError> {
        let backup = self.describe_backup(&input.backup_arn)?;
        check_overrides(&backup, &input)?;
        let target = input.target_table_name.clone();
        if self.tables.read().contains_key(&target) {
            return Err(EngineError::TableAlreadyExists(format!("Table already exists: {target}")));
        }
        let create = restore_input(&backup, &input);
        let description = self.create_table(create, now)?;
        let table = self.get_table(&target).ok_or_else(|| table_not_found(&target))?;
        // RestoreDateTime is the point in time restored: the backup's.
        let summary = RestoreSummary {
            source_backup_arn: backup.arn.clone(),
            source_table_arn: backup.source.arn(),
            restored_at: backup.created_at,
            in_progress: true,
        };
        self.record_restore(&table, &summary, || self.restore_items(&backup, &table, now), now)?;
        Ok((description, summary))
    }

    /// Writes a restored table's items (`write`) between two notes in the
    /// catalog (a crash in between drops the table at start-up), and keeps
    /// its restore summary; a failure deletes the half-restored table.
    fn record_restore(
        &self,
        table: &Table,
        summary: &RestoreSummary,
        write: impl FnOnce() -> Result<(), EngineError>,
        now: Millis,
    ) -> Result<(), EngineError> {
        let note = |done: bool| TableMeta {
            name: format!("{RESTORED_PREFIX}{}", table.name),
            tags: vec![
                (TAG_RESTORE_BACKUP.to_string(), summary.source_backup_arn.clone()),
                (TAG_RESTORE_TABLE.to_string(), summary.source_table_arn.clone()),
                (TAG_RESTORE_DONE.to_string(), done.to_string()),
            ],
            ..self.note_meta(table, summary.restored_at)
        };
        let restored =
            self.replace_note(&note(false)).and_then(|_| write()).and_then(|_| self.replace_note(&note(true)));
        if let Err(e) = restored {
            // Best effort: a half-restored table does not stay.
            let _ = self.delete_table(&table.name, now);
            return Err(e);
        }
        let done = RestoreSummary { in_progress: false, ..summary.clone() };
        self.backups.lock().restored.insert(table.name.clone(), (table.table_id.clone(), done));
        Ok(())
    }

    /// Writes the backup's items into the (new, empty) table through the
    /// write funnel, a bounded batch at a time.
    fn restore_items(&self, backup: &Backup, table: &Table, now: Millis) -> Result<(), EngineError> {
        let source = self.storage.open_table(&backup.storage_name)?;
        let mut data = table.data.write();
        for_each_chunk(&*source, SNAPSHOT_BATCH_ITEMS, |chunk| {
            let mut writes = crate::write::Writes::with_capacity(chunk.len());
            for (key, item) in chunk {
                let item: Item = Arc::unwrap_or_clone(item);
                let size = item_size(&item);
                let changes = crate::write::index_changes(table, &data, &key, None, Some(&item));
                writes.put(0, key, item, size, None, changes);
            }
            crate::write::commit(&*self.storage, &self.commit_limits(), &[table], &mut [&mut data], writes, now)
                .map(|_| ())
        })
    }

    /// A hidden, item-less catalog entry about `table` (its settings are
    /// the table's; the caller sets name and tags).
    fn note_meta(&self, table: &Table, now: Millis) -> TableMeta {
        TableMeta {
            created_at: now,
            ..table.meta_with(TableSettings::new(BillingMode::PayPerRequest, now), Vec::new())
        }
    }

    /// Records a hidden entry, replacing an older one of the same name.
    fn replace_note(&self, meta: &TableMeta) -> Result<(), EngineError> {
        match self.storage.create_table(meta) {
            Ok(_) => Ok(()),
            Err(crate::store::StoreError::TableExists(_)) => {
                self.storage.drop_table(&meta.name)?;
                self.storage.create_table(meta).map(|_| ()).map_err(Into::into)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Forgets what the backups module keeps about a deleted table (its
    /// point-in-time setting and restore summary; its backups stay).
    pub(crate) fn forget_table_notes(&self, name: &str) {
        let mut backups = self.backups.lock();
        if backups.pitr.remove(name).is_some() {
            let _ = self.storage.drop_table(&format!("{PITR_PREFIX}{name}"));
        }
        if backups.restored.remove(name).is_some() {
            let _ = self.storage.drop_table(&format!("{RESTORED_PREFIX}{name}"));
        }
    }

    /// The SYSTEM backup DeleteTable makes of a table with point-in-time
    /// recovery on, before the table goes (None when it is off).
    pub fn deleted_table_backup(&self, table: &Table, now: Millis) -> Result<Option<Backup>, EngineError> {
        let (on, earlier) = {
            let backups = self.backups.lock();
            let on = backups.pitr.get(&table.name).is_some_and(|p| p.table_id == table.table_id);
            // One a DeleteTable made before a crash cut it short (the table
            // stayed; the client, unanswered, asks again).
            let earlier: Vec<String> = backups
                .backups
                .values()
                .filter(|b| b.kind == BackupKind::System && b.source.table_id == table.table_id)
                .map(|b| b.arn.clone())
                .collect();
            (on, earlier)
        };
        if !on {
            return Ok(None);
        }
        for arn in earlier {
            self.remove_backup(&arn)?;
        }
        let name = format!("{}{SYSTEM_BACKUP_SUFFIX}", table.name);
        self.snapshot(table, &name, BackupKind::System, now).map(Some)
    }

    /// Drops a backup a failed DeleteTable made (best effort).
    pub(crate) fn discard_backup(&self, backup: &Backup) {
        let _ = self.remove_backup(&backup.arn);
    }

    /// Drops the SYSTEM backups whose 35 days are over (the expirer calls
    /// it with each time-to-live sweep). Returns how many it dropped.
    pub fn drop_expired_backups(&self, now: Millis) -> Result<usize, EngineError> {
        let expired: Vec<String> = self
            .backups
            .lock()
            .backups
            .values()
            .filter(|b| b.expires_at().is_some_and(|at| at <= now))
            .map(|b| b.arn.clone())
            .collect();
        for arn in &expired {
            self.remove_backup(arn)?;
        }
        Ok(expired.len())
    }

    /// The restore summary of a restored table (kept in the catalog; since
    /// DynamoDB shows it only while the table is CREATING, DescribeTable no
    /// longer does, but a restart keeps what a restore recorded).
    pub fn restore_summary(&self, table: &Table) -> Option<RestoreSummary> {
        let backups = self.backups.lock();
        backups.restored.get(&table.name).filter(|(id, _)| *id == table.table_id).map(|(_, s)| s.clone())
    }

    /// DescribeContinuousBackups.
    pub fn describe_continuous_backups(&self, table_name: &str, now: Millis) -> Result<ContinuousBackups, EngineError> {
        let table = self.backup_source(table_name)?;
        // The history this process holds starts at `since`: no earlier
        // time is restorable (a restart starts it again).
        let since = table.data.read().pitr.as_ref().map_or(now, |log| log.since);
        Ok(self.continuous(&table, since, now))
    }

    /// `table`'s point-in-time setting and restorable window, its history
    /// starting at `since`.
    fn continuous(&self, table: &Table, since: Millis, now: Millis) -> ContinuousBackups {
        let pitr = self.backups.lock().pitr.get(&table.name).filter(|p| p.table_id == table.table_id).cloned();
        let restorable = pitr.as_ref().map(|p| {
            let window = u64::from(p.recovery_period_days) * DAY_MS;
            let earliest = Millis(p.enabled_at.0.max(now.0.saturating_sub(window)).max(since.0));
            let latest = Millis(now.0.saturating_sub(PITR_LAG_MS).max(earliest.0));
            (earliest, latest)
        });
        ContinuousBackups { pitr, restorable }
    }

    /// UpdateContinuousBackups: point-in-time recovery on (for
    /// `recovery_period_days`, default 35) or off.
    pub fn update_continuous_backups(
        &self,
        table_name: &str,
        enabled: bool,
        recovery_period_days: Option<u32>,
        now: Millis,
    ) -> Result<ContinuousBackups, EngineError> {
        let table = self.backup_source(table_name)?;
        let name = format!("{PITR_PREFIX}{}", table.name);
        {
            // The table's data first (the engine's order): the setting and
            // the history change together.
            let mut data = table.data.write();
            let mut backups = self.backups.lock();
            let current = backups.pitr.get(&table.name).filter(|p| p.table_id == table.table_id).cloned();
            if enabled {
                let days = recovery_period_days.unwrap_or(MAX_RECOVERY_PERIOD_DAYS);
                let setting = PointInTimeRecovery {
                    table_id: table.table_id.clone(),
                    // Turning it on again keeps the history it has.
                    enabled_at: current.as_ref().map_or(now, |c| c.enabled_at),
                    recovery_period_days: days,
                };
                let note = TableMeta {
                    name,
                    tags: vec![(TAG_PITR_DAYS.to_string(), days.to_string())],
                    ..self.note_meta(&table, setting.enabled_at)
                };
                self.replace_note(&note)?;
                backups.pitr.insert(table.name.clone(), setting);
            } else if backups.pitr.contains_key(&table.name) {
                match self.storage.drop_table(&name) {
                    Ok(()) | Err(crate::store::StoreError::NoSuchTable(_)) => {}
                    Err(e) => return Err(e.into()),
                }
                backups.pitr.remove(&table.name);
            }
            // The history starts when recovery comes on, and goes with it.
            match (enabled, data.pitr.is_some()) {
                (true, false) => data.pitr = Some(PitrLog::new(now)),
                (false, _) => data.pitr = None,
                (true, true) => {}
            }
        }
        self.describe_continuous_backups(table_name, now)
    }
}

/// RestoreTableFromBackup's rules for its overrides, with DynamoDB's
/// messages (ack-api-quirks' catalogue of them, DDB-TABLE-442).
fn check_overrides(backup: &Backup, input: &RestoreInput) -> Result<(), EngineError> {
    let refuse = |message: String| Err(EngineError::validation(format!("Invalid Request: {message}")));
    let source_provisioned = matches!(backup.source.settings.billing, BillingMode::Provisioned { .. });
    match (input.billing_override, input.throughput_override) {
        (Some(BillingModeOverride::PayPerRequest), Some(_)) => {
            return refuse(
                "Cannot override ProvisionedThroughput if BillingMode is overridden to PAY_PER_REQUEST".into(),
            )
        }
        (Some(BillingModeOverride::Provisioned), None) => {
            return refuse("Must override ProvisionedThroughput if BillingMode is overridden to PROVISIONED".into())
        }
        (None, Some(_)) if !source_provisioned => {
            return refuse("Cannot override ProvisionedThroughput unless BillingMode is PROVISIONED".into())
        }
        _ => {}
    }
    if let Some((read, write)) = input.on_demand_override {
        // Refused only where the restored table is provisioned: a backup of
        // an on-demand table takes maxima without a billing override
        // (ack-api-quirks DDB-TABLE-405, -463).
        let restored_provisioned = match input.billing_override {
            Some(o) => o == BillingModeOverride::Provisioned,
            None => source_provisioned,
        };
        for (unit, asked) in [("MaxReadRequestUnits", read), ("MaxWriteRequestUnits", write)] {
            if asked.is_some_and(|v| v < 1 && v != -1) {
                return refuse(format!("Requested {unit} for OnDemandThroughput is outside of valid range"));
            }
        }
        if restored_provisioned {
            let unit = if read.is_some() || write.is_none() { "MaxReadRequestUnits" } else { "MaxWriteRequestUnits" };
            return refuse(format!(
                "Cannot override {unit} for OnDemandThroughput unless BillingModeOverride is PAY_PER_REQUEST"
            ));
        }
    }
    let provisioned = match input.billing_override {
        Some(o) => o == BillingModeOverride::Provisioned,
        None => source_provisioned,
    };
    for (kind, over) in
        [(IndexKind::Global, &input.global_index_override), (IndexKind::Local, &input.local_index_override)]
    {
        for spec in over.iter().flatten() {
            // An override matches a source index by its keys and projection,
            // not its name: it may rename it, not reshape it (ack-api-quirks
            // DDB-TABLE-280, live 2026-10).
            if !backup.source.indexes.iter().any(|d| d.kind == kind && same_shape(&index_spec(d), spec)) {
                return refuse(format!(
                    "Index {} does not match a secondary index that existed in the source table and cannot be created during the restore operation",
                    spec.name
                ));
            }
            if kind == IndexKind::Global {
                match (provisioned, spec.throughput) {
                    (true, None) => return refuse(format!("Must specify provisioned throughput for index {}", spec.name)),
                    (false, Some(_)) => {
                        return refuse(format!(
                            "Cannot override ProvisionedThroughput if BillingMode is overridden to PAY_PER_REQUEST for index {}",
                            spec.name
                        ))
                    }
                    _ => {}
                }
            }
        }
    }
    Ok(())
}

/// The CreateTable a restore amounts to: the backup's key, indexes (or the
/// overrides) and billing (or the override); no tags, stream or TTL, which
/// DynamoDB does not restore.
fn restore_input(backup: &Backup, input: &RestoreInput) -> CreateTableInput {
    let source = &backup.source;
    let billing = match (input.billing_override, input.throughput_override, source.settings.billing) {
        (Some(BillingModeOverride::PayPerRequest), _, _) => BillingMode::PayPerRequest,
        (_, Some((read, write)), _) => BillingMode::Provisioned { read, write },
        (Some(BillingModeOverride::Provisioned), None, BillingMode::Provisioned { read, write }) => {
            BillingMode::Provisioned { read, write }
        }
        // PROVISIONED from an on-demand table names its throughput in the
        // override; without one, the table stays as it was.
        (Some(BillingModeOverride::Provisioned), None, b) | (None, None, b) => b,
    };
    let specs = |kind: IndexKind, over: &Option<Vec<IndexSpec>>| -> Option<Vec<IndexSpec>> {
        let mut list: Vec<IndexSpec> = match over {
            Some(list) => list.clone(),
            None => source.indexes.iter().filter(|d| d.kind == kind).map(index_spec).collect(),
        };
        if kind == IndexKind::Global {
            for spec in &mut list {
                spec.throughput = match billing {
                    BillingMode::PayPerRequest => None,
                    BillingMode::Provisioned { read, write } => spec.throughput.or(Some((read, write))),
                };
            }
        }
        (!list.is_empty()).then_some(list)
    };
    let global_indexes = specs(IndexKind::Global, &input.global_index_override);
    let local_indexes = specs(IndexKind::Local, &input.local_index_override);
    let key_schema = source.key_schema.pairs();
    // The definitions of the attributes the restored keys use, each once.
    let used: Vec<&str> = key_schema
        .iter()
        .map(|(n, _)| n.as_str())
        .chain(
            global_indexes
                .iter()
                .chain(&local_indexes)
                .flatten()
                .flat_map(|s| s.key_schema.iter().map(|(n, _)| n.as_str())),
        )
        .collect();
    // The types come from the table's and its indexes' key schemas: a GSI
    // UpdateTable added has its definitions there, not in the table's.
    let mut known: Vec<(String, ScalarType)> = source.attribute_definitions.clone();
    for attr in source.indexes.iter().flat_map(|d| d.schema.attrs()) {
        if !known.iter().any(|(n, _)| *n == attr.name) {
            known.push((attr.name.clone(), attr.ty));
        }
    }
    let attribute_definitions = known.into_iter().filter(|(n, _)| used.contains(&n.as_str())).collect();
    let sse = match (&input.sse_override, &source.settings.sse_kms_key) {
        (Some(spec), _) => Some(spec.clone()),
        (None, Some(arn)) => Some(crate::types::SseSpec { enabled: true, kms_key_id: Some(arn.clone()) }),
        (None, None) => None,
    };
    CreateTableInput {
        sse,
        global_indexes,
        local_indexes,
        // The maxima that are set (-1 is none, which CreateTable does not
        // take), and none for a table restored as provisioned.
        on_demand: match (billing, source.settings.on_demand_max, input.on_demand_override) {
            (BillingMode::Provisioned { .. }, _, _) | (_, None, None) => None,
            (_, from, over) => {
                let (from_r, from_w) = from.unwrap_or((-1, -1));
                let (over_r, over_w) = over.unwrap_or((None, None));
                let set = |v: i64| (v != -1).then_some(v);
                let limits = (over_r.or(set(from_r)), over_w.or(set(from_w)));
                (limits.0.is_some() || limits.1.is_some()).then_some(limits)
            }
        },
        ..CreateTableInput::new(&input.target_table_name, key_schema, attribute_definitions, billing)
    }
}

/// Hands every item of `from` to `each` in key order, `batch` at a time,
/// so that a copy of any size holds one batch in memory.
pub(crate) fn for_each_chunk<E: From<crate::store::StoreError>>(
    from: &dyn TableStore,
    batch: usize,
    mut each: impl FnMut(Vec<(StoreKey, Arc<Item>)>) -> Result<(), E>,
) -> Result<(), E> {
    let mut after: Option<StoreKey> = None;
    loop {
        let chunk = read_chunk(from, after.as_ref(), batch)?;
        let full = chunk.len() == batch;
        let Some((last, _)) = chunk.last() else { return Ok(()) };
        after = Some(last.clone());
        each(chunk)?;
        if !full {
            return Ok(());
        }
    }
}

/// Up to `batch` items of `store` after `after` (from the start when None).
pub(crate) fn read_chunk(
    store: &dyn TableStore,
    after: Option<&StoreKey>,
    batch: usize,
) -> Result<Vec<(StoreKey, Arc<Item>)>, crate::store::StoreError> {
    let mut chunk = Vec::with_capacity(batch.min(SNAPSHOT_BATCH_ITEMS));
    let start = after.map_or(Bound::Unbounded, Bound::Excluded);
    store.range((start, Bound::Unbounded), Direction::Forward, &mut |key, item| {
        chunk.push((key.clone(), item.clone()));
        if chunk.len() >= batch {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })?;
    Ok(chunk)
}

/// Most changes a table's point-in-time history keeps (the oldest go, and
/// the earliest restorable time moves past them).
pub const MAX_PITR_RECORDS: usize = 1_000_000;
/// Most bytes of replaced items a table's point-in-time history keeps.
pub const MAX_PITR_BYTES: usize = 256 * 1024 * 1024;
/// Most items a point-in-time restore copies (it builds the table as it
/// was in memory).
pub const MAX_PITR_RESTORE_ITEMS: u64 = 1_000_000;
/// Most bytes (DynamoDB sizes) of a table a point-in-time restore copies.
pub const MAX_PITR_RESTORE_BYTES: u64 = 256 * 1024 * 1024;
/// What one history record costs beyond the item it keeps: its key, time
/// and place in the queue (counted against [`MAX_PITR_BYTES`]).
const PITR_RECORD_OVERHEAD_BYTES: usize = 128;

/// A table's point-in-time history, while point-in-time recovery is on:
/// the item each write replaced (None: there was none), in commit order,
/// complete since `since` (when this process began keeping it: recovery
/// turned on, or the table opened; or just after the oldest change the
/// bounds dropped). The table as it was at a time is the table now with
/// each key changed since taken back to what its first later change
/// replaced. Kept in memory: a restart starts it again.
#[derive(Debug)]
pub struct PitrLog {
    pub since: Millis,
    records: std::collections::VecDeque<(Millis, StoreKey, Option<Arc<Item>>)>,
    bytes: usize,
}

impl PitrLog {
    pub fn new(now: Millis) -> PitrLog {
        PitrLog { since: now, records: std::collections::VecDeque::new(), bytes: 0 }
    }

    /// Notes that a write at `at` replaced `old` under `key`.
    pub(crate) fn note(&mut self, at: Millis, key: StoreKey, old: Option<Arc<Item>>) {
        self.bytes += PITR_RECORD_OVERHEAD_BYTES + old.as_deref().map_or(0, item_size);
        self.records.push_back((at, key, old));
        // Bounded: each round drops one record.
        while self.records.len() > MAX_PITR_RECORDS || self.bytes > MAX_PITR_BYTES {
            let Some((dropped_at, _, old)) = self.records.pop_front() else { break };
            self.bytes = self.bytes.saturating_sub(PITR_RECORD_OVERHEAD_BYTES + old.as_deref().map_or(0, item_size));
            self.since = self.since.max(Millis(dropped_at.0 + 1));
        }
    }

    /// The keys changed after `t`, each with the item it held at `t`.
    fn at(&self, t: Millis) -> BTreeMap<StoreKey, Option<Arc<Item>>> {
        let mut out = BTreeMap::new();
        for (at, key, old) in self.records.iter().filter(|(at, _, _)| *at > t) {
            let _ = at;
            out.entry(key.clone()).or_insert_with(|| old.clone());
        }
        out
    }
}

/// Where RestoreTableToPointInTime restores to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RestorePoint {
    /// UseLatestRestorableTime.
    Latest,
    /// RestoreDateTime.
    At(Millis),
}

fn iso_seconds(t: Millis) -> String {
    let text = dynaburst_model::time::UtcTime::from_unix_ms(i64::try_from(t.0).unwrap_or(i64::MAX)).iso8601_millis();
    format!("{}Z", text.split('.').next().unwrap_or_default())
}

impl Engine {
    /// The table a point-in-time restore names: SourceTableName, or
    /// SourceTableArn checked as DynamoDB checks it (ack-api-quirks
    /// DDB-TABLE-272, -442).
    fn pitr_source(&self, name: Option<&str>, arn: Option<&str>) -> Result<Arc<Table>, EngineError> {
        let name = match (name, arn) {
            (Some(_), Some(_)) => {
                return Err(EngineError::validation("Must provide exactly one of: sourceTableArn, sourceTableName"))
            }
            (None, None) => {
                return Err(EngineError::validation(
                    "The parameter 'TableName' is required but was not present in the request",
                ))
            }
            (Some(name), None) => name.to_string(),
            (None, Some(arn)) => {
                if !arn.starts_with("arn:") {
                    return Err(crate::control::not_an_arn(arn));
                }
                let not_valid = || EngineError::validation("sourceTableArn is not a valid ARN");
                let parsed =
                    crate::control::Arn::parse(arn).filter(|a| a.service == "dynamodb").ok_or_else(not_valid)?;
                let name = parsed.table().ok_or_else(not_valid)?;
                if parsed.account != self.config.account_id {
                    return Err(EngineError::validation(
                        "This action is only supported by accounts that match the resource owner\u{2019}s account.",
                    ));
                }
                if parsed.region != self.config.region {
                    return Err(EngineError::validation(
                        "Invalid Request: sseSpecificationOverride must be provided for cross-region restores",
                    ));
                }
                name.to_string()
            }
        };
        self.tables.read().get(&name).cloned().ok_or_else(|| table_not_found(&name))
    }

    /// RestoreTableToPointInTime: a new table with the source's settings
    /// (as overridden) and its items as they were at the point restored
    /// (from its point-in-time history); answered CREATING with the
    /// restore in progress, complete when the call returns. Checked in
    /// DynamoDB's order: the request, the source, recovery on, the time,
    /// the target (ack-api-quirks DDB-TABLE-272, -100, -086, -087, -215).
    pub fn restore_table_to_point_in_time(
        &self,
        source_name: Option<&str>,
        source_arn: Option<&str>,
        point: RestorePoint,
        input: RestoreInput,
        now: Millis,
    ) -> Result<(TableDescription, RestoreSummary), EngineError> {
        let source = self.pitr_source(source_name, source_arn)?;
        let unavailable = || {
            EngineError::PointInTimeRecoveryUnavailable(format!(
                "Point in time recovery is not enabled for table '{}'",
                source.name
            ))
        };
        // The window, the time and the table as it was, all under the
        // source's lock: the history cannot move in between.
        let (t, meta, items) = {
            let data = source.data.read();
            let log = data.pitr.as_ref().ok_or_else(unavailable)?;
            let Some((earliest, latest)) = self.continuous(&source, log.since, now).restorable else {
                return Err(unavailable());
            };
            let t = match point {
                RestorePoint::Latest => latest,
                RestorePoint::At(t) if t >= earliest && t <= latest => t,
                RestorePoint::At(t) => {
                    return Err(EngineError::InvalidRestoreTime(format!(
                        "RestoreDateTime '{}' must be within EarliestRestorableDateTime '{}' and LatestRestorableDateTime '{}'",
                        iso_seconds(t),
                        iso_seconds(earliest),
                        iso_seconds(latest)
                    )))
                }
            };
            // The restore builds the table in memory: bounded.
            if data.item_count > MAX_PITR_RESTORE_ITEMS || data.size_bytes > MAX_PITR_RESTORE_BYTES {
                return Err(EngineError::LimitExceeded(format!(
                    "dynaburst restores tables of at most {MAX_PITR_RESTORE_ITEMS} items and {} MiB to a point in time; this one holds {} items, {} bytes",
                    MAX_PITR_RESTORE_BYTES >> 20,
                    data.item_count,
                    data.size_bytes
                )));
            }
            let changed = log.at(t);
            let mut items: Vec<(StoreKey, Arc<Item>)> = Vec::new();
            for_each_chunk::<EngineError>(&*data.store, SNAPSHOT_BATCH_ITEMS, |chunk| {
                for (key, item) in chunk {
                    match changed.get(&key) {
                        Some(Some(then)) => items.push((key, then.clone())),
                        Some(None) => {}
                        None => items.push((key, item)),
                    }
                }
                Ok(())
            })?;
            // Keys deleted since `t` (the store no longer holds them).
            for (key, then) in changed {
                if let Some(then) = then {
                    if data.store.get(&key)?.is_none() {
                        items.push((key, then));
                    }
                }
            }
            let defs: Vec<IndexDef> = data.indexes.iter().map(|i| i.def.clone()).collect();
            let settings = TableSettings { policies: crate::policy::Policies::new(), ..source.settings.lock().clone() };
            (t, TableMeta { tags: Vec::new(), ..source.meta_with(settings, defs) }, items)
        };
        let as_backup = Backup {
            arn: String::new(),
            name: String::new(),
            created_at: t,
            status: BackupStatus::Available,
            kind: BackupKind::User,
            item_count: items.len() as u64,
            size_bytes: items.iter().map(|(_, i)| item_size(i) as u64).sum(),
            source: meta,
            storage_name: String::new(),
        };
        check_overrides(&as_backup, &input)?;
        let target = input.target_table_name.clone();
        if self.tables.read().contains_key(&target) {
            return Err(EngineError::TableAlreadyExists(format!("Table already exists: {target}")));
        }
        let description = self.create_table(restore_input(&as_backup, &input), now)?;
        let table = self.get_table(&target).ok_or_else(|| table_not_found(&target))?;
        let summary = RestoreSummary {
            source_backup_arn: String::new(),
            source_table_arn: source.arn.clone(),
            restored_at: t,
            in_progress: true,
        };
        let write = || {
            let mut data = table.data.write();
            for chunk in items.chunks(SNAPSHOT_BATCH_ITEMS) {
                let mut writes = crate::write::Writes::with_capacity(chunk.len());
                for (key, item) in chunk {
                    let item: Item = Item::clone(item);
                    let size = item_size(&item);
                    let changes = crate::write::index_changes(&table, &data, key, None, Some(&item));
                    writes.put(0, key.clone(), item, size, None, changes);
                }
                crate::write::commit(&*self.storage, &self.commit_limits(), &[&table], &mut [&mut data], writes, now)?;
            }
            Ok(())
        };
        self.record_restore(&table, &summary, write, now)?;
        Ok((description, summary))
    }
}
