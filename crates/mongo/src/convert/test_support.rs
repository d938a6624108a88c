//! Helpers shared by the converter's tests.

use std::str::FromStr;

use bson::{Bson, Decimal128, Document};
use dynaburst_model::{AttributeValue, Number};

use super::json_line_to_document;

pub fn doc(raw: &str) -> Document {
    match json_line_to_document(raw) {
        Ok(d) => d,
        Err(e) => panic!("{raw}: {e}"),
    }
}

pub fn err(raw: &str) -> String {
    match json_line_to_document(raw) {
        Ok(d) => panic!("{raw}: expected an error, got {d:?}"),
        Err(e) => e.to_string(),
    }
}

/// The value of field `v` of `{"v": <json>}`.
pub fn value(json: &str) -> Bson {
    doc(&format!("{{\"v\": {json}}}")).get("v").cloned().expect("field v")
}

/// The error for `{"v": <json>}`.
pub fn value_err(json: &str) -> String {
    err(&format!("{{\"v\": {json}}}"))
}

pub fn decimal(text: &str) -> Decimal128 {
    Decimal128::from_str(text).expect("decimal")
}

/// A Decimal128 value's text (its coefficient and exponent as stored).
pub fn decimal_text(value: &Bson) -> String {
    match value {
        Bson::Decimal128(d) => d.to_string(),
        other => panic!("not a Decimal128: {other:?}"),
    }
}

pub fn number(text: &str) -> AttributeValue {
    AttributeValue::N(Number::parse(text).expect("number"))
}
