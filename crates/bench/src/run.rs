//! Runs the chosen scenarios and writes results.json, report.md, the
//! charts and the timelines.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use dynaburst_server::latency::LatencyModel;
use serde_json::{json, Map, Value};

use crate::embedded::Embedded;
use crate::scenarios::{self, Ctx};

/// Every scenario, in the order `all` runs them.
pub const SCENARIOS: &[&str] = &["write-apis", "doc-size", "parallel-patterns", "latency", "partition-keys"];

/// What `dynaburst bench` was asked for.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    pub scenarios: Vec<String>,
    /// None starts embedded servers.
    pub endpoint_url: Option<String>,
    /// "none" or "aws".
    pub latency_model: String,
    pub rtt_ms: f64,
    pub real_time: bool,
    pub scale: f64,
    pub seed: u64,
    pub out: PathBuf,
    pub command: String,
    /// doc-size into MongoDB / DocumentDB at this URI.
    pub target: Option<String>,
    /// doc-size with a target: document counts for the client-memory check.
    pub memory_docs: Vec<u64>,
}

/// What a run produced.
pub struct BenchOutput {
    pub results: Value,
    pub files: Vec<PathBuf>,
    pub failures: Vec<(String, String)>,
}

/// Runs the scenarios; `say` receives progress lines. A scenario that
/// fails is reported and the others still run.
pub fn run(opts: &BenchOptions, say: Arc<dyn Fn(String) + Send + Sync>) -> Result<BenchOutput, String> {
    std::fs::create_dir_all(&opts.out).map_err(|e| format!("cannot create {}: {e}", opts.out.display()))?;
    let aws = opts.latency_model == "aws";
    let started = Instant::now();
    let started_ms =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0);
    // Two embedded servers: capacity model on (the default, for what is
    // about DynamoDB's behaviour) and off (for what is about speed).
    let (_servers, modelled_url, unlimited_url) = match &opts.endpoint_url {
        Some(url) => (Vec::new(), url.clone(), url.clone()),
        None => {
            let on = Embedded::start(true, LatencyModel::new(aws, opts.rtt_ms, opts.seed), opts.seed)
                .map_err(|e| format!("cannot start the embedded server: {e}"))?;
            let off = Embedded::start(false, LatencyModel::new(aws, opts.rtt_ms, opts.seed ^ 1), opts.seed ^ 1)
                .map_err(|e| format!("cannot start the embedded server: {e}"))?;
            let (a, b) = (on.url.clone(), off.url.clone());
            (vec![on, off], a, b)
        }
    };
    let ctx = Ctx {
        modelled_url,
        unlimited_url,
        external: opts.endpoint_url.is_some(),
        real_time: opts.real_time,
        scale: opts.scale,
        seed: opts.seed,
        out_dir: opts.out.clone(),
        say: say.clone(),
        target: opts.target.clone(),
        memory_docs: opts.memory_docs.clone(),
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    let mut scenarios_out = Map::new();
    let mut failures = Vec::new();
    for name in &opts.scenarios {
        let t0 = Instant::now();
        let result = runtime.block_on(async {
            match name.as_str() {
                "write-apis" => scenarios::write_apis(&ctx).await,
                "doc-size" => scenarios::doc_size(&ctx).await,
                "parallel-patterns" => scenarios::parallel_patterns(&ctx).await,
                "latency" => scenarios::latency(&ctx, &opts.latency_model).await,
                "partition-keys" => scenarios::partition_keys(&ctx).await,
                other => Err(format!("unknown scenario {other}: choose from {}", SCENARIOS.join(", "))),
            }
        });
        match result {
            Ok(mut v) => {
                v["duration_s"] = json!(t0.elapsed().as_secs_f64());
                say(format!("{name}: done in {:.1} s", t0.elapsed().as_secs_f64()));
                scenarios_out.insert(name.clone(), v);
            }
            Err(e) => {
                say(format!("{name}: FAILED: {e}"));
                failures.push((name.clone(), e));
            }
        }
    }
    let results = json!({
        "version": 1,
        "command": opts.command,
        "started_at_unix_ms": started_ms,
        "duration_s": started.elapsed().as_secs_f64(),
        "seed": opts.seed,
        "endpoint": opts.endpoint_url.clone().unwrap_or_else(|| "embedded dynaburst serve (capacity model on; off for doc-size, latency and the lookup)".to_string()),
        "target": opts.target.as_deref().map(dynaburst_mongo::redact),
        "latency_model": opts.latency_model,
        "rtt_ms": opts.rtt_ms,
        "scale": opts.scale,
        "real_time": opts.real_time,
        "failures": failures.iter().map(|(n, e)| json!({"scenario": n, "error": e})).collect::<Vec<_>>(),
        "scenarios": Value::Object(scenarios_out),
    });
    let mut files = Vec::new();
    let write =
        |p: &Path, text: &str| std::fs::write(p, text).map_err(|e| format!("cannot write {}: {e}", p.display()));
    let json_path = opts.out.join("results.json");
    write(&json_path, &(serde_json::to_string_pretty(&results).map_err(|e| e.to_string())? + "\n"))?;
    files.push(json_path);
    let md = opts.out.join("report.md");
    write(&md, &crate::report::render_report(&results))?;
    files.push(md);
    files.extend(crate::charts::write_charts(&results, &opts.out).map_err(|e| format!("charts: {e:?}"))?);
    Ok(BenchOutput { results, files, failures })
}
