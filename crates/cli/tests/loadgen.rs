//! `dynaburst loadgen --rate` against the real `dynaburst serve` binary:
//! the schedule caps what is sent (never more than rate x duration), and a
//! run repeated with its seed rewrites the same keys, so a soak's table
//! stays the size of one run. Bounded: 2 s runs at 50 requests a second.

mod common;

use std::process::Command;

use common::{Serve, BIN};

/// One `loadgen --rate 50` run of 2 s with seed 7; its JSON result.
fn loadgen(serve: &Serve, mode: &str) -> serde_json::Value {
    let out = Command::new(BIN)
        .args([
            "loadgen",
            "--endpoint-url",
            &serve.url,
            "--mode",
            mode,
            "--rate",
            "50",
            "--duration",
            "2",
            "--warmup",
            "0",
            "--connections",
            "4",
            "--seed",
            "7",
            "--table",
            mode,
            "--json",
        ])
        .output()
        .expect("run loadgen");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("loadgen's JSON")
}

/// Items in `table`, counted by a Scan (one page holds them all).
fn count(serve: &Serve, table: &str) -> u64 {
    let client = serve.client();
    common::runtime().block_on(async {
        let out =
            client.scan().table_name(table).select(aws_sdk_dynamodb::types::Select::Count).send().await.expect("scan");
        assert!(out.last_evaluated_key.is_none(), "one page");
        out.count as u64
    })
}

#[test]
fn a_rate_caps_what_is_sent_and_a_repeated_run_rewrites_its_keys() {
    let serve = Serve::start(&["--seed", "1"]);
    for (mode, per_request) in [("put", 1), ("batch", 25)] {
        let first = loadgen(&serve, mode);
        // 50 a second for 2 s: requests 0..=99 are due in the window, and
        // the answered ones are counted.
        let requests = first["requests"].as_u64().expect("requests");
        assert!((50..=100).contains(&requests), "{mode}: {first}");
        assert_eq!(first["errors"], 0, "{mode}: {first}");
        assert_eq!(first["items"].as_u64(), Some(requests * per_request), "{mode}");
        let written = count(&serve, mode);
        assert!((requests * per_request..=100 * per_request).contains(&written), "{mode}: {written} items");

        // The same seed again: request k writes request k's keys.
        let again = loadgen(&serve, mode);
        assert_eq!(again["errors"], 0, "{mode}: {again}");
        // Requests 0..=99 again: nothing beyond their keys, nothing lost.
        let after = count(&serve, mode);
        assert!((written..=100 * per_request).contains(&after), "{mode}: {written} then {after} items");
    }
}

#[test]
fn a_key_space_bounds_the_table_of_a_long_run() {
    let serve = Serve::start(&["--seed", "1"]);
    let out = Command::new(BIN)
        .args(["loadgen", "--endpoint-url", &serve.url, "--mode", "put", "--rate", "50", "--key-space", "10"])
        .args(["--duration", "2", "--warmup", "0", "--connections", "2", "--seed", "3", "--table", "ring", "--json"])
        .output()
        .expect("run loadgen");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).expect("loadgen's JSON");
    assert!(result["requests"].as_u64().expect("requests") >= 50, "{result}");
    // Up to 100 puts, 10 keys.
    assert_eq!(count(&serve, "ring"), 10);
    // Without --rate there is nothing to number.
    let refused = Command::new(BIN)
        .args(["loadgen", "--endpoint-url", &serve.url, "--key-space", "10"])
        .output()
        .expect("run loadgen");
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--key-space needs --rate"), "{refused:?}");
}
