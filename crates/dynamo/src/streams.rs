//! `dynaburst streams tail`: a table's change records, as they arrive, as
//! JSON objects shaped like GetRecords' records, through the DynamoDB
//! Streams SDK (any endpoint: DynamoDB, or `dynaburst serve`).

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use aws_sdk_dynamodbstreams::types::{AttributeValue as Av, Record, ShardIteratorType};
use aws_sdk_dynamodbstreams::Client as StreamsClient;
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use serde_json::{json, Map, Value};

use crate::errors::DynamoError;
use crate::sink::{self, Endpoint};

/// Most records one GetRecords returns (the API's own limit).
pub const MAX_GET_RECORDS: i32 = 1000;
/// Most DescribeStream pages read for one listing of the shards.
const MAX_DESCRIBE_PAGES: usize = 1000;

/// Where `tail` starts and when it stops.
#[derive(Clone, Debug)]
pub struct TailOptions {
    /// TRIM_HORIZON (every record kept) instead of LATEST (only new ones).
    pub from_start: bool,
    /// Stop after this many records.
    pub max_records: Option<u64>,
    /// How long to wait when no shard had anything new.
    pub poll: Duration,
}

/// One shard being read.
struct Reader {
    iterator: String,
    /// The last sequence number read, to resume when the iterator expires.
    last: Option<String>,
}

/// Reads `table`'s stream and hands each record to `emit`, until
/// `max_records` or an error; returns the number of records read.
pub async fn tail(
    endpoint: &Endpoint,
    table: &str,
    opts: &TailOptions,
    mut emit: impl FnMut(&Value) -> std::io::Result<()>,
) -> Result<u64, DynamoError> {
    let shared = sink::sdk_config(endpoint).await;
    let ddb = aws_sdk_dynamodb::Client::new(&shared);
    let streams = StreamsClient::new(&shared);
    let described = ddb
        .describe_table()
        .table_name(table)
        .send()
        .await
        .map_err(|e| DynamoError::request(format!("DescribeTable {table}"), &e))?;
    let arn = described
        .table()
        .and_then(|t| t.latest_stream_arn())
        .ok_or(DynamoError::Description { table: table.to_string(), missing: "LatestStreamArn (no stream)" })?
        .to_string();
    let mut readers: HashMap<String, Reader> = HashMap::new();
    let mut finished: HashSet<String> = HashSet::new();
    let mut first_listing = true;
    let mut read = 0u64;
    loop {
        // New shards (children of a split) start at their beginning; at
        // the first listing, where the caller asked.
        for (shard, parent) in shards(&streams, &arn).await? {
            let parent_open = parent.as_ref().is_some_and(|p| readers.contains_key(p));
            if readers.contains_key(&shard) || finished.contains(&shard) || parent_open {
                continue;
            }
            let kind = if opts.from_start || !first_listing {
                ShardIteratorType::TrimHorizon
            } else {
                ShardIteratorType::Latest
            };
            let iterator = iterator(&streams, &arn, &shard, kind, None).await?;
            readers.insert(shard, Reader { iterator, last: None });
        }
        first_listing = false;
        let mut any = false;
        let ids: Vec<String> = readers.keys().cloned().collect();
        for shard in ids {
            let Some(r) = readers.get_mut(&shard) else { continue };
            let got = match streams.get_records().shard_iterator(&r.iterator).limit(MAX_GET_RECORDS).send().await {
                Ok(got) => got,
                Err(e) if e.as_service_error().is_some_and(|s| s.is_expired_iterator_exception()) => {
                    let (kind, after) = match &r.last {
                        Some(seq) => (ShardIteratorType::AfterSequenceNumber, Some(seq.as_str())),
                        None => (ShardIteratorType::TrimHorizon, None),
                    };
                    r.iterator = iterator(&streams, &arn, &shard, kind, after).await?;
                    continue;
                }
                Err(e) => return Err(DynamoError::request("GetRecords", &e)),
            };
            for record in got.records() {
                any = true;
                if let Some(seq) = record.dynamodb().and_then(|d| d.sequence_number()) {
                    r.last = Some(seq.to_string());
                }
                emit(&record_json(record)).map_err(|e| DynamoError::Task(format!("writing a record: {e}")))?;
                read += 1;
                if opts.max_records.is_some_and(|m| read >= m) {
                    return Ok(read);
                }
            }
            match got.next_shard_iterator() {
                Some(next) => r.iterator = next.to_string(),
                None => {
                    readers.remove(&shard);
                    finished.insert(shard);
                }
            }
        }
        if !any {
            tokio::time::sleep(opts.poll).await;
        }
    }
}

/// Every shard of the stream with its parent, in DescribeStream's order.
async fn shards(streams: &StreamsClient, arn: &str) -> Result<Vec<(String, Option<String>)>, DynamoError> {
    let mut out = Vec::new();
    let mut start: Option<String> = None;
    for _ in 0..MAX_DESCRIBE_PAGES {
        let page = streams
            .describe_stream()
            .stream_arn(arn)
            .set_exclusive_start_shard_id(start.take())
            .send()
            .await
            .map_err(|e| DynamoError::request("DescribeStream", &e))?;
        let Some(d) = page.stream_description() else { break };
        for s in d.shards() {
            if let Some(id) = s.shard_id() {
                out.push((id.to_string(), s.parent_shard_id().map(str::to_string)));
            }
        }
        match d.last_evaluated_shard_id() {
            Some(last) => start = Some(last.to_string()),
            None => break,
        }
    }
    Ok(out)
}

async fn iterator(
    streams: &StreamsClient,
    arn: &str,
    shard: &str,
    kind: ShardIteratorType,
    after: Option<&str>,
) -> Result<String, DynamoError> {
    let got = streams
        .get_shard_iterator()
        .stream_arn(arn)
        .shard_id(shard)
        .shard_iterator_type(kind)
        .set_sequence_number(after.map(str::to_string))
        .send()
        .await
        .map_err(|e| DynamoError::request("GetShardIterator", &e))?;
    got.shard_iterator()
        .map(str::to_string)
        .ok_or(DynamoError::Description { table: shard.to_string(), missing: "ShardIterator" })
}

/// A record as GetRecords' JSON shows it (values in DynamoDB JSON).
pub fn record_json(r: &Record) -> Value {
    let mut m = Map::new();
    if let Some(id) = r.event_id() {
        m.insert("eventID".into(), json!(id));
    }
    if let Some(name) = r.event_name() {
        m.insert("eventName".into(), json!(name.as_str()));
    }
    if let Some(source) = r.event_source() {
        m.insert("eventSource".into(), json!(source));
    }
    if let Some(d) = r.dynamodb() {
        let mut s = Map::new();
        if let Some(t) = d.approximate_creation_date_time() {
            s.insert("ApproximateCreationDateTime".into(), json!(t.secs()));
        }
        for (name, image) in [("Keys", d.keys()), ("NewImage", d.new_image()), ("OldImage", d.old_image())] {
            if let Some(image) = image {
                s.insert(name.into(), map_json(image));
            }
        }
        if let Some(seq) = d.sequence_number() {
            s.insert("SequenceNumber".into(), json!(seq));
        }
        if let Some(size) = d.size_bytes() {
            s.insert("SizeBytes".into(), json!(size));
        }
        if let Some(view) = d.stream_view_type() {
            s.insert("StreamViewType".into(), json!(view.as_str()));
        }
        m.insert("dynamodb".into(), Value::Object(s));
    }
    if let Some(u) = r.user_identity() {
        m.insert("userIdentity".into(), json!({"Type": u.r#type(), "PrincipalId": u.principal_id()}));
    }
    Value::Object(m)
}

fn map_json(m: &HashMap<String, Av>) -> Value {
    let mut keys: Vec<&String> = m.keys().collect();
    keys.sort();
    Value::Object(keys.into_iter().map(|k| (k.clone(), value_json(&m[k]))).collect())
}

/// A streams attribute value in DynamoDB JSON.
fn value_json(v: &Av) -> Value {
    match v {
        Av::S(s) => json!({"S": s}),
        Av::N(n) => json!({"N": n}),
        Av::B(b) => json!({"B": BASE64.encode(b.as_ref())}),
        Av::Bool(b) => json!({"BOOL": b}),
        Av::Null(b) => json!({"NULL": b}),
        Av::Ss(v) => json!({"SS": v}),
        Av::Ns(v) => json!({"NS": v}),
        Av::Bs(v) => json!({"BS": v.iter().map(|b| BASE64.encode(b.as_ref())).collect::<Vec<_>>()}),
        Av::L(v) => json!({"L": v.iter().map(value_json).collect::<Vec<_>>()}),
        Av::M(m) => json!({"M": map_json(m)}),
        // A type newer than this SDK: say so rather than drop it.
        _ => json!({"UNKNOWN": true}),
    }
}

#[cfg(test)]
mod tests {
    use aws_sdk_dynamodbstreams::primitives::{Blob, DateTime};
    use aws_sdk_dynamodbstreams::types::{OperationType, StreamRecord};

    use super::*;

    #[test]
    fn records_render_as_get_records_shows_them() {
        let mut keys = HashMap::new();
        keys.insert("pk".to_string(), Av::S("a".into()));
        let mut image = keys.clone();
        image.insert("b".into(), Av::B(Blob::new(b"hi".to_vec())));
        image.insert("l".into(), Av::L(vec![Av::N("1".into()), Av::Null(true)]));
        let record = Record::builder()
            .event_id("e1")
            .event_name(OperationType::Insert)
            .dynamodb(
                StreamRecord::builder()
                    .approximate_creation_date_time(DateTime::from_secs(1_700_000_000))
                    .set_keys(Some(keys))
                    .set_new_image(Some(image))
                    .sequence_number("000100")
                    .size_bytes(12)
                    .build(),
            )
            .build();
        assert_eq!(
            record_json(&record),
            json!({
                "eventID": "e1",
                "eventName": "INSERT",
                "dynamodb": {
                    "ApproximateCreationDateTime": 1_700_000_000,
                    "Keys": {"pk": {"S": "a"}},
                    "NewImage": {"b": {"B": "aGk="}, "l": {"L": [{"N": "1"}, {"NULL": true}]}, "pk": {"S": "a"}},
                    "SequenceNumber": "000100",
                    "SizeBytes": 12,
                }
            })
        );
    }
}
