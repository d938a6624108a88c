//! Document paths (`a.b[2].c`): lookup in items, ordering and the
//! overlap/conflict rules DynamoDB applies between the paths of one
//! update or projection expression.

use std::cmp::Ordering;
use std::fmt;

use dynaburst_model::{AttributeValue, Item};

/// One step of a document path.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PathElem {
    /// A map key (or, as the first element, a top-level attribute name),
    /// already resolved from any `#placeholder`.
    Name(String),
    /// A list index.
    Index(usize),
}

/// A document path: a top-level attribute name followed by map keys and
/// list indexes. Paths produced by the parsers are never empty and always
/// start with [`PathElem::Name`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Path(pub Vec<PathElem>);

impl Path {
    /// The top-level attribute this path starts at.
    pub fn top_level_name(&self) -> Option<&str> {
        match self.0.first() {
            Some(PathElem::Name(name)) => Some(name),
            _ => None,
        }
    }

    /// The value this path addresses in `item`, if there is one.
    pub fn resolve<'i>(&self, item: &'i Item) -> Option<&'i AttributeValue> {
        let (first, rest) = self.0.split_first()?;
        let PathElem::Name(name) = first else {
            return None;
        };
        let mut current = item.get(name)?;
        for elem in rest {
            current = match (elem, current) {
                (PathElem::Name(key), AttributeValue::M(map)) => map.get(key)?,
                (PathElem::Index(index), AttributeValue::L(list)) => list.get(*index)?,
                _ => return None,
            };
        }
        Some(current)
    }
}

/// DynamoDB's rendering in error messages: `[a, b, [2]]`.
impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, elem) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            match elem {
                PathElem::Name(name) => f.write_str(name)?,
                PathElem::Index(index) => write!(f, "[{index}]")?,
            }
        }
        f.write_str("]")
    }
}

/// A total order on paths: element by element (names by bytes, indexes
/// numerically, names before indexes), a prefix before its extensions.
/// Updates apply their writes in this order.
pub(crate) fn compare_paths(a: &Path, b: &Path) -> Ordering {
    for (x, y) in a.0.iter().zip(&b.0) {
        let order = match (x, y) {
            (PathElem::Name(x), PathElem::Name(y)) => x.cmp(y),
            (PathElem::Index(x), PathElem::Index(y)) => x.cmp(y),
            (PathElem::Name(_), PathElem::Index(_)) => Ordering::Less,
            (PathElem::Index(_), PathElem::Name(_)) => Ordering::Greater,
        };
        if order != Ordering::Equal {
            return order;
        }
    }
    a.0.len().cmp(&b.0.len())
}

/// How two paths of one expression relate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PathRelation {
    /// They address disjoint parts of the item.
    Independent,
    /// One is a prefix of (or equal to) the other.
    Overlap,
    /// At the first difference one path uses a name where the other uses
    /// an index: they disagree about whether the parent is a map or a list.
    Conflict,
}

/// Classifies two paths by DynamoDB's rules.
pub(crate) fn relation(a: &Path, b: &Path) -> PathRelation {
    for (x, y) in a.0.iter().zip(&b.0) {
        match (x, y) {
            (PathElem::Name(x), PathElem::Name(y)) if x != y => return PathRelation::Independent,
            (PathElem::Index(x), PathElem::Index(y)) if x != y => return PathRelation::Independent,
            (PathElem::Name(_), PathElem::Index(_)) | (PathElem::Index(_), PathElem::Name(_)) => {
                return PathRelation::Conflict
            }
            _ => {}
        }
    }
    PathRelation::Overlap
}

/// The messages for the first overlapping pair and the first conflicting
/// pair among `paths`, each later path checked against all earlier ones
/// (in the order they were written, as DynamoDB reports them).
pub(crate) fn find_overlap_and_conflict(paths: &[&Path]) -> (Option<String>, Option<String>) {
    let mut overlap = None;
    let mut conflict = None;
    for (i, later) in paths.iter().enumerate() {
        for earlier in &paths[..i] {
            match relation(earlier, later) {
                PathRelation::Overlap if overlap.is_none() => {
                    overlap = Some(format!(
                        "Two document paths overlap with each other; must remove or rewrite one of these paths; path one: {earlier}, path two: {later}"
                    ));
                }
                PathRelation::Conflict if conflict.is_none() => {
                    conflict = Some(format!(
                        "Two document paths conflict with each other; must remove or rewrite one of these paths; path one: {earlier}, path two: {later}"
                    ));
                }
                _ => {}
            }
        }
    }
    (overlap, conflict)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn name(n: &str) -> PathElem {
        PathElem::Name(n.to_string())
    }

    #[test]
    fn displays_like_dynamodb() {
        let path = Path(vec![name("a"), PathElem::Index(3), name("b")]);
        assert_eq!(path.to_string(), "[a, [3], b]");
    }

    #[test]
    fn resolves_nested_maps_and_lists() {
        let mut inner = BTreeMap::new();
        inner.insert("c".to_string(), AttributeValue::Bool(true));
        let mut item = Item::new();
        item.insert("a".to_string(), AttributeValue::L(vec![AttributeValue::Null, AttributeValue::M(inner)]));
        let path = Path(vec![name("a"), PathElem::Index(1), name("c")]);
        assert_eq!(path.resolve(&item), Some(&AttributeValue::Bool(true)));
        assert_eq!(Path(vec![name("a"), PathElem::Index(2)]).resolve(&item), None);
        assert_eq!(Path(vec![name("a"), name("c")]).resolve(&item), None);
        assert_eq!(Path(vec![PathElem::Index(0)]).resolve(&item), None);
        assert_eq!(Path(vec![]).resolve(&item), None);
    }

    #[test]
    fn relations() {
        let a = Path(vec![name("a")]);
        let ab = Path(vec![name("a"), name("b")]);
        let a0 = Path(vec![name("a"), PathElem::Index(0)]);
        let a1 = Path(vec![name("a"), PathElem::Index(1)]);
        assert_eq!(relation(&a, &ab), PathRelation::Overlap);
        assert_eq!(relation(&ab, &ab), PathRelation::Overlap);
        assert_eq!(relation(&ab, &a0), PathRelation::Conflict);
        assert_eq!(relation(&a0, &a1), PathRelation::Independent);
        assert_eq!(compare_paths(&a0, &a1), Ordering::Less);
        assert_eq!(compare_paths(&a, &a0), Ordering::Less);
        assert_eq!(compare_paths(&ab, &a0), Ordering::Less);
    }
}
