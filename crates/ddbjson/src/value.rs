//! Attribute values in DynamoDB JSON (`{"S": "x"}`, `{"N": "1"}`, …),
//! validated the way DynamoDB validates them, and the export-line wrapper.

use std::collections::{BTreeMap, HashSet};

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use dynaburst_model::{AttributeValue, Item, Number, NumberError, ValueType};
use serde_json::{Map, Value};

use crate::error::{Error, SetType};

/// Deepest nesting of lists and maps DynamoDB stores.
pub const MAX_NESTING_DEPTH: usize = 32;

/// Jackson's name for a JSON value's token, as DynamoDB's messages use it.
pub fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "NULL_VALUE",
        Value::Bool(_) => "BOOLEAN_VALUE",
        Value::Number(_) => "NUMBER_VALUE",
        Value::String(_) => "STRING_VALUE",
        Value::Array(_) => "START_ARRAY",
        Value::Object(_) => "START_OBJECT",
    }
}

fn wrong_json_type(v: &Value, target: &'static str) -> Error {
    Error::WrongJsonType { found: json_type(v), target }
}

fn as_str<'a>(v: &'a Value, target: &'static str) -> Result<&'a str, Error> {
    v.as_str().ok_or_else(|| wrong_json_type(v, target))
}

fn as_array(v: &Value) -> Result<&Vec<Value>, Error> {
    v.as_array().ok_or_else(|| wrong_json_type(v, "List"))
}

fn parse_number(text: &str) -> Result<Number, Error> {
    Number::parse(text).map_err(|e| match e {
        NumberError::Invalid => Error::NotANumber(text.to_string()),
        other => Error::Number(other),
    })
}

fn parse_binary(v: &Value) -> Result<Vec<u8>, Error> {
    let text = as_str(v, "Blob")?;
    BASE64.decode(text).map_err(|_| Error::InvalidBase64)
}

/// Parses one attribute value.
pub fn parse_value(v: &Value) -> Result<AttributeValue, Error> {
    parse_value_at(v, 0)
}

fn parse_value_at(v: &Value, depth: usize) -> Result<AttributeValue, Error> {
    // An attribute's value is level 0; a value 32 maps or lists deep is
    // past the limit.
    if depth >= MAX_NESTING_DEPTH {
        return Err(Error::TooDeep);
    }
    let obj = v.as_object().ok_or_else(|| wrong_json_type(v, "AttributeValue"))?;
    let mut found: Option<(&str, &Value)> = None;
    let mut count = 0;
    for (k, val) in obj {
        if matches!(k.as_str(), "S" | "N" | "B" | "BOOL" | "NULL" | "SS" | "NS" | "BS" | "L" | "M") && !val.is_null() {
            count += 1;
            found = Some((k.as_str(), val));
        }
    }
    if count > 1 {
        return Err(Error::SeveralTypes);
    }
    let Some((ty, val)) = found else {
        return Err(Error::NoType);
    };
    Ok(match ty {
        "S" => AttributeValue::S(as_str(val, "String")?.to_string()),
        "N" => AttributeValue::N(parse_number(as_str(val, "Number")?)?),
        "B" => AttributeValue::B(parse_binary(val)?),
        "BOOL" => AttributeValue::Bool(val.as_bool().ok_or_else(|| wrong_json_type(val, "Boolean"))?),
        "NULL" => {
            if val.as_bool() != Some(true) {
                if val.is_boolean() {
                    return Err(Error::NullNotTrue);
                }
                return Err(wrong_json_type(val, "Boolean"));
            }
            AttributeValue::Null
        }
        "SS" => {
            let list = as_array(val)?;
            if list.is_empty() {
                return Err(Error::EmptySet(SetType::String));
            }
            let mut out = Vec::with_capacity(list.len());
            let mut seen = HashSet::with_capacity(list.len());
            for e in list {
                let s = as_str(e, "String")?;
                if !seen.insert(s) {
                    let shown = list.iter().filter_map(Value::as_str).map(str::to_string).collect();
                    return Err(Error::DuplicateStrings(shown));
                }
                out.push(s.to_string());
            }
            AttributeValue::Ss(out)
        }
        "NS" => {
            let list = as_array(val)?;
            if list.is_empty() {
                return Err(Error::EmptySet(SetType::Number));
            }
            let mut out: Vec<Number> = Vec::with_capacity(list.len());
            let mut seen = HashSet::with_capacity(list.len());
            for e in list {
                let n = parse_number(as_str(e, "Number")?)?;
                if !seen.insert(n.clone()) {
                    return Err(Error::Duplicates);
                }
                out.push(n);
            }
            AttributeValue::Ns(out)
        }
        "BS" => {
            let list = as_array(val)?;
            if list.is_empty() {
                return Err(Error::EmptySet(SetType::Binary));
            }
            let mut out = Vec::with_capacity(list.len());
            let mut seen = HashSet::with_capacity(list.len());
            for e in list {
                let b = parse_binary(e)?;
                if !seen.insert(b.clone()) {
                    return Err(Error::Duplicates);
                }
                out.push(b);
            }
            AttributeValue::Bs(out)
        }
        "L" => {
            let list = as_array(val)?;
            let mut out = Vec::with_capacity(list.len());
            for e in list {
                out.push(parse_value_at(e, depth + 1)?);
            }
            AttributeValue::L(out)
        }
        _ => {
            let map = val.as_object().ok_or_else(|| wrong_json_type(val, "Map"))?;
            let mut out = BTreeMap::new();
            for (k, e) in map {
                out.insert(k.clone(), parse_value_at(e, depth + 1)?);
            }
            AttributeValue::M(out)
        }
    })
}

/// Parses an item (a map of attribute values).
pub fn parse_item(v: &Value) -> Result<Item, Error> {
    let obj = v.as_object().ok_or_else(|| wrong_json_type(v, "Map"))?;
    let mut item = Item::new();
    for (k, val) in obj {
        item.insert(k.clone(), parse_value(val)?);
    }
    Ok(item)
}

/// Renders one attribute value.
pub fn value_to_json(v: &AttributeValue) -> Value {
    let mut m = Map::with_capacity(1);
    let (k, val) = match v {
        AttributeValue::S(s) => ("S", Value::String(s.clone())),
        AttributeValue::N(n) => ("N", Value::String(n.to_string())),
        AttributeValue::B(b) => ("B", Value::String(BASE64.encode(b))),
        AttributeValue::Bool(b) => ("BOOL", Value::Bool(*b)),
        AttributeValue::Null => ("NULL", Value::Bool(true)),
        AttributeValue::Ss(v) => ("SS", Value::Array(v.iter().map(|s| Value::String(s.clone())).collect())),
        AttributeValue::Ns(v) => ("NS", Value::Array(v.iter().map(|n| Value::String(n.to_string())).collect())),
        AttributeValue::Bs(v) => ("BS", Value::Array(v.iter().map(|b| Value::String(BASE64.encode(b))).collect())),
        AttributeValue::L(v) => ("L", Value::Array(v.iter().map(value_to_json).collect())),
        AttributeValue::M(m) => ("M", Value::Object(m.iter().map(|(k, v)| (k.clone(), value_to_json(v))).collect())),
    };
    m.insert(k.to_string(), val);
    Value::Object(m)
}

/// Renders an item.
pub fn item_to_json(item: &Item) -> Value {
    Value::Object(item.iter().map(|(k, v)| (k.clone(), value_to_json(v))).collect())
}

/// The item of one line of a DynamoDB export: the value of the wrapper
/// `{"Item": {...}}`, or the line itself when it is a bare item. A bare
/// item whose one attribute is called "Item" holds an attribute value
/// (`{"Item": {"S": "x"}}`), which tells it from the wrapper.
pub fn export_item(line: &Value) -> &Value {
    let is_attribute_value = |x: &Value| {
        x.as_object().is_some_and(|m| m.len() == 1 && m.keys().all(|k| ValueType::from_descriptor(k).is_some()))
    };
    match line {
        Value::Object(o) if o.len() == 1 => match o.get("Item") {
            Some(inner) if inner.is_object() && !is_attribute_value(inner) => inner,
            _ => line,
        },
        _ => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorClass;
    use serde_json::json;

    fn err(v: Value) -> String {
        parse_value(&v).unwrap_err().to_string()
    }

    #[test]
    fn round_trips_every_type() {
        let v = json!({"M": {"s": {"S": "x"}, "n": {"N": "1.50"}, "b": {"B": "AAE="}, "t": {"BOOL": true},
            "z": {"NULL": true}, "ss": {"SS": ["a", "b"]}, "ns": {"NS": ["1", "2"]}, "bs": {"BS": ["AA=="]},
            "l": {"L": [{"S": "y"}, {"L": []}]}}});
        let parsed = parse_value(&v).unwrap();
        let back = value_to_json(&parsed);
        let mut expected = v.clone();
        expected["M"]["n"] = json!({"N": "1.5"});
        assert_eq!(back, expected);
    }

    #[test]
    fn rejects_bad_values_with_dynamodb_messages() {
        assert_eq!(
            err(json!({})),
            "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes"
        );
        assert_eq!(
            err(json!({"S": "a", "N": "1"})),
            "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes"
        );
        assert_eq!(
            err(json!({"SS": []})),
            "One or more parameter values were invalid: An string set  may not be empty"
        );
        assert_eq!(
            err(json!({"SS": ["a", "a"]})),
            "One or more parameter values were invalid: Input collection [a, a] contains duplicates."
        );
        assert_eq!(
            err(json!({"NS": ["1", "1.0"]})),
            "One or more parameter values were invalid: Input collection contains duplicates."
        );
        assert_eq!(
            err(json!({"NULL": false})),
            "One or more parameter values were invalid: Null attribute value types must have the value of true"
        );
        assert_eq!(err(json!({"N": "abc"})), "The parameter cannot be converted to a numeric value: abc");
        assert_eq!(err(json!({"N": ""})), "The parameter cannot be converted to a numeric value");
        let mut deep = json!({"S": "x"});
        for _ in 0..40 {
            deep = json!({"L": [deep]});
        }
        assert_eq!(
            err(deep),
            "Nesting Levels have exceeded supported limits: Attributes in the item have nested levels beyond supported limit"
        );
        let wrong = parse_value(&json!({"S": 5})).unwrap_err();
        assert_eq!(wrong, Error::WrongJsonType { found: "NUMBER_VALUE", target: "String" });
        assert_eq!(wrong.class(), ErrorClass::Serialization);
        assert_eq!(wrong.to_string(), "NUMBER_VALUE cannot be converted to String");
        assert_eq!(parse_value(&json!({"B": "a"})).unwrap_err().class(), ErrorClass::Serialization);
        assert_eq!(parse_value(&json!({"N": "x"})).unwrap_err().class(), ErrorClass::Validation);
    }

    #[test]
    fn export_lines_unwrap_the_item_wrapper_only() {
        let wrapped = json!({"Item": {"id": {"S": "a"}}});
        assert_eq!(export_item(&wrapped), &json!({"id": {"S": "a"}}));
        // A bare item with one attribute called "Item" is not a wrapper.
        let bare = json!({"Item": {"S": "a"}});
        assert_eq!(export_item(&bare), &bare);
        let two = json!({"Item": {"id": {"S": "a"}}, "x": {"N": "1"}});
        assert_eq!(export_item(&two), &two);
        let item = parse_item(export_item(&wrapped)).unwrap();
        assert_eq!(item.get("id"), Some(&AttributeValue::S("a".to_string())));
    }
}
