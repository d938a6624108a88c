//! Unit tests for the expression crate, grouped by expression kind.
//!
//! Expected error messages are DynamoDB's, several taken from dynalite's
//! test suite (which runs against real DynamoDB).

mod condition_tests;
mod key_condition_tests;
mod limit_tests;
mod placeholder_tests;
mod projection_tests;
mod syntax_tests;
mod update_tests;

use std::collections::{BTreeMap, HashMap};

use dynaburst_model::{AttributeValue, Item, Number};

use crate::{
    parse_condition, parse_key_condition, parse_projection, parse_update, Condition, ExprKind, KeyCondition, Path,
    Placeholders, UpdateExpr,
};

/// A number value.
pub(crate) fn n(text: &str) -> AttributeValue {
    AttributeValue::N(Number::parse(text).expect("test number is valid"))
}

/// A string value.
pub(crate) fn s(text: &str) -> AttributeValue {
    AttributeValue::S(text.to_string())
}

/// A binary value.
pub(crate) fn b(bytes: &[u8]) -> AttributeValue {
    AttributeValue::B(bytes.to_vec())
}

/// A string set.
pub(crate) fn ss(elements: &[&str]) -> AttributeValue {
    AttributeValue::Ss(elements.iter().map(|e| e.to_string()).collect())
}

/// A number set.
pub(crate) fn ns(elements: &[&str]) -> AttributeValue {
    AttributeValue::Ns(elements.iter().map(|e| Number::parse(e).expect("test number is valid")).collect())
}

/// A binary set.
pub(crate) fn bs(elements: &[&[u8]]) -> AttributeValue {
    AttributeValue::Bs(elements.iter().map(|e| e.to_vec()).collect())
}

/// A list.
pub(crate) fn l(elements: Vec<AttributeValue>) -> AttributeValue {
    AttributeValue::L(elements)
}

/// A map.
pub(crate) fn m(entries: &[(&str, AttributeValue)]) -> AttributeValue {
    AttributeValue::M(entries.iter().map(|(k, v)| (k.to_string(), v.clone())).collect::<BTreeMap<_, _>>())
}

/// An item.
pub(crate) fn item(entries: &[(&str, AttributeValue)]) -> Item {
    entries.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
}

/// A path from `.`-separated names and `[i]` indexes, e.g. `"a.b[2]"`
/// (test helper: no placeholders or escaping).
pub(crate) fn path(text: &str) -> Path {
    let mut elems = Vec::new();
    for segment in text.split('.') {
        let (name, mut rest) = segment.split_at(segment.find('[').unwrap_or(segment.len()));
        elems.push(crate::PathElem::Name(name.to_string()));
        while let Some(close) = rest.find(']') {
            let index = rest[1..close].parse().expect("test index is valid");
            elems.push(crate::PathElem::Index(index));
            rest = &rest[close + 1..];
        }
    }
    Path(elems)
}

/// ExpressionAttributeNames and ExpressionAttributeValues for a test.
#[derive(Default)]
pub(crate) struct Ctx {
    names: HashMap<String, String>,
    values: HashMap<String, AttributeValue>,
}

impl Ctx {
    pub fn new() -> Ctx {
        Ctx::default()
    }

    /// Adds `#placeholder -> real`.
    pub fn name(mut self, placeholder: &str, real: &str) -> Ctx {
        self.names.insert(placeholder.to_string(), real.to_string());
        self
    }

    /// Adds `:placeholder -> value`.
    pub fn value(mut self, placeholder: &str, value: AttributeValue) -> Ctx {
        self.values.insert(placeholder.to_string(), value);
        self
    }

    /// Placeholders over this context.
    pub fn placeholders(&self) -> Placeholders<'_> {
        Placeholders::new(Some(&self.names), Some(&self.values))
    }

    /// Parses a ConditionExpression.
    pub fn condition(&self, text: &str) -> Result<Condition, String> {
        parse_condition(text, ExprKind::Condition, &mut self.placeholders()).map_err(|e| e.message)
    }

    /// Parses a FilterExpression.
    pub fn filter(&self, text: &str) -> Result<Condition, String> {
        parse_condition(text, ExprKind::Filter, &mut self.placeholders()).map_err(|e| e.message)
    }

    /// Parses an UpdateExpression.
    pub fn update(&self, text: &str) -> Result<UpdateExpr, String> {
        parse_update(text, &mut self.placeholders()).map_err(|e| e.message)
    }

    /// Parses a ProjectionExpression.
    pub fn projection(&self, text: &str) -> Result<Vec<Path>, String> {
        parse_projection(text, &mut self.placeholders()).map_err(|e| e.message)
    }

    /// Parses a KeyConditionExpression.
    pub fn key_condition(&self, text: &str) -> Result<KeyCondition, String> {
        parse_key_condition(text, &mut self.placeholders()).map_err(|e| e.message)
    }

    /// Parses a ConditionExpression and evaluates it against `item`.
    pub fn holds(&self, text: &str, item: &Item) -> bool {
        let condition = self.condition(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        condition.evaluate(item).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    /// The error message parsing a ConditionExpression fails with.
    pub fn condition_error(&self, text: &str) -> String {
        match self.condition(text) {
            Ok(parsed) => panic!("{text} parsed as {parsed:?}"),
            Err(message) => message,
        }
    }

    /// The error message parsing an UpdateExpression fails with.
    pub fn update_error(&self, text: &str) -> String {
        match self.update(text) {
            Ok(parsed) => panic!("{text} parsed as {parsed:?}"),
            Err(message) => message,
        }
    }

    /// Parses an UpdateExpression and applies it to a copy of `before`.
    pub fn applied(&self, text: &str, before: &Item) -> Result<Item, String> {
        let update = self.update(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        let mut after = before.clone();
        match update.apply(&mut after) {
            Ok(()) => Ok(after),
            Err(error) => {
                assert_eq!(&after, before, "a failed update must leave the item unchanged");
                Err(error.message)
            }
        }
    }
}
