//! Parser machinery shared by every expression kind: token cursor, syntax
//! errors, the nesting limit, document paths, operands and the collection
//! of semantic errors.
//!
//! Errors come in two classes, as in DynamoDB:
//!
//! * *Fatal* errors stop parsing at once: syntax errors and exceeded limits.
//!   They are returned as `Err` from the parsing methods.
//! * *Semantic* errors (reserved words, undefined placeholders, misused
//!   functions, overlapping paths…) are recorded while parsing continues,
//!   and [`Parser::finish`] reports the one DynamoDB would report: the first
//!   recorded error of the highest-priority category for the grammar.
//!   While such an error is pending, the AST under construction may contain
//!   placeholder nodes; it is never returned.

use dynaburst_model::AttributeValue;

use crate::error::{ExprError, ExprKind};
use crate::lexer::{tokenize, Token, TokenKind};
use crate::path::{Path, PathElem};
use crate::placeholders::Placeholders;
use crate::reserved::is_reserved_word;
use crate::{MAX_CONDITION_OPERATORS, MAX_EXPRESSION_BYTES, MAX_NESTING_DEPTH, MAX_PATH_DEPTH};

/// The functions condition expressions accept as conditions.
pub(crate) const CONDITION_FUNCTIONS: [&str; 5] =
    ["attribute_exists", "attribute_not_exists", "attribute_type", "begins_with", "contains"];

/// The functions update expressions accept.
pub(crate) const UPDATE_FUNCTIONS: [&str; 2] = ["if_not_exists", "list_append"];

/// The three grammars. They decide which semantic error wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Grammar {
    /// Condition, filter and key-condition expressions.
    Condition,
    /// Update expressions.
    Update,
    /// Projection expressions.
    Projection,
}

impl Grammar {
    /// Semantic error categories, most important first (the order DynamoDB
    /// reports them in, as observed by dynalite's tests against it).
    fn priority(self) -> &'static [Category] {
        use Category::*;
        match self {
            Grammar::Condition => &[
                RedundantParentheses,
                UnknownFunction,
                MisusedFunction,
                Reserved,
                UndefinedPlaceholder,
                OperandCount,
                Distinct,
                FunctionOperand,
            ],
            Grammar::Update => &[
                RedundantParentheses,
                Reserved,
                UnknownFunction,
                DuplicateSection,
                UndefinedName,
                UndefinedValue,
                PathOverlap,
                PathConflict,
                ActionOperand,
                OperandCount,
                FunctionOperand,
            ],
            Grammar::Projection => &[Reserved, UndefinedName, PathOverlap, PathConflict],
        }
    }
}

/// Kinds of semantic error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Category {
    /// `((…))`.
    RedundantParentheses,
    /// A function that does not exist or is not allowed in this grammar.
    UnknownFunction,
    /// A condition function used as an operand, or `size` as a condition.
    MisusedFunction,
    /// A bare attribute name that is a reserved word.
    Reserved,
    /// An undefined `#name` or `:value` (condition grammar: one category).
    UndefinedPlaceholder,
    /// An undefined `#name` (update and projection grammars).
    UndefinedName,
    /// An undefined `:value` (update grammar).
    UndefinedValue,
    /// A second SET/REMOVE/ADD/DELETE clause.
    DuplicateSection,
    /// Two paths where one is a prefix of the other.
    PathOverlap,
    /// Two paths that disagree on whether a parent is a map or a list.
    PathConflict,
    /// Wrong number of function arguments.
    OperandCount,
    /// `a = a`, `begins_with(a, a)`.
    Distinct,
    /// A constant of the wrong type for ADD or DELETE.
    ActionOperand,
    /// A function or operator argument of the wrong type or shape.
    FunctionOperand,
}

/// An operand as written, before it is known how it is used.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ParsedOperand {
    pub term: Term,
    /// Whether it was wrapped in parentheses.
    pub parenthesized: bool,
}

impl ParsedOperand {
    fn bare(term: Term) -> ParsedOperand {
        ParsedOperand { term, parenthesized: false }
    }

    /// The type descriptor of this operand when it is known while parsing:
    /// a constant's type, or `N` for a `size(…)` call.
    pub fn constant_type(&self) -> Option<&'static str> {
        match &self.term {
            Term::Value(value) => Some(value.value_type().descriptor()),
            Term::Call(call) if call.name == "size" => Some("N"),
            _ => None,
        }
    }
}

/// The three shapes of operand.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Term {
    Path(Path),
    Value(AttributeValue),
    Call(Call),
}

/// A function call as written: `name(arg, …)`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Call {
    pub name: String,
    pub args: Vec<ParsedOperand>,
}

/// A recursive-descent parser over one expression's tokens.
pub(crate) struct Parser<'s, 'p, 'a> {
    src: &'s str,
    tokens: Vec<Token>,
    pos: usize,
    kind: ExprKind,
    grammar: Grammar,
    placeholders: &'p mut Placeholders<'a>,
    findings: Vec<(Category, String)>,
    /// Current nesting depth (parentheses, NOT, function arguments).
    depth: usize,
    /// Operators (comparisons, BETWEEN, IN, AND, OR, NOT) read so far in a
    /// condition.
    operators: usize,
}

impl<'s, 'p, 'a> Parser<'s, 'p, 'a> {
    /// Checks the size limit and emptiness, then tokenizes `src`.
    pub fn new(
        src: &'s str,
        kind: ExprKind,
        grammar: Grammar,
        placeholders: &'p mut Placeholders<'a>,
    ) -> Result<Self, ExprError> {
        if src.len() > MAX_EXPRESSION_BYTES {
            // Live captures: only condition and filter expressions name the
            // size; a projection ends at the semicolon.
            return Err(kind.invalid(match kind {
                ExprKind::Projection => "Expression size has exceeded the maximum allowed size;".to_string(),
                _ => format!("Expression size has exceeded the maximum allowed size; expression size: {}", src.len()),
            }));
        }
        let tokens = tokenize(src);
        if tokens.is_empty() {
            return Err(kind.invalid("The expression can not be empty;"));
        }
        Ok(Parser { src, tokens, pos: 0, kind, grammar, placeholders, findings: Vec::new(), depth: 0, operators: 0 })
    }

    /// The expression kind, for messages.
    pub fn kind(&self) -> ExprKind {
        self.kind
    }

    /// The kind of the current token (`None` at the end).
    pub fn peek(&self) -> Option<TokenKind> {
        self.peek_nth(0)
    }

    /// The kind of the token `n` places after the current one.
    pub fn peek_nth(&self, n: usize) -> Option<TokenKind> {
        self.tokens.get(self.pos + n).map(|t| t.kind)
    }

    /// True once every token has been consumed.
    pub fn at_end(&self) -> bool {
        self.pos >= self.tokens.len()
    }

    /// Consumes the current token and returns its text.
    pub fn bump(&mut self) -> &'s str {
        let src = self.src;
        match self.tokens.get(self.pos) {
            Some(token) => {
                self.pos += 1;
                &src[token.start..token.end]
            }
            None => "",
        }
    }

    /// Consumes a token of kind `kind`, or fails with a syntax error.
    pub fn expect(&mut self, kind: TokenKind) -> Result<&'s str, ExprError> {
        if self.peek() == Some(kind) {
            Ok(self.bump())
        } else {
            Err(self.syntax_error())
        }
    }

    /// Fails with a syntax error unless every token has been consumed.
    pub fn expect_end(&self) -> Result<(), ExprError> {
        if self.at_end() {
            Ok(())
        } else {
            Err(self.syntax_error())
        }
    }

    /// A syntax error at the current token, in DynamoDB's form:
    /// `Syntax error; token: "<tok>", near: "<prev> <tok> <next>"`, where
    /// `near` is the source text from the previous token to the next one
    /// (the token is `<EOF>` at the end of input).
    pub fn syntax_error(&self) -> ExprError {
        let (token_text, near_end) = match self.tokens.get(self.pos) {
            Some(token) => {
                (&self.src[token.start..token.end], self.tokens.get(self.pos + 1).map_or(token.end, |next| next.end))
            }
            None => ("<EOF>", self.src.len()),
        };
        let near_start = match self.pos.checked_sub(1).and_then(|i| self.tokens.get(i)) {
            Some(previous) => previous.start,
            None => self.tokens.get(self.pos).map_or(self.src.len(), |t| t.start),
        };
        let near = &self.src[near_start..near_end];
        self.kind.invalid(format!("Syntax error; token: \"{token_text}\", near: \"{near}\""))
    }

    /// Enters one nesting level (parentheses, NOT, function arguments),
    /// failing before any deeper recursion if the limit is exceeded.
    pub fn enter_nesting(&mut self) -> Result<(), ExprError> {
        if self.depth >= MAX_NESTING_DEPTH {
            return Err(self.kind.invalid(format!(
                "The expression has too many nested levels; maximum nesting level: {MAX_NESTING_DEPTH}"
            )));
        }
        self.depth += 1;
        Ok(())
    }

    /// Counts one operator of a condition, failing once there are more than
    /// [`MAX_CONDITION_OPERATORS`] (parentheses and functions do not count).
    pub fn count_operator(&mut self) -> Result<(), ExprError> {
        self.operators += 1;
        if self.operators > MAX_CONDITION_OPERATORS {
            return Err(self
                .kind
                .invalid(format!("The expression contains too many operators; operator count: {}", self.operators)));
        }
        Ok(())
    }

    /// Leaves a nesting level entered with [`Parser::enter_nesting`].
    pub fn leave_nesting(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Records a semantic error.
    pub fn record(&mut self, category: Category, message: impl Into<String>) {
        self.findings.push((category, message.into()));
    }

    /// Marks a parenthesized construct, recording an error if it already
    /// had parentheses of its own (`((…))`).
    pub fn mark_parenthesized(&mut self, parenthesized: &mut bool) {
        if *parenthesized {
            self.record(Category::RedundantParentheses, "The expression has redundant parentheses;");
        }
        *parenthesized = true;
    }

    /// Records the error for a function this grammar cannot use at all.
    pub fn record_unusable_function(&mut self, name: &str) {
        let message = match self.grammar {
            Grammar::Update if CONDITION_FUNCTIONS.contains(&name) || name == "size" => {
                format!("The function is not allowed in an update expression; function: {name}")
            }
            Grammar::Condition if UPDATE_FUNCTIONS.contains(&name) => {
                format!("The function is not allowed in a condition expression; function: {name}")
            }
            _ => format!("Invalid function name; function: {name}"),
        };
        self.record(Category::UnknownFunction, message);
    }

    /// Records a wrong argument count for `function`.
    pub fn record_operand_count(&mut self, function: &str, count: usize) {
        self.record(
            Category::OperandCount,
            format!(
                "Incorrect number of operands for operator or function; operator or function: {function}, number of operands: {count}"
            ),
        );
    }

    /// Records a wrongly typed argument of `function`.
    pub fn record_operand_type(&mut self, function: &str, operand_type: &str) {
        self.record(
            Category::FunctionOperand,
            format!(
                "Incorrect operand type for operator or function; operator or function: {function}, operand type: {operand_type}"
            ),
        );
    }

    /// Records that `function` needed a document path as an argument.
    pub fn record_path_required(&mut self, function: &str) {
        self.record(
            Category::FunctionOperand,
            format!("Operator or function requires a document path; operator or function: {function}"),
        );
    }

    /// Reports the most important recorded semantic error, if any.
    pub fn finish(self) -> Result<(), ExprError> {
        let chosen = self
            .grammar
            .priority()
            .iter()
            .find_map(|category| self.findings.iter().find(|(c, _)| c == category))
            // Every category a grammar records is in its priority list; this
            // fallback only guards against a finding being silently dropped.
            .or_else(|| self.findings.first());
        match chosen {
            Some((_, message)) => Err(self.kind.invalid(message)),
            None => Ok(()),
        }
    }

    /// Parses a document path: a name or `#name`, then any number of
    /// `.name`, `.#name` or `[index]`. Iterative; at most
    /// [`MAX_PATH_DEPTH`] levels, the first name included.
    pub fn parse_path(&mut self) -> Result<Path, ExprError> {
        let mut elems = vec![self.parse_path_name()?];
        loop {
            match self.peek() {
                Some(TokenKind::Dot) => {
                    self.bump();
                    elems.push(self.parse_path_name()?);
                }
                Some(TokenKind::LBracket) => {
                    self.bump();
                    let digits = self.expect(TokenKind::Index)?;
                    let index = digits
                        .parse::<usize>()
                        .map_err(|_| self.kind.invalid("List index is not within the allowable range"))?;
                    self.expect(TokenKind::RBracket)?;
                    elems.push(PathElem::Index(index));
                }
                _ => break,
            }
            if elems.len() > MAX_PATH_DEPTH {
                return Err(self.kind.invalid(format!(
                    "The document path has too many nesting levels; maximum nesting level: {MAX_PATH_DEPTH}"
                )));
            }
        }
        Ok(Path(elems))
    }

    /// One name step of a path: a bare name (checked against the reserved
    /// words) or a `#name` placeholder.
    fn parse_path_name(&mut self) -> Result<PathElem, ExprError> {
        match self.peek() {
            Some(TokenKind::Identifier) => {
                let name = self.bump();
                if is_reserved_word(name) {
                    self.record(
                        Category::Reserved,
                        format!("Attribute name is a reserved keyword; reserved keyword: {name}"),
                    );
                }
                Ok(PathElem::Name(name.to_string()))
            }
            Some(TokenKind::NamePlaceholder) => {
                let placeholder = self.bump();
                match self.placeholders.resolve_name(placeholder) {
                    Some(real) => Ok(PathElem::Name(real)),
                    None => {
                        let category = match self.grammar {
                            Grammar::Condition => Category::UndefinedPlaceholder,
                            Grammar::Update | Grammar::Projection => Category::UndefinedName,
                        };
                        self.record(
                            category,
                            format!(
                                "An expression attribute name used in the document path is not defined; attribute name: {placeholder}"
                            ),
                        );
                        Ok(PathElem::Name(placeholder.to_string()))
                    }
                }
            }
            _ => Err(self.syntax_error()),
        }
    }

    /// Parses a `:value` placeholder and resolves it (`NULL` stands in for
    /// an undefined one, whose error is recorded).
    pub fn parse_value(&mut self) -> Result<AttributeValue, ExprError> {
        let placeholder = self.expect(TokenKind::ValuePlaceholder)?;
        if let Some(value) = self.placeholders.resolve_value(placeholder) {
            return Ok(value);
        }
        let category = match self.grammar {
            Grammar::Condition => Category::UndefinedPlaceholder,
            Grammar::Update | Grammar::Projection => Category::UndefinedValue,
        };
        self.record(
            category,
            format!("An expression attribute value used in expression is not defined; attribute value: {placeholder}"),
        );
        Ok(AttributeValue::Null)
    }

    /// Parses an operand: a path, a `:value`, a function call
    /// `name(operand, …)` or a parenthesized operand. Recursion goes only
    /// through parentheses and call arguments, both of which count against
    /// the nesting limit.
    pub fn parse_operand(&mut self) -> Result<ParsedOperand, ExprError> {
        match self.peek() {
            Some(TokenKind::LParen) => {
                self.bump();
                self.enter_nesting()?;
                let mut inner = self.parse_operand()?;
                self.expect(TokenKind::RParen)?;
                self.leave_nesting();
                self.mark_parenthesized(&mut inner.parenthesized);
                Ok(inner)
            }
            Some(TokenKind::ValuePlaceholder) => Ok(ParsedOperand::bare(Term::Value(self.parse_value()?))),
            Some(TokenKind::Identifier) if self.peek_nth(1) == Some(TokenKind::LParen) => {
                let name = self.bump().to_string();
                self.bump();
                self.enter_nesting()?;
                let mut args = vec![self.parse_operand()?];
                while self.peek() == Some(TokenKind::Comma) {
                    self.bump();
                    args.push(self.parse_operand()?);
                }
                self.expect(TokenKind::RParen)?;
                self.leave_nesting();
                Ok(ParsedOperand::bare(Term::Call(Call { name, args })))
            }
            Some(TokenKind::Identifier | TokenKind::NamePlaceholder) => {
                Ok(ParsedOperand::bare(Term::Path(self.parse_path()?)))
            }
            _ => Err(self.syntax_error()),
        }
    }
}
