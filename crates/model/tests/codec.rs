//! Property tests of `dynaburst_model::codec`: every item survives the
//! compact form exactly (all ten types, nesting, empty strings, sets and
//! binaries, numbers at the ends of DynamoDB's range), key values' ordered
//! form orders as the values do, and no bytes make a decoder panic.

use std::cmp::Ordering;

use dynaburst_model::codec::{read_compact, write_compact, write_ordered, Reader};
use dynaburst_model::{AttributeValue, Item, KeyValue, Number};
use proptest::prelude::*;

/// Numbers across DynamoDB's range: 1 to 38 significant digits, exponents
/// from 1E-130 to 9.99…E+125, either sign, and zero.
fn number() -> impl Strategy<Value = Number> {
    prop_oneof![
        1 => Just(Number::zero()),
        1 => Just(Number::parse("9.9999999999999999999999999999999999999E+125").unwrap()),
        1 => Just(Number::parse("-1E-130").unwrap()),
        6 => (any::<bool>(), proptest::collection::vec(0u8..10, 1..=38), -130i32..=125).prop_filter_map(
            "out of range",
            |(negative, digits, exp)| {
                let text: String = digits.iter().map(|d| char::from(b'0' + d)).collect();
                let sign = if negative { "-" } else { "" };
                Number::parse(&format!("{sign}0.{text}E{exp}")).ok()
            },
        ),
        3 => any::<i64>().prop_map(Number::from_i64),
    ]
}

fn string() -> impl Strategy<Value = String> {
    prop_oneof![Just(String::new()), "[a-z]{1,8}", any::<String>(), Just("a\0b\0".to_string())]
}

fn binary() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![Just(Vec::new()), proptest::collection::vec(any::<u8>(), 0..40), Just(vec![0, 0, 255, 0])]
}

fn key_value() -> impl Strategy<Value = KeyValue> {
    prop_oneof![string().prop_map(KeyValue::S), number().prop_map(KeyValue::N), binary().prop_map(KeyValue::B)]
}

fn value() -> impl Strategy<Value = AttributeValue> {
    let leaf = prop_oneof![
        string().prop_map(AttributeValue::S),
        number().prop_map(AttributeValue::N),
        binary().prop_map(AttributeValue::B),
        any::<bool>().prop_map(AttributeValue::Bool),
        Just(AttributeValue::Null),
        proptest::collection::vec(string(), 1..5).prop_map(AttributeValue::Ss),
        proptest::collection::vec(number(), 1..5).prop_map(AttributeValue::Ns),
        proptest::collection::vec(binary(), 1..5).prop_map(AttributeValue::Bs),
    ];
    leaf.prop_recursive(6, 64, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(AttributeValue::L),
            proptest::collection::btree_map(string(), inner, 0..6).prop_map(AttributeValue::M),
        ]
    })
}

fn item() -> impl Strategy<Value = Item> {
    proptest::collection::btree_map(string(), value(), 0..12)
}

/// An item and the key values a store would pass with it: some of its own
/// scalar values (as a table's key attributes are) and some unrelated ones.
fn item_and_keys() -> impl Strategy<Value = (Item, Vec<KeyValue>)> {
    (item(), proptest::collection::vec(key_value(), 0..3), any::<u64>()).prop_map(|(item, mut keys, pick)| {
        let own: Vec<KeyValue> = item.values().filter_map(KeyValue::from_attribute).collect();
        if !own.is_empty() {
            keys.insert(0, own[pick as usize % own.len()].clone());
        }
        (item, keys)
    })
}

fn ordered(v: &KeyValue) -> Vec<u8> {
    let mut buf = Vec::new();
    write_ordered(&mut buf, v);
    buf
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2_000, ..ProptestConfig::default() })]

    #[test]
    fn the_compact_form_round_trips_exactly((item, keys) in item_and_keys()) {
        let keys: Vec<&KeyValue> = keys.iter().collect();
        let mut buf = Vec::new();
        write_compact(&mut buf, &item, &keys);
        prop_assert_eq!(read_compact(&buf, &keys).unwrap(), item.clone());
        // Key attributes are stored once: referring to the key is never
        // longer than the value.
        let mut plain = Vec::new();
        write_compact(&mut plain, &item, &[]);
        prop_assert!(buf.len() <= plain.len());
        prop_assert_eq!(read_compact(&plain, &[]).unwrap(), item);
    }

    #[test]
    fn ordered_key_values_order_as_the_values_and_round_trip(a in key_value(), b in key_value(), c in key_value()) {
        let (ea, eb) = (ordered(&a), ordered(&b));
        prop_assert_eq!(ea.cmp(&eb), a.cmp(&b));
        prop_assert_eq!(ea == eb, a == b);
        // Prefix-free: a pair orders as a tuple.
        let pair = |x: &KeyValue, y: &KeyValue| [ordered(x), ordered(y)].concat();
        prop_assert_eq!(pair(&a, &c).cmp(&pair(&b, &c)), (&a, &c).cmp(&(&b, &c)));
        prop_assert_eq!(pair(&c, &a).cmp(&pair(&c, &b)), (&c, &a).cmp(&(&c, &b)));
        let mut r: Reader<'_> = Reader::new(&ea, "key");
        prop_assert_eq!(r.ordered().unwrap(), a);
        prop_assert!(r.is_empty());
    }

    #[test]
    fn decoding_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200), k in key_value()) {
        let _ = read_compact(&bytes, &[&k]);
        let mut r: Reader<'_> = Reader::new(&bytes, "key");
        while r.ordered().is_ok() {}
    }

    #[test]
    fn damaged_encodings_fail_or_decode_without_panicking(
        (item, keys) in item_and_keys(),
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..4),
        cut in any::<usize>(),
    ) {
        let keys: Vec<&KeyValue> = keys.iter().collect();
        let mut compact = Vec::new();
        write_compact(&mut compact, &item, &keys);
        for (at, byte) in &flips {
            let n = compact.len();
            compact[at % n] = *byte;
        }
        let _ = read_compact(&compact, &keys);
        let _ = read_compact(&compact[..cut % compact.len()], &keys);
    }
}

#[test]
fn numbers_order_numerically_in_their_ordered_form() {
    let texts =
        ["-1E+125", "-12", "-1.5", "-1", "-0.5", "-1E-130", "0", "1E-130", "0.5", "0.55", "1", "1.5", "12", "1E+125"];
    let encoded: Vec<Vec<u8>> = texts.iter().map(|t| ordered(&KeyValue::N(Number::parse(t).unwrap()))).collect();
    for pair in encoded.windows(2) {
        assert_eq!(pair[0].cmp(&pair[1]), Ordering::Less, "{pair:?}");
    }
}
