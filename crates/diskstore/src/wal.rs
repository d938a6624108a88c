//! The write-ahead log: what makes a commit durable. The committer appends
//! each group of batches to `DIR/wal-{generation}` (one frame per batch) and
//! syncs the file once; the batches are then durable, and the applier
//! writes them into the database later, in large transactions. A log file
//! is deleted once the database holds every batch in it (durably); start-up replays what is
//! left.
//!
//! A frame is `[payload length: u32 LE][CRC-32 of the payload: u32 LE]
//! [payload]`, the payload a batch's sequence number and its records. A
//! crash can leave a torn frame at the end of the newest file: replay stops
//! there (that batch was never acknowledged). A bad frame anywhere else is
//! corruption.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use dynaburst_engine::store::StoreError;

use crate::codec::{Reader, Writer};
use crate::Record;

/// Size past which the committer starts a new log file.
pub const WAL_ROTATE_BYTES: u64 = 64 * 1024 * 1024;
const PREFIX: &str = "wal-";
const FRAME_HEADER: usize = 8;

const R_PUT: u8 = 0;
const R_DELETE: u8 = 1;
const R_CATALOG: u8 = 2;
const R_DROP: u8 = 3;
const R_INDEX_PUT: u8 = 4;
const R_INDEX_DELETE: u8 = 5;
const R_DROP_INDEX: u8 = 6;

/// The path of log file `generation`.
pub fn path(dir: &Path, generation: u64) -> PathBuf {
    dir.join(format!("{PREFIX}{generation:016}"))
}

/// Every log file in `dir`, oldest first, with its generation.
pub fn list(dir: &Path) -> std::io::Result<Vec<(u64, PathBuf)>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        if let Some(generation) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)).and_then(|g| g.parse().ok()) {
            out.push((generation, entry.path()));
        }
    }
    out.sort();
    Ok(out)
}

/// Makes the directory's entries (a created or deleted log file) durable.
pub fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Appends one frame per batch to `buf`.
pub fn encode(batches: &[(u64, Vec<Record>)], buf: &mut Vec<u8>) {
    for (seq, records) in batches {
        let mut w = Writer::default();
        w.uint(*seq);
        w.uint(records.len() as u64);
        for r in records {
            match r {
                Record::Put { id, key, value, replaced } => {
                    w.u8(R_PUT);
                    w.uint(*id);
                    w.bytes(key);
                    w.bytes(value);
                    write_replaced(&mut w, *replaced);
                }
                Record::Delete { id, key, replaced } => {
                    w.u8(R_DELETE);
                    w.uint(*id);
                    w.bytes(key);
                    write_replaced(&mut w, *replaced);
                }
                Record::Catalog { name, value } => {
                    w.u8(R_CATALOG);
                    w.str(name);
                    w.bytes(value);
                }
                Record::Drop { name, id } => {
                    w.u8(R_DROP);
                    w.str(name);
                    w.uint(*id);
                }
                Record::IndexPut { id, index, key, value, replaced } => {
                    w.u8(R_INDEX_PUT);
                    w.uint(*id);
                    w.str(index);
                    w.bytes(key);
                    w.bytes(value);
                    write_replaced(&mut w, *replaced);
                }
                Record::IndexDelete { id, index, key, replaced } => {
                    w.u8(R_INDEX_DELETE);
                    w.uint(*id);
                    w.str(index);
                    w.bytes(key);
                    write_replaced(&mut w, *replaced);
                }
                Record::DropIndex { id, index } => {
                    w.u8(R_DROP_INDEX);
                    w.uint(*id);
                    w.str(index);
                }
            }
        }
        buf.extend_from_slice(&(w.buf.len() as u32).to_le_bytes());
        buf.extend_from_slice(&crc32fast::hash(&w.buf).to_le_bytes());
        buf.extend_from_slice(&w.buf);
    }
}

/// A replaced size: 0 for none, else the size plus one.
fn write_replaced(w: &mut Writer, replaced: Option<u64>) {
    w.uint(replaced.map_or(0, |n| n.saturating_add(1)));
}

fn read_replaced(r: &mut Reader<'_>) -> Result<Option<u64>, StoreError> {
    Ok(r.uint()?.checked_sub(1))
}

fn decode_batch(payload: &[u8]) -> Result<(u64, Vec<Record>), StoreError> {
    let mut r = Reader::new(payload, "write-ahead log");
    let seq = r.uint()?;
    let n = r.len()?;
    let mut records = Vec::with_capacity(n);
    for _ in 0..n {
        records.push(match r.u8()? {
            R_PUT => Record::Put {
                id: r.uint()?,
                key: r.bytes()?.to_vec(),
                value: r.bytes()?.into(),
                replaced: read_replaced(&mut r)?,
            },
            R_DELETE => Record::Delete { id: r.uint()?, key: r.bytes()?.to_vec(), replaced: read_replaced(&mut r)? },
            R_CATALOG => Record::Catalog { name: r.string()?, value: r.bytes()?.to_vec() },
            R_DROP => Record::Drop { name: r.string()?, id: r.uint()? },
            R_INDEX_PUT => Record::IndexPut {
                id: r.uint()?,
                index: r.string()?,
                key: r.bytes()?.to_vec(),
                value: r.bytes()?.into(),
                replaced: read_replaced(&mut r)?,
            },
            R_INDEX_DELETE => Record::IndexDelete {
                id: r.uint()?,
                index: r.string()?,
                key: r.bytes()?.to_vec(),
                replaced: read_replaced(&mut r)?,
            },
            R_DROP_INDEX => Record::DropIndex { id: r.uint()?, index: r.string()? },
            _ => return Err(r.corrupt()),
        });
    }
    r.end()?;
    Ok((seq, records))
}

/// The batches of one log file's bytes, and whether it ended in a torn or
/// bad frame (where reading stopped).
pub fn decode(bytes: &[u8]) -> (Vec<(u64, Vec<Record>)>, bool) {
    let mut out = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        let Some((header, body)) = rest.split_at_checked(FRAME_HEADER) else { return (out, true) };
        let len = u32::from_le_bytes([header[0], header[1], header[2], header[3]]) as usize;
        let crc = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
        let Some((payload, next)) = body.split_at_checked(len) else { return (out, true) };
        if crc32fast::hash(payload) != crc {
            return (out, true);
        }
        match decode_batch(payload) {
            Ok(batch) => out.push(batch),
            Err(_) => return (out, true),
        }
        rest = next;
    }
    (out, false)
}

/// The log file being appended to.
pub struct Wal {
    dir: PathBuf,
    file: File,
    pub generation: u64,
    pub bytes: u64,
    /// Size past which the committer starts the next file.
    pub rotate_bytes: u64,
    buf: Vec<u8>,
}

impl Wal {
    /// Creates log file `generation` (empty) and makes it durable.
    pub fn create(dir: &Path, generation: u64, rotate_bytes: u64) -> std::io::Result<Wal> {
        let file = File::options().create(true).truncate(true).write(true).open(path(dir, generation))?;
        sync_dir(dir)?;
        Ok(Wal { dir: dir.to_path_buf(), file, generation, bytes: 0, rotate_bytes, buf: Vec::new() })
    }

    /// Appends the batches and syncs: when it returns Ok they are durable.
    pub fn append(&mut self, batches: &[(u64, Vec<Record>)]) -> std::io::Result<()> {
        self.buf.clear();
        encode(batches, &mut self.buf);
        self.file.write_all(&self.buf)?;
        self.file.sync_data()?;
        self.bytes += self.buf.len() as u64;
        Ok(())
    }

    /// Starts the next log file; returns the generation just completed.
    pub fn rotate(&mut self) -> std::io::Result<u64> {
        let done = self.generation;
        *self = Wal::create(&self.dir, done + 1, self.rotate_bytes)?;
        Ok(done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batches() -> Vec<(u64, Vec<Record>)> {
        vec![
            (7, vec![Record::Catalog { name: "t".into(), value: vec![1, 2] }]),
            (
                8,
                vec![
                    Record::Put { id: 3, key: vec![9], value: vec![4; 300].into(), replaced: Some(0) },
                    Record::Delete { id: 3, key: vec![8], replaced: None },
                    Record::Drop { name: "u".into(), id: 2 },
                    Record::IndexPut {
                        id: 3,
                        index: "g".into(),
                        key: vec![7, 1],
                        value: vec![5; 40].into(),
                        replaced: None,
                    },
                    Record::IndexDelete { id: 3, index: "g".into(), key: vec![7, 2], replaced: Some(u64::MAX - 1) },
                    Record::DropIndex { id: 3, index: "h".into() },
                ],
            ),
        ]
    }

    fn summary(b: &[(u64, Vec<Record>)]) -> Vec<(u64, usize, usize, Vec<Option<u64>>)> {
        let replaced = |r: &Record| match r {
            Record::Put { replaced, .. }
            | Record::Delete { replaced, .. }
            | Record::IndexPut { replaced, .. }
            | Record::IndexDelete { replaced, .. } => *replaced,
            _ => None,
        };
        b.iter()
            .map(|(s, r)| (*s, r.len(), r.iter().map(Record::bytes).sum(), r.iter().map(replaced).collect()))
            .collect()
    }

    #[test]
    fn frames_round_trip_and_a_torn_tail_is_dropped() {
        let mut buf = Vec::new();
        encode(&batches(), &mut buf);
        let (read, torn) = decode(&buf);
        assert!(!torn);
        assert_eq!(summary(&read), summary(&batches()));
        // Every cut inside the second frame keeps the first only.
        let first_end = {
            let mut one = Vec::new();
            encode(&batches()[..1], &mut one);
            one.len()
        };
        for cut in first_end + 1..buf.len() {
            let (read, torn) = decode(&buf[..cut]);
            assert!(torn, "cut at {cut}");
            assert_eq!(summary(&read), summary(&batches()[..1]), "cut at {cut}");
        }
        // A flipped bit fails the checksum.
        let mut bad = buf.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        let (read, torn) = decode(&bad);
        assert!(torn);
        assert_eq!(read.len(), 1);
    }
}
