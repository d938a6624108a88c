//! The resume point: the input position below which every record is
//! acknowledged (written or rejected), saved atomically.
//!
//! The file is one JSON object, the fields of [`Checkpoint`] plus
//! `version` (1): `input` and `input_bytes` (the input's path, or `-`, and
//! its size), `table` (the target: a table, or db.collection),
//! `offset` and `line` (where the first record not yet acknowledged
//! starts), `rejects_bytes` (the rejects file's length at that point),
//! `complete` and `id_key`. Files written before `rejects_bytes`,
//! `complete` and `id_key` existed read as 0, false and none.

use std::fs;
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// The checkpoint format's version.
pub const CHECKPOINT_VERSION: u32 = 1;

/// A saved position.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The input the checkpoint belongs to (path) and its size, checked on
    /// resume so a checkpoint is never applied to another file.
    pub input: String,
    pub input_bytes: Option<u64>,
    pub table: String,
    /// Byte offset and line of the first record not yet acknowledged.
    pub offset: u64,
    pub line: u64,
    #[serde(default)]
    /// Length of the rejects file at this point (later lines are dropped
    /// on resume, because their records are read again).
    pub rejects_bytes: u64,
    /// True once the whole input was acknowledged.
    #[serde(default)]
    pub complete: bool,
    /// The key a target derives generated ids from (MongoDB's `_id`s for
    /// documents without one), so a resumed load makes the same ids even if
    /// the file was touched meanwhile.
    #[serde(default)]
    pub id_key: Option<u64>,
}

/// The file: the checkpoint and the format's version. Read back through a
/// `Value` (see `load`), so only written with `flatten`.
#[derive(Serialize)]
struct CheckpointFile {
    version: u32,
    #[serde(flatten)]
    checkpoint: Checkpoint,
}

/// Why a checkpoint could not be read.
#[derive(Debug)]
pub enum CheckpointError {
    Read { path: String, error: std::io::Error },
    Damaged { path: String, error: serde_json::Error },
}

impl std::fmt::Display for CheckpointError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CheckpointError::Read { path, error } => write!(f, "cannot read checkpoint {path}: {error}"),
            CheckpointError::Damaged { path, error } => write!(f, "checkpoint {path} is damaged: {error}"),
        }
    }
}

impl std::error::Error for CheckpointError {}

impl Checkpoint {
    /// Writes to `path` through a temporary file and a rename, so a crash
    /// leaves either the old or the new checkpoint, never half of one.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let doc = CheckpointFile { version: CHECKPOINT_VERSION, checkpoint: self.clone() };
        let text = serde_json::to_string(&doc)?;
        let tmp = path.with_extension("tmp");
        {
            let mut f = fs::File::create(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
        }
        fs::rename(&tmp, path)
    }

    /// Reads a checkpoint; None when the file does not exist.
    pub fn load(path: &Path) -> Result<Option<Checkpoint>, CheckpointError> {
        let shown = || path.display().to_string();
        let text = match fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(CheckpointError::Read { path: shown(), error }),
        };
        // Not `flatten` on the way in: it buffers numbers and breaks on
        // serde_json's `arbitrary_precision`. `version` is ignored (1 is
        // the only one).
        let damaged = |error| CheckpointError::Damaged { path: shown(), error };
        let value: serde_json::Value = serde_json::from_str(&text).map_err(damaged)?;
        Checkpoint::deserialize(&value).map(Some).map_err(damaged)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_atomically() {
        let dir = std::env::temp_dir().join(format!("dynaburst-ckpt-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let p = dir.join("load.ckpt");
        assert_eq!(Checkpoint::load(&p).unwrap(), None);
        let c = Checkpoint {
            input: "a.csv".into(),
            input_bytes: Some(10),
            table: "t".into(),
            offset: 5,
            line: 2,
            rejects_bytes: 0,
            complete: false,
            id_key: Some(u64::MAX),
        };
        c.save(&p).unwrap();
        assert_eq!(Checkpoint::load(&p).unwrap(), Some(c.clone()));
        fs::write(&p, "{").unwrap();
        assert!(Checkpoint::load(&p).unwrap_err().to_string().contains("damaged"));
        // The documented format, field by field.
        fs::write(
            &p,
            r#"{"version":1,"input":"a.csv","input_bytes":10,"table":"t","offset":5,"line":2,"rejects_bytes":0,"complete":false,"id_key":18446744073709551615}"#,
        )
        .unwrap();
        assert_eq!(Checkpoint::load(&p).unwrap(), Some(c.clone()));
        c.save(&p).unwrap();
        let v: serde_json::Value = serde_json::from_str(&fs::read_to_string(&p).unwrap()).unwrap();
        assert_eq!(v["version"], 1);
        assert_eq!(v["offset"], 5);
        assert_eq!(v["line"], 2);
        assert_eq!(v["id_key"], serde_json::json!(u64::MAX));
        // Older files without the later fields.
        fs::write(&p, r#"{"version":1,"input":"a.csv","input_bytes":null,"table":"t","offset":5,"line":2}"#).unwrap();
        let old = Checkpoint::load(&p).unwrap().unwrap();
        assert_eq!((old.rejects_bytes, old.complete, old.id_key, old.input_bytes), (0, false, None, None));
    }
}
