//! The target table's key schema, and the checks every record passes
//! before it is sent (so a bad record is rejected alone, with a reason).

use dynaburst_model::{item_size, Item, KeyValue, ScalarType, MAX_ITEM_BYTES};

use dynaburst_loader::KeyId;

/// Largest partition-key value, in bytes.
pub const MAX_PARTITION_KEY_BYTES: usize = 2048;
/// Largest sort-key value, in bytes.
pub const MAX_SORT_KEY_BYTES: usize = 1024;

/// A key schema or billing given on the command line that does not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpecError {
    /// Not one or two `NAME:TYPE` parts.
    Parts {
        given: String,
    },
    NotNameType {
        part: String,
    },
    KeyType {
        name: String,
        given: String,
    },
    NoName {
        part: String,
    },
    SameNames,
    Billing {
        given: String,
    },
    /// `what` is RCU or WCU.
    Capacity {
        what: &'static str,
        given: String,
    },
}

impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SpecError::Parts { given } => {
                write!(f, "--key takes NAME:TYPE or NAME:TYPE,NAME:TYPE (for example id:S,sk:N), not '{given}'")
            }
            SpecError::NotNameType { part } => write!(f, "'{part}' is not NAME:TYPE"),
            SpecError::KeyType { name, given } => write!(f, "key type '{given}' of {name} must be S, N or B"),
            SpecError::NoName { part } => write!(f, "'{part}' has no attribute name"),
            SpecError::SameNames => f.write_str("the partition key and the sort key need different names"),
            SpecError::Billing { given } => {
                write!(f, "--billing takes on-demand or provisioned:RCU:WCU, not '{given}'")
            }
            SpecError::Capacity { what, given } => write!(f, "{what} '{given}' is not a whole number"),
        }
    }
}

impl std::error::Error for SpecError {}

/// Why a record cannot be written to the table (its rejects-file reason).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecordError {
    MissingKey { role: &'static str, name: String },
    KeyType { role: &'static str, name: String, want: &'static str, got: &'static str },
    EmptyKey { role: &'static str, name: String },
    KeyTooLarge { role: &'static str, name: String, size: usize, max: usize },
    TooLarge { size: usize },
}

impl std::fmt::Display for RecordError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RecordError::MissingKey { role, name } => write!(f, "missing the {role} key attribute {name}"),
            RecordError::KeyType { role, name, want, got } => {
                write!(f, "{role} key {name} must be of type {want}, not {got}")
            }
            RecordError::EmptyKey { role, name } => write!(f, "{role} key {name} is empty"),
            RecordError::KeyTooLarge { role, name, size, max } => {
                write!(f, "{role} key {name} is {size} bytes; at most {max} are allowed")
            }
            RecordError::TooLarge { size } => {
                write!(f, "item is {size} bytes; DynamoDB stores at most {MAX_ITEM_BYTES} (400 KB)")
            }
        }
    }
}

impl std::error::Error for RecordError {}

/// A table's primary key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeySchema {
    pub hash: (String, ScalarType),
    pub range: Option<(String, ScalarType)>,
}

impl std::fmt::Display for KeySchema {
    /// As `--key` takes it: `id:S` or `id:S,sk:N`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.hash.0, self.hash.1.descriptor())?;
        if let Some((name, ty)) = &self.range {
            write!(f, ",{name}:{}", ty.descriptor())?;
        }
        Ok(())
    }
}

impl KeySchema {
    /// Parses `id:S` or `id:S,sk:N`.
    pub fn parse(spec: &str) -> Result<KeySchema, SpecError> {
        let parts: Vec<&str> = spec.split(',').map(str::trim).filter(|p| !p.is_empty()).collect();
        if parts.is_empty() || parts.len() > 2 {
            return Err(SpecError::Parts { given: spec.to_string() });
        }
        let one = |p: &str| -> Result<(String, ScalarType), SpecError> {
            let (name, ty) = p.rsplit_once(':').ok_or_else(|| SpecError::NotNameType { part: p.to_string() })?;
            let ty = ScalarType::from_descriptor(&ty.to_ascii_uppercase())
                .ok_or_else(|| SpecError::KeyType { name: name.to_string(), given: ty.to_string() })?;
            if name.is_empty() {
                return Err(SpecError::NoName { part: p.to_string() });
            }
            Ok((name.to_string(), ty))
        };
        let hash = one(parts[0])?;
        let range = parts.get(1).map(|p| one(p)).transpose()?;
        if range.as_ref().is_some_and(|r| r.0 == hash.0) {
            return Err(SpecError::SameNames);
        }
        Ok(KeySchema { hash, range })
    }

    /// Checks a record's key attributes and size; returns its key and size.
    pub fn check(&self, item: &Item) -> Result<(KeyId, usize), RecordError> {
        let hash = key_value(item, &self.hash, MAX_PARTITION_KEY_BYTES, "partition")?;
        let range = match &self.range {
            Some(r) => Some(key_value(item, r, MAX_SORT_KEY_BYTES, "sort")?),
            None => None,
        };
        let size = item_size(item);
        if size > MAX_ITEM_BYTES {
            return Err(RecordError::TooLarge { size });
        }
        Ok(((hash, range), size))
    }

    /// The key attribute names.
    pub fn names(&self) -> Vec<&str> {
        std::iter::once(self.hash.0.as_str()).chain(self.range.as_ref().map(|r| r.0.as_str())).collect()
    }
}

fn key_value(
    item: &Item,
    (name, ty): &(String, ScalarType),
    max: usize,
    role: &'static str,
) -> Result<KeyValue, RecordError> {
    let Some(v) = item.get(name) else {
        return Err(RecordError::MissingKey { role, name: name.clone() });
    };
    let k = match KeyValue::from_attribute(v) {
        Some(k) if k.key_type() == *ty => k,
        _ => {
            return Err(RecordError::KeyType {
                role,
                name: name.clone(),
                want: ty.descriptor(),
                got: v.value_type().descriptor(),
            })
        }
    };
    let empty = matches!(&k, KeyValue::S(s) if s.is_empty()) || matches!(&k, KeyValue::B(b) if b.is_empty());
    if empty {
        return Err(RecordError::EmptyKey { role, name: name.clone() });
    }
    if k.size_bytes() > max {
        return Err(RecordError::KeyTooLarge { role, name: name.clone(), size: k.size_bytes(), max });
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
        assert_eq!(k.check(&item).unwrap_err().to_string(), "missing the sort key attribute sk");
        item.insert("sk".into(), AttributeValue::S("1".into()));
        assert_eq!(k.check(&item).unwrap_err().to_string(), "sort key sk must be of type N, not S");
        item.insert("sk".into(), AttributeValue::N(dynaburst_model::Number::from_i64(1)));
        assert!(k.check(&item).is_ok());
        item.insert("id".into(), AttributeValue::S(String::new()));
        assert_eq!(k.check(&item).unwrap_err().to_string(), "partition key id is empty");
    }
}
