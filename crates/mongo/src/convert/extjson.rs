//! Extended JSON v2 type wrappers (canonical and relaxed) to their BSON
//! types: `$oid`, `$date` (ISO-8601 text, `{"$numberLong": "ms"}` or
//! integer milliseconds), `$numberDecimal`, `$numberLong`, `$numberInt`,
//! `$numberDouble` (with `Infinity`, `-Infinity`, `NaN`), `$binary`
//! (canonical `{"base64", "subType"}` and legacy `{"$binary", "$type"}`),
//! `$uuid`, `$timestamp`, `$regularExpression`, `$minKey` and `$maxKey`.
//!
//! An object holding one of these keys must be exactly that wrapper: a
//! malformed one (`{"$oid": "zz"}`, extra keys) is a [`WrapperError`].
//! Other `$`-prefixed keys (`$code`, `$symbol`, `$set`, ...) are not
//! wrappers: they stay plain fields and the server decides about them.

use std::fmt;
use std::str::FromStr;

use base64::Engine as _;
use bson::oid::ObjectId;
use bson::raw::CString;
use bson::spec::BinarySubtype;
use bson::{Binary, Bson, DateTime, Decimal128, Regex, Timestamp};

use super::json::{Got, Json};
use super::number::{is_number_literal, MAX_DECIMAL128_DIGITS};
use super::{excerpt, quoted};

/// Regular-expression options MongoDB accepts.
pub const REGEX_OPTIONS: &str = "ilmsux";
/// base64 as Extended JSON writes it: standard alphabet; padding accepted
/// but not required.
const BASE64: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    base64::engine::GeneralPurposeConfig::new()
        .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
);

/// An Extended JSON type wrapper understood here, named by its key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wrapper {
    Oid,
    Date,
    NumberDecimal,
    NumberLong,
    NumberInt,
    NumberDouble,
    Binary,
    Uuid,
    Timestamp,
    RegularExpression,
    MinKey,
    MaxKey,
}

impl Wrapper {
    /// Every wrapper, in the order the keys are looked for.
    pub const ALL: [Wrapper; 12] = [
        Wrapper::Oid,
        Wrapper::Date,
        Wrapper::NumberDecimal,
        Wrapper::NumberLong,
        Wrapper::NumberInt,
        Wrapper::NumberDouble,
        Wrapper::Binary,
        Wrapper::Uuid,
        Wrapper::Timestamp,
        Wrapper::RegularExpression,
        Wrapper::MinKey,
        Wrapper::MaxKey,
    ];

    /// The wrapper's key: `$oid`, `$date`, ...
    pub fn key(self) -> &'static str {
        match self {
            Wrapper::Oid => "$oid",
            Wrapper::Date => "$date",
            Wrapper::NumberDecimal => "$numberDecimal",
            Wrapper::NumberLong => "$numberLong",
            Wrapper::NumberInt => "$numberInt",
            Wrapper::NumberDouble => "$numberDouble",
            Wrapper::Binary => "$binary",
            Wrapper::Uuid => "$uuid",
            Wrapper::Timestamp => "$timestamp",
            Wrapper::RegularExpression => "$regularExpression",
            Wrapper::MinKey => "$minKey",
            Wrapper::MaxKey => "$maxKey",
        }
    }

    /// The wrapper `key` names, if any.
    pub fn from_key(key: &str) -> Option<Wrapper> {
        if !key.starts_with('$') {
            return None;
        }
        Wrapper::ALL.into_iter().find(|w| w.key() == key)
    }

    /// The wrapper among an object's keys, if any (the first one found).
    pub(crate) fn among(entries: &[(String, Json)]) -> Option<Wrapper> {
        entries.iter().find_map(|(key, _)| Wrapper::from_key(key))
    }
}

impl fmt::Display for Wrapper {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// Why a type wrapper is malformed. Its `Display` is the message that
/// follows the wrapper's key: `$oid must be 24 hexadecimal digits, got "zz"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WrapperError {
    /// The wrapper's key appears twice in its object.
    Repeated,
    /// The wrapper's object holds another key.
    NotAlone { other: String },
    /// The value must be a string holding `holding`.
    NotAString { holding: &'static str, got: Got },
    /// The value must be an object of exactly `keys`.
    NotAnObject { keys: &'static [&'static str], got: Got },
    /// The value's object repeats a key.
    KeyTwice { key: String },
    /// The value's object holds a key not among `keys`.
    UnexpectedKey { keys: &'static [&'static str], found: String },
    /// The value's object lacks a key.
    MissingKey { key: &'static str },
    /// `$oid`: not 24 hexadecimal digits.
    ObjectId { text: String },
    /// `$date`: text that is not an ISO-8601 date-time.
    DateText { text: String },
    /// `$date`: milliseconds that are not a whole number in 64 bits.
    DateMillis { text: String },
    /// `$date`: `{"$numberLong": ...}` holding something else than a string.
    DateNumberLong { got: Got },
    /// `$date`: a value of none of the three forms.
    DateForm { got: Got },
    /// `$numberDecimal`: not a Decimal128.
    Decimal { text: String },
    /// `$numberLong`: not a 64-bit integer.
    Long { text: String },
    /// `$numberInt`: not a 32-bit integer.
    Int { text: String },
    /// `$numberDouble`: not a finite number nor a special value.
    Double { text: String },
    /// `$binary`: a subtype that is not one or two hexadecimal digits.
    BinarySubtype { text: String },
    /// `$binary`: data that is not base64.
    Base64(base64::DecodeError),
    /// `$uuid`: not in 8-4-4-4-12 hexadecimal form.
    Uuid { text: String },
    /// `$timestamp`: `t` or `i` not a whole number in 32 bits.
    TimestampPart { name: &'static str, got: Got },
    /// `$regularExpression`: an option MongoDB does not know.
    RegexOption { option: char },
    /// `$regularExpression`: a NUL in the pattern.
    NulInPattern,
    /// `$regularExpression`: a NUL in the options.
    NulInOptions,
    /// `$minKey` / `$maxKey`: a value other than 1.
    NotOne { got: Got },
}

/// `"base64", "subType"`: the keys as the messages list them.
struct Keys(&'static [&'static str]);

impl fmt::Display for Keys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, key) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "\"{key}\"")?;
        }
        Ok(())
    }
}

impl fmt::Display for WrapperError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use WrapperError as E;
        match self {
            E::Repeated => f.write_str("is repeated"),
            E::NotAlone { other } => write!(f, "must be the only key of its object, found {}", quoted(other)),
            E::NotAString { holding, got } => write!(f, "must be a string holding {holding}, got {got}"),
            E::NotAnObject { keys, got } => write!(f, "must be an object with the keys {}, got {got}", Keys(keys)),
            E::KeyTwice { key } => write!(f, "has the key {} twice", quoted(key)),
            E::UnexpectedKey { keys, found } => {
                write!(f, "must have only the keys {}, found {}", Keys(keys), quoted(found))
            }
            E::MissingKey { key } => write!(f, "is missing the key \"{key}\""),
            E::ObjectId { text } => write!(f, "must be 24 hexadecimal digits, got {}", quoted(text)),
            E::DateText { text } => {
                write!(f, "must be an ISO-8601 date-time such as \"2024-05-01T12:00:00Z\", got {}", quoted(text))
            }
            E::DateMillis { text } => {
                write!(f, "must be whole milliseconds since 1970 in 64 bits, got {}", excerpt(text))
            }
            E::DateNumberLong { got } => write!(f, "{{\"$numberLong\": ...}} must hold a string, got {got}"),
            E::DateForm { got } => write!(
                f,
                "must be an ISO-8601 string, {{\"$numberLong\": \"<ms>\"}} or integer milliseconds, got {got}"
            ),
            E::Decimal { text } => {
                write!(f, "must be a decimal number of at most {MAX_DECIMAL128_DIGITS} digits, got {}", quoted(text))
            }
            E::Long { text } => write!(f, "must be a 64-bit integer, got {}", quoted(text)),
            E::Int { text } => write!(f, "must be a 32-bit integer, got {}", quoted(text)),
            E::Double { text } => write!(
                f,
                "must be a finite decimal number, \"Infinity\", \"-Infinity\" or \"NaN\", got {}",
                quoted(text)
            ),
            E::BinarySubtype { text } => {
                write!(f, "subtype must be one or two hexadecimal digits, got {}", quoted(text))
            }
            E::Base64(e) => write!(f, "data is not base64: {e}"),
            E::Uuid { text } => write!(f, "must be a UUID in 8-4-4-4-12 hexadecimal form, got {}", quoted(text)),
            E::TimestampPart { name, got } => {
                write!(f, "\"{name}\" must be a whole number from 0 to {}, got {got}", u32::MAX)
            }
            E::RegexOption { option } => write!(f, "option {option:?} is not one of {REGEX_OPTIONS:?}"),
            E::NulInPattern => f.write_str("pattern cannot contain a NUL character"),
            E::NulInOptions => f.write_str("options cannot contain a NUL character"),
            E::NotOne { got } => write!(f, "must be 1, got {got}"),
        }
    }
}

impl std::error::Error for WrapperError {}

/// A type wrapper (an object holding `wrapper`'s key) to its value.
pub(crate) fn extended_json(wrapper: Wrapper, entries: Vec<(String, Json)>) -> Result<Bson, WrapperError> {
    let key = wrapper.key();
    if entries.iter().filter(|(k, _)| k == key).count() > 1 {
        return Err(WrapperError::Repeated);
    }
    let legacy_binary = wrapper == Wrapper::Binary && entries.len() == 2 && entries.iter().any(|(k, _)| k == "$type");
    if entries.len() != 1 && !legacy_binary {
        let other = entries.iter().map(|(k, _)| k.as_str()).find(|k| *k != key).unwrap_or_default();
        return Err(WrapperError::NotAlone { other: other.to_string() });
    }
    let (mut value, mut legacy_type) = (Json::Null, None);
    for (k, v) in entries {
        if k == key {
            value = v;
        } else {
            legacy_type = Some(v);
        }
    }
    match wrapper {
        Wrapper::Oid => oid(value),
        Wrapper::Date => date(value),
        Wrapper::NumberDecimal => {
            let s = string(value, "a decimal number such as \"1.5\"")?;
            Decimal128::from_str(&s).map(Bson::Decimal128).map_err(|_| WrapperError::Decimal { text: s })
        }
        Wrapper::NumberLong => {
            let s = string(value, "an integer such as \"42\"")?;
            s.parse::<i64>().map(Bson::Int64).map_err(|_| WrapperError::Long { text: s })
        }
        Wrapper::NumberInt => {
            let s = string(value, "an integer such as \"42\"")?;
            s.parse::<i32>().map(Bson::Int32).map_err(|_| WrapperError::Int { text: s })
        }
        Wrapper::NumberDouble => number_double(value),
        Wrapper::Binary => match legacy_type {
            // The legacy form: {"$binary": "<base64>", "$type": "<hex>"}.
            Some(subtype) => binary_parts(value, subtype),
            None => binary(value),
        },
        Wrapper::Uuid => {
            let s = string(value, "a UUID such as \"00112233-4455-6677-8899-aabbccddeeff\"")?;
            let bytes = uuid_bytes(&s).ok_or(WrapperError::Uuid { text: s })?;
            Ok(Bson::Binary(Binary { subtype: BinarySubtype::Uuid, bytes: bytes.to_vec() }))
        }
        Wrapper::Timestamp => timestamp(value),
        Wrapper::RegularExpression => regular_expression(value),
        Wrapper::MinKey => key_marker(value, Bson::MinKey),
        Wrapper::MaxKey => key_marker(value, Bson::MaxKey),
    }
}

/// A wrapper's string value, or an error saying what it should hold.
fn string(value: Json, holding: &'static str) -> Result<String, WrapperError> {
    match value {
        Json::String(s) => Ok(s),
        other => Err(WrapperError::NotAString { holding, got: Got::from(&other) }),
    }
}

/// The fields of a wrapper's object value, exactly `keys`, in that order.
fn fields<const N: usize>(value: Json, keys: &'static [&'static str; N]) -> Result<[Json; N], WrapperError> {
    let Json::Object(entries) = value else {
        return Err(WrapperError::NotAnObject { keys, got: Got::from(&value) });
    };
    let mut found: [Option<Json>; N] = std::array::from_fn(|_| None);
    for (key, v) in entries {
        match keys.iter().position(|k| *k == key) {
            Some(i) if found[i].is_none() => found[i] = Some(v),
            Some(_) => return Err(WrapperError::KeyTwice { key }),
            None => return Err(WrapperError::UnexpectedKey { keys, found: key }),
        }
    }
    if let Some(i) = found.iter().position(Option::is_none) {
        return Err(WrapperError::MissingKey { key: keys[i] });
    }
    // Every slot is filled: the fallback never applies.
    Ok(found.map(|v| v.unwrap_or(Json::Null)))
}

fn oid(value: Json) -> Result<Bson, WrapperError> {
    let s = string(value, "24 hexadecimal digits")?;
    ObjectId::parse_str(&s).map(Bson::ObjectId).map_err(|_| WrapperError::ObjectId { text: s })
}

fn date(value: Json) -> Result<Bson, WrapperError> {
    fn millis(text: String) -> Result<Bson, WrapperError> {
        match text.parse::<i64>() {
            Ok(ms) => Ok(Bson::DateTime(DateTime::from_millis(ms))),
            Err(_) => Err(WrapperError::DateMillis { text }),
        }
    }
    match value {
        Json::String(s) => {
            DateTime::parse_rfc3339_str(&s).map(Bson::DateTime).map_err(|_| WrapperError::DateText { text: s })
        }
        Json::Number(n) => millis(n.as_str().to_string()),
        Json::Object(entries) => match <[(String, Json); 1]>::try_from(entries) {
            Ok([(key, Json::String(s))]) if key == "$numberLong" => millis(s),
            Ok([(key, other)]) if key == "$numberLong" => Err(WrapperError::DateNumberLong { got: Got::from(&other) }),
            _ => Err(WrapperError::DateForm { got: Got::Object }),
        },
        other => Err(WrapperError::DateForm { got: Got::from(&other) }),
    }
}

fn number_double(value: Json) -> Result<Bson, WrapperError> {
    let s = string(value, "a number, \"Infinity\", \"-Infinity\" or \"NaN\"")?;
    let v = match s.as_str() {
        "Infinity" => f64::INFINITY,
        "-Infinity" => f64::NEG_INFINITY,
        "NaN" => f64::NAN,
        text => match text.parse::<f64>() {
            Ok(v) if v.is_finite() && is_number_literal(text) => v,
            _ => return Err(WrapperError::Double { text: s }),
        },
    };
    Ok(Bson::Double(v))
}

fn binary(value: Json) -> Result<Bson, WrapperError> {
    let [data, subtype] = fields(value, &["base64", "subType"])?;
    binary_parts(data, subtype)
}

fn binary_parts(data: Json, subtype: Json) -> Result<Bson, WrapperError> {
    let data = string(data, "base64 data")?;
    let subtype = string(subtype, "a one- or two-digit hexadecimal subtype")?;
    let code = match subtype.len() {
        1 | 2 => u8::from_str_radix(&subtype, 16).ok(),
        _ => None,
    }
    .ok_or(WrapperError::BinarySubtype { text: subtype })?;
    let bytes = BASE64.decode(data.as_bytes()).map_err(WrapperError::Base64)?;
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

fn timestamp(value: Json) -> Result<Bson, WrapperError> {
    let [t, i] = fields(value, &["t", "i"])?;
    let part = |name: &'static str, v: Json| -> Result<u32, WrapperError> {
        match &v {
            Json::Number(n) => n.as_str().parse::<u32>().ok(),
            _ => None,
        }
        .ok_or_else(|| WrapperError::TimestampPart { name, got: Got::from(&v) })
    };
    Ok(Bson::Timestamp(Timestamp { time: part("t", t)?, increment: part("i", i)? }))
}

fn regular_expression(value: Json) -> Result<Bson, WrapperError> {
    let [pattern, options] = fields(value, &["pattern", "options"])?;
    let pattern = string(pattern, "the pattern")?;
    let options = string(options, "the options")?;
    if let Some(option) = options.chars().find(|c| !REGEX_OPTIONS.contains(*c)) {
        return Err(WrapperError::RegexOption { option });
    }
    let mut sorted: Vec<char> = options.chars().collect();
    sorted.sort_unstable();
    sorted.dedup();
    let pattern = CString::try_from(pattern).map_err(|_| WrapperError::NulInPattern)?;
    let options = CString::try_from(sorted.into_iter().collect::<String>()).map_err(|_| WrapperError::NulInOptions)?;
    Ok(Bson::RegularExpression(Regex { pattern, options }))
}

/// `$minKey` / `$maxKey`, whose value must be 1.
fn key_marker(value: Json, marker: Bson) -> Result<Bson, WrapperError> {
    match &value {
        Json::Number(n) if n.as_str() == "1" => Ok(marker),
        other => Err(WrapperError::NotOne { got: Got::from(other) }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::json_line_to_document;
    use crate::convert::test_support::*;
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

    // --- the wrapper keys ------------------------------------------------

    #[test]
    fn every_wrapper_is_found_by_its_key_and_only_by_it() {
        for wrapper in Wrapper::ALL {
            assert_eq!(Wrapper::from_key(wrapper.key()), Some(wrapper));
            assert_eq!(wrapper.to_string(), wrapper.key());
        }
        let mut keys: Vec<&str> = Wrapper::ALL.iter().map(|w| w.key()).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), Wrapper::ALL.len());
        for key in ["$code", "$symbol", "$set", "$type", "oid", "$OID", "", "$"] {
            assert_eq!(Wrapper::from_key(key), None, "{key}");
        }
    }

    #[test]
    fn wrapper_errors_are_typed() {
        let wrapper_error = |json: &str| match json_line_to_document(&format!("{{\"v\": {json}}}")) {
            Err(crate::convert::RecordError::Wrapper { error, .. }) => error,
            other => panic!("{json}: {other:?}"),
        };
        assert_eq!(
            wrapper_error(r#"{"$oid": 5}"#),
            WrapperError::NotAString { holding: "24 hexadecimal digits", got: Got::Number("5".into()) }
        );
        assert_eq!(wrapper_error(r#"{"$binary": {"base64": "AQID"}}"#), WrapperError::MissingKey { key: "subType" });
        assert_eq!(wrapper_error(r#"{"$timestamp": {"t": 1, "t": 2}}"#), WrapperError::KeyTwice { key: "t".into() });
        assert_eq!(
            wrapper_error(r#"{"$date": {"$numberLong": "1", "x": 2}}"#),
            WrapperError::DateForm { got: Got::Object }
        );
        assert_eq!(wrapper_error(r#"{"$minKey": [1]}"#), WrapperError::NotOne { got: Got::Array });
        assert_eq!(
            wrapper_error(r#"{"$regularExpression": {"pattern": "a", "options": "iq"}}"#),
            WrapperError::RegexOption { option: 'q' }
        );
        assert!(matches!(wrapper_error(r#"{"$binary": {"base64": "!", "subType": "0"}}"#), WrapperError::Base64(_)));
    }
}
