//! A storage failure reaches the client as InternalServerError (HTTP 500)
//! and leaves nothing written.

use std::sync::Arc;

use dynaburst_engine::store::{MemStorage, Storage, StoreError, TableMeta, TableStore, WriteBatch};
use dynaburst_engine::{Engine, EngineConfig, Millis};
use dynaburst_model::Item;

/// Memory storage whose every commit fails.
#[derive(Default)]
struct CommitFails(MemStorage);

impl Storage for CommitFails {
    fn create_table(&self, meta: &TableMeta) -> Result<Box<dyn TableStore>, StoreError> {
        self.0.create_table(meta)
    }
    fn open_table(&self, name: &str) -> Result<Box<dyn TableStore>, StoreError> {
        self.0.open_table(name)
    }
    fn list_tables(&self) -> Result<Vec<TableMeta>, StoreError> {
        self.0.list_tables()
    }
    fn save_table_meta(&self, meta: &TableMeta) -> Result<(), StoreError> {
        self.0.save_table_meta(meta)
    }
    fn drop_table(&self, name: &str) -> Result<(), StoreError> {
        self.0.drop_table(name)
    }
    fn commit(&self, _: WriteBatch, _: &mut [&mut dyn TableStore]) -> Result<Vec<Option<Arc<Item>>>, StoreError> {
        Err(StoreError::Io { operation: "commit", kind: std::io::ErrorKind::Other })
    }
}

#[test]
fn a_failed_commit_is_an_internal_server_error() {
    let engine = Engine::open(EngineConfig::local(), Arc::new(CommitFails::default()), Millis(0)).unwrap();
    let now = Millis(1_000);
    dynaburst_wire::handle(
        &engine,
        "CreateTable",
        br#"{"TableName":"tbl","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],
            "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],"BillingMode":"PAY_PER_REQUEST"}"#,
        now,
    )
    .result
    .unwrap();
    let err = dynaburst_wire::handle(&engine, "PutItem", br#"{"TableName":"tbl","Item":{"pk":{"S":"a"}}}"#, now)
        .result
        .unwrap_err();
    assert_eq!(err.status(), 500);
    assert_eq!(err.type_name(), "com.amazonaws.dynamodb.v20120810#InternalServerError");
    assert_eq!(err.message.as_deref(), Some("Internal server error: storage commit failed: other error"));
    let got = dynaburst_wire::handle(&engine, "GetItem", br#"{"TableName":"tbl","Key":{"pk":{"S":"a"}}}"#, now)
        .result
        .unwrap();
    assert_eq!(got, b"{}");
}
