//! `dynaburst dump`: a table's items to a file, standard output or an
//! export directory, through `dynaburst_dynamo::dump`.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use dynaburst_dynamo::dump::{DumpEnding, DumpError, DumpFormat, DumpOptions, DumpProgress};
use tokio::sync::watch;

use crate::load_cmd::{human, stop_on_signal, EndpointArgs, EXIT_INTERRUPTED};
use crate::usage_error;

#[derive(clap::Args)]
pub struct DumpArgs {
    /// Table to dump.
    #[arg(long)]
    table: String,
    #[command(flatten)]
    endpoint: EndpointArgs,
    /// jsonl (plain JSON), ddb-json (DynamoDB's export lines, every type
    /// kept), csv, or ddb-export (a directory in DynamoDB's export-to-S3
    /// layout). Default: from the output's name, else ddb-json.
    #[arg(long)]
    format: Option<String>,
    /// Output file, directory (ddb-export), or - for standard output.
    #[arg(short = 'o', long, default_value = "-")]
    output: String,
    /// Parallel scan segments.
    #[arg(long, default_value_t = 4)]
    segments: u32,
    /// Read capacity units per second the dump may consume (default: as
    /// fast as the table answers).
    #[arg(long)]
    max_rcu: Option<f64>,
    /// CSV: the columns after the key, comma-separated (default: every
    /// attribute of the first 1,000 items).
    #[arg(long)]
    columns: Option<String>,
    /// Checkpoint file (default: OUTPUT.dump-checkpoint.json; none for
    /// standard output).
    #[arg(long)]
    checkpoint: Option<PathBuf>,
    /// Continue an interrupted dump from its checkpoint.
    #[arg(long)]
    resume: bool,
    /// Write the dump's report (JSON) to this file.
    #[arg(long)]
    report: Option<PathBuf>,
    /// No progress on stderr.
    #[arg(long)]
    quiet: bool,
    /// Seed of the retry jitter (default: from the clock, printed).
    #[arg(long)]
    seed: Option<u64>,
}

fn format_of(args: &DumpArgs) -> anyhow::Result<DumpFormat> {
    if let Some(f) = &args.format {
        return DumpFormat::from_name(f)
            .ok_or_else(|| usage_error(format!("--format {f}: use jsonl, ddb-json, csv or ddb-export")));
    }
    let name = args.output.to_ascii_lowercase();
    Ok(if name.ends_with(".csv") {
        DumpFormat::Csv
    } else if name.ends_with(".ddb.json") || name.ends_with(".ddbjson") || name.ends_with(".dynamodb.json") {
        DumpFormat::DdbJson
    } else if name.ends_with(".jsonl") || name.ends_with(".ndjson") {
        DumpFormat::Jsonl
    } else {
        DumpFormat::DdbJson
    })
}

pub fn run(args: DumpArgs) -> anyhow::Result<ExitCode> {
    let format = format_of(&args)?;
    let endpoint = args.endpoint.endpoint()?;
    if args.segments == 0 {
        crate::usage!("--segments must be at least 1");
    }
    let seed = crate::seed_or_fresh(args.seed);
    let opts = DumpOptions {
        table: args.table.clone(),
        format,
        output: (args.output != "-").then(|| PathBuf::from(&args.output)),
        segments: args.segments,
        max_rcu: args.max_rcu,
        columns: args.columns.as_ref().map(|c| c.split(',').map(|s| s.trim().to_string()).collect()),
        checkpoint: args.checkpoint.clone(),
        resume: args.resume,
        seed,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async move {
        let client = dynaburst_dynamo::client(&endpoint).await;
        let (progress_tx, progress_rx) = watch::channel(DumpProgress::default());
        let shown = tokio::spawn(show_progress(progress_rx, args.quiet, args.table.clone()));
        let stop = stop_on_signal();
        let result = dynaburst_dynamo::dump::dump(&client, opts, progress_tx, stop).await;
        let _ = shown.await;
        let report = match result {
            Ok(r) => r,
            Err(DumpError::Dynamo(e)) => anyhow::bail!("dump of {}: {}", args.table, e.explain(&endpoint.name())),
            Err(DumpError::Usage(m)) => return Err(usage_error(m)),
            Err(e) => anyhow::bail!("dump of {}: {e}", args.table),
        };
        if let Some(path) = &args.report {
            let text = serde_json::to_string_pretty(&report)?;
            std::fs::write(path, text).with_context(|| format!("cannot write the report to {}", path.display()))?;
        }
        if !args.quiet {
            eprintln!(
                "dynaburst dump: {} items of {} in {:.1} s ({} items/s, {} RCU/s, {} requests retried) to {}; seed {}",
                human(report.items as f64),
                report.table,
                report.duration_s,
                human(report.items_per_s),
                human(report.read_units_per_s),
                report.retried_requests,
                report.output,
                report.seed
            );
        }
        Ok(match report.ending {
            DumpEnding::Complete => ExitCode::SUCCESS,
            DumpEnding::Interrupted => {
                eprintln!("dynaburst dump: interrupted; continue with the same command and --resume");
                ExitCode::from(EXIT_INTERRUPTED)
            }
        })
    })
}

/// A line a second on stderr (rewritten in place on a terminal).
async fn show_progress(mut rx: watch::Receiver<DumpProgress>, quiet: bool, table: String) {
    let terminal = std::io::stderr().is_terminal();
    let mut last = std::time::Instant::now();
    while rx.changed().await.is_ok() {
        if quiet || last.elapsed().as_secs_f64() < 1.0 {
            continue;
        }
        last = std::time::Instant::now();
        let p = rx.borrow_and_update().clone();
        let line = format!(
            "dump {table}: {} items, {} pages, {} RCU, {}/{} segments done",
            human(p.items as f64),
            human(p.pages as f64),
            human(p.read_units),
            p.segments_done,
            p.segments
        );
        if terminal {
            eprint!("\r{line}");
        } else {
            eprintln!("{line}");
        }
    }
    if terminal && !quiet {
        eprintln!();
    }
}
