//! Seed 003: latency percentiles of each write API.

use super::*;

/// Seed 003: 4,000 samples of each write configuration.
pub async fn latency(ctx: &Ctx, model_name: &str) -> Result<Scenario<Latency>, ScenarioError> {
    use dynaburst_server::latency::*;
    let samples = ctx.n(4_000, 200) as usize;
    let c = client(ctx, &ctx.unlimited_url).await;
    let table = unique("latency", ctx.seed);
    create_table(&c, &table, &[("id", ScalarType::S)], None).await?;
    let configs: [(&str, usize, bool, Quantiles); 6] = [
        ("PutItem", 1, false, SEED_003_PUT_ITEM),
        ("BatchWrite - 5 items", 5, false, SEED_003_BATCH_WRITE_5),
        ("BatchWrite - 25 items", 25, false, SEED_003_BATCH_WRITE_25),
        ("TransactWrite - 5 items", 5, false, SEED_003_TRANSACT_WRITE_5),
        ("TransactWrite - 25 items", 25, false, SEED_003_TRANSACT_WRITE_25),
        ("TransactWrite - 5 items w/ failure", 5, true, SEED_003_TRANSACT_WRITE_5_FAILURE),
    ];
    let mut rows = Vec::new();
    let lanes = 8usize;
    for (name, items, fail, seed) in configs {
        (ctx.say)(format!("latency: {name}, {samples} samples"));
        let counter = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let mut set = JoinSet::new();
        for lane in 0..lanes {
            let (c, t, counter) = (c.clone(), table.clone(), counter.clone());
            let mine = samples / lanes + usize::from(lane < samples % lanes);
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
                            let puts: Vec<Item> =
                                (0..items as u64 - u64::from(failing)).map(|k| item(base + k)).collect();
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
        explanation: if model_name == "aws" {
            "Measured over HTTP with the server answering after service times fitted to seed 003's percentiles (--latency-model aws), so ours should match the seed's within sampling noise plus this machine's own few tenths of a millisecond; seed 003 measured from Lambda in the same region."
        } else {
            "Measured over HTTP on one machine with no modelled service time (--latency-model none): ours is the local round trip only, while seed 003's figures are DynamoDB's service time plus an in-region network round trip from Lambda. Run with --latency-model aws to compare like with like."
        }
        .into(),
        duration_s: None,
        figures: Latency { rows },
    })
}
