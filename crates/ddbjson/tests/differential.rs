//! Differential checks against references computed independently in
//! Python (`reference/`), on random inputs from a seeded generator that
//! prints its seed; a failure names it, and setting the seed's variable
//! runs the same inputs again:
//!
//! - `Number` against Python's `decimal` (38-digit context, DynamoDB's
//!   exponent range): parsing and the canonical text, addition, subtraction
//!   and comparison (`DYNABURST_DECIMAL_SEED`);
//! - item size and capacity units against the documented rules
//!   (dynamodb-behaviour.md B1, B2, B4, B5), for the documented examples and
//!   random items parsed from DynamoDB JSON as the server parses them
//!   (`DYNABURST_ITEM_SEED`).

use std::cmp::Ordering;
use std::path::Path;
use std::process::Command;

use dynaburst_model::{item_size, read_units, write_units, Number, NumberError, ReadKind};

/// Number cases per run (a quarter each of parse, add, sub and cmp).
const NUMBER_CASES: usize = 20_000;
/// Random items per run, after the documented examples.
const RANDOM_ITEMS: usize = 2_000;
/// Documented examples the item reference prints first.
const DOCUMENTED_ITEMS: usize = 1;
/// Mismatches listed in a failure.
const MAX_REPORTED: usize = 20;

/// Runs `reference/SCRIPT COUNT`: its seed and its lines after the seed.
fn reference(script: &str, count: usize) -> (String, Vec<String>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference").join(script);
    let output = Command::new("python3")
        .arg(&path)
        .arg(count.to_string())
        .output()
        .unwrap_or_else(|e| panic!("cannot run python3 {}: {e}", path.display()));
    assert!(output.status.success(), "{} failed: {}", path.display(), String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8(output.stdout).expect("the reference prints UTF-8");
    let mut lines = text.lines().map(str::to_string);
    let seed = lines
        .next()
        .and_then(|l| l.strip_prefix("seed ").map(str::to_string))
        .expect("the reference prints its seed first");
    println!("{script}: seed {seed}");
    (seed, lines.collect())
}

/// Fails listing the mismatches, if any.
fn report(seed: &str, checked: usize, what: &str, failures: &[String]) {
    assert!(
        failures.is_empty(),
        "seed {seed}: {} of {checked} {what}:\n{}",
        failures.len(),
        failures.iter().take(MAX_REPORTED).cloned().collect::<Vec<_>>().join("\n")
    );
}

fn error_name(e: &NumberError) -> &'static str {
    match e {
        NumberError::Invalid => "invalid",
        NumberError::Precision => "precision",
        NumberError::Overflow => "overflow",
        NumberError::Underflow => "underflow",
    }
}

/// Whether `got` is what the reference expects: the canonical text, or one
/// of the listed errors (`!name,name`).
fn matches(got: &Result<Number, NumberError>, expected: &str) -> bool {
    match (got, expected.strip_prefix('!')) {
        (Ok(n), None) => n.to_string() == expected,
        (Err(e), Some(errors)) => errors.split(',').any(|name| name == error_name(e)),
        _ => false,
    }
}

fn number(text: &str) -> Number {
    Number::parse(text).unwrap_or_else(|e| panic!("the reference gave an operand that does not parse: {text}: {e}"))
}

#[test]
fn number_matches_python_decimal() {
    let (seed, lines) = reference("number_reference.py", NUMBER_CASES);
    let mut counts = [0usize; 4];
    let mut failures = Vec::new();
    for line in &lines {
        let fields: Vec<&str> = line.split('\t').collect();
        let ok = match fields.as_slice() {
            ["parse", text, expected] => {
                counts[0] += 1;
                matches(&Number::parse(text), expected)
            }
            ["add", a, b, expected] => {
                counts[1] += 1;
                matches(&number(a).checked_add(&number(b)), expected)
            }
            ["sub", a, b, expected] => {
                counts[2] += 1;
                matches(&number(a).checked_sub(&number(b)), expected)
            }
            ["cmp", a, b, expected] => {
                counts[3] += 1;
                let want = match *expected {
                    "-1" => Ordering::Less,
                    "0" => Ordering::Equal,
                    _ => Ordering::Greater,
                };
                number(a).cmp(&number(b)) == want
            }
            _ => panic!("unreadable reference line: {line:?}"),
        };
        if !ok {
            failures.push(line.clone());
        }
    }
    assert!(counts.iter().all(|&c| c == NUMBER_CASES / 4), "cases per operation: {counts:?}");
    report(&seed, NUMBER_CASES, "cases differ from Python's decimal (op, operands, expected)", &failures);
}

#[test]
fn item_size_and_units_match_the_documented_rules() {
    let (seed, lines) = reference("item_size_reference.py", RANDOM_ITEMS);
    let mut failures = Vec::new();
    for line in &lines {
        let fields: Vec<&str> = line.splitn(5, '\t').collect();
        let [size, wcu, strong, eventual, json] = fields.as_slice() else {
            panic!("unreadable reference line: {line:?}")
        };
        let number = |s: &str| s.parse::<f64>().unwrap_or_else(|e| panic!("bad number {s:?} in {line:?}: {e}"));
        let value: serde_json::Value = serde_json::from_str(json).expect("the reference prints JSON");
        let item = dynaburst_ddbjson::parse_item(&value).unwrap_or_else(|e| panic!("seed {seed}: {json}: {e}"));
        let bytes = item_size(&item);
        let got = (
            bytes as f64,
            write_units(bytes),
            read_units(bytes, ReadKind::Strong),
            read_units(bytes, ReadKind::Eventual),
        );
        let want = (number(size), number(wcu), number(strong), number(eventual));
        if got != want {
            failures.push(format!("got {got:?}, documented rules give {want:?}: {json}"));
        }
    }
    assert_eq!(lines.len(), DOCUMENTED_ITEMS + RANDOM_ITEMS, "items the reference printed");
    report(&seed, lines.len(), "items differ from the documented rules", &failures);
}
