//! The write-ahead log: what makes a commit durable. The committer appends
//! each group of batches to `DIR/wal-{generation}` (one frame per batch) and
//! syncs the file once; the batches are then durable, and the applier
//! writes them into the database later, in large transactions. A log file
//! is retired once the database holds every batch in it (durably); start-up
//! replays what is left.
//!
//! A file starts with a header, [`MAGIC`] and the file's salt (u64 LE, drawn
//! when the file is started), then frames: `[payload length: u32 LE]
//! [CRC-32 of the salt and the payload: u32 LE][payload]`, the payload a
//! batch's sequence number and its records. A crash can leave a torn frame
//! at the end of the newest file: replay stops there (that batch was never
//! acknowledged). A file the committer moved on from ends in an end frame
//! (sequence number 0, no records), synced before the next file is used: a
//! bad frame before it is corruption. (A file of a dynaburst before the
//! header has none, and its frames' CRC covers the payload alone.)
//!
//! **Recycling.** A retired log file is kept (renamed `spare-…`, up to
//! [`MAX_SPARE_LOGS`]) and becomes a later log file: the committer
//! overwrites its blocks instead of appending to a new file. An append
//! changes the file's size and allocates blocks, so each sync also commits
//! the file system's journal; an overwrite of written blocks syncs data
//! only (on this machine's ext4, 100 µs a sync against 150, measured in
//! docs/storage-engine.md), as RocksDB's `recycle_log_file_num` and
//! PostgreSQL's recycled WAL segments do. Past what the new life wrote, a
//! recycled file still holds frames of its old one, and the bytes of the
//! items they carried, which a client chose: a value could hold bytes that
//! look like a frame. No frame of the old life (nor one forged in a value,
//! whose writer cannot know the salt) checks under the new life's salt, so
//! reading stops where the new life ends. Besides, every batch of the old
//! life is older than the database's applied mark (a file is retired only
//! once a durable commit of the database holds its batches) and than every
//! batch written after it: reading also stops at a frame whose sequence
//! number does not grow, and replay skips batches at or before the applied
//! mark.
//!
//! **Direct writes.** Where the file system allows it the log is written
//! with `O_DIRECT | O_DSYNC`: one system call a group, durable when it
//! returns, no copy into the page cache; elsewhere (or when a direct write
//! is refused) buffered writes and `fdatasync`.

use std::fs::File;
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
/// The first bytes of a log file (read as a frame's length, 1.6 GB: no
/// frame of a log without the header starts so).
pub const MAGIC: [u8; 8] = *b"dbwal\0\0\x01";
const FILE_HEADER: usize = 16;

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
/// durably): it becomes a spare (added to `spares`) while `held` spares
/// elsewhere and `spares` are fewer than [`MAX_SPARE_LOGS`], else it is
/// deleted. The caller syncs the directory before a spare is reused: a
/// spare reused before its rename is on disk could, after a crash, be found
/// under its old log name holding its new life's header, which reads as a
/// torn log file that is not the newest (refused at start-up).
pub fn retire(dir: &Path, generation: u64, held: usize, spares: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let from = path(dir, generation);
    if held + spares.len() < MAX_SPARE_LOGS {
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
fn encode_end(salt: u64, buf: &mut Vec<u8>) {
    encode(&[(0, Vec::new())], salt, buf);
}

/// A frame's checksum: CRC-32 of the file's salt and the payload (`None`:
/// a file without the header, of the payload alone).
fn frame_crc(salt: Option<u64>, payload: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    if let Some(salt) = salt {
        h.update(&salt.to_le_bytes());
    }
    h.update(payload);
    h.finalize()
}

/// A file's header: [`MAGIC`] and its salt.
fn header(salt: u64) -> [u8; FILE_HEADER] {
    let mut out = [0; FILE_HEADER];
    out[..8].copy_from_slice(&MAGIC);
    out[8..].copy_from_slice(&salt.to_le_bytes());
    out
}

/// A new file's salt: unpredictable (keyed SipHash of the generation, under
/// the process's random hashing keys, which the OS seeds and each call
/// changes). Not one of the run's random choices: nothing the server
/// answers depends on it.
fn new_salt(generation: u64) -> u64 {
    use std::hash::BuildHasher;
    std::collections::hash_map::RandomState::new().hash_one(generation)
}

/// Appends one frame per batch to `buf`, checksummed under `salt`.
pub fn encode(batches: &[(u64, Vec<Record>)], salt: u64, buf: &mut Vec<u8>) {
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
        buf.extend_from_slice(&frame_crc(Some(salt), &w.buf).to_le_bytes());
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
    /// After the last whole frame, at the file's end (a file written with
    /// buffered writes and never recycled; direct writes pad the last block
    /// with zeros, which read as [`Tail::Torn`]).
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
    let (salt, mut rest) = match bytes.split_at_checked(FILE_HEADER) {
        Some((h, rest)) if h[..8] == MAGIC => {
            (Some(u64::from_le_bytes([h[8], h[9], h[10], h[11], h[12], h[13], h[14], h[15]])), rest)
        }
        // A torn header: the file was never used.
        _ if bytes.starts_with(&MAGIC[..bytes.len().min(8)]) && !bytes.is_empty() => return (out, Tail::Torn),
        _ => (None, bytes),
    };
    while !rest.is_empty() {
        let Some((header, body)) = rest.split_at_checked(FRAME_HEADER) else { return (out, Tail::Torn) };
        let len = u32::from_le_bytes([header[0], header[1], header[2], header[3]]) as usize;
        let crc = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
        let Some((payload, next)) = body.split_at_checked(len) else { return (out, Tail::Torn) };
        if frame_crc(salt, payload) != crc {
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

/// Alignment and size unit of the log's direct writes: the largest
/// logical block size of common disks.
const BLOCK: usize = 4096;

/// The log file being appended to.
pub struct Wal {
    dir: PathBuf,
    file: File,
    pub generation: u64,
    pub bytes: u64,
    /// Size past which the committer starts the next file.
    pub rotate_bytes: u64,
    /// This life's salt (in the header; every frame's checksum covers it).
    salt: u64,
    /// Where the next frame goes.
    pos: u64,
    buf: Vec<u8>,
    /// Set while the file is open for direct, synchronous writes.
    direct: Option<Direct>,
}

/// Direct writes (`O_DIRECT | O_DSYNC`): whole blocks from an aligned
/// buffer, durable when the write returns. Each group rewrites the last
/// partial block with the group after what it held (the rest of the block
/// zeros, which reading takes for a torn frame), as PostgreSQL rewrites its
/// WAL's partial page.
struct Direct {
    /// The bytes of the file's last partial block (from `pos` rounded down
    /// to a block), shorter than [`BLOCK`].
    tail: Vec<u8>,
    /// Room for an aligned copy of a group.
    aligned: Vec<u8>,
    /// Tests: the next write's buffer is one byte off its alignment, which
    /// the kernel refuses (`EINVAL`) as a file system without direct writes
    /// would.
    #[cfg(test)]
    misalign: bool,
}

/// Opens a log file for writing: direct and synchronous where the file
/// system allows it (the second value), else buffered.
fn open_for_log(path: &Path, create: bool, direct: bool) -> std::io::Result<(File, bool)> {
    let mut options = File::options();
    options.write(true);
    if create {
        options.create(true).truncate(true);
    }
    #[cfg(target_os = "linux")]
    if direct {
        use std::os::unix::fs::OpenOptionsExt;
        let flags = rustix::fs::OFlags::DIRECT | rustix::fs::OFlags::DSYNC;
        if let Ok(file) = options.clone().custom_flags(flags.bits() as i32).open(path) {
            return Ok((file, true));
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = direct;
    Ok((options.open(path)?, false))
}

/// The OS error of an argument refused (Linux): what a file system that
/// does not take direct writes answers.
const EINVAL: i32 = 22;

impl Wal {
    /// Starts log file `generation`: `spare` renamed (its blocks are
    /// overwritten from the start), or a new empty file when there is no
    /// spare or its rename fails; its header (a new salt) and its directory
    /// entry are durable when it returns.
    pub fn create(dir: &Path, generation: u64, rotate_bytes: u64, spare: Option<PathBuf>) -> std::io::Result<Wal> {
        let at = path(dir, generation);
        let recycled = spare.and_then(|s| std::fs::rename(s, &at).ok()).and_then(|()| {
            // Not truncated: the blocks stay allocated and written.
            open_for_log(&at, false, true).ok()
        });
        let (file, direct) = match recycled {
            Some(opened) => opened,
            None => open_for_log(&at, true, true)?,
        };
        let direct = direct.then(|| Direct {
            tail: Vec::new(),
            aligned: Vec::new(),
            #[cfg(test)]
            misalign: false,
        });
        let salt = new_salt(generation);
        let mut wal = Wal {
            dir: dir.to_path_buf(),
            file,
            generation,
            bytes: 0,
            rotate_bytes,
            salt,
            pos: 0,
            buf: header(salt).to_vec(),
            direct,
        };
        wal.write_buf()?;
        sync_dir(dir)?;
        Ok(wal)
    }

    /// Appends the batches and syncs: when it returns Ok they are durable.
    pub fn append(&mut self, batches: &[(u64, Vec<Record>)]) -> std::io::Result<()> {
        self.buf.clear();
        encode(batches, self.salt, &mut self.buf);
        self.write_buf()
    }

    /// Writes `buf` at `pos`, durably.
    fn write_buf(&mut self) -> std::io::Result<()> {
        use std::os::unix::fs::FileExt;
        if let Some(d) = &mut self.direct {
            let start = self.pos - d.tail.len() as u64;
            let len = d.tail.len() + self.buf.len();
            let padded = len.div_ceil(BLOCK) * BLOCK;
            if d.aligned.len() < padded + BLOCK {
                d.aligned = vec![0; padded + BLOCK];
            }
            #[allow(unused_mut)]
            let mut at = d.aligned.as_ptr().align_offset(BLOCK);
            #[cfg(test)]
            if d.misalign {
                at += 1;
            }
            let block = &mut d.aligned[at..at + padded];
            block[..d.tail.len()].copy_from_slice(&d.tail);
            block[d.tail.len()..len].copy_from_slice(&self.buf);
            block[len..].fill(0);
            match self.file.write_all_at(block, start) {
                Ok(()) => {
                    let whole = len / BLOCK * BLOCK;
                    d.tail.clear();
                    d.tail.extend_from_slice(&block[whole..len]);
                    self.pos += self.buf.len() as u64;
                    self.bytes += self.buf.len() as u64;
                    return Ok(());
                }
                // The file system refuses direct writes (it took the flag
                // at open): buffered from here on. What the file holds
                // before `pos` is written already.
                Err(e) if e.raw_os_error() == Some(EINVAL) => {
                    self.file = open_for_log(&path(&self.dir, self.generation), false, false)?.0;
                    self.direct = None;
                }
                Err(e) => return Err(e),
            }
        }
        self.file.write_all_at(&self.buf, self.pos)?;
        self.file.sync_data()?;
        self.pos += self.buf.len() as u64;
        self.bytes += self.buf.len() as u64;
        Ok(())
    }

    /// Ends this log file (its end frame, synced) and starts the next, on
    /// `spare` if there is one; returns the generation just completed.
    pub fn rotate(&mut self, spare: Option<PathBuf>) -> std::io::Result<u64> {
        self.buf.clear();
        encode_end(self.salt, &mut self.buf);
        self.write_buf()?;
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

    /// A log file's bytes: the header of `salt`, then the batches' frames.
    fn file(salt: u64, batches: &[(u64, Vec<Record>)]) -> Vec<u8> {
        let mut out = header(salt).to_vec();
        encode(batches, salt, &mut out);
        out
    }

    /// The frames of a file without the header (a dynaburst before it):
    /// each frame's CRC of its payload alone.
    fn unsalted(batches: &[(u64, Vec<Record>)]) -> Vec<u8> {
        let mut out = Vec::new();
        for batch in batches {
            let mut frame = Vec::new();
            encode(std::slice::from_ref(batch), 1, &mut frame);
            let crc = crc32fast::hash(&frame[FRAME_HEADER..]);
            frame[4..8].copy_from_slice(&crc.to_le_bytes());
            out.extend(frame);
        }
        out
    }

    #[test]
    fn frames_round_trip_and_a_torn_tail_is_dropped() {
        let buf = file(5, &batches());
        let (read, tail) = decode(&buf);
        assert_eq!(tail, Tail::Clean);
        assert_eq!(summary(&read), summary(&batches()));
        // Every cut inside the second frame keeps the first only.
        let first_end = file(5, &batches()[..1]).len();
        for cut in first_end + 1..buf.len() {
            let (read, tail) = decode(&buf[..cut]);
            assert_eq!(tail, Tail::Torn, "cut at {cut}");
            assert_eq!(summary(&read), summary(&batches()[..1]), "cut at {cut}");
        }
        // A cut inside the header: nothing, torn.
        assert_eq!(decode(&buf[..5]).1, Tail::Torn);
        assert!(decode(&buf[..FILE_HEADER]).0.is_empty());
        // A flipped bit fails the checksum.
        let mut bad = buf.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        let (read, tail) = decode(&bad);
        assert_eq!(tail, Tail::Torn);
        assert_eq!(read.len(), 1);
        // Under another salt no frame checks.
        let mut other = buf.clone();
        other[8] ^= 1;
        let (read, tail) = decode(&other);
        assert!(read.is_empty());
        assert_eq!(tail, Tail::Torn);
        // A file without the header (before it) reads as it was written.
        let (read, tail) = decode(&unsalted(&batches()));
        assert_eq!(tail, Tail::Clean);
        assert_eq!(summary(&read), summary(&batches()));
    }

    fn puts(seqs: std::ops::Range<u64>, value: usize) -> Vec<(u64, Vec<Record>)> {
        seqs.map(|s| (s, vec![Record::Put { id: 1, key: vec![s as u8], value: vec![7; value].into(), replaced: None }]))
            .collect()
    }

    /// `new` written over the start of `old`, as the committer overwrites a
    /// recycled file.
    fn overwritten(old: &[u8], new: &[u8]) -> Vec<u8> {
        let mut out = old.to_vec();
        out[..new.len()].copy_from_slice(new);
        out
    }

    #[test]
    fn reading_stops_at_the_end_frame_and_where_a_recycled_file_s_new_life_ends() {
        // The old life (salt 1): batches 10 to 19, then its end frame.
        let mut old = file(1, &puts(10..20, 50));
        encode_end(1, &mut old);
        assert_eq!(decode(&old).1, Tail::End);
        assert_eq!(decode(&old).0.len(), 10);
        // The new life (salt 2) overwrites the start with two larger
        // batches: what follows is the old life from the middle of a frame.
        let (read, tail) = decode(&overwritten(&old, &file(2, &puts(30..32, 80))));
        assert_eq!(tail, Tail::Torn);
        assert_eq!(summary(&read), summary(&puts(30..32, 80)));
        // Batches of the same size end on a frame boundary: the next frame
        // is whole, but checksummed under the old salt.
        let (read, tail) = decode(&overwritten(&old, &file(2, &puts(30..32, 50))));
        assert_eq!(tail, Tail::Torn);
        assert_eq!(summary(&read), summary(&puts(30..32, 50)));
        // Even under one salt, the old frame's sequence number (11, not
        // past 31) ends the new life.
        let (read, tail) = decode(&overwritten(&old, &file(1, &puts(30..32, 50))));
        assert_eq!(tail, Tail::Torn);
        assert_eq!(summary(&read), summary(&puts(30..32, 50)));
        // With the new life's own end frame, it ends there.
        let mut new = file(2, &puts(30..32, 50));
        encode_end(2, &mut new);
        let (read, tail) = decode(&overwritten(&old, &new));
        assert_eq!(tail, Tail::End);
        assert_eq!(read.len(), 2);
    }

    #[test]
    fn each_file_life_draws_its_own_salt() {
        let salts: std::collections::HashSet<u64> = (0..64).map(|_| new_salt(7)).collect();
        assert_eq!(salts.len(), 64);
    }

    /// A file system that takes `O_DIRECT` at open but refuses a direct
    /// write: the log goes on buffered, at the same place, nothing lost.
    #[test]
    fn a_refused_direct_write_falls_back_to_buffered_writes() {
        let dir = std::env::temp_dir().join(format!("dynaburst-wal-direct-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        let mut wal = Wal::create(&dir, 1, 1 << 20, None).expect("create");
        if wal.direct.is_none() {
            // This file system takes no direct writes at all: the buffered
            // path is what every other test runs.
            return;
        }
        wal.append(&puts(1..4, 100)).expect("a direct append");
        wal.direct.as_mut().expect("still direct").misalign = true;
        wal.append(&puts(4..6, 5000)).expect("a refused direct write, then buffered");
        assert!(wal.direct.is_none(), "buffered from here on");
        wal.append(&puts(6..7, 10)).expect("a buffered append");
        let (read, _) = decode(&std::fs::read(path(&dir, 1)).expect("read"));
        let mut want = puts(1..4, 100);
        want.extend(puts(4..6, 5000));
        want.extend(puts(6..7, 10));
        assert_eq!(summary(&read), summary(&want));
        drop(wal);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A client's binary value can hold bytes that look like frames; a
    /// recycled file holds the old life's values. Where the new life ends
    /// on such bytes, no forged frame is read: not one checksummed without a
    /// salt, nor one under the old life's salt, whatever its sequence number.
    #[test]
    fn a_frame_forged_inside_a_value_of_the_old_life_is_not_read() {
        let forged_batch = vec![(1u64 << 62, vec![Record::Drop { name: "victim".into(), id: 1 }])];
        let new = file(2, &puts(30..32, 50));
        let mut salted_old = Vec::new();
        encode(&forged_batch, 1, &mut salted_old);
        for forged in [unsalted(&forged_batch), salted_old] {
            let mut bytes = new.clone();
            bytes.extend(&forged);
            let (read, tail) = decode(&bytes);
            assert_eq!(tail, Tail::Torn);
            assert_eq!(summary(&read), summary(&puts(30..32, 50)));
        }
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
        retire(&dir, 1, 0, &mut spares).expect("retire");
        retire(&dir, 2, 0, &mut spares).expect("retire");
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
            retire(&dir, retired, 0, &mut spares).expect("retire");
            retired += 1;
        }
        // The loop's last rotation completed `retired`: it is deleted.
        let newest = retired + 1;
        retire(&dir, retired, 0, &mut spares).expect("retire");
        let kept: Vec<u64> = std::iter::once(2).chain(3..retired).collect();
        assert_eq!(generations(list_spares(&dir)), kept);
        assert_eq!(generations(list(&dir)), vec![newest]);
        assert_eq!(spares.len(), MAX_SPARE_LOGS);
        // A spare that is gone is no error: the next file starts empty.
        let gone = spares.pop().expect("a spare");
        std::fs::remove_file(&gone).expect("remove");
        assert_eq!(wal.rotate(Some(gone)).expect("rotate"), newest);
        // Its header only (one block when written directly).
        assert!(std::fs::metadata(path(&dir, newest + 1)).expect("meta").len() <= BLOCK as u64);
        let (read, _) = decode(&std::fs::read(path(&dir, newest + 1)).expect("read"));
        assert!(read.is_empty());
        drop(wal);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
