//! DynamoDB JSON: attribute values and items to and from the JSON that
//! DynamoDB's API and its exports use (`{"S": "x"}`, `{"N": "1"}`, …),
//! validated the way DynamoDB validates them, the export-line wrapper
//! `{"Item": …}`, and the constants of DynamoDB's JSON protocol that both
//! the server and its clients need.
//!
//! Architecture invariant: a leaf over `dynaburst-model`. It knows no HTTP,
//! no engine and no clock, so the client side (input, loader, loadgen) can
//! speak DynamoDB JSON without linking the server stack. Its errors say
//! which of DynamoDB's two error classes they belong to; turning them into
//! an API error is the wire crate's business.

mod encode;
mod error;
mod value;

pub use encode::{write_item, write_str, write_value};
pub use error::{Error, ErrorClass, SetType};
pub use value::{export_item, item_to_json, json_type, parse_item, parse_value, value_to_json, MAX_NESTING_DEPTH};

/// The `X-Amz-Target` prefix of DynamoDB's operations.
pub const TARGET_PREFIX: &str = "DynamoDB_20120810.";
/// The content type DynamoDB's clients send and DynamoDB answers with.
pub const CONTENT_TYPE: &str = "application/x-amz-json-1.0";
/// Every content type DynamoDB accepts on a request.
pub const CONTENT_TYPES: &[&str] = &[CONTENT_TYPE, "application/x-amz-json-1.1"];
/// Most write requests in one BatchWriteItem.
pub const MAX_BATCH_WRITE_ITEMS: usize = 25;
/// Shortest table name.
pub const MIN_TABLE_NAME: usize = 3;
/// Longest table name.
pub const MAX_TABLE_NAME: usize = 255;
