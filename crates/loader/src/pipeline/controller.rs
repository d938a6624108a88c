//! The concurrency controller: additive increase, multiplicative decrease
//! on throttling (and, with latency control, on queueing), and a launch
//! pace once concurrency is down to one.
//!
//! Pure: time is an argument.

use std::time::Duration;

use tokio::time::Instant;

use super::{
    Concurrency, DECREASE_FACTOR, DECREASE_INTERVAL, LATENCY_FLOOR_WINDOW, LATENCY_SIGNAL_RATIO,
    LATENCY_SIGNAL_SEVERITY, START_CONCURRENCY,
};

/// Below one request in flight, throttling slows the request rate: a gap
/// between launches that doubles on each throttle (up to the cap) and
/// shrinks on success.
pub const PACE_MIN: Duration = Duration::from_millis(5);
pub const PACE_MAX: Duration = Duration::from_millis(250);

pub struct Controller {
    pub(super) limit: f64,
    /// Most requests in flight (`--concurrency auto`).
    max: f64,
    fixed: bool,
    last_decrease: Option<Instant>,
    /// Gap between launches once concurrency is down to one.
    pub pace: Duration,
    /// Latency control: the least time per item in this window and the
    /// last, and when this window started.
    latency: Option<LatencyFloor>,
}

struct LatencyFloor {
    current: Duration,
    previous: Duration,
    since: Instant,
}

impl Controller {
    pub fn new(c: Concurrency, max: usize, latency_control: bool, now: Instant) -> Controller {
        let max = max.max(1) as f64;
        let latency =
            latency_control.then_some(LatencyFloor { current: Duration::MAX, previous: Duration::MAX, since: now });
        match c {
            Concurrency::Auto => Controller {
                limit: START_CONCURRENCY.min(max),
                max,
                fixed: false,
                last_decrease: None,
                pace: Duration::ZERO,
                latency,
            },
            Concurrency::Fixed(n) => Controller {
                limit: n.max(1) as f64,
                max,
                fixed: true,
                last_decrease: None,
                pace: Duration::ZERO,
                latency: None,
            },
        }
    }

    /// A new bound on requests in flight (`--concurrency auto` only): the
    /// current limit comes down to it at once, and grows no further.
    pub fn set_max(&mut self, max: usize) {
        self.max = max.max(1) as f64;
        if !self.fixed {
            self.limit = self.limit.min(self.max);
        }
    }

    pub fn allowed(&self) -> usize {
        (self.limit.floor() as usize).max(1)
    }

    pub fn on_success(&mut self) {
        if self.fixed {
            return;
        }
        if self.pace > Duration::ZERO {
            self.pace = self.pace.mul_f64(DECREASE_FACTOR);
            if self.pace < PACE_MIN {
                self.pace = Duration::ZERO;
            }
            return;
        }
        self.limit = (self.limit + 1.0 / self.limit).min(self.max);
    }

    /// A throttle signal of `severity` from 0 to 1: 1 for a refused
    /// request, the unprocessed fraction for a partial batch (so a batch
    /// that finds one hot partition among several slows the load a little,
    /// not as if the whole table were full).
    pub fn on_throttle(&mut self, now: Instant, severity: f64) {
        if self.fixed || self.last_decrease.is_some_and(|t| now.duration_since(t) < DECREASE_INTERVAL) {
            return;
        }
        if self.limit <= 1.0 && severity >= 0.5 {
            self.pace = (self.pace * 2).clamp(PACE_MIN, PACE_MAX);
        }
        let factor = 1.0 - (1.0 - DECREASE_FACTOR) * severity.clamp(0.0, 1.0);
        self.limit = (self.limit * factor).max(1.0);
        self.last_decrease = Some(now);
    }

    /// A request answered in `latency` for `items` items. With latency
    /// control on, a time per item well above the recent floor means the
    /// endpoint is queueing requests rather than serving more of them: it
    /// counts as a mild throttle. Returns whether it did.
    pub fn on_latency(&mut self, now: Instant, latency: Duration, items: usize) -> bool {
        let Some(floor) = self.latency.as_mut() else { return false };
        let per_item = latency / items.max(1) as u32;
        if now.duration_since(floor.since) >= LATENCY_FLOOR_WINDOW {
            floor.previous = floor.current;
            floor.current = Duration::MAX;
            floor.since = now;
        }
        floor.current = floor.current.min(per_item);
        let least = floor.current.min(floor.previous);
        if per_item.as_secs_f64() > least.as_secs_f64() * LATENCY_SIGNAL_RATIO {
            self.on_throttle(now, LATENCY_SIGNAL_SEVERITY);
            return true;
        }
        false
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests run in tokio's paused time
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn latency_well_above_the_floor_slows_an_auto_load_and_a_steady_one_grows() {
        let t0 = Instant::now();
        let mut c = Controller::new(Concurrency::Auto, 64, true, t0);
        assert_eq!(c.allowed(), 4);
        // 10 ms for 1,000 items sets the floor; answers near it let the
        // limit grow additively.
        for i in 0..20 {
            let now = t0 + ms(200 * i);
            assert!(!c.on_latency(now, ms(10), 1000), "answer {i} is at the floor");
            c.on_success();
        }
        let grown = c.limit;
        assert!(grown > 6.0 && grown < 8.0, "additive increase: {grown}");
        // Three times the floor per item: the endpoint queues, so the limit
        // drops by the latency signal's severity (0.3 of a full decrease).
        let now = t0 + ms(5000);
        assert!(c.on_latency(now, ms(30), 1000));
        let expected = grown * (1.0 - (1.0 - DECREASE_FACTOR) * LATENCY_SIGNAL_SEVERITY);
        assert!((c.limit - expected).abs() < 1e-9, "{} vs {expected}", c.limit);
        // Per item, not per request: a request of twice the items in twice
        // the time is not a signal.
        assert!(!c.on_latency(now + ms(200), ms(20), 2000));
    }

    #[test]
    fn the_floor_follows_a_slower_endpoint_after_two_windows() {
        let t0 = Instant::now();
        let mut c = Controller::new(Concurrency::Auto, 64, true, t0);
        assert!(!c.on_latency(t0, ms(10), 100));
        // The endpoint becomes 5x slower for good: at first that is a
        // signal; two windows later the old floor is forgotten.
        assert!(c.on_latency(t0 + ms(500), ms(50), 100));
        let later = t0 + LATENCY_FLOOR_WINDOW + ms(600);
        c.on_latency(later, ms(50), 100);
        let much_later = later + LATENCY_FLOOR_WINDOW + ms(600);
        assert!(!c.on_latency(much_later, ms(50), 100), "the floor is now 50 ms per 100 items");
    }

    #[test]
    fn latency_is_ignored_without_latency_control_and_with_fixed_concurrency() {
        let t0 = Instant::now();
        let mut off = Controller::new(Concurrency::Auto, 64, false, t0);
        assert!(!off.on_latency(t0, ms(1), 1));
        assert!(!off.on_latency(t0 + ms(500), ms(1000), 1));
        let mut fixed = Controller::new(Concurrency::Fixed(8), 64, true, t0);
        fixed.on_latency(t0, ms(1), 1);
        fixed.on_latency(t0 + ms(500), ms(1000), 1);
        fixed.on_throttle(t0 + ms(600), 1.0);
        assert_eq!(fixed.allowed(), 8);
    }

    #[test]
    fn auto_concurrency_never_exceeds_the_sinks_maximum() {
        let t0 = Instant::now();
        let mut c = Controller::new(Concurrency::Auto, 3, false, t0);
        assert_eq!(c.allowed(), 3, "starts at min(4, max)");
        for _ in 0..1000 {
            c.on_success();
        }
        assert_eq!(c.allowed(), 3);
        c.on_throttle(t0, 1.0);
        assert_eq!(c.allowed(), 2, "3 x 0.7 = 2.1");
    }
}
