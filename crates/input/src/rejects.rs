//! Rejects files as input. Every line of a rejects file says, beside the
//! record, where the record came from (`format`, and for CSV the `header`
//! and the column `types` the load used), so that the file loads back as it
//! is once its records are fixed: `dynaburst load INPUT.rejects.jsonl`
//! reads each line's `record` as the original input would have been read.

use serde_json::{Map, Value};

use crate::typing::{parse_type_hints, ColumnType, ColumnTypes};
use crate::{Format, InputError};

/// The suffix of a rejects file's name.
pub const REJECTS_SUFFIX: &str = ".rejects.jsonl";

/// Where records came from: the format, and for CSV the header and the
/// column types (`NAME:TYPE,...` as `--types` takes them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordSource {
    pub format: Format,
    pub header: Option<Vec<String>>,
    pub types: Option<String>,
}

impl RecordSource {
    /// The source of records read with `columns` (CSV) in `format`.
    pub fn new(format: Format, header: Option<&[String]>, columns: Option<&ColumnTypes>) -> RecordSource {
        let types = columns.map(|c| {
            c.columns
                .iter()
                .map(|(name, ty)| {
                    let t = match ty {
                        ColumnType::Strings => "S",
                        other => other.name(),
                    };
                    format!("{name}:{t}")
                })
                .collect::<Vec<_>>()
                .join(",")
        });
        RecordSource { format, header: header.map(<[String]>::to_vec), types }
    }

    /// The fields a rejects line carries for it.
    pub fn fields(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("format".into(), Value::String(self.format.name().to_string()));
        if let Some(h) = &self.header {
            m.insert("header".into(), Value::Array(h.iter().cloned().map(Value::String).collect()));
        }
        if let Some(t) = &self.types {
            m.insert("types".into(), Value::String(t.clone()));
        }
        m
    }

    /// The source a rejects line names.
    pub fn from_line(name: &str, line: &str) -> Result<RecordSource, InputError> {
        let bad =
            |what: &str| InputError::Unsupported(format!("{name} is not a rejects file dynaburst can load: {what}"));
        let v: Value = serde_json::from_str(line).map_err(|e| bad(&format!("its first line is not JSON ({e})")))?;
        let format = v
            .get("format")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("its lines do not say the records' format (written by an older dynaburst?)"))?;
        let format =
            Format::from_name(format).filter(|f| *f != Format::Rejects).ok_or_else(|| bad("unknown format"))?;
        let header = match v.get("header") {
            Some(Value::Array(a)) => Some(
                a.iter()
                    .map(|c| c.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| bad("a header column is not a string"))?,
            ),
            _ => None,
        };
        if format == Format::Csv && header.is_none() {
            return Err(bad("CSV records without the header"));
        }
        let types = v.get("types").and_then(Value::as_str).map(str::to_string);
        Ok(RecordSource { format, header, types })
    }

    /// CSV: the column types the original load used, as given types.
    pub fn column_types(&self) -> Result<ColumnTypes, InputError> {
        let hints = parse_type_hints(self.types.as_deref().unwrap_or(""))
            .map_err(|e| InputError::Unsupported(format!("the rejects file's column types: {e}")))?;
        let columns = self
            .header
            .iter()
            .flatten()
            .map(|c| (c.clone(), hints.get(c).map(|h| ColumnType::Given(*h)).unwrap_or(ColumnType::Strings)))
            .collect();
        Ok(ColumnTypes { columns, records: 0 })
    }
}

/// The record text of a rejects line.
pub fn record_of(line: &str) -> Result<String, String> {
    let v: Value = serde_json::from_str(line).map_err(|e| format!("malformed rejects line: {e}"))?;
    v.get("record")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| "a rejects line without a \"record\" string".to_string())
}
