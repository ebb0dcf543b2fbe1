//! `runlet cancel RUN_ID --journal J [--format json]`: journals the cancellation of an
//! interrupted run, as its host would have: a resume then ends at once, and its calls left
//! dispatching stay as they were. A run another process is writing refuses the cancellation with
//! a sequence conflict (`RL7003`); cancel it there (SIGINT or SIGTERM to `runlet run`). Exit 0
//! when journaled, 2 when refused (an ended run: `RL8404`) or on I/O.

use std::process::ExitCode;

use runlet::journal::RunId;
use serde_json::json;

use crate::failure::{Failure, Shape};
use crate::report::Format;
use crate::stored::{JournalArgs, OpenJournal};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run's id (`r-…`).
    run_id: String,
    #[command(flatten)]
    journal: JournalArgs,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(args: &Args) -> ExitCode {
    execute(args).unwrap_or_else(|failure| failure.report(args.format, Shape::Diagnostics))
}

fn execute(args: &Args) -> Result<ExitCode, Failure> {
    let journal = OpenJournal::open(&args.journal)?;
    let run = RunId::new(args.run_id.as_str());
    let stored = journal.inspected(&run)?;
    let mut recovery = stored.recovery()?;
    recovery.cancel().map_err(|error| Failure::new(error.code(), error.to_string()))?;
    match args.format {
        Format::Json => println!("{}", json!({"run_id": run.as_str(), "status": "cancelled"})),
        Format::Text => println!("cancelled run {run}"),
    }
    Ok(ExitCode::SUCCESS)
}
