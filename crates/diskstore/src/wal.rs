//! The write-ahead log: what makes a commit durable. The committer appends
//! each group of batches to `DIR/wal-{generation}` (one frame per batch) and
//! syncs the file once; the batches are then durable, and the applier
//! writes them into the database later, in large transactions. A log file
//! is retired once the database holds every batch in it (durably); start-up
//! replays what is left.
//!
//! A frame is `[payload length: u32 LE][CRC-32 of the payload: u32 LE]
//! [payload]`, the payload a batch's sequence number and its records. A
//! crash can leave a torn frame at the end of the newest file: replay stops
//! there (that batch was never acknowledged). A file the committer moved
//! on from ends in an end frame (sequence number 0, no records), synced
//! before the next file is used: a bad frame before it is corruption.
//!
//! **Recycling.** A retired log file is kept (renamed `spare-…`, up to
//! [`MAX_SPARE_LOGS`]) and becomes a later log file: the committer
//! overwrites its blocks instead of appending to a new file. An append
//! changes the file's size and allocates blocks, so each sync also commits
//! the file system's journal; an overwrite of written blocks syncs data
//! only (on this machine's ext4, 100 µs a sync against 150, measured in
//! docs/storage-engine.md), as RocksDB's `recycle_log_file_num` and
//! PostgreSQL's recycled WAL segments do. Past what the new life wrote, a
//! recycled file still holds frames of its old one: they are whole and
//! checksummed, but every batch in them is older than the database's
//! applied mark (a file is retired only once a durable commit of the
//! database holds its batches) and older than every batch written after
//! it, so reading stops at the first frame whose sequence number does not
//! grow, and replay skips batches at or before the applied mark.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use dynaburst_engine::store::StoreError;

use crate::codec::{Reader, Writer};
use crate::Record;

/// Size past which the committer starts a new log file.
pub const WAL_ROTATE_BYTES: u64 = 32 * 1024 * 1024;
/// Most retired log files a data directory keeps for reuse (each about
/// [`WAL_ROTATE_BYTES`] on disk, 128 MiB in all); more are deleted. Files
/// retire a few at a time (every `DURABLE_APPLY_BYTES` of the applier's),
/// and the committer takes one at each rotation.
pub const MAX_SPARE_LOGS: usize = 4;
const PREFIX: &str = "wal-";
const SPARE_PREFIX: &str = "spare-";
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
    list_prefixed(dir, PREFIX)
}

/// Every spare (retired, kept for reuse) log file in `dir`.
pub fn list_spares(dir: &Path) -> std::io::Result<Vec<(u64, PathBuf)>> {
    list_prefixed(dir, SPARE_PREFIX)
}

fn list_prefixed(dir: &Path, prefix: &str) -> std::io::Result<Vec<(u64, PathBuf)>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        if let Some(generation) = name.to_str().and_then(|n| n.strip_prefix(prefix)).and_then(|g| g.parse().ok()) {
            out.push((generation, entry.path()));
        }
    }
    out.sort();
    Ok(out)
}

/// Retires log file `generation`, which the database holds entirely (and
/// durably): it becomes a spare while `spares` holds fewer than
/// [`MAX_SPARE_LOGS`], else it is deleted. The caller syncs the directory.
pub fn retire(dir: &Path, generation: u64, spares: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let from = path(dir, generation);
    if spares.len() < MAX_SPARE_LOGS {
        let to = dir.join(format!("{SPARE_PREFIX}{generation:016}"));
        std::fs::rename(&from, &to)?;
        spares.push(to);
        Ok(())
    } else {
        std::fs::remove_file(from)
    }
}

/// Makes the directory's entries (a created or deleted log file) durable.
pub fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Appends the end frame (sequence number 0, which no batch has: the first
/// is 1) to `buf`.
fn encode_end(buf: &mut Vec<u8>) {
    encode(&[(0, Vec::new())], buf);
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

/// How a log file's bytes ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tail {
    /// After the last whole frame (a file never recycled).
    Clean,
    /// At an end frame: the committer moved on to the next file.
    End,
    /// At a torn or bad frame, or at a frame of the file's life before
    /// (its sequence number does not grow): where a crash stopped a write,
    /// or what a recycled file held before.
    Torn,
}

/// The batches of one log file's bytes, up to where they end (see [`Tail`]).
pub fn decode(bytes: &[u8]) -> (Vec<(u64, Vec<Record>)>, Tail) {
    let mut out: Vec<(u64, Vec<Record>)> = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        let Some((header, body)) = rest.split_at_checked(FRAME_HEADER) else { return (out, Tail::Torn) };
        let len = u32::from_le_bytes([header[0], header[1], header[2], header[3]]) as usize;
        let crc = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
        let Some((payload, next)) = body.split_at_checked(len) else { return (out, Tail::Torn) };
        if crc32fast::hash(payload) != crc {
            return (out, Tail::Torn);
        }
        match decode_batch(payload) {
            Ok((0, records)) if records.is_empty() => return (out, Tail::End),
            Ok((seq, _)) if out.last().is_some_and(|(last, _)| seq <= *last) => return (out, Tail::Torn),
            Ok(batch) => out.push(batch),
            Err(_) => return (out, Tail::Torn),
        }
        rest = next;
    }
    (out, Tail::Clean)
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
    /// Starts log file `generation`: `spare` renamed (its blocks are
    /// overwritten from the start), or a new empty file when there is no
    /// spare or its rename fails; the directory entry is durable when it
    /// returns.
    pub fn create(dir: &Path, generation: u64, rotate_bytes: u64, spare: Option<PathBuf>) -> std::io::Result<Wal> {
        let at = path(dir, generation);
        let recycled = spare.and_then(|s| std::fs::rename(s, &at).ok()).and_then(|()| {
            // Not truncated: the blocks stay allocated and written.
            File::options().write(true).open(&at).ok()
        });
        let file = match recycled {
            Some(file) => file,
            None => File::options().create(true).truncate(true).write(true).open(&at)?,
        };
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

    /// Ends this log file (its end frame, synced) and starts the next, on
    /// `spare` if there is one; returns the generation just completed.
    pub fn rotate(&mut self, spare: Option<PathBuf>) -> std::io::Result<u64> {
        self.buf.clear();
        encode_end(&mut self.buf);
        self.file.write_all(&self.buf)?;
        self.file.sync_data()?;
        let done = self.generation;
        *self = Wal::create(&self.dir, done + 1, self.rotate_bytes, spare)?;
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
        let (read, tail) = decode(&buf);
        assert_eq!(tail, Tail::Clean);
        assert_eq!(summary(&read), summary(&batches()));
        // Every cut inside the second frame keeps the first only.
        let first_end = {
            let mut one = Vec::new();
            encode(&batches()[..1], &mut one);
            one.len()
        };
        for cut in first_end + 1..buf.len() {
            let (read, tail) = decode(&buf[..cut]);
            assert_eq!(tail, Tail::Torn, "cut at {cut}");
            assert_eq!(summary(&read), summary(&batches()[..1]), "cut at {cut}");
        }
        // A flipped bit fails the checksum.
        let mut bad = buf.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        let (read, tail) = decode(&bad);
        assert_eq!(tail, Tail::Torn);
        assert_eq!(read.len(), 1);
    }

    fn puts(seqs: std::ops::Range<u64>, value: usize) -> Vec<(u64, Vec<Record>)> {
        seqs.map(|s| (s, vec![Record::Put { id: 1, key: vec![s as u8], value: vec![7; value].into(), replaced: None }]))
            .collect()
    }

    #[test]
    fn reading_stops_at_the_end_frame_and_at_a_frame_of_a_recycled_file_s_life_before() {
        // The old life: batches 10 to 19, then its end frame.
        let mut old = Vec::new();
        encode(&puts(10..20, 50), &mut old);
        encode_end(&mut old);
        assert_eq!(decode(&old).1, Tail::End);
        assert_eq!(decode(&old).0.len(), 10);
        // The new life overwrites the start with two larger batches: what
        // follows them is the old life, from the middle of a frame.
        let mut file = old.clone();
        let mut new = Vec::new();
        encode(&puts(30..32, 80), &mut new);
        file[..new.len()].copy_from_slice(&new);
        let (read, tail) = decode(&file);
        assert_eq!(tail, Tail::Torn);
        assert_eq!(summary(&read), summary(&puts(30..32, 80)));
        // Batches of the same size end on a frame boundary: the next frame
        // is whole and checksummed, and only its sequence number (11, not
        // past 31) tells that it is not of this life.
        let mut file = old.clone();
        let mut new = Vec::new();
        encode(&puts(30..32, 50), &mut new);
        file[..new.len()].copy_from_slice(&new);
        let (read, tail) = decode(&file);
        assert_eq!(tail, Tail::Torn);
        assert_eq!(summary(&read), summary(&puts(30..32, 50)));
        // With the new life's own end frame, it ends there.
        let mut file = old.clone();
        let mut new = Vec::new();
        encode(&puts(30..32, 50), &mut new);
        encode_end(&mut new);
        file[..new.len()].copy_from_slice(&new);
        let (read, tail) = decode(&file);
        assert_eq!(tail, Tail::End);
        assert_eq!(read.len(), 2);
    }

    #[test]
    fn a_recycled_file_is_overwritten_from_its_start_and_retired_files_past_the_spares_are_deleted() {
        let dir = std::env::temp_dir().join(format!("dynaburst-wal-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        let generations = |found: std::io::Result<Vec<(u64, PathBuf)>>| -> Vec<u64> {
            found.expect("list").into_iter().map(|(g, _)| g).collect()
        };
        let mut wal = Wal::create(&dir, 1, 1 << 20, None).expect("create");
        wal.append(&puts(1..40, 100)).expect("append");
        assert_eq!(wal.rotate(None).expect("rotate"), 1);
        let first_len = std::fs::metadata(path(&dir, 1)).expect("meta").len();
        wal.append(&puts(40..41, 10)).expect("append");
        assert_eq!(wal.rotate(None).expect("rotate"), 2);
        let mut spares = Vec::new();
        retire(&dir, 1, &mut spares).expect("retire");
        retire(&dir, 2, &mut spares).expect("retire");
        assert_eq!(generations(list_spares(&dir)), vec![1, 2]);
        assert_eq!(generations(list(&dir)), vec![3]);
        // Log file 4 is spare 1, overwritten from its start, not truncated.
        wal.append(&puts(41..42, 10)).expect("append");
        assert_eq!(wal.rotate(Some(spares.remove(0))).expect("rotate"), 3);
        assert_eq!(generations(list_spares(&dir)), vec![2]);
        assert_eq!(std::fs::metadata(path(&dir, 4)).expect("meta").len(), first_len);
        wal.append(&puts(50..52, 100)).expect("append");
        let (read, tail) = decode(&std::fs::read(path(&dir, 4)).expect("read"));
        assert_eq!(summary(&read), summary(&puts(50..52, 100)));
        assert_eq!(tail, Tail::Torn);
        // Past MAX_SPARE_LOGS a retired file is deleted.
        let mut retired = 3;
        while spares.len() < MAX_SPARE_LOGS {
            assert_eq!(wal.rotate(None).expect("rotate"), retired + 1);
            retire(&dir, retired, &mut spares).expect("retire");
            retired += 1;
        }
        // The loop's last rotation completed `retired`: it is deleted.
        let newest = retired + 1;
        retire(&dir, retired, &mut spares).expect("retire");
        let kept: Vec<u64> = std::iter::once(2).chain(3..retired).collect();
        assert_eq!(generations(list_spares(&dir)), kept);
        assert_eq!(generations(list(&dir)), vec![newest]);
        assert_eq!(spares.len(), MAX_SPARE_LOGS);
        // A spare that is gone is no error: the next file starts empty.
        let gone = spares.pop().expect("a spare");
        std::fs::remove_file(&gone).expect("remove");
        assert_eq!(wal.rotate(Some(gone)).expect("rotate"), newest);
        assert_eq!(std::fs::metadata(path(&dir, newest + 1)).expect("meta").len(), 0);
        drop(wal);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
