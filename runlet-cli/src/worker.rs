//! `runlet worker --journal postgres://… --mcp … | --tools T.json [--registry R.json]
//! [--concurrency N] [--lease-ms MS] [--max-recoveries N] [--poll-ms MS] [--digest-key-file PATH]`
//! (INTERFACES.md §4.3): runs the runs submitted to a PostgreSQL journal, and takes over those of
//! workers that died once their lease has expired ([`runlet_postgres::Worker`]). It claims only
//! runs of the registry it runs: the MCP servers' tools with `--registry` laid over them, or
//! the registry file alone beside `--tools`. Prints one JSON line per run it is done with
//! (`{"run_id", "action": "ended"|"lost"|"parked"|"left", "status"?, "code"?, "message"?}`) on
//! stdout. The first SIGINT or SIGTERM stops claiming and waits for the runs it drives to end;
//! a second exits at once (other workers take its runs over after the lease).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use runlet::diag::codes;
use runlet::runtime::Runtime;
use runlet_postgres::{LONGEST_LEASE, PostgresOptions, Worker, WorkerOptions};
use tokio_util::sync::CancellationToken;

use crate::failure::{Failure, Shape};
use crate::journal_spec::{JournalSpec, OpenedJournal, open_postgres};
use crate::mcp::McpArgs;
use crate::registry::load_registry_with;
use crate::report::Format;
use crate::run::tools_of;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The PostgreSQL journal: `postgres://user@host:port/db`.
    #[arg(long)]
    journal: String,
    /// The registry file: required with `--tools` alone; with MCP servers it overrides what
    /// it names of their tools. Runs of another registry are left to other workers.
    #[arg(long)]
    registry: Option<PathBuf>,
    /// The tool fixture file that answers the runs' calls (beside MCP servers: the calls of
    /// the tools it scripts).
    #[arg(long)]
    tools: Option<PathBuf>,
    #[command(flatten)]
    mcp: McpArgs,
    /// How many runs it drives at once.
    #[arg(long, value_name = "N", default_value_t = 16)]
    concurrency: usize,
    /// How long its claims hold without a heartbeat; other workers take its runs over after.
    #[arg(long, value_name = "MS", default_value_t = 10_000)]
    lease_ms: u64,
    /// How many takeovers a run may need before it is parked as failed (`RL7306`).
    #[arg(long, value_name = "N", default_value_t = 5)]
    max_recoveries: u32,
    /// How often it looks for runs when no notification wakes it.
    #[arg(long, value_name = "MS", default_value_t = 1_000)]
    poll_ms: u64,
    /// The key the runs' digests of sensitive values are keyed with: the same in every process
    /// of the journal (default: the file `RUNLET_DIGEST_KEY_FILE` names).
    #[arg(long, value_name = "PATH")]
    digest_key_file: Option<PathBuf>,
    /// How to print a failure to start.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(args: &Args) -> ExitCode {
    execute(args).unwrap_or_else(|failure| failure.report(args.format, Shape::Diagnostics))
}

fn execute(args: &Args) -> Result<ExitCode, Failure> {
    let spec = JournalSpec::parse(&args.journal)?;
    let JournalSpec::Postgres(url) = &spec else {
        return Err(Failure::new(
            codes::INVALID_ARGUMENT,
            "`runlet worker` shares the runs of a PostgreSQL journal: `--journal postgres://…`",
        ));
    };
    let longest = LONGEST_LEASE.as_millis();
    if !(100..=longest).contains(&u128::from(args.lease_ms)) || args.concurrency == 0 {
        return Err(Failure::new(
            codes::INVALID_ARGUMENT,
            format!(
                "`--lease-ms` is at least 100 and at most {longest} (a day), and `--concurrency` at least 1"
            ),
        ));
    }
    if args.registry.is_none() && args.mcp.is_empty() {
        return Err(Failure::new(codes::INVALID_ARGUMENT, "`--registry FILE` is required without `--mcp`"));
    }
    let key = spec.digest_key(args.digest_key_file.as_deref())?;
    let servers = args.mcp.attach()?;
    let worked = work(args, url, key, servers.as_ref());
    if let Some(servers) = servers {
        servers.shutdown();
    }
    worked
}

fn work(
    args: &Args,
    url: &str,
    key: Option<crate::digest_key::HostKey>,
    servers: Option<&runlet_mcp::McpClient>,
) -> Result<ExitCode, Failure> {
    let executor = tools_of(args.tools.as_deref(), servers, "worker")?;
    let registry = load_registry_with(args.registry.as_deref(), servers)?;
    let lease = Duration::from_millis(args.lease_ms);
    let journal = open_postgres(url, PostgresOptions { lease, ..PostgresOptions::default() })?;
    let mut builder = OpenedJournal::postgres(journal.clone())
        .attach(Runtime::builder())
        .registry(registry)
        .executor(executor);
    if let Some(key) = key {
        builder = builder.digest_key(&key.id, &key.secret);
    }
    let runtime = Arc::new(builder.build().map_err(|error| Failure::new(error.code(), error.to_string()))?);
    let options = WorkerOptions {
        concurrency: args.concurrency,
        max_recoveries: args.max_recoveries,
        poll: Duration::from_millis(args.poll_ms.max(10)),
    };
    let stop = CancellationToken::new();
    let _watch = stop_on_signals(stop.clone());
    errln!("worker {} on {}", runtime.owner(), journal_location(url));
    let worker = Worker::new(Arc::clone(&runtime), journal, options);
    runtime.handle().clone().block_on(worker.run(stop, |handled| outln!("{}", handled.to_json())));
    Ok(ExitCode::SUCCESS)
}

/// `url` up to its path, without credentials.
fn journal_location(url: &str) -> &str {
    url.rsplit_once('@').map_or(url, |(_, rest)| rest)
}

/// Stops claiming on the first SIGINT or SIGTERM; exits with status 130 on the second.
fn stop_on_signals(stop: CancellationToken) -> crate::signals::SignalWatch {
    crate::signals::on_first_signal("stopping: no new runs; waiting for those running", move || stop.cancel())
}
