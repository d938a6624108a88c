//! Parquet files as loader records: each row an item (the column mapping is
//! in `convert.rs` and README.md's "Parquet input"), read row group by row
//! group in record batches of bounded size, so memory does not grow with
//! the file.
//!
//! Positions are global row indexes (0-based, in file order): a loader
//! checkpoints the first row not yet acknowledged and resumes there; a
//! shard `i/N` is a contiguous run of whole row groups.
//!
//! Architecture invariant: the only crate that links the `parquet` and
//! `arrow` crates; a leaf of the client side (only `dynaburst-input`
//! depends on it), so the server never links them. No network, no clock.

mod convert;

use std::fmt;
use std::fs::File;
use std::path::Path;

use arrow_array::RecordBatch;
use dynaburst_model::Item;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};

pub use convert::{check_schema, row_item, row_json, MAX_NESTING_DEPTH};

/// Most rows decoded at once.
pub const MAX_BATCH_ROWS: usize = 1024;
/// Decoded bytes a batch aims at: files of wide rows are read in smaller
/// batches (from the row groups' sizes in the footer).
pub const BATCH_TARGET_BYTES: u64 = 4 * 1024 * 1024;

/// Why a Parquet file cannot be read.
#[derive(Debug)]
pub enum ParquetError {
    /// Opening the file failed.
    Io(std::io::Error),
    /// Not a Parquet file, or a damaged one.
    Format(String),
    /// A column whose type maps to no attribute type.
    Unsupported(String),
}

impl fmt::Display for ParquetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParquetError::Io(e) => write!(f, "{e}"),
            ParquetError::Format(m) => write!(f, "not a readable Parquet file: {m}"),
            ParquetError::Unsupported(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for ParquetError {}

/// One row.
#[derive(Debug)]
pub struct Row {
    /// 0-based row index in the file.
    pub index: u64,
    /// The row as DynamoDB JSON (what a rejects file holds).
    pub raw: String,
    /// The item, or why DynamoDB cannot store it.
    pub item: Result<Item, String>,
}

/// The rows of a file (or of a shard of it), from a starting row on.
pub struct Rows {
    reader: Option<ParquetRecordBatchReader>,
    batch: Option<RecordBatch>,
    /// Next row within `batch`.
    at: usize,
    /// Index of the next row to hand out.
    next: u64,
    total_rows: u64,
    batch_rows: usize,
    largest_batch: usize,
}

impl Rows {
    /// Opens `path` and positions at `start_row` (a checkpoint's) or at the
    /// shard's first row. `shard` is `(i, n)`, 0-based: the row groups
    /// `groups*i/n .. groups*(i+1)/n`.
    pub fn open(path: &Path, shard: Option<(u64, u64)>, start_row: Option<u64>) -> Result<Rows, ParquetError> {
        let file = File::open(path).map_err(ParquetError::Io)?;
        let builder =
            ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| ParquetError::Format(e.to_string()))?;
        check_schema(builder.schema()).map_err(ParquetError::Unsupported)?;
        let groups: Vec<(u64, u64)> = builder
            .metadata()
            .row_groups()
            .iter()
            .map(|g| (u64::try_from(g.num_rows()).unwrap_or(0), u64::try_from(g.total_byte_size()).unwrap_or(0)))
            .collect();
        let total_rows = groups.iter().map(|g| g.0).sum();
        // The widest row group's bytes per row decide the batch size.
        let row_bytes = groups.iter().filter(|g| g.0 > 0).map(|g| g.1.div_ceil(g.0)).max().unwrap_or(1).max(1);
        let batch_rows =
            usize::try_from(BATCH_TARGET_BYTES / row_bytes).unwrap_or(MAX_BATCH_ROWS).clamp(1, MAX_BATCH_ROWS);
        let count = groups.len() as u64;
        let (first, last) = match shard {
            Some((i, n)) if n > 0 => ((count * i / n) as usize, (count * (i + 1) / n) as usize),
            _ => (0, groups.len()),
        };
        let starts: Vec<u64> = groups.iter().scan(0, |acc, g| Some(std::mem::replace(acc, *acc + g.0))).collect();
        let range_start = starts.get(first).copied().unwrap_or(total_rows);
        let range_end = starts.get(last).copied().unwrap_or(total_rows);
        let start = start_row.unwrap_or(range_start).clamp(range_start, range_end);
        // The group holding `start`, and the rows to skip in it.
        let from = (first..last).find(|g| start < starts[*g] + groups[*g].0).unwrap_or(last);
        let mut rows = Rows { reader: None, batch: None, at: 0, next: start, total_rows, batch_rows, largest_batch: 0 };
        if from < last {
            let skip = usize::try_from(start - starts[from]).map_err(|e| ParquetError::Format(e.to_string()))?;
            let reader = builder
                .with_batch_size(batch_rows)
                .with_row_groups((from..last).collect())
                .with_offset(skip)
                .build()
                .map_err(|e| ParquetError::Format(e.to_string()))?;
            rows.reader = Some(reader);
        }
        Ok(rows)
    }

    /// Rows in the whole file (from its footer).
    pub fn total_rows(&self) -> u64 {
        self.total_rows
    }

    /// The most rows a batch decodes for this file.
    pub fn batch_rows(&self) -> usize {
        self.batch_rows
    }

    /// The most rows any batch read so far held.
    pub fn largest_batch(&self) -> usize {
        self.largest_batch
    }

    /// The index of the next row.
    pub fn position(&self) -> u64 {
        self.next
    }

    /// The next row; None at the end of the file or shard.
    pub fn next_row(&mut self) -> Result<Option<Row>, ParquetError> {
        loop {
            if let Some(batch) = &self.batch {
                if self.at < batch.num_rows() {
                    let row = Row { index: self.next, raw: row_json(batch, self.at), item: row_item(batch, self.at) };
                    self.at += 1;
                    self.next += 1;
                    return Ok(Some(row));
                }
            }
            self.batch = None;
            let Some(reader) = self.reader.as_mut() else { return Ok(None) };
            match reader.next() {
                Some(Ok(batch)) => {
                    self.largest_batch = self.largest_batch.max(batch.num_rows());
                    self.at = 0;
                    self.batch = Some(batch);
                }
                Some(Err(e)) => {
                    self.reader = None;
                    return Err(ParquetError::Format(e.to_string()));
                }
                None => {
                    self.reader = None;
                    return Ok(None);
                }
            }
        }
    }
}

impl Iterator for Rows {
    type Item = Result<Row, ParquetError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_row().transpose()
    }
}
