//! The loader's `Sink` over the in-process engine: each request is one
//! BatchWriteItem through the engine's typed API (and so its write funnel
//! and capacity model), at the virtual time the pipeline's clock says,
//! half a round trip after it is sent.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use dynaburst_engine::{
    BatchWriteInput, BillingMode, Engine, EngineError, Millis, ReturnCapacity, Table, WriteRequest,
};
use dynaburst_loader::{Clock, Limits, Outcome, Sink};
use dynaburst_model::{item_size, write_units, Item, KeyValue};
use parking_lot::Mutex;
use tokio::time::Instant;

/// Items in one BatchWriteItem (DynamoDB's limit).
pub const MAX_BATCH_WRITE_ITEMS: usize = 25;
/// Bytes of items in one BatchWriteItem (DynamoDB's 16 MB request limit).
pub const MAX_BATCH_WRITE_BYTES: usize = 16 * 1024 * 1024;
/// Partition-key values whose units a simulation tracks: beyond these the
/// hottest keys are already known, and memory stays bounded.
pub const MAX_TRACKED_KEYS: usize = 100_000;

/// One virtual second of a simulated load, as the table saw it.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct SimSecond {
    /// Seconds since the load started.
    pub second: u64,
    /// Write units the table consumed.
    pub consumed_units: f64,
    /// Write units of the items it refused (throttled requests and
    /// UnprocessedItems).
    pub throttled_units: f64,
    /// Items written.
    pub items_written: u64,
    /// Requests refused whole with a throttling error.
    pub throttled_requests: u64,
    /// Items in those requests.
    pub throttled_items: u64,
    /// Items that came back in UnprocessedItems.
    pub unprocessed_items: u64,
    /// The table's write ceiling at the start of the second (units/s):
    /// provisioned, its write capacity; on demand, what it takes at once.
    pub write_ceiling: f64,
}

/// What one partition-key value took and was refused.
#[derive(Clone, Debug, Default)]
pub struct KeyUnits {
    pub written: f64,
    pub throttled: f64,
}

/// What the sink saw over a load.
#[derive(Default)]
pub struct Observed {
    pub seconds: Vec<SimSecond>,
    pub keys: HashMap<KeyValue, KeyUnits>,
}

/// Writes into one table of an in-process engine, in virtual time.
pub struct EngineSink<C: Clock> {
    pub engine: Arc<Engine>,
    pub table: Arc<Table>,
    pub clock: C,
    /// The virtual instant the load started at, and the engine's time then.
    pub origin: (Instant, Millis),
    pub round_trip: Duration,
    /// The table's write capacity, when known (provisioned, else warm).
    pub capacity_units_per_s: Option<f64>,
    pub observed: Mutex<Observed>,
}

impl<C: Clock> EngineSink<C> {
    /// The engine's time now.
    fn now(&self) -> Millis {
        let since = self.clock.now().saturating_duration_since(self.origin.0);
        Millis(self.origin.1 .0 + since.as_millis() as u64)
    }

    /// The row of the second `now` falls in, creating the seconds before it.
    fn second<'a>(&self, observed: &'a mut Observed, now: Millis) -> &'a mut SimSecond {
        let second = now.0.saturating_sub(self.origin.1 .0) / 1000;
        while observed.seconds.len() as u64 <= second {
            let ceiling = self.write_ceiling();
            let s = observed.seconds.len() as u64;
            observed.seconds.push(SimSecond { second: s, write_ceiling: ceiling, ..SimSecond::default() });
        }
        let last = observed.seconds.len() - 1;
        &mut observed.seconds[last]
    }

    /// What the table takes at once: its provisioned write units, or on
    /// demand the capacity model's warm throughput.
    fn write_ceiling(&self) -> f64 {
        if let BillingMode::Provisioned { write, .. } = self.table.settings.lock().billing {
            return write as f64;
        }
        self.table.capacity.lock().as_ref().map(|m| m.warm_throughput().1).unwrap_or(0.0)
    }

    fn note_key(&self, observed: &mut Observed, item: &Item, written: f64, throttled: f64) {
        let Some(pk) = item.get(&self.table.key_schema.hash.name).and_then(KeyValue::from_attribute) else { return };
        if observed.keys.len() < MAX_TRACKED_KEYS || observed.keys.contains_key(&pk) {
            let e = observed.keys.entry(pk).or_default();
            e.written += written;
            e.throttled += throttled;
        }
    }
}

/// The positions in `sent` of the items of `back`, a subsequence of it
/// (the engine keeps request order in UnprocessedItems).
fn positions(sent: &[&Item], back: &[Item]) -> Vec<usize> {
    let mut out = Vec::with_capacity(back.len());
    let mut at = 0;
    for b in back {
        while at < sent.len() && sent[at] != b {
            at += 1;
        }
        if at < sent.len() {
            out.push(at);
            at += 1;
        }
    }
    out
}

impl<C: Clock> Sink for EngineSink<C> {
    type Item = Item;

    fn request_name(&self) -> &'static str {
        "BatchWriteItem"
    }

    fn limits(&self) -> Limits {
        Limits {
            max_items: MAX_BATCH_WRITE_ITEMS,
            max_bytes: MAX_BATCH_WRITE_BYTES,
            max_concurrency: usize::MAX,
            capacity_units_per_s: self.capacity_units_per_s,
        }
    }

    async fn write<'a>(&'a self, items: &'a [&'a Item], _token: Option<&'a str>) -> Outcome {
        let half = self.round_trip / 2;
        self.clock.sleep_until(self.clock.now() + half).await;
        let now = self.now();
        let requests = vec![(self.table.name.clone(), items.iter().map(|i| WriteRequest::Put((*i).clone())).collect())];
        let answer = self.engine.batch_write_item(
            BatchWriteInput { requests, return_capacity: ReturnCapacity::Total, return_item_collection_metrics: false },
            now,
        );
        let outcome = {
            let mut observed = self.observed.lock();
            match answer {
                Ok(out) => {
                    let back: Vec<Item> = out
                        .unprocessed
                        .into_iter()
                        .flat_map(|(_, rs)| rs)
                        .map(|r| match r {
                            WriteRequest::Put(i) | WriteRequest::Delete(i) => i,
                        })
                        .collect();
                    let unprocessed = positions(items, &back);
                    // The table's units for its per-second row; the answer
                    // carries what DynamoDB's CapacityUnits says, the
                    // table's and every index's (as `dynaburst load` sees
                    // them from a real endpoint).
                    let units: f64 = out.consumed.iter().map(|c| c.write_units).sum();
                    let answered: f64 = out.consumed.iter().map(|c| c.total_write()).sum();
                    let mut refused = vec![false; items.len()];
                    for &i in &unprocessed {
                        refused[i] = true;
                    }
                    let mut throttled_units = 0.0;
                    for (item, refused) in items.iter().zip(&refused) {
                        let u = write_units(item_size(item));
                        if *refused {
                            throttled_units += u;
                            self.note_key(&mut observed, item, 0.0, u);
                        } else {
                            self.note_key(&mut observed, item, u, 0.0);
                        }
                    }
                    let row = self.second(&mut observed, now);
                    row.consumed_units += units;
                    row.throttled_units += throttled_units;
                    row.items_written += (items.len() - unprocessed.len()) as u64;
                    row.unprocessed_items += unprocessed.len() as u64;
                    Outcome::Written { unprocessed, rejected: Vec::new(), units: answered }
                }
                Err(EngineError::Throttled { provisioned, .. }) => {
                    let mut throttled_units = 0.0;
                    for item in items {
                        let u = write_units(item_size(item));
                        throttled_units += u;
                        self.note_key(&mut observed, item, 0.0, u);
                    }
                    let row = self.second(&mut observed, now);
                    row.throttled_units += throttled_units;
                    row.throttled_requests += 1;
                    row.throttled_items += items.len() as u64;
                    let code =
                        if provisioned { "ProvisionedThroughputExceededException" } else { "ThrottlingException" };
                    Outcome::Throttled { code: code.to_string() }
                }
                Err(e @ EngineError::Validation(_)) => Outcome::Invalid { message: e.message() },
                Err(e @ EngineError::Internal(_)) => Outcome::Transient { message: e.message() },
                Err(e) => Outcome::Fatal { message: e.message() },
            }
        };
        self.clock.sleep_until(self.clock.now() + (self.round_trip - half)).await;
        outcome
    }
}
