//! Reading request members, with DynamoDB's constraint messages.

use std::collections::HashMap;

use dynaburst_engine::{ExprArgs, ReturnCapacity, ReturnValues, Select, WriteOptions};
use dynaburst_model::Item;
use serde_json::{Map, Value};

use crate::error::{ApiError, ErrorKind};
use crate::legacy::{check_mixing, Operation};
use crate::value::{parse_item, parse_value, wrong_json_type};

pub use dynaburst_ddbjson::{MAX_TABLE_NAME, MIN_TABLE_NAME};

/// Constraint violations, reported together as DynamoDB does:
/// "2 validation errors detected: Value … at '…' failed to satisfy constraint: …; …".
#[derive(Default)]
pub struct Violations(Vec<String>);

impl Violations {
    /// Records one violation; `value` is already rendered (`'x'` or `null`).
    pub fn add(&mut self, value: &str, member: &str, constraint: &str) {
        self.0.push(format!("Value {value} at '{member}' failed to satisfy constraint: {constraint}"));
    }

    /// Ok when nothing was recorded.
    pub fn finish(self) -> Result<(), ApiError> {
        if self.0.is_empty() {
            return Ok(());
        }
        let n = self.0.len();
        Err(ApiError::validation(format!(
            "{n} validation error{} detected: {}",
            if n == 1 { "" } else { "s" },
            self.0.join("; ")
        )))
    }
}

/// A request body: a JSON object.
pub struct Req<'a> {
    pub map: &'a Map<String, Value>,
}

impl<'a> Req<'a> {
    /// Wraps a parsed body.
    pub fn new(v: &'a Value) -> Result<Req<'a>, ApiError> {
        match v.as_object() {
            Some(map) => Ok(Req { map }),
            None => Err(ApiError::serialization("Start of structure or map found where not expected")),
        }
    }

    /// A member, treating JSON null as absent.
    pub fn get(&self, name: &str) -> Option<&'a Value> {
        self.map.get(name).filter(|v| !v.is_null())
    }

    /// An optional string member.
    pub fn opt_str(&self, name: &str) -> Result<Option<&'a str>, ApiError> {
        match self.get(name) {
            None => Ok(None),
            Some(v) => v.as_str().map(Some).ok_or_else(|| wrong_json_type(v, "String")),
        }
    }

    /// An optional boolean member: a JSON boolean, or one of the strings
    /// DynamoDB reads as one (true/false/1/0/yes/no, S94).
    pub fn opt_bool(&self, name: &str) -> Result<Option<bool>, ApiError> {
        match self.get(name) {
            None => Ok(None),
            Some(v @ Value::String(_)) => dynaburst_apimodel::boolean_value(v)
                .map(Some)
                .ok_or_else(|| ApiError::serialization("Unexpected token received from parser")),
            Some(v) => v.as_bool().map(Some).ok_or_else(|| wrong_json_type(v, "Boolean")),
        }
    }

    /// An optional integer member.
    pub fn opt_i64(&self, name: &str) -> Result<Option<i64>, ApiError> {
        match self.get(name) {
            None => Ok(None),
            Some(v) => v.as_i64().map(Some).ok_or_else(|| wrong_json_type(v, "Integer")),
        }
    }

    /// An optional item member.
    pub fn opt_item(&self, name: &str) -> Result<Option<Item>, ApiError> {
        self.get(name).map(parse_item).transpose()
    }

    /// A required item member (`member` is the constraint path, e.g. "item").
    pub fn item(&self, name: &str, member: &str) -> Result<Item, ApiError> {
        match self.get(name) {
            Some(v) => parse_item(v),
            None => Err(null_member(member)),
        }
    }

    /// Opens a single-item request: the body as a map, then TableName,
    /// the presence of the item member `name` (constraint path `member`),
    /// the mixing of legacy and expression parameters, and the item, in
    /// DynamoDB's order.
    pub fn open_keyed(
        body: &'a Value,
        operation: Operation,
        name: &str,
        member: &str,
    ) -> Result<(Req<'a>, String, Item), ApiError> {
        let req = Req::new(body)?;
        let table_name = req.table_name()?;
        if req.get(name).is_none() {
            return Err(null_member(member));
        }
        check_mixing(&req, operation)?;
        let item = req.item(name, member)?;
        Ok((req, table_name, item))
    }

    /// The TableName member, validated.
    pub fn table_name(&self) -> Result<String, ApiError> {
        let mut violations = Violations::default();
        let name = self.opt_str("TableName")?;
        check_table_name_or_arn(name, "tableName", &mut violations);
        violations.finish()?;
        Ok(name.unwrap_or_default().to_string())
    }

    /// ReturnConsumedCapacity.
    pub fn return_capacity(&self) -> Result<ReturnCapacity, ApiError> {
        Ok(match self.opt_str("ReturnConsumedCapacity")? {
            None | Some("NONE") => ReturnCapacity::None,
            Some("TOTAL") => ReturnCapacity::Total,
            Some("INDEXES") => ReturnCapacity::Indexes,
            Some(other) => {
                return Err(enum_violation(other, "returnConsumedCapacity", "[INDEXES, TOTAL, NONE]"));
            }
        })
    }

    /// ReturnValues.
    pub fn return_values(&self) -> Result<ReturnValues, ApiError> {
        Ok(match self.opt_str("ReturnValues")? {
            None | Some("NONE") => ReturnValues::None,
            Some("ALL_OLD") => ReturnValues::AllOld,
            Some("UPDATED_OLD") => ReturnValues::UpdatedOld,
            Some("ALL_NEW") => ReturnValues::AllNew,
            Some("UPDATED_NEW") => ReturnValues::UpdatedNew,
            Some(other) => {
                return Err(enum_violation(
                    other,
                    "returnValues",
                    "[ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW]",
                ));
            }
        })
    }

    /// ReturnValuesOnConditionCheckFailure: true for ALL_OLD.
    pub fn return_old_on_failure(&self) -> Result<bool, ApiError> {
        Ok(match self.opt_str("ReturnValuesOnConditionCheckFailure")? {
            None | Some("NONE") => false,
            Some("ALL_OLD") => true,
            Some(other) => {
                return Err(enum_violation(other, "returnValuesOnConditionCheckFailure", "[ALL_OLD, NONE]"));
            }
        })
    }

    /// Select.
    pub fn select(&self) -> Result<Option<Select>, ApiError> {
        Ok(match self.opt_str("Select")? {
            None => None,
            Some("ALL_ATTRIBUTES") => Some(Select::AllAttributes),
            Some("ALL_PROJECTED_ATTRIBUTES") => Some(Select::AllProjectedAttributes),
            Some("SPECIFIC_ATTRIBUTES") => Some(Select::SpecificAttributes),
            Some("COUNT") => Some(Select::Count),
            Some(other) => {
                return Err(enum_violation(
                    other,
                    "select",
                    "[SPECIFIC_ATTRIBUTES, COUNT, ALL_ATTRIBUTES, ALL_PROJECTED_ATTRIBUTES]",
                ));
            }
        })
    }

    /// ExpressionAttributeNames.
    pub fn names(&self) -> Result<Option<HashMap<String, String>>, ApiError> {
        self.placeholders("ExpressionAttributeNames", '#', |k, v| {
            let name = v.as_str().ok_or_else(|| wrong_json_type(v, "String"))?;
            if name.is_empty() {
                return Err(ApiError::validation(format!(
                    "ExpressionAttributeNames contains invalid value: Empty attribute name for key {k}"
                )));
            }
            Ok(name.to_string())
        })
    }

    /// A map of placeholders (`#name` or `:value`) to what `parse` makes of
    /// each value: absent is None, empty or a malformed key is refused.
    fn placeholders<T>(
        &self,
        member: &str,
        sigil: char,
        parse: impl Fn(&str, &Value) -> Result<T, ApiError>,
    ) -> Result<Option<HashMap<String, T>>, ApiError> {
        let Some(v) = self.get(member) else { return Ok(None) };
        let obj = v.as_object().ok_or_else(|| wrong_json_type(v, "Map"))?;
        if obj.is_empty() {
            return Err(ApiError::validation(format!("{member} must not be empty")));
        }
        let mut out = HashMap::with_capacity(obj.len());
        for (k, v) in obj {
            if !is_placeholder(k, sigil) {
                return Err(ApiError::validation(format!("{member} contains invalid key: Syntax error; key: \"{k}\"")));
            }
            out.insert(k.clone(), parse(k, v)?);
        }
        Ok(Some(out))
    }

    /// The options PutItem, DeleteItem and UpdateItem share, checked in
    /// this order.
    pub fn write_options(&self) -> Result<WriteOptions, ApiError> {
        Ok(WriteOptions {
            condition: self.opt_str("ConditionExpression")?.map(str::to_string),
            expr: self.expr_args()?,
            return_values: self.return_values()?,
            return_capacity: self.return_capacity()?,
            return_old_on_condition_failure: self.return_old_on_failure()?,
            return_item_collection_metrics: self.return_item_collection_metrics()?,
        })
    }

    /// ReturnItemCollectionMetrics: true for SIZE (the service model has
    /// already checked the value is SIZE or NONE).
    pub fn return_item_collection_metrics(&self) -> Result<bool, ApiError> {
        Ok(self.opt_str("ReturnItemCollectionMetrics")? == Some("SIZE"))
    }

    /// ExpressionAttributeNames and ExpressionAttributeValues.
    pub fn expr_args(&self) -> Result<ExprArgs, ApiError> {
        let names = self.names()?;
        let values = self.placeholders("ExpressionAttributeValues", ':', |k, v| {
            parse_value(v).map_err(|mut e| {
                if e.kind == ErrorKind::Validation {
                    let inner = e.message.take().unwrap_or_default();
                    e.message = Some(format!("ExpressionAttributeValues contains invalid value: {inner} for key {k}"));
                }
                e
            })
        })?;
        Ok(ExprArgs { names, values })
    }
}

/// A placeholder: the sigil, then one or more of [A-Za-z0-9_].
fn is_placeholder(key: &str, sigil: char) -> bool {
    key.strip_prefix(sigil)
        .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
}

/// "Value null at 'member' failed to satisfy constraint: Member must not be null".
pub fn null_member(member: &str) -> ApiError {
    let mut v = Violations::default();
    v.add("null", member, "Member must not be null");
    v.finish().err().unwrap_or_else(|| ApiError::validation("missing member"))
}

fn enum_violation(value: &str, member: &str, set: &str) -> ApiError {
    let mut v = Violations::default();
    v.add(&format!("'{value}'"), member, &format!("Member must satisfy enum value set: {set}"));
    v.finish().err().unwrap_or_else(|| ApiError::validation("invalid enum value"))
}

/// Checks a table name's length and characters.
/// Longest table ARN given as a TableName (the model's `TableArn` shape).
pub const MAX_TABLE_ARN: usize = 1024;

/// A TableName member, which may also be the table's ARN (S163): an ARN is
/// only held to the `TableArn` length, a name to the name's rules.
pub fn check_table_name_or_arn(name: Option<&str>, member: &str, violations: &mut Violations) {
    match name {
        Some(arn) if arn.starts_with("arn:") => {
            if arn.len() > MAX_TABLE_ARN {
                violations.add(
                    &format!("'{arn}'"),
                    member,
                    &format!("Member must have length less than or equal to {MAX_TABLE_ARN}"),
                );
            }
        }
        _ => check_table_name(name, member, violations),
    }
}

pub fn check_table_name(name: Option<&str>, member: &str, violations: &mut Violations) {
    let Some(name) = name else {
        violations.add("null", member, "Member must not be null");
        return;
    };
    let shown = format!("'{name}'");
    if !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-') {
        violations.add(&shown, member, "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+");
    }
    if name.len() < MIN_TABLE_NAME {
        violations.add(&shown, member, "Member must have length greater than or equal to 3");
    }
    if name.len() > MAX_TABLE_NAME {
        violations.add(&shown, member, "Member must have length less than or equal to 255");
    }
}
