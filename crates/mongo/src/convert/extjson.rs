//! Extended JSON v2 type wrappers to their BSON types.

use std::str::FromStr;

use base64::Engine as _;
use bson::oid::ObjectId;
use bson::raw::CString;
use bson::spec::BinarySubtype;
use bson::{Binary, Bson, DateTime, Decimal128, Regex, Timestamp};

use super::json::{field_error, Json, Path};
use super::number::{is_number_literal, MAX_DECIMAL128_DIGITS};
use super::{excerpt, quoted};

/// Regular-expression options MongoDB accepts.
const REGEX_OPTIONS: &str = "ilmsux";
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
/// base64 as Extended JSON writes it: standard alphabet; padding accepted
/// but not required.
const BASE64: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    base64::engine::GeneralPurposeConfig::new()
        .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
);

/// The type-wrapper key among an object's keys, if any.
pub(crate) fn wrapper_key(entries: &[(String, Json)]) -> Option<&'static str> {
    entries
        .iter()
        .filter(|(key, _)| key.starts_with('$'))
        .find_map(|(key, _)| WRAPPER_KEYS.iter().find(|w| **w == key).copied())
}

/// An Extended JSON type wrapper (an object holding `key`) to its value.
pub(crate) fn extended_json(key: &'static str, entries: Vec<(String, Json)>, path: &Path) -> Result<Bson, String> {
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

#[cfg(test)]
mod tests {
    use super::*;
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
}
