//! UpdateTable: what a request may change together, each change's rules,
//! and applying them.
//!
//! DynamoDB checks the request alone first (before it looks the table up),
//! then the request against the table, and changes nothing unless every
//! check passes. Its rules and texts here are those of the live service in
//! October 2026 (ack-api-quirks `services/dynamodb`: the message catalogue
//! DDB-TABLE-442, the combination matrix DDB-TABLE-382/-433, billing and
//! throughput DDB-TABLE-038/-039/-051/-055..-061/-178/-182, indexes
//! DDB-TABLE-137/-152/-160/-164/-169/-174/-380).

use std::collections::HashMap;

use parking_lot::RwLockUpgradableReadGuard;

use dynaburst_model::ScalarType;

use crate::control::{
    check_on_demand, check_projected_total, check_provisioned_limit, index_def, index_schema, index_subject, invalid,
    merge_limits, on_demand_member, stream_request, IndexContext,
};
use crate::engine::Engine;
use crate::error::EngineError;
use crate::index::{self, IndexData, IndexDef, IndexKind, MAX_GLOBAL_INDEXES};
use crate::stream::StreamViewType;
use crate::table::{
    apply_index_limits, apply_limits, capacity_mode, index_capacity, index_warm_shown, Table, TableClass,
    TableClassSetting, TableSettings, ThroughputChanges, ON_DEMAND_INITIAL_WARM,
};
use crate::types::*;

/// What UpdateTable may change, as its answer to a request that changes
/// nothing lists them (S39 as DynamoDB words it in 2026).
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

/// The shortest a GSI stays CREATING after UpdateTable adds it, in
/// milliseconds: long enough for a client to see the backfill.
const BACKFILL_MIN_MS: u64 = 500;

/// UpdateTable's answer when it was asked to change nothing: the members
/// it could have changed, but those the request holds (ack-api-quirks
/// DDB-TABLE-442: MultiRegionConsistency alone is left out of the list).
fn nothing_to_update(held: &[&str]) -> String {
    let names: Vec<&str> = UPDATABLE.into_iter().filter(|n| !held.contains(n)).collect();
    match names.split_last() {
        Some((last, rest)) => format!("At least one of {} or {last} is required", rest.join(", ")),
        None => String::new(),
    }
}

/// An empty OnDemandThroughput or WarmThroughput (`{}`) counts as absent
/// (DDB-TABLE-456: DynamoDB drops it when other members come with it).
fn given<T>(pair: Option<(Option<T>, Option<T>)>) -> Option<(Option<T>, Option<T>)> {
    pair.filter(|(a, b)| a.is_some() || b.is_some())
}

/// Which members a request holds.
struct Members {
    billing: bool,
    throughput: bool,
    /// GlobalSecondaryIndexUpdates with at least one entry.
    indexes: bool,
    /// ... of which a Create or Delete.
    index_create_or_delete: bool,
    index_create: bool,
    stream: bool,
    on_demand: bool,
    warm: bool,
    sse: bool,
    table_class: bool,
    deletion_protection: bool,
}

impl Members {
    fn of(input: &UpdateTableInput) -> Members {
        let updates = input.index_updates.as_deref().unwrap_or_default();
        Members {
            billing: input.billing_mode_pay_per_request.is_some(),
            throughput: input.throughput.is_some(),
            indexes: !updates.is_empty(),
            index_create_or_delete: updates.iter().any(|u| !matches!(u, IndexUpdate::Update { .. })),
            index_create: updates.iter().any(|u| matches!(u, IndexUpdate::Create(_))),
            stream: input.stream.is_some(),
            on_demand: given(input.on_demand).is_some(),
            warm: given(input.warm).is_some(),
            sse: input.sse.is_some(),
            table_class: input.table_class.is_some(),
            deletion_protection: input.deletion_protection.is_some(),
        }
    }

    fn count(&self) -> usize {
        [
            self.billing,
            self.throughput,
            self.indexes,
            self.stream,
            self.on_demand,
            self.warm,
            self.sse,
            self.table_class,
            self.deletion_protection,
        ]
        .iter()
        .filter(|m| **m)
        .count()
    }
}

/// The checks of the request alone, in DynamoDB's order.
fn check_request(input: &UpdateTableInput, region: &str) -> Result<(), EngineError> {
    let m = Members::of(input);
    if m.count() == 0 {
        return Err(EngineError::validation(nothing_to_update(&input.unmodelled)));
    }
    if input.index_updates.as_ref().is_some_and(Vec::is_empty) {
        return Err(invalid("List of GlobalSecondaryIndexUpdates is empty"));
    }
    let alone = m.count() == 1;
    for (given, what) in [
        (m.sse, "Server-Side Encryption"),
        (m.table_class, "TableClass"),
        (m.deletion_protection, "DeletionProtection"),
    ] {
        if given && !alone {
            return Err(invalid(format!("{what} modification must be the only operation in the request")));
        }
    }
    if m.on_demand && m.count() > 1 + usize::from(m.billing) {
        return Err(invalid("OnDemandThroughput can only be combined with BillingMode in an UpdateTable request"));
    }
    if m.warm && m.index_create {
        return Err(invalid("Create global secondary index cannot be specified when updating WarmThroughput"));
    }
    if m.warm && !alone {
        return Err(invalid("WarmThroughput must be the only operation in the request"));
    }
    if m.throughput && m.stream {
        return Err(invalid("You cannot modify stream status while updating table IOPS"));
    }
    if m.throughput && m.index_create_or_delete {
        return Err(invalid("You cannot create or delete index while updating table IOPS"));
    }
    if m.stream && m.index_create_or_delete {
        return Err(invalid("You cannot create or delete index while changing stream status"));
    }
    if let Some(spec) = input.stream {
        stream_request(spec, false)?;
    }
    if input.billing_mode_pay_per_request == Some(true) && m.throughput {
        return Err(invalid("ProvisionedThroughput cannot be specified when BillingMode is PAY_PER_REQUEST"));
    }
    if let Some((read, write)) = input.throughput {
        check_provisioned_limit(read, write, None, region)?;
    }
    for u in input.index_updates.iter().flatten() {
        let (name, throughput, on_demand) = match u {
            IndexUpdate::Create(spec) => (&spec.name, spec.throughput, None),
            IndexUpdate::Update { name, throughput, on_demand, .. } => (name, *throughput, given(*on_demand)),
            IndexUpdate::Delete { .. } => continue,
        };
        if let Some((read, write)) = throughput {
            check_provisioned_limit(read, write, Some(name), region)?;
        }
        if let Some(on_demand) = on_demand {
            check_on_demand(on_demand, true, &index_subject(name), region)?;
        }
        // Checked before the table or the index is looked up (ack-api-quirks DDB-TABLE-456).
        if let IndexUpdate::Update { warm: Some((None, None)), .. } = u {
            return Err(invalid(format!(
                "WarmThroughput must have at least one of ReadUnitsPerSecond or WriteUnitsPerSecond specified for index: {name}"
            )));
        }
    }
    if let Some(on_demand) = given(input.on_demand) {
        check_on_demand(on_demand, true, "table", region)?;
    }
    Ok(())
}

/// The table's billing mode after the request: the one it switches to, if
/// it switches (with the throughput it gives), else the current one.
fn billing_after(input: &UpdateTableInput, current: BillingMode) -> Result<BillingMode, EngineError> {
    Ok(match (input.billing_mode_pay_per_request, input.throughput) {
        (Some(true), _) => BillingMode::PayPerRequest,
        (Some(false), Some((read, write))) => BillingMode::Provisioned { read, write },
        (Some(false), None) => {
            return Err(invalid("ProvisionedThroughput must be specified when BillingMode is PROVISIONED"));
        }
        (None, Some((read, write))) => match current {
            BillingMode::PayPerRequest => return Err(invalid(
                "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST",
            )),
            BillingMode::Provisioned { .. } => BillingMode::Provisioned { read, write },
        },
        (None, None) => current,
    })
}

/// A GSI of a table switched to PAY_PER_REQUEST: on demand, its warm
/// throughput kept at the units it had where they pass the on-demand
/// initial throughput (as a table's: a warm throughput never decreases).
fn on_demand_def(def: &IndexDef) -> IndexDef {
    let warm = match def.throughput {
        Some(units) if units.0 > ON_DEMAND_INITIAL_WARM.0 || units.1 > ON_DEMAND_INITIAL_WARM.1 => {
            let kept = def.warm.unwrap_or((0, 0));
            Some((kept.0.max(units.0), kept.1.max(units.1)))
        }
        _ => def.warm,
    };
    IndexDef { throughput: None, warm, ..def.clone() }
}

/// The table's capacity model follows its settings (its mode set again only
/// when it differs, so a retry after a failure repairs it). The capacity
/// lock is never held with the settings' one.
fn follow_settings(table: &Table, now: Millis) {
    let settings = table.settings.lock().clone();
    if let Some(model) = table.capacity.lock().as_mut() {
        let mode = capacity_mode(settings.billing);
        if model.mode() != mode {
            model.set_mode(mode, now);
        }
        apply_limits(model, &settings, now);
    }
}

impl Engine {
    /// Saves the table's settings as `change_settings` and `stream` (a
    /// stream change, checked here under the locks) make them, with the
    /// index definitions in force (on-demand ones when the table switches
    /// to PAY_PER_REQUEST), in one catalog save; the caller holds the
    /// table's data lock. `None` when the settings are as they were
    /// (nothing saved); else the stream change saved, if any, for the
    /// caller to apply to the table's change records.
    fn save_settings(
        &self,
        table: &Table,
        data: &crate::table::TableData,
        change_settings: &dyn Fn(&mut TableSettings),
        switching_to_ppr: bool,
        stream: Option<Option<StreamViewType>>,
        now: Millis,
    ) -> Result<Option<Option<crate::stream::StreamChange>>, EngineError> {
        let mut guard = table.settings.lock();
        let mut settings = guard.clone();
        change_settings(&mut settings);
        let stream_change = stream
            .map(|view| {
                self.prepare_stream_change((&table.name, &table.arn), &data.streams, guard.stream.as_ref(), view, now)
            })
            .transpose()?;
        if let Some(change) = &stream_change {
            settings.stream = Some(change.setting.clone());
        }
        if settings == *guard {
            return Ok(None);
        }
        let defs: Vec<IndexDef> =
            data.indexes.iter().map(|i| if switching_to_ppr { on_demand_def(&i.def) } else { i.def.clone() }).collect();
        self.storage.save_table_meta(&table.meta_with(settings.clone(), defs))?;
        *guard = settings;
        Ok(Some(stream_change))
    }
}

/// The table's side of an UpdateTable, saved with its index changes.
struct TableChange<'a> {
    /// Makes the table's new settings from its settings at the save.
    apply: &'a dyn Fn(&mut TableSettings),
    /// The table switches to PAY_PER_REQUEST: its GSIs follow.
    to_on_demand: bool,
    /// A stream change (StreamSpecification: a view to enable, `None` to
    /// disable), checked and saved with the rest.
    stream: Option<Option<StreamViewType>>,
}

/// The GSIs follow their table onto on-demand capacity (in memory, after
/// the catalog's save).
fn follow_onto_on_demand(data: &mut crate::table::TableData, now: Millis) {
    for ix in data.indexes.iter_mut().filter(|ix| ix.def.kind == IndexKind::Global) {
        ix.def = on_demand_def(&ix.def);
        if let Some(model) = ix.capacity.lock().as_mut() {
            model.set_mode(dynaburst_capacity::Mode::OnDemand, now);
            apply_index_limits(model, &ix.def, now);
        }
    }
}

/// One checked index change, ready to apply.
enum IndexPlan {
    Create(IndexDef),
    /// A GSI's new settings (its provisioned units, on-demand maxima, warm
    /// throughput and throughput changes, as they will be).
    Update {
        name: String,
        throughput: Option<(u64, u64)>,
        on_demand_max: Option<(i64, i64)>,
        warm: Option<(u64, u64)>,
        changes: ThroughputChanges,
    },
    Delete {
        name: String,
    },
}

impl Engine {
    /// UpdateTable.
    pub fn update_table(&self, input: UpdateTableInput, now: Millis) -> Result<TableDescription, EngineError> {
        check_request(&input, &self.config.region)?;
        let name = self.resolve_name(&input.table_name)?;
        let table = self.tables.read().get(name).cloned().ok_or_else(|| EngineError::table_not_found_named(name))?;
        let _one_update_at_a_time = table.updating.lock();
        let m = Members::of(&input);
        // The capacity model's lock is never held with the settings' one.
        let model_warm = table.capacity.lock().as_ref().map(|model| model.warm_throughput());
        let current = table.settings.lock().clone();

        // The request against the table: every check before any change.
        let sse_key = input.sse.as_ref().map(|spec| self.sse_key_arn(spec));
        if let (Some(spec), Some(key)) = (&input.sse, &sse_key) {
            match (key, &current.sse_kms_key) {
                (None, None) => return Err(invalid("Table is already encrypted by default")),
                // Only the key's own ARN, sent again, is refused: an alias,
                // a key id or no key at all re-encrypts with the same key.
                (Some(new), Some(old)) if new == old && spec.kms_key_id.as_deref() == Some(old.as_str()) => {
                    return Err(invalid(
                        "Table is already encrypted with given KMSMasterKeyId. Use KMSMasterKeyId parameter if you want to change Master Key",
                    ))
                }
                _ => {}
            }
        }
        let billing = billing_after(&input, current.billing)?;
        if let Some(on_demand) = given(input.on_demand) {
            if matches!(billing, BillingMode::Provisioned { .. }) {
                return Err(invalid(format!(
                    "{} for OnDemandThroughput cannot be specified when the table BillingMode is PROVISIONED",
                    on_demand_member(on_demand)
                )));
            }
        }
        let shown_warm = current.warm_shown(model_warm);
        if let Some((read, write)) = given(input.warm) {
            for (unit, asked, shown) in
                [("ReadUnitsPerSecond", read, shown_warm.0), ("WriteUnitsPerSecond", write, shown_warm.1)]
            {
                if asked.is_some_and(|asked| asked < shown) {
                    return Err(invalid(format!(
                        "Requested {unit} for WarmThroughput for table is lower than current WarmThroughput, decreasing WarmThroughput is not supported"
                    )));
                }
            }
        }
        if let (Some((read, write)), BillingMode::Provisioned { read: r0, write: w0 }) =
            (input.throughput, current.billing)
        {
            if input.billing_mode_pay_per_request != Some(true) && (r0, w0) == (read, write) {
                return Err(EngineError::validation(format!(
                    "The provisioned throughput for the table will not change. The requested value equals the current value. Current ReadCapacityUnits provisioned for the table: {r0}. Requested ReadCapacityUnits: {read}. Current WriteCapacityUnits provisioned for the table: {w0}. Requested WriteCapacityUnits: {write}. Refer to the Amazon DynamoDB Developer Guide for current limits and how to request higher limits."
                )));
            }
        }
        // A decrease within the day's budget (checked before any change).
        if let (BillingMode::Provisioned { read, write }, BillingMode::Provisioned { read: r0, write: w0 }) =
            (billing, current.billing)
        {
            if ThroughputChanges::lowers((r0, w0), (read, write)) {
                current.changes.check_decrease(now)?;
            }
        }
        // A switch to PROVISIONED must give every GSI its own throughput.
        if matches!(current.billing, BillingMode::PayPerRequest) && matches!(billing, BillingMode::Provisioned { .. }) {
            let updated = |name: &str| {
                input
                    .index_updates
                    .iter()
                    .flatten()
                    .any(|u| matches!(u, IndexUpdate::Update { name: n, throughput: Some(_), .. } if n == name))
            };
            if let Some(ix) = table
                .index_defs()
                .iter()
                .find(|d| d.kind == IndexKind::Global && d.throughput.is_none() && !updated(&d.name))
            {
                return Err(invalid(format!("ProvisionedThroughput must be specified for index: {}", ix.name)));
            }
        }
        let stream = input.stream.map(|spec| stream_request(spec, false)).transpose()?;
        if let Some(view) = stream {
            crate::stream::check_stream_change(&table.name, current.stream.as_ref(), view)?;
        }

        // Then the changes. The table's settings are changed from what they
        // are when the change is saved (a TTL, tag or policy change may have
        // come since `current` was read), in the same catalog save as the
        // index changes when there are any: a failed save changes nothing.
        let switching_to_ppr =
            matches!(billing, BillingMode::PayPerRequest) && !matches!(current.billing, BillingMode::PayPerRequest);
        let change_settings = |settings: &mut TableSettings| {
            if let Some(on) = input.deletion_protection {
                settings.deletion_protection = on;
            }
            if let Some(class) = input.table_class {
                // Naming the class the table has changes nothing (a table that
                // never named one is STANDARD).
                let has = settings.table_class.map_or(TableClass::Standard, |c| c.class);
                if has != class {
                    settings.table_class = Some(TableClassSetting { class, updated_at: Some(now) });
                }
            }
            if let Some(key) = &sse_key {
                settings.sse_kms_key = key.clone();
            }
            if let Some(on_demand) = given(input.on_demand) {
                settings.on_demand_max = Some(merge_limits(settings.on_demand_max.unwrap_or((-1, -1)), on_demand));
            }
            // A provisioned table's warm throughput is the most units it ever
            // had: those it leaves are kept. (Not an on-demand table's initial
            // throughput: the capacity model pre-warms to what is kept, and an
            // on-demand table's partitions already serve it.)
            if m.billing || m.throughput {
                if let BillingMode::Provisioned { read, write } = current.billing {
                    let kept = current.warm.unwrap_or((0, 0));
                    settings.warm = Some((kept.0.max(read), kept.1.max(write)));
                }
            }
            if let Some(warm) = given(input.warm) {
                settings.warm = Some(merge_limits(shown_warm, warm));
            }
            if let (BillingMode::Provisioned { read, write }, BillingMode::Provisioned { read: r0, write: w0 }) =
                (billing, settings.billing)
            {
                settings.changes.record((r0, w0), (read, write), now);
            }
            if switching_to_ppr {
                settings.last_pay_per_request_switch = Some(now);
            }
            settings.billing = billing;
        };
        let index_plans = match &input.index_updates {
            Some(updates) if !updates.is_empty() => self.update_indexes(
                &table,
                updates,
                &input.attribute_definitions,
                billing,
                TableChange { apply: &change_settings, to_on_demand: switching_to_ppr, stream },
                now,
            )?,
            _ => Vec::new(),
        };
        if index_plans.is_empty() {
            // The settings alone, saved with the index definitions in force
            // (the data lock held to the save and the GSIs' switch: data,
            // then settings, the engine's order). A write lock only for the
            // switch, except with a stream change, which holds it from the
            // start: its change records open or close in the same critical
            // section as the save, so no reader sees the setting without them.
            if stream.is_some() {
                let mut data = table.data.write();
                let saved = self.save_settings(&table, &data, &change_settings, switching_to_ppr, stream, now)?;
                // A stream change always changes the settings: they were saved.
                debug_assert!(saved.is_some());
                let stream_change = saved.flatten();
                if switching_to_ppr {
                    follow_onto_on_demand(&mut data, now);
                }
                // The capacity model first: a new stream's shards follow the
                // partitions the table has after the request.
                follow_settings(&table, now);
                if let Some(change) = &stream_change {
                    crate::stream::apply_stream_change(&table, &mut data, change, now);
                }
            } else {
                let data = table.data.upgradable_read();
                let saved = self.save_settings(&table, &data, &change_settings, switching_to_ppr, None, now)?;
                if saved.is_some() && switching_to_ppr {
                    follow_onto_on_demand(&mut RwLockUpgradableReadGuard::upgrade(data), now);
                }
            }
        }
        follow_settings(&table, now);
        // DynamoDB answers ACTIVE for the changes it makes at once, and
        // UPDATING while a table's capacity, class, stream or index set is
        // being changed.
        let class_changed = input
            .table_class
            .is_some_and(|c| current.table_class.map_or(crate::table::TableClass::Standard, |s| s.class) != c);
        let slow = m.billing
            || m.throughput
            || m.stream
            || class_changed
            || index_plans.iter().any(|p| !matches!(p, IndexPlan::Update { .. }));
        Ok(table.describe(if slow { "UPDATING" } else { "ACTIVE" }, now))
    }

    /// UpdateTable's GlobalSecondaryIndexUpdates (S37-S42): every entry is
    /// checked against the table before any is applied; then creates (with
    /// a backfill), throughput updates and deletes of GSIs.
    fn update_indexes(
        &self,
        table: &Table,
        updates: &[IndexUpdate],
        definitions: &[(String, ScalarType)],
        billing: BillingMode,
        table_change: TableChange<'_>,
        now: Millis,
    ) -> Result<Vec<IndexPlan>, EngineError> {
        let TableChange { apply: change_settings, to_on_demand: switching_to_ppr, stream } = table_change;
        for (i, u) in updates.iter().enumerate() {
            if updates[..i].iter().any(|v| v.index_name() == u.index_name()) {
                return Err(invalid(format!(
                    "Only one global secondary index update per index is allowed simultaneously. Index: {}",
                    u.index_name()
                )));
            }
        }
        let online = updates.iter().filter(|u| !matches!(u, IndexUpdate::Update { .. })).count();
        if online > 1 {
            return Err(EngineError::LimitExceeded(
                "Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously per table"
                    .into(),
            ));
        }
        let mut data = table.data.write();
        // During a backfill the index being built may be deleted, but no
        // other index added or removed (S42).
        if let Some(busy) = data.indexes.iter().find(|ix| !ix.is_active(now)) {
            let deletes_busy = updates.iter().all(|u| {
                matches!(u, IndexUpdate::Delete { name } if *name == busy.def.name)
                    || matches!(u, IndexUpdate::Update { .. })
            });
            if online > 0 && !deletes_busy {
                return Err(EngineError::LimitExceeded(
                    "Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously per table"
                        .into(),
                ));
            }
        }
        // The stream change is checked before any index is changed or
        // backfilled (UpdateTable's changes are serialised: the table's
        // stream setting cannot change before the save below).
        let stream_change = {
            let settings = table.settings.lock();
            stream
                .map(|view| {
                    self.prepare_stream_change(
                        (&table.name, &table.arn),
                        &data.streams,
                        settings.stream.as_ref(),
                        view,
                        now,
                    )
                })
                .transpose()?
        };
        let mut plans = Vec::with_capacity(updates.len());
        for (position_in_request, update) in updates.iter().enumerate() {
            plans.push(match update {
                IndexUpdate::Create(spec) => {
                    if data.index_position(&spec.name).is_some() {
                        return Err(EngineError::validation("Attempting to create an index which already exists"));
                    }
                    let globals = data.indexes.iter().filter(|i| i.def.kind == IndexKind::Global).count();
                    if globals >= MAX_GLOBAL_INDEXES {
                        return Err(EngineError::LimitExceeded(format!(
                            "Subscriber limit exceeded: Number of global secondary indexes exceeds per-table limit of {MAX_GLOBAL_INDEXES}"
                        )));
                    }
                    if definitions.is_empty() {
                        return Err(invalid(format!("AttributeDefinitions is not specified for index: {}", spec.name)));
                    }
                    check_redefinitions(table, &data, definitions)?;
                    let defs: HashMap<&str, ScalarType> = definitions.iter().map(|(n, t)| (n.as_str(), *t)).collect();
                    let order: Vec<&str> = definitions.iter().map(|(n, _)| n.as_str()).collect();
                    let schema = index_schema(IndexKind::Global, spec, &table.key_schema, &defs, &order)?;
                    let def =
                        index_def(IndexKind::Global, spec, schema, billing, IndexContext::UpdateTable, &self.config.region, now)?;
                    check_projected_total(data.indexes.iter().map(|i| &i.def).chain([&def]))?;
                    IndexPlan::Create(def)
                }
                IndexUpdate::Update { name, throughput, on_demand, warm } => {
                    let position = global_position(table, &data, name, "update")?;
                    let ix = &data.indexes[position];
                    let def = &ix.def;
                    // On demand only the maxima and the warm throughput
                    // change; an Update with neither (an empty
                    // OnDemandThroughput is none) is refused the same way
                    // (ack-api-quirks DDB-TABLE-152, -456).
                    let nothing = throughput.is_none() && given(*on_demand).is_none() && given(*warm).is_none();
                    if (throughput.is_some() || nothing) && matches!(billing, BillingMode::PayPerRequest) {
                        return Err(invalid(format!(
                            "The only Updates for index: {name} when TableThroughputMode is PAY_PER_REQUEST can be to OnDemandThroughput, WarmThroughput"
                        )));
                    }
                    if let (Some((r0, w0)), Some((read, write))) = (def.throughput, *throughput) {
                        if (r0, w0) == (read, write) {
                            return Err(EngineError::validation(format!(
                                "The provisioned throughput for the index {name} will not change. The requested value equals the current value. Current ReadCapacityUnits provisioned for index {name}: {r0}. Requested ReadCapacityUnits: {read}. Current WriteCapacityUnits provisioned for index {name}: {w0}. Requested WriteCapacityUnits: {write}. Refer to the Amazon DynamoDB Developer Guide for current limits and how to request higher limits."
                            )));
                        }
                    }
                    if nothing {
                        return Err(EngineError::validation(format!(
                            "1 validation error detected: Value null at 'globalSecondaryIndexUpdates.{}.member.update.provisionedThroughput' failed to satisfy constraint: Member must not be null",
                            position_in_request + 1
                        )));
                    }
                    let on_demand_max = match given(*on_demand) {
                        Some(m) => {
                            if matches!(billing, BillingMode::Provisioned { .. }) {
                                return Err(invalid(format!(
                                    "{} for OnDemandThroughput for index : {name} cannot be specified when the table BillingMode is PROVISIONED",
                                    on_demand_member(m)
                                )));
                            }
                            Some(merge_limits(def.on_demand_max.unwrap_or((-1, -1)), m))
                        }
                        None => def.on_demand_max,
                    };
                    let warm = match given(*warm) {
                        Some((read, write)) => {
                            let model = ix.capacity.lock().as_ref().map(|model| model.warm_throughput());
                            let shown = index_warm_shown(def, model);
                            for (unit, asked, shown) in
                                [("ReadUnitsPerSecond", read, shown.0), ("WriteUnitsPerSecond", write, shown.1)]
                            {
                                if asked.is_some_and(|asked| asked < shown) {
                                    return Err(invalid(format!(
                                        "Requested {unit} for WarmThroughput for index {name} is lower than current WarmThroughput, decreasing WarmThroughput is not supported"
                                    )));
                                }
                            }
                            Some(merge_limits(shown, (read, write)))
                        }
                        None => def.warm,
                    };
                    // A decrease within the index's own budget of the day
                    // (apart from its table's: ack-api-quirks DDB-TABLE-157).
                    let mut changes = def.changes;
                    if let (Some(old), Some(new)) = (def.throughput, *throughput) {
                        if ThroughputChanges::lowers(old, new) {
                            changes.check_decrease(now)?;
                        }
                        changes.record(old, new, now);
                    }
                    // A provisioned GSI's warm throughput is the most units it
                    // ever had: a decrease keeps what it had (DDB-TABLE-134).
                    let warm = match (def.throughput, *throughput) {
                        (Some(old), Some(new)) if new.0 < old.0 || new.1 < old.1 => {
                            let kept = warm.unwrap_or((0, 0));
                            Some((kept.0.max(old.0), kept.1.max(old.1)))
                        }
                        _ => warm,
                    };
                    IndexPlan::Update {
                        name: name.clone(),
                        throughput: throughput.or(def.throughput),
                        on_demand_max,
                        warm,
                        changes,
                    }
                }
                IndexUpdate::Delete { name } => {
                    global_position(table, &data, name, "delete")?;
                    IndexPlan::Delete { name: name.clone() }
                }
            });
        }
        // First the backfills (storage writes, which may fail: no index is
        // listed yet), then the catalog with every change, then memory,
        // which cannot fail: a failure leaves the table as it was.
        let mut created = Vec::new();
        for plan in &plans {
            if let IndexPlan::Create(def) = plan {
                // The backfill: every item's entry is computed now (no
                // reader sees them while the index is CREATING); their
                // index write units are then written in the background,
                // charged to the index (`IndexData::is_active`), after at
                // least one allocation step.
                let allocated = Millis(now.0 + BACKFILL_MIN_MS);
                let def = IndexDef { backfilled_at: Some(allocated), ..def.clone() };
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
                created.push(ix);
            }
        }
        let deleted: Vec<&str> = plans
            .iter()
            .filter_map(|p| match p {
                IndexPlan::Delete { name } => Some(name.as_str()),
                _ => None,
            })
            .collect();
        let updated = |name: &str| {
            plans.iter().find_map(|p| match p {
                IndexPlan::Update { name: n, throughput, on_demand_max, warm, changes } if n == name => {
                    Some((*throughput, *on_demand_max, *warm, *changes))
                }
                _ => None,
            })
        };
        let defs: Vec<IndexDef> = data
            .indexes
            .iter()
            .filter(|i| !deleted.contains(&i.def.name.as_str()))
            .map(|i| match updated(&i.def.name) {
                Some((throughput, on_demand_max, warm, changes)) => {
                    IndexDef { throughput, on_demand_max, warm, changes, ..i.def.clone() }
                }
                None => i.def.clone(),
            })
            .chain(created.iter().map(|ix| ix.def.clone()))
            .collect();
        // One save for the indexes, the table's settings and its stream.
        let mut guard = table.settings.lock();
        let mut settings = guard.clone();
        change_settings(&mut settings);
        if let Some(change) = &stream_change {
            settings.stream = Some(change.setting.clone());
        }
        let defs = if switching_to_ppr { defs.iter().map(on_demand_def).collect() } else { defs };
        self.storage.save_table_meta(&table.meta_with(settings.clone(), defs))?;
        *guard = settings;
        drop(guard);
        data.indexes.retain(|i| !deleted.contains(&i.def.name.as_str()));
        for ix in data.indexes.iter_mut() {
            let Some((throughput, on_demand_max, warm, changes)) = updated(&ix.def.name) else { continue };
            let mode_changed = ix.def.throughput != throughput;
            (ix.def.throughput, ix.def.on_demand_max, ix.def.warm, ix.def.changes) =
                (throughput, on_demand_max, warm, changes);
            if let Some(model) = ix.capacity.lock().as_mut() {
                if mode_changed {
                    let mode = match throughput {
                        Some((read, write)) => {
                            dynaburst_capacity::Mode::Provisioned { read: read as f64, write: write as f64 }
                        }
                        None => dynaburst_capacity::Mode::OnDemand,
                    };
                    model.set_mode(mode, now);
                }
                apply_index_limits(model, &ix.def, now);
            }
        }
        data.indexes.extend(created);
        if switching_to_ppr {
            follow_onto_on_demand(&mut data, now);
        }
        // The table's capacity model follows the settings just saved, before
        // anything below can fail; then a new stream's shards follow its
        // partitions.
        follow_settings(table, now);
        if let Some(change) = &stream_change {
            crate::stream::apply_stream_change(table, &mut data, change, now);
        }
        // A deleted index's stored entries go once the catalog no longer
        // names it (a crash between leaves entries no index reads, which
        // the next start-up drops, as it drops those of a backfill a crash
        // cut short).
        // Best effort: the request is done (a failure poisons durable
        // storage, whose next start drops the entries the catalog does not
        // name).
        for name in deleted {
            let _ = self.storage.drop_index(&table.name, name);
        }
        Ok(plans)
    }
}

/// An attribute keeps the type it has elsewhere in the table (S11).
fn check_redefinitions(
    table: &Table,
    data: &crate::table::TableData,
    definitions: &[(String, ScalarType)],
) -> Result<(), EngineError> {
    for (name, ty) in definitions {
        let existing = table.key_schema.pairs_names().contains(&name.as_str()).then(|| {
            if table.key_schema.hash.name == *name {
                table.key_schema.hash.ty
            } else {
                table.key_schema.range.as_ref().map_or(*ty, |r| r.ty)
            }
        });
        let existing = existing
            .or_else(|| data.indexes.iter().flat_map(|i| i.def.schema.attrs()).find(|a| a.name == *name).map(|a| a.ty));
        if existing.is_some_and(|t| t != *ty) {
            return Err(invalid(format!(
                "Attributes cannot be redefined. Please check that your attribute has the same type as previously defined. Existing schema: {name}:{} New schema: {name}:{}",
                existing.map(|t| t.descriptor()).unwrap_or_default(),
                ty.descriptor()
            )));
        }
    }
    Ok(())
}

/// The position of GSI `name`, for a GlobalSecondaryIndexUpdate's Update
/// or Delete (`action`): an LSI cannot be either (S15).
fn global_position(
    table: &Table,
    data: &crate::table::TableData,
    name: &str,
    action: &str,
) -> Result<usize, EngineError> {
    match data.index_position(name) {
        Some(p) if data.indexes[p].def.kind == IndexKind::Global => Ok(p),
        Some(_) => {
            Err(EngineError::validation(format!("Cannot {action} an index that is not a GlobalSecondaryIndex: {name}")))
        }
        None => Err(EngineError::ResourceNotFound(format!(
            "Requested resource not found: Index {name} for table {}",
            table.name
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> UpdateTableInput {
        UpdateTableInput::new("t")
    }

    fn refusal(input: UpdateTableInput) -> String {
        match check_request(&input, "us-east-1") {
            Err(EngineError::Validation(m)) => m,
            other => panic!("expected a ValidationException, got {other:?}"),
        }
    }

    const IV: &str = "One or more parameter values were invalid: ";

    #[test]
    fn members_that_must_come_alone_or_apart_are_refused_with_dynamodbs_texts() {
        let stream = Some((true, Some(crate::stream::StreamViewType::NewImage)));
        let create = IndexUpdate::Create(IndexSpec {
            name: "g".into(),
            key_schema: vec![("a".into(), KeyRole::Hash)],
            projection_type: Some(ProjectionType::All),
            non_key_attributes: None,
            throughput: None,
            on_demand: None,
            warm: None,
        });
        let cases: Vec<(UpdateTableInput, &str)> = vec![
            (request(), "At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, GlobalSecondaryIndexUpdates, SSESpecification, ReplicaUpdates, MultiAccountReplicaReady, ReplicaTransitRoleArn, MultiRegionConsistency, DeletionProtectionEnabled, OnDemandThroughput, WarmThroughput or TableClass is required"),
            (UpdateTableInput { index_updates: Some(Vec::new()), deletion_protection: Some(true), ..request() }, "List of GlobalSecondaryIndexUpdates is empty"),
            (UpdateTableInput { on_demand: Some((Some(5), None)), warm: Some((Some(20_000), None)), ..request() }, "OnDemandThroughput can only be combined with BillingMode in an UpdateTable request"),
            (UpdateTableInput { on_demand: Some((Some(5), None)), stream, ..request() }, "OnDemandThroughput can only be combined with BillingMode in an UpdateTable request"),
            (UpdateTableInput { warm: Some((Some(20_000), None)), index_updates: Some(vec![create.clone()]), ..request() }, "Create global secondary index cannot be specified when updating WarmThroughput"),
            (UpdateTableInput { warm: Some((Some(20_000), None)), throughput: Some((5, 5)), ..request() }, "WarmThroughput must be the only operation in the request"),
            (UpdateTableInput { throughput: Some((5, 5)), stream, ..request() }, "You cannot modify stream status while updating table IOPS"),
            (UpdateTableInput { throughput: Some((5, 5)), index_updates: Some(vec![IndexUpdate::Delete { name: "g".into() }]), ..request() }, "You cannot create or delete index while updating table IOPS"),
            (UpdateTableInput { stream, index_updates: Some(vec![create]), ..request() }, "You cannot create or delete index while changing stream status"),
            (UpdateTableInput { billing_mode_pay_per_request: Some(true), throughput: Some((5, 5)), ..request() }, "ProvisionedThroughput cannot be specified when BillingMode is PAY_PER_REQUEST"),
            (UpdateTableInput { on_demand: Some((Some(0), None)), ..request() }, "Requested MaxReadRequestUnits for OnDemandThroughput for table is outside of valid range"),
            (UpdateTableInput { on_demand: Some((Some(-1), Some(-2))), ..request() }, "Requested MaxWriteRequestUnits for OnDemandThroughput for table is outside of valid range"),
            (UpdateTableInput { stream: Some((true, None)), ..request() }, "If stream is being enabled then UpdateViewType is required"),
        ];
        for (input, want) in cases {
            let got = refusal(input);
            let want = if want.starts_with("At least") { want.to_string() } else { format!("{IV}{want}") };
            assert_eq!(got, want);
        }
        // An empty struct counts as absent; so does an empty index list for
        // the members a request holds.
        assert_eq!(
            refusal(UpdateTableInput { warm: Some((None, None)), index_updates: Some(Vec::new()), ..request() }),
            nothing_to_update(&[])
        );
        // A member this server does not model is left out of the list.
        assert_eq!(
            refusal(UpdateTableInput { unmodelled: vec!["MultiRegionConsistency"], ..request() }),
            "At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, GlobalSecondaryIndexUpdates, SSESpecification, ReplicaUpdates, MultiAccountReplicaReady, ReplicaTransitRoleArn, DeletionProtectionEnabled, OnDemandThroughput, WarmThroughput or TableClass is required"
        );
        // What may go together passes: a billing switch with its on-demand
        // maxima, throughput with GSI throughput, PAY_PER_REQUEST with a stream.
        for ok in [
            UpdateTableInput {
                billing_mode_pay_per_request: Some(true),
                on_demand: Some((Some(5), None)),
                ..request()
            },
            UpdateTableInput {
                throughput: Some((5, 5)),
                index_updates: Some(vec![IndexUpdate::Update {
                    name: "g".into(),
                    throughput: Some((1, 1)),
                    on_demand: None,
                    warm: None,
                }]),
                ..request()
            },
            UpdateTableInput { billing_mode_pay_per_request: Some(true), stream, ..request() },
            UpdateTableInput { on_demand: Some((Some(-1), Some(-1))), ..request() },
        ] {
            assert!(check_request(&ok, "us-east-1").is_ok());
        }
    }

    #[test]
    fn units_above_the_account_maximum_are_a_limit_not_a_validation() {
        let got = check_request(&UpdateTableInput { throughput: Some((40_001, 5)), ..request() }, "us-east-1");
        assert_eq!(
            got.err(),
            Some(EngineError::LimitExceeded(
                "The requested ReadCapacityUnits, 40001, is above the per table maximum for the account in us-east-1. Per table maximum: 40000. Refer to the Amazon DynamoDB Developer Guide for current limits and how to request higher limits.".into()
            ))
        );
        let got = check_request(&UpdateTableInput { on_demand: Some((None, Some(40_001))), ..request() }, "eu-west-1");
        assert_eq!(
            got.err(),
            Some(EngineError::LimitExceeded(
                "Subscriber limit exceeded: Requested MaxWriteRequestUnits for OnDemandThroughput for table exceeds TableMaxWriteCapacityUnits of the account in region eu-west-1".into()
            ))
        );
        assert!(
            check_request(&UpdateTableInput { throughput: Some((40_000, 40_000)), ..request() }, "us-east-1").is_ok()
        );
    }
}
