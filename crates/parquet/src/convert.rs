//! Arrow values to DynamoDB attribute values (the mapping README.md's
//! "Parquet input" states), written once over a [`Build`] output so that the
//! same walk makes the item and the record's DynamoDB JSON text (which, for
//! a rejected row, shows the value that could not be stored, `{"N": "NaN"}`).

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, Schema, TimeUnit};
use base64::Engine as _;
use chrono::{Datelike, NaiveDate, NaiveDateTime, NaiveTime, Timelike};
use dynaburst_model::{AttributeValue, Item, Number};

/// DynamoDB's nesting limit for lists and maps: a schema nested deeper
/// cannot make a storable item.
pub const MAX_NESTING_DEPTH: usize = 32;

/// What a walk over a row builds: an attribute value, or its DynamoDB JSON.
pub trait Build: Sized {
    fn null() -> Self;
    fn boolean(b: bool) -> Self;
    fn string(s: String) -> Self;
    /// A number from its text; fails when DynamoDB cannot store it.
    fn number(text: String) -> Result<Self, String>;
    fn binary(b: &[u8]) -> Self;
    fn list(items: Vec<Self>) -> Self;
    fn map(entries: Vec<(String, Self)>) -> Self;
}

impl Build for AttributeValue {
    fn null() -> Self {
        AttributeValue::Null
    }
    fn boolean(b: bool) -> Self {
        AttributeValue::Bool(b)
    }
    fn string(s: String) -> Self {
        AttributeValue::S(s)
    }
    fn number(text: String) -> Result<Self, String> {
        Number::parse(&text).map(AttributeValue::N).map_err(|e| match text.as_str() {
            "NaN" | "Infinity" | "-Infinity" => {
                format!("{text} is not a number DynamoDB can store (its numbers are finite)")
            }
            _ => format!("{text}: {e}"),
        })
    }
    fn binary(b: &[u8]) -> Self {
        AttributeValue::B(b.to_vec())
    }
    fn list(items: Vec<Self>) -> Self {
        AttributeValue::L(items)
    }
    fn map(entries: Vec<(String, Self)>) -> Self {
        AttributeValue::M(entries.into_iter().collect())
    }
}

/// DynamoDB JSON text (`{"S":...}`, `{"N":"text"}`, base64 `{"B":...}`),
/// written directly rather than through a JSON tree (a row's text costs
/// most of its reading otherwise): every value renders, a number DynamoDB
/// would refuse with its text.
pub struct Json(pub String);

impl Build for Json {
    fn null() -> Self {
        Json(r#"{"NULL":true}"#.to_string())
    }
    fn boolean(b: bool) -> Self {
        Json(format!(r#"{{"BOOL":{b}}}"#))
    }
    fn string(s: String) -> Self {
        let mut out = String::with_capacity(s.len() + 10);
        out.push_str(r#"{"S":"#);
        quote(&mut out, &s);
        out.push('}');
        Json(out)
    }
    fn number(text: String) -> Result<Self, String> {
        let mut out = String::with_capacity(text.len() + 10);
        out.push_str(r#"{"N":"#);
        quote(&mut out, &text);
        out.push('}');
        Ok(Json(out))
    }
    fn binary(b: &[u8]) -> Self {
        Json(format!(r#"{{"B":"{}"}}"#, base64::engine::general_purpose::STANDARD.encode(b)))
    }
    fn list(items: Vec<Self>) -> Self {
        let mut out = String::from(r#"{"L":["#);
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&item.0);
        }
        out.push_str("]}");
        Json(out)
    }
    fn map(entries: Vec<(String, Self)>) -> Self {
        let mut out = String::from(r#"{"M":"#);
        object(&mut out, entries.iter().map(|(k, v)| (k.as_str(), v)));
        out.push('}');
        Json(out)
    }
}

/// `{"name":value,...}` in the entries' order.
fn object<'a>(out: &mut String, entries: impl Iterator<Item = (&'a str, &'a Json)>) {
    out.push('{');
    for (i, (name, value)) in entries.enumerate() {
        if i > 0 {
            out.push(',');
        }
        quote(out, name);
        out.push(':');
        out.push_str(&value.0);
    }
    out.push('}');
}

/// `s` as a JSON string literal.
fn quote(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Checks that every column's type maps to an attribute type, before the
/// first row is read: a type that does not fails the whole file, naming
/// the column.
pub fn check_schema(schema: &Schema) -> Result<(), String> {
    for field in schema.fields() {
        check_type(field.data_type(), 0).map_err(|e| format!("column {}: {e}", field.name()))?;
    }
    Ok(())
}

fn check_type(dt: &DataType, depth: usize) -> Result<(), String> {
    if depth > MAX_NESTING_DEPTH {
        return Err(format!("nested more than {MAX_NESTING_DEPTH} levels, DynamoDB's limit"));
    }
    match dt {
        DataType::Null
        | DataType::Boolean
        | DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64
        | DataType::Float16
        | DataType::Float32
        | DataType::Float64
        | DataType::Decimal32(..)
        | DataType::Decimal64(..)
        | DataType::Decimal128(..)
        | DataType::Decimal256(..)
        | DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Utf8View
        | DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_)
        | DataType::Date32
        | DataType::Date64
        | DataType::Timestamp(..)
        | DataType::Time32(TimeUnit::Second | TimeUnit::Millisecond)
        | DataType::Time64(TimeUnit::Microsecond | TimeUnit::Nanosecond)
        | DataType::Duration(_) => Ok(()),
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
            check_type(f.data_type(), depth + 1)
        }
        DataType::Struct(fields) => fields
            .iter()
            .try_for_each(|f| check_type(f.data_type(), depth + 1).map_err(|e| format!("{}: {e}", f.name()))),
        DataType::Map(entries, _) => match entries.data_type() {
            DataType::Struct(kv) if kv.len() == 2 => {
                if !is_key_type(kv[0].data_type()) {
                    return Err(format!("map keys of type {} (strings and integers only)", kv[0].data_type()));
                }
                check_type(kv[1].data_type(), depth + 1)
            }
            other => Err(format!("a map whose entries are {other}")),
        },
        DataType::Dictionary(key, value) if key.is_dictionary_key_type() => check_type(value, depth),
        other => Err(format!("type {other} has no DynamoDB attribute type dynaburst maps it to")),
    }
}

fn is_key_type(dt: &DataType) -> bool {
    matches!(dt, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View) || dt.is_integer()
}

/// One row as an item: null columns are left out. Fails naming the first
/// column whose value DynamoDB cannot store.
pub fn row_item(batch: &RecordBatch, row: usize) -> Result<Item, String> {
    let mut item = Item::new();
    for (field, column) in batch.schema_ref().fields().iter().zip(batch.columns()) {
        if let Some(v) =
            value::<AttributeValue>(column.as_ref(), row).map_err(|e| format!("column {}: {e}", field.name()))?
        {
            item.insert(field.name().clone(), v);
        }
    }
    Ok(item)
}

/// One row as a DynamoDB JSON object (the record's text for the rejects
/// file), its columns in the file's order: null columns left out, as in
/// the item.
pub fn row_json(batch: &RecordBatch, row: usize) -> String {
    let values: Vec<(&str, Json)> = batch
        .schema_ref()
        .fields()
        .iter()
        .zip(batch.columns())
        // An error is a value out of every range (a date past year
        // 262,143): the item's error names it; its text cannot show it.
        .filter_map(|(field, column)| match value::<Json>(column.as_ref(), row) {
            Ok(Some(v)) => Some((field.name().as_str(), v)),
            Ok(None) | Err(_) => None,
        })
        .collect();
    let mut out = String::with_capacity(values.iter().map(|(k, v)| k.len() + v.0.len() + 4).sum::<usize>() + 2);
    object(&mut out, values.iter().map(|(k, v)| (*k, v)));
    out
}

/// The value at `row` (None when null). Recursion follows the schema,
/// which `check_schema` bounded.
pub fn value<B: Build>(array: &dyn Array, row: usize) -> Result<Option<B>, String> {
    if array.is_null(row) || *array.data_type() == DataType::Null {
        return Ok(None);
    }
    let v = match array.data_type() {
        DataType::Boolean => B::boolean(array.as_boolean().value(row)),
        DataType::Int8 => int::<B, Int8Type>(array, row)?,
        DataType::Int16 => int::<B, Int16Type>(array, row)?,
        DataType::Int32 => int::<B, Int32Type>(array, row)?,
        DataType::Int64 => int::<B, Int64Type>(array, row)?,
        DataType::UInt8 => int::<B, UInt8Type>(array, row)?,
        DataType::UInt16 => int::<B, UInt16Type>(array, row)?,
        DataType::UInt32 => int::<B, UInt32Type>(array, row)?,
        DataType::UInt64 => int::<B, UInt64Type>(array, row)?,
        DataType::Float16 => float(array.as_primitive::<Float16Type>().value(row).to_f32())?,
        DataType::Float32 => float(array.as_primitive::<Float32Type>().value(row))?,
        DataType::Float64 => float(array.as_primitive::<Float64Type>().value(row))?,
        DataType::Decimal32(_, s) => decimal(array.as_primitive::<Decimal32Type>().value(row), *s)?,
        DataType::Decimal64(_, s) => decimal(array.as_primitive::<Decimal64Type>().value(row), *s)?,
        DataType::Decimal128(_, s) => decimal(array.as_primitive::<Decimal128Type>().value(row), *s)?,
        DataType::Decimal256(_, s) => decimal(array.as_primitive::<Decimal256Type>().value(row), *s)?,
        DataType::Utf8 => B::string(array.as_string::<i32>().value(row).to_string()),
        DataType::LargeUtf8 => B::string(array.as_string::<i64>().value(row).to_string()),
        DataType::Utf8View => B::string(array.as_string_view().value(row).to_string()),
        DataType::Binary => B::binary(array.as_binary::<i32>().value(row)),
        DataType::LargeBinary => B::binary(array.as_binary::<i64>().value(row)),
        DataType::BinaryView => B::binary(array.as_binary_view().value(row)),
        DataType::FixedSizeBinary(_) => B::binary(array.as_fixed_size_binary().value(row)),
        DataType::Date32 => B::string(date(arrow_array::temporal_conversions::date32_to_datetime(
            array.as_primitive::<Date32Type>().value(row),
        ))?),
        DataType::Date64 => B::string(date(arrow_array::temporal_conversions::date64_to_datetime(
            array.as_primitive::<Date64Type>().value(row),
        ))?),
        DataType::Timestamp(unit, tz) => {
            let v = match unit {
                TimeUnit::Second => array.as_primitive::<TimestampSecondType>().value(row),
                TimeUnit::Millisecond => array.as_primitive::<TimestampMillisecondType>().value(row),
                TimeUnit::Microsecond => array.as_primitive::<TimestampMicrosecondType>().value(row),
                TimeUnit::Nanosecond => array.as_primitive::<TimestampNanosecondType>().value(row),
            };
            B::string(timestamp(v, *unit, tz.is_some())?)
        }
        DataType::Time32(unit) => {
            let v = match unit {
                TimeUnit::Second => i64::from(array.as_primitive::<Time32SecondType>().value(row)),
                _ => i64::from(array.as_primitive::<Time32MillisecondType>().value(row)),
            };
            B::string(time_of_day(v, *unit)?)
        }
        DataType::Time64(unit) => {
            let v = match unit {
                TimeUnit::Microsecond => array.as_primitive::<Time64MicrosecondType>().value(row),
                _ => array.as_primitive::<Time64NanosecondType>().value(row),
            };
            B::string(time_of_day(v, *unit)?)
        }
        DataType::Duration(unit) => {
            let v = match unit {
                TimeUnit::Second => array.as_primitive::<DurationSecondType>().value(row),
                TimeUnit::Millisecond => array.as_primitive::<DurationMillisecondType>().value(row),
                TimeUnit::Microsecond => array.as_primitive::<DurationMicrosecondType>().value(row),
                TimeUnit::Nanosecond => array.as_primitive::<DurationNanosecondType>().value(row),
            };
            B::number(v.to_string())?
        }
        DataType::List(_) => elements(array.as_list::<i32>().value(row).as_ref())?,
        DataType::LargeList(_) => elements(array.as_list::<i64>().value(row).as_ref())?,
        DataType::FixedSizeList(..) => elements(array.as_fixed_size_list().value(row).as_ref())?,
        DataType::Struct(_) => {
            let s = array.as_struct();
            let mut entries = Vec::with_capacity(s.num_columns());
            for (field, child) in s.fields().iter().zip(s.columns()) {
                // A null field is left out, as a null column is.
                if let Some(v) = value::<B>(child.as_ref(), row).map_err(|e| format!("{}: {e}", field.name()))? {
                    entries.push((field.name().clone(), v));
                }
            }
            B::map(entries)
        }
        DataType::Map(..) => {
            let entries = array.as_map().value(row);
            let (keys, values) = (entries.column(0), entries.column(1));
            let mut out = Vec::with_capacity(entries.len());
            for i in 0..entries.len() {
                let key = map_key(keys.as_ref(), i)?;
                // A map's null value is kept, as NULL: its key is data.
                let v = value::<B>(values.as_ref(), i).map_err(|e| format!("{key}: {e}"))?.unwrap_or_else(B::null);
                out.push((key, v));
            }
            B::map(out)
        }
        DataType::Dictionary(..) => {
            let Some(d) = array.as_any_dictionary_opt() else { return Err("a broken dictionary".to_string()) };
            let Some(index) = integer(d.keys(), row).and_then(|k| usize::try_from(k).ok()) else {
                return Err("a dictionary key out of range".to_string());
            };
            if index >= d.values().len() {
                return Err("a dictionary key out of range".to_string());
            }
            return value::<B>(d.values().as_ref(), index);
        }
        other => return Err(format!("type {other} is not mapped")),
    };
    Ok(Some(v))
}

/// A list's elements: a null element is NULL (its place is data).
fn elements<B: Build>(list: &dyn Array) -> Result<B, String> {
    let mut out = Vec::with_capacity(list.len());
    for i in 0..list.len() {
        out.push(value::<B>(list, i).map_err(|e| format!("[{i}]: {e}"))?.unwrap_or_else(B::null));
    }
    Ok(B::list(out))
}

fn int<B: Build, T: ArrowPrimitiveType>(array: &dyn Array, row: usize) -> Result<B, String>
where
    T::Native: ToString,
{
    B::number(array.as_primitive::<T>().value(row).to_string())
}

/// An integer array's value as i128 (dictionary keys, map keys).
fn integer(array: &dyn Array, row: usize) -> Option<i128> {
    if array.is_null(row) {
        return None;
    }
    Some(match array.data_type() {
        DataType::Int8 => array.as_primitive::<Int8Type>().value(row).into(),
        DataType::Int16 => array.as_primitive::<Int16Type>().value(row).into(),
        DataType::Int32 => array.as_primitive::<Int32Type>().value(row).into(),
        DataType::Int64 => array.as_primitive::<Int64Type>().value(row).into(),
        DataType::UInt8 => array.as_primitive::<UInt8Type>().value(row).into(),
        DataType::UInt16 => array.as_primitive::<UInt16Type>().value(row).into(),
        DataType::UInt32 => array.as_primitive::<UInt32Type>().value(row).into(),
        DataType::UInt64 => array.as_primitive::<UInt64Type>().value(row).into(),
        _ => return None,
    })
}

fn map_key(keys: &dyn Array, i: usize) -> Result<String, String> {
    Ok(match keys.data_type() {
        DataType::Utf8 => keys.as_string::<i32>().value(i).to_string(),
        DataType::LargeUtf8 => keys.as_string::<i64>().value(i).to_string(),
        DataType::Utf8View => keys.as_string_view().value(i).to_string(),
        _ => integer(keys, i).ok_or_else(|| "a null map key".to_string())?.to_string(),
    })
}

/// A float as N: its shortest exact decimal text (`0.1f32` is 0.1, not
/// 0.100000001490116...). NaN and infinities are not numbers DynamoDB
/// stores: the record is rejected.
fn float<B: Build, F: std::fmt::LowerExp + Into<f64> + Copy>(f: F) -> Result<B, String> {
    let wide: f64 = f.into();
    if wide.is_nan() {
        return B::number("NaN".to_string());
    }
    if wide.is_infinite() {
        return B::number(if wide > 0.0 { "Infinity" } else { "-Infinity" }.to_string());
    }
    B::number(format!("{f:e}"))
}

/// A decimal as N, exactly: its unscaled digits times ten to the minus
/// scale (a negative scale multiplies).
fn decimal<B: Build, I: std::fmt::Display>(unscaled: I, scale: i8) -> Result<B, String> {
    if scale == 0 {
        B::number(unscaled.to_string())
    } else {
        B::number(format!("{unscaled}e{}", -i32::from(scale)))
    }
}

fn date(d: Option<NaiveDateTime>) -> Result<String, String> {
    d.map(|d| iso_date(d.date())).ok_or_else(|| "a date out of range".to_string())
}

/// `YYYY-MM-DD` (years past 9999 or before 0 with a sign, as ISO 8601's
/// expanded form).
fn iso_date(d: NaiveDate) -> String {
    let year = d.year();
    if (0..=9999).contains(&year) {
        format!("{year:04}-{:02}-{:02}", d.month(), d.day())
    } else {
        format!("{year:+05}-{:02}-{:02}", d.month(), d.day())
    }
}

/// `.fff`, `.ffffff` or `.fffffffff` as the unit has them; none for seconds.
fn fraction(nanos: u32, unit: TimeUnit) -> String {
    match unit {
        TimeUnit::Second => String::new(),
        TimeUnit::Millisecond => format!(".{:03}", nanos / 1_000_000),
        TimeUnit::Microsecond => format!(".{:06}", nanos / 1_000),
        TimeUnit::Nanosecond => format!(".{nanos:09}"),
    }
}

fn clock(t: NaiveTime, unit: TimeUnit) -> String {
    format!("{:02}:{:02}:{:02}{}", t.hour(), t.minute(), t.second(), fraction(t.nanosecond(), unit))
}

/// ISO 8601: `2024-01-31T12:34:56.789Z` for a timestamp with a time zone
/// (the instant, in UTC), without the `Z` for one without (a local time).
fn timestamp(v: i64, unit: TimeUnit, utc: bool) -> Result<String, String> {
    use arrow_array::temporal_conversions as tc;
    let dt = match unit {
        TimeUnit::Second => tc::timestamp_s_to_datetime(v),
        TimeUnit::Millisecond => tc::timestamp_ms_to_datetime(v),
        TimeUnit::Microsecond => tc::timestamp_us_to_datetime(v),
        TimeUnit::Nanosecond => tc::timestamp_ns_to_datetime(v),
    }
    .ok_or_else(|| format!("timestamp {v} is out of range"))?;
    Ok(format!("{}T{}{}", iso_date(dt.date()), clock(dt.time(), unit), if utc { "Z" } else { "" }))
}

/// A time of day, `HH:MM:SS[.fff]`.
fn time_of_day(v: i64, unit: TimeUnit) -> Result<String, String> {
    use arrow_array::temporal_conversions as tc;
    let t = match unit {
        TimeUnit::Second => i32::try_from(v).ok().and_then(tc::time32s_to_time),
        TimeUnit::Millisecond => i32::try_from(v).ok().and_then(tc::time32ms_to_time),
        TimeUnit::Microsecond => tc::time64us_to_time(v),
        TimeUnit::Nanosecond => tc::time64ns_to_time(v),
    }
    .ok_or_else(|| format!("time of day {v} is out of range"))?;
    Ok(clock(t, unit))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_are_their_shortest_decimal_and_non_finite_ones_fail() {
        let n = |f: f64| float::<AttributeValue, f64>(f);
        assert_eq!(n(0.1), Ok(AttributeValue::N(Number::parse("0.1").unwrap())));
        assert_eq!(float::<AttributeValue, f32>(0.1f32), Ok(AttributeValue::N(Number::parse("0.1").unwrap())));
        assert_eq!(n(-2.5e-7), Ok(AttributeValue::N(Number::parse("-0.00000025").unwrap())));
        assert!(n(f64::NAN).unwrap_err().starts_with("NaN is not a number DynamoDB can store"));
        assert!(n(f64::NEG_INFINITY).unwrap_err().starts_with("-Infinity is not a number"));
        assert_eq!(float::<Json, f64>(f64::NAN).map(|j| j.0), Ok(r#"{"N":"NaN"}"#.to_string()));
    }

    #[test]
    fn json_text_is_escaped_and_parses_back() {
        let tricky = "q\"b\\n\nt\tc\u{1}é";
        let text = Json::map(vec![
            (tricky.to_string(), Json::string(tricky.to_string())),
            ("l".to_string(), Json::list(vec![Json::null(), Json::boolean(false), Json::binary(&[255])])),
        ])
        .0;
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"M": {tricky: {"S": tricky}, "l": {"L": [{"NULL": true}, {"BOOL": false}, {"B": "/w=="}]}}})
        );
    }

    #[test]
    fn decimals_keep_every_digit_and_their_scale() {
        let d = |v: i128, s: i8| match decimal::<AttributeValue, i128>(v, s) {
            Ok(AttributeValue::N(n)) => n.to_string(),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            d(12_345_678_901_234_567_890_123_456_789_012_345_678, 10),
            "1234567890123456789012345678.9012345678"
        );
        assert_eq!(d(-5, 2), "-0.05");
        assert_eq!(d(7, -3), "7000");
        assert_eq!(d(0, 4), "0");
    }

    #[test]
    fn times_are_iso_8601_at_their_unit() {
        assert_eq!(timestamp(1_706_704_496_789, TimeUnit::Millisecond, true).unwrap(), "2024-01-31T12:34:56.789Z");
        assert_eq!(timestamp(1_706_704_496, TimeUnit::Second, false).unwrap(), "2024-01-31T12:34:56");
        assert_eq!(timestamp(-1, TimeUnit::Microsecond, true).unwrap(), "1969-12-31T23:59:59.999999Z");
        assert_eq!(time_of_day(45_296_000_000_001, TimeUnit::Nanosecond).unwrap(), "12:34:56.000000001");
        assert!(time_of_day(86_400, TimeUnit::Second).is_err());
    }
}
