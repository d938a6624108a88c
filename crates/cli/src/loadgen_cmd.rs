//! `dynaburst loadgen`: wiring of the closed-loop load generator
//! (crates/loadgen) to the command line.

use std::time::Duration;

use dynaburst_loadgen::{Config, Mode};

/// Closed-loop load against a DynamoDB-compatible endpoint: N keep-alive
/// connections sending BatchWriteItem or PutItem back to back.
#[derive(clap::Args)]
pub struct LoadgenArgs {
    /// Server to load, http://host:port.
    #[arg(long)]
    endpoint_url: String,
    /// `batch`: BatchWriteItem of --batch-size items; `put`: PutItem.
    #[arg(long, value_enum, default_value_t = LoadMode::Batch)]
    mode: LoadMode,
    /// Concurrent keep-alive connections, one request in flight on each.
    #[arg(long, default_value_t = 16)]
    connections: usize,
    /// Items per BatchWriteItem (1..=25).
    #[arg(long, default_value_t = 25)]
    batch_size: usize,
    /// Size of each item by DynamoDB's rules, key included.
    #[arg(long, default_value_t = 230)]
    item_bytes: usize,
    /// Seconds measured.
    #[arg(long, default_value_t = 10.0)]
    duration: f64,
    /// Seconds of load before the measurement, not counted.
    #[arg(long, default_value_t = 2.0)]
    warmup: f64,
    /// Table to write to; created (PAY_PER_REQUEST, hash key `id` S) if missing.
    #[arg(long, default_value = "loadgen")]
    table: String,
    /// Threads of the generator (1 leaves the other cores to the server).
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Global secondary indexes to create the table with (0..=20): index
    /// by_g<i> on attribute g<i>, which each item carries with a key of its own.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=20))]
    gsis: u8,
    /// Requests a second over all connections, on an open-loop schedule
    /// (latency counts from when each request was due); default: back to
    /// back. For soak runs at a share of the measured maximum.
    #[arg(long)]
    rate: Option<f64>,
    /// With --rate: request k writes the keys of request k mod N, so a long
    /// run keeps overwriting a table of N requests' items.
    #[arg(long, value_name = "N")]
    key_space: Option<u64>,
    /// Print the result as JSON instead of one line.
    #[arg(long)]
    json: bool,
    /// Seed of the run's item keys (default: from the clock; printed in the
    /// result either way). The same seed writes the same keys again.
    #[arg(long)]
    seed: Option<u64>,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum LoadMode {
    Batch,
    Put,
}

fn seconds(name: &str, value: f64) -> anyhow::Result<Duration> {
    Duration::try_from_secs_f64(value)
        .map_err(|_| anyhow::anyhow!("--{name} must be a number of seconds >= 0, not {value}"))
}

/// Runs the load and prints the result. Fails (exit 1) when the run could
/// not be made or any request failed.
pub fn run(args: LoadgenArgs) -> anyhow::Result<()> {
    let mode = match args.mode {
        LoadMode::Batch => Mode::Batch,
        LoadMode::Put => Mode::Put,
    };
    let mut config = Config::new(args.endpoint_url, mode, crate::seed_or_fresh(args.seed));
    config.connections = args.connections;
    config.batch_size = args.batch_size;
    config.item_bytes = args.item_bytes;
    config.duration = seconds("duration", args.duration)?;
    config.warmup = seconds("warmup", args.warmup)?;
    config.table = args.table;
    config.threads = args.threads;
    config.gsis = usize::from(args.gsis);
    config.rate = args.rate;
    config.key_space = args.key_space;
    let result = dynaburst_loadgen::run_blocking(&config)?;
    if args.json {
        println!("{}", serde_json::to_string(&result)?);
    } else {
        println!("{}", result.summary());
    }
    if !result.ok {
        anyhow::bail!(
            "loadgen: {} requests failed, {} measured: the numbers above are not a valid result",
            result.errors,
            result.requests
        );
    }
    Ok(())
}
