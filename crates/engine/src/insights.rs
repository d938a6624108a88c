//! Top keys, as CloudWatch Contributor Insights shows them: the most
//! accessed and the most throttled partition keys, and primary keys
//! (partition and sort key), of one table over the last minutes.
//!
//! Each list is a space-saving counter (Metwally, Agrawal and El Abbadi,
//! 2005) of [`TOP_KEY_SLOTS`] slots: a key seen is counted in its slot, a
//! new key takes the smallest slot over and inherits its count as its
//! error bound, so any key whose count exceeds 1/[`TOP_KEY_SLOTS`] of the
//! total keeps its slot. A report gives each key's guaranteed count (its
//! count less the inherited bound): exact for a key that was never
//! evicted, and never more than the key's true count. Counts are kept in windows of
//! [`TOP_KEYS_WINDOW_MS`]; a report adds the current window to the previous
//! one (the last one to two minutes). Access is weighted as Contributor
//! Insights weighs it (S159): 3 x write units + read units; throttles count
//! items refused.
//!
//! Also the Contributor Insights settings of a table and its GSIs
//! (UpdateContributorInsights), with their status in time.

use std::sync::Arc;

use dynaburst_capacity::Op;
use dynaburst_model::{KeyValue, Millis};

use crate::engine::Engine;
use crate::error::EngineError;
use crate::index::IndexKind;
use crate::store::{SortSlot, StoreKey};
use crate::table::Table;

/// Keys each list counts (the space-saving counter's slots).
pub const TOP_KEY_SLOTS: usize = 32;
/// Keys a report lists per list.
pub const TOP_KEYS_REPORTED: usize = 10;
/// Length of one counting window.
pub const TOP_KEYS_WINDOW_MS: u64 = 60_000;
/// How long a Contributor Insights rule is ENABLING (or DISABLING) before
/// it is ENABLED (DISABLED). DynamoDB takes a few seconds; not published.
pub const INSIGHTS_TRANSITION_MS: u64 = 2_000;

/// A counted key: a partition key, and for primary-key lists its sort key.
#[derive(Clone, Debug, PartialEq)]
pub struct TopKey {
    pub partition: KeyValue,
    pub sort: Option<KeyValue>,
    /// Weighted accesses (3 x WCU + RCU) or items throttled.
    pub count: f64,
}

/// One space-saving counter.
#[derive(Clone, Debug, Default)]
struct SpaceSaving {
    /// (hash of the partition key, key with its count, the count it
    /// inherited when it took the slot over).
    slots: Vec<(u128, TopKey, f64)>,
}

impl SpaceSaving {
    fn observe(&mut self, hash: u128, partition: &KeyValue, sort: Option<&KeyValue>, weight: f64) {
        if let Some((_, k, _)) =
            self.slots.iter_mut().find(|(h, k, _)| *h == hash && k.partition == *partition && k.sort.as_ref() == sort)
        {
            k.count += weight;
            return;
        }
        let fresh = |count: f64| TopKey { partition: partition.clone(), sort: sort.cloned(), count };
        if self.slots.len() < TOP_KEY_SLOTS {
            self.slots.push((hash, fresh(weight), 0.0));
            return;
        }
        if let Some(slot) = self.slots.iter_mut().min_by(|a, b| a.1.count.total_cmp(&b.1.count)) {
            let count = slot.1.count;
            *slot = (hash, fresh(count + weight), count);
        }
    }
}

/// The four lists of one window.
#[derive(Clone, Debug, Default)]
struct Window {
    accessed_partition: SpaceSaving,
    throttled_partition: SpaceSaving,
    accessed_item: SpaceSaving,
    throttled_item: SpaceSaving,
}

/// A table's (or GSI's) top keys.
#[derive(Clone, Debug, Default)]
pub struct TopKeys {
    /// Index of the current window (`now / TOP_KEYS_WINDOW_MS`).
    window: u64,
    current: Window,
    previous: Window,
}

/// What [`TopKeys::report`] lists, most first.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TopKeysReport {
    pub accessed_partition_keys: Vec<TopKey>,
    pub throttled_partition_keys: Vec<TopKey>,
    /// Partition and sort key; empty for a table without a sort key.
    pub accessed_keys: Vec<TopKey>,
    pub throttled_keys: Vec<TopKey>,
}

impl TopKeys {
    fn advance(&mut self, now: Millis) {
        let window = now.0 / TOP_KEYS_WINDOW_MS;
        // Concurrent requests reach the counters a little out of the order
        // of their `now`: one that read its clock before the window turned
        // is counted in the new window, never taken for a jump back.
        if window <= self.window {
            return;
        }
        self.previous = if window == self.window + 1 { std::mem::take(&mut self.current) } else { Window::default() };
        self.current = Window::default();
        self.window = window;
    }

    /// Counts one item's access of `units` (`throttled`: refused) at `now`.
    pub fn observe(&mut self, key: &StoreKey, op: Op, units: f64, throttled: bool, now: Millis) {
        self.advance(now);
        let sort = match &key.sort {
            SortSlot::Value(v) => Some(v),
            _ => None,
        };
        let w = &mut self.current;
        if throttled {
            w.throttled_partition.observe(key.hash, &key.partition, None, 1.0);
            if sort.is_some() {
                w.throttled_item.observe(key.hash, &key.partition, sort, 1.0);
            }
            return;
        }
        let weight = match op {
            Op::Read => units,
            Op::Write => 3.0 * units,
        };
        w.accessed_partition.observe(key.hash, &key.partition, None, weight);
        if sort.is_some() {
            w.accessed_item.observe(key.hash, &key.partition, sort, weight);
        }
    }

    /// The top keys of the current and the previous window, as of `now`.
    pub fn report(&mut self, now: Millis) -> TopKeysReport {
        self.advance(now);
        let (c, p) = (&self.current, &self.previous);
        TopKeysReport {
            accessed_partition_keys: merged(&c.accessed_partition, &p.accessed_partition),
            throttled_partition_keys: merged(&c.throttled_partition, &p.throttled_partition),
            accessed_keys: merged(&c.accessed_item, &p.accessed_item),
            throttled_keys: merged(&c.throttled_item, &p.throttled_item),
        }
    }
}

/// Two windows' guaranteed counts of the same list added, the top
/// [`TOP_KEYS_REPORTED`], most first.
fn merged(a: &SpaceSaving, b: &SpaceSaving) -> Vec<TopKey> {
    let mut out: Vec<TopKey> = Vec::with_capacity(2 * TOP_KEY_SLOTS);
    for (_, k, error) in a.slots.iter().chain(&b.slots) {
        let count = k.count - error;
        match out.iter_mut().find(|o| o.partition == k.partition && o.sort == k.sort) {
            Some(o) => o.count += count,
            None => out.push(TopKey { count, ..k.clone() }),
        }
    }
    out.sort_by(|x, y| y.count.total_cmp(&x.count));
    out.truncate(TOP_KEYS_REPORTED);
    out
}

/// Contributor Insights' mode (ContributorInsightsMode).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InsightsMode {
    AccessedAndThrottledKeys,
    ThrottledKeys,
}

impl InsightsMode {
    pub fn name(self) -> &'static str {
        match self {
            InsightsMode::AccessedAndThrottledKeys => "ACCESSED_AND_THROTTLED_KEYS",
            InsightsMode::ThrottledKeys => "THROTTLED_KEYS",
        }
    }
}

/// Contributor Insights on one table or GSI: the last action and when.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InsightsSetting {
    pub enabled: bool,
    pub mode: InsightsMode,
    /// When the last UpdateContributorInsights was made.
    pub updated_at: Millis,
    /// When it was first enabled (names its rules).
    pub created_at: Millis,
}

impl InsightsSetting {
    /// ENABLING, ENABLED, DISABLING or DISABLED at `now`.
    pub fn status(&self, now: Millis) -> &'static str {
        let settled = now.0.saturating_sub(self.updated_at.0) >= INSIGHTS_TRANSITION_MS;
        match (self.enabled, settled) {
            (true, false) => "ENABLING",
            (true, true) => "ENABLED",
            (false, false) => "DISABLING",
            (false, true) => "DISABLED",
        }
    }
}

/// A table's top keys and the Contributor Insights settings of the table
/// (index None) and of its GSIs.
#[derive(Clone, Debug, Default)]
pub struct Insights {
    pub top: TopKeys,
    pub settings: Vec<(Option<String>, InsightsSetting)>,
}

impl Insights {
    /// The setting of the table (`index` None) or one of its GSIs.
    pub fn setting(&self, index: Option<&str>) -> Option<&InsightsSetting> {
        self.settings.iter().find(|(i, _)| i.as_deref() == index).map(|(_, s)| s)
    }
}

/// Contributor Insights on one table or GSI, as DescribeContributorInsights
/// and the other two operations answer.
#[derive(Clone, Debug, PartialEq)]
pub struct InsightsDescription {
    pub table_name: String,
    pub index_name: Option<String>,
    pub status: &'static str,
    /// None while it was never enabled.
    pub mode: Option<InsightsMode>,
    /// The CloudWatch rules' names while enabled (S159).
    pub rules: Vec<String>,
    pub last_update: Option<Millis>,
}

/// Whether the resource (the table, or its GSI `index`) has a sort key: its
/// Contributor Insights has the sort-key rules. A hash-only GSI of a table
/// with a sort key has none (ack-api-quirks DDB-TABLE-093). Takes the
/// table's data lock: never called with the insights lock held (the write
/// path takes them the other way round).
fn has_sort_key(table: &Table, index: Option<&str>) -> bool {
    match index {
        None => table.key_schema.range.is_some(),
        Some(name) => table.index_defs().iter().any(|d| d.name == name && !d.schema.range.is_empty()),
    }
}

fn describe(
    table: &Table,
    index: Option<&str>,
    setting: Option<&InsightsSetting>,
    sorted: bool,
    now: Millis,
) -> InsightsDescription {
    let Some(s) = setting else {
        return InsightsDescription {
            table_name: table.name.clone(),
            index_name: index.map(str::to_string),
            status: "DISABLED",
            mode: None,
            rules: Vec::new(),
            last_update: None,
        };
    };
    let status = s.status(now);
    let mut rules = Vec::new();
    if status == "ENABLED" || status == "ENABLING" {
        // DynamoDBContributorInsights-<PK|SK><C|T>-<resource>-<created>:
        // C most accessed, T most throttled; SK only with a sort key.
        let resource = match index {
            Some(i) => format!("{}-{i}", table.name),
            None => table.name.clone(),
        };
        let accessed = s.mode == InsightsMode::AccessedAndThrottledKeys;
        for (kind, on) in [("PKC", accessed), ("PKT", true), ("SKC", accessed && sorted), ("SKT", sorted)] {
            if on {
                rules.push(format!("DynamoDBContributorInsights-{kind}-{resource}-{}", s.created_at.0));
            }
        }
    }
    InsightsDescription {
        table_name: table.name.clone(),
        index_name: index.map(str::to_string),
        status,
        mode: Some(s.mode),
        rules,
        last_update: Some(s.updated_at),
    }
}

/// Contributor Insights covers a table and its GSIs, not its LSIs (S158);
/// DynamoDB names what it did not find (ack-api-quirks DDB-TABLE-094).
fn check_index(table: &Table, index: Option<&str>) -> Result<(), EngineError> {
    match index {
        None => Ok(()),
        Some(i) if table.index_defs().iter().any(|d| d.name == i && d.kind == IndexKind::Global) => Ok(()),
        Some(i) => Err(EngineError::ResourceNotFound(format!(
            "Requested resource not found: Index: {i} not found for table: {}",
            table.name
        ))),
    }
}

impl Engine {
    /// UpdateContributorInsights: ENABLE (in `mode`, by default
    /// ACCESSED_AND_THROTTLED_KEYS) or DISABLE on a table or one of its GSIs.
    pub fn update_contributor_insights(
        &self,
        table_name: &str,
        index: Option<&str>,
        enable: bool,
        mode: Option<InsightsMode>,
        now: Millis,
    ) -> Result<InsightsDescription, EngineError> {
        let table = self.table_named(table_name)?;
        check_index(&table, index)?;
        let sorted = has_sort_key(&table, index);
        let mut insights = table.insights.lock();
        let previous = insights.setting(index).copied();
        // ENABLE without a mode means the default mode again; DISABLE keeps
        // the mode it had (ack-api-quirks DDB-TABLE-341).
        let mode = match (enable, mode) {
            (_, Some(m)) => m,
            (true, None) => InsightsMode::AccessedAndThrottledKeys,
            (false, None) => previous.map_or(InsightsMode::AccessedAndThrottledKeys, |p| p.mode),
        };
        // Asking for what is already so changes nothing: ENABLE in the mode
        // it has, DISABLE of a disabled or never enabled resource
        // (DDB-TABLE-089, -091).
        let unchanged = match previous {
            Some(p) => p.enabled == enable && (!enable || p.mode == mode),
            None => !enable,
        };
        if unchanged {
            return Ok(describe(&table, index, previous.as_ref(), sorted, now));
        }
        let created_at = match previous {
            Some(p) if p.enabled || !enable => p.created_at,
            _ => now,
        };
        let setting = InsightsSetting { enabled: enable, mode, updated_at: now, created_at };
        match insights.settings.iter_mut().find(|(i, _)| i.as_deref() == index) {
            Some((_, s)) => *s = setting,
            None => insights.settings.push((index.map(str::to_string), setting)),
        }
        Ok(describe(&table, index, Some(&setting), sorted, now))
    }

    /// DescribeContributorInsights.
    pub fn describe_contributor_insights(
        &self,
        table_name: &str,
        index: Option<&str>,
        now: Millis,
    ) -> Result<InsightsDescription, EngineError> {
        let table = self.table_named(table_name)?;
        check_index(&table, index)?;
        let setting = table.insights.lock().setting(index).copied();
        Ok(describe(&table, index, setting.as_ref(), has_sort_key(&table, index), now))
    }

    /// ListContributorInsights: a table's and its GSIs' settings, or every
    /// table's, that have Contributor Insights on (or turning off), by
    /// table name then index.
    pub fn list_contributor_insights(
        &self,
        table_name: Option<&str>,
        now: Millis,
    ) -> Result<Vec<InsightsDescription>, EngineError> {
        let tables: Vec<Arc<Table>> = match table_name {
            Some(name) => vec![self.table_named(name)?],
            None => self.tables.read().values().cloned().collect(),
        };
        let mut out = Vec::new();
        for table in tables {
            let settings = table.insights.lock().settings.clone();
            let gsis: Vec<String> =
                table.index_defs().into_iter().filter(|d| d.kind == IndexKind::Global).map(|d| d.name).collect();
            let resources = std::iter::once(None).chain(gsis.iter().map(|g| Some(g.as_str())));
            for index in resources {
                let setting = settings.iter().find(|(i, _)| i.as_deref() == index).map(|(_, s)| s);
                let d = describe(&table, index, setting, has_sort_key(&table, index), now);
                // DISABLED entries are never listed, a table named or not
                // (ack-api-quirks DDB-TABLE-095, -343).
                if d.status != "DISABLED" {
                    out.push(d);
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(pk: &str, sk: Option<&str>) -> StoreKey {
        StoreKey::new(KeyValue::S(pk.to_string()), sk.map(|s| KeyValue::S(s.to_string())))
    }

    #[test]
    fn a_heavy_key_is_listed_first_among_many_light_ones() {
        let mut top = TopKeys::default();
        for i in 0..10_000u64 {
            let k = if i % 4 == 0 { key("hot", Some("a")) } else { key(&format!("k{i}"), Some("x")) };
            top.observe(&k, Op::Write, 1.0, false, Millis(1000 + i));
        }
        top.observe(&key("hot", Some("a")), Op::Write, 1.0, true, Millis(20_000));
        let r = top.report(Millis(30_000));
        assert_eq!(r.accessed_partition_keys[0].partition, KeyValue::S("hot".into()));
        // 2,500 writes of 1 unit, weighted 3: counted exactly (never evicted).
        assert_eq!(r.accessed_partition_keys[0].count, 7500.0);
        assert_eq!(r.accessed_keys[0].sort, Some(KeyValue::S("a".into())));
        assert_eq!(r.accessed_partition_keys.len(), TOP_KEYS_REPORTED);
        // Each light key was written once: never credited more than that.
        assert!(r.accessed_partition_keys[1..].iter().all(|k| k.count == 3.0), "{:?}", r.accessed_partition_keys);
        assert_eq!(
            r.throttled_partition_keys,
            vec![TopKey { partition: KeyValue::S("hot".into()), sort: None, count: 1.0 }]
        );
    }

    #[test]
    fn a_request_from_just_before_the_window_turned_keeps_the_counts() {
        let mut top = TopKeys::default();
        top.observe(&key("hot", None), Op::Write, 1.0, false, Millis(TOP_KEYS_WINDOW_MS - 10));
        top.observe(&key("b", None), Op::Write, 1.0, false, Millis(TOP_KEYS_WINDOW_MS + 1));
        top.observe(&key("hot", None), Op::Write, 1.0, false, Millis(TOP_KEYS_WINDOW_MS - 5));
        let r = top.report(Millis(TOP_KEYS_WINDOW_MS + 2));
        assert_eq!(
            r.accessed_partition_keys[0],
            TopKey { partition: KeyValue::S("hot".into()), sort: None, count: 6.0 }
        );
        assert_eq!(r.accessed_partition_keys.len(), 2);
    }

    #[test]
    fn counts_age_out_after_two_windows() {
        let mut top = TopKeys::default();
        top.observe(&key("a", None), Op::Read, 2.0, false, Millis(10));
        assert_eq!(top.report(Millis(TOP_KEYS_WINDOW_MS + 5)).accessed_partition_keys[0].count, 2.0);
        assert!(top.report(Millis(2 * TOP_KEYS_WINDOW_MS + 5)).accessed_partition_keys.is_empty());
        // No sort key: no primary-key lists.
        assert!(top.report(Millis(2 * TOP_KEYS_WINDOW_MS + 5)).accessed_keys.is_empty());
    }

    #[test]
    fn status_moves_from_enabling_to_enabled() {
        let s = InsightsSetting {
            enabled: true,
            mode: InsightsMode::ThrottledKeys,
            updated_at: Millis(1000),
            created_at: Millis(1000),
        };
        assert_eq!(s.status(Millis(1000)), "ENABLING");
        assert_eq!(s.status(Millis(1000 + INSIGHTS_TRANSITION_MS)), "ENABLED");
        let off = InsightsSetting { enabled: false, ..s };
        assert_eq!(off.status(Millis(1500)), "DISABLING");
        assert_eq!(off.status(Millis(5000)), "DISABLED");
    }
}
