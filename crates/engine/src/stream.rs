//! DynamoDB Streams (S98-S116): a table's change records, kept in memory
//! per stream, appended by the write funnel's commit in the same step as
//! the items they describe, and read through ListStreams, DescribeStream,
//! GetShardIterator and GetRecords.
//!
//! Shards follow the table's partitions, as in DynamoDB: one open shard per
//! partition; when the capacity model splits a partition, its shard is
//! closed (EndingSequenceNumber) and two children open with it as their
//! ParentShardId, and an item's records go to the open shard of its key
//! hash. Sequence numbers increase across the whole stream, so a consumer
//! reading each parent before its children sees every item's records once
//! and in order. Every shard closes when the stream is disabled. Records
//! are kept 24 hours of modelled time and at most [`MAX_STREAM_RECORDS`]
//! per stream; reading before the oldest kept record of a shard is a
//! TrimmedDataAccessException.

use std::collections::VecDeque;
use std::sync::Arc;

use dynaburst_model::time::UtcTime;
use dynaburst_model::{item_size, Item};

use crate::engine::Engine;
use crate::error::EngineError;
use crate::table::{KeySchema, Table, TableData};
use crate::types::Millis;

/// Records one stream keeps at most (older ones are trimmed).
pub const MAX_STREAM_RECORDS: usize = 1_000_000;
/// Bytes of records one stream keeps at most (older ones are trimmed).
pub const MAX_STREAM_BYTES: usize = 256 * 1024 * 1024;
/// How long records are kept (S107: 24 hours).
pub const STREAM_RETENTION_MS: u64 = 24 * 60 * 60 * 1000;
/// How long a shard iterator stays valid (S107: 15 minutes).
pub const ITERATOR_LIFETIME_MS: u64 = 15 * 60 * 1000;
/// Records one GetRecords returns at most (S106).
pub const MAX_GET_RECORDS: usize = 1000;
/// Bytes of records one GetRecords returns at most (S106).
pub const MAX_GET_RECORDS_BYTES: usize = 1024 * 1024;
/// Shards DescribeStream returns per page at most (S104: Limit 1-100).
pub const MAX_DESCRIBE_SHARDS: usize = 100;
/// Streams ListStreams returns per page at most (S103).
pub const MAX_LIST_STREAMS: usize = 100;
/// Streams of deleted tables kept at most (the oldest go first); their
/// records together are bounded as one stream's ([`MAX_RETIRED_STREAM_BYTES`],
/// [`MAX_STREAM_RECORDS`]).
pub const MAX_RETIRED_STREAMS: usize = 256;
/// Bytes of records the streams of deleted tables keep at most, together
/// (the oldest streams go first).
pub const MAX_RETIRED_STREAM_BYTES: usize = MAX_STREAM_BYTES;
/// Sequence numbers are decimal strings of 21 digits (S108): this plus
/// a stream's counter.
const SEQUENCE_BASE: u128 = 100_000_000_000_000_000_000;

/// StreamViewType.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamViewType {
    KeysOnly,
    NewImage,
    OldImage,
    NewAndOldImages,
}

impl StreamViewType {
    /// DynamoDB's name.
    pub fn name(self) -> &'static str {
        match self {
            StreamViewType::KeysOnly => "KEYS_ONLY",
            StreamViewType::NewImage => "NEW_IMAGE",
            StreamViewType::OldImage => "OLD_IMAGE",
            StreamViewType::NewAndOldImages => "NEW_AND_OLD_IMAGES",
        }
    }

    fn new_image(self) -> bool {
        matches!(self, StreamViewType::NewImage | StreamViewType::NewAndOldImages)
    }

    fn old_image(self) -> bool {
        matches!(self, StreamViewType::OldImage | StreamViewType::NewAndOldImages)
    }
}

/// A table's stream setting (kept in the catalog with the table).
#[derive(Clone, Debug, PartialEq)]
pub struct StreamSetting {
    pub enabled: bool,
    pub view: StreamViewType,
    /// The latest stream's label (its creation time, ISO 8601 with
    /// milliseconds, no zone).
    pub label: String,
}

/// INSERT, MODIFY or REMOVE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventName {
    Insert,
    Modify,
    Remove,
}

impl EventName {
    /// DynamoDB's name.
    pub fn name(self) -> &'static str {
        match self {
            EventName::Insert => "INSERT",
            EventName::Modify => "MODIFY",
            EventName::Remove => "REMOVE",
        }
    }
}

/// One change record.
#[derive(Clone, Debug)]
pub struct StreamRecord {
    pub sequence: u64,
    pub event: EventName,
    pub keys: Item,
    pub new: Option<Arc<Item>>,
    pub old: Option<Arc<Item>>,
    pub at: Millis,
    /// True for a time-to-live deletion (userIdentity: the service).
    pub by_service: bool,
}

impl StreamRecord {
    /// SizeBytes: the keys and the images the view carries.
    pub fn size_bytes(&self, view: StreamViewType) -> usize {
        let mut size = item_size(&self.keys);
        if view.new_image() {
            size += self.new.as_deref().map_or(0, item_size);
        }
        if view.old_image() {
            size += self.old.as_deref().map_or(0, item_size);
        }
        size.max(1)
    }

    /// The record's images as `view` shows them: (new, old).
    pub fn images(&self, view: StreamViewType) -> (Option<&Item>, Option<&Item>) {
        (self.new.as_deref().filter(|_| view.new_image()), self.old.as_deref().filter(|_| view.old_image()))
    }
}

/// One shard: the change records of a range of the key-hash space (one
/// partition's while it is open).
#[derive(Debug)]
pub struct Shard {
    pub id: String,
    /// The shard this one was split from.
    pub parent: Option<String>,
    /// First key hash of the range (inclusive).
    pub start: u128,
    /// End of the range (exclusive); None: to the top of the hash space.
    pub end: Option<u128>,
    /// The sequence number the shard starts at (the stream's next one
    /// when it opened).
    pub first_sequence: u64,
    /// The last sequence number appended to the shard.
    pub last_sequence: Option<u64>,
    /// Set when the shard was closed (split, or the stream disabled).
    pub closed_at: Option<Millis>,
    pub records: VecDeque<StreamRecord>,
    /// The highest sequence number trimmed from the shard (0: none).
    pub trimmed_through: u64,
}

impl Shard {
    fn holds(&self, hash: u128) -> bool {
        hash >= self.start && self.end.is_none_or(|e| hash < e)
    }

    /// The first position still readable.
    fn horizon(&self) -> u64 {
        self.first_sequence.max(self.trimmed_through.saturating_add(1))
    }

    /// The sequence number range: (starting, ending once closed).
    fn range(&self) -> (u64, Option<u64>) {
        let start = self.first_sequence;
        (start, self.closed_at.map(|_| self.last_sequence.unwrap_or(start).max(start)))
    }
}

/// One stream's records, in shards that follow the table's partitions: a
/// partition split closes its shard and opens two children (S110).
#[derive(Debug)]
pub struct StreamLog {
    pub label: String,
    pub view: StreamViewType,
    pub created_at: Millis,
    /// Set when the stream was disabled: every shard is closed.
    pub closed_at: Option<Millis>,
    /// Every shard kept, parents before their children.
    pub shards: Vec<Shard>,
    /// The open shards: (first hash, position in `shards`), by hash.
    open: Vec<(u128, usize)>,
    /// Shards made so far (numbers their ids).
    made: u64,
    /// The partition count the shards last followed.
    partitions_seen: usize,
    /// The sequence number the next record gets (1 for the first).
    pub next_sequence: u64,
    /// Records and bytes of the records kept (their SizeBytes).
    pub count: usize,
    pub bytes: usize,
}

impl StreamLog {
    /// A stream with no shard yet: the first [`StreamLog::follow`] opens
    /// one per partition.
    pub(crate) fn new(label: String, view: StreamViewType, now: Millis) -> StreamLog {
        StreamLog {
            label,
            view,
            created_at: now,
            closed_at: None,
            shards: Vec::new(),
            open: Vec::new(),
            made: 0,
            partitions_seen: 0,
            next_sequence: 1,
            count: 0,
            bytes: 0,
        }
    }

    fn new_shard(&mut self, parent: Option<String>, start: u128, end: Option<u128>, now: Millis) -> Shard {
        let n = self.made;
        self.made += 1;
        // Unique within the stream: the counter through a bijection.
        let tag = (n as u32) ^ fnv32(&self.label);
        Shard {
            id: format!("shardId-{:020}-{tag:08x}", now.0),
            parent,
            start,
            end,
            first_sequence: self.next_sequence,
            last_sequence: None,
            closed_at: None,
            records: VecDeque::new(),
            trimmed_through: 0,
        }
    }

    /// Makes the open shards follow the partitions starting at `starts`
    /// (sorted): the first time, one shard per partition; then each shard
    /// whose range a partition boundary now cuts is closed, with two
    /// children split at a boundary (again, while boundaries remain
    /// inside a child). Partitions never merge, so this only splits.
    pub fn follow(&mut self, starts: &[u128], now: Millis) {
        if self.closed_at.is_some() {
            return;
        }
        if self.shards.is_empty() {
            let mut bounds: Vec<u128> = starts.to_vec();
            if bounds.first() != Some(&0) {
                bounds.insert(0, 0);
            }
            for (i, start) in bounds.iter().enumerate() {
                let shard = self.new_shard(None, *start, bounds.get(i + 1).copied(), now);
                self.shards.push(shard);
            }
        } else {
            // Bounded: each split uses up one boundary inside its shard.
            let mut i = 0;
            while i < self.shards.len() {
                let shard = &self.shards[i];
                let lo = starts.partition_point(|&s| s <= shard.start);
                let hi = starts.partition_point(|&s| shard.end.is_none_or(|e| s < e));
                if shard.closed_at.is_none() && lo < hi {
                    let at = starts[lo + (hi - lo) / 2];
                    let (id, start, end) = (shard.id.clone(), shard.start, shard.end);
                    if let Some(s) = self.shards.get_mut(i) {
                        s.closed_at = Some(now);
                    }
                    let left = self.new_shard(Some(id.clone()), start, Some(at), now);
                    let right = self.new_shard(Some(id), at, end, now);
                    self.shards.push(left);
                    self.shards.push(right);
                }
                i += 1;
            }
        }
        self.partitions_seen = starts.len();
        self.reindex();
    }

    fn reindex(&mut self) {
        self.open =
            self.shards.iter().enumerate().filter(|(_, s)| s.closed_at.is_none()).map(|(i, s)| (s.start, i)).collect();
        self.open.sort_unstable();
    }

    /// Whether the shards followed a table of `partitions` partitions.
    pub fn follows(&self, partitions: usize) -> bool {
        !self.shards.is_empty() && self.partitions_seen == partitions
    }

    /// Closes every shard (the stream was disabled).
    pub(crate) fn close(&mut self, now: Millis) {
        self.closed_at = Some(now);
        for s in &mut self.shards {
            s.closed_at.get_or_insert(now);
        }
        self.open.clear();
    }

    /// Appends a record of replacing `old` by `new` (keys of `key_schema`,
    /// key hash `hash`) to the open shard holding `hash`, unless nothing
    /// changed (S116).
    #[allow(clippy::too_many_arguments)]
    pub fn append(
        &mut self,
        key_schema: &KeySchema,
        hash: u128,
        old: Option<Arc<Item>>,
        new: Option<Arc<Item>>,
        by_service: bool,
        now: Millis,
    ) {
        if self.shards.is_empty() {
            self.follow(&[0], now);
        }
        let event = match (&old, &new) {
            (None, Some(_)) => EventName::Insert,
            (Some(o), Some(n)) if o != n => EventName::Modify,
            (Some(_), None) => EventName::Remove,
            _ => return,
        };
        let at = self.open.partition_point(|(start, _)| *start <= hash);
        let Some(&(_, idx)) = at.checked_sub(1).and_then(|a| self.open.get(a)) else { return };
        let keys = key_schema.key_item(new.as_deref().or(old.as_deref()).unwrap_or(&Item::new()));
        let sequence = self.next_sequence;
        // Only the images the view shows are kept.
        let (new, old) = (new.filter(|_| self.view.new_image()), old.filter(|_| self.view.old_image()));
        let record = StreamRecord { sequence, event, keys, new, old, at: now, by_service };
        let size = record.size_bytes(self.view);
        let Some(shard) = self.shards.get_mut(idx).filter(|s| s.holds(hash)) else { return };
        self.next_sequence += 1;
        shard.last_sequence = Some(sequence);
        shard.records.push_back(record);
        self.bytes += size;
        self.count += 1;
        self.trim(now);
    }

    /// Drops records older than the retention, and the oldest beyond the
    /// caps; forgets closed shards whose records are all gone once their
    /// retention passed.
    pub(crate) fn trim(&mut self, now: Millis) {
        let view = self.view;
        let mut dropped = (0usize, 0usize);
        for shard in &mut self.shards {
            while let Some(r) = shard.records.front().filter(|r| r.at.0 + STREAM_RETENTION_MS < now.0) {
                shard.trimmed_through = r.sequence;
                dropped = (dropped.0 + 1, dropped.1 + r.size_bytes(view));
                shard.records.pop_front();
            }
        }
        self.count = self.count.saturating_sub(dropped.0);
        self.bytes = self.bytes.saturating_sub(dropped.1);
        // Bounded: each round drops one record.
        while self.count > MAX_STREAM_RECORDS || self.bytes > MAX_STREAM_BYTES {
            let oldest = self
                .shards
                .iter_mut()
                .filter(|s| !s.records.is_empty())
                .min_by_key(|s| s.records.front().map_or(u64::MAX, |r| r.sequence));
            let Some(shard) = oldest else { break };
            let Some(r) = shard.records.pop_front() else { break };
            shard.trimmed_through = r.sequence;
            self.count = self.count.saturating_sub(1);
            self.bytes = self.bytes.saturating_sub(r.size_bytes(view));
        }
        let before = self.shards.len();
        self.shards
            .retain(|s| !(s.records.is_empty() && s.closed_at.is_some_and(|c| c.0 + STREAM_RETENTION_MS < now.0)));
        if self.shards.len() != before {
            self.reindex();
        }
    }

    fn shard(&self, id: &str) -> Option<&Shard> {
        self.shards.iter().find(|s| s.id == id)
    }
}

/// A deleted table's stream: DynamoDB keeps it, DISABLED with every shard
/// closed, readable for 24 hours after the DeleteTable, listed by
/// ListStreams under the table's name beside a re-created table's streams
/// (S102; ack-api-quirks DDB-TABLE-378 and DDB-TABLE-386).
#[derive(Debug)]
pub struct RetiredStream {
    pub table_name: String,
    pub table_arn: String,
    pub key_schema: KeySchema,
    pub log: StreamLog,
}

impl RetiredStream {
    fn arn(&self) -> String {
        format!("{}/stream/{}", self.table_arn, self.log.label)
    }
}

/// The streams of deleted tables, oldest deletion first, bounded by
/// [`MAX_RETIRED_STREAMS`] and [`MAX_RETIRED_STREAM_BYTES`].
#[derive(Debug, Default)]
pub struct RetiredStreams {
    streams: VecDeque<RetiredStream>,
}

impl RetiredStreams {
    /// Keeps `stream`, dropping those past their retention and the oldest
    /// beyond the bounds.
    fn keep(&mut self, stream: RetiredStream, now: Millis) {
        self.streams.push_back(stream);
        self.expire(now);
        while self.streams.len() > MAX_RETIRED_STREAMS
            || self.streams.iter().map(|s| s.log.bytes).sum::<usize>() > MAX_RETIRED_STREAM_BYTES
            || self.streams.iter().map(|s| s.log.count).sum::<usize>() > MAX_STREAM_RECORDS
        {
            if self.streams.pop_front().is_none() {
                break;
            }
        }
    }

    /// Drops the streams whose retention passed (their records are gone).
    fn expire(&mut self, now: Millis) {
        self.streams.retain(|s| s.log.closed_at.is_none_or(|c| c.0 + STREAM_RETENTION_MS >= now.0));
    }
}

/// The 21-digit decimal form of a stream's sequence number.
pub fn sequence_text(sequence: u64) -> String {
    (SEQUENCE_BASE + u128::from(sequence)).to_string()
}

fn parse_sequence(text: &str) -> Option<u64> {
    let n: u128 = text.parse().ok()?;
    u64::try_from(n.checked_sub(SEQUENCE_BASE)?).ok()
}

fn fnv32(text: &str) -> u32 {
    text.bytes().fold(0x811c_9dc5u32, |h, b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193))
}

/// `now` as a stream label: ISO 8601 with milliseconds, no zone (S101).
pub fn label_of(now: Millis) -> String {
    UtcTime::from_unix_ms(now.0 as i64).iso8601_millis()
}

/// ShardIteratorType.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IteratorType {
    TrimHorizon,
    Latest,
    AtSequenceNumber,
    AfterSequenceNumber,
}

/// One stream, as ListStreams lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamSummary {
    pub arn: String,
    pub table_name: String,
    pub label: String,
}

/// One shard as DescribeStream shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct ShardDescription {
    pub shard_id: String,
    pub parent: Option<String>,
    pub starting_sequence: String,
    /// Set when the shard is closed.
    pub ending_sequence: Option<String>,
}

/// DescribeStream's answer: one page of the shards, parents before
/// their children.
#[derive(Clone, Debug)]
pub struct StreamDescription {
    pub summary: StreamSummary,
    pub status: &'static str,
    pub view: StreamViewType,
    pub created_at: Millis,
    pub key_schema: KeySchema,
    pub shards: Vec<ShardDescription>,
    /// The last shard of the page when more follow.
    pub last_evaluated_shard: Option<String>,
}

/// GetRecords' answer: the records, the stream's view, and the next
/// iterator (None once a closed shard is read to its end).
#[derive(Clone, Debug)]
pub struct RecordsPage {
    pub records: Vec<StreamRecord>,
    pub view: StreamViewType,
    pub next_iterator: Option<String>,
}

/// A stream ARN's table name and label.
fn parse_stream_arn(arn: &str) -> Option<(&str, &str)> {
    let (table_arn, label) = arn.rsplit_once("/stream/")?;
    let (_, name) = table_arn.rsplit_once(":table/")?;
    (!name.is_empty() && !label.is_empty()).then_some((name, label))
}

fn stream_not_found(arn: &str) -> EngineError {
    EngineError::ResourceNotFound(format!("Requested resource not found: Stream: {arn} not found"))
}

impl Engine {
    /// Runs `f` on the stream `arn` names (trimmed to `now`, its shards
    /// following the table's partitions) with its table's name and key
    /// schema: a live table's stream, else a deleted table's.
    fn with_stream<R>(
        &self,
        arn: &str,
        now: Millis,
        f: impl FnOnce(&mut StreamLog, &str, &KeySchema) -> Result<R, EngineError>,
    ) -> Result<R, EngineError> {
        let (name, label) =
            parse_stream_arn(arn).ok_or_else(|| EngineError::validation(format!("Invalid StreamArn: {arn}")))?;
        let live = self.tables.read().get(name).cloned();
        if let Some(table) = live.filter(|t| format!("{}/stream/{label}", t.arn) == arn) {
            let mut data = table.data.write();
            if let Some(log) = data.streams.iter_mut().find(|l| l.label == label) {
                log.trim(now);
                follow_partitions(log, &table, now);
                return f(log, &table.name, &table.key_schema);
            }
        }
        let mut retired = self.retired_streams.lock();
        retired.expire(now);
        let stream = retired.streams.iter_mut().find(|s| s.arn() == arn).ok_or_else(|| stream_not_found(arn))?;
        stream.log.trim(now);
        f(&mut stream.log, &stream.table_name, &stream.key_schema)
    }

    /// Whether `arn` names a deleted table's stream still kept.
    pub(crate) fn retired_stream_exists(&self, arn: &str, now: Millis) -> bool {
        let mut retired = self.retired_streams.lock();
        retired.expire(now);
        retired.streams.iter().any(|s| s.arn() == arn)
    }

    /// Keeps the streams of `table`, just deleted, readable (each closed:
    /// DISABLED) until their retention passes. Called with the table map's
    /// lock held, and done under the table's data lock, so that no reader
    /// finds the stream gone in between.
    pub(crate) fn retire_streams(&self, table: &Table, now: Millis) {
        let mut data = table.data.write();
        let mut retired = self.retired_streams.lock();
        for mut log in std::mem::take(&mut data.streams) {
            if log.closed_at.is_none() {
                follow_partitions(&mut log, table, now);
                log.close(now);
            }
            let stream = RetiredStream {
                table_name: table.name.clone(),
                table_arn: table.arn.clone(),
                key_schema: table.key_schema.clone(),
                log,
            };
            retired.keep(stream, now);
        }
    }

    /// A label for a stream of the table `table_arn` enabled at `now` (its time, S101),
    /// later by a millisecond or more when a stream of the table (live, or
    /// kept from a deleted table of the name) already has it: the label
    /// makes the stream's ARN.
    fn fresh_label(&self, table_arn: &str, logs: &[StreamLog], now: Millis) -> String {
        let retired = self.retired_streams.lock();
        let taken = |label: &str| {
            logs.iter().any(|l| l.label == label)
                || retired.streams.iter().any(|s| s.table_arn == table_arn && s.log.label == label)
        };
        // Bounded: each step passes one label in use.
        let mut at = now.0;
        loop {
            let label = label_of(Millis(at));
            if !taken(&label) {
                return label;
            }
            at += 1;
        }
    }

    /// ListStreams: the streams of `table_name` (or of every table), in
    /// table name then creation order after `start`: a deleted table's
    /// streams (until their retention passes) before those of the table
    /// now of that name. A name with neither is ResourceNotFound.
    pub fn list_streams(
        &self,
        table_name: Option<&str>,
        limit: usize,
        start: Option<&str>,
        now: Millis,
    ) -> Result<(Vec<StreamSummary>, Option<String>), EngineError> {
        let summary = |table_name: &str, table_arn: &str, label: &str| StreamSummary {
            arn: format!("{table_arn}/stream/{label}"),
            table_name: table_name.to_string(),
            label: label.to_string(),
        };
        // By table name: its deleted incarnations' streams, then its own.
        let mut by_name: std::collections::BTreeMap<String, Vec<StreamSummary>> = std::collections::BTreeMap::new();
        {
            let mut retired = self.retired_streams.lock();
            retired.expire(now);
            for s in &retired.streams {
                by_name.entry(s.table_name.clone()).or_default().push(summary(
                    &s.table_name,
                    &s.table_arn,
                    &s.log.label,
                ));
            }
        }
        let tables: Vec<Arc<Table>> = match table_name {
            Some(n) => match self.table_named(n) {
                Ok(t) => vec![t],
                Err(e) => {
                    let name = self.resolve_name(n)?;
                    if !by_name.contains_key(name) {
                        return Err(e);
                    }
                    Vec::new()
                }
            },
            None => self.tables.read().values().cloned().collect(),
        };
        for table in tables {
            let data = table.data.read();
            let listed = by_name.entry(table.name.clone()).or_default();
            listed.extend(data.streams.iter().map(|log| summary(&table.name, &table.arn, &log.label)));
        }
        if let Some(n) = table_name {
            let name = self.resolve_name(n)?.to_string();
            by_name.retain(|k, _| *k == name);
        }
        let all: Vec<StreamSummary> = by_name.into_values().flatten().collect();
        let skip = match start {
            Some(s) => all.iter().position(|x| x.arn == s).map_or(all.len(), |p| p + 1),
            None => 0,
        };
        let page: Vec<StreamSummary> = all.iter().skip(skip).take(limit.min(MAX_LIST_STREAMS)).cloned().collect();
        let last = (skip + page.len() < all.len()).then(|| page.last().map(|s| s.arn.clone())).flatten();
        Ok((page, last))
    }

    /// DescribeStream: up to `limit` shards after `start` (a shard id),
    /// only the children of `children_of` when given (ShardFilter
    /// CHILD_SHARDS).
    pub fn describe_stream(
        &self,
        arn: &str,
        limit: usize,
        start: Option<&str>,
        children_of: Option<&str>,
        now: Millis,
    ) -> Result<StreamDescription, EngineError> {
        self.with_stream(arn, now, |log, table_name, key_schema| {
            let listed: Vec<&Shard> =
                log.shards.iter().filter(|s| children_of.is_none_or(|p| s.parent.as_deref() == Some(p))).collect();
            let skip = match start {
                Some(id) => listed.iter().position(|s| s.id == id).map_or(listed.len(), |p| p + 1),
                None => 0,
            };
            let take = limit.clamp(1, MAX_DESCRIBE_SHARDS);
            let shards: Vec<ShardDescription> = listed
                .iter()
                .skip(skip)
                .take(take)
                .map(|s| {
                    let (from, to) = s.range();
                    ShardDescription {
                        shard_id: s.id.clone(),
                        parent: s.parent.clone(),
                        starting_sequence: sequence_text(from),
                        ending_sequence: to.map(sequence_text),
                    }
                })
                .collect();
            let last_evaluated_shard =
                (skip + shards.len() < listed.len()).then(|| shards.last().map(|s| s.shard_id.clone())).flatten();
            Ok(StreamDescription {
                summary: StreamSummary {
                    arn: arn.to_string(),
                    table_name: table_name.to_string(),
                    label: log.label.clone(),
                },
                status: if log.closed_at.is_some() { "DISABLED" } else { "ENABLED" },
                view: log.view,
                created_at: log.created_at,
                key_schema: key_schema.clone(),
                shards,
                last_evaluated_shard,
            })
        })
    }

    /// GetShardIterator.
    pub fn get_shard_iterator(
        &self,
        arn: &str,
        shard_id: &str,
        kind: IteratorType,
        sequence: Option<&str>,
        now: Millis,
    ) -> Result<String, EngineError> {
        self.with_stream(arn, now, |log, _, _| {
            let next_sequence = log.next_sequence;
            let shard = log.shard(shard_id).ok_or_else(|| {
                EngineError::ResourceNotFound(format!(
                    "Requested resource not found: Shard: {shard_id} in Stream: {arn} not found"
                ))
            })?;
            let at = |s: Option<&str>| {
                s.and_then(parse_sequence)
                    .ok_or_else(|| EngineError::validation(format!("Invalid SequenceNumber: {}", s.unwrap_or(""))))
            };
            let position = match kind {
                IteratorType::TrimHorizon => shard.horizon(),
                // An open shard's next record; a closed shard's end.
                IteratorType::Latest => match shard.closed_at {
                    None => next_sequence,
                    Some(_) => shard.last_sequence.map_or(shard.first_sequence, |l| l + 1),
                },
                IteratorType::AtSequenceNumber => at(sequence)?,
                IteratorType::AfterSequenceNumber => at(sequence)?.checked_add(1).ok_or_else(|| {
                    EngineError::validation(format!("Invalid SequenceNumber: {}", sequence.unwrap_or("")))
                })?,
            };
            if position <= shard.trimmed_through {
                return Err(EngineError::TrimmedDataAccess);
            }
            Ok(iterator_text(arn, shard_id, position, now))
        })
    }

    /// GetRecords.
    pub fn get_records(&self, iterator: &str, limit: usize, now: Millis) -> Result<RecordsPage, EngineError> {
        let (issued, position, shard_id, arn) = parse_iterator(iterator)
            .ok_or_else(|| EngineError::validation(format!("Invalid ShardIterator: {iterator}")))?;
        if now.0 > issued.saturating_add(ITERATOR_LIFETIME_MS) {
            return Err(EngineError::ExpiredIterator);
        }
        self.with_stream(arn, now, |log, _, _| {
            let view = log.view;
            let shard = log.shard(shard_id).ok_or(EngineError::TrimmedDataAccess)?;
            if position <= shard.trimmed_through {
                return Err(EngineError::TrimmedDataAccess);
            }
            let mut records = Vec::new();
            let mut bytes = 0;
            let first = shard.records.partition_point(|r| r.sequence < position);
            for r in shard.records.iter().skip(first) {
                let size = r.size_bytes(view);
                // At most the limit and 1 MB (a page always takes one record).
                if records.len() >= limit.clamp(1, MAX_GET_RECORDS)
                    || (!records.is_empty() && bytes + size > MAX_GET_RECORDS_BYTES)
                {
                    break;
                }
                bytes += size;
                records.push(r.clone());
            }
            let next = records.last().map_or(position, |r| r.sequence.saturating_add(1));
            let finished = shard.closed_at.is_some() && first + records.len() >= shard.records.len();
            Ok(RecordsPage {
                records,
                view,
                next_iterator: (!finished).then(|| iterator_text(arn, shard_id, next, now)),
            })
        })
    }

    /// Checks a stream change against the table's current setting and
    /// prepares it (a new stream's label), under the table's data and
    /// settings locks: the caller saves [`StreamChange::setting`] with the
    /// rest of its request's settings in one catalog save, then applies it
    /// ([`apply_stream_change`]) to the table's data, so that a failed save
    /// changes nothing and a crash leaves all of the request or none.
    pub(crate) fn prepare_stream_change(
        &self,
        (table_name, table_arn): (&str, &str),
        logs: &[StreamLog],
        current: Option<&StreamSetting>,
        enable: Option<StreamViewType>,
        now: Millis,
    ) -> Result<StreamChange, EngineError> {
        check_stream_change(table_name, current, enable)?;
        match (enable, current) {
            (Some(view), _) => {
                let label = self.fresh_label(table_arn, logs, now);
                Ok(StreamChange { setting: StreamSetting { enabled: true, view, label } })
            }
            (None, Some(s)) if s.enabled => Ok(StreamChange { setting: StreamSetting { enabled: false, ..s.clone() } }),
            (None, _) => Err(EngineError::validation(no_stream_to_disable(table_name))),
        }
    }
}

/// A checked stream change (see [`Engine::prepare_stream_change`]): the
/// table's stream setting after it.
#[derive(Debug)]
pub(crate) struct StreamChange {
    pub setting: StreamSetting,
}

/// Applies a stream change, saved in the catalog, to the table's change
/// records: a new stream opens a log (streams closed longer than the
/// retention go), a disabled one closes its log. The caller holds the
/// table's data lock.
pub(crate) fn apply_stream_change(table: &Table, data: &mut TableData, change: &StreamChange, now: Millis) {
    let setting = &change.setting;
    if setting.enabled {
        data.streams.retain(|l| l.closed_at.is_none_or(|c| c.0 + STREAM_RETENTION_MS >= now.0));
        let mut log = StreamLog::new(setting.label.clone(), setting.view, now);
        follow_partitions(&mut log, table, now);
        data.streams.push(log);
    } else if let Some(log) = data.streams.iter_mut().find(|l| l.label == setting.label) {
        follow_partitions(log, table, now);
        log.close(now);
    }
}

/// Refuses a stream change that changes nothing: enabling an enabled
/// stream, disabling none (DynamoDB's no-op texts, ack-api-quirks
/// DDB-TABLE-442).
pub(crate) fn check_stream_change(
    table_name: &str,
    current: Option<&StreamSetting>,
    enable: Option<StreamViewType>,
) -> Result<(), EngineError> {
    let on = current.is_some_and(|s| s.enabled);
    match (enable, on) {
        (Some(_), true) => {
            Err(EngineError::validation(format!("Table already has an enabled stream: TableName: {table_name}")))
        }
        (None, false) => Err(EngineError::validation(no_stream_to_disable(table_name))),
        _ => Ok(()),
    }
}

fn no_stream_to_disable(table_name: &str) -> String {
    format!("Table has no stream to disable: TableName: {table_name}")
}

/// Makes `log`'s shards follow `table`'s partitions (the caller holds
/// the table's data lock; the capacity lock comes after it, the engine's
/// order). A table without a capacity model has one partition.
pub(crate) fn follow_partitions(log: &mut StreamLog, table: &Table, now: Millis) {
    let capacity = table.capacity.lock();
    let count = capacity.as_ref().map_or(1, |c| c.partition_count());
    if log.follows(count) {
        return;
    }
    let starts: Vec<u128> = match capacity.as_ref() {
        Some(c) => c.partitions().iter().map(|p| p.start).collect(),
        None => vec![0],
    };
    drop(capacity);
    log.follow(&starts, now);
}

fn iterator_text(arn: &str, shard_id: &str, position: u64, now: Millis) -> String {
    format!("{}|{position}|{shard_id}|{arn}", now.0)
}

/// An iterator's issue time, position, shard id and stream ARN.
fn parse_iterator(text: &str) -> Option<(u64, u64, &str, &str)> {
    let mut parts = text.splitn(4, '|');
    let issued = parts.next()?.parse().ok()?;
    let position = parts.next()?.parse().ok()?;
    let shard = parts.next()?;
    let arn = parts.next()?;
    Some((issued, position, shard, arn))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_iso_times_with_milliseconds() {
        assert_eq!(label_of(Millis(0)), "1970-01-01T00:00:00.000");
        assert_eq!(label_of(Millis(1_432_154_670_252)), "2015-05-20T20:44:30.252");
        assert_eq!(label_of(Millis(1_795_521_834_022)), "2026-11-24T12:03:54.022");
    }

    #[test]
    fn sequence_numbers_are_21_decimal_digits_and_parse_back() {
        let s = sequence_text(7);
        assert_eq!(s.len(), 21);
        assert!(s.bytes().all(|b| b.is_ascii_digit()));
        assert_eq!(parse_sequence(&s), Some(7));
        assert_eq!(parse_sequence("12"), None);
    }
}
