//! Learned pacing: the write rate a target takes, found from its own
//! throttling, so that a load runs at the table's capacity instead of
//! above it.
//!
//! A load starts at the capacity the target states (a table's provisioned
//! or warm throughput), or unpaced when it states none. On a throttle, the
//! rate becomes [`PACE_CUT`] of what the target actually wrote lately (the
//! least of the last second's rate, the last 300 ms's and the rate since
//! the throttling began), or of the rate itself when lower (never less than half the
//! rate before): the load falls just below the capacity at once. Only a
//! request sent after the last cut can cut again (those sent before it
//! went at the old rate), so an overshoot costs one cut per round trip
//! while it lasts, and the few requests already in flight.
//!
//! While no throttle comes and the load keeps up with its rate, the rate
//! grows: gently just after a cut, faster the longer the target takes
//! everything ([`PACE_GROWTH_STEP`] a second for each second of calm, up
//! to [`PACE_GROWTH_MAX`]). A table at its capacity sees a throttle every
//! several seconds (the rate probes a little past it, which a table's
//! burst takes for a while); an on-demand table whose ceiling rose is
//! found within seconds. A cut that went [`PACE_DEEP_CUT`] deeper than
//! [`PACE_CUT`] of the rate it lowered or of what the table took (several cuts in a row while
//! a table repaid a burst) recovers at the fastest growth back to
//! [`PACE_CUT`] of the higher of the two, and only then probes gently.
//!
//! Pure: time is an argument.

use std::time::Duration;

use tokio::time::Instant;

/// After a throttle, the rate is this share of what the target wrote over
/// the last second.
pub const PACE_CUT: f64 = 0.95;
/// A cut never takes the rate below this share of the rate before it.
pub const PACE_CUT_FLOOR: f64 = 0.5;
/// Growth a second, for each second since the last cut, up to
/// [`PACE_GROWTH_MAX`] a second.
pub const PACE_GROWTH_STEP: f64 = 0.005;
/// Fastest growth: this share a second.
pub const PACE_GROWTH_MAX: f64 = 0.10;
/// The rate grows only while the load writes at least this share of it
/// (a load held back by something else does not raise its rate).
pub const PACE_GROWTH_BUSY: f64 = 0.8;
/// A cut is deep when it lands more than this factor below [`PACE_CUT`]
/// of the rate refused (or of what the table took); the rate then
/// recovers to that at the fastest growth.
pub const PACE_DEEP_CUT: f64 = 1.05;
/// The bucket holds this much of a second at the rate (or one request,
/// when larger): requests go out evenly, not in bursts.
pub const PACE_BURST: Duration = Duration::from_millis(100);
/// The shortest wait for the rate.
pub const PACE_MIN_WAIT: Duration = Duration::from_millis(1);
/// What was written is measured over this many slots of
/// [`PACE_SLOT`]: the last second.
const SLOTS: usize = 10;
/// The recent part of the ring a cut also looks at (300 ms).
const PACE_RECENT_SLOTS: usize = 3;
/// Cuts less than this apart belong to one throttling episode.
pub const PACE_EPISODE: Duration = Duration::from_secs(1);
/// The rate since an episode began counts once it is this long.
pub const PACE_EPISODE_MIN: Duration = Duration::from_millis(100);
const PACE_SLOT: Duration = Duration::from_millis(100);

/// The learned rate, its token bucket, and the units written over the last
/// second.
#[derive(Clone, Debug)]
pub struct Pacer {
    /// Units per second; None until the first throttle.
    rate: Option<f64>,
    tokens: f64,
    updated: Instant,
    last_cut: Option<Instant>,
    /// The higher of the rate the last cut lowered (the table refused it)
    /// and what the table took then.
    refused_at: Option<f64>,
    /// The throttling episode under way: when its first cut was, and the
    /// units written since.
    episode: Option<(Instant, f64)>,
    last_growth: Instant,
    start: Instant,
    /// Units written per slot, a ring; `slot_start` is when slot `current`
    /// began.
    written: [f64; SLOTS],
    current: usize,
    slot_start: Instant,
    cuts: u64,
}

impl Pacer {
    /// A pacer for a target that takes `capacity` units a second, when it
    /// says so.
    pub fn new(now: Instant, capacity: Option<f64>) -> Pacer {
        let capacity = capacity.filter(|c| c.is_finite() && *c > 0.0);
        Pacer {
            rate: capacity,
            // A full bucket: the first requests go at once.
            tokens: capacity.unwrap_or(0.0) * PACE_BURST.as_secs_f64(),
            updated: now,
            last_cut: None,
            refused_at: None,
            episode: None,
            last_growth: now,
            start: now,
            written: [0.0; SLOTS],
            current: 0,
            slot_start: now,
            cuts: 0,
        }
    }

    /// A pacer at `rate` for a load just refused: its bucket starts empty,
    /// and throttles of requests sent before now do not cut it.
    pub fn refused(now: Instant, rate: f64) -> Pacer {
        let mut pacer = Pacer::new(now, Some(rate));
        pacer.tokens = 0.0;
        // Requests sent before it went at the old rate: they cannot cut.
        pacer.last_cut = Some(now);
        pacer
    }

    /// The learned rate in units per second, once there is one.
    pub fn rate(&self) -> Option<f64> {
        self.rate
    }

    /// How many times the target's throttling lowered the rate.
    pub fn cuts(&self) -> u64 {
        self.cuts
    }

    fn advance(&mut self, now: Instant) {
        let mut steps = 0;
        while now.saturating_duration_since(self.slot_start) >= PACE_SLOT && steps <= SLOTS {
            self.current = (self.current + 1) % SLOTS;
            self.written[self.current] = 0.0;
            self.slot_start += PACE_SLOT;
            steps += 1;
        }
        if now.saturating_duration_since(self.slot_start) >= PACE_SLOT {
            // Idle for more than a second: start the ring over.
            self.written = [0.0; SLOTS];
            self.slot_start = now;
        }
    }

    /// Units written per second over the last `slots` slots (this one so
    /// far and the ones before it; or since the start, when the load is
    /// younger).
    fn delivered_over(&mut self, now: Instant, slots: usize) -> f64 {
        self.advance(now);
        let slots = slots.clamp(1, SLOTS);
        let covered = PACE_SLOT * (slots as u32 - 1) + now.saturating_duration_since(self.slot_start);
        let span = now.saturating_duration_since(self.start).min(covered).as_secs_f64();
        let units: f64 = (0..slots).map(|back| self.written[(self.current + SLOTS - back) % SLOTS]).sum();
        units / span.max(PACE_SLOT.as_secs_f64())
    }

    /// Units written per second over the last second.
    pub fn delivered(&mut self, now: Instant) -> f64 {
        self.delivered_over(now, SLOTS)
    }

    /// What the target takes now, as far as the load can tell: the least of
    /// the last second's rate, the last [`PACE_RECENT_SLOTS`] slots', and
    /// the rate since this throttling episode began (a burst or bank that
    /// took more at first is spent by now).
    fn taking(&mut self, now: Instant) -> f64 {
        let mut taking = self.delivered(now).min(self.delivered_over(now, PACE_RECENT_SLOTS));
        if let Some((began, units)) = self.episode {
            let span = now.saturating_duration_since(began);
            if span >= PACE_EPISODE_MIN {
                taking = taking.min(units / span.as_secs_f64());
            }
        }
        taking
    }

    /// `units` were written now.
    pub fn on_written(&mut self, now: Instant, units: f64) {
        self.advance(now);
        self.written[self.current] += units;
        if let Some((_, since)) = self.episode.as_mut() {
            *since += units;
        }
        self.grow(now);
    }

    /// The target throttled a request sent at `sent` (refused it, or left
    /// some of its items unprocessed).
    pub fn on_throttle(&mut self, now: Instant, sent: Instant) {
        if self.last_cut.is_some_and(|t| sent < t) {
            // Sent at the old rate: this overshoot was answered already.
            return;
        }
        // What the table took: at the first throttle of a new episode this
        // still counts the mean since the last episode began (the rate
        // the table sustained between them), which keeps a table probed at
        // its capacity from being throttled every few seconds.
        let delivered = self.taking(now);
        if self.last_cut.is_none_or(|t| now.saturating_duration_since(t) >= PACE_EPISODE) {
            self.episode = Some((now, 0.0));
        }
        let cut = match self.rate {
            Some(rate) => (delivered.min(rate) * PACE_CUT).max(rate * PACE_CUT_FLOOR),
            None => delivered * PACE_CUT,
        };
        // A load that has written nothing yet has no rate to learn from.
        if cut > 0.0 {
            // The table refused this rate, having taken `delivered`:
            // recovery heads back quickly to just below the higher of the
            // two, and probes past it only gently.
            // Only after a deep cut: at capacity, a cut lands just below
            // both, and growth stays gentle.
            self.refused_at = self.rate.map(|r| r.max(delivered)).filter(|r| r * PACE_CUT > cut * PACE_DEEP_CUT);
            self.rate = Some(cut);
            self.tokens = self.tokens.min(cut * PACE_BURST.as_secs_f64());
            self.cuts += 1;
        }
        self.last_cut = Some(now);
        self.last_growth = now;
    }

    /// Once a second, while the load keeps up with its rate, the rate grows.
    fn grow(&mut self, now: Instant) {
        let Some(rate) = self.rate else { return };
        if now.saturating_duration_since(self.last_growth) < Duration::from_secs(1) {
            return;
        }
        self.last_growth = now;
        if self.delivered(now) < PACE_GROWTH_BUSY * rate {
            return;
        }
        let calm = self.last_cut.map_or(1.0, |t| now.saturating_duration_since(t).as_secs_f64());
        let gentle = rate * (1.0 + (PACE_GROWTH_STEP * calm.max(1.0)).min(PACE_GROWTH_MAX));
        // Far below the rate last refused (a cut that went deep while the
        // table was still paying for a burst): back towards it at the
        // fastest growth, up to [`PACE_CUT`] of it.
        let recover = self
            .refused_at
            .map(|r| r * PACE_CUT)
            .filter(|target| *target > gentle)
            .map_or(gentle, |target| (rate * (1.0 + PACE_GROWTH_MAX)).min(target).max(gentle));
        self.rate = Some(recover);
    }

    /// How long a request of `units` must wait for the rate; None when it
    /// may go now (and its units are taken).
    pub fn wait(&mut self, units: f64, now: Instant) -> Option<Duration> {
        match self.afford(units, now) {
            Ok(()) => {
                self.take(units);
                None
            }
            Err(wait) => Some(wait),
        }
    }

    /// Whether a request of `units` may go now, taking nothing; when not,
    /// how long until it may. Unpaced, it always may.
    pub fn afford(&mut self, units: f64, now: Instant) -> Result<(), Duration> {
        let Some(rate) = self.rate else { return Ok(()) };
        let elapsed = now.saturating_duration_since(self.updated).as_secs_f64();
        let room = (rate * PACE_BURST.as_secs_f64()).max(units);
        self.tokens = (self.tokens + elapsed * rate).min(room);
        self.updated = now;
        if self.tokens + 1e-9 >= units {
            Ok(())
        } else {
            // At least a millisecond: a wait that rounds to nothing would
            // not let (virtual) time move.
            Err(Duration::from_secs_f64((units - self.tokens) / rate).max(PACE_MIN_WAIT))
        }
    }

    /// A request of `units` goes now (after [`Pacer::afford`] said it may).
    pub fn take(&mut self, units: f64) {
        if self.rate.is_some() {
            self.tokens -= units;
        }
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests run in tokio's paused time
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// A pacer that wrote 1,000 units a second for a second and was then
    /// throttled.
    fn cut_at_1000() -> (Pacer, Instant) {
        let t0 = Instant::now();
        let mut p = Pacer::new(t0, None);
        for i in 0..10 {
            p.on_written(t0 + ms(100 * i), 100.0);
        }
        let t = t0 + ms(1000);
        p.on_throttle(t, t);
        (p, t)
    }

    #[test]
    fn unpaced_until_the_first_throttle_then_just_below_what_was_written() {
        let t0 = Instant::now();
        let mut p = Pacer::new(t0, None);
        assert_eq!(p.wait(1e6, t0), None, "no rate yet");
        // 4,000 units a second for two seconds, then a throttle.
        for i in 0..80 {
            p.on_written(t0 + ms(25 * i), 100.0);
        }
        let t = t0 + ms(2000);
        p.on_throttle(t, t - ms(15));
        let rate = p.rate().unwrap();
        assert!((rate - 0.95 * 3600.0 / 0.9).abs() < 1.0, "0.95 x the last 0.9 s's 36 x 100 units: {rate}");
        // Throttles of requests sent before the cut change nothing.
        p.on_throttle(t + ms(10), t - ms(5));
        assert_eq!((p.rate(), p.cuts()), (Some(rate), 1));
        // One sent after it cuts again.
        p.on_throttle(t + ms(40), t + ms(20));
        let again = p.rate().unwrap();
        assert_eq!(p.cuts(), 2);
        assert!((0.5 * rate..=0.95 * rate + 1e-9).contains(&again), "{rate} -> {again}");
    }

    #[test]
    fn a_cut_follows_what_the_target_takes_lately_not_a_burst_it_took_at_first() {
        // A bank took 3,000 units in the first 100 ms; then the table took
        // 1,000 a second.
        let t0 = Instant::now();
        let mut p = Pacer::new(t0, None);
        p.on_written(t0 + ms(50), 3000.0);
        for i in 1..10 {
            p.on_written(t0 + ms(100 * i + 50), 100.0);
        }
        let t = t0 + ms(950);
        assert!(p.delivered(t) > 3500.0, "the last second's rate holds the burst");
        p.on_throttle(t, t);
        let rate = p.rate().unwrap();
        assert!((900.0..1250.0).contains(&rate), "0.95 x the last 300 ms's (about 1,000-1,200/s): {rate}");
    }

    #[test]
    fn a_cut_never_more_than_halves_the_rate() {
        let (mut p, t) = cut_at_1000();
        let first = p.rate().unwrap();
        // Nothing written for two seconds, then a throttle: half, not zero.
        let later = t + ms(2000);
        p.on_throttle(later, later);
        assert!((p.rate().unwrap() - first * PACE_CUT_FLOOR).abs() < 1e-9);
    }

    /// Keeps up with the rate for `seconds`, in steps of 100 ms; the rate
    /// at each whole second.
    fn keep_up(p: &mut Pacer, mut t: Instant, seconds: u64) -> Vec<f64> {
        let mut rates = Vec::new();
        for i in 0..seconds * 10 {
            t += ms(100);
            let r = p.rate().unwrap();
            p.on_written(t, r / 10.0);
            if i % 10 == 9 {
                rates.push(p.rate().unwrap());
            }
        }
        rates
    }

    #[test]
    fn growth_is_gentle_after_a_cut_and_speeds_up_with_calm() {
        let (mut p, t) = cut_at_1000();
        let rates = keep_up(&mut p, t, 40);
        // Back to 1,000 within a few seconds, gently.
        assert!(rates[0] < 960.0, "{rates:?}");
        let back = rates.iter().position(|r| *r >= 1000.0).unwrap();
        assert!((2..=6).contains(&back), "{back}: {rates:?}");
        // Then faster and faster: a ceiling that doubled is found within
        // 20 s of calm.
        let doubled = rates.iter().position(|r| *r >= 2000.0).unwrap();
        assert!((10..=20).contains(&doubled), "{doubled}: {rates:?}");
        assert!(rates[39] / rates[38] < 1.0 + PACE_GROWTH_MAX + 1e-9, "never more than 10% a second");
    }

    #[test]
    fn a_deep_cut_recovers_quickly_to_just_below_the_rate_refused_then_probes_gently() {
        // Refused at 1,600 a second, but the table took only 500 in the
        // 300 ms before (it was repaying a burst): cut to half, 800.
        let t0 = Instant::now();
        let mut p = Pacer::new(t0, Some(1600.0));
        for i in 0..10 {
            p.on_written(t0 + ms(100 * i), if i < 7 { 160.0 } else { 50.0 });
        }
        let t = t0 + ms(1000);
        p.on_throttle(t, t);
        assert!((p.rate().unwrap() - 800.0).abs() < 1e-6, "{:?}", p.rate());
        let rates = keep_up(&mut p, t, 12);
        // 10% a second up to 0.95 x 1,600 = 1,520, within 8 s.
        assert!((rates[0] - 880.0).abs() < 1.0, "{rates:?}");
        let back = rates.iter().position(|r| *r >= 1520.0 - 1e-6).unwrap();
        assert!((5..=8).contains(&back), "{back}: {rates:?}");
        // Then gently: 0.5% a second per second of calm.
        let after = rates[back + 1] / rates[back];
        assert!(after < 1.0 + PACE_GROWTH_STEP * (back as f64 + 3.0), "{rates:?}");
    }

    #[test]
    fn a_load_held_back_elsewhere_does_not_raise_its_rate() {
        let (mut p, mut t) = cut_at_1000();
        let rate = p.rate().unwrap();
        for _ in 0..100 {
            t += ms(100);
            p.on_written(t, rate / 100.0);
        }
        assert_eq!(p.rate(), Some(rate), "writing a tenth of the rate");
    }

    #[test]
    fn the_bucket_spaces_requests_at_the_rate() {
        let (mut p, t) = cut_at_1000();
        let rate = p.rate().unwrap();
        let t = t + ms(1000);
        // The bucket holds a tenth of a second: three requests of 25 units
        // at 950 units/s, then a wait of about 25 / 950 s.
        let mut sent = 0;
        while sent < 100 && p.wait(25.0, t).is_none() {
            sent += 1;
        }
        assert_eq!(sent, (rate * 0.1 / 25.0).floor() as usize);
        let wait = p.wait(25.0, t).unwrap();
        assert!(wait > ms(1) && wait <= Duration::from_secs_f64(25.0 / rate) + ms(1), "{wait:?}");
    }

    #[test]
    fn a_stated_capacity_paces_from_the_start_and_is_probed_past() {
        let t0 = Instant::now();
        let mut p = Pacer::new(t0, Some(1000.0));
        assert_eq!(p.rate(), Some(1000.0));
        let rates = keep_up(&mut p, t0, 5);
        assert!(rates[0] > 1000.0 && rates[4] > rates[3], "{rates:?}");
        assert_eq!(Pacer::new(t0, Some(f64::INFINITY)).rate(), None, "no finite capacity, no pace");
    }

    #[test]
    fn within_an_episode_a_cut_follows_what_was_written_since_it_began() {
        // 1,600 a second for a second, a throttle, then 1,000 a second for
        // 200 ms and a throttle of a request sent after the cut: the rate
        // drops to 0.95 x 1,000 at once, not 0.95 x 0.95 x 1,600.
        let t0 = Instant::now();
        let mut p = Pacer::new(t0, None);
        for i in 0..40 {
            p.on_written(t0 + ms(25 * i), 40.0);
        }
        let t = t0 + ms(1000);
        p.on_throttle(t, t);
        for i in 1..=8 {
            p.on_written(t + ms(25 * i), 25.0);
        }
        let later = t + ms(200);
        p.on_throttle(later, later - ms(15));
        assert!((p.rate().unwrap() - 950.0).abs() < 1e-6, "{:?}", p.rate());
    }
}
