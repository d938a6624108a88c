//! SVG charts of a `results.json`, one per figure worth comparing with a seed.
//!
//! | scenario            | file                          | what it shows                                      |
//! |---------------------|-------------------------------|----------------------------------------------------|
//! | `partition-keys`    | `partition-keys-<case>.svg`   | write units consumed and items throttled per second on one log scale for all four, with the seed's rate (seed 004, figures 3, 5, 6, 7), and under it the table's partitions per second with each split where the load recorded them |
//! | `latency`           | `latency.svg`                 | percentiles per write API, ours vs the seed's, log ms |
//! | `doc-size`          | `doc-size.svg`                | documents per ms against writers, per document size |
//! | `doc-size-mongodb`  | `doc-size-mongodb.svg`        | the same into a MongoDB-compatible database, with seed 001's points (unjoined) |
//! | `write-apis`        | `write-apis.svg`              | wall seconds per API, ours vs the seed's, log scale |
//! | `parallel-patterns` | `parallel-patterns.svg`       | mean ms per loader pattern, ours vs the seed's, log scale |
//! | `index-trap`        | `index-trap.svg`              | items written per second of each load, with the busiest GSI partition where a GSI set the pace |
//!
//! A missing scenario (or one without plottable figures) has no chart;
//! [`plan_charts`] says which charts a results file gets, and the report
//! links exactly those. Charts are 800×500, drawn with plotters' SVG backend
//! without font files: text is SVG `<text>` in the viewer's sans-serif font,
//! and every layout decision (title size, label areas, legend rows) is made
//! here from an estimate of text width, so nothing is clipped or overlaps.
//!
//! `plan` decides, `kit` is the drawing kit (text, legend, axes,
//! canvas), and each chart has its module.

mod bars;
mod doc_size;
mod index_trap;
mod kit;
mod latency;
mod partition;
mod plan;
mod simulate;

use std::fmt;
use std::path::{Path, PathBuf};

use crate::results::{
    Results, DOC_SIZE, DOC_SIZE_MONGODB, INDEX_TRAP, LATENCY, PARALLEL_PATTERNS, PARTITION_KEYS, WRITE_APIS,
};
use kit::DrawErr;
pub use plan::{plan_charts, PlannedChart};
pub use simulate::{simulation_svg, SimulatedSecond};

/// Width of every chart, in pixels.
pub const WIDTH: u32 = 800;
/// Height of every chart, in pixels.
pub const HEIGHT: u32 = 500;

/// Why charts could not be written.
#[derive(Debug)]
pub enum ChartError {
    /// The output directory could not be created.
    CreateDir { path: PathBuf, source: std::io::Error },
    /// A chart file could not be written.
    Write { path: PathBuf, source: std::io::Error },
    /// plotters refused to draw (not expected with the SVG backend).
    Draw { file: String, message: String },
}

impl fmt::Display for ChartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChartError::CreateDir { path, source } => {
                write!(f, "cannot create chart directory {}: {source}", path.display())
            }
            ChartError::Write { path, source } => {
                write!(f, "cannot write chart {}: {source}", path.display())
            }
            ChartError::Draw { file, message } => write!(f, "cannot draw chart {file}: {message}"),
        }
    }
}

impl std::error::Error for ChartError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ChartError::CreateDir { source, .. } | ChartError::Write { source, .. } => Some(source),
            ChartError::Draw { .. } => None,
        }
    }
}

/// Renders one planned chart to SVG text.
pub fn render_chart(results: &Results, chart: &PlannedChart) -> Result<String, ChartError> {
    let s = &results.scenarios;
    let missing = || DrawErr(format!("no {} results", chart.scenario));
    let drawn = match chart.scenario {
        WRITE_APIS => s.write_apis.as_ref().ok_or_else(missing).and_then(bars::write_apis_chart),
        DOC_SIZE => s.doc_size.as_ref().ok_or_else(missing).and_then(doc_size::doc_size_chart),
        DOC_SIZE_MONGODB => s.doc_size_mongodb.as_ref().ok_or_else(missing).and_then(doc_size::doc_size_chart),
        PARALLEL_PATTERNS => s.parallel_patterns.as_ref().ok_or_else(missing).and_then(bars::patterns_chart),
        LATENCY => s.latency.as_ref().ok_or_else(missing).and_then(latency::latency_chart),
        PARTITION_KEYS => {
            let case = chart.case.as_deref().unwrap_or("");
            let load =
                s.partition_keys.as_ref().and_then(|p| Some((p, p.figures.loads.iter().find(|l| l.case == case)?)));
            match load {
                Some((s, load)) => partition::partition_chart(s, load),
                None => Err(DrawErr(format!("no partition-keys load {case:?}"))),
            }
        }
        INDEX_TRAP => s.index_trap.as_ref().ok_or_else(missing).and_then(index_trap::index_trap_chart),
        other => Err(DrawErr(format!("no chart for scenario {other:?}"))),
    };
    drawn.map_err(|DrawErr(message)| ChartError::Draw { file: chart.file.clone(), message })
}

/// Writes every chart `results` gets into `dir` (created if missing) and
/// returns their paths, in report order.
pub fn write_charts(results: &Results, dir: &Path) -> Result<Vec<PathBuf>, ChartError> {
    let planned = plan_charts(results);
    if !planned.is_empty() {
        std::fs::create_dir_all(dir).map_err(|source| ChartError::CreateDir { path: dir.to_path_buf(), source })?;
    }
    let mut written = Vec::with_capacity(planned.len());
    for chart in &planned {
        let svg = render_chart(results, chart)?;
        let path = dir.join(&chart.file);
        std::fs::write(&path, svg).map_err(|source| ChartError::Write { path: path.clone(), source })?;
        written.push(path);
    }
    Ok(written)
}
