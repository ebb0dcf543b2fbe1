//! `runlet cancel RUN_ID --journal J [--format json]`: cancels a run from another process. A run
//! a live process owns is asked to cancel through the journal, and the command waits (up to a
//! minute, saying so on stderr) until that process has journaled the cancellation; an
//! interrupted run — one whose process also stopped meanwhile — gets its cancellation journaled
//! here, as its host would have: a resume then ends at once, and its calls left dispatching stay
//! as they were. Exit 0 once the run is cancelled, 2 when refused (an
//! ended run: `RL8404`) or on I/O.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use runlet::diag::codes;
use runlet::journal::RunId;
use runlet::runtime::RunStatus;
use serde_json::json;

use crate::failure::{Failure, Shape};
use crate::report::Format;
use crate::stored::{OpenJournal, RunArgs};

/// How long `cancel` waits for the owner of a running run to journal its cancellation.
const OWNER_WAIT: Duration = Duration::from_secs(60);

pub type Args = RunArgs;

pub fn run(args: &Args) -> ExitCode {
    execute(args).unwrap_or_else(|failure| failure.report(args.format, Shape::Diagnostics))
}

fn execute(args: &Args) -> Result<ExitCode, Failure> {
    let journal = OpenJournal::open(&args.journal)?;
    let run = RunId::new(args.run_id.as_str());
    let status = match journal.status(&run)? {
        // An owner that stopped before it cancelled the run left it interrupted: cancelled here.
        RunStatus::Running => match ask_owner(&journal, &run)? {
            RunStatus::Interrupted => cancel_here(&journal, &run)?,
            status => status,
        },
        _ => cancel_here(&journal, &run)?,
    };
    match args.format {
        Format::Json => outln!("{}", json!({"run_id": run.as_str(), "status": status.as_str()})),
        Format::Text => outln!("run {run}: {status}"),
    }
    Ok(if status == RunStatus::Cancelled { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// Journals the cancellation of `run`, which no live process drives.
fn cancel_here(journal: &OpenJournal, run: &RunId) -> Result<RunStatus, Failure> {
    let stored = journal.decided(run)?;
    let mut recovery = stored.recovery()?;
    recovery.cancel().map_err(|error| Failure::new(error.code(), error.to_string()))?;
    Ok(RunStatus::Cancelled)
}

/// Asks the process that owns `run` to cancel it and waits until the run has ended (it may end
/// otherwise before it sees the request) or its owner is gone (`Interrupted`).
fn ask_owner(journal: &OpenJournal, run: &RunId) -> Result<RunStatus, Failure> {
    journal
        .block_on(journal.journal.request_cancel(run))
        .map_err(|error| Failure::new(error.code(), error.to_string()))?;
    errln!("asked the process running {run} to cancel it; waiting for it (at most a minute)");
    let deadline = Instant::now() + OWNER_WAIT;
    loop {
        match journal.status(run)? {
            RunStatus::Running if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            RunStatus::Running => {
                return Err(Failure::new(
                    codes::RUN_OWNED_ELSEWHERE,
                    format!(
                        "run `{run}` was asked to cancel, and its process has not done so within a minute"
                    ),
                ));
            }
            status => return Ok(status),
        }
    }
}
