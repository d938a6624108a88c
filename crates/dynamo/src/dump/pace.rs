//! A read budget shared by a dump's segments: a bucket that fills at
//! `rate` units a second up to one second's worth. A page reserves the
//! units it is expected to cost before it is sent and settles the
//! difference once its ConsumedCapacity is known, so over any stretch the
//! dump consumes at most `rate` units a second plus the last page's error.
//! Time is tokio's, so tests run it in paused, virtual time.

use std::sync::Mutex;

use tokio::time::{Duration, Instant};

/// The bucket.
pub struct Pace {
    rate: f64,
    state: Mutex<(f64, Instant)>,
}

impl Pace {
    /// A budget of `rate` units a second, starting empty at `now` (so the
    /// first second holds no burst on top of its budget).
    pub fn new(rate: f64, now: Instant) -> Pace {
        Pace { rate, state: Mutex::new((0.0, now)) }
    }

    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// Tokens now, or how long until `need` are there (reserving them when
    /// they are).
    fn try_take(&self, need: f64, now: Instant) -> Option<Duration> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let (tokens, updated) = *state;
        let tokens = (tokens + now.saturating_duration_since(updated).as_secs_f64() * self.rate).min(self.rate);
        let want = need.min(self.rate);
        if tokens + 1e-9 >= want {
            *state = (tokens - need, now);
            None
        } else {
            *state = (tokens, now);
            Some(Duration::from_secs_f64((want - tokens) / self.rate))
        }
    }

    /// Waits until the bucket holds `estimate` units (or a second's worth,
    /// for a page expected to cost more) and reserves them.
    pub async fn acquire(&self, estimate: f64) {
        // Each wait is at most the time to fill the bucket; the loop ends
        // once the bucket holds what is wanted.
        while let Some(wait) = self.try_take(estimate, Instant::now()) {
            tokio::time::sleep(wait).await;
        }
    }

    /// Settles a page: it was expected to cost `estimate` and cost `actual`.
    pub fn settle(&self, estimate: f64, actual: f64) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.0 += estimate - actual;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn pages_consume_no_more_than_the_rate_in_virtual_time() {
        let start = Instant::now();
        let pace = std::sync::Arc::new(Pace::new(100.0, start));
        // Four segments, each page estimated at 5 units and costing 7:
        // the settling takes the difference back from the bucket.
        let mut tasks = Vec::new();
        let consumed = std::sync::Arc::new(Mutex::new(Vec::<(f64, f64)>::new()));
        for _ in 0..4 {
            let pace = pace.clone();
            let consumed = consumed.clone();
            tasks.push(tokio::spawn(async move {
                for _ in 0..100 {
                    pace.acquire(5.0).await;
                    let at = start.elapsed().as_secs_f64();
                    pace.settle(5.0, 7.0);
                    consumed.lock().unwrap().push((at, 7.0));
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        let consumed = consumed.lock().unwrap();
        let total: f64 = consumed.iter().map(|(_, u)| u).sum();
        assert_eq!(total, 2_800.0);
        let end = consumed.iter().map(|(t, _)| *t).fold(0.0, f64::max);
        // 2,800 units at 100 a second: about 28 s (the last page's 7 units
        // are the only overshoot).
        assert!((27.0..=28.5).contains(&end), "{end}");
        // Every window of 1 s holds at most a second's budget plus one page
        // per segment.
        for w in 0..28 {
            let (from, to) = (f64::from(w), f64::from(w) + 1.0);
            let in_window: f64 = consumed.iter().filter(|(t, _)| *t >= from && *t < to).map(|(_, u)| u).sum();
            assert!(in_window <= 100.0 + 4.0 * 7.0, "second {w}: {in_window}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_page_larger_than_the_budget_waits_for_a_full_bucket() {
        let start = Instant::now();
        let pace = Pace::new(10.0, start);
        pace.acquire(50.0).await;
        assert_eq!(start.elapsed(), Duration::from_secs(1));
        // 50 reserved from 10: the next 1 unit waits until the debt is paid.
        pace.acquire(1.0).await;
        assert_eq!(start.elapsed(), Duration::from_secs_f64(5.1));
    }
}
