//! DynamoDB items (CSV and DynamoDB JSON records) to documents.
//!
//! [`item_to_document`] converts CSV and DynamoDB JSON records, already
//! typed by the DynamoDB path: S to String, N by the number rule
//! ([`super::number`]) applied to the number's canonical text (so `1.50`
//! is Double 1.5 and `1.0` is Int32 1: an `N` is a value, not a literal),
//! B to generic Binary, BOOL, NULL, L to Array, M to Document, SS/NS/BS to
//! arrays of their elements. An [`Item`] is a `BTreeMap`, so fields come
//! in name order.

use bson::spec::BinarySubtype;
use bson::{Binary, Bson, Document};
use dynaburst_model::{AttributeValue, Item, Number};

use super::number::number_text_to_bson;

/// A typed item (CSV, DynamoDB JSON) to a document, fields in name order.
pub fn item_to_document(item: &Item) -> Document {
    item.iter().map(|(name, value)| (name.clone(), attribute_to_bson(value))).collect()
}

fn attribute_to_bson(value: &AttributeValue) -> Bson {
    match value {
        AttributeValue::S(s) => Bson::String(s.clone()),
        AttributeValue::N(n) => model_number_to_bson(n),
        AttributeValue::B(b) => generic_binary(b),
        AttributeValue::Bool(b) => Bson::Boolean(*b),
        AttributeValue::Null => Bson::Null,
        AttributeValue::Ss(v) => Bson::Array(v.iter().map(|s| Bson::String(s.clone())).collect()),
        AttributeValue::Ns(v) => Bson::Array(v.iter().map(model_number_to_bson).collect()),
        AttributeValue::Bs(v) => Bson::Array(v.iter().map(|b| generic_binary(b)).collect()),
        AttributeValue::L(v) => Bson::Array(v.iter().map(attribute_to_bson).collect()),
        AttributeValue::M(m) => Bson::Document(item_to_document(m)),
    }
}

/// The number rule on a DynamoDB number's canonical text. A DynamoDB number
/// (at most 9.99E+125) always fits a double, so the fallback never runs.
fn model_number_to_bson(n: &Number) -> Bson {
    number_text_to_bson(&n.to_string()).unwrap_or_else(|_| Bson::Double(n.to_f64_lossy()))
}

fn generic_binary(bytes: &[u8]) -> Bson {
    Bson::Binary(Binary { subtype: BinarySubtype::Generic, bytes: bytes.to_vec() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::test_support::*;
    use std::collections::BTreeMap;
    // --- DynamoDB items --------------------------------------------------

    #[test]
    fn item_to_document_converts_every_attribute_type() {
        let mut inner = BTreeMap::new();
        inner.insert("k".to_string(), AttributeValue::S("v".into()));
        let mut item = Item::new();
        item.insert("s".into(), AttributeValue::S("text".into()));
        item.insert("n_int".into(), number("42"));
        item.insert("n_long".into(), number("3000000000"));
        item.insert("n_frac".into(), number("1.50"));
        item.insert("n_one".into(), number("1.0"));
        item.insert("n_big".into(), number("1E+125"));
        item.insert("n_38".into(), number("12345678901234567890123456789012345678"));
        item.insert("b".into(), AttributeValue::B(vec![0, 255]));
        item.insert("bool".into(), AttributeValue::Bool(true));
        item.insert("null".into(), AttributeValue::Null);
        item.insert("ss".into(), AttributeValue::Ss(vec!["x".into(), "y".into()]));
        item.insert("ns".into(), AttributeValue::Ns(vec![Number::parse("1").unwrap(), Number::parse("2.5").unwrap()]));
        item.insert("bs".into(), AttributeValue::Bs(vec![vec![1], vec![2, 3]]));
        item.insert("l".into(), AttributeValue::L(vec![number("7"), AttributeValue::Null]));
        item.insert("m".into(), AttributeValue::M(inner));

        let d = item_to_document(&item);
        let generic = |bytes: &[u8]| Bson::Binary(Binary { subtype: BinarySubtype::Generic, bytes: bytes.to_vec() });
        assert_eq!(d.get("s"), Some(&Bson::String("text".into())));
        assert_eq!(d.get("n_int"), Some(&Bson::Int32(42)));
        assert_eq!(d.get("n_long"), Some(&Bson::Int64(3_000_000_000)));
        assert_eq!(d.get("n_frac"), Some(&Bson::Double(1.5)));
        assert_eq!(d.get("n_one"), Some(&Bson::Int32(1)));
        assert_eq!(d.get("n_big").map(decimal_text), Some("1E+125".to_string()));
        assert_eq!(d.get("n_38"), Some(&Bson::Double(1.2345678901234568e37_f64)));
        assert_eq!(d.get("b"), Some(&generic(&[0, 255])));
        assert_eq!(d.get("bool"), Some(&Bson::Boolean(true)));
        assert_eq!(d.get("null"), Some(&Bson::Null));
        assert_eq!(d.get("ss"), Some(&Bson::Array(vec![Bson::String("x".into()), Bson::String("y".into())])));
        assert_eq!(d.get("ns"), Some(&Bson::Array(vec![Bson::Int32(1), Bson::Double(2.5)])));
        assert_eq!(d.get("bs"), Some(&Bson::Array(vec![generic(&[1]), generic(&[2, 3])])));
        assert_eq!(d.get("l"), Some(&Bson::Array(vec![Bson::Int32(7), Bson::Null])));
        assert_eq!(d.get_document("m").unwrap().get("k"), Some(&Bson::String("v".into())));
        // An Item is a BTreeMap: fields in name order.
        let keys: Vec<_> = d.keys().cloned().collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
    }
}
