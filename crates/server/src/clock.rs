//! The server's clock seam: the wall clock in production, a manual clock in
//! tests, so that request handling (the engine's `now` and the latency
//! model's deadlines) runs in virtual time.

use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use dynaburst_engine::Millis;

/// A point in time: the time since the Unix epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Instant(pub Duration);

impl Instant {
    /// The engine's time: whole milliseconds since the epoch.
    pub fn millis(self) -> Millis {
        Millis(self.0.as_millis().min(u64::MAX as u128) as u64)
    }
}

impl std::ops::Add<Duration> for Instant {
    type Output = Instant;

    fn add(self, d: Duration) -> Instant {
        Instant(self.0.saturating_add(d))
    }
}

/// A future the clock completes at a deadline.
pub type Sleep<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// Where the server's time comes from. The server reads it once per request.
pub trait Clock: Send + Sync {
    /// The current time.
    fn now(&self) -> Instant;

    /// Completes at `deadline` (at once if it has passed).
    fn sleep_until(&self, deadline: Instant) -> Sleep<'_>;
}

/// The wall clock, read through the monotonic clock: the wall time at
/// creation plus the monotonic time since, so that time never runs
/// backwards under the engine's token buckets when the system clock is set.
pub struct SystemClock {
    epoch: Duration,
    start: tokio::time::Instant,
}

impl SystemClock {
    /// A clock starting at the current wall time.
    #[allow(clippy::disallowed_methods)] // the seam itself
    pub fn new() -> SystemClock {
        let epoch = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        SystemClock { epoch, start: tokio::time::Instant::now() }
    }
}

impl Default for SystemClock {
    fn default() -> SystemClock {
        SystemClock::new()
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant(self.epoch + self.start.elapsed())
    }

    fn sleep_until(&self, deadline: Instant) -> Sleep<'_> {
        let at = self.start + deadline.0.saturating_sub(self.epoch);
        Box::pin(tokio::time::sleep_until(at))
    }
}

/// Virtual time: stands still until advanced; sleeping moves it to the
/// deadline at once, so a test sees how long the server waited without
/// waiting.
pub struct ManualClock {
    now: Mutex<Instant>,
}

impl ManualClock {
    /// A clock standing at `start`.
    pub fn new(start: Instant) -> ManualClock {
        ManualClock { now: Mutex::new(start) }
    }

    /// Moves the clock forward by `d`.
    pub fn advance(&self, d: Duration) {
        let mut now = self.now.lock().unwrap_or_else(|e| e.into_inner());
        *now = *now + d;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        *self.now.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn sleep_until(&self, deadline: Instant) -> Sleep<'_> {
        let mut now = self.now.lock().unwrap_or_else(|e| e.into_inner());
        *now = (*now).max(deadline);
        Box::pin(std::future::ready(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_told_or_slept_past() {
        let clock = ManualClock::new(Instant(Duration::from_millis(1_500)));
        assert_eq!(clock.now().millis(), Millis(1_500));
        clock.advance(Duration::from_micros(2_500));
        assert_eq!(clock.now(), Instant(Duration::from_micros(1_502_500)));
        drop(clock.sleep_until(Instant(Duration::from_millis(1_000))));
        assert_eq!(clock.now().millis(), Millis(1_502), "a past deadline does not move time back");
        drop(clock.sleep_until(Instant(Duration::from_millis(2_000))));
        assert_eq!(clock.now().millis(), Millis(2_000));
    }
}
