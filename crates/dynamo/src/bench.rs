//! The bench's own DynamoDB calls, typed: items are the data model's, the
//! SDK stays in this crate. Retried calls back off with the one `Backoff`
//! and retry what the one classification (`errors`) calls retryable.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::{
    AttributeValue as Av, BatchStatementRequest, ConditionCheck, Put, PutRequest, TransactWriteItem, WriteRequest,
};
use aws_sdk_dynamodb::Client;
use dynaburst_model::{AttributeValue, Item, ScalarType};
use dynaburst_rng::{Backoff, Rng};

use crate::convert::{item_from_sdk, item_to_sdk, to_sdk};
use crate::errors::{classify, classify_cancellation, DynamoError, ErrorClass};
use crate::schema::KeySchema;
use crate::sink::{self, Billing, Endpoint};

/// Attempts of a retried call before it gives up.
pub const BENCH_ATTEMPTS: u32 = 200;
/// The bench's retry backoff: short steps, for a local server.
pub const BENCH_BACKOFF: Backoff = Backoff { base: Duration::from_millis(10), cap: Duration::from_millis(500) };

/// Why a bench call failed.
pub type BenchError = DynamoError;

/// An item converted for the SDK once, so a timed loop does not convert.
#[derive(Clone, Debug)]
pub struct BenchItem(HashMap<String, Av>);

impl From<&Item> for BenchItem {
    fn from(item: &Item) -> BenchItem {
        BenchItem(item_to_sdk(item))
    }
}

/// A client of one endpoint for the bench's scenarios.
#[derive(Clone, Debug)]
pub struct BenchClient {
    client: Client,
    /// Jitter for retries; seeded from the run's seed.
    seed: u64,
    /// Write requests sent by `batch_all`, `put` and `transact`, retries
    /// included (shared by clones).
    sent: Arc<AtomicU64>,
}

impl BenchClient {
    /// A client of `url` (region us-east-1), SDK retries off.
    pub async fn connect(url: &str, seed: u64) -> BenchClient {
        let endpoint = Endpoint { url: Some(url.to_string()), region: Some("us-east-1".into()), profile: None };
        BenchClient { client: sink::client(&endpoint).await, seed, sent: Arc::default() }
    }

    /// Write requests sent so far by `batch_all`, `put` and `transact`,
    /// retries included: what a write API costs in round trips, whatever
    /// the machine's speed.
    pub fn requests_sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }

    fn rng(&self, salt: &str) -> Rng {
        // Each call draws its own jitter, independent of scheduling.
        let mut h = self.seed;
        for b in salt.bytes() {
            h = h.rotate_left(5) ^ u64::from(b);
        }
        Rng::new(h)
    }

    /// Creates a table (on-demand, or provisioned `(read, write)`) and
    /// waits until it is ACTIVE.
    pub async fn create_table(
        &self,
        name: &str,
        keys: &[(&str, ScalarType)],
        provisioned: Option<(u64, u64)>,
    ) -> Result<(), BenchError> {
        let mut names = keys.iter().map(|(n, t)| (n.to_string(), *t));
        let hash = names.next().ok_or(DynamoError::Build { operation: "CreateTable", text: "no key".into() })?;
        let schema = KeySchema { hash, range: names.next() };
        let billing = match provisioned {
            Some((read, write)) => Billing::Provisioned { read, write },
            None => Billing::OnDemand,
        };
        sink::create_table(&self.client, name, &schema, billing).await
    }

    /// Deletes a table (not waiting for it to go).
    pub async fn delete_table(&self, name: &str) -> Result<(), BenchError> {
        self.client
            .delete_table()
            .table_name(name)
            .send()
            .await
            .map(|_| ())
            .map_err(|e| DynamoError::request(format!("DeleteTable {name}"), &e))
    }

    /// Counts a table's items with parallel scans.
    pub async fn count(&self, table: &str, segments: u32) -> Result<u64, BenchError> {
        crate::tools::count(&self.client, table, segments).await
    }

    /// Deletes every item of a table.
    pub async fn purge(&self, table: &str, segments: u32) -> Result<u64, BenchError> {
        crate::tools::purge(&self.client, table, segments).await
    }

    /// One BatchWriteItem, re-sending what comes back unprocessed or
    /// throttled until all is in.
    pub async fn batch_all(&self, table: &str, items: &[BenchItem]) -> Result<(), BenchError> {
        let pending = put_requests(items)?;
        self.resend_until_done(table, "BatchWriteItem", pending, |p| async move {
            match self.client.batch_write_item().request_items(table, p).send().await {
                Ok(o) => Sent::Left(o.unprocessed_items().and_then(|m| m.get(table)).cloned().unwrap_or_default()),
                Err(e) if classify(&e).is_retryable() => Sent::Retry,
                Err(e) => Sent::Failed(DynamoError::request("BatchWriteItem", &e)),
            }
        })
        .await
    }

    /// Sends `pending` with `send`, then what each answer leaves, backing
    /// off after an answer that leaves something or asks for a retry, until
    /// nothing is left or [`BENCH_ATTEMPTS`] backoffs pass.
    async fn resend_until_done<T: Clone, F: Future<Output = Sent<T>>>(
        &self,
        table: &str,
        operation: &str,
        mut pending: Vec<T>,
        send: impl Fn(Vec<T>) -> F,
    ) -> Result<(), BenchError> {
        let mut rng = self.rng(table);
        let mut attempt = 0;
        while !pending.is_empty() {
            self.sent.fetch_add(1, Ordering::Relaxed);
            let again = match send(pending.clone()).await {
                Sent::Left(left) => {
                    pending = left;
                    !pending.is_empty()
                }
                Sent::Retry => true,
                Sent::Failed(e) => return Err(e),
            };
            if again {
                tokio::time::sleep(BENCH_BACKOFF.delay(attempt, &mut rng)).await;
                attempt += 1;
            }
            if attempt > BENCH_ATTEMPTS {
                return Err(gave_up(operation, "no progress"));
            }
        }
        Ok(())
    }

    /// One PutItem, retried while retryable.
    pub async fn put(&self, table: &str, item: &BenchItem) -> Result<(), BenchError> {
        let mut rng = self.rng(table);
        for attempt in 0..BENCH_ATTEMPTS {
            self.sent.fetch_add(1, Ordering::Relaxed);
            match self.client.put_item().table_name(table).set_item(Some(item.0.clone())).send().await {
                Ok(_) => return Ok(()),
                Err(e) if classify(&e).is_retryable() => {
                    tokio::time::sleep(BENCH_BACKOFF.delay(attempt, &mut rng)).await
                }
                Err(e) => return Err(DynamoError::request("PutItem", &e)),
            }
        }
        Err(gave_up("PutItem", "throttled every time"))
    }

    /// One TransactWriteItems of puts, retried while retryable (a
    /// cancellation for throttling or a conflict included).
    pub async fn transact(&self, table: &str, items: &[BenchItem]) -> Result<(), BenchError> {
        let actions = transact_puts(table, items)?;
        let mut rng = self.rng(table);
        for attempt in 0..BENCH_ATTEMPTS {
            self.sent.fetch_add(1, Ordering::Relaxed);
            match self.client.transact_write_items().set_transact_items(Some(actions.clone())).send().await {
                Ok(_) => return Ok(()),
                Err(e) if transact_class(&e).is_retryable() => {
                    tokio::time::sleep(BENCH_BACKOFF.delay(attempt, &mut rng)).await
                }
                Err(e) => return Err(DynamoError::request("TransactWriteItems", &e)),
            }
        }
        Err(gave_up("TransactWriteItems", "throttled every time"))
    }

    /// One BatchExecuteStatement of an INSERT per item, re-sending the
    /// statements refused for throughput until all are in. A DuplicateItem
    /// is an error: the table is purged before each run.
    pub async fn batch_statements(&self, table: &str, items: &[BenchItem]) -> Result<(), BenchError> {
        let pending = insert_statements(table, items)?;
        self.resend_until_done(table, "BatchExecuteStatement", pending, |p| async move {
            let out = self.client.batch_execute_statement().set_statements(Some(p.clone())).send().await;
            match out {
                Ok(o) => {
                    let mut left = Vec::new();
                    for (statement, response) in p.into_iter().zip(o.responses()) {
                        let Some(error) = response.error() else { continue };
                        let code = error.code().map(|c| c.as_str()).unwrap_or_default();
                        if !THROTTLED_STATEMENT_CODES.contains(&code) {
                            let text = format!("{code}: {}", error.message().unwrap_or_default());
                            return Sent::Failed(DynamoError::Build { operation: "BatchExecuteStatement", text });
                        }
                        left.push(statement);
                    }
                    Sent::Left(left)
                }
                Err(e) if classify(&e).is_retryable() => Sent::Retry,
                Err(e) => Sent::Failed(DynamoError::request("BatchExecuteStatement", &e)),
            }
        })
        .await
    }

    /// One PutItem, once: whether it succeeded.
    pub async fn put_once(&self, table: &str, item: &Item) -> bool {
        self.client.put_item().table_name(table).set_item(Some(item_to_sdk(item))).send().await.is_ok()
    }

    /// One BatchWriteItem, once: how many items came back unprocessed, or
    /// None when the request failed.
    pub async fn batch_once(&self, table: &str, items: &[Item]) -> Option<u64> {
        let requests: Vec<WriteRequest> = items
            .iter()
            .filter_map(|i| PutRequest::builder().set_item(Some(item_to_sdk(i))).build().ok())
            .map(|p| WriteRequest::builder().put_request(p).build())
            .collect();
        let out = self.client.batch_write_item().request_items(table, requests).send().await.ok()?;
        Some(out.unprocessed_items().and_then(|m| m.get(table)).map(|v| v.len() as u64).unwrap_or(0))
    }

    /// One TransactWriteItems of puts, once, with a condition check on
    /// `(key attribute, value)` when given that cannot hold (the item is
    /// never written): `Ok(true)` written, `Ok(false)` cancelled.
    pub async fn transact_once(
        &self,
        table: &str,
        items: &[Item],
        failing_check: Option<(&str, &AttributeValue)>,
    ) -> Result<bool, BenchError> {
        let converted: Vec<BenchItem> = items.iter().map(BenchItem::from).collect();
        let mut actions = transact_puts(table, &converted)?;
        if let Some((name, value)) = failing_check {
            let cc = ConditionCheck::builder()
                .table_name(table)
                .key(name, to_sdk(value))
                .condition_expression(format!("attribute_exists({name})"))
                .build()
                .map_err(|e| DynamoError::Build { operation: "TransactWriteItems", text: e.to_string() })?;
            actions.push(TransactWriteItem::builder().condition_check(cc).build());
        }
        match self.client.transact_write_items().set_transact_items(Some(actions)).send().await {
            Ok(_) => Ok(true),
            Err(e) if e.as_service_error().is_some_and(|s| s.is_transaction_canceled_exception()) => Ok(false),
            Err(e) => Err(DynamoError::request("TransactWriteItems", &e)),
        }
    }

    /// The item of partition `pk` with the greatest sort key `sk` at
    /// most `upto` (a Query backwards with limit 1), if any.
    pub async fn last_at_most(
        &self,
        table: &str,
        (pk, pk_value): (&str, &AttributeValue),
        (sk, upto): (&str, &AttributeValue),
    ) -> Result<Option<Item>, BenchError> {
        let out = self
            .client
            .query()
            .table_name(table)
            .key_condition_expression("#p = :p AND #s <= :a")
            .expression_attribute_names("#p", pk)
            .expression_attribute_names("#s", sk)
            .expression_attribute_values(":p", to_sdk(pk_value))
            .expression_attribute_values(":a", to_sdk(upto))
            .scan_index_forward(false)
            .limit(1)
            .send()
            .await
            .map_err(|e| DynamoError::request("Query", &e))?;
        Ok(out.items().first().and_then(item_from_sdk))
    }
}

/// What one send of a batch left.
enum Sent<T> {
    /// The entries to send again (none: all done).
    Left(Vec<T>),
    /// A retryable failure: send the same again.
    Retry,
    Failed(DynamoError),
}

fn gave_up(operation: &str, last: &str) -> DynamoError {
    DynamoError::GaveUp { operation: operation.to_string(), attempts: BENCH_ATTEMPTS, last: last.to_string() }
}

fn put_requests(items: &[BenchItem]) -> Result<Vec<WriteRequest>, DynamoError> {
    items
        .iter()
        .map(|i| {
            PutRequest::builder()
                .set_item(Some(i.0.clone()))
                .build()
                .map(|p| WriteRequest::builder().put_request(p).build())
        })
        .collect::<Result<_, _>>()
        .map_err(|e| DynamoError::Build { operation: "BatchWriteItem", text: e.to_string() })
}

/// Per-statement error codes of BatchExecuteStatement that ask for the
/// statement to be sent again.
const THROTTLED_STATEMENT_CODES: [&str; 4] =
    ["ThrottlingError", "ProvisionedThroughputExceeded", "RequestLimitExceeded", "InternalServerError"];

/// `INSERT INTO "table" VALUE {'a': ?, ...}` for each item, its values as
/// the parameters.
fn insert_statements(table: &str, items: &[BenchItem]) -> Result<Vec<BatchStatementRequest>, DynamoError> {
    let quote = |name: &str| name.replace('\'', "''");
    items
        .iter()
        .map(|i| {
            let (names, values): (Vec<&String>, Vec<Av>) = i.0.iter().map(|(k, v)| (k, v.clone())).unzip();
            let fields: Vec<String> = names.iter().map(|k| format!("'{}': ?", quote(k))).collect();
            BatchStatementRequest::builder()
                .statement(format!("INSERT INTO \"{table}\" VALUE {{{}}}", fields.join(", ")))
                .set_parameters(Some(values))
                .build()
        })
        .collect::<Result<_, _>>()
        .map_err(|e| DynamoError::Build { operation: "BatchExecuteStatement", text: e.to_string() })
}

fn transact_puts(table: &str, items: &[BenchItem]) -> Result<Vec<TransactWriteItem>, DynamoError> {
    items
        .iter()
        .map(|i| {
            Put::builder()
                .table_name(table)
                .set_item(Some(i.0.clone()))
                .build()
                .map(|p| TransactWriteItem::builder().put(p).build())
        })
        .collect::<Result<_, _>>()
        .map_err(|e| DynamoError::Build { operation: "TransactWriteItems", text: e.to_string() })
}

/// A TransactWriteItems error's class: a cancellation by its reasons.
fn transact_class(
    e: &aws_sdk_dynamodb::error::SdkError<TransactWriteItemsError, aws_sdk_dynamodb::config::http::HttpResponse>,
) -> ErrorClass {
    match e.as_service_error() {
        Some(TransactWriteItemsError::TransactionCanceledException(tc)) => {
            classify_cancellation(tc.cancellation_reasons().iter().map(|r| r.code().unwrap_or("None")))
        }
        _ => classify(e),
    }
}
