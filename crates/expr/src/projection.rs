//! Projection expressions: `path, path, …` and projecting items onto them.

use std::collections::BTreeMap;

use dynaburst_model::{AttributeValue, Item};

use crate::error::{ExprError, ExprKind};
use crate::lexer::TokenKind;
use crate::parser::{Category, Grammar, Parser};
use crate::path::{find_overlap_and_conflict, Path, PathElem};
use crate::placeholders::Placeholders;
use crate::MAX_PATH_DEPTH;

/// Parses a projection expression: comma-separated document paths, none
/// overlapping or conflicting with another.
pub fn parse_projection(text: &str, ph: &mut Placeholders) -> Result<Vec<Path>, ExprError> {
    let mut parser = Parser::new(text, ExprKind::Projection, Grammar::Projection, ph)?;
    let mut paths = vec![parser.parse_path()?];
    while parser.peek() == Some(TokenKind::Comma) {
        parser.bump();
        paths.push(parser.parse_path()?);
    }
    parser.expect_end()?;
    let refs: Vec<&Path> = paths.iter().collect();
    let (overlap, conflict) = find_overlap_and_conflict(&refs);
    if let Some(message) = overlap {
        parser.record(Category::PathOverlap, message);
    }
    if let Some(message) = conflict {
        parser.record(Category::PathConflict, message);
    }
    parser.finish()?;
    Ok(paths)
}

/// Which parts of a value a projection keeps.
#[derive(Debug)]
enum Selector {
    /// The whole value.
    All,
    /// These keys of a map.
    Fields(BTreeMap<String, Selector>),
    /// These elements of a list.
    Elements(BTreeMap<usize, Selector>),
}

impl Selector {
    /// Adds `steps` below this selector. A path already covered by a
    /// shorter one, or disagreeing with an earlier one about map versus
    /// list, adds nothing (the parser rejects both cases anyway). A path
    /// that ends at an existing node widens it to the whole value.
    fn insert(&mut self, steps: &[PathElem]) {
        let mut node = self;
        for (position, step) in steps.iter().enumerate() {
            let shape_after = || Selector::shaped_for(steps.get(position + 1));
            node = match (node, step) {
                (Selector::All, _) => return,
                (Selector::Fields(fields), PathElem::Name(name)) => {
                    fields.entry(name.clone()).or_insert_with(shape_after)
                }
                (Selector::Elements(elements), PathElem::Index(index)) => {
                    elements.entry(*index).or_insert_with(shape_after)
                }
                _ => return,
            };
        }
        *node = Selector::All;
    }

    /// An empty selector ready for `next_step` (the whole value if none).
    fn shaped_for(next_step: Option<&PathElem>) -> Selector {
        match next_step {
            None => Selector::All,
            Some(PathElem::Name(_)) => Selector::Fields(BTreeMap::new()),
            Some(PathElem::Index(_)) => Selector::Elements(BTreeMap::new()),
        }
    }

    /// The selected part of `value`, or `None` if nothing selected exists.
    /// Recursion depth is the selector's depth, at most the longest
    /// projected path ([`MAX_PATH_DEPTH`] levels).
    fn select(&self, value: &AttributeValue) -> Option<AttributeValue> {
        match (self, value) {
            (Selector::All, _) => Some(value.clone()),
            (Selector::Fields(fields), AttributeValue::M(map)) => {
                let kept: BTreeMap<String, AttributeValue> =
                    fields.iter().filter_map(|(key, sel)| Some((key.clone(), sel.select(map.get(key)?)?))).collect();
                (!kept.is_empty()).then_some(AttributeValue::M(kept))
            }
            (Selector::Elements(elements), AttributeValue::L(list)) => {
                let kept: Vec<AttributeValue> =
                    elements.iter().filter_map(|(index, sel)| sel.select(list.get(*index)?)).collect();
                (!kept.is_empty()).then_some(AttributeValue::L(kept))
            }
            _ => None,
        }
    }
}

/// Projection: a new item with only the given paths. Nested maps and lists
/// keep their structure; list elements picked by index are compacted in
/// index order, as DynamoDB does. Missing paths are skipped, as are paths
/// longer than [`MAX_PATH_DEPTH`] levels (the parser never makes those).
pub fn project(item: &Item, paths: &[Path]) -> Item {
    let mut top: BTreeMap<String, Selector> = BTreeMap::new();
    for path in paths {
        let Some((PathElem::Name(name), rest)) = path.0.split_first() else {
            continue;
        };
        if rest.len() >= MAX_PATH_DEPTH {
            continue;
        }
        top.entry(name.clone()).or_insert_with(|| Selector::shaped_for(rest.first())).insert(rest);
    }
    top.iter().filter_map(|(name, selector)| Some((name.clone(), selector.select(item.get(name)?)?))).collect()
}
