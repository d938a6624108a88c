//! `dynaburst bench`: each seed's experiment as one command.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use dynaburst_bench::run::{run, BenchOptions, SCENARIOS};

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum LatencyArg {
    None,
    Aws,
}

#[derive(clap::Args)]
pub struct BenchArgs {
    /// Scenarios to run: write-apis (seed 000), doc-size (001's sizes into
    /// DynamoDB), doc-size-mongodb (001 like for like: into a FerretDB that
    /// bench starts, or --target), parallel-patterns (002), latency (003), partition-keys (004),
    /// index-trap (a low-cardinality GSI key caps a bulk load), or all.
    #[arg(required = true)]
    scenarios: Vec<String>,
    /// Run against this endpoint (AWS, DynamoDB Local, another dynaburst
    /// serve) instead of embedded servers; nothing is modelled then.
    #[arg(long)]
    endpoint_url: Option<String>,
    /// `aws` (the default): the embedded servers answer after service times
    /// fitted to seed 003, so wall times compare with the seeds; `none`
    /// answers at once (measures this machine).
    #[arg(long, value_enum, default_value = "aws")]
    latency_model: LatencyArg,
    /// Milliseconds of network round trip the embedded servers add.
    #[arg(long, default_value_t = 0.0)]
    rtt: f64,
    /// Scale: the number of items write-apis loads (default: seed 000's
    /// 10,000); every scenario's size scales with it.
    #[arg(long, default_value_t = 10_000)]
    items: u64,
    /// Run the throttling parts over HTTP on the wall clock instead of
    /// modelling them in virtual time.
    #[arg(long)]
    real_time: bool,
    /// Seed for datasets, shuffles and latency draws.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where results.json, report.md, the SVG charts and the timelines go.
    #[arg(long, default_value = "bench-out")]
    out: PathBuf,
    /// doc-size only: load MongoDB / DocumentDB at this URI (as
    /// `dynaburst load --target`) instead of DynamoDB: 1, 10 and 100 fields
    /// by 1, 2, 4, 8 and 16 writers, then the client-memory check.
    #[arg(long, value_name = "URI")]
    target: Option<String>,
    /// doc-size with --target: document counts of the client-memory check
    /// (1 field, 4 writers each). Default: 100000,1000000, scaled by
    /// --items as every count is, at least 10000,100000 (a tenfold load
    /// either way, whose peak memory should not grow).
    #[arg(long, value_delimiter = ',')]
    memory_docs: Vec<u64>,
}

pub fn run_cmd(args: BenchArgs) -> anyhow::Result<ExitCode> {
    let mut scenarios = Vec::new();
    for s in &args.scenarios {
        if s == "all" {
            scenarios.extend(SCENARIOS.iter().map(|s| s.to_string()));
        } else if SCENARIOS.contains(&s.as_str()) {
            scenarios.push(s.clone());
        } else {
            crate::usage!("unknown scenario '{s}': choose from {} or all", SCENARIOS.join(", "));
        }
    }
    if args.target.is_some() && scenarios.iter().any(|s| s != "doc-size" && s != "doc-size-mongodb") {
        crate::usage!("--target is for doc-size only (seed 001 measured DocumentDB): run `dynaburst bench doc-size --target URI`, and the other scenarios without it");
    }
    // The password never reaches results.json or report.md.
    let command = std::env::args()
        .map(|a| if a.starts_with("mongodb://") { dynaburst_mongo::redact(&a) } else { a })
        .collect::<Vec<_>>()
        .join(" ");
    let opts = BenchOptions {
        scenarios,
        endpoint_url: args.endpoint_url.clone(),
        latency_model: match args.latency_model {
            LatencyArg::None => "none".into(),
            LatencyArg::Aws => "aws".into(),
        },
        rtt_ms: args.rtt,
        real_time: args.real_time,
        scale: args.items as f64 / 10_000.0,
        seed: args.seed,
        out: args.out.clone(),
        command,
        target: args.target.clone(),
        memory_docs: args.memory_docs.clone(),
    };
    let start = Instant::now();
    eprintln!("dynaburst bench: seed {}, output in {}", args.seed, args.out.display());
    let say: Arc<dyn Fn(String) + Send + Sync> =
        Arc::new(move |line: String| eprintln!("[{:>6.1}s] {line}", start.elapsed().as_secs_f64()));
    let out = run(&opts, say).map_err(|e| anyhow::anyhow!(e))?;
    eprintln!("dynaburst bench: finished in {:.1} s; wrote:", start.elapsed().as_secs_f64());
    for f in &out.files {
        eprintln!("  {}", f.display());
    }
    if !out.failures.is_empty() {
        for (name, e) in &out.failures {
            eprintln!("dynaburst bench: {name} failed: {e}");
        }
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}
