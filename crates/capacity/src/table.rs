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
    /// Unused capacity the partition keeps beyond its maximum (A39),
    /// spent once the maximum's bucket is empty.
    read_bank: Bucket,
    write_bank: Bucket,
    /// What the partition could take when the current request of each op
    /// arrived, and which request that was ([`TableCapacity::begin_request`]).
    arrival: [(u64, Room); 2],
    share_read: f64,
    share_write: f64,
    size_bytes: u64,
    sec_read: f64,
    sec_write: f64,
    sec_throttled: u64,
    heat: Heat,
}

/// Whether a partition had tokens when a request arrived: under its
/// maximum (or its bank), and in its provisioned allocation.
#[derive(Clone, Copy, Debug, Default)]
struct Room {
    hard: bool,
    own: bool,
}

/// Tokens below this count as none (float dust).
const EPSILON: f64 = 1e-9;

/// Whether a bucket backed by a bank admits a request now (A39): the
/// bucket has tokens, or it is not in debt and the bank has some.
fn has_room(bucket: &Bucket, bank: &Bucket) -> bool {
    let tokens = bucket.tokens();
    tokens > EPSILON || (tokens > -EPSILON && bank.tokens() > EPSILON)
}

/// Charges `units` to what `bucket` holds, then to `bank`, and the rest as
/// a debt on `bucket`, repaid by its refill before it admits again.
fn charge(bucket: &mut Bucket, bank: &mut Bucket, units: f64) {
    let from_bucket = bucket.tokens().max(0.0).min(units);
    bucket.take(from_bucket);
    let rest = units - from_bucket;
    let from_bank = bank.tokens().max(0.0).min(rest);
    bank.take(from_bank);
    bucket.take(rest - from_bank);
}

impl Partition {
    fn new(start: u128, s: &CapacitySettings, share: (f64, f64), banked: Banked, now: Millis) -> Partition {
        let bank_cap =
            (s.partition_read_max * s.partition_bank_seconds, s.partition_write_max * s.partition_bank_seconds);
        let bank_rate = (bank_cap.0 / s.burst_seconds, bank_cap.1 / s.burst_seconds);
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
            read_alloc: Bucket::new(share.0, share.0 * s.burst_seconds, banked.alloc.0, now),
            write_alloc: Bucket::new(share.1, share.1 * s.burst_seconds, banked.alloc.1, now),
            read_bank: Bucket::new(bank_rate.0, bank_cap.0, banked.bank.map_or(bank_cap.0, |b| b.0), now),
            write_bank: Bucket::new(bank_rate.1, bank_cap.1, banked.bank.map_or(bank_cap.1, |b| b.1), now),
            arrival: [(0, Room::default()); 2],
            share_read: share.0,
            share_write: share.1,
            size_bytes: 0,
            sec_read: 0.0,
            sec_write: 0.0,
            sec_throttled: 0,
            heat: Heat::default(),
        }
    }

    fn alloc(&mut self, op: Op) -> &mut Bucket {
        match op {
            Op::Read => &mut self.read_alloc,
            Op::Write => &mut self.write_alloc,
        }
    }

    /// The partition's maximum and the bank behind it.
    fn hard(&mut self, op: Op) -> (&mut Bucket, &mut Bucket) {
        match op {
            Op::Read => (&mut self.read_max, &mut self.read_bank),
            Op::Write => (&mut self.write_max, &mut self.write_bank),
        }
    }

    /// What the partition can take for the request `epoch` of `op`: read
    /// from its buckets the first time that request touches it, then kept,
    /// so that every item of one request sees the partition as the request
    /// found it (a batch's items reach the partition together).
    fn room(&mut self, op: Op, epoch: u64, now: Millis) -> Room {
        let slot = op_slot(op);
        if self.arrival[slot].0 != epoch {
            let (max, bank) = self.hard(op);
            max.refill(now);
            bank.refill(now);
            let hard = has_room(max, bank);
            let alloc = self.alloc(op);
            alloc.refill(now);
            self.arrival[slot] = (epoch, Room { hard, own: alloc.tokens() > EPSILON });
        }
        self.arrival[slot].1
    }

    fn set_share(&mut self, share: (f64, f64), s: &CapacitySettings, now: Millis) {
        self.share_read = share.0;
        self.share_write = share.1;
        self.read_alloc.reshape(share.0, share.0 * s.burst_seconds, now);
        self.write_alloc.reshape(share.1, share.1 * s.burst_seconds, now);
    }
}

/// Tokens a new partition starts with: its provisioned allocation's, and
/// its banks' (None: full, as on a new table; after a split, half of what
/// the parent held).
#[derive(Clone, Copy, Debug)]
struct Banked {
    alloc: (f64, f64),
    bank: Option<(f64, f64)>,
}

fn op_slot(op: Op) -> usize {
    match op {
        Op::Read => 0,
        Op::Write => 1,
    }
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
    /// On-demand: the unused capacity the table has banked behind its
    /// ceiling (A39), empty for a new table. Unused when provisioned.
    table_bank_read: Bucket,
    table_bank_write: Bucket,
    peak_read: f64,
    peak_write: f64,
    max_provisioned: (f64, f64),
    recent: VecDeque<(f64, f64)>,
    current: SecondMetrics,
    metrics: Metrics,
    /// On-demand maximums the table's owner set (`OnDemandThroughput`):
    /// one second's bucket each, None for no maximum.
    on_demand_max: [Option<Bucket>; 2],
    /// The current request of each op (see [`TableCapacity::begin_request`]).
    epoch: [u64; 2],
    /// Whether the table-level bucket, and the on-demand maximum's, had
    /// tokens when that request arrived.
    table_arrival: [(u64, bool, bool); 2],
}

/// A table's ceiling bucket and the bank behind it, new, for `rate` units
/// per second. Provisioned: a pool of one second that starts empty and no
/// bank. On-demand: a bucket of `on_demand_burst_seconds` of the ceiling,
/// starting full, and a bank of `on_demand_bank_seconds` that the table
/// fills by leaving capacity unused (A39), starting empty.
fn table_buckets(mode: Mode, rate: f64, s: &CapacitySettings, now: Millis) -> (Bucket, Bucket) {
    let (cap, bank) = table_shape(mode, rate, s);
    let initial = match mode {
        Mode::Provisioned { .. } => 0.0,
        Mode::OnDemand => cap,
    };
    (Bucket::new(rate, cap, initial, now), Bucket::new(bank / s.burst_seconds, bank, 0.0, now))
}

/// (bucket capacity, bank capacity) of a table's ceiling of `rate`.
fn table_shape(mode: Mode, rate: f64, s: &CapacitySettings) -> (f64, f64) {
    match mode {
        Mode::Provisioned { .. } => (rate, 0.0),
        Mode::OnDemand => (rate * s.on_demand_burst_seconds, rate * s.on_demand_bank_seconds),
    }
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
    /// (partition index, units, paid from the partition's own allocation
    /// rather than borrowed from the table) in partition order.
    per_partition: Vec<(usize, f64, bool)>,
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
        let partitions = equal_starts(n)
            .into_iter()
            .map(|start| Partition::new(start, &settings, share, Banked { alloc: share, bank: None }, now))
            .collect();
        let max_provisioned = match mode {
            Mode::OnDemand => (0.0, 0.0),
            Mode::Provisioned { read, write } => (read, write),
        };
        let second = now.0 / 1000;
        // Provisioned: the table-level pool only lends to hot partitions
        // (adaptive capacity) and starts empty, so a new table's first
        // second is not counted twice (its partitions hold it).
        // Provisioned: the table-level pool only lends to hot partitions
        // (adaptive capacity) and starts empty, so a new table's first
        // second is not counted twice (its partitions hold it). On-demand:
        // the ceiling's bucket starts full and its bank empty.
        let (read_bucket, read_bank) = table_buckets(mode, table.0, &settings, now);
        let (write_bucket, write_bank) = table_buckets(mode, table.1, &settings, now);
        TableCapacity {
            table_read: read_bucket,
            table_write: write_bucket,
            table_bank_read: read_bank,
            table_bank_write: write_bank,
            peak_read: settings.on_demand_initial_read / 2.0,
            peak_write: settings.on_demand_initial_write / 2.0,
            max_provisioned,
            recent: VecDeque::new(),
            current: SecondMetrics::new(second, n),
            metrics: Metrics::default(),
            on_demand_max: [None, None],
            epoch: [1, 1],
            table_arrival: [(0, false, true); 2],
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

    /// An on-demand table's current ceiling, (read, write) units per
    /// second, which follows its sustained peaks; None when provisioned.
    pub fn on_demand_ceiling(&self) -> Option<(f64, f64)> {
        match self.mode {
            Mode::OnDemand => Some((self.table_read.rate(), self.table_write.rate())),
            Mode::Provisioned { .. } => None,
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

    /// The table's ceiling (or pool) bucket of `op` and its bank.
    fn table_bucket(&mut self, op: Op) -> (&mut Bucket, &mut Bucket) {
        match op {
            Op::Read => (&mut self.table_read, &mut self.table_bank_read),
            Op::Write => (&mut self.table_write, &mut self.table_bank_write),
        }
    }

    /// Shapes the table-level buckets for the current mode and `(read,
    /// write)` units per second, keeping what they hold (clamped).
    fn reshape_table(&mut self, read: f64, write: f64, now: Millis) {
        let burst = self.settings.burst_seconds;
        let (read_cap, read_bank) = table_shape(self.mode, read, &self.settings);
        let (write_cap, write_bank) = table_shape(self.mode, write, &self.settings);
        self.table_read.reshape(read, read_cap, now);
        self.table_write.reshape(write, write_cap, now);
        self.table_bank_read.reshape(read_bank / burst, read_bank, now);
        self.table_bank_write.reshape(write_bank / burst, write_bank, now);
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
    /// each admission, with no other call on them in between. The items are
    /// one request of their own.
    pub fn check_all(&mut self, op: Op, items: &[(u128, f64)], now: Millis) -> Result<Admission, Throttle> {
        self.begin_request(op);
        self.check_in_request(op, items, now)
    }

    /// Starts a request of `op` whose items are checked one by one with
    /// [`TableCapacity::check_in_request`] (a batch): every item sees each
    /// partition, and the table, as they were when the request arrived.
    /// This is A39's admission: a request is admitted when the partition
    /// has tokens and is charged its actual units, so one large request is
    /// not refused; the debt is repaid before the partition admits again.
    pub fn begin_request(&mut self, op: Op) {
        self.epoch[op_slot(op)] += 1;
    }

    /// Checks items of the request begun by [`TableCapacity::begin_request`]
    /// against the state it arrived to; consumes nothing.
    pub fn check_in_request(&mut self, op: Op, items: &[(u128, f64)], now: Millis) -> Result<Admission, Throttle> {
        self.tick(now);
        let slot = op_slot(op);
        let epoch = self.epoch[slot];
        let Admission { mut per_partition, total, .. } = self.unchecked(op, items);
        let table_max = self.settings.table_max(op);
        let adaptive = self.settings.adaptive_capacity;
        let mode = self.mode;
        if self.table_arrival[slot].0 != epoch {
            let under_max = match self.on_demand_max[slot].as_mut() {
                Some(max) => {
                    max.refill(now);
                    max.tokens() > EPSILON
                }
                None => true,
            };
            let (bucket, bank) = self.table_bucket(op);
            bucket.refill(now);
            bank.refill(now);
            let room = match mode {
                Mode::OnDemand => has_room(bucket, bank),
                Mode::Provisioned { .. } => bucket.tokens() > EPSILON,
            };
            self.table_arrival[slot] = (epoch, room, under_max);
        }
        let table_room = self.table_arrival[slot].1;
        let table_rate = self.table_bucket(op).0.rate();
        let mut refusal: Option<Throttle> = None;
        if mode == Mode::OnDemand && !self.table_arrival[slot].2 {
            refusal = Some(Throttle { op, kind: LimitKind::MaxOnDemand });
        }
        if refusal.is_none() && mode == Mode::OnDemand && !table_room {
            let kind = if table_rate >= table_max { LimitKind::AccountLimit } else { LimitKind::KeyRange };
            refusal = Some(Throttle { op, kind });
        }
        if refusal.is_none() {
            for (idx, _, own) in per_partition.iter_mut() {
                let room = self.partitions[*idx].room(op, epoch, now);
                if !room.hard {
                    refusal = Some(Throttle { op, kind: LimitKind::KeyRange });
                    break;
                }
                if let Mode::Provisioned { .. } = mode {
                    // Beyond its own allocation a partition borrows the
                    // table's unused capacity (adaptive capacity, A17).
                    *own = room.own;
                    if !(room.own || (adaptive && table_room)) {
                        refusal = Some(Throttle { op, kind: LimitKind::Provisioned });
                        break;
                    }
                }
            }
        }
        if let Some(t) = refusal {
            for &(idx, _, _) in &per_partition {
                self.partitions[idx].sec_throttled += 1;
            }
            let first = per_partition.first().map_or(0, |&(idx, _, _)| self.partitions[idx].start);
            self.metrics.note_throttle(now, t.reason(), first, items.len() as u64);
            match op {
                Op::Read => self.current.throttled_read_items += items.len() as u64,
                Op::Write => self.current.throttled_write_items += items.len() as u64,
            }
            self.metrics.total_throttled_items += items.len() as u64;
            return Err(t);
        }
        Ok(Admission { op, per_partition, total, items: items.to_vec() })
    }

    /// `items` summed per partition, in partition order, as an admission
    /// that nothing has checked (each partition's units counted as its own).
    fn unchecked(&self, op: Op, items: &[(u128, f64)]) -> Admission {
        let mut per_partition: Vec<(usize, f64, bool)> = Vec::with_capacity(items.len());
        for &(hash, units) in items {
            let idx = self.index_of(hash);
            match per_partition.iter_mut().find(|(i, _, _)| *i == idx) {
                Some((_, u, _)) => *u += units,
                None => per_partition.push((idx, units, true)),
            }
        }
        let total = per_partition.iter().map(|(_, u, _)| u).sum();
        Admission { op, per_partition, total, items: items.to_vec() }
    }

    /// Charges `items` whatever the buckets hold: the units of work that
    /// was done although it was not admitted as a write (a transaction
    /// cancelled by its conditions is charged, A34, and is answered with
    /// its conditions' failure, never with a throttle).
    pub fn charge(&mut self, op: Op, items: &[(u128, f64)], now: Millis) {
        self.tick(now);
        for &(hash, _) in items {
            let idx = self.index_of(hash);
            let p = &mut self.partitions[idx];
            let (max, bank) = p.hard(op);
            max.refill(now);
            bank.refill(now);
            p.alloc(op).refill(now);
        }
        let (bucket, bank) = self.table_bucket(op);
        bucket.refill(now);
        bank.refill(now);
        let admission = self.unchecked(op, items);
        self.consume(admission);
    }

    /// Consumes what [`TableCapacity::check_all`] admitted.
    pub fn consume(&mut self, admission: Admission) {
        let Admission { op, per_partition, total, items } = admission;
        let mode = self.mode;
        let partition_max = self.settings.partition_max(op);
        for &(idx, units, own) in &per_partition {
            let p = &mut self.partitions[idx];
            let (max, bank) = p.hard(op);
            charge(max, bank, units);
            if let Mode::Provisioned { .. } = mode {
                if own {
                    p.alloc(op).take(units);
                }
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
        self.count_consumed(op, total);
    }

    /// Charges `units` consumed to the table level and counts them.
    fn count_consumed(&mut self, op: Op, units: f64) {
        let mode = self.mode;
        if let (Mode::OnDemand, Some(max)) = (mode, self.on_demand_max[op_slot(op)].as_mut()) {
            max.take(units);
        }
        let (bucket, bank) = self.table_bucket(op);
        match mode {
            Mode::OnDemand => charge(bucket, bank, units),
            Mode::Provisioned { .. } => bucket.take(units),
        }
        match op {
            Op::Read => {
                self.current.read_units += units;
                self.metrics.total_read_units += units;
            }
            Op::Write => {
                self.current.write_units += units;
                self.metrics.total_write_units += units;
            }
        }
    }

    /// Takes up to `budget` units of `op` that the table has to spare at
    /// `now`, for background work that yields to requests (a GSI's
    /// backfill): spread evenly over the partitions, each giving only what
    /// its buckets hold, never going into debt. Returns the units taken,
    /// which count as consumed in the metrics.
    pub fn take_spare(&mut self, op: Op, budget: f64, now: Millis) -> f64 {
        self.tick(now);
        if budget <= 0.0 {
            return 0.0;
        }
        let mode = self.mode;
        let (table, _) = self.table_bucket(op);
        table.refill(now);
        let mut left = match mode {
            Mode::OnDemand => budget.min(table.tokens().max(0.0)),
            Mode::Provisioned { .. } => budget,
        };
        let n = self.partitions.len();
        let mut taken = 0.0;
        for (i, p) in self.partitions.iter_mut().enumerate() {
            // An even share of what is left; a partition that has less
            // leaves the rest to those after it. Banks are left alone.
            let share = left / (n - i) as f64;
            let (max, _) = p.hard(op);
            max.refill(now);
            let mut spare = max.tokens().max(0.0);
            if let Mode::Provisioned { .. } = mode {
                p.alloc(op).refill(now);
                spare = spare.min(p.alloc(op).tokens().max(0.0));
            }
            let t = share.min(spare);
            p.hard(op).0.take(t);
            if let Mode::Provisioned { .. } = mode {
                p.alloc(op).take(t);
            }
            match op {
                Op::Read => p.sec_read += t,
                Op::Write => p.sec_write += t,
            }
            left -= t;
            taken += t;
        }
        self.count_consumed(op, taken);
        taken
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

    /// Sets the on-demand maximums (`OnDemandThroughput`, A13): read and
    /// write units per second, None for no maximum. Traffic above one is
    /// throttled with `MaxOnDemandThroughputExceeded`; it applies while the
    /// table is on demand.
    pub fn set_on_demand_max(&mut self, read: Option<f64>, write: Option<f64>, now: Millis) {
        self.tick(now);
        for (slot, max) in [read, write].into_iter().enumerate() {
            self.on_demand_max[slot] = max.map(|m| Bucket::new(m, m, m, now));
        }
    }

    /// Pre-warms the table (`WarmThroughput`, A14): it takes at least
    /// `read` and `write` units per second at once from now on. On demand
    /// the ceiling rises (a previous peak of half of it); provisioned, the
    /// partitions that much throughput needs are made now. Never lowers.
    pub fn prewarm(&mut self, read: f64, write: f64, now: Millis) {
        self.tick(now);
        let s = self.settings.clone();
        match self.mode {
            Mode::OnDemand => {
                let read = read.min(s.table_max_read);
                let write = write.min(s.table_max_write);
                if read / 2.0 > self.peak_read || write / 2.0 > self.peak_write {
                    self.peak_read = self.peak_read.max(read / 2.0);
                    self.peak_write = self.peak_write.max(write / 2.0);
                    self.apply_on_demand_ceiling(now);
                }
            }
            Mode::Provisioned { .. } => {
                let needed = provisioned_partitions(read, write, &s);
                while self.partitions.len() < needed && self.partitions.len() * 2 <= MAX_PARTITIONS {
                    self.double(now);
                }
            }
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
                self.mode = mode;
                self.reshape_table(read, write, now);
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
    }

    fn apply_on_demand_ceiling(&mut self, now: Millis) {
        let s = self.settings.clone();
        let read = (2.0 * self.peak_read).min(s.table_max_read);
        let write = (2.0 * self.peak_write).min(s.table_max_write);
        self.reshape_table(read, write, now);
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
        parent.read_bank.refill(now);
        parent.write_bank.refill(now);
        let bank = (parent.read_bank.tokens().max(0.0) / 2.0, parent.write_bank.tokens().max(0.0) / 2.0);
        let banked = Banked { alloc: banked, bank: Some(bank) };
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
