//! `dynaburst bench all` at reduced size (as CI runs it): every scenario
//! runs, and its results.json shows what the seeds showed.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_dynaburst");

#[test]
fn bench_all_at_reduced_size_reproduces_the_seeds_findings() {
    let out = std::env::temp_dir().join(format!("dynaburst-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let run = Command::new(BIN)
        .args(["bench", "all", "--items", "500", "--seed", "3", "--out"])
        .arg(&out)
        .output()
        .expect("run dynaburst bench");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let s = &r["scenarios"];
    assert_eq!(r["failures"], serde_json::json!([]));

    // write-apis: what makes batches beat serial puts (seed 000's finding)
    // is round trips: a serial PutItem pays one per item, a batch (of
    // writes or of INSERT statements) or a transaction of 25 one per 25 items (retries would only add to them).
    // Counted, not timed, so the machine's speed cannot decide it.
    let rows = s["write-apis"]["rows"].as_array().unwrap();
    let requests = |api: &str| rows.iter().find(|r| r["api"] == api).unwrap()["requests"].as_u64().unwrap();
    let items = rows[0]["items"].as_u64().unwrap();
    assert!(requests("PutItem, serial") >= items, "{rows:?}");
    assert!(requests("PutItem, 25 concurrent") >= items, "{rows:?}");
    for api in [
        "BatchWriteItem of 25, serial",
        "TransactWriteItems of 25, serial",
        "BatchExecuteStatement of 25 INSERTs, serial",
    ] {
        assert!(requests(api) >= items.div_ceil(25), "{rows:?}");
        assert!(requests("PutItem, serial") >= 10 * requests(api), "{rows:?}");
    }
    for row in rows {
        assert_eq!(row["count_after"], row["items"], "{row}");
    }
    // Its peak memory is the client's own: the client ran in a process
    // without the server (seed 000 published its Node process's).
    assert_eq!(s["write-apis"]["client_process"], true);
    assert!(rows.iter().all(|r| r["peak_memory_bytes"].as_u64().is_some_and(|b| b > 0)), "{rows:?}");

    // doc-size: 12 runs (3 sizes x 4 writer counts), each with a rate.
    let docs = s["doc-size"]["rows"].as_array().unwrap();
    assert_eq!(docs.len(), 12);
    assert!(docs.iter().all(|d| d["docs_per_ms"].as_f64().unwrap() > 0.0));

    // doc-size-mongodb (CI has FerretDB): 15 runs (3 sizes x 5 writer
    // counts), each with a rate; then the client-memory check at its
    // reduced default, 10,000 and 100,000 documents, each with the
    // loader's peak. (Whether that peak stays flat is checked at full size,
    // 100,000 against 1,000,000 documents, by
    // tests/python/test_mongodb_bench.py: at 10,000 the loader's windows
    // have not yet filled, and its peak is some 8 MB below the plateau.)
    let mongo = &s["doc-size-mongodb"];
    assert_eq!(mongo["measured"], true, "{mongo}");
    let rows = mongo["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 15, "{rows:?}");
    assert!(rows.iter().all(|r| r["docs_per_ms"].as_f64().unwrap() > 0.0), "{rows:?}");
    let memory = mongo["memory"].as_array().unwrap();
    let docs: Vec<u64> = memory.iter().map(|m| m["docs"].as_u64().unwrap()).collect();
    assert_eq!(docs, [10_000, 100_000], "{memory:?}");
    assert!(memory.iter().all(|m| m["peak_memory_bytes"].as_u64().is_some_and(|b| b > 0)), "{memory:?}");

    // parallel-patterns: six patterns; the naive loader loses items fired
    // at once, dynaburst load loses none.
    assert_eq!(s["parallel-patterns"]["patterns"].as_array().unwrap().len(), 6);
    for b in s["parallel-patterns"]["burst"].as_array().unwrap() {
        if b["loader"] == "dynaburst load" {
            assert_eq!(b["lost"], 0, "{b}");
        } else {
            assert!(b["lost"].as_u64().unwrap() > 0, "{b}");
        }
    }

    // latency: six configurations with ordered percentiles.
    let lat = s["latency"]["rows"].as_array().unwrap();
    assert_eq!(lat.len(), 6);
    for l in lat {
        let p = |k: &str| l[k].as_f64().unwrap();
        assert!(p("min_ms") <= p("p50_ms") && p("p50_ms") <= p("p99_ms") && p("p99_ms") <= p("max_ms"), "{l}");
    }

    // partition-keys: one key holds at 1,000 units/s within 10%; shuffled
    // beats sorted; the lookup is always right.
    let loads = s["partition-keys"]["loads"].as_array().unwrap();
    let rate = |case: &str| loads.iter().find(|l| l["case"] == case).unwrap()["rate_units_per_s"].as_f64().unwrap();
    assert!((900.0..=1100.0).contains(&rate("single-key")), "{}", rate("single-key"));
    assert!(rate("shuffled") > rate("sorted"), "shuffled {} vs sorted {}", rate("shuffled"), rate("sorted"));
    let lookup = &s["partition-keys"]["lookup"];
    assert_eq!(lookup["correct"], lookup["samples"], "{lookup}");
    // Each modelled second knows the table's partitions (seed 004's
    // explanation); the provisioned table starts with more than one.
    for l in loads {
        let timeline = l["timeline"].as_array().unwrap();
        assert!(timeline.iter().all(|t| t["partitions"].as_u64().is_some_and(|p| p >= 1)), "{}", l["case"]);
    }
    let provisioned = loads.iter().find(|l| l["case"] == "provisioned").unwrap();
    assert!(provisioned["timeline"][0]["partitions"].as_u64().unwrap() > 1, "{}", provisioned["timeline"][0]);
    // Lookups per second from one lookup in flight up, every lookup right.
    let steps = lookup["saturation"]["steps"].as_array().unwrap();
    assert_eq!(steps[0]["concurrency"], 1, "{steps:?}");
    for st in steps {
        assert!(st["lookups"].as_u64().unwrap() > 0 && st["correct"] == st["lookups"], "{st}");
    }

    // The report and the charts are there.
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    for title in ["000", "001", "002", "003", "004"] {
        assert!(
            report.contains(&format!("seed {title}")) || report.contains(&format!("Seed {title}")),
            "report names seed {title}"
        );
    }
    for svg in
        ["write-apis.svg", "latency.svg", "doc-size.svg", "parallel-patterns.svg", "partition-keys-single-key.svg"]
    {
        let text = std::fs::read_to_string(out.join(svg)).unwrap_or_else(|_| panic!("{svg} written"));
        assert!(text.starts_with("<svg") && text.contains("</svg>"), "{svg}");
    }
    for csv in [
        "partition-keys-single-key.csv",
        "partition-keys-sorted.csv",
        "partition-keys-shuffled.csv",
        "partition-keys-provisioned.csv",
    ] {
        let text = std::fs::read_to_string(out.join(csv)).unwrap();
        assert!(
            text.starts_with("second,consumed_write_units,throttled_write_items\n") && text.lines().count() > 10,
            "{csv}"
        );
    }
}
