//! Seed 003: latency percentiles of each write API.

use super::*;
use crate::embedded::Embedded;
use crate::results::Calibration;

/// Requests in flight at once while sampling.
const LANES: usize = 8;
/// The calibration probe's fixed service time, in ms.
pub const PROBE_MS: f64 = 5.0;
/// PutItem samples the calibration probe takes.
const PROBE_SAMPLES: usize = 800;

/// Takes `samples` client-observed latencies (ms) of one configuration
/// against `table`, `LANES` at a time.
async fn sample(
    c: &BenchClient,
    table: &str,
    name: &'static str,
    items: usize,
    fail: bool,
    samples: usize,
    counter: Arc<std::sync::atomic::AtomicU64>,
) -> Result<Vec<f64>, ScenarioError> {
    let mut set = JoinSet::new();
    for lane in 0..LANES {
        let (c, t, counter) = (c.clone(), table.to_string(), counter.clone());
        let mine = samples / LANES + usize::from(lane < samples % LANES);
        set.spawn(async move {
            let mut out = Vec::with_capacity(mine);
            for _ in 0..mine {
                let base = counter.fetch_add(items as u64, std::sync::atomic::Ordering::Relaxed);
                let item = |k: u64| {
                    Item::from([
                        ("id".to_string(), AttributeValue::S(format!("i{k}"))),
                        ("v".to_string(), AttributeValue::N(Number::from_i64(k as i64))),
                    ])
                };
                let t0 = Instant::now();
                let ok = match (name.starts_with("PutItem"), name.starts_with("BatchWrite"), fail) {
                    (true, _, _) => c.put_once(&t, &item(base)).await,
                    (_, true, _) => {
                        let batch: Vec<Item> = (0..items as u64).map(|k| item(base + k)).collect();
                        c.batch_once(&t, &batch).await.is_some()
                    }
                    (_, _, failing) => {
                        let puts: Vec<Item> = (0..items as u64 - u64::from(failing)).map(|k| item(base + k)).collect();
                        // With `failing`, one action whose condition cannot
                        // hold: the whole transaction is cancelled.
                        let never = AttributeValue::S("never-written".into());
                        let check = failing.then_some(("id", &never));
                        match c.transact_once(&t, &puts, check).await {
                            Ok(written) => written != failing,
                            Err(_) => false,
                        }
                    }
                };
                if !ok {
                    return Err(format!("{name}: unexpected response"));
                }
                out.push(t0.elapsed().as_secs_f64() * 1000.0);
            }
            Ok::<Vec<f64>, String>(out)
        });
    }
    let mut all = Vec::with_capacity(samples);
    while let Some(r) = set.join_next().await {
        all.extend(r.map_err(|e| e.to_string())??);
    }
    Ok(all)
}

/// Measures this machine's own round trip for one configuration: the same
/// requests against `probe`, which answers after exactly [`PROBE_MS`];
/// what the client sees beyond [`PROBE_MS`] is the local HTTP round trip,
/// both ends' encoding and decoding, and the server's wake-up lateness.
async fn calibrate(
    probe: &BenchClient,
    table: &str,
    name: &'static str,
    items: usize,
    fail: bool,
    counter: Arc<std::sync::atomic::AtomicU64>,
) -> Result<Calibration, ScenarioError> {
    let v = sample(probe, table, name, items, fail, PROBE_SAMPLES, counter).await?;
    let p = percentiles(v);
    Ok(Calibration {
        operation: name.to_string(),
        probe_ms: PROBE_MS,
        samples: PROBE_SAMPLES as u64,
        local_p50_ms: (p.p50_ms - PROBE_MS).max(0.0),
        local_p99_ms: (p.p99_ms - PROBE_MS).max(0.0),
        modelled_p99_ms: None,
    })
}

/// Seed 003: 4,000 samples of each write configuration. With the embedded
/// servers and `--latency-model aws`, each configuration's local round
/// trip is measured first and taken off its modelled service times, so
/// that what the client observes is comparable with what seed 003's
/// client observed.
pub async fn latency(ctx: &Ctx, model_name: &str) -> Result<Scenario<Latency>, ScenarioError> {
    use dynaburst_server::latency::*;
    let samples = ctx.n(4_000, 200) as usize;
    let calibrating = !ctx.external && model_name == "aws";
    let probe = if calibrating {
        let server = Embedded::start(false, LatencyModel::new(false, PROBE_MS, ctx.seed ^ 3), ctx.seed ^ 3)
            .map_err(|source| BenchError::Start { what: "the calibration server", source })?;
        let c = client(ctx, &server.url).await;
        let table = unique("calibrate", ctx.seed);
        create_table(&c, &table, &[("id", ScalarType::S)], None).await?;
        Some((server, c, table))
    } else {
        None
    };
    let configs: [(&str, usize, bool, Quantiles); 6] = [
        ("PutItem", 1, false, SEED_003_PUT_ITEM),
        ("BatchWrite - 5 items", 5, false, SEED_003_BATCH_WRITE_5),
        ("BatchWrite - 25 items", 25, false, SEED_003_BATCH_WRITE_25),
        ("TransactWrite - 5 items", 5, false, SEED_003_TRANSACT_WRITE_5),
        ("TransactWrite - 25 items", 25, false, SEED_003_TRANSACT_WRITE_25),
        ("TransactWrite - 5 items w/ failure", 5, true, SEED_003_TRANSACT_WRITE_5_FAILURE),
    ];
    let mut rows = Vec::new();
    let mut calibration = Vec::new();
    let counter = Arc::new(std::sync::atomic::AtomicU64::new(0));
    for (i, (name, items, fail, seed)) in configs.into_iter().enumerate() {
        // With calibration, a server of this configuration's own, its
        // service times less the round trip just measured.
        let own = match &probe {
            Some((_, probe_client, probe_table)) => {
                (ctx.say)(format!("latency: {name}, measuring this machine's round trip"));
                let mut cal = calibrate(probe_client, probe_table, name, items, fail, counter.clone()).await?;
                let draws = ctx.seed ^ (5 + i as u64);
                // The server's service times at the tail, before the local
                // round trip comes off: the same draws from the same model.
                let same = LatencyModel::new(true, ctx.rtt_ms, draws);
                let op = server_operation(name);
                let drawn = (0..samples).map(|_| same.delay(op, items, fail).as_secs_f64() * 1000.0).collect();
                cal.modelled_p99_ms = Some(percentiles(drawn).p99_ms);
                let model = LatencyModel::new(true, ctx.rtt_ms, draws).minus_local_round_trip(cal.local_p50_ms);
                calibration.push(cal);
                let server = Embedded::start(false, model, draws)
                    .map_err(|source| BenchError::Start { what: "the calibrated server", source })?;
                Some(server)
            }
            None => None,
        };
        let url = own.as_ref().map(|e| e.url.clone()).unwrap_or_else(|| ctx.unlimited_url.clone());
        let c = client(ctx, &url).await;
        let table = unique("latency", ctx.seed);
        create_table(&c, &table, &[("id", ScalarType::S)], None).await?;
        (ctx.say)(format!("latency: {name}, {samples} samples"));
        let all = sample(&c, &table, name, items, fail, samples, counter.clone()).await?;
        if own.is_none() {
            let _ = c.delete_table(&table).await;
        }
        rows.push(LatencyRow {
            operation: name.to_string(),
            samples: samples as u64,
            ours: percentiles(all),
            seed: Some(Percentiles {
                min_ms: seed.min,
                p50_ms: seed.p50,
                p90_ms: seed.p90,
                p95_ms: seed.p95,
                p99_ms: seed.p99,
                max_ms: seed.max,
            }),
        });
    }
    Ok(Scenario {
        seed_id: "003".into(),
        title: format!("Latency of each write API ({samples} samples each)"),
        measured: true,
        explanation: if model_name == "aws" && !calibration.is_empty() {
            "Measured over HTTP with the server answering after service times fitted to seed 003's percentiles (--latency-model aws), less this machine's own round trip for the same requests, measured just before (the calibration table below), so that the client observes what seed 003's client (Lambda, in the same region) observed."
        } else if model_name == "aws" {
            "Measured over HTTP against the given endpoint; seed 003 measured from Lambda in the same region."
        } else {
            "Measured over HTTP on one machine with no modelled service time (--latency-model none): ours is the local round trip only, while seed 003's figures are DynamoDB's service time plus an in-region network round trip from Lambda. Run with --latency-model aws to compare like with like."
        }
        .into(),
        duration_s: None,
        figures: Latency { rows, calibration },
    })
}

/// The DynamoDB operation a configuration's requests are (the latency
/// model's key).
fn server_operation(name: &str) -> &'static str {
    if name.starts_with("PutItem") {
        "PutItem"
    } else if name.starts_with("BatchWrite") {
        "BatchWriteItem"
    } else {
        "TransactWriteItems"
    }
}
