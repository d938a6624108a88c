//! `dynaburst load`, `count` and `purge`: arguments, progress display,
//! summary, report files and exit codes.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;

use crate::{usage, usage_error};
use dynaburst_dynamo::{Billing, Endpoint, KeySchema, LoadOptions, WriteMode};
use dynaburst_input::{detect, parse_type_hints, Compression, Format, InputSpec};
use dynaburst_loader::{Concurrency, Ending, Order, Prices, Snapshot, TargetReport, DEFAULT_WINDOW};
use indicatif::{ProgressBar, ProgressStyle};
use tokio::sync::watch;

/// Exit status: some records were rejected (the rejects file names them).
pub const EXIT_REJECTED: u8 = 2;
/// Exit status: the load stopped before the end; `--resume` continues it.
pub const EXIT_INCOMPLETE: u8 = 3;
/// Exit status: interrupted by SIGINT/SIGTERM (checkpoint written).
pub const EXIT_INTERRUPTED: u8 = 130;

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum FormatArg {
    Csv,
    Jsonl,
    DdbJson,
    Parquet,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum CompressionArg {
    None,
    Gzip,
    Zstd,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ModeArg {
    /// DynamoDB: BatchWriteItem of 25 (the default).
    Batch,
    /// DynamoDB: PutItem each.
    Put,
    /// DynamoDB: TransactWriteItems of --transact-size.
    Transact,
    /// MongoDB: unordered inserts (the default).
    Insert,
    /// MongoDB: replace by _id (or --id-field), inserting when missing.
    Upsert,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum OrderArg {
    AsIs,
    Interleave,
    Shuffle,
}

/// Where the endpoint is; the SDK's usual configuration applies otherwise
/// (credentials chain, AWS_REGION, AWS_PROFILE, AWS_ENDPOINT_URL).
#[derive(clap::Args, Clone)]
pub struct EndpointArgs {
    /// DynamoDB-compatible endpoint, e.g. http://127.0.0.1:8000 (default:
    /// AWS_ENDPOINT_URL, else AWS).
    #[arg(long)]
    endpoint_url: Option<String>,
    /// AWS region (default: the SDK's resolution, else us-east-1).
    #[arg(long)]
    region: Option<String>,
    /// Named profile from ~/.aws/config.
    #[arg(long)]
    profile: Option<String>,
}

impl EndpointArgs {
    /// The endpoint; a URL without `http://` or `https://` is a usage
    /// error that says how to write it.
    pub fn endpoint(&self) -> anyhow::Result<Endpoint> {
        if let Some(url) = &self.endpoint_url {
            let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
            if !matches!(scheme.as_deref(), Some("http" | "https")) {
                usage!(
                    "--endpoint-url {url} needs a scheme: --endpoint-url http://{} (or https:// for TLS)",
                    url.split_once("://").map(|(_, rest)| rest).unwrap_or(url)
                );
            }
        }
        Ok(Endpoint { url: self.endpoint_url.clone(), region: self.region.clone(), profile: self.profile.clone() })
    }
}

#[derive(clap::Args)]
pub struct LoadArgs {
    /// Input file (.csv, .jsonl, .ddb.json; optionally .gz or .zst), or -
    /// for standard input.
    input: String,
    /// Target DynamoDB table.
    #[arg(long, required_unless_present = "target")]
    table: Option<String>,
    #[command(flatten)]
    endpoint: EndpointArgs,
    /// Load into MongoDB, DocumentDB or another MongoDB-compatible
    /// database instead: mongodb://[USER:PASSWORD@]HOST[:PORT][,HOST...]/[DB][?OPTIONS].
    /// The URI goes to the official driver as given (TLS, auth and replica
    /// set options included). DynamoDB is the default target.
    #[arg(long, value_name = "URI", requires = "collection")]
    target: Option<String>,
    /// MongoDB: the collection to load into.
    #[arg(long)]
    collection: Option<String>,
    /// MongoDB: the database (default: the URI's path, else "test").
    #[arg(long)]
    database: Option<String>,
    /// MongoDB --mode upsert: the field to match on instead of _id.
    #[arg(long, value_name = "FIELD")]
    id_field: Option<String>,
    /// MongoDB: documents per insert or update command (kept under the
    /// server's maxWriteBatchSize and message size).
    #[arg(long, default_value_t = dynaburst_mongo::DEFAULT_BATCH_SIZE)]
    batch_size: usize,
    /// Input format (default: from the file name).
    #[arg(long, value_enum)]
    format: Option<FormatArg>,
    /// Input compression (default: from the file name).
    #[arg(long, value_enum)]
    compression: Option<CompressionArg>,
    /// CSV column types, e.g. age:N,active:BOOL,tags:SS (types: S, N, BOOL,
    /// NULL, SS, NS, JSON). Other cells are numbers only when canonical
    /// (so 007 and zip codes stay strings).
    #[arg(long)]
    types: Option<String>,
    /// CSV: load every untyped cell as a string.
    #[arg(long)]
    all_strings: bool,
    /// Create the table when it does not exist (needs --key).
    #[arg(long)]
    create_table: bool,
    /// Key schema for --create-table or --dry-run: NAME:TYPE[,NAME:TYPE].
    #[arg(long)]
    key: Option<String>,
    /// Billing for --create-table: on-demand or provisioned:RCU:WCU.
    #[arg(long, default_value = "on-demand")]
    billing: String,
    /// DynamoDB: batch (BatchWriteItem of 25, the default), put (PutItem
    /// each), or transact (TransactWriteItems of --transact-size,
    /// idempotent retries). MongoDB: insert (the default) or upsert.
    #[arg(long, value_enum)]
    mode: Option<ModeArg>,
    /// Items per TransactWriteItems (1-100).
    #[arg(long, default_value_t = 25)]
    transact_size: usize,
    /// Requests in flight: auto (adapts to throttling) or a number.
    #[arg(long, default_value = "auto")]
    concurrency: String,
    /// Cap on write units per second sent.
    #[arg(long)]
    max_wcu: Option<f64>,
    /// as-is, interleave (spread consecutive writes over partition keys),
    /// or shuffle, within --window records. Default: interleave for
    /// DynamoDB, as-is for MongoDB (which has no partitions to spread).
    #[arg(long, value_enum)]
    order: Option<OrderArg>,
    /// Records held for reordering.
    #[arg(long, default_value_t = DEFAULT_WINDOW)]
    window: usize,
    /// Seed for shuffle and retry jitter (default: from the clock; printed).
    #[arg(long)]
    seed: Option<u64>,
    /// Parse and check every record, estimate units, cost and time; write
    /// nothing.
    #[arg(long)]
    dry_run: bool,
    /// Run the whole load in virtual time through the real pipeline
    /// against the capacity model, writing nothing: predicted duration,
    /// throttling, re-sends, hottest keys and cost (JSON on stdout;
    /// --timeline for the per-second CSV, --chart for an SVG). The table's
    /// design comes from DescribeTable, or from --key and --billing for a
    /// table not yet created.
    #[arg(long, conflicts_with = "dry_run")]
    simulate: bool,
    /// --simulate: the table's warm write throughput (units/s), e.g. one
    /// raised by earlier traffic or pre-warming.
    #[arg(long, value_name = "UNITS", requires = "simulate")]
    warm_write_units: Option<u64>,
    /// --simulate: the modelled round trip of one request, in ms.
    #[arg(long, default_value_t = 10, value_name = "MS")]
    round_trip_ms: u64,
    /// --simulate: write an SVG chart of consumed and throttled units per
    /// second.
    #[arg(long, value_name = "PATH", requires = "simulate")]
    chart: Option<PathBuf>,
    /// Load only the I-th of N byte ranges of the file (1-based), cut at
    /// line boundaries, so N machines can share one file.
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
    /// Where rejected records go (JSON Lines: line, record, error).
    /// Default: INPUT.rejects.jsonl.
    #[arg(long)]
    rejects: Option<PathBuf>,
    /// Checkpoint file. Default: INPUT.dynaburst-checkpoint.
    #[arg(long)]
    checkpoint: Option<PathBuf>,
    /// Continue an interrupted or crashed load from its checkpoint.
    #[arg(long)]
    resume: bool,
    /// Write the report as JSON (schema: README.md, "Load report").
    #[arg(long)]
    report: Option<PathBuf>,
    /// Write one CSV row per second (items, units, throttles, unprocessed,
    /// in flight, p99 latency).
    #[arg(long)]
    timeline: Option<PathBuf>,
    /// No progress display.
    #[arg(long)]
    quiet: bool,
    /// Stop (with a checkpoint) once more than N records were rejected.
    /// Default: stop once 1,000 were, if they are more than 90% of the
    /// records read (a load that rejects nearly everything has the wrong
    /// table, key or types).
    #[arg(long, value_name = "N")]
    max_rejects: Option<u64>,
    /// Give up (with a checkpoint) when nothing is acknowledged this long.
    #[arg(long, default_value_t = 300, value_name = "SECONDS")]
    stall_timeout: u64,
    /// On-demand price, USD per million write request units.
    #[arg(long, default_value_t = dynaburst_loader::PRICE_PER_MILLION_WRU)]
    price_write_request_units: f64,
    /// Provisioned price, USD per WCU-hour.
    #[arg(long, default_value_t = dynaburst_loader::PRICE_PER_WCU_HOUR)]
    price_wcu_hour: f64,
}

fn input_spec(args: &LoadArgs) -> anyhow::Result<InputSpec> {
    let path = if args.input == "-" { None } else { Some(PathBuf::from(&args.input)) };
    let (detected_format, detected_compression) = match &path {
        Some(p) => detect(p),
        None => (None, Compression::None),
    };
    let format = match args.format {
        Some(FormatArg::Csv) => Format::Csv,
        Some(FormatArg::Jsonl) => Format::JsonLines,
        Some(FormatArg::DdbJson) => Format::DynamoDbJson,
        Some(FormatArg::Parquet) => Format::Parquet,
        None => detected_format.ok_or_else(|| {
            usage_error(format!(
                "cannot tell the format of {} from its name: pass --format csv|jsonl|ddb-json|parquet",
                args.input
            ))
        })?,
    };
    let compression = match args.compression {
        Some(CompressionArg::None) => Compression::None,
        Some(CompressionArg::Gzip) => Compression::Gzip,
        Some(CompressionArg::Zstd) => Compression::Zstd,
        None => detected_compression,
    };
    let shard = match &args.shard {
        None => None,
        Some(s) => {
            let (i, n) = s.split_once('/').ok_or_else(|| usage_error("--shard takes I/N, for example 2/4"))?;
            let (i, n): (u64, u64) = (
                i.trim().parse().map_err(|_| usage_error("--shard I is not a number"))?,
                n.trim().parse().map_err(|_| usage_error("--shard N is not a number"))?,
            );
            if n == 0 || i == 0 || i > n {
                usage!("--shard {s}: I must be 1 to N");
            }
            Some((i - 1, n))
        }
    };
    let types = match &args.types {
        Some(t) => parse_type_hints(t).map_err(|e| usage_error(format!("--types: {e}")))?,
        None => Default::default(),
    };
    Ok(InputSpec {
        path,
        format,
        compression,
        types,
        all_strings: args.all_strings,
        shard,
        resume_at: None,
        raw_json: false,
        // Column types are decided on the records the load reads ahead.
        type_window: args.window.max(1),
    })
}

pub(crate) fn human(n: f64) -> String {
    let s = format!("{:.0}", n);
    let (sign, digits) = s.strip_prefix('-').map(|d| ("-", d)).unwrap_or(("", &s));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    format!("{sign}{out}")
}

/// Shows progress until the sender is dropped.
/// `units`: the label of the units a target consumes ("WCU/s"), or empty
/// for a target that has none.
async fn show_progress(mut rx: watch::Receiver<Snapshot>, quiet: bool, units_label: &'static str) {
    if quiet {
        while rx.changed().await.is_ok() {}
        return;
    }
    let terminal = std::io::stderr().is_terminal();
    let bar = terminal.then(|| {
        let b = ProgressBar::new(0);
        // The bar and its percentage are the input read; the message says
        // how many records are written, which is what a user waits for.
        b.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] [{bar:30}] {percent:>3}% of the input, {msg} ETA {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        b
    });
    let mut last_line = std::time::Instant::now();
    let mut last_written = 0u64;
    let mut last_units = 0.0;
    let mut last_throttles = 0u64;
    let mut last_at = Duration::ZERO;
    let mut warned = 0usize;
    let mut noted = 0usize;
    while rx.changed().await.is_ok() {
        let s = rx.borrow_and_update().clone();
        for n in s.notes.iter().skip(noted) {
            match &bar {
                Some(b) => b.println(format!("dynaburst load: {n}")),
                None => eprintln!("dynaburst load: {n}"),
            }
        }
        noted = s.notes.len();
        for w in s.warnings.iter().skip(warned) {
            match &bar {
                Some(b) => b.println(format!("warning: {w}")),
                None => eprintln!("warning: {w}"),
            }
        }
        warned = s.warnings.len();
        let dt = (s.elapsed - last_at).as_secs_f64();
        if dt < 0.9 && bar.is_none() {
            continue;
        }
        let rate = if dt > 0.0 { (s.written - last_written) as f64 / dt } else { 0.0 };
        let units = if dt > 0.0 { (s.units - last_units) / dt } else { 0.0 };
        let throttled = if dt > 0.0 { (s.throttle_events - last_throttles) as f64 / dt } else { 0.0 };
        if dt >= 0.9 {
            last_written = s.written;
            last_units = s.units;
            last_throttles = s.throttle_events;
            last_at = s.elapsed;
        }
        let units_part =
            if units_label.is_empty() { String::new() } else { format!("{} {units_label}, ", human(units)) };
        let rates =
            format!("{} items/s, {units_part}{throttled:.1} throttled/s, {} in flight", human(rate), s.in_flight);
        match &bar {
            Some(b) => {
                b.set_length(s.total_bytes.unwrap_or(s.bytes_read.max(1)));
                b.set_position(s.bytes_read);
                b.set_message(format!("{}, {rates}", records_progress(&s)));
            }
            None => {
                if last_line.elapsed() >= Duration::from_secs(5) {
                    last_line = std::time::Instant::now();
                    eprintln!("[{:>6.1}s] {}, {rates}", s.elapsed.as_secs_f64(), progress_line(&s));
                }
            }
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
}

/// Where a load stands, for a log line: the share of the input read (when
/// its size is known), then the records read, written and rejected, each
/// on its own (not the checkpoint's position, which trails what is written
/// while earlier records wait).
fn progress_line(s: &Snapshot) -> String {
    let read_share = match s.total_bytes {
        Some(total) => format!("{:.0}% of the input, ", 100.0 * s.bytes_read as f64 / total.max(1) as f64),
        None => String::new(),
    };
    format!("{read_share}{}", records_progress(s))
}

/// Records read, written and (when any) rejected.
fn records_progress(s: &Snapshot) -> String {
    let rejected = if s.rejected > 0 { format!(", {} rejected", human(s.rejected as f64)) } else { String::new() };
    format!("{} records read, {} written{rejected}", human(s.read as f64), human(s.written as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_shows_input_read_and_records_written_apart() {
        // 41% of the input read, while the checkpoint's low-water mark is
        // still at 17% (an early record waits): the line follows what was
        // read and written, not the low-water mark.
        let s = Snapshot {
            read: 41_000,
            written: 30_500,
            rejected: 2,
            bytes_read: 41_000_000,
            bytes_done: 17_000_000,
            total_bytes: Some(100_000_000),
            ..Snapshot::default()
        };
        assert_eq!(progress_line(&s), "41% of the input, 41,000 records read, 30,500 written, 2 rejected");
        let stdin = Snapshot { read: 10, written: 9, total_bytes: None, ..Snapshot::default() };
        assert_eq!(progress_line(&stdin), "10 records read, 9 written");
    }
}

/// Turns true on SIGINT or SIGTERM.
pub(crate) fn stop_on_signal() -> watch::Receiver<bool> {
    let (tx, rx) = watch::channel(false);
    tokio::spawn(async move {
        crate::shutdown_signal().await;
        eprintln!("dynaburst: stopping: finishing requests in flight and writing the checkpoint (again to force)");
        let _ = tx.send(true);
        crate::shutdown_signal().await;
        std::process::exit(i32::from(EXIT_INTERRUPTED));
    });
    rx
}

pub fn run(args: LoadArgs) -> anyhow::Result<ExitCode> {
    let runtime =
        tokio::runtime::Builder::new_multi_thread().enable_all().build().context("cannot start the async runtime")?;
    runtime.block_on(run_async(args))
}

fn order_of(arg: Option<OrderArg>, default: Order) -> Order {
    match arg {
        Some(OrderArg::AsIs) => Order::AsIs,
        Some(OrderArg::Interleave) => Order::Interleave,
        Some(OrderArg::Shuffle) => Order::Shuffle,
        None => default,
    }
}

fn concurrency_of(text: &str) -> anyhow::Result<Concurrency> {
    Ok(match text {
        "auto" => Concurrency::Auto,
        n => Concurrency::Fixed(
            n.parse::<usize>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| usage_error("--concurrency takes auto or a positive number"))?,
        ),
    })
}

fn seed_of(arg: Option<u64>) -> u64 {
    arg.unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
    })
}

async fn run_async(args: LoadArgs) -> anyhow::Result<ExitCode> {
    if let Some(target) = args.target.clone() {
        return run_mongo(args, target).await;
    }
    let table = args
        .table
        .clone()
        .ok_or_else(|| usage_error("--table is needed (or --target mongodb://... --collection C)"))?;
    for (given, flag) in [
        (args.collection.is_some(), "--collection"),
        (args.database.is_some(), "--database"),
        (args.id_field.is_some(), "--id-field"),
        (args.batch_size != dynaburst_mongo::DEFAULT_BATCH_SIZE, "--batch-size"),
        (matches!(args.mode, Some(ModeArg::Insert | ModeArg::Upsert)), "--mode insert|upsert"),
    ] {
        if given {
            usage!("{flag} is for MongoDB targets: add --target mongodb://HOST:PORT/DB, or drop {flag} to load into DynamoDB");
        }
    }
    let spec = input_spec(&args)?;
    let prices = Prices { per_million_wru: args.price_write_request_units, per_wcu_hour: args.price_wcu_hour };
    let key = args.key.as_deref().map(KeySchema::parse).transpose().map_err(usage_error)?;
    if args.simulate {
        return crate::simulate_cmd::run(crate::simulate_cmd::SimulateArgs {
            rejects: args.rejects.clone().unwrap_or_else(|| match &spec.path {
                Some(p) => PathBuf::from(format!("{}.simulate-rejects.jsonl", p.display())),
                None => PathBuf::from("dynaburst-simulate-rejects.jsonl"),
            }),
            input: spec,
            table,
            endpoint: args.endpoint.endpoint()?,
            key,
            billing: Billing::parse(&args.billing).map_err(usage_error)?,
            warm_write_units: args.warm_write_units,
            round_trip_ms: args.round_trip_ms,
            tuning: dynaburst_loader::Tuning {
                concurrency: concurrency_of(&args.concurrency)?,
                latency_control: false,
                max_wcu: args.max_wcu,
                order: order_of(args.order, Order::Interleave),
                window: args.window,
                seed: seed_of(args.seed),
                stall_timeout: Duration::from_secs(args.stall_timeout),
                max_rejects: args.max_rejects,
            },
            prices,
            report: args.report.clone(),
            timeline: args.timeline.clone(),
            chart: args.chart.clone(),
        })
        .await;
    }
    if args.dry_run {
        let endpoint = args.endpoint.endpoint()?;
        let client = dynaburst_dynamo::client(&endpoint).await;
        let (schema, capacity, indexes) = match dynaburst_dynamo::describe(&client, &table).await {
            Ok(info) => (info.schema, info.provisioned_wcu.or(info.warm_write_units).unwrap_or(4000) as f64, info.indexes),
            // With --key a dry run needs no endpoint; without it, say why
            // the table's key could not be read.
            Err(e @ dynaburst_dynamo::DynamoError::Unreachable { .. }) if key.is_none() => {
                bail_explained(&e, &endpoint)?
            }
            Err(_) => match &key {
                Some(k) => {
                    let cap = match Billing::parse(&args.billing).map_err(usage_error)? {
                        Billing::OnDemand => 4000.0,
                        Billing::Provisioned { write, .. } => write as f64,
                    };
                    (k.clone(), cap, Vec::new())
                }
                None => usage!("--dry-run needs the table's key: the table {table} cannot be described, so pass --key NAME:TYPE[,NAME:TYPE]"),
            },
        };
        return print_dry_run(&dynaburst_dynamo::dry_run(spec, &schema, capacity, &indexes, prices)?);
    }
    let create = if args.create_table {
        let k = key
            .clone()
            .ok_or_else(|| usage_error("--create-table needs --key NAME:TYPE[,NAME:TYPE], for example --key id:S"))?;
        Some((k, Billing::parse(&args.billing).map_err(usage_error)?))
    } else {
        None
    };
    let concurrency = concurrency_of(&args.concurrency)?;
    let seed = seed_of(args.seed);
    let opts = LoadOptions {
        input: spec,
        table,
        endpoint: args.endpoint.endpoint()?,
        key,
        create,
        mode: match args.mode {
            Some(ModeArg::Put) => WriteMode::Put,
            Some(ModeArg::Transact) => WriteMode::Transact,
            _ => WriteMode::Batch,
        },
        transact_size: args.transact_size,
        concurrency,
        max_wcu: args.max_wcu,
        order: order_of(args.order, Order::Interleave),
        window: args.window,
        seed,
        rejects: args.rejects.clone(),
        checkpoint: args.checkpoint.clone(),
        resume: args.resume,
        stall_timeout: Duration::from_secs(args.stall_timeout),
        max_rejects: args.max_rejects,
        prices,
    };
    if let Some(page) = crate::web_probe::page_of(opts.endpoint.url.as_deref()).await {
        if !args.quiet {
            eprintln!("web view: {page} (throughput, throttling and partition heat, live)");
        }
    }
    let (progress_tx, progress_rx) = watch::channel(Snapshot::default());
    let display = tokio::spawn(show_progress(progress_rx, args.quiet, "WCU/s"));
    let stop = stop_on_signal();
    let result = dynaburst_dynamo::load(opts, progress_tx, stop).await;
    let _ = display.await;
    finish(&args, result?)
}

/// Fails with a DynamoDB error as a person should read it: naming the
/// endpoint, and what to do when nothing answered there.
fn bail_explained<T>(e: &dynaburst_dynamo::DynamoError, endpoint: &Endpoint) -> anyhow::Result<T> {
    Err(anyhow::anyhow!(e.explain(&endpoint.name())))
}

/// Prints a dry run's estimate; the status says whether any record would
/// be rejected.
fn print_dry_run(report: &serde_json::Value) -> anyhow::Result<ExitCode> {
    println!("{}", serde_json::to_string_pretty(report)?);
    let rejected = report["records"]["rejected"].as_u64().unwrap_or(0);
    Ok(if rejected > 0 { ExitCode::from(EXIT_REJECTED) } else { ExitCode::SUCCESS })
}

/// `--target mongodb://...`: the same pipeline into a collection.
async fn run_mongo(args: LoadArgs, uri: String) -> anyhow::Result<ExitCode> {
    for (given, flag) in [
        (args.table.is_some(), "--table"),
        (args.endpoint.endpoint_url.is_some(), "--endpoint-url"),
        (args.endpoint.region.is_some(), "--region"),
        (args.endpoint.profile.is_some(), "--profile"),
        (args.create_table, "--create-table"),
        (args.key.is_some(), "--key"),
        (args.billing != "on-demand", "--billing"),
        (args.transact_size != 25, "--transact-size"),
        (args.max_wcu.is_some(), "--max-wcu"),
        (matches!(args.mode, Some(ModeArg::Batch | ModeArg::Put | ModeArg::Transact)), "--mode batch|put|transact"),
        (args.price_write_request_units != dynaburst_loader::PRICE_PER_MILLION_WRU, "--price-write-request-units"),
        (args.price_wcu_hour != dynaburst_loader::PRICE_PER_WCU_HOUR, "--price-wcu-hour"),
    ] {
        if given {
            usage!("{flag} is for DynamoDB targets; with --target mongodb://... use --collection, --database, --mode insert|upsert, --id-field and --batch-size");
        }
    }
    let collection = args.collection.clone().ok_or_else(|| usage_error("--target needs --collection NAME"))?;
    let mode = match args.mode {
        Some(ModeArg::Upsert) => dynaburst_mongo::MongoMode::Upsert,
        _ => dynaburst_mongo::MongoMode::Insert,
    };
    if args.id_field.is_some() && mode != dynaburst_mongo::MongoMode::Upsert {
        usage!("--id-field chooses what --mode upsert matches on: add --mode upsert (inserts always use _id)");
    }
    let mut spec = input_spec(&args)?;
    spec.raw_json = true;
    let opts = dynaburst_mongo::MongoOptions {
        input: spec,
        uri,
        database: args.database.clone(),
        collection,
        mode,
        id_field: args.id_field.clone(),
        batch_size: args.batch_size,
        tuning: dynaburst_loader::Tuning {
            concurrency: concurrency_of(&args.concurrency)?,
            latency_control: true,
            max_wcu: None,
            order: order_of(args.order, Order::AsIs),
            window: args.window,
            seed: seed_of(args.seed),
            stall_timeout: Duration::from_secs(args.stall_timeout),
            max_rejects: args.max_rejects,
        },
        rejects: args.rejects.clone(),
        checkpoint: args.checkpoint.clone(),
        resume: args.resume,
    };
    if args.dry_run {
        return print_dry_run(&dynaburst_mongo::dry_run(&opts)?);
    }
    let (progress_tx, progress_rx) = watch::channel(Snapshot::default());
    let display = tokio::spawn(show_progress(progress_rx, args.quiet, ""));
    let stop = stop_on_signal();
    let result = dynaburst_mongo::load(opts, progress_tx, stop).await;
    let _ = display.await;
    finish(&args, result?)
}

/// Writes the report and timeline, prints the summary, and chooses the
/// exit status.
fn finish(args: &LoadArgs, result: dynaburst_loader::LoadResult) -> anyhow::Result<ExitCode> {
    if let Some(path) = &args.report {
        std::fs::write(path, serde_json::to_string_pretty(&result.report)? + "\n")
            .with_context(|| format!("cannot write the report to {}", path.display()))?;
    }
    if let Some(path) = &args.timeline {
        let mut f =
            std::fs::File::create(path).with_context(|| format!("cannot write the timeline to {}", path.display()))?;
        dynaburst_loader::write_timeline(&result.timeline, &mut f)?;
    }
    let r = &result.report.load;
    let ending = serde_json::to_value(r.ending)?;
    let ending = ending.as_str().unwrap_or("?");
    let rejects = r.rejects_file.as_ref().map(|p| format!(" (see {p})")).unwrap_or_default();
    // The equation holds however the load ended: records still in flight
    // or waiting when it stopped are named, and a --resume sends them.
    let unacknowledged = if r.records.unacknowledged > 0 {
        format!(
            " + {} not acknowledged (in flight or waiting to be sent when the load stopped; --resume sends them)",
            human(r.records.unacknowledged as f64)
        )
    } else {
        String::new()
    };
    eprintln!(
        "dynaburst load: {ending}: {} records read = {} written + {} rejected{rejects}{unacknowledged}",
        human(r.records.read as f64),
        human(r.records.written as f64),
        human(r.records.rejected as f64)
    );
    let units = match &result.report.target {
        TargetReport::DynamoDb(d) => format!(", {} WCU/s", human(d.units_per_s.mean)),
        TargetReport::MongoDb(_) => String::new(),
    };
    eprintln!(
        "  {:.1} s, {} items/s (best second {}){units}; {} requests throttled, {} partly unprocessed, {} items re-sent",
        r.duration_s,
        human(r.items_per_s.mean),
        human(r.items_per_s.best_second as f64),
        human(r.throttle_events as f64),
        human(r.partial_requests as f64),
        human(r.items_resent as f64)
    );
    for (kind, l) in &r.latency_ms {
        eprintln!(
            "  {kind}: p50 {:.1} ms, p90 {:.1}, p99 {:.1}, max {:.1} ({} requests)",
            l.p50_ms,
            l.p90_ms,
            l.p99_ms,
            l.max_ms,
            human(l.count as f64)
        );
    }
    let memory = human(r.peak_memory_bytes.unwrap_or(0) as f64 / 1e6);
    match &result.report.target {
        TargetReport::DynamoDb(d) => eprintln!(
            "  peak concurrency {}, peak memory {memory} MB; cost at list prices ${:.4} on-demand, ${:.4} provisioned ({} WCU); seed {}",
            r.peak_concurrency,
            d.cost_usd.on_demand,
            d.cost_usd.provisioned,
            human(d.cost_usd.provisioned_wcu),
            r.seed
        ),
        TargetReport::MongoDb(m) => {
            eprintln!(
                "  peak concurrency {}, peak memory {memory} MB; {}; seed {}",
                r.peak_concurrency, m.server.product, r.seed
            );
            for n in &m.notes {
                eprintln!("  note: {n}");
            }
        }
    }
    Ok(match &result.ending {
        Ending::Complete if r.records.rejected > 0 => {
            eprintln!(
                "dynaburst load: {} records were rejected: fix them in {} and load that file",
                r.records.rejected,
                r.rejects_file.as_deref().unwrap_or_default()
            );
            ExitCode::from(EXIT_REJECTED)
        }
        Ending::Complete => ExitCode::SUCCESS,
        Ending::Interrupted => {
            eprintln!("dynaburst load: interrupted; continue with the same command and --resume");
            ExitCode::from(EXIT_INTERRUPTED)
        }
        Ending::Aborted(reason) => {
            eprintln!(
                "dynaburst load: stopped before the end: {reason}; fix it, then run the same command with --resume"
            );
            ExitCode::from(EXIT_INCOMPLETE)
        }
    })
}

#[derive(clap::Args)]
pub struct CountArgs {
    /// Table to count.
    #[arg(long)]
    table: String,
    /// Parallel scan segments.
    #[arg(long, default_value_t = 4)]
    segments: u32,
    #[command(flatten)]
    endpoint: EndpointArgs,
}

pub fn count(args: CountArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let endpoint = args.endpoint.endpoint()?;
    runtime.block_on(async move {
        let client = dynaburst_dynamo::client(&endpoint).await;
        // One DescribeTable first: a missing table or an endpoint that is
        // not there is said at once, not after a scan's retries.
        dynaburst_dynamo::describe(&client, &args.table).await.or_else(|e| bail_explained(&e, &endpoint))?;
        let n = dynaburst_dynamo::count(&client, &args.table, args.segments)
            .await
            .or_else(|e| bail_explained(&e, &endpoint))?;
        println!("{n}");
        Ok(ExitCode::SUCCESS)
    })
}

#[derive(clap::Args)]
pub struct PurgeArgs {
    /// Table to empty (the table itself stays).
    #[arg(long)]
    table: String,
    /// Parallel scan segments.
    #[arg(long, default_value_t = 4)]
    segments: u32,
    /// Confirm: purge deletes every item of the table.
    #[arg(long)]
    yes: bool,
    #[command(flatten)]
    endpoint: EndpointArgs,
}

pub fn purge(args: PurgeArgs) -> anyhow::Result<ExitCode> {
    if !args.yes {
        usage!("purge deletes every item of {}: pass --yes to confirm", args.table);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let endpoint = args.endpoint.endpoint()?;
    runtime.block_on(async move {
        let client = dynaburst_dynamo::client(&endpoint).await;
        let n = dynaburst_dynamo::purge(&client, &args.table, args.segments)
            .await
            .or_else(|e| bail_explained(&e, &endpoint))?;
        eprintln!("dynaburst purge: deleted {} items from {}", human(n as f64), args.table);
        Ok(ExitCode::SUCCESS)
    })
}
