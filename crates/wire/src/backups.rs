//! On-demand backups and continuous backups: CreateBackup, DescribeBackup,
//! ListBackups, DeleteBackup, RestoreTableFromBackup,
//! DescribeContinuousBackups and UpdateContinuousBackups. The service model
//! has checked every member's type and constraints before these run.

use dynaburst_engine::backup::{
    Backup, BillingModeOverride, ContinuousBackups, ListBackupsInput, RestoreInput, RestorePoint, MAX_LIST_BACKUPS,
    MAX_RECOVERY_PERIOD_DAYS,
};
use dynaburst_engine::index::IndexKind;
use dynaburst_engine::{BillingMode, Engine, Millis, TableDescription};
use serde_json::{json, Map, Value};

use crate::error::ApiError;
use crate::ops::{
    index_shape_json, key_role, parse_indexes, parse_sse, parse_throughput, secs, sse_description_json,
    table_description_json, GSI_KEY_ELEMENTS, TABLE_KEY_ELEMENTS,
};
use crate::request::{Req, Violations};

/// A required string member (the service model has checked it is there).
fn required<'a>(req: &Req<'a>, name: &str) -> Result<&'a str, ApiError> {
    Ok(req.opt_str(name)?.unwrap_or_default())
}

/// A timestamp member (epoch seconds, as a JSON number or a string of
/// one) as milliseconds. Any other string is refused, not ignored: a
/// bound dropped in silence would list backups outside the range asked.
fn timestamp(req: &Req<'_>, name: &str) -> Result<Option<Millis>, ApiError> {
    let seconds = match req.get(name) {
        None => return Ok(None),
        Some(Value::String(text)) => text.trim().parse::<f64>().ok().filter(|s| s.is_finite()),
        Some(v) => v.as_f64(),
    };
    match seconds {
        Some(s) => Ok(Some(Millis((s.max(0.0) * 1000.0) as u64))),
        None => Err(ApiError::serialization("STRING_VALUE cannot be converted to Date")),
    }
}

/// BackupDetails.
fn details_json(b: &Backup) -> Value {
    let mut details = json!({
        "BackupArn": b.arn,
        "BackupName": b.name,
        "BackupSizeBytes": b.size_bytes,
        "BackupStatus": b.status.name(),
        "BackupType": b.kind.name(),
        "BackupCreationDateTime": secs(b.created_at),
    });
    add_expiry(&mut details, b);
    details
}

/// BackupExpiryDateTime, which only a SYSTEM backup has.
fn add_expiry(out: &mut Value, b: &Backup) {
    if let (Some(at), Value::Object(m)) = (b.expires_at(), out) {
        m.insert("BackupExpiryDateTime".into(), secs(at));
    }
}

fn billing_json(billing: BillingMode) -> (&'static str, u64, u64) {
    match billing {
        BillingMode::PayPerRequest => ("PAY_PER_REQUEST", 0, 0),
        BillingMode::Provisioned { read, write } => ("PROVISIONED", read, write),
    }
}

/// BackupDescription: the details, the source table and its features.
fn description_json(b: &Backup) -> Value {
    let s = &b.source;
    let (mode, read, write) = billing_json(s.settings.billing);
    let mut table = json!({
        "TableName": s.name,
        "TableId": s.table_id,
        "TableArn": s.arn(),
        "TableSizeBytes": b.size_bytes,
        "KeySchema": s.key_schema.pairs().iter().map(|(n, r)| json!({"AttributeName": n, "KeyType": key_role(*r)})).collect::<Vec<_>>(),
        "TableCreationDateTime": secs(s.created_at),
        "ProvisionedThroughput": {"ReadCapacityUnits": read, "WriteCapacityUnits": write},
        "ItemCount": b.item_count,
        "BillingMode": mode,
    });
    if let (Some(limits), Value::Object(m)) = (crate::ops::on_demand_json(s.settings.on_demand_max), &mut table) {
        m.insert("OnDemandThroughput".into(), limits);
    }
    let mut features = Map::new();
    for (kind, member) in [(IndexKind::Local, "LocalSecondaryIndexes"), (IndexKind::Global, "GlobalSecondaryIndexes")] {
        let list: Vec<Value> = s
            .indexes
            .iter()
            .filter(|d| d.kind == kind)
            .map(|d| {
                let mut m = index_shape_json(d);
                if kind == IndexKind::Global {
                    let (r, w) = d.throughput.unwrap_or((0, 0));
                    m.insert("ProvisionedThroughput".into(), json!({"ReadCapacityUnits": r, "WriteCapacityUnits": w}));
                }
                Value::Object(m)
            })
            .collect();
        if !list.is_empty() {
            features.insert(member.into(), Value::Array(list));
        }
    }
    if let Some(stream) = s.settings.stream.as_ref().filter(|st| st.enabled) {
        features
            .insert("StreamDescription".into(), json!({"StreamEnabled": true, "StreamViewType": stream.view.name()}));
    }
    if let Some(sse) = sse_description_json(&s.settings) {
        features.insert("SSEDescription".into(), sse);
    }
    if let Some(ttl) = &s.settings.ttl {
        features.insert(
            "TimeToLiveDescription".into(),
            json!({"TimeToLiveStatus": if ttl.enabled { "ENABLED" } else { "DISABLED" }, "AttributeName": ttl.attribute}),
        );
    }
    json!({
        "BackupDetails": details_json(b),
        "SourceTableDetails": table,
        "SourceTableFeatureDetails": Value::Object(features),
    })
}

/// CreateBackup.
pub fn create(engine: &Engine, body: &Value, now: Millis) -> Result<Value, ApiError> {
    let req = Req::new(body)?;
    let table = req.table_name()?;
    let name = required(&req, "BackupName")?;
    let backup = engine.create_backup(&table, name, now)?;
    // DynamoDB's answer always says CREATING (ack-api-quirks DDB-BACKUP-003);
    // the snapshot here is complete before it leaves, so DescribeBackup says
    // AVAILABLE from the next call on.
    let mut details = details_json(&backup);
    if let Value::Object(m) = &mut details {
        m.insert("BackupStatus".into(), json!("CREATING"));
    }
    Ok(json!({ "BackupDetails": details }))
}

/// DescribeBackup.
pub fn describe(engine: &Engine, body: &Value) -> Result<Value, ApiError> {
    let req = Req::new(body)?;
    let backup = engine.describe_backup(required(&req, "BackupArn")?)?;
    Ok(json!({ "BackupDescription": description_json(&backup) }))
}

/// DeleteBackup: the description of the backup, DELETED.
pub fn delete(engine: &Engine, body: &Value) -> Result<Value, ApiError> {
    let req = Req::new(body)?;
    let backup = engine.delete_backup(required(&req, "BackupArn")?)?;
    Ok(json!({ "BackupDescription": description_json(&backup) }))
}

/// ListBackups.
pub fn list(engine: &Engine, body: &Value) -> Result<Value, ApiError> {
    let req = Req::new(body)?;
    let table_name = req.opt_str("TableName")?.map(str::to_string);
    // The service model has checked it is USER, SYSTEM, AWS_BACKUP or ALL.
    let backup_type = req.opt_str("BackupType")?;
    let input = ListBackupsInput {
        table_name,
        lower: timestamp(&req, "TimeRangeLowerBound")?,
        upper: timestamp(&req, "TimeRangeUpperBound")?,
        user: matches!(backup_type, None | Some("USER") | Some("ALL")),
        system: matches!(backup_type, Some("SYSTEM") | Some("ALL")),
        limit: req.opt_i64("Limit")?.map_or(MAX_LIST_BACKUPS, |n| n.clamp(1, MAX_LIST_BACKUPS as i64) as usize),
        exclusive_start: req.opt_str("ExclusiveStartBackupArn")?.map(str::to_string),
    };
    if let (Some(lower), Some(upper)) = (input.lower, input.upper) {
        if lower > upper {
            return Err(ApiError::validation(
                "One or more parameter values were invalid: Time range lower bound must be less than or equal to upper bound",
            ));
        }
    }
    let page = engine.list_backups(&input)?;
    let summaries: Vec<Value> = page
        .backups
        .iter()
        .map(|b| {
            let mut summary = json!({
                "TableName": b.source.name,
                "TableId": b.source.table_id,
                "TableArn": b.source.arn(),
                "BackupArn": b.arn,
                "BackupName": b.name,
                "BackupCreationDateTime": secs(b.created_at),
                "BackupStatus": b.status.name(),
                "BackupType": b.kind.name(),
                "BackupSizeBytes": b.size_bytes,
            });
            add_expiry(&mut summary, b);
            summary
        })
        .collect();
    let mut out = json!({ "BackupSummaries": summaries });
    if let (Some(last), Value::Object(m)) = (page.last_evaluated, &mut out) {
        m.insert("LastEvaluatedBackupArn".into(), json!(last));
    }
    Ok(out)
}

/// RestoreTableFromBackup: the new table, CREATING, with its RestoreSummary.
pub fn restore(engine: &Engine, body: &Value, now: Millis) -> Result<Value, ApiError> {
    let req = Req::new(body)?;
    let input = restore_input(&req, required(&req, "BackupArn")?)?;
    let (description, summary) = engine.restore_table_from_backup(input, now)?;
    let description = TableDescription { restore: Some(summary), ..description };
    Ok(json!({ "TableDescription": table_description_json(&description) }))
}

/// RestoreTableToPointInTime: the new table, CREATING, with its
/// RestoreSummary (no SourceBackupArn). Exactly one of RestoreDateTime and
/// UseLatestRestorableTime (ack-api-quirks DDB-TABLE-272).
pub fn restore_to_point_in_time(engine: &Engine, body: &Value, now: Millis) -> Result<Value, ApiError> {
    let req = Req::new(body)?;
    let latest = req.opt_bool("UseLatestRestorableTime")?.unwrap_or(false);
    let at = timestamp(&req, "RestoreDateTime")?;
    let point = match (at, latest) {
        (Some(_), true) => {
            return Err(ApiError::validation(
                "Invalid Request: Both RestoreDateTime and UseLatestRestorableTime cannot be set for point-in-time restore request. Please provide only one of them.",
            ))
        }
        (Some(t), false) => RestorePoint::At(t),
        (None, true) => RestorePoint::Latest,
        (None, false) => {
            return Err(ApiError::validation(
                "Invalid Request: Either one of RestoreDateTime or UseLatestRestorableTime must be specified, but not both",
            ))
        }
    };
    let input = restore_input(&req, "")?;
    let (description, summary) = engine.restore_table_to_point_in_time(
        req.opt_str("SourceTableName")?,
        req.opt_str("SourceTableArn")?,
        point,
        input,
        now,
    )?;
    let description = TableDescription { restore: Some(summary), ..description };
    Ok(json!({ "TableDescription": table_description_json(&description) }))
}

/// A restore's target and overrides.
fn restore_input(req: &Req<'_>, backup_arn: &str) -> Result<RestoreInput, ApiError> {
    let mut violations = Violations::default();
    let throughput_override = match req.get("ProvisionedThroughputOverride") {
        Some(v) => Some(parse_throughput(v, &mut violations)?),
        None => None,
    };
    let global_index_override = parse_indexes(req, "GlobalSecondaryIndexOverride", GSI_KEY_ELEMENTS, &mut violations)?;
    let local_index_override = parse_indexes(req, "LocalSecondaryIndexOverride", TABLE_KEY_ELEMENTS, &mut violations)?;
    violations.finish()?;
    let billing_override = match req.opt_str("BillingModeOverride")? {
        Some("PROVISIONED") => Some(BillingModeOverride::Provisioned),
        Some("PAY_PER_REQUEST") => Some(BillingModeOverride::PayPerRequest),
        _ => None,
    };
    Ok(RestoreInput {
        target_table_name: required(req, "TargetTableName")?.to_string(),
        backup_arn: backup_arn.to_string(),
        billing_override,
        throughput_override,
        global_index_override,
        local_index_override,
        on_demand_override: match req.get("OnDemandThroughputOverride") {
            Some(v) => {
                let o = Req::new(v)?;
                Some((o.opt_i64("MaxReadRequestUnits")?, o.opt_i64("MaxWriteRequestUnits")?))
            }
            None => None,
        },
        sse_override: parse_sse(req, "SSESpecificationOverride")?,
    })
}

fn continuous_json(c: &ContinuousBackups) -> Value {
    let mut pitr = Map::new();
    match (&c.pitr, c.restorable) {
        (Some(p), Some((earliest, latest))) => {
            pitr.insert("PointInTimeRecoveryStatus".into(), json!("ENABLED"));
            pitr.insert("RecoveryPeriodInDays".into(), json!(p.recovery_period_days));
            pitr.insert("EarliestRestorableDateTime".into(), secs(earliest));
            pitr.insert("LatestRestorableDateTime".into(), secs(latest));
        }
        _ => {
            pitr.insert("PointInTimeRecoveryStatus".into(), json!("DISABLED"));
        }
    }
    json!({ "ContinuousBackupsDescription": {
        "ContinuousBackupsStatus": "ENABLED",
        "PointInTimeRecoveryDescription": Value::Object(pitr),
    }})
}

/// DescribeContinuousBackups.
pub fn describe_continuous(engine: &Engine, body: &Value, now: Millis) -> Result<Value, ApiError> {
    let table = Req::new(body)?.table_name()?;
    Ok(continuous_json(&engine.describe_continuous_backups(&table, now)?))
}

/// UpdateContinuousBackups.
pub fn update_continuous(engine: &Engine, body: &Value, now: Millis) -> Result<Value, ApiError> {
    let req = Req::new(body)?;
    let table = req.table_name()?;
    let spec = Req::new(req.get("PointInTimeRecoverySpecification").unwrap_or(&Value::Null))?;
    let enabled = spec.opt_bool("PointInTimeRecoveryEnabled")?.unwrap_or(false);
    let days = spec.opt_i64("RecoveryPeriodInDays")?.map(|d| d.clamp(1, i64::from(MAX_RECOVERY_PERIOD_DAYS)) as u32);
    if !enabled && days.is_some() {
        return Err(ApiError::validation(
            "Invalid Request: Cannot specify RecoveryPeriodInDays when disabling point-in-time recovery.",
        ));
    }
    Ok(continuous_json(&engine.update_continuous_backups(&table, enabled, days, now)?))
}
