//! The server over durable storage, in process: a failing disk gives the
//! client an error and leaves the database as it was before the failure;
//! concurrent writers share syncs; a second server cannot take the
//! directory.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use dynaburst_diskstore::{DiskOptions, DiskStorage, OpenError};
use dynaburst_engine::{Engine, EngineConfig};
use dynaburst_server::{handle_request, Instant, ManualClock, Server};
use http_body_util::{BodyExt, Full};
use hyper::{Request, StatusCode};
use serde_json::{json, Value};

const START: Instant = Instant(Duration::from_millis(1_700_000_000_250));

/// A fresh directory under the system's temporary directory.
fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dynaburst-durable-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn open(dir: &std::path::Path) -> (Server, Arc<DiskStorage>) {
    let disk = Arc::new(DiskStorage::open(dir, &DiskOptions::default()).expect("open the data directory"));
    let engine = Engine::open(EngineConfig::local(), disk.clone(), START.millis()).expect("load the tables");
    let server = Server::new(Arc::new(engine), 1)
        .with_clock(Arc::new(ManualClock::new(START)))
        .with_durability(disk.durability());
    (server, disk)
}

async fn call(server: &Server, target: &str, body: Value) -> (StatusCode, Value) {
    let request = Request::builder()
        .method("POST")
        .uri("/")
        .header("authorization", "AWS4-HMAC-SHA256 Credential=x/20260101/us-east-1/dynamodb/aws4_request")
        .header("content-type", "application/x-amz-json-1.0")
        .header("x-amz-target", format!("DynamoDB_20120810.{target}"))
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("request");
    let response = handle_request(server, request).await;
    let status = response.status();
    let bytes = response.into_body().collect().await.expect("body").to_bytes();
    (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

async fn create(server: &Server, name: &str) {
    let (status, body) = call(
        server,
        "CreateTable",
        json!({"TableName": name, "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
            "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}], "BillingMode": "PAY_PER_REQUEST"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

async fn put(server: &Server, table: &str, id: &str, v: i64) -> (StatusCode, Value) {
    call(server, "PutItem", json!({"TableName": table, "Item": {"id": {"S": id}, "v": {"N": v.to_string()}}})).await
}

async fn get(server: &Server, table: &str, id: &str) -> (StatusCode, Value) {
    call(server, "GetItem", json!({"TableName": table, "Key": {"id": {"S": id}}, "ConsistentRead": true})).await
}

async fn item_count(server: &Server, table: &str) -> u64 {
    let (status, body) = call(server, "DescribeTable", json!({"TableName": table})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["Table"]["ItemCount"].as_u64().expect("ItemCount")
}

#[tokio::test]
async fn a_failed_sync_fails_the_request_and_the_database_keeps_what_was_acknowledged() {
    let dir = fresh_dir("fault");
    {
        let (server, disk) = open(&dir);
        create(&server, "tbl").await;
        assert_eq!(put(&server, "tbl", "a", 1).await.0, StatusCode::OK);
        assert_eq!(put(&server, "tbl", "b", 2).await.0, StatusCode::OK);
        // A transaction of two items, acknowledged.
        let (status, body) = call(
            &server,
            "TransactWriteItems",
            json!({"TransactItems": [
                {"Put": {"TableName": "tbl", "Item": {"id": {"S": "c"}, "v": {"N": "3"}}}},
                {"Update": {"TableName": "tbl", "Key": {"id": {"S": "a"}}, "UpdateExpression": "SET v = :v",
                    "ExpressionAttributeValues": {":v": {"N": "10"}}}}]}),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");

        // The disk fails under the next write: the client gets an error.
        disk.durability().fail_next_sync();
        let (status, body) = call(
            &server,
            "TransactWriteItems",
            json!({"TransactItems": [
                {"Put": {"TableName": "tbl", "Item": {"id": {"S": "d"}, "v": {"N": "4"}}}},
                {"Delete": {"TableName": "tbl", "Key": {"id": {"S": "b"}}}}]}),
        )
        .await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(body["__type"], "com.amazonaws.dynamodb.v20120810#InternalServerError");
        // The message keeps the disk's error (the injection fails as a full
        // disk does), so that the cause is diagnosable.
        let full =
            "Internal server error: storage sync failed (no storage space): No space left on device (os error 28)";
        assert_eq!(body["message"], full);
        // From then on nothing is served from the overlay, which may hold
        // the failed write: reads and writes fail alike, with the first
        // failure's cause.
        let (status, body) = get(&server, "tbl", "a").await;
        assert_eq!((status, body["message"].as_str()), (StatusCode::INTERNAL_SERVER_ERROR, Some(full)));
        let (status, body) = put(&server, "tbl", "e", 5).await;
        assert_eq!((status, body["message"].as_str()), (StatusCode::INTERNAL_SERVER_ERROR, Some(full)));
        // The server's log gets the same failure.
        let logged = disk.durability().failure().await.map(|e| e.to_string());
        assert_eq!(logged.as_deref(), full.strip_prefix("Internal server error: "));
        disk.close();
    }
    // After a restart: everything acknowledged, nothing of the failed
    // transaction, nothing after it.
    let (server, disk) = open(&dir);
    let value = |body: &Value| body["Item"]["v"]["N"].as_str().map(str::to_string);
    assert_eq!(value(&get(&server, "tbl", "a").await.1).as_deref(), Some("10"));
    assert_eq!(value(&get(&server, "tbl", "b").await.1).as_deref(), Some("2"));
    assert_eq!(value(&get(&server, "tbl", "c").await.1).as_deref(), Some("3"));
    assert_eq!(get(&server, "tbl", "d").await.1, json!({}));
    assert_eq!(get(&server, "tbl", "e").await.1, json!({}));
    assert_eq!(item_count(&server, "tbl").await, 3);
    // And the database takes writes again.
    assert_eq!(put(&server, "tbl", "f", 6).await.0, StatusCode::OK);
    disk.close();
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_failed_write_into_the_database_file_loses_nothing_acknowledged() {
    let dir = fresh_dir("apply");
    {
        let (server, disk) = open(&dir);
        create(&server, "tbl").await;
        assert_eq!(put(&server, "tbl", "a", 1).await.0, StatusCode::OK);
        disk.wait_applied().expect("in the file");
        // Acknowledged (in the log), served from the overlay, not yet in
        // the file when the file's write fails.
        disk.hold_applier(true);
        assert_eq!(put(&server, "tbl", "b", 2).await.0, StatusCode::OK);
        assert_eq!(get(&server, "tbl", "b").await.1["Item"]["v"]["N"], "2");
        disk.durability().fail_next_apply();
        disk.hold_applier(false);
        let failed = disk.wait_applied().expect_err("the failed write poisons the storage");
        let cause = "storage write failed (no storage space): No space left on device (os error 28)";
        assert_eq!(failed.to_string(), cause);
        let (status, body) = put(&server, "tbl", "c", 3).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(body["message"], format!("Internal server error: {cause}"));
        disk.close();
    }
    // The log still held `b`: start-up replays it into the file.
    let (server, disk) = open(&dir);
    assert_eq!(get(&server, "tbl", "a").await.1["Item"]["v"]["N"], "1");
    assert_eq!(get(&server, "tbl", "b").await.1["Item"]["v"]["N"], "2");
    assert_eq!(get(&server, "tbl", "c").await.1, json!({}));
    assert_eq!(item_count(&server, "tbl").await, 2);
    disk.close();
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_share_syncs() {
    const WRITERS: usize = 32;
    const EACH: usize = 20;
    let dir = fresh_dir("group");
    let (server, disk) = open(&dir);
    let server = Arc::new(server);
    create(&server, "tbl").await;
    let before = disk.sync_count();
    let tasks: Vec<_> = (0..WRITERS)
        .map(|w| {
            let server = server.clone();
            tokio::spawn(async move {
                for i in 0..EACH {
                    let (status, body) = put(&server, "tbl", &format!("{w}-{i}"), i as i64).await;
                    assert_eq!(status, StatusCode::OK, "{body}");
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.expect("writer");
    }
    let syncs = disk.sync_count() - before;
    let writes = (WRITERS * EACH) as u64;
    assert!(syncs < writes, "{writes} acknowledged writes took {syncs} syncs: none was shared");
    assert_eq!(item_count(&server, "tbl").await, writes);
    disk.close();
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn log_files_rotate_and_are_deleted_once_the_database_file_holds_them() {
    let dir = fresh_dir("rotate");
    let small = DiskOptions { wal_rotate_bytes: 4096, ..DiskOptions::default() };
    {
        let disk = Arc::new(DiskStorage::open(&dir, &small).expect("open"));
        let engine = Engine::open(EngineConfig::local(), disk.clone(), START.millis()).expect("load");
        let server = Server::new(Arc::new(engine), 1)
            .with_clock(Arc::new(ManualClock::new(START)))
            .with_durability(disk.durability());
        create(&server, "tbl").await;
        // About 60 bytes a write: several log files of 4 KB.
        for i in 0..500 {
            assert_eq!(put(&server, "tbl", &format!("k{i}"), i).await.0, StatusCode::OK);
        }
        assert_eq!(
            call(&server, "DeleteItem", json!({"TableName": "tbl", "Key": {"id": {"S": "k7"}}})).await.0,
            StatusCode::OK
        );
        assert!(disk.sync_count() >= 501);
        disk.close();
        // Closed cleanly: the database file holds everything, and only the
        // newest log file (empty or not yet deleted) may remain.
        assert!(dynaburst_diskstore::wal_files(&dir).expect("list") <= 2);
    }
    let (server, disk) = open(&dir);
    assert_eq!(item_count(&server, "tbl").await, 499);
    assert_eq!(get(&server, "tbl", "k499").await.1["Item"]["v"]["N"], "499");
    assert_eq!(get(&server, "tbl", "k7").await.1, json!({}));
    // Start-up replayed and removed the old files and started a new one.
    assert_eq!(dynaburst_diskstore::wal_files(&dir).expect("list"), 1);
    disk.close();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_second_server_on_the_same_directory_is_refused() {
    let dir = fresh_dir("lock");
    let first = DiskStorage::open(&dir, &DiskOptions::default()).expect("first");
    let second = DiskStorage::open(&dir, &DiskOptions::default());
    let Err(e @ OpenError::Locked { .. }) = second else { panic!("second open was not refused") };
    assert_eq!(
        e.to_string(),
        format!(
            "data directory {} is in use by another dynaburst server (it holds {}); stop that server or pass another --data-dir",
            dir.display(),
            dir.join("LOCK").display()
        )
    );
    drop(first);
    // Once the first is gone, the directory opens again.
    DiskStorage::open(&dir, &DiskOptions::default()).expect("reopened");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The capacity model's partitions of `table`: (first hash, bytes) each,
/// and the table's size as DescribeTable reports it.
fn partitions(server: &Server, table: &str) -> (Vec<(u128, u64)>, u64) {
    let reports = server.engine().capacity_reports(START.millis());
    let report = reports.iter().find(|r| r.table_name == table && r.index_name.is_none()).expect("the table's report");
    (report.partitions.iter().map(|p| (p.start, p.size_bytes)).collect(), report.size_bytes)
}

fn open_with(dir: &std::path::Path, config: EngineConfig) -> (Server, Arc<DiskStorage>) {
    let disk = Arc::new(DiskStorage::open(dir, &DiskOptions::default()).expect("open the data directory"));
    let engine = Engine::open(config, disk.clone(), START.millis()).expect("load the tables");
    let server = Server::new(Arc::new(engine), 1).with_clock(Arc::new(ManualClock::new(START)));
    (server.with_durability(disk.durability()), disk)
}

async fn put_padded(server: &Server, table: &str, id: &str, pad: usize) {
    let item = json!({"id": {"S": id}, "pad": {"S": "x".repeat(pad)}});
    let (status, body) = call(server, "PutItem", json!({"TableName": table, "Item": item})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[tokio::test]
async fn the_partitions_keep_their_sizes_across_a_restart() {
    let dir = fresh_dir("sizes");
    let before = {
        let (server, disk) = open(&dir);
        create(&server, "tbl").await;
        for i in 0..200 {
            put_padded(&server, "tbl", &format!("k{i}"), 50 + i).await;
        }
        // Some replaced, some deleted: the sizes follow.
        for i in 0..40 {
            put_padded(&server, "tbl", &format!("k{i}"), 10).await;
        }
        for i in 40..60 {
            let (status, _) =
                call(&server, "DeleteItem", json!({"TableName": "tbl", "Key": {"id": {"S": format!("k{i}")}}})).await;
            assert_eq!(status, StatusCode::OK);
        }
        let (parts, size) = partitions(&server, "tbl");
        // The model is fed by the durable store's writes.
        assert_eq!(parts.len(), 4, "{parts:?}");
        assert_eq!(parts.iter().map(|p| p.1).sum::<u64>(), size);
        assert!(parts.iter().all(|p| p.1 > 0), "{parts:?}");
        disk.close();
        parts
    };
    // After a clean restart each partition has the bytes it had (the four
    // on-demand partitions begin at quarters of the hash space, where the
    // stored size ranges begin too).
    {
        let (server, disk) = open(&dir);
        assert_eq!(partitions(&server, "tbl").0, before);
        // A write after the restart moves them on from there.
        put_padded(&server, "tbl", "new", 100).await;
        let (parts, size) = partitions(&server, "tbl");
        assert_eq!(parts.iter().map(|p| p.1).sum::<u64>(), size);
        disk.close();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_partition_split_for_size_splits_again_after_a_restart() {
    let dir = fresh_dir("split");
    // Partitions split past 4 KB here (10 GB in DynamoDB).
    let mut config = EngineConfig::local();
    if let Some(capacity) = config.capacity.as_mut() {
        capacity.partition_split_bytes = 4096;
    }
    let split = {
        let (server, disk) = open_with(&dir, config.clone());
        create(&server, "tbl").await;
        for i in 0..120 {
            put_padded(&server, "tbl", &format!("k{i}"), 300).await;
        }
        let (parts, size) = partitions(&server, "tbl");
        assert!(size > 4 * 4096 * 2, "{size}");
        assert!(parts.len() > 4, "split for size: {parts:?}");
        // A split halves its partition's bytes, rounding down: a byte may
        // go missing per split.
        let lost = size - parts.iter().map(|p| p.1).sum::<u64>();
        assert!(lost < parts.len() as u64, "{lost} bytes lost in {} partitions", parts.len());
        disk.close();
        parts.len()
    };
    let (server, disk) = open_with(&dir, config);
    let (parts, size) = partitions(&server, "tbl");
    let lost = size - parts.iter().map(|p| p.1).sum::<u64>();
    assert!(lost < parts.len() as u64, "{lost} bytes lost in {} partitions: {parts:?}", parts.len());
    assert!(parts.len() > 4, "the restarted model splits for size again: {parts:?} (was {split})");
    assert!(parts.iter().all(|p| p.1 <= 4096), "no partition over the split size: {parts:?}");
    disk.close();
    let _ = std::fs::remove_dir_all(&dir);
}
