//! `Number` against Python's `decimal` (38-digit context, DynamoDB's
//! exponent range) on random inputs: parsing and the canonical text,
//! addition, subtraction and comparison. `decimal_reference.py` draws the
//! cases from a seeded generator and prints its seed; a failure names it, and
//! `DYNABURST_DECIMAL_SEED=N cargo test -p dynaburst-model --test
//! decimal_differential` runs the same cases again.

use std::cmp::Ordering;
use std::path::Path;
use std::process::Command;

use dynaburst_model::{Number, NumberError};

/// Cases per run (a quarter each of parse, add, sub and cmp).
const CASES: usize = 20_000;
/// Mismatches listed in a failure.
const MAX_REPORTED: usize = 20;

fn error_name(e: &NumberError) -> &'static str {
    match e {
        NumberError::Invalid => "invalid",
        NumberError::Precision => "precision",
        NumberError::Overflow => "overflow",
        NumberError::Underflow => "underflow",
    }
}

/// Whether `got` is what the reference expects: the canonical text, or one
/// of the listed errors.
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
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/decimal_reference.py");
    let output = Command::new("python3")
        .arg(&script)
        .arg(CASES.to_string())
        .output()
        .unwrap_or_else(|e| panic!("cannot run python3 {}: {e}", script.display()));
    assert!(output.status.success(), "{} failed: {}", script.display(), String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8(output.stdout).expect("the reference prints UTF-8");
    let mut lines = text.lines();
    let seed = lines.next().and_then(|l| l.strip_prefix("seed ")).expect("the reference prints its seed first");
    println!("decimal reference seed {seed} (DYNABURST_DECIMAL_SEED={seed} repeats it)");
    let mut counts = [0usize; 4];
    let mut failures = Vec::new();
    for line in lines {
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
            failures.push(line.to_string());
        }
    }
    assert_eq!(counts.iter().sum::<usize>(), CASES, "the reference printed {counts:?} cases");
    assert!(counts.iter().all(|&c| c == CASES / 4), "cases per operation: {counts:?}");
    assert!(
        failures.is_empty(),
        "seed {seed}: {} of {CASES} cases differ from Python's decimal (op, operands, expected):\n{}",
        failures.len(),
        failures.iter().take(MAX_REPORTED).cloned().collect::<Vec<_>>().join("\n")
    );
}
