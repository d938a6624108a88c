//! DynamoDB's expression language: parsers (with DynamoDB's limits and
//! error messages) and evaluators for condition, filter, key-condition,
//! update and projection expressions.
//!
//! # Usage
//!
//! Build one [`Placeholders`] per request from its
//! `ExpressionAttributeNames`/`ExpressionAttributeValues`, parse every
//! expression of the request with it (placeholders are resolved at parse
//! time), then call [`Placeholders::check_all_used`].
//!
//! # Limits and stack safety
//!
//! Every input is bounded before it can cost stack or time:
//!
//! * [`MAX_EXPRESSION_BYTES`]: longer texts are rejected before tokenizing.
//! * [`MAX_NESTING_DEPTH`]: the parser is recursive descent, and recursion
//!   happens only when entering parentheses, `NOT` or function arguments.
//!   Each of those first calls an `enter_nesting` check that fails once the
//!   depth would exceed the limit, so recursion depth is bounded by a small
//!   constant times the limit whatever the input (10 000 nested parentheses
//!   fail at depth 301). Sequences (`AND`/`OR` chains, `IN` lists, action
//!   lists, path steps) are parsed with loops, and `AND`/`OR` chains are
//!   stored flat, so the resulting trees are as shallow as the nesting and
//!   evaluating (or dropping) them recurses no deeper than parsing did.
//! * [`MAX_PATH_DEPTH`]: document paths are parsed iteratively and limited.
//! * [`MAX_IN_OPERANDS`] and [`MAX_UPDATE_OPERATORS`]: DynamoDB's quotas.
//!
//! Messages for the nesting, path-depth and operator-count limits are this
//! crate's wording (DynamoDB's exact text for them is not documented); all
//! other messages follow DynamoDB's.

mod condition;
mod error;
mod key_condition;
mod lexer;
mod parser;
mod path;
mod placeholders;
mod projection;
mod reserved;
mod update;

#[cfg(test)]
mod tests;

pub use condition::{parse_condition, Comparator, Condition, Operand};
pub use error::{ExprError, ExprKind};
pub use key_condition::{parse_key_condition, KeyCondition, KeyOp, KeyPart};
pub use path::{Path, PathElem};
pub use placeholders::Placeholders;
pub use projection::{parse_projection, project};
pub use reserved::{is_reserved_word, RESERVED_WORDS};
pub use update::{parse_update, SetValue, UpdateAction, UpdateExpr, UpdateOperand};

/// Longest expression accepted, in bytes (DynamoDB: 4 KB). Longer ones
/// fail with "Expression size has exceeded the maximum allowed size;
/// expression size: N".
pub const MAX_EXPRESSION_BYTES: usize = 4096;

/// Deepest nesting of parentheses, `NOT` and function calls accepted: a
/// bound on recursion, not one of DynamoDB's (it accepts `a<b or (a<b or
/// (...))` 149 levels deep, ScyllaDB's Alternator suite run against it, and
/// limits the operators instead: [`MAX_CONDITION_OPERATORS`]). Deeper ones
/// fail with "The expression has too many nested levels; maximum nesting
/// level: 300".
pub const MAX_NESTING_DEPTH: usize = 300;

/// Most operators (comparisons, BETWEEN, IN, AND, OR, NOT; not parentheses
/// or functions) in one condition: DynamoDB refuses the 301st with "The
/// expression contains too many operators; operator count: 301"
/// (ScyllaDB's Alternator suite, run against DynamoDB).
pub const MAX_CONDITION_OPERATORS: usize = 300;

/// Most levels (the top-level name and each `.name` or `[index]` after it)
/// of a document path, matching DynamoDB's 32 levels of nested attributes. Longer paths fail with "The document path has too many
/// nesting levels; maximum nesting level: 32". DynamoDB counts the first
/// name as a level: `a.b…` with 32 names passes, 33 fail (ScyllaDB's
/// Alternator suite, run against DynamoDB).
pub const MAX_PATH_DEPTH: usize = 32;

/// Most operands in an `IN (…)` list (DynamoDB: 100). More fail with "The
/// IN operator is provided with too many operands; number of operands: N".
pub const MAX_IN_OPERANDS: usize = 100;

/// Most operators (`+`, `-`) and function calls in one update expression
/// (DynamoDB: 300). More fail with "The expression has too many operators
/// or functions; number of operators or functions: N, maximum allowed: 300".
pub const MAX_UPDATE_OPERATORS: usize = 300;
