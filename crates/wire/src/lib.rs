//! DynamoDB's JSON 1.0 wire protocol: request members to engine inputs,
//! engine outputs to response bodies, and errors to `{"__type", "message"}`.
//!
//! Architecture invariant: this is the only server-side crate that knows
//! DynamoDB JSON (attribute values come from the `dynaburst-ddbjson` codec
//! it shares with the client side). It knows nothing of HTTP (status codes
//! are plain numbers here) and never reads a clock: the caller passes `now`.

mod backups;
mod error;
mod insights;
mod legacy;
mod ops;
mod partiql;
mod policy;
mod render;
mod request;
mod streams;
mod tags;
mod value;

use dynaburst_apimodel::Service;
use dynaburst_engine::{Engine, Millis};
use serde_json::Value;

pub use dynaburst_ddbjson::{CONTENT_TYPE, CONTENT_TYPES, TARGET_PREFIX};
pub use error::{ApiError, ErrorKind, ThrottlingReason, NS_AVAILABILITY, NS_DYNAMODB, NS_SERVICE, NS_VALIDATE};
pub use ops::{
    table_description_json, unprocessed_keys_json, write_requests_json, MAX_BATCH_WRITE_ITEMS, MAX_CLIENT_TOKEN,
    MAX_LIST_TABLES, MAX_TOTAL_SEGMENTS, MAX_TRANSACT_ITEMS,
};
pub use partiql::{MAX_BATCH_STATEMENTS, MAX_TRANSACTION_STATEMENTS};
pub use request::{MAX_TABLE_NAME, MIN_TABLE_NAME};
pub use streams::{STREAMS_OPERATIONS, STREAMS_TARGET_PREFIX};
pub use value::{item_to_json, parse_item, parse_value, value_to_json, MAX_NESTING_DEPTH};

/// DescribeEndpoints' address when the request named no host.
pub const DEFAULT_ENDPOINT_HOST: &str = "localhost";

/// Every operation this server answers.
pub const OPERATIONS: &[&str] = &[
    "BatchExecuteStatement",
    "BatchGetItem",
    "BatchWriteItem",
    "CreateBackup",
    "CreateTable",
    "DeleteBackup",
    "DeleteItem",
    "DeleteResourcePolicy",
    "DeleteTable",
    "DescribeBackup",
    "DescribeContinuousBackups",
    "DescribeContributorInsights",
    "DescribeEndpoints",
    "DescribeLimits",
    "DescribeTable",
    "DescribeTimeToLive",
    "ExecuteStatement",
    "ExecuteTransaction",
    "GetItem",
    "GetResourcePolicy",
    "ListBackups",
    "ListContributorInsights",
    "ListTables",
    "ListTagsOfResource",
    "PutItem",
    "PutResourcePolicy",
    "Query",
    "RestoreTableFromBackup",
    "RestoreTableToPointInTime",
    "TagResource",
    "Scan",
    "TransactGetItems",
    "TransactWriteItems",
    "UntagResource",
    "UpdateContinuousBackups",
    "UpdateContributorInsights",
    "UpdateItem",
    "UpdateTable",
    "UpdateTimeToLive",
];

/// One request's answer, with what the server needs to know about it
/// besides the body, so that it never reads DynamoDB JSON itself.
#[derive(Debug)]
pub struct Outcome {
    /// The response body, or the error to send.
    pub result: Result<Vec<u8>, ApiError>,
    /// How many items the request writes or reads (for latency models): the
    /// items of a batch or transaction, 1 otherwise and for invalid bodies.
    pub items: usize,
}

impl Outcome {
    /// True when a transaction was cancelled.
    pub fn cancelled(&self) -> bool {
        matches!(&self.result, Err(ApiError { kind: ErrorKind::TransactionCanceled { .. }, .. }))
    }
}

/// Handles one request: `operation` is the part of `X-Amz-Target` after
/// the prefix, `body` the raw request body, `host` the address the client
/// used (for DescribeEndpoints).
pub fn handle(engine: &Engine, operation: &str, body: &[u8], now: Millis, host: Option<&str>) -> Outcome {
    let request = match open(Service::DynamoDb, OPERATIONS, operation, body) {
        Ok(r) => r,
        Err(error) => return Outcome { result: Err(error), items: 1 },
    };
    let items = item_count(operation, &request);
    Outcome { result: dispatch(engine, operation, &request, now, host), items }
}

/// Handles one DynamoDB Streams request (target prefix
/// [`STREAMS_TARGET_PREFIX`]).
pub fn handle_streams(engine: &Engine, operation: &str, body: &[u8], now: Millis) -> Outcome {
    let result = open(Service::Streams, STREAMS_OPERATIONS, operation, body).and_then(|request| {
        let response = streams::dispatch(engine, operation, &request, now)?;
        serde_json::to_vec(&response).map_err(|e| ApiError::internal(format!("cannot render response: {e}")))
    });
    Outcome { result, items: 1 }
}

/// The envelope every request passes first: a known operation, a JSON
/// body, then stages one and two of DynamoDB's validation (S85) from its
/// own service model: every member's JSON type, then every constraint,
/// reported together. The operations' semantic checks come after.
fn open(service: Service, known: &[&str], operation: &str, body: &[u8]) -> Result<Value, ApiError> {
    if !known.contains(&operation) {
        // DynamoDB's own answer to a target it does not have carries no
        // message; one of its operations this server lacks says so.
        return Err(match dynaburst_apimodel::operation(service, operation) {
            Some(_) => ApiError::not_implemented(operation),
            None => ApiError::unknown_operation(),
        });
    }
    if body.is_empty() {
        return Err(ApiError::serialization("The request body is empty: send a JSON object, even {}"));
    }
    // DynamoDB answers a body that is not JSON with a SerializationException
    // that has no message (S85).
    let request: Value = serde_json::from_slice(body).map_err(|_| ApiError::serialization_without_message())?;
    dynaburst_apimodel::validate(service, operation, &request).map_err(|invalid| match invalid {
        dynaburst_apimodel::Invalid::Serialization { message } => ApiError::serialization(message),
        dynaburst_apimodel::Invalid::Validation { message } => ApiError::validation(message),
        dynaburst_apimodel::Invalid::UnknownOperation { .. } => ApiError::unknown_operation(),
    })?;
    Ok(request)
}

fn dispatch(
    engine: &Engine,
    operation: &str,
    request: &Value,
    now: Millis,
    host: Option<&str>,
) -> Result<Vec<u8>, ApiError> {
    let response = match operation {
        "CreateTable" => ops::create_table(engine, request, now)?,
        "DescribeTable" => ops::describe_table(engine, request, now)?,
        "DeleteTable" => ops::delete_table(engine, request, now)?,
        "ListTables" => ops::list_tables(engine, request)?,
        "UpdateTable" => ops::update_table(engine, request, now)?,
        "PutItem" => ops::put_item(engine, request, now)?,
        "GetItem" => ops::get_item(engine, request, now)?,
        "DeleteItem" => ops::delete_item(engine, request, now)?,
        "UpdateItem" => ops::update_item(engine, request, now)?,
        "BatchWriteItem" => ops::batch_write_item(engine, request, now)?,
        "BatchGetItem" => ops::batch_get_item(engine, request, now)?,
        "TransactWriteItems" => ops::transact_write_items(engine, request, now)?,
        "TransactGetItems" => ops::transact_get_items(engine, request, now)?,
        "ExecuteStatement" => partiql::execute_statement(engine, request, now)?,
        "BatchExecuteStatement" => partiql::batch_execute_statement(engine, request, now)?,
        "ExecuteTransaction" => partiql::execute_transaction(engine, request, now)?,
        "Query" => ops::read(engine, request, now, true)?,
        "Scan" => ops::read(engine, request, now, false)?,
        "DescribeLimits" => ops::describe_limits(),
        "DescribeEndpoints" => ops::describe_endpoints(host.unwrap_or(DEFAULT_ENDPOINT_HOST)),
        "TagResource" => tags::tag_resource(engine, request)?,
        "UpdateTimeToLive" => ops::update_time_to_live(engine, request, now)?,
        "DescribeTimeToLive" => ops::describe_time_to_live(engine, request)?,
        "UntagResource" => tags::untag_resource(engine, request)?,
        "ListTagsOfResource" => tags::list_tags_of_resource(engine, request)?,
        "UpdateContributorInsights" => insights::update(engine, request, now)?,
        "DescribeContributorInsights" => insights::describe(engine, request, now)?,
        "ListContributorInsights" => insights::list(engine, request, now)?,
        "CreateBackup" => backups::create(engine, request, now)?,
        "DescribeBackup" => backups::describe(engine, request)?,
        "ListBackups" => backups::list(engine, request)?,
        "DeleteBackup" => backups::delete(engine, request)?,
        "RestoreTableFromBackup" => backups::restore(engine, request, now)?,
        "RestoreTableToPointInTime" => backups::restore_to_point_in_time(engine, request, now)?,
        "DescribeContinuousBackups" => backups::describe_continuous(engine, request, now)?,
        "UpdateContinuousBackups" => backups::update_continuous(engine, request, now)?,
        "PutResourcePolicy" => policy::put(engine, request, now)?,
        "GetResourcePolicy" => policy::get(engine, request, now)?,
        "DeleteResourcePolicy" => policy::delete(engine, request, now)?,
        _ => return Err(ApiError::unknown_operation()),
    };
    // DynamoDB answers these two with an empty body, not `{}` (ScyllaDB's
    // Alternator suite, run against DynamoDB: test_tags_return_empty_body).
    if EMPTY_BODY.contains(&operation) {
        return Ok(Vec::new());
    }
    serde_json::to_vec(&response).map_err(|e| ApiError::internal(format!("cannot render response: {e}")))
}

/// Operations whose success has no body at all.
pub const EMPTY_BODY: [&str; 2] = ["TagResource", "UntagResource"];

/// The items of a batch or transaction request (already parsed), at least 1.
fn item_count(operation: &str, v: &Value) -> usize {
    let n = match operation {
        "BatchWriteItem" => {
            v["RequestItems"].as_object().map(|m| m.values().filter_map(Value::as_array).map(Vec::len).sum())
        }
        "BatchGetItem" => {
            v["RequestItems"].as_object().map(|m| m.values().filter_map(|t| t["Keys"].as_array()).map(Vec::len).sum())
        }
        "TransactWriteItems" | "TransactGetItems" => v["TransactItems"].as_array().map(Vec::len),
        "BatchExecuteStatement" => v["Statements"].as_array().map(Vec::len),
        "ExecuteTransaction" => v["TransactStatements"].as_array().map(Vec::len),
        _ => None,
    };
    n.unwrap_or(1).max(1)
}

#[cfg(test)]
mod tests {
    use dynaburst_engine::EngineConfig;
    use serde_json::json;

    use super::*;

    fn engine() -> Engine {
        Engine::new(EngineConfig::local())
    }

    fn call(engine: &Engine, operation: &str, body: Value) -> Outcome {
        handle(engine, operation, body.to_string().as_bytes(), Millis(1_000), None)
    }

    #[test]
    fn protocol_errors_come_before_the_body_is_read() {
        let e = engine();
        let unknown = handle(&e, "Frobnicate", b"{}", Millis(0), None);
        assert_eq!(unknown.result, Err(ApiError::unknown_operation()));
        let missing = handle(&e, "ExportTableToPointInTime", b"{}", Millis(0), None).result.unwrap_err();
        assert_eq!(missing.type_name(), "com.amazon.coral.service#UnknownOperationException");
        assert_eq!(
            missing.message.as_deref(),
            Some("dynaburst does not implement the DynamoDB operation ExportTableToPointInTime yet")
        );
        let empty = handle(&e, "ListTables", b"", Millis(0), None).result.unwrap_err();
        assert_eq!(empty.kind, ErrorKind::Serialization);
        let malformed = handle(&e, "BatchWriteItem", b"{\"RequestItems\":", Millis(0), None);
        assert_eq!(malformed.items, 1);
        assert_eq!(malformed.result.unwrap_err().kind, ErrorKind::Serialization);
    }

    #[test]
    fn outcomes_count_items_and_say_when_a_transaction_was_cancelled() {
        let e = engine();
        let create = call(
            &e,
            "CreateTable",
            json!({"TableName": "tbl", "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
                "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}], "BillingMode": "PAY_PER_REQUEST"}),
        );
        assert!(create.result.is_ok(), "{:?}", create.result);
        assert_eq!(create.items, 1);
        let put = |id: &str| json!({"PutRequest": {"Item": {"id": {"S": id}}}});
        let batch = call(&e, "BatchWriteItem", json!({"RequestItems": {"tbl": [put("a"), put("b"), put("c")]}}));
        assert_eq!(batch.items, 3);
        let body: Value = serde_json::from_slice(batch.result.as_ref().unwrap()).unwrap();
        assert_eq!(body, json!({"UnprocessedItems": {}}));
        assert!(!batch.cancelled());
        let guarded = |id: &str| {
            json!({"Put": {"TableName": "tbl", "Item": {"id": {"S": id}},
                "ConditionExpression": "attribute_not_exists(id)"}})
        };
        let cancelled = call(&e, "TransactWriteItems", json!({"TransactItems": [guarded("z"), guarded("a")]}));
        assert_eq!(cancelled.items, 2);
        assert!(cancelled.cancelled());
        let reasons = match cancelled.result.unwrap_err().kind {
            ErrorKind::TransactionCanceled { reasons } => reasons.iter().map(|r| r.code).collect::<Vec<_>>(),
            other => panic!("not a cancellation: {other:?}"),
        };
        assert_eq!(reasons, ["None", "ConditionalCheckFailed"]);
    }
}
