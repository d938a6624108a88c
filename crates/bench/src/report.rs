//! `report.md`: each scenario's figures beside the ones its seed published.
//!
//! [`render_report`] reads a `results.json` value (the shape of
//! `testdata/results-example.json`) and never fails: a missing scenario is
//! left out, a missing field renders as "–", a `null` seed object as "–" in
//! the seed's columns. Numbers are formatted for people ([`format_number`]):
//! 1,234 · 293.38 · 0.12.

use std::fmt::Write as _;

use serde_json::Value;

use crate::charts;

/// Scenario keys in the order of their seeds, with the seed each re-runs.
pub const SCENARIOS: [(&str, &str); 5] = [
    ("write-apis", "000"),
    ("doc-size", "001"),
    ("parallel-patterns", "002"),
    ("latency", "003"),
    ("partition-keys", "004"),
];

const MISSING: &str = "–";

/// Renders `report.md` for one `results.json`.
pub fn render_report(results: &Value) -> String {
    let mut out = String::new();
    header(&mut out, results);
    let empty = serde_json::Map::new();
    let scenarios = results.get("scenarios").and_then(Value::as_object).unwrap_or(&empty);
    if scenarios.is_empty() {
        out.push_str("\nNo scenario ran.\n");
        return out;
    }
    for (key, seed) in SCENARIOS {
        let Some(s) = scenarios.get(key) else {
            continue;
        };
        section_heading(&mut out, s, key, seed);
        match key {
            "write-apis" => write_apis(&mut out, s, seed),
            "doc-size" => doc_size(&mut out, s, seed),
            "parallel-patterns" => parallel_patterns(&mut out, s, seed),
            "latency" => latency(&mut out, results, s, seed),
            "partition-keys" => partition_keys(&mut out, results, s, seed),
            _ => {}
        }
        chart_links(&mut out, results, key);
    }
    // Scenarios this renderer does not know yet: title and explanation only.
    for (key, s) in scenarios {
        if SCENARIOS.iter().any(|(k, _)| k == key) {
            continue;
        }
        section_heading(&mut out, s, key, str_of(s, "seed_id").unwrap_or("?"));
        out.push_str("(No table for this scenario yet: see `results.json`.)\n");
    }
    out
}

fn header(out: &mut String, r: &Value) {
    out.push_str("# dynaburst bench\n\n");
    out.push_str(
        "Each write-up in `../shared/seeds` re-run on this machine, with the figures it \
         published beside ours.\n\n",
    );
    let command = str_of(r, "command").unwrap_or(MISSING);
    let _ = writeln!(out, "- **Command:** `{}`", command.replace('`', "'"));
    let when = num(r, "started_at_unix_ms").map(|ms| format_unix_ms(ms as i64)).unwrap_or_else(|| MISSING.into());
    let _ = writeln!(out, "- **Started:** {when}");
    let _ = writeln!(out, "- **Duration:** {}", opt(num(r, "duration_s"), format_duration));
    let _ = writeln!(out, "- **Endpoint:** {}", str_of(r, "endpoint").unwrap_or(MISSING));
    let _ = writeln!(out, "- **Latency model:** {}", str_of(r, "latency_model").unwrap_or(MISSING));
    let _ =
        writeln!(out, "- **Added round-trip time:** {}", opt(num(r, "rtt_ms"), |v| format!("{} ms", format_number(v))));
    let _ = writeln!(out, "- **Scale:** {}", opt(num(r, "scale"), format_number));
    let _ = writeln!(out, "- **Random seed:** {}", json_scalar(r.get("seed")));
    out.push('\n');
}

fn section_heading(out: &mut String, s: &Value, key: &str, seed: &str) {
    let seed = str_of(s, "seed_id").unwrap_or(seed);
    let title = str_of(s, "title").unwrap_or(key);
    let _ = writeln!(out, "## Seed {seed}: {title}\n");
    if let Some(e) = str_of(s, "explanation") {
        let _ = writeln!(out, "**Why our numbers differ:** {e}\n");
    }
}

fn chart_links(out: &mut String, results: &Value, key: &str) {
    let planned: Vec<_> = charts::plan_charts(results).into_iter().filter(|c| c.scenario == key).collect();
    for c in &planned {
        let _ = writeln!(out, "![{}]({})\n", c.alt, c.file);
    }
}

// ---------------------------------------------------------------- write-apis

fn write_apis(out: &mut String, s: &Value, seed: &str) {
    let rows = list(s, "rows");
    table_header(
        out,
        &[
            ("API", false),
            ("Items", true),
            ("Ours wall s", true),
            (&format!("Seed {seed} wall s"), true),
            ("Ours/seed", true),
            ("CPU s", true),
            ("Peak MB", true),
            ("Count after", true),
        ],
    );
    for r in rows {
        let items = num(r, "items");
        let count = num(r, "count_after");
        let count_cell = match (count, items) {
            (Some(c), Some(i)) if c < i => {
                format!("{} (**{} missing**)", format_count(c), format_count(i - c))
            }
            (Some(c), _) => format_count(c),
            _ => MISSING.into(),
        };
        table_row(
            out,
            &[
                cell_str(r, "api"),
                opt(items, format_count),
                opt(num(r, "wall_s"), format_number),
                opt(num(r, "seed_wall_s"), format_number),
                ratio(num(r, "wall_s"), num(r, "seed_wall_s")),
                opt(num(r, "cpu_s"), format_number),
                opt(num(r, "peak_memory_bytes"), format_mb),
                count_cell,
            ],
        );
    }
    out.push('\n');
    // Rank only the APIs both sides timed, so that the orders are comparable.
    let both: Vec<&Value> =
        rows.iter().filter(|r| num(r, "wall_s").is_some() && num(r, "seed_wall_s").is_some()).collect();
    let order = |field: &str| -> Option<String> {
        let mut v: Vec<(f64, &str)> = both.iter().filter_map(|r| Some((num(r, field)?, str_of(r, "api")?))).collect();
        if v.len() < 2 {
            return None;
        }
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        Some(v.iter().map(|(_, a)| *a).collect::<Vec<_>>().join(" < "))
    };
    if let (Some(ours), Some(theirs)) = (order("wall_s"), order("seed_wall_s")) {
        let verdict = if ours == theirs { "same order" } else { "the order differs" };
        let _ = writeln!(out, "Fastest first: ours {ours}; seed {seed} {theirs} ({verdict}).\n");
    }
    provenance(out, s, &[("all APIs", rows)], seed);
}

// ------------------------------------------------------------------ doc-size

fn doc_size(out: &mut String, s: &Value, seed: &str) {
    let mut rows: Vec<&Value> = list(s, "rows").iter().collect();
    rows.sort_by(|a, b| {
        let k = |r: &Value| (num(r, "fields").unwrap_or(f64::MAX), num(r, "writers").unwrap_or(f64::MAX));
        let (ka, kb) = (k(a), k(b));
        ka.0.total_cmp(&kb.0).then(ka.1.total_cmp(&kb.1))
    });
    table_header(
        out,
        &[
            ("Fields", true),
            ("Writers", true),
            ("Docs", true),
            ("Ours wall s", true),
            ("Ours docs/ms", true),
            (&format!("Seed {seed} docs/ms"), true),
            ("Ours/seed", true),
            ("Ours MB/s", true),
            (&format!("Seed {seed} MB/s"), true),
            ("Peak MB", true),
        ],
    );
    for r in &rows {
        let sd = seed_obj(r);
        let seed_dpm = sd.and_then(|x| num(x, "docs_per_ms"));
        table_row(
            out,
            &[
                opt(num(r, "fields"), format_count),
                opt(num(r, "writers"), format_count),
                opt(num(r, "docs"), format_count),
                opt(num(r, "wall_s"), format_number),
                opt(num(r, "docs_per_ms"), format_number),
                opt(seed_dpm, format_number),
                ratio(num(r, "docs_per_ms"), seed_dpm),
                opt(num(r, "bytes_per_s"), format_mb),
                opt(sd.and_then(|x| num(x, "mb_per_s")), format_number),
                opt(num(r, "peak_memory_bytes"), format_mb),
            ],
        );
    }
    out.push('\n');
    let memory = list(s, "memory");
    if !memory.is_empty() {
        out.push_str("**Client memory by document count** (the loader's peak resident memory; seed 001's client passed 400 GB at 3.2 million documents):\n\n");
        table_header(
            out,
            &[("Docs", true), ("Fields", true), ("Writers", true), ("Ours docs/ms", true), ("Peak MB", true)],
        );
        for r in memory {
            table_row(
                out,
                &[
                    opt(num(r, "docs"), format_count),
                    opt(num(r, "fields"), format_count),
                    opt(num(r, "writers"), format_count),
                    opt(num(r, "docs_per_ms"), format_number),
                    opt(num(r, "peak_memory_bytes"), format_mb),
                ],
            );
        }
        out.push('\n');
        let peaks: Vec<f64> = memory.iter().filter_map(|r| num(r, "peak_memory_bytes")).collect();
        if let (Some(first), Some(last)) = (peaks.first(), peaks.last()) {
            if peaks.len() > 1 && *first > 0.0 {
                out.push_str(&format!("Largest run's peak over the smallest's: **{:.2}×**.\n\n", last / first));
            }
        }
    }
    let rows: Vec<Value> = rows.into_iter().cloned().collect();
    provenance(out, s, &[("every size and writer count", &rows)], seed);
}

// --------------------------------------------------------- parallel-patterns

fn parallel_patterns(out: &mut String, s: &Value, seed: &str) {
    let patterns = list(s, "patterns");
    if !patterns.is_empty() {
        let serial = patterns.iter().find(|p| str_of(p, "pattern") == Some("serial"));
        let ours_serial = serial.and_then(|p| num(p, "mean_ms"));
        let seed_serial = serial.and_then(|p| num(p, "seed_mean_ms"));
        let speedups = ours_serial.is_some() || seed_serial.is_some();
        let seed_mean = format!("Seed {seed} mean ms");
        let seed_speedup = format!("Seed {seed} speed-up vs serial");
        let mut cols: Vec<(&str, bool)> = vec![
            ("Pattern", false),
            ("Items", true),
            ("Trials", true),
            ("Ours mean ms", true),
            (&seed_mean, true),
            ("Ours/seed", true),
        ];
        if speedups {
            cols.push(("Ours speed-up vs serial", true));
            cols.push((&seed_speedup, true));
        }
        table_header(out, &cols);
        for p in patterns {
            let mut cells = vec![
                cell_str(p, "pattern"),
                opt(num(p, "items"), format_count),
                opt(num(p, "trials"), format_count),
                opt(num(p, "mean_ms"), format_number),
                opt(num(p, "seed_mean_ms"), format_number),
                ratio(num(p, "mean_ms"), num(p, "seed_mean_ms")),
            ];
            if speedups {
                cells.push(ratio(ours_serial, num(p, "mean_ms")));
                cells.push(ratio(seed_serial, num(p, "seed_mean_ms")));
            }
            table_row(out, &cells);
        }
        out.push('\n');
    }
    let burst = list(s, "burst");
    if !burst.is_empty() {
        out.push_str("**A burst of writes against throttling:** what a loader that ignores UnprocessedItems loses, and what `dynaburst load` does instead.\n\n");
        table_header(
            out,
            &[
                ("Items", true),
                ("Loader", false),
                ("Written", true),
                ("Lost", true),
                ("Seconds", true),
                ("Measured or modelled", false),
            ],
        );
        for b in burst {
            let lost = num(b, "lost");
            let lost_cell = match lost {
                Some(l) if l > 0.0 => format!("**{}**", format_count(l)),
                Some(l) => format_count(l),
                None => MISSING.into(),
            };
            table_row(
                out,
                &[
                    opt(num(b, "items"), format_count),
                    cell_str(b, "loader"),
                    opt(num(b, "written"), format_count),
                    lost_cell,
                    opt(num(b, "seconds"), format_number),
                    kind_of(b, s).to_string(),
                ],
            );
        }
        out.push('\n');
    }
    provenance(out, s, &[("patterns", patterns), ("burst", burst)], seed);
}

// ------------------------------------------------------------------- latency

const PERCENTILES: [(&str, &str); 6] =
    [("min_ms", "min"), ("p50_ms", "p50"), ("p90_ms", "p90"), ("p95_ms", "p95"), ("p99_ms", "p99"), ("max_ms", "max")];

fn latency(out: &mut String, results: &Value, s: &Value, seed: &str) {
    let rows = list(s, "rows");
    let mut cols: Vec<(String, bool)> =
        vec![("Operation".into(), false), ("Source".into(), false), ("Samples".into(), true)];
    cols.extend(PERCENTILES.iter().map(|(_, p)| (format!("{p} ms"), true)));
    let cols_ref: Vec<(&str, bool)> = cols.iter().map(|(c, r)| (c.as_str(), *r)).collect();
    table_header(out, &cols_ref);
    for r in rows {
        let op = cell_str(r, "operation");
        let mut ours = vec![op.clone(), "ours".into(), opt(num(r, "samples"), format_count)];
        ours.extend(PERCENTILES.iter().map(|(k, _)| opt(num(r, k), format_number)));
        table_row(out, &ours);
        let sd = seed_obj(r);
        let mut theirs = vec![op, format!("seed {seed}"), opt(sd.and_then(|x| num(x, "samples")), format_count)];
        theirs.extend(PERCENTILES.iter().map(|(k, _)| opt(sd.and_then(|x| num(x, k)), format_number)));
        table_row(out, &theirs);
    }
    out.push('\n');
    if let Some(ratio_line) = latency_p50_line(rows, seed) {
        out.push_str(&ratio_line);
    }
    let _ = writeln!(
        out,
        "**Measured or modelled:** {} Seed {seed}'s rows are as it published them, measured against AWS.\n",
        capitalize(&latency_provenance(results))
    );
}

fn latency_p50_line(rows: &[Value], seed: &str) -> Option<String> {
    let parts: Vec<String> = rows
        .iter()
        .filter_map(|r| {
            let ours = num(r, "p50_ms")?;
            let theirs = seed_obj(r).and_then(|x| num(x, "p50_ms"))?;
            Some(format!("{} {} ms vs {} ms", str_of(r, "operation")?, format_number(ours), format_number(theirs)))
        })
        .collect();
    if parts.is_empty() {
        return None;
    }
    Some(format!("Median, ours vs seed {seed}: {}.\n\n", parts.join("; ")))
}

fn latency_provenance(results: &Value) -> String {
    let model = str_of(results, "latency_model").unwrap_or("none");
    let rtt = num(results, "rtt_ms").unwrap_or(0.0);
    let mut s = String::from("our latencies are measured round trips on this machine");
    if model != "none" {
        let _ = write!(s, ", including the server's modelled service time (latency model `{model}`)");
    }
    if rtt > 0.0 {
        let _ = write!(s, ", with {} ms of round-trip time added", format_number(rtt));
    }
    if model == "none" && rtt <= 0.0 {
        s.push_str(", with no modelled service time and no network distance");
    }
    s.push('.');
    s
}

// ------------------------------------------------------------ partition-keys

fn partition_keys(out: &mut String, results: &Value, s: &Value, seed: &str) {
    let loads = list(s, "loads");
    if !loads.is_empty() {
        let seed_rate = format!("Seed {seed} units/s");
        table_header(
            out,
            &[
                ("Case", false),
                ("Load", false),
                ("Seed figure", false),
                ("Items", true),
                ("Ours s", true),
                ("Ours units/s", true),
                (&seed_rate, true),
                ("Ours/seed", true),
                ("Per-second timeline", false),
            ],
        );
        for l in loads {
            let case = str_of(l, "case").unwrap_or("");
            let fig = charts::seed_figure(case).map(|f| format!("fig. {f}")).unwrap_or_else(|| MISSING.into());
            let csv = str_of(l, "timeline_csv")
                .map(|f| format!("[{}]({})", md_escape(f), f.replace(' ', "%20")))
                .unwrap_or_else(|| MISSING.into());
            table_row(
                out,
                &[
                    cell_str(l, "case"),
                    cell_str(l, "label"),
                    fig,
                    opt(num(l, "items"), format_count),
                    opt(num(l, "seconds"), format_number),
                    opt(num(l, "rate_units_per_s"), format_number),
                    opt(num(l, "seed_rate"), format_number),
                    ratio(num(l, "rate_units_per_s"), num(l, "seed_rate")),
                    csv,
                ],
            );
        }
        out.push('\n');
    }
    if let Some(lk) = s.get("lookup").filter(|v| v.is_object()) {
        let samples = num(lk, "samples");
        let correct = num(lk, "correct");
        let share = match (samples, correct) {
            (Some(n), Some(c)) if n > 0.0 => format!(" ({}%)", format_number(100.0 * c / n)),
            _ => String::new(),
        };
        let lat = lk.get("latency_ms").unwrap_or(&Value::Null);
        let ms = |k: &str| opt(num(lat, k), |v| format!("{} ms", format_number(v)));
        let _ = writeln!(
            out,
            "**Lookup** (the IP-range query of seed {seed}): {} samples, {} correct{share}; \
             latency p50 {}, p99 {} (min {}, max {}). {}\n",
            opt(samples, format_count),
            opt(correct, format_count),
            ms("p50_ms"),
            ms("p99_ms"),
            ms("min_ms"),
            ms("max_ms"),
            capitalize(&latency_provenance(results)),
        );
    }
    provenance(out, s, &[("loads", loads)], seed);
}

// ---------------------------------------------------------------- provenance

/// "modelled" or "measured" for one row: its own `modelled` flag, else the
/// scenario's `measured` flag.
fn kind_of(row: &Value, scenario: &Value) -> &'static str {
    match row.get("modelled").and_then(Value::as_bool) {
        Some(true) => "modelled",
        Some(false) => "measured",
        None => match scenario.get("measured").and_then(Value::as_bool) {
            Some(false) => "modelled",
            _ => "measured",
        },
    }
}

fn provenance(out: &mut String, s: &Value, groups: &[(&str, &[Value])], seed: &str) {
    let mut parts = Vec::new();
    for (name, rows) in groups {
        if rows.is_empty() {
            continue;
        }
        let modelled = rows.iter().filter(|r| kind_of(r, s) == "modelled").count();
        let part = if modelled == 0 {
            format!("{name}: measured on this machine")
        } else if modelled == rows.len() {
            format!("{name}: modelled in virtual time by the capacity model (no wall-clock wait)")
        } else {
            format!(
                "{name}: {modelled} of {} rows modelled in virtual time by the capacity model, the rest measured",
                rows.len()
            )
        };
        parts.push(part);
    }
    if parts.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "**Measured or modelled:** {}. Seed {seed}'s figures are as it published them, measured against AWS.\n",
        capitalize(&parts.join("; "))
    );
}

// ------------------------------------------------------------- table helpers

fn table_header(out: &mut String, cols: &[(&str, bool)]) {
    out.push('|');
    for (c, _) in cols {
        let _ = write!(out, " {} |", md_escape(c));
    }
    out.push_str("\n|");
    for (_, right) in cols {
        out.push_str(if *right { "---:|" } else { "---|" });
    }
    out.push('\n');
}

fn table_row(out: &mut String, cells: &[String]) {
    out.push('|');
    for c in cells {
        let _ = write!(out, " {c} |");
    }
    out.push('\n');
}

fn cell_str(v: &Value, key: &str) -> String {
    match v.get(key) {
        Some(Value::String(s)) => md_escape(s),
        Some(Value::Null) | None => MISSING.into(),
        Some(other) => md_escape(&other.to_string()),
    }
}

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn json_scalar(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => MISSING.into(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| MISSING.into())
}

fn ratio(ours: Option<f64>, theirs: Option<f64>) -> String {
    match (ours, theirs) {
        (Some(a), Some(b)) if b != 0.0 => format_ratio(a / b),
        _ => MISSING.into(),
    }
}

// -------------------------------------------------------------- JSON helpers

/// A finite number field (integers, decimals and numbers in strings' clothing
/// are all read through `as_f64`).
pub(crate) fn num(v: &Value, key: &str) -> Option<f64> {
    v.get(key)?.as_f64().filter(|x| x.is_finite())
}

pub(crate) fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key)?.as_str()
}

pub(crate) fn list<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])
}

/// A row's `seed` object, or `None` when it is missing or `null`.
pub(crate) fn seed_obj(row: &Value) -> Option<&Value> {
    row.get("seed").filter(|s| s.is_object())
}

// ---------------------------------------------------------------- formatting

/// A number for people: integers from 1,000 up with thousands separators
/// (`1,234`), at most two decimals from 1 to 1,000 (`293.38`, `1.9`), three
/// significant digits below 1 (`0.12`, `0.0065`). Trailing zeros are dropped.
pub fn format_number(v: f64) -> String {
    if !v.is_finite() {
        return MISSING.into();
    }
    let a = v.abs();
    let s = if a >= 999.995 {
        return format_thousands(v.round());
    } else if a >= 1.0 || a == 0.0 {
        format!("{v:.2}")
    } else {
        let digits = (-a.log10().floor()) as usize + 2;
        format!("{v:.digits$}")
    };
    trim_zeros(&s)
}

/// A whole number with thousands separators: `300,000`.
pub fn format_count(v: f64) -> String {
    if !v.is_finite() {
        return MISSING.into();
    }
    format_thousands(v.round())
}

fn format_thousands(v: f64) -> String {
    let neg = v < 0.0;
    let digits = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    if neg {
        out.insert(0, '-');
    }
    out
}

fn trim_zeros(s: &str) -> String {
    if !s.contains('.') {
        return s.to_string();
    }
    let t = s.trim_end_matches('0').trim_end_matches('.');
    if t == "-0" {
        "0".into()
    } else {
        t.to_string()
    }
}

/// A ratio: `0.0065×`, `0.83×`, `12×`, `154×`.
pub fn format_ratio(v: f64) -> String {
    if !v.is_finite() {
        return MISSING.into();
    }
    let s = if v.abs() >= 10.0 {
        format_thousands(v.round())
    } else if v == 0.0 {
        "0".into()
    } else {
        let digits = ((1.0 - v.abs().log10().floor()) as i64).max(0) as usize;
        trim_zeros(&format!("{v:.digits$}"))
    };
    format!("{s}×")
}

/// Bytes as decimal megabytes: `40 MB` (no unit when used in an "MB" column).
fn format_mb(bytes: f64) -> String {
    format_number(bytes / 1e6)
}

fn format_duration(s: f64) -> String {
    if s < 60.0 {
        return format!("{} s", format_number(s));
    }
    let whole = s.floor() as u64;
    let (h, m) = (whole / 3600, (whole % 3600) / 60);
    let rest = s - (h * 3600 + m * 60) as f64;
    let secs = trim_zeros(&format!("{rest:.1}"));
    let human = if h > 0 { format!("{h} h {m} min {secs} s") } else { format!("{m} min {secs} s") };
    format!("{} s ({human})", format_number(s))
}

/// `2026-11-21 10:13:20 UTC` from Unix milliseconds (proleptic Gregorian).
fn format_unix_ms(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC", sod / 3600, (sod % 3600) / 60, sod % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_like_people_write_them() {
        assert_eq!(format_number(1.9), "1.9");
        assert_eq!(format_number(293.38), "293.38");
        assert_eq!(format_number(0.12), "0.12");
        assert_eq!(format_number(0.0065), "0.0065");
        assert_eq!(format_number(12.34), "12.34");
        assert_eq!(format_number(254.0), "254");
        assert_eq!(format_number(1002.0), "1,002");
        assert_eq!(format_number(300000.0), "300,000");
        assert_eq!(format_number(0.0), "0");
        assert_eq!(format_number(-1234.0), "-1,234");
        assert_eq!(format_number(f64::NAN), "–");
        assert_eq!(format_count(1234567.0), "1,234,567");
        assert_eq!(format_count(999.0), "999");
        assert_eq!(format_ratio(1.9 / 293.38), "0.0065×");
        assert_eq!(format_ratio(619.0 / 38.0), "16×");
        assert_eq!(format_ratio(0.834), "0.83×");
        assert_eq!(format_ratio(1.0), "1×");
    }

    #[test]
    fn dates_and_durations() {
        assert_eq!(format_unix_ms(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(format_unix_ms(951_782_400_000), "2000-02-29 00:00:00 UTC");
        assert_eq!(format_unix_ms(1_795_216_000_000), "2026-11-20 23:06:40 UTC");
        assert_eq!(format_duration(12.5), "12.5 s");
        assert_eq!(format_duration(312.5), "312.5 s (5 min 12.5 s)");
        assert_eq!(format_duration(3725.0), "3,725 s (1 h 2 min 5 s)");
    }
}
