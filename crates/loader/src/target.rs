//! What the pipeline needs from a write target: the `Sink` trait, the
//! prepared record it is handed, and the `Outcome` it answers with.
//!
//! A sink turns a batch of prepared items into one request and says what
//! became of each item. Everything else (reading, ordering, per-key
//! blocking, retries, backoff, concurrency, checkpoints, rejects, the
//! report) is the pipeline's and is the same for every target.

use std::future::Future;

/// What a request came to.
#[derive(Debug)]
pub enum Outcome {
    /// The request was answered. Items at `unprocessed` were not written
    /// and are sent again (DynamoDB's UnprocessedItems, or a per-item
    /// transient error); items at `rejected` were refused for what they
    /// hold and go to the rejects file; every other item is written.
    Written { unprocessed: Vec<usize>, rejected: Vec<(usize, String)>, units: f64 },
    /// Nothing written: the endpoint is throttling.
    Throttled { code: String },
    /// The whole request was refused as invalid: split it to find the bad
    /// record(s).
    Invalid { message: String },
    /// A transaction cancelled for per-item reasons (index, code, message);
    /// items not listed were fine and are sent again.
    Cancelled { reasons: Vec<(usize, String, String)> },
    /// A network error, a timeout or a server-side failure: try again.
    Transient { message: String },
    /// Going on cannot help (missing table, bad credentials).
    Fatal { message: String },
}

impl Outcome {
    /// Every item written.
    pub fn all_written(units: f64) -> Outcome {
        Outcome::Written { unprocessed: Vec::new(), rejected: Vec::new(), units }
    }
}

/// A record checked and converted for one sink, on the reader thread.
#[derive(Debug)]
pub struct SinkItem<I> {
    /// Hash of the value that places the record (DynamoDB: the partition
    /// key): what `--order interleave` spreads.
    pub partition: u128,
    /// Hash of the record's whole identity (its primary key or `_id`): a
    /// key is never in flight twice, nor twice in one request.
    pub slot: u128,
    /// Capacity units the write will consume (0 where there are none).
    pub units: f64,
    /// Bytes the item takes in a request (for request-size limits).
    pub bytes: usize,
    /// Bytes of memory the item takes in the sink's form while the load
    /// holds it (its heap allocations: encoded text, key, document),
    /// counted with the record's text against the bound on memory held
    /// (and on the requests in flight, which hold their records).
    pub held: usize,
    /// The item in the sink's own form.
    pub item: I,
}

/// Request limits of a sink.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Most items in one request.
    pub max_items: usize,
    /// Most bytes of items in one request (a request always takes at least
    /// one item).
    pub max_bytes: usize,
    /// Most requests in flight at once with `--concurrency auto`, whatever
    /// the target's capacity (a target's own limit; `usize::MAX` for none:
    /// the pipeline then bounds it by capacity and memory).
    pub max_concurrency: usize,
    /// Write units per second the target takes, when known (a table's
    /// provisioned or warm throughput): with the latency of its answers,
    /// it sets how many requests `--concurrency auto` may have in flight.
    pub capacity_units_per_s: Option<f64>,
}

/// A write target.
pub trait Sink: Send + Sync + 'static {
    /// One prepared record.
    type Item: Send + Sync + 'static;

    /// The request type, for latency percentiles (`BatchWriteItem`,
    /// `insert`, ...).
    fn request_name(&self) -> &'static str;

    /// Request limits.
    fn limits(&self) -> Limits;

    /// True when a request must be re-sent exactly as it was, with the same
    /// idempotency token (transactions): its items are never merged with
    /// others on a retry.
    fn idempotent_requests(&self) -> bool {
        false
    }

    /// Sends one request holding `items` (in this order; indexes in the
    /// outcome refer to it). `token` is set when `idempotent_requests`.
    fn write<'a>(
        &'a self,
        items: &'a [&'a Self::Item],
        token: Option<&'a str>,
    ) -> impl Future<Output = Outcome> + Send + 'a;
}
