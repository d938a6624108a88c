//! Key identities: the hashes per-key ordering and interleaving work on.

use dynaburst_model::KeyValue;

/// The identity of a primary key: partition and sort key values.
pub type KeyId = (KeyValue, Option<KeyValue>);

/// Hashes of a primary key: the partition key's (what interleaving spreads)
/// and the whole key's (what per-key ordering waits on). Computed once per
/// record. Two different keys with equal hashes only make one wait for
/// the other; they can never be in flight together wrongly.
pub fn key_hashes(key: &KeyId) -> (u128, u128) {
    let pk = key.0.partition_hash();
    let full = match &key.1 {
        Some(sk) => pk ^ sk.partition_hash().rotate_left(64) ^ 0x5bd1_e995,
        None => pk,
    };
    (pk, full)
}

/// A hasher for keys that already are good 128-bit hashes.
#[derive(Default, Clone, Copy)]
pub struct U128Hasher(u64);

impl std::hash::Hasher for U128Hasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Not used for u128 keys; fold anything else in.
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }

    fn write_u128(&mut self, v: u128) {
        self.0 = (v as u64) ^ ((v >> 64) as u64);
    }
}

/// A set of key hashes.
pub type HashSet128 = std::collections::HashSet<u128, std::hash::BuildHasherDefault<U128Hasher>>;
/// A map from key hashes.
pub type HashMap128<V> = std::collections::HashMap<u128, V, std::hash::BuildHasherDefault<U128Hasher>>;
