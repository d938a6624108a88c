//! A token bucket refilled continuously from `now`, never from a clock.

use dynaburst_model::Millis;

/// Tokens (capacity units) that refill at `rate` per second up to `cap`.
/// `tokens` may go below zero when a debt is recorded (a table spending
/// burst beyond its provisioned total), down to `-cap`.
#[derive(Clone, Debug)]
pub struct Bucket {
    tokens: f64,
    rate: f64,
    cap: f64,
    last: Millis,
}

impl Bucket {
    /// A bucket holding `initial` tokens at `now`.
    pub fn new(rate: f64, cap: f64, initial: f64, now: Millis) -> Bucket {
        Bucket { tokens: initial.min(cap), rate, cap, last: now }
    }

    /// Adds what accrued since the last call.
    pub fn refill(&mut self, now: Millis) {
        if now > self.last {
            let dt = (now.0 - self.last.0) as f64 / 1000.0;
            self.tokens = (self.tokens + self.rate * dt).min(self.cap);
            self.last = now;
        }
    }

    /// Tokens available now (after [`Bucket::refill`]).
    pub fn tokens(&self) -> f64 {
        self.tokens
    }

    /// True when `units` can be taken (a small epsilon absorbs float dust).
    pub fn has(&self, units: f64) -> bool {
        self.tokens + 1e-9 >= units
    }

    /// Takes `units`, possibly into debt (bounded by `-cap`).
    pub fn take(&mut self, units: f64) {
        self.tokens = (self.tokens - units).max(-self.cap);
    }

    /// Changes the refill rate and cap, keeping the tokens (clamped).
    pub fn reshape(&mut self, rate: f64, cap: f64, now: Millis) {
        self.refill(now);
        self.rate = rate;
        self.cap = cap;
        self.tokens = self.tokens.min(cap);
    }

    /// The refill rate per second.
    pub fn rate(&self) -> f64 {
        self.rate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refills_at_rate_up_to_cap() {
        let mut b = Bucket::new(100.0, 300.0, 0.0, Millis(0));
        b.refill(Millis(1500));
        assert!((b.tokens() - 150.0).abs() < 1e-9);
        b.refill(Millis(10_000));
        assert_eq!(b.tokens(), 300.0);
        b.take(1000.0);
        assert_eq!(b.tokens(), -300.0);
        // Time going backwards (a caller's bug) adds nothing.
        b.refill(Millis(5_000));
        assert_eq!(b.tokens(), -300.0);
    }
}
