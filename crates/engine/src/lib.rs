//! The dynaburst engine: tables, the storage seam, DynamoDB's operations and
//! transactions.
//!
//! Architecture invariant: the engine is pure. It does no I/O, knows no
//! HTTP and no JSON, and never reads a clock: every operation takes `now`.
//! Its inputs and outputs are the plain types in [`types`]; its errors carry
//! DynamoDB's exact messages.

mod engine;
mod error;
pub mod store;
mod table;
pub mod types;

pub use dynaburst_capacity as capacity;
pub use engine::{
    CapacityReport, Engine, EngineConfig, IDEMPOTENCY_WINDOW_MS, IDEMPOTENT_REPLAY_READ_UNITS, MAX_BATCH_GET_KEYS,
    MAX_PAGE_BYTES, MAX_REMEMBERED_TOKENS, MAX_TABLES,
};
pub use error::EngineError;
pub use table::{KeyAttr, KeySchema, Table, TableData, MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES};
pub use types::*;
