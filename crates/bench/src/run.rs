//! Runs the chosen scenarios and writes results.json, report.md, the
//! charts and the timelines.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use dynaburst_server::latency::LatencyModel;

use crate::embedded::Embedded;
use crate::error::BenchError;
use crate::results::{Failure, Results, Scenario, Scenarios, RESULTS_VERSION};
use crate::scenarios::{self, Ctx};

/// Every scenario, in the order `all` runs them.
pub const SCENARIOS: &[&str] =
    &["write-apis", "doc-size", "doc-size-mongodb", "parallel-patterns", "latency", "partition-keys", "index-trap"];

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
    /// doc-size with a target: document counts for the client-memory check
    /// (empty: 100,000 and 1,000,000 scaled as every count is, at least
    /// 10,000 and 100,000).
    pub memory_docs: Vec<u64>,
}

/// What a run produced.
pub struct BenchOutput {
    pub results: Results,
    pub files: Vec<PathBuf>,
    pub failures: Vec<(String, BenchError)>,
}

/// Runs the scenarios; `say` receives progress lines. A scenario that
/// fails is reported and the others still run.
pub fn run(opts: &BenchOptions, say: Arc<dyn Fn(String) + Send + Sync>) -> Result<BenchOutput, BenchError> {
    std::fs::create_dir_all(&opts.out).map_err(BenchError::io("create", &opts.out))?;
    let aws = opts.latency_model == "aws";
    let started = Instant::now();
    let started_ms =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0);
    // Two embedded servers: capacity model on (the default, for what is
    // about DynamoDB's behaviour) and off (for what is about speed).
    let (servers, modelled_url, unlimited_url) = match &opts.endpoint_url {
        Some(url) => (Vec::new(), url.clone(), url.clone()),
        None => {
            let start = |source| BenchError::Start { what: "the embedded server", source };
            let on = Embedded::start(true, LatencyModel::new(aws, opts.rtt_ms, opts.seed), opts.seed).map_err(start)?;
            let off = Embedded::start(false, LatencyModel::new(aws, opts.rtt_ms, opts.seed ^ 1), opts.seed ^ 1)
                .map_err(start)?;
            let (a, b) = (on.url.clone(), off.url.clone());
            (vec![on, off], a, b)
        }
    };
    let ctx = Ctx {
        modelled_engine: servers.first().map(|s| s.engine.clone()),
        modelled_url,
        unlimited_url,
        external: opts.endpoint_url.is_some(),
        real_time: opts.real_time,
        scale: opts.scale,
        seed: opts.seed,
        rtt_ms: opts.rtt_ms,
        out_dir: opts.out.clone(),
        say: say.clone(),
        target: opts.target.clone(),
        memory_docs: opts.memory_docs.clone(),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|source| BenchError::Start { what: "the async runtime", source })?;
    let mut done = Scenarios::default();
    let mut failures = Vec::new();
    for name in &opts.scenarios {
        let t0 = Instant::now();
        let result = runtime.block_on(async {
            match name.as_str() {
                "write-apis" => finish(scenarios::write_apis(&ctx).await, t0, &mut done.write_apis),
                "doc-size" => finish(scenarios::doc_size(&ctx).await, t0, &mut done.doc_size),
                "doc-size-mongodb" => finish(scenarios::doc_size_mongodb(&ctx).await, t0, &mut done.doc_size_mongodb),
                "parallel-patterns" => {
                    finish(scenarios::parallel_patterns(&ctx).await, t0, &mut done.parallel_patterns)
                }
                "latency" => finish(scenarios::latency(&ctx, &opts.latency_model).await, t0, &mut done.latency),
                "partition-keys" => finish(scenarios::partition_keys(&ctx).await, t0, &mut done.partition_keys),
                "index-trap" => finish(scenarios::index_trap(&ctx).await, t0, &mut done.index_trap),
                other => Err(BenchError::UnknownScenario { name: other.to_string(), choices: SCENARIOS.join(", ") }),
            }
        });
        match result {
            Ok(()) => say(format!("{name}: done in {:.1} s", t0.elapsed().as_secs_f64())),
            Err(e) => {
                say(format!("{name}: FAILED: {e}"));
                failures.push((name.clone(), e));
            }
        }
    }
    let results = Results {
        version: RESULTS_VERSION,
        command: opts.command.clone(),
        started_at_unix_ms: started_ms,
        duration_s: started.elapsed().as_secs_f64(),
        seed: opts.seed,
        endpoint: opts.endpoint_url.clone().unwrap_or_else(|| {
            "embedded dynaburst serve (capacity model on; off for doc-size, latency and the lookup)".to_string()
        }),
        target: opts.target.as_deref().map(dynaburst_mongo::redact),
        latency_model: opts.latency_model.clone(),
        rtt_ms: opts.rtt_ms,
        scale: opts.scale,
        real_time: opts.real_time,
        failures: failures.iter().map(|(n, e)| Failure { scenario: n.clone(), error: e.to_string() }).collect(),
        scenarios: done,
    };
    let files = write_outputs(&results, &opts.out)?;
    Ok(BenchOutput { results, files, failures })
}

/// Stamps a finished scenario with its wall time and keeps it.
fn finish<F>(
    result: Result<Scenario<F>, BenchError>,
    t0: Instant,
    slot: &mut Option<Scenario<F>>,
) -> Result<(), BenchError> {
    let mut s = result?;
    s.duration_s = Some(t0.elapsed().as_secs_f64());
    *slot = Some(s);
    Ok(())
}

/// Writes results.json, report.md and the charts of `results` into `dir`
/// (which must exist), and returns their paths.
pub fn write_outputs(results: &Results, dir: &Path) -> Result<Vec<PathBuf>, BenchError> {
    let json_path = dir.join("results.json");
    let json = serde_json::to_string_pretty(results).map_err(BenchError::Json)? + "\n";
    std::fs::write(&json_path, json).map_err(BenchError::io("write", &json_path))?;
    let mut files = vec![json_path];
    files.extend(render(results, dir)?);
    Ok(files)
}

/// Writes report.md, report.html and the charts of `results` into `dir`
/// (which must exist), and returns their paths: a results.json rendered
/// again.
pub fn render(results: &Results, dir: &Path) -> Result<Vec<PathBuf>, BenchError> {
    let md = dir.join("report.md");
    std::fs::write(&md, crate::report::render_report(results)).map_err(BenchError::io("write", &md))?;
    let mut files = vec![md];
    let charts = crate::charts::write_charts(results, dir)?;
    // report.html: the same charts in one file, readable offline.
    let mut inline = Vec::new();
    for path in charts.iter().filter(|p| p.extension().is_some_and(|e| e == "svg")) {
        let svg = std::fs::read_to_string(path).map_err(BenchError::io("read", path))?;
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        inline.push((name, svg));
    }
    let html = dir.join("report.html");
    std::fs::write(&html, crate::report::render_html(results, &inline)).map_err(BenchError::io("write", &html))?;
    files.push(html);
    files.extend(charts);
    Ok(files)
}
