//! `dynaburst bench`: each write-up in `../shared/seeds` re-run locally.
//!
//! A run writes `results.json` (every figure), `report.md` (our tables beside
//! the seeds' published ones), SVG charts and per-second timeline CSVs.
//! [`charts`] and [`report`] render a `results.json` value; they read it as
//! untyped JSON and skip any scenario, row or field that is missing.

pub mod charts;
pub mod embedded;
pub mod report;
pub mod run;
pub mod scenarios;
pub mod sim;
