//! DynamoDB's legacy (pre-expression) parameters, validated with DynamoDB's
//! messages and translated into expressions, so that the engine stays
//! expression-only:
//!
//! | legacy parameter                                   | becomes                  |
//! |----------------------------------------------------|--------------------------|
//! | `Expected` (+ `ConditionalOperator`)               | `ConditionExpression`    |
//! | `AttributeUpdates`                                 | `UpdateExpression`       |
//! | `KeyConditions`                                    | `KeyConditionExpression` |
//! | `QueryFilter`, `ScanFilter` (+ `ConditionalOperator`) | `FilterExpression`    |
//! | `AttributesToGet`                                  | `ProjectionExpression`   |
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

/// "1 validation error detected: Value 'x' at 'member' failed to satisfy
/// constraint: Member must satisfy enum value set: [...]".
fn enum_violation(violations: &mut Violations, value: &str, member: &str, set: &str) {
    violations.add(&format!("'{value}'"), member, &format!("Member must satisfy enum value set: {set}"));
}

/// The order of two scalars of one type (numbers numerically, strings and
/// binaries by unsigned bytes).
fn order(a: &AttributeValue, b: &AttributeValue) -> Option<Ordering> {
    match (a, b) {
        (AttributeValue::N(x), AttributeValue::N(y)) => Some(x.cmp(y)),
        (AttributeValue::S(x), AttributeValue::S(y)) => Some(x.as_bytes().cmp(y.as_bytes())),
        (AttributeValue::B(x), AttributeValue::B(y)) => Some(x.cmp(y)),
        _ => None,
    }
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

/// A map of attribute names to `Condition`s (QueryFilter, ScanFilter,
/// KeyConditions); `member` is its constraint path (`scanFilter`).
/// ComparisonOperator is required.
fn condition_map(v: &Value, member: &str) -> Result<Vec<Condition>, ApiError> {
    let entries = map_of(v)?;
    let mut violations = Violations::default();
    let mut parsed = Vec::with_capacity(entries.len());
    for (attribute, spec) in entries {
        let r = Req::new(spec)?;
        let path = format!("{member}.{attribute}.member.comparisonOperator");
        let op = match r.opt_str("ComparisonOperator")? {
            None => {
                violations.add("null", &path, "Member must not be null");
                None
            }
            Some(text) => {
                let op = Comparison::parse(text);
                if op.is_none() {
                    enum_violation(&mut violations, text, &path, COMPARISON_OPERATOR_SET);
                }
                op
            }
        };
        parsed.push((attribute, op, value_list(&r)?));
    }
    violations.finish()?;
    let mut conditions = Vec::with_capacity(parsed.len());
    for (attribute, op, values) in parsed {
        let Some(op) = op else { continue };
        check_values(op, &values)?;
        conditions.push(Condition { attribute: attribute.clone(), op, values });
    }
    Ok(conditions)
}

/// Expected: each entry either `{Value, Exists}` (a Value alone, or with
/// Exists true, is EQ; Exists false is NULL) or `{ComparisonOperator,
/// AttributeValueList}` (or ComparisonOperator with a single Value).
fn expected_map(v: &Value) -> Result<Vec<Condition>, ApiError> {
    let entries = map_of(v)?;
    let mut violations = Violations::default();
    for (attribute, spec) in entries {
        let r = Req::new(spec)?;
        if let Some(text) = r.opt_str("ComparisonOperator")? {
            if Comparison::parse(text).is_none() {
                let path = format!("expected.{attribute}.member.comparisonOperator");
                enum_violation(&mut violations, text, &path, COMPARISON_OPERATOR_SET);
            }
        }
        r.opt_bool("Exists")?;
    }
    violations.finish()?;
    let mut conditions = Vec::with_capacity(entries.len());
    for (attribute, spec) in entries {
        let r = Req::new(spec)?;
        let has_list = r.get("AttributeValueList").is_some();
        let value = r.get("Value").map(parse_value).transpose()?;
        let exists = r.opt_bool("Exists")?;
        if has_list && value.is_some() {
            return Err(invalid(format!(
                "Value and AttributeValueList cannot be used together for Attribute: {attribute}"
            )));
        }
        let (op, values) = match r.opt_str("ComparisonOperator")?.and_then(Comparison::parse) {
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
                let values = if has_list { value_list(&r)? } else { value.into_iter().collect() };
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
        conditions.push(Condition { attribute: attribute.clone(), op, values });
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

/// ConditionalOperator (AND by default), given how many conditions the
/// Expected or filter map it joins holds (None: no map).
fn conditional_operator(req: &Req, conditions: Option<usize>) -> Result<Joiner, ApiError> {
    let Some(text) = req.opt_str("ConditionalOperator")? else { return Ok(Joiner::And) };
    let joiner = match text {
        "AND" => Joiner::And,
        "OR" => Joiner::Or,
        other => {
            let mut violations = Violations::default();
            enum_violation(&mut violations, other, "conditionalOperator", CONDITIONAL_OPERATOR_SET);
            violations.finish()?;
            Joiner::And
        }
    };
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

/// AttributesToGet (`member` is its constraint path): at least one name,
/// no duplicates; becomes a projection of those names.
fn attributes_to_get(req: &Req, member: &str, generator: &mut Generator) -> Result<Option<String>, ApiError> {
    let Some(v) = req.get("AttributesToGet") else { return Ok(None) };
    let list = v.as_array().ok_or_else(|| wrong_json_type(v, "List"))?;
    let mut violations = Violations::default();
    if list.is_empty() {
        violations.add("'[]'", member, "Member must have length greater than or equal to 1");
    }
    violations.finish()?;
    let mut seen = HashSet::with_capacity(list.len());
    let mut placeholders = Vec::with_capacity(list.len());
    for name in list {
        let name = name.as_str().ok_or_else(|| wrong_json_type(name, "String"))?;
        if !seen.insert(name) {
            return Err(invalid(format!("Duplicate value in attribute name: {name}")));
        }
        placeholders.push(generator.name(name));
    }
    Ok(Some(placeholders.join(", ")))
}

/// GetItem's or one BatchGetItem table's AttributesToGet.
pub fn projection(req: &Req, member: &str) -> Result<Translation, ApiError> {
    let mut generator = Generator::new(req);
    let mut t = Translation { projection: attributes_to_get(req, member, &mut generator)?, ..Translation::default() };
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

/// AttributeUpdates as an update expression (None when empty), and whether
/// every action is a DELETE.
fn attribute_updates(v: &Value, generator: &mut Generator) -> Result<(Option<String>, bool), ApiError> {
    let entries = map_of(v)?;
    let mut violations = Violations::default();
    let mut parsed = Vec::with_capacity(entries.len());
    for (attribute, spec) in entries {
        let r = Req::new(spec)?;
        let action = match r.opt_str("Action")? {
            None | Some("PUT") => Some(Action::Put),
            Some("ADD") => Some(Action::Add),
            Some("DELETE") => Some(Action::Delete),
            Some(other) => {
                let path = format!("attributeUpdates.{attribute}.member.action");
                enum_violation(&mut violations, other, &path, ATTRIBUTE_ACTION_SET);
                None
            }
        };
        parsed.push((attribute, action, r.get("Value")));
    }
    violations.finish()?;
    let (mut set, mut remove, mut add, mut delete) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut empty_list: Option<String> = None;
    for (attribute, action, value) in &parsed {
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

/// PutItem's, DeleteItem's or UpdateItem's legacy parameters:
/// AttributeUpdates (UpdateItem), then Expected, then ConditionalOperator.
pub fn write(req: &Req, operation: Operation) -> Result<Translation, ApiError> {
    let mut generator = Generator::new(req);
    let mut t = Translation::default();
    if operation == Operation::UpdateItem {
        if let Some(v) = req.get("AttributeUpdates") {
            let (update, only_deletes) = attribute_updates(v, &mut generator)?;
            t.update = update;
            t.keep_missing = only_deletes;
            t.attribute_updates = true;
        }
    }
    let expected = req.get("Expected").map(expected_map).transpose()?;
    let joiner = conditional_operator(req, expected.as_ref().map(Vec::len))?;
    if let Some(conditions) = expected {
        t.condition = generator.join(&conditions, joiner);
    }
    generator.finish(&mut t);
    Ok(t)
}

/// Query's or Scan's legacy parameters: AttributesToGet, the filter,
/// ConditionalOperator (before the key conditions, so that a Query with
/// none gets its message first), then KeyConditions (Query), whose
/// operators must be indexable; the checks against the key schema come
/// later (`check_key_schema`).
pub fn read(req: &Req, is_query: bool) -> Result<Translation, ApiError> {
    let mut generator = Generator::new(req);
    let mut t =
        Translation { projection: attributes_to_get(req, "attributesToGet", &mut generator)?, ..Default::default() };
    let (filter_name, filter_member) =
        if is_query { ("QueryFilter", "queryFilter") } else { ("ScanFilter", "scanFilter") };
    let filter = req.get(filter_name).map(|v| condition_map(v, filter_member)).transpose()?;
    let joiner = conditional_operator(req, filter.as_ref().map(Vec::len))?;
    if is_query {
        if let Some(v) = req.get("KeyConditions") {
            let conditions = condition_map(v, "keyConditions")?;
            if conditions.iter().any(|c| !c.op.indexable()) {
                return Err(ApiError::validation("Attempted conditional constraint is not an indexable operation"));
            }
            // Key conditions take no parentheses.
            let parts: Vec<String> = conditions.iter().map(|c| generator.condition(c)).collect();
            t.key_condition = (!parts.is_empty()).then(|| parts.join(" AND "));
            t.key_conditions = Some(conditions);
        }
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
