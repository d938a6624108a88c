//! Condition and filter expressions: AST, parser and evaluator.
//!
//! Grammar (precedence from loosest to tightest):
//!
//! ```text
//! condition  := or
//! or         := and ("OR" and)*
//! and        := not ("AND" not)*
//! not        := "NOT" not | comparison
//! comparison := operand ("=" | "<>" | "<" | "<=" | ">" | ">=") operand
//!             | operand "BETWEEN" operand "AND" operand
//!             | operand "IN" "(" operand ("," operand)* ")"
//!             | function-call
//!             | "(" condition ")"
//! operand    := path | :value | function-call | "(" operand ")"
//! ```
//!
//! A leading `(` may open either a grouped condition or a parenthesized
//! operand; the parser parses the group once and decides afterwards, so it
//! never backtracks. Groups, NOT, AND and OR are handled with an explicit
//! stack; only operands (parenthesized operands and function arguments)
//! are parsed recursively, within the nesting limit.

use std::borrow::Cow;
use std::cmp::Ordering;

use dynaburst_model::{AttributeValue, Item, Number, ValueType};

use crate::error::{ExprError, ExprKind};
use crate::lexer::{Keyword, TokenKind};
use crate::parser::{Call, Category, Grammar, ParsedOperand, Parser, Term, CONDITION_FUNCTIONS};
use crate::path::Path;
use crate::placeholders::Placeholders;
use crate::MAX_IN_OPERANDS;

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Comparator {
    /// `=`
    Eq,
    /// `<>`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl Comparator {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            Comparator::Eq => "=",
            Comparator::Ne => "<>",
            Comparator::Lt => "<",
            Comparator::Le => "<=",
            Comparator::Gt => ">",
            Comparator::Ge => ">=",
        }
    }
}

/// A value-producing operand of a condition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Operand {
    /// The value at a document path (absent if the path is missing).
    Path(Path),
    /// A constant from ExpressionAttributeValues.
    Value(AttributeValue),
    /// `size(…)`: the size of the inner operand's value, as a number.
    Size(Box<Operand>),
}

/// A parsed condition (also filter and key-condition) expression.
///
/// Trees built by the parser are at most [`crate::MAX_NESTING_DEPTH`]
/// levels of `NOT`/parentheses deep (chains of `AND`/`OR` are flat), so
/// evaluating them recurses a bounded number of times.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Condition {
    /// `left op right`.
    Compare { left: Operand, op: Comparator, right: Operand },
    /// `subject BETWEEN low AND high` (both bounds inclusive).
    Between { subject: Operand, low: Operand, high: Operand },
    /// `subject IN (candidates…)`.
    In { subject: Operand, candidates: Vec<Operand> },
    /// `attribute_exists(path)`.
    AttributeExists(Path),
    /// `attribute_not_exists(path)`.
    AttributeNotExists(Path),
    /// `attribute_type(path, :t)`.
    AttributeType(Path, ValueType),
    /// `begins_with(value, prefix)`.
    BeginsWith(Operand, Operand),
    /// `contains(haystack, needle)`.
    Contains(Operand, Operand),
    /// `NOT condition`.
    Not(Box<Condition>),
    /// All of these hold.
    And(Vec<Condition>),
    /// At least one of these holds.
    Or(Vec<Condition>),
}

impl Condition {
    /// The top-level attribute names the condition reads, in the order they
    /// first appear.
    pub fn top_level_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for n in self.paths().into_iter().filter_map(Path::top_level_name) {
            if !names.iter().any(|x| x == n) {
                names.push(n.to_string());
            }
        }
        names
    }

    /// Every document path the condition reads, in the order written.
    pub fn paths(&self) -> Vec<&Path> {
        let mut paths: Vec<&Path> = Vec::new();
        // Explicit stacks: the tree's depth is bounded, but no recursion is needed.
        let mut conditions = vec![self];
        while let Some(c) = conditions.pop() {
            let mut operands: Vec<&Operand> = Vec::new();
            match c {
                Condition::Compare { left, right, .. } => operands.extend([left, right]),
                Condition::Between { subject, low, high } => operands.extend([subject, low, high]),
                Condition::In { subject, candidates } => {
                    operands.push(subject);
                    operands.extend(candidates);
                }
                Condition::AttributeExists(p) | Condition::AttributeNotExists(p) | Condition::AttributeType(p, _) => {
                    paths.push(p)
                }
                Condition::BeginsWith(a, b) | Condition::Contains(a, b) => operands.extend([a, b]),
                Condition::Not(inner) => conditions.push(inner),
                Condition::And(parts) | Condition::Or(parts) => conditions.extend(parts.iter().rev()),
            }
            while let Some(o) = operands.first().copied() {
                operands.remove(0);
                match o {
                    Operand::Path(p) => paths.push(p),
                    Operand::Value(_) => {}
                    Operand::Size(inner) => operands.insert(0, inner),
                }
            }
        }
        paths
    }
}

pub fn parse_condition(text: &str, kind: ExprKind, ph: &mut Placeholders) -> Result<Condition, ExprError> {
    let mut parser = Parser::new(text, kind, Grammar::Condition, ph)?;
    let condition = parser.parse_condition_tokens()?;
    parser.finish()?;
    Ok(condition)
}

/// A stand-in for a construct whose error has been recorded.
fn placeholder_condition() -> Condition {
    Condition::And(Vec::new())
}

/// A stand-in operand for a construct whose error has been recorded.
fn placeholder_operand() -> Operand {
    Operand::Value(AttributeValue::Null)
}

/// The message for a function used where it is not allowed.
fn misuse_message(function: &str) -> String {
    format!("The function is not allowed to be used this way in an expression; function: {function}")
}

/// Either a finished condition or an operand whose role is not yet known.
enum Node {
    Condition { condition: Condition, parenthesized: bool },
    Operand(ParsedOperand),
}

impl Node {
    fn condition(condition: Condition) -> Node {
        Node::Condition { condition, parenthesized: false }
    }
}

/// One open level of a condition being parsed: the whole expression or a
/// parenthesized group. Levels live on an explicit stack, so parentheses,
/// NOT, AND and OR never recurse.
#[derive(Default)]
struct Level {
    /// Completed OR alternatives (each an AND group).
    alternatives: Vec<Condition>,
    /// Completed parts of the AND group being built.
    conjuncts: Vec<Condition>,
    /// NOTs read before the current term; each holds one nesting level.
    pending_nots: usize,
}

/// `parts` joined by AND (a single part stands alone).
fn all_of(mut parts: Vec<Condition>) -> Condition {
    if parts.len() == 1 {
        if let Some(only) = parts.pop() {
            return only;
        }
    }
    Condition::And(parts)
}

impl Parser<'_, '_, '_> {
    /// Parses all tokens as one condition.
    ///
    /// Shift-reduce over an explicit stack of [`Level`]s: read a term (any
    /// NOTs and opening parentheses, then an operand), then reduce: finish
    /// a comparison, apply pending NOTs, and on AND, OR or `)` fold the
    /// term into its level. Precedence: comparisons, then NOT, then AND,
    /// then OR.
    pub(crate) fn parse_condition_tokens(&mut self) -> Result<Condition, ExprError> {
        let mut levels: Vec<Level> = vec![Level::default()];
        loop {
            let mut node = self.read_term(&mut levels)?;
            loop {
                node = self.complete_comparison(node)?;
                let Some(level) = levels.last_mut() else {
                    return Err(self.syntax_error());
                };
                if level.pending_nots > 0 {
                    let mut condition = self.require_condition(node)?;
                    for _ in 0..level.pending_nots {
                        condition = Condition::Not(Box::new(condition));
                        self.leave_nesting();
                    }
                    level.pending_nots = 0;
                    node = Node::condition(condition);
                }
                match self.peek() {
                    Some(TokenKind::Keyword(Keyword::And)) => {
                        self.count_operator()?;
                        let condition = self.require_condition(node)?;
                        level.conjuncts.push(condition);
                        self.bump();
                        break;
                    }
                    Some(TokenKind::Keyword(Keyword::Or)) => {
                        self.count_operator()?;
                        let condition = self.require_condition(node)?;
                        level.conjuncts.push(condition);
                        let group = all_of(std::mem::take(&mut level.conjuncts));
                        level.alternatives.push(group);
                        self.bump();
                        break;
                    }
                    Some(TokenKind::RParen) if levels.len() > 1 => {
                        let Some(group) = levels.pop() else {
                            return Err(self.syntax_error());
                        };
                        node = self.close_level(group, node)?;
                        self.bump();
                        self.leave_nesting();
                        node = match node {
                            Node::Condition { condition, mut parenthesized } => {
                                self.mark_parenthesized(&mut parenthesized);
                                Node::Condition { condition, parenthesized }
                            }
                            Node::Operand(mut operand) => {
                                self.mark_parenthesized(&mut operand.parenthesized);
                                Node::Operand(operand)
                            }
                        };
                    }
                    _ if levels.len() > 1 => return Err(self.syntax_error()),
                    _ => {
                        let Some(top) = levels.pop() else {
                            return Err(self.syntax_error());
                        };
                        let node = self.close_level(top, node)?;
                        let condition = self.require_condition(node)?;
                        self.expect_end()?;
                        return Ok(condition);
                    }
                }
            }
        }
    }

    /// Reads NOTs and opening parentheses (pushing a level for each `(`),
    /// then the operand that starts the term.
    fn read_term(&mut self, levels: &mut Vec<Level>) -> Result<Node, ExprError> {
        loop {
            match self.peek() {
                Some(TokenKind::Keyword(Keyword::Not)) => {
                    self.bump();
                    self.count_operator()?;
                    self.enter_nesting()?;
                    if let Some(level) = levels.last_mut() {
                        level.pending_nots += 1;
                    }
                }
                Some(TokenKind::LParen) => {
                    self.bump();
                    self.enter_nesting()?;
                    levels.push(Level::default());
                }
                _ => return Ok(Node::Operand(self.parse_operand()?)),
            }
        }
    }

    /// The value of a finished level whose last term is `last`: the term
    /// itself if it stands alone (it may still be an operand, as in
    /// `(a) = :v`), otherwise the AND/OR combination.
    fn close_level(&mut self, mut level: Level, last: Node) -> Result<Node, ExprError> {
        if level.alternatives.is_empty() && level.conjuncts.is_empty() {
            return Ok(last);
        }
        let last = self.require_condition(last)?;
        level.conjuncts.push(last);
        let group = all_of(level.conjuncts);
        if level.alternatives.is_empty() {
            return Ok(Node::condition(group));
        }
        level.alternatives.push(group);
        Ok(Node::condition(Condition::Or(level.alternatives)))
    }

    /// Turns an operand followed by a comparator, BETWEEN or IN into that
    /// condition; anything else is returned unchanged.
    fn complete_comparison(&mut self, node: Node) -> Result<Node, ExprError> {
        let Node::Operand(subject) = node else {
            return Ok(node);
        };
        let Some(next) = self.peek() else {
            return Ok(Node::Operand(subject));
        };
        if let TokenKind::Compare(op) = next {
            self.bump();
            self.count_operator()?;
            let right = self.parse_operand()?;
            return Ok(Node::condition(self.build_compare(subject, op, right)));
        }
        match next {
            TokenKind::Keyword(Keyword::Between) => {
                self.bump();
                self.count_operator()?;
                let low = self.parse_operand()?;
                self.expect(TokenKind::Keyword(Keyword::And))?;
                let high = self.parse_operand()?;
                Ok(Node::condition(self.build_between(subject, low, high)))
            }
            TokenKind::Keyword(Keyword::In) => {
                self.bump();
                self.count_operator()?;
                self.expect(TokenKind::LParen)?;
                let mut candidates = vec![self.parse_operand()?];
                while self.peek() == Some(TokenKind::Comma) {
                    self.bump();
                    candidates.push(self.parse_operand()?);
                }
                self.expect(TokenKind::RParen)?;
                if candidates.len() > MAX_IN_OPERANDS {
                    return Err(self.kind().invalid(format!(
                        "The IN operator is provided with too many operands; number of operands: {}",
                        candidates.len()
                    )));
                }
                let subject = self.operand(subject);
                let candidates = candidates.into_iter().map(|c| self.operand(c)).collect();
                Ok(Node::condition(Condition::In { subject, candidates }))
            }
            _ => Ok(Node::Operand(subject)),
        }
    }

    /// A node that must be a condition: function calls become conditions,
    /// any other operand is a syntax error at the current token (where an
    /// operator was expected).
    fn require_condition(&mut self, node: Node) -> Result<Condition, ExprError> {
        match node {
            Node::Condition { condition, .. } => Ok(condition),
            Node::Operand(ParsedOperand { term: Term::Call(call), .. }) => Ok(self.call_as_condition(call)),
            Node::Operand(_) => Err(self.syntax_error()),
        }
    }

    /// Converts an operand as written into an [`Operand`], recording any
    /// misuse (condition functions used as values, bad `size` arguments).
    fn operand(&mut self, parsed: ParsedOperand) -> Operand {
        match parsed.term {
            Term::Path(path) => Operand::Path(path),
            Term::Value(value) => Operand::Value(value),
            Term::Call(call) => self.call_as_operand(call),
        }
    }

    /// A function call used as an operand: only `size(…)` is allowed.
    fn call_as_operand(&mut self, call: Call) -> Operand {
        if call.name != "size" {
            if CONDITION_FUNCTIONS.contains(&call.name.as_str()) {
                self.record(Category::MisusedFunction, misuse_message(&call.name));
            } else {
                self.record_unusable_function(&call.name);
            }
            return placeholder_operand();
        }
        let count = call.args.len();
        let Ok([argument]) = <[ParsedOperand; 1]>::try_from(call.args) else {
            self.record_operand_count("size", count);
            return placeholder_operand();
        };
        if let Some(operand_type) = argument.constant_type() {
            if matches!(operand_type, "N" | "BOOL" | "NULL") {
                self.record_operand_type("size", operand_type);
            }
        }
        Operand::Size(Box::new(self.operand(argument)))
    }

    /// A function call used as a condition.
    fn call_as_condition(&mut self, call: Call) -> Condition {
        let Call { name, args } = call;
        let expected = match name.as_str() {
            "attribute_exists" | "attribute_not_exists" => 1,
            "attribute_type" | "begins_with" | "contains" => 2,
            "size" => {
                self.record(Category::MisusedFunction, misuse_message("size"));
                return placeholder_condition();
            }
            _ => {
                self.record_unusable_function(&name);
                return placeholder_condition();
            }
        };
        if args.len() != expected {
            self.record_operand_count(&name, args.len());
            return placeholder_condition();
        }
        let mut args = args.into_iter();
        let Some(first) = args.next() else {
            return placeholder_condition();
        };
        let second = args.next();
        if let Some(second) = &second {
            self.check_distinct(&name, &first, second);
        }
        match (name.as_str(), second) {
            ("attribute_exists", None) => match self.require_path(&name, first) {
                Some(path) => Condition::AttributeExists(path),
                None => placeholder_condition(),
            },
            ("attribute_not_exists", None) => match self.require_path(&name, first) {
                Some(path) => Condition::AttributeNotExists(path),
                None => placeholder_condition(),
            },
            ("attribute_type", Some(type_name)) => {
                // A constant's type is known now: the condition is constant
                // (DynamoDB accepts `attribute_type(:v, :t)`: ScyllaDB's
                // Alternator suite, run against it). An empty AND holds, an
                // empty OR does not.
                // A key condition keeps its own rule for attribute_type (its
                // path is refused there as an operator).
                if let (Term::Value(value), false) = (&first.term, self.kind() == ExprKind::KeyCondition) {
                    let actual = value.value_type();
                    return match self.attribute_type_argument(type_name) {
                        Some(asked) if asked == actual => Condition::And(Vec::new()),
                        Some(_) => Condition::Or(Vec::new()),
                        None => placeholder_condition(),
                    };
                }
                let path = self.require_path(&name, first);
                let value_type = self.attribute_type_argument(type_name);
                match (path, value_type) {
                    (Some(path), Some(value_type)) => Condition::AttributeType(path, value_type),
                    _ => placeholder_condition(),
                }
            }
            ("begins_with", Some(prefix)) => {
                for argument in [&first, &prefix] {
                    if let Some(operand_type) = argument.constant_type() {
                        if operand_type != "S" && operand_type != "B" {
                            self.record_operand_type("begins_with", operand_type);
                        }
                    }
                }
                let value = self.operand(first);
                let prefix = self.operand(prefix);
                Condition::BeginsWith(value, prefix)
            }
            ("contains", Some(needle)) => {
                let haystack = self.operand(first);
                let needle = self.operand(needle);
                Condition::Contains(haystack, needle)
            }
            _ => placeholder_condition(),
        }
    }

    /// The path argument `function` requires.
    fn require_path(&mut self, function: &str, argument: ParsedOperand) -> Option<Path> {
        match argument.term {
            Term::Path(path) => Some(path),
            Term::Call(call) => {
                // Report misuse of the inner call too, as DynamoDB does.
                self.call_as_operand(call);
                self.record_path_required(function);
                None
            }
            Term::Value(_) => {
                self.record_path_required(function);
                None
            }
        }
    }

    /// The type named by `attribute_type`'s second argument, which must be
    /// a constant string holding a type descriptor.
    fn attribute_type_argument(&mut self, argument: ParsedOperand) -> Option<ValueType> {
        match &argument.term {
            Term::Value(AttributeValue::S(descriptor)) => {
                let value_type = ValueType::from_descriptor(descriptor);
                if value_type.is_none() {
                    self.record(
                        Category::FunctionOperand,
                        format!(
                            "Invalid attribute type name found; type: {descriptor}, valid types: {{B,NULL,SS,BOOL,L,BS,N,NS,S,M}}"
                        ),
                    );
                }
                value_type
            }
            _ => {
                let operand_type = argument.constant_type().unwrap_or("{NS,SS,L,BS,N,M,B,BOOL,NULL,S}");
                self.record_operand_type("attribute_type", operand_type);
                if let Term::Call(call) = argument.term {
                    self.call_as_operand(call);
                }
                None
            }
        }
    }

    /// Records `a = a`-style errors: the first operand repeated as the
    /// second, when both are document paths.
    fn check_distinct(&mut self, operator: &str, first: &ParsedOperand, second: &ParsedOperand) {
        if let (Term::Path(a), Term::Path(b)) = (&first.term, &second.term) {
            if a == b {
                self.record(
                    Category::Distinct,
                    format!(
                        "The first operand must be distinct from the remaining operands for this operator or function; operator: {operator}, first operand: {a}"
                    ),
                );
            }
        }
    }

    /// Records a constant that an ordering operator cannot order: only
    /// strings, numbers and binaries compare with `<` and BETWEEN (a list or
    /// a Boolean is a ValidationException, not a false condition: ScyllaDB's
    /// Alternator suite, run against DynamoDB).
    fn check_orderable(&mut self, operator: &str, operand: &ParsedOperand) {
        if let Some(operand_type) = operand.constant_type().filter(|t| !matches!(*t, "S" | "N" | "B")) {
            self.record_operand_type(operator, operand_type);
        }
    }

    /// `left op right`.
    fn build_compare(&mut self, left: ParsedOperand, op: Comparator, right: ParsedOperand) -> Condition {
        if !matches!(op, Comparator::Eq | Comparator::Ne) {
            self.check_orderable(op.symbol(), &left);
            self.check_orderable(op.symbol(), &right);
        }
        self.check_distinct(op.symbol(), &left, &right);
        let left = self.operand(left);
        let right = self.operand(right);
        Condition::Compare { left, op, right }
    }

    /// `subject BETWEEN low AND high`, checking constant bounds the way
    /// DynamoDB does (same type, low ≤ high) for string and number bounds.
    fn build_between(&mut self, subject: ParsedOperand, low: ParsedOperand, high: ParsedOperand) -> Condition {
        for operand in [&subject, &low, &high] {
            self.check_orderable("BETWEEN", operand);
        }
        if let (Term::Value(low), Term::Value(high)) = (&low.term, &high.term) {
            if let (Some(low_text), Some(high_text)) = (render_bound(low), render_bound(high)) {
                let bounds = format!(
                    "lower bound operand: AttributeValue: {low_text}, upper bound operand: AttributeValue: {high_text}"
                );
                if low.value_type() != high.value_type() {
                    self.record(
                        Category::FunctionOperand,
                        format!("The BETWEEN operator requires same data type for lower and upper bounds; {bounds}"),
                    );
                } else if order(low, high) == Some(Ordering::Greater) {
                    self.record(
                        Category::FunctionOperand,
                        format!(
                            "The BETWEEN operator requires upper bound to be greater than or equal to lower bound; {bounds}"
                        ),
                    );
                }
            }
        }
        let subject = self.operand(subject);
        let low = self.operand(low);
        let high = self.operand(high);
        Condition::Between { subject, low, high }
    }
}

/// `{S:text}` / `{N:12}` for BETWEEN bound messages; other types are not
/// checked while parsing.
fn render_bound(value: &AttributeValue) -> Option<String> {
    match value {
        AttributeValue::S(s) => Some(format!("{{S:{s}}}")),
        AttributeValue::N(n) => Some(format!("{{N:{n}}}")),
        _ => None,
    }
}

/// The order of two values of one scalar type (see
/// [`AttributeValue::scalar_order`]).
fn order(a: &AttributeValue, b: &AttributeValue) -> Option<Ordering> {
    a.scalar_order(b)
}

/// `size()` of a value: UTF-8 bytes of a string, bytes of a binary,
/// elements of a set, list or map; undefined for other types.
fn size_of(value: &AttributeValue) -> Option<usize> {
    Some(match value {
        AttributeValue::S(s) => s.len(),
        AttributeValue::B(b) => b.len(),
        AttributeValue::Ss(v) => v.len(),
        AttributeValue::Ns(v) => v.len(),
        AttributeValue::Bs(v) => v.len(),
        AttributeValue::L(v) => v.len(),
        AttributeValue::M(m) => m.len(),
        AttributeValue::N(_) | AttributeValue::Bool(_) | AttributeValue::Null => return None,
    })
}

/// `contains(haystack, needle)`: substring of a string or binary, member
/// of a set of the needle's type, or element of a list.
fn contains(haystack: &AttributeValue, needle: &AttributeValue) -> bool {
    match (haystack, needle) {
        (AttributeValue::S(h), AttributeValue::S(n)) => h.contains(n.as_str()),
        (AttributeValue::B(h), AttributeValue::B(n)) => contains_bytes(h, n),
        (AttributeValue::Ss(set), AttributeValue::S(n)) => set.contains(n),
        (AttributeValue::Ns(set), AttributeValue::N(n)) => set.contains(n),
        (AttributeValue::Bs(set), AttributeValue::B(n)) => set.contains(n),
        (AttributeValue::L(list), n) => list.iter().any(|element| element.semantic_eq(n)),
        _ => false,
    }
}

/// Whether `needle` occurs in `haystack`, in time linear in both
/// (Knuth-Morris-Pratt), so large binaries cannot make a filter slow.
fn contains_bytes(haystack: &[u8], needle: &[u8]) -> bool {
    if needle.is_empty() {
        return true;
    }
    // fallback[i]: length of the longest proper prefix of needle[..=i]
    // that is also a suffix of it. Every index below stays under
    // needle.len(): `k <= i` while building, and `matched < needle.len()`
    // while scanning (a full match returns at once).
    let mut fallback = vec![0usize; needle.len()];
    let mut k = 0;
    for i in 1..needle.len() {
        while k > 0 && needle[i] != needle[k] {
            k = fallback[k - 1];
        }
        if needle[i] == needle[k] {
            k += 1;
        }
        fallback[i] = k;
    }
    let mut matched = 0;
    for &byte in haystack {
        while matched > 0 && byte != needle[matched] {
            matched = fallback[matched - 1];
        }
        if byte == needle[matched] {
            matched += 1;
            if matched == needle.len() {
                return true;
            }
        }
    }
    false
}

/// `begins_with(value, prefix)` for strings and binaries.
fn begins_with(value: &AttributeValue, prefix: &AttributeValue) -> bool {
    match (value, prefix) {
        (AttributeValue::S(v), AttributeValue::S(p)) => v.starts_with(p.as_str()),
        (AttributeValue::B(v), AttributeValue::B(p)) => v.starts_with(p),
        _ => false,
    }
}

/// `left op right` where either side may be absent (a missing attribute
/// or an undefined `size`): only `<>` can then be true.
fn compare(op: Comparator, left: Option<&AttributeValue>, right: Option<&AttributeValue>) -> bool {
    let (Some(left), Some(right)) = (left, right) else {
        return op == Comparator::Ne;
    };
    match op {
        Comparator::Eq => left.semantic_eq(right),
        Comparator::Ne => !left.semantic_eq(right),
        Comparator::Lt => order(left, right) == Some(Ordering::Less),
        Comparator::Le => matches!(order(left, right), Some(Ordering::Less | Ordering::Equal)),
        Comparator::Gt => order(left, right) == Some(Ordering::Greater),
        Comparator::Ge => matches!(order(left, right), Some(Ordering::Greater | Ordering::Equal)),
    }
}

impl Operand {
    /// This operand's value in `item`, if it has one.
    fn value<'i>(&'i self, item: &'i Item) -> Option<Cow<'i, AttributeValue>> {
        match self {
            Operand::Path(path) => path.resolve(item).map(Cow::Borrowed),
            Operand::Value(value) => Some(Cow::Borrowed(value)),
            Operand::Size(inner) => {
                let size = size_of(inner.value(item)?.as_ref())?;
                let size = i64::try_from(size).ok()?;
                Some(Cow::Owned(AttributeValue::N(Number::from_i64(size))))
            }
        }
    }
}

impl Condition {
    /// Evaluates the condition against `item` (empty when the item does
    /// not exist). Type mismatches and missing attributes make comparisons
    /// false rather than failing; the `Result` leaves room for runtime
    /// validation errors.
    pub fn evaluate(&self, item: &Item) -> Result<bool, ExprError> {
        Ok(self.holds(item))
    }

    /// The truth value; recursion depth is the tree's depth.
    fn holds(&self, item: &Item) -> bool {
        match self {
            Condition::Compare { left, op, right } => {
                compare(*op, left.value(item).as_deref(), right.value(item).as_deref())
            }
            Condition::Between { subject, low, high } => {
                match (subject.value(item), low.value(item), high.value(item)) {
                    (Some(value), Some(low), Some(high)) => {
                        matches!(order(&low, &value), Some(Ordering::Less | Ordering::Equal))
                            && matches!(order(&value, &high), Some(Ordering::Less | Ordering::Equal))
                    }
                    _ => false,
                }
            }
            Condition::In { subject, candidates } => match subject.value(item) {
                Some(value) => {
                    candidates.iter().any(|candidate| candidate.value(item).is_some_and(|c| value.semantic_eq(&c)))
                }
                None => false,
            },
            Condition::AttributeExists(path) => path.resolve(item).is_some(),
            Condition::AttributeNotExists(path) => path.resolve(item).is_none(),
            Condition::AttributeType(path, value_type) => {
                path.resolve(item).is_some_and(|value| value.value_type() == *value_type)
            }
            Condition::BeginsWith(value, prefix) => match (value.value(item), prefix.value(item)) {
                (Some(value), Some(prefix)) => begins_with(&value, &prefix),
                _ => false,
            },
            Condition::Contains(haystack, needle) => match (haystack.value(item), needle.value(item)) {
                (Some(haystack), Some(needle)) => contains(&haystack, &needle),
                _ => false,
            },
            Condition::Not(inner) => !inner.holds(item),
            Condition::And(parts) => parts.iter().all(|part| part.holds(item)),
            Condition::Or(parts) => parts.iter().any(|part| part.holds(item)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::contains_bytes;

    #[test]
    fn byte_search_handles_partial_matches() {
        assert!(contains_bytes(b"aaab", b"aab"));
        assert!(contains_bytes(b"abcabcabd", b"abcabd"));
        assert!(contains_bytes(b"xyz", b""));
        assert!(contains_bytes(b"xyz", b"xyz"));
        assert!(!contains_bytes(b"xy", b"xyz"));
        assert!(!contains_bytes(b"abcabcab", b"abcabd"));
        assert!(!contains_bytes(b"", b"a"));
        // Worst case for naive search stays fast: 400 KB against 200 KB.
        let haystack = vec![b'a'; 400_000];
        let mut needle = vec![b'a'; 200_000];
        needle.push(b'b');
        assert!(!contains_bytes(&haystack, &needle));
    }
}
