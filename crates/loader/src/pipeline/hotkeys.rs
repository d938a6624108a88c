//! Per-key pacing, and the records held aside: where the table's capacity
//! runs out, when that is one partition key rather than the table, and
//! how runs of one key (sorted input) reach several partitions at once.
//!
//! A throttle whose refused items are mostly one partition key (at least
//! [`HOT_KEY_MIN_REFUSED`] of them over the last second or so, and at
//! least [`HOT_KEY_SHARE`] of everything refused then) is that key's, not
//! the table's: the key gets its own [`Pacer`], started at [`PACE_CUT`] of
//! what the key was written at lately, and the table-wide pacer is not
//! cut. Only that key's records wait for its pacer; they are held aside
//! (in arrival order) while every other record goes at the table's rate.
//! A key's pacer ends once the key has been calm ([`KEY_PACER_IDLE`]
//! without a record sent, or [`KEY_PACER_CALM`] without a throttle) and
//! holds no record.
//!
//! Runs of one partition key are held aside too (the pipeline decides
//! which records), without a pacer of their own: held records go out a
//! record of each key in turn ([`HotKeys::fill`]), so each request spreads
//! over every key held, and sorted input writes the partitions of all the
//! keys it has read ahead at once, at the table's rate. A hot key's
//! records take their turn as a whole request's worth, when its pacer
//! affords them all.
//!
//! Bounded: at most [`MAX_PACED_KEYS`] pacers (a throttle that would need
//! another cuts the table's rate instead) and [`MAX_METERED_KEYS`] keys
//! metered; the records held are records read and not acknowledged, which
//! the pipeline bounds already (by their bytes). Pure: time is an argument.

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

/// One hot key's pacer.
struct HotKey {
    pacer: Pacer,
    last_sent: Instant,
    last_throttle: Instant,
}

/// The per-key pacers, the meters that start them, and the records held
/// aside: a hot key's, which wait for its pacer, and the runs of sorted
/// input, which go out a record of each key in turn so that every request
/// spreads over the keys (hence the partitions) held.
pub struct HotKeys<T> {
    keys: HashMap128<HotKey>,
    /// Records held, by key, in arrival order.
    pool: HashMap128<VecDeque<T>>,
    /// The keys holding records, in the order they take their turns.
    rotation: VecDeque<u128>,
    /// Units written per key, lately.
    written: HashMap128<Meter>,
    /// Items refused per key, lately, and in all.
    refused: HashMap128<Meter>,
    refused_all: Meter,
    /// The rate a key pacer last learned from its refusals: where a key
    /// with no recent writes to learn from starts.
    last_rate: Option<f64>,
    held: usize,
    started: u64,
}

impl<T> HotKeys<T> {
    pub fn new(now: Instant) -> HotKeys<T> {
        HotKeys {
            keys: HashMap128::default(),
            pool: HashMap128::default(),
            rotation: VecDeque::new(),
            written: HashMap128::default(),
            refused: HashMap128::default(),
            refused_all: Meter::new(now),
            last_rate: None,
            held: 0,
            started: 0,
        }
    }

    /// Whether `key` is paced on its own.
    pub fn paced(&self, key: u128) -> bool {
        self.keys.contains_key(&key)
    }

    /// Whether records of `key` are held (a later one joins them).
    pub fn holds(&self, key: u128) -> bool {
        self.pool.contains_key(&key)
    }

    /// How many keys were ever paced on their own.
    pub fn started(&self) -> u64 {
        self.started
    }

    /// Records held aside.
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
        self.keys.insert(key, HotKey { pacer, last_sent: now, last_throttle: now });
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

    /// Holds a record of `key` aside, after the ones it holds already; or,
    /// `first`, before them (one taken from them and put back), giving the
    /// key the next turn when it held none.
    pub fn hold(&mut self, key: u128, item: T, first: bool) {
        let queue = self.pool.entry(key).or_default();
        match (queue.is_empty(), first) {
            (true, true) => self.rotation.push_front(key),
            (true, false) => self.rotation.push_back(key),
            _ => {}
        }
        match first {
            true => queue.push_front(item),
            false => queue.push_back(item),
        }
        self.held += 1;
    }

    /// Adds held records to a request (`items`, of `bytes`) up to
    /// `max_items` and `max_bytes` (`size` gives a record's units and
    /// bytes): a record of each key in turn; a key paced on its own adds as
    /// many as the request has room for, at once, when its pacer affords
    /// them all (so its requests go out full), and is passed over when it
    /// does not. True when the request is full.
    pub fn fill(
        &mut self,
        items: &mut Vec<T>,
        bytes: &mut usize,
        (max_items, max_bytes): (usize, usize),
        now: Instant,
        size: impl Fn(&T) -> (f64, usize),
    ) -> bool {
        // Paced keys that added their records to this request already.
        let mut paced_in: Vec<u128> = Vec::new();
        // Keys passed over since a record was last taken: a whole turn of
        // them means no key can add one.
        let mut passed = 0;
        while items.len() < max_items && passed < self.rotation.len() {
            let Some(key) = self.rotation.pop_front() else { break };
            let Some(queue) = self.pool.get_mut(&key) else { continue };
            let (n, added) = match self.keys.get_mut(&key) {
                Some(hot) => {
                    let (n, units, added) =
                        chunk(queue, max_items - items.len(), max_bytes.saturating_sub(*bytes), &size);
                    if paced_in.contains(&key) || hot.pacer.afford(units, now).is_err() {
                        self.rotation.push_back(key);
                        passed += 1;
                        continue;
                    }
                    paced_in.push(key);
                    (n, added)
                }
                None => (1, queue.front().map_or(0, |r| size(r).1)),
            };
            if n == 0 || (!items.is_empty() && *bytes + added > max_bytes) {
                // The request has no room for the key's next record.
                self.rotation.push_front(key);
                return true;
            }
            *bytes += added;
            let n = n.min(queue.len());
            items.extend(queue.drain(..n));
            self.held -= n;
            if queue.is_empty() {
                self.pool.remove(&key);
            } else {
                self.rotation.push_back(key);
            }
            passed = 0;
        }
        items.len() >= max_items
    }

    /// The soonest a held record may go: now when a key not paced on its
    /// own holds one, else when the first paced key can afford its next
    /// records (as many as fill `items`; `units` gives a record's). None
    /// when nothing is held.
    pub fn next_due(&mut self, now: Instant, items: usize, units: impl Fn(&T) -> f64) -> Option<Instant> {
        let mut paced_holding = 0;
        let mut due: Option<Instant> = None;
        for (key, hot) in self.keys.iter_mut() {
            let Some(queue) = self.pool.get(key) else { continue };
            paced_holding += 1;
            let need = queue.iter().take(items).map(&units).sum();
            let at = match hot.pacer.afford(need, now) {
                Ok(()) => now,
                Err(wait) => now + wait,
            };
            due = Some(due.map_or(at, |d| d.min(at)));
        }
        if self.pool.len() > paced_holding {
            return Some(now);
        }
        due
    }

    /// Ends the pacers of keys that have been calm and hold nothing, and
    /// forgets meters gone quiet.
    pub fn expire(&mut self, now: Instant) {
        let pool = &self.pool;
        self.keys.retain(|key, h| {
            pool.contains_key(key)
                || (now.saturating_duration_since(h.last_sent) < KEY_PACER_IDLE
                    && now.saturating_duration_since(h.last_throttle) < KEY_PACER_CALM)
        });
        for meters in [&mut self.written, &mut self.refused] {
            meters.retain(|_, m| now.saturating_duration_since(m.last) <= METER_SPAN);
        }
    }
}

/// How many of the records of `queue` (oldest first) fit in `items` and
/// `bytes` (at least one when `items` allows), with their units and bytes;
/// `size` gives a record's.
fn chunk<T>(queue: &VecDeque<T>, items: usize, bytes: usize, size: impl Fn(&T) -> (f64, usize)) -> (usize, f64, usize) {
    let (mut n, mut units, mut total) = (0, 0.0, 0);
    for record in queue.iter().take(items) {
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

    /// Fills a request of at most `max_items` from what `hot` holds
    /// (records of one unit and ten bytes).
    fn fill(hot: &mut HotKeys<u32>, now: Instant, max_items: usize) -> Vec<u32> {
        let (mut items, mut bytes) = (Vec::new(), 0);
        hot.fill(&mut items, &mut bytes, (max_items, 1 << 20), now, |_| (1.0, 10));
        assert_eq!(bytes, 10 * items.len());
        items
    }

    #[test]
    fn refusals_of_one_key_pace_that_key_and_only_its_records_wait() {
        let (mut hot, t) = hot_key_one();
        assert!(hot.paced(1) && !hot.paced(2));
        assert_eq!(hot.started(), 1);
        // Its bucket starts empty; other keys go at once.
        assert!(hot.afford(1, 25.0, t).is_err());
        assert_eq!(hot.afford(2, 1e6, t), Ok(()));
        hot.hold(1, 8, false);
        assert!(hot.holds(1) && !hot.holds(2));
        assert_eq!(hot.held(), 1);
        assert!(fill(&mut hot, t, 25).is_empty(), "its pacer cannot afford a unit yet");
        let due = hot.next_due(t, 25, |_| 1.0).unwrap();
        assert!(due > t && due <= t + ms(5), "one unit at about 1,900 a second: {:?}", due - t);
        assert_eq!(fill(&mut hot, due, 25), vec![8]);
        assert_eq!((hot.held(), hot.holds(1), hot.next_due(due, 25, |_| 1.0)), (0, false, None));
    }

    #[test]
    fn held_runs_go_out_a_record_of_each_key_in_turn_and_a_paced_key_only_as_its_pacer_affords() {
        let (mut hot, t) = hot_key_one();
        // Runs of three keys, held in input order: 10, 11, 12 of key 5,
        // then 20, 21, 22 of key 6 and 30, 31, 32 of key 7.
        for (key, first) in [(5, 10), (6, 20), (7, 30)] {
            for i in 0..3 {
                hot.hold(key, first + i, false);
            }
        }
        assert_eq!(hot.next_due(t, 25, |_| 1.0), Some(t), "keys not paced may go now");
        assert_eq!(fill(&mut hot, t, 4), vec![10, 20, 30, 11]);
        // Two put back (their request could not go yet): each goes before
        // its key's later records, in the keys' turns.
        hot.hold(5, 11, true);
        hot.hold(7, 30, true);
        assert_eq!(fill(&mut hot, t, 25), vec![21, 30, 11, 22, 31, 12, 32]);
        assert_eq!(hot.held(), 0);
        // Key 1's pacer (about 1,900 units a second, bucket empty) lets its
        // three records go together once it affords all three, after about
        // 1.6 ms; key 5's go meanwhile.
        for i in 0..3 {
            hot.hold(1, 100 + i, false);
        }
        hot.hold(5, 50, false);
        hot.hold(5, 51, false);
        let soon = t + ms(1);
        assert_eq!(fill(&mut hot, soon, 25), vec![50, 51]);
        let due = hot.next_due(soon, 25, |_| 1.0).unwrap();
        assert!(due > soon && due <= t + ms(2), "{:?}", due - t);
        assert_eq!(fill(&mut hot, due, 25), vec![100, 101, 102]);
    }

    #[test]
    fn idle_pacers_end() {
        let (mut hot, t) = hot_key_one();
        hot.take(1, 1.0, t);
        hot.expire(t + KEY_PACER_IDLE - ms(1));
        assert!(hot.paced(1));
        hot.expire(t + KEY_PACER_IDLE + ms(1));
        assert!(!hot.paced(1));
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
    fn a_pacer_holding_records_does_not_end_and_the_number_of_pacers_is_bounded() {
        let (mut hot, t) = hot_key_one();
        hot.hold(1, 3, false);
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
            hot.hold(key, 0, false);
        }
        assert_eq!(hot.keys.len(), MAX_PACED_KEYS);
        assert_eq!(paced.iter().filter(|p| **p).count(), MAX_PACED_KEYS - 1, "key 1 holds the first pacer");
        assert!(!paced[paced.len() - 1]);
    }
}
