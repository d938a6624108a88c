//! A directory in DynamoDB's export-to-S3 layout as one stream of
//! DynamoDB JSON lines: `manifest-files.json` lists the data files (JSON
//! Lines, `dataFileS3Key` each), `data/*.json.gz` hold `{"Item": {...}}`
//! lines. The files are read in the manifest's order (or by name when
//! there is no manifest), each decompressed, one after the other.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::{io_err, InputError};

/// The manifest that lists an export's data files.
pub const MANIFEST_FILES: &str = "manifest-files.json";
/// The manifest that summarizes an export.
pub const MANIFEST_SUMMARY: &str = "manifest-summary.json";
/// Most data files an export directory may list.
pub const MAX_DATA_FILES: usize = 1_000_000;

/// The directory holding the manifests: `dir` itself, or the one export
/// under `dir/AWSDynamoDB/`.
fn export_root(dir: &Path, name: &str) -> Result<PathBuf, InputError> {
    if dir.join(MANIFEST_FILES).is_file() || dir.join("data").is_dir() {
        return Ok(dir.to_path_buf());
    }
    let aws = dir.join("AWSDynamoDB");
    if aws.is_dir() {
        let mut exports: Vec<PathBuf> = std::fs::read_dir(&aws)
            .map_err(|e| io_err(name, e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.join(MANIFEST_FILES).is_file())
            .collect();
        if exports.len() == 1 {
            return Ok(exports.remove(0));
        }
        if exports.len() > 1 {
            return Err(InputError::Unsupported(format!(
                "{name} holds {} exports under AWSDynamoDB/: load one of them (a directory with {MANIFEST_FILES})",
                exports.len()
            )));
        }
    }
    Err(InputError::Unsupported(format!(
        "{name} is a directory but not a DynamoDB export: it has no {MANIFEST_FILES} and no data/ directory"
    )))
}

/// The data files of the export in `dir`, in order.
pub fn data_files(dir: &Path) -> Result<Vec<PathBuf>, InputError> {
    let name = dir.display().to_string();
    let root = export_root(dir, &name)?;
    let manifest = root.join(MANIFEST_FILES);
    let mut files = Vec::new();
    if manifest.is_file() {
        let text = std::fs::read_to_string(&manifest).map_err(|e| io_err(&manifest.display().to_string(), e))?;
        for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let bad = |what: &str| InputError::Unsupported(format!("{} line {}: {what}", manifest.display(), n + 1));
            let v: Value = serde_json::from_str(line).map_err(|e| bad(&format!("not JSON: {e}")))?;
            let key = v.get("dataFileS3Key").and_then(Value::as_str).ok_or_else(|| bad("no dataFileS3Key"))?;
            // The key is the S3 key (".../AWSDynamoDB/<id>/data/x.json.gz"):
            // the file is under this directory's data/.
            let file = key.rsplit('/').next().filter(|f| !f.is_empty() && *f != ".." && *f != ".");
            let file = file.ok_or_else(|| bad("dataFileS3Key names no file"))?;
            files.push(root.join("data").join(file));
            if files.len() > MAX_DATA_FILES {
                return Err(bad("too many data files"));
            }
        }
    } else {
        let data = root.join("data");
        for entry in std::fs::read_dir(&data).map_err(|e| io_err(&data.display().to_string(), e))? {
            let p = entry.map_err(|e| io_err(&name, e))?.path();
            let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if n.ends_with(".json.gz") || n.ends_with(".json") {
                files.push(p);
            }
            if files.len() > MAX_DATA_FILES {
                return Err(InputError::Unsupported(format!("{name}: too many data files")));
            }
        }
        files.sort();
    }
    Ok(files)
}

/// The decompressed data files, one after the other (a line break between
/// two files when the first does not end with one).
pub struct ExportFiles {
    files: VecDeque<PathBuf>,
    current: Option<Box<dyn Read + Send>>,
    /// The last byte of the current file, and whether it had any.
    last: Option<u8>,
}

impl ExportFiles {
    pub fn open(dir: &Path) -> Result<ExportFiles, InputError> {
        let files = data_files(dir)?;
        // Every listed file must be there before the load starts.
        if let Some(missing) = files.iter().find(|f| !f.is_file()) {
            return Err(InputError::Unsupported(format!(
                "{}: the data file {} that {MANIFEST_FILES} lists is missing",
                dir.display(),
                missing.display()
            )));
        }
        Ok(ExportFiles { files: files.into(), current: None, last: None })
    }
}

impl Read for ExportFiles {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        // Each turn opens a file or reads from one: bounded by the files.
        loop {
            let Some(current) = self.current.as_mut() else {
                let Some(next) = self.files.pop_front() else { return Ok(0) };
                let f = BufReader::new(File::open(&next)?);
                let gz = next.extension().is_some_and(|e| e == "gz");
                self.current = Some(if gz { Box::new(flate2::read::MultiGzDecoder::new(f)) } else { Box::new(f) });
                continue;
            };
            let n = current.read(buf)?;
            if n > 0 {
                self.last = Some(buf[n - 1]);
                return Ok(n);
            }
            self.current = None;
            if self.last.take().is_some_and(|b| b != b'\n') {
                buf[0] = b'\n';
                return Ok(1);
            }
        }
    }
}
