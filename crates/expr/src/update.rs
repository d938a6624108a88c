//! Update expressions: AST, parser and application to items.
//!
//! Grammar:
//!
//! ```text
//! update     := clause+            (each of SET/REMOVE/ADD/DELETE at most once)
//! clause     := "SET" set ("," set)* | "REMOVE" path ("," path)*
//!             | "ADD" path :value ("," path :value)*
//!             | "DELETE" path :value ("," path :value)*
//! set        := path "=" set-value
//! set-value  := operand | operand ("+" | "-") operand | "(" set-value ")"
//! operand    := path | :value | if_not_exists(path, operand)
//!             | list_append(operand, operand) | "(" operand ")"
//! ```

use std::collections::{BTreeMap, HashSet};
use std::hash::Hash;

use dynaburst_model::{AttributeValue, Item, NumberError};

use crate::condition::Comparator;
use crate::error::{ExprError, ExprKind};
use crate::lexer::{Keyword, TokenKind};
use crate::parser::{Call, Category, Grammar, ParsedOperand, Parser, Term};
use crate::path::{compare_paths, find_overlap_and_conflict, Path, PathElem};
use crate::placeholders::Placeholders;
use crate::MAX_UPDATE_OPERATORS;

/// A parsed update expression: its actions in the order written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpdateExpr {
    /// Every action of every clause.
    pub actions: Vec<UpdateAction>,
}

/// One action of an update expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UpdateAction {
    /// `SET path = value`.
    Set { path: Path, value: SetValue },
    /// `REMOVE path`.
    Remove { path: Path },
    /// `ADD path :value` (number addition or set union).
    Add { path: Path, value: AttributeValue },
    /// `DELETE path :set` (set difference).
    Delete { path: Path, value: AttributeValue },
}

impl UpdateAction {
    /// The path this action writes or removes.
    pub fn path(&self) -> &Path {
        match self {
            UpdateAction::Set { path, .. }
            | UpdateAction::Remove { path }
            | UpdateAction::Add { path, .. }
            | UpdateAction::Delete { path, .. } => path,
        }
    }
}

/// The right-hand side of a SET action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SetValue {
    /// A single operand.
    Operand(UpdateOperand),
    /// `a + b` (numbers).
    Plus(UpdateOperand, UpdateOperand),
    /// `a - b` (numbers).
    Minus(UpdateOperand, UpdateOperand),
}

/// An operand of a SET value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UpdateOperand {
    /// The value at a path of the item (it must exist).
    Path(Path),
    /// A constant from ExpressionAttributeValues.
    Value(AttributeValue),
    /// `if_not_exists(path, fallback)`.
    IfNotExists(Path, Box<UpdateOperand>),
    /// `list_append(a, b)`.
    ListAppend(Box<UpdateOperand>, Box<UpdateOperand>),
}

/// The four clause keywords.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Clause {
    Set,
    Remove,
    Add,
    Delete,
}

impl Clause {
    fn from_token(kind: TokenKind) -> Option<Clause> {
        match kind {
            TokenKind::Keyword(Keyword::Set) => Some(Clause::Set),
            TokenKind::Keyword(Keyword::Remove) => Some(Clause::Remove),
            TokenKind::Keyword(Keyword::Add) => Some(Clause::Add),
            TokenKind::Keyword(Keyword::Delete) => Some(Clause::Delete),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Clause::Set => "SET",
            Clause::Remove => "REMOVE",
            Clause::Add => "ADD",
            Clause::Delete => "DELETE",
        }
    }
}

/// Parses an update expression.
pub fn parse_update(text: &str, ph: &mut Placeholders) -> Result<UpdateExpr, ExprError> {
    let mut parser = Parser::new(text, ExprKind::Update, Grammar::Update, ph)?;
    let mut seen: Vec<Clause> = Vec::new();
    let mut actions = Vec::new();
    let mut operators = 0usize;
    while !parser.at_end() {
        let Some(clause) = parser.peek().and_then(Clause::from_token) else {
            return Err(parser.syntax_error());
        };
        parser.bump();
        if seen.contains(&clause) {
            parser.record(
                Category::DuplicateSection,
                format!("The \"{}\" section can only be used once in an update expression;", clause.name()),
            );
        }
        seen.push(clause);
        loop {
            actions.push(parser.parse_action(clause, &mut operators)?);
            if parser.peek() != Some(TokenKind::Comma) {
                break;
            }
            parser.bump();
        }
    }
    if operators > MAX_UPDATE_OPERATORS {
        return Err(ExprKind::Update.invalid(format!(
            "The expression has too many operators or functions; number of operators or functions: {operators}, maximum allowed: {MAX_UPDATE_OPERATORS}"
        )));
    }
    let paths: Vec<&Path> = actions.iter().map(UpdateAction::path).collect();
    let (overlap, conflict) = find_overlap_and_conflict(&paths);
    if let Some(message) = overlap {
        parser.record(Category::PathOverlap, message);
    }
    if let Some(message) = conflict {
        parser.record(Category::PathConflict, message);
    }
    parser.finish()?;
    Ok(UpdateExpr { actions })
}

/// A SET value as written, before conversion.
enum SetTerm {
    Operand(ParsedOperand),
    Arithmetic { plus: bool, left: ParsedOperand, right: ParsedOperand, parenthesized: bool },
}

/// DynamoDB's names for constant types in ADD/DELETE messages.
fn long_type_name(value: &AttributeValue) -> Option<&'static str> {
    Some(match value {
        AttributeValue::S(_) => "STRING",
        AttributeValue::N(_) => "NUMBER",
        AttributeValue::B(_) => "BINARY",
        AttributeValue::Null => "NULL",
        AttributeValue::Bool(_) => "BOOLEAN",
        AttributeValue::L(_) => "LIST",
        AttributeValue::M(_) => "MAP",
        AttributeValue::Ss(_) | AttributeValue::Ns(_) | AttributeValue::Bs(_) => return None,
    })
}

/// A stand-in operand for a construct whose error has been recorded.
fn placeholder_operand() -> UpdateOperand {
    UpdateOperand::Value(AttributeValue::Null)
}

impl Parser<'_, '_, '_> {
    /// One action of `clause`. `operators` counts arithmetic operators and
    /// function calls for the [`MAX_UPDATE_OPERATORS`] limit.
    fn parse_action(&mut self, clause: Clause, operators: &mut usize) -> Result<UpdateAction, ExprError> {
        let path = self.parse_path()?;
        match clause {
            Clause::Set => {
                self.expect(TokenKind::Compare(Comparator::Eq))?;
                let term = self.parse_set_value()?;
                let value = self.set_value(term, operators);
                Ok(UpdateAction::Set { path, value })
            }
            Clause::Remove => Ok(UpdateAction::Remove { path }),
            Clause::Add | Clause::Delete => {
                let value = self.parse_value()?;
                let allowed = match clause {
                    Clause::Add => matches!(
                        value,
                        AttributeValue::N(_) | AttributeValue::Ss(_) | AttributeValue::Ns(_) | AttributeValue::Bs(_)
                    ),
                    _ => matches!(value, AttributeValue::Ss(_) | AttributeValue::Ns(_) | AttributeValue::Bs(_)),
                };
                if let (false, Some(type_name)) = (allowed, long_type_name(&value)) {
                    self.record(
                        Category::ActionOperand,
                        format!(
                            "Incorrect operand type for operator or function; operator: {}, operand type: {type_name}",
                            clause.name()
                        ),
                    );
                }
                Ok(match clause {
                    Clause::Add => UpdateAction::Add { path, value },
                    _ => UpdateAction::Delete { path, value },
                })
            }
        }
    }

    /// `operand | operand ("+" | "-") operand | "(" set-value ")"`
    fn parse_set_value(&mut self) -> Result<SetTerm, ExprError> {
        let first = self.parse_set_primary()?;
        let SetTerm::Operand(left) = first else {
            return Ok(first);
        };
        let plus = match self.peek() {
            Some(TokenKind::Plus) => true,
            Some(TokenKind::Minus) => false,
            _ => return Ok(SetTerm::Operand(left)),
        };
        self.bump();
        let right = self.parse_operand()?;
        Ok(SetTerm::Arithmetic { plus, left, right, parenthesized: false })
    }

    /// A parenthesized set value (arithmetic or operand), or an operand.
    fn parse_set_primary(&mut self) -> Result<SetTerm, ExprError> {
        if self.peek() != Some(TokenKind::LParen) {
            return Ok(SetTerm::Operand(self.parse_operand()?));
        }
        self.bump();
        self.enter_nesting()?;
        let mut inner = self.parse_set_value()?;
        self.expect(TokenKind::RParen)?;
        self.leave_nesting();
        match &mut inner {
            SetTerm::Operand(operand) => self.mark_parenthesized(&mut operand.parenthesized),
            SetTerm::Arithmetic { parenthesized, .. } => self.mark_parenthesized(parenthesized),
        }
        Ok(inner)
    }

    /// Converts a SET value as written, checking constant operand types.
    fn set_value(&mut self, term: SetTerm, operators: &mut usize) -> SetValue {
        match term {
            SetTerm::Operand(operand) => SetValue::Operand(self.update_operand(operand, false, operators)),
            SetTerm::Arithmetic { plus, left, right, .. } => {
                *operators += 1;
                let symbol = if plus { "+" } else { "-" };
                for operand in [&left, &right] {
                    if let Term::Value(value) = &operand.term {
                        if !matches!(value, AttributeValue::N(_)) {
                            self.record_operand_type(symbol, value.value_type().descriptor());
                        }
                    }
                }
                let left = self.update_operand(left, true, operators);
                let right = self.update_operand(right, true, operators);
                if plus {
                    SetValue::Plus(left, right)
                } else {
                    SetValue::Minus(left, right)
                }
            }
        }
    }

    /// Converts an operand as written. `nested` is true inside another
    /// function or operator, where only `if_not_exists` may appear.
    fn update_operand(&mut self, parsed: ParsedOperand, nested: bool, operators: &mut usize) -> UpdateOperand {
        match parsed.term {
            Term::Path(path) => UpdateOperand::Path(path),
            Term::Value(value) => UpdateOperand::Value(value),
            Term::Call(call) => {
                *operators += 1;
                self.update_call(call, nested, operators)
            }
        }
    }

    /// `if_not_exists(path, operand)` or `list_append(operand, operand)`.
    fn update_call(&mut self, call: Call, nested: bool, operators: &mut usize) -> UpdateOperand {
        let Call { name, args } = call;
        if name != "if_not_exists" && name != "list_append" {
            self.record_unusable_function(&name);
            return placeholder_operand();
        }
        let count = args.len();
        let Ok([first, second]) = <[ParsedOperand; 2]>::try_from(args) else {
            self.record_operand_count(&name, count);
            return placeholder_operand();
        };
        if name == "if_not_exists" {
            let fallback = self.update_operand(second, true, operators);
            return match first.term {
                Term::Path(path) => UpdateOperand::IfNotExists(path, Box::new(fallback)),
                _ => {
                    self.record_path_required("if_not_exists");
                    placeholder_operand()
                }
            };
        }
        if nested {
            self.record(Category::FunctionOperand, "Only if_not_exists() function can be nested");
        }
        for operand in [&first, &second] {
            if let Term::Value(value) = &operand.term {
                if !matches!(value, AttributeValue::L(_)) {
                    self.record_operand_type("list_append", value.value_type().descriptor());
                }
            }
        }
        let first = self.update_operand(first, true, operators);
        let second = self.update_operand(second, true, operators);
        UpdateOperand::ListAppend(Box::new(first), Box::new(second))
    }
}

/// "The provided expression refers to an attribute that does not exist in the item".
fn missing_attribute() -> ExprError {
    ExprError::new("The provided expression refers to an attribute that does not exist in the item")
}

/// "An operand in the update expression has an incorrect data type".
fn incorrect_operand_type() -> ExprError {
    ExprError::new("An operand in the update expression has an incorrect data type")
}

/// "The document path provided in the update expression is invalid for update".
fn invalid_document_path() -> ExprError {
    ExprError::new("The document path provided in the update expression is invalid for update")
}

/// A number error as DynamoDB words it.
fn number_error(error: NumberError) -> ExprError {
    ExprError::new(error.to_string())
}

impl UpdateOperand {
    /// This operand's value, read from `item` (the item before the update).
    /// Recursion depth is the operand tree's depth, bounded by the parser.
    fn evaluate(&self, item: &Item) -> Result<AttributeValue, ExprError> {
        match self {
            UpdateOperand::Path(path) => path.resolve(item).cloned().ok_or_else(missing_attribute),
            UpdateOperand::Value(value) => Ok(value.clone()),
            UpdateOperand::IfNotExists(path, fallback) => match path.resolve(item) {
                Some(value) => Ok(value.clone()),
                None => fallback.evaluate(item),
            },
            UpdateOperand::ListAppend(first, second) => match (first.evaluate(item)?, second.evaluate(item)?) {
                (AttributeValue::L(mut front), AttributeValue::L(back)) => {
                    front.extend(back);
                    Ok(AttributeValue::L(front))
                }
                _ => Err(incorrect_operand_type()),
            },
        }
    }
}

impl SetValue {
    /// The value to store, computed from `item` before the update.
    fn evaluate(&self, item: &Item) -> Result<AttributeValue, ExprError> {
        let (left, right, plus) = match self {
            SetValue::Operand(operand) => return operand.evaluate(item),
            SetValue::Plus(left, right) => (left, right, true),
            SetValue::Minus(left, right) => (left, right, false),
        };
        match (left.evaluate(item)?, right.evaluate(item)?) {
            (AttributeValue::N(a), AttributeValue::N(b)) => {
                let result = if plus { a.checked_add(&b) } else { a.checked_sub(&b) };
                result.map(AttributeValue::N).map_err(number_error)
            }
            _ => Err(incorrect_operand_type()),
        }
    }
}

/// A pending write: a SET's computed value, or an ADD/DELETE operand.
enum Write<'e> {
    Set(AttributeValue),
    Add(&'e AttributeValue),
    Delete(&'e AttributeValue),
}

/// The map or list holding a path's last element.
enum Parent<'w> {
    Map(&'w mut BTreeMap<String, AttributeValue>),
    List(&'w mut Vec<AttributeValue>),
}

/// Finds the container of `path`'s last element. Every parent must exist
/// and be a map (before a name) or a list (before an index).
fn locate<'w, 'p>(item: &'w mut Item, path: &'p Path) -> Result<(Parent<'w>, &'p PathElem), ExprError> {
    let (last, parents) = path.0.split_last().ok_or_else(invalid_document_path)?;
    let Some((first, rest)) = parents.split_first() else {
        return match last {
            PathElem::Name(_) => Ok((Parent::Map(item), last)),
            PathElem::Index(_) => Err(invalid_document_path()),
        };
    };
    let PathElem::Name(name) = first else {
        return Err(invalid_document_path());
    };
    let mut current = item.get_mut(name).ok_or_else(invalid_document_path)?;
    for elem in rest {
        current = match (elem, current) {
            (PathElem::Name(key), AttributeValue::M(map)) => map.get_mut(key).ok_or_else(invalid_document_path)?,
            (PathElem::Index(index), AttributeValue::L(list)) => {
                list.get_mut(*index).ok_or_else(invalid_document_path)?
            }
            _ => return Err(invalid_document_path()),
        };
    }
    match current {
        AttributeValue::M(map) => Ok((Parent::Map(map), last)),
        AttributeValue::L(list) => Ok((Parent::List(list), last)),
        _ => Err(invalid_document_path()),
    }
}

impl Parent<'_> {
    /// The element's current value.
    fn get(&self, elem: &PathElem) -> Result<Option<&AttributeValue>, ExprError> {
        match (self, elem) {
            (Parent::Map(map), PathElem::Name(name)) => Ok(map.get(name)),
            (Parent::List(list), PathElem::Index(index)) => Ok(list.get(*index)),
            _ => Err(invalid_document_path()),
        }
    }

    /// Stores a value; an index past the end of a list appends.
    fn put(&mut self, elem: &PathElem, value: AttributeValue) -> Result<(), ExprError> {
        match (self, elem) {
            (Parent::Map(map), PathElem::Name(name)) => {
                map.insert(name.clone(), value);
                Ok(())
            }
            (Parent::List(list), PathElem::Index(index)) => {
                match list.get_mut(*index) {
                    Some(slot) => *slot = value,
                    None => list.push(value),
                }
                Ok(())
            }
            _ => Err(invalid_document_path()),
        }
    }

    /// Removes the element if present (later list elements shift down).
    fn take(&mut self, elem: &PathElem) -> Result<(), ExprError> {
        match (self, elem) {
            (Parent::Map(map), PathElem::Name(name)) => {
                map.remove(name);
                Ok(())
            }
            (Parent::List(list), PathElem::Index(index)) => {
                if *index < list.len() {
                    list.remove(*index);
                }
                Ok(())
            }
            _ => Err(invalid_document_path()),
        }
    }
}

/// `existing` plus the elements of `extra` it lacks, in order.
fn union<T: Clone + Eq + Hash>(existing: &[T], extra: &[T]) -> Vec<T> {
    let mut present: HashSet<&T> = existing.iter().collect();
    let mut result = existing.to_vec();
    for element in extra {
        if present.insert(element) {
            result.push(element.clone());
        }
    }
    result
}

/// `existing` without the elements of `removed`; `None` if nothing is left.
fn difference<T: Clone + Eq + Hash>(existing: &[T], removed: &[T]) -> Option<Vec<T>> {
    let removed: HashSet<&T> = removed.iter().collect();
    let rest: Vec<T> = existing.iter().filter(|e| !removed.contains(e)).cloned().collect();
    (!rest.is_empty()).then_some(rest)
}

/// ADD: number addition (a missing attribute counts as 0) or set union (a
/// missing attribute becomes the set).
fn add(existing: Option<&AttributeValue>, operand: &AttributeValue) -> Result<AttributeValue, ExprError> {
    match (existing, operand) {
        (None, AttributeValue::N(_) | AttributeValue::Ss(_) | AttributeValue::Ns(_) | AttributeValue::Bs(_)) => {
            Ok(operand.clone())
        }
        (Some(AttributeValue::N(a)), AttributeValue::N(b)) => {
            a.checked_add(b).map(AttributeValue::N).map_err(number_error)
        }
        (Some(AttributeValue::Ss(a)), AttributeValue::Ss(b)) => Ok(AttributeValue::Ss(union(a, b))),
        (Some(AttributeValue::Ns(a)), AttributeValue::Ns(b)) => Ok(AttributeValue::Ns(union(a, b))),
        (Some(AttributeValue::Bs(a)), AttributeValue::Bs(b)) => Ok(AttributeValue::Bs(union(a, b))),
        _ => Err(incorrect_operand_type()),
    }
}

/// DELETE: set difference; `None` when the set becomes empty.
fn delete(existing: &AttributeValue, operand: &AttributeValue) -> Result<Option<AttributeValue>, ExprError> {
    match (existing, operand) {
        (AttributeValue::Ss(a), AttributeValue::Ss(b)) => Ok(difference(a, b).map(AttributeValue::Ss)),
        (AttributeValue::Ns(a), AttributeValue::Ns(b)) => Ok(difference(a, b).map(AttributeValue::Ns)),
        (AttributeValue::Bs(a), AttributeValue::Bs(b)) => Ok(difference(a, b).map(AttributeValue::Bs)),
        _ => Err(incorrect_operand_type()),
    }
}

impl Write<'_> {
    /// Performs this write at `path` in `item`.
    fn apply(self, item: &mut Item, path: &Path) -> Result<(), ExprError> {
        let (mut parent, last) = locate(item, path)?;
        match self {
            Write::Set(value) => parent.put(last, value),
            Write::Add(operand) => {
                let value = add(parent.get(last)?, operand)?;
                parent.put(last, value)
            }
            Write::Delete(operand) => {
                let Some(existing) = parent.get(last)? else {
                    return Ok(());
                };
                match delete(existing, operand)? {
                    Some(rest) => parent.put(last, rest),
                    None => parent.take(last),
                }
            }
        }
    }
}

impl UpdateExpr {
    /// Applies the update to `item` (empty if the item does not exist).
    /// All-or-nothing: on error `item` is unchanged.
    ///
    /// As in DynamoDB, every SET value is computed from the item as it was
    /// before the update; writes are then applied in path order (so
    /// several SETs past the end of one list append in index order), and
    /// REMOVEs last, in reverse path order, so list indexes refer to the
    /// original positions.
    pub fn apply(&self, item: &mut Item) -> Result<(), ExprError> {
        let mut writes: Vec<(&Path, Write<'_>)> = Vec::new();
        let mut removals: Vec<&Path> = Vec::new();
        for action in &self.actions {
            match action {
                UpdateAction::Set { path, value } => writes.push((path, Write::Set(value.evaluate(item)?))),
                UpdateAction::Remove { path } => removals.push(path),
                UpdateAction::Add { path, value } => writes.push((path, Write::Add(value))),
                UpdateAction::Delete { path, value } => writes.push((path, Write::Delete(value))),
            }
        }
        writes.sort_by(|a, b| compare_paths(a.0, b.0));
        removals.sort_by(|a, b| compare_paths(b, a));
        let mut updated = item.clone();
        for (path, write) in writes {
            write.apply(&mut updated, path)?;
        }
        for path in removals {
            let (mut parent, last) = locate(&mut updated, path)?;
            parent.take(last)?;
        }
        *item = updated;
        Ok(())
    }

    /// Every top-level attribute name an action writes or removes, once
    /// each, in order of first appearance.
    pub fn top_level_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for action in &self.actions {
            if let Some(name) = action.path().top_level_name() {
                if !names.iter().any(|n| n == name) {
                    names.push(name.to_string());
                }
            }
        }
        names
    }

    /// The paths the actions target, in the order written.
    pub fn paths(&self) -> Vec<Path> {
        self.actions.iter().map(|action| action.path().clone()).collect()
    }
}
