//! The DynamoDB Streams API (target prefix `DynamoDBStreams_20120810.`):
//! ListStreams, DescribeStream, GetShardIterator, GetRecords (S103-S115).

use dynaburst_engine::stream::{sequence_text, IteratorType, StreamRecord, StreamViewType, MAX_DESCRIBE_SHARDS};
use dynaburst_engine::{Engine, KeyRole, Millis};
use serde_json::{json, Map, Value};

use crate::error::ApiError;
use crate::request::Req;
use crate::value::item_to_json;

/// The target prefix of the Streams API.
pub const STREAMS_TARGET_PREFIX: &str = "DynamoDBStreams_20120810.";

/// Every Streams operation this server answers.
pub const STREAMS_OPERATIONS: &[&str] = &["DescribeStream", "GetRecords", "GetShardIterator", "ListStreams"];

/// The Principal of a time-to-live deletion (S115).
const TTL_PRINCIPAL: &str = "dynamodb.amazonaws.com";

pub(crate) fn dispatch(engine: &Engine, operation: &str, request: &Value, now: Millis) -> Result<Value, ApiError> {
    let req = Req::new(request)?;
    match operation {
        "ListStreams" => {
            let limit = req.opt_i64("Limit")?.map_or(100, |l| l.max(1) as usize);
            let (streams, last) =
                engine.list_streams(req.opt_str("TableName")?, limit, req.opt_str("ExclusiveStartStreamArn")?, now)?;
            let mut out = json!({ "Streams": streams.iter().map(|s| json!({
                "StreamArn": s.arn, "TableName": s.table_name, "StreamLabel": s.label
            })).collect::<Vec<_>>() });
            if let (Some(l), Value::Object(m)) = (last, &mut out) {
                m.insert("LastEvaluatedStreamArn".into(), json!(l));
            }
            Ok(out)
        }
        "DescribeStream" => {
            let arn = req.opt_str("StreamArn")?.unwrap_or_default();
            let limit = req.opt_i64("Limit")?.map_or(MAX_DESCRIBE_SHARDS, |l| l.max(1) as usize);
            let children_of = match request.get("ShardFilter") {
                None => None,
                Some(filter) => {
                    match (filter.get("Type").and_then(Value::as_str), filter.get("ShardId").and_then(Value::as_str)) {
                        (Some("CHILD_SHARDS"), Some(id)) => Some(id),
                        _ => return Err(ApiError::validation("ShardFilter requires Type CHILD_SHARDS and a ShardId")),
                    }
                }
            };
            let d = engine.describe_stream(arn, limit, req.opt_str("ExclusiveStartShardId")?, children_of, now)?;
            let shards: Vec<Value> = d
                .shards
                .iter()
                .map(|s| {
                    let mut range = Map::new();
                    range.insert("StartingSequenceNumber".into(), json!(s.starting_sequence));
                    if let Some(end) = &s.ending_sequence {
                        range.insert("EndingSequenceNumber".into(), json!(end));
                    }
                    let mut shard = Map::new();
                    shard.insert("ShardId".into(), json!(s.shard_id));
                    if let Some(parent) = &s.parent {
                        shard.insert("ParentShardId".into(), json!(parent));
                    }
                    shard.insert("SequenceNumberRange".into(), Value::Object(range));
                    Value::Object(shard)
                })
                .collect();
            let key_schema: Vec<Value> = d
                .key_schema
                .pairs()
                .iter()
                .map(
                    |(n, r)| json!({"AttributeName": n, "KeyType": if *r == KeyRole::Hash { "HASH" } else { "RANGE" }}),
                )
                .collect();
            let mut description = json!({
                "StreamArn": d.summary.arn,
                "StreamLabel": d.summary.label,
                "StreamStatus": d.status,
                "StreamViewType": d.view.name(),
                "CreationRequestDateTime": d.created_at.0 as f64 / 1000.0,
                "TableName": d.summary.table_name,
                "KeySchema": key_schema,
                "Shards": shards,
            });
            if let (Some(last), Value::Object(m)) = (d.last_evaluated_shard, &mut description) {
                m.insert("LastEvaluatedShardId".into(), json!(last));
            }
            Ok(json!({ "StreamDescription": description }))
        }
        "GetShardIterator" => {
            let kind = match req.opt_str("ShardIteratorType")? {
                Some("TRIM_HORIZON") => IteratorType::TrimHorizon,
                Some("LATEST") => IteratorType::Latest,
                Some("AT_SEQUENCE_NUMBER") => IteratorType::AtSequenceNumber,
                _ => IteratorType::AfterSequenceNumber,
            };
            let sequence = req.opt_str("SequenceNumber")?;
            let needs = matches!(kind, IteratorType::AtSequenceNumber | IteratorType::AfterSequenceNumber);
            if needs != sequence.is_some() {
                return Err(ApiError::validation(if needs {
                    "Must specify a sequence number with ShardIteratorType AT_SEQUENCE_NUMBER or AFTER_SEQUENCE_NUMBER"
                } else {
                    "Must not specify a sequence number with ShardIteratorType TRIM_HORIZON or LATEST"
                }));
            }
            let iterator = engine.get_shard_iterator(
                req.opt_str("StreamArn")?.unwrap_or_default(),
                req.opt_str("ShardId")?.unwrap_or_default(),
                kind,
                sequence,
                now,
            )?;
            Ok(json!({ "ShardIterator": iterator }))
        }
        _ => {
            let limit = req.opt_i64("Limit")?.map_or(1000, |l| l.max(1) as usize);
            let page = engine.get_records(req.opt_str("ShardIterator")?.unwrap_or_default(), limit, now)?;
            let region = &engine.config().region;
            let records: Vec<Value> = page.records.iter().map(|r| record_json(r, page.view, region)).collect();
            let mut out = json!({ "Records": records });
            if let (Some(next), Value::Object(m)) = (page.next_iterator, &mut out) {
                m.insert("NextShardIterator".into(), json!(next));
            }
            Ok(out)
        }
    }
}

/// One record as GetRecords returns it (S111-S115).
fn record_json(r: &StreamRecord, view: StreamViewType, region: &str) -> Value {
    let mut dynamodb = Map::new();
    // Rounded down to the second, sent as epoch seconds (S113).
    dynamodb.insert("ApproximateCreationDateTime".into(), json!((r.at.0 / 1000) as f64));
    dynamodb.insert("Keys".into(), item_to_json(&r.keys));
    let (new, old) = r.images(view);
    if let Some(n) = new {
        dynamodb.insert("NewImage".into(), item_to_json(n));
    }
    if let Some(o) = old {
        dynamodb.insert("OldImage".into(), item_to_json(o));
    }
    dynamodb.insert("SequenceNumber".into(), json!(sequence_text(r.sequence)));
    dynamodb.insert("SizeBytes".into(), json!(r.size_bytes(view)));
    dynamodb.insert("StreamViewType".into(), json!(view.name()));
    let mut record = json!({
        "eventID": format!("{:032x}", u128::from(r.sequence) ^ (u128::from(r.at.0) << 64)),
        "eventName": r.event.name(),
        "eventVersion": "1.1",
        "eventSource": "aws:dynamodb",
        "awsRegion": region,
        "dynamodb": Value::Object(dynamodb),
    });
    if let (true, Value::Object(m)) = (r.by_service, &mut record) {
        m.insert("userIdentity".into(), json!({"Type": "Service", "PrincipalId": TTL_PRINCIPAL}));
    }
    record
}
