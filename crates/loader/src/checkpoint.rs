//! The resume point: the input position below which every record is
//! acknowledged (written or rejected), saved atomically.

use std::fs;
use std::io::Write;
use std::path::Path;

use serde_json::{json, Value};

/// A saved position.
#[derive(Clone, Debug, PartialEq)]
pub struct Checkpoint {
    /// The input the checkpoint belongs to (path) and its size, checked on
    /// resume so a checkpoint is never applied to another file.
    pub input: String,
    pub input_bytes: Option<u64>,
    pub table: String,
    /// Byte offset and line of the first record not yet acknowledged.
    pub offset: u64,
    pub line: u64,
    /// Length of the rejects file at this point (later lines are dropped
    /// on resume, because their records are read again).
    pub rejects_bytes: u64,
    /// True once the whole input was acknowledged.
    pub complete: bool,
    /// The key a target derives generated ids from (MongoDB's `_id`s for
    /// documents without one), so a resumed load makes the same ids even if
    /// the file was touched meanwhile.
    pub id_key: Option<u64>,
}

impl Checkpoint {
    /// Writes to `path` through a temporary file and a rename, so a crash
    /// leaves either the old or the new checkpoint, never half of one.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let doc = json!({
            "version": 1,
            "input": self.input,
            "input_bytes": self.input_bytes,
            "table": self.table,
            "offset": self.offset,
            "line": self.line,
            "rejects_bytes": self.rejects_bytes,
            "complete": self.complete,
            "id_key": self.id_key,
        });
        let tmp = path.with_extension("tmp");
        {
            let mut f = fs::File::create(&tmp)?;
            f.write_all(doc.to_string().as_bytes())?;
            f.sync_all()?;
        }
        fs::rename(&tmp, path)
    }

    /// Reads a checkpoint; None when the file does not exist.
    pub fn load(path: &Path) -> Result<Option<Checkpoint>, String> {
        let text = match fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("cannot read checkpoint {}: {e}", path.display())),
        };
        let v: Value =
            serde_json::from_str(&text).map_err(|e| format!("checkpoint {} is damaged: {e}", path.display()))?;
        let field = |name: &str| v.get(name).ok_or_else(|| format!("checkpoint {} has no {name}", path.display()));
        Ok(Some(Checkpoint {
            input: field("input")?.as_str().unwrap_or_default().to_string(),
            input_bytes: v.get("input_bytes").and_then(Value::as_u64),
            table: field("table")?.as_str().unwrap_or_default().to_string(),
            offset: field("offset")?.as_u64().ok_or("checkpoint offset is not a number")?,
            line: field("line")?.as_u64().ok_or("checkpoint line is not a number")?,
            rejects_bytes: v.get("rejects_bytes").and_then(Value::as_u64).unwrap_or(0),
            complete: v.get("complete").and_then(Value::as_bool).unwrap_or(false),
            id_key: v.get("id_key").and_then(Value::as_u64),
        }))
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
        assert_eq!(Checkpoint::load(&p).unwrap(), Some(c));
        fs::write(&p, "{").unwrap();
        assert!(Checkpoint::load(&p).unwrap_err().contains("damaged"));
    }
}
