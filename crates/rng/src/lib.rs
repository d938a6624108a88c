//! The project's one seeded random generator and its one retry backoff.
//!
//! Every random choice in dynaburst (datasets, shuffle order, retry jitter,
//! modelled service times, request ids) comes from a [`Rng`] made from a
//! seed that the run prints or takes as `--seed`. splitmix64 is hand-written
//! on purpose: its output is part of the datasets `dynaburst gen` writes, so
//! it must never change with a crate upgrade.
//!
//! Architecture invariant: pure. No clock, no I/O, no dependencies.

use std::time::Duration;

/// splitmix64: small, fast, statistically sound for everything here, and
/// the same sequence on every platform.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator whose sequence is a function of `seed` alone.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`0` when `n` is 0). The modulo bias is below
    /// 2^-40 for every `n` used here.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// Uniform in `[0, 1)`, with 53 bits of precision.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Shuffles `items` in place (Fisher-Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }

    /// An independent generator for a sub-task (a connection, a worker),
    /// so that the sub-task's draws do not depend on scheduling.
    pub fn fork(&mut self) -> Rng {
        Rng(self.next_u64())
    }
}

/// Capped exponential backoff with equal jitter: the delay before retry
/// number `attempt` (0 for the first retry) is half of
/// `min(cap, base * 2^attempt)` fixed plus up to as much again at random,
/// so retries of many clients spread out but never wait less than half the
/// step (the AWS Architecture Blog's "equal jitter").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    /// The first step.
    pub base: Duration,
    /// The longest step.
    pub cap: Duration,
}

impl Backoff {
    /// The delay before retry number `attempt`, drawing jitter from `rng`.
    pub fn delay(&self, attempt: u32, rng: &mut Rng) -> Duration {
        let base = self.base.as_millis().max(1) as u64;
        let step = base.saturating_mul(1u64 << attempt.min(32)).min(self.cap.as_millis() as u64).max(1);
        Duration::from_millis(step / 2 + rng.below(step / 2 + 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_matches_the_reference_sequence() {
        // Vigna's splitmix64.c with seed 1234567.
        let mut r = Rng::new(1_234_567);
        assert_eq!(r.next_u64(), 6_457_827_717_110_365_317);
        assert_eq!(r.next_u64(), 3_203_168_211_198_807_973);
        assert_eq!(r.next_u64(), 9_817_491_932_198_370_423);
    }

    #[test]
    fn below_and_unit_stay_in_range() {
        let mut r = Rng::new(7);
        for _ in 0..10_000 {
            assert!(r.below(10) < 10);
            let u = r.unit();
            assert!((0.0..1.0).contains(&u));
        }
        assert_eq!(r.below(0), 0);
    }

    #[test]
    fn shuffle_is_a_permutation_and_depends_on_the_seed() {
        let mut a: Vec<u32> = (0..100).collect();
        let mut b = a.clone();
        Rng::new(1).shuffle(&mut a);
        Rng::new(2).shuffle(&mut b);
        assert_ne!(a, b);
        a.sort_unstable();
        assert_eq!(a, (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn backoff_doubles_until_the_cap_with_equal_jitter() {
        let b = Backoff { base: Duration::from_millis(100), cap: Duration::from_millis(1_000) };
        let mut r = Rng::new(3);
        for (attempt, step) in [(0, 100u64), (1, 200), (2, 400), (3, 800), (4, 1_000), (40, 1_000)] {
            for _ in 0..200 {
                let d = b.delay(attempt, &mut r).as_millis() as u64;
                assert!(d >= step / 2 && d <= step, "attempt {attempt}: {d} ms outside [{}, {step}]", step / 2);
            }
        }
    }
}
