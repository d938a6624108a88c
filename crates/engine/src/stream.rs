//! DynamoDB Streams (S98-S116): a table's change records, kept in memory
//! per stream, appended by the write funnel's commit in the same step as
//! the items they describe, and read through ListStreams, DescribeStream,
//! GetShardIterator and GetRecords.
//!
//! Each stream has one shard, which is closed when the stream is disabled
//! (DynamoDB maps shards to partitions and splits them with the table;
//! that is not modelled). Records are kept 24 hours of modelled time and
//! at most [`MAX_STREAM_RECORDS`] per stream; reading before the oldest
//! kept record is a TrimmedDataAccessException.

use std::collections::VecDeque;
use std::sync::Arc;

use dynaburst_model::time::UtcTime;
use dynaburst_model::{item_size, Item};

use crate::engine::Engine;
use crate::error::EngineError;
use crate::table::{KeySchema, Table};
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
/// Streams ListStreams returns per page at most (S103).
pub const MAX_LIST_STREAMS: usize = 100;
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

/// One stream's records.
#[derive(Debug)]
pub struct StreamLog {
    pub label: String,
    pub view: StreamViewType,
    pub created_at: Millis,
    /// Set when the stream was disabled: its shard is closed.
    pub closed_at: Option<Millis>,
    pub records: VecDeque<StreamRecord>,
    /// The sequence number the next record gets (1 for the first).
    pub next_sequence: u64,
    /// Bytes of the records kept (their SizeBytes).
    pub bytes: usize,
}

impl StreamLog {
    pub(crate) fn new(label: String, view: StreamViewType, now: Millis) -> StreamLog {
        StreamLog {
            label,
            view,
            created_at: now,
            closed_at: None,
            records: VecDeque::new(),
            next_sequence: 1,
            bytes: 0,
        }
    }

    /// Appends a record of replacing `old` by `new` (keys of `key_schema`),
    /// unless nothing changed (S116).
    pub fn append(
        &mut self,
        key_schema: &KeySchema,
        old: Option<Arc<Item>>,
        new: Option<Arc<Item>>,
        by_service: bool,
        now: Millis,
    ) {
        let event = match (&old, &new) {
            (None, Some(_)) => EventName::Insert,
            (Some(o), Some(n)) if o != n => EventName::Modify,
            (Some(_), None) => EventName::Remove,
            _ => return,
        };
        let keys = key_schema.key_item(new.as_deref().or(old.as_deref()).unwrap_or(&Item::new()));
        let sequence = self.next_sequence;
        self.next_sequence += 1;
        // Only the images the view shows are kept.
        let (new, old) = (new.filter(|_| self.view.new_image()), old.filter(|_| self.view.old_image()));
        let record = StreamRecord { sequence, event, keys, new, old, at: now, by_service };
        self.bytes += record.size_bytes(self.view);
        self.records.push_back(record);
        self.trim(now);
    }

    /// Drops records older than the retention, and beyond the caps.
    fn trim(&mut self, now: Millis) {
        while self.records.len() > MAX_STREAM_RECORDS
            || self.bytes > MAX_STREAM_BYTES
            || self.records.front().is_some_and(|r| r.at.0 + STREAM_RETENTION_MS < now.0)
        {
            match self.records.pop_front() {
                Some(r) => self.bytes = self.bytes.saturating_sub(r.size_bytes(self.view)),
                None => break,
            }
        }
    }

    /// The shard's id (one shard per stream).
    pub fn shard_id(&self) -> String {
        format!("shardId-{:020}-{:08x}", self.created_at.0, fnv32(&self.label))
    }

    /// The first sequence number still readable.
    fn first_kept(&self) -> u64 {
        self.records.front().map_or(self.next_sequence, |r| r.sequence)
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
    let t = UtcTime::from_unix_ms(now.0 as i64);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}",
        t.year, t.month, t.day, t.hour, t.minute, t.second, t.millisecond
    )
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

/// DescribeStream's answer.
#[derive(Clone, Debug)]
pub struct StreamDescription {
    pub summary: StreamSummary,
    pub status: &'static str,
    pub view: StreamViewType,
    pub created_at: Millis,
    pub key_schema: KeySchema,
    pub shard_id: String,
    pub starting_sequence: String,
    /// Set when the shard is closed.
    pub ending_sequence: Option<String>,
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
    /// The table and the position of its stream `arn` names.
    fn stream_of(&self, arn: &str) -> Result<(Arc<Table>, String), EngineError> {
        let (name, label) =
            parse_stream_arn(arn).ok_or_else(|| EngineError::validation(format!("Invalid StreamArn: {arn}")))?;
        let table = self.tables.read().get(name).cloned().ok_or_else(|| stream_not_found(arn))?;
        if format!("{}/stream/{label}", table.arn) != arn {
            return Err(stream_not_found(arn));
        }
        Ok((table, label.to_string()))
    }

    /// ListStreams: the streams of `table_name` (or of every table), in
    /// table then creation order, after `start`.
    pub fn list_streams(
        &self,
        table_name: Option<&str>,
        limit: usize,
        start: Option<&str>,
    ) -> Result<(Vec<StreamSummary>, Option<String>), EngineError> {
        let tables: Vec<Arc<Table>> = match table_name {
            Some(n) => vec![self.table_named(n)?],
            None => self.tables.read().values().cloned().collect(),
        };
        let mut all = Vec::new();
        for table in tables {
            let data = table.data.read();
            for log in &data.streams {
                all.push(StreamSummary {
                    arn: format!("{}/stream/{}", table.arn, log.label),
                    table_name: table.name.clone(),
                    label: log.label.clone(),
                });
            }
        }
        let skip = match start {
            Some(s) => all.iter().position(|x| x.arn == s).map_or(all.len(), |p| p + 1),
            None => 0,
        };
        let page: Vec<StreamSummary> = all.iter().skip(skip).take(limit.min(MAX_LIST_STREAMS)).cloned().collect();
        let last = (skip + page.len() < all.len()).then(|| page.last().map(|s| s.arn.clone())).flatten();
        Ok((page, last))
    }

    /// DescribeStream.
    pub fn describe_stream(&self, arn: &str) -> Result<StreamDescription, EngineError> {
        let (table, label) = self.stream_of(arn)?;
        let data = table.data.read();
        let log = data.streams.iter().find(|l| l.label == label).ok_or_else(|| stream_not_found(arn))?;
        Ok(StreamDescription {
            summary: StreamSummary { arn: arn.to_string(), table_name: table.name.clone(), label: label.clone() },
            status: if log.closed_at.is_some() { "DISABLED" } else { "ENABLED" },
            view: log.view,
            created_at: log.created_at,
            key_schema: table.key_schema.clone(),
            shard_id: log.shard_id(),
            starting_sequence: sequence_text(log.first_kept()),
            ending_sequence: log.closed_at.map(|_| sequence_text(log.next_sequence.saturating_sub(1).max(1))),
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
        let (table, label) = self.stream_of(arn)?;
        let data = table.data.read();
        let log = data.streams.iter().find(|l| l.label == label).ok_or_else(|| stream_not_found(arn))?;
        if log.shard_id() != shard_id {
            return Err(EngineError::ResourceNotFound(format!(
                "Requested resource not found: Shard: {shard_id} in Stream: {arn} not found"
            )));
        }
        let at = |s: Option<&str>| {
            s.and_then(parse_sequence)
                .ok_or_else(|| EngineError::validation(format!("Invalid SequenceNumber: {}", s.unwrap_or(""))))
        };
        let position = match kind {
            IteratorType::TrimHorizon => log.first_kept(),
            IteratorType::Latest => log.next_sequence,
            IteratorType::AtSequenceNumber => at(sequence)?,
            IteratorType::AfterSequenceNumber => at(sequence)?.checked_add(1).ok_or_else(|| {
                EngineError::validation(format!("Invalid SequenceNumber: {}", sequence.unwrap_or("")))
            })?,
        };
        if position < log.first_kept() {
            return Err(EngineError::TrimmedDataAccess);
        }
        Ok(iterator_text(arn, position, now))
    }

    /// GetRecords.
    pub fn get_records(&self, iterator: &str, limit: usize, now: Millis) -> Result<RecordsPage, EngineError> {
        let (issued, position, arn) = parse_iterator(iterator)
            .ok_or_else(|| EngineError::validation(format!("Invalid ShardIterator: {iterator}")))?;
        if now.0 > issued.saturating_add(ITERATOR_LIFETIME_MS) {
            return Err(EngineError::ExpiredIterator);
        }
        let (table, label) = self.stream_of(arn)?;
        let data = table.data.read();
        let log = data.streams.iter().find(|l| l.label == label).ok_or_else(|| stream_not_found(arn))?;
        if position < log.first_kept() {
            return Err(EngineError::TrimmedDataAccess);
        }
        let mut records = Vec::new();
        let mut bytes = 0;
        let skip = (position - log.first_kept()) as usize;
        for r in log.records.iter().skip(skip) {
            if records.len() >= limit.clamp(1, MAX_GET_RECORDS) || bytes >= MAX_GET_RECORDS_BYTES {
                break;
            }
            bytes += r.size_bytes(log.view);
            records.push(r.clone());
        }
        let next = records.last().map_or(position, |r| r.sequence.saturating_add(1));
        let finished = log.closed_at.is_some() && next >= log.next_sequence;
        Ok(RecordsPage { records, view: log.view, next_iterator: (!finished).then(|| iterator_text(arn, next, now)) })
    }

    /// Turns the table's stream on or off (CreateTable and UpdateTable's
    /// StreamSpecification, S99-S101).
    pub(crate) fn set_stream(
        &self,
        table: &Table,
        enable: Option<StreamViewType>,
        now: Millis,
    ) -> Result<(), EngineError> {
        // One critical section for the check and the change (data lock,
        // then settings, the engine's order), saved to the catalog in it.
        let mut data = table.data.write();
        let defs: Vec<_> = data.indexes.iter().map(|i| i.def.clone()).collect();
        let mut settings = table.settings.lock();
        let current = settings.stream.clone();
        let setting = match (enable, &current) {
            (Some(_), Some(s)) if s.enabled => {
                return Err(EngineError::validation(format!(
                    "Table already has an enabled stream: TableName: {}",
                    table.name
                )))
            }
            (Some(view), _) => {
                let label = label_of(now);
                data.streams.retain(|l| l.closed_at.is_none_or(|c| c.0 + STREAM_RETENTION_MS >= now.0));
                data.streams.push(StreamLog::new(label.clone(), view, now));
                StreamSetting { enabled: true, view, label }
            }
            (None, Some(s)) if s.enabled => {
                if let Some(log) = data.streams.iter_mut().find(|l| l.label == s.label) {
                    log.closed_at = Some(now);
                }
                StreamSetting { enabled: false, ..s.clone() }
            }
            (None, _) => {
                return Err(EngineError::validation(format!(
                    "Table has no stream to disable: TableName: {}",
                    table.name
                )))
            }
        };
        let mut changed = settings.clone();
        changed.stream = Some(setting);
        self.storage.save_table_meta(&table.meta_with(changed.clone(), defs))?;
        *settings = changed;
        Ok(())
    }
}

fn iterator_text(arn: &str, position: u64, now: Millis) -> String {
    format!("{}|{position}|{arn}", now.0)
}

fn parse_iterator(text: &str) -> Option<(u64, u64, &str)> {
    let mut parts = text.splitn(3, '|');
    let issued = parts.next()?.parse().ok()?;
    let position = parts.next()?.parse().ok()?;
    let arn = parts.next()?;
    Some((issued, position, arn))
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
