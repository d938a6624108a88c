//! JSON Lines records to documents.
//!
//! [`json_line_to_document`] parses one record from its text. The record
//! must be a JSON object; its fields keep their input order (a repeated
//! key keeps its first position and its last value).
//!
//! Plain JSON numbers follow the number rule ([`super::number`]), applied
//! to their exact source text. bson's own Extended JSON parser is not used
//! for plain numbers: it turns integers past `i64` into doubles, losing
//! digits. Objects holding an Extended JSON type-wrapper key become that
//! type ([`super::extjson`]).
//!
//! Documents nest at most [`MAX_NESTING_DEPTH`] levels (the record is level
//! 1, each object or array inside adds one; type wrappers are values, not
//! levels), MongoDB's limit.

use std::fmt;

use bson::{Bson, Document};

use super::extjson::{extended_json, Wrapper, WrapperError};
use super::json::{nesting_depth, Json};
use super::number::{number_text_to_bson, NumberError};

/// Most levels of nesting MongoDB stores; the document itself is level 1.
pub const MAX_NESTING_DEPTH: usize = 100;

/// Why a JSON Lines record is not a document. `Display` gives the message
/// the rejects file shows.
#[derive(Debug)]
pub enum RecordError {
    /// Not JSON at all (serde_json's reason).
    Malformed(serde_json::Error),
    /// JSON, but not an object.
    NotAnObject,
    /// An object that is itself a type wrapper (`{"$oid": ...}`).
    WrapperRecord(Wrapper),
    /// Nested deeper than [`MAX_NESTING_DEPTH`].
    TooDeep { path: FieldPath },
    /// A field name holding a NUL character, which BSON cannot store.
    NulInFieldName { path: FieldPath },
    /// A number BSON cannot hold.
    Number { path: FieldPath, error: NumberError },
    /// A malformed type wrapper.
    Wrapper { path: FieldPath, wrapper: Wrapper, error: WrapperError },
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordError::Malformed(e) => write!(f, "malformed JSON: {e}"),
            RecordError::NotAnObject => f.write_str("a JSON Lines record must be an object"),
            RecordError::WrapperRecord(wrapper) => {
                write!(f, "a JSON Lines record must be an object, not an Extended JSON {wrapper} value")
            }
            RecordError::TooDeep { path } => {
                write!(f, "{}nested deeper than {MAX_NESTING_DEPTH} levels (MongoDB's limit)", path.prefix())
            }
            RecordError::NulInFieldName { path } => {
                write!(f, "{}a field name cannot contain a NUL character", path.prefix())
            }
            RecordError::Number { path, error } => write!(f, "{}{error}", path.prefix()),
            RecordError::Wrapper { path, wrapper, error } => write!(f, "{}{wrapper} {error}", path.prefix()),
        }
    }
}

impl std::error::Error for RecordError {}

/// Where a value sits in its record, dotted: `a.b.2.c`; empty for the
/// record itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldPath(String);

impl FieldPath {
    /// The record itself.
    pub fn root() -> FieldPath {
        FieldPath::default()
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// `field a.b: ` before a message, or nothing for the record itself.
    fn prefix(&self) -> impl fmt::Display + '_ {
        struct Prefix<'a>(&'a str);
        impl fmt::Display for Prefix<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                if self.0.is_empty() {
                    Ok(())
                } else {
                    write!(f, "field {}: ", self.0)
                }
            }
        }
        Prefix(&self.0)
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One JSON Lines record to a document, by the rules in the module doc.
pub fn json_line_to_document(raw: &str) -> Result<Document, RecordError> {
    let json = match Json::parse(raw) {
        Ok(json) => json,
        // serde_json stops at 128 levels; say why in our terms.
        Err(_) if nesting_depth(raw) > MAX_NESTING_DEPTH => {
            return Err(RecordError::TooDeep { path: FieldPath::root() })
        }
        Err(e) => return Err(RecordError::Malformed(e)),
    };
    let Json::Object(entries) = json else {
        return Err(RecordError::NotAnObject);
    };
    if let Some(wrapper) = Wrapper::among(&entries) {
        return Err(RecordError::WrapperRecord(wrapper));
    }
    object_to_document(entries, &Path::Root, 1)
}

/// Where a value sits while converting: a chain of borrowed steps, turned
/// into a [`FieldPath`] only for an error.
enum Path<'a> {
    Root,
    Field(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parent = match self {
            Path::Root => return Ok(()),
            Path::Field(parent, _) | Path::Index(parent, _) => parent,
        };
        if !matches!(parent, Path::Root) {
            write!(f, "{parent}.")?;
        }
        match self {
            Path::Field(_, name) => f.write_str(name),
            Path::Index(_, index) => write!(f, "{index}"),
            Path::Root => Ok(()),
        }
    }
}

impl From<&Path<'_>> for FieldPath {
    fn from(path: &Path<'_>) -> FieldPath {
        FieldPath(path.to_string())
    }
}

/// The fields of an object at nesting `level` (the record is level 1).
fn object_to_document(entries: Vec<(String, Json)>, path: &Path, level: usize) -> Result<Document, RecordError> {
    if level > MAX_NESTING_DEPTH {
        return Err(RecordError::TooDeep { path: path.into() });
    }
    let mut doc = Document::new();
    for (key, value) in entries {
        let value = {
            let path = Path::Field(path, &key);
            if key.contains('\0') {
                return Err(RecordError::NulInFieldName { path: (&path).into() });
            }
            json_to_bson(value, &path, level)?
        };
        doc.insert(key, value);
    }
    Ok(doc)
}

/// A value inside a document or array at nesting `level`.
fn json_to_bson(value: Json, path: &Path, level: usize) -> Result<Bson, RecordError> {
    Ok(match value {
        Json::Null => Bson::Null,
        Json::Bool(b) => Bson::Boolean(b),
        Json::Number(n) => {
            number_text_to_bson(n.as_str()).map_err(|error| RecordError::Number { path: path.into(), error })?
        }
        Json::String(s) => Bson::String(s),
        Json::Array(items) => {
            if level + 1 > MAX_NESTING_DEPTH {
                return Err(RecordError::TooDeep { path: path.into() });
            }
            let mut array = Vec::with_capacity(items.len());
            for (index, item) in items.into_iter().enumerate() {
                array.push(json_to_bson(item, &Path::Index(path, index), level + 1)?);
            }
            Bson::Array(array)
        }
        Json::Object(entries) => match Wrapper::among(&entries) {
            Some(wrapper) => extended_json(wrapper, entries).map_err(|error| RecordError::Wrapper {
                path: path.into(),
                wrapper,
                error,
            })?,
            None => Bson::Document(object_to_document(entries, path, level + 1)?),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::test_support::*;
    #[test]
    fn json_numbers_keep_their_source_text() {
        let d = doc(concat!(
            r#"{"a": 2147483647, "b": 2147483648, "c": 9223372036854775808, "d": 1.0, "e": 1e3,"#,
            r#" "f": -0, "g": 12345678901234567890123456789012, "h": 1E3, "i": 0.30000000000000004}"#
        ));
        assert_eq!(d.get("a"), Some(&Bson::Int32(2_147_483_647)));
        assert_eq!(d.get("b"), Some(&Bson::Int64(2_147_483_648)));
        assert_eq!(d.get("c"), Some(&Bson::Decimal128(decimal("9223372036854775808"))));
        assert_eq!(d.get("d"), Some(&Bson::Double(1.0)));
        assert_eq!(d.get("e"), Some(&Bson::Double(1000.0)));
        assert_eq!(d.get("f"), Some(&Bson::Int32(0)));
        assert_eq!(d.get("g"), Some(&Bson::Decimal128(decimal("12345678901234567890123456789012"))));
        assert_eq!(d.get("h"), Some(&Bson::Double(1000.0)));
        assert_eq!(d.get("i"), Some(&Bson::Double(0.30000000000000004)));
    }

    #[test]
    fn json_number_out_of_range_names_the_field() {
        // serde_json spells exponents `e+` / `e-`: the text is exact in value, not in spelling.
        assert_eq!(err(r#"{"a": {"b": 1E999}}"#), "field a.b: number 1e+999 is out of range for a BSON double");
    }

    // --- records ---------------------------------------------------------

    #[test]
    fn fields_keep_input_order_and_plain_types() {
        let d = doc(r#"{"z": 1, "a": "s", "m": true, "n": null, "l": [1, "x"], "o": {"y": 2, "b": 3}}"#);
        assert_eq!(d.keys().collect::<Vec<_>>(), ["z", "a", "m", "n", "l", "o"]);
        assert_eq!(d.get("a"), Some(&Bson::String("s".into())));
        assert_eq!(d.get("m"), Some(&Bson::Boolean(true)));
        assert_eq!(d.get("n"), Some(&Bson::Null));
        assert_eq!(d.get("l"), Some(&Bson::Array(vec![Bson::Int32(1), Bson::String("x".into())])));
        let o = d.get_document("o").unwrap();
        assert_eq!(o.keys().collect::<Vec<_>>(), ["y", "b"]);
    }

    #[test]
    fn repeated_key_keeps_first_position_and_last_value() {
        let d = doc(r#"{"a": 1, "b": 2, "a": 3}"#);
        assert_eq!(d.keys().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(d.get("a"), Some(&Bson::Int32(3)));
    }

    #[test]
    fn record_must_be_a_json_object() {
        for raw in ["[1, 2]", "\"text\"", "3", "null", "true"] {
            assert_eq!(err(raw), "a JSON Lines record must be an object", "{raw}");
        }
        assert_eq!(
            err(r#"{"$oid": "0123456789abcdef01234567"}"#),
            "a JSON Lines record must be an object, not an Extended JSON $oid value"
        );
    }

    #[test]
    fn malformed_json_is_reported_as_such() {
        let e = err(r#"{"a": "#);
        assert!(e.starts_with("malformed JSON: "), "{e}");
        let e = err(r#"{"a": 1} trailing"#);
        assert!(e.starts_with("malformed JSON: "), "{e}");
        let e = err("");
        assert!(e.starts_with("malformed JSON: "), "{e}");
    }

    #[test]
    fn nul_in_a_field_name_is_an_error() {
        assert_eq!(err(r#"{"a": {"b\u0000c": 1}}"#), "field a.b\0c: a field name cannot contain a NUL character");
    }

    #[test]
    fn other_dollar_keys_stay_plain_fields() {
        let d = doc(r#"{"$set": 1, "x": {"$code": "f()"}, "y": {"$type": "string"}, "q": {"$regex": "^a"}}"#);
        assert_eq!(d.get("$set"), Some(&Bson::Int32(1)));
        assert_eq!(d.get_document("x").unwrap().get("$code"), Some(&Bson::String("f()".into())));
        assert_eq!(d.get_document("y").unwrap().get("$type"), Some(&Bson::String("string".into())));
        assert_eq!(d.get_document("q").unwrap().get("$regex"), Some(&Bson::String("^a".into())));
    }

    // --- nesting ---------------------------------------------------------

    /// A record `levels` deep: `{"a": {"a": ... <leaf> ...}}`.
    fn nested(levels: usize, leaf: &str) -> String {
        format!("{}{leaf}{}", "{\"a\": ".repeat(levels), "}".repeat(levels))
    }

    #[test]
    fn nesting_up_to_the_limit_is_accepted() {
        assert_eq!(MAX_NESTING_DEPTH, 100);
        doc(&nested(MAX_NESTING_DEPTH, "1"));
        // Arrays are levels too: the record plus 99 arrays.
        doc(&format!("{{\"a\": {}1{}}}", "[".repeat(99), "]".repeat(99)));
        // Type wrappers are values, not levels.
        doc(&nested(MAX_NESTING_DEPTH, r#"{"$date": {"$numberLong": "1"}}"#));
    }

    #[test]
    fn nesting_past_the_limit_is_an_error() {
        let e = err(&nested(MAX_NESTING_DEPTH + 1, "1"));
        assert!(e.starts_with("field a.a.a."), "{e}");
        assert!(e.ends_with(": nested deeper than 100 levels (MongoDB's limit)"), "{e}");
        let e = err(&format!("{{\"a\": {}1{}}}", "[".repeat(100), "]".repeat(100)));
        assert!(e.starts_with("field a.0.0."), "{e}");
        assert!(e.ends_with(": nested deeper than 100 levels (MongoDB's limit)"), "{e}");
        // Deeper than serde_json's own limit (128): the same reason.
        assert_eq!(err(&nested(1000, "1")), "nested deeper than 100 levels (MongoDB's limit)");
        // Brackets inside strings do not count.
        assert_eq!(nesting_depth(r#"{"a": "[[[{{{\"[[["}"#), 1);
    }

    // --- typed errors ----------------------------------------------------

    #[test]
    fn errors_are_typed_and_carry_their_field_path() {
        let e = json_line_to_document(r#"{"a": {"b": 1E999}}"#).unwrap_err();
        let RecordError::Number { path, error } = &e else { panic!("{e:?}") };
        assert_eq!(path.as_str(), "a.b");
        assert_eq!(error, &NumberError::OutOfRange { text: "1e+999".into() });

        let e = json_line_to_document(r#"{"x": [0, {"$oid": "zz"}]}"#).unwrap_err();
        let RecordError::Wrapper { path, wrapper, error } = &e else { panic!("{e:?}") };
        assert_eq!((path.as_str(), *wrapper), ("x.1", Wrapper::Oid));
        assert_eq!(error, &WrapperError::ObjectId { text: "zz".into() });

        let e = json_line_to_document(r#"{"a": {"b\u0000": 1}}"#).unwrap_err();
        assert!(matches!(&e, RecordError::NulInFieldName { path } if path.as_str() == "a.b\0"), "{e:?}");

        assert!(matches!(json_line_to_document("[1]"), Err(RecordError::NotAnObject)));
        assert!(matches!(json_line_to_document(r#"{"$maxKey": 1}"#), Err(RecordError::WrapperRecord(Wrapper::MaxKey))));
        assert!(matches!(json_line_to_document("{"), Err(RecordError::Malformed(e)) if e.is_eof()));
        // Past serde_json's own depth limit: the record itself is too deep.
        let e = json_line_to_document(&nested(1000, "1")).unwrap_err();
        assert!(matches!(&e, RecordError::TooDeep { path } if path == &FieldPath::root()), "{e:?}");
    }
}
