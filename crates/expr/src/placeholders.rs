//! Expression attribute names (`#n`) and values (`:v`) of one request.

use std::collections::{HashMap, HashSet};

use dynaburst_model::AttributeValue;

use crate::error::ExprError;

/// The `ExpressionAttributeNames` and `ExpressionAttributeValues` of one
/// request. Parse every expression of the request with the same
/// `Placeholders`, then call [`Placeholders::check_all_used`].
#[derive(Debug)]
pub struct Placeholders<'a> {
    names: Option<&'a HashMap<String, String>>,
    values: Option<&'a HashMap<String, AttributeValue>>,
    used_names: HashSet<String>,
    used_values: HashSet<String>,
}

impl<'a> Placeholders<'a> {
    /// `names`: ExpressionAttributeNames (`"#n" -> "real"`); `values`:
    /// ExpressionAttributeValues (`":v" -> value`). Either may be absent.
    pub fn new(
        names: Option<&'a HashMap<String, String>>,
        values: Option<&'a HashMap<String, AttributeValue>>,
    ) -> Self {
        Placeholders { names, values, used_names: HashSet::new(), used_values: HashSet::new() }
    }

    /// After all of a request's expressions were parsed: an error if any
    /// supplied name or value was never used. Names are checked first;
    /// keys are listed sorted.
    pub fn check_all_used(&self) -> Result<(), ExprError> {
        if let Some(keys) = unused(self.names, &self.used_names) {
            return Err(ExprError::new(format!(
                "Value provided in ExpressionAttributeNames unused in expressions: keys: {{{keys}}}"
            )));
        }
        if let Some(keys) = unused(self.values, &self.used_values) {
            return Err(ExprError::new(format!(
                "Value provided in ExpressionAttributeValues unused in expressions: keys: {{{keys}}}"
            )));
        }
        Ok(())
    }

    /// The attribute name `#placeholder` stands for, marking it used.
    pub(crate) fn resolve_name(&mut self, placeholder: &str) -> Option<String> {
        let real = self.names?.get(placeholder)?;
        self.used_names.insert(placeholder.to_string());
        Some(real.clone())
    }

    /// The value `:placeholder` stands for, marking it used.
    pub(crate) fn resolve_value(&mut self, placeholder: &str) -> Option<AttributeValue> {
        let value = self.values?.get(placeholder)?;
        self.used_values.insert(placeholder.to_string());
        Some(value.clone())
    }
}

/// The supplied keys never used, sorted and joined by ", ", if any.
fn unused<V>(supplied: Option<&HashMap<String, V>>, used: &HashSet<String>) -> Option<String> {
    let mut keys: Vec<&str> = supplied?.keys().filter(|key| !used.contains(*key)).map(String::as_str).collect();
    if keys.is_empty() {
        return None;
    }
    keys.sort_unstable();
    Some(keys.join(", "))
}
