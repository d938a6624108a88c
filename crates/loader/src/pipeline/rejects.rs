//! The rejects file: one JSON line per rejected record (line, record,
//! error), in input order, never holding a reject of a record a resumed
//! load reads again.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;

use serde::Serialize;
use serde_json::{Map, Value};

use super::PipelineError;

/// One line of the rejects file (fields in the order they always had).
#[derive(Serialize)]
struct RejectLine<'a> {
    error: &'a str,
    line: u64,
    record: &'a str,
    /// Where the record came from (`format`, CSV's `header` and `types`),
    /// so that the rejects file loads back as it is.
    #[serde(flatten)]
    source: &'a Map<String, Value>,
}

/// Rejects waiting for the checkpoint to pass them, and the file.
pub struct Rejects {
    path: PathBuf,
    file: Option<File>,
    /// The fields every line carries besides its record.
    source: Map<String, Value>,
    /// Length of the file: every reject of a record below the checkpoint.
    pub bytes: u64,
    /// Rejects not yet in the file, by record sequence number: each waits
    /// until every record before it is acknowledged, so the file never
    /// holds a reject of a record a resumed load reads again (and the file
    /// is in input order).
    pending: BTreeMap<u64, String>,
}

impl Rejects {
    /// The rejects file at `path`; when resuming, cut to `keep` bytes (the
    /// records after the checkpoint are read again, so their rejects are
    /// dropped and written anew). A new load (`keep` None) starts a new
    /// file: one left by an earlier load is removed, so the file only ever
    /// holds this load's rejects.
    pub fn open(path: PathBuf, keep: Option<u64>, source: Map<String, Value>) -> Result<Rejects, PipelineError> {
        let mut bytes = 0;
        if let Some(keep) = keep {
            if let Ok(f) = OpenOptions::new().write(true).open(&path) {
                f.set_len(keep).map_err(|e| PipelineError::Io(format!("cannot trim {}: {e}", path.display())))?;
            }
            bytes = keep;
        } else {
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(PipelineError::Io(format!(
                        "cannot remove the previous load's rejects file {}: {e}",
                        path.display()
                    )))
                }
            }
        }
        Ok(Rejects { path, file: None, source, bytes, pending: BTreeMap::new() })
    }

    /// True once anything was written to the file.
    pub fn written(&self) -> bool {
        self.file.is_some()
    }

    /// Holds the reject of record `seq`; returns the bytes it holds.
    pub fn hold(&mut self, seq: u64, line: u64, record: &str, error: &str) -> usize {
        let text = serde_json::to_string(&RejectLine { error, line, record, source: &self.source }).unwrap_or_default();
        let held = text.len();
        self.pending.insert(seq, text);
        held
    }

    /// Writes the rejects of records below `low` (every record before it
    /// is acknowledged); returns the bytes no longer held.
    pub fn flush(&mut self, low: u64) -> Result<usize, PipelineError> {
        if self.pending.first_key_value().is_none_or(|(seq, _)| *seq >= low) {
            return Ok(0);
        }
        let later = self.pending.split_off(&low);
        let due = std::mem::replace(&mut self.pending, later);
        let mut text = String::new();
        let mut released = 0;
        for line_json in due.values() {
            released += line_json.len();
            text.push_str(line_json);
            text.push('\n');
        }
        if self.file.is_none() {
            let f = OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.path)
                .map_err(|e| PipelineError::Io(format!("cannot open rejects file {}: {e}", self.path.display())))?;
            self.file = Some(f);
        }
        if let Some(f) = self.file.as_mut() {
            f.write_all(text.as_bytes())
                .map_err(|e| PipelineError::Io(format!("cannot write rejects file {}: {e}", self.path.display())))?;
        }
        self.bytes += text.len() as u64;
        Ok(released)
    }
}
