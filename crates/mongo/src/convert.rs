//! Records to BSON documents, and document identity. Pure functions: no
//! driver, no I/O, no clock.
//!
//! # JSON Lines
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
//!
//! # DynamoDB items
//!
//! [`item_to_document`] converts CSV and DynamoDB JSON records, already
//! typed by the DynamoDB path: S to String, N by the number rule above
//! applied to the number's canonical text (so `1.50` is Double 1.5 and
//! `1.0` is Int32 1: an `N` is a value, not a literal), B to generic
//! Binary, BOOL, NULL, L to Array, M to Document, SS/NS/BS to arrays of
//! their elements. An [`Item`] is a `BTreeMap`, so fields come in name
//! order.
//!
//! # Identity
//!
//! [`id_of`] finds a document's identity (`_id`, or another top-level
//! field), and [`identity_hash`] hashes it so that two values MongoDB would
//! treat as the same key hash alike: numbers of every type (Int32, Int64,
//! Double, Decimal128) hash by exact numeric value, so `1`, `NumberLong(1)`,
//! `1.0` and `NumberDecimal("1.00")` collide, and strings and symbols are
//! one class. Values of different classes never hash alike by
//! construction (`1` and `"1"` differ).
//!
//! A document without `_id` gets a deterministic ObjectId
//! ([`deterministic_object_id`], [`ensure_id`]) from a key of the input
//! ([`run_key`]) and the record's line, so loading the same file again, or
//! resuming a load, writes the same `_id` for the same line and never
//! duplicates a document.
//!
//! # Size
//!
//! [`to_raw_document`] encodes a document as compact BSON bytes (one
//! allocation per document, the form held in flight) and refuses one over
//! [`MAX_BSON_DOCUMENT_BYTES`].

use std::fmt;
use std::str::FromStr;

use base64::Engine as _;
use bson::oid::ObjectId;
use bson::raw::CString;
use bson::spec::BinarySubtype;
use bson::{Binary, Bson, DateTime, Decimal128, Document, RawDocumentBuf, Regex, Timestamp};
use dynaburst_model::{AttributeValue, Item, Number};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use xxhash_rust::xxh3::{xxh3_128, Xxh3Default};

/// The field MongoDB keys documents by.
pub const ID_FIELD: &str = "_id";
/// Most levels of nesting MongoDB stores; the document itself is level 1.
pub const MAX_NESTING_DEPTH: usize = 100;
/// Largest document MongoDB stores, in BSON bytes.
pub const MAX_BSON_DOCUMENT_BYTES: usize = 16 * 1024 * 1024;
/// Most significant digits of a Decimal128 coefficient.
pub const MAX_DECIMAL128_DIGITS: usize = 34;
/// Bytes of a generated ObjectId that hold the line number (its low, last
/// bytes); the other 7 hold the run key.
pub const OBJECT_ID_LINE_BYTES: usize = 5;
/// Regular-expression options MongoDB accepts.
const REGEX_OPTIONS: &str = "ilmsux";
/// Longest excerpt of an input value quoted in an error message.
const MAX_QUOTED_CHARS: usize = 40;
/// The Extended JSON type-wrapper keys understood here.
const WRAPPER_KEYS: [&str; 12] = [
    "$oid",
    "$date",
    "$numberDecimal",
    "$numberLong",
    "$numberInt",
    "$numberDouble",
    "$binary",
    "$uuid",
    "$timestamp",
    "$regularExpression",
    "$minKey",
    "$maxKey",
];
/// With `arbitrary_precision`, serde_json hands a number to a visitor as a
/// one-entry map under this key, holding the number's source text
/// (serde_json's own `Value` relies on the same key). The number tests
/// below fail if serde_json ever changes it.
const SERDE_JSON_NUMBER_TOKEN: &str = "$serde_json::private::Number";
/// base64 as Extended JSON writes it: standard alphabet; padding accepted
/// but not required.
const BASE64: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    base64::engine::GeneralPurposeConfig::new()
        .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
);

// ---------------------------------------------------------------------------
// JSON Lines
// ---------------------------------------------------------------------------

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
enum Json {
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
enum Path<'a> {
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

fn field_error(path: &Path, message: impl fmt::Display) -> String {
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

// ---------------------------------------------------------------------------
// Numbers
// ---------------------------------------------------------------------------

/// A number's text to BSON by the number rule (see the module doc).
/// Errors for text that is not a number, or a magnitude no double holds.
pub fn number_text_to_bson(text: &str) -> Result<Bson, String> {
    if is_integer_literal(text) {
        if let Ok(v) = text.parse::<i32>() {
            return Ok(Bson::Int32(v));
        }
        if let Ok(v) = text.parse::<i64>() {
            return Ok(Bson::Int64(v));
        }
        if let Some(d) = integer_to_decimal128(text) {
            return Ok(Bson::Decimal128(d));
        }
    } else if !is_number_literal(text) {
        return Err(format!("{} is not a number", quoted(text)));
    }
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(Bson::Double(v)),
        _ => Err(format!("number {} is out of range for a BSON double", excerpt(text))),
    }
}

/// `-?[0-9]+`.
fn is_integer_literal(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// A JSON number: `-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?` (leading zeros
/// tolerated).
fn is_number_literal(text: &str) -> bool {
    fn digits(s: &str) -> (bool, &str) {
        let end = s.bytes().position(|b| !b.is_ascii_digit()).unwrap_or(s.len());
        (end > 0, &s[end..])
    }
    let s = text.strip_prefix('-').unwrap_or(text);
    let (ok, mut rest) = digits(s);
    if !ok {
        return false;
    }
    if let Some(fraction) = rest.strip_prefix('.') {
        let (ok, after) = digits(fraction);
        if !ok {
            return false;
        }
        rest = after;
    }
    if let Some(exponent) = rest.strip_prefix(['e', 'E']) {
        let exponent = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
        let (ok, after) = digits(exponent);
        if !ok {
            return false;
        }
        rest = after;
    }
    rest.is_empty()
}

/// An integer literal as an exact Decimal128, if its significant digits
/// fit: all its digits as the coefficient when they fit (`123` stays
/// `123`), else trailing zeros move to the exponent (`1` and 40 zeros is
/// `1E+40`).
fn integer_to_decimal128(text: &str) -> Option<Decimal128> {
    let (sign, digits) = match text.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", text),
    };
    let digits = digits.trim_start_matches('0');
    if digits.len() <= MAX_DECIMAL128_DIGITS {
        return Decimal128::from_str(text).ok();
    }
    let coefficient = digits.trim_end_matches('0');
    if coefficient.len() > MAX_DECIMAL128_DIGITS {
        return None;
    }
    let exponent = digits.len() - coefficient.len();
    Decimal128::from_str(&format!("{sign}{coefficient}E+{exponent}")).ok()
}

// ---------------------------------------------------------------------------
// Extended JSON
// ---------------------------------------------------------------------------

/// The type-wrapper key among an object's keys, if any.
fn wrapper_key(entries: &[(String, Json)]) -> Option<&'static str> {
    entries
        .iter()
        .filter(|(key, _)| key.starts_with('$'))
        .find_map(|(key, _)| WRAPPER_KEYS.iter().find(|w| **w == key).copied())
}

/// An Extended JSON type wrapper (an object holding `key`) to its value.
fn extended_json(key: &'static str, entries: Vec<(String, Json)>, path: &Path) -> Result<Bson, String> {
    let fail = |message: String| Err(field_error(path, format!("{key} {message}")));
    let occurrences = entries.iter().filter(|(k, _)| k == key).count();
    if occurrences > 1 {
        return fail("is repeated".to_string());
    }
    let legacy_binary = key == "$binary" && entries.len() == 2 && entries.iter().any(|(k, _)| k == "$type");
    if entries.len() != 1 && !legacy_binary {
        let other = entries.iter().map(|(k, _)| k.as_str()).find(|k| *k != key).unwrap_or_default();
        return fail(format!("must be the only key of its object, found {}", quoted(other)));
    }
    let (mut value, mut legacy_type) = (Json::Null, None);
    for (k, v) in entries {
        if k == key {
            value = v;
        } else {
            legacy_type = Some(v);
        }
    }
    let result = match key {
        "$oid" => oid(value),
        "$date" => date(value),
        "$numberDecimal" => string(value, "a decimal number such as \"1.5\"").and_then(|s| {
            Decimal128::from_str(&s).map(Bson::Decimal128).map_err(|_| {
                format!("must be a decimal number of at most {MAX_DECIMAL128_DIGITS} digits, got {}", quoted(&s))
            })
        }),
        "$numberLong" => string(value, "an integer such as \"42\"").and_then(|s| {
            s.parse::<i64>().map(Bson::Int64).map_err(|_| format!("must be a 64-bit integer, got {}", quoted(&s)))
        }),
        "$numberInt" => string(value, "an integer such as \"42\"").and_then(|s| {
            s.parse::<i32>().map(Bson::Int32).map_err(|_| format!("must be a 32-bit integer, got {}", quoted(&s)))
        }),
        "$numberDouble" => number_double(value),
        "$binary" => match legacy_type {
            // The legacy form: {"$binary": "<base64>", "$type": "<hex>"}.
            Some(subtype) => binary_parts(value, subtype),
            None => binary(value),
        },
        "$uuid" => string(value, "a UUID such as \"00112233-4455-6677-8899-aabbccddeeff\"")
            .and_then(|s| {
                uuid_bytes(&s)
                    .ok_or_else(|| format!("must be a UUID in 8-4-4-4-12 hexadecimal form, got {}", quoted(&s)))
            })
            .map(|bytes| Bson::Binary(Binary { subtype: BinarySubtype::Uuid, bytes: bytes.to_vec() })),
        "$timestamp" => timestamp(value),
        "$regularExpression" => regular_expression(value),
        "$minKey" => key_marker(value, Bson::MinKey),
        "$maxKey" => key_marker(value, Bson::MaxKey),
        _ => Err("is not supported".to_string()),
    };
    result.or_else(fail)
}

/// A wrapper's string value, or an error saying what was `expected`.
fn string(value: Json, expected: &str) -> Result<String, String> {
    match value {
        Json::String(s) => Ok(s),
        other => Err(format!("must be a string holding {expected}, got {}", describe(&other))),
    }
}

/// The fields of a wrapper's object value, exactly `names`, in that order.
fn fields<const N: usize>(value: Json, names: [&str; N]) -> Result<[Json; N], String> {
    let expected = || names.iter().map(|n| format!("\"{n}\"")).collect::<Vec<_>>().join(", ");
    let Json::Object(entries) = value else {
        return Err(format!("must be an object with the keys {}, got {}", expected(), describe(&value)));
    };
    let mut found: [Option<Json>; N] = std::array::from_fn(|_| None);
    for (key, v) in entries {
        match names.iter().position(|n| *n == key) {
            Some(i) if found[i].is_none() => found[i] = Some(v),
            Some(_) => return Err(format!("has the key {} twice", quoted(&key))),
            None => return Err(format!("must have only the keys {}, found {}", expected(), quoted(&key))),
        }
    }
    let mut out = Vec::with_capacity(N);
    for (name, v) in names.iter().zip(found) {
        out.push(v.ok_or_else(|| format!("is missing the key \"{name}\""))?);
    }
    out.try_into().map_err(|_| "has the wrong keys".to_string())
}

fn oid(value: Json) -> Result<Bson, String> {
    let s = string(value, "24 hexadecimal digits")?;
    ObjectId::parse_str(&s)
        .map(Bson::ObjectId)
        .map_err(|_| format!("must be 24 hexadecimal digits, got {}", quoted(&s)))
}

fn date(value: Json) -> Result<Bson, String> {
    let millis = |text: &str| -> Result<Bson, String> {
        text.parse::<i64>()
            .map(|ms| Bson::DateTime(DateTime::from_millis(ms)))
            .map_err(|_| format!("must be whole milliseconds since 1970 in 64 bits, got {}", excerpt(text)))
    };
    match value {
        Json::String(s) => DateTime::parse_rfc3339_str(&s)
            .map(Bson::DateTime)
            .map_err(|_| format!("must be an ISO-8601 date-time such as \"2024-05-01T12:00:00Z\", got {}", quoted(&s))),
        Json::Number(text) => millis(&text),
        Json::Object(mut entries) if entries.len() == 1 && entries[0].0 == "$numberLong" => match entries.pop() {
            Some((_, Json::String(s))) => millis(&s),
            Some((_, other)) => Err(format!("{{\"$numberLong\": ...}} must hold a string, got {}", describe(&other))),
            None => Err("is empty".to_string()),
        },
        other => Err(format!(
            "must be an ISO-8601 string, {{\"$numberLong\": \"<ms>\"}} or integer milliseconds, got {}",
            describe(&other)
        )),
    }
}

fn number_double(value: Json) -> Result<Bson, String> {
    let s = string(value, "a number, \"Infinity\", \"-Infinity\" or \"NaN\"")?;
    let v = match s.as_str() {
        "Infinity" => f64::INFINITY,
        "-Infinity" => f64::NEG_INFINITY,
        "NaN" => f64::NAN,
        text => match text.parse::<f64>() {
            Ok(v) if v.is_finite() && is_number_literal(text) => v,
            _ => {
                return Err(format!(
                    "must be a finite decimal number, \"Infinity\", \"-Infinity\" or \"NaN\", got {}",
                    quoted(text)
                ))
            }
        },
    };
    Ok(Bson::Double(v))
}

fn binary(value: Json) -> Result<Bson, String> {
    let [data, subtype] = fields(value, ["base64", "subType"])?;
    binary_parts(data, subtype)
}

fn binary_parts(data: Json, subtype: Json) -> Result<Bson, String> {
    let data = string(data, "base64 data")?;
    let subtype = string(subtype, "a one- or two-digit hexadecimal subtype")?;
    let code = match subtype.len() {
        1 | 2 => u8::from_str_radix(&subtype, 16).ok(),
        _ => None,
    }
    .ok_or_else(|| format!("subtype must be one or two hexadecimal digits, got {}", quoted(&subtype)))?;
    let bytes = BASE64.decode(data.as_bytes()).map_err(|e| format!("data is not base64: {e}"))?;
    Ok(Bson::Binary(Binary { subtype: BinarySubtype::from(code), bytes }))
}

/// A UUID's 16 bytes from its 8-4-4-4-12 hexadecimal text.
fn uuid_bytes(text: &str) -> Option<[u8; 16]> {
    const HYPHENS: [usize; 4] = [8, 13, 18, 23];
    let raw = text.as_bytes();
    if raw.len() != 36 || HYPHENS.iter().any(|&i| raw[i] != b'-') {
        return None;
    }
    let hex: Vec<u8> = raw.iter().copied().filter(|&b| b != b'-').collect();
    let mut out = [0u8; 16];
    for (byte, pair) in out.iter_mut().zip(hex.chunks_exact(2)) {
        let pair = std::str::from_utf8(pair).ok()?;
        *byte = u8::from_str_radix(pair, 16).ok()?;
    }
    (hex.len() == 32).then_some(out)
}

fn timestamp(value: Json) -> Result<Bson, String> {
    let [t, i] = fields(value, ["t", "i"])?;
    let part = |name: &str, v: Json| -> Result<u32, String> {
        match &v {
            Json::Number(text) => text.parse::<u32>().ok(),
            _ => None,
        }
        .ok_or_else(|| format!("\"{name}\" must be a whole number from 0 to {}, got {}", u32::MAX, describe(&v)))
    };
    Ok(Bson::Timestamp(Timestamp { time: part("t", t)?, increment: part("i", i)? }))
}

fn regular_expression(value: Json) -> Result<Bson, String> {
    let [pattern, options] = fields(value, ["pattern", "options"])?;
    let pattern = string(pattern, "the pattern")?;
    let options = string(options, "the options")?;
    if let Some(bad) = options.chars().find(|c| !REGEX_OPTIONS.contains(*c)) {
        return Err(format!("option {bad:?} is not one of {REGEX_OPTIONS:?}"));
    }
    let mut sorted: Vec<char> = options.chars().collect();
    sorted.sort_unstable();
    sorted.dedup();
    let pattern = CString::try_from(pattern).map_err(|_| "pattern cannot contain a NUL character".to_string())?;
    let options = CString::try_from(sorted.into_iter().collect::<String>())
        .map_err(|_| "options cannot contain a NUL character".to_string())?;
    Ok(Bson::RegularExpression(Regex { pattern, options }))
}

/// `$minKey` / `$maxKey`, whose value must be 1.
fn key_marker(value: Json, marker: Bson) -> Result<Bson, String> {
    match &value {
        Json::Number(text) if text == "1" => Ok(marker),
        other => Err(format!("must be 1, got {}", describe(other))),
    }
}

/// A short description of a JSON value for an error message.
fn describe(value: &Json) -> String {
    match value {
        Json::Null => "null".to_string(),
        Json::Bool(b) => b.to_string(),
        Json::Number(text) => excerpt(text),
        Json::String(s) => quoted(s),
        Json::Array(_) => "an array".to_string(),
        Json::Object(_) => "an object".to_string(),
    }
}

/// A string quoted, cut to [`MAX_QUOTED_CHARS`] characters.
fn quoted(s: &str) -> String {
    match s.char_indices().nth(MAX_QUOTED_CHARS) {
        Some((cut, _)) => format!("{:?}...", &s[..cut]),
        None => format!("{s:?}"),
    }
}

/// A bare text (a number literal) cut to [`MAX_QUOTED_CHARS`] characters.
fn excerpt(s: &str) -> String {
    match s.char_indices().nth(MAX_QUOTED_CHARS) {
        Some((cut, _)) => format!("{}...", &s[..cut]),
        None => s.to_string(),
    }
}

// ---------------------------------------------------------------------------
// DynamoDB items
// ---------------------------------------------------------------------------

/// A typed item (CSV, DynamoDB JSON) to a document, fields in name order.
pub fn item_to_document(item: &Item) -> Document {
    item.iter().map(|(name, value)| (name.clone(), attribute_to_bson(value))).collect()
}

fn attribute_to_bson(value: &AttributeValue) -> Bson {
    match value {
        AttributeValue::S(s) => Bson::String(s.clone()),
        AttributeValue::N(n) => model_number_to_bson(n),
        AttributeValue::B(b) => generic_binary(b),
        AttributeValue::Bool(b) => Bson::Boolean(*b),
        AttributeValue::Null => Bson::Null,
        AttributeValue::Ss(v) => Bson::Array(v.iter().map(|s| Bson::String(s.clone())).collect()),
        AttributeValue::Ns(v) => Bson::Array(v.iter().map(model_number_to_bson).collect()),
        AttributeValue::Bs(v) => Bson::Array(v.iter().map(|b| generic_binary(b)).collect()),
        AttributeValue::L(v) => Bson::Array(v.iter().map(attribute_to_bson).collect()),
        AttributeValue::M(m) => Bson::Document(item_to_document(m)),
    }
}

/// The number rule on a DynamoDB number's canonical text. A DynamoDB number
/// (at most 9.99E+125) always fits a double, so the fallback never runs.
fn model_number_to_bson(n: &Number) -> Bson {
    number_text_to_bson(&n.to_string()).unwrap_or_else(|_| Bson::Double(n.to_f64_lossy()))
}

fn generic_binary(bytes: &[u8]) -> Bson {
    Bson::Binary(Binary { subtype: BinarySubtype::Generic, bytes: bytes.to_vec() })
}

// ---------------------------------------------------------------------------
// Identity
// ---------------------------------------------------------------------------

/// The value identifying a document: its `_id`, or the top-level field
/// `id_field` names.
pub fn id_of<'a>(doc: &'a Document, id_field: Option<&str>) -> Option<&'a Bson> {
    doc.get(id_field.unwrap_or(ID_FIELD))
}

/// A stable 128-bit hash of an identity value (xxh3-128 of a canonical
/// encoding), equal for values MongoDB treats as the same key:
///
/// - numbers hash by exact value whatever their type: Int32 1, Int64 1,
///   Double 1.0 and Decimal128 `1.00` are one key; -0 is 0; every NaN is
///   one key; Double 0.5 equals Decimal128 `0.5` (a double whose exact
///   decimal expansion exceeds 38 digits equals no decimal and hashes by
///   its bits);
/// - String and Symbol are one class;
/// - documents and arrays hash their elements in order, recursively, with
///   the same rules;
/// - values of different classes (`1` and `"1"`) never share an encoding.
///
/// Deterministic: no per-process seed, so a value hashes alike in every
/// run. It keys work in flight; nothing stores it.
pub fn identity_hash(value: &Bson) -> u128 {
    let mut out = Vec::with_capacity(32);
    canonical(value, &mut out);
    xxh3_128(&out)
}

/// Type classes of the canonical encoding (after MongoDB's canonical
/// types: all numbers one class, String and Symbol one class).
mod class {
    pub const MIN_KEY: u8 = 0x01;
    pub const UNDEFINED: u8 = 0x02;
    pub const NULL: u8 = 0x03;
    pub const NUMBER: u8 = 0x04;
    pub const STRING: u8 = 0x05;
    pub const DOCUMENT: u8 = 0x06;
    pub const ARRAY: u8 = 0x07;
    pub const BINARY: u8 = 0x08;
    pub const OBJECT_ID: u8 = 0x09;
    pub const BOOLEAN: u8 = 0x0a;
    pub const DATE: u8 = 0x0b;
    pub const TIMESTAMP: u8 = 0x0c;
    pub const REGEX: u8 = 0x0d;
    pub const DB_POINTER: u8 = 0x0e;
    pub const CODE: u8 = 0x0f;
    pub const CODE_WITH_SCOPE: u8 = 0x10;
    pub const MAX_KEY: u8 = 0x11;
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    out.extend_from_slice(bytes);
}

fn canonical_document(doc: &Document, out: &mut Vec<u8>) {
    out.extend_from_slice(&(doc.len() as u64).to_le_bytes());
    for (key, value) in doc {
        put_bytes(out, key.as_bytes());
        canonical(value, out);
    }
}

fn canonical(value: &Bson, out: &mut Vec<u8>) {
    match value {
        Bson::Int32(v) => numeric_key(&integer_key(i128::from(*v)), out),
        Bson::Int64(v) => numeric_key(&integer_key(i128::from(*v)), out),
        Bson::Double(v) => numeric_key(&double_key(*v), out),
        Bson::Decimal128(v) => numeric_key(&decimal_key(v), out),
        Bson::String(s) | Bson::Symbol(s) => {
            out.push(class::STRING);
            put_bytes(out, s.as_bytes());
        }
        Bson::Document(doc) => {
            out.push(class::DOCUMENT);
            canonical_document(doc, out);
        }
        Bson::Array(items) => {
            out.push(class::ARRAY);
            out.extend_from_slice(&(items.len() as u64).to_le_bytes());
            for item in items {
                canonical(item, out);
            }
        }
        Bson::Binary(b) => {
            out.push(class::BINARY);
            out.push(u8::from(b.subtype));
            put_bytes(out, &b.bytes);
        }
        Bson::ObjectId(oid) => {
            out.push(class::OBJECT_ID);
            out.extend_from_slice(&oid.bytes());
        }
        Bson::Boolean(b) => out.extend_from_slice(&[class::BOOLEAN, u8::from(*b)]),
        Bson::DateTime(dt) => {
            out.push(class::DATE);
            out.extend_from_slice(&dt.timestamp_millis().to_le_bytes());
        }
        Bson::Timestamp(ts) => {
            out.push(class::TIMESTAMP);
            out.extend_from_slice(&ts.time.to_le_bytes());
            out.extend_from_slice(&ts.increment.to_le_bytes());
        }
        Bson::RegularExpression(re) => {
            out.push(class::REGEX);
            put_bytes(out, re.pattern.as_str().as_bytes());
            put_bytes(out, re.options.as_str().as_bytes());
        }
        Bson::JavaScriptCode(code) => {
            out.push(class::CODE);
            put_bytes(out, code.as_bytes());
        }
        Bson::JavaScriptCodeWithScope(c) => {
            out.push(class::CODE_WITH_SCOPE);
            put_bytes(out, c.code.as_bytes());
            canonical_document(&c.scope, out);
        }
        Bson::DbPointer(_) => {
            // Its parts are private to bson: hash its BSON encoding.
            out.push(class::DB_POINTER);
            let mut wrapper = Document::new();
            wrapper.insert("", value.clone());
            put_bytes(out, &wrapper.to_vec().unwrap_or_default());
        }
        Bson::Null => out.push(class::NULL),
        Bson::Undefined => out.push(class::UNDEFINED),
        Bson::MinKey => out.push(class::MIN_KEY),
        Bson::MaxKey => out.push(class::MAX_KEY),
    }
}

/// A number's exact value in one form for every numeric type.
#[derive(Debug, PartialEq)]
enum NumericKey {
    NaN,
    Infinity {
        negative: bool,
    },
    Zero,
    /// `(-1)^negative × coefficient × 10^exponent`; the coefficient's
    /// decimal digits have no leading or trailing zeros.
    Finite {
        negative: bool,
        coefficient: String,
        exponent: i64,
    },
    /// A value no other type can equal, by its bits (kind 0: a double
    /// with a long exact expansion; kind 1: an unreadable decimal).
    Bits {
        kind: u8,
        bits: u128,
    },
}

fn numeric_key(key: &NumericKey, out: &mut Vec<u8>) {
    out.push(class::NUMBER);
    match key {
        NumericKey::NaN => out.push(0),
        NumericKey::Infinity { negative } => out.extend_from_slice(&[1, u8::from(*negative)]),
        NumericKey::Zero => out.push(2),
        NumericKey::Finite { negative, coefficient, exponent } => {
            out.extend_from_slice(&[3, u8::from(*negative)]);
            out.extend_from_slice(&exponent.to_le_bytes());
            put_bytes(out, coefficient.as_bytes());
        }
        NumericKey::Bits { kind, bits } => {
            out.extend_from_slice(&[4, *kind]);
            out.extend_from_slice(&bits.to_le_bytes());
        }
    }
}

/// `±digits × 10^exponent` normalized: leading and trailing zeros removed.
fn digits_key(negative: bool, digits: &str, exponent: i64) -> NumericKey {
    let digits = digits.trim_start_matches('0');
    let coefficient = digits.trim_end_matches('0');
    if coefficient.is_empty() {
        return NumericKey::Zero;
    }
    let exponent = exponent + (digits.len() - coefficient.len()) as i64;
    NumericKey::Finite { negative, coefficient: coefficient.to_string(), exponent }
}

fn integer_key(v: i128) -> NumericKey {
    digits_key(v < 0, &v.unsigned_abs().to_string(), 0)
}

fn double_key(x: f64) -> NumericKey {
    if x.is_nan() {
        return NumericKey::NaN;
    }
    if x.is_infinite() {
        return NumericKey::Infinity { negative: x < 0.0 };
    }
    if x == 0.0 {
        return NumericKey::Zero;
    }
    const MANTISSA_BITS: u32 = 52;
    const EXPONENT_BIAS: i64 = 1075; // 1023 + 52: the mantissa read as an integer
    let negative = x < 0.0;
    let bits = x.abs().to_bits();
    let biased = (bits >> MANTISSA_BITS) as i64;
    let fraction = bits & ((1u64 << MANTISSA_BITS) - 1);
    // x = mantissa × 2^exponent exactly.
    let (mantissa, exponent) = if biased == 0 {
        (fraction, 1 - EXPONENT_BIAS)
    } else {
        (fraction | (1u64 << MANTISSA_BITS), biased - EXPONENT_BIAS)
    };
    let shift = mantissa.trailing_zeros();
    let (mantissa, exponent) = (mantissa >> shift, exponent + i64::from(shift));
    if exponent >= 0 {
        // An integer; fixed-point formatting prints it exactly.
        return digits_key(negative, &format!("{:.0}", x.abs()), 0);
    }
    // mantissa / 2^k = mantissa × 5^k / 10^k, exactly.
    let k = exponent.unsigned_abs();
    let exact =
        u32::try_from(k).ok().and_then(|k| 5u128.checked_pow(k)).and_then(|p| u128::from(mantissa).checked_mul(p));
    match exact {
        Some(coefficient) => digits_key(negative, &coefficient.to_string(), -(k as i64)),
        None => NumericKey::Bits { kind: 0, bits: u128::from(x.to_bits()) },
    }
}

fn decimal_key(d: &Decimal128) -> NumericKey {
    let text = d.to_string();
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.as_str()),
    };
    match body {
        "NaN" => return NumericKey::NaN,
        "Infinity" => return NumericKey::Infinity { negative },
        _ => {}
    }
    let (mantissa, exponent) = match body.split_once(['E', 'e']) {
        Some((m, e)) => (m, e.parse::<i64>().ok()),
        None => (body, Some(0)),
    };
    let (int, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    match exponent {
        Some(e) if (int.bytes().chain(fraction.bytes())).all(|b| b.is_ascii_digit()) => {
            digits_key(negative, &format!("{int}{fraction}"), e - fraction.len() as i64)
        }
        _ => NumericKey::Bits { kind: 1, bits: u128::from_le_bytes(d.bytes()) },
    }
}

// ---------------------------------------------------------------------------
// Generated ids
// ---------------------------------------------------------------------------

/// A 64-bit key of one input, from parts that identify it (the caller
/// passes its path, size, modification time and target). Each part is
/// length-prefixed, so `["ab", "c"]` and `["a", "bc"]` differ.
pub fn run_key(parts: &[&[u8]]) -> u64 {
    let mut hasher = Xxh3Default::new();
    for part in parts {
        hasher.update(&(part.len() as u64).to_le_bytes());
        hasher.update(part);
    }
    hasher.digest()
}

/// The `_id` of the record at `line` of the input keyed `run_key`: 7 bytes
/// of the run key, then the line number big-endian in the last
/// [`OBJECT_ID_LINE_BYTES`] bytes, so the ids of one input sort in input
/// order. Lines past 2^40 fold their high bits into the key part: the ids
/// of one input stay distinct. The first 4 bytes are not a creation time.
pub fn deterministic_object_id(run_key: u64, line: u64) -> ObjectId {
    const LINE_BITS: u32 = 8 * OBJECT_ID_LINE_BYTES as u32;
    let low = line & ((1u64 << LINE_BITS) - 1);
    let high = line >> LINE_BITS; // below 2^24: fits the 56-bit key part
    let key = (run_key >> 8) ^ high;
    let mut bytes = [0u8; 12];
    bytes[..12 - OBJECT_ID_LINE_BYTES].copy_from_slice(&key.to_be_bytes()[1..]);
    bytes[12 - OBJECT_ID_LINE_BYTES..].copy_from_slice(&low.to_be_bytes()[8 - OBJECT_ID_LINE_BYTES..]);
    ObjectId::from_bytes(bytes)
}

/// The document's `_id`, inserting a [`deterministic_object_id`] as its
/// first field when it has none.
pub fn ensure_id(doc: &mut Document, run_key: u64, line: u64) -> &Bson {
    let generated = || Bson::ObjectId(deterministic_object_id(run_key, line));
    if !doc.contains_key(ID_FIELD) {
        let mut with_id = Document::new();
        with_id.insert(ID_FIELD, generated());
        for (key, value) in std::mem::take(doc) {
            with_id.insert(key, value);
        }
        *doc = with_id;
    }
    // `_id` is present now; `entry` reaches it without a panicking path.
    doc.entry(ID_FIELD).or_insert_with(generated)
}

// ---------------------------------------------------------------------------
// Size
// ---------------------------------------------------------------------------

/// A document as BSON bytes, refused over [`MAX_BSON_DOCUMENT_BYTES`].
pub fn to_raw_document(doc: &Document) -> Result<RawDocumentBuf, String> {
    let raw = RawDocumentBuf::try_from(doc).map_err(|e| format!("cannot encode the document as BSON: {e}"))?;
    check_document_size(raw.as_bytes().len())?;
    Ok(raw)
}

/// Refuses a document of `bytes` BSON bytes over MongoDB's limit.
pub fn check_document_size(bytes: usize) -> Result<(), String> {
    if bytes > MAX_BSON_DOCUMENT_BYTES {
        return Err(format!("document is {bytes} bytes; MongoDB stores at most {MAX_BSON_DOCUMENT_BYTES} (16 MiB)"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn doc(raw: &str) -> Document {
        match json_line_to_document(raw) {
            Ok(d) => d,
            Err(e) => panic!("{raw}: {e}"),
        }
    }

    fn err(raw: &str) -> String {
        match json_line_to_document(raw) {
            Ok(d) => panic!("{raw}: expected an error, got {d:?}"),
            Err(e) => e,
        }
    }

    /// The value of field `v` of `{"v": <json>}`.
    fn value(json: &str) -> Bson {
        doc(&format!("{{\"v\": {json}}}")).get("v").cloned().expect("field v")
    }

    /// The error for `{"v": <json>}`.
    fn value_err(json: &str) -> String {
        err(&format!("{{\"v\": {json}}}"))
    }

    fn decimal(text: &str) -> Decimal128 {
        Decimal128::from_str(text).expect("decimal")
    }

    /// A Decimal128 value's text (its coefficient and exponent as stored).
    fn decimal_text(value: &Bson) -> String {
        match value {
            Bson::Decimal128(d) => d.to_string(),
            other => panic!("not a Decimal128: {other:?}"),
        }
    }

    fn number(text: &str) -> AttributeValue {
        AttributeValue::N(Number::parse(text).expect("number"))
    }

    // --- numbers ---------------------------------------------------------

    #[test]
    fn integers_take_the_smallest_integer_type() {
        assert_eq!(number_text_to_bson("0").unwrap(), Bson::Int32(0));
        assert_eq!(number_text_to_bson("2147483647").unwrap(), Bson::Int32(i32::MAX));
        assert_eq!(number_text_to_bson("-2147483648").unwrap(), Bson::Int32(i32::MIN));
        assert_eq!(number_text_to_bson("2147483648").unwrap(), Bson::Int64(2_147_483_648));
        assert_eq!(number_text_to_bson("-2147483649").unwrap(), Bson::Int64(-2_147_483_649));
        assert_eq!(number_text_to_bson("9223372036854775807").unwrap(), Bson::Int64(i64::MAX));
        assert_eq!(number_text_to_bson("-9223372036854775808").unwrap(), Bson::Int64(i64::MIN));
    }

    #[test]
    fn negative_zero_integer_is_int32_zero() {
        assert_eq!(number_text_to_bson("-0").unwrap(), Bson::Int32(0));
        assert_eq!(value("-0"), Bson::Int32(0));
    }

    #[test]
    fn integers_past_i64_are_exact_decimal128() {
        let Bson::Decimal128(d) = number_text_to_bson("9223372036854775808").unwrap() else { panic!() };
        assert_eq!(d.to_string(), "9223372036854775808");
        let Bson::Decimal128(d) = number_text_to_bson("-9223372036854775809").unwrap() else { panic!() };
        assert_eq!(d.to_string(), "-9223372036854775809");
        // 34 significant digits: still exact.
        let text = "1234567890123456789012345678901234";
        assert_eq!(number_text_to_bson(text).unwrap(), Bson::Decimal128(decimal(text)));
        // Trailing zeros are not significant: 10^40 is exact.
        let big = format!("1{}", "0".repeat(40));
        assert_eq!(decimal_text(&number_text_to_bson(&big).unwrap()), "1E+40");
        assert_eq!(decimal_text(&number_text_to_bson(&format!("-{big}")).unwrap()), "-1E+40");
        let wide = "1234567890123456789012345678901234000000"; // 40 digits, 34 significant
        assert_eq!(decimal_text(&number_text_to_bson(wide).unwrap()), "1.234567890123456789012345678901234E+39");
        // Up to 34 digits the text is the coefficient, trailing zeros included.
        assert_eq!(decimal_text(&number_text_to_bson("10000000000000000000").unwrap()), "10000000000000000000");
    }

    #[test]
    fn integers_with_more_than_34_digits_are_doubles() {
        let text = "12345678901234567890123456789012345"; // 35 digits
        assert_eq!(number_text_to_bson(text).unwrap(), Bson::Double(text.parse::<f64>().unwrap()));
    }

    #[test]
    fn fractions_and_exponents_are_doubles() {
        assert_eq!(number_text_to_bson("1.0").unwrap(), Bson::Double(1.0));
        assert_eq!(number_text_to_bson("1e3").unwrap(), Bson::Double(1000.0));
        assert_eq!(number_text_to_bson("1E3").unwrap(), Bson::Double(1000.0));
        assert_eq!(number_text_to_bson("2.5e-3").unwrap(), Bson::Double(0.0025));
        assert_eq!(number_text_to_bson("0.1").unwrap(), Bson::Double(0.1));
        let Bson::Double(z) = number_text_to_bson("-0.0").unwrap() else { panic!() };
        assert!(z == 0.0 && z.is_sign_negative());
    }

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

    // --- Extended JSON ---------------------------------------------------

    #[test]
    fn oid() {
        let hex = "65f1a2b3c4d5e6f708192a3b";
        assert_eq!(value(&format!(r#"{{"$oid": "{hex}"}}"#)), Bson::ObjectId(ObjectId::parse_str(hex).unwrap()));
    }

    #[test]
    fn date_in_every_form() {
        let ms = 1_714_564_800_000; // 2024-05-01T12:00:00Z
        let at = |ms: i64| Bson::DateTime(DateTime::from_millis(ms));
        assert_eq!(value(r#"{"$date": "2024-05-01T12:00:00Z"}"#), at(ms));
        assert_eq!(value(r#"{"$date": "2024-05-01T14:00:00.123+02:00"}"#), at(ms + 123));
        assert_eq!(value(r#"{"$date": {"$numberLong": "1714564800000"}}"#), at(ms));
        assert_eq!(value(r#"{"$date": {"$numberLong": "-1"}}"#), at(-1));
        assert_eq!(value(r#"{"$date": 1714564800000}"#), at(ms));
    }

    #[test]
    fn number_wrappers_keep_their_declared_type() {
        assert_eq!(value(r#"{"$numberLong": "42"}"#), Bson::Int64(42));
        assert_eq!(value(r#"{"$numberLong": "-9223372036854775808"}"#), Bson::Int64(i64::MIN));
        assert_eq!(value(r#"{"$numberInt": "-7"}"#), Bson::Int32(-7));
        assert_eq!(value(r#"{"$numberDouble": "1"}"#), Bson::Double(1.0));
        assert_eq!(value(r#"{"$numberDouble": "-1.5e-3"}"#), Bson::Double(-0.0015));
        let Bson::Decimal128(d) = value(r#"{"$numberDecimal": "1.50"}"#) else { panic!() };
        assert_eq!(d.to_string(), "1.50");
        let Bson::Decimal128(d) = value(r#"{"$numberDecimal": "-1.234E+5000"}"#) else { panic!() };
        assert_eq!(d.to_string(), "-1.234E+5000");
    }

    #[test]
    fn number_double_special_values() {
        assert_eq!(value(r#"{"$numberDouble": "Infinity"}"#), Bson::Double(f64::INFINITY));
        assert_eq!(value(r#"{"$numberDouble": "-Infinity"}"#), Bson::Double(f64::NEG_INFINITY));
        let Bson::Double(nan) = value(r#"{"$numberDouble": "NaN"}"#) else { panic!() };
        assert!(nan.is_nan());
        let Bson::Double(z) = value(r#"{"$numberDouble": "-0.0"}"#) else { panic!() };
        assert!(z == 0.0 && z.is_sign_negative());
    }

    #[test]
    fn binary_canonical_and_legacy() {
        let bin = |subtype, bytes: &[u8]| Bson::Binary(Binary { subtype, bytes: bytes.to_vec() });
        assert_eq!(
            value(r#"{"$binary": {"base64": "AQID", "subType": "00"}}"#),
            bin(BinarySubtype::Generic, &[1, 2, 3])
        );
        assert_eq!(value(r#"{"$binary": {"subType": "5", "base64": "AQID"}}"#), bin(BinarySubtype::Md5, &[1, 2, 3]));
        assert_eq!(
            value(r#"{"$binary": {"base64": "AQ", "subType": "80"}}"#),
            bin(BinarySubtype::UserDefined(0x80), &[1])
        );
        assert_eq!(value(r#"{"$binary": {"base64": "", "subType": "00"}}"#), bin(BinarySubtype::Generic, &[]));
        assert_eq!(value(r#"{"$binary": "AQID", "$type": "00"}"#), bin(BinarySubtype::Generic, &[1, 2, 3]));
        assert_eq!(value(r#"{"$type": "04", "$binary": "AQID"}"#), bin(BinarySubtype::Uuid, &[1, 2, 3]));
    }

    #[test]
    fn uuid() {
        let expected: Vec<u8> = (0..16).map(|i| i * 0x11).collect();
        assert_eq!(
            value(r#"{"$uuid": "00112233-4455-6677-8899-AABBccddeeff"}"#),
            Bson::Binary(Binary { subtype: BinarySubtype::Uuid, bytes: expected })
        );
    }

    #[test]
    fn timestamp_regex_min_and_max_key() {
        assert_eq!(
            value(r#"{"$timestamp": {"t": 4294967295, "i": 3}}"#),
            Bson::Timestamp(Timestamp { time: u32::MAX, increment: 3 })
        );
        let Bson::RegularExpression(re) = value(r#"{"$regularExpression": {"pattern": "^a.*\\d", "options": "xmi"}}"#)
        else {
            panic!()
        };
        assert_eq!(re.pattern.as_str(), "^a.*\\d");
        assert_eq!(re.options.as_str(), "imx");
        assert_eq!(value(r#"{"$minKey": 1}"#), Bson::MinKey);
        assert_eq!(value(r#"{"$maxKey": 1}"#), Bson::MaxKey);
    }

    #[test]
    fn wrappers_inside_arrays_and_documents() {
        let hex = "65f1a2b3c4d5e6f708192a3b";
        let d = doc(&format!(r#"{{"a": [{{"$oid": "{hex}"}}, {{"b": {{"$numberLong": "5"}}}}]}}"#));
        let a = d.get_array("a").unwrap();
        assert_eq!(a[0], Bson::ObjectId(ObjectId::parse_str(hex).unwrap()));
        assert_eq!(a[1].as_document().unwrap().get("b"), Some(&Bson::Int64(5)));
    }

    #[test]
    fn malformed_wrappers_name_the_field() {
        assert_eq!(err(r#"{"owner": {"$oid": "zz"}}"#), r#"field owner: $oid must be 24 hexadecimal digits, got "zz""#);
        assert_eq!(
            err(r#"{"a": {"b": [1, {"$oid": 5}]}}"#),
            "field a.b.1: $oid must be a string holding 24 hexadecimal digits, got 5"
        );
        assert_eq!(
            err(r#"{"x": {"$oid": "65f1a2b3c4d5e6f708192a3b", "y": 1}}"#),
            r#"field x: $oid must be the only key of its object, found "y""#
        );
        assert_eq!(
            err(r#"{"x": {"y": 1, "$numberLong": "1"}}"#),
            r#"field x: $numberLong must be the only key of its object, found "y""#
        );
        assert_eq!(err(r#"{"x": {"$oid": "a", "$oid": "b"}}"#), "field x: $oid is repeated");
    }

    #[test]
    fn malformed_wrapper_messages() {
        let cases = [
            (
                r#"{"$date": "yesterday"}"#,
                r#"v: $date must be an ISO-8601 date-time such as "2024-05-01T12:00:00Z", got "yesterday""#,
            ),
            (r#"{"$date": 1.5}"#, "v: $date must be whole milliseconds since 1970 in 64 bits, got 1.5"),
            (r#"{"$date": {"$numberLong": 5}}"#, r#"v: $date {"$numberLong": ...} must hold a string, got 5"#),
            (
                r#"{"$date": true}"#,
                r#"v: $date must be an ISO-8601 string, {"$numberLong": "<ms>"} or integer milliseconds, got true"#,
            ),
            (r#"{"$numberLong": "1.5"}"#, r#"v: $numberLong must be a 64-bit integer, got "1.5""#),
            (r#"{"$numberLong": 1}"#, r#"v: $numberLong must be a string holding an integer such as "42", got 1"#),
            (r#"{"$numberInt": "3000000000"}"#, r#"v: $numberInt must be a 32-bit integer, got "3000000000""#),
            (
                r#"{"$numberDouble": "inf"}"#,
                r#"v: $numberDouble must be a finite decimal number, "Infinity", "-Infinity" or "NaN", got "inf""#,
            ),
            (
                r#"{"$numberDouble": "1e999"}"#,
                r#"v: $numberDouble must be a finite decimal number, "Infinity", "-Infinity" or "NaN", got "1e999""#,
            ),
            (
                r#"{"$numberDecimal": "abc"}"#,
                r#"v: $numberDecimal must be a decimal number of at most 34 digits, got "abc""#,
            ),
            (
                r#"{"$binary": {"base64": "!!", "subType": "00"}}"#,
                "v: $binary data is not base64: Invalid symbol 33, offset 0.",
            ),
            (
                r#"{"$binary": {"base64": "AQID", "subType": "100"}}"#,
                r#"v: $binary subtype must be one or two hexadecimal digits, got "100""#,
            ),
            (r#"{"$binary": {"base64": "AQID"}}"#, r#"v: $binary is missing the key "subType""#),
            (
                r#"{"$binary": {"base64": "AQID", "subType": "00", "x": 1}}"#,
                r#"v: $binary must have only the keys "base64", "subType", found "x""#,
            ),
            (r#"{"$binary": "AQID"}"#, r#"v: $binary must be an object with the keys "base64", "subType", got "AQID""#),
            (
                r#"{"$uuid": "00112233445566778899aabbccddeeff"}"#,
                r#"v: $uuid must be a UUID in 8-4-4-4-12 hexadecimal form, got "00112233445566778899aabbccddeeff""#,
            ),
            (
                r#"{"$uuid": "0011223g-4455-6677-8899-aabbccddeeff"}"#,
                r#"v: $uuid must be a UUID in 8-4-4-4-12 hexadecimal form, got "0011223g-4455-6677-8899-aabbccddeeff""#,
            ),
            (
                r#"{"$timestamp": {"t": -1, "i": 0}}"#,
                r#"v: $timestamp "t" must be a whole number from 0 to 4294967295, got -1"#,
            ),
            (r#"{"$timestamp": {"t": 1}}"#, r#"v: $timestamp is missing the key "i""#),
            (
                r#"{"$regularExpression": {"pattern": "a", "options": "q"}}"#,
                r#"v: $regularExpression option 'q' is not one of "ilmsux""#,
            ),
            (
                r#"{"$regularExpression": {"pattern": "a\u0000", "options": ""}}"#,
                "v: $regularExpression pattern cannot contain a NUL character",
            ),
            (r#"{"$minKey": 2}"#, "v: $minKey must be 1, got 2"),
            (r#"{"$maxKey": "1"}"#, r#"v: $maxKey must be 1, got "1""#),
        ];
        for (json, expected) in cases {
            assert_eq!(value_err(json), format!("field {expected}"), "{json}");
        }
    }

    #[test]
    fn long_values_are_cut_in_messages() {
        let long = "z".repeat(100);
        let e = value_err(&format!(r#"{{"$oid": "{long}"}}"#));
        assert_eq!(e, format!("field v: $oid must be 24 hexadecimal digits, got \"{}\"...", "z".repeat(40)));
    }

    // --- DynamoDB items --------------------------------------------------

    #[test]
    fn item_to_document_converts_every_attribute_type() {
        let mut inner = BTreeMap::new();
        inner.insert("k".to_string(), AttributeValue::S("v".into()));
        let mut item = Item::new();
        item.insert("s".into(), AttributeValue::S("text".into()));
        item.insert("n_int".into(), number("42"));
        item.insert("n_long".into(), number("3000000000"));
        item.insert("n_frac".into(), number("1.50"));
        item.insert("n_one".into(), number("1.0"));
        item.insert("n_big".into(), number("1E+125"));
        item.insert("n_38".into(), number("12345678901234567890123456789012345678"));
        item.insert("b".into(), AttributeValue::B(vec![0, 255]));
        item.insert("bool".into(), AttributeValue::Bool(true));
        item.insert("null".into(), AttributeValue::Null);
        item.insert("ss".into(), AttributeValue::Ss(vec!["x".into(), "y".into()]));
        item.insert("ns".into(), AttributeValue::Ns(vec![Number::parse("1").unwrap(), Number::parse("2.5").unwrap()]));
        item.insert("bs".into(), AttributeValue::Bs(vec![vec![1], vec![2, 3]]));
        item.insert("l".into(), AttributeValue::L(vec![number("7"), AttributeValue::Null]));
        item.insert("m".into(), AttributeValue::M(inner));

        let d = item_to_document(&item);
        let generic = |bytes: &[u8]| Bson::Binary(Binary { subtype: BinarySubtype::Generic, bytes: bytes.to_vec() });
        assert_eq!(d.get("s"), Some(&Bson::String("text".into())));
        assert_eq!(d.get("n_int"), Some(&Bson::Int32(42)));
        assert_eq!(d.get("n_long"), Some(&Bson::Int64(3_000_000_000)));
        assert_eq!(d.get("n_frac"), Some(&Bson::Double(1.5)));
        assert_eq!(d.get("n_one"), Some(&Bson::Int32(1)));
        assert_eq!(d.get("n_big").map(decimal_text), Some("1E+125".to_string()));
        assert_eq!(d.get("n_38"), Some(&Bson::Double(1.2345678901234568e37_f64)));
        assert_eq!(d.get("b"), Some(&generic(&[0, 255])));
        assert_eq!(d.get("bool"), Some(&Bson::Boolean(true)));
        assert_eq!(d.get("null"), Some(&Bson::Null));
        assert_eq!(d.get("ss"), Some(&Bson::Array(vec![Bson::String("x".into()), Bson::String("y".into())])));
        assert_eq!(d.get("ns"), Some(&Bson::Array(vec![Bson::Int32(1), Bson::Double(2.5)])));
        assert_eq!(d.get("bs"), Some(&Bson::Array(vec![generic(&[1]), generic(&[2, 3])])));
        assert_eq!(d.get("l"), Some(&Bson::Array(vec![Bson::Int32(7), Bson::Null])));
        assert_eq!(d.get_document("m").unwrap().get("k"), Some(&Bson::String("v".into())));
        // An Item is a BTreeMap: fields in name order.
        let keys: Vec<_> = d.keys().cloned().collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
    }

    // --- identity --------------------------------------------------------

    #[test]
    fn id_of_finds_id_or_the_named_field() {
        let d = doc(r#"{"sku": "A-1", "_id": 7}"#);
        assert_eq!(id_of(&d, None), Some(&Bson::Int32(7)));
        assert_eq!(id_of(&d, Some("sku")), Some(&Bson::String("A-1".into())));
        assert_eq!(id_of(&d, Some("missing")), None);
        assert_eq!(id_of(&doc(r#"{"a": 1}"#), None), None);
    }

    #[test]
    fn identity_hash_equates_numerically_equal_numbers() {
        let one = identity_hash(&Bson::Int32(1));
        assert_eq!(one, identity_hash(&Bson::Int64(1)));
        assert_eq!(one, identity_hash(&Bson::Double(1.0)));
        assert_eq!(one, identity_hash(&Bson::Decimal128(decimal("1"))));
        assert_eq!(one, identity_hash(&Bson::Decimal128(decimal("1.00"))));
        assert_eq!(one, identity_hash(&Bson::Decimal128(decimal("0.1E+1"))));
        assert_ne!(one, identity_hash(&Bson::String("1".into())));
        assert_ne!(one, identity_hash(&Bson::Int32(2)));
        assert_ne!(one, identity_hash(&Bson::Int32(-1)));
        assert_ne!(one, identity_hash(&Bson::Double(1.5)));

        let zero = identity_hash(&Bson::Int32(0));
        assert_eq!(zero, identity_hash(&Bson::Double(-0.0)));
        assert_eq!(zero, identity_hash(&Bson::Decimal128(decimal("-0.000"))));

        assert_eq!(identity_hash(&Bson::Int64(1 << 53)), identity_hash(&Bson::Double(9007199254740992.0)));
        assert_eq!(identity_hash(&Bson::Int64(-3_000_000_000)), identity_hash(&Bson::Double(-3e9)));
        assert_ne!(identity_hash(&Bson::Int64(i64::MAX)), identity_hash(&Bson::Double(i64::MAX as f64)));
        // Doubles hash by exact value.
        assert_eq!(identity_hash(&Bson::Double(0.5)), identity_hash(&Bson::Decimal128(decimal("0.50"))));
        assert_ne!(identity_hash(&Bson::Double(0.1)), identity_hash(&Bson::Decimal128(decimal("0.1"))));
        assert_eq!(identity_hash(&Bson::Double(1e22)), identity_hash(&Bson::Decimal128(decimal("1E+22"))));
        assert_ne!(identity_hash(&Bson::Double(1e40)), identity_hash(&Bson::Decimal128(decimal("1E+40"))));
        let two_70 = 2f64.powi(70);
        assert_eq!(
            identity_hash(&Bson::Double(two_70)),
            identity_hash(&Bson::Decimal128(decimal("1180591620717411303424")))
        );
        assert_eq!(identity_hash(&Bson::Double(f64::MIN_POSITIVE)), identity_hash(&Bson::Double(f64::MIN_POSITIVE)));
        assert_ne!(identity_hash(&Bson::Double(f64::MIN_POSITIVE)), identity_hash(&Bson::Double(-f64::MIN_POSITIVE)));
        // Special values.
        assert_eq!(identity_hash(&Bson::Double(f64::NAN)), identity_hash(&Bson::Decimal128(decimal("NaN"))));
        assert_eq!(identity_hash(&Bson::Double(f64::INFINITY)), identity_hash(&Bson::Decimal128(decimal("Infinity"))));
        assert_ne!(identity_hash(&Bson::Double(f64::INFINITY)), identity_hash(&Bson::Double(f64::NEG_INFINITY)));
    }

    #[test]
    fn double_key_is_exact() {
        assert_eq!(double_key(0.375), NumericKey::Finite { negative: false, coefficient: "375".into(), exponent: -3 });
        assert_eq!(double_key(-1200.0), NumericKey::Finite { negative: true, coefficient: "12".into(), exponent: 2 });
        // 2^-30 is exactly 9.31322574615478515625E-10.
        assert_eq!(
            double_key(2f64.powi(-30)),
            NumericKey::Finite { negative: false, coefficient: "931322574615478515625".into(), exponent: -30 }
        );
        // 0.1 is 0.1000000000000000055511151231257827021181583404541015625:
        // 55 digits, past u128 and past any Decimal128.
        assert_eq!(double_key(0.1), NumericKey::Bits { kind: 0, bits: u128::from(0.1f64.to_bits()) });
        // Expansions past u128 fall back to the bits.
        assert_eq!(
            double_key(f64::MIN_POSITIVE),
            NumericKey::Bits { kind: 0, bits: u128::from(f64::MIN_POSITIVE.to_bits()) }
        );
    }

    #[test]
    fn identity_hash_of_other_types() {
        let h = |json: &str| identity_hash(&value(json));
        assert_eq!(h(r#""abc""#), identity_hash(&Bson::Symbol("abc".into())));
        assert_ne!(h(r#""abc""#), h(r#""abd""#));
        // Embedded documents: numbers by value, fields in order.
        assert_eq!(h(r#"{"a": 1, "b": "x"}"#), h(r#"{"a": 1.0, "b": "x"}"#));
        assert_ne!(h(r#"{"a": 1, "b": "x"}"#), h(r#"{"b": "x", "a": 1}"#));
        assert_eq!(h("[1, 2]"), identity_hash(&Bson::Array(vec![Bson::Int64(1), Bson::Double(2.0)])));
        assert_ne!(h("[1, 2]"), h("[[1], 2]"));
        assert_ne!(h(r#"["ab", "c"]"#), h(r#"["a", "bc"]"#));
        let oid = r#"{"$oid": "65f1a2b3c4d5e6f708192a3b"}"#;
        assert_eq!(h(oid), h(oid));
        assert_ne!(h(oid), h(r#"{"$oid": "65f1a2b3c4d5e6f708192a3c"}"#));
        assert_ne!(
            h(r#"{"$binary": {"base64": "AQID", "subType": "00"}}"#),
            h(r#"{"$binary": {"base64": "AQID", "subType": "05"}}"#)
        );
        assert_ne!(h("null"), h(r#"{"$minKey": 1}"#));
        assert_ne!(h("true"), h("1"));
        assert_ne!(h(r#"{"$date": 0}"#), h("0"));
    }

    // --- generated ids ---------------------------------------------------

    #[test]
    fn run_key_separates_parts() {
        let k = run_key(&[b"data.jsonl", b"1024", b"mongodb://h/db.c"]);
        assert_eq!(k, run_key(&[b"data.jsonl", b"1024", b"mongodb://h/db.c"]));
        assert_ne!(k, run_key(&[b"data.jsonl", b"1025", b"mongodb://h/db.c"]));
        assert_ne!(run_key(&[b"ab", b"c"]), run_key(&[b"a", b"bc"]));
        assert_ne!(run_key(&[b"a", b"b"]), run_key(&[b"b", b"a"]));
    }

    #[test]
    fn deterministic_object_ids() {
        let key = run_key(&[b"input.jsonl"]);
        let id = deterministic_object_id(key, 1);
        assert_eq!(id, deterministic_object_id(key, 1));
        assert_ne!(id, deterministic_object_id(key, 2));
        assert_ne!(id, deterministic_object_id(run_key(&[b"other.jsonl"]), 1));
        // The line sits big-endian in the last 5 bytes; the key fills the rest.
        assert_eq!(deterministic_object_id(key, 0x01_0203_0405).bytes()[7..], [1, 2, 3, 4, 5]);
        assert_eq!(deterministic_object_id(key, 256).bytes()[..7], id.bytes()[..7]);
        assert_eq!(id.bytes()[..7], key.to_be_bytes()[..7]);
    }

    #[test]
    fn deterministic_object_ids_sort_in_line_order() {
        let key = run_key(&[b"input.jsonl"]);
        let lines = [1u64, 2, 9, 10, 255, 256, 65_536, 1 << 32, (1 << 40) - 1];
        let ids: Vec<ObjectId> = lines.iter().map(|&line| deterministic_object_id(key, line)).collect();
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(ids, sorted);
        // Past 2^40 lines ids stay distinct, though no longer ordered.
        assert_ne!(deterministic_object_id(key, 5), deterministic_object_id(key, 5 + (1 << 40)));
        assert_ne!(deterministic_object_id(key, 1 << 40), deterministic_object_id(key, 0));
    }

    #[test]
    fn ensure_id_inserts_a_generated_id_first() {
        let key = run_key(&[b"input.jsonl"]);
        let mut d = doc(r#"{"b": 1, "a": 2}"#);
        let id = ensure_id(&mut d, key, 17).clone();
        assert_eq!(id, Bson::ObjectId(deterministic_object_id(key, 17)));
        assert_eq!(d.keys().collect::<Vec<_>>(), ["_id", "b", "a"]);
        // Again: nothing changes.
        assert_eq!(ensure_id(&mut d, key, 99), &id);
        assert_eq!(d.keys().collect::<Vec<_>>(), ["_id", "b", "a"]);
    }

    #[test]
    fn ensure_id_keeps_an_existing_id_in_place() {
        let mut d = doc(r#"{"b": 1, "_id": "mine"}"#);
        assert_eq!(ensure_id(&mut d, 5, 1), &Bson::String("mine".into()));
        assert_eq!(d.keys().collect::<Vec<_>>(), ["b", "_id"]);
    }

    // --- size ------------------------------------------------------------

    #[test]
    fn raw_documents_round_trip() {
        let d = doc(r#"{"_id": {"$oid": "65f1a2b3c4d5e6f708192a3b"}, "n": 9223372036854775808, "s": "x"}"#);
        let raw = to_raw_document(&d).unwrap();
        assert_eq!(Document::try_from(raw.as_ref()).unwrap(), d);
        // {} is 5 bytes: length and terminator.
        assert_eq!(to_raw_document(&Document::new()).unwrap().as_bytes().len(), 5);
    }

    #[test]
    fn documents_over_16_mib_are_refused() {
        assert_eq!(MAX_BSON_DOCUMENT_BYTES, 16_777_216);
        assert!(check_document_size(MAX_BSON_DOCUMENT_BYTES).is_ok());
        assert_eq!(
            check_document_size(MAX_BSON_DOCUMENT_BYTES + 1).unwrap_err(),
            "document is 16777217 bytes; MongoDB stores at most 16777216 (16 MiB)"
        );
        // {"s": <string>}: 4 (length) + 1 (type) + 2 ("s\0") + 4 (string length) + n + 1 (NUL) + 1 (end).
        let overhead = 13;
        let mut d = Document::new();
        d.insert("s", "x".repeat(MAX_BSON_DOCUMENT_BYTES - overhead));
        assert_eq!(to_raw_document(&d).unwrap().as_bytes().len(), MAX_BSON_DOCUMENT_BYTES);
        d.insert("s", "x".repeat(MAX_BSON_DOCUMENT_BYTES - overhead + 1));
        assert_eq!(
            to_raw_document(&d).unwrap_err(),
            "document is 16777217 bytes; MongoDB stores at most 16777216 (16 MiB)"
        );
    }

    #[test]
    fn unencodable_documents_are_errors() {
        let mut item = Item::new();
        item.insert("a\0b".into(), AttributeValue::Bool(true));
        let e = to_raw_document(&item_to_document(&item)).unwrap_err();
        assert!(e.starts_with("cannot encode the document as BSON: "), "{e}");
    }
}
