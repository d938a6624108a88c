//! `dynaburst count` (parallel Scan with Select COUNT) and `dynaburst
//! purge` (parallel Scan of the keys, BatchWriteItem deletes): the two
//! helper scripts of seed 000, with retries on throttling.

use std::collections::HashMap;
use std::time::Duration;

use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::types::{AttributeValue as Av, DeleteRequest, Select, WriteRequest};
use aws_sdk_dynamodb::Client;
use tokio::task::JoinSet;

use crate::sink;

/// Most parallel scan segments.
pub const MAX_SEGMENTS: u32 = 64;
/// Attempts for one page or batch that makes no progress.
pub const MAX_ATTEMPTS: u32 = 20;

fn backoff(attempt: u32, salt: u64) -> Duration {
    let base = 50u64 << attempt.min(7);
    Duration::from_millis(base / 2 + (salt.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 33) % (base / 2 + 1))
}

fn retryable(code: Option<&str>) -> bool {
    matches!(
        code,
        Some(
            "ProvisionedThroughputExceededException"
                | "ThrottlingException"
                | "RequestLimitExceeded"
                | "InternalServerError"
        )
    )
}

/// Counts the items of `table` with `segments` parallel scans.
pub async fn count(client: &Client, table: &str, segments: u32) -> Result<u64, String> {
    let segments = segments.clamp(1, MAX_SEGMENTS);
    let mut tasks = JoinSet::new();
    for segment in 0..segments {
        let client = client.clone();
        let table = table.to_string();
        tasks.spawn(async move {
            let mut total = 0u64;
            let mut start: Option<HashMap<String, Av>> = None;
            let mut attempt = 0;
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
                    Err(e) if retryable(e.code()) || e.as_service_error().is_none() => {
                        attempt += 1;
                        if attempt > MAX_ATTEMPTS {
                            return Err(format!(
                                "Scan segment {segment}: gave up after {MAX_ATTEMPTS} attempts: {}",
                                sink::error_text(&e)
                            ));
                        }
                        tokio::time::sleep(backoff(attempt, u64::from(segment))).await;
                    }
                    Err(e) => return Err(format!("Scan {table}: {}", sink::error_text(&e))),
                }
            }
        });
    }
    let mut sum = 0;
    while let Some(r) = tasks.join_next().await {
        sum += r.map_err(|e| format!("a scan task failed: {e}"))??;
    }
    Ok(sum)
}

/// Deletes every item of `table`; returns how many were deleted.
pub async fn purge(client: &Client, table: &str, segments: u32) -> Result<u64, String> {
    let info = sink::describe(client, table).await.map_err(|e| format!("{e:?}"))?;
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
                    Err(e) if retryable(e.code()) || e.as_service_error().is_none() => {
                        attempt += 1;
                        if attempt > MAX_ATTEMPTS {
                            return Err(format!("Scan segment {segment}: gave up: {}", sink::error_text(&e)));
                        }
                        tokio::time::sleep(backoff(attempt, u64::from(segment))).await;
                        continue;
                    }
                    Err(e) => return Err(format!("Scan {table}: {}", sink::error_text(&e))),
                };
                attempt = 0;
                for chunk in out.items().chunks(25) {
                    let mut pending: Vec<WriteRequest> = Vec::with_capacity(chunk.len());
                    for key in chunk {
                        let d =
                            DeleteRequest::builder().set_key(Some(key.clone())).build().map_err(|e| e.to_string())?;
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
                            Err(e) if retryable(e.code()) || e.as_service_error().is_none() => tries += 1,
                            Err(e) => return Err(format!("BatchWriteItem {table}: {}", sink::error_text(&e))),
                        }
                        if !pending.is_empty() {
                            if tries > MAX_ATTEMPTS {
                                return Err(format!(
                                    "purge of {table}: deletes made no progress after {MAX_ATTEMPTS} attempts"
                                ));
                            }
                            tokio::time::sleep(backoff(tries, deleted)).await;
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
        sum += r.map_err(|e| format!("a purge task failed: {e}"))??;
    }
    Ok(sum)
}
