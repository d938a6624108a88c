//! Streaming input for loaders: records from CSV (header row, RFC 4180
//! quoting), JSON Lines of plain JSON, or DynamoDB JSON (one item per line,
//! bare or in the export wrapper `{"Item": ...}`), optionally gzip or zstd
//! compressed, from a file or standard input; or the rows of a Parquet file
//! (through `dynaburst-parquet`, positions being row indexes).
//!
//! Memory does not grow with the input: records are produced one at a
//! time. Every record carries its line number and byte offsets (in the
//! decompressed stream) so that a loader can checkpoint the position below
//! which everything is acknowledged and resume from it, and so that shards
//! (`i/N` byte ranges cut at line boundaries) can split one file.
//!
//! Architecture invariant: no network, no clock, no AWS SDK, no server
//! stack. DynamoDB JSON (values and the export wrapper) is parsed by the
//! `dynaburst-ddbjson` codec, the one place that knows it.

mod export;
mod rejects;
mod typing;

use std::collections::VecDeque;
use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use dynaburst_model::{AttributeValue, Item, Number};
use serde_json::Value;

pub use export::{data_files, ExportFiles, MANIFEST_FILES, MANIFEST_SUMMARY};
pub use rejects::{record_of, RecordSource, REJECTS_SUFFIX};
pub use typing::{
    describe_column_types, infer_cell, parse_type_hints, typed_cell, ColumnType, ColumnTypes, TypeHint, TypeHints,
};

/// Longest line accepted (DynamoDB items are at most 400 KB; DynamoDB JSON
/// and CSV quoting can more than double that).
pub const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;
/// Read buffer size.
const BUFFER_BYTES: usize = 256 * 1024;
/// CSV records whose cells decide the untyped columns' types, by default.
pub const DEFAULT_TYPE_WINDOW: usize = 10_000;

/// Input format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Csv,
    JsonLines,
    DynamoDbJson,
    /// A rejects file of an earlier load (`*.rejects.jsonl`): each line's
    /// record, read as its input was (the lines say how).
    Rejects,
    /// A Parquet file, read through `dynaburst-parquet`: a record per row,
    /// its position the row's index.
    Parquet,
}

impl Format {
    /// Parses `csv`, `jsonl` (or `json`), `ddb-json` (or `dynamodb-json`).
    pub fn from_name(name: &str) -> Option<Format> {
        match name {
            "csv" => Some(Format::Csv),
            "jsonl" | "json" | "ndjson" | "json-lines" => Some(Format::JsonLines),
            "ddb-json" | "dynamodb-json" | "ddbjson" => Some(Format::DynamoDbJson),
            "rejects" => Some(Format::Rejects),
            "parquet" => Some(Format::Parquet),
            _ => None,
        }
    }

    /// The name `from_name` takes.
    pub fn name(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::JsonLines => "jsonl",
            Format::DynamoDbJson => "ddb-json",
            Format::Rejects => "rejects",
            Format::Parquet => "parquet",
        }
    }
}

/// Compression of the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Zstd,
}

/// Format and compression from a file name: `x.csv.gz`, `x.jsonl.zst`,
/// `x.ddb.json`, `x.ddbjson`. DynamoDB JSON files are named `.ddb.json`,
/// `.ddbjson` or `.dynamodb.json`.
pub fn detect(path: &Path) -> (Option<Format>, Compression) {
    if path.is_dir() {
        // A directory in DynamoDB's export-to-S3 layout: gzipped DynamoDB
        // JSON data files (each decompressed as it is read).
        return (Some(Format::DynamoDbJson), Compression::Gzip);
    }
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("").to_ascii_lowercase();
    let (stem, compression) = if let Some(s) = name.strip_suffix(".gz") {
        (s.to_string(), Compression::Gzip)
    } else if let Some(s) = name.strip_suffix(".zst").or_else(|| name.strip_suffix(".zstd")) {
        (s.to_string(), Compression::Zstd)
    } else {
        (name, Compression::None)
    };
    let format = if stem.ends_with(REJECTS_SUFFIX) {
        Some(Format::Rejects)
    } else if stem.ends_with(".ddb.json") || stem.ends_with(".ddbjson") || stem.ends_with(".dynamodb.json") {
        Some(Format::DynamoDbJson)
    } else if stem.ends_with(".csv") || stem.ends_with(".tsv") {
        Some(Format::Csv)
    } else if stem.ends_with(".jsonl") || stem.ends_with(".ndjson") || stem.ends_with(".json") {
        Some(Format::JsonLines)
    } else if stem.ends_with(".parquet") {
        Some(Format::Parquet)
    } else {
        None
    };
    (format, compression)
}

/// Why a record could not be turned into an item. The record is rejected
/// (it goes to the rejects file) and the load goes on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordError(pub String);

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why the input as a whole cannot be read.
#[derive(Debug)]
pub enum InputError {
    /// Opening or reading failed.
    Io { path: String, source: io::Error },
    /// The CSV header is missing or broken.
    Header(String),
    /// The options cannot be applied to this input (e.g. a shard of stdin).
    Unsupported(String),
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputError::Io { path, source } => write!(f, "cannot read {path}: {source}"),
            InputError::Header(m) => write!(f, "bad CSV header: {m}"),
            InputError::Unsupported(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for InputError {}

/// One input record.
#[derive(Clone, Debug)]
pub struct Record {
    /// 1-based line number of the record's first line.
    pub line: u64,
    /// Byte offset of the record's start in the (decompressed) input.
    pub offset: u64,
    /// Byte offset just past the record.
    pub end: u64,
    /// The record's text, without its line ending (for the rejects file).
    pub raw: String,
    /// The item, or why there is none.
    pub item: Result<Item, RecordError>,
}

/// How to read the input.
#[derive(Clone, Debug)]
pub struct InputSpec {
    /// None reads standard input.
    pub path: Option<PathBuf>,
    pub format: Format,
    pub compression: Compression,
    /// CSV column types (win over inference).
    pub types: TypeHints,
    /// CSV: every cell a string.
    pub all_strings: bool,
    /// Only the `index`-th of `count` byte ranges (0-based index).
    pub shard: Option<(u64, u64)>,
    /// Resume: start at this byte offset and line (from a checkpoint).
    pub resume_at: Option<(u64, u64)>,
    /// JSON Lines: leave each record's text unparsed (its `item` is then
    /// an empty item), for a target that converts the text itself (MongoDB
    /// keeps Extended JSON and number types the DynamoDB model has not).
    pub raw_json: bool,
    /// CSV: the records (from the start of the data) whose cells decide
    /// each untyped column's type ([`DEFAULT_TYPE_WINDOW`]; the loader
    /// passes its read-ahead `--window`).
    pub type_window: usize,
}

impl InputSpec {
    /// The whole file at `path` in `format`, nothing resumed or sharded, CSV
    /// types inferred over [`DEFAULT_TYPE_WINDOW`] records: set the others
    /// with struct update syntax.
    pub fn file(path: impl Into<PathBuf>, format: Format, compression: Compression) -> Self {
        Self {
            path: Some(path.into()),
            format,
            compression,
            types: TypeHints::new(),
            all_strings: false,
            shard: None,
            resume_at: None,
            raw_json: false,
            type_window: DEFAULT_TYPE_WINDOW,
        }
    }
}

/// A Parquet file's rows (`dynaburst-parquet`, the `parquet` feature).
#[cfg(feature = "parquet")]
type ParquetRows = dynaburst_parquet::Rows;
/// Built without the `parquet` feature, no reader holds Parquet rows.
#[cfg(not(feature = "parquet"))]
type ParquetRows = std::convert::Infallible;

/// A streaming record reader.
pub struct Reader {
    source: Box<dyn BufRead + Send>,
    spec: InputSpec,
    /// Byte offset of the next unread byte (decompressed stream).
    offset: u64,
    /// Line number of the next line.
    line: u64,
    /// Stop once a record starts at or past this offset (shards).
    stop_at: Option<u64>,
    header: Option<Vec<String>>,
    /// CSV: each column's type (hinted, inferred, or strings), in header
    /// order.
    columns: ColumnTypes,
    /// Records read ahead to infer CSV types from (standard input, which
    /// cannot be read twice): handed out before any further record.
    lookahead: VecDeque<RawRecord>,
    /// Total input bytes when known (plain files), for progress.
    total_bytes: Option<u64>,
    /// A rejects file: where its records came from (from its first line).
    rejects_source: Option<RecordSource>,
    /// A Parquet file's rows (its records come from there, not `source`).
    parquet: Option<ParquetRows>,
    done: bool,
    buf: Vec<u8>,
}

/// A record's text and position, before parsing.
struct RawRecord {
    line: u64,
    offset: u64,
    end: u64,
    raw: String,
    /// Set when the record cannot be parsed at all (an overlong line).
    error: Option<RecordError>,
}

pub(crate) fn io_err(path: &str, source: io::Error) -> InputError {
    InputError::Io { path: path.to_string(), source }
}

impl Reader {
    /// Opens the input, reads the CSV header, and positions the reader at
    /// the shard's first line or the resume offset.
    pub fn open(spec: InputSpec) -> Result<Reader, InputError> {
        let name = spec.path.as_ref().map(|p| p.display().to_string()).unwrap_or_else(|| "standard input".to_string());
        if spec.format == Format::Parquet {
            return Reader::open_parquet(spec, &name);
        }
        let export_dir = spec.path.as_ref().is_some_and(|p| p.is_dir());
        let seekable = spec.path.is_some() && spec.compression == Compression::None && !export_dir;
        if spec.shard.is_some() && !seekable {
            return Err(InputError::Unsupported(format!(
                "--shard needs an uncompressed file to split into byte ranges; {name} is {}",
                if spec.path.is_none() {
                    "standard input"
                } else if export_dir {
                    "an export directory"
                } else {
                    "compressed"
                }
            )));
        }
        let (raw, total_bytes): (Box<dyn Read + Send>, Option<u64>) = match &spec.path {
            Some(p) if export_dir => {
                if spec.format != Format::DynamoDbJson {
                    return Err(InputError::Unsupported(format!(
                        "{name} is a directory: a DynamoDB export (DynamoDB JSON) is the only directory input"
                    )));
                }
                (Box::new(ExportFiles::open(p)?), None)
            }
            Some(p) => {
                let f = File::open(p).map_err(|e| io_err(&name, e))?;
                let len = f.metadata().map(|m| m.len()).ok();
                (Box::new(f), if spec.compression == Compression::None { len } else { None })
            }
            None => {
                if spec.resume_at.is_some() {
                    return Err(InputError::Unsupported(
                        "--resume cannot rewind standard input: load from a file to resume".to_string(),
                    ));
                }
                (Box::new(io::stdin()), None)
            }
        };
        let decoded: Box<dyn Read + Send> = match spec.compression {
            // An export directory's files are decompressed one by one.
            _ if export_dir => raw,
            Compression::None => raw,
            Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(raw)),
            Compression::Zstd => Box::new(zstd::stream::read::Decoder::new(raw).map_err(|e| io_err(&name, e))?),
        };
        let source: Box<dyn BufRead + Send> = Box::new(BufReader::with_capacity(BUFFER_BYTES, decoded));
        let mut reader = Reader {
            source,
            offset: 0,
            line: 1,
            stop_at: None,
            header: None,
            columns: ColumnTypes::default(),
            lookahead: VecDeque::new(),
            total_bytes,
            rejects_source: None,
            parquet: None,
            done: false,
            buf: Vec::with_capacity(4096),
            spec,
        };
        if reader.spec.format == Format::Csv {
            reader.read_header(&name)?;
        }
        if reader.spec.format == Format::Rejects {
            reader.read_rejects_source(&name)?;
        }
        // Where the data starts (just past a CSV header).
        let data = reader.offset;
        if reader.spec.format == Format::Csv {
            reader.infer_column_types(&name)?;
        }
        // Where to begin: the shard's first record, or the resume point.
        let mut shard_line = None;
        let shard_range = match (reader.spec.shard, total_bytes) {
            (Some((i, n)), Some(len)) => {
                let (start, end) = (len * i / n, len * (i + 1) / n);
                // The shard starts at the first record start at or after
                // its byte range (its line number counted on the way). In
                // CSV a quoted field may hold line breaks, so a line start
                // is not always a record start: the end moves the same way,
                // as the next shard's start does. Other formats end where a
                // record starts at or past the range's end.
                let quotes = reader.spec.format == Format::Csv;
                let (first, lines) = record_start(&name, &reader.spec, data, start, quotes)?;
                shard_line = Some(reader.line + lines);
                let last = if quotes { record_start(&name, &reader.spec, data, end, quotes)?.0 } else { end };
                Some((first, last))
            }
            _ => None,
        };
        let begin = reader.spec.resume_at.map(|(o, _)| o).or(shard_range.map(|(s, _)| s));
        if let Some(target) = begin {
            if target > reader.offset {
                reader.skip_to(target, &name)?;
            }
        }
        if let Some((_, line)) = reader.spec.resume_at.or(shard_line.map(|l| (0, l))) {
            reader.line = line;
        }
        reader.stop_at = shard_range.map(|(_, end)| end);
        Ok(reader)
    }

    /// A Parquet file: positions are row indexes (a record's `offset` is
    /// its row's index, `end` the next row's, `line` the index plus one),
    /// so the checkpoint's offset is a row; a shard is a run of row groups.
    /// Its records' text is the row as DynamoDB JSON, which is how a
    /// rejects file of it reads back.
    fn open_parquet(spec: InputSpec, name: &str) -> Result<Reader, InputError> {
        let Some(path) = spec.path.clone() else {
            return Err(InputError::Unsupported(
                "Parquet is read from a file (its footer comes first): standard input cannot be".to_string(),
            ));
        };
        if spec.compression != Compression::None {
            return Err(InputError::Unsupported(format!(
                "{name}: a Parquet file compresses its own pages; it cannot be gzip or zstd compressed as a whole"
            )));
        }
        #[cfg(not(feature = "parquet"))]
        return Err(InputError::Unsupported(format!(
            "{name}: this build reads no Parquet (dynaburst-input's `parquet` feature is off): {}",
            path.display()
        )));
        #[cfg(feature = "parquet")]
        Reader::open_parquet_rows(spec, name, &path)
    }

    #[cfg(feature = "parquet")]
    fn open_parquet_rows(spec: InputSpec, name: &str, path: &Path) -> Result<Reader, InputError> {
        let rows = dynaburst_parquet::Rows::open(path, spec.shard, spec.resume_at.map(|(row, _)| row)).map_err(
            |e| match e {
                dynaburst_parquet::ParquetError::Io(e) => io_err(name, e),
                other => InputError::Unsupported(format!("{name}: {other}")),
            },
        )?;
        let start = rows.position();
        Ok(Reader {
            source: Box::new(io::empty()),
            offset: start,
            line: start + 1,
            stop_at: None,
            header: None,
            columns: ColumnTypes::default(),
            lookahead: VecDeque::new(),
            // Progress counts rows.
            total_bytes: Some(rows.total_rows()),
            rejects_source: Some(RecordSource::new(Format::DynamoDbJson, None, None)),
            parquet: Some(rows),
            done: false,
            buf: Vec::new(),
            spec,
        })
    }

    /// Built without Parquet: there are no rows.
    #[cfg(not(feature = "parquet"))]
    fn next_parquet(&mut self) -> Result<Option<Record>, InputError> {
        match self.parquet {
            Some(never) => match never {},
            None => Ok(None),
        }
    }

    /// The next Parquet row as a record.
    #[cfg(feature = "parquet")]
    fn next_parquet(&mut self) -> Result<Option<Record>, InputError> {
        let name = self.name();
        let Some(rows) = self.parquet.as_mut() else { return Ok(None) };
        let Some(row) = rows.next_row().map_err(|e| InputError::Unsupported(format!("{name}: {e}")))? else {
            return Ok(None);
        };
        self.offset = row.index + 1;
        self.line = row.index + 2;
        Ok(Some(Record {
            line: row.index + 1,
            offset: row.index,
            end: row.index + 1,
            raw: row.raw,
            item: row.item.map_err(RecordError),
        }))
    }

    /// Total input bytes, when known (for Parquet, rows: its positions
    /// are rows).
    pub fn total_bytes(&self) -> Option<u64> {
        self.total_bytes
    }

    /// Byte offset of the next unread byte.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The line number the next record starts on.
    pub fn line(&self) -> u64 {
        self.line
    }

    /// The CSV header, for the rejects file and dry runs.
    pub fn header(&self) -> Option<&[String]> {
        self.header.as_deref()
    }

    /// Where this input's records come from (for a rejects file, the
    /// input its records came from), for the rejects file of this load.
    pub fn record_source(&self) -> RecordSource {
        match &self.rejects_source {
            Some(s) => s.clone(),
            None => RecordSource::new(self.spec.format, self.header.as_deref(), self.column_types()),
        }
    }

    /// A rejects file: its first line says how its records are read.
    fn read_rejects_source(&mut self, name: &str) -> Result<(), InputError> {
        let Some(path) = self.spec.path.clone() else {
            return Err(InputError::Unsupported("a rejects file is read from a file, not standard input".into()));
        };
        let mut first = Reader::open(InputSpec {
            path: Some(path),
            format: Format::JsonLines,
            shard: None,
            resume_at: None,
            raw_json: true,
            ..self.spec.clone()
        })?;
        let Some(line) = first.next_raw(name)? else {
            return Err(InputError::Unsupported(format!("{name} is empty: no rejected records to load")));
        };
        let source = RecordSource::from_line(name, &line.raw)?;
        if source.format == Format::Csv {
            self.header = source.header.clone();
            self.columns = source.column_types()?;
        }
        self.rejects_source = Some(source);
        Ok(())
    }

    fn read_header(&mut self, name: &str) -> Result<(), InputError> {
        let Some(raw) = self.next_line(name)? else {
            return Err(InputError::Header(format!("{name} is empty: a CSV input starts with a header row")));
        };
        let mut rdr = csv::ReaderBuilder::new().has_headers(false).from_reader(raw.as_bytes());
        let mut rec = csv::StringRecord::new();
        match rdr.read_record(&mut rec) {
            Ok(true) => {}
            _ => return Err(InputError::Header(format!("cannot parse the first line of {name} as CSV"))),
        }
        let columns: Vec<String> = rec.iter().map(|c| c.trim_start_matches('\u{feff}').to_string()).collect();
        if columns.iter().any(|c| c.is_empty()) {
            return Err(InputError::Header("a column has an empty name".to_string()));
        }
        self.header = Some(columns);
        Ok(())
    }

    /// Positions at `target`, a record start (a shard's first record, or a
    /// resume offset).
    fn skip_to(&mut self, target: u64, name: &str) -> Result<(), InputError> {
        if let Some(p) = &self.spec.path {
            if self.spec.compression == Compression::None && !p.is_dir() {
                // Seek the file directly: reopen and seek.
                let mut f = File::open(p).map_err(|e| io_err(name, e))?;
                f.seek(SeekFrom::Start(target)).map_err(|e| io_err(name, e))?;
                self.source = Box::new(BufReader::with_capacity(BUFFER_BYTES, f));
                self.offset = target;
                return Ok(());
            }
        }
        // Compressed: decompress and discard.
        while self.offset < target {
            let available = self.source.fill_buf().map_err(|e| io_err(name, e))?;
            if available.is_empty() {
                break;
            }
            let n = available.len().min((target - self.offset) as usize);
            self.source.consume(n);
            self.offset += n as u64;
        }
        Ok(())
    }

    /// Skips the rest of the current line, through its line break, a
    /// buffer at a time (an overlong line is never held in memory).
    fn discard_line(&mut self, name: &str) -> Result<(), InputError> {
        loop {
            let available = self.source.fill_buf().map_err(|e| io_err(name, e))?;
            if available.is_empty() {
                return Ok(());
            }
            let (n, found) = match available.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (available.len(), false),
            };
            self.source.consume(n);
            self.offset += n as u64;
            if found {
                return Ok(());
            }
        }
    }

    /// The next physical line without its ending; None at the end.
    fn next_line(&mut self, name: &str) -> Result<Option<String>, InputError> {
        self.buf.clear();
        let n = (&mut self.source)
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| io_err(name, e))?;
        if n == 0 {
            return Ok(None);
        }
        self.offset += n as u64;
        self.line += 1;
        while self.buf.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
            self.buf.pop();
        }
        // Valid UTF-8 (nearly every line) is checked word by word; only an
        // invalid line takes the replacement path.
        Ok(Some(match std::str::from_utf8(&self.buf) {
            Ok(text) => text.to_owned(),
            Err(_) => String::from_utf8_lossy(&self.buf).into_owned(),
        }))
    }

    /// The next record, None at the end of the input (or of the shard).
    pub fn next_record(&mut self) -> Result<Option<Record>, InputError> {
        if self.parquet.is_some() {
            return self.next_parquet();
        }
        let next = match self.lookahead.pop_front() {
            Some(r) => Some(r),
            None => {
                let name = self.name();
                self.next_raw(&name)?
            }
        };
        let Some(RawRecord { line, offset, end, mut raw, error }) = next else { return Ok(None) };
        let item = match error {
            Some(e) => Err(e),
            None => match self.spec.format {
                Format::Csv => self.parse_csv(&raw),
                Format::JsonLines if self.spec.raw_json => Ok(Item::new()),
                Format::JsonLines => parse_json_line(&raw),
                Format::DynamoDbJson => parse_ddb_json_line(&raw),
                Format::Rejects => match record_of(&raw) {
                    Ok(record) => {
                        raw = record;
                        match self.rejects_source.as_ref().map(|s| s.format) {
                            Some(Format::Csv) => self.parse_csv(&raw),
                            Some(Format::DynamoDbJson) => parse_ddb_json_line(&raw),
                            _ => parse_json_line(&raw),
                        }
                    }
                    Err(e) => Err(RecordError(e)),
                },
                // Its rows come from `next_parquet`.
                Format::Parquet => Err(RecordError("a Parquet row read as text".to_string())),
            },
        };
        Ok(Some(Record { line, offset, end, raw, item }))
    }

    fn name(&self) -> String {
        self.spec.path.as_ref().map(|p| p.display().to_string()).unwrap_or_else(|| "standard input".to_string())
    }

    /// The next record's text and position, None at the end of the input
    /// (or of the shard).
    fn next_raw(&mut self, name: &str) -> Result<Option<RawRecord>, InputError> {
        loop {
            if self.done || self.stop_at.is_some_and(|s| self.offset >= s) {
                self.done = true;
                return Ok(None);
            }
            let offset = self.offset;
            let line = self.line;
            let Some(mut raw) = self.next_line(name)? else {
                self.done = true;
                return Ok(None);
            };
            if raw.len() > MAX_LINE_BYTES {
                // Finish the overlong line, then reject it.
                if !raw.ends_with('\n') {
                    self.discard_line(name)?;
                }
                raw.truncate(200);
                let error = Some(RecordError(format!("line longer than {MAX_LINE_BYTES} bytes")));
                return Ok(Some(RawRecord { line, offset, end: self.offset, raw, error }));
            }
            if raw.trim().is_empty() {
                continue;
            }
            if self.spec.format == Format::Csv {
                // A quoted field may span lines: keep reading while the
                // quotes are unbalanced. Each line's quotes are counted
                // once, so a record of many lines costs linear time.
                let quotes = |s: &str| s.bytes().filter(|b| *b == b'"').count();
                let mut unbalanced = quotes(&raw) % 2 == 1;
                while unbalanced {
                    match self.next_line(name)? {
                        Some(more) => {
                            unbalanced ^= quotes(&more) % 2 == 1;
                            raw.push('\n');
                            raw.push_str(&more);
                        }
                        None => break,
                    }
                    if raw.len() > MAX_LINE_BYTES {
                        break;
                    }
                }
            }
            return Ok(Some(RawRecord { line, offset, end: self.offset, raw, error: None }));
        }
    }

    /// CSV: each column's type, in header order (None for other formats).
    pub fn column_types(&self) -> Option<&ColumnTypes> {
        (self.spec.format == Format::Csv).then_some(&self.columns)
    }

    /// Decides the type of every column without a `--types` hint from the
    /// first `type_window` records of the data (whatever the shard or the
    /// resume point, so that every shard and every resumed load types a
    /// column alike): N when every value in it is a canonical number, else
    /// S. A file is read for it separately; standard input is read ahead.
    fn infer_column_types(&mut self, name: &str) -> Result<(), InputError> {
        let header = self.header.clone().unwrap_or_default();
        let untyped: Vec<usize> = (0..header.len())
            .filter(|i| !self.spec.all_strings && !self.spec.types.contains_key(&header[*i]))
            .collect();
        let mut seen = Observed { numbers: vec![true; header.len()], any: vec![false; header.len()], records: 0 };
        if !untyped.is_empty() && self.spec.type_window > 0 {
            if self.spec.path.is_some() {
                let mut first = Reader::open(InputSpec {
                    shard: None,
                    resume_at: None,
                    all_strings: true,
                    types: TypeHints::new(),
                    type_window: 0,
                    ..self.spec.clone()
                })?;
                while seen.records < self.spec.type_window {
                    match first.next_raw(name)? {
                        Some(r) => seen.observe(&r.raw, &untyped),
                        None => break,
                    }
                }
            } else {
                while self.lookahead.len() < self.spec.type_window {
                    match self.next_raw(name)? {
                        Some(r) => {
                            seen.observe(&r.raw, &untyped);
                            self.lookahead.push_back(r);
                        }
                        None => break,
                    }
                }
            }
        }
        self.columns = ColumnTypes {
            columns: header
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let ty = match self.spec.types.get(c) {
                        Some(h) => ColumnType::Given(*h),
                        None if self.spec.all_strings => ColumnType::Strings,
                        None if seen.any[i] && seen.numbers[i] => ColumnType::Inferred(TypeHint::N),
                        None => ColumnType::Inferred(TypeHint::S),
                    };
                    (c.clone(), ty)
                })
                .collect(),
            records: seen.records,
        };
        Ok(())
    }

    fn parse_csv(&self, raw: &str) -> Result<Item, RecordError> {
        let header = self.header.as_deref().unwrap_or(&[]);
        let mut rdr = csv::ReaderBuilder::new().has_headers(false).from_reader(raw.as_bytes());
        let mut rec = csv::StringRecord::new();
        match rdr.read_record(&mut rec) {
            Ok(true) => {}
            Ok(false) => return Err(RecordError("empty CSV record".to_string())),
            Err(e) => return Err(RecordError(format!("malformed CSV: {e}"))),
        }
        if rec.len() != header.len() {
            return Err(RecordError(format!("{} fields, but the header has {}", rec.len(), header.len())));
        }
        let mut item = Item::new();
        for ((name, ty), cell) in self.columns.columns.iter().zip(rec.iter()) {
            if cell.is_empty() {
                continue;
            }
            let value = match ty {
                ColumnType::Given(hint) => {
                    typed_cell(cell, *hint).map_err(|e| RecordError(format!("column {name}: {e}")))?
                }
                ColumnType::Strings | ColumnType::Inferred(TypeHint::S) => AttributeValue::S(cell.to_string()),
                ColumnType::Inferred(_) => match infer_cell(cell) {
                    n @ AttributeValue::N(_) => n,
                    _ => {
                        return Err(RecordError(format!(
                            "column {name}: '{cell}' is not a number, but every value of {name} in the first {} \
                             records was, so the column is loaded as numbers: pass --types {name}:S to load it as strings",
                            self.columns.records
                        )))
                    }
                },
            };
            item.insert(name.clone(), value);
        }
        Ok(item)
    }
}

impl Iterator for Reader {
    type Item = Result<Record, InputError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_record().transpose()
    }
}

/// What the first records say of each CSV column.
struct Observed {
    /// Every value seen was a canonical number.
    numbers: Vec<bool>,
    /// Some value was seen.
    any: Vec<bool>,
    /// Records observed (those that parse, with as many fields as the
    /// header).
    records: usize,
}

impl Observed {
    fn observe(&mut self, raw: &str, untyped: &[usize]) {
        let Some(cells) = csv_cells(raw) else { return };
        if cells.len() != self.numbers.len() {
            return;
        }
        self.records += 1;
        for &i in untyped {
            let cell = &cells[i];
            if !cell.is_empty() {
                self.any[i] = true;
                self.numbers[i] &= matches!(infer_cell(cell), AttributeValue::N(_));
            }
        }
    }
}

/// A CSV record's cells, None when it does not parse.
fn csv_cells(raw: &str) -> Option<Vec<String>> {
    let mut rdr = csv::ReaderBuilder::new().has_headers(false).from_reader(raw.as_bytes());
    let mut rec = csv::StringRecord::new();
    match rdr.read_record(&mut rec) {
        Ok(true) => Some(rec.iter().map(str::to_string).collect()),
        _ => None,
    }
}

/// The first record start at or after `target`, scanning from the start
/// of the data (`data`, just past a CSV header) with the reader's own rule:
/// a record ends at a line break (with `quotes`, as in CSV, one outside
/// quotes). Every shard finds the same starts, so a record whose quoted
/// field holds a line break belongs to exactly one shard. The end of the
/// file when none is left. With it, the line breaks from `data` to there,
/// so that a shard's line numbers are the file's. Reads the file up to
/// there: a shard far into a large file spends a moment on it.
fn record_start(name: &str, spec: &InputSpec, data: u64, target: u64, quotes: bool) -> Result<(u64, u64), InputError> {
    let Some(path) = &spec.path else { return Ok((target, 0)) };
    if target <= data {
        return Ok((data, 0));
    }
    let mut f = File::open(path).map_err(|e| io_err(name, e))?;
    f.seek(SeekFrom::Start(data)).map_err(|e| io_err(name, e))?;
    let mut r = BufReader::with_capacity(BUFFER_BYTES, f);
    let mut at = data;
    let mut quoted = false;
    let mut lines = 0;
    loop {
        let buf = r.fill_buf().map_err(|e| io_err(name, e))?;
        if buf.is_empty() {
            return Ok((at, lines));
        }
        let n = buf.len();
        for (i, b) in buf.iter().enumerate() {
            match b {
                b'"' if quotes => quoted = !quoted,
                b'\n' => {
                    lines += 1;
                    let start = at + i as u64 + 1;
                    if !quoted && start >= target {
                        return Ok((start, lines));
                    }
                }
                _ => {}
            }
        }
        r.consume(n);
        at += n as u64;
    }
}

/// Plain JSON to an attribute value: objects to M, arrays to L, numbers to
/// N with their exact text, strings to S, booleans to BOOL, null to NULL.
/// Takes the JSON by value: its strings and names move into the item.
pub fn json_to_value(v: Value, depth: usize) -> Result<AttributeValue, RecordError> {
    if depth > dynaburst_ddbjson::MAX_NESTING_DEPTH {
        return Err(RecordError("nested more than 32 levels".to_string()));
    }
    Ok(match v {
        Value::Null => AttributeValue::Null,
        Value::Bool(b) => AttributeValue::Bool(b),
        Value::Number(n) => {
            let text = n.as_str();
            AttributeValue::N(Number::parse(text).map_err(|e| RecordError(format!("number {text}: {e}")))?)
        }
        Value::String(s) => AttributeValue::S(s),
        Value::Array(a) => {
            AttributeValue::L(a.into_iter().map(|e| json_to_value(e, depth + 1)).collect::<Result<_, _>>()?)
        }
        Value::Object(o) => AttributeValue::M(
            o.into_iter().map(|(k, e)| Ok((k, json_to_value(e, depth + 1)?))).collect::<Result<_, RecordError>>()?,
        ),
    })
}

/// One JSON Lines record: a JSON object.
pub fn parse_json_line(raw: &str) -> Result<Item, RecordError> {
    let v: Value = serde_json::from_str(raw).map_err(|e| RecordError(format!("malformed JSON: {e}")))?;
    let Value::Object(o) = v else {
        return Err(RecordError("a JSON Lines record must be an object".to_string()));
    };
    let mut item = Item::new();
    for (k, e) in o {
        let value = json_to_value(e, 0)?;
        item.insert(k, value);
    }
    Ok(item)
}

/// One DynamoDB JSON record, bare or in the export wrapper `{"Item": …}`.
pub fn parse_ddb_json_line(raw: &str) -> Result<Item, RecordError> {
    let v: Value = serde_json::from_str(raw).map_err(|e| RecordError(format!("malformed JSON: {e}")))?;
    if !v.is_object() {
        return Err(RecordError("a DynamoDB JSON record must be an object".to_string()));
    }
    dynaburst_ddbjson::parse_item(dynaburst_ddbjson::export_item(&v)).map_err(|e| RecordError(e.to_string()))
}
