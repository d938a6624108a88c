//! `report.md`: each scenario's figures beside the ones its seed published.
//!
//! [`render_report`] renders a [`Results`]: a scenario that did not run is
//! left out, and a figure the seed did not publish renders as "–". Numbers
//! are formatted for people ([`crate::format`]): 1,234 · 293.38 · 0.12.
//! `sections` holds one table per scenario, `markdown` the table kit.

mod html;
mod markdown;
mod sections;

pub use html::render_html;

use std::fmt::Write as _;

use crate::charts::{plan_charts, PlannedChart};
use crate::format::{format_duration, format_number, format_unix_ms};
use crate::results::{
    Results, Scenario, DOC_SIZE, DOC_SIZE_MONGODB, INDEX_TRAP, LATENCY, PARALLEL_PATTERNS, PARTITION_KEYS, WRITE_APIS,
};
use markdown::capitalize;

/// Renders `report.md` for one `results.json`.
pub fn render_report(results: &Results) -> String {
    let mut out = String::new();
    header(&mut out, results);
    let scenarios = &results.scenarios;
    if scenarios.is_empty() {
        out.push_str("\nNo scenario ran.\n");
        return out;
    }
    let charts = plan_charts(results);
    if let Some(s) = &scenarios.write_apis {
        section(&mut out, s, &charts, WRITE_APIS, |o| sections::write_apis(o, s));
    }
    if let Some(s) = &scenarios.doc_size {
        section(&mut out, s, &charts, DOC_SIZE, |o| sections::doc_size(o, s));
    }
    if let Some(s) = &scenarios.doc_size_mongodb {
        section(&mut out, s, &charts, DOC_SIZE_MONGODB, |o| sections::doc_size(o, s));
    }
    if let Some(s) = &scenarios.parallel_patterns {
        section(&mut out, s, &charts, PARALLEL_PATTERNS, |o| sections::parallel_patterns(o, s));
    }
    if let Some(s) = &scenarios.latency {
        section(&mut out, s, &charts, LATENCY, |o| sections::latency(o, results, s));
    }
    if let Some(s) = &scenarios.partition_keys {
        section(&mut out, s, &charts, PARTITION_KEYS, |o| sections::partition_keys(o, results, s));
    }
    if let Some(s) = &scenarios.index_trap {
        // Not a seed's experiment: its heading says which seed it follows.
        let _ = writeln!(out, "## After seed {}: {}\n", s.seed_id, s.title);
        let _ = writeln!(out, "**How these figures were made:** {}\n", s.explanation);
        sections::index_trap(&mut out, s);
        for c in charts.iter().filter(|c| c.scenario == INDEX_TRAP) {
            let _ = writeln!(out, "![{}]({})\n", c.alt, c.file);
        }
    }
    // Scenarios this renderer does not know yet: title and explanation only.
    for s in scenarios.other.values() {
        section_heading(&mut out, s);
        out.push_str("(No table for this scenario yet: see `results.json`.)\n");
    }
    out
}

/// One scenario's section: heading, `table`, then the links to its charts.
fn section<F>(out: &mut String, s: &Scenario<F>, charts: &[PlannedChart], key: &str, table: impl FnOnce(&mut String)) {
    section_heading(out, s);
    table(out);
    for c in charts.iter().filter(|c| c.scenario == key) {
        let _ = writeln!(out, "![{}]({})\n", c.alt, c.file);
    }
}

fn header(out: &mut String, r: &Results) {
    out.push_str("# dynaburst bench\n\n");
    out.push_str(
        "Each seed (a published write-up; `docs/seeds.md` in the dynaburst repository states \
         each one's set-up and figures) re-run on this machine, with the figures it published \
         beside ours.\n\n",
    );
    let _ = writeln!(out, "- **Command:** `{}`", r.command.replace('`', "'"));
    let _ = writeln!(out, "- **Started:** {}", format_unix_ms(r.started_at_unix_ms as i64));
    let _ = writeln!(out, "- **Duration:** {}", format_duration(r.duration_s));
    let _ = writeln!(out, "- **Endpoint:** {}", r.endpoint);
    let _ = writeln!(out, "- **Latency model:** {}", r.latency_model);
    let _ = writeln!(out, "- **Added round-trip time:** {} ms", format_number(r.rtt_ms));
    let _ = writeln!(out, "- **Scale:** {}", format_number(r.scale));
    let _ = writeln!(out, "- **Random seed:** {}", r.seed);
    out.push('\n');
}

fn section_heading<F>(out: &mut String, s: &Scenario<F>) {
    let _ = writeln!(out, "## Seed {}: {}\n", s.seed_id, s.title);
    let _ = writeln!(out, "**Why our numbers differ:** {}\n", s.explanation);
}

/// The "Measured or modelled" line: for each group of rows (named), whether
/// its rows were measured or modelled (`modelled`, one flag per row).
fn provenance(out: &mut String, groups: &[(&str, Vec<bool>)], seed: &str) {
    let mut parts = Vec::new();
    for (name, rows) in groups {
        if rows.is_empty() {
            continue;
        }
        let modelled = rows.iter().filter(|m| **m).count();
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

/// How our latencies were measured: the latency model and added round trip.
fn latency_provenance(results: &Results) -> String {
    let model = results.latency_model.as_str();
    let rtt = results.rtt_ms;
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
