//! Seed 004: partition-key design, load order and capacity mode.

use super::*;

fn ip_items(count: u64, seed: u64, single_key: bool) -> Result<Vec<Item>, ScenarioError> {
    let mut buf = Vec::new();
    generate(Dataset::IpRanges, count, 0, seed, &mut buf).map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&buf);
    let mut out = Vec::with_capacity(count as usize);
    for line in text.lines().skip(1) {
        let cols: Vec<&str> = line.split(',').collect();
        if cols.len() < 7 {
            continue;
        }
        let num = |s: &str| Number::parse(s).map(AttributeValue::N).map_err(|e| e.to_string());
        let mut item = Item::new();
        item.insert("pk".into(), if single_key { num("0")? } else { num(cols[5])? });
        item.insert("sk".into(), num(cols[3])?);
        item.insert("end".into(), num(cols[4])?);
        item.insert("netblock".into(), AttributeValue::S(cols[0].to_string()));
        item.insert("metadata".into(), AttributeValue::S(cols[6].to_string()));
        out.push(item);
    }
    Ok(out)
}

fn write_timeline_csv(path: &Path, rows: &[TimelineSecond]) -> Result<(), ScenarioError> {
    let mut s = String::from("second,consumed_write_units,throttled_write_items\n");
    for r in rows {
        // Units as JSON writes them (`1000.0`), as this file always had them.
        let consumed = serde_json::Number::from_f64(r.consumed).map(|n| n.to_string()).unwrap_or_default();
        s.push_str(&format!("{},{consumed},{}\n", r.second, r.throttled));
    }
    std::fs::write(path, s).map_err(BenchError::io("write", path))
}

/// Seed 004: the IP-range dataset under four designs, then the lookup.
pub async fn partition_keys(ctx: &Ctx) -> Result<Scenario<PartitionKeys>, ScenarioError> {
    let modelled = !(ctx.real_time || ctx.external);
    // Modelled loads keep at least 100,000 ranges (~450 per key): with a
    // few dozen records per key, each key fits in a partition's burst and
    // load order stops mattering, which is not what seed 004 is about.
    let count = if modelled { ctx.n(300_000, 100_000) } else { ctx.n(300_000, 5_000) };
    // (name, load, seed's units/s, one key, shuffled, provisioned WCU)
    type Case<'a> = (&'a str, &'a str, u64, bool, bool, Option<u64>);
    let cases: [Case; 4] = [
        ("single-key", "One partition-key value, new on-demand table", 1000, true, false, None),
        ("sorted", "First octet as partition key, sorted, new on-demand table", 1250, false, false, None),
        ("shuffled", "First octet as partition key, shuffled, new on-demand table", 3600, false, true, None),
        ("provisioned", "Shuffled into a table provisioned at 10,000 WCU", 6000, false, true, Some(10_000)),
    ];
    let mut loads = Vec::new();
    for (case, label, seed_rate, single, shuffled, provisioned) in cases {
        (ctx.say)(format!(
            "partition-keys: {label}, {count} ranges ({})",
            if modelled { "modelled" } else { "real time" }
        ));
        let mut items = ip_items(count, ctx.seed, single)?;
        if shuffled {
            dynaburst_datagen::Rng::new(ctx.seed).shuffle(&mut items);
        }
        let (rate, seconds, timeline, splits) = if modelled {
            let e = sim::engine();
            let billing = match provisioned {
                Some(w) => EngineBilling::Provisioned { read: 1000, write: w },
                None => EngineBilling::PayPerRequest,
            };
            sim::create(&e, case, &[("pk", ScalarType::N), ("sk", ScalarType::N)], billing)
                .map_err(|e| e.to_string())?;
            // dynaburst load's own pipeline, in the input's order (as the
            // real-time runs below), bounded: at most 10 modelled minutes.
            // The sorted load is one writer, as seed 004's one Python
            // process: with `--concurrency auto` the loader holds the runs
            // aside and sends a record of each key in turn, and the load is
            // no longer bound by one partition at a time.
            let concurrency = if !shuffled && !single { Concurrency::Fixed(1) } else { Concurrency::Auto };
            let load = sim::load(&e, case, &items, concurrency, Order::AsIs, 600_000)?;
            let tl: Vec<TimelineSecond> = load
                .timeline
                .iter()
                .map(|s| TimelineSecond {
                    second: s.second,
                    consumed: s.consumed,
                    throttled: s.throttled,
                    partitions: Some(s.partitions as u64),
                    partitions_written: Some(s.partitions_written as u64),
                })
                .collect();
            let splits = load
                .splits
                .iter()
                .map(|e| SplitMark {
                    at_s: e.after_start_ms as f64 / 1000.0,
                    reason: e.reason.name().to_string(),
                    partitions_after: e.partitions_after as u64,
                })
                .collect();
            (load.mean_rate(), load.elapsed_ms as f64 / 1000.0, tl, splits)
        } else {
            let c = client(ctx, &ctx.modelled_url).await;
            let table = unique(case, ctx.seed);
            create_table(&c, &table, &[("pk", ScalarType::N), ("sk", ScalarType::N)], provisioned.map(|w| (1000, w)))
                .await?;
            let path = ctx.out_dir.join(format!(".{case}.jsonl"));
            let mut f = std::io::BufWriter::new(std::fs::File::create(&path).map_err(|e| e.to_string())?);
            for i in &items {
                use std::io::Write;
                let v: serde_json::Map<String, Value> = i
                    .iter()
                    .map(|(k, v)| {
                        (
                            k.clone(),
                            match v {
                                AttributeValue::N(n) => {
                                    Value::Number(n.to_string().parse().unwrap_or(serde_json::Number::from(0)))
                                }
                                AttributeValue::S(s) => json!(s),
                                _ => Value::Null,
                            },
                        )
                    })
                    .collect();
                writeln!(f, "{}", Value::Object(v)).map_err(|e| e.to_string())?;
            }
            drop(f);
            let result = run_loader(ctx, &ctx.modelled_url, &path, &table, Concurrency::Auto, Order::AsIs).await?;
            let _ = std::fs::remove_file(&path);
            let tl: Vec<TimelineSecond> = result
                .timeline
                .iter()
                .map(|r| TimelineSecond {
                    second: r.second,
                    consumed: r.units,
                    throttled: r.unprocessed_items,
                    partitions: None,
                    partitions_written: None,
                })
                .collect();
            let units_per_s = match &result.report.target {
                dynaburst_loader::TargetReport::DynamoDb(d) => d.units_per_s.mean,
                dynaburst_loader::TargetReport::MongoDb(_) => 0.0,
            };
            (units_per_s, result.report.load.duration_s, tl, Vec::new())
        };
        let csv = format!("partition-keys-{case}.csv");
        write_timeline_csv(&ctx.out_dir.join(&csv), &timeline)?;
        loads.push(PartitionLoad {
            case: case.to_string(),
            label: label.to_string(),
            modelled,
            items: count,
            seconds,
            rate_units_per_s: rate,
            seed_rate: seed_rate as f64,
            timeline_csv: csv,
            timeline,
            splits,
        });
    }
    // The lookup, measured over HTTP.
    let lookups = ctx.n(10_000, 500) as usize;
    (ctx.say)(format!("partition-keys: loading {count} ranges for the lookup, then {lookups} lookups"));
    let c = client(ctx, &ctx.unlimited_url).await;
    let table = unique("ipranges", ctx.seed);
    create_table(&c, &table, &[("pk", ScalarType::N), ("sk", ScalarType::N)], None).await?;
    let items = ip_items(count, ctx.seed, false)?;
    let mut set = JoinSet::new();
    for part in items.chunks(items.len().div_ceil(8).max(1)) {
        let (c, t) = (c.clone(), table.clone());
        let part: Vec<BenchItem> = part.iter().map(BenchItem::from).collect();
        set.spawn(async move {
            for chunk in part.chunks(25) {
                batch_all(&c, &t, chunk).await?;
            }
            Ok::<(), ScenarioError>(())
        });
    }
    while let Some(r) = set.join_next().await {
        r.map_err(|e| e.to_string())??;
    }
    // Lookups in 8 lanes (the round trips are independent), each lane
    // drawing its own addresses from the seed.
    let round = lookup_round(&c, &table, LATENCY_LANES, Stop::After(lookups), ctx.seed).await?;
    let (lat, correct) = (round.latencies_ms, round.correct);
    let saturation = lookup_saturation(ctx, &c, &table).await?;
    Ok(Scenario {
        seed_id: "004".into(),
        title: "Partition-key design, load order and capacity mode".into(),
        measured: !modelled,
        explanation: if modelled {
            "The four loads are modelled in virtual time: dynaburst load's own pipeline (input order, auto concurrency but one writer for the sorted load as seed 004's one Python process, BatchWriteItem of 25, UnprocessedItems and throttled requests re-sent with backoff, each request a 10 ms round trip) against the engine in-process with the capacity model on; seed 004 loaded from Python on EC2 and read its rates off CloudWatch's per-minute sums. The lookup is measured over HTTP."
        } else {
            "The four loads ran over HTTP on the wall clock with dynaburst load (--real-time or an external endpoint); seed 004 read its rates off CloudWatch's per-minute sums."
        }
        .into(),
        duration_s: None,
        figures: PartitionKeys {
            loads,
            lookup: Lookup {
                samples: lookups as u64,
                correct: correct as u64,
                latency_ms: percentiles(lat),
                saturation: Some(saturation),
            },
        },
    })
}

/// Lookups in flight while the lookup's latency is measured.
const LATENCY_LANES: usize = 8;
/// The saturation ramp: lookups in flight from 1, doubling, at most this many steps.
const RAMP_MAX_STEPS: usize = 11;
/// Each step of the ramp runs this long (wall clock) at full scale; at a
/// smaller `--items` scale shorter, but at least [`RAMP_STEP_MIN`].
const RAMP_STEP: Duration = Duration::from_secs(2);
const RAMP_STEP_MIN: Duration = Duration::from_millis(250);
/// A step that does not beat the best rate so far by this fraction is not growth.
const RAMP_GROWTH: f64 = 0.05;
/// The ramp stops after this many steps in a row without growth.
const RAMP_PATIENCE: usize = 2;

/// When a round of lookups ends.
#[derive(Clone, Copy)]
enum Stop {
    /// After this many lookups in all.
    After(usize),
    /// When the wall clock passes this instant (a lookup in flight finishes).
    At(Instant),
}

/// What a round of lookups measured.
struct Round {
    latencies_ms: Vec<f64>,
    correct: usize,
    seconds: f64,
}

/// Sends seed 004's lookup (the range holding a random address: the
/// partition key's first octet, the last sort key at most the address)
/// from `lanes` lanes, each sending its next when the last is answered,
/// each drawing its own addresses from `seed`, until `stop`.
async fn lookup_round(
    c: &BenchClient,
    table: &str,
    lanes: usize,
    stop: Stop,
    seed: u64,
) -> Result<Round, ScenarioError> {
    let t0 = Instant::now();
    let mut set = JoinSet::new();
    for lane in 0..lanes {
        let (c, t) = (c.clone(), table.to_string());
        let mine = match stop {
            Stop::After(n) => n / lanes + usize::from(lane < n % lanes),
            Stop::At(_) => usize::MAX,
        };
        let mut rng = dynaburst_datagen::Rng::new((seed ^ LOOKUP_SALT).wrapping_add(lane as u64));
        set.spawn(async move {
            let (lo, hi) = (1u64 << 24, 224u64 << 24);
            let mut lat = Vec::new();
            let mut correct = 0usize;
            while lat.len() < mine && !matches!(stop, Stop::At(end) if Instant::now() >= end) {
                let addr = lo + rng.below(hi - lo);
                let t0 = Instant::now();
                let pk = AttributeValue::N(Number::from_i64((addr >> 24) as i64));
                let upto = AttributeValue::N(Number::from_i64(addr as i64));
                let out = c.last_at_most(&t, ("pk", &pk), ("sk", &upto)).await.map_err(|e| e.to_string())?;
                lat.push(t0.elapsed().as_secs_f64() * 1000.0);
                let hit = out.and_then(|i| {
                    let s: u64 = i.get("sk")?.as_n()?.to_string().parse().ok()?;
                    let e: u64 = i.get("end")?.as_n()?.to_string().parse().ok()?;
                    Some(s <= addr && addr <= e)
                });
                if hit == Some(true) {
                    correct += 1;
                }
            }
            Ok::<(Vec<f64>, usize), String>((lat, correct))
        });
    }
    let mut latencies_ms = Vec::new();
    let mut correct = 0;
    while let Some(r) = set.join_next().await {
        let (l, c) = r.map_err(|e| e.to_string())??;
        latencies_ms.extend(l);
        correct += c;
    }
    Ok(Round { latencies_ms, correct, seconds: t0.elapsed().as_secs_f64() })
}

/// Seed 004's other question, how many lookups a second the table
/// sustains: [`RAMP_STEP`] of lookups at 1, 2, 4, ... in flight, until
/// [`RAMP_PATIENCE`] steps in a row add less than [`RAMP_GROWTH`] to the
/// best rate (or [`RAMP_MAX_STEPS`] steps).
async fn lookup_saturation(ctx: &Ctx, c: &BenchClient, table: &str) -> Result<LookupSaturation, ScenarioError> {
    let mut steps: Vec<LookupStep> = Vec::new();
    let (mut best, mut flat) = (0.0_f64, 0usize);
    let step = RAMP_STEP.mul_f64(ctx.scale.clamp(0.0, 1.0)).max(RAMP_STEP_MIN);
    for k in 0..RAMP_MAX_STEPS {
        let lanes = 1usize << k;
        let round = lookup_round(c, table, lanes, Stop::At(Instant::now() + step), ctx.seed ^ (k as u64)).await?;
        let n = round.latencies_ms.len();
        if n == 0 {
            return Err(format!("no lookup answered in {:.2} s at {lanes} in flight", step.as_secs_f64()).into());
        }
        let rate = n as f64 / round.seconds.max(1e-9);
        (ctx.say)(format!("partition-keys: {lanes} lookups in flight: {rate:.0} lookups/s"));
        steps.push(LookupStep {
            concurrency: lanes as u64,
            lookups: n as u64,
            correct: round.correct as u64,
            seconds: round.seconds,
            lookups_per_s: rate,
            latency_ms: percentiles(round.latencies_ms),
        });
        if rate > best * (1.0 + RAMP_GROWTH) {
            flat = 0;
        } else {
            flat += 1;
        }
        best = best.max(rate);
        if flat >= RAMP_PATIENCE {
            break;
        }
    }
    Ok(LookupSaturation { steps, growth_threshold: RAMP_GROWTH })
}
