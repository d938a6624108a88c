//! Which keys a table's file may hold: a Bloom filter of every item key
//! written to a table since the file held none of its items, so that a
//! write of a new key (a bulk load's every write) skips reading the file
//! for the item it replaces, and a read of a missing key answers at once.
//!
//! It grows as keys come, by segments of twice the previous one's capacity
//! (a scalable Bloom filter); a key is looked for in every segment. It
//! never forgets a key (a deleted key stays: a later read of it goes to the
//! file and finds nothing), and it may say "maybe" for a key never written
//! (about 0.42% per full segment), never "no" for one written.
//! The storage bounds all tables' filters together
//! ([`crate::KEY_FILTER_BYTES`]); a table whose filter would go over is
//! left without one, and its reads go to the file.

use std::hash::{DefaultHasher, Hasher};

/// Keys the first segment holds; each later one holds twice as many.
pub const FIRST_SEGMENT_KEYS: usize = 64 * 1024;

/// Bits per key of a full segment.
const BITS_PER_KEY: usize = 12;
/// Bits of one block: a key's bits all lie in one block of a cache line's
/// size (a blocked Bloom filter), so that a look-up or an insert reads one
/// line of memory a segment, not one a hash. Each of its eight 64-bit
/// words takes one bit of each key (eight hashes a key, the best count for
/// 12 bits a key: 12 ln 2, rounded down), which gives about 0.31% false
/// positives a full segment were keys spread evenly over the blocks, and
/// about 0.42% for the uneven spread of real hashes (computed in the tests'
/// `FALSE_POSITIVES`; measured there: 0.419%), against 0.31% for eight
/// bits anywhere in the segment, which cost eight lines of memory an insert
/// and about two a look-up.
const BLOCK_BITS: usize = 512;
const WORDS: usize = BLOCK_BITS / 64;
/// Odd multipliers that spread a 32-bit hash into one bit position a word
/// (the constants of Parquet's split-block Bloom filter).
const SALTS: [u32; WORDS] =
    [0x47b6_137b, 0x4497_4d91, 0x8824_ad5b, 0xa2b7_289d, 0x7054_95c7, 0x2df1_424b, 0x9efc_4947, 0x5c6b_fb31];

/// One cache line of bits.
#[derive(Debug, Clone, Copy, Default)]
#[repr(align(64))]
struct Block([u64; WORDS]);

#[derive(Debug, Default)]
pub struct KeyFilter {
    segments: Vec<Segment>,
}

#[derive(Debug)]
struct Segment {
    blocks: Vec<Block>,
    capacity: usize,
    keys: usize,
}

/// The blocks of a segment of `capacity` keys.
fn blocks_for(capacity: usize) -> usize {
    (capacity * BITS_PER_KEY).div_ceil(BLOCK_BITS)
}

/// The bit each word of a block holds for a key whose second hash is `h2`.
fn masks(h2: u64) -> [u64; WORDS] {
    let x = h2 as u32;
    SALTS.map(|salt| 1u64 << (x.wrapping_mul(salt) >> 26))
}

impl Segment {
    fn new(capacity: usize) -> Segment {
        Segment { blocks: vec![Block::default(); blocks_for(capacity)], capacity, keys: 0 }
    }

    /// The block of a key whose first hash is `h1` (mapped into
    /// `[0, blocks)` by a multiply).
    fn block(&self, h1: u64) -> usize {
        ((u128::from(h1) * self.blocks.len() as u128) >> 64) as usize
    }

    fn insert(&mut self, (h1, h2): (u64, u64)) {
        let b = self.block(h1);
        if let Some(block) = self.blocks.get_mut(b) {
            for (word, mask) in block.0.iter_mut().zip(masks(h2)) {
                *word |= mask;
            }
        }
        self.keys += 1;
    }

    fn may_hold(&self, (h1, h2): (u64, u64)) -> bool {
        self.blocks.get(self.block(h1)).is_some_and(|block| block.0.iter().zip(masks(h2)).all(|(w, m)| w & m != 0))
    }

    fn bytes(&self) -> usize {
        self.blocks.len() * std::mem::size_of::<Block>()
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
        self.next_segment().map_or(0, |capacity| blocks_for(capacity) * std::mem::size_of::<Block>())
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
        // Every segment looked at, without stopping at the first that may
        // hold the key: a new key (a bulk load's every key) is looked for in
        // all of them anyway, and with no branch on one segment's answer
        // before the next one's read, the processor reads their blocks
        // from memory at the same time.
        self.segments.iter().fold(false, |held, s| held | s.may_hold(h))
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

    /// A full segment's false positives: with keys spread over its blocks
    /// as Poisson(512 / 12) and each key setting one bit of each 64-bit
    /// word, the sum over k of P(k) (1 - (63/64)^k)^8 is about 0.42%;
    /// with a little room.
    const FALSE_POSITIVES: f64 = 0.005;

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

    #[test]
    fn a_full_segment_has_the_false_positives_of_its_blocked_design() {
        let mut f = KeyFilter::default();
        let n = FIRST_SEGMENT_KEYS as u64;
        (0..n).for_each(|i| f.insert(&key(i)));
        assert_eq!(f.segments.len(), 1, "exactly one full segment");
        assert!((0..n).all(|i| f.may_hold(&key(i))), "a key inserted is never missed");
        let probes = 200_000u64;
        let rate = (n..n + probes).filter(|i| f.may_hold(&key(*i))).count() as f64 / probes as f64;
        // About 0.42% (see FALSE_POSITIVES); a filter whose bits did not
        // spread over its blocks and words would be far above, one that
        // set fewer bits a key or had more bits would be far below.
        assert!(rate < FALSE_POSITIVES, "false-positive rate {rate}");
        assert!(rate > 0.003, "false-positive rate {rate}: fewer than the design gives");
    }

    #[test]
    fn a_key_sets_one_bit_in_each_word_of_one_block() {
        let mut f = KeyFilter::default();
        f.insert(&key(7));
        let s = &f.segments[0];
        let touched: Vec<&Block> = s.blocks.iter().filter(|b| b.0.iter().any(|w| *w != 0)).collect();
        assert_eq!(touched.len(), 1, "one block");
        assert!(touched[0].0.iter().all(|w| w.count_ones() == 1), "one bit a word: {:x?}", touched[0].0);
        assert_eq!(std::mem::align_of::<Block>(), 64, "a block is one cache line");
    }
}
