//! How many requests `--concurrency auto` may have in flight: a bound that
//! follows from the target's capacity and the latency its answers take
//! (Little's law: requests in flight = requests per second x seconds each),
//! and from the memory the pipeline may hold, rather than a constant.
//!
//! Pure: answers and seconds are reported to it; it reads no clock.

use std::time::Duration;

use super::MAX_HELD_BYTES;

/// Requests in flight allowed beyond what the capacity needs at the
/// latency seen: latency varies from request to request, and an on-demand
/// table takes up to twice its previous peak.
pub const CAPACITY_HEADROOM: f64 = 2.0;
/// The share of `MAX_HELD_BYTES` that requests in flight may hold (the
/// rest is for the reordering window and retries).
pub const IN_FLIGHT_MEMORY_SHARE: f64 = 0.5;
/// The bound never goes below this (a tiny table at a small latency still
/// gets a few requests in flight; throttling lowers the concurrency itself).
pub const MIN_CONCURRENCY_BOUND: usize = 8;
/// Most requests in flight when the target does not say its capacity (an
/// endpoint without WarmThroughput, `serve --capacity-model off`): more
/// only queue in front of the server. Measured with `bench/loader/run.sh
/// 300000` against `serve --capacity-model off` on 2 cores: with memory
/// alone as the bound the loader kept 154-281 requests in flight and
/// wrote 114,429 items/s (1M minimal lines: 164,234), against 152,911
/// (254,637) at 64.
pub const UNKNOWN_CAPACITY_BOUND: usize = 64;
/// Weight of a new answer in the moving averages.
const SMOOTHING: f64 = 0.05;

/// Moving averages of the answered requests, and the best rate seen.
#[derive(Clone, Debug, Default)]
pub struct Sizing {
    latency_s: f64,
    units: f64,
    bytes: f64,
    answers: u64,
    /// Most write units written in one whole second so far.
    best_rate: f64,
}

impl Sizing {
    /// One answered request: its latency, the units it carried and the bytes
    /// of memory its records hold.
    pub fn answered(&mut self, latency: Duration, units: f64, bytes: usize) {
        let (l, u, b) = (latency.as_secs_f64(), units, bytes as f64);
        if self.answers == 0 {
            (self.latency_s, self.units, self.bytes) = (l, u, b);
        } else {
            self.latency_s += SMOOTHING * (l - self.latency_s);
            self.units += SMOOTHING * (u - self.units);
            self.bytes += SMOOTHING * (b - self.bytes);
        }
        self.answers += 1;
    }

    /// A whole second ended with `units` written in it.
    pub fn second(&mut self, units: f64) {
        self.best_rate = self.best_rate.max(units);
    }

    /// The bound for a target that takes `capacity` write units a second
    /// (None when unknown), no higher than `sink_max`; `sink_max` itself
    /// until an answer has come back, and for a target with a maximum of
    /// its own and no known capacity (MongoDB, which queues rather than
    /// throttles: latency control finds its level).
    pub fn bound(&self, capacity: Option<f64>, sink_max: usize) -> usize {
        if self.answers == 0 || (capacity.is_none() && sink_max != usize::MAX) {
            return sink_max;
        }
        concurrency_bound(capacity, self.best_rate, self.units, self.latency_s, self.bytes).min(sink_max)
    }
}

/// Requests in flight that carry `capacity` write units a second (or the
/// best rate seen, when higher) at `units` per request answered in
/// `latency_s`, with [`CAPACITY_HEADROOM`]; and that hold at most
/// [`IN_FLIGHT_MEMORY_SHARE`] of [`MAX_HELD_BYTES`] at `bytes` per request.
/// The smaller of the two, at least [`MIN_CONCURRENCY_BOUND`].
pub fn concurrency_bound(capacity: Option<f64>, best_rate: f64, units: f64, latency_s: f64, bytes: f64) -> usize {
    let by_memory = (IN_FLIGHT_MEMORY_SHARE * MAX_HELD_BYTES as f64 / bytes.max(1.0)).floor();
    let by_capacity = match capacity {
        Some(c) => (CAPACITY_HEADROOM * c.max(best_rate) * latency_s / units.max(f64::MIN_POSITIVE)).ceil(),
        None => UNKNOWN_CAPACITY_BOUND as f64,
    };
    let bound = by_capacity.min(by_memory);
    if bound.is_finite() {
        (bound as usize).max(MIN_CONCURRENCY_BOUND)
    } else {
        MIN_CONCURRENCY_BOUND
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_follows_capacity_latency_and_memory() {
        // 40,000 WCU, one-unit items by PutItem answered in 10 ms: 400
        // requests in flight carry it; twice that with the headroom.
        assert_eq!(concurrency_bound(Some(40_000.0), 0.0, 1.0, 0.010, 1_000.0), 800);
        // The same by BatchWriteItem of 25: 32.
        assert_eq!(concurrency_bound(Some(40_000.0), 0.0, 25.0, 0.010, 25_000.0), 32);
        // Twice the latency, twice the bound.
        assert_eq!(concurrency_bound(Some(40_000.0), 0.0, 25.0, 0.020, 25_000.0), 64);
        // A rate above the table's stated capacity (an on-demand table that
        // grew) raises it.
        assert_eq!(concurrency_bound(Some(4_000.0), 8_000.0, 1.0, 0.010, 1_000.0), 160);
        // 400 KB items: 32 MiB of requests in flight at most, 83 of them.
        assert_eq!(concurrency_bound(Some(1e9), 0.0, 400.0, 0.010, 400_000.0), 83);
        // Capacity unknown: memory alone.
        assert_eq!(concurrency_bound(None, 0.0, 25.0, 0.010, 1_048_576.0), 32);
        // A small table still gets a few.
        assert_eq!(concurrency_bound(Some(5.0), 0.0, 25.0, 0.002, 25_000.0), MIN_CONCURRENCY_BOUND);
    }

    #[test]
    fn sizing_averages_answers_and_keeps_the_sink_maximum_until_the_first() {
        let mut s = Sizing::default();
        assert_eq!(s.bound(Some(40_000.0), usize::MAX), usize::MAX);
        s.answered(Duration::from_millis(10), 1.0, 1_000);
        assert_eq!(s.bound(Some(40_000.0), usize::MAX), 800);
        assert_eq!(s.bound(Some(40_000.0), 100), 100, "never above the sink's own maximum");
        assert_eq!(s.bound(None, 64), 64, "a sink's own maximum stands when the capacity is unknown");
        assert_eq!(s.bound(None, usize::MAX), UNKNOWN_CAPACITY_BOUND, "else the bound for an unknown capacity");
        for _ in 0..1000 {
            s.answered(Duration::from_millis(20), 1.0, 1_000);
        }
        assert_eq!(s.bound(Some(40_000.0), usize::MAX), 1600, "follows the latency");
        s.second(100_000.0);
        assert_eq!(s.bound(Some(40_000.0), usize::MAX), 4000, "and the best rate seen");
    }
}
