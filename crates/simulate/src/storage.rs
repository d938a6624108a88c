//! A storage that keeps the catalog and no items: a simulation needs the
//! capacity model's state and the table's counters, not the data, so its
//! memory stays flat however large the input.

use std::collections::BTreeMap;
use std::sync::Arc;

use dynaburst_engine::store::{Direction, KeySpan, Storage, StoreError, StoreKey, TableMeta, TableStore, Visit};
use dynaburst_model::Item;
use parking_lot::Mutex;

/// Tables without items: every write is accepted and forgotten.
#[derive(Default)]
pub struct NullStorage {
    catalog: Mutex<BTreeMap<String, TableMeta>>,
}

impl Storage for NullStorage {
    fn create_table(&self, meta: &TableMeta) -> Result<Box<dyn TableStore>, StoreError> {
        self.catalog.lock().insert(meta.name.clone(), meta.clone());
        Ok(Box::new(NullStore))
    }

    fn open_table(&self, _name: &str) -> Result<Box<dyn TableStore>, StoreError> {
        Ok(Box::new(NullStore))
    }

    fn list_tables(&self) -> Result<Vec<TableMeta>, StoreError> {
        Ok(self.catalog.lock().values().cloned().collect())
    }

    fn save_table_meta(&self, meta: &TableMeta) -> Result<(), StoreError> {
        self.catalog.lock().insert(meta.name.clone(), meta.clone());
        Ok(())
    }

    fn drop_table(&self, name: &str) -> Result<(), StoreError> {
        self.catalog.lock().remove(name);
        Ok(())
    }
}

/// One table's items: none. A put always finds no earlier item.
struct NullStore;

impl TableStore for NullStore {
    fn get(&self, _key: &StoreKey) -> Result<Option<Arc<Item>>, StoreError> {
        Ok(None)
    }

    fn write(&mut self, _key: StoreKey, _item: Option<Arc<Item>>) -> Result<Option<Arc<Item>>, StoreError> {
        Ok(None)
    }

    fn range(&self, _span: KeySpan<'_>, _direction: Direction, _visit: Visit<'_>) -> Result<(), StoreError> {
        Ok(())
    }

    fn writes_are_infallible(&self) -> bool {
        true
    }
}
