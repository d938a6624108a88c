//! Seed 002: parallel loading patterns, and loads fired at once.

use super::*;

/// Workers of the worker/master pattern.
const WORKERS: usize = 8;

/// Batches in flight now, and the most at once.
#[derive(Default)]
struct InFlight {
    now: std::sync::atomic::AtomicU64,
    peak: std::sync::atomic::AtomicU64,
}

/// Sends one batch (re-sending what comes back unprocessed), counting it
/// in flight meanwhile.
async fn send_counted(c: &BenchClient, table: &str, items: Vec<BenchItem>, f: &InFlight) -> Result<(), ScenarioError> {
    use std::sync::atomic::Ordering::Relaxed;
    let n = f.now.fetch_add(1, Relaxed) + 1;
    f.peak.fetch_max(n, Relaxed);
    let r = batch_all(c, table, &items).await;
    f.now.fetch_sub(1, Relaxed);
    r
}

/// Seed 002's table: id and sort, on-demand.
async fn create_books_table(c: &BenchClient, table: &str) -> Result<(), ScenarioError> {
    create_table(c, table, &[("id", ScalarType::S), ("sort", ScalarType::S)], None).await
}

/// Seed 002: six parallel patterns on 1,000 minimal items, then batches
/// fired all at once with and without re-sending UnprocessedItems.
pub async fn parallel_patterns(ctx: &Ctx) -> Result<Scenario<ParallelPatterns>, ScenarioError> {
    let count = ctx.n(1_000, 100);
    let trials = if ctx.scale < 0.5 { 3 } else { 10 };
    let published = [
        ("serial", 619.0),
        ("channel", 71.0),
        ("fork-join", 38.0),
        ("map-reduce", 43.0),
        ("parallel-loop", 146.0),
        ("worker-master", 46.0),
    ];
    let c = client(ctx, &ctx.modelled_url).await;
    let items: Vec<BenchItem> =
        dataset_items(Dataset::Minimal, count, 0, ctx.seed)?.iter().map(BenchItem::from).collect();
    let batches: Vec<Vec<BenchItem>> = items.chunks(25).map(|c| c.to_vec()).collect();
    let mut patterns = Vec::new();
    for (pattern, seed_ms) in published {
        (ctx.say)(format!("parallel-patterns: {pattern}, {count} items x {trials} trials"));
        let mut total = 0.0;
        let flight = Arc::new(InFlight::default());
        for _ in 0..trials {
            // A fresh on-demand table per trial, as the seed's runs each
            // wrote into a table with its own capacity.
            let table = unique("books", ctx.seed);
            create_books_table(&c, &table).await?;
            let t0 = Instant::now();
            match pattern {
                "serial" => {
                    for b in &batches {
                        send_counted(&c, &table, b.clone(), &flight).await?;
                    }
                }
                "channel" => {
                    // As seed 002 describes it: a channel sized by the
                    // item count, one message per chunk of 25; the receiver
                    // gathers the messages and runs them in parallel.
                    let (tx, mut rx) = tokio::sync::mpsc::channel::<Vec<BenchItem>>(batches.len().max(1));
                    for b in &batches {
                        tx.send(b.clone()).await.map_err(|e| e.to_string())?;
                    }
                    drop(tx);
                    let mut set = JoinSet::new();
                    while let Some(b) = rx.recv().await {
                        let (c, t, f) = (c.clone(), table.clone(), flight.clone());
                        set.spawn(async move { send_counted(&c, &t, b, &f).await });
                    }
                    while let Some(r) = set.join_next().await {
                        r.map_err(|e| e.to_string())??;
                    }
                }
                "fork-join" => {
                    let mut set = JoinSet::new();
                    for b in &batches {
                        let (c, t, b, f) = (c.clone(), table.clone(), b.clone(), flight.clone());
                        set.spawn(async move { send_counted(&c, &t, b, &f).await });
                    }
                    while let Some(r) = set.join_next().await {
                        r.map_err(|e| e.to_string())??;
                    }
                }
                "map-reduce" => {
                    // Map: each chunk of 25 becomes a write, all in
                    // parallel, yielding its item count; reduce: the sum.
                    let mut set = JoinSet::new();
                    for b in &batches {
                        let (c, t, b, f) = (c.clone(), table.clone(), b.clone(), flight.clone());
                        set.spawn(async move {
                            let n = b.len();
                            send_counted(&c, &t, b, &f).await?;
                            Ok::<usize, ScenarioError>(n)
                        });
                    }
                    let mut sum = 0;
                    while let Some(r) = set.join_next().await {
                        sum += r.map_err(|e| e.to_string())??;
                    }
                    if sum != items.len() {
                        return Err(format!("map-reduce counted {sum} of {}", items.len()).into());
                    }
                }
                "parallel-loop" => {
                    // A parallel for over the batches, one lane per core.
                    let lanes = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2);
                    let mut set = JoinSet::new();
                    for lane in 0..lanes {
                        let (c, t, f) = (c.clone(), table.clone(), flight.clone());
                        let mine: Vec<_> = batches.iter().skip(lane).step_by(lanes).cloned().collect();
                        set.spawn(async move {
                            for b in mine {
                                send_counted(&c, &t, b, &f).await?;
                            }
                            Ok::<(), ScenarioError>(())
                        });
                    }
                    while let Some(r) = set.join_next().await {
                        r.map_err(|e| e.to_string())??;
                    }
                }
                _ => {
                    // Worker/master: workers take batches from the master's queue.
                    let queue = Arc::new(Mutex::new(batches.iter().cloned().collect::<VecDeque<_>>()));
                    let mut set = JoinSet::new();
                    for _ in 0..WORKERS {
                        let (c, t, q, f) = (c.clone(), table.clone(), queue.clone(), flight.clone());
                        set.spawn(async move {
                            loop {
                                let next = q.lock().map_err(|e| e.to_string())?.pop_front();
                                let Some(b) = next else {
                                    return Ok::<(), ScenarioError>(());
                                };
                                send_counted(&c, &t, b, &f).await?;
                            }
                        });
                    }
                    while let Some(r) = set.join_next().await {
                        r.map_err(|e| e.to_string())??;
                    }
                }
            }
            total += t0.elapsed().as_secs_f64() * 1000.0;
            let counted = c.count(&table, 2).await.map_err(|e| e.to_string())?;
            if counted != count {
                return Err(format!("{pattern}: {counted} of {count} items in the table").into());
            }
            let _ = c.delete_table(&table).await;
        }
        patterns.push(PatternRow {
            pattern: pattern.to_string(),
            items: count,
            trials,
            mean_ms: total / trials as f64,
            seed_mean_ms: seed_ms,
            peak_in_flight: Some(flight.peak.load(std::sync::atomic::Ordering::Relaxed)),
        });
    }
    let mut burst = Vec::new();
    for full in [10_000u64, 100_000] {
        let modelled = !(ctx.real_time || ctx.external);
        // Modelled bursts cost little, so they keep the seed's sizes.
        let n = if modelled { full } else { ctx.n(full, 1000) };
        // The seed fired 10,000 items at once and 100,000 over about 2 s.
        let spread = (full > 10_000).then_some((100, 2_000));
        (ctx.say)(format!(
            "parallel-patterns: {n} items fired {} at {} ({})",
            if spread.is_some() { "over 2 s" } else { "at once" },
            if modelled {
                "seed 002's table (on demand, idle for 5 minutes after earlier loads)"
            } else {
                "a new on-demand table"
            },
            if modelled { "modelled" } else { "real time" }
        ));
        let items = dataset_items(Dataset::Minimal, n, 0, ctx.seed)?;
        if modelled {
            let e = sim::engine();
            sim::create(&e, "naive", &[("id", ScalarType::S), ("sort", ScalarType::S)], EngineBilling::PayPerRequest)
                .map_err(|e| e.to_string())?;
            let mut delays = dynaburst_datagen::Rng::new(ctx.seed);
            let (written, lost) = sim::seed002_burst(&e, "naive", items.clone(), spread, &mut delays);
            burst.push(BurstRow { items: n, loader: NAIVE.into(), modelled: true, written, lost, seconds: 0.0 });
            sim::create(&e, "loader", &[("id", ScalarType::S), ("sort", ScalarType::S)], EngineBilling::PayPerRequest)
                .map_err(|e| e.to_string())?;
            let load = sim::load(&e, "loader", &items, Concurrency::Auto, Order::Interleave, 3_600_000)?;
            burst.push(BurstRow {
                items: n,
                loader: LOADER.into(),
                modelled: true,
                written: load.written,
                lost: n - load.written,
                seconds: load.elapsed_ms as f64 / 1000.0,
            });
        } else {
            let table = unique("naive", ctx.seed);
            create_books_table(&c, &table).await?;
            let t0 = Instant::now();
            let mut set = JoinSet::new();
            for chunk in items.chunks(25) {
                let (c, t, chunk) = (c.clone(), table.clone(), chunk.to_vec());
                set.spawn(async move {
                    let n = chunk.len() as u64;
                    c.batch_once(&t, &chunk).await.unwrap_or(n)
                });
            }
            let mut lost = 0;
            while let Some(r) = set.join_next().await {
                lost += r.unwrap_or(25);
            }
            burst.push(BurstRow {
                items: n,
                loader: NAIVE.into(),
                modelled: false,
                written: n - lost,
                lost,
                seconds: t0.elapsed().as_secs_f64(),
            });
            let path = ctx.out_dir.join(format!(".minimal-{n}.jsonl"));
            let mut f = std::fs::File::create(&path).map_err(|e| e.to_string())?;
            generate(Dataset::Minimal, n, 0, ctx.seed, &mut f).map_err(|e| e.to_string())?;
            let table = unique("loader", ctx.seed);
            create_books_table(&c, &table).await?;
            let result =
                run_loader(ctx, &ctx.modelled_url, &path, &table, Concurrency::Auto, Order::Interleave).await?;
            let _ = std::fs::remove_file(&path);
            let report = &result.report.load;
            let written = report.records.written;
            burst.push(BurstRow {
                items: n,
                loader: LOADER.into(),
                modelled: false,
                written,
                lost: n - written,
                seconds: report.duration_s,
            });
        }
    }
    Ok(Scenario {
        seed_id: "002".into(),
        title: "Parallel loaders, and what throttling does to them".into(),
        measured: true,
        explanation: "The six patterns are measured over HTTP against the embedded server (capacity model on, a fresh on-demand table per trial) with the AWS SDK for Rust, each re-sending UnprocessedItems, as seed 002 describes them: serial one batch of 25 after another; channel and map-reduce put every batch in flight at once (a message or a map task per batch), as fork-join does; parallel-loop runs one lane per core of this machine; worker/master has 8 workers. Seed 002 ran them against DynamoDB in ap-northeast-1 from its author's machine. A pattern's time follows how many batches it keeps in flight: the table's last columns compare ours with what the seed's times imply. The burst part is modelled in virtual time unless --real-time.".into(),
        duration_s: None,
        figures: ParallelPatterns { patterns, burst },
    })
}

/// The burst's two loaders.
const NAIVE: &str = "naive (ignores UnprocessedItems)";
const LOADER: &str = "dynaburst load";
