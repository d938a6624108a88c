//! What the fuzz targets share: the engine every wire-level run starts
//! from, and how one input is cut into parts.
//!
//! Each target is a `src/bin/*.rs` whose `main` hands every input to a
//! `run_*` function here, so a crashing input can be replayed through the
//! same code outside AFL (`cargo run --bin NAME < input` reads one input
//! from standard input when not run under `afl-fuzz`).

use std::sync::OnceLock;

use dynaburst_engine::{Engine, EngineConfig, Millis};

/// The virtual time every wire-level run starts at (no clock is read).
pub const START: Millis = Millis(1_700_000_000_000);

/// Most requests one wire input is cut into.
pub const MAX_REQUESTS: usize = 8;

/// Most records one input-reader run reads.
pub const MAX_RECORDS: usize = 10_000;

/// The tables every wire-level run finds: `tab` (pk S, sk N, a GSI `gsi` on
/// `g`, an LSI `lsi` on `l`, a stream), and `hsh` (id B, provisioned 5/5),
/// with two items in `tab`.
const SETUP: &[(&str, &str)] = &[
    (
        "CreateTable",
        r#"{"TableName":"tab","BillingMode":"PAY_PER_REQUEST",
            "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"N"},
                {"AttributeName":"g","AttributeType":"S"},{"AttributeName":"l","AttributeType":"N"}],
            "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],
            "GlobalSecondaryIndexes":[{"IndexName":"gsi","KeySchema":[{"AttributeName":"g","KeyType":"HASH"}],
                "Projection":{"ProjectionType":"ALL"}}],
            "LocalSecondaryIndexes":[{"IndexName":"lsi","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},
                {"AttributeName":"l","KeyType":"RANGE"}],"Projection":{"ProjectionType":"KEYS_ONLY"}}],
            "StreamSpecification":{"StreamEnabled":true,"StreamViewType":"NEW_AND_OLD_IMAGES"}}"#,
    ),
    (
        "CreateTable",
        r#"{"TableName":"hsh","AttributeDefinitions":[{"AttributeName":"id","AttributeType":"B"}],
            "KeySchema":[{"AttributeName":"id","KeyType":"HASH"}],
            "ProvisionedThroughput":{"ReadCapacityUnits":5,"WriteCapacityUnits":5}}"#,
    ),
    (
        "PutItem",
        r#"{"TableName":"tab","Item":{"pk":{"S":"a"},"sk":{"N":"1"},"g":{"S":"x"},"l":{"N":"7"},
            "n":{"N":"10"},"s":{"SS":["p","q"]},"m":{"M":{"k":{"L":[{"N":"1"},{"BOOL":true},{"NULL":true}]}}}}}"#,
    ),
    ("PutItem", r#"{"TableName":"tab","Item":{"pk":{"S":"a"},"sk":{"N":"2"},"b":{"B":"AAEC"}}}"#),
];

/// A fresh engine with the setup tables and items.
pub fn fresh_engine() -> Engine {
    let engine = Engine::new(EngineConfig::local());
    for (op, body) in SETUP {
        let outcome = dynaburst_wire::handle(&engine, op, body.as_bytes(), START, None);
        assert!(outcome.result.is_ok(), "setup {op} failed: {:?}", outcome.result.err());
    }
    engine
}

/// Runs one wire input: up to [`MAX_REQUESTS`] requests separated by NUL
/// bytes, each an operation byte (an index into `wire::OPERATIONS`, or the
/// Streams operations past them) followed by the body. Time advances one
/// second per request. An answer that is not an error must be JSON.
pub fn run_wire(data: &[u8]) {
    // The fresh engine is made for the first body that is JSON: `handle`
    // refuses any other before it touches an engine, so those go to one
    // empty engine shared by every run.
    static EMPTY: OnceLock<Engine> = OnceLock::new();
    let mut fresh: Option<Engine> = None;
    let ops = dynaburst_wire::OPERATIONS;
    let streams = dynaburst_wire::STREAMS_OPERATIONS;
    for (i, part) in data.split(|&b| b == 0).take(MAX_REQUESTS).enumerate() {
        let Some((&selector, body)) = part.split_first() else { continue };
        let engine = if serde_json::from_slice::<serde_json::Value>(body).is_ok() {
            &*fresh.get_or_insert_with(fresh_engine)
        } else {
            EMPTY.get_or_init(|| Engine::new(EngineConfig::local()))
        };
        let now = Millis(START.0 + 1000 * (i as u64 + 1));
        let index = usize::from(selector) % (ops.len() + streams.len());
        let (operation, outcome) = if index < ops.len() {
            (ops[index], dynaburst_wire::handle(engine, ops[index], body, now, Some("localhost")))
        } else {
            let op = streams[index - ops.len()];
            (op, dynaburst_wire::handle_streams(engine, op, body, now))
        };
        check_outcome(operation, &outcome);
    }
    let Some(engine) = fresh else { return };
    // The expirer and the capacity reports a moment after the last request
    // (a long jump would only replay idle seconds in every capacity model).
    let later = Millis(START.0 + 1000 * (MAX_REQUESTS as u64 + 2));
    let _ = engine.expire(later);
    let _ = engine.capacity_reports(later);
}

fn check_outcome(operation: &str, outcome: &dynaburst_wire::Outcome) {
    match &outcome.result {
        // A success is JSON, but for the operations DynamoDB answers with
        // no body at all (TagResource, UntagResource).
        Ok(body) if body.is_empty() && dynaburst_wire::EMPTY_BODY.contains(&operation) => {}
        Ok(body) => {
            if serde_json::from_slice::<serde_json::Value>(body).is_err() {
                panic!("{operation} answered a body that is not JSON");
            }
        }
        Err(error) => {
            let rendered = error.body();
            assert!(!rendered.is_empty(), "{operation}: empty error body");
        }
    }
}

/// Runs one expression input: a kind byte, the expression text, then
/// optionally a NUL and an item in DynamoDB JSON to evaluate it on (the
/// setup item when absent or invalid). Placeholders `#a #b #c` and
/// `:n :s :l :m :b :ss :z` are supplied. Parses as the kind says, evaluates
/// or applies the result, and sizes what an update produced.
pub fn run_expr(data: &[u8]) {
    use std::collections::HashMap;

    use dynaburst_expr::{
        parse_condition, parse_key_condition, parse_projection, parse_update, project, ExprKind, Placeholders,
    };
    use dynaburst_model::{item_size, AttributeValue, Item, Number};

    let Some((&kind, rest)) = data.split_first() else { return };
    let (text, item_json) = match rest.iter().position(|&b| b == 0) {
        Some(cut) => (&rest[..cut], Some(&rest[cut + 1..])),
        None => (rest, None),
    };
    let Ok(text) = std::str::from_utf8(text) else { return };
    let default_item = || -> Item {
        let mut item = Item::new();
        item.insert("a".into(), AttributeValue::N(Number::from_i64(5)));
        item.insert("b".into(), AttributeValue::S("text".into()));
        item.insert(
            "c".into(),
            AttributeValue::L(vec![AttributeValue::N(Number::from_i64(1)), AttributeValue::Bool(true)]),
        );
        item
    };
    let mut item = item_json
        .and_then(|j| serde_json::from_slice::<serde_json::Value>(j).ok())
        .and_then(|v| dynaburst_ddbjson::parse_item(&v).ok())
        .unwrap_or_else(default_item);
    let names: HashMap<String, String> =
        [("#a", "a"), ("#b", "b"), ("#c", "c")].iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let number = |s: &str| AttributeValue::N(Number::parse(s).unwrap_or_else(|_| Number::zero()));
    let values: HashMap<String, AttributeValue> = [
        (":n", number("1.5")),
        (":z", number("-99999999999999999999999999999999999999")),
        (":s", AttributeValue::S("te".into())),
        (":b", AttributeValue::B(vec![0, 1, 2])),
        (":l", AttributeValue::L(vec![number("2"), AttributeValue::Null])),
        (":m", AttributeValue::M(default_item())),
        (":ss", AttributeValue::Ss(vec!["x".into(), "y".into()])),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let mut ph = Placeholders::new(Some(&names), Some(&values));
    match kind % 5 {
        0 | 1 => {
            let kind = if kind % 5 == 0 { ExprKind::Condition } else { ExprKind::Filter };
            if let Ok(c) = parse_condition(text, kind, &mut ph) {
                let _ = c.evaluate(&item);
                let _ = (c.top_level_names(), c.paths());
            }
        }
        2 => {
            let _ = parse_key_condition(text, &mut ph);
        }
        3 => {
            if let Ok(u) = parse_update(text, &mut ph) {
                let _ = (u.top_level_names(), u.paths());
                if u.apply(&mut item).is_ok() {
                    let _ = item_size(&item);
                }
            }
        }
        _ => {
            if let Ok(paths) = parse_projection(text, &mut ph) {
                let _ = item_size(&project(&item, &paths));
            }
        }
    }
    let _ = ph.check_all_used();
}

/// Runs one number input: two texts separated by a space. Each parses or
/// fails cleanly; a parsed number prints as text that parses back to it;
/// for two numbers, addition commutes, `(a + b) - b == a` whenever `a + b`
/// is storable, and `a - b` has the sign of `a.cmp(b)`.
pub fn run_number(data: &[u8]) {
    use std::cmp::Ordering;

    use dynaburst_model::Number;

    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut parts = text.splitn(2, ' ');
    let a = parts.next().map(Number::parse);
    let b = parts.next().map(Number::parse);
    for n in [&a, &b].into_iter().flatten().flatten() {
        let printed = n.to_string();
        assert_eq!(Number::parse(&printed).as_ref(), Ok(n), "{printed} does not parse back");
        let _ = (n.size_bytes(), n.to_f64_lossy(), n.digit_count());
        assert_eq!(n.negated().negated(), *n);
    }
    let (Some(Ok(a)), Some(Ok(b))) = (a, b) else { return };
    let sum = a.checked_add(&b);
    assert_eq!(sum, b.checked_add(&a), "{a} + {b} does not commute");
    if let Ok(sum) = &sum {
        assert_eq!(sum.checked_sub(&b).as_ref(), Ok(&a), "({a} + {b}) - {b}");
    }
    if let Ok(diff) = a.checked_sub(&b) {
        let sign = if diff.is_zero() {
            Ordering::Equal
        } else if diff.is_negative() {
            Ordering::Less
        } else {
            Ordering::Greater
        };
        assert_eq!(a.cmp(&b), sign, "{a} cmp {b} disagrees with {a} - {b} = {diff}");
    }
    assert_eq!(a.cmp(&b), b.cmp(&a).reverse());
}

/// Runs one input-reader input: a configuration byte, then the file's
/// bytes. Bits 0-1: CSV, JSON Lines, DynamoDB JSON, a rejects file; bits 2-3: no
/// compression, gzip, zstd; bit 4: the bytes are compressed here first
/// (else they are read as the compressed stream itself); bit 5: CSV cells
/// all strings; bits 6-7: read shard 1 of 2 or 2 of 3 (uncompressed only).
/// Reads at most [`MAX_RECORDS`] records from a file under /dev/shm.
pub fn run_input(data: &[u8]) {
    use std::io::Write;

    use dynaburst_input::{Compression, Format, InputSpec, Reader, TypeHints, DEFAULT_TYPE_WINDOW};

    let Some((&config, bytes)) = data.split_first() else { return };
    let format = match config & 3 {
        0 => Format::Csv,
        1 => Format::JsonLines,
        2 => Format::DynamoDbJson,
        _ => Format::Rejects,
    };
    let compression = match (config >> 2) & 3 {
        1 => Compression::Gzip,
        2 => Compression::Zstd,
        _ => Compression::None,
    };
    let contents: Vec<u8> = match (compression, config & 16 != 0) {
        (Compression::Gzip, true) => {
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            enc.write_all(bytes).expect("compress in memory");
            enc.finish().expect("compress in memory")
        }
        (Compression::Zstd, true) => zstd::encode_all(bytes, 1).expect("compress in memory"),
        _ => bytes.to_vec(),
    };
    let shard = match (compression, config >> 6) {
        (Compression::None, 1) => Some((0, 2)),
        (Compression::None, 2) => Some((1, 3)),
        _ => None,
    };
    let dir = if std::path::Path::new("/dev/shm").is_dir() { "/dev/shm" } else { "/tmp" };
    let path = std::path::PathBuf::from(format!("{dir}/dynaburst-fuzz-input-{}", std::process::id()));
    std::fs::write(&path, &contents).expect("write the input file");
    let spec = InputSpec {
        path: Some(path.clone()),
        format,
        compression,
        types: TypeHints::new(),
        all_strings: config & 32 != 0,
        shard,
        resume_at: None,
        raw_json: false,
        type_window: DEFAULT_TYPE_WINDOW,
    };
    if let Ok(mut reader) = Reader::open(spec) {
        let mut last_offset = 0;
        for _ in 0..MAX_RECORDS {
            match reader.next_record() {
                Ok(Some(record)) => {
                    assert!(record.offset >= last_offset && record.end >= record.offset, "offsets go back");
                    last_offset = record.end;
                }
                Ok(None) | Err(_) => break,
            }
        }
    }
    let _ = std::fs::remove_file(&path);
}

/// Runs one PartiQL input: a selector byte, then the statement. Parses it,
/// then sends one that parses through `wire::handle` on a fresh engine as
/// ExecuteStatement, BatchExecuteStatement or ExecuteTransaction (selector
/// mod 3) with 0-3 parameters (selector / 3 mod 4).
pub fn run_partiql(data: &[u8]) {
    let Some((&selector, text)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(text) else { return };
    // A statement that does not parse fails the same way through the wire:
    // only a parsed one is worth a fresh engine.
    if dynaburst_partiql::parse(text).is_err() {
        return;
    }
    let params: Vec<serde_json::Value> = [
        serde_json::json!({"S": "a"}),
        serde_json::json!({"N": "1"}),
        serde_json::json!({"M": {"x": {"L": [{"BOOL": true}]}}}),
    ]
    .into_iter()
    .take(usize::from(selector / 3 % 4))
    .collect();
    let statement = if params.is_empty() {
        serde_json::json!({ "Statement": text })
    } else {
        serde_json::json!({ "Statement": text, "Parameters": params })
    };
    let (operation, body) = match selector % 3 {
        0 => ("ExecuteStatement", statement),
        1 => ("BatchExecuteStatement", serde_json::json!({ "Statements": [statement] })),
        _ => ("ExecuteTransaction", serde_json::json!({ "TransactStatements": [statement] })),
    };
    let engine = fresh_engine();
    let body = serde_json::to_vec(&body).expect("render a request");
    let outcome = dynaburst_wire::handle(&engine, operation, &body, START, None);
    check_outcome(operation, &outcome);
}
