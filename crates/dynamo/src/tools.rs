//! `dynaburst count` (parallel Scan with Select COUNT) and `dynaburst
//! purge` (parallel Scan of the keys, BatchWriteItem deletes): the two
//! helper scripts of seed 000, with retries on throttling.

use std::collections::HashMap;
use std::future::Future;
use std::time::Duration;

use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::scan::builders::ScanFluentBuilder;
use aws_sdk_dynamodb::operation::scan::ScanOutput;
use aws_sdk_dynamodb::types::{AttributeValue as Av, DeleteRequest, Select, WriteRequest};
use aws_sdk_dynamodb::Client;
use dynaburst_rng::{Backoff, Rng};
use tokio::task::JoinSet;

use crate::errors::{classify, DynamoError};
use crate::sink;
use crate::BATCH_SIZE;

/// Most parallel scan segments.
pub const MAX_SEGMENTS: u32 = 64;
/// Attempts for one page or batch that makes no progress.
pub const MAX_ATTEMPTS: u32 = 20;

/// Backoff between attempts of one page or batch.
pub const BACKOFF: Backoff = Backoff { base: Duration::from_millis(100), cap: Duration::from_millis(6_400) };

/// Counts the items of `table` with `segments` parallel scans.
pub async fn count(client: &Client, table: &str, segments: u32) -> Result<u64, DynamoError> {
    each_segment(
        client,
        table,
        segments,
        |request| request.select(Select::Count),
        |_, _, _, out| async move { Ok(out.count() as u64) },
    )
    .await
}

/// Deletes every item of `table`; returns how many were deleted.
pub async fn purge(client: &Client, table: &str, segments: u32) -> Result<u64, DynamoError> {
    let info = sink::describe(client, table).await?;
    let names = info.schema.names();
    let placeholders: HashMap<String, String> =
        names.iter().enumerate().map(|(i, n)| (format!("#k{i}"), n.to_string())).collect();
    let projection = (0..names.len()).map(|i| format!("#k{i}")).collect::<Vec<_>>().join(", ");
    each_segment(
        client,
        table,
        segments,
        |request| request.projection_expression(&projection).set_expression_attribute_names(Some(placeholders.clone())),
        |client, table, mut rng, out| async move {
            let mut deleted = 0;
            for chunk in out.items().chunks(BATCH_SIZE) {
                deleted += delete_keys(&client, &table, chunk, &mut rng).await?;
            }
            Ok(deleted)
        },
    )
    .await
}

/// Scans `table` in `segments` parallel segments (clamped to
/// [`MAX_SEGMENTS`]), each page's request shaped by `shape` and retried on
/// throttling; `per_page` turns each page into a count. Returns the sum.
async fn each_segment<S, P, F>(
    client: &Client,
    table: &str,
    segments: u32,
    shape: S,
    per_page: P,
) -> Result<u64, DynamoError>
where
    S: Fn(ScanFluentBuilder) -> ScanFluentBuilder,
    P: Fn(Client, String, Rng, ScanOutput) -> F + Clone + Send + 'static,
    F: Future<Output = Result<u64, DynamoError>> + Send,
{
    let segments = segments.clamp(1, MAX_SEGMENTS);
    let mut tasks = JoinSet::new();
    for segment in 0..segments {
        let client = client.clone();
        let table = table.to_string();
        let request = shape(client.scan().table_name(&table).segment(segment as i32).total_segments(segments as i32));
        let per_page = per_page.clone();
        tasks.spawn(async move {
            // Jitter only spreads the segments' retries: any seed will do.
            let mut rng = Rng::new(u64::from(segment));
            let mut total = 0;
            let mut start: Option<HashMap<String, Av>> = None;
            loop {
                let page = request.clone().set_exclusive_start_key(start.take());
                let (out, _) =
                    with_retries(|| page.clone().send(), &format!("Scan segment {segment} of {table}"), &mut rng)
                        .await?;
                let next = out.last_evaluated_key().filter(|k| !k.is_empty()).cloned();
                total += per_page(client.clone(), table.clone(), rng.fork(), out).await?;
                match next {
                    Some(k) => start = Some(k),
                    None => return Ok(total),
                }
            }
        });
    }
    let mut sum = 0;
    while let Some(r) = tasks.join_next().await {
        sum += r.map_err(|e| DynamoError::Task(e.to_string()))??;
    }
    Ok(sum)
}

/// Sends a request, retrying retryable errors with [`BACKOFF`] up to
/// [`MAX_ATTEMPTS`] times. Returns the answer and how many times the
/// request was sent again.
pub(crate) async fn with_retries<T, E, Fut>(
    send: impl Fn() -> Fut,
    operation: &str,
    rng: &mut Rng,
) -> Result<(T, u32), DynamoError>
where
    Fut: Future<Output = Result<T, SdkError<E, HttpResponse>>>,
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    let mut attempt = 0;
    loop {
        match send().await {
            Ok(out) => return Ok((out, attempt)),
            Err(e) if classify(&e).is_retryable() && attempt < MAX_ATTEMPTS => {
                attempt += 1;
                tokio::time::sleep(BACKOFF.delay(attempt - 1, rng)).await;
            }
            Err(e) if classify(&e).is_retryable() => {
                return Err(DynamoError::GaveUp {
                    operation: operation.to_string(),
                    attempts: MAX_ATTEMPTS,
                    last: crate::errors::error_text(&e),
                })
            }
            Err(e) => return Err(DynamoError::request(operation.to_string(), &e)),
        }
    }
}

/// Deletes `keys` (at most one batch) with BatchWriteItem, re-sending
/// unprocessed keys until none are left or no progress is made
/// [`MAX_ATTEMPTS`] times in a row. Returns how many were deleted.
async fn delete_keys(
    client: &Client,
    table: &str,
    keys: &[HashMap<String, Av>],
    rng: &mut Rng,
) -> Result<u64, DynamoError> {
    let mut pending: Vec<WriteRequest> = Vec::with_capacity(keys.len());
    for key in keys {
        let d = DeleteRequest::builder()
            .set_key(Some(key.clone()))
            .build()
            .map_err(|e| DynamoError::Build { operation: "BatchWriteItem", text: e.to_string() })?;
        pending.push(WriteRequest::builder().delete_request(d).build());
    }
    let mut deleted = 0;
    let mut tries = 0;
    while !pending.is_empty() {
        let n = pending.len();
        match client.batch_write_item().request_items(table, pending.clone()).send().await {
            Ok(o) => {
                let left = o.unprocessed_items().and_then(|m| m.get(table)).cloned().unwrap_or_default();
                deleted += (n - left.len()) as u64;
                tries = if left.len() < n { 0 } else { tries + 1 };
                pending = left;
            }
            Err(e) if classify(&e).is_retryable() => tries += 1,
            Err(e) => return Err(DynamoError::request(format!("BatchWriteItem {table}"), &e)),
        }
        if !pending.is_empty() {
            if tries > MAX_ATTEMPTS {
                return Err(DynamoError::GaveUp {
                    operation: format!("purge of {table}"),
                    attempts: MAX_ATTEMPTS,
                    last: "deletes made no progress".to_string(),
                });
            }
            tokio::time::sleep(BACKOFF.delay(tries.saturating_sub(1), rng)).await;
        }
    }
    Ok(deleted)
}
