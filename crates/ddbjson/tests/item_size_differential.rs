//! Item size and capacity units against the documented rules
//! (dynamodb-behaviour.md B1, B2, B4, B5), computed independently by
//! `item_size_reference.py` for the documented examples and for random items
//! from a seeded generator (it prints its seed; a failure names it, and
//! `DYNABURST_ITEM_SEED=N cargo test -p dynaburst-ddbjson --test
//! item_size_differential` runs the same items again). Items are parsed from
//! DynamoDB JSON as the server parses them.

use std::path::Path;
use std::process::Command;

use dynaburst_model::{item_size, read_units, write_units, ReadKind};

/// Random items per run, after the documented examples.
const ITEMS: usize = 2_000;
/// Documented examples the reference prints first.
const DOCUMENTED: usize = 1;
/// Mismatches listed in a failure.
const MAX_REPORTED: usize = 10;

#[test]
fn item_size_and_units_match_the_documented_rules() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/item_size_reference.py");
    let output = Command::new("python3")
        .arg(&script)
        .arg(ITEMS.to_string())
        .output()
        .unwrap_or_else(|e| panic!("cannot run python3 {}: {e}", script.display()));
    assert!(output.status.success(), "{} failed: {}", script.display(), String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8(output.stdout).expect("the reference prints UTF-8");
    let mut lines = text.lines();
    let seed = lines.next().and_then(|l| l.strip_prefix("seed ")).expect("the reference prints its seed first");
    println!("item size reference seed {seed} (DYNABURST_ITEM_SEED={seed} repeats it)");
    let mut checked = 0;
    let mut failures = Vec::new();
    for line in lines {
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
        checked += 1;
    }
    assert_eq!(checked, DOCUMENTED + ITEMS, "the reference printed {checked} items");
    assert!(
        failures.is_empty(),
        "seed {seed}: {} of {checked} items differ from the documented rules:\n{}",
        failures.len(),
        failures.iter().take(MAX_REPORTED).cloned().collect::<Vec<_>>().join("\n")
    );
}
