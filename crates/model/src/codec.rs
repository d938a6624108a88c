//! Binary encodings of items and key values for the in-memory stores: the
//! field reader ([`Reader`]: LEB128 integers and length-prefixed bytes),
//! key values in order-preserving bytes ([`write_ordered`]) and items in a
//! compact form ([`write_compact`], [`read_compact`]). Decoding never
//! panics: bytes that do not decode are a [`CodecError`].

use std::fmt;
use std::marker::PhantomData;

use crate::number::Number;
use crate::value::{AttributeValue, Item, KeyValue};

/// Deepest nesting of lists and maps decoded (DynamoDB allows 32).
pub const MAX_DECODE_DEPTH: usize = 64;

/// Bytes that do not decode as what they were read as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodecError {
    /// What was being read ("item", "key", ...).
    pub what: &'static str,
}

impl fmt::Display for CodecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "stored {} is corrupt", self.what)
    }
}

impl std::error::Error for CodecError {}

/// Appends `v` in LEB128.
pub fn write_uint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// Reads fields back; every read fails with [`Reader::corrupt`] past the
/// end. `E` is the error a caller's decoding returns (anything a
/// [`CodecError`] converts into).
pub struct Reader<'a, E = CodecError> {
    buf: &'a [u8],
    what: &'static str,
    error: PhantomData<fn() -> E>,
}

impl<'a, E: From<CodecError>> Reader<'a, E> {
    pub fn new(buf: &'a [u8], what: &'static str) -> Reader<'a, E> {
        Reader { buf, what, error: PhantomData }
    }

    /// The error of these bytes not decoding.
    pub fn corrupt(&self) -> E {
        E::from(CodecError { what: self.what })
    }

    pub fn u8(&mut self) -> Result<u8, E> {
        let (&first, rest) = self.buf.split_first().ok_or_else(|| self.corrupt())?;
        self.buf = rest;
        Ok(first)
    }

    pub fn uint(&mut self) -> Result<u64, E> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(self.corrupt())
    }

    /// A length (or count of elements that take at least a byte each): never
    /// more than what is left.
    pub fn len(&mut self) -> Result<usize, E> {
        let n = self.uint()?;
        usize::try_from(n).ok().filter(|n| *n <= self.buf.len()).ok_or_else(|| self.corrupt())
    }

    pub fn bytes(&mut self) -> Result<&'a [u8], E> {
        let n = self.len()?;
        let (b, rest) = self.buf.split_at(n);
        self.buf = rest;
        Ok(b)
    }

    pub fn string(&mut self) -> Result<String, E> {
        let b = self.bytes()?;
        String::from_utf8(b.to_vec()).map_err(|_| self.corrupt())
    }

    /// True when every byte was read.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Fails unless every byte was read.
    pub fn end(&self) -> Result<(), E> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(self.corrupt())
        }
    }
}

// ---- key values in order (the in-memory stores' keys) ----

/// Ordered forms' type bytes, in `KeyValue`'s order of types (S < N < B).
const O_S: u8 = 1;
const O_N: u8 = 2;
const O_B: u8 = 3;
/// A number's sign byte in its ordered form.
const O_NEGATIVE: u8 = 0;
const O_ZERO: u8 = 1;
const O_POSITIVE: u8 = 2;
/// Bytes of a string or binary in its ordered form: a zero byte is
/// escaped as `0x00 0xFF`, and `0x00 0x01` ends the value.
const ESCAPE: u8 = 0xff;
const END: u8 = 0x01;

/// Appends `v` in its ordered form: the bytes of two key values compare as
/// the values do (`KeyValue`'s order: numbers numerically, strings and
/// binaries by unsigned bytes, then by type), and no value's bytes are a
/// prefix of another's, so a sequence of them orders as a tuple.
pub fn write_ordered(buf: &mut Vec<u8>, v: &KeyValue) {
    match v {
        KeyValue::S(s) => {
            buf.push(O_S);
            write_escaped(buf, s.as_bytes());
        }
        KeyValue::N(n) => {
            buf.push(O_N);
            write_ordered_number(buf, n);
        }
        KeyValue::B(b) => {
            buf.push(O_B);
            write_escaped(buf, b);
        }
    }
}

fn write_escaped(buf: &mut Vec<u8>, bytes: &[u8]) {
    for part in bytes.split(|&b| b == 0).enumerate() {
        if part.0 > 0 {
            buf.extend_from_slice(&[0, ESCAPE]);
        }
        buf.extend_from_slice(part.1);
    }
    buf.extend_from_slice(&[0, END]);
}

/// A number's sign byte and packed magnitude, complemented when negative
/// so that more negative numbers compare lower.
fn write_ordered_number(buf: &mut Vec<u8>, n: &Number) {
    if n.is_zero() {
        buf.push(O_ZERO);
    } else if n.is_negative() {
        buf.push(O_NEGATIVE);
        let start = buf.len();
        n.write_magnitude(buf);
        buf[start..].iter_mut().for_each(|b| *b = !*b);
    } else {
        buf.push(O_POSITIVE);
        n.write_magnitude(buf);
    }
}

impl<'a, E: From<CodecError>> Reader<'a, E> {
    /// A key value in its ordered form ([`write_ordered`]).
    pub fn ordered(&mut self) -> Result<KeyValue, E> {
        Ok(match self.u8()? {
            O_S => KeyValue::S(String::from_utf8(self.escaped()?).map_err(|_| self.corrupt())?),
            O_N => KeyValue::N(self.ordered_number()?),
            O_B => KeyValue::B(self.escaped()?),
            _ => return Err(self.corrupt()),
        })
    }

    fn escaped(&mut self) -> Result<Vec<u8>, E> {
        let mut out = Vec::new();
        loop {
            let at = self.buf.iter().position(|&b| b == 0).ok_or_else(|| self.corrupt())?;
            out.extend_from_slice(&self.buf[..at]);
            let marker = self.buf.get(at + 1).copied();
            self.buf = self.buf.get(at + 2..).unwrap_or_default();
            match marker {
                Some(END) => return Ok(out),
                Some(ESCAPE) => out.push(0),
                _ => return Err(self.corrupt()),
            }
        }
    }

    fn ordered_number(&mut self) -> Result<Number, E> {
        let negative = match self.u8()? {
            O_ZERO => return Ok(Number::zero()),
            O_NEGATIVE => true,
            O_POSITIVE => false,
            _ => return Err(self.corrupt()),
        };
        let (n, used) = Number::read_magnitude(self.buf, negative, negative).ok_or_else(|| self.corrupt())?;
        self.buf = self.buf.get(used..).unwrap_or_default();
        Ok(n)
    }

    /// The bytes not read yet.
    pub fn rest(&self) -> &'a [u8] {
        self.buf
    }

    /// `n` raw bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], E> {
        let (b, rest) = self.buf.split_at_checked(n).ok_or_else(|| self.corrupt())?;
        self.buf = rest;
        Ok(b)
    }
}

// ---- items (the in-memory form) ----

// Type bytes of the in-memory form. A value equal to one of the key values
// the store passes is written as `C_KEY` and that value's position: the
// store keeps the key beside the item, so key attributes are not stored
// twice.
const C_S: u8 = 0;
const C_N: u8 = 1;
const C_B: u8 = 2;
const C_FALSE: u8 = 3;
const C_TRUE: u8 = 4;
const C_NULL: u8 = 5;
const C_SS: u8 = 6;
const C_NS: u8 = 7;
const C_BS: u8 = 8;
const C_L: u8 = 9;
const C_M: u8 = 10;
const C_KEY: u8 = 11;

/// Appends `item` in the in-memory form: attribute count, then each name
/// and value; strings and binaries length-prefixed, numbers packed (about
/// half a byte a digit), booleans and nulls one byte, and a top-level value
/// equal to one of `keys` (at most 256 are looked at) as a reference to it.
pub fn write_compact(buf: &mut Vec<u8>, item: &Item, keys: &[&KeyValue]) {
    let keys = &keys[..keys.len().min(256)];
    write_uint(buf, item.len() as u64);
    for (name, value) in item {
        write_uint(buf, name.len() as u64);
        buf.extend_from_slice(name.as_bytes());
        match keys.iter().position(|k| key_matches(k, value)) {
            Some(i) => buf.extend_from_slice(&[C_KEY, i as u8]),
            None => write_compact_value(buf, value),
        }
    }
}

fn key_matches(key: &KeyValue, value: &AttributeValue) -> bool {
    match (key, value) {
        (KeyValue::S(k), AttributeValue::S(v)) => k == v,
        (KeyValue::N(k), AttributeValue::N(v)) => k == v,
        (KeyValue::B(k), AttributeValue::B(v)) => k == v,
        _ => false,
    }
}

fn write_compact_bytes(buf: &mut Vec<u8>, b: &[u8]) {
    write_uint(buf, b.len() as u64);
    buf.extend_from_slice(b);
}

fn write_compact_value(buf: &mut Vec<u8>, v: &AttributeValue) {
    match v {
        AttributeValue::S(s) => {
            buf.push(C_S);
            write_compact_bytes(buf, s.as_bytes());
        }
        AttributeValue::N(n) => {
            buf.push(C_N);
            write_ordered_number(buf, n);
        }
        AttributeValue::B(b) => {
            buf.push(C_B);
            write_compact_bytes(buf, b);
        }
        AttributeValue::Bool(b) => buf.push(if *b { C_TRUE } else { C_FALSE }),
        AttributeValue::Null => buf.push(C_NULL),
        AttributeValue::Ss(ss) => {
            buf.push(C_SS);
            write_uint(buf, ss.len() as u64);
            ss.iter().for_each(|s| write_compact_bytes(buf, s.as_bytes()));
        }
        AttributeValue::Ns(ns) => {
            buf.push(C_NS);
            write_uint(buf, ns.len() as u64);
            ns.iter().for_each(|n| write_ordered_number(buf, n));
        }
        AttributeValue::Bs(bs) => {
            buf.push(C_BS);
            write_uint(buf, bs.len() as u64);
            bs.iter().for_each(|b| write_compact_bytes(buf, b));
        }
        AttributeValue::L(l) => {
            buf.push(C_L);
            write_uint(buf, l.len() as u64);
            l.iter().for_each(|v| write_compact_value(buf, v));
        }
        AttributeValue::M(m) => {
            buf.push(C_M);
            write_compact(buf, m, &[]);
        }
    }
}

/// An item from its in-memory form ([`write_compact`]), with the `keys` it
/// was written with; fails unless `bytes` are exactly one item.
pub fn read_compact(bytes: &[u8], keys: &[&KeyValue]) -> Result<Item, CodecError> {
    let mut r = Reader::new(bytes, "item");
    let item = read_compact_map(&mut r, keys, 0)?;
    r.end()?;
    Ok(item)
}

fn read_compact_map(r: &mut Reader<'_>, keys: &[&KeyValue], depth: usize) -> Result<Item, CodecError> {
    if depth > MAX_DECODE_DEPTH {
        return Err(r.corrupt());
    }
    let mut m = Item::new();
    for _ in 0..r.len()? {
        let name = r.string()?;
        let value = match r.rest().first() {
            Some(&C_KEY) => {
                r.u8()?;
                let i = usize::from(r.u8()?);
                keys.get(i).ok_or_else(|| r.corrupt())?.to_attribute()
            }
            _ => read_compact_value(r, depth)?,
        };
        m.insert(name, value);
    }
    Ok(m)
}

fn read_compact_value(r: &mut Reader<'_>, depth: usize) -> Result<AttributeValue, CodecError> {
    if depth > MAX_DECODE_DEPTH {
        return Err(r.corrupt());
    }
    Ok(match r.u8()? {
        C_S => AttributeValue::S(r.string()?),
        C_N => AttributeValue::N(r.ordered_number()?),
        C_B => AttributeValue::B(r.bytes()?.to_vec()),
        C_FALSE => AttributeValue::Bool(false),
        C_TRUE => AttributeValue::Bool(true),
        C_NULL => AttributeValue::Null,
        C_SS => AttributeValue::Ss((0..r.len()?).map(|_| r.string()).collect::<Result<_, _>>()?),
        C_NS => AttributeValue::Ns((0..r.len()?).map(|_| r.ordered_number()).collect::<Result<_, _>>()?),
        C_BS => AttributeValue::Bs((0..r.len()?).map(|_| r.bytes().map(<[u8]>::to_vec)).collect::<Result<_, _>>()?),
        C_L => AttributeValue::L((0..r.len()?).map(|_| read_compact_value(r, depth + 1)).collect::<Result<_, _>>()?),
        C_M => AttributeValue::M(read_compact_map(r, &[], depth + 1)?),
        _ => return Err(r.corrupt()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A nested item of several types (tests/codec.rs draws every type).
    fn nested_item() -> Item {
        let mut inner = BTreeMap::new();
        inner.insert("k".to_string(), AttributeValue::L(vec![AttributeValue::Null, AttributeValue::Bool(true)]));
        let mut item = Item::new();
        item.insert("id".into(), AttributeValue::S("x".into()));
        item.insert("n".into(), AttributeValue::N(Number::from_i64(-1234)));
        item.insert("set".into(), AttributeValue::Bs(vec![vec![0], vec![]]));
        item.insert("map".into(), AttributeValue::M(inner));
        item
    }

    fn compact(item: &Item, keys: &[&KeyValue]) -> Vec<u8> {
        let mut buf = Vec::new();
        write_compact(&mut buf, item, keys);
        buf
    }

    #[test]
    fn items_of_every_type_round_trip() {
        let item = nested_item();
        let key = KeyValue::S("x".into());
        assert_eq!(read_compact(&compact(&item, &[&key]), &[&key]).unwrap(), item);
        assert_eq!(read_compact(&compact(&Item::new(), &[]), &[]).unwrap(), Item::new());
    }

    #[test]
    fn truncated_or_padded_items_are_corrupt_not_a_panic() {
        let item = compact(&nested_item(), &[]);
        for cut in 0..item.len() {
            assert!(read_compact(&item[..cut], &[]).is_err(), "cut at {cut}");
        }
        let mut padded = item.clone();
        padded.push(0);
        assert_eq!(read_compact(&padded, &[]).unwrap_err(), CodecError { what: "item" });
        // A length larger than the input, runaway nesting, a key reference
        // to no key.
        assert!(read_compact(&[0xff, 0xff, 0xff, 0xff, 0x0f], &[]).is_err());
        let mut deep = vec![1, 0, C_L];
        for _ in 0..100 {
            deep.extend_from_slice(&[1, C_L]);
        }
        assert_eq!(read_compact(&deep, &[]).unwrap_err(), CodecError { what: "item" });
        assert!(read_compact(&[1, 1, b'k', C_KEY, 0], &[]).is_err());
    }
}
