//! The `runlet` command: the first host of the library, and the quickest way to see it work.
//! Each subcommand lives in its own module; exit statuses follow INTERFACES.md §4.

mod explain;

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
    /// Print the explanation of a diagnostic code, offline.
    Explain(explain::Args),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let status = if err.use_stderr() { 2 } else { 0 };
            let _ = err.print();
            return ExitCode::from(status);
        }
    };
    match cli.command {
        Command::Explain(args) => explain::run(&args),
    }
}
