//! DynamoDB's request validation, driven by its own service model.
//!
//! DynamoDB checks a request in stages (reference S85): it deserializes the
//! whole body against the operation's input shape (a member of the wrong
//! JSON type is a `SerializationException`), then checks every member's
//! model constraints and reports all violations in one `ValidationException`
//! ("N validation errors detected: ..."), and only then runs its semantic
//! checks. [`validate`] runs the first two stages from tables generated out
//! of botocore's `service-2.json` for DynamoDB and DynamoDB Streams
//! (`generated.rs`, written by `scripts/gen-apimodel`), then checks that
//! every AttributeValue has exactly one type, with the wire layer's
//! messages.
//!
//! ```
//! use dynaburst_apimodel::{validate, Invalid, Service};
//! use serde_json::json;
//!
//! let body = json!({"TableName": "t", "Limit": "5"});
//! assert_eq!(
//!     validate(Service::DynamoDb, "Scan", &body),
//!     Err(Invalid::Serialization { message: "STRING_VALUE cannot be converted to Integer".into() })
//! );
//! ```
//!
//! Deliberately not validated here (the semantic stage's job): expressions,
//! key schemas, item sizes, set contents, number syntax, the `NULL: false`
//! rule, nesting depth, and anything that needs a table.

mod check;
#[rustfmt::skip]
mod generated;
pub mod model;
mod pattern;

use std::fmt;

pub use generated::{BOTOCORE_VERSION, GENERATOR_FNV1A64, OPERATIONS, SHAPES, TABLES_FNV1A64};
pub use model::{Kind, Member, Operation, Service, Shape};
pub use pattern::{Pattern, PatternError};

/// Why a request was refused, with DynamoDB's exact text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invalid {
    /// `com.amazon.coral.service#SerializationException`; its body carries
    /// the text as `Message`, capitalised (S83).
    Serialization { message: String },
    /// `com.amazon.coral.validate#ValidationException`, body member `message`.
    Validation { message: String },
    /// The service has no such operation (`UnknownOperationException`).
    UnknownOperation { name: String },
}

impl Invalid {
    /// The text the client sees.
    pub fn message(&self) -> &str {
        match self {
            Invalid::Serialization { message } | Invalid::Validation { message } => message,
            Invalid::UnknownOperation { name } => name,
        }
    }
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Invalid::Serialization { message } => write!(f, "SerializationException: {message}"),
            Invalid::Validation { message } => write!(f, "ValidationException: {message}"),
            Invalid::UnknownOperation { name } => write!(f, "UnknownOperationException: {name}"),
        }
    }
}

impl std::error::Error for Invalid {}

/// Behaviours where DynamoDB's answer has changed or where dynaburst's own
/// suites pinned an older answer; each switch names its reference fact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// S90: Query's `Limit` below 1 is reported as "Value at 'Limit'" (no
    /// value, capital L), unlike Scan's "Value '0' at 'limit'". Off, Query
    /// answers like Scan, as tests/python/test_query_scan.py expects today.
    pub query_limit_quirk: bool,
}

impl Options {
    /// DynamoDB's behaviour as the reference records it.
    pub const DYNAMODB: Options = Options { query_limit_quirk: true };
}

impl Default for Options {
    fn default() -> Options {
        Options::DYNAMODB
    }
}

/// The operation `name` of `service`.
pub fn operation(service: Service, name: &str) -> Option<&'static Operation> {
    OPERATIONS.iter().find(|op| op.service == service && op.name == name)
}

/// The shape at `index` in [`SHAPES`].
pub fn shape(index: u16) -> &'static Shape {
    &SHAPES[usize::from(index)]
}

/// A value of the shape named `shape_name` as DynamoDB's messages show it
/// (`[KeySchemaElement(attributeName=pk, keyType=HASH)]` for a KeySchema,
/// S5); None for a shape the model does not have.
pub fn value_text(shape_name: &str, v: &serde_json::Value) -> Option<String> {
    let index = SHAPES.iter().position(|s| s.name == shape_name)?;
    Some(check::render_member(u16::try_from(index).ok()?, v))
}

/// Validates a request body with [`Options::DYNAMODB`].
pub fn validate(service: Service, operation: &str, body: &serde_json::Value) -> Result<(), Invalid> {
    validate_with(service, operation, body, Options::DYNAMODB)
}

/// Validates a request body: deserialization, then every constraint, then
/// the AttributeValue shapes, stopping at the first stage that fails.
pub fn validate_with(
    service: Service,
    operation_name: &str,
    body: &serde_json::Value,
    options: Options,
) -> Result<(), Invalid> {
    let op = operation(service, operation_name)
        .ok_or_else(|| Invalid::UnknownOperation { name: operation_name.to_string() })?;
    let first = check::deserialize(op, body).map_err(|message| Invalid::Serialization { message })?;
    check::constraints(op, body, options, first.longest_key).map_err(|message| Invalid::Validation { message })?;
    first.attribute_values.map_err(|message| Invalid::Validation { message })
}

/// A Boolean member's value as DynamoDB reads it: JSON booleans, and the
/// strings true/false/1/0/yes/no in any case (S94).
pub fn boolean_value(v: &serde_json::Value) -> Option<bool> {
    match v {
        serde_json::Value::Bool(b) => Some(*b),
        serde_json::Value::String(s) => check::boolean_text(s),
        _ => None,
    }
}
