//! The `runlet` command: the first host of the library, and the quickest way to see it work.
//! Each subcommand lives in its own module; exit statuses follow INTERFACES.md §4.

#[macro_use]
mod output;
mod cancel;
mod check;
mod delete;
mod digest_key;
mod events;
mod explain;
mod failure;
mod files;
mod fmt;
mod follow;
mod graph;
mod heal;
mod journal_spec;
mod limits;
mod mcp;
mod registry;
mod replay;
mod report;
mod resolve;
mod resume;
mod run;
mod runs;
mod serve;
mod signals;
mod stored;
mod submit;
mod telemetry;
mod tools;
mod worker;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use runlet::diag::codes;

use crate::failure::{Failure, Shape};
use crate::report::Format;

#[derive(Debug, Parser)]
#[command(name = "runlet", version, about = "Check, format, explain and run Runlet programs")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Parse and analyze a program against a registry and print its diagnostics.
    Check(check::Args),
    /// Print source in canonical layout, or check or rewrite it.
    Fmt(fmt::Args),
    /// Apply safe repairs (insertions; with a registry, safe machine fixes too) and print the healed source.
    Heal(heal::Args),
    /// Compile a program and run it with scripted tools; print its result.
    Run(run::Args),
    /// Run a program like `run`, then print the executed graph (JSON; DOT with `--dot`).
    Graph(graph::GraphArgs),
    /// Re-run a program from a recorded tool transcript without calling any tool.
    Replay(replay::Args),
    /// Print the explanation of a diagnostic code, offline.
    Explain(explain::Args),
    /// List the runs of a durable journal, or show one (`runs show RUN_ID`).
    Runs(runs::Args),
    /// Continue an interrupted run from its journal.
    Resume(resume::Args),
    /// Journal a host decision about an operation a run left uncertain.
    Resolve(resolve::Args),
    /// Journal the cancellation of an interrupted run.
    Cancel(cancel::Args),
    /// Print the registry of a registry file and MCP servers' tools.
    Tools(tools::Args),
    /// Journal a run to a PostgreSQL journal for a worker to run; prints its id.
    Submit(submit::Args),
    /// Run the runs of a PostgreSQL journal, taking over those of workers that died.
    Worker(worker::Args),
    /// Serve a web page listing a journal's runs and drawing each run's graph live.
    Serve(serve::Args),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) if !err.use_stderr() => {
            // `--help` and `--version`.
            let _ = err.print();
            return ExitCode::SUCCESS;
        }
        Err(err) => return malformed(&err),
    };
    // Flushes what is left to export once the command is done.
    let _telemetry = match telemetry::install() {
        Ok(telemetry) => telemetry,
        Err(failure) => return failure.report(Format::Text, Shape::Diagnostics),
    };
    let status = match cli.command {
        Command::Check(args) => check::run(&args),
        Command::Fmt(args) => fmt::run(&args),
        Command::Heal(args) => heal::run(&args),
        Command::Run(args) => run::run(&args),
        Command::Graph(args) => graph::run(&args),
        Command::Replay(args) => replay::run(&args),
        Command::Explain(args) => explain::run(&args),
        Command::Runs(args) => runs::run(&args),
        Command::Resume(args) => resume::run(&args),
        Command::Resolve(args) => resolve::run(&args),
        Command::Cancel(args) => cancel::run(&args),
        Command::Tools(args) => tools::run(&args),
        Command::Submit(args) => submit::run(&args),
        Command::Worker(args) => worker::run(&args),
        Command::Serve(args) => serve::run(&args),
    };
    match output::stdout_failure() {
        Some(failure) => failure.report(Format::Text, Shape::Diagnostics),
        None => status,
    }
}

/// A command line clap could not read, as an `RL8501` failure: in the JSON of the command when
/// the arguments ask for `--format json`, else clap's own text led by the code.
fn malformed(err: &clap::Error) -> ExitCode {
    let rendered = err.render().to_string();
    let rendered = rendered.trim().strip_prefix("error: ").unwrap_or(rendered.trim());
    let (message, rest) = rendered.split_once('\n').unwrap_or((rendered, ""));
    let mut failure = Failure::new(codes::INVALID_ARGUMENT, message);
    if !rest.trim().is_empty() {
        failure = failure.with_help(rest.trim());
    }
    // Not `std::env::args`, which panics on an argument that is not UTF-8 (the very argument clap
    // may be refusing).
    let args: Vec<String> =
        std::env::args_os().skip(1).map(|arg| arg.to_string_lossy().into_owned()).collect();
    let json = args.windows(2).any(|pair| pair[0] == "--format" && pair[1] == "json")
        || args.iter().any(|arg| arg == "--format=json");
    let format = if json { Format::Json } else { Format::Text };
    let run_report = matches!(args.first().map(String::as_str), Some("run" | "graph" | "replay" | "resume"));
    failure.report(format, if run_report { Shape::Run } else { Shape::Diagnostics })
}
