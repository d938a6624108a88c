//! One table's capacity state: its partitions and its table-level buckets.

use std::collections::{HashMap, VecDeque};

use dynaburst_model::Millis;

use crate::bucket::Bucket;
use crate::metrics::{Metrics, PartitionSecond, SecondMetrics, SplitEvent, SplitReason};
use crate::{CapacitySettings, LimitKind, Mode, Op, Throttle};

/// Most distinct keys a partition samples while it runs hot.
pub const MAX_HEAT_KEYS: usize = 4096;
/// Most partitions a table may have (splits stop there).
pub const MAX_PARTITIONS: usize = 1 << 14;
/// Most empty seconds replayed when time jumps (longer idle gaps are
/// summarized: nothing in them can change the outcome beyond this).
const MAX_REPLAYED_SECONDS: u64 = 3600;

/// What a partition looks like from outside.
#[derive(Clone, Debug, PartialEq)]
pub struct PartitionInfo {
    /// First hash of the partition's range (inclusive).
    pub start: u128,
    /// Provisioned share (read, write) per second; zero for on-demand.
    pub share: (f64, f64),
    pub size_bytes: u64,
}

/// Keys seen while a partition runs hot: where to split, and whether a
/// split would help.
#[derive(Clone, Debug, Default)]
struct Heat {
    hot_seconds: u64,
    /// Key hash to normalized units (units / partition maximum).
    keys: HashMap<u128, f64>,
    last_hash: Option<u128>,
    increasing: u64,
    ordered: u64,
}

impl Heat {
    fn observe(&mut self, hash: u128, weight: f64) {
        if self.keys.len() < MAX_HEAT_KEYS || self.keys.contains_key(&hash) {
            *self.keys.entry(hash).or_insert(0.0) += weight;
        }
        if let Some(last) = self.last_hash {
            if hash != last {
                self.ordered += 1;
                if hash > last {
                    self.increasing += 1;
                }
            }
        }
        self.last_hash = Some(hash);
    }

    fn reset(&mut self) {
        *self = Heat::default();
    }
}

#[derive(Clone, Debug)]
struct Partition {
    start: u128,
    read_max: Bucket,
    write_max: Bucket,
    /// Provisioned allocation (share per second, banked for the burst
    /// window). Unused in on-demand mode.
    read_alloc: Bucket,
    write_alloc: Bucket,
    share_read: f64,
    share_write: f64,
    size_bytes: u64,
    sec_read: f64,
    sec_write: f64,
    sec_throttled: u64,
    heat: Heat,
}

impl Partition {
    fn new(start: u128, s: &CapacitySettings, share: (f64, f64), banked: (f64, f64), now: Millis) -> Partition {
        Partition {
            start,
            read_max: Bucket::new(
                s.partition_read_max,
                s.partition_read_max * s.partition_burst_seconds,
                s.partition_read_max * s.partition_burst_seconds,
                now,
            ),
            write_max: Bucket::new(
                s.partition_write_max,
                s.partition_write_max * s.partition_burst_seconds,
                s.partition_write_max * s.partition_burst_seconds,
                now,
            ),
            read_alloc: Bucket::new(share.0, share.0 * s.burst_seconds, banked.0, now),
            write_alloc: Bucket::new(share.1, share.1 * s.burst_seconds, banked.1, now),
            share_read: share.0,
            share_write: share.1,
            size_bytes: 0,
            sec_read: 0.0,
            sec_write: 0.0,
            sec_throttled: 0,
            heat: Heat::default(),
        }
    }

    fn max(&mut self, op: Op) -> &mut Bucket {
        match op {
            Op::Read => &mut self.read_max,
            Op::Write => &mut self.write_max,
        }
    }

    fn alloc(&mut self, op: Op) -> &mut Bucket {
        match op {
            Op::Read => &mut self.read_alloc,
            Op::Write => &mut self.write_alloc,
        }
    }

    fn set_share(&mut self, share: (f64, f64), s: &CapacitySettings, now: Millis) {
        self.share_read = share.0;
        self.share_write = share.1;
        self.read_alloc.reshape(share.0, share.0 * s.burst_seconds, now);
        self.write_alloc.reshape(share.1, share.1 * s.burst_seconds, now);
    }
}

/// True when a bucket can pay `units`. A request larger than the bucket's
/// capacity is let through once the bucket is full (going into debt), as
/// DynamoDB lets a 400 KB item onto a 1 WCU table; otherwise it would
/// starve forever.
fn can_pay(bucket: &Bucket, units: f64, cap: f64) -> bool {
    bucket.has(units) || (units > cap && bucket.has(cap))
}

/// The capacity state of one table.
#[derive(Clone, Debug)]
pub struct TableCapacity {
    settings: CapacitySettings,
    mode: Mode,
    partitions: Vec<Partition>,
    /// Provisioned: the table's total per second (adaptive capacity borrows
    /// from it; burst drives it into debt). On-demand: the current ceiling.
    table_read: Bucket,
    table_write: Bucket,
    peak_read: f64,
    peak_write: f64,
    max_provisioned: (f64, f64),
    recent: VecDeque<(f64, f64)>,
    current: SecondMetrics,
    metrics: Metrics,
}

fn equal_starts(n: usize) -> Vec<u128> {
    let width = u128::MAX / n as u128;
    (0..n).map(|i| width * i as u128).collect()
}

fn provisioned_partitions(read: f64, write: f64, s: &CapacitySettings) -> usize {
    ((read / s.partition_read_max + write / s.partition_write_max).ceil() as usize).max(1)
}

/// Units [`TableCapacity::check_all`] found room for, to be taken by
/// [`TableCapacity::consume`].
#[derive(Debug)]
#[must_use = "an admission consumes nothing until passed to consume"]
pub struct Admission {
    op: Op,
    /// (partition index, units) in partition order.
    per_partition: Vec<(usize, f64)>,
    total: f64,
    /// (hash, units) as asked, for the heat tracker.
    items: Vec<(u128, f64)>,
}

impl TableCapacity {
    /// A new table's capacity state.
    pub fn new(mode: Mode, settings: CapacitySettings, now: Millis) -> TableCapacity {
        let n = match mode {
            Mode::OnDemand => settings.on_demand_initial_partitions.max(1),
            Mode::Provisioned { read, write } => provisioned_partitions(read, write, &settings),
        };
        let (share, table) = match mode {
            Mode::OnDemand => ((0.0, 0.0), (settings.on_demand_initial_read, settings.on_demand_initial_write)),
            Mode::Provisioned { read, write } => ((read / n as f64, write / n as f64), (read, write)),
        };
        // A new partition has banked nothing beyond its first second.
        let partitions =
            equal_starts(n).into_iter().map(|start| Partition::new(start, &settings, share, share, now)).collect();
        let max_provisioned = match mode {
            Mode::OnDemand => (0.0, 0.0),
            Mode::Provisioned { read, write } => (read, write),
        };
        let second = now.0 / 1000;
        // Provisioned: the table-level pool only lends to hot partitions
        // (adaptive capacity) and starts empty, so a new table's first
        // second is not counted twice (its partitions hold it).
        let pool = |rate: f64| match mode {
            Mode::OnDemand => rate,
            Mode::Provisioned { .. } => 0.0,
        };
        TableCapacity {
            table_read: Bucket::new(table.0, table.0, pool(table.0), now),
            table_write: Bucket::new(table.1, table.1, pool(table.1), now),
            peak_read: settings.on_demand_initial_read / 2.0,
            peak_write: settings.on_demand_initial_write / 2.0,
            max_provisioned,
            recent: VecDeque::new(),
            current: SecondMetrics::new(second, n),
            metrics: Metrics::default(),
            mode,
            partitions,
            settings,
        }
    }

    /// The model's settings.
    pub fn settings(&self) -> &CapacitySettings {
        &self.settings
    }

    /// The billing mode the model is applying.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Number of partitions.
    pub fn partition_count(&self) -> usize {
        self.partitions.len()
    }

    /// The partitions' ranges, shares and sizes.
    pub fn partitions(&self) -> Vec<PartitionInfo> {
        self.partitions
            .iter()
            .map(|p| PartitionInfo { start: p.start, share: (p.share_read, p.share_write), size_bytes: p.size_bytes })
            .collect()
    }

    /// What the table can take at once: (read, write) units per second.
    pub fn warm_throughput(&self) -> (f64, f64) {
        let n = self.partitions.len() as f64;
        let by_partitions = (n * self.settings.partition_read_max, n * self.settings.partition_write_max);
        match self.mode {
            Mode::OnDemand => {
                (by_partitions.0.min(self.table_read.rate()), by_partitions.1.min(self.table_write.rate()))
            }
            Mode::Provisioned { .. } => {
                (by_partitions.0.min(self.settings.table_max_read), by_partitions.1.min(self.settings.table_max_write))
            }
        }
    }

    /// Recorded metrics (completed seconds).
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The second in progress.
    pub fn current_second(&self) -> &SecondMetrics {
        &self.current
    }

    fn index_of(&self, hash: u128) -> usize {
        self.partitions.partition_point(|p| p.start <= hash).saturating_sub(1)
    }

    fn table_bucket(&mut self, op: Op) -> &mut Bucket {
        match op {
            Op::Read => &mut self.table_read,
            Op::Write => &mut self.table_write,
        }
    }

    /// Asks for `units` of `op` on the key whose partition hash is `hash`.
    /// Admitted units are consumed; a refusal records a throttled item.
    pub fn admit(&mut self, op: Op, hash: u128, units: f64, now: Millis) -> Result<(), Throttle> {
        self.admit_all(op, &[(hash, units)], now)
    }

    /// All-or-nothing admission of several items (a transaction): either
    /// every item is admitted, or none is and the first refusal is returned.
    pub fn admit_all(&mut self, op: Op, items: &[(u128, f64)], now: Millis) -> Result<(), Throttle> {
        let admission = self.check_all(op, items, now)?;
        self.consume(admission);
        Ok(())
    }

    /// The check half of [`TableCapacity::admit_all`]: whether every item
    /// would be admitted, consuming nothing (a refusal is recorded as
    /// throttled items). Several models (a table and its global secondary
    /// indexes) admit a write together by checking each, then consuming
    /// each admission, with no other call on them in between.
    pub fn check_all(&mut self, op: Op, items: &[(u128, f64)], now: Millis) -> Result<Admission, Throttle> {
        self.tick(now);
        // Sum per partition, in partition order.
        let mut per_partition: Vec<(usize, f64)> = Vec::with_capacity(items.len());
        for &(hash, units) in items {
            let idx = self.index_of(hash);
            match per_partition.iter_mut().find(|(i, _)| *i == idx) {
                Some((_, u)) => *u += units,
                None => per_partition.push((idx, units)),
            }
        }
        let total: f64 = per_partition.iter().map(|(_, u)| u).sum();
        let table_max = self.settings.table_max(op);
        let partition_max = self.settings.partition_max(op);
        let partition_cap = partition_max * self.settings.partition_burst_seconds;
        let adaptive = self.settings.adaptive_capacity;
        let mode = self.mode;
        {
            let table = self.table_bucket(op);
            table.refill(now);
        }
        let table_tokens = match op {
            Op::Read => self.table_read.tokens(),
            Op::Write => self.table_write.tokens(),
        };
        let table_rate = match op {
            Op::Read => self.table_read.rate(),
            Op::Write => self.table_write.rate(),
        };
        // Check.
        let mut refusal: Option<Throttle> = None;
        let mut borrowed = 0.0;
        if mode == Mode::OnDemand && !can_pay(&Bucket::new(0.0, table_rate, table_tokens, now), total, table_rate) {
            let kind = if table_rate >= table_max { LimitKind::AccountLimit } else { LimitKind::KeyRange };
            refusal = Some(Throttle { op, kind });
        }
        if refusal.is_none() {
            for &(idx, units) in &per_partition {
                let p = &mut self.partitions[idx];
                p.max(op).refill(now);
                p.alloc(op).refill(now);
                if !can_pay(p.max(op), units, partition_cap) {
                    refusal = Some(Throttle { op, kind: LimitKind::KeyRange });
                    break;
                }
                if let Mode::Provisioned { .. } = mode {
                    let alloc = p.alloc(op);
                    let own = alloc.tokens().max(0.0);
                    if !can_pay(alloc, units, alloc.rate() * self.settings.burst_seconds) {
                        borrowed += units - own;
                    }
                }
            }
        }
        if refusal.is_none() && borrowed > 0.0 {
            let table_cap = table_rate;
            if !adaptive || !can_pay(&Bucket::new(0.0, table_cap, table_tokens, now), borrowed, table_cap) {
                refusal = Some(Throttle { op, kind: LimitKind::Provisioned });
            }
        }
        if let Some(t) = refusal {
            for &(idx, _) in &per_partition {
                self.partitions[idx].sec_throttled += 1;
            }
            match op {
                Op::Read => self.current.throttled_read_items += items.len() as u64,
                Op::Write => self.current.throttled_write_items += items.len() as u64,
            }
            self.metrics.total_throttled_items += items.len() as u64;
            return Err(t);
        }
        Ok(Admission { op, per_partition, total, items: items.to_vec() })
    }

    /// Consumes what [`TableCapacity::check_all`] admitted.
    pub fn consume(&mut self, admission: Admission) {
        let Admission { op, per_partition, total, items } = admission;
        let mode = self.mode;
        let partition_max = self.settings.partition_max(op);
        for &(idx, units) in &per_partition {
            let p = &mut self.partitions[idx];
            p.max(op).take(units);
            if let Mode::Provisioned { .. } = mode {
                let alloc = p.alloc(op);
                let own = alloc.tokens().max(0.0).min(units);
                alloc.take(own);
            }
            match op {
                Op::Read => p.sec_read += units,
                Op::Write => p.sec_write += units,
            }
        }
        for &(hash, units) in &items {
            let idx = self.index_of(hash);
            self.partitions[idx].heat.observe(hash, units / partition_max);
        }
        self.table_bucket(op).take(total);
        match op {
            Op::Read => {
                self.current.read_units += total;
                self.metrics.total_read_units += total;
            }
            Op::Write => {
                self.current.write_units += total;
                self.metrics.total_write_units += total;
            }
        }
    }

    /// Records a request answered with a throttling error.
    pub fn note_throttled_request(&mut self, now: Millis) {
        self.tick(now);
        self.current.throttled_requests += 1;
        self.metrics.total_throttled_requests += 1;
    }

    /// Records a change in stored bytes under `hash`; splits for size.
    pub fn note_size(&mut self, hash: u128, delta: i64, now: Millis) {
        self.tick(now);
        let idx = self.index_of(hash);
        let p = &mut self.partitions[idx];
        p.size_bytes = p.size_bytes.saturating_add_signed(delta);
        if p.size_bytes > self.settings.partition_split_bytes {
            let start = p.start;
            let end = self.partition_end(idx);
            let mid = start + (end - start) / 2;
            self.split(idx, mid, SplitReason::Size, now);
        }
    }

    /// Changes the billing mode or provisioned throughput (UpdateTable).
    /// Partitions are never merged.
    pub fn set_mode(&mut self, mode: Mode, now: Millis) {
        self.tick(now);
        let s = self.settings.clone();
        match mode {
            Mode::Provisioned { read, write } => {
                let needed = provisioned_partitions(read, write, &s);
                while self.partitions.len() < needed && self.partitions.len() * 2 <= MAX_PARTITIONS {
                    self.double(now);
                }
                self.max_provisioned = (self.max_provisioned.0.max(read), self.max_provisioned.1.max(write));
                let n = self.partitions.len() as f64;
                for p in &mut self.partitions {
                    p.set_share((read / n, write / n), &s, now);
                }
                self.table_read.reshape(read, read, now);
                self.table_write.reshape(write, write, now);
            }
            Mode::OnDemand => {
                // A10: the previous peak is the larger of half the earlier
                // provisioned throughput and the new-table default.
                self.peak_read = (self.max_provisioned.0 / 2.0).max(s.on_demand_initial_read / 2.0).max(self.peak_read);
                self.peak_write =
                    (self.max_provisioned.1 / 2.0).max(s.on_demand_initial_write / 2.0).max(self.peak_write);
                for p in &mut self.partitions {
                    p.set_share((0.0, 0.0), &s, now);
                }
                self.mode = mode;
                self.apply_on_demand_ceiling(now);
            }
        }
        self.mode = mode;
    }

    fn apply_on_demand_ceiling(&mut self, now: Millis) {
        let s = self.settings.clone();
        let read = (2.0 * self.peak_read).min(s.table_max_read);
        let write = (2.0 * self.peak_write).min(s.table_max_write);
        self.table_read.reshape(read, read, now);
        self.table_write.reshape(write, write, now);
        while ((self.partitions.len() as f64) * s.partition_write_max < write
            || (self.partitions.len() as f64) * s.partition_read_max < read)
            && self.partitions.len() * 2 <= MAX_PARTITIONS
        {
            self.double(now);
        }
    }

    fn partition_end(&self, idx: usize) -> u128 {
        self.partitions.get(idx + 1).map(|p| p.start).unwrap_or(u128::MAX)
    }

    /// Splits every partition at its midpoint.
    fn double(&mut self, now: Millis) {
        let n = self.partitions.len();
        for idx in (0..n).rev() {
            let start = self.partitions[idx].start;
            let end = self.partition_end(idx);
            self.split(idx, start + (end - start) / 2, SplitReason::Throughput, now);
        }
    }

    /// Splits partition `idx` at `at` (which must lie inside its range).
    /// Each child gets the full per-partition maximum and half the parent's
    /// provisioned share and banked burst (A4).
    fn split(&mut self, idx: usize, at: u128, reason: SplitReason, now: Millis) {
        let end = self.partition_end(idx);
        if self.partitions.len() >= MAX_PARTITIONS || at <= self.partitions[idx].start || at >= end {
            return;
        }
        let s = self.settings.clone();
        let parent = &mut self.partitions[idx];
        parent.read_alloc.refill(now);
        parent.write_alloc.refill(now);
        let share = (parent.share_read / 2.0, parent.share_write / 2.0);
        let banked = (parent.read_alloc.tokens().max(0.0) / 2.0, parent.write_alloc.tokens().max(0.0) / 2.0);
        let start = parent.start;
        let size = parent.size_bytes / 2;
        let mut left = Partition::new(start, &s, share, banked, now);
        let mut right = Partition::new(at, &s, share, banked, now);
        left.size_bytes = size;
        right.size_bytes = size;
        self.partitions[idx] = left;
        self.partitions.insert(idx + 1, right);
        let event = SplitEvent { at: now, reason, start, split_at: at, partitions_after: self.partitions.len() };
        self.metrics.push_split(event);
    }

    /// Advances the model to `now`: closes finished seconds, updates heat
    /// and on-demand peaks, and performs the splits they call for.
    pub fn tick(&mut self, now: Millis) {
        let second = now.0 / 1000;
        if second <= self.current.second {
            return;
        }
        let gap = second - self.current.second;
        let replay = gap.min(MAX_REPLAYED_SECONDS);
        for _ in 0..replay {
            let closing = self.current.second;
            self.close_second(closing, Millis((closing + 1) * 1000));
        }
        self.current = SecondMetrics::new(second, self.partitions.len());
    }

    fn close_second(&mut self, second: u64, end: Millis) {
        let mut done = std::mem::replace(&mut self.current, SecondMetrics::new(second + 1, self.partitions.len()));
        done.second = second;
        done.partition_count = self.partitions.len();
        let s = self.settings.clone();
        let mut to_split: Vec<(usize, u128)> = Vec::new();
        for (idx, p) in self.partitions.iter_mut().enumerate() {
            if p.sec_read > 0.0 || p.sec_write > 0.0 || p.sec_throttled > 0 {
                done.partitions.push(PartitionSecond {
                    start: p.start,
                    read_units: p.sec_read,
                    write_units: p.sec_write,
                    throttled_items: p.sec_throttled,
                });
            }
            let hot = p.sec_read >= s.heat_threshold * s.partition_read_max
                || p.sec_write >= s.heat_threshold * s.partition_write_max;
            p.sec_read = 0.0;
            p.sec_write = 0.0;
            p.sec_throttled = 0;
            if !hot {
                if p.heat.hot_seconds > 0 {
                    p.heat.reset();
                }
                continue;
            }
            p.heat.hot_seconds += 1;
            if p.heat.hot_seconds < s.heat_seconds {
                continue;
            }
            if let Some(at) = heat_split_point(&p.heat, &s) {
                to_split.push((idx, at));
            }
            p.heat.reset();
        }
        for (idx, at) in to_split.into_iter().rev() {
            self.split(idx, at, SplitReason::Heat, end);
        }
        // On-demand: sustained traffic becomes the new peak (A9).
        self.recent.push_back((done.read_units, done.write_units));
        while self.recent.len() as u64 > s.peak_sustain_seconds.max(1) {
            self.recent.pop_front();
        }
        if self.mode == Mode::OnDemand && self.recent.len() as u64 >= s.peak_sustain_seconds.max(1) {
            let n = self.recent.len() as f64;
            let read = self.recent.iter().map(|r| r.0).sum::<f64>() / n;
            let write = self.recent.iter().map(|r| r.1).sum::<f64>() / n;
            if read > self.peak_read || write > self.peak_write {
                self.peak_read = self.peak_read.max(read);
                self.peak_write = self.peak_write.max(write);
                self.apply_on_demand_ceiling(end);
            }
        }
        self.metrics.push_second(done);
    }
}

/// Where to split a hot partition, or None when a split would not help:
/// one key carries the heat, or the keys arrive in increasing order.
fn heat_split_point(heat: &Heat, s: &CapacitySettings) -> Option<u128> {
    let total: f64 = heat.keys.values().sum();
    if total <= 0.0 || heat.keys.len() < 2 {
        return None;
    }
    let top = heat.keys.values().cloned().fold(0.0, f64::max);
    if top / total >= s.single_key_share {
        return None;
    }
    if heat.ordered > 0 && heat.increasing as f64 / heat.ordered as f64 >= s.sequential_share {
        return None;
    }
    // The weighted median of the keys seen: half the heat on each side.
    let mut keys: Vec<(u128, f64)> = heat.keys.iter().map(|(k, v)| (*k, *v)).collect();
    keys.sort_by_key(|a| a.0);
    let mut acc = 0.0;
    for (i, (_, w)) in keys.iter().enumerate() {
        acc += w;
        if acc >= total / 2.0 {
            // Split just above this key, so it stays left and the next
            // key starts the right half.
            return keys.get(i + 1).map(|(k, _)| *k).or(Some(keys[i].0));
        }
    }
    None
}
