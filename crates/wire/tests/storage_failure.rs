//! A storage failure reaches the client as InternalServerError (HTTP 500)
//! and leaves nothing written.

use std::sync::Arc;

use dynaburst_engine::faults::FaultyStorage;
use dynaburst_engine::{Engine, EngineConfig, Millis};

#[test]
fn a_failed_commit_is_an_internal_server_error() {
    let storage = Arc::new(FaultyStorage::new());
    storage.faults().fail_commits(true);
    let engine = Engine::open(EngineConfig::local(), storage, Millis(0)).unwrap();
    let now = Millis(1_000);
    dynaburst_wire::handle(
        &engine,
        "CreateTable",
        br#"{"TableName":"tbl","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],
            "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],"BillingMode":"PAY_PER_REQUEST"}"#,
        now,
        None,
    )
    .result
    .unwrap();
    let err = dynaburst_wire::handle(&engine, "PutItem", br#"{"TableName":"tbl","Item":{"pk":{"S":"a"}}}"#, now, None)
        .result
        .unwrap_err();
    assert_eq!(err.status(), 500);
    assert_eq!(err.type_name(), "com.amazonaws.dynamodb.v20120810#InternalServerError");
    assert_eq!(err.message.as_deref(), Some("Internal server error: storage commit failed: other error"));
    let got = dynaburst_wire::handle(&engine, "GetItem", br#"{"TableName":"tbl","Key":{"pk":{"S":"a"}}}"#, now, None)
        .result
        .unwrap();
    assert_eq!(got, b"{}");
}
