//! Time to live (S117-S120): UpdateTimeToLive, DescribeTimeToLive, and the
//! expirer, which deletes items whose TTL attribute (a Number of epoch
//! seconds) has passed. DynamoDB deletes within days; here the caller
//! decides when a sweep runs (`dynaburst serve --ttl-interval`, or a test
//! in virtual time), and each sweep looks at a bounded number of items,
//! going on next time where it stopped. Deletes go through the write
//! funnel (indexes follow) and consume no capacity, as in DynamoDB.

use std::ops::{Bound, ControlFlow};
use std::sync::Arc;

use dynaburst_model::{item_size, AttributeValue, Item, Number};

use crate::engine::Engine;
use crate::error::EngineError;
use crate::store::{Direction, StoreKey};
use crate::table::{Table, TimeToLive};
use crate::types::Millis;
use crate::write::{self, Writes};

/// The least time between two changes of a table's TTL setting (S118:
/// documented as one hour).
pub const TTL_COOLDOWN_MS: u64 = 60 * 60 * 1000;
/// Items a sweep examines per table at most.
pub const TTL_SWEEP_ITEMS: usize = 10_000;
/// An expiry time further back than this is taken for a malformed value
/// and ignored (S119: five years).
pub const TTL_MAX_AGE_SECS: u64 = 5 * 365 * 24 * 60 * 60;
/// Longest TTL attribute name.
pub const MAX_TTL_ATTRIBUTE: usize = 255;

/// DescribeTimeToLive's answer.
#[derive(Clone, Debug, PartialEq)]
pub struct TtlDescription {
    /// ENABLED or DISABLED.
    pub status: &'static str,
    pub attribute: Option<String>,
}

impl Engine {
    /// UpdateTimeToLive: turns TTL on (on `attribute`) or off.
    pub fn update_time_to_live(
        &self,
        table_name: &str,
        enabled: bool,
        attribute: &str,
        now: Millis,
    ) -> Result<(), EngineError> {
        let table = self.table_named(table_name)?;
        // The data lock first and held to the save (the engine's order): the
        // catalog entry gets the index definitions in force.
        let data = table.data.read();
        let defs: Vec<_> = data.indexes.iter().map(|i| i.def.clone()).collect();
        let mut guard = table.settings.lock();
        let mut settings = guard.clone();
        // A request that could never apply is refused for what it is, before
        // the cool-down (ScyllaDB's Alternator suite, run against DynamoDB:
        // test_ttl_enable and test_ttl_disable_errors ask again at once).
        match (&settings.ttl, enabled) {
            (Some(t), true) if t.enabled && t.attribute == attribute => {
                return Err(EngineError::validation("TimeToLive is already enabled"))
            }
            // Enabling on another attribute, or disabling naming another,
            // while it is on (ack-api-quirks DDB-TABLE-147, live 2026-10).
            (Some(t), _) if t.enabled && t.attribute != attribute => {
                return Err(EngineError::validation(format!(
                    "TimeToLive is active on a different AttributeName: current AttributeName is {}",
                    t.attribute
                )))
            }
            (Some(TimeToLive { enabled: false, .. }) | None, false) => {
                return Err(EngineError::validation("TimeToLive is already disabled"))
            }
            (Some(t), _) if now.0 < t.changed_at.0 + TTL_COOLDOWN_MS => {
                return Err(EngineError::validation(
                    "Time to live has been modified multiple times within a fixed interval",
                ))
            }
            _ => {}
        }
        settings.ttl = Some(TimeToLive { attribute: attribute.to_string(), enabled, changed_at: now });
        self.storage.save_table_meta(&table.meta_with(settings.clone(), defs))?;
        *guard = settings;
        Ok(())
    }

    /// DescribeTimeToLive.
    pub fn describe_time_to_live(&self, table_name: &str) -> Result<TtlDescription, EngineError> {
        let table = self.table_named(table_name)?;
        let ttl = table.settings.lock().ttl.clone();
        Ok(match ttl {
            Some(t) if t.enabled => TtlDescription { status: "ENABLED", attribute: Some(t.attribute) },
            _ => TtlDescription { status: "DISABLED", attribute: None },
        })
    }

    /// One sweep of the expirer over every table with TTL on: deletes the
    /// expired items among the next [`TTL_SWEEP_ITEMS`] of each. Returns
    /// how many it deleted.
    /// SYSTEM backups past their expiry go with the same sweep.
    pub fn expire(&self, now: Millis) -> Result<usize, EngineError> {
        self.drop_expired_backups(now)?;
        let tables: Vec<Arc<Table>> = self.tables.read().values().cloned().collect();
        let mut deleted = 0;
        for table in tables {
            let ttl = table.settings.lock().ttl.clone();
            if let Some(TimeToLive { attribute, enabled: true, .. }) = ttl {
                deleted += self.expire_table(&table, &attribute, now)?;
            }
        }
        Ok(deleted)
    }

    fn expire_table(&self, table: &Table, attribute: &str, now: Millis) -> Result<usize, EngineError> {
        let mut data = table.data.write();
        let start = match data.ttl_cursor.take() {
            Some(k) => Bound::Excluded(k),
            None => Bound::Unbounded,
        };
        let mut expired: Vec<(StoreKey, Arc<Item>)> = Vec::new();
        let (mut seen, mut last) = (0usize, None);
        let now_secs = now.0 / 1000;
        data.store.range((bound_ref(&start), Bound::Unbounded), Direction::Forward, &mut |key, item| {
            seen += 1;
            last = Some(key.clone());
            if expires_before(item.get(attribute), now_secs) {
                expired.push((key.clone(), item.clone()));
            }
            if seen >= TTL_SWEEP_ITEMS {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })?;
        // A sweep that reached the end starts over next time.
        data.ttl_cursor = if seen >= TTL_SWEEP_ITEMS { last } else { None };
        if expired.is_empty() {
            return Ok(0);
        }
        let mut writes = Writes::with_capacity(expired.len());
        writes.by_service = true;
        for (key, old) in &expired {
            let changes = write::index_changes(table, &data, key, Some(old), None);
            writes.delete(0, key.clone(), Some(item_size(old)), changes);
        }
        write::commit(&*self.storage, &self.commit_limits(), &[table], &mut [&mut *data], writes, now)?;
        Ok(expired.len())
    }
}

/// True when `value` is a Number of epoch seconds before `now_secs` and
/// not more than five years before it (S119).
fn expires_before(value: Option<&AttributeValue>, now_secs: u64) -> bool {
    let Some(AttributeValue::N(n)) = value else { return false };
    let Some(at) = epoch_seconds(n) else { return false };
    at < now_secs && now_secs - at <= TTL_MAX_AGE_SECS
}

/// A Number's whole seconds, if it is a non-negative number that fits.
fn epoch_seconds(n: &Number) -> Option<u64> {
    let text = n.to_string();
    let whole = text.split(['.', 'e', 'E']).next()?;
    if text.contains(['e', 'E']) {
        return text.parse::<f64>().ok().filter(|f| *f >= 0.0 && f.is_finite()).map(|f| f as u64);
    }
    whole.parse::<u64>().ok()
}

fn bound_ref(b: &Bound<StoreKey>) -> Bound<&StoreKey> {
    match b {
        Bound::Included(k) => Bound::Included(k),
        Bound::Excluded(k) => Bound::Excluded(k),
        Bound::Unbounded => Bound::Unbounded,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_past_epoch_seconds_within_five_years_expire() {
        let n = |s: &str| AttributeValue::N(Number::parse(s).unwrap());
        let now = 2_000_000_000;
        assert!(expires_before(Some(&n("1999999999")), now));
        assert!(!expires_before(Some(&n("2000000000")), now), "not before now");
        assert!(!expires_before(Some(&n("2000000001.5")), now));
        assert!(expires_before(Some(&n("1999999999.9")), now));
        assert!(!expires_before(Some(&n("1")), now), "more than five years back: malformed");
        assert!(!expires_before(Some(&AttributeValue::S("1".into())), now), "only Numbers");
        assert!(!expires_before(None, now));
        assert!(!expires_before(Some(&n("-5")), now));
    }
}
