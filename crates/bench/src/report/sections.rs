//! One table per scenario, each beside the seed's published figures.

use std::fmt::Write as _;

use super::markdown::{capitalize, md_escape, opt, ratio, table_header, table_row};
use super::{latency_provenance, provenance};
use crate::format::{format_count, format_mb, format_number, MISSING};
use crate::results::{
    DocSize, IndexTrap, Latency, LatencyRow, ParallelPatterns, PartitionKeys, Percentiles, Results, Scenario, WriteApis,
};

// ---------------------------------------------------------------- write-apis

pub(super) fn write_apis(out: &mut String, s: &Scenario<WriteApis>) {
    let seed = s.seed_id.as_str();
    let rows = &s.figures.rows;
    // The client's own peak memory stands beside the seed's (its Node
    // process's); the whole bench process's (older results), server
    // included, beside nothing.
    let client = s.figures.client_process;
    let (seed_wall, seed_peak) = (format!("Seed {seed} wall s"), format!("Seed {seed} peak MB"));
    let mut cols = vec![
        ("API", false),
        ("Items", true),
        ("Ours wall s", true),
        (seed_wall.as_str(), true),
        ("Ours/seed", true),
        ("CPU s", true),
    ];
    if client {
        cols.extend([("Client peak MB", true), (seed_peak.as_str(), true)]);
    } else {
        cols.push(("Peak MB", true));
    }
    cols.push(("Count after", true));
    table_header(out, &cols);
    for r in rows {
        let count_cell = if r.count_after < r.items {
            format!(
                "{} (**{} missing**)",
                format_count(r.count_after as f64),
                format_count((r.items - r.count_after) as f64)
            )
        } else {
            format_count(r.count_after as f64)
        };
        let mut cells = vec![
            md_escape(&r.api),
            format_count(r.items as f64),
            format_number(r.wall_s),
            opt(r.seed_wall_s, format_number),
            ratio(Some(r.wall_s), r.seed_wall_s),
            format_number(r.cpu_s),
            opt(r.peak_memory_bytes, |b| format_mb(b as f64)),
        ];
        if client {
            cells.push(opt(r.seed_peak_mb, format_number));
        }
        cells.push(count_cell);
        table_row(out, &cells);
    }
    out.push('\n');
    // Fastest first, ours and the seed's, over the APIs the seed ran, so
    // that the orders are comparable.
    let order = |time: fn(&crate::results::WriteApiRow) -> f64| -> Option<String> {
        let mut v: Vec<(f64, &str)> =
            rows.iter().filter(|r| r.seed_wall_s.is_some()).map(|r| (time(r), r.api.as_str())).collect();
        if v.len() < 2 {
            return None;
        }
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        Some(v.iter().map(|(_, a)| *a).collect::<Vec<_>>().join(" < "))
    };
    if let (Some(ours), Some(theirs)) = (order(|r| r.wall_s), order(|r| r.seed_wall_s.unwrap_or(f64::NAN))) {
        let verdict = if ours == theirs { "same order" } else { "the order differs" };
        let _ = writeln!(out, "Fastest first: ours {ours}; seed {seed} {theirs} ({verdict}).\n");
    }
    provenance(out, &[("all APIs", vec![!s.measured; rows.len()])], seed);
}

// ------------------------------------------------------------------ doc-size

pub(super) fn doc_size(out: &mut String, s: &Scenario<DocSize>) {
    let seed = s.seed_id.as_str();
    let mut rows: Vec<_> = s.figures.rows.iter().collect();
    rows.sort_by_key(|r| (r.fields, r.writers));
    // Seed 001 measured DocumentDB: its columns stand only beside rows
    // that carry its figures (a MongoDB-compatible target).
    let with_seed = rows.iter().any(|r| r.seed.is_some());
    let seed_dpm_col = format!("Seed {seed} docs/ms");
    let seed_mbs_col = format!("Seed {seed} MB/s");
    let mut cols: Vec<(&str, bool)> =
        vec![("Fields", true), ("Writers", true), ("Docs", true), ("Ours wall s", true), ("Ours docs/ms", true)];
    if with_seed {
        cols.extend([(seed_dpm_col.as_str(), true), ("Ours/seed", true)]);
    }
    cols.push(("Ours MB/s", true));
    if with_seed {
        cols.push((seed_mbs_col.as_str(), true));
    }
    cols.push(("Peak MB", true));
    table_header(out, &cols);
    let mut inconsistent = Vec::new();
    for r in &rows {
        let seed_dpm = r.seed.as_ref().map(|x| x.docs_per_ms);
        let mut cells = vec![
            format_count(r.fields as f64),
            format_count(r.writers as f64),
            format_count(r.docs as f64),
            format_number(r.wall_s),
            format_number(r.docs_per_ms),
        ];
        if with_seed {
            cells.extend([opt(seed_dpm, format_number), ratio(Some(r.docs_per_ms), seed_dpm)]);
        }
        cells.push(format_mb(r.bytes_per_s));
        if with_seed {
            let mbs = match &r.seed {
                Some(x) if x.inconsistent(r.fields) => {
                    inconsistent.push((r.fields, r.writers, x.clone()));
                    format!("{} (†)", format_number(x.mb_per_s))
                }
                Some(x) => format_number(x.mb_per_s),
                None => MISSING.to_string(),
            };
            cells.push(mbs);
        }
        cells.push(opt(r.peak_memory_bytes, |b| format_mb(b as f64)));
        table_row(out, &cells);
    }
    out.push('\n');
    for (fields, writers, x) in &inconsistent {
        let stated = crate::results::seed_001_doc_bytes(*fields).unwrap_or(f64::NAN);
        let _ = writeln!(
            out,
            "(†) Seed {seed}'s row for {} field{} and {} writer{} contradicts itself: {} MB/s at {} docs/ms means {} bytes per document, while the seed states {} bytes for {} field{}. Its docs/ms is compared above; its MB/s is shown as published and compared with nothing.\n",
            format_count(*fields as f64),
            if *fields == 1 { "" } else { "s" },
            format_count(*writers as f64),
            if *writers == 1 { "" } else { "s" },
            format_number(x.mb_per_s),
            format_number(x.docs_per_ms),
            format_count(x.implied_doc_bytes().round()),
            format_count(stated),
            format_count(*fields as f64),
            if *fields == 1 { "" } else { "s" },
        );
    }
    let memory = &s.figures.memory;
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
                    format_count(r.docs as f64),
                    format_count(r.fields as f64),
                    format_count(r.writers as f64),
                    format_number(r.docs_per_ms),
                    opt(r.peak_memory_bytes, |b| format_mb(b as f64)),
                ],
            );
        }
        out.push('\n');
        let peaks: Vec<f64> = memory.iter().filter_map(|r| r.peak_memory_bytes).map(|b| b as f64).collect();
        if let (Some(first), Some(last)) = (peaks.first(), peaks.last()) {
            if peaks.len() > 1 && *first > 0.0 {
                out.push_str(&format!("Largest run's peak over the smallest's: **{:.2}×**.\n\n", last / first));
            }
        }
    }
    provenance(out, &[("every size and writer count", vec![!s.measured; rows.len()])], seed);
}

// --------------------------------------------------------- parallel-patterns

pub(super) fn parallel_patterns(out: &mut String, s: &Scenario<ParallelPatterns>) {
    let seed = s.seed_id.as_str();
    let patterns = &s.figures.patterns;
    if !patterns.is_empty() {
        let serial = patterns.iter().find(|p| p.pattern == "serial");
        let ours_serial = serial.map(|p| p.mean_ms);
        let seed_serial = serial.map(|p| p.seed_mean_ms);
        let speedups = serial.is_some();
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
        let in_flight = patterns.iter().any(|p| p.peak_in_flight.is_some());
        if in_flight {
            cols.push(("Ours batches in flight (peak)", true));
        }
        table_header(out, &cols);
        for p in patterns {
            let mut cells = vec![
                md_escape(&p.pattern),
                format_count(p.items as f64),
                format_count(p.trials as f64),
                format_number(p.mean_ms),
                format_number(p.seed_mean_ms),
                ratio(Some(p.mean_ms), Some(p.seed_mean_ms)),
            ];
            if speedups {
                cells.push(ratio(ours_serial, Some(p.mean_ms)));
                cells.push(ratio(seed_serial, Some(p.seed_mean_ms)));
            }
            if in_flight {
                cells.push(opt(p.peak_in_flight.map(|n| n as f64), format_count));
            }
            table_row(out, &cells);
        }
        out.push('\n');
        // Why a pattern is slower than the seed's, from the figures: one
        // batch takes about the serial time over the batch count, so a
        // pattern's speed-up is bounded by the batches it keeps in flight.
        let mut slower = Vec::new();
        for p in patterns {
            let (Some(peak), Some(seed_serial)) = (p.peak_in_flight, seed_serial) else { continue };
            if p.pattern == "serial" || p.seed_mean_ms <= 0.0 || p.mean_ms <= p.seed_mean_ms * 1.25 {
                continue;
            }
            let seed_speedup = seed_serial / p.seed_mean_ms;
            let ours_speedup = ours_serial.map(|o| o / p.mean_ms.max(1e-9)).unwrap_or(f64::NAN);
            let needed = seed_speedup.ceil();
            let head = format!(
                "{} took {} ms against the seed's {} ms with at most {} batch{} in flight (a speed-up of {}× over our serial run, the seed's {}×)",
                md_escape(&p.pattern),
                format_number(p.mean_ms),
                format_number(p.seed_mean_ms),
                format_count(peak as f64),
                if peak == 1 { "" } else { "es" },
                format_number(ours_speedup),
                format_number(seed_speedup),
            );
            slower.push(if (peak as f64) < needed {
                format!("{head}: the seed's speed-up needs at least {} in flight", format_count(needed))
            } else {
                format!(
                    "{head}: more than the {} in flight the seed's speed-up needs, so concurrency does not explain it; with {} requests at once the time is the slowest of them, the modelled service time's tail plus this machine's CPU for {} requests",
                    format_count(needed),
                    format_count(peak as f64),
                    format_count(peak as f64)
                )
            });
        }
        if !slower.is_empty() {
            let _ = writeln!(out, "**Where ours is slower than seed {seed}'s:** {}.\n", slower.join("; "));
        }
    }
    let burst = &s.figures.burst;
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
                (&format!("Seed {seed} (as published)"), false),
            ],
        );
        for b in burst {
            let lost_cell =
                if b.lost > 0 { format!("**{}**", format_count(b.lost as f64)) } else { format_count(b.lost as f64) };
            table_row(
                out,
                &[
                    format_count(b.items as f64),
                    md_escape(&b.loader),
                    format_count(b.written as f64),
                    lost_cell,
                    format_number(b.seconds),
                    (if b.modelled { "modelled" } else { "measured" }).to_string(),
                    seed_002_burst(b.items, b.loader.starts_with("naive")).unwrap_or(MISSING).to_string(),
                ],
            );
        }
        out.push('\n');
    }
    provenance(
        out,
        &[("patterns", vec![!s.measured; patterns.len()]), ("burst", burst.iter().map(|b| b.modelled).collect())],
        seed,
    );
}

/// What seed 002 published for a burst of `items`: for the loader that
/// ignores UnprocessedItems (`naive`), what it lost; for a loader that
/// writes everything, its nearest run.
fn seed_002_burst(items: u64, naive: bool) -> Option<&'static str> {
    match (items, naive) {
        (10_000, true) => Some("about 20% lost (fork-join, no re-send)"),
        (10_000, false) => Some("all 10,000 in 2.03 s (fork-join with tuned sleeps); 5.16 s serial"),
        (100_000, true) => Some("16,405 written, 82,070 unprocessed in 4.35 s"),
        (100_000, false) => Some("all 100,000 in 61.23 s (serial)"),
        _ => None,
    }
}

// ------------------------------------------------------------------- latency

pub(super) fn latency(out: &mut String, results: &Results, s: &Scenario<Latency>) {
    let seed = s.seed_id.as_str();
    let rows = &s.figures.rows;
    let mut cols: Vec<(String, bool)> =
        vec![("Operation".into(), false), ("Source".into(), false), ("Samples".into(), true)];
    cols.extend(Percentiles::LABELS.iter().map(|p| (format!("{p} ms"), true)));
    let cols_ref: Vec<(&str, bool)> = cols.iter().map(|(c, r)| (c.as_str(), *r)).collect();
    table_header(out, &cols_ref);
    for r in rows {
        let op = md_escape(&r.operation);
        let mut ours = vec![op.clone(), "ours".into(), format_count(r.samples as f64)];
        ours.extend(r.ours.values().into_iter().map(format_number));
        table_row(out, &ours);
        // The seed published percentiles only, not its sample count.
        let mut theirs = vec![op, format!("seed {seed}"), MISSING.to_string()];
        match &r.seed {
            Some(p) => theirs.extend(p.values().into_iter().map(format_number)),
            None => theirs.extend(Percentiles::LABELS.iter().map(|_| MISSING.to_string())),
        }
        table_row(out, &theirs);
    }
    out.push('\n');
    let cal = &s.figures.calibration;
    if !cal.is_empty() {
        let _ = writeln!(
            out,
            "**Calibration:** before each configuration's samples, the same requests against an embedded server that answers after exactly {} ms ({} samples each) measured this machine's own round trip: the HTTP round trip, both ends' encoding and decoding, and the server's wake-up lateness. Each median below was taken off that configuration's modelled service times; the p99 shows how much more the slowest calls took here, which no constant offset removes.\n",
            format_number(cal[0].probe_ms),
            format_count(cal[0].samples as f64),
        );
        table_header(
            out,
            &[("Operation", false), ("Local round trip p50 ms (taken off)", true), ("Local round trip p99 ms", true)],
        );
        for c in cal {
            table_row(out, &[md_escape(&c.operation), format_fixed(c.local_p50_ms), format_fixed(c.local_p99_ms)]);
        }
        out.push('\n');
        let tails = latency_tails(rows, cal, seed);
        if !tails.is_empty() {
            let _ = writeln!(
                out,
                "**Where the p99 comes from:** the server's modelled service times are drawn again from the same model and seed (as many draws as samples, before the local p50 came off); at the client each call is that service time less the local p50, plus this machine's round trip for it. So our p99 should lie between the modelled p99 (were the local round trip constant) and the modelled p99 plus the local round trip's spread (its p99 less its p50):\n"
            );
            for t in &tails {
                let _ = writeln!(out, "- {t}");
            }
            out.push('\n');
        }
    }
    let claims = latency_agreement(rows, seed);
    if !claims.is_empty() {
        let met = claims.iter().filter(|c| c.ends_with("**met**.")).count();
        let _ = writeln!(
            out,
            "**Agreement with seed {seed}** (targets: p50 within {} ms, p99 within {}%; {met} of {} met):\n",
            format_number(LATENCY_P50_TARGET_MS),
            format_number(LATENCY_P99_TARGET * 100.0),
            claims.len()
        );
        for c in &claims {
            let _ = writeln!(out, "- {c}");
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "**Measured or modelled:** {} Seed {seed}'s rows are as it published them, measured against AWS.\n",
        capitalize(&latency_provenance(results))
    );
}

/// The p50 agreement target with seed 003: this close in milliseconds.
pub const LATENCY_P50_TARGET_MS: f64 = 0.5;
/// The p99 agreement target with seed 003: this close as a fraction.
pub const LATENCY_P99_TARGET: f64 = 0.10;

/// Two decimals, always (differences and offsets).
fn format_fixed(v: f64) -> String {
    format!("{v:.2}")
}

/// One sentence per configuration and percentile, each generated from the
/// figures it names: ours, the seed's, the difference and whether the
/// target holds. `tests/agreement.rs` re-checks every one against
/// results.json.
fn latency_agreement(rows: &[LatencyRow], seed: &str) -> Vec<String> {
    let mut out = Vec::new();
    for r in rows {
        let Some(theirs) = &r.seed else { continue };
        let (ours50, seed50) = (r.ours.p50_ms, theirs.p50_ms);
        let d50 = ours50 - seed50;
        let met50 = d50.abs() <= LATENCY_P50_TARGET_MS;
        out.push(format!(
            "{} p50: ours {} ms, seed {seed} {} ms, difference {:+.2} ms, target within {} ms: **{}**.",
            md_escape(&r.operation),
            format_fixed(ours50),
            format_fixed(seed50),
            d50,
            format_number(LATENCY_P50_TARGET_MS),
            if met50 { "met" } else { "not met" }
        ));
        let (ours99, seed99) = (r.ours.p99_ms, theirs.p99_ms);
        if seed99 > 0.0 {
            let d99 = (ours99 - seed99) / seed99;
            let met99 = d99.abs() <= LATENCY_P99_TARGET;
            out.push(format!(
                "{} p99: ours {} ms, seed {seed} {} ms, difference {:+.1}%, target within {}%: **{}**.",
                md_escape(&r.operation),
                format_fixed(ours99),
                format_fixed(seed99),
                d99 * 100.0,
                format_number(LATENCY_P99_TARGET * 100.0),
                if met99 { "met" } else { "not met" }
            ));
        }
    }
    out
}

/// One sentence per configuration with a calibration that recorded the
/// modelled p99: the modelled tail against the seed's, and whether our p99
/// lies within what this machine's round trip adds to it.
/// `tests/agreement.rs` re-checks every one against results.json.
fn latency_tails(rows: &[LatencyRow], cal: &[crate::results::Calibration], seed: &str) -> Vec<String> {
    let mut out = Vec::new();
    for r in rows {
        let Some(c) = cal.iter().find(|c| c.operation == r.operation) else { continue };
        let (Some(modelled), Some(theirs)) = (c.modelled_p99_ms, &r.seed) else { continue };
        if theirs.p99_ms <= 0.0 {
            continue;
        }
        let off = (modelled - theirs.p99_ms) / theirs.p99_ms * 100.0;
        let spread = (c.local_p99_ms - c.local_p50_ms).max(0.0);
        let (lo, hi) = (modelled, modelled + spread);
        let ours = r.ours.p99_ms;
        let verdict = if ours < lo {
            "below that range"
        } else if ours <= hi {
            "within it: the rest of the miss is this machine's round trip"
        } else {
            "above it: more than this machine's round trip explains"
        };
        out.push(format!(
            "{} tail: modelled p99 {} ms (seed {seed} {} ms, {:+.1}%); local round-trip spread {} ms; expected at the client {} to {} ms; ours {} ms, **{verdict}**.",
            md_escape(&r.operation),
            format_fixed(modelled),
            format_fixed(theirs.p99_ms),
            off,
            format_fixed(spread),
            format_fixed(lo),
            format_fixed(hi),
            format_fixed(ours),
        ));
    }
    out
}

// ------------------------------------------------------------ partition-keys

pub(super) fn partition_keys(out: &mut String, results: &Results, s: &Scenario<PartitionKeys>) {
    let seed = s.seed_id.as_str();
    let loads = &s.figures.loads;
    if !loads.is_empty() {
        let seed_rate = format!("Seed {seed} units/s");
        // The partitions and their splits (seed 004's explanation), where
        // the loads recorded them (modelled loads).
        let partitions = loads.iter().any(|l| l.timeline.iter().any(|t| t.partitions.is_some()));
        let mut cols = vec![
            ("Case", false),
            ("Load", false),
            ("Seed figure", false),
            ("Items", true),
            ("Ours s", true),
            ("Ours units/s", true),
            (seed_rate.as_str(), true),
            ("Ours/seed", true),
        ];
        if partitions {
            cols.extend([
                ("Partitions (start → end)", true),
                ("Partitions written a second (median, max)", true),
                ("Splits", false),
            ]);
        }
        cols.push(("Per-second timeline", false));
        table_header(out, &cols);
        for l in loads {
            let fig = opt(l.seed_figure(), |f| format!("fig. {f}"));
            let csv = format!("[{}]({})", md_escape(&l.timeline_csv), l.timeline_csv.replace(' ', "%20"));
            let mut cells = vec![
                md_escape(&l.case),
                md_escape(&l.label),
                fig,
                format_count(l.items as f64),
                format_number(l.seconds),
                format_number(l.rate_units_per_s),
                format_number(l.seed_rate),
                ratio(Some(l.rate_units_per_s), Some(l.seed_rate)),
            ];
            if partitions {
                let counts: Vec<u64> = l.timeline.iter().filter_map(|t| t.partitions).collect();
                cells.push(match (counts.first(), counts.last()) {
                    (Some(a), Some(b)) => format!("{a} → {b}"),
                    _ => MISSING.to_string(),
                });
                cells.push(written_summary(l));
                cells.push(split_summary(l));
            }
            cells.push(csv);
            table_row(out, &cells);
        }
        out.push('\n');
    }
    let lk = &s.figures.lookup;
    let share = if lk.samples > 0 {
        format!(" ({}%)", format_number(100.0 * lk.correct as f64 / lk.samples as f64))
    } else {
        String::new()
    };
    let ms = |v: f64| format!("{} ms", format_number(v));
    let _ = writeln!(
        out,
        "**Lookup** (the IP-range query of seed {seed}): {} samples, {} correct{share}; \
         latency p50 {}, p99 {} (min {}, max {}). {}\n",
        format_count(lk.samples as f64),
        format_count(lk.correct as f64),
        ms(lk.latency_ms.p50_ms),
        ms(lk.latency_ms.p99_ms),
        ms(lk.latency_ms.min_ms),
        ms(lk.latency_ms.max_ms),
        capitalize(&latency_provenance(results)),
    );
    if let Some(sat) = &lk.saturation {
        lookup_saturation(out, results, sat);
    }
    provenance(out, &[("loads", loads.iter().map(|l| l.modelled).collect())], seed);
}

/// "1 (max 2)": partitions written in the median second that wrote any,
/// and in the busiest.
fn written_summary(l: &crate::results::PartitionLoad) -> String {
    let mut v: Vec<u64> = l.timeline.iter().filter(|t| t.consumed > 0.0).filter_map(|t| t.partitions_written).collect();
    if v.is_empty() {
        return MISSING.to_string();
    }
    v.sort_unstable();
    format!("{} (max {})", v[(v.len() - 1) / 2], v[v.len() - 1])
}

/// "none", or "4 (heat) at 12.3, 20.1, 30 and 41 s".
fn split_summary(l: &crate::results::PartitionLoad) -> String {
    if l.splits.is_empty() {
        return "none".to_string();
    }
    let mut reasons: Vec<&str> = l.splits.iter().map(|e| e.reason.as_str()).collect();
    reasons.sort_unstable();
    reasons.dedup();
    // At most a few times, then how many more.
    const SHOWN: usize = 6;
    let times: Vec<String> = l.splits.iter().take(SHOWN).map(|e| format_number(e.at_s)).collect();
    let more = l.splits.len().saturating_sub(SHOWN);
    let times = if more > 0 { format!("{} and {more} more", times.join(", ")) } else { join_and(&times) };
    format!("{} ({}) at {times} s", l.splits.len(), reasons.join(", "))
}

/// "a", "a and b", "a, b and c".
fn join_and(v: &[String]) -> String {
    match v {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// Seed 004's other question: lookups per second as lookups in flight grow.
fn lookup_saturation(out: &mut String, results: &Results, sat: &crate::results::LookupSaturation) {
    let Some(peak) = sat.peak() else { return };
    let growth = format_number(sat.growth_threshold * 100.0);
    let _ = writeln!(
        out,
        "**Lookups per second at saturation** (seed 004's other question): the same lookup from 1, 2, 4, ... \
         lanes, each sending its next lookup when the last is answered, each concurrency for a fixed time, \
         until the rate stopped growing by {growth}% or more a step:\n"
    );
    table_header(
        out,
        &[
            ("Lookups in flight", true),
            ("Lookups", true),
            ("Correct", true),
            ("Seconds", true),
            ("Lookups/s", true),
            ("p50 ms", true),
            ("p99 ms", true),
        ],
    );
    for st in &sat.steps {
        let rate = format_number(st.lookups_per_s);
        table_row(
            out,
            &[
                format_count(st.concurrency as f64),
                format_count(st.lookups as f64),
                format_count(st.correct as f64),
                format_number(st.seconds),
                if std::ptr::eq(st, peak) { format!("**{rate}**") } else { rate },
                format_number(st.latency_ms.p50_ms),
                format_number(st.latency_ms.p99_ms),
            ],
        );
    }
    out.push('\n');
    let last = sat.steps.last().unwrap_or(peak);
    let beyond = if std::ptr::eq(last, peak) {
        format!(
            "the rate was still growing at the last step ({} in flight), so the maximum is at least this",
            format_count(last.concurrency as f64)
        )
    } else {
        format!(
            "more lookups in flight (up to {}) added less than {growth}% each",
            format_count(last.concurrency as f64)
        )
    };
    let _ = writeln!(
        out,
        "The table sustained at most **{} lookups/s**, at {} lookups in flight (p50 {} ms, p99 {} ms); {beyond}. \
         Measured over HTTP with the capacity model off, client and server on this machine: the figure is this \
         machine's, with {}.\n",
        format_number(peak.lookups_per_s),
        format_count(peak.concurrency as f64),
        format_number(peak.latency_ms.p50_ms),
        format_number(peak.latency_ms.p99_ms),
        match results.latency_model.as_str() {
            "aws" => "each lookup also waiting out the modelled service time (latency model `aws`)",
            _ => "no modelled service time (latency model `none`)",
        },
    );
}

// ---------------------------------------------------------------- index-trap

pub(super) fn index_trap(out: &mut String, s: &Scenario<IndexTrap>) {
    let loads = &s.figures.loads;
    let baseline = loads.iter().find(|l| l.gsi_key.is_none()).map(|l| l.rate_items_per_s);
    if !loads.is_empty() {
        table_header(
            out,
            &[
                ("Case", false),
                ("Load", false),
                ("GSI key values", true),
                ("GSI partitions written", true),
                ("Busiest GSI partition's share", true),
                ("Items", true),
                ("Seconds", true),
                ("Items/s", true),
                ("Bound items/s", true),
                ("Set by", false),
                ("Items/s vs no GSI", true),
                ("Items re-sent", true),
                ("Per-second timeline", false),
            ],
        );
        for l in loads {
            let partitions = match (l.gsi_partitions_written, l.gsi_partition_count) {
                (Some(w), Some(n)) => format!("{} of {}", format_count(w as f64), format_count(n as f64)),
                (Some(w), None) => format_count(w as f64),
                _ => MISSING.to_string(),
            };
            let csv = format!("[{}]({})", md_escape(&l.timeline_csv), l.timeline_csv.replace(' ', "%20"));
            table_row(
                out,
                &[
                    md_escape(&l.case),
                    md_escape(&l.label),
                    opt(l.gsi_key_values, |v| format_count(v as f64)),
                    partitions,
                    opt(l.gsi_hottest_partition_share, |v| format!("{}%", format_number(100.0 * v))),
                    format_count(l.items as f64),
                    format_number(l.seconds),
                    format_number(l.rate_items_per_s),
                    format_number(l.bound_items_per_s),
                    md_escape(&l.bound),
                    ratio(Some(l.rate_items_per_s), baseline),
                    format_count(l.throttled_items as f64),
                    csv,
                ],
            );
        }
        out.push('\n');
    }
    let find = |case: &str| loads.iter().find(|l| l.case == case);
    if let (Some(none), Some(low), Some(high)) = (find("no-index"), find("low-cardinality"), find("high-cardinality")) {
        let rate = |l: &crate::results::IndexTrapLoad| format_number(l.rate_items_per_s);
        let share = opt(low.gsi_hottest_partition_share, |v| format!("{}%", format_number((100.0 * v).round())));
        let partitions = opt(low.gsi_partitions_written, |p| format_count(p as f64));
        let values = opt(low.gsi_key_values, |v| format_count(v as f64));
        let _ = write!(
            out,
            "**The trap:** every item written to the table is written to the GSI too, and DynamoDB admits the \
             write only when the table and the GSI both have room. All GSI entries of one key value live in one \
             GSI partition, and a partition takes at most 1,000 write units a second. Keyed on `{low_key}`, the \
             GSI's {values} values landed in {partitions} of its partitions, the busiest taking {share} of the \
             writes: the load ran at **{low_rate} items/s**, {low_ratio} the {none_rate} items/s of the same \
             load into a table without a GSI, which a new on-demand table holds at its 4,000 write units a \
             second. Keyed on `{high_key}` ({high_values} values), the GSI spreads over all its partitions as \
             the table does, and the load ran at **{high_rate} items/s** ({high_ratio}): the GSI costs write \
             units, not rate.",
            low_key = low.gsi_key.as_deref().unwrap_or("?"),
            low_rate = rate(low),
            low_ratio = ratio(Some(low.rate_items_per_s), Some(none.rate_items_per_s)),
            none_rate = rate(none),
            high_key = high.gsi_key.as_deref().unwrap_or("?"),
            high_values = opt(high.gsi_key_values, |v| format_count(v as f64)),
            high_rate = rate(high),
            high_ratio = ratio(Some(high.rate_items_per_s), Some(none.rate_items_per_s)),
        );
        if let Some(p) = find("provisioned-low-cardinality") {
            let _ = write!(
                out,
                " More capacity does not help: provisioned at 10,000 WCU, table and GSI, the same load ran at \
                 {} items/s, its {} values in {} GSI partitions of 1,000 WCU each.",
                rate(p),
                opt(p.gsi_key_values, |v| format_count(v as f64)),
                opt(p.gsi_partitions_written, |v| format_count(v as f64)),
            );
        }
        out.push_str(
            " The way out is a GSI key of many values: a high-cardinality attribute, or the low one with a \
             suffix spreading it (`SHIPPED#0` to `SHIPPED#9`, queried ten times).\n\n",
        );
    }
    let modelled = loads.iter().filter(|l| l.modelled).count();
    let how = if modelled == loads.len() {
        "modelled in virtual time by the capacity model (no wall-clock wait)"
    } else if modelled == 0 {
        "measured over HTTP on the wall clock"
    } else {
        "some modelled in virtual time, the rest measured"
    };
    let _ = writeln!(
        out,
        "**Measured or modelled:** Loads: {how}. No seed published these figures; the bounds are the capacity \
         model's (1,000 write units a second per partition, 4,000 for a new on-demand table).\n"
    );
}
