//! Helpers of the disk store's test files.
#![allow(dead_code)] // each test file uses its own part

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use dynaburst_engine::store::{StoreKey, TableMeta};
use dynaburst_engine::{BillingMode, KeyAttr, KeySchema, TableSettings};
use dynaburst_model::{KeyValue, Millis, Number, ScalarType};

/// A directory of its own under the system's temporary one, not there yet.
pub fn fresh_dir(prefix: &str) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!("{prefix}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// A table keyed by `pk` (S) and `sk` (N), on demand.
pub fn meta(name: &str) -> TableMeta {
    TableMeta {
        name: name.to_string(),
        table_id: format!("id-{name}"),
        region: "us-east-1".into(),
        account_id: "000000000000".into(),
        key_schema: KeySchema {
            hash: KeyAttr { name: "pk".into(), ty: ScalarType::S },
            range: Some(KeyAttr { name: "sk".into(), ty: ScalarType::N }),
        },
        indexes: Vec::new(),
        tags: Vec::new(),
        attribute_definitions: vec![("pk".into(), ScalarType::S), ("sk".into(), ScalarType::N)],
        settings: TableSettings::new(BillingMode::PayPerRequest, Millis(5)),
        created_at: Millis(5),
    }
}

/// The key of [`meta`]'s tables with partition key `p` and sort key `sk`.
pub fn key(sk: i64) -> StoreKey {
    StoreKey::new(KeyValue::S("p".into()), Some(KeyValue::N(Number::from_i64(sk))))
}
