//! Seed 000: the write APIs side by side.

use super::*;

/// Seed 000: 10,000 people by four write APIs, and BatchExecuteStatement.
/// Against the embedded servers the client runs in a child process
/// (`dynaburst bench write-apis --endpoint-url`), so that its peak memory
/// is its own, as seed 000's was; against an external endpoint it runs
/// here.
pub async fn write_apis(ctx: &Ctx) -> Result<Scenario<WriteApis>, ScenarioError> {
    if ctx.external {
        write_apis_here(ctx).await
    } else {
        write_apis_in_child(ctx).await
    }
}

/// Runs `write-apis` as a child `dynaburst bench` against this process's
/// modelled server and returns the child's scenario: the client's peak
/// memory without the server's.
async fn write_apis_in_child(ctx: &Ctx) -> Result<Scenario<WriteApis>, ScenarioError> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the dynaburst executable: {e}"))?;
    let out_dir = ctx.out_dir.join(".write-apis-client");
    (ctx.say)("write-apis: the client in a child process (dynaburst bench write-apis --endpoint-url)".to_string());
    let status = tokio::process::Command::new(&exe)
        .args(["bench", "write-apis", "--endpoint-url", &ctx.modelled_url, "--out"])
        .arg(&out_dir)
        .arg("--seed")
        .arg(ctx.seed.to_string())
        .arg("--items")
        .arg(ctx.n(10_000, 100).to_string())
        .stdout(std::process::Stdio::null())
        .status()
        .await
        .map_err(|e| format!("cannot run {} bench write-apis: {e}", exe.display()))?;
    let path = out_dir.join("results.json");
    let text = std::fs::read_to_string(&path);
    let _ = std::fs::remove_dir_all(&out_dir);
    if !status.success() {
        return Err(format!("the write-apis client ({} bench write-apis) failed: {status}", exe.display()).into());
    }
    let text = text.map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let results = crate::results::Results::from_json(&text).map_err(|e| format!("bad client results: {e}"))?;
    results.scenarios.write_apis.ok_or_else(|| "the write-apis client wrote no write-apis results".into())
}

async fn write_apis_here(ctx: &Ctx) -> Result<Scenario<WriteApis>, ScenarioError> {
    let count = ctx.n(10_000, 100);
    let c = client(ctx, &ctx.modelled_url).await;
    let table = unique("people", ctx.seed);
    create_table(&c, &table, &[("id", ScalarType::S)], None).await?;
    let items: Vec<BenchItem> =
        dataset_items(Dataset::People, count, 0, ctx.seed)?.iter().map(BenchItem::from).collect();
    // (API, the seed's wall seconds, the seed's peak memory in MB).
    let published = [
        ("PutItem, serial", Some(293.38), Some(151.0)),
        ("BatchWriteItem of 25, serial", Some(14.45), Some(156.0)),
        ("PutItem, 25 concurrent", Some(17.52), Some(206.0)),
        ("TransactWriteItems of 25, serial", Some(24.78), Some(152.0)),
        // Seed 000 did not run PartiQL: no published figures.
        ("BatchExecuteStatement of 25 INSERTs, serial", None, None),
    ];
    let mut rows = Vec::new();
    for (api, seed_wall, seed_peak_mb) in published {
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
            seed_peak_mb,
        });
    }
    Ok(Scenario {
        seed_id: "000".into(),
        title: format!("Write APIs: {count} people into a fresh on-demand table"),
        measured: true,
        explanation: "Measured over HTTP against the embedded server with the AWS SDK for Rust. With --latency-model aws the server answers after seed 003's in-region service times, so each call costs what it costs inside AWS; seed 000 ran the JS SDK from a laptop in Japan, so each of its round trips also carried the distance to ap-northeast-1 (add it with --rtt MS): its serial PutItem paid that 10,000 times, its batches 400 times. CPU time is the client's thread. Peak memory is the client's own, as seed 000's was its Node process's: the peak resident memory (VmHWM, reset before each API) of a client process without the server in it (with embedded servers, a `dynaburst bench write-apis --endpoint-url` child of the bench process that serves).".into(),
        duration_s: None,
        figures: WriteApis { rows, client_process: true },
    })
}
