//! The `runlet` command: the first host of the library, and the quickest way to see it work.
//! Each subcommand lives in its own module; exit statuses follow INTERFACES.md §4.

mod check;
mod digest_key;
mod events;
mod explain;
mod fmt;
mod graph;
mod heal;
mod input;
mod registry;
mod replay;
mod report;
mod run;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

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
    /// Apply only safe insertion repairs and print the healed source.
    Heal(heal::Args),
    /// Compile a program and run it with scripted tools; print its result.
    Run(run::Args),
    /// Run a program like `run`, then print the executed graph (JSON; DOT with `--dot`).
    Graph(graph::GraphArgs),
    /// Re-run a program from a recorded tool transcript without calling any tool.
    Replay(replay::Args),
    /// Print the explanation of a diagnostic code, offline.
    Explain(explain::Args),
}

fn main() -> ExitCode {
    restore_default_sigpipe();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let status = if err.use_stderr() { 2 } else { 0 };
            let _ = err.print();
            return ExitCode::from(status);
        }
    };
    match cli.command {
        Command::Check(args) => check::run(&args),
        Command::Fmt(args) => fmt::run(&args),
        Command::Heal(args) => heal::run(&args),
        Command::Run(args) => run::run(&args),
        Command::Graph(args) => graph::run(&args),
        Command::Replay(args) => replay::run(&args),
        Command::Explain(args) => explain::run(&args),
    }
}

/// Lets a closed pipe end the process quietly (`runlet graph … | head`), as it does for other
/// Unix tools, instead of every `println!` after it failing with a panic. Rust ignores SIGPIPE
/// by default.
fn restore_default_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in `main`, before any thread starts; restoring the default
    // disposition of SIGPIPE has no other effect on the process.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
