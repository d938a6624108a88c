//! A JSON text as a tree that keeps what a record needs and
//! `serde_json::Value` loses here: object keys in input order, and each
//! number's text.
//!
//! `Value` keeps key order only with serde_json's `preserve_order`
//! feature, which Cargo would turn on for every crate of the binary (the
//! server's request parsing included, whose maps would change type and
//! speed); so the tree is read through serde with its own visitor. Numbers
//! are `serde_json::Number`s: with `arbitrary_precision` (the workspace's
//! setting) `Number::as_str` is the literal's text, exact at any length
//! (serde_json spells exponents `e+`/`e-`).

use std::fmt;
use std::sync::OnceLock;

use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess, Visitor};

use super::{excerpt, quoted};

/// A JSON value: objects keep their keys in input order (repeats
/// included), numbers are serde_json's exact numbers.
#[derive(Debug, PartialEq)]
pub(crate) enum Json {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    /// Parses one JSON text (surrounding whitespace allowed, nothing else).
    pub(crate) fn parse(text: &str) -> Result<Json, serde_json::Error> {
        serde_json::from_str(text)
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Json, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_bool<E>(self, b: bool) -> Result<Json, E> {
        Ok(Json::Bool(b))
    }

    // Integers that fit 64 bits come here; other numbers through
    // `visit_map` (see `number_key`).
    fn visit_i64<E>(self, n: i64) -> Result<Json, E> {
        Ok(Json::Number(n.into()))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Json, E> {
        Ok(Json::Number(n.into()))
    }

    // Only without `arbitrary_precision`.
    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Json, E> {
        serde_json::Number::from_f64(n).map(Json::Number).ok_or_else(|| E::custom("a JSON number must be finite"))
    }

    fn visit_str<E>(self, s: &str) -> Result<Json, E> {
        Ok(Json::String(s.to_owned()))
    }

    fn visit_string<E>(self, s: String) -> Result<Json, E> {
        Ok(Json::String(s))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let Some(first) = map.next_key::<String>()? else {
            return Ok(Json::Object(Vec::new()));
        };
        if Some(first.as_str()) == number_key() {
            // serde_json's own `Number` reads the rest of its form.
            let number =
                serde_json::Number::deserialize(MapAccessDeserializer::new(Replay { first: Some(first), map }))?;
            return Ok(Json::Number(number));
        }
        let mut entries = vec![(first, map.next_value()?)];
        while let Some(key) = map.next_key()? {
            entries.push((key, map.next_value()?));
        }
        Ok(Json::Object(entries))
    }
}

/// The key under which serde_json passes a number through serde's data
/// model (with `arbitrary_precision`, as a one-entry map holding its
/// text), learnt once from serde_json itself so no private name is copied
/// here. None if serde_json passes numbers otherwise.
fn number_key() -> Option<&'static str> {
    static KEY: OnceLock<Option<String>> = OnceLock::new();
    KEY.get_or_init(|| serde_json::from_str::<FirstKey>("0.5").ok().and_then(|k| k.0)).as_deref()
}

/// The first key of a map, if a map is what serde hands over.
struct FirstKey(Option<String>);

impl<'de> Deserialize<'de> for FirstKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<FirstKey, D::Error> {
        struct First;
        impl<'de> Visitor<'de> for First {
            type Value = FirstKey;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<FirstKey, A::Error> {
                Ok(FirstKey(map.next_key()?))
            }
        }
        deserializer.deserialize_any(First)
    }
}

/// A map whose first key was already read: hands it out again, then the
/// rest of the map.
struct Replay<A> {
    first: Option<String>,
    map: A,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Replay<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        match self.first.take() {
            Some(key) => seed.deserialize(key.into_deserializer()).map(Some),
            None => self.map.next_key_seed(seed),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
}

/// A JSON value as an error message shows it: scalars as written (long
/// ones cut), arrays and objects by kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Got {
    Null,
    Bool(bool),
    Number(String),
    String(String),
    Array,
    Object,
}

impl From<&Json> for Got {
    fn from(value: &Json) -> Got {
        match value {
            Json::Null => Got::Null,
            Json::Bool(b) => Got::Bool(*b),
            Json::Number(n) => Got::Number(n.as_str().to_string()),
            Json::String(s) => Got::String(s.clone()),
            Json::Array(_) => Got::Array,
            Json::Object(_) => Got::Object,
        }
    }
}

impl fmt::Display for Got {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Got::Null => f.write_str("null"),
            Got::Bool(b) => write!(f, "{b}"),
            Got::Number(text) => f.write_str(&excerpt(text)),
            Got::String(s) => f.write_str(&quoted(s)),
            Got::Array => f.write_str("an array"),
            Got::Object => f.write_str("an object"),
        }
    }
}

/// Greatest nesting of objects and arrays in a JSON text, counted without
/// parsing it (for the error when serde_json's own limit stops first).
pub(crate) fn nesting_depth(raw: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for b in raw.bytes() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Json {
        match Json::parse(text) {
            Ok(json) => json,
            Err(e) => panic!("{text}: {e}"),
        }
    }

    /// The text of a number, or a panic.
    fn number_text(json: &Json) -> &str {
        match json {
            Json::Number(n) => n.as_str(),
            other => panic!("not a number: {other:?}"),
        }
    }

    #[test]
    fn numbers_keep_their_text_at_any_length() {
        for text in
            ["0", "-0", "42", "-7", "18446744073709551615", "18446744073709551616", "1.0", "0.30000000000000004"]
        {
            assert_eq!(number_text(&parse(text)), text, "{text}");
        }
        let long = format!("1{}", "0".repeat(60));
        assert_eq!(number_text(&parse(&long)), long);
        assert_eq!(number_text(&parse("-123456789012345678901234567890.5")), "-123456789012345678901234567890.5");
        // serde_json writes exponents with a sign.
        assert_eq!(number_text(&parse("1E3")), "1e+3");
        assert_eq!(number_text(&parse("2.5e-3")), "2.5e-3");
    }

    #[test]
    fn numbers_inside_objects_and_arrays_are_numbers() {
        let json = parse(r#"{"a": [1.5, {"b": 1e400}], "c": 99999999999999999999}"#);
        let Json::Object(entries) = json else { panic!("not an object") };
        assert_eq!(entries[0].0, "a");
        let Json::Array(items) = &entries[0].1 else { panic!("not an array") };
        assert_eq!(number_text(&items[0]), "1.5");
        let Json::Object(inner) = &items[1] else { panic!("not an object") };
        assert_eq!(inner[0].0, "b");
        assert_eq!(number_text(&inner[0].1), "1e+400");
        assert_eq!(entries[1].0, "c");
        assert_eq!(number_text(&entries[1].1), "99999999999999999999");
    }

    #[test]
    fn objects_keep_key_order_and_repeats() {
        let json = parse(r#"{"z": 1, "a": {"y": null, "b": true}, "z": "again", "$numberLong": "5"}"#);
        let Json::Object(entries) = json else { panic!("not an object") };
        let keys: Vec<&str> = entries.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["z", "a", "z", "$numberLong"]);
        assert_eq!(entries[2].1, Json::String("again".into()));
        assert_eq!(entries[3].1, Json::String("5".into()));
        let Json::Object(inner) = &entries[1].1 else { panic!("not an object") };
        assert_eq!(inner, &vec![("y".to_string(), Json::Null), ("b".to_string(), Json::Bool(true))]);
        assert_eq!(parse("{}"), Json::Object(Vec::new()));
        assert_eq!(parse("[]"), Json::Array(Vec::new()));
    }

    #[test]
    fn the_number_key_is_learnt_from_serde_json_and_is_no_ordinary_key() {
        let key = number_key().expect("serde_json passes numbers as one-entry maps with arbitrary_precision");
        for ordinary in ["", "a", "$numberDecimal", "$serde_json", "number", "$"] {
            assert_ne!(key, ordinary);
        }
    }

    #[test]
    fn malformed_text_is_serde_jsons_error() {
        let e = Json::parse(r#"{"a": "#).unwrap_err();
        assert!(e.is_eof(), "{e}");
        let e = Json::parse(r#"{"a": 1} x"#).unwrap_err();
        assert!(e.is_syntax(), "{e}");
        assert_eq!(e.to_string(), "trailing characters at line 1 column 10");
    }

    #[test]
    fn got_describes_values_briefly() {
        assert_eq!(Got::from(&parse("null")).to_string(), "null");
        assert_eq!(Got::from(&parse("false")).to_string(), "false");
        assert_eq!(Got::from(&parse("-1.5")).to_string(), "-1.5");
        assert_eq!(Got::from(&parse(r#""a\"b""#)).to_string(), r#""a\"b""#);
        assert_eq!(Got::from(&parse("[1]")).to_string(), "an array");
        assert_eq!(Got::from(&parse("{}")).to_string(), "an object");
        let long = "7".repeat(50);
        assert_eq!(Got::from(&parse(&long)).to_string(), format!("{}...", "7".repeat(40)));
    }
}
