//! The DynamoDB side: one SDK client, built once with the SDK's retries
//! off so that every throttle reaches the loader's controller, and the
//! `DynamoSink`, one request per write mode, classifying what the endpoint
//! answered.

use std::collections::HashMap;
use std::time::Duration;

use aws_config::BehaviorVersion;
use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::config::interceptors::BeforeTransmitInterceptorContextMut;
use aws_sdk_dynamodb::config::retry::RetryConfig;
use aws_sdk_dynamodb::config::timeout::TimeoutConfig;
use aws_sdk_dynamodb::config::{
    ConfigBag, Intercept, ProvideCredentials, RuntimeComponents, SharedCredentialsProvider,
};
use aws_sdk_dynamodb::error::{BoxError, ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue as Av, BillingMode, KeySchemaElement, KeyType, ProjectionType,
    ProvisionedThroughput, ReturnConsumedCapacity, ScalarAttributeType, TableStatus,
};
use aws_sdk_dynamodb::Client;
use dynaburst_model::ScalarType;

use dynaburst_input::Record;
use dynaburst_model::{write_units, KeyValue, MAX_ITEM_BYTES};

use dynaburst_loader::{key_hashes, KeyId, Limits, Outcome, Sink, SinkItem};

use crate::convert::key_from_sdk;
use crate::errors::{classify, classify_cancellation, DynamoError, ErrorClass};
use crate::schema::{KeySchema, SpecError};

/// Items in one BatchWriteItem.
pub const BATCH_SIZE: usize = 25;
/// Largest `--transact-size`.
pub const MAX_TRANSACT_SIZE: usize = 100;
/// Largest BatchWriteItem request (16 MB).
pub const MAX_BATCH_WRITE_BYTES: usize = 16 * 1024 * 1024;
/// Largest TransactWriteItems request, all items together (4 MB).
pub const MAX_TRANSACT_BYTES: usize = 4 * 1024 * 1024;

/// How long one request may take before it counts as failed (and is
/// retried).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// How long `--create-table` waits for the table to become ACTIVE.
pub const CREATE_TABLE_WAIT: Duration = Duration::from_secs(120);

/// How records are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteMode {
    /// BatchWriteItem of up to 25.
    Batch,
    /// PutItem each.
    Put,
    /// TransactWriteItems of up to `--transact-size`.
    Transact,
}

impl WriteMode {
    /// Name of the request type in reports.
    pub fn request_name(self) -> &'static str {
        match self {
            WriteMode::Batch => "BatchWriteItem",
            WriteMode::Put => "PutItem",
            WriteMode::Transact => "TransactWriteItems",
        }
    }
}

/// The endpoint and credentials.
#[derive(Clone, Debug, Default)]
pub struct Endpoint {
    /// None uses the SDK's own resolution (AWS_ENDPOINT_URL, config files).
    pub url: Option<String>,
    pub region: Option<String>,
    pub profile: Option<String>,
}

impl Endpoint {
    /// The endpoint as messages name it: the URL given, else
    /// AWS_ENDPOINT_URL, else DynamoDB's own (in the region given).
    pub fn name(&self) -> String {
        if let Some(u) = &self.url {
            return u.clone();
        }
        if let Some(u) = std::env::var_os("AWS_ENDPOINT_URL") {
            return u.to_string_lossy().into_owned();
        }
        match &self.region {
            Some(r) => format!("DynamoDB in {r}"),
            None => "DynamoDB (the SDK's configured region)".to_string(),
        }
    }
}

/// Builds the client once (retries off, each attempt timed out).
pub async fn client(endpoint: &Endpoint) -> Client {
    let shared = sdk_config(endpoint).await;
    Client::from_conf(
        aws_sdk_dynamodb::config::Builder::from(&shared)
            .retry_config(RetryConfig::disabled())
            .timeout_config(TimeoutConfig::builder().operation_attempt_timeout(REQUEST_TIMEOUT).build())
            .build(),
    )
}

/// The SDK configuration of `endpoint`: the default chain, then the
/// endpoint's profile, region (us-east-1 when none is found) and URL. With
/// an explicit endpoint and no credentials anywhere in the chain, local
/// endpoints get placeholder credentials (they check only that a
/// signature is present).
pub async fn sdk_config(endpoint: &Endpoint) -> aws_config::SdkConfig {
    let mut loader = aws_config::defaults(BehaviorVersion::latest());
    if let Some(p) = &endpoint.profile {
        loader = loader.profile_name(p);
    }
    if let Some(r) = &endpoint.region {
        loader = loader.region(aws_config::Region::new(r.clone()));
    }
    if let Some(u) = &endpoint.url {
        loader = loader.endpoint_url(u);
    }
    let shared = loader.load().await;
    let has_credentials = match shared.credentials_provider() {
        Some(p) => p.provide_credentials().await.is_ok(),
        None => false,
    };
    let mut builder = shared.to_builder();
    if shared.region().is_none() {
        builder = builder.region(aws_config::Region::new("us-east-1"));
    }
    if !has_credentials && (endpoint.url.is_some() || std::env::var_os("AWS_ENDPOINT_URL").is_some()) {
        builder =
            builder.credentials_provider(SharedCredentialsProvider::new(aws_sdk_dynamodb::config::Credentials::new(
                "dynaburst",
                "dynaburst",
                None,
                None,
                "dynaburst-local-placeholder",
            )));
    }
    builder.build()
}

/// What an SDK error means for a load's request (the classification is
/// `errors::classify`, shared with every other caller).
fn outcome_of<E: ProvideErrorMetadata + std::error::Error + 'static>(err: &SdkError<E, HttpResponse>) -> Outcome {
    let SdkError::ServiceError(e) = err else {
        return Outcome::Transient { message: crate::errors::error_text(err) };
    };
    let code = e.err().code().unwrap_or("").to_string();
    let message = e.err().message().unwrap_or("");
    match classify(err) {
        ErrorClass::Throttling => Outcome::Throttled { code },
        ErrorClass::Invalid => Outcome::Invalid { message: format!("{code}: {message}") },
        ErrorClass::Fatal => Outcome::Fatal { message: format!("{code}: {message}") },
        ErrorClass::Retryable => {
            Outcome::Transient { message: format!("HTTP {} {code}: {message}", e.raw().status().as_u16()) }
        }
    }
}

/// A record ready for DynamoDB: its key and its item as DynamoDB JSON,
/// encoded once on the reader thread and copied into every request that
/// carries it.
pub struct DynamoItem {
    pub key: KeyId,
    pub json: Vec<u8>,
}

/// Checks a record against the key schema and encodes it for a request
/// (on the reader thread).
pub fn prepare(rec: &Record, schema: &KeySchema) -> Result<SinkItem<DynamoItem>, String> {
    let item = rec.item.as_ref().map_err(|e| e.0.clone())?;
    let (key, size) = schema.check(item).map_err(|e| e.to_string())?;
    let (partition, slot) = key_hashes(&key);
    let mut json = Vec::with_capacity(size + size / 4 + 64);
    dynaburst_ddbjson::write_item(&mut json, item);
    let held = json.capacity() + key_heap_bytes(&key);
    Ok(SinkItem { partition, slot, units: write_units(size), bytes: size, held, item: DynamoItem { key, json } })
}

/// The heap bytes of a record's key (its values' text or bytes).
fn key_heap_bytes((pk, sk): &KeyId) -> usize {
    [Some(pk), sk.as_ref()].into_iter().flatten().map(KeyValue::heap_bytes).sum()
}

/// The request body of one write, built from the items' encoded JSON
/// instead of the SDK's own serialization (which would take every item as
/// the SDK's attribute values, cloned for each request and encoded again).
/// The SDK still signs, sends and times out the request and reads the
/// answer: the body replaces the one it serialized just before signing.
#[derive(Debug)]
struct EncodedBody(bytes::Bytes);

impl Intercept for EncodedBody {
    fn name(&self) -> &'static str {
        "EncodedBody"
    }

    fn modify_before_signing(
        &self,
        context: &mut BeforeTransmitInterceptorContextMut<'_>,
        _components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let request = context.request_mut();
        request.headers_mut().try_insert("content-length", self.0.len().to_string())?;
        *request.body_mut() = self.0.clone().into();
        Ok(())
    }
}

/// `{"RequestItems":{TABLE:[{"PutRequest":{"Item":…}},…]},"ReturnConsumedCapacity":"INDEXES"}`
fn batch_body(table: &str, items: &[&DynamoItem]) -> bytes::Bytes {
    const PUT: &[u8] = b"{\"PutRequest\":{\"Item\":";
    let len = items.iter().map(|d| d.json.len() + PUT.len() + 3).sum::<usize>() + table.len() + 96;
    let mut out = Vec::with_capacity(len);
    out.extend_from_slice(b"{\"RequestItems\":{");
    dynaburst_ddbjson::write_str(&mut out, table);
    out.extend_from_slice(b":[");
    for (i, d) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(PUT);
        out.extend_from_slice(&d.json);
        out.extend_from_slice(b"}}");
    }
    out.extend_from_slice(b"]},\"ReturnConsumedCapacity\":\"INDEXES\"}");
    out.into()
}

/// `{"TableName":TABLE,"Item":…,"ReturnConsumedCapacity":"INDEXES"}`
fn put_body(table: &str, item: &DynamoItem) -> bytes::Bytes {
    let mut out = Vec::with_capacity(item.json.len() + table.len() + 80);
    out.extend_from_slice(b"{\"TableName\":");
    dynaburst_ddbjson::write_str(&mut out, table);
    out.extend_from_slice(b",\"Item\":");
    out.extend_from_slice(&item.json);
    out.extend_from_slice(b",\"ReturnConsumedCapacity\":\"INDEXES\"}");
    out.into()
}

/// `{"TransactItems":[{"Put":{"TableName":TABLE,"Item":…}},…],"ReturnConsumedCapacity":"INDEXES"`
/// and the token when there is one `}`.
fn transact_body(table: &str, items: &[&DynamoItem], token: Option<&str>) -> bytes::Bytes {
    let mut name = Vec::with_capacity(table.len() + 2);
    dynaburst_ddbjson::write_str(&mut name, table);
    let len = items.iter().map(|d| d.json.len() + name.len() + 40).sum::<usize>() + 160;
    let mut out = Vec::with_capacity(len);
    out.extend_from_slice(b"{\"TransactItems\":[");
    for (i, d) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"Put\":{\"TableName\":");
        out.extend_from_slice(&name);
        out.extend_from_slice(b",\"Item\":");
        out.extend_from_slice(&d.json);
        out.extend_from_slice(b"}}");
    }
    out.extend_from_slice(b"],\"ReturnConsumedCapacity\":\"INDEXES\"");
    if let Some(t) = token {
        out.extend_from_slice(b",\"ClientRequestToken\":");
        dynaburst_ddbjson::write_str(&mut out, t);
    }
    out.push(b'}');
    out.into()
}

/// Writes to one DynamoDB table through the SDK.
pub struct DynamoSink {
    pub client: Client,
    pub table: String,
    pub schema: KeySchema,
    pub mode: WriteMode,
    /// Items per TransactWriteItems.
    pub transact_size: usize,
    /// The table's write capacity (provisioned, else its warm throughput).
    pub capacity_units_per_s: Option<f64>,
    /// Write units each secondary index consumed, from the answers'
    /// ConsumedCapacity (asked for with INDEXES).
    pub index_units: IndexUnits,
}

/// Write units per secondary index, summed over a load's answers.
#[derive(Clone, Debug, Default)]
pub struct IndexUnits(std::sync::Arc<std::sync::Mutex<std::collections::BTreeMap<String, f64>>>);

impl IndexUnits {
    /// Adds the index parts of one answer's ConsumedCapacity.
    fn note(&self, consumed: &aws_sdk_dynamodb::types::ConsumedCapacity) {
        let parts = consumed.global_secondary_indexes().into_iter().chain(consumed.local_secondary_indexes());
        let mut totals = self.0.lock().unwrap_or_else(|p| p.into_inner());
        for (name, c) in parts.flatten() {
            *totals.entry(name.clone()).or_insert(0.0) += c.capacity_units().unwrap_or(0.0);
        }
    }

    /// The totals so far.
    pub fn totals(&self) -> std::collections::BTreeMap<String, f64> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl Sink for DynamoSink {
    type Item = DynamoItem;

    fn request_name(&self) -> &'static str {
        self.mode.request_name()
    }

    fn limits(&self) -> Limits {
        let (max_items, max_bytes) = match self.mode {
            WriteMode::Batch => (BATCH_SIZE, MAX_BATCH_WRITE_BYTES),
            WriteMode::Put => (1, MAX_ITEM_BYTES),
            WriteMode::Transact => (self.transact_size.clamp(1, MAX_TRANSACT_SIZE), MAX_TRANSACT_BYTES),
        };
        // No fixed cap: the pipeline bounds requests in flight by the
        // table's capacity, the latency of the answers and memory.
        Limits { max_items, max_bytes, max_concurrency: usize::MAX, capacity_units_per_s: self.capacity_units_per_s }
    }

    fn idempotent_requests(&self) -> bool {
        self.mode == WriteMode::Transact
    }

    fn write<'a>(
        &'a self,
        items: &'a [&'a DynamoItem],
        token: Option<&'a str>,
    ) -> impl std::future::Future<Output = Outcome> + Send + 'a {
        write(self, items, token)
    }
}

/// Writes `items` with the sink's mode. Units are the answers' total
/// CapacityUnits (table and indexes); the index parts are noted apart.
async fn write(sink: &DynamoSink, items: &[&DynamoItem], token: Option<&str>) -> Outcome {
    let (client, table, schema) = (&sink.client, sink.table.as_str(), &sink.schema);
    match sink.mode {
        WriteMode::Batch => {
            let result = client
                .batch_write_item()
                .request_items(table, Vec::new())
                .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
                .customize()
                .interceptor(EncodedBody(batch_body(table, items)))
                .send()
                .await;
            match result {
                Ok(out) => {
                    out.consumed_capacity().iter().for_each(|c| sink.index_units.note(c));
                    let units = out.consumed_capacity().iter().filter_map(|c| c.capacity_units()).sum();
                    let mut unprocessed = Vec::new();
                    if let Some(left) = out.unprocessed_items().and_then(|m| m.get(table)) {
                        let index: HashMap<&KeyId, usize> =
                            items.iter().enumerate().map(|(i, d)| (&d.key, i)).collect();
                        for w in left {
                            let Some(item) = w.put_request().map(|p| p.item()) else { continue };
                            let key = sdk_key(schema, item);
                            match key.as_ref().and_then(|k| index.get(k)) {
                                Some(&i) => unprocessed.push(i),
                                None => {
                                    return Outcome::Fatal {
                                        message:
                                            "the endpoint returned an unprocessed item that was not in the request"
                                                .to_string(),
                                    }
                                }
                            }
                        }
                    }
                    Outcome::Written { unprocessed, rejected: Vec::new(), units }
                }
                Err(e) => outcome_of(&e),
            }
        }
        WriteMode::Put => {
            let Some(item) = items.first().copied() else { return Outcome::all_written(0.0) };
            let result = client
                .put_item()
                .table_name(table)
                .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
                .customize()
                .interceptor(EncodedBody(put_body(table, item)))
                .send()
                .await;
            match result {
                Ok(out) => {
                    out.consumed_capacity().iter().for_each(|c| sink.index_units.note(c));
                    Outcome::all_written(out.consumed_capacity().and_then(|c| c.capacity_units()).unwrap_or(0.0))
                }
                Err(e) => outcome_of(&e),
            }
        }
        WriteMode::Transact => {
            // The pipeline gives every transaction its token (the sink's
            // requests are idempotent), and the body carries it.
            let mut req = client
                .transact_write_items()
                .set_transact_items(Some(Vec::new()))
                .return_consumed_capacity(ReturnConsumedCapacity::Indexes);
            if let Some(t) = token {
                req = req.client_request_token(t);
            }
            match req.customize().interceptor(EncodedBody(transact_body(table, items, token))).send().await {
                Ok(out) => {
                    out.consumed_capacity().iter().for_each(|c| sink.index_units.note(c));
                    Outcome::all_written(out.consumed_capacity().iter().filter_map(|c| c.capacity_units()).sum())
                }
                Err(e) => {
                    if let SdkError::ServiceError(se) = &e {
                        if let aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError::TransactionCanceledException(tc) = se.err() {
                            let reasons: Vec<(usize, String, String)> = tc
                                .cancellation_reasons()
                                .iter()
                                .enumerate()
                                .filter_map(|(i, r)| {
                                    let code = r.code().unwrap_or("None");
                                    (code != "None").then(|| (i, code.to_string(), r.message().unwrap_or("").to_string()))
                                })
                                .collect();
                            if classify_cancellation(reasons.iter().map(|r| r.1.as_str())) == ErrorClass::Throttling {
                                return Outcome::Throttled { code: reasons.first().map(|r| r.1.clone()).unwrap_or_default() };
                            }
                            return Outcome::Cancelled { reasons };
                        }
                    }
                    outcome_of(&e)
                }
            }
        }
    }
}

fn sdk_key(schema: &KeySchema, item: &HashMap<String, Av>) -> Option<KeyId> {
    let hash = key_from_sdk(item.get(&schema.hash.0)?)?;
    let range = match &schema.range {
        Some((name, _)) => Some(key_from_sdk(item.get(name)?)?),
        None => None,
    };
    Some((hash, range))
}

/// What the loader needs to know about the target table.
#[derive(Clone, Debug)]
pub struct TableInfo {
    pub schema: KeySchema,
    /// Provisioned write capacity; None for on-demand.
    pub provisioned_wcu: Option<u64>,
    /// What the table can take at once (WarmThroughput), if reported.
    pub warm_write_units: Option<u64>,
    /// The most write request units a second the table may take on demand
    /// (OnDemandThroughput), if set.
    pub max_write_request_units: Option<u64>,
    /// The table's secondary indexes: every write pays for its entries.
    pub indexes: Vec<IndexInfo>,
}

/// What a load needs to know of a secondary index to estimate its writes.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexInfo {
    pub name: String,
    /// Global (own capacity and partitions) or local (the table's).
    pub global: bool,
    /// Partition-key and sort-key components, with their types.
    pub hash: Vec<(String, ScalarType)>,
    pub range: Vec<(String, ScalarType)>,
    /// Attributes an entry carries besides the keys: None for ALL.
    pub projected: Option<Vec<String>>,
    /// A GSI's provisioned write capacity (None on demand, and for LSIs).
    pub provisioned_wcu: Option<u64>,
    /// A GSI's warm write throughput, if reported.
    pub warm_write_units: Option<u64>,
    /// A GSI's own on-demand write maximum (OnDemandThroughput), if set.
    pub max_write_request_units: Option<u64>,
}

fn scalar(t: &ScalarAttributeType) -> Option<ScalarType> {
    match t {
        ScalarAttributeType::S => Some(ScalarType::S),
        ScalarAttributeType::N => Some(ScalarType::N),
        ScalarAttributeType::B => Some(ScalarType::B),
        _ => None,
    }
}

/// Seed of the jitter of set-up retries (DescribeTable, CreateTable).
const SETUP_SEED: u64 = 0x5E70B;

/// Reads the table's key schema and capacity.
pub async fn describe(client: &Client, table: &str) -> Result<TableInfo, DynamoError> {
    // A retryable answer (500, 503, a reset connection) is retried here as
    // the load's writes are: a moment of trouble at start-up must not stop
    // a load. Nothing listening is said at once.
    let mut rng = dynaburst_rng::Rng::new(SETUP_SEED);
    let mut attempt = 0;
    let out = loop {
        match client.describe_table().table_name(table).send().await {
            Ok(out) => break out,
            Err(e) if e.as_service_error().and_then(|s| s.code()) == Some("ResourceNotFoundException") => {
                return Err(DynamoError::Missing { table: table.to_string() });
            }
            Err(e) if crate::errors::worth_retrying_at_set_up(&e) && attempt < crate::tools::MAX_ATTEMPTS => {
                tokio::time::sleep(crate::tools::BACKOFF.delay(attempt, &mut rng)).await;
                attempt += 1;
            }
            Err(e) => return Err(DynamoError::request(format!("DescribeTable {table}"), &e)),
        }
    };
    let missing = |what| DynamoError::Description { table: table.to_string(), missing: what };
    let Some(t) = out.table() else { return Err(missing("no table in the answer")) };
    let types: HashMap<&str, ScalarType> = t
        .attribute_definitions()
        .iter()
        .filter_map(|d| Some((d.attribute_name(), scalar(d.attribute_type())?)))
        .collect();
    let mut hash = None;
    let mut range = None;
    for k in t.key_schema() {
        let ty = types.get(k.attribute_name()).copied().ok_or_else(|| missing("a key attribute without a type"))?;
        match k.key_type() {
            KeyType::Hash => hash = Some((k.attribute_name().to_string(), ty)),
            _ => range = Some((k.attribute_name().to_string(), ty)),
        }
    }
    let hash = hash.ok_or_else(|| missing("no partition key"))?;
    let on_demand = t.billing_mode_summary().and_then(|b| b.billing_mode()) == Some(&BillingMode::PayPerRequest);
    let provisioned_wcu = if on_demand {
        None
    } else {
        t.provisioned_throughput().and_then(|p| p.write_capacity_units()).map(|w| w as u64).filter(|w| *w > 0)
    };
    let components = |keys: &[KeySchemaElement], role: KeyType| -> Result<Vec<(String, ScalarType)>, DynamoError> {
        keys.iter()
            .filter(|k| *k.key_type() == role)
            .map(|k| {
                let ty = types
                    .get(k.attribute_name())
                    .copied()
                    .ok_or_else(|| missing("an index key attribute without a type"))?;
                Ok((k.attribute_name().to_string(), ty))
            })
            .collect()
    };
    let projected = |p: Option<&aws_sdk_dynamodb::types::Projection>| match p.and_then(|p| p.projection_type()) {
        Some(ProjectionType::All) | None => None,
        Some(_) => p.map(|p| p.non_key_attributes().to_vec()).or(Some(Vec::new())),
    };
    // A maximum of -1 (or none) is no maximum.
    let max_write = |o: Option<&aws_sdk_dynamodb::types::OnDemandThroughput>| {
        o.and_then(|o| o.max_write_request_units()).filter(|w| *w > 0).map(|w| w as u64)
    };
    // (name, key schema, projection, global, provisioned WCU, warm WCU, on-demand maximum WCU).
    let gsis = t.global_secondary_indexes().iter().map(|g| {
        let wcu = g.provisioned_throughput().and_then(|p| p.write_capacity_units()).map(|w| w as u64);
        let warm = g.warm_throughput().and_then(|w| w.write_units_per_second()).map(|w| w as u64);
        (
            g.index_name(),
            g.key_schema(),
            g.projection(),
            true,
            wcu.filter(|w| *w > 0),
            warm,
            max_write(g.on_demand_throughput()),
        )
    });
    let lsis = t
        .local_secondary_indexes()
        .iter()
        .map(|l| (l.index_name(), l.key_schema(), l.projection(), false, None, None, None));
    let mut indexes = Vec::new();
    for (name, keys, projection, global, provisioned_wcu, warm_write_units, max_write_request_units) in gsis.chain(lsis)
    {
        indexes.push(IndexInfo {
            name: name.unwrap_or_default().to_string(),
            global,
            hash: components(keys, KeyType::Hash)?,
            range: components(keys, KeyType::Range)?,
            projected: projected(projection),
            provisioned_wcu,
            warm_write_units,
            max_write_request_units,
        });
    }
    Ok(TableInfo {
        schema: KeySchema { hash, range },
        provisioned_wcu,
        warm_write_units: t.warm_throughput().and_then(|w| w.write_units_per_second()).map(|w| w as u64),
        max_write_request_units: max_write(t.on_demand_throughput()),
        indexes,
    })
}

/// Billing for `--create-table`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Billing {
    OnDemand,
    Provisioned { read: u64, write: u64 },
}

impl Billing {
    /// Parses `on-demand` or `provisioned:RCU:WCU`.
    pub fn parse(text: &str) -> Result<Billing, SpecError> {
        if text == "on-demand" || text == "pay-per-request" {
            return Ok(Billing::OnDemand);
        }
        let parts: Vec<&str> = text.split(':').collect();
        match parts.as_slice() {
            ["provisioned", r, w] => Ok(Billing::Provisioned {
                read: r.parse().map_err(|_| SpecError::Capacity { what: "RCU", given: r.to_string() })?,
                write: w.parse().map_err(|_| SpecError::Capacity { what: "WCU", given: w.to_string() })?,
            }),
            _ => Err(SpecError::Billing { given: text.to_string() }),
        }
    }
}

fn sdk_scalar(t: ScalarType) -> ScalarAttributeType {
    match t {
        ScalarType::S => ScalarAttributeType::S,
        ScalarType::N => ScalarAttributeType::N,
        ScalarType::B => ScalarAttributeType::B,
    }
}

/// Creates the table and waits until it is ACTIVE.
pub async fn create_table(
    client: &Client,
    table: &str,
    schema: &KeySchema,
    billing: Billing,
) -> Result<(), DynamoError> {
    let build =
        |e: aws_sdk_dynamodb::error::BuildError| DynamoError::Build { operation: "CreateTable", text: e.to_string() };
    let mut req = client.create_table().table_name(table);
    for (i, (name, ty)) in std::iter::once(&schema.hash).chain(schema.range.as_ref()).enumerate() {
        let key_type = if i == 0 { KeyType::Hash } else { KeyType::Range };
        req = req
            .key_schema(KeySchemaElement::builder().attribute_name(name).key_type(key_type).build().map_err(build)?)
            .attribute_definitions(
                AttributeDefinition::builder()
                    .attribute_name(name)
                    .attribute_type(sdk_scalar(*ty))
                    .build()
                    .map_err(build)?,
            );
    }
    req = match billing {
        Billing::OnDemand => req.billing_mode(BillingMode::PayPerRequest),
        Billing::Provisioned { read, write } => req.billing_mode(BillingMode::Provisioned).provisioned_throughput(
            ProvisionedThroughput::builder()
                .read_capacity_units(read as i64)
                .write_capacity_units(write as i64)
                .build()
                .map_err(build)?,
        ),
    };
    let mut rng = dynaburst_rng::Rng::new(SETUP_SEED);
    let mut attempt = 0;
    loop {
        match req.clone().send().await {
            Ok(_) => break,
            // An earlier attempt that failed on the way back may have
            // created it: wait for it below as for our own.
            Err(e) if attempt > 0 && e.as_service_error().and_then(|s| s.code()) == Some("ResourceInUseException") => {
                break
            }
            Err(e) if crate::errors::worth_retrying_at_set_up(&e) && attempt < crate::tools::MAX_ATTEMPTS => {
                tokio::time::sleep(crate::tools::BACKOFF.delay(attempt, &mut rng)).await;
                attempt += 1;
            }
            Err(e) => return Err(DynamoError::request(format!("CreateTable {table}"), &e)),
        }
    }
    let deadline = tokio::time::Instant::now() + CREATE_TABLE_WAIT;
    loop {
        let out = client.describe_table().table_name(table).send().await;
        if let Ok(o) = &out {
            if o.table().and_then(|t| t.table_status()) == Some(&TableStatus::Active) {
                return Ok(());
            }
        }
        if tokio::time::Instant::now() > deadline {
            return Err(DynamoError::NotActive { table: table.to_string(), waited_s: CREATE_TABLE_WAIT.as_secs() });
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dynaburst_model::{AttributeValue, Item, Number};

    #[test]
    fn a_prepared_item_is_held_at_its_encoded_text_and_key_not_its_dynamodb_size() {
        let schema = KeySchema::parse("id:S,n:N").unwrap();
        let mut item = Item::new();
        item.insert("id".into(), AttributeValue::S("person-0001".into()));
        item.insert("n".into(), AttributeValue::N(Number::from_i64(12345)));
        item.insert("bio".into(), AttributeValue::S("\u{e9}\"\n".repeat(100)));
        let rec = Record { line: 1, offset: 0, end: 10, raw: String::new(), item: Ok(item) };
        let p = prepare(&rec, &schema).unwrap();
        // The key's text (11 bytes) and digits (5), and the encoded
        // item's buffer (escapes make it larger than the item's size).
        assert_eq!(p.held, p.item.json.capacity() + 11 + 5);
        assert!(p.item.json.len() > p.bytes, "{} vs {}", p.item.json.len(), p.bytes);
        assert!(p.held > p.bytes + 16, "{} vs {}", p.held, p.bytes);
    }
}
