//! Seed 001: documents by size and writer count (DynamoDB, or a MongoDB-compatible database with `--target`).

use super::*;

fn seed_001(fields: usize, writers: usize) -> Option<SeedDocSize> {
    // Seed 001's table: (fields, processes) -> docs/ms, MB/s.
    let table: &[(usize, usize, f64, f64)] = &[
        (1, 1, 36.0, 1.44),
        (10, 1, 24.2, 7.83),
        (100, 1, 5.23, 17.9),
        (1, 2, 9.09, 30.9),
        (10, 4, 14.0, 47.6),
        (100, 8, 23.4, 79.5),
        (100, 16, 28.9, 98.2),
    ];
    table
        .iter()
        .find(|(f, w, _, _)| *f == fields && *w == writers)
        .map(|&(_, _, docs_per_ms, mb_per_s)| SeedDocSize { docs_per_ms, mb_per_s })
}

/// Seed 001 like for like: doc-size into `--target`, or else into a
/// FerretDB that this scenario starts and stops itself.
pub async fn doc_size_mongodb(ctx: &Ctx) -> Result<Scenario<DocSize>, ScenarioError> {
    if let Some(uri) = &ctx.target {
        return doc_size_mongo(ctx, uri).await;
    }
    (ctx.say)("doc-size-mongodb: starting FerretDB".to_string());
    let server = crate::ferretdb::FerretDb::start(&ctx.out_dir).await?;
    let result = doc_size_mongo(ctx, &server.uri).await;
    server.stop().await;
    result
}

/// Seed 001's sizes and writer counts into DynamoDB: documents of 1, 10
/// and 100 fields by 1, 2, 4 and 8 writers, loaded with dynaburst load's
/// pipeline (a writer is a request in flight). Seed 001 measured DocumentDB,
/// so these rows carry none of its figures.
pub async fn doc_size(ctx: &Ctx) -> Result<Scenario<DocSize>, ScenarioError> {
    if let Some(uri) = &ctx.target {
        return doc_size_mongo(ctx, uri).await;
    }
    // 2,500 documents per writer: enough for a steady rate (each writer is
    // one batch of 25 in flight, 100 round trips), and short enough that
    // `bench all` keeps within its time with seed 001's comparison proper
    // (doc-size-mongodb) beside it.
    let per_writer = ctx.n(2_500, 200);
    let mut rows = Vec::new();
    for fields in [1usize, 10, 100] {
        for writers in [1usize, 2, 4, 8] {
            let docs = per_writer * writers as u64;
            (ctx.say)(format!("doc-size: {docs} documents of {fields} fields, {writers} writers"));
            let path = ctx.out_dir.join(format!(".kv-docs-{fields}.jsonl"));
            let mut f = std::io::BufWriter::new(std::fs::File::create(&path).map_err(|e| e.to_string())?);
            generate(Dataset::KvDocs, docs, fields, ctx.seed, &mut f).map_err(|e| e.to_string())?;
            drop(f);
            let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
            let table = unique("docs", ctx.seed);
            let c = client(ctx, &ctx.unlimited_url).await;
            create_table(&c, &table, &[("id", ScalarType::S)], None).await?;
            // The client is `dynaburst load` itself, in its own process, so
            // its peak memory is the client's alone (seed 001's concern).
            let args = ["--table".to_string(), table.clone(), "--endpoint-url".to_string(), ctx.unlimited_url.clone()];
            let report = load_in_child(ctx, &args, &path, &table, writers).await?;
            let _ = std::fs::remove_file(&path);
            let _ = c.delete_table(&table).await;
            let wall = report.duration_s;
            let mut row = doc_size_row(fields, writers, docs, bytes, wall, report.peak_memory_bytes);
            row.seed = None;
            rows.push(row);
        }
    }
    Ok(Scenario {
        seed_id: "001".into(),
        title: "Document size and writer count (DynamoDB target)".into(),
        measured: true,
        explanation: "Seed 001's document sizes and writer counts, loaded into DynamoDB instead of DocumentDB: BatchWriteItem with dynaburst load's pipeline into the embedded server with the capacity model off, so with the aws latency model (the default) each writer is one batch of 25 in flight for a modelled BatchWriteItem round trip. It measures the loader against a DynamoDB-like service, not DocumentDB, so no seed 001 figure stands beside it: seed 001's comparison is the next section's, against a MongoDB-compatible database. Peak memory is the loader process's own (VmHWM).".into(),
        duration_s: None,
        figures: DocSize { rows, memory: Vec::new(), target: None, server: None },
    })
}

/// One doc-size row: `docs` documents of `fields` fields (`bytes` of
/// input) by `writers` writers in `wall` seconds.
fn doc_size_row(fields: usize, writers: usize, docs: u64, bytes: u64, wall: f64, peak: Option<u64>) -> DocSizeRow {
    DocSizeRow {
        fields: fields as u64,
        writers: writers as u64,
        docs,
        bytes,
        wall_s: wall,
        docs_per_ms: docs as f64 / (wall * 1000.0).max(1e-9),
        bytes_per_s: bytes as f64 / wall.max(1e-9),
        peak_memory_bytes: peak,
        seed: seed_001(fields, writers),
    }
}

/// Documents per insert command in the MongoDB variant (seed 001's
/// insert_many batches).
pub const MONGO_BATCH: usize = 1000;

/// Seed 001 against MongoDB / DocumentDB itself: documents of 1, 10 and 100
/// string fields by 1, 2, 4, 8 and 16 writers, each cell one `dynaburst
/// load --target` in a child process (so its peak memory is the client's
/// own), then the client's peak memory at `--memory-docs` documents, which
/// must not grow with their number (seed 001's client passed 400 GB).
async fn doc_size_mongo(ctx: &Ctx, uri: &str) -> Result<Scenario<DocSize>, ScenarioError> {
    let shown = dynaburst_mongo::redact(uri);
    let database = dynaburst_mongo::database_name(uri, None);
    let (_, server) = dynaburst_mongo::connect(uri, &database).await.map_err(|e| e.to_string())?;
    // 2,500 documents per writer (seed 001 used 50,000): at 16 writers
    // 40,000 documents a cell, enough for a steady rate on this machine.
    let per_writer = ctx.n(2_500, 200);
    let mut rows = Vec::new();
    let cell = |fields: usize, writers: usize, docs: u64| {
        let uri = uri.to_string();
        let database = database.clone();
        async move {
            let path = ctx.out_dir.join(format!(".kv-docs-{fields}-{docs}.jsonl"));
            let mut f = std::io::BufWriter::new(std::fs::File::create(&path).map_err(|e| e.to_string())?);
            generate(Dataset::KvDocs, docs, fields, ctx.seed, &mut f).map_err(|e| e.to_string())?;
            drop(f);
            let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
            let collection = unique("docs", ctx.seed);
            let args = vec![
                "--target".to_string(),
                uri.clone(),
                "--collection".to_string(),
                collection.clone(),
                "--batch-size".to_string(),
                MONGO_BATCH.to_string(),
            ];
            let report = load_in_child(ctx, &args, &path, &collection, writers).await;
            let _ = std::fs::remove_file(&path);
            let _ = dynaburst_mongo::drop_collection(&uri, &database, &collection).await;
            let report = report?;
            let wall = report.duration_s;
            let written = report.records.written;
            if written != docs {
                return Err(
                    format!("{docs} documents of {fields} fields by {writers} writers: {written} written").into()
                );
            }
            Ok::<DocSizeRow, ScenarioError>(doc_size_row(fields, writers, docs, bytes, wall, report.peak_memory_bytes))
        }
    };
    for fields in [1usize, 10, 100] {
        for writers in [1usize, 2, 4, 8, 16] {
            let docs = per_writer * writers as u64;
            (ctx.say)(format!("doc-size: {docs} documents of {fields} fields, {writers} writers, into {shown}"));
            rows.push(cell(fields, writers, docs).await?);
        }
    }
    let mut memory = Vec::new();
    let memory_docs = if ctx.memory_docs.is_empty() {
        vec![ctx.n(100_000, 10_000), ctx.n(1_000_000, 100_000)]
    } else {
        ctx.memory_docs.clone()
    };
    for docs in memory_docs {
        (ctx.say)(format!("doc-size: client memory, {docs} documents of 1 field, 4 writers"));
        let row = cell(1, 4, docs).await?;
        memory.push(MemoryRow {
            docs,
            fields: 1,
            writers: 4,
            wall_s: row.wall_s,
            docs_per_ms: row.docs_per_ms,
            peak_memory_bytes: row.peak_memory_bytes,
        });
    }
    Ok(Scenario {
        seed_id: "001".into(),
        title: format!("Document size and writer count ({})", server.product),
        measured: true,
        explanation: format!("Seed 001 measured DocumentDB (db.r5.4xlarge) insert_many from a 64-core client, 50,000 documents per process; ours is dynaburst load --target into {} with {MONGO_BATCH} documents per insert and each writer one command in flight, client and server on this machine. Peak memory is the loader process's own (VmHWM); seed 001's client passed 400 GB at 3.2 million documents.", server.product),
        duration_s: None,
        figures: DocSize { rows, memory, target: Some(shown), server: Some(server.product) },
    })
}

/// Runs `dynaburst load` as a child process (this same executable) with
/// `writers` requests in flight and the target given by `target_args`,
/// and returns its report.
async fn load_in_child(
    ctx: &Ctx,
    target_args: &[String],
    path: &Path,
    name: &str,
    writers: usize,
) -> Result<LoadReport, ScenarioError> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the dynaburst executable: {e}"))?;
    let report = ctx.out_dir.join(format!(".{name}.report.json"));
    let checkpoint = ctx.out_dir.join(format!(".{name}.checkpoint"));
    let out = tokio::process::Command::new(&exe)
        .arg("load")
        .arg(path)
        .args(target_args)
        .args(["--quiet", "--order", "as-is", "--concurrency"])
        .arg(writers.to_string())
        .arg("--seed")
        .arg(ctx.seed.to_string())
        .arg("--report")
        .arg(&report)
        .arg("--checkpoint")
        .arg(&checkpoint)
        .output()
        .await
        .map_err(|e| format!("cannot run {} load: {e}", exe.display()))?;
    let _ = std::fs::remove_file(&checkpoint);
    if !out.status.success() {
        return Err(BenchError::ChildLoad {
            target: name.to_string(),
            message: String::from_utf8_lossy(&out.stderr).into_owned(),
        });
    }
    let text = std::fs::read_to_string(&report).map_err(|e| format!("cannot read {}: {e}", report.display()))?;
    let _ = std::fs::remove_file(&report);
    let value: Value = serde_json::from_str(&text).map_err(|e| format!("bad load report: {e}"))?;
    Report::from_json(&value).map(|r| r.load).map_err(|e| format!("bad load report: {e}").into())
}
