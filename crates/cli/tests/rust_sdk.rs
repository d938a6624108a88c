//! Boundary tests of the real `dynaburst` binary through the AWS SDK for Rust
//! (`aws-sdk-dynamodb`).
//!
//! Every test starts its own server (`dynaburst serve --host 127.0.0.1
//! --port 0`), reads the `dynaburst listening on http://...` line, points a
//! client at it, and kills the process when the guard is dropped.
//!
//! Run: `cargo test -p dynaburst --test rust_sdk`

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aws_sdk_dynamodb::config::retry::RetryConfig;
use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::operation::describe_table::DescribeTableError;
use aws_sdk_dynamodb::operation::execute_transaction::ExecuteTransactionError;
use aws_sdk_dynamodb::operation::get_item::GetItemError;
use aws_sdk_dynamodb::operation::put_item::PutItemError;
use aws_sdk_dynamodb::operation::query::QueryError;
use aws_sdk_dynamodb::operation::tag_resource::TagResourceError;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BatchStatementErrorCodeEnum, BatchStatementRequest, BillingMode, Capacity,
    ConditionCheck, CreateGlobalSecondaryIndexAction, DeleteGlobalSecondaryIndexAction, GlobalSecondaryIndex,
    GlobalSecondaryIndexDescription, GlobalSecondaryIndexUpdate, IndexStatus, KeySchemaElement, KeyType,
    KeysAndAttributes, LocalSecondaryIndex, ParameterizedStatement, Projection, ProjectionType, ProvisionedThroughput,
    Put, PutRequest, ReturnConsumedCapacity, ReturnValue, ScalarAttributeType, Select, TableStatus, Tag,
    TransactWriteItem, Update, WriteRequest,
};
use aws_sdk_dynamodb::Client;

// ---------------------------------------------------------------------------
// Server process guard
// ---------------------------------------------------------------------------

/// The running server. Dropping it kills the process and reaps it.
struct Server {
    child: Option<Child>,
    endpoint: String,
    stderr: Arc<Mutex<String>>,
    /// With DYNABURST_TEST_DATA_DIR=1: the server's `--data-dir`, removed
    /// on drop.
    data_dir: Option<std::path::PathBuf>,
}

impl Server {
    fn start() -> Server {
        Server::start_with(&[])
    }

    /// A server with `extra` arguments after `serve --host --port`.
    fn start_with(extra: &[&str]) -> Server {
        let bin = env!("CARGO_BIN_EXE_dynaburst");
        // DYNABURST_TEST_DATA_DIR=1 runs the suite against durable storage.
        static SERVERS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let data_dir = (std::env::var("DYNABURST_TEST_DATA_DIR").as_deref() == Ok("1")).then(|| {
            let n = SERVERS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            std::env::temp_dir().join(format!("dynaburst-rust-sdk-{}-{n}", std::process::id()))
        });
        let mut args: Vec<std::ffi::OsString> =
            vec!["serve".into(), "--host".into(), "127.0.0.1".into(), "--port".into(), "0".into()];
        if let Some(dir) = &data_dir {
            args.push("--data-dir".into());
            args.push(dir.clone().into_os_string());
        }
        let mut child = Command::new(bin)
            .args(&args)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawning {bin}: {e}"));

        // Collect stderr for diagnostics.
        let stderr = Arc::new(Mutex::new(String::new()));
        {
            let mut pipe = child.stderr.take().unwrap();
            let sink = Arc::clone(&stderr);
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = pipe.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    sink.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
                }
            });
        }

        // Read stdout on a thread: report the listening line, then keep
        // draining so the server never blocks on a full pipe.
        let (tx, rx) = mpsc::channel::<String>();
        {
            let stdout = child.stdout.take().unwrap();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stdout);
                let mut line = String::new();
                let mut sent = false;
                loop {
                    line.clear();
                    match reader.read_line(&mut line) {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {
                            if !sent {
                                if let Some(pos) = line.find("dynaburst listening on ") {
                                    let url = line[pos + "dynaburst listening on ".len()..].trim().to_string();
                                    let _ = tx.send(url);
                                    sent = true;
                                }
                            }
                        }
                    }
                }
            });
        }

        let mut server = Server { child: Some(child), endpoint: String::new(), stderr, data_dir };
        match rx.recv_timeout(Duration::from_secs(15)) {
            Ok(url) => {
                assert!(url.starts_with("http://127.0.0.1:"), "unexpected listening URL {url:?}");
                let port: u16 =
                    url["http://127.0.0.1:".len()..].parse().unwrap_or_else(|e| panic!("bad port in {url:?}: {e}"));
                assert_ne!(port, 0, "--port 0 must report the bound port");
                server.endpoint = url;
            }
            Err(_) => {
                let status = server.child.as_mut().unwrap().try_wait().ok().flatten();
                panic!(
                    "no 'dynaburst listening on' line within 15 s (exit status: {status:?}); stderr: {}",
                    server.stderr.lock().unwrap()
                );
            }
        }
        server
    }

    fn client(&self) -> Client {
        let config = aws_sdk_dynamodb::Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new("us-east-1"))
            .credentials_provider(Credentials::new("x", "y", None, None, "test"))
            .endpoint_url(&self.endpoint)
            .retry_config(RetryConfig::disabled())
            .build();
        Client::from_conf(config)
    }

    fn pid(&self) -> u32 {
        self.child.as_ref().unwrap().id()
    }

    /// Sends SIGTERM (via kill(1)) and waits up to `grace` for the exit.
    fn terminate(&mut self, grace: Duration) -> Option<ExitStatus> {
        let status = Command::new("kill").args(["-TERM", &self.pid().to_string()]).status().expect("running kill");
        assert!(status.success(), "kill -TERM failed");
        let child = self.child.as_mut().unwrap();
        let deadline = Instant::now() + grace;
        loop {
            if let Some(st) = child.try_wait().expect("try_wait") {
                self.child = None;
                return Some(st);
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if let Some(dir) = self.data_dir.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// A fresh server and a client pointed at it.
fn start() -> (Server, Client) {
    let server = Server::start();
    let client = server.client();
    (server, client)
}

/// A fresh server, a client, and the on-demand table of `create_table`.
async fn start_with_table(name: &str, range: Option<ScalarAttributeType>) -> (Server, Client) {
    let (server, client) = start();
    create_table(&client, name, range).await;
    (server, client)
}

fn s(v: &str) -> AttributeValue {
    AttributeValue::S(v.to_string())
}

fn n(v: &str) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

fn item(pairs: &[(&str, AttributeValue)]) -> HashMap<String, AttributeValue> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
}

/// Creates an on-demand table with hash key `pk` (S) and, if `range` is
/// given, range key `sk` of that type; waits until ACTIVE.
async fn create_table(client: &Client, name: &str, range: Option<ScalarAttributeType>) {
    let mut defs = vec![("pk", ScalarAttributeType::S)];
    let mut keys = vec![("pk", KeyType::Hash)];
    if let Some(t) = range {
        defs.push(("sk", t));
        keys.push(("sk", KeyType::Range));
    }
    create_table_request(client, name, &defs, &keys).send().await.expect("CreateTable");
    wait_active(client, name).await;
}

/// A CreateTable of on-demand table `name` with these attribute definitions
/// and table key (send it, then wait_active).
fn create_table_request(
    client: &Client,
    name: &str,
    defs: &[(&str, ScalarAttributeType)],
    keys: &[(&str, KeyType)],
) -> aws_sdk_dynamodb::operation::create_table::builders::CreateTableFluentBuilder {
    let mut req = client
        .create_table()
        .table_name(name)
        .billing_mode(BillingMode::PayPerRequest)
        .set_attribute_definitions(attrs(defs));
    for (a, t) in keys {
        req = req.key_schema(key(a, t.clone()));
    }
    req
}

async fn wait_active(client: &Client, name: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let out = client.describe_table().table_name(name).send().await.expect("DescribeTable");
        if out.table().and_then(|t| t.table_status()) == Some(&TableStatus::Active) {
            return;
        }
        assert!(Instant::now() < deadline, "table {name} not ACTIVE after 10 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Asserts that `result` failed (`what` says why it must) with error `code`
/// and exactly `message`.
fn assert_refused<T: std::fmt::Debug, E: ProvideErrorMetadata + std::fmt::Debug>(
    result: Result<T, E>,
    what: &str,
    code: &str,
    message: &str,
) {
    let err = result.expect_err(what);
    assert_eq!((err.code(), err.message()), (Some(code), Some(message)), "{what}: {err:?}");
}

/// A strongly consistent GetItem of the item with key pk = `pk` (S).
fn get_consistent(
    client: &Client,
    table: &str,
    pk: &str,
) -> aws_sdk_dynamodb::operation::get_item::builders::GetItemFluentBuilder {
    client.get_item().table_name(table).key("pk", s(pk)).consistent_read(true)
}

/// A Query of the partition pk = `pk` (S) of `table`.
fn query_partition(
    client: &Client,
    table: &str,
    pk: &str,
) -> aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder {
    client.query().table_name(table).key_condition_expression("pk = :p").expression_attribute_values(":p", s(pk))
}

fn sorted<T: Ord + Clone>(v: &[T]) -> Vec<T> {
    let mut v = v.to_vec();
    v.sort();
    v
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[tokio::test]
async fn table_create_describe_list_delete() {
    let (_server, client) = start();

    let defs = [("pk", ScalarAttributeType::S), ("sk", ScalarAttributeType::N)];
    let created = create_table_request(&client, "orders", &defs, &[("pk", KeyType::Hash), ("sk", KeyType::Range)])
        .send()
        .await
        .expect("CreateTable");
    let td = created.table_description().expect("TableDescription");
    assert_eq!(td.table_name(), Some("orders"));
    assert!(
        matches!(td.table_status(), Some(TableStatus::Creating) | Some(TableStatus::Active)),
        "status {:?}",
        td.table_status()
    );

    wait_active(&client, "orders").await;
    let desc = client.describe_table().table_name("orders").send().await.expect("DescribeTable");
    let t = desc.table().expect("Table");
    assert_eq!(t.table_name(), Some("orders"));
    assert_eq!(t.table_status(), Some(&TableStatus::Active));
    let ks: Vec<(String, KeyType)> =
        t.key_schema().iter().map(|k| (k.attribute_name().to_string(), k.key_type().clone())).collect();
    assert_eq!(ks, vec![("pk".to_string(), KeyType::Hash), ("sk".to_string(), KeyType::Range)]);
    let mut defs: Vec<(String, ScalarAttributeType)> = t
        .attribute_definitions()
        .iter()
        .map(|d| (d.attribute_name().to_string(), d.attribute_type().clone()))
        .collect();
    defs.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(defs, vec![("pk".to_string(), ScalarAttributeType::S), ("sk".to_string(), ScalarAttributeType::N)]);
    assert_eq!(t.item_count(), Some(0));
    assert_eq!(t.billing_mode_summary().and_then(|b| b.billing_mode()), Some(&BillingMode::PayPerRequest));
    assert!(t.table_arn().unwrap_or_default().ends_with(":table/orders"), "arn {:?}", t.table_arn());

    create_table(&client, "alpha", None).await;
    let listed = client.list_tables().send().await.expect("ListTables");
    assert_eq!(listed.table_names(), &["alpha".to_string(), "orders".to_string()]);

    let deleted = client.delete_table().table_name("orders").send().await.expect("DeleteTable");
    assert_eq!(deleted.table_description().and_then(|t| t.table_name()), Some("orders"));

    // The table goes away (possibly after DELETING).
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match client.describe_table().table_name("orders").send().await {
            Ok(_) => {
                assert!(Instant::now() < deadline, "table still described 10 s after DeleteTable");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => {
                let e = e.into_service_error();
                assert!(matches!(e, DescribeTableError::ResourceNotFoundException(_)), "got {e:?}");
                break;
            }
        }
    }
    let listed = client.list_tables().send().await.expect("ListTables");
    assert_eq!(listed.table_names(), &["alpha".to_string()]);
}

const DIGITS38: &str = "12345678901234567890123456789012345678";

#[tokio::test]
async fn put_get_every_attribute_type() {
    let (_server, client) = start_with_table("types", None).await;

    let nested = AttributeValue::M(item(&[
        ("inner_list", AttributeValue::L(vec![n("1"), s("two"), AttributeValue::Null(true)])),
        ("inner_map", AttributeValue::M(item(&[("deep", AttributeValue::Bool(false))]))),
        ("empty_map", AttributeValue::M(HashMap::new())),
        ("empty_list", AttributeValue::L(vec![])),
    ]));
    let original = item(&[
        ("pk", s("all-types")),
        ("s", s("héllo ✓")),
        ("n", n(DIGITS38)),
        ("n_neg_frac", n("-0.000000000000000000000000000000000000000012345")),
        ("b", AttributeValue::B(Blob::new(vec![0u8, 1, 2, 127, 128, 255]))),
        ("bool_t", AttributeValue::Bool(true)),
        ("bool_f", AttributeValue::Bool(false)),
        ("null", AttributeValue::Null(true)),
        ("ss", AttributeValue::Ss(vec!["x".into(), "y".into(), "z".into()])),
        ("ns", AttributeValue::Ns(vec!["1".into(), "-2.5".into(), DIGITS38.into()])),
        ("bs", AttributeValue::Bs(vec![Blob::new(vec![1u8]), Blob::new(vec![2u8, 3])])),
        (
            "l",
            AttributeValue::L(vec![
                s("a"),
                n("1"),
                AttributeValue::L(vec![AttributeValue::Bool(true)]),
                nested.clone(),
            ]),
        ),
        ("m", nested),
    ]);
    client.put_item().table_name("types").set_item(Some(original.clone())).send().await.expect("PutItem");

    let got = get_consistent(&client, "types", "all-types").send().await.expect("GetItem");
    let got = got.item().expect("Item present").clone();

    let mut keys: Vec<&String> = got.keys().collect();
    keys.sort();
    let mut want_keys: Vec<&String> = original.keys().collect();
    want_keys.sort();
    assert_eq!(keys, want_keys);

    // Scalars and documents compare exactly.
    for k in ["pk", "s", "n", "n_neg_frac", "b", "bool_t", "bool_f", "null", "l", "m"] {
        assert_eq!(got[k], original[k], "attribute {k}");
    }
    // Sets compare as sets.
    assert_eq!(sorted(got["ss"].as_ss().expect("ss is SS")), vec!["x", "y", "z"]);
    let ns: HashSet<&str> = got["ns"].as_ns().expect("ns is NS").iter().map(String::as_str).collect();
    assert_eq!(ns, HashSet::from(["1", "-2.5", DIGITS38]));
    let bs: HashSet<Vec<u8>> = got["bs"].as_bs().expect("bs is BS").iter().map(|b| b.as_ref().to_vec()).collect();
    assert_eq!(bs, HashSet::from([vec![1u8], vec![2u8, 3]]));
}

#[tokio::test]
async fn numbers_round_trip_exactly_and_reject_39_digits() {
    let (_server, client) = start_with_table("nums", None).await;

    let cases = [
        DIGITS38,
        "-99999999999999999999999999999999999999",
        "1234567890123456789.0123456789012345678",
        "0.0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000001", // 1E-130, the smallest positive magnitude,
    ];
    for (i, v) in cases.iter().enumerate() {
        let pk = format!("num-{i}");
        client.put_item().table_name("nums").item("pk", s(&pk)).item("v", n(v)).send().await.expect("PutItem");
        let got = get_consistent(&client, "nums", &pk).send().await.unwrap();
        assert_eq!(got.item().and_then(|it| it.get("v")), Some(&n(v)), "number {v}");
    }

    // Canonical form on the way out.
    client
        .put_item()
        .table_name("nums")
        .item("pk", s("canon"))
        .item("a", n("1.50"))
        .item("b", n("1E2"))
        .item("c", n("-0"))
        .send()
        .await
        .expect("PutItem");
    let got = get_consistent(&client, "nums", "canon").send().await.unwrap();
    let it = got.item().expect("item");
    assert_eq!((&it["a"], &it["b"], &it["c"]), (&n("1.5"), &n("100"), &n("0")));

    // 39 significant digits is out of range.
    let err = client
        .put_item()
        .table_name("nums")
        .item("pk", s("too-precise"))
        .item("v", n("123456789012345678901234567890123456789"))
        .send()
        .await
        .expect_err("39 significant digits must be rejected")
        .into_service_error();
    assert_eq!(err.code(), Some("ValidationException"), "got {err:?}");
}

#[tokio::test]
async fn update_item_set_add_all_new() {
    let (_server, client) = start_with_table("upd", None).await;

    client
        .put_item()
        .table_name("upd")
        .item("pk", s("u1"))
        .item("big", n(DIGITS38))
        .item("tags", AttributeValue::Ss(vec!["a".into()]))
        .item("old", s("remove me"))
        .send()
        .await
        .expect("PutItem");

    let out = client
        .update_item()
        .table_name("upd")
        .key("pk", s("u1"))
        .update_expression("SET #st = :st, nested = :m ADD big :one, tags :more, fresh :five REMOVE #o")
        .expression_attribute_names("#st", "status")
        .expression_attribute_names("#o", "old")
        .expression_attribute_values(":st", s("shipped"))
        .expression_attribute_values(":m", AttributeValue::M(item(&[("k", n("1"))])))
        .expression_attribute_values(":one", n("1"))
        .expression_attribute_values(":five", n("5"))
        .expression_attribute_values(":more", AttributeValue::Ss(vec!["b".into(), "c".into()]))
        .return_values(ReturnValue::AllNew)
        .send()
        .await
        .expect("UpdateItem");
    let attrs = out.attributes().expect("ALL_NEW attributes").clone();
    let mut keys: Vec<&str> = attrs.keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(keys, vec!["big", "fresh", "nested", "pk", "status", "tags"]);
    assert_eq!(attrs["pk"], s("u1"));
    assert_eq!(attrs["status"], s("shipped"));
    assert_eq!(attrs["nested"], AttributeValue::M(item(&[("k", n("1"))])));
    // exact decimal arithmetic at 38 digits
    assert_eq!(attrs["big"], n("12345678901234567890123456789012345679"));
    assert_eq!(attrs["fresh"], n("5"));
    assert_eq!(sorted(attrs["tags"].as_ss().expect("SS")), vec!["a", "b", "c"]);

    let got = get_consistent(&client, "upd", "u1").send().await.unwrap();
    assert_eq!(got.item().unwrap().get("big"), Some(&n("12345678901234567890123456789012345679")));
    assert!(got.item().unwrap().get("old").is_none());
}

#[tokio::test]
async fn conditional_put_fails_with_typed_error() {
    let (_server, client) = start_with_table("cond", None).await;

    client.put_item().table_name("cond").item("pk", s("k")).item("v", n("1")).send().await.expect("PutItem");
    let err = client
        .put_item()
        .table_name("cond")
        .item("pk", s("k"))
        .item("v", n("2"))
        .condition_expression("attribute_not_exists(pk)")
        .send()
        .await
        .expect_err("condition must fail");
    let raw_status = err.raw_response().map(|r| r.status().as_u16());
    assert_eq!(raw_status, Some(400));
    match err.into_service_error() {
        PutItemError::ConditionalCheckFailedException(e) => {
            assert_eq!(e.message(), Some("The conditional request failed"));
            assert!(e.item().is_none(), "no Item without ReturnValuesOnConditionCheckFailure");
        }
        other => panic!("expected ConditionalCheckFailedException, got {other:?}"),
    }
    let got = get_consistent(&client, "cond", "k").send().await.unwrap();
    assert_eq!(got.item().unwrap().get("v"), Some(&n("1")), "failed put must not change the item");
}

#[tokio::test]
async fn batch_write_25_then_batch_get() {
    let (_server, client) = start_with_table("batch", Some(ScalarAttributeType::N)).await;

    let requests: Vec<WriteRequest> = (0..25)
        .map(|i| {
            WriteRequest::builder()
                .put_request(
                    PutRequest::builder()
                        .set_item(Some(item(&[
                            ("pk", s("b")),
                            ("sk", n(&i.to_string())),
                            ("payload", s(&format!("item-{i}"))),
                        ])))
                        .build()
                        .unwrap(),
                )
                .build()
        })
        .collect();
    let out = client
        .batch_write_item()
        .request_items("batch", requests)
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .expect("BatchWriteItem");
    let unprocessed = out.unprocessed_items().expect("UnprocessedItems must be present (as {})");
    assert!(unprocessed.is_empty(), "unprocessed: {unprocessed:?}");
    let cc = out.consumed_capacity();
    assert_eq!(cc.len(), 1, "one ConsumedCapacity entry per table");
    assert_eq!(cc[0].table_name(), Some("batch"));
    assert_eq!(cc[0].capacity_units(), Some(25.0));

    let keys: Vec<HashMap<String, AttributeValue>> =
        (0..25).map(|i| item(&[("pk", s("b")), ("sk", n(&i.to_string()))])).collect();
    let got = client
        .batch_get_item()
        .request_items(
            "batch",
            KeysAndAttributes::builder().set_keys(Some(keys)).consistent_read(true).build().unwrap(),
        )
        .send()
        .await
        .expect("BatchGetItem");
    assert!(got.unprocessed_keys().map(|m| m.is_empty()).unwrap_or(true));
    let rows = got.responses().and_then(|r| r.get("batch")).expect("Responses[batch]");
    assert_eq!(rows.len(), 25);
    let mut sks: Vec<i64> = rows.iter().map(|r| r["sk"].as_n().unwrap().parse().unwrap()).collect();
    sks.sort();
    assert_eq!(sks, (0..25).collect::<Vec<i64>>());
    for r in rows {
        let sk = r["sk"].as_n().unwrap();
        assert_eq!(r["payload"], s(&format!("item-{sk}")));
    }
}

#[tokio::test]
async fn transact_write_cancelled_reasons_in_order() {
    let (_server, client) = start_with_table("txn", None).await;
    client.put_item().table_name("txn").item("pk", s("guard")).item("state", s("closed")).send().await.unwrap();
    client.put_item().table_name("txn").item("pk", s("counter")).item("n", n("1")).send().await.unwrap();

    let err = client
        .transact_write_items()
        .transact_items(
            TransactWriteItem::builder()
                .put(Put::builder().table_name("txn").item("pk", s("new")).item("v", n("1")).build().unwrap())
                .build(),
        )
        .transact_items(
            TransactWriteItem::builder()
                .condition_check(
                    ConditionCheck::builder()
                        .table_name("txn")
                        .key("pk", s("guard"))
                        .condition_expression("#s = :open")
                        .expression_attribute_names("#s", "state")
                        .expression_attribute_values(":open", s("open"))
                        .build()
                        .unwrap(),
                )
                .build(),
        )
        .transact_items(
            TransactWriteItem::builder()
                .update(
                    Update::builder()
                        .table_name("txn")
                        .key("pk", s("counter"))
                        .update_expression("SET n = n + :one")
                        .expression_attribute_values(":one", n("1"))
                        .build()
                        .unwrap(),
                )
                .build(),
        )
        .send()
        .await
        .expect_err("transaction must be cancelled");
    match err.into_service_error() {
        TransactWriteItemsError::TransactionCanceledException(e) => {
            let codes: Vec<Option<&str>> = e.cancellation_reasons().iter().map(|r| r.code()).collect();
            assert_eq!(codes, vec![Some("None"), Some("ConditionalCheckFailed"), Some("None")]);
            let msg = e.cancellation_reasons()[1].message().unwrap_or_default();
            assert!(
                msg == "The conditional request failed" || msg == "The conditional request failed.",
                "reason message {msg:?}"
            );
            assert_eq!(
                e.message(),
                Some(
                    "Transaction cancelled, please refer cancellation reasons for specific reasons \
                     [None, ConditionalCheckFailed, None]"
                )
            );
        }
        other => panic!("expected TransactionCanceledException, got {other:?}"),
    }

    // Nothing was applied.
    let new = get_consistent(&client, "txn", "new").send().await.unwrap();
    assert!(new.item().is_none(), "cancelled Put was applied");
    let counter = get_consistent(&client, "txn", "counter").send().await.unwrap();
    assert_eq!(counter.item().unwrap().get("n"), Some(&n("1")), "cancelled Update was applied");
}

#[tokio::test]
async fn query_paginates_with_items_stream() {
    let (_server, client) = start_with_table("query", Some(ScalarAttributeType::N)).await;

    // 23 items in partition "p", inserted in a scrambled order, plus noise.
    for i in (0..23).map(|i| (i * 7) % 23) {
        client
            .put_item()
            .table_name("query")
            .item("pk", s("p"))
            .item("sk", n(&i.to_string()))
            .item("data", s(&"x".repeat(i as usize)))
            .send()
            .await
            .unwrap();
    }
    client.put_item().table_name("query").item("pk", s("other")).item("sk", n("5")).send().await.unwrap();

    let items: Vec<HashMap<String, AttributeValue>> = query_partition(&client, "query", "p")
        .consistent_read(true)
        .into_paginator()
        .page_size(5)
        .items()
        .send()
        .try_collect()
        .await
        .expect("Query pages");
    let sks: Vec<String> = items.iter().map(|it| it["sk"].as_n().unwrap().clone()).collect();
    let want: Vec<String> = (0..23).map(|i| i.to_string()).collect();
    assert_eq!(sks, want, "items in ascending numeric sort-key order, each exactly once");
    assert!(items.iter().all(|it| it["pk"] == s("p")));

    // Page shapes: 5,5,5,5,3 with LastEvaluatedKey on all but the last page.
    let pages = query_partition(&client, "query", "p")
        .into_paginator()
        .page_size(5)
        .send()
        .try_collect()
        .await
        .expect("Query pages");
    let counts: Vec<i32> = pages.iter().map(|p| p.count()).collect();
    assert_eq!(counts, vec![5, 5, 5, 5, 3]);
    for p in &pages[..4] {
        let lek = p.last_evaluated_key().expect("LastEvaluatedKey on a full page");
        let last = p.items().last().unwrap();
        assert_eq!(lek.len(), 2);
        assert_eq!(lek.get("pk"), last.get("pk"));
        assert_eq!(lek.get("sk"), last.get("sk"));
    }
    assert!(pages[4].last_evaluated_key().is_none());
}

#[tokio::test]
async fn missing_table_is_resource_not_found() {
    let (_server, client) = start();

    let err = client.get_item().table_name("nope").key("pk", s("x")).send().await.expect_err("missing table");
    match err.into_service_error() {
        GetItemError::ResourceNotFoundException(e) => {
            let m = e.message().unwrap_or_default();
            assert!(m.starts_with("Requested resource not found"), "message {m:?}");
        }
        other => panic!("expected ResourceNotFoundException, got {other:?}"),
    }

    let err = client.put_item().table_name("nope").item("pk", s("x")).send().await.expect_err("missing table");
    assert!(matches!(err.into_service_error(), PutItemError::ResourceNotFoundException(_)));

    let err = query_partition(&client, "nope", "x").send().await.expect_err("missing table");
    assert!(matches!(err.into_service_error(), QueryError::ResourceNotFoundException(_)));

    let err = client.describe_table().table_name("nope").send().await.expect_err("missing table");
    assert!(matches!(err.into_service_error(), DescribeTableError::ResourceNotFoundException(_)));
}

#[tokio::test]
async fn key_schema_mismatch_is_validation_exception() {
    let (_server, client) = start_with_table("valid", Some(ScalarAttributeType::N)).await;

    // Missing range key.
    // ValidationException is not a modelled variant: check the error code.
    let mismatch = "The provided key element does not match the schema";
    let get = || client.get_item().table_name("valid").key("pk", s("x"));
    assert_refused(get().send().await, "key mismatch", "ValidationException", mismatch);

    // Wrong type for the range key.
    assert_refused(get().key("sk", s("1")).send().await, "key type mismatch", "ValidationException", mismatch);
}

#[tokio::test]
async fn delete_item_all_old_and_consumed_capacity() {
    let (_server, client) = start_with_table("del", None).await;

    let put = client
        .put_item()
        .table_name("del")
        .item("pk", s("k"))
        .item("v", s("small"))
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .unwrap();
    let cc = put.consumed_capacity().expect("ConsumedCapacity with TOTAL");
    assert_eq!(cc.table_name(), Some("del"));
    assert_eq!(cc.capacity_units(), Some(1.0));

    let del = client
        .delete_item()
        .table_name("del")
        .key("pk", s("k"))
        .return_values(ReturnValue::AllOld)
        .send()
        .await
        .unwrap();
    assert_eq!(del.attributes().cloned(), Some(item(&[("pk", s("k")), ("v", s("small"))])));

    let got = get_consistent(&client, "del", "k")
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .unwrap();
    assert!(got.item().is_none());
    // A strongly consistent read of a missing item still costs 1 RCU.
    assert_eq!(got.consumed_capacity().and_then(|c| c.capacity_units()), Some(1.0));
}

#[test]
fn sigterm_exits_cleanly() {
    let mut server = Server::start();
    let status = server.terminate(Duration::from_secs(10)).expect("server did not exit within 10 s of SIGTERM");
    assert_eq!(status.code(), Some(0), "exit status {status:?}; stderr: {}", server.stderr.lock().unwrap());
}

// ---------------------------------------------------------------------------
// Secondary indexes, tags, table ARNs (same expectations as
// tests/python/test_indexes.py and tests/python/test_tags_endpoints.py)
// ---------------------------------------------------------------------------

const INVALID: &str = "One or more parameter values were invalid: ";

fn attr(name: &str, t: ScalarAttributeType) -> AttributeDefinition {
    AttributeDefinition::builder().attribute_name(name).attribute_type(t).build().unwrap()
}

fn key(name: &str, t: KeyType) -> KeySchemaElement {
    KeySchemaElement::builder().attribute_name(name).key_type(t).build().unwrap()
}

fn projection(t: ProjectionType, non_key: &[&str]) -> Projection {
    let mut p = Projection::builder().projection_type(t);
    for a in non_key {
        p = p.non_key_attributes(*a);
    }
    p.build()
}

fn gsi(name: &str, keys: &[(&str, KeyType)], p: Projection) -> GlobalSecondaryIndex {
    let mut g = GlobalSecondaryIndex::builder().index_name(name).projection(p);
    for (a, t) in keys {
        g = g.key_schema(key(a, t.clone()));
    }
    g.build().unwrap()
}

/// The AttributeDefinitions of (name, type) pairs.
fn attrs(defs: &[(&str, ScalarAttributeType)]) -> Option<Vec<AttributeDefinition>> {
    Some(defs.iter().map(|(a, t)| attr(a, t.clone())).collect())
}

/// A Query of `index` on `table` with key condition `condition` and its values.
fn query_index(
    client: &Client,
    table: &str,
    index: &str,
    condition: &str,
    values: &[(&str, AttributeValue)],
) -> aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder {
    let mut q = client.query().table_name(table).index_name(index).key_condition_expression(condition);
    for (k, v) in values {
        q = q.expression_attribute_values(*k, v.clone());
    }
    q
}

fn key_pairs(ks: &[KeySchemaElement]) -> Vec<(String, KeyType)> {
    ks.iter().map(|k| (k.attribute_name().to_string(), k.key_type().clone())).collect()
}

/// An item operation's units: CapacityUnits alone (S59).
fn units(total: f64) -> Capacity {
    Capacity::builder().capacity_units(total).build()
}

/// A Query's or Scan's read units, with the read split.
fn read_units(total: f64) -> Capacity {
    Capacity::builder().capacity_units(total).read_capacity_units(total).build()
}

/// pk/sk table; GSI by_status (status S, amount N), KEYS_ONLY GSI
/// by_customer (customer S), INCLUDE LSI by_amount (pk, amount) projecting
/// note.
async fn create_orders(client: &Client, name: &str) {
    use ScalarAttributeType::{N, S};
    let defs = [("pk", S), ("sk", S), ("status", S), ("amount", N), ("customer", S)];
    create_table_request(client, name, &defs, &[("pk", KeyType::Hash), ("sk", KeyType::Range)])
        .global_secondary_indexes(gsi(
            "by_status",
            &[("status", KeyType::Hash), ("amount", KeyType::Range)],
            projection(ProjectionType::All, &[]),
        ))
        .global_secondary_indexes(gsi(
            "by_customer",
            &[("customer", KeyType::Hash)],
            projection(ProjectionType::KeysOnly, &[]),
        ))
        .local_secondary_indexes(
            LocalSecondaryIndex::builder()
                .index_name("by_amount")
                .key_schema(key("pk", KeyType::Hash))
                .key_schema(key("amount", KeyType::Range))
                .projection(projection(ProjectionType::Include, &["note"]))
                .build()
                .unwrap(),
        )
        .send()
        .await
        .expect("CreateTable with indexes");
    wait_active(client, name).await;
}

/// An orders item for user u1; `None` leaves the attribute out.
fn order(
    sk: &str,
    status: Option<&str>,
    amount: Option<&str>,
    customer: Option<&str>,
    note: Option<&str>,
) -> HashMap<String, AttributeValue> {
    let mut it = item(&[("pk", s("u1")), ("sk", s(sk)), ("extra", s("x"))]);
    for (name, v, f) in [
        ("status", status, s as fn(&str) -> AttributeValue),
        ("amount", amount, n),
        ("customer", customer, s),
        ("note", note, s),
    ] {
        if let Some(v) = v {
            it.insert(name.to_string(), f(v));
        }
    }
    it
}

fn sk_list(items: &[HashMap<String, AttributeValue>]) -> Vec<String> {
    items.iter().map(|i| i["sk"].as_s().unwrap().clone()).collect()
}

#[tokio::test]
async fn gsi_and_lsi_create_describe_query_with_paging() {
    let (_server, client) = start();
    create_orders(&client, "orders").await;

    // Ten open orders with amounts 0..3 (ties broken by the table key), one
    // without a status (only in by_customer and by_amount), one with nothing.
    for i in 0..10 {
        let it = order(&format!("o{i:02}"), Some("open"), Some(&(i % 4).to_string()), Some("c1"), Some("fragile"));
        client.put_item().table_name("orders").set_item(Some(it)).send().await.expect("PutItem");
    }
    let sparse = order("p1", None, Some("7"), Some("c2"), None);
    client.put_item().table_name("orders").set_item(Some(sparse)).send().await.expect("PutItem");
    client.put_item().table_name("orders").set_item(Some(order("p2", None, None, None, None))).send().await.unwrap();

    // DescribeTable lists every index.
    let t = client.describe_table().table_name("orders").send().await.expect("DescribeTable").table.unwrap();
    let arn = t.table_arn().unwrap().to_string();
    assert_eq!(arn, "arn:aws:dynamodb:us-east-1:000000000000:table/orders");
    let gsis: HashMap<&str, &GlobalSecondaryIndexDescription> =
        t.global_secondary_indexes().iter().map(|g| (g.index_name().unwrap(), g)).collect();
    assert_eq!(sorted(&gsis.keys().copied().collect::<Vec<_>>()), vec!["by_customer", "by_status"]);
    let st = gsis["by_status"];
    assert_eq!(
        key_pairs(st.key_schema()),
        vec![("status".to_string(), KeyType::Hash), ("amount".to_string(), KeyType::Range)]
    );
    assert_eq!(st.projection(), Some(&projection(ProjectionType::All, &[])));
    assert_eq!(st.index_status(), Some(&IndexStatus::Active));
    assert_eq!(st.index_arn(), Some(format!("{arn}/index/by_status").as_str()));
    assert_eq!(st.item_count(), Some(10));
    assert_eq!(st.backfilling(), None, "an index made by CreateTable has no Backfilling");
    let by_customer = gsis["by_customer"];
    assert_eq!(by_customer.projection(), Some(&projection(ProjectionType::KeysOnly, &[])));
    assert_eq!(by_customer.item_count(), Some(11));
    assert_eq!(t.local_secondary_indexes().len(), 1);
    let lsi = &t.local_secondary_indexes()[0];
    assert_eq!(lsi.index_name(), Some("by_amount"));
    assert_eq!(
        key_pairs(lsi.key_schema()),
        vec![("pk".to_string(), KeyType::Hash), ("amount".to_string(), KeyType::Range)]
    );
    assert_eq!(lsi.projection(), Some(&projection(ProjectionType::Include, &["note"])));
    assert_eq!(lsi.index_arn(), Some(format!("{arn}/index/by_amount").as_str()));
    assert_eq!(lsi.item_count(), Some(11));

    // A GSI query in pages of 3: 3,3,3,1, each LastEvaluatedKey = index key + table key of the page's last item.
    let query = || {
        query_index(&client, "orders", "by_status", "#s = :s", &[(":s", s("open"))])
            .expression_attribute_names("#s", "status")
    };
    let pages = query().into_paginator().page_size(3).send().try_collect().await.expect("Query pages");
    assert_eq!(pages.iter().map(|p| p.count()).collect::<Vec<_>>(), vec![3, 3, 3, 1]);
    let mut seen = Vec::new();
    for (i, p) in pages.iter().enumerate() {
        seen.extend(sk_list(p.items()));
        match p.last_evaluated_key() {
            Some(lek) if i < 3 => {
                let last = p.items().last().unwrap();
                let want: HashMap<String, AttributeValue> =
                    ["pk", "sk", "status", "amount"].iter().map(|k| (k.to_string(), last[*k].clone())).collect();
                assert_eq!(lek, &want, "page {i}");
            }
            None if i == 3 => {}
            other => panic!("page {i}: LastEvaluatedKey {other:?}"),
        }
    }
    assert_eq!(seen, vec!["o00", "o04", "o08", "o01", "o05", "o09", "o02", "o06", "o03", "o07"]);
    // Projection ALL: whole items.
    assert_eq!(pages[0].items()[0], order("o00", Some("open"), Some("0"), Some("c1"), Some("fragile")));

    // Descending, with a range condition on the index sort key.
    let desc = query()
        .key_condition_expression("#s = :s AND amount >= :a")
        .expression_attribute_values(":a", n("3"))
        .scan_index_forward(false)
        .send()
        .await
        .expect("Query");
    assert_eq!(sk_list(desc.items()), vec!["o07", "o03"]);

    // An ExclusiveStartKey without the index key is refused.
    assert_refused(
        query().exclusive_start_key("pk", s("u1")).exclusive_start_key("sk", s("o01")).send().await,
        "a table key alone cannot resume an index query",
        "ValidationException",
        "The provided starting key is invalid",
    );

    // ConsistentRead is refused on a GSI.
    assert_refused(
        query().consistent_read(true).send().await,
        "GSI strong read",
        "ValidationException",
        "Consistent reads are not supported on global secondary indexes",
    );

    // KEYS_ONLY GSI: table key + index key only.
    let by_customer = || query_index(&client, "orders", "by_customer", "customer = :c", &[(":c", s("c2"))]);
    let keys_only = by_customer().send().await.expect("Query KEYS_ONLY");
    assert_eq!(keys_only.items(), &[item(&[("pk", s("u1")), ("sk", s("p1")), ("customer", s("c2"))])]);

    // INCLUDE LSI, strongly consistent (allowed on an LSI), amount > 2.
    let by_amount = |op: &str, a: &str| {
        query_index(
            &client,
            "orders",
            "by_amount",
            &format!("pk = :p AND amount {op} :a"),
            &[(":p", s("u1")), (":a", n(a))],
        )
    };
    let lsi_items = by_amount(">", "2").consistent_read(true).send().await.expect("Query LSI");
    assert_eq!(
        lsi_items.items(),
        &[
            item(&[("pk", s("u1")), ("sk", s("o03")), ("amount", n("3")), ("note", s("fragile"))]),
            item(&[("pk", s("u1")), ("sk", s("o07")), ("amount", n("3")), ("note", s("fragile"))]),
            item(&[("pk", s("u1")), ("sk", s("p1")), ("amount", n("7"))]),
        ]
    );
    // Through an LSI, ALL_ATTRIBUTES fetches the rest from the table ...
    let whole = by_amount("=", "7").select(Select::AllAttributes).send().await.expect("Query LSI ALL_ATTRIBUTES");
    assert_eq!(whole.items(), &[order("p1", None, Some("7"), Some("c2"), None)]);
    // ... a KEYS_ONLY GSI refuses it.
    assert_refused(
        by_customer().select(Select::AllAttributes).send().await,
        "ALL_ATTRIBUTES on a KEYS_ONLY GSI",
        "ValidationException",
        "One or more parameter values were invalid: Select type ALL_ATTRIBUTES is not supported for global \
         secondary index by_customer because its projection type is not ALL",
    );

    // Scan of the GSI sees only the items that carry its key.
    let scanned = client.scan().table_name("orders").index_name("by_status").send().await.expect("Scan GSI");
    assert_eq!((scanned.count(), scanned.scanned_count()), (10, 10));

    // A wrong-typed index key refuses the write; an unknown index is a ValidationException.
    let bad = item(&[("pk", s("u1")), ("sk", s("bad")), ("status", n("1")), ("amount", n("1"))]);
    assert_refused(
        client.put_item().table_name("orders").set_item(Some(bad)).send().await,
        "wrong-typed index key",
        "ValidationException",
        &format!("{INVALID}Type mismatch for Index Key status Expected: S Actual: N IndexName: by_status"),
    );
    assert_refused(
        query_index(&client, "orders", "nope", "pk = :p", &[(":p", s("u1"))]).send().await,
        "unknown index",
        "ValidationException",
        "The table does not have the specified index: nope",
    );
}

#[tokio::test]
async fn multi_attribute_gsi_keys_sort_by_component_and_need_a_gapless_prefix() {
    let (_server, client) = start();
    // partition key (region, season), sort key (round, score)
    use ScalarAttributeType::{N, S};
    let defs = [("pk", S), ("region", S), ("season", N), ("round", S), ("score", N)];
    create_table_request(&client, "games", &defs, &[("pk", KeyType::Hash)])
        .global_secondary_indexes(gsi(
            "games",
            &[
                ("region", KeyType::Hash),
                ("season", KeyType::Hash),
                ("round", KeyType::Range),
                ("score", KeyType::Range),
            ],
            projection(ProjectionType::All, &[]),
        ))
        .send()
        .await
        .expect("CreateTable with a multi-attribute GSI");
    wait_active(&client, "games").await;
    let put_game = |pk: &str, sort: &[(&str, AttributeValue)]| {
        let mut it = item(&[("pk", s(pk)), ("region", s("eu")), ("season", n("2026"))]);
        it.extend(item(sort));
        client.put_item().table_name("games").set_item(Some(it)).send()
    };
    for (pk, round, score) in [
        ("g1", "final", "50"),
        ("g2", "semi", "70"),
        ("g3", "final", "90"),
        ("g4", "semi", "10"),
        ("g5", "final", "70"),
    ] {
        put_game(pk, &[("round", s(round)), ("score", n(score))]).await.expect("PutItem");
    }
    // sparse: lacks the sort components
    put_game("g9", &[]).await.unwrap();

    let games = |extra: &str| {
        let condition = format!("#r = :r AND season = :s{extra}");
        query_index(&client, "games", "games", &condition, &[(":r", s("eu")), (":s", n("2026"))])
            .expression_attribute_names("#r", "region")
    };
    let pks = |out: &aws_sdk_dynamodb::operation::query::QueryOutput| -> Vec<String> {
        out.items().iter().map(|i| i["pk"].as_s().unwrap().clone()).collect()
    };
    assert_eq!(pks(&games("").send().await.unwrap()), vec!["g1", "g5", "g3", "g4", "g2"]);
    let out = games(" AND #rd = :f AND score > :x")
        .expression_attribute_names("#rd", "round")
        .expression_attribute_values(":f", s("final"))
        .expression_attribute_values(":x", n("50"))
        .send()
        .await
        .unwrap();
    assert_eq!(pks(&out), vec!["g5", "g3"]);

    let page = games("").limit(2).send().await.unwrap();
    assert_eq!(
        page.last_evaluated_key().cloned(),
        Some(item(&[
            ("pk", s("g5")),
            ("region", s("eu")),
            ("season", n("2026")),
            ("round", s("final")),
            ("score", n("70"))
        ]))
    );

    assert_refused(
        games(" AND score > :x").expression_attribute_values(":x", n("50")).send().await,
        "a condition on score without one on round",
        "ValidationException",
        "RANGE key attributes round must have equality conditions specified in the query because a condition is \
         present on key attribute score",
    );

    let t = client.describe_table().table_name("games").send().await.unwrap().table.unwrap();
    let g = &t.global_secondary_indexes()[0];
    assert_eq!(
        g.key_schema().iter().map(|k| k.key_type().clone()).collect::<Vec<_>>(),
        vec![KeyType::Hash, KeyType::Hash, KeyType::Range, KeyType::Range]
    );
    assert_eq!(g.item_count(), Some(5));
}

#[tokio::test]
async fn update_table_adds_a_gsi_with_a_backfill_then_deletes_it() {
    let (_server, client) = start_with_table("teams", None).await;
    for i in 0..6 {
        let team = if i % 2 == 1 { "red" } else { "blue" };
        client
            .put_item()
            .table_name("teams")
            .item("pk", s(&format!("k{i}")))
            .item("team", s(team))
            .send()
            .await
            .unwrap();
    }
    // wrong type for the future index: skipped by the backfill
    client.put_item().table_name("teams").item("pk", s("odd")).item("team", n("7")).send().await.unwrap();

    let out = client
        .update_table()
        .table_name("teams")
        .attribute_definitions(attr("team", ScalarAttributeType::S))
        .global_secondary_index_updates(
            GlobalSecondaryIndexUpdate::builder()
                .create(
                    CreateGlobalSecondaryIndexAction::builder()
                        .index_name("by_team")
                        .key_schema(key("team", KeyType::Hash))
                        .projection(projection(ProjectionType::All, &[]))
                        .build()
                        .unwrap(),
                )
                .build(),
        )
        .send()
        .await
        .expect("UpdateTable Create");
    let td = out.table_description().unwrap();
    assert_eq!(td.global_secondary_indexes().len(), 1);
    let created = &td.global_secondary_indexes()[0];
    assert_eq!(
        (created.index_name(), created.index_status(), created.backfilling()),
        (Some("by_team"), Some(&IndexStatus::Creating), Some(true))
    );
    assert!(
        td.attribute_definitions().contains(&attr("team", ScalarAttributeType::S)),
        "{:?}",
        td.attribute_definitions()
    );

    // Bounded poll until ACTIVE (a backfill of seven items takes well under a second).
    let mut desc = None;
    for _ in 0..200 {
        let t = client.describe_table().table_name("teams").send().await.unwrap().table.unwrap();
        let g =
            t.global_secondary_indexes().iter().find(|g| g.index_name() == Some("by_team")).cloned().expect("by_team");
        if g.index_status() == Some(&IndexStatus::Active) {
            desc = Some(g);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let desc = desc.expect("by_team not ACTIVE after 200 polls");
    assert_eq!((desc.backfilling(), desc.item_count()), (None, Some(6)), "an ACTIVE index shows no Backfilling");

    let red_team = || query_index(&client, "teams", "by_team", "team = :t", &[(":t", s("red"))]);
    let red = red_team().send().await.expect("Query the new GSI");
    let mut pks: Vec<String> = red.items().iter().map(|i| i["pk"].as_s().unwrap().clone()).collect();
    pks.sort();
    assert_eq!(pks, vec!["k1", "k3", "k5"]);

    let put_odd2 = || client.put_item().table_name("teams").item("pk", s("odd2")).item("team", n("1"));
    assert_refused(
        put_odd2().send().await,
        "the new GSI constrains team",
        "ValidationException",
        &format!("{INVALID}Type mismatch for Index Key team Expected: S Actual: N IndexName: by_team"),
    );

    let out = client
        .update_table()
        .table_name("teams")
        .global_secondary_index_updates(
            GlobalSecondaryIndexUpdate::builder()
                .delete(DeleteGlobalSecondaryIndexAction::builder().index_name("by_team").build().unwrap())
                .build(),
        )
        .send()
        .await
        .expect("UpdateTable Delete");
    assert!(out.table_description().unwrap().global_secondary_indexes().is_empty());
    put_odd2().send().await.expect("unconstrained");
    assert_refused(
        red_team().send().await,
        "deleted index",
        "ValidationException",
        "The table does not have the specified index: by_team",
    );
}

#[tokio::test]
async fn consumed_capacity_indexes_reports_each_index() {
    let (_server, client) = start();
    create_orders(&client, "cap").await;

    let put = |it: HashMap<String, AttributeValue>, rc: ReturnConsumedCapacity| {
        client.put_item().table_name("cap").set_item(Some(it)).return_consumed_capacity(rc).send()
    };
    let out =
        put(order("a", Some("open"), Some("1"), Some("c1"), None), ReturnConsumedCapacity::Indexes).await.unwrap();
    let c = out.consumed_capacity().expect("ConsumedCapacity");
    assert_eq!(c.table_name(), Some("cap"));
    assert_eq!(c.capacity_units(), Some(4.0));
    assert_eq!(c.table(), Some(&units(1.0)));
    assert_eq!(
        c.global_secondary_indexes(),
        Some(&HashMap::from([("by_status".to_string(), units(1.0)), ("by_customer".to_string(), units(1.0))]))
    );
    assert_eq!(c.local_secondary_indexes(), Some(&HashMap::from([("by_amount".to_string(), units(1.0))])));

    // Moving the item to another index key costs a delete and a put there.
    let out =
        put(order("a", Some("shipped"), Some("1"), Some("c1"), None), ReturnConsumedCapacity::Indexes).await.unwrap();
    assert_eq!(
        out.consumed_capacity().unwrap().global_secondary_indexes(),
        Some(&HashMap::from([("by_status".to_string(), units(2.0))]))
    );

    // TOTAL has no parts.
    let out = put(order("b", None, None, None, None), ReturnConsumedCapacity::Total).await.unwrap();
    let c = out.consumed_capacity().unwrap();
    assert_eq!((c.table_name(), c.capacity_units(), c.write_capacity_units()), (Some("cap"), Some(1.0), None));
    assert_eq!((c.table(), c.global_secondary_indexes(), c.local_secondary_indexes()), (None, None, None));

    // An index read reports only that index.
    let q = query_index(&client, "cap", "by_status", "#s = :s", &[(":s", s("shipped"))])
        .expression_attribute_names("#s", "status")
        .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
        .send()
        .await
        .unwrap();
    assert_eq!(q.count(), 1);
    let c = q.consumed_capacity().unwrap();
    assert_eq!(c.global_secondary_indexes(), Some(&HashMap::from([("by_status".to_string(), read_units(0.5))])));
    assert_eq!(c.table(), None);
    assert_eq!(c.capacity_units(), Some(0.5));
}

#[tokio::test]
async fn provisioned_gsi_back_pressure_throttles_base_table_writes() {
    let (_server, client) = start();
    let throughput =
        |r, w| ProvisionedThroughput::builder().read_capacity_units(r).write_capacity_units(w).build().unwrap();
    client
        .create_table()
        .table_name("hot")
        .billing_mode(BillingMode::Provisioned)
        .provisioned_throughput(throughput(100, 1000))
        .attribute_definitions(attr("pk", ScalarAttributeType::S))
        .attribute_definitions(attr("g", ScalarAttributeType::S))
        .key_schema(key("pk", KeyType::Hash))
        .global_secondary_indexes(
            GlobalSecondaryIndex::builder()
                .index_name("narrow")
                .key_schema(key("g", KeyType::Hash))
                .projection(projection(ProjectionType::All, &[]))
                .provisioned_throughput(throughput(1, 1))
                .build()
                .unwrap(),
        )
        .send()
        .await
        .expect("CreateTable PROVISIONED with a 1 WCU GSI");
    wait_active(&client, "hot").await;
    let arn = client.describe_table().table_name("hot").send().await.unwrap().table.unwrap().table_arn.unwrap();

    // Items without g never touch the GSI: the table's 1,000 WCU absorb them.
    for i in 0..50 {
        client.put_item().table_name("hot").item("pk", s(&format!("free{i}"))).send().await.expect("PutItem without g");
    }
    let mut throttled = None;
    for i in 0..400 {
        match client.put_item().table_name("hot").item("pk", s(&format!("k{i}"))).item("g", s("hot")).send().await {
            Ok(_) => {}
            Err(e) => {
                throttled = Some((i, e.into_service_error()));
                break;
            }
        }
    }
    let (i, err) = throttled.expect("a 1 WCU GSI cannot take 400 writes at once");
    match err {
        PutItemError::ProvisionedThroughputExceededException(e) => {
            let reasons: Vec<(Option<&str>, Option<&str>)> =
                e.throttling_reasons().iter().map(|r| (r.reason(), r.resource())).collect();
            let resource = format!("{arn}/index/narrow");
            assert_eq!(reasons, vec![(Some("IndexWriteProvisionedThroughputExceeded"), Some(resource.as_str()))]);
        }
        other => panic!("expected ProvisionedThroughputExceededException, got {other:?}"),
    }
    let got = get_consistent(&client, "hot", &format!("k{i}")).send().await;
    assert!(got.unwrap().item().is_none(), "the refused write is not in the table");
}

#[tokio::test]
async fn tags_and_table_arn_as_table_name() {
    let (server, client) = start();
    let tag = |k: &str, v: &str| Tag::builder().key(k).value(v).build().unwrap();
    create_table_request(&client, "tagged", &[("pk", ScalarAttributeType::S)], &[("pk", KeyType::Hash)])
        .tags(tag("team", "data"))
        .send()
        .await
        .expect("CreateTable with Tags");
    wait_active(&client, "tagged").await;
    let arn = client.describe_table().table_name("tagged").send().await.unwrap().table.unwrap().table_arn.unwrap();
    assert_eq!(arn, "arn:aws:dynamodb:us-east-1:000000000000:table/tagged");

    let all_tags = || async {
        let mut tags = Vec::new();
        let mut token: Option<String> = None;
        for _ in 0..100 {
            let page =
                client.list_tags_of_resource().resource_arn(&arn).set_next_token(token.clone()).send().await.unwrap();
            tags.extend(page.tags().iter().map(|t| (t.key().to_string(), t.value().to_string())));
            token = page.next_token().map(str::to_string);
            if token.is_none() {
                return tags;
            }
        }
        panic!("ListTagsOfResource never ended");
    };
    let pair = |k: &str, v: &str| (k.to_string(), v.to_string());
    assert_eq!(all_tags().await, vec![pair("team", "data")]);

    let mut req = client.tag_resource().resource_arn(&arn).tags(tag("team", "platform")).tags(tag("cost center", ""));
    for i in 0..20 {
        req = req.tags(tag(&format!("k{i:02}"), &format!("v{i}")));
    }
    req.send().await.expect("TagResource");
    let tags = all_tags().await;
    let mut want = vec![pair("team", "platform"), pair("cost center", "")];
    want.extend((0..20).map(|i| pair(&format!("k{i:02}"), &format!("v{i}"))));
    assert_eq!(tags, want);
    // All in one page, as DynamoDB answers (a table has at most 50 tags).
    let first = client.list_tags_of_resource().resource_arn(&arn).send().await.unwrap();
    assert_eq!(first.tags().iter().map(|t| pair(t.key(), t.value())).collect::<Vec<_>>(), want);
    assert_eq!(first.next_token(), None);

    let mut req = client.untag_resource().resource_arn(&arn).tag_keys("team");
    for i in 0..20 {
        req = req.tag_keys(format!("k{i:02}"));
    }
    req.send().await.expect("UntagResource");
    assert_eq!(all_tags().await, vec![pair("cost center", "")]);

    // Tag errors.
    let missing = "arn:aws:dynamodb:us-east-1:000000000000:table/gone";
    let err = client.tag_resource().resource_arn(missing).tags(tag("a", "b")).send().await.expect_err("missing table");
    match err.into_service_error() {
        TagResourceError::ResourceNotFoundException(e) => {
            assert_eq!(
                e.message(),
                Some(format!("Requested resource not found: ResourceArn: {missing} not found").as_str())
            )
        }
        other => panic!("expected ResourceNotFoundException, got {other:?}"),
    }
    assert_refused(
        client.tag_resource().resource_arn("abcd").tags(tag("a", "b")).send().await,
        "not an ARN",
        "ValidationException",
        &format!("{INVALID}ARNs must start with 'arn:': abcd"),
    );
    let mut req = client.tag_resource().resource_arn(&arn);
    for i in 0..51 {
        req = req.tags(tag(&format!("k{i}"), "v"));
    }
    assert_refused(
        req.send().await,
        "51 tags",
        "ValidationException",
        "Number of Tags exceed the current limit for the provided ResourceArn",
    );
    assert_eq!(all_tags().await, vec![pair("cost center", "")], "a refused TagResource sets nothing");

    // The ARN works wherever a TableName does, and is echoed back.
    client.put_item().table_name(&arn).item("pk", s("a")).item("v", n("1")).send().await.expect("PutItem by ARN");
    let got = client
        .get_item()
        .table_name(&arn)
        .key("pk", s("a"))
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .expect("GetItem by ARN");
    assert_eq!(got.item().cloned(), Some(item(&[("pk", s("a")), ("v", n("1"))])));
    assert_eq!(got.consumed_capacity().and_then(|c| c.table_name()), Some(arn.as_str()), "echoes the caller's form");
    let by_name = client.get_item().table_name("tagged").key("pk", s("a")).send().await.unwrap();
    assert_eq!(by_name.item().cloned(), Some(item(&[("pk", s("a")), ("v", n("1"))])));

    let batch = client
        .batch_get_item()
        .request_items(&arn, KeysAndAttributes::builder().keys(item(&[("pk", s("a"))])).build().unwrap())
        .send()
        .await
        .expect("BatchGetItem by ARN");
    let responses = batch.responses().unwrap();
    assert_eq!(responses.keys().collect::<Vec<_>>(), vec![&arn]);
    assert_eq!(responses[&arn], vec![item(&[("pk", s("a")), ("v", n("1"))])]);

    let described = client.describe_table().table_name(&arn).send().await.unwrap();
    assert_eq!(described.table().and_then(|t| t.table_name()), Some("tagged"));
    client.delete_item().table_name(&arn).key("pk", s("a")).send().await.expect("DeleteItem by ARN");
    assert!(client.get_item().table_name("tagged").key("pk", s("a")).send().await.unwrap().item().is_none());

    let other_region = arn.replace(":us-east-1:", ":eu-west-1:");
    assert_refused(
        client.describe_table().table_name(&other_region).send().await,
        "another region's ARN",
        "ValidationException",
        &format!("1 validation error detected: Invalid AWS region in '{other_region}'"),
    );

    // DescribeEndpoints answers the address the client used.
    let eps = client.describe_endpoints().send().await.expect("DescribeEndpoints");
    let host = server.endpoint.trim_start_matches("http://");
    assert_eq!(
        eps.endpoints().iter().map(|e| (e.address(), e.cache_period_in_minutes())).collect::<Vec<_>>(),
        vec![(host, 1440)]
    );
}

#[tokio::test]
async fn each_region_of_the_credential_scope_has_its_own_tables() {
    let server = Server::start();
    let here = server.client();
    let there = Client::from_conf(here.config().to_builder().region(Region::new("eu-west-1")).build());
    create_table(&there, "regional", None).await;
    let t = there.describe_table().table_name("regional").send().await.unwrap().table.unwrap();
    assert_eq!(t.table_arn(), Some("arn:aws:dynamodb:eu-west-1:000000000000:table/regional"));
    assert_eq!(there.list_tables().send().await.unwrap().table_names(), &["regional".to_string()]);
    assert!(here.list_tables().send().await.unwrap().table_names().is_empty());
    let err = here.describe_table().table_name("regional").send().await.expect_err("not in us-east-1");
    assert!(matches!(err.into_service_error(), DescribeTableError::ResourceNotFoundException(_)));

    // The same name in us-east-1 is another table.
    create_table(&here, "regional", None).await;
    there.put_item().table_name("regional").item("pk", s("k")).item("at", s("eu-west-1")).send().await.unwrap();
    here.put_item().table_name("regional").item("pk", s("k")).item("at", s("us-east-1")).send().await.unwrap();
    let got = there.get_item().table_name("regional").key("pk", s("k")).send().await.unwrap();
    assert_eq!(got.item().cloned(), Some(item(&[("pk", s("k")), ("at", s("eu-west-1"))])));
    let got = here.get_item().table_name("regional").key("pk", s("k")).send().await.unwrap();
    assert_eq!(got.item().cloned(), Some(item(&[("pk", s("k")), ("at", s("us-east-1"))])));
}

#[tokio::test]
async fn partiql_statements_batch_and_transaction() {
    let (_server, client) = start_with_table("pql", Some(ScalarAttributeType::N)).await;
    for i in 0..4 {
        client
            .execute_statement()
            .statement(r#"INSERT INTO "pql" VALUE {'pk': ?, 'sk': ?, 'v': 'x'}"#)
            .parameters(s("rs"))
            .parameters(n(&i.to_string()))
            .send()
            .await
            .expect("INSERT");
    }
    let page = client
        .execute_statement()
        .statement(r#"SELECT sk FROM "pql" WHERE pk = 'rs' AND sk > 0"#)
        .limit(2)
        .send()
        .await
        .expect("SELECT");
    assert_eq!(page.items(), [item(&[("sk", n("1"))]), item(&[("sk", n("2"))])]);
    let rest = client
        .execute_statement()
        .statement(r#"SELECT sk FROM "pql" WHERE pk = 'rs' AND sk > 0"#)
        .set_next_token(page.next_token().map(str::to_string))
        .send()
        .await
        .expect("second page");
    assert_eq!(rest.items(), [item(&[("sk", n("3"))])]);
    assert_eq!(rest.next_token(), None);

    let dup = client.execute_statement().statement(r#"INSERT INTO "pql" VALUE {'pk': 'rs', 'sk': 0}"#).send().await;
    assert_refused(dup, "a duplicate INSERT", "DuplicateItemException", "Duplicate primary key exists in table");

    let batch = client
        .batch_execute_statement()
        .statements(
            BatchStatementRequest::builder()
                .statement(r#"UPDATE "pql" SET v = 'y' WHERE pk = 'rs' AND sk = 1"#)
                .build()
                .unwrap(),
        )
        .statements(
            BatchStatementRequest::builder()
                .statement(r#"UPDATE "pql" SET v = 'y' WHERE pk = 'rs' AND sk = 1 AND v = 'x'"#)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .expect("BatchExecuteStatement");
    let codes: Vec<Option<&BatchStatementErrorCodeEnum>> =
        batch.responses().iter().map(|r| r.error().and_then(|e| e.code())).collect();
    assert_eq!(codes, [None, Some(&BatchStatementErrorCodeEnum::ConditionalCheckFailed)]);

    let err = client
        .execute_transaction()
        .transact_statements(
            ParameterizedStatement::builder()
                .statement(r#"DELETE FROM "pql" WHERE pk = 'rs' AND sk = 2"#)
                .build()
                .unwrap(),
        )
        .transact_statements(
            ParameterizedStatement::builder()
                .statement(r#"INSERT INTO "pql" VALUE {'pk': 'rs', 'sk': 3}"#)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .expect_err("a duplicate INSERT cancels the transaction");
    match err.into_service_error() {
        ExecuteTransactionError::TransactionCanceledException(e) => {
            let codes: Vec<Option<&str>> = e.cancellation_reasons().iter().map(|r| r.code()).collect();
            assert_eq!(codes, [Some("None"), Some("DuplicateItem")]);
        }
        other => panic!("expected TransactionCanceledException, got {other:?}"),
    }
    let kept = client.get_item().table_name("pql").key("pk", s("rs")).key("sk", n("2")).send().await.unwrap();
    assert!(kept.item().is_some(), "the cancelled DELETE was applied");
}

/// DynamoDB Streams through the Rust SDK's own streams client, with the
/// expirer of time to live deleting an expired item: the stream holds every
/// change in order, the expiry as a REMOVE by the service.
#[tokio::test]
async fn streams_record_every_change_and_the_ttl_expiry() {
    use aws_sdk_dynamodb::types::{StreamSpecification, StreamViewType, TimeToLiveSpecification, TimeToLiveStatus};
    use aws_sdk_dynamodbstreams::types::{OperationType, ShardIteratorType};

    let server = Server::start_with(&["--ttl-interval", "0.2"]);
    let client = server.client();
    create_table_request(&client, "changes", &[("pk", ScalarAttributeType::S)], &[("pk", KeyType::Hash)])
        .stream_specification(
            StreamSpecification::builder()
                .stream_enabled(true)
                .stream_view_type(StreamViewType::NewAndOldImages)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .expect("CreateTable with a stream");
    wait_active(&client, "changes").await;
    client
        .update_time_to_live()
        .table_name("changes")
        .time_to_live_specification(
            TimeToLiveSpecification::builder().enabled(true).attribute_name("exp").build().unwrap(),
        )
        .send()
        .await
        .expect("UpdateTimeToLive");
    let ttl = client.describe_time_to_live().table_name("changes").send().await.unwrap();
    let ttl = ttl.time_to_live_description().unwrap();
    assert_eq!(ttl.time_to_live_status(), Some(&TimeToLiveStatus::Enabled));
    assert_eq!(ttl.attribute_name(), Some("exp"));

    client.put_item().table_name("changes").item("pk", s("kept")).item("v", n("1")).send().await.unwrap();
    client
        .update_item()
        .table_name("changes")
        .key("pk", s("kept"))
        .update_expression("SET v = :two")
        .expression_attribute_values(":two", n("2"))
        .send()
        .await
        .unwrap();
    // Expired a minute ago (TTL skips values more than five years old).
    let expired = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() - 60;
    client
        .put_item()
        .table_name("changes")
        .item("pk", s("expiring"))
        .item("exp", n(&expired.to_string()))
        .send()
        .await
        .unwrap();
    // The expirer runs on the server's clock: wait (bounded) until it acts.
    let mut gone = false;
    for _ in 0..300 {
        if get_consistent(&client, "changes", "expiring").send().await.unwrap().item().is_none() {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(gone, "the expired item was never deleted");

    let streams = aws_sdk_dynamodbstreams::Client::from_conf(
        aws_sdk_dynamodbstreams::Config::builder()
            .behavior_version(aws_sdk_dynamodbstreams::config::BehaviorVersion::latest())
            .region(aws_sdk_dynamodbstreams::config::Region::new("us-east-1"))
            .credentials_provider(aws_sdk_dynamodbstreams::config::Credentials::new("x", "y", None, None, "test"))
            .endpoint_url(&server.endpoint)
            .build(),
    );
    let listed = streams.list_streams().table_name("changes").send().await.expect("ListStreams");
    let arn = listed.streams()[0].stream_arn().unwrap().to_string();
    let described = streams.describe_stream().stream_arn(&arn).send().await.expect("DescribeStream");
    // One shard per partition (an on-demand table starts with four): read
    // each, then order by sequence number (they increase across the stream).
    let mut all = Vec::new();
    for shard in described.stream_description().unwrap().shards() {
        let iterator = streams
            .get_shard_iterator()
            .stream_arn(&arn)
            .shard_id(shard.shard_id().unwrap())
            .shard_iterator_type(ShardIteratorType::TrimHorizon)
            .send()
            .await
            .expect("GetShardIterator");
        let page =
            streams.get_records().shard_iterator(iterator.shard_iterator().unwrap()).send().await.expect("GetRecords");
        all.extend(page.records().iter().cloned());
    }
    all.sort_by_key(|r| r.dynamodb().and_then(|d| d.sequence_number()).unwrap_or_default().to_string());
    let records = all;
    let seen: Vec<(Option<&OperationType>, Option<&str>)> = records
        .iter()
        .map(|r| {
            let key = r.dynamodb().and_then(|d| d.keys()).and_then(|k| k.get("pk")).and_then(|v| v.as_s().ok());
            (r.event_name(), key.map(String::as_str))
        })
        .collect();
    assert_eq!(
        seen,
        [
            (Some(&OperationType::Insert), Some("kept")),
            (Some(&OperationType::Modify), Some("kept")),
            (Some(&OperationType::Insert), Some("expiring")),
            (Some(&OperationType::Remove), Some("expiring")),
        ]
    );
    let modify = records[1].dynamodb().unwrap();
    assert_eq!(modify.old_image().unwrap().get("v").and_then(|v| v.as_n().ok()).map(String::as_str), Some("1"));
    assert_eq!(modify.new_image().unwrap().get("v").and_then(|v| v.as_n().ok()).map(String::as_str), Some("2"));
    let by = records[3].user_identity().expect("an expiry names the service");
    assert_eq!((by.r#type(), by.principal_id()), (Some("Service"), Some("dynamodb.amazonaws.com")));
}
