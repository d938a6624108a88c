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
        // The retired files past the newest few were kept for reuse.
        assert_eq!(dynaburst_diskstore::spare_wal_files(&dir).expect("spares"), dynaburst_diskstore::MAX_SPARE_LOGS);
    }
    let (server, disk) = open(&dir);
    assert_eq!(item_count(&server, "tbl").await, 499);
    assert_eq!(get(&server, "tbl", "k499").await.1["Item"]["v"]["N"], "499");
    assert_eq!(get(&server, "tbl", "k7").await.1, json!({}));
    // Start-up replayed and retired the old files and started a new one
    // on one of the spares; the files it retired went, the spares being
    // full.
    assert_eq!(dynaburst_diskstore::wal_files(&dir).expect("list"), 1);
    assert_eq!(dynaburst_diskstore::spare_wal_files(&dir).expect("spares"), dynaburst_diskstore::MAX_SPARE_LOGS - 1);
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

// ---- Secondary indexes on disk ----

/// A table keyed by `p` (S) and `s` (N) with a GSI `byG` (`g`, `s`) and an
/// LSI `byL` (`p`, `l`).
async fn create_indexed(server: &Server, name: &str) {
    let (status, body) = call(
        server,
        "CreateTable",
        json!({"TableName": name,
            "AttributeDefinitions": [{"AttributeName": "p", "AttributeType": "S"}, {"AttributeName": "s", "AttributeType": "N"},
                {"AttributeName": "g", "AttributeType": "S"}, {"AttributeName": "l", "AttributeType": "N"}],
            "KeySchema": [{"AttributeName": "p", "KeyType": "HASH"}, {"AttributeName": "s", "KeyType": "RANGE"}],
            "GlobalSecondaryIndexes": [{"IndexName": "byG",
                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}, {"AttributeName": "s", "KeyType": "RANGE"}],
                "Projection": {"ProjectionType": "ALL"}}],
            "LocalSecondaryIndexes": [{"IndexName": "byL",
                "KeySchema": [{"AttributeName": "p", "KeyType": "HASH"}, {"AttributeName": "l", "KeyType": "RANGE"}],
                "Projection": {"ProjectionType": "KEYS_ONLY"}}],
            "BillingMode": "PAY_PER_REQUEST"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

/// Items p0..p3 x s0..s29, in index partitions g0..g4; then some moved to
/// another index partition, some made to leave the GSI (no `g`), some
/// deleted; the LSI gets every third item.
async fn fill_indexed(server: &Server, table: &str) {
    for p in 0..4 {
        let mut requests = Vec::new();
        for s in 0..30 {
            let mut item = json!({"p": {"S": format!("p{p}")}, "s": {"N": s.to_string()},
                "g": {"S": format!("g{}", (p + s) % 5)}, "pad": {"S": "x".repeat(s * 7)}});
            if s % 3 == 0 {
                item["l"] = json!({"N": (100 - s).to_string()});
            }
            requests.push(json!({"PutRequest": {"Item": item}}));
        }
        for chunk in requests.chunks(25) {
            let (status, body) = call(server, "BatchWriteItem", json!({"RequestItems": {table: chunk.to_vec()}})).await;
            assert_eq!(status, StatusCode::OK, "{body}");
            assert_eq!(body["UnprocessedItems"], json!({}), "{body}");
        }
    }
    for s in 0..10 {
        let key = json!({"p": {"S": "p1"}, "s": {"N": s.to_string()}});
        let (status, body) = call(
            server,
            "UpdateItem",
            json!({"TableName": table, "Key": key,
            "UpdateExpression": "SET g = :g", "ExpressionAttributeValues": {":g": {"S": "moved"}}}),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    for s in 10..15 {
        let key = json!({"p": {"S": "p2"}, "s": {"N": s.to_string()}});
        let (status, body) =
            call(server, "UpdateItem", json!({"TableName": table, "Key": key, "UpdateExpression": "REMOVE g"})).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    for s in 20..30 {
        let key = json!({"p": {"S": "p3"}, "s": {"N": s.to_string()}});
        let (status, body) = call(server, "DeleteItem", json!({"TableName": table, "Key": key})).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
}

/// Every answer the indexes give: each GSI partition forward and backward
/// (in pages of 7), each LSI partition, a Scan of each index, and the
/// indexes' counts and sizes as DescribeTable reports them.
async fn index_answers(server: &Server, table: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let pages = |index: &str, key: &str, value: &str, forward: bool| {
        json!({"TableName": table, "IndexName": index, "KeyConditionExpression": format!("{key} = :v"),
            "ExpressionAttributeValues": {":v": {"S": value}}, "ScanIndexForward": forward, "Limit": 7})
    };
    let mut queries = Vec::new();
    for g in ["g0", "g1", "g2", "g3", "g4", "moved", "none"] {
        queries.push(("Query", pages("byG", "g", g, true)));
        queries.push(("Query", pages("byG", "g", g, false)));
    }
    for p in ["p0", "p1", "p2", "p3"] {
        queries.push(("Query", pages("byL", "p", p, true)));
    }
    for index in ["byG", "byL"] {
        queries.push(("Scan", json!({"TableName": table, "IndexName": index, "Limit": 9})));
    }
    for (op, mut request) in queries {
        let mut items = Vec::new();
        loop {
            let (status, body) = call(server, op, request.clone()).await;
            assert_eq!(status, StatusCode::OK, "{body}");
            items.extend(body["Items"].as_array().cloned().unwrap_or_default());
            match body.get("LastEvaluatedKey") {
                Some(k) => request["ExclusiveStartKey"] = k.clone(),
                None => break,
            }
        }
        out.push(json!({"request": request, "items": items}));
    }
    let (status, body) = call(server, "DescribeTable", json!({"TableName": table})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    for list in ["GlobalSecondaryIndexes", "LocalSecondaryIndexes"] {
        for ix in body["Table"][list].as_array().cloned().unwrap_or_default() {
            out.push(json!([ix["IndexName"], ix["ItemCount"], ix["IndexSizeBytes"]]));
        }
    }
    out
}

/// The capacity model's partitions of GSI `index`: (first hash, bytes) each.
fn gsi_partitions(server: &Server, table: &str, index: &str) -> Vec<(u128, u64)> {
    let reports = server.engine().capacity_reports(START.millis());
    let report = reports
        .iter()
        .find(|r| r.table_name == table && r.index_name.as_deref() == Some(index))
        .expect("the index's report");
    report.partitions.iter().map(|p| (p.start, p.size_bytes)).collect()
}

/// Copies the files of `from` into a fresh `to`: what a crash at this
/// moment leaves on disk (the applier held, so the file does not change
/// while it is copied, and the log holds every acknowledged batch).
fn crash_image(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).expect("image dir");
    for entry in std::fs::read_dir(from).expect("read dir") {
        let entry = entry.expect("entry");
        if entry.file_name() == dynaburst_diskstore::LOCK_FILE {
            continue;
        }
        if entry.file_type().expect("type").is_dir() {
            crash_image(&entry.path(), &to.join(entry.file_name()));
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name())).expect("copy");
        }
    }
}

#[tokio::test]
async fn index_queries_answer_the_same_after_a_restart_and_after_a_crash() {
    let dir = fresh_dir("indexes");
    let crashed = fresh_dir("indexes-crash");
    let before = {
        let (server, disk) = open(&dir);
        create_indexed(&server, "tbl").await;
        fill_indexed(&server, "tbl").await;
        let answers = index_answers(&server, "tbl").await;
        // Sanity: the GSI holds the moved items, not the removed ones.
        let moved = &answers[10]["items"];
        assert_eq!(moved.as_array().map(Vec::len), Some(10), "{moved}");
        // 40 items carry `l`; 3 of them were deleted.
        assert_eq!(answers.last().map(|a| &a[1]), Some(&json!(37)), "LSI count");
        // The entries are in the file's index tables, not in memory.
        disk.wait_applied().expect("applied");
        assert_eq!(disk.stored_indexes().expect("index tables").len(), 2);
        // A crash with half of the later writes only in the log.
        disk.hold_applier(true);
        for s in 0..5 {
            let key = json!({"p": {"S": "p0"}, "s": {"N": s.to_string()}});
            let (status, _) = call(
                &server,
                "UpdateItem",
                json!({"TableName": "tbl", "Key": key,
                "UpdateExpression": "SET g = :g", "ExpressionAttributeValues": {":g": {"S": "late"}}}),
            )
            .await;
            assert_eq!(status, StatusCode::OK);
        }
        crash_image(&dir, &crashed);
        disk.hold_applier(false);
        let late = index_answers(&server, "tbl").await;
        let gsi = gsi_partitions(&server, "tbl", "byG");
        assert!(gsi.iter().map(|p| p.1).sum::<u64>() > 0, "{gsi:?}");
        disk.close();
        (answers, late, gsi)
    };
    // A clean restart answers as the server did before it stopped, and the
    // GSI's capacity model has its partitions' sizes back.
    {
        let (server, disk) = open(&dir);
        assert_eq!(index_answers(&server, "tbl").await, before.1);
        assert_eq!(gsi_partitions(&server, "tbl", "byG"), before.2);
        disk.close();
    }
    // So does the crash image, whose later writes the log replays.
    {
        let (server, disk) = open(&crashed);
        assert_eq!(index_answers(&server, "tbl").await, before.1);
        assert_eq!(gsi_partitions(&server, "tbl", "byG"), before.2);
        assert_ne!(before.0, before.1, "the late writes changed the GSI");
        disk.close();
    }
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&crashed);
}

/// Reads of items and index entries through a storage, counted.
#[derive(Default)]
struct Reads {
    items: std::sync::atomic::AtomicU64,
    entries: std::sync::atomic::AtomicU64,
}

/// A disk storage whose table stores count every item and index entry
/// they hand out.
struct Counting {
    disk: Arc<DiskStorage>,
    reads: Arc<Reads>,
}

struct CountingStore {
    inner: Box<dyn TableStore>,
    reads: Arc<Reads>,
}

use dynaburst_engine::store::{
    Direction, IndexSpan, IndexVisit, KeySpan, Storage, StoreError, StoreKey, TableMeta, TableStore, Visit, WriteBatch,
};
use dynaburst_model::Item;
use std::sync::atomic::Ordering::SeqCst;

impl TableStore for CountingStore {
    fn get(&self, key: &StoreKey) -> Result<Option<Arc<Item>>, StoreError> {
        self.reads.items.fetch_add(1, SeqCst);
        self.inner.get(key)
    }
    fn write(&mut self, key: StoreKey, item: Option<Arc<Item>>) -> Result<Option<Arc<Item>>, StoreError> {
        self.inner.write(key, item)
    }
    fn range(&self, span: KeySpan<'_>, direction: Direction, visit: Visit<'_>) -> Result<(), StoreError> {
        self.inner.range(span, direction, &mut |k, i| {
            self.reads.items.fetch_add(1, SeqCst);
            visit(k, i)
        })
    }
    fn holds_items_in_memory(&self) -> bool {
        self.inner.holds_items_in_memory()
    }
    fn storage_id(&self) -> Option<u64> {
        self.inner.storage_id()
    }
    fn stores_index_entries(&self) -> bool {
        self.inner.stores_index_entries()
    }
    fn index_range(
        &self,
        index: &str,
        span: IndexSpan<'_>,
        dir: Direction,
        visit: IndexVisit<'_>,
    ) -> Result<(), StoreError> {
        self.inner.index_range(index, span, dir, &mut |k, i| {
            self.reads.entries.fetch_add(1, SeqCst);
            visit(k, i)
        })
    }
}

impl Counting {
    fn wrap(&self, inner: Box<dyn TableStore>) -> Box<dyn TableStore> {
        Box::new(CountingStore { inner, reads: self.reads.clone() })
    }
}

impl Storage for Counting {
    fn create_table(&self, meta: &TableMeta) -> Result<Box<dyn TableStore>, StoreError> {
        self.disk.create_table(meta).map(|s| self.wrap(s))
    }
    fn open_table(&self, name: &str) -> Result<Box<dyn TableStore>, StoreError> {
        self.disk.open_table(name).map(|s| self.wrap(s))
    }
    fn list_tables(&self) -> Result<Vec<TableMeta>, StoreError> {
        self.disk.list_tables()
    }
    fn save_table_meta(&self, meta: &TableMeta) -> Result<(), StoreError> {
        self.disk.save_table_meta(meta)
    }
    fn drop_table(&self, name: &str) -> Result<(), StoreError> {
        self.disk.drop_table(name)
    }
    fn table_stats(&self, name: &str) -> Result<Option<(u64, u64)>, StoreError> {
        self.disk.table_stats(name)
    }
    fn table_sizes(&self, name: &str) -> Result<Option<Vec<(u128, u64)>>, StoreError> {
        self.disk.table_sizes(name)
    }
    fn index_sizes(
        &self,
        name: &str,
        index: &str,
    ) -> Result<Option<Vec<dynaburst_engine::store::IndexRange>>, StoreError> {
        self.disk.index_sizes(name, index)
    }
    fn stored_index_names(&self, name: &str) -> Result<Vec<String>, StoreError> {
        self.disk.stored_index_names(name)
    }
    fn drop_index(&self, name: &str, index: &str) -> Result<(), StoreError> {
        self.disk.drop_index(name, index)
    }
    fn commit(
        &self,
        batch: WriteBatch,
        stores: &mut [&mut dyn TableStore],
    ) -> Result<Vec<Option<Arc<Item>>>, StoreError> {
        self.disk.commit(batch, stores)
    }
}

#[tokio::test]
async fn start_up_reads_no_item_and_no_index_entry() {
    let dir = fresh_dir("startup-reads");
    let before = {
        let (server, disk) = open(&dir);
        create_indexed(&server, "tbl").await;
        fill_indexed(&server, "tbl").await;
        let answers = index_answers(&server, "tbl").await;
        disk.close();
        answers
    };
    let disk = Arc::new(DiskStorage::open(&dir, &DiskOptions::default()).expect("open the data directory"));
    let reads = Arc::new(Reads::default());
    let counting = Arc::new(Counting { disk: disk.clone(), reads: reads.clone() });
    // Item collections of 2,000 bytes at most here (p0's holds more).
    let config = EngineConfig { item_collection_limit_bytes: 2_000, ..EngineConfig::local() };
    let engine = Engine::open(config, counting, START.millis()).expect("load the tables");
    assert_eq!((reads.items.load(SeqCst), reads.entries.load(SeqCst)), (0, 0), "start-up read the data");
    let server = Server::new(Arc::new(engine), 1)
        .with_clock(Arc::new(ManualClock::new(START)))
        .with_durability(disk.durability());
    // The counts come from the file, and the queries from the index tables.
    assert_eq!(index_answers(&server, "tbl").await, before);
    assert!(reads.entries.load(SeqCst) > 0);
    // A write into an item collection measures that collection (its
    // partition's items, read then) first: p0's is already over the limit,
    // a new one is not.
    let item = |p: &str| json!({"TableName": "tbl", "Item": {"p": {"S": p}, "s": {"N": "100"}, "l": {"N": "1"}}});
    let (status, body) = call(&server, "PutItem", item("p0")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["__type"], json!("com.amazonaws.dynamodb.v20120810#ItemCollectionSizeLimitExceededException"));
    let (status, body) = call(&server, "PutItem", item("p9")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    disk.close();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Advances `clock` until the index is ACTIVE (bounded).
async fn wait_active(server: &Server, clock: &ManualClock, table: &str, index: &str) {
    for _ in 0..100 {
        let (_, body) = call(server, "DescribeTable", json!({"TableName": table})).await;
        let gsis = body["Table"]["GlobalSecondaryIndexes"].as_array().cloned().unwrap_or_default();
        if gsis.iter().any(|g| g["IndexName"] == index && g["IndexStatus"] == "ACTIVE") {
            return;
        }
        clock.advance(Duration::from_secs(1));
    }
    panic!("{index} never became ACTIVE");
}

#[tokio::test]
async fn an_index_added_and_deleted_by_update_table_lives_on_disk() {
    let dir = fresh_dir("update-indexes");
    let open_clocked = |dir: &std::path::Path| {
        let disk = Arc::new(DiskStorage::open(dir, &DiskOptions::default()).expect("open the data directory"));
        let engine = Engine::open(EngineConfig::local(), disk.clone(), START.millis()).expect("load the tables");
        let clock = Arc::new(ManualClock::new(START));
        let server = Server::new(Arc::new(engine), 1).with_clock(clock.clone()).with_durability(disk.durability());
        (server, disk, clock)
    };
    let add = |name: &str| {
        json!({"TableName": "tbl", "AttributeDefinitions": [{"AttributeName": "g", "AttributeType": "S"}, {"AttributeName": "s", "AttributeType": "N"}],
            "GlobalSecondaryIndexUpdates": [{"Create": {"IndexName": name,
                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}, {"AttributeName": "s", "KeyType": "RANGE"}],
                "Projection": {"ProjectionType": "KEYS_ONLY"}}}]})
    };
    let delete =
        |name: &str| json!({"TableName": "tbl", "GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": name}}]});
    let (before, with_added) = {
        let (server, disk, clock) = open_clocked(&dir);
        create_indexed(&server, "tbl").await;
        fill_indexed(&server, "tbl").await;
        let before = index_answers(&server, "tbl").await;
        // Added: backfilled from the items into the file.
        let (status, body) = call(&server, "UpdateTable", add("added")).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        wait_active(&server, &clock, "tbl", "added").await;
        let query = json!({"TableName": "tbl", "IndexName": "added", "KeyConditionExpression": "g = :g",
            "ExpressionAttributeValues": {":g": {"S": "moved"}}});
        let (status, body) = call(&server, "Query", query.clone()).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["Count"], json!(10), "{body}");
        disk.wait_applied().expect("applied");
        assert_eq!(disk.stored_indexes().expect("index tables").len(), 3);
        // Deleted: its entries leave the file.
        let (status, body) = call(&server, "UpdateTable", delete("byG")).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        disk.wait_applied().expect("applied");
        let tables = disk.stored_indexes().expect("index tables");
        assert_eq!(tables.len(), 2, "{tables:?}");
        assert!(tables.iter().all(|t| !t.ends_with("/byG")), "{tables:?}");
        let (status, body) = call(&server, "Query", query.clone()).await;
        disk.close();
        (before, (status, body, query))
    };
    let (server, disk, clock) = open_clocked(&dir);
    // After a restart (its clock starts again where the first one did) the
    // added index answers as before, the deleted one is gone.
    wait_active(&server, &clock, "tbl", "added").await;
    let (status, body) = call(&server, "Query", with_added.2.clone()).await;
    assert_eq!((status, &body), (with_added.0, &with_added.1));
    let (status, body) = call(
        &server,
        "Query",
        json!({"TableName": "tbl", "IndexName": "byG",
        "KeyConditionExpression": "g = :g", "ExpressionAttributeValues": {":g": {"S": "g1"}}}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    // The same name again: a fresh backfill, with none of the old entries.
    let (status, body) = call(&server, "UpdateTable", {
        let mut r = add("byG");
        r["GlobalSecondaryIndexUpdates"][0]["Create"]["Projection"] = json!({"ProjectionType": "ALL"});
        r
    })
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    wait_active(&server, &clock, "tbl", "byG").await;
    let again = index_answers(&server, "tbl").await;
    // Same GSI partitions and LSI answers as the original byG.
    assert_eq!(again[..again.len() - 3], before[..before.len() - 2]);
    disk.close();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Deleting a table takes its index tables out of the file.
#[tokio::test]
async fn a_deleted_table_leaves_no_index_table() {
    let dir = fresh_dir("drop-indexes");
    let (server, disk) = open(&dir);
    create_indexed(&server, "tbl").await;
    create_indexed(&server, "other").await;
    fill_indexed(&server, "tbl").await;
    fill_indexed(&server, "other").await;
    disk.wait_applied().expect("applied");
    assert_eq!(disk.stored_indexes().expect("index tables").len(), 4);
    let (status, body) = call(&server, "DeleteTable", json!({"TableName": "tbl"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    disk.wait_applied().expect("applied");
    assert_eq!(disk.stored_indexes().expect("index tables").len(), 2);
    let (status, body) = call(
        &server,
        "Query",
        json!({"TableName": "other", "IndexName": "byG",
        "KeyConditionExpression": "g = :g", "ExpressionAttributeValues": {":g": {"S": "moved"}}}),
    )
    .await;
    assert_eq!((status, &body["Count"]), (StatusCode::OK, &json!(10)), "{body}");
    disk.close();
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn item_collection_sizes_held_in_memory_are_bounded_and_measured_again_when_dropped() {
    let dir = fresh_dir("collection-cache");
    // Two sizes held at most, collections of 2,000 bytes at most.
    let config = EngineConfig { item_collection_limit_bytes: 2_000, item_collection_cache: 2, ..EngineConfig::local() };
    let (server, disk) = open_with(&dir, config);
    create_indexed(&server, "tbl").await;
    let held = || server.engine().get_table("tbl").expect("the table").data.read().collections.len();
    let put = |p: &str, s: u32, pad: usize| {
        json!({"TableName": "tbl", "Item": {"p": {"S": p}, "s": {"N": s.to_string()}, "pad": {"S": "x".repeat(pad)}},
            "ReturnItemCollectionMetrics": "SIZE"})
    };
    // Collection a: three items of 507 and 508 bytes (p 2, s 1 or 2, pad
    // 503): 1,523.
    for s in 0..3 {
        let (status, body) = call(&server, "PutItem", put("a", s, 500)).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["ItemCollectionMetrics"]["ItemCollectionKey"], json!({"p": {"S": "a"}}), "{body}");
    }
    // Writes into four other collections push a's size out of memory.
    let others = |round: u32| {
        let server = &server;
        async move {
            for p in ["b", "c", "d", "e"] {
                let (status, body) = call(server, "PutItem", put(p, round, 10)).await;
                assert_eq!(status, StatusCode::OK, "{body}");
            }
        }
    };
    others(0).await;
    assert!(held() <= 2, "{} sizes held", held());
    let a_held = |server: &Server| {
        let t = server.engine().get_table("tbl").expect("the table");
        let d = t.data.read();
        d.collections.keys().any(|k| *k == dynaburst_model::KeyValue::S("a".into()))
    };
    assert!(!a_held(&server), "a's size was dropped");
    // Measured again from the file: 1,523 + 358 fits in 2,000...
    let (status, body) = call(&server, "PutItem", put("a", 3, 350)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    others(1).await;
    assert!(!a_held(&server), "a's size was dropped again");
    // ...and 1,881 + 308 does not.
    let (status, body) = call(&server, "PutItem", put("a", 4, 300)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["__type"], json!("com.amazonaws.dynamodb.v20120810#ItemCollectionSizeLimitExceededException"));
    // A smaller one still fits (1,881 + 108).
    let (status, body) = call(&server, "PutItem", put("a", 4, 100)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(held() <= 2, "{} sizes held", held());
    disk.close();
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn start_up_drops_the_entries_of_an_index_the_catalog_does_not_name() {
    use dynaburst_engine::store::Storage;
    let dir = fresh_dir("orphan-index");
    let (before, without_gsi) = {
        let (server, disk) = open(&dir);
        create_indexed(&server, "tbl").await;
        fill_indexed(&server, "tbl").await;
        disk.wait_applied().expect("applied");
        assert_eq!(disk.stored_indexes().expect("index tables").len(), 2, "byG and byL");
        // What a crash in the middle of a GSI's backfill leaves: entries
        // in the file, an index the catalog does not name.
        let mut meta = disk.list_tables().expect("catalog").into_iter().find(|m| m.name == "tbl").expect("tbl");
        meta.indexes.retain(|d| d.name != "byG");
        disk.save_table_meta(&meta).expect("save the catalog");
        let query = json!({"TableName": "tbl", "IndexName": "byL", "KeyConditionExpression": "p = :p",
            "ExpressionAttributeValues": {":p": {"S": "p0"}}});
        let (_, before) = call(&server, "Query", query.clone()).await;
        disk.wait_applied().expect("applied");
        disk.close();
        (before, query)
    };
    let (server, disk) = open(&dir);
    disk.wait_applied().expect("applied");
    let stored = disk.stored_indexes().expect("index tables");
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert!(stored[0].ends_with("/byL"), "{stored:?}");
    assert_eq!(disk.stored_index_names("tbl").expect("names"), vec!["byL".to_string()]);
    // The LSI the catalog names is untouched.
    let (status, after) = call(&server, "Query", without_gsi).await;
    assert_eq!(status, StatusCode::OK, "{after}");
    assert_eq!(after, before);
    assert_eq!(after["Count"], json!(10), "{after}");
    disk.close();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A Query whose key condition holds a value far past DynamoDB's key-size
/// limits answers as the in-memory server does, on a table whose items are
/// in the database: a partition-key value over 2,048 bytes is refused as
/// DynamoDB refuses it, and a sort-key bound of 70 KB (longer than any key
/// the database holds, 64 KiB) is compared with the stored keys rather than
/// making the database panic.
#[tokio::test]
async fn a_query_with_an_oversized_key_value_answers_as_in_memory() {
    let dir = fresh_dir("huge-key");
    let (server, disk) = open(&dir);
    let memory = Server::new(
        Arc::new(
            Engine::open(EngineConfig::local(), Arc::new(dynaburst_engine::store::MemStorage::new()), START.millis())
                .expect("memory"),
        ),
        1,
    )
    .with_clock(Arc::new(ManualClock::new(START)));
    let huge = "x".repeat(70_000);
    for s in [&server, &memory] {
        let (status, body) = call(
            s,
            "CreateTable",
            json!({"TableName": "tbl",
                "AttributeDefinitions": [{"AttributeName": "p", "AttributeType": "S"}, {"AttributeName": "r", "AttributeType": "S"}],
                "KeySchema": [{"AttributeName": "p", "KeyType": "HASH"}, {"AttributeName": "r", "KeyType": "RANGE"}],
                "GlobalSecondaryIndexes": [{"IndexName": "byR",
                    "KeySchema": [{"AttributeName": "r", "KeyType": "HASH"}, {"AttributeName": "p", "KeyType": "RANGE"}],
                    "Projection": {"ProjectionType": "ALL"}}],
                "BillingMode": "PAY_PER_REQUEST"}),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        for r in ["a", "w", "x", "xx", "y"] {
            let item = json!({"p": {"S": "p1"}, "r": {"S": r}});
            assert_eq!(call(s, "PutItem", json!({"TableName": "tbl", "Item": item})).await.0, StatusCode::OK);
        }
    }
    disk.wait_applied().expect("the items and entries are in the database");
    let query = |condition: &str, values: Value, index: Option<&str>| {
        let mut q =
            json!({"TableName": "tbl", "KeyConditionExpression": condition, "ExpressionAttributeValues": values});
        if let Some(index) = index {
            q["IndexName"] = json!(index);
        }
        q
    };
    let sort_keys = |body: &Value| -> Vec<String> {
        body["Items"]
            .as_array()
            .map_or(vec![], |items| items.iter().filter_map(|i| i["r"]["S"].as_str().map(str::to_string)).collect())
    };
    let cases = [
        (query("p = :p AND r > :r", json!({":p": {"S": "p1"}, ":r": {"S": huge}}), None), vec!["y"]),
        (query("p = :p AND r < :r", json!({":p": {"S": "p1"}, ":r": {"S": huge}}), None), vec!["a", "w", "x", "xx"]),
        (
            query(
                "p = :p AND r BETWEEN :a AND :r",
                json!({":p": {"S": "p1"}, ":a": {"S": "w"}, ":r": {"S": huge}}),
                None,
            ),
            vec!["w", "x", "xx"],
        ),
        (
            query("p = :p AND begins_with(r, :r)", json!({":p": {"S": "p1"}, ":r": {"S": huge}}), None),
            Vec::<&str>::new(),
        ),
    ];
    for (q, want) in cases {
        let on_disk = call(&server, "Query", q.clone()).await;
        assert_eq!(on_disk, call(&memory, "Query", q.clone()).await, "{q}");
        assert_eq!(
            (on_disk.0, sort_keys(&on_disk.1)),
            (StatusCode::OK, want.iter().map(|s| s.to_string()).collect::<Vec<_>>()),
            "{q}"
        );
    }
    let refused =
        "One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of2048 bytes";
    for q in
        [query("p = :p", json!({":p": {"S": huge}}), None), query("r = :r", json!({":r": {"S": huge}}), Some("byR"))]
    {
        let on_disk = call(&server, "Query", q.clone()).await;
        assert_eq!(on_disk, call(&memory, "Query", q.clone()).await, "{q}");
        assert_eq!((on_disk.0, on_disk.1["message"].as_str()), (StatusCode::BAD_REQUEST, Some(refused)), "{q}");
    }
    disk.close();
    let _ = std::fs::remove_dir_all(&dir);
}

async fn get_path(server: &Server, path: &str) -> (StatusCode, String) {
    let request = Request::builder().method("GET").uri(path).body(Full::new(Bytes::new())).expect("request");
    let response = handle_request(server, request).await;
    let status = response.status();
    let bytes = response.into_body().collect().await.expect("body").to_bytes();
    (status, String::from_utf8_lossy(&bytes).into_owned())
}

/// The metrics (which count every write the engine made) wait for the log
/// as every request's answer does: after a sync fails they answer the
/// storage's error instead of counts that include the failed write.
#[tokio::test]
async fn metrics_wait_for_the_log_as_requests_do() {
    let dir = fresh_dir("metrics");
    let (server, disk) = open(&dir);
    create(&server, "tbl").await;
    assert_eq!(put(&server, "tbl", "a", 1).await.0, StatusCode::OK);
    for path in ["/metrics", "/metrics.json"] {
        let (status, body) = get_path(&server, path).await;
        assert_eq!(status, StatusCode::OK, "{path}: {body}");
        assert!(body.contains("tbl"), "{path}: {body}");
    }
    disk.durability().fail_next_sync();
    assert_eq!(put(&server, "tbl", "b", 2).await.0, StatusCode::INTERNAL_SERVER_ERROR);
    for path in ["/metrics", "/metrics.json"] {
        let (status, body) = get_path(&server, path).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{path}: {body}");
        assert!(body.contains("No space left on device"), "{path}: {body}");
    }
    // The health answer does not depend on the storage.
    assert_eq!(get_path(&server, "/").await.0, StatusCode::OK);
    disk.close();
    let _ = std::fs::remove_dir_all(&dir);
}
