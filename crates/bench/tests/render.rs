//! Rendering `results.json` into report.md and SVG charts.

use std::path::{Path, PathBuf};

use dynaburst_bench::charts::{plan_charts, write_charts};
use dynaburst_bench::report::render_report;
use serde_json::{json, Value};

fn example() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/results-example.json");
    let text = std::fs::read_to_string(&path).expect("example results");
    serde_json::from_str(&text).expect("example parses")
}

/// A fresh directory under the system temp dir (no tempfile crate here).
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "dynaburst-bench-{name}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Text content of every `<text>` element, unescaped enough for asserts.
fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..];
            Some(body[..body.find("</text>")?].trim().replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))
        })
        .collect()
}

fn names(paths: &[PathBuf]) -> Vec<String> {
    paths.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect()
}

#[test]
fn report_has_every_scenario_and_the_seeds_numbers() {
    let md = render_report(&example());
    // Header.
    assert!(md.contains("`dynaburst bench all --out bench-out`"));
    assert!(md.contains("2026-11-20 23:06:40 UTC"));
    assert!(md.contains("312.5 s (5 min 12.5 s)"));
    assert!(md.contains("embedded dynaburst serve (capacity model on)"));
    assert!(md.contains("**Latency model:** none"));
    // Titles with seed ids, in seed order.
    let titles = [
        "## Seed 000: Write APIs: 10,000 people into a fresh on-demand table",
        "## Seed 001: Document size and writer count",
        "## Seed 002: Parallel loaders, and what throttling does to them",
        "## Seed 003: Latency of each write API (4,000 samples each)",
        "## Seed 004: Partition-key design, load order and capacity mode",
    ];
    let mut last = 0;
    for t in titles {
        let at = md.find(t).unwrap_or_else(|| panic!("missing {t:?} in\n{md}"));
        assert!(at >= last, "{t} out of order");
        last = at;
    }
    // Explanations.
    assert!(md.contains("seed 000 ran from a laptop in Japan"));
    // write-apis: ours 1.9 s beside the seed's 293.38 s, ratio, memory, count.
    assert!(md.contains("| PutItem, serial | 10,000 | 1.9 | 293.38 | 0.0065× | 1.2 | 40 | 10,000 |"), "{md}");
    assert!(md.contains("| BatchWriteItem of 25, serial | 10,000 | 0.12 | 14.45 |"));
    assert!(md.contains("![Wall seconds per write API, ours vs seed 000](write-apis.svg)"));
    // doc-size: seed figures, and a null seed rendered as a dash.
    assert!(md.contains("| 1 | 1 | 5,000 | 0.5 | 10 | 36 |"), "{md}");
    assert!(md.contains("| 10 | 8 | 40,000 | 2 | 20 | – | – |"), "{md}");
    // parallel-patterns: means, speed-ups over serial, and the burst losses.
    assert!(md.contains("| serial | 1,000 | 10 | 40 | 619 |"), "{md}");
    assert!(md.contains("| fork-join | 1,000 | 10 | 10 | 38 | 0.26× | 4× | 16× |"), "{md}");
    assert!(
        md.contains("| 100,000 | naive (ignores UnprocessedItems) | 1,200 | **98,800** | 0.1 | modelled |"),
        "{md}"
    );
    // latency: ours and the seed's percentiles.
    assert!(md.contains("| PutItem | ours | 4,000 | 0.1 | 0.2 | 0.3 | 0.35 | 0.5 | 2 |"), "{md}");
    assert!(md.contains("| PutItem | seed 003 | – | 5.47 | 7.55 | 11.3 | 13.2 | 16.2 | 29 |"), "{md}");
    assert!(
        md.contains("| TransactWrite - 5 items w/ failure | seed 003 | – | 19.8 | 25.3 | 30.6 | 34.2 | 84.9 | 254 |")
    );
    // partition-keys: rates beside the seed's, the lookup line, one chart per case.
    assert!(md.contains("| single-key | One partition-key value, new on-demand table | fig. 3 | 300,000 | 120 | 1,002 | 1,000 | 1× | [partition-keys-single-key.csv](partition-keys-single-key.csv) |"), "{md}");
    assert!(md.contains("| provisioned | Shuffled into a table provisioned at 10,000 WCU | fig. 7 | 300,000 | 34 | 8,800 | 6,000 | 1.5× |"), "{md}");
    assert!(
        md.contains("10,000 samples, 10,000 correct (100%); latency p50 0.2 ms, p99 0.6 ms (min 0.1 ms, max 3.1 ms)"),
        "{md}"
    );
    for case in ["single-key", "sorted", "shuffled", "provisioned"] {
        assert!(md.contains(&format!("(partition-keys-{case}.svg)")), "no chart link for {case}");
    }
    // Measured vs modelled.
    assert!(md.contains("Loads: modelled in virtual time by the capacity model"), "{md}");
    assert!(md.contains("Patterns: measured on this machine; burst: modelled in virtual time"), "{md}");
    assert!(md.contains("with no modelled service time and no network distance"));
}

#[test]
fn charts_are_written_with_titles_and_axis_labels() {
    let results = example();
    let dir = temp_dir("charts");
    let written = write_charts(&results, &dir).expect("charts written");
    assert_eq!(
        names(&written),
        [
            "write-apis.svg",
            "doc-size.svg",
            "parallel-patterns.svg",
            "latency.svg",
            "partition-keys-single-key.svg",
            "partition-keys-sorted.svg",
            "partition-keys-shuffled.svg",
            "partition-keys-provisioned.svg",
        ]
    );
    let expect: &[(&str, &[&str])] = &[
        (
            "write-apis.svg",
            &[
                "Seed 000: Write APIs: 10,000 people into a fresh on-demand table",
                "wall-clock time to write all items (s, log scale)",
                "PutItem, serial",
                "293.38 s",
                "1.9 s",
                "ours (dynaburst, this machine)",
                "seed 000 (published, against AWS)",
            ],
        ),
        (
            "doc-size.svg",
            &[
                "Seed 001: Document size and writer count",
                "concurrent writers (log₂ scale)",
                "documents written per millisecond",
                "100 fields per document",
                "seed 001",
            ],
        ),
        (
            "parallel-patterns.svg",
            &[
                "Seed 002: Parallel loaders, and what throttling does to them",
                "mean time per load of 1,000 items (ms, log scale)",
                "worker-master",
                "619 ms",
            ],
        ),
        (
            "latency.svg",
            &[
                "Seed 003: Latency of each write API (4,000 samples each)",
                "latency per request (ms, log scale)",
                "percentile of requests",
                "p99",
                "TransactWrite - 5 items w/ failure",
                "seed 003",
            ],
        ),
        (
            "partition-keys-single-key.svg",
            &[
                "Seed 004, figure 3: One partition-key value, new on-demand table",
                "seconds since the load started (s)",
                "write units per second (log scale)",
                "consumed write units/s",
                "throttled write units/s",
                "seed 004: 1,000/s",
            ],
        ),
        (
            "partition-keys-shuffled.svg",
            &[
                "Seed 004, figure 6: First octet as key, shuffled, new on-demand table",
                "write units per second",
                "seed 004: 3,600/s",
            ],
        ),
        (
            "partition-keys-provisioned.svg",
            &["Seed 004, figure 7: Shuffled into a table provisioned at 10,000 WCU", "10,000"],
        ),
    ];
    for (file, texts) in expect {
        let svg = std::fs::read_to_string(dir.join(file)).expect(file);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"), "{file} is not a whole SVG");
        assert!(svg.contains("width=\"800\"") && svg.contains("height=\"500\""), "{file} size");
        let found = svg_texts(&svg);
        for t in *texts {
            assert!(found.iter().any(|f| f == t), "{file}: no text {t:?} among {found:?}");
        }
    }
    if let Ok(keep) = std::env::var("DYNABURST_BENCH_KEEP_CHARTS") {
        write_charts(&results, Path::new(&keep)).expect("kept charts");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn one_scenario_renders_only_that_one() {
    let mut results = example();
    let latency = results["scenarios"]["latency"].take();
    results["scenarios"] = json!({ "latency": latency });
    let md = render_report(&results);
    assert!(md.contains("## Seed 003: Latency of each write API"));
    for other in ["Seed 000", "Seed 001", "Seed 002", "Seed 004", "write-apis.svg", "partition-keys"] {
        assert!(!md.contains(other), "{other} rendered without its scenario");
    }
    assert!(md.contains("![Latency percentiles per write API, ours vs seed 003](latency.svg)"));
    let dir = temp_dir("one");
    let written = write_charts(&results, &dir).expect("charts written");
    assert_eq!(names(&written), ["latency.svg"]);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn missing_fields_and_null_seeds_do_not_panic() {
    let results = json!({
        "scenarios": {
            "write-apis": { "rows": [ { "api": "PutItem, serial" }, { "wall_s": 1.0, "seed_wall_s": null } ] },
            "doc-size": { "rows": [ { "fields": 1, "writers": 1, "docs_per_ms": 3.0, "seed": null } ] },
            "parallel-patterns": { "patterns": [], "burst": [ { "loader": "x" } ] },
            "latency": { "rows": [ { "operation": "PutItem", "seed": null, "p50_ms": 0.0 } ] },
            "partition-keys": {
                "loads": [
                    { "case": "../odd name", "timeline": [ { "second": 0, "consumed": 5 } ] },
                    { "case": "empty", "timeline": [] }
                ],
                "lookup": { "samples": 0 }
            },
            "from-the-future": { "title": "Something new", "seed_id": "009" }
        }
    });
    let md = render_report(&results);
    assert!(md.contains("## Seed 000: write-apis"));
    assert!(md.contains("## Seed 009: Something new"));
    assert!(md.contains("| PutItem, serial | – | – | – | – | – | – | – |"), "{md}");
    let dir = temp_dir("sparse");
    let written = write_charts(&results, &dir).expect("charts written");
    assert_eq!(names(&written), ["write-apis.svg", "doc-size.svg", "partition-keys----odd-name.svg"]);
    assert!(written.iter().all(|p| p.parent() == Some(dir.as_path())));
    std::fs::remove_dir_all(&dir).ok();

    // Nothing at all.
    for empty in [json!({}), json!({ "scenarios": {} }), json!(null), json!({ "scenarios": [] })] {
        let md = render_report(&empty);
        assert!(md.starts_with("# dynaburst bench"));
        assert!(plan_charts(&empty).is_empty());
        let dir = temp_dir("empty");
        assert!(write_charts(&empty, &dir).expect("nothing to write").is_empty());
        assert!(!dir.exists(), "no directory for no charts");
    }
}

#[test]
fn unwritable_directory_is_an_error_not_a_panic() {
    let dir = temp_dir("blocked");
    std::fs::write(&dir, b"a file, not a directory").unwrap();
    let err = write_charts(&example(), &dir).expect_err("cannot write under a file");
    assert!(err.to_string().contains("cannot create chart directory"), "{err}");
    std::fs::remove_file(&dir).ok();
}
