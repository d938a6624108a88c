//! Document identity: which value keys a document, its canonical hash,
//! and the deterministic ObjectIds of documents without `_id`. It feeds the
//! pipeline's per-key blocking, so it changes for its own reasons.
//!
//! [`id_of`] finds a document's identity (`_id`, or another top-level
//! field), and [`identity_hash`] hashes it so that two values MongoDB would
//! treat as the same key hash alike: numbers of every type (Int32, Int64,
//! Double, Decimal128) hash by exact numeric value, so `1`, `NumberLong(1)`,
//! `1.0` and `NumberDecimal("1.00")` collide, and strings and symbols are
//! one class. Values of different classes never hash alike by
//! construction (`1` and `"1"` differ).
//!
//! A document without `_id` gets a deterministic ObjectId
//! ([`deterministic_object_id`], [`ensure_id`]) from a key of the input
//! ([`run_key`]) and the record's line, so loading the same file again, or
//! resuming a load, writes the same `_id` for the same line and never
//! duplicates a document.

use bson::oid::ObjectId;
use bson::{Bson, Decimal128, Document};
use xxhash_rust::xxh3::{xxh3_128, Xxh3Default};

/// The field MongoDB keys documents by.
pub const ID_FIELD: &str = "_id";
/// Bytes of a generated ObjectId that hold the line number (its low, last
/// bytes); the other 7 hold the run key.
pub const OBJECT_ID_LINE_BYTES: usize = 5;

/// The value identifying a document: its `_id`, or the top-level field
/// `id_field` names.
pub fn id_of<'a>(doc: &'a Document, id_field: Option<&str>) -> Option<&'a Bson> {
    doc.get(id_field.unwrap_or(ID_FIELD))
}

/// A stable 128-bit hash of an identity value (xxh3-128 of a canonical
/// encoding), equal for values MongoDB treats as the same key:
///
/// - numbers hash by exact value whatever their type: Int32 1, Int64 1,
///   Double 1.0 and Decimal128 `1.00` are one key; -0 is 0; every NaN is
///   one key; Double 0.5 equals Decimal128 `0.5` (a double whose exact
///   decimal expansion exceeds 38 digits equals no decimal and hashes by
///   its bits);
/// - String and Symbol are one class;
/// - documents and arrays hash their elements in order, recursively, with
///   the same rules;
/// - values of different classes (`1` and `"1"`) never share an encoding.
///
/// Deterministic: no per-process seed, so a value hashes alike in every
/// run. It keys work in flight; nothing stores it.
pub fn identity_hash(value: &Bson) -> u128 {
    let mut out = Vec::with_capacity(32);
    canonical(value, &mut out);
    xxh3_128(&out)
}

/// Type classes of the canonical encoding (after MongoDB's canonical
/// types: all numbers one class, String and Symbol one class).
mod class {
    pub const MIN_KEY: u8 = 0x01;
    pub const UNDEFINED: u8 = 0x02;
    pub const NULL: u8 = 0x03;
    pub const NUMBER: u8 = 0x04;
    pub const STRING: u8 = 0x05;
    pub const DOCUMENT: u8 = 0x06;
    pub const ARRAY: u8 = 0x07;
    pub const BINARY: u8 = 0x08;
    pub const OBJECT_ID: u8 = 0x09;
    pub const BOOLEAN: u8 = 0x0a;
    pub const DATE: u8 = 0x0b;
    pub const TIMESTAMP: u8 = 0x0c;
    pub const REGEX: u8 = 0x0d;
    pub const DB_POINTER: u8 = 0x0e;
    pub const CODE: u8 = 0x0f;
    pub const CODE_WITH_SCOPE: u8 = 0x10;
    pub const MAX_KEY: u8 = 0x11;
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    out.extend_from_slice(bytes);
}

fn canonical_document(doc: &Document, out: &mut Vec<u8>) {
    out.extend_from_slice(&(doc.len() as u64).to_le_bytes());
    for (key, value) in doc {
        put_bytes(out, key.as_bytes());
        canonical(value, out);
    }
}

fn canonical(value: &Bson, out: &mut Vec<u8>) {
    match value {
        Bson::Int32(v) => numeric_key(&integer_key(i128::from(*v)), out),
        Bson::Int64(v) => numeric_key(&integer_key(i128::from(*v)), out),
        Bson::Double(v) => numeric_key(&double_key(*v), out),
        Bson::Decimal128(v) => numeric_key(&decimal_key(v), out),
        Bson::String(s) | Bson::Symbol(s) => {
            out.push(class::STRING);
            put_bytes(out, s.as_bytes());
        }
        Bson::Document(doc) => {
            out.push(class::DOCUMENT);
            canonical_document(doc, out);
        }
        Bson::Array(items) => {
            out.push(class::ARRAY);
            out.extend_from_slice(&(items.len() as u64).to_le_bytes());
            for item in items {
                canonical(item, out);
            }
        }
        Bson::Binary(b) => {
            out.push(class::BINARY);
            out.push(u8::from(b.subtype));
            put_bytes(out, &b.bytes);
        }
        Bson::ObjectId(oid) => {
            out.push(class::OBJECT_ID);
            out.extend_from_slice(&oid.bytes());
        }
        Bson::Boolean(b) => out.extend_from_slice(&[class::BOOLEAN, u8::from(*b)]),
        Bson::DateTime(dt) => {
            out.push(class::DATE);
            out.extend_from_slice(&dt.timestamp_millis().to_le_bytes());
        }
        Bson::Timestamp(ts) => {
            out.push(class::TIMESTAMP);
            out.extend_from_slice(&ts.time.to_le_bytes());
            out.extend_from_slice(&ts.increment.to_le_bytes());
        }
        Bson::RegularExpression(re) => {
            out.push(class::REGEX);
            put_bytes(out, re.pattern.as_str().as_bytes());
            put_bytes(out, re.options.as_str().as_bytes());
        }
        Bson::JavaScriptCode(code) => {
            out.push(class::CODE);
            put_bytes(out, code.as_bytes());
        }
        Bson::JavaScriptCodeWithScope(c) => {
            out.push(class::CODE_WITH_SCOPE);
            put_bytes(out, c.code.as_bytes());
            canonical_document(&c.scope, out);
        }
        Bson::DbPointer(_) => {
            // Its parts are private to bson: hash its BSON encoding.
            out.push(class::DB_POINTER);
            let mut wrapper = Document::new();
            wrapper.insert("", value.clone());
            put_bytes(out, &wrapper.to_vec().unwrap_or_default());
        }
        Bson::Null => out.push(class::NULL),
        Bson::Undefined => out.push(class::UNDEFINED),
        Bson::MinKey => out.push(class::MIN_KEY),
        Bson::MaxKey => out.push(class::MAX_KEY),
    }
}

/// A number's exact value in one form for every numeric type.
#[derive(Debug, PartialEq)]
enum NumericKey {
    NaN,
    Infinity {
        negative: bool,
    },
    Zero,
    /// `(-1)^negative × coefficient × 10^exponent`; the coefficient's
    /// decimal digits have no leading or trailing zeros.
    Finite {
        negative: bool,
        coefficient: String,
        exponent: i64,
    },
    /// A value no other type can equal, by its bits (kind 0: a double
    /// with a long exact expansion; kind 1: an unreadable decimal).
    Bits {
        kind: u8,
        bits: u128,
    },
}

fn numeric_key(key: &NumericKey, out: &mut Vec<u8>) {
    out.push(class::NUMBER);
    match key {
        NumericKey::NaN => out.push(0),
        NumericKey::Infinity { negative } => out.extend_from_slice(&[1, u8::from(*negative)]),
        NumericKey::Zero => out.push(2),
        NumericKey::Finite { negative, coefficient, exponent } => {
            out.extend_from_slice(&[3, u8::from(*negative)]);
            out.extend_from_slice(&exponent.to_le_bytes());
            put_bytes(out, coefficient.as_bytes());
        }
        NumericKey::Bits { kind, bits } => {
            out.extend_from_slice(&[4, *kind]);
            out.extend_from_slice(&bits.to_le_bytes());
        }
    }
}

/// `±digits × 10^exponent` normalized: leading and trailing zeros removed.
fn digits_key(negative: bool, digits: &str, exponent: i64) -> NumericKey {
    let digits = digits.trim_start_matches('0');
    let coefficient = digits.trim_end_matches('0');
    if coefficient.is_empty() {
        return NumericKey::Zero;
    }
    let exponent = exponent + (digits.len() - coefficient.len()) as i64;
    NumericKey::Finite { negative, coefficient: coefficient.to_string(), exponent }
}

fn integer_key(v: i128) -> NumericKey {
    digits_key(v < 0, &v.unsigned_abs().to_string(), 0)
}

fn double_key(x: f64) -> NumericKey {
    if x.is_nan() {
        return NumericKey::NaN;
    }
    if x.is_infinite() {
        return NumericKey::Infinity { negative: x < 0.0 };
    }
    if x == 0.0 {
        return NumericKey::Zero;
    }
    const MANTISSA_BITS: u32 = 52;
    const EXPONENT_BIAS: i64 = 1075; // 1023 + 52: the mantissa read as an integer
    let negative = x < 0.0;
    let bits = x.abs().to_bits();
    let biased = (bits >> MANTISSA_BITS) as i64;
    let fraction = bits & ((1u64 << MANTISSA_BITS) - 1);
    // x = mantissa × 2^exponent exactly.
    let (mantissa, exponent) = if biased == 0 {
        (fraction, 1 - EXPONENT_BIAS)
    } else {
        (fraction | (1u64 << MANTISSA_BITS), biased - EXPONENT_BIAS)
    };
    let shift = mantissa.trailing_zeros();
    let (mantissa, exponent) = (mantissa >> shift, exponent + i64::from(shift));
    if exponent >= 0 {
        // An integer; fixed-point formatting prints it exactly.
        return digits_key(negative, &format!("{:.0}", x.abs()), 0);
    }
    // mantissa / 2^k = mantissa × 5^k / 10^k, exactly.
    let k = exponent.unsigned_abs();
    let exact =
        u32::try_from(k).ok().and_then(|k| 5u128.checked_pow(k)).and_then(|p| u128::from(mantissa).checked_mul(p));
    match exact {
        Some(coefficient) => digits_key(negative, &coefficient.to_string(), -(k as i64)),
        None => NumericKey::Bits { kind: 0, bits: u128::from(x.to_bits()) },
    }
}

fn decimal_key(d: &Decimal128) -> NumericKey {
    let text = d.to_string();
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.as_str()),
    };
    match body {
        "NaN" => return NumericKey::NaN,
        "Infinity" => return NumericKey::Infinity { negative },
        _ => {}
    }
    let (mantissa, exponent) = match body.split_once(['E', 'e']) {
        Some((m, e)) => (m, e.parse::<i64>().ok()),
        None => (body, Some(0)),
    };
    let (int, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    match exponent {
        Some(e) if (int.bytes().chain(fraction.bytes())).all(|b| b.is_ascii_digit()) => {
            digits_key(negative, &format!("{int}{fraction}"), e - fraction.len() as i64)
        }
        _ => NumericKey::Bits { kind: 1, bits: u128::from_le_bytes(d.bytes()) },
    }
}

// ---------------------------------------------------------------------------
// Generated ids
// ---------------------------------------------------------------------------

/// A 64-bit key of one input, from parts that identify it (the caller
/// passes its path, size, modification time and target). Each part is
/// length-prefixed, so `["ab", "c"]` and `["a", "bc"]` differ.
pub fn run_key(parts: &[&[u8]]) -> u64 {
    let mut hasher = Xxh3Default::new();
    for part in parts {
        hasher.update(&(part.len() as u64).to_le_bytes());
        hasher.update(part);
    }
    hasher.digest()
}

/// The `_id` of the record at `line` of the input keyed `run_key`: 7 bytes
/// of the run key, then the line number big-endian in the last
/// [`OBJECT_ID_LINE_BYTES`] bytes, so the ids of one input sort in input
/// order. Lines past 2^40 fold their high bits into the key part: the ids
/// of one input stay distinct. The first 4 bytes are not a creation time.
pub fn deterministic_object_id(run_key: u64, line: u64) -> ObjectId {
    const LINE_BITS: u32 = 8 * OBJECT_ID_LINE_BYTES as u32;
    let low = line & ((1u64 << LINE_BITS) - 1);
    let high = line >> LINE_BITS; // below 2^24: fits the 56-bit key part
    let key = (run_key >> 8) ^ high;
    let mut bytes = [0u8; 12];
    bytes[..12 - OBJECT_ID_LINE_BYTES].copy_from_slice(&key.to_be_bytes()[1..]);
    bytes[12 - OBJECT_ID_LINE_BYTES..].copy_from_slice(&low.to_be_bytes()[8 - OBJECT_ID_LINE_BYTES..]);
    ObjectId::from_bytes(bytes)
}

/// The document's `_id`, inserting a [`deterministic_object_id`] as its
/// first field when it has none.
pub fn ensure_id(doc: &mut Document, run_key: u64, line: u64) -> &Bson {
    let generated = || Bson::ObjectId(deterministic_object_id(run_key, line));
    if !doc.contains_key(ID_FIELD) {
        let mut with_id = Document::new();
        with_id.insert(ID_FIELD, generated());
        for (key, value) in std::mem::take(doc) {
            with_id.insert(key, value);
        }
        *doc = with_id;
    }
    // `_id` is present now; `entry` reaches it without a panicking path.
    doc.entry(ID_FIELD).or_insert_with(generated)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::test_support::*;
    // --- identity --------------------------------------------------------

    #[test]
    fn id_of_finds_id_or_the_named_field() {
        let d = doc(r#"{"sku": "A-1", "_id": 7}"#);
        assert_eq!(id_of(&d, None), Some(&Bson::Int32(7)));
        assert_eq!(id_of(&d, Some("sku")), Some(&Bson::String("A-1".into())));
        assert_eq!(id_of(&d, Some("missing")), None);
        assert_eq!(id_of(&doc(r#"{"a": 1}"#), None), None);
    }

    #[test]
    fn identity_hash_equates_numerically_equal_numbers() {
        let one = identity_hash(&Bson::Int32(1));
        assert_eq!(one, identity_hash(&Bson::Int64(1)));
        assert_eq!(one, identity_hash(&Bson::Double(1.0)));
        assert_eq!(one, identity_hash(&Bson::Decimal128(decimal("1"))));
        assert_eq!(one, identity_hash(&Bson::Decimal128(decimal("1.00"))));
        assert_eq!(one, identity_hash(&Bson::Decimal128(decimal("0.1E+1"))));
        assert_ne!(one, identity_hash(&Bson::String("1".into())));
        assert_ne!(one, identity_hash(&Bson::Int32(2)));
        assert_ne!(one, identity_hash(&Bson::Int32(-1)));
        assert_ne!(one, identity_hash(&Bson::Double(1.5)));

        let zero = identity_hash(&Bson::Int32(0));
        assert_eq!(zero, identity_hash(&Bson::Double(-0.0)));
        assert_eq!(zero, identity_hash(&Bson::Decimal128(decimal("-0.000"))));

        assert_eq!(identity_hash(&Bson::Int64(1 << 53)), identity_hash(&Bson::Double(9007199254740992.0)));
        assert_eq!(identity_hash(&Bson::Int64(-3_000_000_000)), identity_hash(&Bson::Double(-3e9)));
        assert_ne!(identity_hash(&Bson::Int64(i64::MAX)), identity_hash(&Bson::Double(i64::MAX as f64)));
        // Doubles hash by exact value.
        assert_eq!(identity_hash(&Bson::Double(0.5)), identity_hash(&Bson::Decimal128(decimal("0.50"))));
        assert_ne!(identity_hash(&Bson::Double(0.1)), identity_hash(&Bson::Decimal128(decimal("0.1"))));
        assert_eq!(identity_hash(&Bson::Double(1e22)), identity_hash(&Bson::Decimal128(decimal("1E+22"))));
        assert_ne!(identity_hash(&Bson::Double(1e40)), identity_hash(&Bson::Decimal128(decimal("1E+40"))));
        let two_70 = 2f64.powi(70);
        assert_eq!(
            identity_hash(&Bson::Double(two_70)),
            identity_hash(&Bson::Decimal128(decimal("1180591620717411303424")))
        );
        assert_eq!(identity_hash(&Bson::Double(f64::MIN_POSITIVE)), identity_hash(&Bson::Double(f64::MIN_POSITIVE)));
        assert_ne!(identity_hash(&Bson::Double(f64::MIN_POSITIVE)), identity_hash(&Bson::Double(-f64::MIN_POSITIVE)));
        // Special values.
        assert_eq!(identity_hash(&Bson::Double(f64::NAN)), identity_hash(&Bson::Decimal128(decimal("NaN"))));
        assert_eq!(identity_hash(&Bson::Double(f64::INFINITY)), identity_hash(&Bson::Decimal128(decimal("Infinity"))));
        assert_ne!(identity_hash(&Bson::Double(f64::INFINITY)), identity_hash(&Bson::Double(f64::NEG_INFINITY)));
    }

    #[test]
    fn double_key_is_exact() {
        assert_eq!(double_key(0.375), NumericKey::Finite { negative: false, coefficient: "375".into(), exponent: -3 });
        assert_eq!(double_key(-1200.0), NumericKey::Finite { negative: true, coefficient: "12".into(), exponent: 2 });
        // 2^-30 is exactly 9.31322574615478515625E-10.
        assert_eq!(
            double_key(2f64.powi(-30)),
            NumericKey::Finite { negative: false, coefficient: "931322574615478515625".into(), exponent: -30 }
        );
        // 0.1 is 0.1000000000000000055511151231257827021181583404541015625:
        // 55 digits, past u128 and past any Decimal128.
        assert_eq!(double_key(0.1), NumericKey::Bits { kind: 0, bits: u128::from(0.1f64.to_bits()) });
        // Expansions past u128 fall back to the bits.
        assert_eq!(
            double_key(f64::MIN_POSITIVE),
            NumericKey::Bits { kind: 0, bits: u128::from(f64::MIN_POSITIVE.to_bits()) }
        );
    }

    #[test]
    fn identity_hash_of_other_types() {
        let h = |json: &str| identity_hash(&value(json));
        assert_eq!(h(r#""abc""#), identity_hash(&Bson::Symbol("abc".into())));
        assert_ne!(h(r#""abc""#), h(r#""abd""#));
        // Embedded documents: numbers by value, fields in order.
        assert_eq!(h(r#"{"a": 1, "b": "x"}"#), h(r#"{"a": 1.0, "b": "x"}"#));
        assert_ne!(h(r#"{"a": 1, "b": "x"}"#), h(r#"{"b": "x", "a": 1}"#));
        assert_eq!(h("[1, 2]"), identity_hash(&Bson::Array(vec![Bson::Int64(1), Bson::Double(2.0)])));
        assert_ne!(h("[1, 2]"), h("[[1], 2]"));
        assert_ne!(h(r#"["ab", "c"]"#), h(r#"["a", "bc"]"#));
        let oid = r#"{"$oid": "65f1a2b3c4d5e6f708192a3b"}"#;
        assert_eq!(h(oid), h(oid));
        assert_ne!(h(oid), h(r#"{"$oid": "65f1a2b3c4d5e6f708192a3c"}"#));
        assert_ne!(
            h(r#"{"$binary": {"base64": "AQID", "subType": "00"}}"#),
            h(r#"{"$binary": {"base64": "AQID", "subType": "05"}}"#)
        );
        assert_ne!(h("null"), h(r#"{"$minKey": 1}"#));
        assert_ne!(h("true"), h("1"));
        assert_ne!(h(r#"{"$date": 0}"#), h("0"));
    }

    // --- generated ids ---------------------------------------------------

    #[test]
    fn run_key_separates_parts() {
        let k = run_key(&[b"data.jsonl", b"1024", b"mongodb://h/db.c"]);
        assert_eq!(k, run_key(&[b"data.jsonl", b"1024", b"mongodb://h/db.c"]));
        assert_ne!(k, run_key(&[b"data.jsonl", b"1025", b"mongodb://h/db.c"]));
        assert_ne!(run_key(&[b"ab", b"c"]), run_key(&[b"a", b"bc"]));
        assert_ne!(run_key(&[b"a", b"b"]), run_key(&[b"b", b"a"]));
    }

    #[test]
    fn deterministic_object_ids() {
        let key = run_key(&[b"input.jsonl"]);
        let id = deterministic_object_id(key, 1);
        assert_eq!(id, deterministic_object_id(key, 1));
        assert_ne!(id, deterministic_object_id(key, 2));
        assert_ne!(id, deterministic_object_id(run_key(&[b"other.jsonl"]), 1));
        // The line sits big-endian in the last 5 bytes; the key fills the rest.
        assert_eq!(deterministic_object_id(key, 0x01_0203_0405).bytes()[7..], [1, 2, 3, 4, 5]);
        assert_eq!(deterministic_object_id(key, 256).bytes()[..7], id.bytes()[..7]);
        assert_eq!(id.bytes()[..7], key.to_be_bytes()[..7]);
    }

    #[test]
    fn deterministic_object_ids_sort_in_line_order() {
        let key = run_key(&[b"input.jsonl"]);
        let lines = [1u64, 2, 9, 10, 255, 256, 65_536, 1 << 32, (1 << 40) - 1];
        let ids: Vec<ObjectId> = lines.iter().map(|&line| deterministic_object_id(key, line)).collect();
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(ids, sorted);
        // Past 2^40 lines ids stay distinct, though no longer ordered.
        assert_ne!(deterministic_object_id(key, 5), deterministic_object_id(key, 5 + (1 << 40)));
        assert_ne!(deterministic_object_id(key, 1 << 40), deterministic_object_id(key, 0));
    }

    #[test]
    fn ensure_id_inserts_a_generated_id_first() {
        let key = run_key(&[b"input.jsonl"]);
        let mut d = doc(r#"{"b": 1, "a": 2}"#);
        let id = ensure_id(&mut d, key, 17).clone();
        assert_eq!(id, Bson::ObjectId(deterministic_object_id(key, 17)));
        assert_eq!(d.keys().collect::<Vec<_>>(), ["_id", "b", "a"]);
        // Again: nothing changes.
        assert_eq!(ensure_id(&mut d, key, 99), &id);
        assert_eq!(d.keys().collect::<Vec<_>>(), ["_id", "b", "a"]);
    }

    #[test]
    fn ensure_id_keeps_an_existing_id_in_place() {
        let mut d = doc(r#"{"b": 1, "_id": "mine"}"#);
        assert_eq!(ensure_id(&mut d, 5, 1), &Bson::String("mine".into()));
        assert_eq!(d.keys().collect::<Vec<_>>(), ["b", "_id"]);
    }
}
