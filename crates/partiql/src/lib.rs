//! DynamoDB's subset of PartiQL: SELECT, INSERT, UPDATE, DELETE and (in
//! transactions) EXISTS, parsed into a typed [`Statement`].
//!
//! Literals stay as written (a number is its text): turning them into
//! attribute values, and statements into operations, is the caller's job
//! (`dynaburst-wire`), which knows the tables.
//!
//! Architecture invariant: pure (it depends only on `dynaburst-expr`, for
//! its comparison operators): no I/O, no clock, and no input makes it
//! recurse past [`MAX_NESTING`].

mod lexer;
mod parser;

use std::fmt;

/// The comparison operators are the expression language's.
pub use dynaburst_expr::Comparator as CompareOp;

pub use parser::parse;

/// Deepest nesting of parentheses, operators and literals a statement may
/// have.
pub const MAX_NESTING: usize = 64;

/// A statement and the number of `?` parameters it has.
#[derive(Clone, Debug, PartialEq)]
pub struct Parsed {
    pub statement: Statement,
    pub parameters: usize,
}

/// A parsed statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Statement {
    Select(Select),
    /// `INSERT INTO "t" VALUE {...}`.
    Insert {
        table: String,
        value: Expr,
    },
    /// `UPDATE "t" SET ... REMOVE ... WHERE ... [RETURNING ...]`.
    Update {
        table: String,
        actions: Vec<UpdateAction>,
        condition: Expr,
        returning: Option<Returning>,
    },
    /// `DELETE FROM "t" WHERE ... [RETURNING ALL OLD *]`.
    Delete {
        table: String,
        condition: Expr,
        returning: Option<Returning>,
    },
    /// `EXISTS(SELECT ...)`, a condition check in a transaction.
    Exists(Select),
}

impl Statement {
    /// The table the statement names.
    pub fn table(&self) -> &str {
        match self {
            Statement::Select(s) | Statement::Exists(s) => &s.table,
            Statement::Insert { table, .. } | Statement::Update { table, .. } | Statement::Delete { table, .. } => {
                table
            }
        }
    }

    /// True for SELECT (EXISTS counts as a write's condition check).
    pub fn is_read(&self) -> bool {
        matches!(self, Statement::Select(_))
    }
}

/// A SELECT.
#[derive(Clone, Debug, PartialEq)]
pub struct Select {
    pub table: String,
    /// `"t"."index"`.
    pub index: Option<String>,
    /// None for `*`.
    pub projection: Option<Vec<Path>>,
    pub condition: Option<Expr>,
    /// ORDER BY: each path and whether it is DESC.
    pub order_by: Vec<(Path, bool)>,
}

/// One action of an UPDATE.
#[derive(Clone, Debug, PartialEq)]
pub enum UpdateAction {
    Set(Path, Expr),
    Remove(Path),
}

/// RETURNING.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Returning {
    AllOld,
    ModifiedOld,
    AllNew,
    ModifiedNew,
}

/// One step of a document path.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    Attr(String),
    Index(u32),
}

/// A document path: a top-level attribute, then map keys and list indexes.
#[derive(Clone, Debug, PartialEq)]
pub struct Path(pub Vec<Step>);

impl Path {
    /// The attribute name when the path is a top-level attribute alone.
    pub fn top_level(&self) -> Option<&str> {
        match self.0.as_slice() {
            [Step::Attr(name)] => Some(name),
            _ => None,
        }
    }
}

/// What `IS [NOT] ...` tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IsKind {
    Missing,
    Null,
    /// A DynamoDB type descriptor ("S", "N", "BOOL", "M", "L", "B", ...).
    Type(&'static str),
}

/// An expression: a condition, or a value (literal, parameter, path,
/// arithmetic, function call).
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Path(Path),
    /// A string literal.
    Str(String),
    /// A number literal's text (with a leading `-` when negated).
    Num(String),
    Bool(bool),
    Null,
    /// The n-th `?` (0-based).
    Param(usize),
    /// `{'k': v, ...}`, in written order.
    Tuple(Vec<(String, Expr)>),
    /// `[v, ...]`.
    List(Vec<Expr>),
    /// `<<v, ...>>`: a set.
    Bag(Vec<Expr>),
    Compare(CompareOp, Box<Expr>, Box<Expr>),
    Between(Box<Expr>, Box<Expr>, Box<Expr>),
    In(Box<Expr>, Vec<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Is {
        expr: Box<Expr>,
        negated: bool,
        kind: IsKind,
    },
    /// A function call; the name is lower-cased.
    Call(String, Vec<Expr>),
    /// `a + b` (true) or `a - b` (false).
    Arith(bool, Box<Expr>, Box<Expr>),
}

impl Expr {
    /// The conjuncts of a chain of ANDs, left to right.
    pub fn conjuncts(&self) -> Vec<&Expr> {
        match self {
            Expr::And(a, b) => {
                let mut out = a.conjuncts();
                out.extend(b.conjuncts());
                out
            }
            other => vec![other],
        }
    }
}

/// Why a statement does not parse. Each displays as DynamoDB's message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// A token the lexer cannot read (a `#`, an open comment or string,
    /// an exponent beyond 32 bits): DynamoDB gives no detail.
    Lexical,
    /// Tokens left after a whole statement.
    TrailingTokens,
    /// A statement that stops early or goes wrong midway.
    UnexpectedTerm,
    /// A table alias.
    Aliasing,
    /// `<<>>`.
    EmptyBag,
    /// Nested deeper than [`MAX_NESTING`].
    TooDeep,
    /// An unknown function, with its lower-case name.
    UnknownFunction(String),
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const MALFORMED: &str = "Statement wasn't well formed, can't be processed: ";
        match self {
            ParseError::Lexical => f.write_str(MALFORMED),
            ParseError::TrailingTokens => write!(f, "{MALFORMED}Unexpected token after expression"),
            ParseError::UnexpectedTerm => write!(f, "{MALFORMED}Unexpected term"),
            ParseError::Aliasing => f.write_str("Aliasing is not supported"),
            ParseError::EmptyBag => f.write_str("Empty bags are not supported"),
            ParseError::TooDeep => write!(f, "{MALFORMED}Expression nesting is too deep"),
            ParseError::UnknownFunction(name) => write!(f, "Unrecognized function: {name}"),
        }
    }
}

impl std::error::Error for ParseError {}
