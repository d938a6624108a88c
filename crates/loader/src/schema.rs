//! The target table's key schema, and the checks every record passes
//! before it is sent (so a bad record is rejected alone, with a reason).

use dynaburst_model::{item_size, Item, KeyValue, ScalarType, MAX_ITEM_BYTES};

use crate::convert::KeyId;

/// Largest partition-key value, in bytes.
pub const MAX_PARTITION_KEY_BYTES: usize = 2048;
/// Largest sort-key value, in bytes.
pub const MAX_SORT_KEY_BYTES: usize = 1024;

/// A table's primary key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeySchema {
    pub hash: (String, ScalarType),
    pub range: Option<(String, ScalarType)>,
}

impl KeySchema {
    /// Parses `id:S` or `id:S,sk:N`.
    pub fn parse(spec: &str) -> Result<KeySchema, String> {
        let parts: Vec<&str> = spec.split(',').map(str::trim).filter(|p| !p.is_empty()).collect();
        if parts.is_empty() || parts.len() > 2 {
            return Err(format!("--key takes NAME:TYPE or NAME:TYPE,NAME:TYPE (for example id:S,sk:N), not '{spec}'"));
        }
        let one = |p: &str| -> Result<(String, ScalarType), String> {
            let (name, ty) = p.rsplit_once(':').ok_or_else(|| format!("'{p}' is not NAME:TYPE"))?;
            let ty = ScalarType::from_descriptor(&ty.to_ascii_uppercase())
                .ok_or_else(|| format!("key type '{ty}' of {name} must be S, N or B"))?;
            if name.is_empty() {
                return Err(format!("'{p}' has no attribute name"));
            }
            Ok((name.to_string(), ty))
        };
        let hash = one(parts[0])?;
        let range = parts.get(1).map(|p| one(p)).transpose()?;
        if range.as_ref().is_some_and(|r| r.0 == hash.0) {
            return Err("the partition key and the sort key need different names".to_string());
        }
        Ok(KeySchema { hash, range })
    }

    /// Checks a record's key attributes and size; returns its key and size.
    pub fn check(&self, item: &Item) -> Result<(KeyId, usize), String> {
        let hash = key_value(item, &self.hash, MAX_PARTITION_KEY_BYTES, "partition")?;
        let range = match &self.range {
            Some(r) => Some(key_value(item, r, MAX_SORT_KEY_BYTES, "sort")?),
            None => None,
        };
        let size = item_size(item);
        if size > MAX_ITEM_BYTES {
            return Err(format!("item is {size} bytes; DynamoDB stores at most {MAX_ITEM_BYTES} (400 KB)"));
        }
        Ok(((hash, range), size))
    }

    /// The key attribute names.
    pub fn names(&self) -> Vec<&str> {
        std::iter::once(self.hash.0.as_str()).chain(self.range.as_ref().map(|r| r.0.as_str())).collect()
    }
}

fn key_value(item: &Item, (name, ty): &(String, ScalarType), max: usize, role: &str) -> Result<KeyValue, String> {
    let Some(v) = item.get(name) else {
        return Err(format!("missing the {role} key attribute {name}"));
    };
    let k = match KeyValue::from_attribute(v) {
        Some(k) if k.key_type() == *ty => k,
        _ => {
            return Err(format!(
                "{role} key {name} must be of type {}, not {}",
                ty.descriptor(),
                v.value_type().descriptor()
            ))
        }
    };
    let empty = matches!(&k, KeyValue::S(s) if s.is_empty()) || matches!(&k, KeyValue::B(b) if b.is_empty());
    if empty {
        return Err(format!("{role} key {name} is empty"));
    }
    if k.size_bytes() > max {
        return Err(format!("{role} key {name} is {} bytes; at most {max} are allowed", k.size_bytes()));
    }
    Ok(k)
}

#[cfg(test)]
mod tests {
    use super::*;
    use dynaburst_model::AttributeValue;

    #[test]
    fn parses_and_checks() {
        let k = KeySchema::parse("id:S,sk:n").unwrap();
        assert_eq!(k.range, Some(("sk".into(), ScalarType::N)));
        assert!(KeySchema::parse("id:X").is_err());
        assert!(KeySchema::parse("a:S,a:N").is_err());
        let mut item = Item::new();
        item.insert("id".into(), AttributeValue::S("x".into()));
        assert_eq!(k.check(&item).unwrap_err(), "missing the sort key attribute sk");
        item.insert("sk".into(), AttributeValue::S("1".into()));
        assert_eq!(k.check(&item).unwrap_err(), "sort key sk must be of type N, not S");
        item.insert("sk".into(), AttributeValue::N(dynaburst_model::Number::from_i64(1)));
        assert!(k.check(&item).is_ok());
        item.insert("id".into(), AttributeValue::S(String::new()));
        assert_eq!(k.check(&item).unwrap_err(), "partition key id is empty");
    }
}
