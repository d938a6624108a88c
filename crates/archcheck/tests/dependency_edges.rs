//! The dependency rules of ARCHITECTURE.md, checked against `cargo metadata`.
//!
//! Every rule here is stated in ARCHITECTURE.md; a change to one is a change
//! to both. Only normal (non-dev, non-build) dependencies count: tests may
//! use anything.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// In [`ALLOWED_INTERNAL`]: any workspace crate.
const ANY: &[&str] = &["*"];

/// The workspace crates each crate may depend on directly. A crate missing
/// from this table fails the test: a new crate takes its place in the
/// layers consciously.
const ALLOWED_INTERNAL: &[(&str, &[&str])] = &[
    // The pure core.
    ("dynaburst-rng", &[]),
    ("dynaburst-model", &[]),
    ("dynaburst-expr", &["dynaburst-model"]),
    ("dynaburst-capacity", &["dynaburst-model"]),
    ("dynaburst-engine", &["dynaburst-model", "dynaburst-expr", "dynaburst-capacity"]),
    // DynamoDB's PartiQL subset: a parser (its comparison operators are
    // the expression language's).
    ("dynaburst-partiql", &["dynaburst-expr"]),
    // DynamoDB's request shapes and constraints, from its service model.
    ("dynaburst-apimodel", &[]),
    // DynamoDB JSON: a leaf over the model, shared by both sides.
    ("dynaburst-ddbjson", &["dynaburst-model"]),
    // The server stack.
    (
        "dynaburst-wire",
        &[
            "dynaburst-model",
            "dynaburst-expr",
            "dynaburst-engine",
            "dynaburst-ddbjson",
            "dynaburst-apimodel",
            "dynaburst-partiql",
        ],
    ),
    // Durable storage: the engine's seam on disk.
    ("dynaburst-diskstore", &["dynaburst-model", "dynaburst-engine"]),
    (
        "dynaburst-server",
        &["dynaburst-model", "dynaburst-engine", "dynaburst-wire", "dynaburst-rng", "dynaburst-diskstore"],
    ),
    // The client side.
    ("dynaburst-input", &["dynaburst-model", "dynaburst-ddbjson", "dynaburst-parquet"]),
    // Parquet rows as items: the heavy parquet/arrow crates in a leaf of
    // the client side.
    ("dynaburst-parquet", &["dynaburst-model"]),
    ("dynaburst-loader", &["dynaburst-model", "dynaburst-input", "dynaburst-rng"]),
    (
        "dynaburst-dynamo",
        &["dynaburst-model", "dynaburst-input", "dynaburst-loader", "dynaburst-rng", "dynaburst-ddbjson"],
    ),
    ("dynaburst-mongo", &["dynaburst-model", "dynaburst-input", "dynaburst-loader", "dynaburst-rng"]),
    ("dynaburst-datagen", &["dynaburst-rng", "dynaburst-model"]),
    ("dynaburst-loadgen", &["dynaburst-ddbjson", "dynaburst-model", "dynaburst-rng"]),
    // load --simulate: the loader's pipeline against the engine in virtual
    // time (a leaf where the two sides meet; only the bench and the binary
    // depend on it, see the last tests).
    ("dynaburst-simulate", &["dynaburst-model", "dynaburst-engine", "dynaburst-input", "dynaburst-loader"]),
    // The leaves: the bench and the binary may use every library crate
    // (nothing depends on them: see the last tests).
    ("dynaburst-bench", ANY),
    ("dynaburst", ANY),
    ("dynaburst-archcheck", &[]),
];

/// External crates that only the named workspace crates may depend on
/// directly.
const OWNED_EXTERNAL: &[(&str, &[&str])] = &[
    ("aws-sdk-dynamodb", &["dynaburst-dynamo"]),
    ("aws-sdk-dynamodbstreams", &["dynaburst-dynamo"]),
    ("aws-config", &["dynaburst-dynamo"]),
    ("aws-smithy-types", &["dynaburst-dynamo"]),
    ("aws-smithy-runtime-api", &["dynaburst-dynamo"]),
    // The SDK's signer verifies signatures in the server (`serve --credentials`).
    ("aws-sigv4", &["dynaburst-server"]),
    ("aws-credential-types", &["dynaburst-server"]),
    ("mongodb", &["dynaburst-mongo"]),
    ("bson", &["dynaburst-mongo"]),
    ("hyper", &["dynaburst-server", "dynaburst-loadgen"]),
    ("hyper-util", &["dynaburst-server", "dynaburst-loadgen"]),
    ("http-body-util", &["dynaburst-server", "dynaburst-loadgen"]),
    ("anyhow", &["dynaburst"]),
    ("clap", &["dynaburst"]),
    ("indicatif", &["dynaburst"]),
    ("plotters", &["dynaburst-bench"]),
    ("fjall", &["dynaburst-diskstore"]),
    ("parquet", &["dynaburst-parquet"]),
    ("arrow-array", &["dynaburst-parquet"]),
    ("arrow-schema", &["dynaburst-parquet"]),
];

/// The pure core: no JSON, no async runtime, no HTTP, through any chain.
const PURE: &[&str] = &[
    "dynaburst-rng",
    "dynaburst-model",
    "dynaburst-expr",
    "dynaburst-capacity",
    "dynaburst-engine",
    "dynaburst-partiql",
];
const NOT_IN_PURE: &[&str] = &["serde_json", "tokio", "hyper"];

/// The client side never links the server stack, through any chain.
const CLIENT_SIDE: &[&str] = &[
    "dynaburst-input",
    "dynaburst-parquet",
    "dynaburst-loader",
    "dynaburst-dynamo",
    "dynaburst-mongo",
    "dynaburst-datagen",
];
const SERVER_STACK: &[&str] = &[
    "dynaburst-expr",
    "dynaburst-capacity",
    "dynaburst-engine",
    "dynaburst-partiql",
    "dynaburst-wire",
    "dynaburst-server",
];

/// Transitive absences that ARCHITECTURE.md promises by name.
const NEVER_REACHES: &[(&str, &[&str])] = &[
    // The MongoDB target does not link the AWS SDK.
    ("dynaburst-mongo", &["aws-sdk-dynamodb", "aws-config"]),
    // The generic pipeline knows no target.
    ("dynaburst-loader", &["aws-sdk-dynamodb", "aws-config", "mongodb", "bson"]),
    // The server builds without the loader's heavy clients.
    (
        "dynaburst-server",
        &[
            "aws-sdk-dynamodb",
            "aws-sdk-dynamodbstreams",
            "aws-config",
            "mongodb",
            "bson",
            "plotters",
            "parquet",
            "arrow-array",
        ],
    ),
];

struct Graph {
    /// Workspace package names.
    members: BTreeSet<String>,
    /// Normal dependencies of every package, by name.
    deps: BTreeMap<String, BTreeSet<String>>,
}

impl Graph {
    fn load() -> Graph {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
        let out = Command::new(cargo)
            .args(["metadata", "--format-version", "1", "--locked", "--manifest-path"])
            .arg(&manifest)
            .output()
            .expect("cargo metadata runs");
        assert!(out.status.success(), "cargo metadata failed: {}", String::from_utf8_lossy(&out.stderr));
        let meta: Value = serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON");
        let name_of: BTreeMap<&str, &str> = meta["packages"]
            .as_array()
            .expect("packages")
            .iter()
            .map(|p| (p["id"].as_str().expect("id"), p["name"].as_str().expect("name")))
            .collect();
        let members = meta["workspace_members"]
            .as_array()
            .expect("workspace_members")
            .iter()
            .map(|id| name_of[id.as_str().expect("member id")].to_string())
            .collect();
        let mut deps: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for node in meta["resolve"]["nodes"].as_array().expect("resolve.nodes") {
            let name = name_of[node["id"].as_str().expect("node id")].to_string();
            let entry = deps.entry(name).or_default();
            for dep in node["deps"].as_array().expect("deps") {
                let normal = dep["dep_kinds"].as_array().expect("dep_kinds").iter().any(|k| k["kind"].is_null());
                if normal {
                    entry.insert(name_of[dep["pkg"].as_str().expect("pkg")].to_string());
                }
            }
        }
        Graph { members, deps }
    }

    fn direct(&self, name: &str) -> &BTreeSet<String> {
        self.deps.get(name).unwrap_or_else(|| panic!("{name} is not in the dependency graph"))
    }

    /// Every package `name` reaches through normal dependencies.
    fn reaches(&self, name: &str) -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![name.to_string()];
        while let Some(n) = stack.pop() {
            for d in self.deps.get(&n).into_iter().flatten() {
                if seen.insert(d.clone()) {
                    stack.push(d.clone());
                }
            }
        }
        seen
    }

    /// "A reaches B" for every crate A of `from` and B of `forbidden` that
    /// A reaches through any chain.
    fn reach_violations(&self, from: &[&str], forbidden: &[&str]) -> Vec<String> {
        let mut out = Vec::new();
        for name in from {
            let reached = self.reaches(name);
            out.extend(
                forbidden.iter().filter(|bad| reached.contains(**bad)).map(|bad| format!("{name} reaches {bad}")),
            );
        }
        out
    }
}

#[test]
fn every_workspace_crate_has_a_place_in_the_layers() {
    let g = Graph::load();
    let listed: BTreeSet<String> = ALLOWED_INTERNAL.iter().map(|(n, _)| n.to_string()).collect();
    let unlisted: Vec<&String> = g.members.difference(&listed).collect();
    assert!(unlisted.is_empty(), "crates without a layer in ALLOWED_INTERNAL (and ARCHITECTURE.md): {unlisted:?}");
    let gone: Vec<&String> = listed.difference(&g.members).collect();
    assert!(gone.is_empty(), "ALLOWED_INTERNAL lists crates that no longer exist: {gone:?}");
}

#[test]
fn workspace_crates_depend_only_on_the_layers_below_them() {
    let g = Graph::load();
    let mut violations = Vec::new();
    for (name, allowed) in ALLOWED_INTERNAL {
        if !g.members.contains(*name) || *allowed == ANY {
            continue;
        }
        for dep in g.direct(name).iter().filter(|d| g.members.contains(*d)) {
            if !allowed.contains(&dep.as_str()) {
                violations.push(format!("{name} -> {dep}"));
            }
        }
    }
    assert!(violations.is_empty(), "forbidden dependency edges: {violations:?}");
}

#[test]
fn external_crates_stay_in_the_crate_that_owns_them() {
    let g = Graph::load();
    let mut violations = Vec::new();
    for member in &g.members {
        for (external, owners) in OWNED_EXTERNAL {
            if g.direct(member).contains(*external) && !owners.contains(&member.as_str()) {
                violations.push(format!("{member} -> {external} (only {owners:?} may)"));
            }
        }
    }
    assert!(violations.is_empty(), "{violations:?}");
}

#[test]
fn the_pure_core_links_no_json_runtime_or_http() {
    let violations = Graph::load().reach_violations(PURE, NOT_IN_PURE);
    assert!(violations.is_empty(), "{violations:?}");
}

#[test]
fn the_client_side_never_links_the_server_stack() {
    let g = Graph::load();
    let present: Vec<&str> = CLIENT_SIDE.iter().copied().filter(|n| g.members.contains(*n)).collect();
    let mut violations = g.reach_violations(&present, SERVER_STACK);
    for (name, never) in NEVER_REACHES {
        violations.extend(g.reach_violations(&[name], never));
    }
    assert!(violations.is_empty(), "{violations:?}");
}

#[test]
fn nothing_depends_on_the_binary_and_only_the_binary_on_the_bench() {
    let g = Graph::load();
    for member in &g.members {
        assert!(!g.direct(member).contains("dynaburst"), "{member} depends on the binary crate");
        if member != "dynaburst" {
            assert!(!g.direct(member).contains("dynaburst-bench"), "{member} depends on the bench");
        }
        // The simulator links both sides: only the leaves may use it.
        if member != "dynaburst" && member != "dynaburst-bench" {
            assert!(!g.direct(member).contains("dynaburst-simulate"), "{member} depends on the simulator");
        }
    }
}

#[test]
fn architecture_md_describes_every_crate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let doc = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md is readable");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(root.join("crates")).expect("crates/ is readable") {
        let dir = entry.expect("directory entry").file_name().to_string_lossy().to_string();
        if !doc.contains(&format!("`crates/{dir}`")) {
            missing.push(dir);
        }
    }
    assert!(missing.is_empty(), "crates with no section in ARCHITECTURE.md: {missing:?}");
}
