//! Attribute values and items.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use crate::number::Number;

/// An item: attribute name to value.
pub type Item = BTreeMap<String, AttributeValue>;

/// One DynamoDB attribute value. Sets keep the order they were given in;
/// validation (elsewhere) guarantees they are non-empty and duplicate-free.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AttributeValue {
    S(String),
    N(Number),
    B(Vec<u8>),
    Bool(bool),
    Null,
    Ss(Vec<String>),
    Ns(Vec<Number>),
    Bs(Vec<Vec<u8>>),
    L(Vec<AttributeValue>),
    M(BTreeMap<String, AttributeValue>),
}

/// The type descriptor of a value, as DynamoDB names it ("S", "NS", "BOOL"…).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueType {
    S,
    N,
    B,
    Bool,
    Null,
    Ss,
    Ns,
    Bs,
    L,
    M,
}

impl ValueType {
    /// DynamoDB's descriptor text.
    pub fn descriptor(self) -> &'static str {
        match self {
            ValueType::S => "S",
            ValueType::N => "N",
            ValueType::B => "B",
            ValueType::Bool => "BOOL",
            ValueType::Null => "NULL",
            ValueType::Ss => "SS",
            ValueType::Ns => "NS",
            ValueType::Bs => "BS",
            ValueType::L => "L",
            ValueType::M => "M",
        }
    }

    /// Parses a descriptor ("S", "BOOL"…).
    pub fn from_descriptor(text: &str) -> Option<ValueType> {
        Some(match text {
            "S" => ValueType::S,
            "N" => ValueType::N,
            "B" => ValueType::B,
            "BOOL" => ValueType::Bool,
            "NULL" => ValueType::Null,
            "SS" => ValueType::Ss,
            "NS" => ValueType::Ns,
            "BS" => ValueType::Bs,
            "L" => ValueType::L,
            "M" => ValueType::M,
            _ => return None,
        })
    }
}

impl AttributeValue {
    /// The order of two values, defined only between two numbers
    /// (numerically), two strings (by UTF-8 bytes) or two binaries (by
    /// unsigned bytes): what DynamoDB's comparisons use.
    pub fn scalar_order(&self, other: &AttributeValue) -> Option<std::cmp::Ordering> {
        match (self, other) {
            (AttributeValue::N(x), AttributeValue::N(y)) => Some(x.cmp(y)),
            (AttributeValue::S(x), AttributeValue::S(y)) => Some(x.as_bytes().cmp(y.as_bytes())),
            (AttributeValue::B(x), AttributeValue::B(y)) => Some(x.cmp(y)),
            _ => None,
        }
    }

    /// This value's type.
    pub fn value_type(&self) -> ValueType {
        match self {
            AttributeValue::S(_) => ValueType::S,
            AttributeValue::N(_) => ValueType::N,
            AttributeValue::B(_) => ValueType::B,
            AttributeValue::Bool(_) => ValueType::Bool,
            AttributeValue::Null => ValueType::Null,
            AttributeValue::Ss(_) => ValueType::Ss,
            AttributeValue::Ns(_) => ValueType::Ns,
            AttributeValue::Bs(_) => ValueType::Bs,
            AttributeValue::L(_) => ValueType::L,
            AttributeValue::M(_) => ValueType::M,
        }
    }

    /// Size in bytes by DynamoDB's rules (names are counted by the caller).
    pub fn size_bytes(&self) -> usize {
        match self {
            AttributeValue::S(s) => s.len(),
            AttributeValue::N(n) => n.size_bytes(),
            AttributeValue::B(b) => b.len(),
            AttributeValue::Bool(_) | AttributeValue::Null => 1,
            AttributeValue::Ss(v) => v.iter().map(String::len).sum(),
            AttributeValue::Ns(v) => v.iter().map(Number::size_bytes).sum(),
            AttributeValue::Bs(v) => v.iter().map(Vec::len).sum(),
            AttributeValue::L(v) => 3 + v.iter().map(|e| 1 + e.size_bytes()).sum::<usize>(),
            AttributeValue::M(m) => 3 + m.iter().map(|(k, v)| 1 + k.len() + v.size_bytes()).sum::<usize>(),
        }
    }

    /// Depth of nested lists and maps (a scalar is 0).
    pub fn nesting_depth(&self) -> usize {
        match self {
            AttributeValue::L(v) => 1 + v.iter().map(AttributeValue::nesting_depth).max().unwrap_or(0),
            AttributeValue::M(m) => 1 + m.values().map(AttributeValue::nesting_depth).max().unwrap_or(0),
            _ => 0,
        }
    }

    /// The string, if this is an `S`.
    pub fn as_s(&self) -> Option<&str> {
        match self {
            AttributeValue::S(s) => Some(s),
            _ => None,
        }
    }

    /// The number, if this is an `N`.
    pub fn as_n(&self) -> Option<&Number> {
        match self {
            AttributeValue::N(n) => Some(n),
            _ => None,
        }
    }

    /// Equality as DynamoDB defines it: like `==`, except that sets compare
    /// as sets (element order is irrelevant), recursively inside lists and
    /// maps. Recursion depth is the value's nesting depth, which request
    /// validation bounds (32 levels).
    pub fn semantic_eq(&self, other: &AttributeValue) -> bool {
        match (self, other) {
            (AttributeValue::Ss(a), AttributeValue::Ss(b)) => same_elements(a, b),
            (AttributeValue::Ns(a), AttributeValue::Ns(b)) => same_elements(a, b),
            (AttributeValue::Bs(a), AttributeValue::Bs(b)) => same_elements(a, b),
            (AttributeValue::L(a), AttributeValue::L(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.semantic_eq(y))
            }
            (AttributeValue::M(a), AttributeValue::M(b)) => {
                a.len() == b.len() && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| v.semantic_eq(w)))
            }
            _ => self == other,
        }
    }
}

/// True when two sets hold the same elements, in any order
/// (O(n log n): both sides are sorted by reference).
fn same_elements<T: Ord>(a: &[T], b: &[T]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut left: Vec<&T> = a.iter().collect();
    let mut right: Vec<&T> = b.iter().collect();
    left.sort_unstable();
    right.sort_unstable();
    left == right
}

/// Size of an item: attribute names (UTF-8 bytes) plus value sizes.
pub fn item_size(item: &Item) -> usize {
    item.iter().map(|(k, v)| k.len() + v.size_bytes()).sum()
}

/// A key attribute value: DynamoDB keys are S, N or B only. Ordered the
/// way DynamoDB sorts keys: numbers numerically, strings and binary by
/// unsigned bytes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum KeyValue {
    S(String),
    N(Number),
    B(Vec<u8>),
}

impl KeyValue {
    /// The key value of an attribute value, if it is S, N or B.
    pub fn from_attribute(v: &AttributeValue) -> Option<KeyValue> {
        match v {
            AttributeValue::S(s) => Some(KeyValue::S(s.clone())),
            AttributeValue::N(n) => Some(KeyValue::N(n.clone())),
            AttributeValue::B(b) => Some(KeyValue::B(b.clone())),
            _ => None,
        }
    }

    /// Bytes this value holds on the heap (its text, digits or bytes).
    pub fn heap_bytes(&self) -> usize {
        match self {
            KeyValue::S(s) => s.capacity(),
            KeyValue::N(n) => n.heap_bytes(),
            KeyValue::B(b) => b.capacity(),
        }
    }

    /// Back to an attribute value.
    pub fn to_attribute(&self) -> AttributeValue {
        match self {
            KeyValue::S(s) => AttributeValue::S(s.clone()),
            KeyValue::N(n) => AttributeValue::N(n.clone()),
            KeyValue::B(b) => AttributeValue::B(b.clone()),
        }
    }

    /// The scalar type of this key value.
    pub fn key_type(&self) -> ScalarType {
        match self {
            KeyValue::S(_) => ScalarType::S,
            KeyValue::N(_) => ScalarType::N,
            KeyValue::B(_) => ScalarType::B,
        }
    }

    /// Stable bytes that identify this value (for hashing into partitions).
    pub fn hash_bytes(&self) -> Vec<u8> {
        match self {
            KeyValue::S(s) => {
                let mut v = Vec::with_capacity(s.len() + 1);
                v.push(b'S');
                v.extend_from_slice(s.as_bytes());
                v
            }
            KeyValue::N(n) => {
                let t = n.to_string();
                let mut v = Vec::with_capacity(t.len() + 1);
                v.push(b'N');
                v.extend_from_slice(t.as_bytes());
                v
            }
            KeyValue::B(b) => {
                let mut v = Vec::with_capacity(b.len() + 1);
                v.push(b'B');
                v.extend_from_slice(b);
                v
            }
        }
    }

    /// A stable 128-bit hash of this value: where it lives in the table's
    /// key space. Partitions own contiguous ranges of it, and Scan walks it
    /// in order. Stable across runs and platforms (xxh3-128 of the type tag
    /// and canonical bytes).
    pub fn partition_hash(&self) -> u128 {
        // Streaming, so strings and binaries are hashed without a copy; the
        // result equals xxh3_128 of `hash_bytes()`.
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        match self {
            KeyValue::S(s) => {
                h.update(b"S");
                h.update(s.as_bytes());
            }
            KeyValue::N(n) => {
                h.update(b"N");
                h.update(n.to_string().as_bytes());
            }
            KeyValue::B(b) => {
                h.update(b"B");
                h.update(b);
            }
        }
        h.digest128()
    }

    /// Size in bytes by the item-size rules.
    pub fn size_bytes(&self) -> usize {
        match self {
            KeyValue::S(s) => s.len(),
            KeyValue::N(n) => n.size_bytes(),
            KeyValue::B(b) => b.len(),
        }
    }
}

impl Ord for KeyValue {
    fn cmp(&self, other: &KeyValue) -> Ordering {
        match (self, other) {
            (KeyValue::S(a), KeyValue::S(b)) => a.as_bytes().cmp(b.as_bytes()),
            (KeyValue::N(a), KeyValue::N(b)) => a.cmp(b),
            (KeyValue::B(a), KeyValue::B(b)) => a.cmp(b),
            // A table's key has one type; mixed comparisons only need to be
            // consistent.
            _ => self.key_type().cmp(&other.key_type()),
        }
    }
}

impl PartialOrd for KeyValue {
    fn partial_cmp(&self, other: &KeyValue) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The three scalar types a key attribute may have.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ScalarType {
    S,
    N,
    B,
}

impl ScalarType {
    /// DynamoDB's descriptor ("S", "N", "B").
    pub fn descriptor(self) -> &'static str {
        match self {
            ScalarType::S => "S",
            ScalarType::N => "N",
            ScalarType::B => "B",
        }
    }

    /// Parses "S", "N" or "B".
    pub fn from_descriptor(text: &str) -> Option<ScalarType> {
        match text {
            "S" => Some(ScalarType::S),
            "N" => Some(ScalarType::N),
            "B" => Some(ScalarType::B),
            _ => None,
        }
    }

    /// The matching full value type.
    pub fn value_type(self) -> ValueType {
        match self {
            ScalarType::S => ValueType::S,
            ScalarType::N => ValueType::N,
            ScalarType::B => ValueType::B,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> AttributeValue {
        AttributeValue::S(x.to_string())
    }

    #[test]
    fn documented_item_size_example() {
        // AWS: {"shirt-color":"R","shirt-size":"M"} is 23 bytes.
        let mut item = Item::new();
        item.insert("shirt-color".into(), s("R"));
        item.insert("shirt-size".into(), s("M"));
        assert_eq!(item_size(&item), 23);
    }

    #[test]
    fn semantic_eq_ignores_set_order_recursively() {
        let n = |x: &str| Number::parse(x).expect("valid number");
        let ss = |v: &[&str]| AttributeValue::Ss(v.iter().map(|x| x.to_string()).collect());
        assert!(ss(&["a", "b"]).semantic_eq(&ss(&["b", "a"])));
        assert_ne!(ss(&["a", "b"]), ss(&["b", "a"]));
        assert!(!ss(&["a", "b"]).semantic_eq(&ss(&["a", "c"])));
        assert!(!ss(&["a"]).semantic_eq(&ss(&["a", "b"])));
        // Numbers compare numerically inside number sets.
        assert!(AttributeValue::Ns(vec![n("1.0"), n("2")]).semantic_eq(&AttributeValue::Ns(vec![n("2"), n("1")])));
        assert!(AttributeValue::Bs(vec![vec![1], vec![2]]).semantic_eq(&AttributeValue::Bs(vec![vec![2], vec![1]])));
        // Inside lists and maps; list order still matters.
        let list = |a, b| AttributeValue::L(vec![a, b]);
        assert!(list(ss(&["x", "y"]), s("z")).semantic_eq(&list(ss(&["y", "x"]), s("z"))));
        assert!(!list(s("z"), ss(&["x", "y"])).semantic_eq(&list(ss(&["y", "x"]), s("z"))));
        let mut m1 = BTreeMap::new();
        m1.insert("k".to_string(), ss(&["p", "q"]));
        let mut m2 = BTreeMap::new();
        m2.insert("k".to_string(), ss(&["q", "p"]));
        assert!(AttributeValue::M(m1.clone()).semantic_eq(&AttributeValue::M(m2)));
        m1.insert("extra".to_string(), AttributeValue::Null);
        assert!(!AttributeValue::M(m1).semantic_eq(&AttributeValue::M(BTreeMap::new())));
        // Different types are never equal.
        assert!(!s("1").semantic_eq(&AttributeValue::N(n("1"))));
    }

    #[test]
    fn container_sizes() {
        assert_eq!(AttributeValue::L(vec![]).size_bytes(), 3);
        assert_eq!(AttributeValue::M(BTreeMap::new()).size_bytes(), 3);
        // 3 + (1 + 1) + (1 + 2)
        assert_eq!(AttributeValue::L(vec![s("a"), s("bc")]).size_bytes(), 8);
        let mut m = BTreeMap::new();
        m.insert("ab".to_string(), s("xyz"));
        // 3 + 1 + 2 + 3
        assert_eq!(AttributeValue::M(m).size_bytes(), 9);
        assert_eq!(AttributeValue::Ss(vec!["ab".into(), "c".into()]).size_bytes(), 3);
        assert_eq!(AttributeValue::Bool(true).size_bytes(), 1);
        assert_eq!(AttributeValue::Null.size_bytes(), 1);
        // UTF-8 bytes, not characters.
        assert_eq!(s("é").size_bytes(), 2);
    }

    #[test]
    fn partition_hash_is_xxh3_of_the_hash_bytes() {
        for k in [KeyValue::S("abc".into()), KeyValue::N(Number::from_i64(-42)), KeyValue::B(vec![0, 255])] {
            assert_eq!(k.partition_hash(), xxhash_rust::xxh3::xxh3_128(&k.hash_bytes()));
        }
        assert_ne!(KeyValue::S("1".into()).partition_hash(), KeyValue::N(Number::from_i64(1)).partition_hash());
    }

    #[test]
    fn keys_sort_by_bytes_and_numerically() {
        let mut v =
            vec![KeyValue::S("b".into()), KeyValue::S("B".into()), KeyValue::S("é".into()), KeyValue::S("a".into())];
        v.sort();
        assert_eq!(
            v,
            vec![KeyValue::S("B".into()), KeyValue::S("a".into()), KeyValue::S("b".into()), KeyValue::S("é".into())]
        );
        let mut b = vec![KeyValue::B(vec![0xff]), KeyValue::B(vec![0x01, 0x00]), KeyValue::B(vec![0x01])];
        b.sort();
        assert_eq!(b, vec![KeyValue::B(vec![0x01]), KeyValue::B(vec![0x01, 0x00]), KeyValue::B(vec![0xff])]);
    }
}
