//! Rendering `results.json` into report.md and SVG charts.

use std::path::{Path, PathBuf};

use dynaburst_bench::charts::{plan_charts, write_charts};
use dynaburst_bench::report::render_report;
use dynaburst_bench::results::{Results, Scenarios};
use serde_json::{json, Value};

fn example() -> Results {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/results-example.json");
    let text = std::fs::read_to_string(&path).expect("example results");
    Results::from_json(&text).expect("example parses")
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
            Some(
                body[..body.find("</text>")?]
                    .trim()
                    .replace("&apos;", "'")
                    .replace("&quot;", "\"")
                    .replace("&lt;", "<")
                    .replace("&gt;", ">")
                    .replace("&amp;", "&"),
            )
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
                "seed 001, one run each",
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
                "per second (log scale)",
                "ours: write units consumed/s",
                "ours: items throttled/s (offered, refused)",
                "seed 004: 1,000/s",
            ],
        ),
        (
            "partition-keys-shuffled.svg",
            &[
                "Seed 004, figure 6: First octet as key, shuffled, new on-demand table",
                "per second (log scale)",
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
    let latency = results.scenarios.latency.take();
    results.scenarios = Scenarios { latency, ..Scenarios::default() };
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

/// The run's own fields, without any scenario.
fn run_fields() -> Value {
    json!({
        "version": 1, "command": "dynaburst bench all", "started_at_unix_ms": 0, "duration_s": 1.0, "seed": 7,
        "endpoint": "http://127.0.0.1:8000", "latency_model": "none", "rtt_ms": 0.0, "scale": 0.05,
        "scenarios": {}
    })
}

fn head(seed_id: &str) -> Value {
    json!({ "seed_id": seed_id, "title": format!("Title {seed_id}"), "measured": true, "explanation": "Why." })
}

fn with(mut v: Value, extra: Value) -> Value {
    if let (Some(m), Value::Object(e)) = (v.as_object_mut(), extra) {
        m.extend(e);
    }
    v
}

#[test]
fn missing_fields_are_load_errors_that_name_the_field() {
    // What the renderer used to draw with dashes now does not load.
    let sparse = with(
        run_fields(),
        json!({ "scenarios": { "write-apis": with(head("000"), json!({ "rows": [ { "api": "PutItem, serial" } ] })) } }),
    );
    let err = serde_json::from_value::<Results>(sparse).expect_err("a row without figures");
    assert!(err.to_string().contains("scenario write-apis: missing field `items`"), "{err}");

    let mut no_wall = serde_json::to_value(example()).expect("serializes");
    no_wall["scenarios"]["latency"]["rows"][1].as_object_mut().expect("a row").remove("p99_ms");
    let err = serde_json::from_value::<Results>(no_wall).expect_err("a percentile missing");
    assert!(err.to_string().contains("scenario latency: missing field `p99_ms`"), "{err}");

    let mut no_title = serde_json::to_value(example()).expect("serializes");
    no_title["scenarios"]["doc-size"].as_object_mut().expect("doc-size").remove("title");
    let err = serde_json::from_value::<Results>(no_title).expect_err("no title");
    assert!(err.to_string().contains("scenario doc-size: missing field `title`"), "{err}");

    for bad in [json!({}), json!(null), with(run_fields(), json!({ "scenarios": [] }))] {
        assert!(serde_json::from_value::<Results>(bad.clone()).is_err(), "{bad} loaded");
    }
}

#[test]
fn null_seeds_empty_lists_and_unknown_scenarios_render() {
    let results: Results = serde_json::from_value(with(
        run_fields(),
        json!({ "scenarios": {
            "write-apis": with(head("000"), json!({ "rows": [
                { "api": "PutItem, serial", "items": 100, "wall_s": 1.0, "cpu_s": 0.5, "peak_memory_bytes": null,
                  "count_after": 90, "seed_wall_s": 293.38 }
            ] })),
            "doc-size": with(head("001"), json!({ "rows": [
                { "fields": 1, "writers": 1, "docs": 200, "bytes": 9000, "wall_s": 0.1, "docs_per_ms": 3.0,
                  "bytes_per_s": 90000.0, "peak_memory_bytes": 1000000, "seed": null }
            ] })),
            "parallel-patterns": with(head("002"), json!({ "patterns": [], "burst": [
                { "items": 100, "loader": "x", "modelled": false, "written": 100, "lost": 0, "seconds": 0.2 }
            ] })),
            "latency": with(head("003"), json!({ "rows": [
                { "operation": "PutItem", "samples": 0, "seed": null, "min_ms": 0.0, "p50_ms": 0.0, "p90_ms": 0.0,
                  "p95_ms": 0.0, "p99_ms": 0.0, "max_ms": 0.0 }
            ] })),
            "partition-keys": with(head("004"), json!({
                "loads": [
                    { "case": "../odd name", "label": "Odd", "modelled": true, "items": 5, "seconds": 1.0,
                      "rate_units_per_s": 5.0, "seed_rate": 0, "timeline_csv": "odd name.csv",
                      "timeline": [ { "second": 0, "consumed": 5.0, "throttled": 0 } ] },
                    { "case": "empty", "label": "Empty", "modelled": true, "items": 0, "seconds": 0.0,
                      "rate_units_per_s": 0.0, "seed_rate": 1000, "timeline_csv": "empty.csv", "timeline": [] }
                ],
                "lookup": { "samples": 0, "correct": 0, "latency_ms": { "min_ms": 0.0, "p50_ms": 0.0, "p90_ms": 0.0,
                  "p95_ms": 0.0, "p99_ms": 0.0, "max_ms": 0.0 } }
            })),
            "from-the-future": with(head("009"), json!({ "title": "Something new", "rows": [1, 2] }))
        } }),
    ))
    .expect("sparse but complete results load");
    let md = render_report(&results);
    assert!(md.contains("## Seed 000: Title 000"));
    assert!(md.contains("## Seed 009: Something new"));
    assert!(md.contains("(No table for this scenario yet: see `results.json`.)"));
    // A missing memory reading and items missing from the table.
    assert!(md.contains("| PutItem, serial | 100 | 1 | 293.38 | 0.0034× | 0.5 | – | 90 (**10 missing**) |"), "{md}");
    // No seed figure in any row (seed 001's are DocumentDB's): no seed columns.
    assert!(md.contains("| 1 | 1 | 200 | 0.1 | 3 | 0.09 | 1 |"), "{md}");
    assert!(!md.contains("Seed 001 docs/ms"), "{md}");
    assert!(md.contains("| PutItem | seed 003 | – | – | – | – | – | – | – |"), "{md}");
    assert!(md.contains("| 100 | x | 100 | 0 | 0.2 | measured |"), "{md}");
    assert!(md.contains("[odd name.csv](odd%20name.csv)"), "{md}");
    assert!(md.contains("0 samples, 0 correct; latency p50 0 ms"), "{md}");
    let dir = temp_dir("sparse");
    let written = write_charts(&results, &dir).expect("charts written");
    assert_eq!(names(&written), ["write-apis.svg", "doc-size.svg", "partition-keys----odd-name.svg"]);
    assert!(written.iter().all(|p| p.parent() == Some(dir.as_path())));
    std::fs::remove_dir_all(&dir).ok();

    // Nothing at all.
    let empty: Results = serde_json::from_value(run_fields()).expect("no scenario loads");
    let md = render_report(&empty);
    assert!(md.starts_with("# dynaburst bench"));
    assert!(md.ends_with("\nNo scenario ran.\n"), "{md}");
    assert!(plan_charts(&empty).is_empty());
    let dir = temp_dir("empty");
    assert!(write_charts(&empty, &dir).expect("nothing to write").is_empty());
    assert!(!dir.exists(), "no directory for no charts");
}

/// Every committed results.json, with its directory.
fn committed_results() -> Vec<(PathBuf, Value)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths = vec![root.join("testdata/results-example.json")];
    let runs = root.join("../../bench/results");
    let mut dirs: Vec<PathBuf> =
        std::fs::read_dir(&runs).expect("bench/results").map(|e| e.expect("entry").path()).collect();
    dirs.sort();
    paths.extend(dirs.into_iter().map(|d| d.join("results.json")).filter(|p| p.exists()));
    assert!(paths.len() >= 3, "{paths:?}");
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("committed results");
            let v = serde_json::from_str(&text).expect("committed results are JSON");
            (p, v)
        })
        .collect()
}

/// Whether every field of `old` is in `new` with the same value (numbers
/// compared as numbers: `1000` and `1000.0` are the same figure).
fn contained(old: &Value, new: &Value, at: &str) -> Result<(), String> {
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => a.iter().try_for_each(|(k, v)| match b.get(k) {
            Some(w) => contained(v, w, &format!("{at}.{k}")),
            None => Err(format!("{at}.{k} dropped")),
        }),
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            a.iter().zip(b).enumerate().try_for_each(|(i, (v, w))| contained(v, w, &format!("{at}[{i}]")))
        }
        (Value::Number(a), Value::Number(b)) if a.as_f64() == b.as_f64() => Ok(()),
        (a, b) if a == b => Ok(()),
        (a, b) => Err(format!("{at}: {a} became {b}")),
    }
}

#[test]
fn every_committed_results_file_loads_and_keeps_its_fields() {
    for (path, value) in committed_results() {
        let results: Results =
            serde_json::from_value(value.clone()).unwrap_or_else(|e| panic!("{} does not load: {e}", path.display()));
        assert!(!results.scenarios.is_empty(), "{}", path.display());
        let again = serde_json::to_value(&results).expect("serializes");
        contained(&value, &again, "").unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        // What writing adds is only the fields older files lack.
        let added: Vec<&String> =
            again.as_object().expect("an object").keys().filter(|k| value.get(k.as_str()).is_none()).collect();
        assert!(added.iter().all(|k| ["target", "real_time", "failures"].contains(&k.as_str())), "{added:?}");
        assert_eq!(serde_json::from_value::<Results>(again).expect("loads again"), results);
    }
}

/// The committed report.md and SVGs are the renderer's golden output: a
/// change that alters them re-renders them on purpose, with
/// `cargo run -p dynaburst-bench --example render -- bench/results/DIR/results.json bench/results/DIR`.
#[test]
fn committed_reports_and_charts_render_as_committed() {
    for (path, value) in committed_results() {
        let dir = path.parent().expect("a directory");
        if !dir.join("report.md").exists() {
            continue;
        }
        let results: Results = serde_json::from_value(value).expect("loads");
        let committed = std::fs::read_to_string(dir.join("report.md")).expect("report.md");
        assert_eq!(render_report(&results), committed, "{}", dir.display());
        for chart in plan_charts(&results) {
            let committed = std::fs::read_to_string(dir.join(&chart.file)).expect("committed chart");
            let svg = dynaburst_bench::charts::render_chart(&results, &chart).expect("renders");
            assert!(svg == committed, "{} differs from {}", chart.file, dir.display());
        }
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

fn index_trap_example() -> Results {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/results-index-trap.json");
    let text = std::fs::read_to_string(&path).expect("index-trap results");
    Results::from_json(&text).expect("index-trap results parse")
}

#[test]
fn the_index_trap_renders_its_numbers_the_trap_and_its_chart() {
    let results = index_trap_example();
    let md = render_report(&results);
    // Not a seed's experiment: the heading says which seed it follows.
    assert!(md.contains("## After seed 004: The index trap: a bulk load into a table with a low-cardinality GSI\n"));
    assert!(!md.contains("## Seed 004"), "{md}");
    assert!(md.contains("**How these figures were made:** No seed measured this"), "{md}");
    // One row per case: rates, the bound and what sets it, beside the table without a GSI.
    assert!(md.contains("| no-index | No GSI, new on-demand table | – | – | – | 24,000 | 5.82 | 4,124 | 4,000 | a new on-demand table's 4,000 WRU/s | 1× |"), "{md}");
    assert!(md.contains("| low-cardinality | GSI on status (3 values), new on-demand table | 3 | 2 of 4 | 66.67% | 24,000 | 15.71 | 1,528 | 1,500 | the GSI's busiest partition: 67% of its writes (2 of the 3 values of `status`) at 1,000 WCU | 0.37× |"), "{md}");
    assert!(md.contains("| high-cardinality | GSI on customer (5,000 values), new on-demand table | 5,000 | 4 of 4 | 25.51% | 24,000 | 5.84 | 4,110 | 4,000 |"), "{md}");
    assert!(md.contains("| provisioned-low-cardinality | GSI on status (3 values), table and GSI provisioned at 10,000 WCU | 3 | 3 of 11 | 33.33% | 24,000 | 7.71 | 3,113 | 3,000 |"), "{md}");
    assert!(md.contains("[index-trap-low-cardinality.csv](index-trap-low-cardinality.csv)"));
    // The trap, in words, with the numbers.
    assert!(md.contains("the GSI's 3 values landed in 2 of its partitions, the busiest taking 67% of the writes: the load ran at **1,528 items/s**, 0.37× the 4,124 items/s"), "{md}");
    assert!(md.contains("the load ran at **4,110 items/s** (1×)"), "{md}");
    assert!(md.contains("provisioned at 10,000 WCU, table and GSI, the same load ran at 3,113 items/s"), "{md}");
    assert!(md.contains("**Measured or modelled:** Loads: modelled in virtual time"), "{md}");
    assert!(
        md.contains("![Items written per second with no GSI, a GSI on 3 values and one on thousands](index-trap.svg)")
    );

    let planned = plan_charts(&results);
    assert_eq!(planned.iter().map(|c| c.file.as_str()).collect::<Vec<_>>(), ["index-trap.svg"]);
    let svg = dynaburst_bench::charts::render_chart(&results, &planned[0]).expect("renders");
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    let found = svg_texts(&svg);
    for t in [
        "Index trap: a GSI key of few values caps the whole load",
        "Items written per second, 24,000 shuffled orders into new tables (modelled) · after seed 004's figures",
        "seconds since the load started (s)",
        "items written per second",
        "no GSI: 4,124/s",
        "GSI on status (3 values): 1,528/s",
        "GSI on customer (5,000 values): 4,110/s",
        "GSI on status, provisioned: 3,113/s",
        "busiest partition of the GSI on status (3 values)",
        "a new on-demand table: 4,000 WRU/s",
        "one partition's maximum: 1,000 WCU/s",
    ] {
        assert!(found.iter().any(|f| f == t), "no text {t:?} among {found:?}");
    }

    // It round-trips, and the example without it still plans no index-trap chart.
    let again: Results = serde_json::from_value(serde_json::to_value(&results).expect("serializes")).expect("loads");
    assert_eq!(again, results);
    assert!(plan_charts(&example()).iter().all(|c| c.scenario != "index-trap"));
    let missing = {
        let mut v = serde_json::to_value(&results).expect("serializes");
        v["scenarios"]["index-trap"]["loads"][0].as_object_mut().expect("a load").remove("bound_items_per_s");
        v
    };
    let err = serde_json::from_value::<Results>(missing).expect_err("a load without its bound");
    assert!(err.to_string().contains("scenario index-trap: missing field `bound_items_per_s`"), "{err}");
}

#[test]
fn report_html_is_one_self_contained_file_with_the_web_views_charts() {
    let results = example();
    let dir = temp_dir("html");
    std::fs::create_dir_all(&dir).unwrap();
    let files = dynaburst_bench::run::render(&results, &dir).expect("renders");
    assert!(names(&files).contains(&"report.html".to_string()));
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    // The web view's own script and style, inline; nothing fetched.
    assert!(html.contains(dynaburst_server::web::APP_JS));
    assert!(html.contains(dynaburst_server::web::APP_CSS));
    assert!(!html.contains("src=\"http") && !html.contains("href=\"http"), "fetches nothing");
    assert!(html.contains("window.DYNABURST_STATIC = true;"));
    // The partition-keys loads as the page's tables, with their timelines.
    assert!(html.contains(r#""table":"partition keys: One partition-key value, new on-demand table""#), "{html}");
    assert!(html.contains(r#""write_units":"#));
    // Every chart report.md links to, inline.
    for chart in plan_charts(&results) {
        let svg = std::fs::read_to_string(dir.join(&chart.file)).unwrap();
        assert!(html.contains(&svg), "{} inline", chart.file);
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The example with what the bench records since issue 18: the client's
/// own peak memory beside seed 000's, each load's partitions and splits,
/// the lookup's saturation ramp, and the modelled p99 of each calibrated
/// latency configuration.
fn issue_18_example() -> Results {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/results-example.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("example")).expect("JSON");
    let s = &mut v["scenarios"];
    s["write-apis"]["client_process"] = json!(true);
    s["write-apis"]["rows"][0]["seed_peak_mb"] = json!(151.0);
    let sorted = &mut s["partition-keys"]["loads"][1];
    for (i, t) in sorted["timeline"].as_array_mut().expect("timeline").iter_mut().enumerate() {
        t["partitions"] = json!(4 + 2 * i);
        t["partitions_written"] = json!(1 + i);
    }
    sorted["splits"] = json!([
        { "at_s": 0.5, "reason": "heat", "partitions_after": 5 },
        { "at_s": 1.25, "reason": "heat", "partitions_after": 6 }
    ]);
    let step = |c: u64, rate: f64, p50: f64| {
        json!({ "concurrency": c, "lookups": (rate * 2.0) as u64, "correct": (rate * 2.0) as u64, "seconds": 2.0,
                "lookups_per_s": rate, "latency_ms": { "min_ms": 0.1, "p50_ms": p50, "p90_ms": p50, "p95_ms": p50,
                "p99_ms": p50 * 2.0, "max_ms": p50 * 3.0 } })
    };
    s["partition-keys"]["lookup"]["saturation"] = json!({
        "steps": [step(1, 90.0, 11.0), step(2, 180.0, 11.0), step(4, 2000.0, 2.0), step(8, 2010.0, 4.0), step(16, 1990.0, 8.0)],
        "growth_threshold": 0.05
    });
    s["latency"]["calibration"] = json!([
        { "operation": "PutItem", "probe_ms": 5.0, "samples": 800, "local_p50_ms": 0.1, "local_p99_ms": 0.4, "modelled_p99_ms": 16.3 },
        { "operation": "BatchWrite - 5 items", "probe_ms": 5.0, "samples": 800, "local_p50_ms": 0.1, "local_p99_ms": 0.2 }
    ]);
    serde_json::from_value(v).expect("the extended example loads")
}

#[test]
fn client_memory_partitions_splits_saturation_and_tails_render() {
    let results = issue_18_example();
    let md = render_report(&results);
    // Seed 000: the client's own peak memory beside the seed's.
    assert!(md.contains("| CPU s | Client peak MB | Seed 000 peak MB | Count after |"), "{md}");
    assert!(md.contains("| PutItem, serial | 10,000 | 1.9 | 293.38 | 0.0065× | 1.2 | 40 | 151 | 10,000 |"), "{md}");
    // Seed 004: partitions at the start and end, and the splits.
    assert!(md.contains("| Partitions (start → end) | Partitions written a second (median, max) | Splits |"), "{md}");
    assert!(md.contains("| 4 → 6 | 1 (max 2) | 2 (heat) at 0.5 and 1.25 s |"), "{md}");
    assert!(md.contains("| – | – | none |"), "a load without partitions: {md}");
    // The saturation ramp: its peak in bold, and what happened beyond it.
    assert!(md.contains("| 8 | 4,020 | 4,020 | 2 | **2,010** | 4 | 8 |"), "{md}");
    assert!(md.contains("The table sustained at most **2,010 lookups/s**, at 8 lookups in flight (p50 4 ms, p99 8 ms); more lookups in flight (up to 16) added less than 5% each."), "{md}");
    // Seed 003: the tail sentence, where the calibration has the modelled p99.
    assert!(md.contains("- PutItem tail: modelled p99 16.30 ms (seed 003 16.20 ms, +0.6%); local round-trip spread 0.30 ms; expected at the client 16.30 to 16.60 ms; ours 0.50 ms, **below that range**."), "{md}");
    assert!(!md.contains("BatchWrite - 5 items tail"), "no modelled p99, no sentence: {md}");
    // The sorted load's chart has the partitions panel with its splits.
    let chart = plan_charts(&results).into_iter().find(|c| c.file == "partition-keys-sorted.svg").expect("planned");
    let svg = dynaburst_bench::charts::render_chart(&results, &chart).expect("renders");
    assert!(svg.contains("width=\"800\"") && svg.contains("height=\"500\""));
    let texts = svg_texts(&svg);
    for t in ["partitions", "partitions; ▲ a split (partitions after it)", "4 partitions", "5", "6"] {
        assert!(texts.iter().any(|f| f == t), "no {t:?} among {texts:?}");
    }
    // Without partitions (the single-key load here) the chart has no panel.
    let chart = plan_charts(&results).into_iter().find(|c| c.file == "partition-keys-single-key.svg").expect("planned");
    let svg = dynaburst_bench::charts::render_chart(&results, &chart).expect("renders");
    assert!(!svg_texts(&svg).iter().any(|f| f == "partitions"));
}
