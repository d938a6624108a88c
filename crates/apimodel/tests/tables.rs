//! The generated tables: complete, parseable, and current.

use std::path::Path;
use std::process::Command;

use dynaburst_apimodel::{
    operation, shape, Kind, Pattern, Service, BOTOCORE_VERSION, GENERATOR_FNV1A64, OPERATIONS, SHAPES, TABLES_FNV1A64,
};

/// Operations in botocore 1.43.11's models (57 DynamoDB, 4 Streams).
const DYNAMODB_OPERATIONS: usize = 57;
const STREAMS_OPERATIONS: usize = 4;

fn fnv1a64(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().and_then(Path::parent).expect("crates/apimodel is two levels down")
}

#[test]
fn every_operation_of_both_models_has_an_input_structure() {
    let count = |s: Service| OPERATIONS.iter().filter(|op| op.service == s).count();
    assert_eq!(count(Service::DynamoDb), DYNAMODB_OPERATIONS);
    assert_eq!(count(Service::Streams), STREAMS_OPERATIONS);
    for op in OPERATIONS {
        let input = shape(op.input);
        assert!(matches!(input.kind, Kind::Structure(_)), "{} input {} is not a structure", op.name, input.name);
        assert!(input.name.ends_with("Input") || input.name.ends_with("Request"), "{}: {}", op.name, input.name);
    }
    for name in [
        "CreateTable",
        "UpdateTable",
        "DescribeTable",
        "DeleteTable",
        "ListTables",
        "PutItem",
        "GetItem",
        "UpdateItem",
        "DeleteItem",
        "Query",
        "Scan",
        "BatchGetItem",
        "BatchWriteItem",
        "TransactGetItems",
        "TransactWriteItems",
        "TagResource",
        "UntagResource",
        "ListTagsOfResource",
        "DescribeEndpoints",
        "UpdateTimeToLive",
        "ExecuteStatement",
    ] {
        assert!(operation(Service::DynamoDb, name).is_some(), "{name}");
    }
    for name in ["DescribeStream", "GetRecords", "GetShardIterator", "ListStreams"] {
        assert!(operation(Service::Streams, name).is_some(), "{name}");
    }
}

#[test]
fn every_shape_reference_is_in_the_table() {
    let n = SHAPES.len();
    for s in SHAPES {
        let refs: Vec<u16> = match s.kind {
            Kind::Structure(members) => members.iter().map(|m| m.shape).collect(),
            Kind::List(e) => vec![e],
            Kind::Map(k, v) => vec![k, v],
            _ => Vec::new(),
        };
        assert!(refs.iter().all(|&r| usize::from(r) < n), "{}", s.name);
    }
}

#[test]
fn every_pattern_of_the_models_parses() {
    let patterns: Vec<&str> = SHAPES.iter().filter_map(|s| s.pattern).collect();
    // 11 of DynamoDB's 13 patterns sit on input shapes (TableId and
    // ContributorInsightsRule only on outputs), plus the Streams TableName.
    assert_eq!(patterns.len(), 12);
    for s in SHAPES {
        if let Some(p) = s.pattern {
            assert!(Pattern::new(p).is_ok(), "{}: {p}", s.name);
        }
    }
}

#[test]
fn generated_file_matches_its_generator_and_is_unedited() {
    // The header records hashes of the generator and of the tables: editing
    // either without regenerating fails here. `scripts/gen-apimodel --check`
    // (run by CI) compares the whole file with a fresh generation.
    let script = std::fs::read(repo_root().join("scripts/gen-apimodel")).expect("read scripts/gen-apimodel");
    assert_eq!(fnv1a64(&script), GENERATOR_FNV1A64, "scripts/gen-apimodel changed: run it");
    let generated =
        std::fs::read_to_string(repo_root().join("crates/apimodel/src/generated.rs")).expect("read generated.rs");
    let marker = "// --- tables ---\n";
    let at = generated.find(marker).expect("generated.rs has the tables marker");
    assert_eq!(fnv1a64(&generated.as_bytes()[at + marker.len()..]), TABLES_FNV1A64, "generated.rs was edited by hand");
}

#[test]
fn generator_check_passes_when_botocore_is_installed() {
    // Only the pinned botocore can reproduce the file; with another (or none)
    // the hash test above is what guards it.
    let probe = Command::new("python3").args(["-c", "import botocore; print(botocore.__version__)"]).output();
    let Ok(probe) = probe else { return };
    if String::from_utf8_lossy(&probe.stdout).trim() != BOTOCORE_VERSION {
        return;
    }
    let out = Command::new("python3")
        .arg(repo_root().join("scripts/gen-apimodel"))
        .arg("--check")
        .output()
        .expect("run scripts/gen-apimodel --check");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn any_json_in_any_member_of_any_operation_gets_an_answer() {
    // Nothing a client sends may panic the server: every member of every
    // input (and of its first nested level) receives every JSON type.
    use dynaburst_apimodel::{validate, Invalid};
    use serde_json::{json, Map, Value};
    let samples = [
        json!(null),
        json!(true),
        json!(0),
        json!(-1.5e300),
        json!("x"),
        json!(""),
        json!([]),
        json!([null, 1, "a", {}]),
        json!({}),
        json!({"S": "a", "N": "1", "M": {"": {}}, "L": [{}]}),
    ];
    let (mut passed, mut serialization, mut validation) = (0, 0, 0);
    for op in OPERATIONS {
        let Kind::Structure(members) = shape(op.input).kind else { panic!("{} input", op.name) };
        for m in members {
            let mut nested: Vec<Value> = samples.to_vec();
            if let Kind::Structure(inner) = shape(m.shape).kind {
                for i in inner {
                    for sample in &samples {
                        let mut obj = Map::new();
                        obj.insert(i.name.to_string(), sample.clone());
                        nested.push(Value::Object(obj));
                    }
                }
            }
            for value in nested {
                let mut body = Map::new();
                body.insert("TableName".into(), json!("abc"));
                body.insert(m.name.to_string(), value);
                match validate(op.service, op.name, &Value::Object(body)) {
                    Ok(()) => passed += 1,
                    Err(Invalid::Serialization { message }) => {
                        assert!(!message.is_empty(), "{} {}", op.name, m.name);
                        serialization += 1;
                    }
                    Err(Invalid::Validation { message }) => {
                        assert!(
                            message.contains(" detected: ")
                                || message.starts_with("Supplied AttributeValue")
                                || message.starts_with("The parameter 'TableName'")
                                || message.contains("contains invalid value: Supplied AttributeValue")
                                || message.starts_with("The provided starting key is invalid: Supplied AttributeValue"),
                            "{} {}: {message}",
                            op.name,
                            m.name
                        );
                        validation += 1;
                    }
                    Err(Invalid::UnknownOperation { name }) => panic!("{name} is in OPERATIONS"),
                }
            }
        }
    }
    // Every answer form occurs; the total is every case tried.
    assert!(passed > 0 && serialization > 0 && validation > 0, "{passed} {serialization} {validation}");
    assert_eq!(passed + serialization + validation, 3290);
}
