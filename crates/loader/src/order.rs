//! The order records are sent in, within a bounded window.
//!
//! - `as-is`: input order.
//! - `interleave`: round-robin across partition-key values, so sorted input
//!   (all of one key, then the next) spreads over partitions (seed 004).
//! - `shuffle`: a seeded random pick from the window.
//!
//! Whatever the order, records with the same primary key leave in input
//! order, so the last record for a key is the last written.

use std::collections::{HashMap, VecDeque};

use dynaburst_model::KeyValue;

use crate::convert::KeyId;

/// How records are reordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    AsIs,
    Interleave,
    Shuffle,
}

/// A bounded reordering window over values of type `T`, each with its key.
pub struct Orderer<T> {
    order: Order,
    window: usize,
    len: usize,
    fifo: VecDeque<T>,
    /// Interleave: queues per partition-key value, visited round-robin.
    by_partition: HashMap<KeyValue, VecDeque<T>>,
    rotation: VecDeque<KeyValue>,
    /// Shuffle: chains of records per primary key (same-key order kept).
    chains: Vec<(KeyId, VecDeque<T>)>,
    chain_index: HashMap<KeyId, usize>,
    rng: u64,
}

impl<T> Orderer<T> {
    /// A window of at most `window` records; `seed` drives shuffle.
    pub fn new(order: Order, window: usize, seed: u64) -> Orderer<T> {
        Orderer {
            order,
            window: window.max(1),
            len: 0,
            fifo: VecDeque::new(),
            by_partition: HashMap::new(),
            rotation: VecDeque::new(),
            chains: Vec::new(),
            chain_index: HashMap::new(),
            rng: seed.max(1),
        }
    }

    /// True when nothing is held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// True when the window is full: take one out before pushing another.
    pub fn is_full(&self) -> bool {
        self.len >= self.window
    }

    /// Adds a record.
    pub fn push(&mut self, key: &KeyId, value: T) {
        self.len += 1;
        match self.order {
            Order::AsIs => self.fifo.push_back(value),
            Order::Interleave => {
                let q = self.by_partition.entry(key.0.clone()).or_insert_with(|| {
                    self.rotation.push_back(key.0.clone());
                    VecDeque::new()
                });
                q.push_back(value);
            }
            Order::Shuffle => match self.chain_index.get(key) {
                Some(&i) => self.chains[i].1.push_back(value),
                None => {
                    self.chain_index.insert(key.clone(), self.chains.len());
                    self.chains.push((key.clone(), VecDeque::from([value])));
                }
            },
        }
    }

    /// Takes the next record to send.
    pub fn pop(&mut self) -> Option<T> {
        let out = match self.order {
            Order::AsIs => self.fifo.pop_front(),
            Order::Interleave => {
                let pk = self.rotation.pop_front()?;
                let q = self.by_partition.get_mut(&pk)?;
                let v = q.pop_front();
                if q.is_empty() {
                    self.by_partition.remove(&pk);
                } else {
                    self.rotation.push_back(pk);
                }
                v
            }
            Order::Shuffle => {
                if self.chains.is_empty() {
                    return None;
                }
                self.rng ^= self.rng << 13;
                self.rng ^= self.rng >> 7;
                self.rng ^= self.rng << 17;
                let i = (self.rng % self.chains.len() as u64) as usize;
                let v = self.chains[i].1.pop_front();
                if self.chains[i].1.is_empty() {
                    let (key, _) = self.chains.swap_remove(i);
                    self.chain_index.remove(&key);
                    if let Some((moved, _)) = self.chains.get(i) {
                        self.chain_index.insert(moved.clone(), i);
                    }
                }
                v
            }
        };
        if out.is_some() {
            self.len -= 1;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(pk: &str, sk: i64) -> KeyId {
        (KeyValue::S(pk.into()), Some(KeyValue::N(dynaburst_model::Number::from_i64(sk))))
    }

    #[test]
    fn interleave_round_robins_partition_keys_and_keeps_their_order() {
        let mut o = Orderer::new(Order::Interleave, 100, 1);
        for (pk, sk) in [("a", 1), ("a", 2), ("a", 3), ("b", 1), ("b", 2), ("c", 1)] {
            o.push(&key(pk, sk), format!("{pk}{sk}"));
        }
        let out: Vec<String> = std::iter::from_fn(|| o.pop()).collect();
        assert_eq!(out, ["a1", "b1", "c1", "a2", "b2", "a3"]);
    }

    #[test]
    fn shuffle_mixes_but_keeps_same_key_order() {
        let mut o = Orderer::new(Order::Shuffle, 1000, 42);
        for i in 0..200 {
            o.push(&key(&format!("k{}", i % 50), 0), i);
        }
        let out: Vec<i32> = std::iter::from_fn(|| o.pop()).collect();
        assert_eq!(out.len(), 200);
        assert_ne!(out, (0..200).collect::<Vec<_>>(), "shuffled");
        for k in 0..50 {
            let same: Vec<i32> = out.iter().copied().filter(|i| i % 50 == k).collect();
            let mut sorted = same.clone();
            sorted.sort();
            assert_eq!(same, sorted, "records of one key stay in order");
        }
        assert!(o.is_empty());
    }
}
