//! Per-second metrics of a table and its partitions.

use std::collections::VecDeque;

use dynaburst_model::Millis;

/// Completed seconds kept per table (one hour).
pub const MAX_METRIC_SECONDS: usize = 3600;
/// Split events kept per table.
pub const MAX_SPLIT_EVENTS: usize = 1024;
/// Throttling events kept per table (refusals of one reason on one
/// partition within one second are counted in one event).
pub const MAX_THROTTLE_EVENTS: usize = 64;

/// One partition's consumption in one second.
#[derive(Clone, Debug, PartialEq)]
pub struct PartitionSecond {
    /// Start of the partition's hash range.
    pub start: u128,
    pub read_units: f64,
    pub write_units: f64,
    pub throttled_items: u64,
}

/// A table's consumption in one second.
#[derive(Clone, Debug, PartialEq)]
pub struct SecondMetrics {
    /// Which second (`now / 1000`).
    pub second: u64,
    pub read_units: f64,
    pub write_units: f64,
    /// Requests answered with a throttling error.
    pub throttled_requests: u64,
    /// Items refused (in a throttled request, or left unprocessed).
    pub throttled_read_items: u64,
    pub throttled_write_items: u64,
    pub partition_count: usize,
    /// Partitions with any traffic or throttling this second.
    pub partitions: Vec<PartitionSecond>,
}

impl SecondMetrics {
    pub(crate) fn new(second: u64, partition_count: usize) -> SecondMetrics {
        SecondMetrics {
            second,
            read_units: 0.0,
            write_units: 0.0,
            throttled_requests: 0,
            throttled_read_items: 0,
            throttled_write_items: 0,
            partition_count,
            partitions: Vec::new(),
        }
    }
}

/// Why a partition split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitReason {
    /// Sustained traffic above the heat threshold.
    Heat,
    /// The partition outgrew its size limit.
    Size,
    /// Provisioned throughput raised beyond what the partitions hold, or an
    /// on-demand table reached a new peak.
    Throughput,
}

impl SplitReason {
    /// Lower-case name for metrics.
    pub fn name(self) -> &'static str {
        match self {
            SplitReason::Heat => "heat",
            SplitReason::Size => "size",
            SplitReason::Throughput => "throughput",
        }
    }
}

/// One split.
#[derive(Clone, Debug, PartialEq)]
pub struct SplitEvent {
    pub at: Millis,
    pub reason: SplitReason,
    /// Start of the parent's range and the split point.
    pub start: u128,
    pub split_at: u128,
    pub partitions_after: usize,
}

/// Refusals of one reason on one partition within one second.
#[derive(Clone, Debug, PartialEq)]
pub struct ThrottleEvent {
    /// When the first of them happened.
    pub at: Millis,
    /// DynamoDB's reason, e.g. "TableWriteKeyRangeThroughputExceeded".
    pub reason: &'static str,
    /// Start of the hash range of the (first) partition that refused.
    pub partition_start: u128,
    /// Items refused.
    pub items: u64,
}

/// What a table's model has recorded.
#[derive(Clone, Debug, Default)]
pub struct Metrics {
    /// Completed seconds, oldest first (at most [`MAX_METRIC_SECONDS`]).
    pub seconds: VecDeque<SecondMetrics>,
    /// Splits, oldest first (at most [`MAX_SPLIT_EVENTS`]).
    pub splits: VecDeque<SplitEvent>,
    /// The last throttling events, oldest first (at most
    /// [`MAX_THROTTLE_EVENTS`]).
    pub throttles: VecDeque<ThrottleEvent>,
    /// Totals since the table was created.
    pub total_read_units: f64,
    pub total_write_units: f64,
    pub total_throttled_requests: u64,
    pub total_throttled_items: u64,
}

impl Metrics {
    pub(crate) fn push_second(&mut self, s: SecondMetrics) {
        if self.seconds.len() == MAX_METRIC_SECONDS {
            self.seconds.pop_front();
        }
        self.seconds.push_back(s);
    }

    /// Counts `items` refused for `reason` on the partition starting at
    /// `partition_start`: into the last event when it is the same reason
    /// and partition within the same second, else as a new event.
    pub(crate) fn note_throttle(&mut self, at: Millis, reason: &'static str, partition_start: u128, items: u64) {
        if let Some(last) = self.throttles.back_mut() {
            if last.reason == reason && last.partition_start == partition_start && last.at.0 / 1000 == at.0 / 1000 {
                last.items += items;
                return;
            }
        }
        if self.throttles.len() == MAX_THROTTLE_EVENTS {
            self.throttles.pop_front();
        }
        self.throttles.push_back(ThrottleEvent { at, reason, partition_start, items });
    }

    pub(crate) fn push_split(&mut self, e: SplitEvent) {
        if self.splits.len() == MAX_SPLIT_EVENTS {
            self.splits.pop_front();
        }
        self.splits.push_back(e);
    }
}
