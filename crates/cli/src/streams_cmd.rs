//! `dynaburst streams tail`: a table's change records as JSON Lines.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use crate::load_cmd::EndpointArgs;

#[derive(clap::Args)]
pub struct StreamsArgs {
    #[command(subcommand)]
    command: StreamsCommand,
}

#[derive(clap::Subcommand)]
enum StreamsCommand {
    /// Print the change records of a table's stream as they arrive, one
    /// JSON object a line, shaped like GetRecords' records.
    Tail(TailArgs),
}

#[derive(clap::Args)]
struct TailArgs {
    /// Table whose stream to read (its stream must be enabled).
    #[arg(long)]
    table: String,
    /// Start at the oldest record kept (TRIM_HORIZON) instead of only
    /// what arrives from now on (LATEST).
    #[arg(long)]
    from_start: bool,
    /// Exit after this many records.
    #[arg(long)]
    max_records: Option<u64>,
    /// Milliseconds to wait when no shard had anything new.
    #[arg(long, default_value_t = 500)]
    poll_ms: u64,
    #[command(flatten)]
    endpoint: EndpointArgs,
}

pub fn run(args: StreamsArgs) -> anyhow::Result<ExitCode> {
    let StreamsCommand::Tail(args) = args.command;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async move {
        let opts = dynaburst_dynamo::TailOptions {
            from_start: args.from_start,
            max_records: args.max_records,
            poll: Duration::from_millis(args.poll_ms),
        };
        let mut out = std::io::stdout().lock();
        dynaburst_dynamo::tail(&args.endpoint.endpoint()?, &args.table, &opts, |record| {
            writeln!(out, "{record}")?;
            out.flush()
        })
        .await?;
        Ok(ExitCode::SUCCESS)
    })
}
