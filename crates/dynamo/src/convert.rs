//! Items between the data model and the AWS SDK.

use std::collections::HashMap;

use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::AttributeValue as Av;
use dynaburst_model::{AttributeValue, Item, KeyValue, Number};

/// A model value as an SDK value (numbers as their exact canonical text).
pub fn to_sdk(v: &AttributeValue) -> Av {
    match v {
        AttributeValue::S(s) => Av::S(s.clone()),
        AttributeValue::N(n) => Av::N(n.to_string()),
        AttributeValue::B(b) => Av::B(Blob::new(b.clone())),
        AttributeValue::Bool(b) => Av::Bool(*b),
        AttributeValue::Null => Av::Null(true),
        AttributeValue::Ss(v) => Av::Ss(v.clone()),
        AttributeValue::Ns(v) => Av::Ns(v.iter().map(|n| n.to_string()).collect()),
        AttributeValue::Bs(v) => Av::Bs(v.iter().map(|b| Blob::new(b.clone())).collect()),
        AttributeValue::L(v) => Av::L(v.iter().map(to_sdk).collect()),
        AttributeValue::M(m) => Av::M(m.iter().map(|(k, v)| (k.clone(), to_sdk(v))).collect()),
    }
}

/// A model item as an SDK item.
pub fn item_to_sdk(item: &Item) -> HashMap<String, Av> {
    item.iter().map(|(k, v)| (k.clone(), to_sdk(v))).collect()
}

/// An SDK key value as a model key value (S, N or B only).
pub fn key_from_sdk(v: &Av) -> Option<KeyValue> {
    match v {
        Av::S(s) => Some(KeyValue::S(s.clone())),
        Av::N(n) => Number::parse(n).ok().map(KeyValue::N),
        Av::B(b) => Some(KeyValue::B(b.as_ref().to_vec())),
        _ => None,
    }
}

/// An SDK value as a model value; None for a number that does not parse
/// or a type the model does not know.
pub fn from_sdk(v: &Av) -> Option<AttributeValue> {
    Some(match v {
        Av::S(s) => AttributeValue::S(s.clone()),
        Av::N(n) => AttributeValue::N(Number::parse(n).ok()?),
        Av::B(b) => AttributeValue::B(b.as_ref().to_vec()),
        Av::Bool(b) => AttributeValue::Bool(*b),
        Av::Null(_) => AttributeValue::Null,
        Av::Ss(v) => AttributeValue::Ss(v.clone()),
        Av::Ns(v) => AttributeValue::Ns(v.iter().map(|n| Number::parse(n).ok()).collect::<Option<_>>()?),
        Av::Bs(v) => AttributeValue::Bs(v.iter().map(|b| b.as_ref().to_vec()).collect()),
        Av::L(v) => AttributeValue::L(v.iter().map(from_sdk).collect::<Option<_>>()?),
        Av::M(m) => AttributeValue::M(m.iter().map(|(k, v)| Some((k.clone(), from_sdk(v)?))).collect::<Option<_>>()?),
        _ => return None,
    })
}

/// An SDK item as a model item (None if a value does not convert).
pub fn item_from_sdk(item: &HashMap<String, Av>) -> Option<Item> {
    item.iter().map(|(k, v)| Some((k.clone(), from_sdk(v)?))).collect()
}
