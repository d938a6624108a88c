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
        let count_cell = if r.count_after < r.items {
            format!(
                "{} (**{} missing**)",
                format_count(r.count_after as f64),
                format_count((r.items - r.count_after) as f64)
            )
        } else {
            format_count(r.count_after as f64)
        };
        table_row(
            out,
            &[
                md_escape(&r.api),
                format_count(r.items as f64),
                format_number(r.wall_s),
                opt(r.seed_wall_s, format_number),
                ratio(Some(r.wall_s), r.seed_wall_s),
                format_number(r.cpu_s),
                opt(r.peak_memory_bytes, |b| format_mb(b as f64)),
                count_cell,
            ],
        );
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

// ------------------------------------------------------------ partition-keys

pub(super) fn partition_keys(out: &mut String, results: &Results, s: &Scenario<PartitionKeys>) {
    let seed = s.seed_id.as_str();
    let loads = &s.figures.loads;
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
            let fig = opt(l.seed_figure(), |f| format!("fig. {f}"));
            let csv = format!("[{}]({})", md_escape(&l.timeline_csv), l.timeline_csv.replace(' ', "%20"));
            table_row(
                out,
                &[
                    md_escape(&l.case),
                    md_escape(&l.label),
                    fig,
                    format_count(l.items as f64),
                    format_number(l.seconds),
                    format_number(l.rate_units_per_s),
                    format_number(l.seed_rate),
                    ratio(Some(l.rate_units_per_s), Some(l.seed_rate)),
                    csv,
                ],
            );
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
    provenance(out, &[("loads", loads.iter().map(|l| l.modelled).collect())], seed);
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
