//! Key condition expressions (Query): a condition restricted to one
//! equality on the partition key and optionally one sort-key condition.
//!
//! The text is parsed with the condition grammar (so syntax, reserved
//! words and placeholders behave identically, with "Invalid
//! KeyConditionExpression: …" messages), then its shape is checked. Shape
//! errors use DynamoDB's own, unprefixed messages (for example
//! "Invalid operator used in KeyConditionExpression: OR"). Which attribute
//! is the partition key and which the sort key is the engine's business:
//! it knows the key schema.

use dynaburst_model::AttributeValue;

use crate::condition::{Comparator, Condition, Operand};
use crate::error::{ExprError, ExprKind};
use crate::parser::{Grammar, Parser};
use crate::path::{Path, PathElem};
use crate::placeholders::Placeholders;

/// A parsed key condition: one or two parts joined by AND.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyCondition {
    /// The conditions, in the order written; attributes are distinct.
    pub parts: Vec<KeyPart>,
}

/// A condition on one key attribute.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyPart {
    /// The (top-level) key attribute.
    pub attribute: String,
    /// What its value must satisfy.
    pub op: KeyOp,
}

/// A key comparison; the values come from ExpressionAttributeValues.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyOp {
    /// `key = v`
    Eq(AttributeValue),
    /// `key < v`
    Lt(AttributeValue),
    /// `key <= v`
    Le(AttributeValue),
    /// `key > v`
    Gt(AttributeValue),
    /// `key >= v`
    Ge(AttributeValue),
    /// `key BETWEEN low AND high`
    Between(AttributeValue, AttributeValue),
    /// `begins_with(key, prefix)`
    BeginsWith(AttributeValue),
}

/// The most parts a key condition can have: every component of a
/// multi-attribute GSI key (four partition-key and four sort-key
/// components, S19). A table's key allows two; the engine checks that.
pub const MAX_KEY_PARTS: usize = 8;

/// Parses a KeyConditionExpression.
pub fn parse_key_condition(text: &str, ph: &mut Placeholders) -> Result<KeyCondition, ExprError> {
    let mut parser = Parser::new(text, ExprKind::KeyCondition, Grammar::Condition, ph)?;
    let condition = parser.parse_condition_tokens()?;
    parser.finish()?;
    key_condition_from(&condition)
}

/// Shape errors.
fn invalid_operator(operator: &str) -> ExprError {
    ExprError::new(format!("Invalid operator used in KeyConditionExpression: {operator}"))
}

fn nested_operations() -> ExprError {
    ExprError::new("KeyConditionExpressions cannot contain nested operations")
}

fn nested_attributes() -> ExprError {
    ExprError::new("KeyConditionExpressions cannot have conditions on nested attributes")
}

fn multiple_attribute_names() -> ExprError {
    ExprError::new("Invalid condition in KeyConditionExpression: Multiple attribute names used in one condition")
}

fn no_key_attribute() -> ExprError {
    ExprError::new("Invalid condition in KeyConditionExpression: No key attribute specified")
}

fn key_must_come_first(operator: &str) -> ExprError {
    ExprError::new(format!(
        "Invalid condition in KeyConditionExpression: {operator} operator must have the key attribute as its first operand"
    ))
}

/// Converts a parsed condition into key parts, checking its shape.
fn key_condition_from(condition: &Condition) -> Result<KeyCondition, ExprError> {
    // Flatten ANDs with an explicit stack (no recursion); keep text order.
    let mut pending = vec![condition];
    let mut leaves = Vec::new();
    while let Some(next) = pending.pop() {
        match next {
            Condition::And(parts) => pending.extend(parts.iter().rev()),
            leaf => leaves.push(leaf),
        }
    }
    let mut parts: Vec<KeyPart> = Vec::with_capacity(leaves.len());
    for leaf in leaves {
        let part = key_part(leaf)?;
        if parts.iter().any(|p| p.attribute == part.attribute) {
            return Err(ExprError::new("KeyConditionExpressions must only contain one condition per key"));
        }
        parts.push(part);
    }
    if parts.len() > MAX_KEY_PARTS {
        return Err(ExprError::new("Query key condition not supported"));
    }
    Ok(KeyCondition { parts })
}

/// One non-AND condition as a key part.
fn key_part(condition: &Condition) -> Result<KeyPart, ExprError> {
    match condition {
        Condition::Compare { left, op, right } => {
            if *op == Comparator::Ne {
                return Err(invalid_operator("<>"));
            }
            match (key_side(left)?, key_side(right)?) {
                (Side::Key(attribute), Side::Value(value)) => Ok(KeyPart { attribute, op: compare_op(*op, value)? }),
                (Side::Value(value), Side::Key(attribute)) => {
                    Ok(KeyPart { attribute, op: compare_op(mirror(*op), value)? })
                }
                (Side::Key(_), Side::Key(_)) => Err(multiple_attribute_names()),
                (Side::Value(_), Side::Value(_)) => Err(no_key_attribute()),
            }
        }
        Condition::Between { subject, low, high } => {
            let Side::Key(attribute) = key_side(subject)? else {
                return Err(key_must_come_first("BETWEEN"));
            };
            match (key_side(low)?, key_side(high)?) {
                (Side::Value(low), Side::Value(high)) => Ok(KeyPart { attribute, op: KeyOp::Between(low, high) }),
                _ => Err(multiple_attribute_names()),
            }
        }
        Condition::BeginsWith(subject, prefix) => {
            let Side::Key(attribute) = key_side(subject)? else {
                return Err(key_must_come_first("begins_with"));
            };
            match key_side(prefix)? {
                Side::Value(prefix) => Ok(KeyPart { attribute, op: KeyOp::BeginsWith(prefix) }),
                Side::Key(_) => Err(multiple_attribute_names()),
            }
        }
        Condition::Or(_) => Err(invalid_operator("OR")),
        Condition::Not(_) => Err(invalid_operator("NOT")),
        Condition::In { .. } => Err(invalid_operator("IN")),
        Condition::AttributeExists(_) => Err(invalid_operator("attribute_exists")),
        Condition::AttributeNotExists(_) => Err(invalid_operator("attribute_not_exists")),
        Condition::AttributeType(..) => Err(invalid_operator("attribute_type")),
        Condition::Contains(..) => Err(invalid_operator("contains")),
        // Only reachable for an empty AND, which the parser never builds.
        Condition::And(_) => Err(ExprError::new("Query key condition not supported")),
    }
}

/// One side of a key comparison.
enum Side {
    Key(String),
    Value(AttributeValue),
}

/// Classifies an operand: a top-level attribute or a constant.
fn key_side(operand: &Operand) -> Result<Side, ExprError> {
    match operand {
        Operand::Path(Path(elems)) => match elems.as_slice() {
            [PathElem::Name(name)] => Ok(Side::Key(name.clone())),
            _ => Err(nested_attributes()),
        },
        Operand::Value(value) => Ok(Side::Value(value.clone())),
        Operand::Size(_) => Err(nested_operations()),
    }
}

/// The comparator seen from the other side (`:v < k` is `k > :v`).
fn mirror(op: Comparator) -> Comparator {
    match op {
        Comparator::Lt => Comparator::Gt,
        Comparator::Le => Comparator::Ge,
        Comparator::Gt => Comparator::Lt,
        Comparator::Ge => Comparator::Le,
        other => other,
    }
}

/// The key operation for `key op value`; `<>` is not one.
fn compare_op(op: Comparator, value: AttributeValue) -> Result<KeyOp, ExprError> {
    Ok(match op {
        Comparator::Eq => KeyOp::Eq(value),
        Comparator::Lt => KeyOp::Lt(value),
        Comparator::Le => KeyOp::Le(value),
        Comparator::Gt => KeyOp::Gt(value),
        Comparator::Ge => KeyOp::Ge(value),
        Comparator::Ne => return Err(invalid_operator("<>")),
    })
}
