//! Which charts a results file gets, and under which file names.

use crate::results::{
    DocSize, Percentiles, Results, Scenario, DOC_SIZE, DOC_SIZE_MONGODB, INDEX_TRAP, LATENCY, PARALLEL_PATTERNS,
    PARTITION_KEYS, WRITE_APIS,
};

/// One chart a results file gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedChart {
    /// The scenario key in `results.json` (`"latency"`, ...).
    pub scenario: &'static str,
    /// For `partition-keys`, the load case the chart shows.
    pub case: Option<String>,
    /// File name, relative to the output directory.
    pub file: String,
    /// Alt text for the report's image link.
    pub alt: String,
}

/// The charts `results` gets, in report order; scenarios that are missing or
/// have nothing to plot get none.
pub fn plan_charts(results: &Results) -> Vec<PlannedChart> {
    let mut out = Vec::new();
    let scenarios = &results.scenarios;
    let plan = |scenario: &'static str, file: &str, alt: String| PlannedChart {
        scenario,
        case: None,
        file: file.to_string(),
        alt,
    };
    if let Some(s) = &scenarios.write_apis {
        if s.figures.rows.iter().any(|r| r.wall_s > 0.0 || r.seed_wall_s.is_some_and(|t| t > 0.0)) {
            out.push(plan(
                WRITE_APIS,
                "write-apis.svg",
                format!("Wall seconds per write API, ours vs seed {}", s.seed_id),
            ));
        }
    }
    for (key, file, scenario) in [
        (DOC_SIZE, "doc-size.svg", &scenarios.doc_size),
        (DOC_SIZE_MONGODB, "doc-size-mongodb.svg", &scenarios.doc_size_mongodb),
    ] {
        if let Some(s) = scenario {
            let points = doc_size_points(s);
            if !points.is_empty() {
                let alt = if points.iter().any(|p| p.3.is_some()) {
                    format!("Documents per ms against writers, {}, ours vs seed {}", s.title, s.seed_id)
                } else {
                    format!("Documents per ms against writers, {}", s.title)
                };
                out.push(plan(key, file, alt));
            }
        }
    }
    if let Some(s) = &scenarios.parallel_patterns {
        if s.figures.patterns.iter().any(|p| p.mean_ms > 0.0 || p.seed_mean_ms > 0.0) {
            out.push(plan(
                PARALLEL_PATTERNS,
                "parallel-patterns.svg",
                format!("Mean ms per loader pattern, ours vs seed {}", s.seed_id),
            ));
        }
    }
    if let Some(s) = &scenarios.latency {
        if s.figures.rows.iter().any(|r| !latency_values(Some(&r.ours)).is_empty()) {
            out.push(plan(
                LATENCY,
                "latency.svg",
                format!("Latency percentiles per write API, ours vs seed {}", s.seed_id),
            ));
        }
    }
    if let Some(s) = &scenarios.partition_keys {
        for load in &s.figures.loads {
            if load.timeline.is_empty() {
                continue;
            }
            let fig =
                load.seed_figure().map(|n| format!(", as in seed {}'s figure {n}", s.seed_id)).unwrap_or_default();
            out.push(PlannedChart {
                scenario: PARTITION_KEYS,
                case: Some(load.case.clone()),
                file: format!("partition-keys-{}.svg", file_safe(&load.case)),
                alt: format!("Write units consumed and items throttled per second, {}{fig}", load.case),
            });
        }
    }
    if let Some(s) = &scenarios.index_trap {
        if s.figures.loads.iter().any(|l| !l.timeline.is_empty()) {
            out.push(plan(
                INDEX_TRAP,
                "index-trap.svg",
                "Items written per second with no GSI, a GSI on 3 values and one on thousands".to_string(),
            ));
        }
    }
    out
}

/// A case name as a file-name part: letters, digits, `-` and `_` only.
fn file_safe(case: &str) -> String {
    let s: String =
        case.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '-' }).collect();
    if s.is_empty() {
        "case".into()
    } else {
        s
    }
}

/// `(percentile index, ms)` pairs.
pub(crate) type PercentilePoints = Vec<(usize, f64)>;

/// `(percentile index, ms)` for each positive, finite percentile.
pub(crate) fn latency_values(p: Option<&Percentiles>) -> PercentilePoints {
    let Some(p) = p else { return Vec::new() };
    p.values().into_iter().enumerate().filter(|(_, x)| x.is_finite() && *x > 0.0).collect()
}

/// One doc-size point: `(fields, writers, ours docs/ms, seed docs/ms)`.
pub(crate) type DocSizePoint = (f64, f64, Option<f64>, Option<f64>);

/// The points of the rows with writers.
pub(crate) fn doc_size_points(s: &Scenario<DocSize>) -> Vec<DocSizePoint> {
    s.figures
        .rows
        .iter()
        .filter(|r| r.writers > 0)
        .map(|r| {
            let finite = |v: f64| Some(v).filter(|v| v.is_finite());
            (
                r.fields as f64,
                r.writers as f64,
                finite(r.docs_per_ms),
                r.seed.as_ref().and_then(|x| finite(x.docs_per_ms)),
            )
        })
        .filter(|p| p.2.is_some() || p.3.is_some())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_names_cannot_escape_the_directory() {
        assert_eq!(file_safe("../../etc/x"), "------etc-x");
        assert_eq!(file_safe("single-key"), "single-key");
        assert_eq!(file_safe(""), "case");
    }
}
