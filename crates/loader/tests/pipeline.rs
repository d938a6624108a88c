//! The pipeline end to end, in process and in virtual time (tokio's paused
//! clock): a test sink scripts what the endpoint answers.

// The test sink reads tokio's clock, which these tests pause (virtual time).
#![allow(clippy::disallowed_methods)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dynaburst_input::{Compression, Format, InputSpec, Record};
use dynaburst_loader::{
    open_session, run_pipeline, Checkpoint, Concurrency, Ending, Limits, Order, Outcome, Outcomes, Session, Sink,
    SinkItem, Snapshot, TokioClock, Tuning, READER_DIED,
};
use tokio::sync::watch;
use tokio::time::Instant;

/// One record as the test sink sees it.
#[derive(Debug)]
struct TestItem {
    line: u64,
    partition: u64,
}

/// Each partition takes `per_partition` items per `window` (virtual
/// time); a request with any item over it is throttled whole. Writes what
/// it accepts, in order.
struct PartitionSink {
    per_partition: u64,
    window: Duration,
    round_trip: Duration,
    used: Mutex<HashMap<u64, (Instant, u64)>>,
    written: Mutex<Vec<u64>>,
    requests: AtomicU64,
}

impl PartitionSink {
    fn new(per_partition: u64) -> PartitionSink {
        PartitionSink {
            per_partition,
            window: Duration::from_millis(100),
            round_trip: Duration::from_millis(10),
            used: Mutex::new(HashMap::new()),
            written: Mutex::new(Vec::new()),
            requests: AtomicU64::new(0),
        }
    }
}

impl Sink for PartitionSink {
    type Item = TestItem;

    fn request_name(&self) -> &'static str {
        "TestWrite"
    }

    fn limits(&self) -> Limits {
        Limits { max_items: 25, max_bytes: 1 << 20, max_concurrency: 16 }
    }

    async fn write<'a>(&'a self, items: &'a [&'a TestItem], _token: Option<&'a str>) -> Outcome {
        tokio::time::sleep(self.round_trip).await;
        self.requests.fetch_add(1, Ordering::Relaxed);
        let now = Instant::now();
        let mut used = self.used.lock().unwrap();
        let mut want: HashMap<u64, u64> = HashMap::new();
        for i in items {
            *want.entry(i.partition).or_default() += 1;
        }
        for (p, n) in &want {
            let (since, count) = used.get(p).copied().unwrap_or((now, 0));
            let count = if now.duration_since(since) >= self.window { 0 } else { count };
            if count + n > self.per_partition {
                return Outcome::Throttled { code: "ProvisionedThroughputExceededException".into() };
            }
        }
        for (p, n) in want {
            let e = used.entry(p).or_insert((now, 0));
            if now.duration_since(e.0) >= self.window {
                *e = (now, 0);
            }
            e.1 += n;
        }
        self.written.lock().unwrap().extend(items.iter().map(|i| i.line));
        Outcome::all_written(items.len() as f64)
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dynaburst-pipeline-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `partitions` runs of `per` records each, sorted by partition key.
fn sorted_input(dir: &Path, partitions: u64, per: u64) -> PathBuf {
    let path = dir.join("input.jsonl");
    let mut text = String::new();
    for p in 0..partitions {
        for s in 0..per {
            text.push_str(&format!("{{\"pk\":\"p{p}\",\"sk\":{s}}}\n"));
        }
    }
    std::fs::write(&path, text).unwrap();
    path
}

fn session(dir: &Path, input: &Path) -> Session {
    let spec = InputSpec {
        path: Some(input.to_path_buf()),
        format: Format::JsonLines,
        compression: Compression::None,
        types: Default::default(),
        all_strings: false,
        shard: None,
        resume_at: None,
        raw_json: false,
    };
    open_session(spec, "test", Some(dir.join("ckpt")), Some(dir.join("rejects.jsonl")), false).unwrap()
}

fn tuning(order: Order) -> Tuning {
    Tuning {
        concurrency: Concurrency::Auto,
        latency_control: false,
        max_wcu: None,
        order,
        window: 10_000,
        seed: 7,
        // Virtual time runs ahead while the pipeline waits for the reader
        // thread: no stall may be declared in a test.
        stall_timeout: Duration::from_secs(86_400 * 365),
    }
}

/// The test records' conversion: partition `pN`, one identity per line.
fn convert(rec: &Record) -> Result<SinkItem<TestItem>, String> {
    let item = rec.item.as_ref().map_err(|e| e.0.clone())?;
    let pk = item.get("pk").and_then(|v| v.as_s()).ok_or("no pk")?;
    let partition: u64 = pk.trim_start_matches('p').parse().map_err(|_| "bad pk")?;
    Ok(SinkItem {
        partition: u128::from(partition) * 0x9E37_79B9_7F4A_7C15,
        slot: u128::from(rec.line),
        units: 1.0,
        bytes: rec.raw.len(),
        item: TestItem { line: rec.line, partition },
    })
}

async fn run<F>(sink: Arc<PartitionSink>, session: &Session, tuning: &Tuning, convert: F) -> Outcomes
where
    F: Fn(&Record) -> Result<SinkItem<TestItem>, String> + Send + 'static,
{
    let (progress, _rx) = watch::channel(Snapshot::default());
    let (_stop_tx, stop) = watch::channel(false);
    run_pipeline(sink, session, tuning, convert, progress, stop, TokioClock).await.unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_panic_in_conversion_aborts_the_load_and_the_checkpoint_stops_before_unread_records() {
    let dir = temp_dir("panic");
    let input = sorted_input(&dir, 1, 100);
    let session = session(&dir, &input);
    let sink = Arc::new(PartitionSink::new(u64::MAX));
    let out = run(sink.clone(), &session, &tuning(Order::AsIs), |rec: &Record| {
        if rec.line == 40 {
            panic!("conversion failed on line 40");
        }
        convert(rec)
    })
    .await;
    // Not complete: aborted, saying why.
    let Ending::Aborted(reason) = &out.ending else { panic!("ended {:?}", out.ending) };
    assert!(reason.starts_with(READER_DIED), "{reason}");
    assert!(reason.contains("conversion failed on line 40"), "{reason}");
    assert!(out.stats.read <= 39, "read {} records, line 40 never arrived", out.stats.read);
    // The checkpoint is incomplete and at or before line 40; every record
    // before it was written.
    let ckpt = Checkpoint::load(&dir.join("ckpt")).unwrap().unwrap();
    assert!(!ckpt.complete);
    assert!(ckpt.line <= 40, "checkpoint at line {}", ckpt.line);
    let written = sink.written.lock().unwrap().clone();
    for line in 1..ckpt.line {
        assert!(written.contains(&line), "line {line} is below the checkpoint but was not written");
    }
    assert!(!written.contains(&40));
    assert_eq!(out.stats.written + out.stats.rejected, written.len() as u64);
}

#[tokio::test(start_paused = true)]
async fn a_complete_load_writes_every_record_once_and_says_complete() {
    let dir = temp_dir("complete");
    let input = sorted_input(&dir, 4, 50);
    let session = session(&dir, &input);
    let sink = Arc::new(PartitionSink::new(u64::MAX));
    let out = run(sink.clone(), &session, &tuning(Order::Interleave), convert).await;
    assert_eq!(out.ending, Ending::Complete);
    assert_eq!((out.stats.read, out.stats.written, out.stats.rejected), (200, 200, 0));
    let mut written = sink.written.lock().unwrap().clone();
    written.sort_unstable();
    assert_eq!(written, (1..=200).collect::<Vec<u64>>());
    let ckpt = Checkpoint::load(&dir.join("ckpt")).unwrap().unwrap();
    assert!(ckpt.complete);
    assert_eq!(ckpt.line, 201);
}

#[tokio::test(start_paused = true)]
async fn interleaving_sorted_input_is_throttled_less_and_needs_fewer_requests_than_as_is() {
    // 8 partitions of 400 records each, sorted: as-is sends one partition at
    // a time, into its limit of 50 items per 100 ms; interleave spreads the
    // requests over all eight.
    let mut results = Vec::new();
    for order in [Order::AsIs, Order::Interleave] {
        let dir = temp_dir(&format!("{order:?}"));
        let input = sorted_input(&dir, 8, 400);
        let session = session(&dir, &input);
        let sink = Arc::new(PartitionSink::new(50));
        let out = run(sink.clone(), &session, &tuning(order), convert).await;
        assert_eq!(out.ending, Ending::Complete, "{order:?}");
        assert_eq!((out.stats.written, out.stats.rejected), (3200, 0), "{order:?}");
        assert_eq!(sink.requests.load(Ordering::Relaxed), out.stats.requests);
        results.push((out.stats.throttle_events, out.stats.resent_items, out.stats.requests));
    }
    let (as_is, interleave) = (results[0], results[1]);
    println!("(throttle events, items re-sent, requests): as-is {as_is:?}, interleave {interleave:?}");
    assert!(as_is.0 > 0, "as-is into one partition at a time throttles: {as_is:?}");
    assert!(interleave.0 < as_is.0, "throttle events: interleave {interleave:?}, as-is {as_is:?}");
    assert!(interleave.1 < as_is.1, "items re-sent: interleave {interleave:?}, as-is {as_is:?}");
    // Each throttled request is a wasted round trip: interleave needs fewer.
    assert!(interleave.2 < as_is.2, "requests: interleave {interleave:?}, as-is {as_is:?}");
}
