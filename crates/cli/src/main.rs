//! The `dynaburst` binary: command-line parsing and wiring, nothing else.
//!
//! Architecture invariant: this is the only crate that exits the process
//! and the only one that uses `anyhow`.

mod bench_cmd;
mod dump_cmd;
mod gen_cmd;
mod load_cmd;
mod loadgen_cmd;
mod simulate_cmd;
mod streams_cmd;
mod web_probe;

use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::{Parser, Subcommand};
use dynaburst_engine::{Engine, EngineConfig};
use dynaburst_server::Server;

/// Both the server and the loader allocate per item; mimalloc serves that
/// pattern markedly better than the system allocator (bench/loader and
/// bench/server record the numbers).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// dynaburst: get data into DynamoDB-style databases fast, without losing
/// any, and know beforehand how a load will behave.
#[derive(Parser)]
#[command(name = "dynaburst", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a local DynamoDB-compatible server (boto3, the AWS CLI and the
    /// AWS SDKs work against it with only the endpoint URL changed).
    Serve(ServeArgs),
    /// Closed-loop load (BatchWriteItem or PutItem) against a
    /// DynamoDB-compatible endpoint: throughput and latency percentiles.
    Loadgen(loadgen_cmd::LoadgenArgs),
    /// Load a CSV, JSON Lines or DynamoDB JSON file into a table: adapts to
    /// throttling, never loses a record, resumes after a crash.
    ///
    /// Exit status: 0 everything written; 2 some records rejected (see the
    /// rejects file); 3 stopped before the end (run again with --resume);
    /// 130 interrupted (checkpoint written; --resume continues); 64 the
    /// command line is wrong; 1 any other error.
    Load(Box<load_cmd::LoadArgs>),
    /// Count a table's items with a parallel Scan (Select COUNT).
    Count(load_cmd::CountArgs),
    /// Delete every item of a table (parallel Scan, batched deletes).
    Purge(load_cmd::PurgeArgs),
    /// Write every item of a table once (parallel Scan, paced to
    /// --max-rcu, resumable) as JSON Lines, DynamoDB JSON, CSV or an
    /// export directory that `dynaburst load` reads back.
    ///
    /// Exit status: 0 complete; 130 interrupted (--resume continues);
    /// 64 the command line is wrong; 1 any other error.
    Dump(dump_cmd::DumpArgs),
    /// Write one of the seeds' datasets, deterministically from a seed.
    Gen(gen_cmd::GenArgs),
    /// Re-run the seeds' experiments (write-apis, doc-size,
    /// parallel-patterns, latency, partition-keys, index-trap, or all) and write
    /// results.json, report.md, SVG charts and timelines beside the seeds'
    /// published numbers.
    Bench(bench_cmd::BenchArgs),
    /// DynamoDB Streams tools: `streams tail --table T` prints a table's
    /// change records as they arrive, as JSON Lines.
    Streams(streams_cmd::StreamsArgs),
}

#[derive(clap::Args)]
struct ServeArgs {
    /// Address to bind. Only loopback by default: pass 0.0.0.0 to expose it.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// Port to listen on; 0 picks a free one (printed on start-up).
    #[arg(long, default_value_t = 8000)]
    port: u16,
    /// Model DynamoDB's capacity (partitions, per-partition limits, burst,
    /// adaptive capacity, splits, on-demand scaling) and throttle as it
    /// does; `off` serves without limits, like DynamoDB Local.
    #[arg(long, value_enum, default_value_t = Switch::On)]
    capacity_model: Switch,
    /// `aws` answers after service times fitted to seed 003's percentiles
    /// (PutItem, BatchWriteItem and TransactWriteItems by size); `none`
    /// answers at once.
    #[arg(long, value_enum, default_value_t = LatencyArg::None)]
    latency_model: LatencyArg,
    /// Milliseconds of network round trip added to every answer.
    #[arg(long, default_value_t = 0.0)]
    rtt: f64,
    /// Seed of the request ids and of the latency model's draws (default:
    /// from the clock; printed at start-up either way).
    #[arg(long)]
    seed: Option<u64>,
    /// Seconds between two sweeps of the time-to-live expirer, which
    /// deletes the items whose TTL attribute has passed. DynamoDB takes up
    /// to days; a few seconds keeps tests practical. 0 never expires items.
    #[arg(long, default_value_t = 5.0)]
    ttl_interval: f64,
    /// Keep every table in this directory (created if missing): tables,
    /// settings and items survive a restart or a crash, and each write is
    /// on disk before its answer. One server per directory. Without it,
    /// everything lives in memory and ends with the process.
    #[arg(long)]
    data_dir: Option<std::path::PathBuf>,
    /// Block cache of the --data-dir database, in MiB. Items are read
    /// through it, so it (plus the database's memtables, 64 MiB a table,
    /// about 256 MiB in all, at most 192 MiB of acknowledged
    /// writes not yet in the database and 32 MiB of key filters) bounds
    /// the server's memory, not the number of items.
    #[arg(long, default_value_t = DEFAULT_CACHE_MIB)]
    cache_size: usize,
    /// Tests: bytes past which the --data-dir write-ahead log starts its
    /// next file (default 32 MiB), so that a short test rotates through
    /// (and recycles) log files.
    #[arg(long, hide = true, value_parser = clap::value_parser!(u64).range(1..))]
    wal_rotate_bytes: Option<u64>,
    /// Tests: fewest bytes of one table's writes in one of the --data-dir
    /// applier's commits that go into the database as sorted tables of
    /// their own (default 32 MiB), so that a light load takes that path too.
    #[arg(long, hide = true, value_parser = clap::value_parser!(u64).range(1..))]
    ingest_min_bytes: Option<u64>,
    /// Verify every request's AWS Signature Version 4 against the key
    /// pairs of this file (AWS shared-credentials format, e.g.
    /// ~/.aws/credentials; every profile's pair is accepted). Without it,
    /// any signature is accepted.
    #[arg(long)]
    credentials: Option<std::path::PathBuf>,
    /// Open connections served at once; one more is answered 503
    /// ServiceUnavailableException (which SDKs retry) and closed.
    #[arg(long, default_value_t = dynaburst_server::DEFAULT_MAX_CONNECTIONS)]
    max_connections: usize,
    /// Seconds a connection may take to send a request's headers (counted
    /// from its start or its previous answer); then it is closed, so that
    /// slow or idle clients cannot hold the server.
    #[arg(long, default_value_t = dynaburst_server::DEFAULT_HEADER_TIMEOUT.as_secs_f64())]
    header_timeout: f64,
    /// Seconds a request may take to send its body once its headers are
    /// in; then it is answered 408 RequestTimeoutException.
    #[arg(long, default_value_t = dynaburst_server::DEFAULT_BODY_TIMEOUT.as_secs_f64())]
    body_timeout: f64,
    /// MiB the in-memory tables' items may take (their sizes plus a
    /// per-item overhead; not used with --data-dir, whose tables live on
    /// disk); a write past it is
    /// refused with LimitExceededException instead of the process being
    /// killed. Default: half of this machine's memory.
    #[arg(long, default_value_t = default_max_memory_mib())]
    max_memory: u64,
}

/// Fallback of `--max-memory` where the machine's memory cannot be read.
const FALLBACK_MAX_MEMORY_MIB: u64 = 4096;

/// Half of the machine's memory (MemTotal of /proc/meminfo), in MiB.
fn default_max_memory_mib() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            let line = m.lines().find(|l| l.starts_with("MemTotal:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map(|kib| kib / 1024 / 2)
        .filter(|mib| *mib > 0)
        .unwrap_or(FALLBACK_MAX_MEMORY_MIB)
}

/// Default of `serve --cache-size`.
const DEFAULT_CACHE_MIB: usize = dynaburst_diskstore::DEFAULT_CACHE_BYTES >> 20;

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum LatencyArg {
    None,
    Aws,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Switch {
    On,
    Off,
}

/// Exit status for a command line that cannot be parsed (sysexits'
/// EX_USAGE), so it is never mistaken for `load`'s 2 (records rejected).
const EXIT_USAGE: u8 = 64;

/// A command-line mistake that clap cannot see (a value it does not parse,
/// options that do not go together): the command exits with `EXIT_USAGE`.
#[derive(Debug)]
pub(crate) struct UsageError(pub(crate) String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Returns early with a [`UsageError`].
macro_rules! usage {
    ($($arg:tt)*) => {
        return Err(anyhow::Error::new($crate::UsageError(format!($($arg)*))))
    };
}
pub(crate) use usage;

/// A [`UsageError`] as an `anyhow::Error`, for `map_err` and `context`.
pub(crate) fn usage_error(message: impl std::fmt::Display) -> anyhow::Error {
    anyhow::Error::new(UsageError(message.to_string()))
}

/// The exit status of an error: 64 for command-line mistakes, 1 otherwise.
fn exit_status(e: &anyhow::Error) -> u8 {
    let argument = e.chain().any(|c| {
        c.is::<UsageError>()
            || matches!(c.downcast_ref::<dynaburst_loader::LoadError>(), Some(dynaburst_loader::LoadError::Argument(_)))
    });
    if argument {
        EXIT_USAGE
    } else {
        1
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // --help and --version are not errors.
            return if e.use_stderr() { ExitCode::from(EXIT_USAGE) } else { ExitCode::SUCCESS };
        }
    };
    let result = match cli.command {
        Command::Serve(args) => serve(args).map(|()| ExitCode::SUCCESS),
        Command::Loadgen(args) => loadgen_cmd::run(args).map(|()| ExitCode::SUCCESS),
        Command::Load(args) => {
            no_transparent_huge_pages();
            load_cmd::run(*args)
        }
        Command::Count(args) => load_cmd::count(args),
        Command::Purge(args) => load_cmd::purge(args),
        Command::Dump(args) => dump_cmd::run(args),
        Command::Gen(args) => gen_cmd::run(args),
        Command::Streams(args) => streams_cmd::run(args),
        Command::Bench(args) => {
            no_transparent_huge_pages();
            bench_cmd::run_cmd(args)
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("dynaburst: error: {e:#}");
            ExitCode::from(exit_status(&e))
        }
    }
}

/// Serving grows the heap by hundreds of MB; with transparent huge pages
/// (which mimalloc asks for) the kernel zeroes each fresh 2 MB page on
/// first touch. Measured loading 300,000 items into `serve --capacity-model
/// off`: the server spent 1.63 s of CPU with huge pages and 1.10 s without.
/// A process-wide setting, so the binary makes it, for `serve` and for
/// `bench` (whose servers are embedded), and for `load`, whose heap churns
/// through records read, encoded and freed (perf of a load of 100,000
/// people: 7 to 10% of its CPU zeroing huge pages). Harmless where
/// unsupported. The workspace's one `unsafe` block.
#[allow(unsafe_code)]
fn no_transparent_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes integer arguments only and changes
    // nothing but this process's huge-page policy.
    unsafe {
        libc::prctl(
            libc::PR_SET_THP_DISABLE,
            1 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        );
    }
}

fn serve(args: ServeArgs) -> anyhow::Result<()> {
    no_transparent_huge_pages();
    let runtime =
        tokio::runtime::Builder::new_multi_thread().enable_all().build().context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let addr: SocketAddr = format!("{}:{}", args.host, args.port)
            .parse()
            .with_context(|| format!("'{}' is not an IP address: pass --host 127.0.0.1 or another IP", args.host))?;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("cannot listen on {addr}: is another server using the port? Try --port 0"))?;
        let local = listener.local_addr().context("cannot read the bound address")?;
        let mut config = EngineConfig::local();
        if args.capacity_model == Switch::Off {
            config.capacity = None;
        }
        let memory_bytes = args.max_memory.saturating_mul(1 << 20);
        config.memory = Some(Arc::new(dynaburst_engine::MemoryBudget::new(memory_bytes)));
        let disk = match &args.data_dir {
            Some(dir) => {
                let options = dynaburst_diskstore::DiskOptions {
                    cache_bytes: args.cache_size.saturating_mul(1 << 20),
                    wal_rotate_bytes: args.wal_rotate_bytes.unwrap_or(dynaburst_diskstore::WAL_ROTATE_BYTES),
                    ingest_min_bytes: args
                        .ingest_min_bytes
                        .map_or(dynaburst_diskstore::INGEST_MIN_BYTES, |n| usize::try_from(n).unwrap_or(usize::MAX)),
                    ..Default::default()
                };
                let disk = dynaburst_diskstore::DiskStorage::open(dir, &options)?;
                eprintln!("dynaburst: data in {}", dir.display());
                Some(Arc::new(disk))
            }
            None => None,
        };
        let now = {
            use dynaburst_server::Clock;
            dynaburst_server::SystemClock::new().now().millis()
        };
        let engine = match &disk {
            Some(disk) => {
                // Every region's tables live in DIR; the home region's
                // under their own names.
                let home = dynaburst_engine::store::RegionStorage::new(disk.clone(), &config.region, &config.region);
                let engine =
                    Engine::open(config, Arc::new(home), now).context("cannot load the tables of --data-dir")?;
                Arc::new(engine)
            }
            None => Arc::new(Engine::new(config)),
        };
        let seed = seed_or_fresh(args.seed);
        // Request ids and service times draw from independent generators.
        let mut rng = dynaburst_rng::Rng::new(seed);
        let (ids_seed, latency_seed) = (rng.next_u64(), rng.next_u64());
        let model =
            dynaburst_server::latency::LatencyModel::new(args.latency_model == LatencyArg::Aws, args.rtt, latency_seed);
        if !model.is_none() {
            eprintln!(
                "dynaburst: latency model {} with {} ms round trip",
                if args.latency_model == LatencyArg::Aws { "aws" } else { "none" },
                args.rtt
            );
        }
        let ttl = std::time::Duration::try_from_secs_f64(args.ttl_interval).map_err(|_| {
            anyhow::anyhow!("--ttl-interval must be a number of seconds >= 0, not {}", args.ttl_interval)
        })?;
        let seconds = |flag: &str, v: f64| {
            std::time::Duration::try_from_secs_f64(v)
                .ok()
                .filter(|d| !d.is_zero())
                .ok_or_else(|| usage_error(format!("{flag} must be a number of seconds > 0, not {v}")))
        };
        if args.max_connections == 0 {
            usage!("--max-connections must be at least 1");
        }
        let limits = dynaburst_server::Limits {
            max_connections: args.max_connections,
            header_timeout: seconds("--header-timeout", args.header_timeout)?,
            body_timeout: seconds("--body-timeout", args.body_timeout)?,
        };
        let mut server = Server::new(engine, ids_seed).with_latency(model).with_ttl_interval(ttl).with_limits(limits);
        if let Some(path) = &args.credentials {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read --credentials {}", path.display()))?;
            let credentials = dynaburst_server::sigv4::Credentials::parse(&text)
                .map_err(|e| usage_error(format!("--credentials {}: {e}", path.display())))?;
            eprintln!("dynaburst: verifying signatures against {} key pair(s)", credentials.len());
            server = server.with_credentials(credentials);
        }
        if let Some(disk) = &disk {
            server = server
                .with_storage(disk.clone(), now)
                .context("cannot load the tables of the other regions in --data-dir")?
                .with_durability(disk.durability());
            // A failed disk write is logged once, with its cause.
            let durability = disk.durability();
            tokio::spawn(async move {
                if let Some(e) = durability.failure().await {
                    eprintln!("dynaburst: {e}; every request fails until the server is restarted");
                }
            });
        }
        let server = Arc::new(server);
        eprintln!("dynaburst: seed {seed} (pass --seed {seed} to draw the same request ids and service times)");
        let shutdown = shutdown_signal();
        println!("dynaburst listening on http://{local}");
        std::io::stdout().flush().context("cannot write to stdout")?;
        dynaburst_server::serve(listener, server, shutdown).await.context("server failed")?;
        if let Some(disk) = &disk {
            disk.close();
        }
        eprintln!("dynaburst: shut down cleanly");
        Ok(())
    })
}

/// `arg`, or a fresh seed from the clock when none was given. The run prints
/// the seed it uses, so that any run can be repeated.
pub(crate) fn seed_or_fresh(arg: Option<u64>) -> u64 {
    arg.unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
    })
}

/// Registers the SIGINT and SIGTERM handlers at once, so that a signal that
/// arrives right after start-up is not left to its default action (which
/// kills the process before it shuts down cleanly), and returns a future
/// that completes on either. Call it before announcing readiness.
pub(crate) fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, Signal, SignalKind};
        async fn recv(s: Option<Signal>) {
            match s {
                Some(mut s) => {
                    s.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        }
        let (int, term) = (signal(SignalKind::interrupt()).ok(), signal(SignalKind::terminate()).ok());
        async move {
            tokio::select! {
                _ = recv(int) => {},
                _ = recv(term) => {},
            }
        }
    }
    #[cfg(not(unix))]
    async {
        let _ = tokio::signal::ctrl_c().await;
    }
}
