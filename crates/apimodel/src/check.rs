//! The three stages of [`crate::validate_with`].

use std::sync::OnceLock;

use serde_json::{Map, Number, Value};

use crate::model::{Kind, Member, Operation, Service, Shape};
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
    if !len.is_multiple_of(4) {
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

/// The first pass: stage 1's type checks, noting on the way the first
/// AttributeValue that stage 3 will refuse (reported only if stage 2 passes).
struct Deserialize {
    attribute_error: Option<String>,
    /// The longest map key in the body, in bytes (see [`constrained`]).
    longest_key: usize,
}

impl Deserialize {
    fn value<'v>(&mut self, index: u16, v: &'v Value, position: Position, context: Context<'v>) -> Result<(), String> {
        const MAP_FOUND: &str = "Start of structure or map found where not expected";
        const FIELD_TYPE: &str = "Unexpected field type";
        let s = shape(index);
        match (s.kind, v) {
            (_, Value::Null) => Ok(()),
            (Kind::Structure(members), Value::Object(map)) => {
                if s.name == "AttributeValue" && self.attribute_error.is_none() {
                    self.attribute_value(members, map, context);
                }
                self.members(members, map, context)
            }
            (Kind::Structure(_), Value::Array(_)) => {
                Err(format!("Unrecognized collection type class {}", java_type(index)))
            }
            (Kind::Structure(_), _) if position == Position::Element => Err("Unexpected value type in payload".into()),
            (Kind::Structure(_), _) => Err(FIELD_TYPE.into()),
            (Kind::List(e), Value::Array(items)) => {
                items.iter().try_for_each(|item| self.value(e, item, Position::Element, context))
            }
            (Kind::List(_), Value::Object(_)) => Err(MAP_FOUND.into()),
            (Kind::List(_), _) => Err(FIELD_TYPE.into()),
            (Kind::Map(_, val), Value::Object(map)) => map.iter().try_for_each(|(key, item)| {
                self.longest_key = self.longest_key.max(key.len());
                self.value(val, item, Position::Element, context)
            }),
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

    fn members<'v>(
        &mut self,
        members: &'static [Member],
        map: &'v Map<String, Value>,
        context: Context<'v>,
    ) -> Result<(), String> {
        // Unknown members are ignored, as DynamoDB ignores them.
        for_each_present(members, map, |m, v| match (m.name, v, shape(m.shape).kind) {
            ("ExpressionAttributeValues", Value::Object(values), Kind::Map(_, val)) => values
                .iter()
                .try_for_each(|(key, item)| self.value(val, item, Position::Element, Context::ExpressionValue(key))),
            ("ExclusiveStartKey", _, _) => self.value(m.shape, v, Position::Field, Context::StartKey),
            _ => self.value(m.shape, v, Position::Field, context),
        })
    }

    /// Stage 3's rule: exactly one type set (null members count as absent).
    fn attribute_value(&mut self, members: &'static [Member], map: &Map<String, Value>, context: Context<'_>) {
        let mut set = 0;
        let _ = for_each_present(members, map, |_, x| {
            set += usize::from(!x.is_null());
            Ok::<(), ()>(())
        });
        if set == 0 {
            self.attribute_error = Some(wrap(context, EMPTY_ATTRIBUTE_VALUE));
        } else if set > 1 {
            self.attribute_error = Some(wrap(context, SEVERAL_ATTRIBUTE_VALUE_TYPES));
        }
    }
}

/// Calls `f` for each model member present in `map`, in the model's order.
/// A small object (an AttributeValue has one entry) is scanned by its
/// entries rather than by looking up every member of the model.
fn for_each_present<'v, E>(
    members: &'static [Member],
    map: &'v Map<String, Value>,
    mut f: impl FnMut(&'static Member, &'v Value) -> Result<(), E>,
) -> Result<(), E> {
    const FEW: usize = 4;
    if map.len() <= FEW && map.len() < members.len() {
        let mut found: [(usize, Option<&'v Value>); FEW] = [(usize::MAX, None); FEW];
        let mut n = 0;
        for (k, v) in map {
            if let Some(i) = members.iter().position(|m| m.name == k) {
                found[n] = (i, Some(v));
                n += 1;
            }
        }
        found[..n].sort_unstable_by_key(|e| e.0);
        for &(i, v) in &found[..n] {
            if let (Some(m), Some(v)) = (members.get(i), v) {
                f(m, v)?;
            }
        }
        return Ok(());
    }
    for m in members {
        if let Some(v) = map.get(m.name) {
            f(m, v)?;
        }
    }
    Ok(())
}

/// What the first pass learnt besides stage 1's verdict.
pub(crate) struct FirstPass {
    /// Stage 3's verdict, reported only after stage 2.
    pub attribute_values: Result<(), String>,
    /// The longest map key, in bytes.
    pub longest_key: usize,
}

/// Stage 1: every member has a JSON type its shape accepts. The same walk
/// notes stage 3's verdict on the AttributeValues (exactly one type each),
/// so the body is walked once for both.
pub(crate) fn deserialize(op: &Operation, body: &Value) -> Result<FirstPass, String> {
    match body {
        Value::Object(_) => {
            let mut pass = Deserialize { attribute_error: None, longest_key: 0 };
            pass.value(op.input, body, Position::Field, Context::Plain)?;
            Ok(FirstPass { attribute_values: pass.attribute_error.map_or(Ok(()), Err), longest_key: pass.longest_key })
        }
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
pub(crate) fn render_member(index: u16, v: &Value) -> String {
    match (shape(index).kind, v) {
        // A key schema shows each element as its Java object (S5).
        (Kind::List(e), Value::Array(items)) if shape(e).name == "KeySchemaElement" => {
            let elements: Vec<String> = items.iter().map(|item| render_object(e, item)).collect();
            format!("[{}]", elements.join(", "))
        }
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

/// A structure as the Java object DynamoDB prints:
/// `KeySchemaElement(attributeName=pk, keyType=HASH)`, members in the
/// model's order, named in lowerCamel case, absent ones left out.
fn render_object(index: u16, v: &Value) -> String {
    let Kind::Structure(members) = shape(index).kind else { return render(v) };
    let fields: Vec<String> = members
        .iter()
        .filter_map(|m| {
            let value = v.get(m.name)?;
            let mut name = m.name.to_string();
            if let Some(first) = name.get(..1) {
                name.replace_range(..1, &first.to_ascii_lowercase());
            }
            Some(format!("{name}={}", render_member(m.shape, value)))
        })
        .collect();
    format!("{}({})", shape(index).name, fields.join(", "))
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

/// `table_name`: the value is a `TableName` member or a batch's table key,
/// which takes a table's ARN or its name (S163); a name keeps the name's
/// rules (S91), an empty one only breaks the ARN's minimum. (Members such
/// as `TableArn` that share the shape take only ARNs.)
fn string_rules(index: u16, text: &str, table_name: bool) -> StringRules {
    let s = shape(index);
    if table_name && s.name == "TableArn" && !text.is_empty() && !text.starts_with(ARN_PREFIX) {
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

/// Enumerations DynamoDB does not check against the model but refuses
/// with a message of its own, given by the operation: TableClass ("Invalid
/// table-class parameter provided. ...", ScyllaDB's Alternator suite run
/// against DynamoDB, test_tableclass.py).
const OWN_ENUM_CHECK: [&str; 1] = ["TableClass"];

/// The rules a string breaks, in DynamoDB's order: pattern, then length.
fn string_violations(index: u16, text: &str, table_name: bool) -> Vec<String> {
    let s = shape(index);
    let mut out = Vec::new();
    if OWN_ENUM_CHECK.contains(&s.name) {
        return out;
    }
    if !s.enums.is_empty() {
        if !s.enums.contains(&text) {
            out.push(format!("Member must satisfy enum value set: [{}]", s.enums.join(", ")));
        }
        return out;
    }
    let rules = string_rules(index, text, table_name);
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
fn all_rules(index: u16, sample: Option<&str>, table_name: bool) -> Vec<String> {
    let s = shape(index);
    let (min, max, pattern) = match (s.kind, sample) {
        (Kind::String, Some(text)) => {
            let r = string_rules(index, text, table_name);
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
        (Kind::String, Value::String(text)) => string_violations(index, text, false),
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

/// A member's path, built only when a violation names it.
#[derive(Clone, Copy)]
enum Path<'a> {
    Root,
    /// A structure member, shown in lowerCamel.
    Member(&'a Path<'a>, &'static str),
    /// A list element, 1-based, then `.member`.
    Index(&'a Path<'a>, usize),
    /// A map entry: its key, then `.member`.
    Key(&'a Path<'a>, &'a str),
}

impl Path<'_> {
    fn render(&self) -> String {
        fn go(p: &Path<'_>, out: &mut String) {
            let (parent, segment) = match *p {
                Path::Root => return,
                Path::Member(parent, name) => (parent, lower_camel(name)),
                Path::Index(parent, i) => (parent, format!("{i}.member")),
                Path::Key(parent, key) => (parent, format!("{key}.member")),
            };
            go(parent, out);
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&segment);
        }
        let mut out = String::new();
        go(self, &mut out);
        out
    }
}

/// A map key only a key of this many bytes could break (AttributeName's
/// 65535) is not worth descending for when no key in the body is that long.
const LONG_KEY: i64 = 65535;

/// Whether a shape, or anything inside it, carries a constraint; the walk
/// skips the rest, keeping it cheap on the request path. With `short_keys`
/// (no map key in the body is longer than [`LONG_KEY`] bytes, so none is
/// longer in UTF-16 units), a key shape whose only rule is a maximum of at
/// least [`LONG_KEY`] cannot be broken, which lets the walk skip every
/// AttributeValue (their `M` keys are such a shape).
fn constrained(index: u16, short_keys: bool) -> bool {
    static FULL: OnceLock<Vec<bool>> = OnceLock::new();
    static SHORT_KEYS: OnceLock<Vec<bool>> = OnceLock::new();
    let table = if short_keys {
        SHORT_KEYS.get_or_init(|| constraint_table(true))
    } else {
        FULL.get_or_init(|| constraint_table(false))
    };
    table.get(usize::from(index)).copied().unwrap_or(true)
}

/// Shapes DynamoDB's shape validation does not look into, and the
/// operations check with texts of their own (ack-api-quirks DDB-TABLE-107,
/// DDB-BACKUP-012 and DDB-TABLE-457, live 2026-10): a tag's Key and Value
/// ("The Tag Key provided is invalid, Key: null" for a missing Key, not
/// "Member must not be null"), a BackupArn ("Invalid Backup ARN" for an
/// empty one, not its 37-character minimum).
const CHECKED_BY_OPERATION: [&str; 3] = ["Tag", "TagKeyString", "BackupArn"];

/// Structures whose members' violations DynamoDB lists in an order other
/// than the model's, as observed (its order is its own Java one, which the
/// model does not carry): ack-api-quirks DDB-TABLE-038 (ProvisionedThroughput
/// 0/0: the write units first) and DDB-TABLE-457 (TimeToLiveSpecification
/// {}: the attribute name first; AttributeDefinitions [{}]: the type first).
const MEMBER_DISPLAY_ORDER: [(&str, [&str; 2]); 3] = [
    ("ProvisionedThroughput", ["WriteCapacityUnits", "ReadCapacityUnits"]),
    ("TimeToLiveSpecification", ["AttributeName", "Enabled"]),
    ("AttributeDefinition", ["AttributeType", "AttributeName"]),
];

/// `members` in the order DynamoDB reports them for structure `shape`.
fn in_display_order<'m>(shape: &str, members: &'m [Member]) -> Vec<&'m Member> {
    let mut ordered: Vec<&Member> = members.iter().collect();
    if let Some((_, order)) = MEMBER_DISPLAY_ORDER.iter().find(|(name, _)| *name == shape) {
        ordered.sort_by_key(|m| order.iter().position(|n| *n == m.name).unwrap_or(order.len()));
    }
    ordered
}

/// Members of one operation its own checks cover instead of the shape's:
/// Contributor Insights' IndexName ("IndexName must be at least 3
/// characters long and at most 255 characters long", DDB-TABLE-457).
const MEMBERS_CHECKED_BY_OPERATION: [(&str, &str); 2] =
    [("DescribeContributorInsights", "IndexName"), ("UpdateContributorInsights", "IndexName")];

fn constraint_table(short_keys: bool) -> Vec<bool> {
    let own = |s: &Shape| {
        !CHECKED_BY_OPERATION.contains(&s.name)
            && (s.min.is_some() || s.max.is_some() || s.pattern.is_some() || !s.enums.is_empty())
    };
    let mut c: Vec<bool> = SHAPES.iter().map(own).collect();
    let key_constrained = |c: &[bool], k: u16| {
        let s = shape(k);
        let harmless = short_keys
            && s.min.is_none()
            && s.pattern.is_none()
            && s.enums.is_empty()
            && s.max.is_some_and(|m| m >= LONG_KEY);
        !harmless && c[usize::from(k)]
    };
    // Fixpoint over the (recursive) shape graph.
    loop {
        let mut changed = false;
        for (i, s) in SHAPES.iter().enumerate() {
            if c[i] || CHECKED_BY_OPERATION.contains(&s.name) {
                continue;
            }
            let inner = match s.kind {
                Kind::Structure(members) => members.iter().any(|m| m.required || c[usize::from(m.shape)]),
                Kind::List(e) => c[usize::from(e)],
                Kind::Map(k, v) => key_constrained(&c, k) || c[usize::from(v)],
                _ => false,
            };
            if inner {
                c[i] = true;
                changed = true;
            }
        }
        if !changed {
            return c;
        }
    }
}

struct Walk {
    out: Vec<Violation>,
    /// See [`constrained`].
    short_keys: bool,
}

impl Walk {
    fn push(&mut self, shown: Shown, path: &Path<'_>, rule: String) {
        self.out.push(Violation { shown, path: path.render(), rule });
    }

    fn member(&mut self, m: &Member, map: &Map<String, Value>, parent: &Path<'_>) {
        let path = Path::Member(parent, m.name);
        match map.get(m.name).filter(|v| !v.is_null()) {
            None if m.required => self.push(Shown::Null, &path, "Member must not be null".into()),
            None => {}
            Some(v) => self.value(m.shape, v, &path),
        }
    }

    fn value(&mut self, index: u16, v: &Value, path: &Path<'_>) {
        if !constrained(index, self.short_keys) {
            return;
        }
        let s = shape(index);
        match (s.kind, v) {
            (Kind::Structure(members), Value::Object(map)) => {
                if members.iter().any(|m| m.required) {
                    for m in in_display_order(s.name, members) {
                        self.member(m, map, path);
                    }
                } else {
                    let _ = for_each_present(members, map, |m, x| {
                        if !x.is_null() {
                            self.value(m.shape, x, &Path::Member(path, m.name));
                        }
                        Ok::<(), ()>(())
                    });
                }
            }
            (Kind::List(e), Value::Array(items)) => {
                for rule in length_violations(s.min, s.max, items.len() as i64) {
                    self.push(Shown::Text(render_member(index, v)), path, rule);
                }
                self.elements(e, items, path);
            }
            (Kind::Map(k, val), Value::Object(map)) => {
                for rule in length_violations(s.min, s.max, map.len() as i64) {
                    self.push(Shown::Text(render_member(index, v)), path, rule);
                }
                // Keys and values are reported once for the whole map, with
                // every rule of their shape (S89, dynalite's batch tests).
                if let Some(key) = map.keys().find(|key| !string_violations(k, key, true).is_empty()) {
                    let rules = all_rules(k, Some(key), true);
                    self.push(
                        Shown::Text(render_member(index, v)),
                        path,
                        format!("Map keys must satisfy constraint: [{}]", rules.join(", ")),
                    );
                }
                if map.values().any(|item| !own_violations(val, item).is_empty()) {
                    let rules = all_rules(val, None, false);
                    self.push(
                        Shown::Text(render_member(index, v)),
                        path,
                        format!("Map value must satisfy constraint: [{}]", rules.join(", ")),
                    );
                }
                self.entries(val, map, path);
            }
            (Kind::String, Value::String(text)) => {
                let table_name = matches!(path, Path::Member(_, "TableName"));
                for rule in string_violations(index, text, table_name) {
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

    fn elements(&mut self, e: u16, items: &[Value], path: &Path<'_>) {
        for (i, item) in items.iter().enumerate() {
            if !item.is_null() {
                self.value(e, item, &Path::Index(path, i + 1));
            }
        }
    }

    /// A map's values below their own rules (which were reported with the map).
    fn entries(&mut self, val: u16, map: &Map<String, Value>, path: &Path<'_>) {
        if !constrained(val, self.short_keys) {
            return;
        }
        for (key, item) in map {
            let entry = Path::Key(path, key);
            match (shape(val).kind, item) {
                (_, Value::Null) => {}
                (Kind::Structure(_), _) => self.value(val, item, &entry),
                (Kind::List(e), Value::Array(items)) => self.elements(e, items, &entry),
                (Kind::Map(_, inner), Value::Object(m)) => self.entries(inner, m, &entry),
                _ => {}
            }
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
pub(crate) fn constraints(op: &Operation, body: &Value, options: Options, longest_key: usize) -> Result<(), String> {
    let Kind::Structure(members) = shape(op.input).kind else { return Ok(()) };
    let Some(map) = body.as_object() else { return Ok(()) };
    let short_keys = i64::try_from(longest_key).is_ok_and(|n| n <= LONG_KEY);
    let mut walk = Walk { out: Vec::new(), short_keys };
    // An invalid TableName stops the other members' checks (S87).
    if let Some(table) = members.iter().find(|m| m.name == "TableName") {
        if op.name == "CreateTable" && map.get("TableName").is_none_or(Value::is_null) {
            return Err("The parameter 'TableName' is required but was not present in the request".into());
        }
        walk.member(table, map, &Path::Root);
        if !walk.out.is_empty() {
            return Err(aggregate(&walk.out));
        }
    }
    let own_check = |m: &Member| MEMBERS_CHECKED_BY_OPERATION.contains(&(op.name, m.name));
    for m in members.iter().filter(|m| m.name != "TableName" && !own_check(m)) {
        walk.member(m, map, &Path::Root);
    }
    if walk.out.is_empty() {
        return Ok(());
    }
    apply_quirks(op, options, &mut walk.out);
    Err(aggregate(&walk.out))
}

// ---------------------------------------------------------------- stage 3: AttributeValue shapes
// (checked during the first pass, reported after stage 2)

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
