//! DynamoDB's legacy (pre-expression) parameters, validated with DynamoDB's
//! messages and translated into expressions, so that the engine stays
//! expression-only:
//!
//! | legacy parameter                                      | becomes                  |
//! |-------------------------------------------------------|--------------------------|
//! | `Expected` (+ `ConditionalOperator`)                  | `ConditionExpression`    |
//! | `AttributeUpdates`                                    | `UpdateExpression`       |
//! | `KeyConditions`                                       | `KeyConditionExpression` |
//! | `QueryFilter`, `ScanFilter` (+ `ConditionalOperator`) | `FilterExpression`       |
//! | `AttributesToGet`                                     | `ProjectionExpression`   |
//!
//! Attribute names and values go through generated placeholders (`#lg0`,
//! `:lg0`, ...), skipping any the client's own maps use (a Query may carry
//! KeyConditions beside a FilterExpression), merged into the request's
//! `ExprArgs`. The translation keeps the legacy semantics where they differ
//! from the expressions': NE is true on a missing attribute (`<>` is too),
//! NOT_CONTAINS is false on one, NULL and NOT_NULL test existence, ADD of a
//! list appends, DELETE without a value removes the attribute, and
//! AttributeUpdates made only of DELETE actions leave a missing item
//! missing (`keep_missing`, the one engine flag this needs).
//!
//! Limits: the generated expressions are subject to the expression quotas
//! (4 KB of text, 300 operators in an update), which DynamoDB does not
//! apply to legacy parameters. Names and values are placeholders, so only
//! the number of conditions or updates counts: up to about 190 conditions
//! of one Expected or filter map, 500 values of one IN, 240 AttributeUpdates
//! (70 when they are ADDs of lists) fit.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use dynaburst_engine::{ExprArgs, KeyRole, Names, Select, Values, WriteOptions};
use dynaburst_model::{AttributeValue, ScalarType, ValueType};
use serde_json::Value;

use crate::error::{ApiError, ErrorKind};
use crate::request::{Req, Violations};
use crate::value::{parse_value, wrong_json_type};

/// The stem of generated placeholders: `#lg0`, `:lg0`, ...
const PLACEHOLDER_STEM: &str = "lg";
/// Most operands one generated `IN (...)` takes: DynamoDB's quota for
/// expressions (`dynaburst_expr::MAX_IN_OPERANDS`; `wire` does not link
/// `expr`). A longer legacy IN list becomes several INs joined by OR.
const MAX_IN_OPERANDS: usize = 100;

/// ComparisonOperator's values as DynamoDB lists them in constraint messages.
pub const COMPARISON_OPERATOR_SET: &str =
    "[IN, NULL, BETWEEN, LT, NOT_CONTAINS, EQ, GT, NOT_NULL, NE, LE, BEGINS_WITH, GE, CONTAINS]";
/// ConditionalOperator's values as DynamoDB lists them.
pub const CONDITIONAL_OPERATOR_SET: &str = "[OR, AND]";
/// AttributeValueUpdate.Action's values as DynamoDB lists them.
pub const ATTRIBUTE_ACTION_SET: &str = "[ADD, DELETE, PUT]";

/// The expression engine's text for a runtime type error in an update.
const INCORRECT_OPERAND_TYPE: &str = "An operand in the update expression has an incorrect data type";
/// DynamoDB's text for the same error caused by AttributeUpdates.
const TYPE_MISMATCH: &str = "Type mismatch for attribute to update";

/// An operation that takes legacy parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    PutItem,
    DeleteItem,
    UpdateItem,
    GetItem,
    /// One table's KeysAndAttributes of a BatchGetItem.
    BatchGetItem,
    Query,
    Scan,
}

impl Operation {
    /// Its (non-expression, expression) parameters, in the order DynamoDB
    /// lists them in the mixing message.
    fn parameters(self) -> (&'static [&'static str], &'static [&'static str]) {
        match self {
            Operation::PutItem | Operation::DeleteItem => {
                (&["Expected", "ConditionalOperator"], &["ConditionExpression"])
            }
            Operation::UpdateItem => {
                (&["AttributeUpdates", "Expected", "ConditionalOperator"], &["UpdateExpression", "ConditionExpression"])
            }
            Operation::GetItem | Operation::BatchGetItem => (&["AttributesToGet"], &["ProjectionExpression"]),
            Operation::Query => (
                &["AttributesToGet", "QueryFilter", "ConditionalOperator", "KeyConditions"],
                &["ProjectionExpression", "FilterExpression", "KeyConditionExpression"],
            ),
            Operation::Scan => (
                &["AttributesToGet", "ScanFilter", "ConditionalOperator"],
                &["ProjectionExpression", "FilterExpression"],
            ),
        }
    }
}

/// The rules for mixing legacy and expression parameters, and for
/// placeholders without expressions, in DynamoDB's order: legacy and
/// expression parameters together are refused (KeyConditions counts only
/// beside a KeyConditionExpression); then ExpressionAttributeNames without
/// any expression; then ExpressionAttributeValues without an expression
/// that takes values (ProjectionExpression does not).
pub fn check_mixing(req: &Req, operation: Operation) -> Result<(), ApiError> {
    let (legacy, expressions) = operation.parameters();
    let present = |name: &&str| req.get(name).is_some();
    let used_expressions: Vec<&str> = expressions.iter().copied().filter(present).collect();
    if !used_expressions.is_empty() {
        let key_conditions_exempt = req.get("KeyConditionExpression").is_none();
        let used_legacy: Vec<&str> = legacy
            .iter()
            .copied()
            .filter(present)
            .filter(|name| !(*name == "KeyConditions" && key_conditions_exempt))
            .collect();
        if !used_legacy.is_empty() {
            return Err(ApiError::validation(format!(
                "Can not use both expression and non-expression parameters in the same request: Non-expression parameters: {{{}}} Expression parameters: {{{}}}",
                used_legacy.join(", "),
                used_expressions.join(", ")
            )));
        }
    }
    if req.get("ExpressionAttributeNames").is_some() && used_expressions.is_empty() {
        return Err(ApiError::validation("ExpressionAttributeNames can only be specified when using expressions"));
    }
    let value_expressions: Vec<&str> =
        expressions.iter().copied().filter(|name| *name != "ProjectionExpression").collect();
    if !value_expressions.is_empty()
        && req.get("ExpressionAttributeValues").is_some()
        && !value_expressions.iter().any(present)
    {
        return Err(ApiError::validation(format!(
            "ExpressionAttributeValues can only be specified when using expressions: {} {} null",
            value_expressions.join(" and "),
            if value_expressions.len() > 1 { "are" } else { "is" }
        )));
    }
    Ok(())
}

/// A legacy ComparisonOperator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Comparison {
    Eq,
    Ne,
    Le,
    Lt,
    Ge,
    Gt,
    NotNull,
    Null,
    Contains,
    NotContains,
    BeginsWith,
    In,
    Between,
}

impl Comparison {
    const ALL: [Comparison; 13] = [
        Comparison::Eq,
        Comparison::Ne,
        Comparison::Le,
        Comparison::Lt,
        Comparison::Ge,
        Comparison::Gt,
        Comparison::NotNull,
        Comparison::Null,
        Comparison::Contains,
        Comparison::NotContains,
        Comparison::BeginsWith,
        Comparison::In,
        Comparison::Between,
    ];

    /// Its name in requests and messages.
    pub fn name(self) -> &'static str {
        match self {
            Comparison::Eq => "EQ",
            Comparison::Ne => "NE",
            Comparison::Le => "LE",
            Comparison::Lt => "LT",
            Comparison::Ge => "GE",
            Comparison::Gt => "GT",
            Comparison::NotNull => "NOT_NULL",
            Comparison::Null => "NULL",
            Comparison::Contains => "CONTAINS",
            Comparison::NotContains => "NOT_CONTAINS",
            Comparison::BeginsWith => "BEGINS_WITH",
            Comparison::In => "IN",
            Comparison::Between => "BETWEEN",
        }
    }

    /// The operator named `text` (case-sensitive).
    pub fn parse(text: &str) -> Option<Comparison> {
        Comparison::ALL.into_iter().find(|c| c.name() == text)
    }

    /// Whether it takes `n` values: none for NULL and NOT_NULL, two for
    /// BETWEEN, at least one for IN, one for the others.
    fn takes(self, n: usize) -> bool {
        match self {
            Comparison::Null | Comparison::NotNull => n == 0,
            Comparison::In => n >= 1,
            Comparison::Between => n == 2,
            _ => n == 1,
        }
    }

    /// Whether a request value of type `t` is valid for it: EQ and NE take
    /// any type (lists, maps and booleans included), BEGINS_WITH S or B,
    /// the others S, N or B.
    fn accepts(self, t: ValueType) -> bool {
        match self {
            Comparison::Eq | Comparison::Ne | Comparison::Null | Comparison::NotNull => true,
            Comparison::BeginsWith => matches!(t, ValueType::S | ValueType::B),
            _ => matches!(t, ValueType::S | ValueType::N | ValueType::B),
        }
    }

    /// Whether KeyConditions may use it.
    fn indexable(self) -> bool {
        matches!(
            self,
            Comparison::Eq
                | Comparison::Le
                | Comparison::Lt
                | Comparison::Ge
                | Comparison::Gt
                | Comparison::BeginsWith
                | Comparison::Between
        )
    }

    /// The expression comparator of the six comparisons.
    fn symbol(self) -> Option<&'static str> {
        Some(match self {
            Comparison::Eq => "=",
            Comparison::Ne => "<>",
            Comparison::Le => "<=",
            Comparison::Lt => "<",
            Comparison::Ge => ">=",
            Comparison::Gt => ">",
            _ => return None,
        })
    }
}

/// One legacy condition on one top-level attribute.
#[derive(Clone, Debug, PartialEq)]
pub struct Condition {
    pub attribute: String,
    pub op: Comparison,
    pub values: Vec<AttributeValue>,
}

/// "One or more parameter values were invalid: <detail>".
fn invalid(detail: impl std::fmt::Display) -> ApiError {
    ApiError::validation(format!("One or more parameter values were invalid: {detail}"))
}

/// Records "Value 'x' at 'member' failed to satisfy constraint: Member
/// must satisfy enum value set: [...]".
fn enum_violation(violations: &mut Violations, value: &str, member: &str, set: &str) {
    violations.add(&format!("'{value}'"), member, &format!("Member must satisfy enum value set: {set}"));
}

/// The order of two values of one scalar type (see
/// [`AttributeValue::scalar_order`]).
fn order(a: &AttributeValue, b: &AttributeValue) -> Option<Ordering> {
    a.scalar_order(b)
}

/// The checks on a condition's request values, in DynamoDB's order: their
/// number, one type for all, a type the operator takes, BETWEEN's order.
fn check_values(op: Comparison, values: &[AttributeValue]) -> Result<(), ApiError> {
    if !op.takes(values.len()) {
        return Err(invalid(format!("Invalid number of argument(s) for the {} ComparisonOperator", op.name())));
    }
    if let Some(first) = values.first() {
        let t = first.value_type();
        if values.iter().any(|v| v.value_type() != t) {
            return Err(invalid("AttributeValues inside AttributeValueList must be of same type"));
        }
        if !op.accepts(t) {
            return Err(invalid(format!(
                "ComparisonOperator {} is not valid for {} AttributeValue type",
                op.name(),
                t.descriptor()
            )));
        }
    }
    if let (Comparison::Between, [low, high]) = (op, values) {
        if order(low, high) == Some(Ordering::Greater) {
            return Err(ApiError::validation(
                "The BETWEEN condition was provided a range where the lower bound is greater than the upper bound",
            ));
        }
    }
    Ok(())
}

/// A map member's entries (`Expected`, `QueryFilter`, ...).
fn map_of(v: &Value) -> Result<&serde_json::Map<String, Value>, ApiError> {
    v.as_object().ok_or_else(|| wrong_json_type(v, "Map"))
}

/// AttributeValueList, absent meaning empty.
fn value_list(r: &Req) -> Result<Vec<AttributeValue>, ApiError> {
    match r.get("AttributeValueList") {
        None => Ok(Vec::new()),
        Some(v) => v.as_array().ok_or_else(|| wrong_json_type(v, "List"))?.iter().map(parse_value).collect(),
    }
}

/// One entry of a map of conditions after the constraint phase: its
/// attribute, its operator (None when absent, or when it broke a
/// constraint and the request is refused anyway), and the entry itself.
struct Entry<'a> {
    attribute: &'a str,
    op: Option<Comparison>,
    spec: Req<'a>,
}

/// The entries of a map member (`Expected`, `QueryFilter`, ...), each an object.
fn entries<'a>(v: &'a Value) -> Result<Vec<(&'a str, Req<'a>)>, ApiError> {
    map_of(v)?.iter().map(|(attribute, spec)| Ok((attribute.as_str(), Req::new(spec)?))).collect()
}

/// The constraint phase of a map of attribute names to `Condition`s
/// (QueryFilter, ScanFilter, KeyConditions; `member` is its constraint
/// path, `scanFilter`): ComparisonOperator is required and one of the enum.
fn condition_entries<'a>(v: &'a Value, member: &str, violations: &mut Violations) -> Result<Vec<Entry<'a>>, ApiError> {
    let mut out = Vec::new();
    for (attribute, spec) in entries(v)? {
        let path = format!("{member}.{attribute}.member.comparisonOperator");
        let op = match spec.opt_str("ComparisonOperator")? {
            None => {
                violations.add("null", &path, "Member must not be null");
                None
            }
            Some(text) => {
                let op = Comparison::parse(text);
                if op.is_none() {
                    enum_violation(violations, text, &path, COMPARISON_OPERATOR_SET);
                }
                op
            }
        };
        out.push(Entry { attribute, op, spec });
    }
    Ok(out)
}

/// The semantic phase of such a map: each entry's values.
fn conditions(entries: &[Entry]) -> Result<Vec<Condition>, ApiError> {
    let mut conditions = Vec::with_capacity(entries.len());
    for entry in entries {
        let Some(op) = entry.op else { continue };
        let values = value_list(&entry.spec)?;
        check_values(op, &values)?;
        conditions.push(Condition { attribute: entry.attribute.to_string(), op, values });
    }
    Ok(conditions)
}

/// The constraint phase of Expected: ComparisonOperator, when given, is one
/// of the enum; Exists is a boolean.
fn expected_entries<'a>(v: &'a Value, violations: &mut Violations) -> Result<Vec<Entry<'a>>, ApiError> {
    let mut out = Vec::new();
    for (attribute, spec) in entries(v)? {
        let op = match spec.opt_str("ComparisonOperator")? {
            None => None,
            Some(text) => {
                let op = Comparison::parse(text);
                if op.is_none() {
                    let path = format!("expected.{attribute}.member.comparisonOperator");
                    enum_violation(violations, text, &path, COMPARISON_OPERATOR_SET);
                }
                op
            }
        };
        spec.opt_bool("Exists")?;
        out.push(Entry { attribute, op, spec });
    }
    Ok(out)
}

/// The semantic phase of Expected: each entry either `{Value, Exists}` (a
/// Value alone, or with Exists true, is EQ; Exists false is NULL) or
/// `{ComparisonOperator, AttributeValueList}` (or ComparisonOperator with a
/// single Value).
fn expected_conditions(entries: &[Entry]) -> Result<Vec<Condition>, ApiError> {
    let mut conditions = Vec::with_capacity(entries.len());
    for Entry { attribute, op, spec: r } in entries {
        let has_list = r.get("AttributeValueList").is_some();
        let value = r.get("Value").map(parse_value).transpose()?;
        let exists = r.opt_bool("Exists")?;
        if has_list && value.is_some() {
            return Err(invalid(format!(
                "Value and AttributeValueList cannot be used together for Attribute: {attribute}"
            )));
        }
        let (op, values) = match *op {
            Some(op) => {
                if exists.is_some() {
                    return Err(invalid(format!(
                        "Exists and ComparisonOperator cannot be used together for Attribute: {attribute}"
                    )));
                }
                if !matches!(op, Comparison::Null | Comparison::NotNull) && !has_list && value.is_none() {
                    return Err(invalid(format!(
                        "Value or AttributeValueList must be used with ComparisonOperator: {} for Attribute: {attribute}",
                        op.name()
                    )));
                }
                let values = if has_list { value_list(r)? } else { value.into_iter().collect() };
                check_values(op, &values)?;
                (op, values)
            }
            None if has_list => {
                return Err(invalid(format!(
                    "AttributeValueList can only be used with a ComparisonOperator for Attribute: {attribute}"
                )))
            }
            None => match (exists, value) {
                (None | Some(true), None) => {
                    return Err(invalid(format!(
                        "Value must be provided when Exists is {} for Attribute: {attribute}",
                        if exists.is_none() { "null" } else { "true" }
                    )))
                }
                (Some(false), Some(_)) => {
                    return Err(invalid(format!(
                        "Value cannot be used when Exists is false for Attribute: {attribute}"
                    )))
                }
                (Some(false), None) => (Comparison::Null, Vec::new()),
                (_, Some(v)) => (Comparison::Eq, vec![v]),
            },
        };
        conditions.push(Condition { attribute: attribute.to_string(), op, values });
    }
    Ok(conditions)
}

/// How a map's conditions combine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Joiner {
    And,
    Or,
}

impl Joiner {
    fn keyword(self) -> &'static str {
        match self {
            Joiner::And => " AND ",
            Joiner::Or => " OR ",
        }
    }
}

/// The constraint phase of ConditionalOperator: None when absent.
fn conditional_operator(req: &Req, violations: &mut Violations) -> Result<Option<Joiner>, ApiError> {
    Ok(match req.opt_str("ConditionalOperator")? {
        None => None,
        Some("AND") => Some(Joiner::And),
        Some("OR") => Some(Joiner::Or),
        Some(other) => {
            enum_violation(violations, other, "conditionalOperator", CONDITIONAL_OPERATOR_SET);
            Some(Joiner::And)
        }
    })
}

/// The semantic phase: a ConditionalOperator needs the Expected or filter
/// map it joins (`conditions` entries; None: no map) to hold two or more.
fn joiner(operator: Option<Joiner>, conditions: Option<usize>) -> Result<Joiner, ApiError> {
    let Some(joiner) = operator else { return Ok(Joiner::And) };
    match conditions.unwrap_or(0) {
        0 => Err(ApiError::validation("ConditionalOperator cannot be used without Filter or Expected")),
        1 => Err(ApiError::validation(
            "ConditionalOperator can only be used when Filter or Expected has two or more elements",
        )),
        _ => Ok(joiner),
    }
}

/// Makes placeholders, skipping the client's, and the expressions using them.
struct Generator {
    taken: HashSet<String>,
    names: Names,
    values: Values,
    name_of: HashMap<String, String>,
    next: usize,
}

impl Generator {
    /// A generator for `req`, whose own placeholders it avoids.
    fn new(req: &Req) -> Generator {
        let mut taken = HashSet::new();
        for member in ["ExpressionAttributeNames", "ExpressionAttributeValues"] {
            if let Some(map) = req.get(member).and_then(Value::as_object) {
                taken.extend(map.keys().cloned());
            }
        }
        Generator { taken, names: Names::new(), values: Values::new(), name_of: HashMap::new(), next: 0 }
    }

    /// A fresh placeholder with this sigil.
    fn fresh(&mut self, sigil: char) -> String {
        loop {
            let candidate = format!("{sigil}{PLACEHOLDER_STEM}{}", self.next);
            self.next += 1;
            if !self.taken.contains(&candidate) {
                return candidate;
            }
        }
    }

    /// The name placeholder of `attribute` (one per attribute).
    fn name(&mut self, attribute: &str) -> String {
        if let Some(p) = self.name_of.get(attribute) {
            return p.clone();
        }
        let p = self.fresh('#');
        self.names.insert(p.clone(), attribute.to_string());
        self.name_of.insert(attribute.to_string(), p.clone());
        p
    }

    /// A value placeholder for `value`.
    fn value(&mut self, value: AttributeValue) -> String {
        let p = self.fresh(':');
        self.values.insert(p.clone(), value);
        p
    }

    /// One condition as an expression (unparenthesized: DynamoDB refuses
    /// redundant parentheses).
    fn condition(&mut self, c: &Condition) -> String {
        let n = self.name(&c.attribute);
        let mut values: Vec<String> = c.values.iter().cloned().map(|v| self.value(v)).collect();
        let first = if values.is_empty() { String::new() } else { values.remove(0) };
        if let Some(symbol) = c.op.symbol() {
            return format!("{n} {symbol} {first}");
        }
        match c.op {
            Comparison::NotNull => format!("attribute_exists({n})"),
            Comparison::Null => format!("attribute_not_exists({n})"),
            Comparison::Contains => format!("contains({n}, {first})"),
            Comparison::NotContains => format!("attribute_exists({n}) AND NOT contains({n}, {first})"),
            Comparison::BeginsWith => format!("begins_with({n}, {first})"),
            Comparison::Between => {
                format!("{n} BETWEEN {first} AND {}", values.first().map(String::as_str).unwrap_or_default())
            }
            _ => {
                values.insert(0, first);
                let ins: Vec<String> =
                    values.chunks(MAX_IN_OPERANDS).map(|chunk| format!("{n} IN ({})", chunk.join(", "))).collect();
                ins.join(" OR ")
            }
        }
    }

    /// Conditions joined, each in parentheses when there are several, or
    /// None when there are none.
    fn join(&mut self, conditions: &[Condition], joiner: Joiner) -> Option<String> {
        match conditions {
            [] => None,
            [only] => Some(self.condition(only)),
            _ => {
                let parts: Vec<String> = conditions.iter().map(|c| format!("({})", self.condition(c))).collect();
                Some(parts.join(joiner.keyword()))
            }
        }
    }

    /// Hands the placeholders to the translation.
    fn finish(self, t: &mut Translation) {
        t.names = self.names;
        t.values = self.values;
    }
}

/// What a request's legacy parameters became.
#[derive(Debug, Default)]
pub struct Translation {
    /// From Expected.
    pub condition: Option<String>,
    /// From AttributeUpdates.
    pub update: Option<String>,
    /// From KeyConditions.
    pub key_condition: Option<String>,
    /// From QueryFilter or ScanFilter.
    pub filter: Option<String>,
    /// From AttributesToGet.
    pub projection: Option<String>,
    /// The generated placeholders.
    pub names: Names,
    pub values: Values,
    /// AttributeUpdates was given: its type errors use its own wording.
    pub attribute_updates: bool,
    /// AttributeUpdates holds only DELETE actions: a missing item stays missing.
    pub keep_missing: bool,
    /// KeyConditions, kept for the checks against the key schema.
    pub key_conditions: Option<Vec<Condition>>,
    /// The attributes QueryFilter tests, kept for the same.
    pub query_filter_attributes: Vec<String>,
}

impl Translation {
    /// Adds the generated placeholders to the request's.
    pub fn merge_into(&mut self, expr: &mut ExprArgs) {
        self.merge_names(&mut expr.names);
        if !self.values.is_empty() {
            expr.values.get_or_insert_with(Values::new).extend(std::mem::take(&mut self.values));
        }
    }

    /// The request's placeholders with the generated ones added.
    pub fn merged(&mut self, mut expr: ExprArgs) -> ExprArgs {
        self.merge_into(&mut expr);
        expr
    }

    /// Adds the generated name placeholders to the request's.
    pub fn merge_names(&mut self, names: &mut Option<Names>) {
        if !self.names.is_empty() {
            names.get_or_insert_with(Names::new).extend(std::mem::take(&mut self.names));
        }
    }

    /// The write options of PutItem, DeleteItem or UpdateItem, with Expected
    /// as the condition.
    pub fn write_options(&mut self, req: &Req) -> Result<WriteOptions, ApiError> {
        let mut options = req.write_options()?;
        if options.condition.is_none() {
            options.condition = self.condition.take();
        }
        self.merge_into(&mut options.expr);
        Ok(options)
    }

    /// Whether the Query checks against the table's key schema apply.
    pub fn needs_key_schema(&self) -> bool {
        self.key_conditions.is_some() || !self.query_filter_attributes.is_empty()
    }

    /// KeyConditions and QueryFilter against the table's key schema, in
    /// DynamoDB's order: a condition on a non-key attribute, the partition
    /// key missing or not tested for equality, a value of the wrong type;
    /// then a QueryFilter on a key attribute.
    pub fn check_key_schema(
        &self,
        key_schema: &[(String, KeyRole)],
        definitions: &[(String, ScalarType)],
    ) -> Result<(), ApiError> {
        let is_key = |attribute: &str| key_schema.iter().any(|(name, _)| name == attribute);
        if let Some(conditions) = &self.key_conditions {
            let hash = key_schema.iter().find(|(_, role)| *role == KeyRole::Hash).map(|(n, _)| n.as_str());
            let hash = hash.unwrap_or_default();
            if conditions.iter().any(|c| !is_key(&c.attribute)) {
                return Err(ApiError::validation("Query key condition not supported"));
            }
            let Some(on_hash) = conditions.iter().find(|c| c.attribute == hash) else {
                return Err(ApiError::validation(format!("Query condition missed key schema element: {hash}")));
            };
            if on_hash.op != Comparison::Eq {
                return Err(ApiError::validation("Query key condition not supported"));
            }
            for c in conditions {
                let declared = definitions.iter().find(|(name, _)| *name == c.attribute).map(|(_, t)| t.value_type());
                if c.values.iter().any(|v| Some(v.value_type()) != declared) {
                    return Err(invalid("Condition parameter type does not match schema type"));
                }
            }
        }
        if let Some(key) = self.query_filter_attributes.iter().find(|a| is_key(a)) {
            return Err(ApiError::validation(format!(
                "QueryFilter can only contain non-primary key attributes: Primary key attribute: {key}"
            )));
        }
        Ok(())
    }

    /// Select against AttributesToGet, worded as for ProjectionExpression.
    pub fn check_select(&self, select: Option<Select>, is_query: bool) -> Result<(), ApiError> {
        if self.projection.is_none() {
            return Ok(());
        }
        match select {
            Some(Select::Count) => Err(ApiError::validation(format!(
                "{}Cannot specify the AttributesToGet when choosing to get only the Count",
                if is_query { "1 validation error detected: " } else { "" }
            ))),
            Some(Select::AllAttributes) => {
                Err(invalid("Cannot specify the AttributesToGet when choosing to get ALL_ATTRIBUTES"))
            }
            _ => Ok(()),
        }
    }
}

/// The constraint phase of AttributesToGet (`member` is its constraint
/// path): a list of at least one string.
fn attributes_to_get<'a>(
    req: &Req<'a>,
    member: &str,
    violations: &mut Violations,
) -> Result<Option<Vec<&'a str>>, ApiError> {
    let Some(v) = req.get("AttributesToGet") else { return Ok(None) };
    let list = v.as_array().ok_or_else(|| wrong_json_type(v, "List"))?;
    if list.is_empty() {
        violations.add("'[]'", member, "Member must have length greater than or equal to 1");
    }
    let names = list.iter().map(|name| name.as_str().ok_or_else(|| wrong_json_type(name, "String")));
    Ok(Some(names.collect::<Result<Vec<_>, _>>()?))
}

/// The semantic phase: no duplicates; the names become a projection.
fn projection_of(names: &[&str], generator: &mut Generator) -> Result<String, ApiError> {
    let mut seen = HashSet::with_capacity(names.len());
    let mut placeholders = Vec::with_capacity(names.len());
    for name in names {
        if !seen.insert(*name) {
            return Err(invalid(format!("Duplicate value in attribute name: {name}")));
        }
        placeholders.push(generator.name(name));
    }
    Ok(placeholders.join(", "))
}

/// GetItem's or one BatchGetItem table's AttributesToGet.
pub fn projection(req: &Req, member: &str) -> Result<Translation, ApiError> {
    let mut violations = Violations::default();
    let names = attributes_to_get(req, member, &mut violations)?;
    violations.finish()?;
    let mut generator = Generator::new(req);
    let mut t = Translation::default();
    if let Some(names) = names {
        t.projection = Some(projection_of(&names, &mut generator)?);
    }
    generator.finish(&mut t);
    Ok(t)
}

/// An AttributeUpdates action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    Put,
    Add,
    Delete,
}

/// One AttributeUpdates entry after the constraint phase: its attribute,
/// its action (None when it broke the enum), and its value.
type UpdateEntry<'a> = (&'a str, Option<Action>, Option<&'a Value>);

/// The constraint phase of AttributeUpdates: Action is one of the enum.
fn update_entries<'a>(v: &'a Value, violations: &mut Violations) -> Result<Vec<UpdateEntry<'a>>, ApiError> {
    let mut out = Vec::new();
    for (attribute, spec) in entries(v)? {
        let action = match spec.opt_str("Action")? {
            None | Some("PUT") => Some(Action::Put),
            Some("ADD") => Some(Action::Add),
            Some("DELETE") => Some(Action::Delete),
            Some(other) => {
                let path = format!("attributeUpdates.{attribute}.member.action");
                enum_violation(violations, other, &path, ATTRIBUTE_ACTION_SET);
                None
            }
        };
        out.push((attribute, action, spec.get("Value")));
    }
    Ok(out)
}

/// The semantic phase: AttributeUpdates as an update expression (None when
/// empty), and whether every action is a DELETE.
fn attribute_updates(parsed: &[UpdateEntry], generator: &mut Generator) -> Result<(Option<String>, bool), ApiError> {
    let (mut set, mut remove, mut add, mut delete) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut empty_list: Option<String> = None;
    for (attribute, action, value) in parsed {
        let Some(action) = *action else { continue };
        let value = value.map(parse_value).transpose()?;
        let Some(value) = value else {
            if action != Action::Delete {
                return Err(invalid("Only DELETE action is allowed when no attribute value is specified"));
            }
            remove.push(generator.name(attribute));
            continue;
        };
        let t = value.value_type();
        let is_set = matches!(t, ValueType::Ss | ValueType::Ns | ValueType::Bs);
        match action {
            Action::Put => {
                let n = generator.name(attribute);
                set.push(format!("{n} = {}", generator.value(value)));
            }
            Action::Delete if is_set => {
                let n = generator.name(attribute);
                delete.push(format!("{n} {}", generator.value(value)));
            }
            Action::Delete => {
                return Err(invalid(format!(
                    "DELETE action with value is not supported for the type {}",
                    t.descriptor()
                )))
            }
            Action::Add if is_set || t == ValueType::N => {
                let n = generator.name(attribute);
                add.push(format!("{n} {}", generator.value(value)));
            }
            // ADD of a list appends, to an empty list when there is none.
            Action::Add if t == ValueType::L => {
                let n = generator.name(attribute);
                let empty = match &empty_list {
                    Some(p) => p.clone(),
                    None => {
                        let p = generator.value(AttributeValue::L(Vec::new()));
                        empty_list = Some(p.clone());
                        p
                    }
                };
                set.push(format!("{n} = list_append(if_not_exists({n}, {empty}), {})", generator.value(value)));
            }
            Action::Add => return Err(invalid(format!("ADD action is not supported for the type {}", t.descriptor()))),
        }
    }
    let clauses: Vec<String> = [("SET", set), ("REMOVE", remove), ("ADD", add), ("DELETE", delete)]
        .into_iter()
        .filter(|(_, parts)| !parts.is_empty())
        .map(|(keyword, parts)| format!("{keyword} {}", parts.join(", ")))
        .collect();
    let only_deletes = !parsed.is_empty() && parsed.iter().all(|(_, action, _)| *action == Some(Action::Delete));
    Ok(((!clauses.is_empty()).then(|| clauses.join(" ")), only_deletes))
}

/// PutItem's, DeleteItem's or UpdateItem's legacy parameters: the
/// constraints of AttributeUpdates (UpdateItem), Expected and
/// ConditionalOperator reported together, then their semantics in that
/// order.
pub fn write(req: &Req, operation: Operation) -> Result<Translation, ApiError> {
    let mut violations = Violations::default();
    let updates = match (operation, req.get("AttributeUpdates")) {
        (Operation::UpdateItem, Some(v)) => Some(update_entries(v, &mut violations)?),
        _ => None,
    };
    let expected = req.get("Expected").map(|v| expected_entries(v, &mut violations)).transpose()?;
    let operator = conditional_operator(req, &mut violations)?;
    violations.finish()?;
    let mut generator = Generator::new(req);
    let mut t = Translation::default();
    if let Some(updates) = updates {
        let (update, only_deletes) = attribute_updates(&updates, &mut generator)?;
        t.update = update;
        t.keep_missing = only_deletes;
        t.attribute_updates = true;
    }
    let expected = expected.as_deref().map(expected_conditions).transpose()?;
    let joiner = joiner(operator, expected.as_ref().map(Vec::len))?;
    if let Some(conditions) = expected {
        t.condition = generator.join(&conditions, joiner);
    }
    generator.finish(&mut t);
    Ok(t)
}

/// Query's or Scan's legacy parameters: the constraints of AttributesToGet,
/// KeyConditions (Query), the filter and ConditionalOperator reported
/// together; then AttributesToGet's duplicates, the filter's values,
/// ConditionalOperator (before the key conditions, so that a Query with
/// none gets its message first), and KeyConditions' values and operators,
/// which must be indexable. The checks against the key schema come later
/// (`check_key_schema`).
pub fn read(req: &Req, is_query: bool) -> Result<Translation, ApiError> {
    let mut violations = Violations::default();
    let attributes = attributes_to_get(req, "attributesToGet", &mut violations)?;
    let key_conditions = match (is_query, req.get("KeyConditions")) {
        (true, Some(v)) => Some(condition_entries(v, "keyConditions", &mut violations)?),
        _ => None,
    };
    let (filter_name, filter_member) =
        if is_query { ("QueryFilter", "queryFilter") } else { ("ScanFilter", "scanFilter") };
    let filter = req.get(filter_name).map(|v| condition_entries(v, filter_member, &mut violations)).transpose()?;
    let operator = conditional_operator(req, &mut violations)?;
    violations.finish()?;
    let mut generator = Generator::new(req);
    let mut t = Translation::default();
    if let Some(names) = attributes {
        t.projection = Some(projection_of(&names, &mut generator)?);
    }
    let filter = filter.as_deref().map(conditions).transpose()?;
    let joiner = joiner(operator, filter.as_ref().map(Vec::len))?;
    if let Some(entries) = key_conditions {
        let key_conditions = conditions(&entries)?;
        if key_conditions.iter().any(|c| !c.op.indexable()) {
            return Err(ApiError::validation("Attempted conditional constraint is not an indexable operation"));
        }
        // Key conditions take no parentheses.
        let parts: Vec<String> = key_conditions.iter().map(|c| generator.condition(c)).collect();
        t.key_condition = (!parts.is_empty()).then(|| parts.join(" AND "));
        t.key_conditions = Some(key_conditions);
    }
    if let Some(conditions) = filter {
        if is_query {
            t.query_filter_attributes = conditions.iter().map(|c| c.attribute.clone()).collect();
        }
        t.filter = generator.join(&conditions, joiner);
    }
    generator.finish(&mut t);
    Ok(t)
}

/// An UpdateItem error, with the expression engine's wording of a type
/// error replaced by DynamoDB's when AttributeUpdates caused it.
pub fn update_error(error: ApiError, attribute_updates: bool) -> ApiError {
    if attribute_updates
        && error.kind == ErrorKind::Validation
        && error.message.as_deref() == Some(INCORRECT_OPERAND_TYPE)
    {
        return ApiError::validation(TYPE_MISMATCH);
    }
    error
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn req(body: &Value) -> Req<'_> {
        match Req::new(body) {
            Ok(r) => r,
            Err(e) => panic!("not an object: {e:?}"),
        }
    }

    fn message(result: Result<impl std::fmt::Debug, ApiError>) -> String {
        match result {
            Ok(v) => panic!("expected an error, got {v:?}"),
            Err(e) => {
                assert_eq!(e.kind, ErrorKind::Validation, "{e:?}");
                e.message.unwrap_or_default()
            }
        }
    }

    fn n(x: &str) -> Value {
        json!({ "N": x })
    }

    fn s(x: &str) -> Value {
        json!({ "S": x })
    }

    fn cond(op: &str, values: Value) -> Value {
        json!({"ComparisonOperator": op, "AttributeValueList": values})
    }

    fn num(x: &str) -> AttributeValue {
        match parse_value(&n(x)) {
            Ok(v) => v,
            Err(e) => panic!("{e:?}"),
        }
    }

    const INVALID: &str = "One or more parameter values were invalid: ";

    #[test]
    fn mixing_and_placeholders_without_expressions() {
        let mixing = "Can not use both expression and non-expression parameters in the same request: ";
        let cases: Vec<(Operation, Value, Option<String>)> = vec![
            (Operation::PutItem, json!({"Expected": {}}), None),
            (Operation::PutItem, json!({"ConditionExpression": "a = :a", "ExpressionAttributeValues": {}}), None),
            (
                Operation::PutItem,
                json!({"ConditionExpression": "x", "ConditionalOperator": "OR", "Expected": {}}),
                Some(format!(
                    "{mixing}Non-expression parameters: {{Expected, ConditionalOperator}} Expression parameters: {{ConditionExpression}}"
                )),
            ),
            (
                Operation::UpdateItem,
                json!({"ConditionExpression": "x", "UpdateExpression": "y", "AttributeUpdates": {}}),
                Some(format!(
                    "{mixing}Non-expression parameters: {{AttributeUpdates}} Expression parameters: {{UpdateExpression, ConditionExpression}}"
                )),
            ),
            (
                Operation::Query,
                json!({"KeyConditions": {}, "FilterExpression": "x", "ProjectionExpression": "y"}),
                None,
            ),
            (
                Operation::Query,
                json!({"KeyConditions": {}, "KeyConditionExpression": "x", "AttributesToGet": ["a"]}),
                Some(format!(
                    "{mixing}Non-expression parameters: {{AttributesToGet, KeyConditions}} Expression parameters: {{KeyConditionExpression}}"
                )),
            ),
            (
                Operation::Scan,
                json!({"ScanFilter": {}, "ConditionalOperator": "OR", "FilterExpression": "x", "ProjectionExpression": "y"}),
                Some(format!(
                    "{mixing}Non-expression parameters: {{ScanFilter, ConditionalOperator}} Expression parameters: {{ProjectionExpression, FilterExpression}}"
                )),
            ),
            (
                Operation::BatchGetItem,
                json!({"AttributesToGet": ["a"], "ProjectionExpression": "a"}),
                Some(format!(
                    "{mixing}Non-expression parameters: {{AttributesToGet}} Expression parameters: {{ProjectionExpression}}"
                )),
            ),
            (
                Operation::GetItem,
                json!({"AttributesToGet": ["a"], "ExpressionAttributeNames": {"#a": "a"}}),
                Some("ExpressionAttributeNames can only be specified when using expressions".to_string()),
            ),
            // GetItem takes no values: nothing to say about them.
            (Operation::GetItem, json!({"ExpressionAttributeValues": {":a": n("1")}}), None),
            (
                Operation::DeleteItem,
                json!({"ExpressionAttributeValues": {":a": n("1")}}),
                Some("ExpressionAttributeValues can only be specified when using expressions: ConditionExpression is null".to_string()),
            ),
            (
                Operation::UpdateItem,
                json!({"ExpressionAttributeValues": {":a": n("1")}, "ExpressionAttributeNames": {"#a": "a"}}),
                Some("ExpressionAttributeNames can only be specified when using expressions".to_string()),
            ),
            (
                Operation::Scan,
                json!({"ProjectionExpression": "a", "ExpressionAttributeValues": {":a": n("1")}}),
                Some("ExpressionAttributeValues can only be specified when using expressions: FilterExpression is null".to_string()),
            ),
            (
                Operation::Query,
                json!({"KeyConditions": {}, "ExpressionAttributeValues": {":a": n("1")}}),
                Some("ExpressionAttributeValues can only be specified when using expressions: FilterExpression and KeyConditionExpression are null".to_string()),
            ),
            // JSON null is absence.
            (Operation::PutItem, json!({"ConditionExpression": "x", "Expected": null}), None),
        ];
        for (operation, body, want) in cases {
            let got = check_mixing(&req(&body), operation).err().and_then(|e| e.message);
            assert_eq!(got, want, "{operation:?} {body}");
        }
    }

    #[test]
    fn each_comparison_becomes_an_expression() {
        let cases: Vec<(Value, &str)> = vec![
            (cond("EQ", json!([n("1")])), "#lg0 = :lg1"),
            (cond("NE", json!([n("1")])), "#lg0 <> :lg1"),
            (cond("LE", json!([n("1")])), "#lg0 <= :lg1"),
            (cond("LT", json!([n("1")])), "#lg0 < :lg1"),
            (cond("GE", json!([n("1")])), "#lg0 >= :lg1"),
            (cond("GT", json!([n("1")])), "#lg0 > :lg1"),
            (json!({"ComparisonOperator": "NOT_NULL"}), "attribute_exists(#lg0)"),
            (cond("NULL", json!([])), "attribute_not_exists(#lg0)"),
            (cond("CONTAINS", json!([s("x")])), "contains(#lg0, :lg1)"),
            (cond("NOT_CONTAINS", json!([s("x")])), "attribute_exists(#lg0) AND NOT contains(#lg0, :lg1)"),
            (cond("BEGINS_WITH", json!([s("x")])), "begins_with(#lg0, :lg1)"),
            (cond("IN", json!([n("1"), n("2")])), "#lg0 IN (:lg1, :lg2)"),
            (cond("BETWEEN", json!([n("1"), n("2")])), "#lg0 BETWEEN :lg1 AND :lg2"),
            (json!({"Value": n("1")}), "#lg0 = :lg1"),
            (json!({"Value": n("1"), "Exists": true}), "#lg0 = :lg1"),
            (json!({"Exists": false}), "attribute_not_exists(#lg0)"),
            (json!({"ComparisonOperator": "GT", "Value": n("1")}), "#lg0 > :lg1"),
        ];
        for (condition, want) in cases {
            let body = json!({"Expected": {"a.b": condition}});
            let t = match write(&req(&body), Operation::PutItem) {
                Ok(t) => t,
                Err(e) => panic!("{body}: {e:?}"),
            };
            assert_eq!(t.condition.as_deref(), Some(want), "{body}");
            assert_eq!(t.names, Names::from([("#lg0".to_string(), "a.b".to_string())]));
            let values: Vec<&String> = t.values.keys().collect();
            assert!(values.iter().all(|v| want.contains(v.as_str())), "{values:?} unused in {want}");
        }
    }

    #[test]
    fn conditions_join_with_the_conditional_operator() {
        let expected = json!({"a": {"Value": n("1")}, "b": {"Exists": false}});
        let and = write(&req(&json!({"Expected": expected})), Operation::DeleteItem).ok().and_then(|t| t.condition);
        assert_eq!(and.as_deref(), Some("(#lg0 = :lg1) AND (attribute_not_exists(#lg2))"));
        let body = json!({"Expected": expected, "ConditionalOperator": "OR"});
        let or = write(&req(&body), Operation::DeleteItem).ok().and_then(|t| t.condition);
        assert_eq!(or.as_deref(), Some("(#lg0 = :lg1) OR (attribute_not_exists(#lg2))"));
        let empty = write(&req(&json!({"Expected": {}})), Operation::PutItem).ok().map(|t| t.condition);
        assert_eq!(empty, Some(None));
    }

    #[test]
    fn a_long_in_list_is_split_into_several() {
        let values: Vec<Value> = (0..(MAX_IN_OPERANDS + 50)).map(|i| n(&i.to_string())).collect();
        let body = json!({"ScanFilter": {"a": cond("IN", Value::Array(values))}});
        let t = read(&req(&body), false).unwrap_or_default();
        let filter = t.filter.unwrap_or_default();
        assert_eq!(filter.matches(" IN (").count(), 2, "{filter}");
        assert!(filter.starts_with("#lg0 IN (:lg1, "), "{filter}");
        assert!(filter.contains(") OR #lg0 IN (:lg101, "), "{filter}");
        assert_eq!(t.values.len(), MAX_IN_OPERANDS + 50);
    }

    #[test]
    fn attribute_updates_become_an_update_expression() {
        let body = json!({"AttributeUpdates": {
            "a": {"Value": n("1")},
            "b": {"Action": "DELETE"},
            "c": {"Action": "ADD", "Value": {"L": [n("1")]}},
            "d": {"Action": "ADD", "Value": {"NS": ["1"]}},
            "e": {"Action": "DELETE", "Value": {"SS": ["x"]}},
            "f": {"Action": "ADD", "Value": {"L": [n("2")]}},
            "g": {"Action": "PUT", "Value": s("x")},
        }});
        let t = match write(&req(&body), Operation::UpdateItem) {
            Ok(t) => t,
            Err(e) => panic!("{e:?}"),
        };
        assert_eq!(
            t.update.as_deref(),
            Some(
                "SET #lg0 = :lg1, #lg3 = list_append(if_not_exists(#lg3, :lg4), :lg5), \
                 #lg10 = list_append(if_not_exists(#lg10, :lg4), :lg11), #lg12 = :lg13 \
                 REMOVE #lg2 ADD #lg6 :lg7 DELETE #lg8 :lg9"
            )
        );
        assert_eq!(t.values.get(":lg4"), Some(&AttributeValue::L(Vec::new())));
        assert!(t.attribute_updates && !t.keep_missing);
        let deletes =
            json!({"AttributeUpdates": {"a": {"Action": "DELETE"}, "b": {"Action": "DELETE", "Value": {"SS": ["x"]}}}});
        let t = write(&req(&deletes), Operation::UpdateItem).unwrap_or_default();
        assert_eq!(t.update.as_deref(), Some("REMOVE #lg0 DELETE #lg1 :lg2"));
        assert!(t.keep_missing);
        let empty = write(&req(&json!({"AttributeUpdates": {}})), Operation::UpdateItem).unwrap_or_default();
        assert_eq!((empty.update, empty.keep_missing, empty.attribute_updates), (None, false, true));
        // PutItem has no AttributeUpdates member.
        let ignored = write(&req(&body), Operation::PutItem).unwrap_or_default();
        assert_eq!(ignored.update, None);
    }

    #[test]
    fn reads_translate_every_parameter_and_avoid_the_clients_placeholders() {
        let body = json!({
            "KeyConditions": {"pk": cond("EQ", json!([s("p")])), "sk": cond("BETWEEN", json!([n("1"), n("9")]))},
            "QueryFilter": {"v": cond("GT", json!([n("1")])), "w": cond("NULL", json!([]))},
            "ConditionalOperator": "OR",
            "AttributesToGet": ["v", "x"],
            "ExpressionAttributeNames": {"#lg0": "taken"},
            "ExpressionAttributeValues": {":lg4": n("0")},
        });
        let t = match read(&req(&body), true) {
            Ok(t) => t,
            Err(e) => panic!("{e:?}"),
        };
        assert_eq!(t.projection.as_deref(), Some("#lg1, #lg2"));
        assert_eq!(t.key_condition.as_deref(), Some("#lg3 = :lg5 AND #lg6 BETWEEN :lg7 AND :lg8"));
        assert_eq!(t.filter.as_deref(), Some("(#lg1 > :lg9) OR (attribute_not_exists(#lg10))"));
        assert_eq!(t.query_filter_attributes, ["v", "w"]);
        assert_eq!(t.names.get("#lg1").map(String::as_str), Some("v"));
        assert!(!t.names.contains_key("#lg0") && !t.values.contains_key(":lg4"));
        let mut expr = ExprArgs {
            names: Some(Names::from([("#lg0".into(), "taken".into())])),
            values: Some(Values::from([(":lg4".into(), num("0"))])),
        };
        let mut t = t;
        t.merge_into(&mut expr);
        assert_eq!(expr.names.map(|m| m.len()), Some(6));
        assert_eq!(expr.values.map(|m| m.len()), Some(5));
        // A Scan reads ScanFilter only.
        let scan = read(&req(&json!({"ScanFilter": {"v": cond("NOT_NULL", json!([]))}})), false).unwrap_or_default();
        assert_eq!(scan.filter.as_deref(), Some("attribute_exists(#lg0)"));
        assert!(scan.query_filter_attributes.is_empty() && scan.key_conditions.is_none());
    }

    #[test]
    fn validation_messages() {
        let comparison_set = COMPARISON_OPERATOR_SET;
        let w = |body: Value| message(write(&req(&body), Operation::UpdateItem));
        let q = |body: Value| message(read(&req(&body), true));
        let cases: Vec<(String, String)> = vec![
            (w(json!({"Expected": {"a": {"Value": n("1"), "AttributeValueList": []}}})), format!("{INVALID}Value and AttributeValueList cannot be used together for Attribute: a")),
            (w(json!({"Expected": {"a": {"Exists": true, "ComparisonOperator": "EQ", "Value": n("1")}}})), format!("{INVALID}Exists and ComparisonOperator cannot be used together for Attribute: a")),
            (w(json!({"Expected": {"a": {"ComparisonOperator": "IN"}}})), format!("{INVALID}Value or AttributeValueList must be used with ComparisonOperator: IN for Attribute: a")),
            (w(json!({"Expected": {"a": {"AttributeValueList": []}}})), format!("{INVALID}AttributeValueList can only be used with a ComparisonOperator for Attribute: a")),
            (w(json!({"Expected": {"a": {"Exists": true}}})), format!("{INVALID}Value must be provided when Exists is true for Attribute: a")),
            (w(json!({"Expected": {"a": {}}})), format!("{INVALID}Value must be provided when Exists is null for Attribute: a")),
            (w(json!({"Expected": {"a": {"Exists": false, "Value": n("1")}}})), format!("{INVALID}Value cannot be used when Exists is false for Attribute: a")),
            (w(json!({"Expected": {"a": cond("NE", json!([]))}})), format!("{INVALID}Invalid number of argument(s) for the NE ComparisonOperator")),
            (w(json!({"Expected": {"a": cond("NOT_NULL", json!([n("1")]))}})), format!("{INVALID}Invalid number of argument(s) for the NOT_NULL ComparisonOperator")),
            (w(json!({"Expected": {"a": cond("BETWEEN", json!([n("1")]))}})), format!("{INVALID}Invalid number of argument(s) for the BETWEEN ComparisonOperator")),
            (w(json!({"Expected": {"a": cond("IN", json!([]))}})), format!("{INVALID}Invalid number of argument(s) for the IN ComparisonOperator")),
            (w(json!({"Expected": {"a": cond("IN", json!([n("1"), s("x")]))}})), format!("{INVALID}AttributeValues inside AttributeValueList must be of same type")),
            (w(json!({"Expected": {"a": cond("GE", json!([{"BOOL": true}]))}})), format!("{INVALID}ComparisonOperator GE is not valid for BOOL AttributeValue type")),
            (w(json!({"Expected": {"a": cond("CONTAINS", json!([{"NS": ["1"]}]))}})), format!("{INVALID}ComparisonOperator CONTAINS is not valid for NS AttributeValue type")),
            (w(json!({"Expected": {"a": cond("BEGINS_WITH", json!([n("1")]))}})), format!("{INVALID}ComparisonOperator BEGINS_WITH is not valid for N AttributeValue type")),
            (w(json!({"Expected": {"a": cond("BETWEEN", json!([{"B": "Ag=="}, {"B": "AQ=="}]))}})), "The BETWEEN condition was provided a range where the lower bound is greater than the upper bound".to_string()),
            (w(json!({"Expected": {"a": cond("BETWEEN", json!([n("10"), n("9")]))}})), "The BETWEEN condition was provided a range where the lower bound is greater than the upper bound".to_string()),
            (w(json!({"Expected": {"a": cond("eq", json!([n("1")]))}})), format!("1 validation error detected: Value 'eq' at 'expected.a.member.comparisonOperator' failed to satisfy constraint: Member must satisfy enum value set: {comparison_set}")),
            (w(json!({"ConditionalOperator": "AND"})), "ConditionalOperator cannot be used without Filter or Expected".to_string()),
            (w(json!({"ConditionalOperator": "OR", "Expected": {"a": {"Value": n("1")}}})), "ConditionalOperator can only be used when Filter or Expected has two or more elements".to_string()),
            (w(json!({"ConditionalOperator": "or", "Expected": {}})), "1 validation error detected: Value 'or' at 'conditionalOperator' failed to satisfy constraint: Member must satisfy enum value set: [OR, AND]".to_string()),
            (w(json!({"AttributeUpdates": {"a": {"Action": "ADD"}}})), format!("{INVALID}Only DELETE action is allowed when no attribute value is specified")),
            (w(json!({"AttributeUpdates": {"a": {}}})), format!("{INVALID}Only DELETE action is allowed when no attribute value is specified")),
            (w(json!({"AttributeUpdates": {"a": {"Action": "DELETE", "Value": s("x")}}})), format!("{INVALID}DELETE action with value is not supported for the type S")),
            (w(json!({"AttributeUpdates": {"a": {"Action": "ADD", "Value": {"M": {}}}}})), format!("{INVALID}ADD action is not supported for the type M")),
            (w(json!({"AttributeUpdates": {"a": {"Action": "SET", "Value": n("1")}}})), "1 validation error detected: Value 'SET' at 'attributeUpdates.a.member.action' failed to satisfy constraint: Member must satisfy enum value set: [ADD, DELETE, PUT]".to_string()),
            (w(json!({"AttributeUpdates": {"a": {"Value": {"SS": []}}}})), format!("{INVALID}An string set  may not be empty")),
            (q(json!({"AttributesToGet": []})), "1 validation error detected: Value '[]' at 'attributesToGet' failed to satisfy constraint: Member must have length greater than or equal to 1".to_string()),
            (q(json!({"AttributesToGet": ["a", "b", "a"]})), format!("{INVALID}Duplicate value in attribute name: a")),
            (q(json!({"KeyConditions": {"pk": cond("NE", json!([s("x")]))}})), "Attempted conditional constraint is not an indexable operation".to_string()),
            (q(json!({"KeyConditions": {"pk": {"AttributeValueList": [s("x")]}}})), "1 validation error detected: Value null at 'keyConditions.pk.member.comparisonOperator' failed to satisfy constraint: Member must not be null".to_string()),
            (q(json!({"KeyConditions": {"pk": cond("EQ", json!([s("x")]))}, "ConditionalOperator": "AND"})), "ConditionalOperator cannot be used without Filter or Expected".to_string()),
            (q(json!({"QueryFilter": {"a": cond("CONTAINS", json!([{"L": []}]))}})), format!("{INVALID}ComparisonOperator CONTAINS is not valid for L AttributeValue type")),
            (q(json!({"QueryFilter": {"a": cond("ANY", json!([])), "b": {}}})), format!("2 validation errors detected: Value 'ANY' at 'queryFilter.a.member.comparisonOperator' failed to satisfy constraint: Member must satisfy enum value set: {comparison_set}; Value null at 'queryFilter.b.member.comparisonOperator' failed to satisfy constraint: Member must not be null")),
            (message(projection(&req(&json!({"AttributesToGet": []})), "requestItems.t.member.attributesToGet")), "1 validation error detected: Value '[]' at 'requestItems.t.member.attributesToGet' failed to satisfy constraint: Member must have length greater than or equal to 1".to_string()),
        ];
        for (got, want) in cases {
            assert_eq!(got, want);
        }
    }

    #[test]
    fn constraint_violations_of_all_members_are_reported_together_before_semantics() {
        let body = json!({
            "AttributeUpdates": {"a": {"Action": "UPSERT", "Value": n("1")}, "b": {"Action": "ADD"}},
            "Expected": {"c": cond("SIMILAR", json!([])), "d": {"Exists": true}},
            "ConditionalOperator": "XOR",
        });
        assert_eq!(
            message(write(&req(&body), Operation::UpdateItem)),
            format!(
                "3 validation errors detected: \
                 Value 'UPSERT' at 'attributeUpdates.a.member.action' failed to satisfy constraint: Member must satisfy enum value set: [ADD, DELETE, PUT]; \
                 Value 'SIMILAR' at 'expected.c.member.comparisonOperator' failed to satisfy constraint: Member must satisfy enum value set: {COMPARISON_OPERATOR_SET}; \
                 Value 'XOR' at 'conditionalOperator' failed to satisfy constraint: Member must satisfy enum value set: [OR, AND]"
            )
        );
        let body = json!({
            "AttributesToGet": [],
            "KeyConditions": {"pk": {}},
            "QueryFilter": {"a": cond("EQ", json!([n("1"), n("2")]))},
        });
        assert_eq!(
            message(read(&req(&body), true)),
            "2 validation errors detected: \
             Value '[]' at 'attributesToGet' failed to satisfy constraint: Member must have length greater than or equal to 1; \
             Value null at 'keyConditions.pk.member.comparisonOperator' failed to satisfy constraint: Member must not be null"
        );
        // Without constraint violations, the semantic checks run in order.
        let body = json!({"AttributesToGet": ["a", "a"], "QueryFilter": {"a": cond("EQ", json!([]))}});
        assert_eq!(message(read(&req(&body), true)), format!("{INVALID}Duplicate value in attribute name: a"));
        let body = json!({"AttributeUpdates": {"b": {"Action": "ADD"}}, "Expected": {"d": {"Exists": true}}});
        assert_eq!(
            message(write(&req(&body), Operation::UpdateItem)),
            format!("{INVALID}Only DELETE action is allowed when no attribute value is specified")
        );
    }

    #[test]
    fn wrong_json_types_are_serialization_errors() {
        for body in [
            json!({"Expected": []}),
            json!({"Expected": {"a": {"Exists": "perhaps"}}}),
            json!({"Expected": {"a": {"Exists": 1}}}),
            json!({"AttributeUpdates": {"a": {"Action": 1}}}),
            json!({"Expected": {"a": {"ComparisonOperator": "IN", "AttributeValueList": {"N": "1"}}}}),
        ] {
            let kind = write(&req(&body), Operation::UpdateItem).err().map(|e| e.kind);
            assert_eq!(kind, Some(ErrorKind::Serialization), "{body}");
        }
        let kind = read(&req(&json!({"AttributesToGet": [1]})), false).err().map(|e| e.kind);
        assert_eq!(kind, Some(ErrorKind::Serialization));
        // "yes" is a boolean to DynamoDB (S94): Exists true, which then
        // needs a Value.
        let yes = message(write(&req(&json!({"Expected": {"a": {"Exists": "yes"}}})), Operation::UpdateItem));
        let no_value = message(write(&req(&json!({"Expected": {"a": {"Exists": true}}})), Operation::UpdateItem));
        assert_eq!(yes, no_value);
        assert!(yes.contains("Exists"), "{yes}");
    }

    #[test]
    fn key_schema_checks() {
        let schema = [("pk".to_string(), KeyRole::Hash), ("sk".to_string(), KeyRole::Range)];
        let definitions = [("pk".to_string(), ScalarType::S), ("sk".to_string(), ScalarType::N)];
        let check = |body: Value| {
            let t = read(&req(&body), true).unwrap_or_default();
            assert!(t.needs_key_schema(), "{body}");
            t.check_key_schema(&schema, &definitions).err().and_then(|e| e.message)
        };
        let eq_pk = cond("EQ", json!([s("p")]));
        let cases: Vec<(Value, Option<String>)> = vec![
            (json!({"KeyConditions": {"pk": eq_pk, "sk": cond("LT", json!([n("1")]))}}), None),
            (
                json!({"KeyConditions": {"pk": eq_pk, "x": cond("EQ", json!([n("1")]))}}),
                Some("Query key condition not supported".into()),
            ),
            (
                json!({"KeyConditions": {"pk": cond("GT", json!([s("p")]))}}),
                Some("Query key condition not supported".into()),
            ),
            (
                json!({"KeyConditions": {"sk": cond("GT", json!([n("1")]))}}),
                Some("Query condition missed key schema element: pk".into()),
            ),
            (json!({"KeyConditions": {}}), Some("Query condition missed key schema element: pk".into())),
            (
                json!({"KeyConditions": {"pk": cond("EQ", json!([n("1")]))}}),
                Some(format!("{INVALID}Condition parameter type does not match schema type")),
            ),
            (
                json!({"KeyConditions": {"pk": eq_pk, "sk": cond("BETWEEN", json!([s("a"), s("b")]))}}),
                Some(format!("{INVALID}Condition parameter type does not match schema type")),
            ),
            (
                json!({"KeyConditions": {"pk": eq_pk}, "QueryFilter": {"a": cond("NULL", json!([])), "sk": cond("NULL", json!([]))}}),
                Some("QueryFilter can only contain non-primary key attributes: Primary key attribute: sk".into()),
            ),
            (
                json!({"QueryFilter": {"pk": cond("NULL", json!([]))}}),
                Some("QueryFilter can only contain non-primary key attributes: Primary key attribute: pk".into()),
            ),
        ];
        for (body, want) in cases {
            assert_eq!(check(body.clone()), want, "{body}");
        }
        assert!(!read(&req(&json!({"Limit": 1})), true).unwrap_or_default().needs_key_schema());
    }

    #[test]
    fn select_against_attributes_to_get() {
        let t = read(&req(&json!({"AttributesToGet": ["a"]})), true).unwrap_or_default();
        let cases = [
            (Some(Select::Count), true, Some("1 validation error detected: Cannot specify the AttributesToGet when choosing to get only the Count")),
            (Some(Select::Count), false, Some("Cannot specify the AttributesToGet when choosing to get only the Count")),
            (Some(Select::AllAttributes), false, Some("One or more parameter values were invalid: Cannot specify the AttributesToGet when choosing to get ALL_ATTRIBUTES")),
            (Some(Select::SpecificAttributes), true, None),
            (None, true, None),
        ];
        for (select, is_query, want) in cases {
            assert_eq!(t.check_select(select, is_query).err().and_then(|e| e.message).as_deref(), want);
        }
        let none = Translation::default();
        assert!(none.check_select(Some(Select::Count), true).is_ok());
    }

    #[test]
    fn type_errors_of_attribute_updates_are_reworded() {
        let engine_error = ApiError::validation(INCORRECT_OPERAND_TYPE);
        assert_eq!(update_error(engine_error.clone(), true).message.as_deref(), Some(TYPE_MISMATCH));
        assert_eq!(update_error(engine_error, false).message.as_deref(), Some(INCORRECT_OPERAND_TYPE));
        let other = ApiError::validation("something else");
        assert_eq!(update_error(other.clone(), true), other);
    }

    #[test]
    fn operators_round_trip_and_take_their_values() {
        for op in Comparison::ALL {
            assert_eq!(Comparison::parse(op.name()), Some(op));
            assert!(COMPARISON_OPERATOR_SET.contains(op.name()));
        }
        assert_eq!(Comparison::parse("eq"), None);
        assert!(check_values(Comparison::Between, &[num("1"), num("1")]).is_ok());
        assert!(check_values(Comparison::In, &[num("1"), num("2"), num("3")]).is_ok());
        assert!(check_values(Comparison::Eq, &[AttributeValue::L(vec![]),]).is_ok());
        assert!(check_values(Comparison::Ne, &[AttributeValue::Bool(true)]).is_ok());
    }
}
