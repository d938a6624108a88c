//! Which keys a table's file may hold: a Bloom filter of every item key
//! written to a table since the file held none of its items, so that a
//! write of a new key (a bulk load's every write) skips reading the file
//! for the item it replaces, and a read of a missing key answers at once.
//!
//! It grows as keys come, by segments of twice the previous one's capacity
//! (a scalable Bloom filter); a key is looked for in every segment. It
//! never forgets a key (a deleted key stays: a later read of it goes to the
//! file and finds nothing), and it may say "maybe" for a key never written
//! (about 0.3% per full segment), never "no" for one written.
//! The storage bounds all tables' filters together
//! ([`crate::KEY_FILTER_BYTES`]); a table whose filter would go over is
//! left without one, and its reads go to the file.

use std::hash::{DefaultHasher, Hasher};

/// Keys the first segment holds; each later one holds twice as many.
pub const FIRST_SEGMENT_KEYS: usize = 64 * 1024;

/// Bits per key of a full segment, and hashes per key: the best count of
/// hashes for 12 bits a key (12 ln 2, rounded down) gives a false-positive
/// rate of about 0.3% per full segment.
const BITS_PER_KEY: usize = 12;
const HASHES: u64 = 8;

#[derive(Debug, Default)]
pub struct KeyFilter {
    segments: Vec<Segment>,
}

#[derive(Debug)]
struct Segment {
    bits: Vec<u64>,
    capacity: usize,
    keys: usize,
}

impl Segment {
    fn new(capacity: usize) -> Segment {
        let words = (capacity * BITS_PER_KEY).div_ceil(64);
        Segment { bits: vec![0; words], capacity, keys: 0 }
    }

    fn positions(&self, (h1, h2): (u64, u64)) -> impl Iterator<Item = usize> + '_ {
        let m = (self.bits.len() * 64) as u128;
        // Double hashing, each position mapped into [0, m) by a multiply.
        (0..HASHES).map(move |i| ((u128::from(h1.wrapping_add(i.wrapping_mul(h2))) * m) >> 64) as usize)
    }

    fn insert(&mut self, h: (u64, u64)) {
        let positions: Vec<usize> = self.positions(h).collect();
        for p in positions {
            if let Some(word) = self.bits.get_mut(p / 64) {
                *word |= 1 << (p % 64);
            }
        }
        self.keys += 1;
    }

    fn may_hold(&self, h: (u64, u64)) -> bool {
        self.positions(h).all(|p| self.bits.get(p / 64).is_some_and(|w| w & (1 << (p % 64)) != 0))
    }

    fn bytes(&self) -> usize {
        self.bits.len() * 8
    }
}

/// Two 64-bit hashes of a stored key (what [`KeyFilter::insert_hashed`] and
/// [`KeyFilter::may_hold_hashed`] take) (SipHash with fixed keys, then a
/// splitmix step for the second): the same on every run.
pub fn hashes(key: &[u8]) -> (u64, u64) {
    let mut h = DefaultHasher::new();
    h.write(key);
    let h1 = h.finish();
    let mut z = h1.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (h1, (z ^ (z >> 31)) | 1)
}

impl KeyFilter {
    /// The capacity of the segment the next insert starts, if it starts
    /// one (the last is full, or there is none).
    fn next_segment(&self) -> Option<usize> {
        match self.segments.last() {
            None => Some(FIRST_SEGMENT_KEYS),
            Some(s) if s.keys >= s.capacity => Some(s.capacity.saturating_mul(2)),
            Some(_) => None,
        }
    }

    /// The bytes the next insert allocates (a new segment), usually 0: asked
    /// before inserting, so that a bound is kept before memory is taken.
    pub fn growth_bytes(&self) -> usize {
        self.next_segment().map_or(0, |capacity| (capacity * BITS_PER_KEY).div_ceil(64) * 8)
    }

    /// Adds a stored key ([`KeyFilter::growth_bytes`] says what it
    /// allocates).
    #[cfg(test)]
    pub fn insert(&mut self, key: &[u8]) {
        self.insert_hashed(hashes(key));
    }

    /// [`KeyFilter::insert`] of a key whose [`hashes`] are `h`.
    pub fn insert_hashed(&mut self, h: (u64, u64)) {
        if let Some(capacity) = self.next_segment() {
            self.segments.push(Segment::new(capacity));
        }
        if let Some(s) = self.segments.last_mut() {
            s.insert(h);
        }
    }

    /// False when `key` was never inserted.
    pub fn may_hold(&self, key: &[u8]) -> bool {
        self.may_hold_hashed(hashes(key))
    }

    /// [`KeyFilter::may_hold`] of a key whose [`hashes`] are `h`.
    pub fn may_hold_hashed(&self, h: (u64, u64)) -> bool {
        self.segments.iter().any(|s| s.may_hold(h))
    }

    /// Bytes its segments take.
    pub fn bytes(&self) -> usize {
        self.segments.iter().map(Segment::bytes).sum()
    }

    /// Keys inserted.
    #[cfg(test)]
    pub fn keys(&self) -> usize {
        self.segments.iter().map(|s| s.keys).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (1 - e^(-8/12))^8, about 0.31%, with a little room.
    const FALSE_POSITIVES: f64 = 0.0035;

    fn key(n: u64) -> Vec<u8> {
        let mut k = vec![0u8; 16];
        k.extend_from_slice(format!("person#{n:09}").as_bytes());
        k
    }

    #[test]
    fn every_inserted_key_may_be_held_and_few_others_are() {
        let mut f = KeyFilter::default();
        assert!(!f.may_hold(&key(1)), "an empty filter holds nothing");
        let n = FIRST_SEGMENT_KEYS as u64 * 3 + 17; // three segments, the third part full
        let mut allocated = 0;
        for i in 0..n {
            let (before, growth) = (f.bytes(), f.growth_bytes());
            f.insert(&key(i));
            assert_eq!(f.bytes(), before + growth, "growth_bytes says what insert allocates");
            allocated += growth;
        }
        assert_eq!(f.keys(), n as usize);
        assert_eq!(f.segments.len(), 3);
        assert_eq!(f.segments.iter().map(|s| s.capacity).collect::<Vec<_>>(), [65_536, 131_072, 262_144]);
        assert_eq!(allocated, f.bytes());
        assert_eq!(f.bytes(), (65_536 + 131_072 + 262_144) * BITS_PER_KEY / 8);
        assert!((0..n).all(|i| f.may_hold(&key(i))), "a key inserted is never missed");
        let probes = 200_000u64;
        let false_positives = (n..n + probes).filter(|i| f.may_hold(&key(*i))).count();
        // Two full segments and one a quarter full: under three full
        // segments' worth of false positives, and more than none.
        let rate = false_positives as f64 / probes as f64;
        assert!(rate < 3.0 * FALSE_POSITIVES, "false-positive rate {rate}");
        assert!(false_positives > 0, "a Bloom filter of this size has some false positives");
    }
}
