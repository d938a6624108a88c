//! JSON Lines records to documents.
//!
//! [`json_line_to_document`] parses one record from its text. The record
//! must be a JSON object; its fields keep their input order (a repeated
//! key keeps its first position and its last value).
//!
//! Plain JSON numbers follow one rule, applied to their exact source text
//! (the workspace builds `serde_json` with `arbitrary_precision`):
//!
//! | literal                                        | BSON                          |
//! |------------------------------------------------|-------------------------------|
//! | integer (no `.`, no exponent) in `i32`         | Int32 (`-0` is Int32 0)       |
//! | integer in `i64`                               | Int64                         |
//! | larger integer, at most 34 significant digits  | Decimal128, exact             |
//! | larger integer, more digits                    | Double (nearest)              |
//! | anything with `.` or an exponent               | Double (`1.0` stays a double) |
//!
//! A number whose magnitude a double cannot hold (`1e400`) is an error.
//! bson's own Extended JSON parser is not used for plain numbers: it turns
//! integers past `i64` into doubles, losing digits.
//!
//! Extended JSON v2 type wrappers (canonical and relaxed) become their BSON
//! types: `$oid`, `$date` (ISO-8601 text, `{"$numberLong": "ms"}` or
//! integer milliseconds), `$numberDecimal`, `$numberLong`, `$numberInt`,
//! `$numberDouble` (with `Infinity`, `-Infinity`, `NaN`), `$binary`
//! (canonical `{"base64", "subType"}` and legacy `{"$binary", "$type"}`),
//! `$uuid`, `$timestamp`, `$regularExpression`, `$minKey` and `$maxKey`.
//! An object holding one of these keys must be exactly that wrapper: a
//! malformed one (`{"$oid": "zz"}`, extra keys) fails the record with a
//! message naming the field. Other `$`-prefixed keys (`$code`, `$symbol`,
//! `$set`, ...) stay plain fields: the server decides about them.
//!
//! Documents nest at most [`MAX_NESTING_DEPTH`] levels (the record is level
//! 1, each object or array inside adds one; type wrappers are values, not
//! levels), MongoDB's limit.

use std::fmt;

use bson::{Bson, Document};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use super::extjson::{extended_json, wrapper_key};
use super::number::number_text_to_bson;

/// Most levels of nesting MongoDB stores; the document itself is level 1.
pub const MAX_NESTING_DEPTH: usize = 100;
/// With `arbitrary_precision`, serde_json hands a number to a visitor as a
/// one-entry map under this key, holding the number's source text
/// (serde_json's own `Value` relies on the same key). The number tests
/// below fail if serde_json ever changes it.
const SERDE_JSON_NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// One JSON Lines record to a document, by the rules in the module doc.
pub fn json_line_to_document(raw: &str) -> Result<Document, String> {
    let json: Json = match serde_json::from_str(raw) {
        Ok(json) => json,
        // serde_json stops at 128 levels; say why in our terms.
        Err(_) if json_nesting_depth(raw) > MAX_NESTING_DEPTH => return Err(too_deep(&Path::Root)),
        Err(e) => return Err(format!("malformed JSON: {e}")),
    };
    let Json::Object(entries) = json else {
        return Err("a JSON Lines record must be an object".to_string());
    };
    if let Some(key) = wrapper_key(&entries) {
        return Err(format!("a JSON Lines record must be an object, not an Extended JSON {key} value"));
    }
    object_to_document(entries, &Path::Root, 1)
}

/// A JSON value with object keys in input order and numbers as their
/// source text.
pub(crate) enum Json {
    Null,
    Bool(bool),
    Number(String),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Json, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_bool<E>(self, b: bool) -> Result<Json, E> {
        Ok(Json::Bool(b))
    }

    // Only without `arbitrary_precision`; with it, numbers come through
    // `visit_map` as their text.
    fn visit_i64<E>(self, n: i64) -> Result<Json, E> {
        Ok(Json::Number(n.to_string()))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Json, E> {
        Ok(Json::Number(n.to_string()))
    }

    fn visit_f64<E>(self, n: f64) -> Result<Json, E> {
        // `{:?}` keeps a point or exponent, so the value stays a double.
        Ok(Json::Number(format!("{n:?}")))
    }

    fn visit_str<E>(self, s: &str) -> Result<Json, E> {
        Ok(Json::String(s.to_owned()))
    }

    fn visit_string<E>(self, s: String) -> Result<Json, E> {
        Ok(Json::String(s))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let Some(first) = map.next_key::<String>()? else {
            return Ok(Json::Object(Vec::new()));
        };
        if first == SERDE_JSON_NUMBER_TOKEN {
            return Ok(Json::Number(map.next_value()?));
        }
        let mut entries = vec![(first, map.next_value()?)];
        while let Some(key) = map.next_key()? {
            entries.push((key, map.next_value()?));
        }
        Ok(Json::Object(entries))
    }
}

/// Where a value sits in its record, for error messages: `a.b.2.c`.
pub(crate) enum Path<'a> {
    Root,
    Field(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parent = match self {
            Path::Root => return Ok(()),
            Path::Field(parent, _) | Path::Index(parent, _) => parent,
        };
        if !matches!(parent, Path::Root) {
            write!(f, "{parent}.")?;
        }
        match self {
            Path::Field(_, name) => f.write_str(name),
            Path::Index(_, index) => write!(f, "{index}"),
            Path::Root => Ok(()),
        }
    }
}

pub(crate) fn field_error(path: &Path, message: impl fmt::Display) -> String {
    match path {
        Path::Root => message.to_string(),
        _ => format!("field {path}: {message}"),
    }
}

fn too_deep(path: &Path) -> String {
    field_error(path, format!("nested deeper than {MAX_NESTING_DEPTH} levels (MongoDB's limit)"))
}

/// The fields of an object at nesting `level` (the record is level 1).
fn object_to_document(entries: Vec<(String, Json)>, path: &Path, level: usize) -> Result<Document, String> {
    if level > MAX_NESTING_DEPTH {
        return Err(too_deep(path));
    }
    let mut doc = Document::new();
    for (key, value) in entries {
        let value = {
            let path = Path::Field(path, &key);
            if key.contains('\0') {
                return Err(field_error(&path, "a field name cannot contain a NUL character"));
            }
            json_to_bson(value, &path, level)?
        };
        doc.insert(key, value);
    }
    Ok(doc)
}

/// A value inside a document or array at nesting `level`.
fn json_to_bson(value: Json, path: &Path, level: usize) -> Result<Bson, String> {
    Ok(match value {
        Json::Null => Bson::Null,
        Json::Bool(b) => Bson::Boolean(b),
        Json::Number(text) => number_text_to_bson(&text).map_err(|e| field_error(path, e))?,
        Json::String(s) => Bson::String(s),
        Json::Array(items) => {
            if level + 1 > MAX_NESTING_DEPTH {
                return Err(too_deep(path));
            }
            let mut array = Vec::with_capacity(items.len());
            for (index, item) in items.into_iter().enumerate() {
                array.push(json_to_bson(item, &Path::Index(path, index), level + 1)?);
            }
            Bson::Array(array)
        }
        Json::Object(entries) => match wrapper_key(&entries) {
            Some(key) => extended_json(key, entries, path)?,
            None => Bson::Document(object_to_document(entries, path, level + 1)?),
        },
    })
}

/// Greatest nesting of objects and arrays in a JSON text, counted without
/// parsing it (for the error when serde_json's own limit stops first).
fn json_nesting_depth(raw: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for b in raw.bytes() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::test_support::*;
    #[test]
    fn numbers_out_of_double_range_or_not_numbers_are_errors() {
        assert_eq!(number_text_to_bson("1e400").unwrap_err(), "number 1e400 is out of range for a BSON double");
        let huge = "9".repeat(400);
        assert!(number_text_to_bson(&huge).unwrap_err().ends_with("... is out of range for a BSON double"));
        assert_eq!(number_text_to_bson("inf").unwrap_err(), "\"inf\" is not a number");
        assert_eq!(number_text_to_bson("NaN").unwrap_err(), "\"NaN\" is not a number");
        assert_eq!(number_text_to_bson("1.").unwrap_err(), "\"1.\" is not a number");
        assert_eq!(number_text_to_bson("").unwrap_err(), "\"\" is not a number");
    }

    #[test]
    fn json_numbers_keep_their_source_text() {
        let d = doc(concat!(
            r#"{"a": 2147483647, "b": 2147483648, "c": 9223372036854775808, "d": 1.0, "e": 1e3,"#,
            r#" "f": -0, "g": 12345678901234567890123456789012, "h": 1E3, "i": 0.30000000000000004}"#
        ));
        assert_eq!(d.get("a"), Some(&Bson::Int32(2_147_483_647)));
        assert_eq!(d.get("b"), Some(&Bson::Int64(2_147_483_648)));
        assert_eq!(d.get("c"), Some(&Bson::Decimal128(decimal("9223372036854775808"))));
        assert_eq!(d.get("d"), Some(&Bson::Double(1.0)));
        assert_eq!(d.get("e"), Some(&Bson::Double(1000.0)));
        assert_eq!(d.get("f"), Some(&Bson::Int32(0)));
        assert_eq!(d.get("g"), Some(&Bson::Decimal128(decimal("12345678901234567890123456789012"))));
        assert_eq!(d.get("h"), Some(&Bson::Double(1000.0)));
        assert_eq!(d.get("i"), Some(&Bson::Double(0.30000000000000004)));
    }

    #[test]
    fn json_number_out_of_range_names_the_field() {
        // serde_json spells exponents `e+` / `e-`: the text is exact in value, not in spelling.
        assert_eq!(err(r#"{"a": {"b": 1E999}}"#), "field a.b: number 1e+999 is out of range for a BSON double");
    }

    // --- records ---------------------------------------------------------

    #[test]
    fn fields_keep_input_order_and_plain_types() {
        let d = doc(r#"{"z": 1, "a": "s", "m": true, "n": null, "l": [1, "x"], "o": {"y": 2, "b": 3}}"#);
        assert_eq!(d.keys().collect::<Vec<_>>(), ["z", "a", "m", "n", "l", "o"]);
        assert_eq!(d.get("a"), Some(&Bson::String("s".into())));
        assert_eq!(d.get("m"), Some(&Bson::Boolean(true)));
        assert_eq!(d.get("n"), Some(&Bson::Null));
        assert_eq!(d.get("l"), Some(&Bson::Array(vec![Bson::Int32(1), Bson::String("x".into())])));
        let o = d.get_document("o").unwrap();
        assert_eq!(o.keys().collect::<Vec<_>>(), ["y", "b"]);
    }

    #[test]
    fn repeated_key_keeps_first_position_and_last_value() {
        let d = doc(r#"{"a": 1, "b": 2, "a": 3}"#);
        assert_eq!(d.keys().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(d.get("a"), Some(&Bson::Int32(3)));
    }

    #[test]
    fn record_must_be_a_json_object() {
        for raw in ["[1, 2]", "\"text\"", "3", "null", "true"] {
            assert_eq!(err(raw), "a JSON Lines record must be an object", "{raw}");
        }
        assert_eq!(
            err(r#"{"$oid": "0123456789abcdef01234567"}"#),
            "a JSON Lines record must be an object, not an Extended JSON $oid value"
        );
    }

    #[test]
    fn malformed_json_is_reported_as_such() {
        let e = err(r#"{"a": "#);
        assert!(e.starts_with("malformed JSON: "), "{e}");
        let e = err(r#"{"a": 1} trailing"#);
        assert!(e.starts_with("malformed JSON: "), "{e}");
        let e = err("");
        assert!(e.starts_with("malformed JSON: "), "{e}");
    }

    #[test]
    fn nul_in_a_field_name_is_an_error() {
        assert_eq!(err(r#"{"a": {"b\u0000c": 1}}"#), "field a.b\0c: a field name cannot contain a NUL character");
    }

    #[test]
    fn other_dollar_keys_stay_plain_fields() {
        let d = doc(r#"{"$set": 1, "x": {"$code": "f()"}, "y": {"$type": "string"}, "q": {"$regex": "^a"}}"#);
        assert_eq!(d.get("$set"), Some(&Bson::Int32(1)));
        assert_eq!(d.get_document("x").unwrap().get("$code"), Some(&Bson::String("f()".into())));
        assert_eq!(d.get_document("y").unwrap().get("$type"), Some(&Bson::String("string".into())));
        assert_eq!(d.get_document("q").unwrap().get("$regex"), Some(&Bson::String("^a".into())));
    }

    // --- nesting ---------------------------------------------------------

    /// A record `levels` deep: `{"a": {"a": ... <leaf> ...}}`.
    fn nested(levels: usize, leaf: &str) -> String {
        format!("{}{leaf}{}", "{\"a\": ".repeat(levels), "}".repeat(levels))
    }

    #[test]
    fn nesting_up_to_the_limit_is_accepted() {
        assert_eq!(MAX_NESTING_DEPTH, 100);
        doc(&nested(MAX_NESTING_DEPTH, "1"));
        // Arrays are levels too: the record plus 99 arrays.
        doc(&format!("{{\"a\": {}1{}}}", "[".repeat(99), "]".repeat(99)));
        // Type wrappers are values, not levels.
        doc(&nested(MAX_NESTING_DEPTH, r#"{"$date": {"$numberLong": "1"}}"#));
    }

    #[test]
    fn nesting_past_the_limit_is_an_error() {
        let e = err(&nested(MAX_NESTING_DEPTH + 1, "1"));
        assert!(e.starts_with("field a.a.a."), "{e}");
        assert!(e.ends_with(": nested deeper than 100 levels (MongoDB's limit)"), "{e}");
        let e = err(&format!("{{\"a\": {}1{}}}", "[".repeat(100), "]".repeat(100)));
        assert!(e.starts_with("field a.0.0."), "{e}");
        assert!(e.ends_with(": nested deeper than 100 levels (MongoDB's limit)"), "{e}");
        // Deeper than serde_json's own limit (128): the same reason.
        assert_eq!(err(&nested(1000, "1")), "nested deeper than 100 levels (MongoDB's limit)");
        // Brackets inside strings do not count.
        assert_eq!(json_nesting_depth(r#"{"a": "[[[{{{\"[[["}"#), 1);
    }
}
