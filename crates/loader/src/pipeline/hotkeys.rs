//! Per-key pacing: where the table's capacity runs out, when that is one
//! partition key rather than the table.
//!
//! A throttle whose refused items are mostly one partition key (at least
//! [`HOT_KEY_MIN_REFUSED`] of them over the last second or so, and at
//! least [`HOT_KEY_SHARE`] of everything refused then) is that key's, not
//! the table's: the key gets its own [`Pacer`], started at [`PACE_CUT`] of
//! what the key was written at lately, and the table-wide pacer is not
//! cut. Only that key's records wait for its pacer; they are held aside
//! (in arrival order) while every other record goes at the table's rate,
//! so sorted input moving on to the next key writes it at once, into its
//! partition's fresh burst. A key's pacer ends once the key has been calm
//! ([`KEY_PACER_IDLE`] without a record sent, or [`KEY_PACER_CALM`]
//! without a throttle) and holds no record.
//!
//! Bounded: at most [`MAX_PACED_KEYS`] pacers (a throttle that would need
//! another cuts the table's rate instead) and [`MAX_METERED_KEYS`] keys
//! metered; the records held are records read and not acknowledged, which
//! the pipeline bounds already. Pure: time is an argument.

use std::collections::VecDeque;
use std::time::Duration;

use tokio::time::Instant;

use super::pacer::{Pacer, PACE_CUT};
use crate::keys::HashMap128;

/// Most partition keys paced on their own at once.
pub const MAX_PACED_KEYS: usize = 64;
/// Most partition keys whose recent writes and refusals are metered.
pub const MAX_METERED_KEYS: usize = 4096;
/// A key is hot once this many of its items were refused lately...
pub const HOT_KEY_MIN_REFUSED: f64 = 5.0;
/// ...and they are at least this share of all the items refused lately.
pub const HOT_KEY_SHARE: f64 = 0.5;
/// A key's pacer ends when none of its records was sent for this long...
pub const KEY_PACER_IDLE: Duration = Duration::from_secs(1);
/// ...or none was throttled for this long (its rate is not what limits
/// it any more).
pub const KEY_PACER_CALM: Duration = Duration::from_secs(10);
/// Meters measure over about this span: a meter idle for longer starts
/// over, and one older than twice this is scaled back to it.
pub const METER_SPAN: Duration = Duration::from_secs(1);
/// The shortest span a meter's rate is measured over.
const METER_MIN_SPAN: Duration = Duration::from_millis(100);

/// Units (or items) recorded over the last second or two.
#[derive(Clone, Copy, Debug)]
struct Meter {
    first: Instant,
    last: Instant,
    amount: f64,
}

impl Meter {
    fn new(now: Instant) -> Meter {
        Meter { first: now, last: now, amount: 0.0 }
    }

    /// Forgets what is older than the span, as far as a sum can.
    fn age(&mut self, now: Instant) {
        if now.saturating_duration_since(self.last) > METER_SPAN {
            *self = Meter::new(now);
            return;
        }
        let age = now.saturating_duration_since(self.first);
        if age > 2 * METER_SPAN {
            // Keep the last span's share, as if it came evenly.
            self.amount *= METER_SPAN.as_secs_f64() / age.as_secs_f64();
            self.first = now - METER_SPAN;
        }
    }

    fn add(&mut self, now: Instant, amount: f64) {
        self.age(now);
        self.amount += amount;
        self.last = now;
    }

    fn amount(&mut self, now: Instant) -> f64 {
        self.age(now);
        self.amount
    }

    /// The amount and the seconds it came over.
    fn sum(&mut self, now: Instant) -> (f64, f64) {
        let amount = self.amount(now);
        (amount, now.saturating_duration_since(self.first).as_secs_f64())
    }
}

/// One hot key: its pacer and the records waiting for it.
struct HotKey<T> {
    pacer: Pacer,
    last_sent: Instant,
    last_throttle: Instant,
    held: VecDeque<T>,
    /// What the key wrote before it was first refused, and over how many
    /// seconds: with the rate it learns, the burst it had.
    before: Option<(f64, f64)>,
}

/// The per-key pacers, the meters that start them, and the records held.
pub struct HotKeys<T> {
    keys: HashMap128<HotKey<T>>,
    /// Units written per key, lately.
    written: HashMap128<Meter>,
    /// Items refused per key, lately, and in all.
    refused: HashMap128<Meter>,
    refused_all: Meter,
    /// The rate a key pacer last learned from its refusals: where a key
    /// with no recent writes to learn from starts.
    last_rate: Option<f64>,
    /// What the last key that turned hot wrote beyond its rate before it
    /// was refused (its partition's burst), times [`PACE_CUT`].
    last_burst: f64,
    held: usize,
    started: u64,
}

impl<T> HotKeys<T> {
    pub fn new(now: Instant) -> HotKeys<T> {
        HotKeys {
            keys: HashMap128::default(),
            written: HashMap128::default(),
            refused: HashMap128::default(),
            refused_all: Meter::new(now),
            last_rate: None,
            last_burst: 0.0,
            held: 0,
            started: 0,
        }
    }

    /// Whether `key` is paced on its own.
    pub fn paced(&self, key: u128) -> bool {
        self.keys.contains_key(&key)
    }

    /// How many keys were ever paced on their own.
    pub fn started(&self) -> u64 {
        self.started
    }

    /// Records held for their key's pacer.
    pub fn held(&self) -> usize {
        self.held
    }

    /// `units` of `key` were written now.
    pub fn on_written(&mut self, now: Instant, key: u128, units: f64) {
        if let Some(hot) = self.keys.get_mut(&key) {
            hot.pacer.on_written(now, units);
        }
        meter(&mut self.written, key, now, units);
    }

    /// The target refused (or left unprocessed) the items of `keys`, in a
    /// request sent at `sent`. True when the throttle is a hot key's (its
    /// pacer took it); false when it is the table's.
    pub fn on_refused(&mut self, now: Instant, sent: Instant, keys: impl IntoIterator<Item = u128>) -> bool {
        // The key most refused in this answer (requests hold 25 items at
        // most: a short list).
        let mut counts: Vec<(u128, f64)> = Vec::new();
        for key in keys {
            match counts.iter_mut().find(|(k, _)| *k == key) {
                Some((_, n)) => *n += 1.0,
                None => counts.push((key, 1.0)),
            }
        }
        let total: f64 = counts.iter().map(|(_, n)| n).sum();
        self.refused_all.add(now, total);
        for (key, n) in &counts {
            meter(&mut self.refused, *key, now, *n);
        }
        let Some((key, _)) = counts.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1)) else { return false };
        // Refusals spread over several keys are the table's (or several
        // partitions'), even when those keys are paced.
        let refused = self.refused.get_mut(&key).map_or(0.0, |m| m.amount(now));
        if refused < HOT_KEY_MIN_REFUSED || refused < HOT_KEY_SHARE * self.refused_all.amount(now) {
            return false;
        }
        if let Some(hot) = self.keys.get_mut(&key) {
            hot.pacer.on_throttle(now, sent);
            hot.last_throttle = now;
            if let Some(rate) = hot.pacer.rate().filter(|_| hot.pacer.cuts() > 0) {
                self.last_rate = Some(rate);
                if let Some((amount, span)) = hot.before {
                    self.last_burst = PACE_CUT * (amount - rate * span).max(0.0);
                }
            }
            return true;
        }
        if self.keys.len() >= MAX_PACED_KEYS {
            self.expire(now);
            if self.keys.len() >= MAX_PACED_KEYS {
                return false;
            }
        }
        // Just below what the key was written at lately; a key refused
        // before it wrote anything starts where the last hot key was.
        let before = self.written.get_mut(&key).map(|m| m.sum(now)).filter(|(amount, _)| *amount > 0.0);
        let lately = before.map_or(0.0, |(amount, span)| amount / span.max(METER_MIN_SPAN.as_secs_f64()));
        let Some(rate) = Some(lately * PACE_CUT).filter(|r| *r > 0.0).or(self.last_rate) else { return false };
        let pacer = Pacer::refused(now, rate);
        self.started += 1;
        self.keys.insert(key, HotKey { pacer, last_sent: now, last_throttle: now, held: VecDeque::new(), before });
        true
    }

    /// Paces `key`, a key of a run of records (sorted input), from the
    /// start once another key turned hot: at the rate that key learned,
    /// with the burst it found, so the run takes its partition's burst and
    /// then its rate without being refused. False when no key turned hot
    /// yet, or when no pacer is free.
    pub fn pace_run(&mut self, key: u128, now: Instant) -> bool {
        if self.keys.contains_key(&key) {
            return true;
        }
        // The best rate a key paced now learned (keys that share a
        // partition learn a share of it each), else the last one learned.
        let learned = self.keys.values().filter(|h| h.pacer.cuts() > 0).filter_map(|h| h.pacer.rate());
        let Some(rate) = learned.max_by(f64::total_cmp).or(self.last_rate) else { return false };
        if self.keys.len() >= MAX_PACED_KEYS {
            return false;
        }
        let pacer = Pacer::with_bank(now, rate, self.last_burst);
        self.keys
            .insert(key, HotKey { pacer, last_sent: now, last_throttle: now, held: VecDeque::new(), before: None });
        true
    }

    /// Whether `units` of `key` may go now (nothing is taken); when not,
    /// how long until they may. Keys not paced on their own always may.
    pub fn afford(&mut self, key: u128, units: f64, now: Instant) -> Result<(), Duration> {
        match self.keys.get_mut(&key) {
            Some(hot) => hot.pacer.afford(units, now),
            None => Ok(()),
        }
    }

    /// `units` of `key` go now.
    pub fn take(&mut self, key: u128, units: f64, now: Instant) {
        if let Some(hot) = self.keys.get_mut(&key) {
            hot.pacer.take(units);
            hot.last_sent = now;
        }
    }

    /// Holds a record of a paced key until its pacer lets it go; gives it
    /// back when the key is not paced.
    pub fn hold(&mut self, key: u128, item: T) -> Option<T> {
        let Some(hot) = self.keys.get_mut(&key) else { return Some(item) };
        hot.held.push_back(item);
        self.held += 1;
        None
    }

    /// The keys holding records, the one holding the oldest first (by
    /// `age`, lowest oldest).
    pub fn holding(&self, age: impl Fn(&T) -> u64) -> Vec<u128> {
        let mut keys: Vec<(u64, u128)> =
            self.keys.iter().filter_map(|(k, h)| h.held.front().map(|front| (age(front), *k))).collect();
        keys.sort_unstable();
        keys.into_iter().map(|(_, k)| k).collect()
    }

    /// How many of the records `key` holds (oldest first) fit in `items`
    /// and `bytes` (at least one when `items` allows), with their units
    /// and bytes; `size` gives a record's.
    pub fn chunk(
        &self,
        key: u128,
        items: usize,
        bytes: usize,
        size: impl Fn(&T) -> (f64, usize),
    ) -> (usize, f64, usize) {
        let Some(hot) = self.keys.get(&key) else { return (0, 0.0, 0) };
        let (mut n, mut units, mut total) = (0, 0.0, 0);
        for record in hot.held.iter().take(items) {
            let (u, b) = size(record);
            if n > 0 && total + b > bytes {
                break;
            }
            n += 1;
            units += u;
            total += b;
        }
        (n, units, total)
    }

    /// Takes the first record `key` holds.
    pub fn pop(&mut self, key: u128) -> Option<T> {
        let item = self.keys.get_mut(&key).and_then(|h| h.held.pop_front());
        if item.is_some() {
            self.held -= 1;
        }
        item
    }

    /// The soonest a key's held records may go (as many as fill
    /// `items`), given each record's units.
    pub fn next_due(&mut self, now: Instant, items: usize, units: impl Fn(&T) -> f64) -> Option<Instant> {
        self.keys
            .values_mut()
            .filter(|h| !h.held.is_empty())
            .map(|h| {
                let need = h.held.iter().take(items).map(&units).sum();
                match h.pacer.afford(need, now) {
                    Ok(()) => now,
                    Err(wait) => now + wait,
                }
            })
            .min()
    }

    /// Ends the pacers of keys that have been calm and hold nothing, and
    /// forgets meters gone quiet.
    pub fn expire(&mut self, now: Instant) {
        self.keys.retain(|_, h| {
            !h.held.is_empty()
                || (now.saturating_duration_since(h.last_sent) < KEY_PACER_IDLE
                    && now.saturating_duration_since(h.last_throttle) < KEY_PACER_CALM)
        });
        for meters in [&mut self.written, &mut self.refused] {
            meters.retain(|_, m| now.saturating_duration_since(m.last) <= METER_SPAN);
        }
    }
}

/// Adds to `key`'s meter, when there is room for it.
fn meter(meters: &mut HashMap128<Meter>, key: u128, now: Instant, amount: f64) {
    if let Some(m) = meters.get_mut(&key) {
        m.add(now, amount);
    } else if meters.len() < MAX_METERED_KEYS {
        let mut m = Meter::new(now);
        m.add(now, amount);
        meters.insert(key, m);
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests run in tokio's paused time
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// Key 1 written at 2,000 units a second for half a second, then 25 of
    /// its items refused.
    fn hot_key_one() -> (HotKeys<u32>, Instant) {
        let t0 = Instant::now();
        let mut hot = HotKeys::new(t0);
        for i in 0..50 {
            hot.on_written(t0 + ms(10 * i), 1, 20.0);
        }
        let t = t0 + ms(500);
        assert!(hot.on_refused(t, t - ms(10), [1; 25]), "all refused items are key 1's");
        (hot, t)
    }

    #[test]
    fn refusals_of_one_key_pace_that_key_and_only_its_records_wait() {
        let (mut hot, t) = hot_key_one();
        assert!(hot.paced(1) && !hot.paced(2));
        assert_eq!(hot.started(), 1);
        // Its bucket starts empty; other keys go at once.
        assert!(hot.afford(1, 25.0, t).is_err());
        assert_eq!(hot.afford(2, 1e6, t), Ok(()));
        assert_eq!(hot.hold(2, 7), Some(7), "a key not paced holds nothing");
        assert_eq!(hot.hold(1, 8), None);
        assert_eq!((hot.held(), hot.holding(|r| u64::from(*r))), (1, vec![1]));
        let due = hot.next_due(t, 25, |_| 1.0).unwrap();
        assert!(due > t && due <= t + ms(5), "one unit at about 1,900 a second: {:?}", due - t);
        assert_eq!(hot.chunk(1, 25, 1 << 20, |_| (1.0, 10)), (1, 1.0, 10));
        assert_eq!(hot.pop(1), Some(8));
        assert_eq!(hot.held(), 0);
    }

    #[test]
    fn refusals_spread_over_keys_are_the_tables() {
        let t0 = Instant::now();
        let mut hot: HotKeys<u32> = HotKeys::new(t0);
        for i in 0..20 {
            let t = t0 + ms(50 * i);
            // Six items of six keys refused, again and again: no key has
            // half of the refusals.
            assert!(!hot.on_refused(t, t, (0..6).map(|k| u128::from(k + 6 * (i % 3)))));
        }
        assert_eq!(hot.started(), 0);
        // A few refusals of one key are not enough either.
        let mut fresh: HotKeys<u32> = HotKeys::new(t0);
        assert!(!fresh.on_refused(t0, t0, [9; 4]));
    }

    #[test]
    fn a_key_of_a_run_starts_at_the_rate_a_hot_key_learned_and_idle_pacers_end() {
        let (mut hot, t) = hot_key_one();
        assert!(!hot.pace_run(5, t), "no key learned a rate from its own refusals yet");
        // Key 1 at the rate it learns: about 1,000 a second; then refused.
        let mut now = t;
        for _ in 0..10 {
            now += ms(100);
            hot.on_written(now, 1, 100.0);
        }
        assert!(hot.on_refused(now, now, [1; 25]));
        assert!(hot.pace_run(5, now) && hot.paced(5));
        // Key 1 sends nothing more: a second later its pacer ends, and so
        // does key 5's, which holds nothing.
        hot.take(5, 1.0, now);
        hot.expire(now + KEY_PACER_IDLE + ms(1));
        assert!(!hot.paced(1) && !hot.paced(5));
    }

    #[test]
    fn a_pacer_holding_records_does_not_end_and_the_number_of_pacers_is_bounded() {
        let (mut hot, t) = hot_key_one();
        assert_eq!(hot.hold(1, 3), None);
        hot.expire(t + KEY_PACER_CALM * 2);
        assert!(hot.paced(1), "it holds a record");
        // Keys turning hot one after another, each holding a record (so
        // none can end): pacers stop at the bound, and a throttle that
        // would need another is the table's.
        let mut now = t;
        let mut paced = Vec::new();
        for key in 100..100 + MAX_PACED_KEYS as u128 * 2 {
            now += METER_SPAN + ms(100);
            for i in 0..5 {
                hot.on_written(now + ms(i), key, 10.0);
            }
            paced.push(hot.on_refused(now + ms(5), now, [key; 25]));
            let _ = hot.hold(key, 0);
        }
        assert_eq!(hot.keys.len(), MAX_PACED_KEYS);
        assert_eq!(paced.iter().filter(|p| **p).count(), MAX_PACED_KEYS - 1, "key 1 holds the first pacer");
        assert!(!paced[paced.len() - 1]);
    }
}
