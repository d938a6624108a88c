//! The dynaburst engine: tables, the storage seam, DynamoDB's operations and
//! transactions.
//!
//! Architecture invariant: the engine is pure. It does no I/O, knows no
//! HTTP and no JSON, and never reads a clock: every operation takes `now`.
//! Its inputs and outputs are the plain types in [`types`]; its errors carry
//! DynamoDB's exact messages. Every write goes through one funnel
//! (`write.rs`) and reaches storage only through [`store::Storage`].

pub mod backup;
mod batch;
mod control;
mod engine;
mod error;
pub mod faults;
pub mod index;
pub mod insights;
mod item;
mod policy;
mod read;
pub mod store;
pub mod stream;
mod table;
mod tokens;
mod transact;
pub mod ttl;
pub mod types;
mod update_table;
mod write;

pub use control::{MAX_TABLE_CAPACITY_UNITS, MAX_TAGS, TOO_MANY_TAGS};
pub use dynaburst_capacity as capacity;
pub use engine::{
    CapacityReport, Engine, EngineConfig, MemoryBudget, IDEMPOTENT_REPLAY_READ_UNITS, ITEM_COLLECTION_LIMIT_BYTES,
    MAX_BATCH_GET_KEYS, MAX_PAGE_BYTES, MAX_TABLES, STORED_ITEM_OVERHEAD_BYTES,
};
pub use error::EngineError;
pub use policy::{
    Policies, PolicyDocument, PolicySlot, PolicyTarget, MAX_POLICY_BYTES, NO_POLICY, POLICY_COOLDOWN_MS, TABLE_SLOT,
};
pub use table::{
    index_warm_shown, KeyAttr, KeySchema, Table, TableClass, TableClassSetting, TableData, TableSettings,
    ThroughputChanges, TimeToLive, MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES, ON_DEMAND_INITIAL_WARM,
};
pub use tokens::{IDEMPOTENCY_WINDOW_MS, MAX_REMEMBERED_TOKENS};
pub use types::*;
