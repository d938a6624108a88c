//! Storage that fails on command, for fault-injection tests of everything
//! above the storage seam: memory storage whose commits, or whose n-th next
//! write, fail with an I/O error until disarmed.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use dynaburst_model::Item;

use crate::store::{
    apply_with_undo, Direction, KeySpan, MemStorage, Storage, StoreError, StoreKey, TableMeta, TableStore, Visit,
    WriteBatch,
};

/// No write failure armed.
const DISARMED: usize = usize::MAX;

/// The switches of a [`FaultyStorage`]; clones share them.
#[derive(Clone, Debug)]
pub struct Faults {
    fail_commits: Arc<AtomicBool>,
    /// Commits fail as one racing its table's drop does.
    tables_gone: Arc<AtomicBool>,
    /// Writes to let through before one fails; [`DISARMED`] for none.
    writes_before_failure: Arc<AtomicUsize>,
    /// Catalog saves to let through before one fails; [`DISARMED`] for none.
    saves_before_failure: Arc<AtomicUsize>,
}

impl Default for Faults {
    fn default() -> Faults {
        Faults {
            fail_commits: Arc::default(),
            tables_gone: Arc::default(),
            writes_before_failure: Arc::new(AtomicUsize::new(DISARMED)),
            saves_before_failure: Arc::new(AtomicUsize::new(DISARMED)),
        }
    }
}

impl Faults {
    /// Every commit fails (before writing anything) while `on`.
    pub fn fail_commits(&self, on: bool) {
        self.fail_commits.store(on, Ordering::SeqCst);
    }

    /// Every commit fails as a durable storage's fails when the table was
    /// dropped after the write found it (`NoSuchTable`) while `on`.
    pub fn drop_tables_under_commits(&self, on: bool) {
        self.tables_gone.store(on, Ordering::SeqCst);
    }

    /// Lets `passes` more writes through, then fails one and disarms (so
    /// the undo of the failed commit succeeds).
    pub fn fail_write_after(&self, passes: usize) {
        self.writes_before_failure.store(passes, Ordering::SeqCst);
    }

    /// No write fails.
    pub fn disarm_writes(&self) {
        self.writes_before_failure.store(DISARMED, Ordering::SeqCst);
    }

    /// Lets `passes` more catalog saves through, then fails one and
    /// disarms.
    pub fn fail_save_after(&self, passes: usize) {
        self.saves_before_failure.store(passes, Ordering::SeqCst);
    }

    /// No catalog save fails.
    pub fn disarm_saves(&self) {
        self.saves_before_failure.store(DISARMED, Ordering::SeqCst);
    }

    /// Counts one write: Err when it is the one to fail.
    fn check_write(&self) -> Result<(), StoreError> {
        count_down(&self.writes_before_failure, "write")
    }

    /// Counts one catalog save: Err when it is the one to fail.
    fn check_save(&self) -> Result<(), StoreError> {
        count_down(&self.saves_before_failure, "catalog save")
    }
}

/// Counts one operation against `left` (operations to let through):
/// Err for the one that fails, which disarms it.
fn count_down(left: &AtomicUsize, operation: &'static str) -> Result<(), StoreError> {
    let before = left.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| match n {
        DISARMED => None,
        0 => Some(DISARMED),
        n => Some(n - 1),
    });
    match before {
        Ok(0) => Err(StoreError::Io { operation, kind: std::io::ErrorKind::Other }),
        _ => Ok(()),
    }
}

/// A table store whose writes fail when its [`Faults`] say so.
pub struct FaultyStore {
    inner: Box<dyn TableStore>,
    faults: Faults,
}

impl FaultyStore {
    /// Wraps `inner`.
    pub fn new(inner: Box<dyn TableStore>, faults: Faults) -> FaultyStore {
        FaultyStore { inner, faults }
    }
}

impl TableStore for FaultyStore {
    fn get(&self, key: &StoreKey) -> Result<Option<Arc<Item>>, StoreError> {
        self.inner.get(key)
    }

    fn write(&mut self, key: StoreKey, item: Option<Arc<Item>>) -> Result<Option<Arc<Item>>, StoreError> {
        self.faults.check_write()?;
        self.inner.write(key, item)
    }

    fn range(&self, span: KeySpan<'_>, direction: Direction, visit: Visit<'_>) -> Result<(), StoreError> {
        self.inner.range(span, direction, visit)
    }
}

/// Memory storage with [`Faults`]: the stores it creates are [`FaultyStore`]s.
#[derive(Default)]
pub struct FaultyStorage {
    inner: MemStorage,
    faults: Faults,
}

impl FaultyStorage {
    /// Empty storage, nothing armed.
    pub fn new() -> FaultyStorage {
        FaultyStorage::default()
    }

    /// Its switches.
    pub fn faults(&self) -> Faults {
        self.faults.clone()
    }
}

impl Storage for FaultyStorage {
    fn create_table(&self, meta: &TableMeta) -> Result<Box<dyn TableStore>, StoreError> {
        Ok(Box::new(FaultyStore::new(self.inner.create_table(meta)?, self.faults.clone())))
    }

    fn open_table(&self, name: &str) -> Result<Box<dyn TableStore>, StoreError> {
        Ok(Box::new(FaultyStore::new(self.inner.open_table(name)?, self.faults.clone())))
    }

    fn list_tables(&self) -> Result<Vec<TableMeta>, StoreError> {
        self.inner.list_tables()
    }

    fn save_table_meta(&self, meta: &TableMeta) -> Result<(), StoreError> {
        self.faults.check_save()?;
        self.inner.save_table_meta(meta)
    }

    fn drop_table(&self, name: &str) -> Result<(), StoreError> {
        self.inner.drop_table(name)
    }

    fn commit(
        &self,
        batch: WriteBatch,
        stores: &mut [&mut dyn TableStore],
    ) -> Result<Vec<Option<Arc<Item>>>, StoreError> {
        if self.faults.fail_commits.load(Ordering::SeqCst) {
            return Err(StoreError::Io { operation: "commit", kind: std::io::ErrorKind::Other });
        }
        if self.faults.tables_gone.load(Ordering::SeqCst) {
            return Err(StoreError::NoSuchTable(String::new()));
        }
        apply_with_undo(batch, stores)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_fails_after_the_armed_number_of_passes_then_disarms() {
        let faults = Faults::default();
        assert_eq!(faults.check_write(), Ok(()), "nothing armed");
        faults.fail_write_after(2);
        assert_eq!(faults.check_write(), Ok(()));
        assert_eq!(faults.check_write(), Ok(()));
        assert_eq!(faults.check_write(), Err(StoreError::Io { operation: "write", kind: std::io::ErrorKind::Other }));
        assert_eq!(faults.check_write(), Ok(()), "disarmed after failing once");
        faults.fail_write_after(0);
        faults.disarm_writes();
        assert_eq!(faults.check_write(), Ok(()));
    }
}
