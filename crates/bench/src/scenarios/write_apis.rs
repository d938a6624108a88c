//! Seed 000: the write APIs side by side.

use super::*;

/// Seed 000: 10,000 people by four write APIs, and BatchExecuteStatement.
pub async fn write_apis(ctx: &Ctx) -> Result<Scenario<WriteApis>, ScenarioError> {
    let count = ctx.n(10_000, 100);
    let c = client(ctx, &ctx.modelled_url).await;
    let table = unique("people", ctx.seed);
    create_table(&c, &table, &[("id", ScalarType::S)], None).await?;
    let items: Vec<BenchItem> =
        dataset_items(Dataset::People, count, 0, ctx.seed)?.iter().map(BenchItem::from).collect();
    let published = [
        ("PutItem, serial", Some(293.38)),
        ("BatchWriteItem of 25, serial", Some(14.45)),
        ("PutItem, 25 concurrent", Some(17.52)),
        ("TransactWriteItems of 25, serial", Some(24.78)),
        // Seed 000 did not run PartiQL: no published time.
        ("BatchExecuteStatement of 25 INSERTs, serial", None),
    ];
    let mut rows = Vec::new();
    for (api, seed_wall) in published {
        (ctx.say)(format!("write-apis: {api}, {count} people"));
        c.purge(&table, 4).await.map_err(|e| e.to_string())?;
        reset_peak_memory();
        let cpu0 = thread_cpu_seconds();
        let requests0 = c.requests_sent();
        let t0 = Instant::now();
        match api {
            "PutItem, serial" => {
                for i in &items {
                    put_one(&c, &table, i.clone()).await?;
                }
            }
            "BatchWriteItem of 25, serial" => {
                for chunk in items.chunks(25) {
                    batch_all(&c, &table, chunk).await?;
                }
            }
            "PutItem, 25 concurrent" => {
                for chunk in items.chunks(25) {
                    let mut set = JoinSet::new();
                    for i in chunk {
                        let (c, t, i) = (c.clone(), table.clone(), i.clone());
                        set.spawn(async move { put_one(&c, &t, i).await });
                    }
                    while let Some(r) = set.join_next().await {
                        r.map_err(|e| e.to_string())??;
                    }
                }
            }
            "TransactWriteItems of 25, serial" => {
                for chunk in items.chunks(25) {
                    transact(&c, &table, chunk).await?;
                }
            }
            _ => {
                for chunk in items.chunks(25) {
                    c.batch_statements(&table, chunk).await.map_err(|e| BenchError::Scenario(e.to_string()))?;
                }
            }
        }
        let wall = t0.elapsed().as_secs_f64();
        let cpu = thread_cpu_seconds() - cpu0;
        let counted = c.count(&table, 4).await.map_err(|e| BenchError::Scenario(e.to_string()))?;
        rows.push(WriteApiRow {
            api: api.to_string(),
            items: count,
            wall_s: wall,
            cpu_s: cpu,
            peak_memory_bytes: dynaburst_loader::peak_memory_bytes(),
            count_after: counted,
            seed_wall_s: seed_wall,
            requests: Some(c.requests_sent() - requests0),
        });
    }
    Ok(Scenario {
        seed_id: "000".into(),
        title: format!("Write APIs: {count} people into a fresh on-demand table"),
        measured: true,
        explanation: "Measured over HTTP against the embedded server with the AWS SDK for Rust. With --latency-model aws the server answers after seed 003's in-region service times, so each call costs what it costs inside AWS; seed 000 ran the JS SDK from a laptop in Japan, so each of its round trips also carried the distance to ap-northeast-1 (add it with --rtt MS): its serial PutItem paid that 10,000 times, its batches 400 times. CPU time is the client's thread; peak memory is the whole process, client and embedded server.".into(),
        duration_s: None,
        figures: WriteApis { rows },
    })
}
