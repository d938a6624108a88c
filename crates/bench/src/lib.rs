//! `dynaburst bench`: each seed (the write-ups `docs/seeds.md` summarises) re-run locally.
//!
//! A run writes `results.json` (every figure, typed in [`results`]),
//! `report.md` (our tables beside the seeds' published ones, [`report`]),
//! SVG charts ([`charts`]) and per-second timeline CSVs. `report` links
//! the charts `charts` plans; both read [`results`] and format numbers
//! with [`format`], and nothing renders back into them.

pub mod charts;
pub mod embedded;
pub mod error;
pub mod ferretdb;
pub mod format;
pub mod report;
pub mod results;
pub mod run;
pub mod scenarios;
pub mod sim;

pub use error::BenchError;
