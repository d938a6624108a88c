//! DynamoDB JSON values, from the `dynaburst-ddbjson` codec, with its
//! errors turned into API errors for the request parsers.

use serde_json::Value;

use dynaburst_model::{AttributeValue, Item};

use crate::error::ApiError;

pub use dynaburst_ddbjson::{item_to_json, value_to_json, MAX_NESTING_DEPTH};

/// The error for a JSON member of the wrong JSON type.
pub fn wrong_json_type(v: &Value, target: &'static str) -> ApiError {
    dynaburst_ddbjson::Error::WrongJsonType { found: dynaburst_ddbjson::json_type(v), target }.into()
}

/// Parses one attribute value.
pub fn parse_value(v: &Value) -> Result<AttributeValue, ApiError> {
    dynaburst_ddbjson::parse_value(v).map_err(ApiError::from)
}

/// Parses an item (a map of attribute values).
pub fn parse_item(v: &Value) -> Result<Item, ApiError> {
    dynaburst_ddbjson::parse_item(v).map_err(ApiError::from)
}
