//! The order records are sent in, within a bounded window.
//!
//! - `as-is`: input order.
//! - `interleave`: round-robin across partition-key values, so sorted input
//!   (all of one key, then the next) spreads over partitions (seed 004).
//! - `shuffle`: a seeded random pick from the window.
//!
//! Whatever the order, records with the same primary key leave in input
//! order, so the last record for a key is the last written.

use std::collections::VecDeque;

use dynaburst_rng::Rng;

use crate::keys::{HashMap128, HashSet128};

/// How records are reordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    AsIs,
    Interleave,
    Shuffle,
}

/// A bounded reordering window over values of type `T`, each given with
/// its partition-key hash and its whole-key hash.
///
/// Both non-trivial orders keep one head per key in a queue (interleave:
/// round-robin over partition keys) or a vector (shuffle: random pick over
/// primary keys), and queue further records of a key aside only when a key
/// repeats within the window, so distinct keys cost no allocation.
pub struct Orderer<T> {
    order: Order,
    window: usize,
    len: usize,
    fifo: VecDeque<T>,
    rotation: VecDeque<(u128, T)>,
    heads: Vec<(u128, T)>,
    present: HashSet128,
    extra: HashMap128<VecDeque<T>>,
    rng: Rng,
}

impl<T> Orderer<T> {
    /// A window of at most `window` records; `rng` drives shuffle.
    pub fn new(order: Order, window: usize, rng: Rng) -> Orderer<T> {
        Orderer {
            order,
            window: window.max(1),
            len: 0,
            fifo: VecDeque::new(),
            rotation: VecDeque::new(),
            heads: Vec::new(),
            present: HashSet128::default(),
            extra: HashMap128::default(),
            rng,
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

    /// Adds a record with its partition-key and whole-key hashes.
    pub fn push(&mut self, partition: u128, whole: u128, value: T) {
        self.len += 1;
        let group = match self.order {
            Order::AsIs => {
                self.fifo.push_back(value);
                return;
            }
            Order::Interleave => partition,
            Order::Shuffle => whole,
        };
        if self.present.insert(group) {
            match self.order {
                Order::Interleave => self.rotation.push_back((group, value)),
                _ => self.heads.push((group, value)),
            }
        } else {
            self.extra.entry(group).or_default().push_back(value);
        }
    }

    /// The record that follows `group`'s head, if one waits.
    fn next_of(&mut self, group: u128) -> Option<T> {
        let q = self.extra.get_mut(&group)?;
        let next = q.pop_front();
        if q.is_empty() {
            self.extra.remove(&group);
        }
        next
    }

    /// Takes the next record to send.
    pub fn pop(&mut self) -> Option<T> {
        let out = match self.order {
            Order::AsIs => self.fifo.pop_front(),
            Order::Interleave => {
                let (group, value) = self.rotation.pop_front()?;
                match self.next_of(group) {
                    Some(next) => self.rotation.push_back((group, next)),
                    None => {
                        self.present.remove(&group);
                    }
                }
                Some(value)
            }
            Order::Shuffle => {
                if self.heads.is_empty() {
                    return None;
                }
                let i = self.rng.below(self.heads.len() as u64) as usize;
                let (group, value) = self.heads.swap_remove(i);
                match self.next_of(group) {
                    Some(next) => self.heads.push((group, next)),
                    None => {
                        self.present.remove(&group);
                    }
                }
                Some(value)
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
    use dynaburst_model::KeyValue;

    fn key(pk: &str, sk: i64) -> (u128, u128) {
        let k: crate::keys::KeyId = (KeyValue::S(pk.into()), Some(KeyValue::N(dynaburst_model::Number::from_i64(sk))));
        crate::keys::key_hashes(&k)
    }

    #[test]
    fn interleave_round_robins_partition_keys_and_keeps_their_order() {
        let mut o = Orderer::new(Order::Interleave, 100, Rng::new(1));
        for (pk, sk) in [("a", 1), ("a", 2), ("a", 3), ("b", 1), ("b", 2), ("c", 1)] {
            let (p, w) = key(pk, sk);
            o.push(p, w, format!("{pk}{sk}"));
        }
        let out: Vec<String> = std::iter::from_fn(|| o.pop()).collect();
        assert_eq!(out, ["a1", "b1", "c1", "a2", "b2", "a3"]);
    }

    #[test]
    fn shuffle_mixes_but_keeps_same_key_order() {
        let mut o = Orderer::new(Order::Shuffle, 1000, Rng::new(42));
        for i in 0..200 {
            let (p, w) = key(&format!("k{}", i % 50), 0);
            o.push(p, w, i);
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
