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
use aws_sdk_dynamodb::operation::get_item::GetItemError;
use aws_sdk_dynamodb::operation::put_item::PutItemError;
use aws_sdk_dynamodb::operation::query::QueryError;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, ConditionCheck, KeySchemaElement, KeyType, KeysAndAttributes,
    Put, PutRequest, ReturnConsumedCapacity, ReturnValue, ScalarAttributeType, TableStatus, TransactWriteItem, Update,
    WriteRequest,
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
}

impl Server {
    fn start() -> Server {
        let bin = env!("CARGO_BIN_EXE_dynaburst");
        let mut child = Command::new(bin)
            .args(["serve", "--host", "127.0.0.1", "--port", "0"])
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

        let mut server = Server { child: Some(child), endpoint: String::new(), stderr };
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
    }
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

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
    let mut req = client
        .create_table()
        .table_name(name)
        .billing_mode(BillingMode::PayPerRequest)
        .attribute_definitions(
            AttributeDefinition::builder().attribute_name("pk").attribute_type(ScalarAttributeType::S).build().unwrap(),
        )
        .key_schema(KeySchemaElement::builder().attribute_name("pk").key_type(KeyType::Hash).build().unwrap());
    if let Some(t) = range {
        req = req
            .attribute_definitions(
                AttributeDefinition::builder().attribute_name("sk").attribute_type(t).build().unwrap(),
            )
            .key_schema(KeySchemaElement::builder().attribute_name("sk").key_type(KeyType::Range).build().unwrap());
    }
    req.send().await.expect("CreateTable");
    wait_active(client, name).await;
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
    let server = Server::start();
    let client = server.client();

    let created = client
        .create_table()
        .table_name("orders")
        .billing_mode(BillingMode::PayPerRequest)
        .attribute_definitions(
            AttributeDefinition::builder().attribute_name("pk").attribute_type(ScalarAttributeType::S).build().unwrap(),
        )
        .attribute_definitions(
            AttributeDefinition::builder().attribute_name("sk").attribute_type(ScalarAttributeType::N).build().unwrap(),
        )
        .key_schema(KeySchemaElement::builder().attribute_name("pk").key_type(KeyType::Hash).build().unwrap())
        .key_schema(KeySchemaElement::builder().attribute_name("sk").key_type(KeyType::Range).build().unwrap())
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
    let server = Server::start();
    let client = server.client();
    create_table(&client, "types", None).await;

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

    let got = client
        .get_item()
        .table_name("types")
        .key("pk", s("all-types"))
        .consistent_read(true)
        .send()
        .await
        .expect("GetItem");
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
    let server = Server::start();
    let client = server.client();
    create_table(&client, "nums", None).await;

    let cases = [
        DIGITS38,
        "-99999999999999999999999999999999999999",
        "1234567890123456789.0123456789012345678",
        "0.0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000001", // 1E-130, the smallest positive magnitude,
    ];
    for (i, v) in cases.iter().enumerate() {
        let pk = format!("num-{i}");
        client.put_item().table_name("nums").item("pk", s(&pk)).item("v", n(v)).send().await.expect("PutItem");
        let got = client.get_item().table_name("nums").key("pk", s(&pk)).consistent_read(true).send().await.unwrap();
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
    let got = client.get_item().table_name("nums").key("pk", s("canon")).consistent_read(true).send().await.unwrap();
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
    let server = Server::start();
    let client = server.client();
    create_table(&client, "upd", None).await;

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

    let got = client.get_item().table_name("upd").key("pk", s("u1")).consistent_read(true).send().await.unwrap();
    assert_eq!(got.item().unwrap().get("big"), Some(&n("12345678901234567890123456789012345679")));
    assert!(got.item().unwrap().get("old").is_none());
}

#[tokio::test]
async fn conditional_put_fails_with_typed_error() {
    let server = Server::start();
    let client = server.client();
    create_table(&client, "cond", None).await;

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
    let got = client.get_item().table_name("cond").key("pk", s("k")).consistent_read(true).send().await.unwrap();
    assert_eq!(got.item().unwrap().get("v"), Some(&n("1")), "failed put must not change the item");
}

#[tokio::test]
async fn batch_write_25_then_batch_get() {
    let server = Server::start();
    let client = server.client();
    create_table(&client, "batch", Some(ScalarAttributeType::N)).await;

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
    let server = Server::start();
    let client = server.client();
    create_table(&client, "txn", None).await;
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
    let new = client.get_item().table_name("txn").key("pk", s("new")).consistent_read(true).send().await.unwrap();
    assert!(new.item().is_none(), "cancelled Put was applied");
    let counter =
        client.get_item().table_name("txn").key("pk", s("counter")).consistent_read(true).send().await.unwrap();
    assert_eq!(counter.item().unwrap().get("n"), Some(&n("1")), "cancelled Update was applied");
}

#[tokio::test]
async fn query_paginates_with_items_stream() {
    let server = Server::start();
    let client = server.client();
    create_table(&client, "query", Some(ScalarAttributeType::N)).await;

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

    let items: Vec<HashMap<String, AttributeValue>> = client
        .query()
        .table_name("query")
        .key_condition_expression("pk = :p")
        .expression_attribute_values(":p", s("p"))
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
    let pages = client
        .query()
        .table_name("query")
        .key_condition_expression("pk = :p")
        .expression_attribute_values(":p", s("p"))
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
    let server = Server::start();
    let client = server.client();

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

    let err = client
        .query()
        .table_name("nope")
        .key_condition_expression("pk = :p")
        .expression_attribute_values(":p", s("x"))
        .send()
        .await
        .expect_err("missing table");
    assert!(matches!(err.into_service_error(), QueryError::ResourceNotFoundException(_)));

    let err = client.describe_table().table_name("nope").send().await.expect_err("missing table");
    assert!(matches!(err.into_service_error(), DescribeTableError::ResourceNotFoundException(_)));
}

#[tokio::test]
async fn key_schema_mismatch_is_validation_exception() {
    let server = Server::start();
    let client = server.client();
    create_table(&client, "valid", Some(ScalarAttributeType::N)).await;

    // Missing range key.
    let err = client
        .get_item()
        .table_name("valid")
        .key("pk", s("x"))
        .send()
        .await
        .expect_err("key mismatch")
        .into_service_error();
    // ValidationException is not a modelled variant: check the error code.
    assert_eq!(err.code(), Some("ValidationException"), "got {err:?}");
    assert_eq!(err.message(), Some("The provided key element does not match the schema"));

    // Wrong type for the range key.
    let err = client
        .get_item()
        .table_name("valid")
        .key("pk", s("x"))
        .key("sk", s("1"))
        .send()
        .await
        .expect_err("key type mismatch")
        .into_service_error();
    assert_eq!(err.code(), Some("ValidationException"));
    assert_eq!(err.message(), Some("The provided key element does not match the schema"));
}

#[tokio::test]
async fn delete_item_all_old_and_consumed_capacity() {
    let server = Server::start();
    let client = server.client();
    create_table(&client, "del", None).await;

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

    let got = client
        .get_item()
        .table_name("del")
        .key("pk", s("k"))
        .consistent_read(true)
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
