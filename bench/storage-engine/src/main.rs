//! The storage-engine shortlist side by side on dynaburst's workload:
//! - load: N items of ~360 bytes in batches of 25, one synced commit each
//!   (BatchWriteItem with one client);
//! - grouped: the same batches, 32 per synced commit (what group commit
//!   does when 32 clients write at once);
//! - put: single items, one synced commit each (PutItem, one client);
//! - get: random point reads;
//! - range: reads of one item collection (10 items under a partition key);
//! - scan: every item in key order (what a server does at start-up when it
//!   keeps its items in memory).
//!
//! Usage: storage-engine-bench ENGINE DIR [ITEMS]  (ENGINE: redb, fjall,
//! sqlite). Prints one line of results.
//!
//! `storage-engine-bench applier ENGINE DIR [ITEMS [TX]]` measures instead
//! what `serve --data-dir`'s applier does: ITEMS (3,000,000) new items with
//! random keys in unsynced transactions of TX (80,000) items, each sorted
//! by key, each key looked up first (the request path reads the item a
//! write replaces). One line per tenth of the load: items/s, then CPU
//! microseconds per item of the whole process (an LSM tree's background
//! flushes and compactions included), then those of the lookups alone. Keys are 16 bytes of partition hash,
//! then the partition key, then the sort key, as dynaburst orders them.

use std::time::Instant;

use redb::{ReadableDatabase, ReadableTable};

const BATCH: usize = 25;
const GROUP: usize = 32;
const COLLECTION: u64 = 10;
const PUTS: u64 = 2_000;
const GETS: u64 = 100_000;
const RANGES: u64 = 20_000;

/// splitmix64: deterministic keys and picks.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

fn partition_hash(p: u64) -> [u8; 16] {
    let mut r = Rng(p);
    let mut h = [0u8; 16];
    h[..8].copy_from_slice(&r.next().to_be_bytes());
    h[8..].copy_from_slice(&r.next().to_be_bytes());
    h
}

/// Item n: partition n / 10, sort n % 10.
fn key(n: u64) -> Vec<u8> {
    let p = n / COLLECTION;
    let mut k = partition_hash(p).to_vec();
    k.extend_from_slice(format!("person#{p:09}").as_bytes());
    k.push(0);
    k.extend_from_slice(&(n % COLLECTION).to_be_bytes());
    k
}

fn collection_bounds(p: u64) -> (Vec<u8>, Vec<u8>) {
    let mut lo = partition_hash(p).to_vec();
    lo.extend_from_slice(format!("person#{p:09}").as_bytes());
    lo.push(0);
    let mut hi = lo.clone();
    hi.extend_from_slice(&[0xff; 9]);
    (lo, hi)
}

fn value(n: u64) -> Vec<u8> {
    let mut r = Rng(n ^ 0x5eed);
    let mut v = Vec::with_capacity(360);
    while v.len() < 360 {
        v.extend_from_slice(format!("{:x}", r.next()).as_bytes());
    }
    v.truncate(360);
    v
}

trait Engine {
    /// Writes every (key, value) in one synced transaction.
    fn commit(&mut self, writes: &[(Vec<u8>, Vec<u8>)]);
    /// Writes every (key, value) in one transaction that is not synced (the
    /// server's applier: the log already made them durable).
    fn apply(&mut self, writes: &[(Vec<u8>, Vec<u8>)]);
    fn get(&self, key: &[u8]) -> Option<usize>;
    /// How many of `keys` are present (the server reads through a snapshot
    /// it keeps, not a transaction a read).
    fn present(&self, keys: &[(Vec<u8>, Vec<u8>)]) -> usize {
        keys.iter().filter(|(k, _)| self.get(k).is_some()).count()
    }
    /// Number of items in [lo, hi].
    fn range(&self, lo: &[u8], hi: &[u8]) -> usize;
    fn scan(&self) -> usize;
}

struct Redb {
    db: redb::Database,
}
const TABLE: redb::TableDefinition<&[u8], &[u8]> = redb::TableDefinition::new("items");

impl Engine for Redb {
    fn commit(&mut self, writes: &[(Vec<u8>, Vec<u8>)]) {
        let tx = self.db.begin_write().expect("begin");
        {
            let mut t = tx.open_table(TABLE).expect("table");
            for (k, v) in writes {
                t.insert(k.as_slice(), v.as_slice()).expect("insert");
            }
        }
        tx.commit().expect("commit");
    }
    fn apply(&mut self, writes: &[(Vec<u8>, Vec<u8>)]) {
        let mut tx = self.db.begin_write().expect("begin");
        tx.set_durability(redb::Durability::None).expect("durability");
        {
            let mut t = tx.open_table(TABLE).expect("table");
            for (k, v) in writes {
                t.insert(k.as_slice(), v.as_slice()).expect("insert");
            }
        }
        tx.commit().expect("commit");
    }
    fn get(&self, key: &[u8]) -> Option<usize> {
        let tx = self.db.begin_read().expect("read");
        let t = tx.open_table(TABLE).expect("table");
        t.get(key).expect("get").map(|v| v.value().len())
    }
    fn present(&self, keys: &[(Vec<u8>, Vec<u8>)]) -> usize {
        let tx = self.db.begin_read().expect("read");
        let t = tx.open_table(TABLE).expect("table");
        keys.iter().filter(|(k, _)| t.get(k.as_slice()).expect("get").is_some()).count()
    }
    fn range(&self, lo: &[u8], hi: &[u8]) -> usize {
        let tx = self.db.begin_read().expect("read");
        let t = tx.open_table(TABLE).expect("table");
        t.range(lo..=hi).expect("range").map(|e| e.expect("entry").1.value().len()).filter(|n| *n > 0).count()
    }
    fn scan(&self) -> usize {
        let tx = self.db.begin_read().expect("read");
        let t = tx.open_table(TABLE).expect("table");
        t.iter().expect("iter").map(|e| e.expect("entry").1.value().len()).filter(|n| *n > 0).count()
    }
}

struct Fjall {
    db: fjall::Database,
    items: fjall::Keyspace,
}

impl Engine for Fjall {
    fn commit(&mut self, writes: &[(Vec<u8>, Vec<u8>)]) {
        let mut b = self.db.batch();
        for (k, v) in writes {
            b.insert(&self.items, k.as_slice(), v.as_slice());
        }
        b.commit().expect("commit");
        self.db.persist(fjall::PersistMode::SyncData).expect("sync");
    }
    fn apply(&mut self, writes: &[(Vec<u8>, Vec<u8>)]) {
        let mut b = self.db.batch();
        for (k, v) in writes {
            b.insert(&self.items, k.as_slice(), v.as_slice());
        }
        b.commit().expect("commit");
    }
    fn get(&self, key: &[u8]) -> Option<usize> {
        self.items.get(key).expect("get").map(|v| v.len())
    }
    fn range(&self, lo: &[u8], hi: &[u8]) -> usize {
        self.items.range(lo..=hi).map(|g| g.into_inner().expect("entry").1.len()).filter(|n| *n > 0).count()
    }
    fn scan(&self) -> usize {
        self.items.iter().map(|g| g.into_inner().expect("entry").1.len()).filter(|n| *n > 0).count()
    }
}

struct Sqlite {
    conn: rusqlite::Connection,
}

impl Engine for Sqlite {
    fn commit(&mut self, writes: &[(Vec<u8>, Vec<u8>)]) {
        let tx = self.conn.transaction().expect("begin");
        {
            let mut st = tx.prepare_cached("INSERT OR REPLACE INTO items (k, v) VALUES (?1, ?2)").expect("prepare");
            for (k, v) in writes {
                st.execute((k, v)).expect("insert");
            }
        }
        tx.commit().expect("commit");
    }
    fn apply(&mut self, writes: &[(Vec<u8>, Vec<u8>)]) {
        self.conn.execute_batch("PRAGMA synchronous=OFF").expect("pragma");
        self.commit(writes);
    }
    fn get(&self, key: &[u8]) -> Option<usize> {
        let mut st = self.conn.prepare_cached("SELECT length(v) FROM items WHERE k = ?1").expect("prepare");
        st.query_row([key], |r| r.get::<_, i64>(0)).ok().map(|n| n as usize)
    }
    fn range(&self, lo: &[u8], hi: &[u8]) -> usize {
        let mut st =
            self.conn.prepare_cached("SELECT v FROM items WHERE k >= ?1 AND k <= ?2 ORDER BY k").expect("prepare");
        let rows = st.query_map([lo, hi], |r| r.get::<_, Vec<u8>>(0)).expect("query");
        rows.map(|v| v.expect("row").len()).filter(|n| *n > 0).count()
    }
    fn scan(&self) -> usize {
        let mut st = self.conn.prepare_cached("SELECT v FROM items ORDER BY k").expect("prepare");
        let rows = st.query_map([], |r| r.get::<_, Vec<u8>>(0)).expect("query");
        rows.map(|v| v.expect("row").len()).filter(|n| *n > 0).count()
    }
}

fn open(engine: &str, dir: &std::path::Path) -> Box<dyn Engine> {
    std::fs::create_dir_all(dir).expect("dir");
    let cache = 256 << 20;
    match engine {
        "redb" => {
            let db = redb::Builder::new().set_cache_size(cache).create(dir.join("db.redb")).expect("redb");
            Box::new(Redb { db })
        }
        "fjall" => {
            let db = fjall::Database::builder(dir)
                .cache_size(cache as u64)
                .manual_journal_persist(true)
                .open()
                .expect("fjall");
            let items = db.keyspace("items", fjall::KeyspaceCreateOptions::default).expect("keyspace");
            Box::new(Fjall { db, items })
        }
        "sqlite" => {
            let conn = rusqlite::Connection::open(dir.join("db.sqlite")).expect("sqlite");
            conn.execute_batch(&format!(
                "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA cache_size=-{};
                 CREATE TABLE IF NOT EXISTS items (k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID;",
                cache >> 10
            ))
            .expect("schema");
            Box::new(Sqlite { conn })
        }
        other => panic!("unknown engine {other}: redb, fjall or sqlite"),
    }
}

fn rate(n: u64, since: Instant) -> f64 {
    n as f64 / since.elapsed().as_secs_f64()
}

/// CPU seconds of the whole process (every thread: an LSM tree's flushes
/// and compactions count).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("stat");
    let fields: Vec<&str> = stat.rsplit(')').next().expect("fields").split_whitespace().collect();
    let ticks: f64 = fields[11].parse::<f64>().expect("utime") + fields[12].parse::<f64>().expect("stime");
    ticks / 100.0
}

/// The server's applier: ITEMS new items with random keys, in unsynced
/// transactions of TX items each sorted by key, each item looked up first
/// (the request path reads what a write replaces; here nothing). Prints
/// items/s and CPU microseconds per item (all, and the lookups' share) for
/// about each tenth of the load, then a line for the whole load (items 0).
fn applier(engine: &str, db: &mut dyn Engine, n: u64, tx: u64) {
    let mut r = Rng(11);
    db.apply(&[]);
    let (start, start_cpu) = (Instant::now(), cpu_seconds());
    let (mut t, mut cpu, mut since) = (Instant::now(), cpu_seconds(), 0u64);
    let tenth = (n / 10).max(1);
    let (mut done, mut get_cpu, mut all_get_cpu) = (0, 0.0, 0.0);
    let mut lines = Vec::new();
    let mut line = |done: u64, since: u64, secs: f64, used: f64, gets: f64| {
        let per = |x: f64| x * 1e6 / since as f64;
        lines.push(format!(
            "| {engine} | {tx} | {done} | {:.0} | {:.1} | {:.1} |",
            since as f64 / secs,
            per(used),
            per(gets)
        ));
    };
    while done < n {
        let m = tx.min(n - done);
        let mut writes: Vec<_> = (0..m)
            .map(|_| {
                let i = r.next() >> 8;
                (key(i), value(i))
            })
            .collect();
        let g = cpu_seconds();
        assert_eq!(db.present(&writes), 0);
        get_cpu += cpu_seconds() - g;
        writes.sort();
        db.apply(&writes);
        done += m;
        since += m;
        if since >= tenth || done == n {
            line(done, since, t.elapsed().as_secs_f64(), cpu_seconds() - cpu, get_cpu);
            all_get_cpu += get_cpu;
            (t, cpu, since, get_cpu) = (Instant::now(), cpu_seconds(), 0, 0.0);
        }
    }
    line(0, n, start.elapsed().as_secs_f64(), cpu_seconds() - start_cpu, all_get_cpu);
    for l in lines {
        println!("{l}");
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("applier") {
        let (engine, dir) = (&args[2], std::path::Path::new(&args[3]));
        let n: u64 = args.get(4).map_or(3_000_000, |s| s.parse().expect("ITEMS"));
        let tx: u64 = args.get(5).map_or(80_000, |s| s.parse().expect("TX"));
        let mut db = open(engine, dir);
        applier(engine, db.as_mut(), n, tx);
        return;
    }
    let (engine, dir) = (&args[1], std::path::Path::new(&args[2]));
    let n: u64 = args.get(3).map_or(1_000_000, |s| s.parse().expect("ITEMS"));
    let mut db = open(engine, dir);
    // Half the items one synced batch at a time, half 32 batches a commit.
    let half = n / 2 / BATCH as u64 * BATCH as u64;
    let t = Instant::now();
    for start in (0..half).step_by(BATCH) {
        let writes: Vec<_> = (start..start + BATCH as u64).map(|i| (key(i), value(i))).collect();
        db.commit(&writes);
    }
    let load = rate(half, t);
    let t = Instant::now();
    let step = (BATCH * GROUP) as u64;
    let mut start = half;
    while start < n {
        let end = (start + step).min(n);
        let writes: Vec<_> = (start..end).map(|i| (key(i), value(i))).collect();
        db.commit(&writes);
        start = end;
    }
    let grouped = rate(n - half, t);
    let mut r = Rng(7);
    let t = Instant::now();
    for _ in 0..PUTS {
        let i = r.next() % n;
        db.commit(&[(key(i), value(i + 1))]);
    }
    let puts = rate(PUTS, t);
    let t = Instant::now();
    let mut found = 0;
    for _ in 0..GETS {
        found += db.get(&key(r.next() % n)).is_some() as u64;
    }
    let gets = rate(GETS, t);
    assert_eq!(found, GETS);
    let t = Instant::now();
    let mut seen = 0;
    for _ in 0..RANGES {
        let (lo, hi) = collection_bounds(r.next() % (n / COLLECTION));
        seen += db.range(&lo, &hi) as u64;
    }
    let ranges = rate(RANGES, t);
    assert_eq!(seen, RANGES * COLLECTION);
    let t = Instant::now();
    let all = db.scan() as u64;
    let scan = rate(all, t);
    assert_eq!(all, n);
    drop(db);
    let bytes: u64 = walk(dir);
    println!(
        "| {engine} | {n} | {load:.0} | {grouped:.0} | {puts:.0} | {gets:.0} | {ranges:.0} | {scan:.0} | {:.0} |",
        bytes as f64 / n as f64
    );
}

fn walk(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => walk(&e.path()),
                    Ok(m) => m.len(),
                    Err(_) => 0,
                })
                .sum()
        })
        .unwrap_or(0)
}
