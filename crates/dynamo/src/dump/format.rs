//! What `dynaburst dump` writes: items as JSON Lines, DynamoDB JSON export
//! lines, CSV, or a directory in DynamoDB's export-to-S3 layout, into a
//! file or standard output. Every output can be cut back to a checkpoint:
//! a file to its length, an export directory to its finished data files.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use dynaburst_model::{AttributeValue, Item};
use flate2::write::GzEncoder;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::DumpError;

/// Items per data file of an export directory (DynamoDB writes at least
/// one file per partition; a dump writes one per this many items or per
/// checkpoint, whichever comes first).
pub const ITEMS_PER_DATA_FILE: u64 = 100_000;
/// The `version` DynamoDB's export manifests carry.
pub const EXPORT_MANIFEST_VERSION: &str = "2020-06-30";
/// Write buffer size.
const BUFFER_BYTES: usize = 256 * 1024;

/// Output format of `dynaburst dump`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DumpFormat {
    /// Plain JSON, one object a line: numbers exact, binary as base64
    /// strings, sets as arrays (so B and sets come back as S and L).
    Jsonl,
    /// DynamoDB JSON in the export wrapper, one `{"Item": {...}}` a line:
    /// every type kept; `dynaburst load --format ddb-json` reads it back.
    DdbJson,
    /// CSV with a header row: nested values and sets as JSON text.
    Csv,
    /// A directory in DynamoDB's export-to-S3 layout: manifest-summary.json,
    /// manifest-files.json and data/*.json.gz of DynamoDB JSON lines.
    DdbExport,
}

impl DumpFormat {
    /// Parses `jsonl`, `ddb-json`, `csv` or `ddb-export`.
    pub fn from_name(name: &str) -> Option<DumpFormat> {
        match name {
            "jsonl" | "json" => Some(DumpFormat::Jsonl),
            "ddb-json" | "dynamodb-json" => Some(DumpFormat::DdbJson),
            "csv" => Some(DumpFormat::Csv),
            "ddb-export" => Some(DumpFormat::DdbExport),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            DumpFormat::Jsonl => "jsonl",
            DumpFormat::DdbJson => "ddb-json",
            DumpFormat::Csv => "csv",
            DumpFormat::DdbExport => "ddb-export",
        }
    }
}

/// One finished data file of an export directory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DataFile {
    /// File name under `data/`.
    pub name: String,
    pub items: u64,
}

/// Where the output stands at a checkpoint.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OutputMark {
    /// A file's length.
    pub bytes: u64,
    /// An export directory's finished data files.
    pub data_files: Vec<DataFile>,
}

enum Target {
    Stdout(BufWriter<io::Stdout>),
    File(BufWriter<File>),
    Export {
        dir: PathBuf,
        current: Option<(String, GzEncoder<BufWriter<File>>)>,
        current_items: u64,
        files: Vec<DataFile>,
    },
}

/// The output of one dump.
pub struct Output {
    format: DumpFormat,
    target: Target,
    path: String,
    /// Bytes written (files and standard output).
    bytes: u64,
    /// CSV: the columns, once decided.
    columns: Option<Vec<String>>,
    line: String,
}

fn io_error(path: &str, e: io::Error) -> DumpError {
    DumpError::Io(format!("cannot write {path}: {e}"))
}

impl Output {
    /// Opens the output: `None` is standard output. With `resume_at`, a
    /// file is cut back to the checkpoint's length and an export directory
    /// loses every data file the checkpoint does not list; otherwise a file
    /// is created anew (an export directory must be empty or absent).
    pub fn open(
        format: DumpFormat,
        path: Option<&Path>,
        resume_at: Option<&OutputMark>,
        columns: Option<Vec<String>>,
    ) -> Result<Output, DumpError> {
        let name = path.map(|p| p.display().to_string()).unwrap_or_else(|| "standard output".to_string());
        let target = match (format, path) {
            (DumpFormat::DdbExport, None) => {
                return Err(DumpError::Usage("--format ddb-export writes a directory: pass -o DIR".to_string()))
            }
            (DumpFormat::DdbExport, Some(dir)) => {
                let data = dir.join("data");
                let files = match resume_at {
                    Some(mark) => {
                        let keep: Vec<&str> = mark.data_files.iter().map(|f| f.name.as_str()).collect();
                        for entry in std::fs::read_dir(&data).map_err(|e| io_error(&name, e))? {
                            let entry = entry.map_err(|e| io_error(&name, e))?;
                            let file = entry.file_name().to_string_lossy().to_string();
                            if !keep.contains(&file.as_str()) {
                                std::fs::remove_file(entry.path()).map_err(|e| io_error(&name, e))?;
                            }
                        }
                        mark.data_files.clone()
                    }
                    None => {
                        if dir.exists() && std::fs::read_dir(dir).map_err(|e| io_error(&name, e))?.next().is_some() {
                            return Err(DumpError::Usage(format!(
                                "{name} is not empty: an export goes into a new or empty directory"
                            )));
                        }
                        std::fs::create_dir_all(&data).map_err(|e| io_error(&name, e))?;
                        // DynamoDB's marker that the export has begun.
                        File::create(dir.join("_started")).map_err(|e| io_error(&name, e))?;
                        Vec::new()
                    }
                };
                Target::Export { dir: dir.to_path_buf(), current: None, current_items: 0, files }
            }
            (_, None) => Target::Stdout(BufWriter::with_capacity(BUFFER_BYTES, io::stdout())),
            (_, Some(p)) => {
                let f = match resume_at {
                    Some(mark) => {
                        let f = OpenOptions::new().write(true).open(p).map_err(|e| io_error(&name, e))?;
                        f.set_len(mark.bytes).map_err(|e| io_error(&name, e))?;
                        let mut f = f;
                        io::Seek::seek(&mut f, io::SeekFrom::Start(mark.bytes)).map_err(|e| io_error(&name, e))?;
                        f
                    }
                    None => File::create(p).map_err(|e| io_error(&name, e))?,
                };
                Target::File(BufWriter::with_capacity(BUFFER_BYTES, f))
            }
        };
        let bytes = resume_at.map(|m| m.bytes).unwrap_or(0);
        let mut out = Output { format, target, path: name, bytes, columns: None, line: String::new() };
        if let Some(c) = columns {
            // Resuming: the header is already in the file.
            out.columns = Some(c);
        }
        Ok(out)
    }

    /// CSV: the columns are still to be decided.
    pub fn needs_columns(&self) -> bool {
        self.format == DumpFormat::Csv && self.columns.is_none()
    }

    /// CSV: decides the columns and writes the header row.
    pub fn set_columns(&mut self, columns: Vec<String>) -> Result<(), DumpError> {
        let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::Any(b'\n')).from_writer(Vec::new());
        w.write_record(&columns).map_err(|e| DumpError::Io(format!("cannot write the CSV header: {e}")))?;
        let header = w.into_inner().map_err(|e| DumpError::Io(format!("cannot write the CSV header: {e}")))?;
        self.write_bytes(&header)?;
        self.columns = Some(columns);
        Ok(())
    }

    /// CSV: the columns (None until decided, and for other formats).
    pub fn columns(&self) -> Option<&[String]> {
        self.columns.as_deref()
    }

    fn write_bytes(&mut self, bytes: &[u8]) -> Result<(), DumpError> {
        let path = &self.path;
        match &mut self.target {
            Target::Stdout(w) => w.write_all(bytes).map_err(|e| io_error(path, e))?,
            Target::File(w) => w.write_all(bytes).map_err(|e| io_error(path, e))?,
            Target::Export { dir, current, current_items, files } => {
                if current.is_none() {
                    let name = format!("{:05}.json.gz", files.len());
                    let tmp = dir.join("data").join(format!("{name}.tmp"));
                    let f = File::create(&tmp).map_err(|e| io_error(path, e))?;
                    *current = Some((
                        name,
                        GzEncoder::new(BufWriter::with_capacity(BUFFER_BYTES, f), flate2::Compression::fast()),
                    ));
                    *current_items = 0;
                }
                if let Some((_, gz)) = current.as_mut() {
                    gz.write_all(bytes).map_err(|e| io_error(path, e))?;
                }
                *current_items += 1;
            }
        }
        self.bytes += bytes.len() as u64;
        Ok(())
    }

    /// Writes one item.
    pub fn write_item(&mut self, item: &Item) -> Result<(), DumpError> {
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        match self.format {
            DumpFormat::Jsonl => line.push_str(&Value::Object(plain_item(item)).to_string()),
            DumpFormat::DdbJson | DumpFormat::DdbExport => {
                let mut wrapper = Map::with_capacity(1);
                wrapper.insert("Item".to_string(), dynaburst_ddbjson::item_to_json(item));
                line.push_str(&Value::Object(wrapper).to_string());
            }
            DumpFormat::Csv => {
                let columns = self.columns.as_deref().unwrap_or(&[]);
                if let Some(extra) = item.keys().find(|k| !columns.contains(k)) {
                    return Err(DumpError::Columns(format!(
                        "an item has attribute {extra}, which is not among the CSV columns ({}): pass --columns \
                         with every attribute, or dump as jsonl or ddb-json",
                        columns.join(",")
                    )));
                }
                let cells: Vec<String> =
                    columns.iter().map(|c| item.get(c).map(csv_cell).unwrap_or_default()).collect();
                let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::Any(b'\n')).from_writer(Vec::new());
                w.write_record(&cells).map_err(|e| DumpError::Io(format!("cannot write a CSV record: {e}")))?;
                let rec = w.into_inner().map_err(|e| DumpError::Io(format!("cannot write a CSV record: {e}")))?;
                line.push_str(&String::from_utf8_lossy(&rec));
                line.pop();
            }
        }
        line.push('\n');
        let r = self.write_bytes(line.as_bytes());
        self.line = line;
        r?;
        if let Target::Export { current_items, .. } = &self.target {
            if *current_items >= ITEMS_PER_DATA_FILE {
                self.finish_data_file()?;
            }
        }
        Ok(())
    }

    fn finish_data_file(&mut self) -> Result<(), DumpError> {
        let path = self.path.clone();
        if let Target::Export { dir, current, current_items, files } = &mut self.target {
            if let Some((name, gz)) = current.take() {
                let mut inner = gz.finish().map_err(|e| io_error(&path, e))?;
                inner.flush().map_err(|e| io_error(&path, e))?;
                let file = inner.into_inner().map_err(|e| io_error(&path, e.into_error()))?;
                file.sync_all().map_err(|e| io_error(&path, e))?;
                let data = dir.join("data");
                std::fs::rename(data.join(format!("{name}.tmp")), data.join(&name)).map_err(|e| io_error(&path, e))?;
                files.push(DataFile { name, items: *current_items });
                *current_items = 0;
            }
        }
        Ok(())
    }

    /// Makes everything written so far durable and says where the output
    /// stands (an export directory finishes its current data file).
    pub fn mark(&mut self) -> Result<OutputMark, DumpError> {
        let path = self.path.clone();
        match &mut self.target {
            Target::Stdout(w) => w.flush().map_err(|e| io_error(&path, e))?,
            Target::File(w) => {
                w.flush().map_err(|e| io_error(&path, e))?;
                w.get_ref().sync_data().map_err(|e| io_error(&path, e))?;
            }
            Target::Export { .. } => self.finish_data_file()?,
        }
        let data_files = match &self.target {
            Target::Export { files, .. } => files.clone(),
            _ => Vec::new(),
        };
        Ok(OutputMark { bytes: self.bytes, data_files })
    }

    /// Ends the output: flushes it, and an export directory gets its
    /// manifests.
    pub fn finish(&mut self, table_arn: &str, started: &str, ended: &str) -> Result<OutputMark, DumpError> {
        let mark = self.mark()?;
        if let Target::Export { dir, files, .. } = &self.target {
            let name = self.path.clone();
            let mut manifest = String::new();
            for f in files {
                let line = serde_json::json!({
                    "itemCount": f.items,
                    "dataFileS3Key": format!("data/{}", f.name),
                });
                manifest.push_str(&line.to_string());
                manifest.push('\n');
            }
            std::fs::write(dir.join("manifest-files.json"), manifest).map_err(|e| io_error(&name, e))?;
            let summary = serde_json::json!({
                "version": EXPORT_MANIFEST_VERSION,
                "startTime": started,
                "endTime": ended,
                "tableArn": table_arn,
                "manifestFilesS3Key": "manifest-files.json",
                "itemCount": files.iter().map(|f| f.items).sum::<u64>(),
                "outputFormat": "DYNAMODB_JSON",
            });
            std::fs::write(dir.join("manifest-summary.json"), format!("{summary}\n"))
                .map_err(|e| io_error(&name, e))?;
        }
        Ok(mark)
    }
}

/// An item as plain JSON (the `jsonl` format).
pub fn plain_item(item: &Item) -> Map<String, Value> {
    item.iter().map(|(k, v)| (k.clone(), plain_value(v))).collect()
}

/// A value as plain JSON: numbers keep their exact text, binary becomes
/// base64 text, sets become arrays, NULL null.
pub fn plain_value(v: &AttributeValue) -> Value {
    let number = |n: &dynaburst_model::Number| {
        let text = n.to_string();
        text.parse::<serde_json::Number>().map(Value::Number).unwrap_or(Value::String(text))
    };
    match v {
        AttributeValue::S(s) => Value::String(s.clone()),
        AttributeValue::N(n) => number(n),
        AttributeValue::B(b) => Value::String(BASE64.encode(b)),
        AttributeValue::Bool(b) => Value::Bool(*b),
        AttributeValue::Null => Value::Null,
        AttributeValue::Ss(v) => Value::Array(v.iter().map(|s| Value::String(s.clone())).collect()),
        AttributeValue::Ns(v) => Value::Array(v.iter().map(number).collect()),
        AttributeValue::Bs(v) => Value::Array(v.iter().map(|b| Value::String(BASE64.encode(b))).collect()),
        AttributeValue::L(v) => Value::Array(v.iter().map(plain_value).collect()),
        AttributeValue::M(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), plain_value(v))).collect()),
    }
}

/// A CSV cell: scalars as their text, the rest as plain JSON text.
fn csv_cell(v: &AttributeValue) -> String {
    match v {
        AttributeValue::S(s) => s.clone(),
        AttributeValue::N(n) => n.to_string(),
        AttributeValue::Bool(b) => b.to_string(),
        AttributeValue::Null => String::new(),
        other => plain_value(other).to_string(),
    }
}
