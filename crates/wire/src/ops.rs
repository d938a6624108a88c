//! One function per operation: request JSON in, response JSON out.

use std::hash::{DefaultHasher, Hash, Hasher};

use dynaburst_engine::index::{IndexKind, IndexProjection};
use dynaburst_engine::stream::StreamViewType;
use dynaburst_engine::*;
use dynaburst_model::ScalarType;
use serde_json::{json, Map, Value};

use crate::error::ApiError;
use crate::legacy::{self, Operation};
use crate::request::{check_table_name, check_table_name_or_arn, null_member, Req, Violations};
use crate::value::{item_to_json, parse_item, wrong_json_type};

pub use dynaburst_ddbjson::MAX_BATCH_WRITE_ITEMS;
/// Most actions in one TransactWriteItems or TransactGetItems.
pub const MAX_TRANSACT_ITEMS: usize = 100;
/// Most bytes of items one TransactWriteItems carries (4 MB).
pub const MAX_TRANSACTION_BYTES: usize = 4 * 1024 * 1024;
/// Longest ClientRequestToken.
pub const MAX_CLIENT_TOKEN: usize = 36;
/// Most table names ListTables returns at once.
pub const MAX_LIST_TABLES: i64 = 100;
/// Largest TotalSegments of a parallel Scan.
pub const MAX_TOTAL_SEGMENTS: i64 = 1_000_000;

pub(crate) fn secs(m: Millis) -> Value {
    json!(m.0 as f64 / 1000.0)
}

/// A `Capacity` object: CapacityUnits, and the read and write parts that
/// are not zero.
/// Which ConsumedCapacity members an operation's answer carries.
#[derive(Clone, Copy, PartialEq)]
enum UnitsShown {
    /// CapacityUnits only: GetItem, PutItem, UpdateItem, DeleteItem and the
    /// batches, at TOTAL and INDEXES alike (S59).
    Total,
    /// CapacityUnits with its ReadCapacityUnits / WriteCapacityUnits split:
    /// Query, Scan and the transactions.
    Split,
}

fn units_json(read: f64, write: f64, shown: UnitsShown) -> Map<String, Value> {
    let mut t = Map::new();
    t.insert("CapacityUnits".into(), json!(read + write));
    if shown == UnitsShown::Split {
        if read > 0.0 {
            t.insert("ReadCapacityUnits".into(), json!(read));
        }
        if write > 0.0 {
            t.insert("WriteCapacityUnits".into(), json!(write));
        }
    }
    t
}

/// ConsumedCapacity of an item operation or a batch (S59).
pub(crate) fn item_capacity_json(c: &ConsumedCapacity) -> Value {
    consumed_json(c, UnitsShown::Total)
}

/// ConsumedCapacity of a Query, a Scan or a transaction.
pub(crate) fn capacity_json(c: &ConsumedCapacity) -> Value {
    consumed_json(c, UnitsShown::Split)
}

fn consumed_json(c: &ConsumedCapacity, shown: UnitsShown) -> Value {
    let mut m = Map::new();
    m.insert("TableName".into(), json!(c.table_name));
    m.extend(units_json(c.total_read(), c.total_write(), shown));
    if c.include_table_detail {
        // An index read reports only that index (S58).
        if c.table_total() > 0.0 || c.indexes.is_empty() {
            m.insert("Table".into(), Value::Object(units_json(c.read_units, c.write_units, shown)));
        }
        for (global, member) in [(true, "GlobalSecondaryIndexes"), (false, "LocalSecondaryIndexes")] {
            let parts: Map<String, Value> = c
                .indexes
                .iter()
                .filter(|i| i.global == global)
                .map(|i| (i.name.clone(), Value::Object(units_json(i.read_units, i.write_units, shown))))
                .collect();
            if !parts.is_empty() {
                m.insert(member.into(), Value::Object(parts));
            }
        }
    }
    Value::Object(m)
}

pub(crate) fn key_role(r: KeyRole) -> &'static str {
    match r {
        KeyRole::Hash => "HASH",
        KeyRole::Range => "RANGE",
    }
}

/// SSEDescription: shown for a table encrypted with a KMS key, not for one
/// with an AWS owned key (DynamoDB's default).
pub(crate) fn sse_description_json(settings: &TableSettings) -> Option<Value> {
    settings.sse_kms_key.as_ref().map(|arn| json!({"Status": "ENABLED", "SSEType": "KMS", "KMSMasterKeyArn": arn}))
}

/// OnDemandThroughput: the maxima that are set (-1 is none), absent when
/// neither is (ack-api-quirks DDB-TABLE-178, -182).
pub(crate) fn on_demand_json(limits: Option<(i64, i64)>) -> Option<Value> {
    let (read, write) = limits?;
    let mut m = Map::new();
    if read != -1 {
        m.insert("MaxReadRequestUnits".into(), json!(read));
    }
    if write != -1 {
        m.insert("MaxWriteRequestUnits".into(), json!(write));
    }
    (!m.is_empty()).then_some(Value::Object(m))
}

/// The TableDescription CreateTable and UpdateTable answer with: as
/// DescribeTable's, but the switch to PAY_PER_REQUEST not yet timed
/// (DynamoDB adds LastUpdateToPayPerRequestDateTime to DescribeTable later:
/// ack-api-quirks DDB-TABLE-033, -060, -183).
fn changed_table_json(d: &TableDescription) -> Value {
    let mut out = table_description_json(d);
    if let Some(Value::Object(summary)) = out.get_mut("BillingModeSummary") {
        summary.remove("LastUpdateToPayPerRequestDateTime");
    }
    out
}

/// Renders a TableDescription.
pub fn table_description_json(d: &TableDescription) -> Value {
    let settings = &d.settings;
    let (mode, read, write) = match settings.billing {
        BillingMode::PayPerRequest => ("PAY_PER_REQUEST", 0, 0),
        BillingMode::Provisioned { read, write } => ("PROVISIONED", read, write),
    };
    let throughput = throughput_json(read, write, &settings.changes);
    // BillingModeSummary: only for a table that has been PAY_PER_REQUEST,
    // with when it last became so, kept after a switch back
    // (ack-api-quirks DDB-TABLE-025, -055, -183).
    let billing = settings
        .last_pay_per_request_switch
        .map(|t| json!({"BillingMode": mode, "LastUpdateToPayPerRequestDateTime": secs(t)}));
    let mut out = json!({
        "TableName": d.table_name,
        "TableId": d.table_id,
        "TableArn": d.arn,
        "TableStatus": d.status,
        "CreationDateTime": secs(d.created_at),
        "KeySchema": d.key_schema.iter().map(|(n, r)| json!({"AttributeName": n, "KeyType": key_role(*r)})).collect::<Vec<_>>(),
        "AttributeDefinitions": d.attribute_definitions.iter().map(|(n, t)| json!({"AttributeName": n, "AttributeType": t.descriptor()})).collect::<Vec<_>>(),
        "ProvisionedThroughput": Value::Object(throughput),
        "ItemCount": d.item_count,
        "TableSizeBytes": d.size_bytes,
        "DeletionProtectionEnabled": settings.deletion_protection,
    });
    if let (Some(b), Value::Object(m)) = (billing, &mut out) {
        m.insert("BillingModeSummary".into(), b);
    }
    if let (Some(c), Value::Object(m)) = (settings.table_class, &mut out) {
        let mut summary = Map::new();
        summary.insert("TableClass".into(), json!(c.class.name()));
        if let Some(t) = c.updated_at {
            summary.insert("LastUpdateDateTime".into(), secs(t));
        }
        m.insert("TableClassSummary".into(), Value::Object(summary));
    }
    if let (Some(sse), Value::Object(m)) = (sse_description_json(settings), &mut out) {
        m.insert("SSEDescription".into(), sse);
    }
    let (read, write) = settings.warm_shown(d.warm_throughput);
    if let Value::Object(m) = &mut out {
        m.insert(
            "WarmThroughput".into(),
            json!({"ReadUnitsPerSecond": read, "WriteUnitsPerSecond": write, "Status": "ACTIVE"}),
        );
    }
    // On-demand maxima belong to on-demand billing: kept through a switch
    // to PROVISIONED (and back), shown only while on demand.
    let on_demand = match settings.billing {
        BillingMode::PayPerRequest => on_demand_json(settings.on_demand_max),
        BillingMode::Provisioned { .. } => None,
    };
    if let (Some(limits), Value::Object(m)) = (on_demand, &mut out) {
        m.insert("OnDemandThroughput".into(), limits);
    }
    if let (Some(n), Value::Object(m)) = (d.partition_count, &mut out) {
        // A dynaburst extension: DynamoDB does not show partitions.
        m.insert("PartitionCount".into(), json!(n));
    }
    if let (Some(stream), Value::Object(m)) = (&settings.stream, &mut out) {
        m.insert("LatestStreamLabel".into(), json!(stream.label));
        m.insert("LatestStreamArn".into(), json!(format!("{}/stream/{}", d.arn, stream.label)));
        if stream.enabled {
            m.insert(
                "StreamSpecification".into(),
                json!({"StreamEnabled": true, "StreamViewType": stream.view.name()}),
            );
        }
    }
    if let (Some(r), Value::Object(m)) = (&d.restore, &mut out) {
        m.insert("RestoreSummary".into(), {
            // A point-in-time restore has no backup.
            let mut summary = json!({"SourceTableArn": r.source_table_arn,
                    "RestoreDateTime": secs(r.restored_at), "RestoreInProgress": r.in_progress});
            if let (false, Value::Object(m)) = (r.source_backup_arn.is_empty(), &mut summary) {
                m.insert("SourceBackupArn".into(), json!(r.source_backup_arn));
            }
            summary
        });
    }
    if let Value::Object(m) = &mut out {
        for (kind, member) in
            [(IndexKind::Global, "GlobalSecondaryIndexes"), (IndexKind::Local, "LocalSecondaryIndexes")]
        {
            let list: Vec<Value> =
                d.indexes.iter().filter(|i| i.def.kind == kind).map(index_description_json).collect();
            if !list.is_empty() {
                m.insert(member.into(), Value::Array(list));
            }
        }
    }
    out
}

/// An index's IndexName, KeySchema and Projection.
pub(crate) fn index_shape_json(def: &dynaburst_engine::index::IndexDef) -> Map<String, Value> {
    let mut projection = Map::new();
    projection.insert("ProjectionType".into(), json!(def.projection.type_name()));
    if let IndexProjection::Include(names) = &def.projection {
        // DynamoDB answers them sorted (ack-api-quirks DDB-TABLE-151).
        let mut names = names.clone();
        names.sort_unstable();
        projection.insert("NonKeyAttributes".into(), json!(names));
    }
    let mut m = Map::new();
    m.insert("IndexName".into(), json!(def.name));
    m.insert(
        "KeySchema".into(),
        Value::Array(
            def.schema.pairs().iter().map(|(n, r)| json!({"AttributeName": n, "KeyType": key_role(*r)})).collect(),
        ),
    );
    m.insert("Projection".into(), Value::Object(projection));
    m
}

/// A table's or a GSI's ProvisionedThroughput description (0 units on
/// demand), with its changes as DescribeTable shows them.
fn throughput_json(read: u64, write: u64, changes: &ThroughputChanges) -> Map<String, Value> {
    let mut throughput = Map::new();
    throughput.insert("NumberOfDecreasesToday".into(), json!(changes.decreases_today));
    throughput.insert("ReadCapacityUnits".into(), json!(read));
    throughput.insert("WriteCapacityUnits".into(), json!(write));
    if let Some(t) = changes.last_increase {
        throughput.insert("LastIncreaseDateTime".into(), secs(t));
    }
    if let Some(t) = changes.last_decrease {
        throughput.insert("LastDecreaseDateTime".into(), secs(t));
    }
    throughput
}

fn index_description_json(i: &IndexDescription) -> Value {
    let def = &i.def;
    let mut m = index_shape_json(def);
    m.insert("IndexSizeBytes".into(), json!(i.size_bytes));
    m.insert("ItemCount".into(), json!(i.item_count));
    m.insert("IndexArn".into(), json!(i.arn));
    if def.kind == IndexKind::Global {
        m.insert("IndexStatus".into(), json!(i.status));
        // Only while an index UpdateTable added is being filled: once it
        // is ACTIVE, DynamoDB shows no Backfilling (ScyllaDB's Alternator
        // suite, run against DynamoDB: `wait_for_gsi`).
        if def.backfilled_at.is_some() && i.status == "CREATING" {
            m.insert("Backfilling".into(), json!(true));
        }
        let (read, write) = def.throughput.unwrap_or((0, 0));
        m.insert("ProvisionedThroughput".into(), Value::Object(throughput_json(read, write, &def.changes)));
        // As a table's: on-demand maxima shown only while on demand (kept
        // through a switch to PROVISIONED); warm throughput at least the
        // on-demand initial throughput or the units (DDB-TABLE-134), what
        // was asked for, and what the index has grown to.
        if def.throughput.is_none() {
            if let Some(limits) = on_demand_json(def.on_demand_max) {
                m.insert("OnDemandThroughput".into(), limits);
            }
        }
        let (read, write) = index_warm_shown(def, i.warm_throughput);
        m.insert(
            "WarmThroughput".into(),
            json!({"ReadUnitsPerSecond": read, "WriteUnitsPerSecond": write, "Status": "ACTIVE"}),
        );
    }
    Value::Object(m)
}

pub(crate) fn parse_throughput(v: &Value, violations: &mut Violations) -> Result<(u64, u64), ApiError> {
    let req = Req::new(v)?;
    let read = req.opt_i64("ReadCapacityUnits")?;
    let write = req.opt_i64("WriteCapacityUnits")?;
    // DynamoDB reports the write member first (ack-api-quirks DDB-TABLE-038).
    for (val, member) in
        [(write, "provisionedThroughput.writeCapacityUnits"), (read, "provisionedThroughput.readCapacityUnits")]
    {
        match val {
            None => violations.add("null", member, "Member must not be null"),
            Some(n) if n < 1 => {
                violations.add(&n.to_string(), member, "Member must have value greater than or equal to 1")
            }
            _ => {}
        }
    }
    Ok((read.unwrap_or(0).max(0) as u64, write.unwrap_or(0).max(0) as u64))
}

/// OnDemandThroughput and WarmThroughput of a CreateTable or UpdateTable:
/// each part absent when not given (types are checked by the service
/// model before this).
type Limits = (Option<(Option<i64>, Option<i64>)>, Option<(Option<u64>, Option<u64>)>);

fn parse_limits(req: &Req<'_>) -> Result<Limits, ApiError> {
    let on_demand = match req.get("OnDemandThroughput") {
        Some(v) => {
            let o = Req::new(v)?;
            Some((o.opt_i64("MaxReadRequestUnits")?, o.opt_i64("MaxWriteRequestUnits")?))
        }
        None => None,
    };
    let warm = match req.get("WarmThroughput") {
        Some(v) => {
            let w = Req::new(v)?;
            let unit = |name| -> Result<Option<u64>, ApiError> { Ok(w.opt_i64(name)?.map(|n| n.max(0) as u64)) };
            Some((unit("ReadUnitsPerSecond")?, unit("WriteUnitsPerSecond")?))
        }
        None => None,
    };
    Ok((on_demand, warm))
}

/// Most KeySchema elements of a table or an LSI.
pub(crate) const TABLE_KEY_ELEMENTS: usize = 2;
/// Most KeySchema elements of a GSI (four HASH and four RANGE, S19).
pub(crate) const GSI_KEY_ELEMENTS: usize = 8;

/// A KeySchema list at `path`, its constraint violations added.
fn parse_key_schema(
    v: Option<&Value>,
    path: &str,
    max: usize,
    violations: &mut Violations,
) -> Result<Vec<(String, KeyRole)>, ApiError> {
    let mut key_schema = Vec::new();
    let Some(v) = v else {
        violations.add("null", path, "Member must not be null");
        return Ok(key_schema);
    };
    let list = v.as_array().ok_or_else(|| wrong_json_type(v, "List"))?;
    if list.is_empty() || list.len() > max {
        violations.add(
            &format!("'{}'", dynaburst_apimodel::value_text("KeySchema", v).unwrap_or_else(|| list.len().to_string())),
            path,
            &if list.is_empty() {
                "Member must have length greater than or equal to 1".to_string()
            } else {
                format!("Member must have length less than or equal to {max}")
            },
        );
    }
    for e in list {
        let r = Req::new(e)?;
        let n = r.opt_str("AttributeName")?.unwrap_or_default().to_string();
        let role = match r.opt_str("KeyType")? {
            Some("HASH") => KeyRole::Hash,
            Some("RANGE") => KeyRole::Range,
            Some(other) => {
                violations.add(
                    &format!("'{other}'"),
                    &format!("{path}.member.keyType"),
                    "Member must satisfy enum value set: [HASH, RANGE]",
                );
                KeyRole::Hash
            }
            None => {
                violations.add("null", &format!("{path}.member.keyType"), "Member must not be null");
                KeyRole::Hash
            }
        };
        key_schema.push((n, role));
    }
    Ok(key_schema)
}

/// GlobalSecondaryIndexes or LocalSecondaryIndexes of a CreateTable.
pub(crate) fn parse_indexes(
    req: &Req<'_>,
    member: &str,
    max_key_elements: usize,
    violations: &mut Violations,
) -> Result<Option<Vec<IndexSpec>>, ApiError> {
    let Some(v) = req.get(member) else { return Ok(None) };
    let list = v.as_array().ok_or_else(|| wrong_json_type(v, "List"))?;
    let lower = format!("{}{}", member[..1].to_lowercase(), &member[1..]);
    let mut out = Vec::with_capacity(list.len());
    for (i, e) in list.iter().enumerate() {
        let path = format!("{lower}.{}.member", i + 1);
        out.push(parse_index_spec(&Req::new(e)?, &path, max_key_elements, violations)?);
    }
    Ok(Some(out))
}

/// An AttributeDefinitions list.
fn parse_definitions(v: &Value, violations: &mut Violations) -> Result<Vec<(String, ScalarType)>, ApiError> {
    let mut defs = Vec::new();
    for e in v.as_array().ok_or_else(|| wrong_json_type(v, "List"))? {
        let r = Req::new(e)?;
        let n = r.opt_str("AttributeName")?.unwrap_or_default().to_string();
        match r.opt_str("AttributeType")?.and_then(ScalarType::from_descriptor) {
            Some(t) => defs.push((n, t)),
            None => violations.add(
                &format!("'{}'", r.opt_str("AttributeType")?.unwrap_or("null")),
                "attributeDefinitions.member.attributeType",
                "Member must satisfy enum value set: [B, N, S]",
            ),
        }
    }
    Ok(defs)
}

/// UpdateTable's GlobalSecondaryIndexUpdates: each element exactly one of
/// Create, Update or Delete (S37).
fn parse_index_updates(v: &Value, violations: &mut Violations) -> Result<Vec<IndexUpdate>, ApiError> {
    let list = v.as_array().ok_or_else(|| wrong_json_type(v, "List"))?;
    let mut out = Vec::with_capacity(list.len());
    for (i, e) in list.iter().enumerate() {
        let r = Req::new(e)?;
        let path = format!("globalSecondaryIndexUpdates.{}.member", i + 1);
        let actions: Vec<&str> = ["Create", "Update", "Delete"].into_iter().filter(|k| r.get(k).is_some()).collect();
        let action = match actions.as_slice() {
            [one] => *one,
            [] => {
                return Err(ApiError::validation(
                    "One or more parameter values were invalid: One of GlobalSecondaryIndexUpdate.Update, GlobalSecondaryIndexUpdate.Create, GlobalSecondaryIndexUpdate.Delete must not be null",
                ))
            }
            _ => {
                return Err(ApiError::validation(
                    "One or more parameter values were invalid: Only one global secondary index action is allowed per GlobalSecondaryIndexUpdate object",
                ))
            }
        };
        let a = Req::new(r.get(action).unwrap_or(&Value::Null))?;
        let member = format!("{path}.{}", action.to_lowercase());
        out.push(match action {
            "Create" => IndexUpdate::Create(parse_index_spec(&a, &member, GSI_KEY_ELEMENTS, violations)?),
            "Update" => {
                let name = a.opt_str("IndexName")?;
                check_table_name(name, &format!("{member}.indexName"), violations);
                let throughput = match a.get("ProvisionedThroughput") {
                    Some(v) => Some(parse_throughput(v, violations)?),
                    None => None,
                };
                let (on_demand, warm) = parse_limits(&a)?;
                IndexUpdate::Update { name: name.unwrap_or_default().to_string(), throughput, on_demand, warm }
            }
            _ => {
                let name = a.opt_str("IndexName")?;
                check_table_name(name, &format!("{member}.indexName"), violations);
                IndexUpdate::Delete { name: name.unwrap_or_default().to_string() }
            }
        });
    }
    Ok(out)
}

/// One index of a CreateTable or an UpdateTable Create, at `path`.
fn parse_index_spec(
    r: &Req<'_>,
    path: &str,
    max_key_elements: usize,
    violations: &mut Violations,
) -> Result<IndexSpec, ApiError> {
    let name = r.opt_str("IndexName")?;
    check_table_name(name, &format!("{path}.indexName"), violations);
    let key_schema = parse_key_schema(r.get("KeySchema"), &format!("{path}.keySchema"), max_key_elements, violations)?;
    let (projection_type, non_key_attributes) = match r.get("Projection") {
        None => {
            violations.add("null", &format!("{path}.projection"), "Member must not be null");
            (None, None)
        }
        Some(p) => {
            let p = Req::new(p)?;
            let ty = match p.opt_str("ProjectionType")? {
                None => None,
                Some("ALL") => Some(ProjectionType::All),
                Some("KEYS_ONLY") => Some(ProjectionType::KeysOnly),
                Some("INCLUDE") => Some(ProjectionType::Include),
                Some(other) => {
                    violations.add(
                        &format!("'{other}'"),
                        &format!("{path}.projection.projectionType"),
                        "Member must satisfy enum value set: [ALL, INCLUDE, KEYS_ONLY]",
                    );
                    None
                }
            };
            let names = match p.get("NonKeyAttributes") {
                None => None,
                Some(v) => {
                    let names = v.as_array().ok_or_else(|| wrong_json_type(v, "List"))?;
                    if names.is_empty() || names.len() > MAX_NON_KEY_ATTRIBUTES {
                        violations.add(
                            &format!("'{}'", names.len()),
                            &format!("{path}.projection.nonKeyAttributes"),
                            &if names.is_empty() {
                                "Member must have length greater than or equal to 1".to_string()
                            } else {
                                format!("Member must have length less than or equal to {MAX_NON_KEY_ATTRIBUTES}")
                            },
                        );
                    }
                    let names = names
                        .iter()
                        .map(|n| n.as_str().map(str::to_string).ok_or_else(|| wrong_json_type(n, "String")))
                        .collect::<Result<Vec<_>, _>>()?;
                    Some(names)
                }
            };
            (ty, names)
        }
    };
    let throughput = match r.get("ProvisionedThroughput") {
        Some(v) => Some(parse_throughput(v, violations)?),
        None => None,
    };
    // Only a GSI has on-demand maxima and warm throughput (an LSI uses the
    // table's; the service model has no such members for it).
    let (on_demand, warm) = if max_key_elements == GSI_KEY_ELEMENTS { parse_limits(r)? } else { (None, None) };
    Ok(IndexSpec {
        name: name.unwrap_or_default().to_string(),
        key_schema,
        projection_type,
        non_key_attributes,
        throughput,
        on_demand,
        warm,
    })
}

/// NonKeyAttributes of one index (S18).
const MAX_NON_KEY_ATTRIBUTES: usize = 20;

/// A StreamSpecification: (StreamEnabled, StreamViewType); the service
/// model has checked the types and the enum.
fn parse_stream_spec(req: &Req<'_>) -> Result<Option<(bool, Option<StreamViewType>)>, ApiError> {
    let Some(v) = req.get("StreamSpecification") else { return Ok(None) };
    let spec = Req::new(v)?;
    let enabled = spec.opt_bool("StreamEnabled")?.unwrap_or(false);
    let view = match spec.opt_str("StreamViewType")? {
        Some("KEYS_ONLY") => Some(StreamViewType::KeysOnly),
        Some("NEW_IMAGE") => Some(StreamViewType::NewImage),
        Some("OLD_IMAGE") => Some(StreamViewType::OldImage),
        Some("NEW_AND_OLD_IMAGES") => Some(StreamViewType::NewAndOldImages),
        _ => None,
    };
    Ok(Some((enabled, view)))
}

/// DeletionProtectionEnabled, TableClass and SSESpecification of a
/// CreateTable or UpdateTable (the service model has checked their types
/// and TableClass's values).
type PlainSettings = (Option<bool>, Option<TableClass>, Option<SseSpec>);

/// DynamoDB's answer to a TableClass it does not know (its own check, not
/// the model's enum constraint: ScyllaDB's Alternator suite, run against
/// DynamoDB, test_tableclass.py; the text as ack-api-quirks' catalogue of
/// DynamoDB's messages, DDB-TABLE-442, captured it).
const INVALID_TABLE_CLASS: &str =
    "Invalid table-class parameter provided. Please try again with a valid table-class value: [STANDARD, STANDARD_INFREQUENT_ACCESS].";

pub(crate) fn parse_plain_settings(req: &Req<'_>) -> Result<PlainSettings, ApiError> {
    let protection = req.opt_bool("DeletionProtectionEnabled")?;
    let class = match req.opt_str("TableClass")? {
        None => None,
        Some(name) => Some(TableClass::parse(name).ok_or_else(|| ApiError::validation(INVALID_TABLE_CLASS))?),
    };
    Ok((protection, class, parse_sse(req, "SSESpecification")?))
}

/// An SSESpecification member (or a restore's SSESpecificationOverride),
/// with DynamoDB's rules and messages (ack-api-quirks' catalogue of its
/// messages, DDB-TABLE-442): SSEType and a key only when Enabled, AES256
/// no longer, and a key only with SSEType KMS.
pub(crate) fn parse_sse(req: &Req<'_>, member: &str) -> Result<Option<SseSpec>, ApiError> {
    let Some(v) = req.get(member) else { return Ok(None) };
    let spec = Req::new(v)?;
    let sse_type = spec.opt_str("SSEType")?;
    // SSEType KMS with no Enabled asks for KMS encryption
    // (ack-api-quirks DDB-TABLE-036, -044).
    let enabled = spec.opt_bool("Enabled")?.unwrap_or(sse_type == Some("KMS"));
    let kms_key_id = spec.opt_str("KMSMasterKeyId")?.map(str::to_string);
    // An empty key id fails a length rule the model does not carry, at a
    // path written as Java's bean names are (DDB-TABLE-457, live 2026-10).
    if kms_key_id.as_deref() == Some("") {
        let mut path = member.to_string();
        if let Some(first) = path.get(..1).map(str::to_ascii_lowercase) {
            path.replace_range(..1, &first);
        }
        return Err(ApiError::validation(format!(
            "1 validation error detected: Value '' at '{path}.kMSMasterKeyId' failed to satisfy constraint: Member must have length greater than or equal to 1"
        )));
    }
    let refused = match (enabled, sse_type, &kms_key_id) {
        (false, Some(_), _) => Some("SSEType can not be specified if Enabled is false"),
        (false, None, Some(_)) => Some("KMSMasterKeyId can not be specified if Enabled is false"),
        (true, Some("AES256"), _) => Some("SSEType AES256 is not supported"),
        (true, t, Some(_)) if t != Some("KMS") => Some("SSEType KMS is required if KMSMasterKeyId is specified"),
        _ => None,
    };
    if let Some(message) = refused {
        return Err(ApiError::validation(format!("One or more parameter values were invalid: {message}")));
    }
    Ok(Some(SseSpec { enabled, kms_key_id }))
}

/// CreateTable.
pub fn create_table(engine: &Engine, body: &Value, now: Millis) -> Result<Value, ApiError> {
    let req = Req::new(body)?;
    let mut violations = Violations::default();
    let name = req.opt_str("TableName")?;
    check_table_name(name, "tableName", &mut violations);
    let key_schema = parse_key_schema(req.get("KeySchema"), "keySchema", TABLE_KEY_ELEMENTS, &mut violations)?;
    let defs = match req.get("AttributeDefinitions") {
        None => {
            violations.add("null", "attributeDefinitions", "Member must not be null");
            Vec::new()
        }
        Some(v) => parse_definitions(v, &mut violations)?,
    };
    let mode = req.opt_str("BillingMode")?;
    let throughput = match req.get("ProvisionedThroughput") {
        Some(v) => Some(parse_throughput(v, &mut violations)?),
        None => None,
    };
    let global_indexes = parse_indexes(&req, "GlobalSecondaryIndexes", GSI_KEY_ELEMENTS, &mut violations)?;
    let local_indexes = parse_indexes(&req, "LocalSecondaryIndexes", TABLE_KEY_ELEMENTS, &mut violations)?;
    let (on_demand, warm) = parse_limits(&req)?;
    violations.finish()?;
    let tags = crate::tags::parse_tags(&req)?.unwrap_or_default();
    let (deletion_protection, table_class, sse) = parse_plain_settings(&req)?;
    let resource_policy = crate::policy::create_table_policy(engine, &req, name.unwrap_or_default())?;
    let billing = match (mode, throughput) {
        (Some("PAY_PER_REQUEST"), None) => BillingMode::PayPerRequest,
        (Some("PAY_PER_REQUEST"), Some(_)) => {
            return Err(ApiError::validation(
                "One or more parameter values were invalid: Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST",
            ))
        }
        (None | Some("PROVISIONED"), Some((read, write))) => BillingMode::Provisioned { read, write },
        (None | Some("PROVISIONED"), None) => {
            return Err(ApiError::validation(
                "One or more parameter values were invalid: ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is PROVISIONED",
            ))
        }
        (Some(other), _) => {
            let mut v = Violations::default();
            v.add(&format!("'{other}'"), "billingMode", "Member must satisfy enum value set: [PROVISIONED, PAY_PER_REQUEST]");
            v.finish()?;
            BillingMode::PayPerRequest
        }
    };
    let d = engine.create_table(
        CreateTableInput {
            table_name: name.unwrap_or_default().to_string(),
            key_schema,
            attribute_definitions: defs,
            billing,
            global_indexes,
            local_indexes,
            tags,
            stream: parse_stream_spec(&req)?,
            on_demand,
            warm,
            deletion_protection,
            table_class,
            sse,
            resource_policy,
        },
        now,
    )?;
    Ok(json!({ "TableDescription": changed_table_json(&d) }))
}

/// DescribeTable.
pub fn describe_table(engine: &Engine, body: &Value, now: Millis) -> Result<Value, ApiError> {
    let name = Req::new(body)?.table_name()?;
    Ok(json!({ "Table": table_description_json(&engine.describe_table(&name, now)?) }))
}

/// What DeleteTable's TableDescription leaves out of DescribeTable's: the
/// key, the attribute definitions, the indexes and the creation time
/// (ScyllaDB's Alternator suite, run against DynamoDB:
/// test_delete_table_description and its _with_si variant).
const NOT_IN_DELETE_TABLE: [&str; 5] =
    ["CreationDateTime", "KeySchema", "AttributeDefinitions", "GlobalSecondaryIndexes", "LocalSecondaryIndexes"];

/// DeleteTable.
pub fn delete_table(engine: &Engine, body: &Value, now: Millis) -> Result<Value, ApiError> {
    let name = Req::new(body)?.table_name()?;
    let mut description = table_description_json(&engine.delete_table(&name, now)?);
    if let Value::Object(m) = &mut description {
        NOT_IN_DELETE_TABLE.iter().for_each(|member| {
            m.remove(*member);
        });
    }
    Ok(json!({ "TableDescription": description }))
}

/// ListTables.
pub fn list_tables(engine: &Engine, body: &Value) -> Result<Value, ApiError> {
    let req = Req::new(body)?;
    let mut violations = Violations::default();
    let start = req.opt_str("ExclusiveStartTableName")?;
    if start.is_some() {
        check_table_name(start, "exclusiveStartTableName", &mut violations);
    }
    let limit = req.opt_i64("Limit")?.unwrap_or(MAX_LIST_TABLES);
    if limit < 1 {
        violations.add(&format!("'{limit}'"), "limit", "Member must have value greater than or equal to 1");
    }
    if limit > MAX_LIST_TABLES {
        violations.add(&format!("'{limit}'"), "limit", "Member must have value less than or equal to 100");
    }
    violations.finish()?;
    let out = engine.list_tables(ListTablesInput { exclusive_start: start.map(str::to_string), limit: limit as usize });
    let mut m = Map::new();
    m.insert("TableNames".into(), json!(out.names));
    if let Some(l) = out.last_evaluated {
        m.insert("LastEvaluatedTableName".into(), json!(l));
    }
    Ok(Value::Object(m))
}

/// UpdateTable members of global tables, which this server does not model.
const UNMODELLED_UPDATE_MEMBERS: [&str; 4] =
    ["ReplicaUpdates", "MultiAccountReplicaReady", "ReplicaTransitRoleArn", "MultiRegionConsistency"];

/// UpdateTable.
pub fn update_table(engine: &Engine, body: &Value, now: Millis) -> Result<Value, ApiError> {
    let req = Req::new(body)?;
    let name = req.table_name()?;
    let mut violations = Violations::default();
    let mode = match req.opt_str("BillingMode")? {
        None => None,
        Some("PAY_PER_REQUEST") => Some(true),
        Some("PROVISIONED") => Some(false),
        Some(other) => {
            violations.add(
                &format!("'{other}'"),
                "billingMode",
                "Member must satisfy enum value set: [PROVISIONED, PAY_PER_REQUEST]",
            );
            None
        }
    };
    let throughput = match req.get("ProvisionedThroughput") {
        Some(v) => Some(parse_throughput(v, &mut violations)?),
        None => None,
    };
    let attribute_definitions = match req.get("AttributeDefinitions") {
        Some(v) => parse_definitions(v, &mut violations)?,
        None => Vec::new(),
    };
    let index_updates = match req.get("GlobalSecondaryIndexUpdates") {
        Some(v) => Some(parse_index_updates(v, &mut violations)?),
        None => None,
    };
    let (on_demand, warm) = parse_limits(&req)?;
    violations.finish()?;
    let (deletion_protection, table_class, sse) = parse_plain_settings(&req)?;
    let d = engine.update_table(
        UpdateTableInput {
            table_name: name,
            billing_mode_pay_per_request: mode,
            throughput,
            attribute_definitions,
            index_updates,
            stream: parse_stream_spec(&req)?,
            on_demand,
            warm,
            deletion_protection,
            table_class,
            sse,
            unmodelled: UNMODELLED_UPDATE_MEMBERS.into_iter().filter(|m| req.get(m).is_some()).collect(),
        },
        now,
    )?;
    Ok(json!({ "TableDescription": changed_table_json(&d) }))
}

fn write_output(out: WriteOutput) -> Value {
    let mut m = Map::new();
    if let Some(a) = out.attributes {
        m.insert("Attributes".into(), item_to_json(&a));
    }
    if let Some(c) = out.consumed {
        m.insert("ConsumedCapacity".into(), item_capacity_json(&c));
    }
    if let Some(c) = out.item_collection {
        m.insert("ItemCollectionMetrics".into(), item_collection_json(&c));
    }
    Value::Object(m)
}

/// Bytes in a gigabyte, for SizeEstimateRangeGB.
const GB: f64 = 1024.0 * 1024.0 * 1024.0;

/// ItemCollectionMetrics: the collection's key and a one-gigabyte range
/// that holds its size (S60: `[0.0, 1.0]` for a small one).
/// A batch's or a transaction's ItemCollectionMetrics, per table, when
/// there are any.
fn insert_item_collections(m: &mut Map<String, Value>, collections: &[(String, Vec<ItemCollection>)]) {
    if !collections.is_empty() {
        let metrics: Map<String, Value> = collections
            .iter()
            .map(|(t, cs)| (t.clone(), Value::Array(cs.iter().map(item_collection_json).collect())))
            .collect();
        m.insert("ItemCollectionMetrics".into(), Value::Object(metrics));
    }
}

fn item_collection_json(c: &ItemCollection) -> Value {
    let low = (c.size_bytes as f64 / GB).floor();
    json!({ "ItemCollectionKey": item_to_json(&c.key), "SizeEstimateRangeGB": [low, low + 1.0] })
}

/// PutItem.
pub fn put_item(engine: &Engine, body: &Value, now: Millis) -> Result<Value, ApiError> {
    let (req, table_name, item) = Req::open_keyed(body, Operation::PutItem, "Item", "item")?;
    let options = legacy::write(&req, Operation::PutItem)?.write_options(&req)?;
    let out = engine.put_item(PutItemInput { table_name, item, options }, now)?;
    Ok(write_output(out))
}

/// GetItem.
pub fn get_item(engine: &Engine, body: &Value, now: Millis) -> Result<Value, ApiError> {
    let (req, table_name, key) = Req::open_keyed(body, Operation::GetItem, "Key", "key")?;
    let mut legacy = legacy::projection(&req, "attributesToGet")?;
    let mut names = req.names()?;
    legacy.merge_names(&mut names);
    let out = engine.get_item(
        GetItemInput {
            table_name,
            key,
            projection: req.opt_str("ProjectionExpression")?.map(str::to_string).or(legacy.projection),
            names,
            consistent_read: req.opt_bool("ConsistentRead")?.unwrap_or(false),
            return_capacity: req.return_capacity()?,
        },
        now,
    )?;
    let mut m = Map::new();
    if let Some(i) = out.item {
        m.insert("Item".into(), item_to_json(&i));
    }
    if let Some(c) = out.consumed {
        m.insert("ConsumedCapacity".into(), item_capacity_json(&c));
    }
    Ok(Value::Object(m))
}

/// DeleteItem.
pub fn delete_item(engine: &Engine, body: &Value, now: Millis) -> Result<Value, ApiError> {
    let (req, table_name, key) = Req::open_keyed(body, Operation::DeleteItem, "Key", "key")?;
    let options = legacy::write(&req, Operation::DeleteItem)?.write_options(&req)?;
    let out = engine.delete_item(DeleteItemInput { table_name, key, options }, now)?;
    Ok(write_output(out))
}

/// UpdateItem.
pub fn update_item(engine: &Engine, body: &Value, now: Millis) -> Result<Value, ApiError> {
    let (req, table_name, key) = Req::open_keyed(body, Operation::UpdateItem, "Key", "key")?;
    let mut legacy = legacy::write(&req, Operation::UpdateItem)?;
    let update = req.opt_str("UpdateExpression")?.map(str::to_string).or(legacy.update.take());
    let input = UpdateItemInput {
        table_name,
        key,
        update,
        options: legacy.write_options(&req)?,
        keep_missing: legacy.keep_missing,
    };
    let out = engine.update_item(input, now).map_err(|e| legacy::update_error(e.into(), legacy.attribute_updates))?;
    Ok(write_output(out))
}

fn write_request_json(r: &WriteRequest) -> Value {
    match r {
        WriteRequest::Put(item) => json!({"PutRequest": {"Item": item_to_json(item)}}),
        WriteRequest::Delete(key) => json!({"DeleteRequest": {"Key": item_to_json(key)}}),
    }
}

/// Renders a list of write requests per table (for UnprocessedItems).
pub fn write_requests_json(requests: &[(String, Vec<WriteRequest>)]) -> Value {
    Value::Object(
        requests.iter().map(|(t, rs)| (t.clone(), Value::Array(rs.iter().map(write_request_json).collect()))).collect(),
    )
}

/// BatchWriteItem.
pub fn batch_write_item(engine: &Engine, body: &Value, now: Millis) -> Result<Value, ApiError> {
    let req = Req::new(body)?;
    let mut violations = Violations::default();
    let mut requests = Vec::new();
    let mut total = 0;
    for_each_request_item(&req, &mut violations, |table, list, violations| {
        let list = list.as_array().ok_or_else(|| wrong_json_type(list, "List"))?;
        if list.is_empty() || list.len() > MAX_BATCH_WRITE_ITEMS {
            violations.add(
                &format!("'{{{table}={}}}'", summarize(list.len())),
                "requestItems",
                "Map value must satisfy constraint: [Member must have length less than or equal to 25, Member must have length greater than or equal to 1]",
            );
        }
        total += list.len();
        let mut parsed = Vec::with_capacity(list.len());
        for e in list {
            let r = Req::new(e)?;
            match (r.get("PutRequest"), r.get("DeleteRequest")) {
                (Some(p), None) => parsed.push(WriteRequest::Put(
                    Req::new(p)?.item("Item", "requestItems.member.value.member.putRequest.item")?,
                )),
                (None, Some(d)) => parsed.push(WriteRequest::Delete(
                    Req::new(d)?.item("Key", "requestItems.member.value.member.deleteRequest.key")?,
                )),
                _ => {
                    return Err(ApiError::validation(
                        "A WriteRequest must contain exactly one of PutRequest or DeleteRequest",
                    ))
                }
            }
        }
        requests.push((table.to_string(), parsed));
        Ok(())
    })?;
    violations.finish()?;
    if total > MAX_BATCH_WRITE_ITEMS {
        return Err(ApiError::validation("Too many items requested for the BatchWriteItem call"));
    }
    let out = engine.batch_write_item(
        BatchWriteInput {
            requests,
            return_capacity: req.return_capacity()?,
            return_item_collection_metrics: req.return_item_collection_metrics()?,
        },
        now,
    )?;
    let mut m = Map::new();
    m.insert("UnprocessedItems".into(), write_requests_json(&out.unprocessed));
    insert_item_collections(&mut m, &out.item_collections);
    if req.return_capacity()? != ReturnCapacity::None {
        m.insert("ConsumedCapacity".into(), Value::Array(out.consumed.iter().map(item_capacity_json).collect()));
    }
    Ok(Value::Object(m))
}

/// Visits each table of a batch request's RequestItems map, after checking
/// that the map is there and not empty; each table's name is checked into
/// `violations` just before `visit` sees its entry.
fn for_each_request_item<'a>(
    req: &Req<'a>,
    violations: &mut Violations,
    mut visit: impl FnMut(&'a str, &'a Value, &mut Violations) -> Result<(), ApiError>,
) -> Result<(), ApiError> {
    let Some(items) = req.get("RequestItems") else { return Err(null_member("requestItems")) };
    let obj = items.as_object().ok_or_else(|| wrong_json_type(items, "Map"))?;
    if obj.is_empty() {
        violations.add("'{}'", "requestItems", "Member must have length greater than or equal to 1");
    }
    for (table, entry) in obj {
        check_table_name_or_arn(Some(table), "requestItems.member.key", violations);
        visit(table, entry, violations)?;
    }
    Ok(())
}

fn summarize(n: usize) -> String {
    format!("[{n} write requests]")
}

fn keys_and_attributes_json(k: &KeysAndAttributes) -> Value {
    let mut m = Map::new();
    m.insert("Keys".into(), Value::Array(k.keys.iter().map(item_to_json).collect()));
    if let Some(p) = &k.projection {
        m.insert("ProjectionExpression".into(), json!(p));
    }
    if let Some(n) = &k.names {
        m.insert("ExpressionAttributeNames".into(), json!(n));
    }
    if k.consistent_read {
        m.insert("ConsistentRead".into(), json!(true));
    }
    Value::Object(m)
}

/// Renders unprocessed BatchGetItem keys.
pub fn unprocessed_keys_json(u: &[(String, KeysAndAttributes)]) -> Value {
    Value::Object(u.iter().map(|(t, k)| (t.clone(), keys_and_attributes_json(k))).collect())
}

/// BatchGetItem.
pub fn batch_get_item(engine: &Engine, body: &Value, now: Millis) -> Result<Value, ApiError> {
    let req = Req::new(body)?;
    let mut violations = Violations::default();
    let mut requests = Vec::new();
    for_each_request_item(&req, &mut violations, |table, spec, violations| {
        let r = Req::new(spec)?;
        legacy::check_mixing(&r, Operation::BatchGetItem)?;
        let keys_v = r.get("Keys").ok_or_else(|| null_member("requestItems.member.value.keys"))?;
        let list = keys_v.as_array().ok_or_else(|| wrong_json_type(keys_v, "List"))?;
        if list.is_empty() {
            violations.add(
                "'[]'",
                "requestItems.member.value.keys",
                "Member must have length greater than or equal to 1",
            );
        }
        let keys = list.iter().map(parse_item).collect::<Result<Vec<_>, _>>()?;
        let mut legacy = legacy::projection(&r, &format!("requestItems.{table}.member.attributesToGet"))?;
        let mut names = r.names()?;
        legacy.merge_names(&mut names);
        requests.push((
            table.to_string(),
            KeysAndAttributes {
                keys,
                projection: r.opt_str("ProjectionExpression")?.map(str::to_string).or(legacy.projection),
                names,
                consistent_read: r.opt_bool("ConsistentRead")?.unwrap_or(false),
            },
        ));
        Ok(())
    })?;
    violations.finish()?;
    let rc = req.return_capacity()?;
    let out = engine.batch_get_item(BatchGetInput { requests, return_capacity: rc }, now)?;
    let mut m = Map::new();
    m.insert(
        "Responses".into(),
        Value::Object(
            out.responses
                .iter()
                .map(|(t, items)| (t.clone(), Value::Array(items.iter().map(item_to_json).collect())))
                .collect(),
        ),
    );
    m.insert("UnprocessedKeys".into(), unprocessed_keys_json(&out.unprocessed));
    if rc != ReturnCapacity::None {
        m.insert("ConsumedCapacity".into(), Value::Array(out.consumed.iter().map(item_capacity_json).collect()));
    }
    Ok(Value::Object(m))
}

fn transact_list<'a>(req: &Req<'a>, member: &str) -> Result<&'a Vec<Value>, ApiError> {
    member_list(req, "TransactItems", member, MAX_TRANSACT_ITEMS)
}

/// List member `name` (reported as `path`), of 1 to `max` entries.
pub(crate) fn member_list<'a>(req: &Req<'a>, name: &str, path: &str, max: usize) -> Result<&'a Vec<Value>, ApiError> {
    let Some(v) = req.get(name) else { return Err(null_member(path)) };
    let list = v.as_array().ok_or_else(|| wrong_json_type(v, "List"))?;
    let mut violations = Violations::default();
    if list.is_empty() {
        violations.add("'[]'", path, "Member must have length greater than or equal to 1");
    }
    if list.len() > max {
        violations.add(
            &format!("'[{} items]'", list.len()),
            path,
            &format!("Member must have length less than or equal to {max}"),
        );
    }
    violations.finish()?;
    Ok(list)
}

/// TransactWriteItems.
pub fn transact_write_items(engine: &Engine, body: &Value, now: Millis) -> Result<Value, ApiError> {
    let req = Req::new(body)?;
    let list = transact_list(&req, "transactItems")?;
    let mut actions = Vec::with_capacity(list.len());
    for e in list {
        let r = Req::new(e)?;
        let kinds: Vec<&str> =
            ["Put", "Update", "Delete", "ConditionCheck"].into_iter().filter(|k| r.get(k).is_some()).collect();
        if kinds.len() != 1 {
            return Err(ApiError::validation("TransactItems can only contain one of Check, Put, Update or Delete"));
        }
        let kind = kinds[0];
        let a = Req::new(r.get(kind).unwrap_or(&Value::Null))?;
        let table_name = a.table_name()?;
        let condition = a.opt_str("ConditionExpression")?.map(str::to_string);
        let expr = a.expr_args()?;
        let return_old_on_failure = a.return_old_on_failure()?;
        let op = match kind {
            "Put" => TransactOp::Put { item: a.item("Item", "transactItems.member.put.item")? },
            "Update" => TransactOp::Update {
                key: a.item("Key", "transactItems.member.update.key")?,
                update: a
                    .opt_str("UpdateExpression")?
                    .ok_or_else(|| null_member("transactItems.member.update.updateExpression"))?
                    .to_string(),
            },
            "Delete" => TransactOp::Delete { key: a.item("Key", "transactItems.member.delete.key")? },
            _ => {
                let key = a.item("Key", "transactItems.member.conditionCheck.key")?;
                if condition.is_none() {
                    return Err(null_member("transactItems.member.conditionCheck.conditionExpression"));
                }
                TransactOp::ConditionCheck { key }
            }
        };
        actions.push(TransactAction { table_name, op, condition, expr, return_old_on_failure });
    }
    // The items a transaction carries may not pass 4 MB together (DynamoDB's
    // documented limit; ScyllaDB's Alternator suite, run against DynamoDB,
    // finds 50 puts of 100 KB refused with a ValidationException whose text
    // says "size cannot exceed" and 30 accepted, and 50 deletes of such items
    // accepted: the items sent count, not those they replace).
    let carried: usize = actions
        .iter()
        .map(|a| match &a.op {
            TransactOp::Put { item } => dynaburst_model::item_size(item),
            TransactOp::Update { key, .. } | TransactOp::Delete { key } | TransactOp::ConditionCheck { key } => {
                dynaburst_model::item_size(key)
            }
        })
        .sum();
    if carried > MAX_TRANSACTION_BYTES {
        return Err(ApiError::validation("The aggregate size of the items in the transaction cannot exceed 4 MB"));
    }
    let client_token = match req.opt_str("ClientRequestToken")? {
        None => None,
        Some(t) => {
            let mut violations = Violations::default();
            if t.is_empty() || t.len() > MAX_CLIENT_TOKEN {
                violations.add(
                    &format!("'{t}'"),
                    "clientRequestToken",
                    if t.is_empty() {
                        "Member must have length greater than or equal to 1"
                    } else {
                        "Member must have length less than or equal to 36"
                    },
                );
            }
            violations.finish()?;
            // The fingerprint covers what the transaction does, not how the
            // caller wants the answer.
            let mut h = DefaultHasher::new();
            req.get("TransactItems").map(|v| v.to_string()).hash(&mut h);
            Some((t.to_string(), h.finish()))
        }
    };
    let rc = req.return_capacity()?;
    let return_item_collection_metrics = req.return_item_collection_metrics()?;
    let input = TransactWriteInput { actions, client_token, return_capacity: rc, return_item_collection_metrics };
    let out = engine.transact_write_items(input, now)?;
    let mut m = Map::new();
    if rc != ReturnCapacity::None {
        m.insert("ConsumedCapacity".into(), Value::Array(out.consumed.iter().map(capacity_json).collect()));
    }
    insert_item_collections(&mut m, &out.item_collections);
    Ok(Value::Object(m))
}

/// TransactGetItems.
pub fn transact_get_items(engine: &Engine, body: &Value, now: Millis) -> Result<Value, ApiError> {
    let req = Req::new(body)?;
    let list = transact_list(&req, "transactItems")?;
    let mut gets = Vec::with_capacity(list.len());
    for e in list {
        let r = Req::new(e)?;
        let g = r.get("Get").ok_or_else(|| null_member("transactItems.member.get"))?;
        let g = Req::new(g)?;
        gets.push(TransactGet {
            table_name: g.table_name()?,
            key: g.item("Key", "transactItems.member.get.key")?,
            projection: g.opt_str("ProjectionExpression")?.map(str::to_string),
            names: g.names()?,
        });
    }
    let rc = match req.opt_str("ReturnConsumedCapacity")? {
        Some("INDEXES") => {
            let mut v = Violations::default();
            v.add("'INDEXES'", "returnConsumedCapacity", "Member must satisfy enum value set: [TOTAL, NONE]");
            v.finish()?;
            ReturnCapacity::None
        }
        _ => req.return_capacity()?,
    };
    let out = engine.transact_get_items(TransactGetInput { gets, return_capacity: rc }, now)?;
    let mut m = Map::new();
    m.insert(
        "Responses".into(),
        Value::Array(
            out.items
                .iter()
                .map(|i| match i {
                    Some(item) => json!({"Item": item_to_json(item)}),
                    None => json!({}),
                })
                .collect(),
        ),
    );
    if rc != ReturnCapacity::None {
        m.insert("ConsumedCapacity".into(), Value::Array(out.consumed.iter().map(capacity_json).collect()));
    }
    Ok(Value::Object(m))
}

/// Query (`is_query`) or Scan.
pub fn read(engine: &Engine, body: &Value, now: Millis, is_query: bool) -> Result<Value, ApiError> {
    let req = Req::new(body)?;
    let table_name = req.table_name()?;
    legacy::check_mixing(&req, if is_query { Operation::Query } else { Operation::Scan })?;
    let mut violations = Violations::default();
    let limit = req.opt_i64("Limit")?;
    if let Some(l) = limit {
        if l < 1 {
            violations.add(&format!("'{l}'"), "limit", "Member must have value greater than or equal to 1");
        }
    }
    let key_condition = req.opt_str("KeyConditionExpression")?.map(str::to_string);
    let segment = if is_query {
        None
    } else {
        let seg = req.opt_i64("Segment")?;
        let total = req.opt_i64("TotalSegments")?;
        if let Some(s) = seg {
            if !(0..MAX_TOTAL_SEGMENTS).contains(&s) {
                violations.add(&format!("'{s}'"), "segment", "Member must have value less than or equal to 999999");
            }
        }
        if let Some(t) = total {
            if t < 1 {
                violations.add(&format!("'{t}'"), "totalSegments", "Member must have value greater than or equal to 1");
            }
            if t > MAX_TOTAL_SEGMENTS {
                violations.add(
                    &format!("'{t}'"),
                    "totalSegments",
                    "Member must have value less than or equal to 1000000",
                );
            }
        }
        violations.finish()?;
        violations = Violations::default();
        match (seg, total) {
            (None, None) => None,
            (Some(s), Some(t)) => {
                if s >= t {
                    return Err(ApiError::validation(format!(
                        "The Segment parameter is zero-based and must be less than parameter TotalSegments: Segment: {s} is not less than TotalSegments: {t}"
                    )));
                }
                Some((s as u32, t as u32))
            }
            (Some(_), None) => {
                return Err(ApiError::validation(
                    "The TotalSegments parameter is required but was not present in the request when parameter Segment is present",
                ))
            }
            (None, Some(_)) => {
                return Err(ApiError::validation(
                    "The Segment parameter is required but was not present in the request when parameter TotalSegments is present",
                ))
            }
        }
    };
    violations.finish()?;
    let mut legacy = legacy::read(&req, is_query)?;
    let key_condition = key_condition.or(legacy.key_condition.take());
    if is_query && key_condition.is_none() {
        return Err(ApiError::validation(
            "Either the KeyConditions or KeyConditionExpression parameter must be specified in the request.",
        ));
    }
    if req.get("IndexName").is_none() && legacy.needs_key_schema() {
        // A missing table is left to the read, which words it as reads do.
        if let Ok(table) = engine.describe_table(&table_name, now) {
            legacy.check_key_schema(&table.key_schema, &table.attribute_definitions)?;
        }
    }
    legacy.check_select(req.select()?, is_query)?;
    let rc = req.return_capacity()?;
    let out = engine.read(
        ReadInput {
            table_name,
            index_name: req.opt_str("IndexName")?.map(str::to_string),
            key_condition,
            filter: req.opt_str("FilterExpression")?.map(str::to_string).or(legacy.filter.take()),
            projection: req.opt_str("ProjectionExpression")?.map(str::to_string).or(legacy.projection.take()),
            expr: legacy.merged(req.expr_args()?),
            select: req.select()?,
            limit: limit.map(|l| l.max(1) as usize),
            exclusive_start_key: req.opt_item("ExclusiveStartKey")?,
            forward: req.opt_bool("ScanIndexForward")?.unwrap_or(true),
            consistent_read: req.opt_bool("ConsistentRead")?.unwrap_or(false),
            segment,
            return_capacity: rc,
        },
        now,
    )?;
    let mut m = Map::new();
    if !out.count_only {
        m.insert("Items".into(), Value::Array(out.items.iter().map(item_to_json).collect()));
    }
    m.insert("Count".into(), json!(out.count));
    m.insert("ScannedCount".into(), json!(out.scanned_count));
    if let Some(k) = &out.last_evaluated_key {
        m.insert("LastEvaluatedKey".into(), item_to_json(k));
    }
    if let Some(c) = &out.consumed {
        m.insert("ConsumedCapacity".into(), capacity_json(c));
    }
    Ok(Value::Object(m))
}

/// DescribeLimits: the default quotas.
pub fn describe_limits() -> Value {
    json!({
        "AccountMaxReadCapacityUnits": 80000,
        "AccountMaxWriteCapacityUnits": 80000,
        "TableMaxReadCapacityUnits": 40000,
        "TableMaxWriteCapacityUnits": 40000,
    })
}

/// DescribeEndpoints: this server is its own endpoint, at the address the
/// client used (host and port, no scheme, S160).
pub fn describe_endpoints(host: &str) -> Value {
    json!({ "Endpoints": [{ "Address": host, "CachePeriodInMinutes": 1440 }] })
}

/// UpdateTimeToLive.
pub fn update_time_to_live(engine: &Engine, body: &Value, now: Millis) -> Result<Value, ApiError> {
    let req = Req::new(body)?;
    let table_name = req.table_name()?;
    let Some(spec) = req.get("TimeToLiveSpecification") else {
        return Err(null_member("timeToLiveSpecification"));
    };
    let spec = Req::new(spec)?;
    // The service model has checked both members are there and typed.
    let enabled = spec.opt_bool("Enabled")?.unwrap_or(false);
    let attribute = spec.opt_str("AttributeName")?.unwrap_or_default();
    engine.update_time_to_live(&table_name, enabled, attribute, now)?;
    Ok(json!({ "TimeToLiveSpecification": { "Enabled": enabled, "AttributeName": attribute } }))
}

/// DescribeTimeToLive.
pub fn describe_time_to_live(engine: &Engine, body: &Value) -> Result<Value, ApiError> {
    let table_name = Req::new(body)?.table_name()?;
    let d = engine.describe_time_to_live(&table_name)?;
    let mut out = json!({ "TimeToLiveStatus": d.status });
    if let (Some(a), Value::Object(m)) = (d.attribute, &mut out) {
        m.insert("AttributeName".into(), json!(a));
    }
    Ok(json!({ "TimeToLiveDescription": out }))
}
