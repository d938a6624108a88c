//! The storage seam: what the operations need from a table's storage. The
//! in-memory store is the only backend today; a durable one implements the
//! same trait without the operations changing.

use std::collections::BTreeMap;
use std::ops::{Bound, ControlFlow};
use std::sync::Arc;

use dynaburst_model::{Item, KeyValue};

/// Where a sort key sits in the ordered key space. `Low` and `High` are
/// sentinels for open query bounds; hash-only tables store `Absent`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SortSlot {
    Low,
    Absent,
    Value(KeyValue),
    High,
}

/// A primary key placed in the table's key space: ordered by the partition
/// key's hash (as DynamoDB lays items out across partitions, and as Scan
/// returns them), then partition key, then sort key.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StoreKey {
    pub hash: u128,
    pub partition: KeyValue,
    pub sort: SortSlot,
}

impl StoreKey {
    /// The key of an item with this partition and (optional) sort key.
    pub fn new(partition: KeyValue, sort: Option<KeyValue>) -> StoreKey {
        StoreKey {
            hash: partition.partition_hash(),
            partition,
            sort: match sort {
                Some(v) => SortSlot::Value(v),
                None => SortSlot::Absent,
            },
        }
    }
}

/// Which way a range is walked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Forward,
    Backward,
}

/// A visitor over stored items; return `ControlFlow::Break(())` to stop.
pub type Visit<'a> = &'a mut dyn FnMut(&StoreKey, &Arc<Item>) -> ControlFlow<()>;

/// What a table's storage must do. Items are shared (`Arc`) so that reads
/// never copy a whole item while holding the table's lock.
pub trait TableStore: Send + Sync {
    /// The item stored under `key`.
    fn get(&self, key: &StoreKey) -> Option<Arc<Item>>;
    /// Stores `item`, returning the item it replaced.
    fn put(&mut self, key: StoreKey, item: Arc<Item>) -> Option<Arc<Item>>;
    /// Removes and returns the item under `key`.
    fn delete(&mut self, key: &StoreKey) -> Option<Arc<Item>>;
    /// Visits items with keys in `(start, end)` in `direction`.
    fn range(&self, start: Bound<&StoreKey>, end: Bound<&StoreKey>, direction: Direction, visit: Visit<'_>);
    /// Number of items stored.
    fn len(&self) -> usize;
    /// True when nothing is stored.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The in-memory backend: one ordered map.
#[derive(Default)]
pub struct MemStore {
    items: BTreeMap<StoreKey, Arc<Item>>,
}

impl MemStore {
    /// An empty store.
    pub fn new() -> MemStore {
        MemStore::default()
    }
}

impl TableStore for MemStore {
    fn get(&self, key: &StoreKey) -> Option<Arc<Item>> {
        self.items.get(key).cloned()
    }

    fn put(&mut self, key: StoreKey, item: Arc<Item>) -> Option<Arc<Item>> {
        self.items.insert(key, item)
    }

    fn delete(&mut self, key: &StoreKey) -> Option<Arc<Item>> {
        self.items.remove(key)
    }

    fn range(&self, start: Bound<&StoreKey>, end: Bound<&StoreKey>, direction: Direction, visit: Visit<'_>) {
        // BTreeMap::range panics when start > end; an empty walk is the answer.
        if let (Bound::Included(s) | Bound::Excluded(s), Bound::Included(e) | Bound::Excluded(e)) = (start, end) {
            if s > e || (s == e && !(matches!(start, Bound::Included(_)) && matches!(end, Bound::Included(_)))) {
                return;
            }
        }
        let range = self.items.range::<StoreKey, _>((start, end));
        match direction {
            Direction::Forward => {
                for (k, v) in range {
                    if visit(k, v).is_break() {
                        return;
                    }
                }
            }
            Direction::Backward => {
                for (k, v) in range.rev() {
                    if visit(k, v).is_break() {
                        return;
                    }
                }
            }
        }
    }

    fn len(&self) -> usize {
        self.items.len()
    }
}

/// Makes the storage for a new table.
pub trait StoreFactory: Send + Sync {
    /// Storage for the table `name`.
    fn create(&self, name: &str) -> Box<dyn TableStore>;
}

/// Factory for [`MemStore`].
pub struct MemStoreFactory;

impl StoreFactory for MemStoreFactory {
    fn create(&self, _name: &str) -> Box<dyn TableStore> {
        Box::new(MemStore::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dynaburst_model::AttributeValue;

    fn key(pk: &str, sk: i64) -> StoreKey {
        StoreKey::new(KeyValue::S(pk.into()), Some(KeyValue::N(dynaburst_model::Number::from_i64(sk))))
    }

    #[test]
    fn ranges_walk_both_ways_and_empty_ranges_do_not_panic() {
        let mut s = MemStore::new();
        for i in 0..5 {
            let mut item = Item::new();
            item.insert("i".into(), AttributeValue::N(dynaburst_model::Number::from_i64(i)));
            s.put(key("a", i), Arc::new(item));
        }
        let mut seen = vec![];
        s.range(Bound::Included(&key("a", 1)), Bound::Excluded(&key("a", 4)), Direction::Backward, &mut |k, _| {
            if let SortSlot::Value(KeyValue::N(n)) = &k.sort {
                seen.push(n.to_string());
            }
            ControlFlow::Continue(())
        });
        assert_eq!(seen, ["3", "2", "1"]);
        let mut count = 0;
        s.range(Bound::Excluded(&key("a", 3)), Bound::Excluded(&key("a", 1)), Direction::Forward, &mut |_, _| {
            count += 1;
            ControlFlow::Continue(())
        });
        assert_eq!(count, 0);
        s.range(Bound::Excluded(&key("a", 3)), Bound::Excluded(&key("a", 3)), Direction::Forward, &mut |_, _| {
            count += 1;
            ControlFlow::Continue(())
        });
        assert_eq!(count, 0);
    }
}
