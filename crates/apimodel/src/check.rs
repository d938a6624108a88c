//! The three stages of [`crate::validate_with`].

use std::sync::OnceLock;

use serde_json::{Map, Number, Value};

use crate::model::{Kind, Member, Operation, Service};
use crate::pattern::Pattern;
use crate::{shape, Options, SHAPES};

/// The Java package of DynamoDB's model classes, as its messages name them.
const JAVA_PACKAGE: &str = "com.amazonaws.dynamodb.v20120810";
/// The table-name pattern DynamoDB applies to a TableName that is not an ARN.
const TABLE_NAME_PATTERN: &str = "[a-zA-Z0-9_.-]+";
/// Shortest and longest table name that is not an ARN.
const TABLE_NAME_MIN: i64 = 3;
const TABLE_NAME_MAX: i64 = 255;
/// The prefix that makes a TableName an ARN (S163).
const ARN_PREFIX: &str = "arn:";

const EMPTY_ATTRIBUTE_VALUE: &str =
    "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes";
const SEVERAL_ATTRIBUTE_VALUE_TYPES: &str =
    "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes";

// ---------------------------------------------------------------- stage 1: deserialization (S92-S94)

/// Where a value sits: a structure's member, or a list element / map value.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Position {
    Field,
    Element,
}

/// The Java type DynamoDB's deserializer names for a shape.
fn java_type(index: u16) -> String {
    let s = shape(index);
    match s.kind {
        Kind::Structure(_) => format!("{JAVA_PACKAGE}.{}", s.name),
        Kind::List(e) => format!("java.util.List<{}>", java_type(e)),
        Kind::Map(_, v) => format!("java.util.Map<java.lang.String, {}>", java_type(v)),
        Kind::String => "java.lang.String".into(),
        Kind::Integer => "java.lang.Integer".into(),
        Kind::Long => "java.lang.Long".into(),
        Kind::Boolean => "java.lang.Boolean".into(),
        Kind::Double => "java.lang.Double".into(),
        Kind::Blob => "java.nio.ByteBuffer".into(),
        Kind::Timestamp => "java.util.Date".into(),
    }
}

/// The Jackson token name of a scalar JSON value.
fn token(v: &Value) -> &'static str {
    match v {
        Value::Bool(true) => "TRUE_VALUE",
        Value::Bool(false) => "FALSE_VALUE",
        Value::Number(n) if is_decimal(n) => "DECIMAL_VALUE",
        Value::Number(_) => "NUMBER_VALUE",
        _ => "STRING_VALUE",
    }
}

fn is_decimal(n: &Number) -> bool {
    n.to_string().bytes().any(|b| matches!(b, b'.' | b'e' | b'E'))
}

/// The strings a Boolean member accepts (S94).
pub(crate) fn boolean_text(s: &str) -> Option<bool> {
    match s.to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" => Some(true),
        "false" | "0" | "no" => Some(false),
        _ => None,
    }
}

/// DynamoDB's checks of a base64 Blob (S93): length first, then alphabet
/// and padding, then that the last character carries no stray bits.
fn check_base64(s: &str) -> Result<(), String> {
    let len = s.chars().count();
    if len % 4 != 0 {
        return Err(format!("Base64 encoded length is expected a multiple of 4 bytes but found: {len}"));
    }
    let bad = || "Invalid last non-pad Base64 character dectected".to_string();
    let bytes = s.as_bytes();
    let pad = bytes.iter().rev().take_while(|&&b| b == b'=').count();
    if pad > 2 {
        return Err(bad());
    }
    let data = &bytes[..bytes.len() - pad];
    let value = |b: u8| -> Option<u8> {
        match b {
            b'A'..=b'Z' => Some(b - b'A'),
            b'a'..=b'z' => Some(b - b'a' + 26),
            b'0'..=b'9' => Some(b - b'0' + 52),
            b'+' => Some(62),
            b'/' => Some(63),
            _ => None,
        }
    };
    let mut last = 0;
    for &b in data {
        last = value(b).ok_or_else(bad)?;
    }
    // With one pad the last character's low 2 bits are unused, with two the low 4.
    let stray = match pad {
        1 => last & 0b11,
        2 => last & 0b1111,
        _ => 0,
    };
    if stray != 0 || (pad > 0 && data.is_empty()) {
        return Err(bad());
    }
    Ok(())
}

fn deserialize_value(index: u16, v: &Value, position: Position) -> Result<(), String> {
    const MAP_FOUND: &str = "Start of structure or map found where not expected";
    const FIELD_TYPE: &str = "Unexpected field type";
    let s = shape(index);
    match (s.kind, v) {
        (_, Value::Null) => Ok(()),
        (Kind::Structure(members), Value::Object(map)) => deserialize_members(members, map),
        (Kind::Structure(_), Value::Array(_)) => {
            Err(format!("Unrecognized collection type class {}", java_type(index)))
        }
        (Kind::Structure(_), _) if position == Position::Element => Err("Unexpected value type in payload".into()),
        (Kind::Structure(_), _) => Err(FIELD_TYPE.into()),
        (Kind::List(e), Value::Array(items)) => {
            items.iter().try_for_each(|item| deserialize_value(e, item, Position::Element))
        }
        (Kind::List(_), Value::Object(_)) => Err(MAP_FOUND.into()),
        (Kind::List(_), _) => Err(FIELD_TYPE.into()),
        (Kind::Map(_, val), Value::Object(map)) => {
            map.values().try_for_each(|item| deserialize_value(val, item, Position::Element))
        }
        (Kind::Map(..), Value::Array(_)) => Err(format!("Unrecognized collection type {}", java_type(index))),
        (Kind::Map(..), _) => Err(FIELD_TYPE.into()),
        (_, Value::Object(_)) => Err(MAP_FOUND.into()),
        (_, Value::Array(_)) => Err(format!("Unrecognized collection type class {}", java_type(index))),
        (Kind::String, Value::String(_)) => Ok(()),
        (Kind::String, _) => Err(format!("{} cannot be converted to String", token(v))),
        (Kind::Integer | Kind::Long | Kind::Double | Kind::Timestamp, Value::Number(_)) => Ok(()),
        (Kind::Timestamp, Value::String(_)) => Ok(()),
        (Kind::Integer, _) => Err(format!("{} cannot be converted to Integer", token(v))),
        (Kind::Long, _) => Err(format!("{} cannot be converted to Long", token(v))),
        (Kind::Double, _) => Err(format!("{} cannot be converted to Double", token(v))),
        (Kind::Timestamp, _) => Err(format!("{} cannot be converted to Date", token(v))),
        (Kind::Boolean, Value::Bool(_)) => Ok(()),
        (Kind::Boolean, Value::String(text)) => match boolean_text(text) {
            Some(_) => Ok(()),
            None => Err("Unexpected token received from parser".into()),
        },
        (Kind::Boolean, _) => Err(format!("{} cannot be converted to Boolean", token(v))),
        (Kind::Blob, Value::String(text)) => check_base64(text),
        (Kind::Blob, _) => Err("only base-64-encoded strings are convertible to bytes".into()),
    }
}

fn deserialize_members(members: &[Member], map: &Map<String, Value>) -> Result<(), String> {
    // Unknown members are ignored, as DynamoDB ignores them.
    members.iter().try_for_each(|m| match map.get(m.name) {
        Some(v) => deserialize_value(m.shape, v, Position::Field),
        None => Ok(()),
    })
}

/// Stage 1: every member has a JSON type its shape accepts.
pub(crate) fn deserialize(op: &Operation, body: &Value) -> Result<(), String> {
    match body {
        Value::Object(_) => deserialize_value(op.input, body, Position::Field),
        _ => Err("Start of structure or map found where not expected".into()),
    }
}

// ---------------------------------------------------------------- stage 2: constraints (S87-S91)

/// How a violation shows the offending value.
enum Shown {
    Null,
    /// "Value at '...'" (S90's newer form).
    Hidden,
    Text(String),
}

struct Violation {
    shown: Shown,
    path: String,
    rule: String,
}

impl Violation {
    fn render(&self) -> String {
        let value = match &self.shown {
            Shown::Null => "Value null".to_string(),
            Shown::Hidden => "Value".to_string(),
            Shown::Text(t) => format!("Value '{t}'"),
        };
        format!("{value} at '{}' failed to satisfy constraint: {}", self.path, self.rule)
    }
}

/// The aggregated message (S88).
fn aggregate(violations: &[Violation]) -> String {
    let n = violations.len();
    let entries: Vec<String> = violations.iter().map(Violation::render).collect();
    format!("{n} validation error{} detected: {}", if n == 1 { "" } else { "s" }, entries.join("; "))
}

/// A member's value in a message. DynamoDB prints its Java objects, which
/// cannot be reproduced; lists of structures are summarised as the wire
/// layer summarises them (`[26 write requests]`, `[101 items]`), the rest is
/// shown the way Java shows lists and maps.
fn render_member(index: u16, v: &Value) -> String {
    match (shape(index).kind, v) {
        (Kind::List(e), Value::Array(items)) if matches!(shape(e).kind, Kind::Structure(_)) => {
            let noun = if shape(e).name == "WriteRequest" { "write requests" } else { "items" };
            format!("[{} {noun}]", items.len())
        }
        (Kind::Map(_, val), Value::Object(map)) => {
            let entries: Vec<String> =
                map.iter().map(|(k, item)| format!("{k}={}", render_member(val, item))).collect();
            format!("{{{}}}", entries.join(", "))
        }
        _ => render(v),
    }
}

/// A value as Java's `toString` would show it in a message.
fn render(v: &Value) -> String {
    let mut out = String::new();
    render_into(v, &mut out);
    out
}

fn render_into(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => out.push_str(s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                render_into(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(k);
                out.push('=');
                render_into(item, out);
            }
            out.push('}');
        }
    }
}

/// An integral member's value as DynamoDB shows it (a decimal is truncated
/// by the deserializer).
fn render_integral(n: &Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    match n.as_f64() {
        Some(f) if f.is_finite() && f.abs() < 9.0e15 => format!("{}", f.floor() as i64),
        _ => n.to_string(),
    }
}

/// lowerCamel path segment of a member name (S89).
fn lower_camel(name: &str) -> String {
    let mut chars = name.chars();
    match chars.next() {
        Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

fn join(path: &str, segment: &str) -> String {
    if path.is_empty() {
        segment.to_string()
    } else {
        format!("{path}.{segment}")
    }
}

/// Compiled patterns, by shape index.
fn patterns() -> &'static Vec<Option<Pattern>> {
    static PATTERNS: OnceLock<Vec<Option<Pattern>>> = OnceLock::new();
    PATTERNS.get_or_init(|| SHAPES.iter().map(|s| s.pattern.and_then(|p| Pattern::new(p).ok())).collect())
}

fn table_name_pattern() -> Option<&'static Pattern> {
    static PATTERN: OnceLock<Option<Pattern>> = OnceLock::new();
    PATTERN.get_or_init(|| Pattern::new(TABLE_NAME_PATTERN).ok()).as_ref()
}

/// A string shape's rules, as they apply to one value.
struct StringRules {
    min: Option<i64>,
    max: Option<i64>,
    pattern: Option<(&'static str, Option<&'static Pattern>)>,
}

fn string_rules(index: u16, text: &str) -> StringRules {
    let s = shape(index);
    // A TableArn member takes a table's ARN or its name; a name keeps the
    // name's rules (S91, S163), an empty one only breaks the ARN's minimum.
    if s.name == "TableArn" && !text.is_empty() && !text.starts_with(ARN_PREFIX) {
        return StringRules {
            min: Some(TABLE_NAME_MIN),
            max: Some(TABLE_NAME_MAX),
            pattern: Some((TABLE_NAME_PATTERN, table_name_pattern())),
        };
    }
    StringRules {
        min: s.min,
        max: s.max,
        pattern: s.pattern.map(|p| (p, patterns().get(usize::from(index)).and_then(Option::as_ref))),
    }
}

/// The rules a string breaks, in DynamoDB's order: pattern, then length.
fn string_violations(index: u16, text: &str) -> Vec<String> {
    let s = shape(index);
    let mut out = Vec::new();
    if !s.enums.is_empty() {
        if !s.enums.contains(&text) {
            out.push(format!("Member must satisfy enum value set: [{}]", s.enums.join(", ")));
        }
        return out;
    }
    let rules = string_rules(index, text);
    if let Some((source, Some(compiled))) = rules.pattern {
        if !compiled.matches(text) {
            out.push(format!("Member must satisfy regular expression pattern: {source}"));
        }
    }
    // Java measures strings in UTF-16 code units.
    let len = text.encode_utf16().count() as i64;
    out.extend(length_violations(rules.min, rules.max, len));
    out
}

fn length_violations(min: Option<i64>, max: Option<i64>, len: i64) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(min) = min.filter(|&m| len < m) {
        out.push(format!("Member must have length greater than or equal to {min}"));
    }
    if let Some(max) = max.filter(|&m| len > m) {
        out.push(format!("Member must have length less than or equal to {max}"));
    }
    out
}

/// Every rule of a shape, as "Map keys/value must satisfy constraint: [...]"
/// lists them: longest, shortest, pattern, enum.
fn all_rules(index: u16, sample: Option<&str>) -> Vec<String> {
    let s = shape(index);
    let (min, max, pattern) = match (s.kind, sample) {
        (Kind::String, Some(text)) => {
            let r = string_rules(index, text);
            (r.min, r.max, r.pattern.map(|(p, _)| p))
        }
        _ => (s.min, s.max, s.pattern),
    };
    let numeric = matches!(s.kind, Kind::Integer | Kind::Long | Kind::Double);
    let unit = if numeric { "value" } else { "length" };
    let mut out = Vec::new();
    if let Some(max) = max {
        out.push(format!("Member must have {unit} less than or equal to {max}"));
    }
    if let Some(min) = min {
        out.push(format!("Member must have {unit} greater than or equal to {min}"));
    }
    if let Some(p) = pattern {
        out.push(format!("Member must satisfy regular expression pattern: {p}"));
    }
    if !s.enums.is_empty() {
        out.push(format!("Member must satisfy enum value set: [{}]", s.enums.join(", ")));
    }
    out
}

/// The rules a map key or value breaks on its own (not inside it).
fn own_violations(index: u16, v: &Value) -> Vec<String> {
    let s = shape(index);
    match (s.kind, v) {
        (Kind::String, Value::String(text)) => string_violations(index, text),
        (Kind::List(_), Value::Array(items)) => length_violations(s.min, s.max, items.len() as i64),
        (Kind::Map(..), Value::Object(map)) => length_violations(s.min, s.max, map.len() as i64),
        (Kind::Integer | Kind::Long | Kind::Double, Value::Number(n)) => range_violations(index, n),
        _ => Vec::new(),
    }
}

fn range_violations(index: u16, n: &Number) -> Vec<String> {
    let s = shape(index);
    let Some(mut value) = n.as_f64() else { return Vec::new() };
    if !matches!(s.kind, Kind::Double) {
        value = value.floor();
    }
    let mut out = Vec::new();
    if let Some(min) = s.min.filter(|&m| value < m as f64) {
        out.push(format!("Member must have value greater than or equal to {min}"));
    }
    if let Some(max) = s.max.filter(|&m| value > m as f64) {
        out.push(format!("Member must have value less than or equal to {max}"));
    }
    out
}

struct Walk {
    out: Vec<Violation>,
}

impl Walk {
    fn push(&mut self, shown: Shown, path: &str, rule: String) {
        self.out.push(Violation { shown, path: path.to_string(), rule });
    }

    fn member(&mut self, m: &Member, map: &Map<String, Value>, path: &str) {
        let p = join(path, &lower_camel(m.name));
        match map.get(m.name).filter(|v| !v.is_null()) {
            None if m.required => self.push(Shown::Null, &p, "Member must not be null".into()),
            None => {}
            Some(v) => self.value(m.shape, v, &p),
        }
    }

    fn value(&mut self, index: u16, v: &Value, path: &str) {
        let s = shape(index);
        match (s.kind, v) {
            (Kind::Structure(members), Value::Object(map)) => {
                for m in members {
                    self.member(m, map, path);
                }
            }
            (Kind::List(e), Value::Array(items)) => {
                for rule in length_violations(s.min, s.max, items.len() as i64) {
                    self.push(Shown::Text(render_member(index, v)), path, rule);
                }
                for (i, item) in items.iter().enumerate() {
                    if !item.is_null() {
                        self.value(e, item, &format!("{path}.{}.member", i + 1));
                    }
                }
            }
            (Kind::Map(k, val), Value::Object(map)) => {
                for rule in length_violations(s.min, s.max, map.len() as i64) {
                    self.push(Shown::Text(render_member(index, v)), path, rule);
                }
                // Keys and values are reported once for the whole map, with
                // every rule of their shape (S89, dynalite's batch tests).
                if let Some(key) = map.keys().find(|key| !own_violations(k, &Value::String((*key).clone())).is_empty())
                {
                    let rules = all_rules(k, Some(key));
                    self.push(
                        Shown::Text(render_member(index, v)),
                        path,
                        format!("Map keys must satisfy constraint: [{}]", rules.join(", ")),
                    );
                }
                if map.values().any(|item| !own_violations(val, item).is_empty()) {
                    let rules = all_rules(val, None);
                    self.push(
                        Shown::Text(render_member(index, v)),
                        path,
                        format!("Map value must satisfy constraint: [{}]", rules.join(", ")),
                    );
                }
                let inner = shape(val);
                if matches!(inner.kind, Kind::Structure(_) | Kind::List(_) | Kind::Map(..)) {
                    for (key, item) in map {
                        if !item.is_null() {
                            self.value_inside(val, item, &format!("{path}.{key}.member"));
                        }
                    }
                }
            }
            (Kind::String, Value::String(text)) => {
                for rule in string_violations(index, text) {
                    self.push(Shown::Text(text.clone()), path, rule);
                }
            }
            (Kind::Integer | Kind::Long | Kind::Double, Value::Number(n)) => {
                let shown = if matches!(s.kind, Kind::Double) { n.to_string() } else { render_integral(n) };
                for rule in range_violations(index, n) {
                    self.push(Shown::Text(shown.clone()), path, rule);
                }
            }
            _ => {}
        }
    }

    /// A map value's insides: its own length was reported with the map.
    fn value_inside(&mut self, index: u16, v: &Value, path: &str) {
        let s = shape(index);
        match (s.kind, v) {
            (Kind::List(e), Value::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    if !item.is_null() {
                        self.value(e, item, &format!("{path}.{}.member", i + 1));
                    }
                }
            }
            (Kind::Map(_, val), Value::Object(map)) => {
                for (key, item) in map {
                    if !item.is_null() {
                        self.value_inside(val, item, &format!("{path}.{key}.member"));
                    }
                }
            }
            _ => self.value(index, v, path),
        }
    }
}

/// Newer forms DynamoDB uses for a few members (S90): no value, and the
/// member path in UpperCamel.
fn apply_quirks(op: &Operation, options: Options, violations: &mut [Violation]) {
    if op.service != Service::DynamoDb {
        return;
    }
    for v in violations.iter_mut() {
        if op.name == "Query" && options.query_limit_quirk && v.path == "limit" {
            v.shown = Shown::Hidden;
            v.path = "Limit".into();
        }
        if op.name == "BatchGetItem" && v.rule.starts_with("Member must have length") {
            let table = v.path.strip_prefix("requestItems.").and_then(|p| p.strip_suffix(".member.keys"));
            if let Some(table) = table {
                v.path = format!("RequestItems.{table}.member.Keys");
                v.shown = Shown::Hidden;
            }
        }
    }
}

/// Stage 2: every constraint of every member, reported together.
pub(crate) fn constraints(op: &Operation, body: &Value, options: Options) -> Result<(), String> {
    let Kind::Structure(members) = shape(op.input).kind else { return Ok(()) };
    let Some(map) = body.as_object() else { return Ok(()) };
    let mut walk = Walk { out: Vec::new() };
    // An invalid TableName stops the other members' checks (S87).
    if let Some(table) = members.iter().find(|m| m.name == "TableName") {
        if op.name == "CreateTable" && map.get("TableName").map_or(true, Value::is_null) {
            return Err("The parameter 'TableName' is required but was not present in the request".into());
        }
        walk.member(table, map, "");
        if !walk.out.is_empty() {
            return Err(aggregate(&walk.out));
        }
    }
    for m in members.iter().filter(|m| m.name != "TableName") {
        walk.member(m, map, "");
    }
    if walk.out.is_empty() {
        return Ok(());
    }
    apply_quirks(op, options, &mut walk.out);
    Err(aggregate(&walk.out))
}

// ---------------------------------------------------------------- stage 3: AttributeValue shapes

/// How an AttributeValue's error is worded where it sits.
#[derive(Clone, Copy)]
enum Context<'a> {
    Plain,
    /// `ExpressionAttributeValues contains invalid value: ... for key :k`.
    ExpressionValue(&'a str),
    /// `The provided starting key is invalid: ...`.
    StartKey,
}

fn wrap(context: Context<'_>, message: &str) -> String {
    match context {
        Context::Plain => message.to_string(),
        Context::ExpressionValue(key) => {
            format!("ExpressionAttributeValues contains invalid value: {message} for key {key}")
        }
        Context::StartKey => format!("The provided starting key is invalid: {message}"),
    }
}

fn attribute_walk(index: u16, v: &Value, context: Context<'_>) -> Result<(), String> {
    let s = shape(index);
    match (s.kind, v) {
        (Kind::Structure(members), Value::Object(map)) => {
            if s.name == "AttributeValue" {
                let set = members.iter().filter(|m| map.get(m.name).is_some_and(|x| !x.is_null())).count();
                if set == 0 {
                    return Err(wrap(context, EMPTY_ATTRIBUTE_VALUE));
                }
                if set > 1 {
                    return Err(wrap(context, SEVERAL_ATTRIBUTE_VALUE_TYPES));
                }
            }
            for m in members {
                if let Some(x) = map.get(m.name).filter(|x| !x.is_null()) {
                    let inner = match m.name {
                        "ExclusiveStartKey" => Context::StartKey,
                        _ => context,
                    };
                    if m.name == "ExpressionAttributeValues" {
                        if let Value::Object(values) = x {
                            if let Kind::Map(_, val) = shape(m.shape).kind {
                                for (key, item) in values {
                                    if !item.is_null() {
                                        attribute_walk(val, item, Context::ExpressionValue(key))?;
                                    }
                                }
                                continue;
                            }
                        }
                    }
                    attribute_walk(m.shape, x, inner)?;
                }
            }
            Ok(())
        }
        (Kind::List(e), Value::Array(items)) => {
            items.iter().filter(|x| !x.is_null()).try_for_each(|x| attribute_walk(e, x, context))
        }
        (Kind::Map(_, val), Value::Object(map)) => {
            map.values().filter(|x| !x.is_null()).try_for_each(|x| attribute_walk(val, x, context))
        }
        _ => Ok(()),
    }
}

/// Stage 3: every AttributeValue sets exactly one type.
pub(crate) fn attribute_values(op: &Operation, body: &Value) -> Result<(), String> {
    attribute_walk(op.input, body, Context::Plain)
}
