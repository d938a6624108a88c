//! `dynaburst count` (parallel Scan with Select COUNT) and `dynaburst
//! purge` (parallel Scan of the keys, BatchWriteItem deletes): the two
//! helper scripts of seed 000, with retries on throttling.

use std::collections::HashMap;
use std::time::Duration;

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
    let segments = segments.clamp(1, MAX_SEGMENTS);
    let mut tasks = JoinSet::new();
    for segment in 0..segments {
        let client = client.clone();
        let table = table.to_string();
        tasks.spawn(async move {
            let mut total = 0u64;
            let mut start: Option<HashMap<String, Av>> = None;
            let mut attempt = 0;
            // Jitter only spreads the segments' retries: any seed will do.
            let mut rng = Rng::new(u64::from(segment));
            loop {
                let resp = client
                    .scan()
                    .table_name(&table)
                    .select(Select::Count)
                    .segment(segment as i32)
                    .total_segments(segments as i32)
                    .set_exclusive_start_key(start.clone())
                    .send()
                    .await;
                match resp {
                    Ok(out) => {
                        attempt = 0;
                        total += out.count() as u64;
                        match out.last_evaluated_key() {
                            Some(k) if !k.is_empty() => start = Some(k.clone()),
                            _ => return Ok(total),
                        }
                    }
                    Err(e) if classify(&e).is_retryable() => {
                        attempt += 1;
                        if attempt > MAX_ATTEMPTS {
                            return Err(DynamoError::GaveUp {
                                operation: format!("Scan segment {segment}"),
                                attempts: MAX_ATTEMPTS,
                                last: crate::errors::error_text(&e),
                            });
                        }
                        tokio::time::sleep(BACKOFF.delay(attempt - 1, &mut rng)).await;
                    }
                    Err(e) => return Err(DynamoError::request(format!("Scan {table}"), &e)),
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

/// Deletes every item of `table`; returns how many were deleted.
pub async fn purge(client: &Client, table: &str, segments: u32) -> Result<u64, DynamoError> {
    let info = sink::describe(client, table).await?;
    let names: Vec<String> = info.schema.names().iter().map(|s| s.to_string()).collect();
    let segments = segments.clamp(1, MAX_SEGMENTS);
    let mut tasks = JoinSet::new();
    for segment in 0..segments {
        let client = client.clone();
        let table = table.to_string();
        let names = names.clone();
        tasks.spawn(async move {
            let placeholders: HashMap<String, String> =
                names.iter().enumerate().map(|(i, n)| (format!("#k{i}"), n.clone())).collect();
            let projection = (0..names.len()).map(|i| format!("#k{i}")).collect::<Vec<_>>().join(", ");
            let mut deleted = 0u64;
            let mut start: Option<HashMap<String, Av>> = None;
            let mut attempt = 0;
            let mut rng = Rng::new(u64::from(segment));
            loop {
                let resp = client
                    .scan()
                    .table_name(&table)
                    .projection_expression(&projection)
                    .set_expression_attribute_names(Some(placeholders.clone()))
                    .segment(segment as i32)
                    .total_segments(segments as i32)
                    .set_exclusive_start_key(start.clone())
                    .send()
                    .await;
                let out = match resp {
                    Ok(o) => o,
                    Err(e) if classify(&e).is_retryable() => {
                        attempt += 1;
                        if attempt > MAX_ATTEMPTS {
                            return Err(DynamoError::GaveUp {
                                operation: format!("Scan segment {segment}"),
                                attempts: MAX_ATTEMPTS,
                                last: crate::errors::error_text(&e),
                            });
                        }
                        tokio::time::sleep(BACKOFF.delay(attempt - 1, &mut rng)).await;
                        continue;
                    }
                    Err(e) => return Err(DynamoError::request(format!("Scan {table}"), &e)),
                };
                attempt = 0;
                for chunk in out.items().chunks(BATCH_SIZE) {
                    let mut pending: Vec<WriteRequest> = Vec::with_capacity(chunk.len());
                    for key in chunk {
                        let d = DeleteRequest::builder()
                            .set_key(Some(key.clone()))
                            .build()
                            .map_err(|e| DynamoError::Build { operation: "BatchWriteItem", text: e.to_string() })?;
                        pending.push(WriteRequest::builder().delete_request(d).build());
                    }
                    let mut tries = 0;
                    while !pending.is_empty() {
                        let n = pending.len();
                        match client.batch_write_item().request_items(&table, pending.clone()).send().await {
                            Ok(o) => {
                                let left =
                                    o.unprocessed_items().and_then(|m| m.get(&table)).cloned().unwrap_or_default();
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
                            tokio::time::sleep(BACKOFF.delay(tries.saturating_sub(1), &mut rng)).await;
                        }
                    }
                }
                match out.last_evaluated_key() {
                    Some(k) if !k.is_empty() => start = Some(k.clone()),
                    _ => return Ok(deleted),
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
