//! `dynaburst dump`: a parallel Scan that writes every item of a table
//! exactly once, in bounded memory, paced to a read budget, resumable after
//! a crash.
//!
//! Each segment's task scans its pages (retried with the tools' one
//! backoff and the one error classification) and hands them over a bounded
//! channel to the writer, the only task that writes. A page is written
//! whole, and only then does its segment's position move to the page's
//! LastEvaluatedKey; every `CHECKPOINT_INTERVAL` the writer makes the
//! output durable and saves every segment's position with the output's
//! length. A resumed dump cuts the output back to that length and scans
//! each segment on from its saved key, so no item is written twice or
//! lost.

mod format;
mod pace;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use aws_sdk_dynamodb::types::{AttributeValue as Av, ReturnConsumedCapacity};
use aws_sdk_dynamodb::Client;
use dynaburst_model::Item;
use dynaburst_rng::Rng;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;
use tokio::time::Instant;

pub use format::{plain_item, plain_value, DataFile, DumpFormat, OutputMark, ITEMS_PER_DATA_FILE};
pub use pace::Pace;

use crate::convert::{item_from_sdk, to_sdk};
use crate::errors::DynamoError;
use crate::tools::{with_retries, MAX_SEGMENTS};

/// How often the writer saves a checkpoint.
pub const CHECKPOINT_INTERVAL: Duration = Duration::from_secs(1);
/// Pages scanned but not yet written, per segment (each at most 1 MB).
pub const PAGES_PER_SEGMENT: usize = 2;
/// CSV: items read to decide the columns when `--columns` is not given.
pub const CSV_COLUMN_ITEMS: usize = 1_000;
/// CSV: the most bytes of items held while deciding the columns.
pub const CSV_COLUMN_BYTES: usize = 16 << 20;
/// Version of the checkpoint file's layout.
pub const DUMP_CHECKPOINT_VERSION: u32 = 1;
/// With `max_rcu`, the first page of a segment asks for this many items
/// (the size of the items is not known yet).
const FIRST_PAGE_ITEMS: i32 = 25;
/// Most items a paced page asks for.
const MAX_PAGE_ITEMS: f64 = 10_000.0;

/// Why a dump failed.
#[derive(Debug)]
pub enum DumpError {
    /// A DynamoDB call failed.
    Dynamo(DynamoError),
    /// Writing the output or the checkpoint failed.
    Io(String),
    /// The checkpoint cannot be used.
    Checkpoint(String),
    /// The options do not go together.
    Usage(String),
    /// CSV: an item does not fit the columns.
    Columns(String),
    /// An item holds a value the data model does not know.
    Item(String),
}

impl std::fmt::Display for DumpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DumpError::Dynamo(e) => write!(f, "{e}"),
            DumpError::Io(m)
            | DumpError::Checkpoint(m)
            | DumpError::Usage(m)
            | DumpError::Columns(m)
            | DumpError::Item(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for DumpError {}

/// What `dynaburst dump` was asked to do.
#[derive(Clone, Debug)]
pub struct DumpOptions {
    pub table: String,
    pub format: DumpFormat,
    /// None: standard output.
    pub output: Option<PathBuf>,
    pub segments: u32,
    /// Read capacity units per second the dump may consume.
    pub max_rcu: Option<f64>,
    /// CSV columns (None: the key, then the attributes of the first items).
    pub columns: Option<Vec<String>>,
    /// None: beside the output (`OUTPUT.dump-checkpoint.json`); standard
    /// output has none unless given.
    pub checkpoint: Option<PathBuf>,
    pub resume: bool,
    pub seed: u64,
}

/// A segment's position in the checkpoint.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SegmentState {
    /// The next page's ExclusiveStartKey (DynamoDB JSON); None at the start.
    pub start_key: Option<Value>,
    pub done: bool,
    /// Items of this segment written below the checkpoint.
    pub items: u64,
}

/// The dump's checkpoint file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DumpCheckpoint {
    pub version: u32,
    pub table: String,
    pub format: DumpFormat,
    pub output: String,
    pub mark: OutputMark,
    /// CSV: the columns of the header row.
    pub columns: Option<Vec<String>>,
    pub segments: Vec<SegmentState>,
    pub complete: bool,
}

impl DumpCheckpoint {
    fn load(path: &Path) -> Result<Option<DumpCheckpoint>, DumpError> {
        match std::fs::read_to_string(path) {
            Ok(text) => serde_json::from_str(&text)
                .map(Some)
                .map_err(|e| DumpError::Checkpoint(format!("cannot read the checkpoint {}: {e}", path.display()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(DumpError::Checkpoint(format!("cannot read the checkpoint {}: {e}", path.display()))),
        }
    }

    /// Writes the checkpoint atomically (a temporary file, then a rename).
    fn save(&self, path: &Path) -> Result<(), DumpError> {
        let tmp = path.with_extension("tmp");
        let text = serde_json::to_string(self).map_err(|e| DumpError::Io(e.to_string()))?;
        let io = |e: std::io::Error| DumpError::Io(format!("cannot write the checkpoint {}: {e}", path.display()));
        std::fs::write(&tmp, text).map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)
    }
}

/// The default checkpoint of an output: `OUTPUT.dump-checkpoint.json`
/// beside a file, inside an export directory's parent.
pub fn default_checkpoint(output: &Path) -> PathBuf {
    let mut name = output.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".dump-checkpoint.json");
    output.with_file_name(name)
}

/// Progress of a running dump.
#[derive(Clone, Debug, Default)]
pub struct DumpProgress {
    pub items: u64,
    pub pages: u64,
    pub read_units: f64,
    pub segments_done: u32,
    pub segments: u32,
}

/// How a dump ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DumpEnding {
    Complete,
    /// Stopped by a signal; the checkpoint lets `--resume` continue.
    Interrupted,
}

/// The dump's report (`--report`).
#[derive(Clone, Debug, Serialize)]
pub struct DumpReport {
    pub table: String,
    pub format: DumpFormat,
    pub output: String,
    pub ending: DumpEnding,
    pub resumed: bool,
    pub segments: u32,
    pub max_rcu: Option<f64>,
    /// Items written by this run (a resumed dump adds to those before).
    pub items: u64,
    /// Items in the output, counting those written before a resume.
    pub items_total: u64,
    pub pages: u64,
    /// Read units the Scans consumed (ReturnConsumedCapacity TOTAL).
    pub read_units: f64,
    pub bytes: u64,
    /// Scan requests sent again after a throttle or a retryable error.
    pub retried_requests: u64,
    pub duration_s: f64,
    pub items_per_s: f64,
    pub read_units_per_s: f64,
    /// Items per segment, in the whole output.
    pub segment_items: Vec<u64>,
    pub seed: u64,
}

/// One scanned page on its way to the writer.
struct Page {
    segment: usize,
    items: Vec<HashMap<String, Av>>,
    next: Option<HashMap<String, Av>>,
    units: f64,
    /// Times the page's request was sent again (throttled or failed).
    retried: u64,
}

fn key_to_json(key: &HashMap<String, Av>) -> Result<Value, DumpError> {
    let item = item_from_sdk(key).ok_or_else(|| DumpError::Item("a LastEvaluatedKey holds an unknown type".into()))?;
    Ok(dynaburst_ddbjson::item_to_json(&item))
}

fn key_from_json(v: &Value) -> Result<HashMap<String, Av>, DumpError> {
    let item = dynaburst_ddbjson::parse_item(v)
        .map_err(|e| DumpError::Checkpoint(format!("a segment's start key in the checkpoint: {e}")))?;
    Ok(item.iter().map(|(k, v)| (k.clone(), to_sdk(v))).collect())
}

/// Runs a dump. `progress` receives updates; `stop` turns true on a
/// signal (the dump then checkpoints and returns `Interrupted`).
pub async fn dump(
    client: &Client,
    opts: DumpOptions,
    progress: watch::Sender<DumpProgress>,
    mut stop: watch::Receiver<bool>,
) -> Result<DumpReport, DumpError> {
    let started_wall = std::time::SystemTime::now();
    let started = Instant::now();
    if opts.max_rcu.is_some_and(|r| !(r > 0.0 && r.is_finite())) {
        return Err(DumpError::Usage("--max-rcu must be a positive number".to_string()));
    }
    let info = crate::sink::describe(client, &opts.table).await.map_err(DumpError::Dynamo)?;
    let checkpoint_path = opts.checkpoint.clone().or_else(|| opts.output.as_deref().map(default_checkpoint));
    let output_name = opts.output.as_ref().map(|p| p.display().to_string()).unwrap_or_else(|| "-".to_string());
    let previous = match &checkpoint_path {
        Some(p) => DumpCheckpoint::load(p)?,
        None => None,
    };
    let resumed = match (&previous, opts.resume) {
        (Some(c), true) => {
            if c.complete {
                return Err(DumpError::Usage(format!(
                    "the checkpoint {} says this dump already finished: nothing to resume",
                    checkpoint_path.as_deref().map(|p| p.display().to_string()).unwrap_or_default()
                )));
            }
            if c.table != opts.table || c.format != opts.format || c.output != output_name {
                return Err(DumpError::Usage(format!(
                    "the checkpoint belongs to a dump of {} as {} into {}, not this one",
                    c.table,
                    c.format.name(),
                    c.output
                )));
            }
            if opts.output.is_none() {
                return Err(DumpError::Usage("--resume cannot rewind standard output: dump to a file".to_string()));
            }
            Some(c.clone())
        }
        (None, true) => {
            return Err(DumpError::Usage(match &checkpoint_path {
                Some(p) => format!("--resume: no checkpoint at {}", p.display()),
                None => "--resume needs -o FILE: standard output cannot be resumed".to_string(),
            }))
        }
        (Some(c), false) if !c.complete => {
            return Err(DumpError::Usage(format!(
                "an unfinished dump left a checkpoint at {}: pass --resume to continue it, or delete it to start over",
                checkpoint_path.as_deref().map(|p| p.display().to_string()).unwrap_or_default()
            )))
        }
        _ => None,
    };
    let segments = match &resumed {
        Some(c) => c.segments.len() as u32,
        None => opts.segments.clamp(1, MAX_SEGMENTS),
    };
    let mut states: Vec<SegmentState> = match &resumed {
        Some(c) => c.segments.clone(),
        None => vec![SegmentState::default(); segments as usize],
    };
    let mut output = format::Output::open(
        opts.format,
        opts.output.as_deref(),
        resumed.as_ref().map(|c| &c.mark),
        resumed.as_ref().and_then(|c| c.columns.clone()),
    )?;
    let items_before: u64 = states.iter().map(|s| s.items).sum();
    let key_names: Vec<String> = info.schema.names().iter().map(|s| s.to_string()).collect();
    if output.needs_columns() {
        if let Some(c) = &opts.columns {
            let mut columns: Vec<String> = key_names.clone();
            columns.extend(c.iter().filter(|n| !key_names.contains(n)).cloned());
            output.set_columns(columns)?;
        }
    }

    // The scanners.
    let pace = opts.max_rcu.map(|r| std::sync::Arc::new(Pace::new(r, Instant::now())));
    let (tx, mut rx) = mpsc::channel::<Result<Page, DumpError>>(PAGES_PER_SEGMENT * segments as usize);
    let mut tasks = JoinSet::new();
    let mut seeded = Rng::new(opts.seed);
    for (segment, state) in states.iter().enumerate() {
        if state.done {
            continue;
        }
        let start = match &state.start_key {
            Some(k) => Some(key_from_json(k)?),
            None => None,
        };
        let client = client.clone();
        let table = opts.table.clone();
        let tx = tx.clone();
        let pace = pace.clone();
        let mut rng = seeded.fork();
        tasks.spawn(async move {
            let r = scan_segment(&client, &table, segment, segments, start, pace.as_deref(), &mut rng, &tx).await;
            if let Err(e) = r {
                let _ = tx.send(Err(e)).await;
            }
        });
    }
    drop(tx);

    // The writer.
    let mut held: Vec<(usize, Item)> = Vec::new();
    let mut held_bytes = 0usize;
    let mut stats =
        DumpProgress { segments, segments_done: states.iter().filter(|s| s.done).count() as u32, ..Default::default() };
    let mut retried = 0u64;
    let mut last_checkpoint = Instant::now();
    let mut ending = DumpEnding::Complete;
    let save = |output: &mut format::Output, states: &[SegmentState], complete: bool| -> Result<(), DumpError> {
        let mark = output.mark()?;
        if let Some(path) = &checkpoint_path {
            DumpCheckpoint {
                version: DUMP_CHECKPOINT_VERSION,
                table: opts.table.clone(),
                format: opts.format,
                output: output_name.clone(),
                mark,
                columns: output.columns().map(|c| c.to_vec()),
                segments: states.to_vec(),
                complete,
            }
            .save(path)?;
        }
        Ok(())
    };
    // A stop sender that is gone can never ask to stop.
    let mut stoppable = true;
    loop {
        let page = tokio::select! {
            p = rx.recv() => p,
            r = stop.changed(), if stoppable => {
                match r {
                    Ok(()) if *stop.borrow() => {
                        ending = DumpEnding::Interrupted;
                        break;
                    }
                    Ok(()) => {}
                    Err(_) => stoppable = false,
                }
                continue;
            }
        };
        let Some(page) = page else { break };
        let page = match page {
            Ok(p) => p,
            Err(e) => {
                tasks.abort_all();
                // What was written stays resumable.
                if !output.needs_columns() {
                    save(&mut output, &states, false)?;
                }
                return Err(e);
            }
        };
        stats.pages += 1;
        stats.read_units += page.units;
        retried += page.retried;
        let mut items = Vec::with_capacity(page.items.len());
        for raw in &page.items {
            let item = item_from_sdk(raw).ok_or_else(|| {
                DumpError::Item(format!("an item of {} holds a value of a type dynaburst does not know", opts.table))
            })?;
            items.push(item);
        }
        let count = items.len() as u64;
        if output.needs_columns() {
            held_bytes += items.iter().map(dynaburst_model::item_size).sum::<usize>();
            held.extend(items.into_iter().map(|i| (page.segment, i)));
            let last = page.next.is_none() && stats.segments_done + 1 == segments;
            if held.len() >= CSV_COLUMN_ITEMS || held_bytes >= CSV_COLUMN_BYTES || last {
                let mut rest: Vec<String> = held
                    .iter()
                    .flat_map(|(_, i)| i.keys())
                    .filter(|k| !key_names.contains(k))
                    .cloned()
                    .collect::<std::collections::BTreeSet<_>>()
                    .into_iter()
                    .collect();
                let mut columns = key_names.clone();
                columns.append(&mut rest);
                output.set_columns(columns)?;
                for (_, item) in held.drain(..) {
                    output.write_item(&item)?;
                }
            }
        } else {
            for item in &items {
                output.write_item(item)?;
            }
        }
        let state = &mut states[page.segment];
        state.items += count;
        stats.items += count;
        match &page.next {
            Some(k) => state.start_key = Some(key_to_json(k)?),
            None => {
                state.start_key = None;
                state.done = true;
                stats.segments_done += 1;
            }
        }
        if last_checkpoint.elapsed() >= CHECKPOINT_INTERVAL && !output.needs_columns() {
            save(&mut output, &states, false)?;
            last_checkpoint = Instant::now();
        }
        progress.send_replace(stats.clone());
    }
    tasks.abort_all();
    while tasks.join_next().await.is_some() {}
    if ending == DumpEnding::Complete && states.iter().any(|s| !s.done) {
        // A scanner ended without its segment's last page (it cannot
        // without an error, which arrives as one): never call it complete.
        if !output.needs_columns() {
            save(&mut output, &states, false)?;
        }
        return Err(DumpError::Io("a scan segment ended before its last page: run again with --resume".into()));
    }
    let ended_wall = std::time::SystemTime::now();
    let mark = if ending == DumpEnding::Complete {
        if output.needs_columns() {
            // An empty table: the key's columns only.
            output.set_columns(key_names.clone())?;
        }
        let arn = format!("arn:aws:dynamodb:::table/{}", opts.table);
        let mark = output.finish(&arn, &rfc3339(started_wall), &rfc3339(ended_wall))?;
        save(&mut output, &states, true)?;
        mark
    } else {
        if output.needs_columns() {
            // Nothing was written yet: nothing to resume from but the start.
            for s in states.iter_mut() {
                *s = SegmentState::default();
            }
        }
        save(&mut output, &states, false)?;
        output.mark()?
    };
    let secs = started.elapsed().as_secs_f64().max(1e-3);
    Ok(DumpReport {
        table: opts.table.clone(),
        format: opts.format,
        output: output_name,
        ending,
        resumed: resumed.is_some(),
        segments,
        max_rcu: opts.max_rcu,
        items: stats.items,
        items_total: items_before + stats.items,
        pages: stats.pages,
        read_units: stats.read_units,
        bytes: mark.bytes,
        retried_requests: retried,
        duration_s: secs,
        items_per_s: stats.items as f64 / secs,
        read_units_per_s: stats.read_units / secs,
        segment_items: states.iter().map(|s| s.items).collect(),
        seed: opts.seed,
    })
}

/// Scans one segment from `start` to its end, sending each page to the
/// writer; paced by `pace` when there is a read budget.
#[allow(clippy::too_many_arguments)]
async fn scan_segment(
    client: &Client,
    table: &str,
    segment: usize,
    segments: u32,
    mut start: Option<HashMap<String, Av>>,
    pace: Option<&Pace>,
    rng: &mut Rng,
    tx: &mpsc::Sender<Result<Page, DumpError>>,
) -> Result<(), DumpError> {
    let request = client
        .scan()
        .table_name(table)
        .segment(segment as i32)
        .total_segments(segments as i32)
        .return_consumed_capacity(ReturnConsumedCapacity::Total);
    // Paced: pages small enough that one segment's page is a fraction of
    // a second's budget (units per item learnt from the pages).
    let mut units_per_item: Option<f64> = None;
    let operation = format!("Scan segment {segment} of {table}");
    loop {
        let limit = match (pace, units_per_item) {
            (None, _) => None,
            (Some(_), None) => Some(FIRST_PAGE_ITEMS),
            (Some(p), Some(u)) => {
                let target = (p.rate() / (2.0 * f64::from(segments))).max(0.5);
                Some((target / u.max(1e-6)).clamp(1.0, MAX_PAGE_ITEMS) as i32)
            }
        };
        let estimate = match (limit, units_per_item) {
            (Some(l), Some(u)) => (f64::from(l) * u).max(0.5),
            _ => 0.5,
        };
        if let Some(p) = pace {
            p.acquire(estimate).await;
        }
        let page = request.clone().set_limit(limit).set_exclusive_start_key(start.take());
        let (out, attempts) = with_retries(|| page.clone().send(), &operation, rng).await.map_err(DumpError::Dynamo)?;
        let units = out.consumed_capacity().and_then(|c| c.capacity_units()).unwrap_or(0.0);
        if let Some(p) = pace {
            p.settle(estimate, units);
        }
        let n = out.items().len();
        if n > 0 {
            let u = units / n as f64;
            units_per_item = Some(units_per_item.map(|old| 0.5 * old + 0.5 * u).unwrap_or(u));
        }
        let next = out.last_evaluated_key().filter(|k| !k.is_empty()).cloned();
        let done = next.is_none();
        let items = out.items.unwrap_or_default();
        let page = Page { segment, items, next: next.clone(), units, retried: u64::from(attempts) };
        if tx.send(Ok(page)).await.is_err() {
            return Ok(());
        }
        if done {
            return Ok(());
        }
        start = next;
    }
}

/// A wall-clock time as RFC 3339 UTC with milliseconds.
fn rfc3339(t: std::time::SystemTime) -> String {
    let ms = t.duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0);
    format!("{}Z", dynaburst_model::time::UtcTime::from_unix_ms(ms).iso8601_millis())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_renders_utc_dates() {
        let t = std::time::UNIX_EPOCH + Duration::from_millis(1_604_474_914_028);
        assert_eq!(rfc3339(t), "2020-11-04T07:28:34.028Z");
        assert_eq!(rfc3339(std::time::UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn the_default_checkpoint_sits_beside_the_output() {
        assert_eq!(default_checkpoint(Path::new("/tmp/x.jsonl")), PathBuf::from("/tmp/x.jsonl.dump-checkpoint.json"));
        assert_eq!(default_checkpoint(Path::new("out/exp")), PathBuf::from("out/exp.dump-checkpoint.json"));
    }
}
