//! DynamoDB's JSON 1.0 wire protocol: request members to engine inputs,
//! engine outputs to response bodies, and errors to `{"__type", "message"}`.
//!
//! Architecture invariant: this is the only crate that knows DynamoDB JSON.
//! It knows nothing of HTTP (status codes are plain numbers here) and never
//! reads a clock: the caller passes `now`.

mod error;
mod metrics;
mod ops;
mod request;
mod value;

use dynaburst_engine::{Engine, Millis};
use serde_json::Value;

pub use error::{ApiError, NS_AVAILABILITY, NS_DYNAMODB, NS_SERVICE, NS_VALIDATE};
pub use metrics::metrics_json;
pub use ops::{
    table_description_json, unprocessed_keys_json, write_requests_json, MAX_BATCH_WRITE_ITEMS, MAX_CLIENT_TOKEN,
    MAX_LIST_TABLES, MAX_TOTAL_SEGMENTS, MAX_TRANSACT_ITEMS,
};
pub use request::{MAX_TABLE_NAME, MIN_TABLE_NAME};
pub use value::{item_to_json, parse_item, parse_value, value_to_json, MAX_NESTING_DEPTH};

/// The `X-Amz-Target` prefix of DynamoDB's operations.
pub const TARGET_PREFIX: &str = "DynamoDB_20120810.";

/// Every operation this server answers.
pub const OPERATIONS: &[&str] = &[
    "BatchGetItem",
    "BatchWriteItem",
    "CreateTable",
    "DeleteItem",
    "DeleteTable",
    "DescribeEndpoints",
    "DescribeLimits",
    "DescribeTable",
    "GetItem",
    "ListTables",
    "PutItem",
    "Query",
    "Scan",
    "TransactGetItems",
    "TransactWriteItems",
    "UpdateItem",
    "UpdateTable",
];

/// Handles one request: `operation` is the part of `X-Amz-Target` after
/// the prefix, `body` the raw request body. Returns the response body or
/// the error to send.
pub fn handle(engine: &Engine, operation: &str, body: &[u8], now: Millis) -> Result<Vec<u8>, ApiError> {
    if !OPERATIONS.contains(&operation) {
        return Err(ApiError::unknown_operation());
    }
    if body.is_empty() {
        return Err(ApiError::serialization("The request body is empty: send a JSON object, even {}"));
    }
    let request: Value =
        serde_json::from_slice(body).map_err(|e| ApiError::serialization(format!("Malformed request body: {e}")))?;
    let response = match operation {
        "CreateTable" => ops::create_table(engine, &request, now)?,
        "DescribeTable" => ops::describe_table(engine, &request)?,
        "DeleteTable" => ops::delete_table(engine, &request)?,
        "ListTables" => ops::list_tables(engine, &request)?,
        "UpdateTable" => ops::update_table(engine, &request, now)?,
        "PutItem" => ops::put_item(engine, &request, now)?,
        "GetItem" => ops::get_item(engine, &request, now)?,
        "DeleteItem" => ops::delete_item(engine, &request, now)?,
        "UpdateItem" => ops::update_item(engine, &request, now)?,
        "BatchWriteItem" => ops::batch_write_item(engine, &request, now)?,
        "BatchGetItem" => ops::batch_get_item(engine, &request, now)?,
        "TransactWriteItems" => ops::transact_write_items(engine, &request, now)?,
        "TransactGetItems" => ops::transact_get_items(engine, &request, now)?,
        "Query" => ops::read(engine, &request, now, true)?,
        "Scan" => ops::read(engine, &request, now, false)?,
        "DescribeLimits" => ops::describe_limits(),
        "DescribeEndpoints" => ops::describe_endpoints("localhost"),
        _ => return Err(ApiError::unknown_operation()),
    };
    serde_json::to_vec(&response).map_err(|e| ApiError::internal(format!("cannot render response: {e}")))
}

/// How many items a request writes or reads (for latency models): the
/// items of a batch or transaction, 1 otherwise. Invalid bodies count 1.
pub fn item_count(operation: &str, body: &[u8]) -> usize {
    let Ok(v) = serde_json::from_slice::<Value>(body) else { return 1 };
    let n = match operation {
        "BatchWriteItem" => {
            v["RequestItems"].as_object().map(|m| m.values().filter_map(Value::as_array).map(Vec::len).sum())
        }
        "BatchGetItem" => {
            v["RequestItems"].as_object().map(|m| m.values().filter_map(|t| t["Keys"].as_array()).map(Vec::len).sum())
        }
        "TransactWriteItems" | "TransactGetItems" => v["TransactItems"].as_array().map(Vec::len),
        _ => None,
    };
    n.unwrap_or(1).max(1)
}
