//! `dynaburst gen`: the seeds' datasets, deterministic from a seed.

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use dynaburst_datagen::{generate, Dataset};

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum DatasetArg {
    /// Seed 000: id, name, age, content, createdAt, updatedAt (JSON Lines).
    People,
    /// Seed 001: id and --fields string fields (JSON Lines).
    KvDocs,
    /// Seed 002: id and sort (JSON Lines).
    Minimal,
    /// Seed 004: contiguous IPv4 ranges (CSV).
    IpRanges,
}

#[derive(clap::Args)]
pub struct GenArgs {
    /// Which dataset.
    #[arg(value_enum)]
    dataset: DatasetArg,
    /// Records to write.
    #[arg(long)]
    count: u64,
    /// kv-docs: string fields per document (seed 001 used 1, 10 and 100).
    #[arg(long, default_value_t = 10)]
    fields: usize,
    /// Same seed, same bytes.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output file (default: standard output).
    #[arg(long, short)]
    out: Option<PathBuf>,
}

pub fn run(args: GenArgs) -> anyhow::Result<ExitCode> {
    let dataset = match args.dataset {
        DatasetArg::People => Dataset::People,
        DatasetArg::KvDocs => Dataset::KvDocs,
        DatasetArg::Minimal => Dataset::Minimal,
        DatasetArg::IpRanges => Dataset::IpRanges,
    };
    let mut out: Box<dyn Write> = match &args.out {
        Some(p) => Box::new(BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("cannot create {}", p.display()))?,
        )),
        None => Box::new(BufWriter::new(std::io::stdout().lock())),
    };
    match generate(dataset, args.count, args.fields, args.seed, &mut out).and_then(|()| out.flush()) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        // `dynaburst gen ... | head` closes the pipe early: not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        Err(e) => Err(e).context("cannot write the dataset"),
    }
}
