//! `runlet runs delete RUN_ID --journal J [--format json]`: removes an ended run from a durable
//! journal — its header, records, snapshot and owner — and then collects the journal's blobs
//! that no run names any more. A run that has not ended is refused (`RL8406`): cancel it first,
//! or resume it. A run interrupted before its first event (nothing ran), one whose retained
//! program no longer compiles (`RL7303`: nothing can resume or cancel it) and a damaged run (its
//! header or last record unreadable) are deleted too, unless a live process owns them
//! (`RL7010`). Exit 0 once deleted, 2 when refused or on I/O.

use std::process::ExitCode;

use runlet::diag::codes;
use runlet::journal::{RunId, owner};
use runlet::runtime::{RunDamage, RunStatus, run_listing};
use serde_json::json;

use crate::failure::{Failure, Shape};
use crate::report::Format;
use crate::stored::{OpenJournal, RunArgs};

pub type Args = RunArgs;

pub fn run(args: &Args) -> ExitCode {
    execute(args).unwrap_or_else(|failure| failure.report(args.format, Shape::Diagnostics))
}

fn execute(args: &Args) -> Result<ExitCode, Failure> {
    let journal = OpenJournal::open(&args.journal)?;
    let run = RunId::new(args.run_id.as_str());
    let failed = |error: runlet::journal::JournalError| Failure::new(error.code(), error.to_string());
    // A run that has not ended is deleted only when nothing can go on with it; then only once
    // no live process owns it, which may still be writing.
    let stuck = match journal.block_on(run_listing(journal.journal.as_ref(), &run)) {
        Ok(listing) if listing.status.has_ended() => None,
        // Interrupted before its first event: nothing ran, so there is nothing to cancel.
        Ok(listing) if listing.status == RunStatus::Interrupted && listing.last_seq == 0 => {
            Some("never started")
        }
        // Its program no longer compiles here: nothing can resume or cancel it.
        Ok(listing)
            if listing.status == RunStatus::Interrupted
                && journal
                    .inspected(&run)
                    .err()
                    .is_some_and(|failure| failure.is(codes::RUN_RETAINED_UNREADABLE)) =>
        {
            Some("not to be rebuilt")
        }
        Ok(listing) => {
            let status = listing.status;
            return Err(Failure::new(
                codes::RUN_NOT_ENDED,
                format!(
                    "run `{run}` is {status}, not ended: cancel it (`runlet cancel {run}`) or resume it before deleting it"
                ),
            ));
        }
        Err(error) if RunDamage::of(&error).is_some() => Some("damaged"),
        Err(error) => return Err(failed(error)),
    };
    if let Some(state) = stuck {
        let entry = journal.block_on(journal.journal.run_entry(&run)).map_err(failed)?;
        refuse_owned_elsewhere(&run, entry.owner, state)?;
    }
    journal.block_on(journal.journal.delete_run(&run)).map_err(failed)?;
    let collected = journal.block_on(journal.journal.collect_blobs()).map_err(failed)?;
    match args.format {
        Format::Json => {
            outln!("{}", json!({"run_id": run.as_str(), "deleted": true, "blobs_collected": collected}))
        }
        Format::Text => outln!("run {run}: deleted ({collected} blobs no other run names collected)"),
    }
    Ok(ExitCode::SUCCESS)
}

/// Refuses to delete run `run` (`state`: how it is stuck) while `current`, its owner, is
/// another living process: it may still be writing.
fn refuse_owned_elsewhere(run: &RunId, current: Option<String>, state: &str) -> Result<(), Failure> {
    match current {
        Some(current) if owner::is_another_living_process(&current) => Err(Failure::new(
            codes::RUN_OWNED_ELSEWHERE,
            format!(
                "run `{run}` is {state}, and a live process ({current}) owns it: wait for it to let go of it"
            ),
        )),
        _ => Ok(()),
    }
}
