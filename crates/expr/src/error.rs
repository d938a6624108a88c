//! Error type and the names DynamoDB gives each kind of expression.

use std::fmt;

/// Which request parameter an expression came from. It only decides how
/// error messages name the expression ("Invalid ConditionExpression: …").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExprKind {
    /// `ConditionExpression` (PutItem, UpdateItem, DeleteItem, transactions).
    Condition,
    /// `FilterExpression` (Query, Scan).
    Filter,
    /// `KeyConditionExpression` (Query).
    KeyCondition,
    /// `UpdateExpression` (UpdateItem).
    Update,
    /// `ProjectionExpression` (GetItem, Query, Scan, …).
    Projection,
}

impl ExprKind {
    /// The request parameter's name, e.g. `"ConditionExpression"`.
    pub fn parameter_name(self) -> &'static str {
        match self {
            ExprKind::Condition => "ConditionExpression",
            ExprKind::Filter => "FilterExpression",
            ExprKind::KeyCondition => "KeyConditionExpression",
            ExprKind::Update => "UpdateExpression",
            ExprKind::Projection => "ProjectionExpression",
        }
    }

    /// An error about this expression: `"Invalid <Parameter>: <detail>"`.
    pub(crate) fn invalid(self, detail: impl fmt::Display) -> ExprError {
        ExprError::new(format!("Invalid {}: {}", self.parameter_name(), detail))
    }
}

/// A ValidationException raised by parsing or evaluating an expression.
/// `message` is the complete text DynamoDB would answer with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExprError {
    /// The full ValidationException message.
    pub message: String,
}

impl ExprError {
    /// An error with exactly this message.
    pub(crate) fn new(message: impl Into<String>) -> ExprError {
        ExprError { message: message.into() }
    }
}

impl fmt::Display for ExprError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ExprError {}
