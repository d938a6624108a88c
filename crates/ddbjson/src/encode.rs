//! Items written straight to DynamoDB JSON bytes, without building a
//! `serde_json::Value` first: what a client puts in a request body many
//! thousand times a second. The bytes are the JSON that `item_to_json`
//! renders (the same values; members in the item's order).

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use dynaburst_model::{AttributeValue, Item};

/// Bytes per word of the escape scan.
const WORD: usize = 8;

/// Whether any byte of `w` must be escaped in a JSON string: a control
/// character, `"` or `\\` (the classic has-less-than and has-zero-byte
/// word tests: exact about whether there is one, not which).
fn word_needs_escape(w: u64) -> bool {
    const ONES: u64 = u64::from_ne_bytes([0x01; WORD]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; WORD]);
    let below_space = w.wrapping_sub(ONES * 0x20) & !w & HIGHS;
    let quote = w ^ (ONES * u64::from(b'"'));
    let backslash = w ^ (ONES * u64::from(b'\\'));
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    (below_space | zero(quote) | zero(backslash)) != 0
}

/// Appends `s` as a JSON string literal (quotes and escapes included).
/// Runs of eight bytes that need no escape are copied without looking at
/// each byte.
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        if let Some(word) = bytes.get(i..i + WORD) {
            let mut w = [0u8; WORD];
            w.copy_from_slice(word);
            if !word_needs_escape(u64::from_ne_bytes(w)) {
                i += WORD;
                continue;
            }
        }
        let b = bytes[i];
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0x00..=0x1f => b"",
            _ => {
                i += 1;
                continue;
            }
        };
        out.extend_from_slice(&bytes[start..i]);
        if escape.is_empty() {
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 0xf)]);
        } else {
            out.extend_from_slice(escape);
        }
        i += 1;
        start = i;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

fn write_list<T>(out: &mut Vec<u8>, items: &[T], mut each: impl FnMut(&mut Vec<u8>, &T)) {
    out.push(b'[');
    for (i, e) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        each(out, e);
    }
    out.push(b']');
}

fn write_binary(out: &mut Vec<u8>, b: &[u8]) {
    out.push(b'"');
    out.extend_from_slice(BASE64.encode(b).as_bytes());
    out.push(b'"');
}

/// Appends one attribute value (`{"S":"x"}`, `{"N":"1"}`, …).
pub fn write_value(out: &mut Vec<u8>, v: &AttributeValue) {
    match v {
        AttributeValue::S(s) => {
            out.extend_from_slice(b"{\"S\":");
            write_str(out, s);
        }
        AttributeValue::N(n) => {
            out.extend_from_slice(b"{\"N\":\"");
            // A number's canonical text needs no escaping.
            out.extend_from_slice(n.to_string().as_bytes());
            out.push(b'"');
        }
        AttributeValue::B(b) => {
            out.extend_from_slice(b"{\"B\":");
            write_binary(out, b);
        }
        AttributeValue::Bool(b) => out.extend_from_slice(if *b { b"{\"BOOL\":true" } else { b"{\"BOOL\":false" }),
        AttributeValue::Null => out.extend_from_slice(b"{\"NULL\":true"),
        AttributeValue::Ss(v) => {
            out.extend_from_slice(b"{\"SS\":");
            write_list(out, v, |out, s| write_str(out, s));
        }
        AttributeValue::Ns(v) => {
            out.extend_from_slice(b"{\"NS\":");
            write_list(out, v, |out, n| {
                out.push(b'"');
                out.extend_from_slice(n.to_string().as_bytes());
                out.push(b'"');
            });
        }
        AttributeValue::Bs(v) => {
            out.extend_from_slice(b"{\"BS\":");
            write_list(out, v, |out, b| write_binary(out, b));
        }
        AttributeValue::L(v) => {
            out.extend_from_slice(b"{\"L\":");
            write_list(out, v, write_value);
        }
        AttributeValue::M(m) => {
            out.extend_from_slice(b"{\"M\":");
            write_item(out, m);
        }
    }
    out.push(b'}');
}

/// Appends an item (a JSON object of attribute values).
pub fn write_item(out: &mut Vec<u8>, item: &Item) {
    out.push(b'{');
    for (i, (k, v)) in item.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_str(out, k);
        out.push(b':');
        write_value(out, v);
    }
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{item_to_json, parse_item};
    use dynaburst_model::Number;
    use serde_json::{json, Value};

    fn encoded(item: &Item) -> Value {
        let mut out = Vec::new();
        write_item(&mut out, item);
        serde_json::from_slice(&out).expect("the encoder writes valid JSON")
    }

    #[test]
    fn writes_what_item_to_json_renders_for_every_type() {
        let v = json!({"s": {"S": "x"}, "n": {"N": "-1.50"}, "b": {"B": "AAE="}, "t": {"BOOL": true},
            "f": {"BOOL": false}, "z": {"NULL": true}, "ss": {"SS": ["a", "b"]}, "ns": {"NS": ["1", "2e3"]},
            "bs": {"BS": ["AA==", "AQ=="]}, "l": {"L": [{"S": "y"}, {"L": []}, {"M": {}}]},
            "m": {"M": {"deep": {"M": {"k": {"N": "0"}}}, "e": {"L": []}}}, "empty": {"S": ""}});
        let item = parse_item(&v).expect("a valid item");
        assert_eq!(encoded(&item), item_to_json(&item));
        assert_eq!(parse_item(&encoded(&item)).expect("reads back"), item);
    }

    #[test]
    fn escapes_strings_and_names_as_json_does() {
        let text = "quote \" backslash \\ newline \n tab \t cr \r bell \u{7} nul \u{0} bs \u{8} ff \u{c} unit \u{1f} \
                    del \u{7f} é 日本 🦀 </script>";
        let mut item = Item::new();
        item.insert(text.to_string(), AttributeValue::S(text.to_string()));
        item.insert("ss".to_string(), AttributeValue::Ss(vec![text.to_string(), "\"".to_string()]));
        let back = encoded(&item);
        assert_eq!(back, item_to_json(&item));
        assert_eq!(back[text]["S"], Value::String(text.to_string()));
        let mut out = Vec::new();
        write_str(&mut out, "a\u{1}\"b");
        assert_eq!(out, br#""a\u0001\"b""#);
    }

    #[test]
    fn strings_match_serde_json_with_escapes_at_every_position() {
        let specials = ['"', '\\', '\n', '\u{0}', '\u{1f}', '\u{7f}', 'é', '🦀', ' ', '~'];
        for len in 0..24 {
            for at in 0..len.max(1) {
                for c in specials {
                    let text: String =
                        (0..len).map(|i| if i == at { c } else { char::from(b'a' + (i % 26) as u8) }).collect();
                    let mut out = Vec::new();
                    write_str(&mut out, &text);
                    let expected = serde_json::to_string(&text).expect("a string serializes");
                    assert_eq!(String::from_utf8(out).expect("UTF-8"), expected, "{text:?}");
                }
            }
        }
    }

    #[test]
    fn numbers_are_their_canonical_text() {
        let mut item = Item::new();
        for (k, n) in [("a", "100"), ("b", "0.000"), ("c", "-12.3400"), ("d", "1E+5")] {
            item.insert(k.to_string(), AttributeValue::N(Number::parse(n).expect("a number")));
        }
        let mut out = Vec::new();
        write_item(&mut out, &item);
        assert_eq!(
            String::from_utf8(out).expect("UTF-8"),
            r#"{"a":{"N":"100"},"b":{"N":"0"},"c":{"N":"-12.34"},"d":{"N":"100000"}}"#
        );
    }
}
