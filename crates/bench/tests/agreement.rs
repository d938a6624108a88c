//! Every sentence of agreement in a report.md holds for the numbers it
//! names: each is re-checked here against results.json, read as plain JSON
//! (not through the renderer's types), so a sentence that claims agreement
//! the figures do not show fails.
//!
//! Checked: the committed runs under `bench/results/` that have both files
//! (their report.md as committed), and report.md rendered afresh from
//! those and from `testdata/results-example.json`.

use std::path::{Path, PathBuf};

use dynaburst_bench::report::render_report;
use dynaburst_bench::results::Results;
use serde_json::Value;

/// The targets the report states (seed 003: p50 within 0.5 ms, p99 within 10%).
const P50_TARGET_MS: f64 = 0.5;
const P99_TARGET_PERCENT: f64 = 10.0;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A number as the report prints it ("1,234.5", "+0.06", "-3.1%").
fn num(s: &str) -> f64 {
    let t = s.trim().trim_end_matches('%').replace(',', "");
    t.parse().unwrap_or_else(|e| panic!("not a number: {s:?}: {e}"))
}

/// The text between `before` and the next `after` in `s`.
fn between<'a>(s: &'a str, before: &str, after: &str) -> &'a str {
    let start = s.find(before).unwrap_or_else(|| panic!("no {before:?} in {s:?}")) + before.len();
    let rest = &s[start..];
    &rest[..rest.find(after).unwrap_or_else(|| panic!("no {after:?} after {before:?} in {s:?}"))]
}

/// Checks each latency agreement sentence of `report` against `results`;
/// returns how many it checked.
fn check_latency_sentences(report: &str, results: &Value, what: &str) -> usize {
    let rows = results["scenarios"]["latency"]["rows"].as_array().cloned().unwrap_or_default();
    let mut checked = 0;
    for line in report.lines() {
        let Some(sentence) = line.strip_prefix("- ") else { continue };
        let pct = if sentence.contains(" p50: ours ") {
            "p50"
        } else if sentence.contains(" p99: ours ") {
            "p99"
        } else {
            continue;
        };
        let operation = sentence[..sentence.find(&format!(" {pct}: ours ")).expect("found above")].replace("\\|", "|");
        let row = rows
            .iter()
            .find(|r| r["operation"].as_str() == Some(operation.as_str()))
            .unwrap_or_else(|| panic!("{what}: sentence about {operation:?}, which results.json lacks: {sentence}"));
        let key = format!("{pct}_ms");
        let ours = row[&key].as_f64().expect("ours");
        let seed = row["seed"][&key].as_f64().expect("seed's");
        let said_ours = num(between(sentence, "ours ", " ms"));
        let said_seed = num(between(sentence, ", seed ", " ms").split(' ').nth(1).expect("seed NNN value"));
        assert!((said_ours - ours).abs() <= 0.0051, "{what}: {sentence}: results.json has ours {ours}");
        assert!((said_seed - seed).abs() <= 0.0051, "{what}: {sentence}: results.json has the seed's {seed}");
        let said_met = sentence.ends_with("**met**.");
        assert!(said_met || sentence.ends_with("**not met**."), "{what}: no verdict: {sentence}");
        let (difference, met) = if pct == "p50" {
            let d = ours - seed;
            let said = num(between(sentence, "difference ", " ms"));
            assert!((said - d).abs() <= 0.0051, "{what}: {sentence}: the difference is {d:.3} ms");
            (d, d.abs() <= P50_TARGET_MS)
        } else {
            let d = (ours - seed) / seed * 100.0;
            let said = num(between(sentence, "difference ", "%"));
            assert!((said - d).abs() <= 0.051, "{what}: {sentence}: the difference is {d:.3}%");
            (d, d.abs() <= P99_TARGET_PERCENT)
        };
        assert_eq!(said_met, met, "{what}: {sentence}: the difference {difference:.3} says otherwise");
        checked += 1;
    }
    // The heading's count of targets met matches the sentences under it.
    if let Some(head) = report.lines().find(|l| l.starts_with("**Agreement with seed")) {
        let met = report.lines().filter(|l| l.starts_with("- ") && l.ends_with("**met**.")).count();
        let claimed = between(head, "; ", " of ");
        assert_eq!(num(claimed) as usize, met, "{what}: {head}");
    }
    checked
}

/// Checks the write APIs' "same order" claim: the seed's and our orders,
/// fastest first, as results.json has them.
fn check_order_sentence(report: &str, results: &Value, what: &str) {
    let Some(line) = report.lines().find(|l| l.starts_with("Fastest first: ours ")) else { return };
    let rows = results["scenarios"]["write-apis"]["rows"].as_array().cloned().unwrap_or_default();
    let mut with_seed: Vec<&Value> = rows.iter().filter(|r| r["seed_wall_s"].as_f64().is_some()).collect();
    let order = |rows: &mut Vec<&Value>, key: &str| {
        rows.sort_by(|a, b| a[key].as_f64().unwrap_or(f64::NAN).total_cmp(&b[key].as_f64().unwrap_or(f64::NAN)));
        rows.iter().map(|r| r["api"].as_str().unwrap_or("").to_string()).collect::<Vec<_>>().join(" < ")
    };
    let ours = order(&mut with_seed, "wall_s");
    let theirs = order(&mut with_seed, "seed_wall_s");
    assert!(line.contains(&format!("ours {ours};")), "{what}: {line} but results.json orders ours {ours}");
    assert_eq!(line.ends_with("(same order)."), ours == theirs, "{what}: {line}: ours {ours}, seed {theirs}");
}

/// Checks each "where the p99 comes from" sentence of `report`: the
/// modelled p99, the seed's, the local spread, the expected range, ours,
/// and the verdict, against `results`; returns how many it checked.
fn check_tail_sentences(report: &str, results: &Value, what: &str) -> usize {
    let latency = &results["scenarios"]["latency"];
    let rows = latency["rows"].as_array().cloned().unwrap_or_default();
    let cal = latency["calibration"].as_array().cloned().unwrap_or_default();
    let mut checked = 0;
    for line in report.lines() {
        let Some(sentence) = line.strip_prefix("- ") else { continue };
        let Some(at) = sentence.find(" tail: modelled p99 ") else { continue };
        let operation = sentence[..at].replace("\\|", "|");
        let row = rows.iter().find(|r| r["operation"].as_str() == Some(operation.as_str())).expect("its row");
        let c = cal.iter().find(|c| c["operation"].as_str() == Some(operation.as_str())).expect("its calibration");
        let modelled = c["modelled_p99_ms"].as_f64().expect("modelled p99");
        let spread =
            (c["local_p99_ms"].as_f64().expect("local p99") - c["local_p50_ms"].as_f64().expect("p50")).max(0.0);
        let (seed, ours) = (row["seed"]["p99_ms"].as_f64().expect("seed p99"), row["p99_ms"].as_f64().expect("p99"));
        let close = |said: &str, v: f64| assert!((num(said) - v).abs() <= 0.0051, "{what}: {sentence}: {v}");
        close(between(sentence, "modelled p99 ", " ms"), modelled);
        close(between(sentence, " (seed ", " ms").split(' ').nth(1).expect("seed NNN value"), seed);
        let off = (modelled - seed) / seed * 100.0;
        assert!((num(between(sentence, " ms, ", "%)")) - off).abs() <= 0.051, "{what}: {sentence}: {off}");
        close(between(sentence, "spread ", " ms"), spread);
        close(between(sentence, "client ", " to "), modelled);
        close(between(sentence, " to ", " ms;"), modelled + spread);
        close(between(sentence, "; ours ", " ms"), ours);
        let within = ours >= modelled && ours <= modelled + spread;
        assert_eq!(sentence.contains("**within it"), within, "{what}: {sentence}");
        assert_eq!(sentence.contains("**above it"), ours > modelled + spread, "{what}: {sentence}");
        assert_eq!(sentence.contains("**below"), ours < modelled, "{what}: {sentence}");
        checked += 1;
    }
    checked
}

fn check(report: &str, results_text: &str, what: &str) -> usize {
    let results: Value = serde_json::from_str(results_text).expect("results.json is JSON");
    check_order_sentence(report, &results, what);
    check_latency_sentences(report, &results, what) + check_tail_sentences(report, &results, what)
}

#[test]
fn every_agreement_sentence_holds_for_the_numbers_it_names() {
    let mut sources: Vec<PathBuf> = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/results-example.json")];
    let mut committed = Vec::new();
    let results_dir = workspace_root().join("bench/results");
    for entry in std::fs::read_dir(&results_dir).expect("bench/results") {
        let dir = entry.expect("entry").path();
        let json = dir.join("results.json");
        if json.is_file() {
            sources.push(json.clone());
            if dir.join("report.md").is_file() {
                committed.push(dir);
            }
        }
    }
    let mut checked = 0;
    for path in &sources {
        let text = std::fs::read_to_string(path).expect("read results.json");
        let results = Results::from_json(&text).expect("results.json loads");
        checked += check(&render_report(&results), &text, &format!("rendered from {}", path.display()));
    }
    // Tail sentences too: a calibration that recorded the modelled p99.
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&sources[0]).expect("example")).expect("JSON");
    v["scenarios"]["latency"]["calibration"] = serde_json::json!([
        { "operation": "PutItem", "probe_ms": 5.0, "samples": 800, "local_p50_ms": 0.1, "local_p99_ms": 0.4, "modelled_p99_ms": 0.3 },
        { "operation": "BatchWrite - 5 items", "probe_ms": 5.0, "samples": 800, "local_p50_ms": 0.1, "local_p99_ms": 0.2, "modelled_p99_ms": 0.5 },
        { "operation": "TransactWrite - 5 items w/ failure", "probe_ms": 5.0, "samples": 800, "local_p50_ms": 0.1, "local_p99_ms": 0.2, "modelled_p99_ms": 1.0 }
    ]);
    let text = v.to_string();
    let rendered = render_report(&Results::from_json(&text).expect("loads"));
    assert_eq!(check_tail_sentences(&rendered, &v, "the example with tails"), 3, "{rendered}");
    for verdict in ["**within it", "**above it", "**below that range**"] {
        assert!(rendered.contains(verdict), "{verdict}: {rendered}");
    }
    // The example's latency rows are far from the seed's: every target is
    // missed, and the report must say so.
    let example = std::fs::read_to_string(&sources[0]).expect("example");
    let rendered = render_report(&Results::from_json(&example).expect("example loads"));
    assert!(
        rendered.contains(
            "PutItem p50: ours 0.20 ms, seed 003 7.55 ms, difference -7.35 ms, target within 0.5 ms: **not met**."
        ),
        "{rendered}"
    );
    assert!(rendered.contains("(targets: p50 within 0.5 ms, p99 within 10%; 0 of 6 met)"), "{rendered}");
    for dir in &committed {
        let report = std::fs::read_to_string(dir.join("report.md")).expect("report.md");
        let results = std::fs::read_to_string(dir.join("results.json")).expect("results.json");
        checked += check(&report, &results, &format!("committed {}", dir.display()));
    }
    assert!(checked >= 6, "only {checked} sentences checked");
}
