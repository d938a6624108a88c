//! A token bucket refilled continuously from `now`, never from a clock.

use dynaburst_model::Millis;

/// The deepest debt a bucket records, in units: more than the largest
/// single request can cost (100 transaction actions of 400 KB at double
/// cost: 80,000 write units), so a request is always charged in full.
pub const MAX_DEBT: f64 = 100_000.0;

/// Tokens (capacity units) that refill at `rate` per second up to `cap`.
/// `tokens` go below zero when a request is charged more than the bucket
/// holds (A39: admitted while it has tokens, charged its actual units);
/// the debt is repaid by the refill before the bucket has tokens again.
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

    /// Takes `units`, possibly into debt (bounded by [`MAX_DEBT`]).
    pub fn take(&mut self, units: f64) {
        self.tokens = (self.tokens - units).max(-MAX_DEBT.max(self.cap));
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
        assert_eq!(b.tokens(), -700.0);
        // Time going backwards (a caller's bug) adds nothing.
        b.refill(Millis(5_000));
        assert_eq!(b.tokens(), -700.0);
        // The debt is repaid at the refill rate: 7 s to get back to zero.
        b.refill(Millis(17_000));
        assert!(b.tokens().abs() < 1e-9, "{}", b.tokens());
        b.take(1e9);
        assert_eq!(b.tokens(), -MAX_DEBT);
    }
}
