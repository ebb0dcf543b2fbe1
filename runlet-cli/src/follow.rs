//! Following a run this process drives (`run`, `graph`, `resume`) to its end: its id first on
//! stderr when its journal outlives the process, `--events` written as they happen, and SIGINT
//! or SIGTERM turned into a journaled cancellation (a second signal ends the process at once).

use runlet::diag::codes;
use runlet::engine::Outcome;
use runlet::journal::JournalErrorKind;
use runlet::observe::RunObserver;
use runlet::runtime::{RunCanceller, RunHandle};

use crate::events::EventsFile;
use crate::failure::Failure;

/// How a run this process followed ended, with its observer.
pub struct Followed {
    pub outcome: Outcome,
    pub observer: RunObserver,
}

/// Follows `run` to its end. `announce` prints `run <id>` on stderr before anything else.
pub fn follow(run: RunHandle, events: Option<EventsFile>, announce: bool) -> Result<Followed, Failure> {
    if announce {
        errln!("run {}", run.run_id());
    }
    // Watched until the run ends: a signal after that is no longer the run's.
    let _watch = cancel_on_signals(run.canceller());
    let observer = run.observer();
    let written = events.map(|file| file.follow(&observer));
    let id = run.run_id().clone();
    let outcome = run.wait().map_err(|error| match error.kind {
        JournalErrorKind::RunPanicked | JournalErrorKind::OwnedElsewhere => Failure::new(error.code(), error.message),
        // Another process appended to it meanwhile (what its claim keeps out of a shared store).
        JournalErrorKind::SequenceConflict { expected, actual } => Failure::new(
            codes::RUN_OWNED_ELSEWHERE,
            format!(
                "run `{id}` was written by another process while this one drove it (the journal holds record {actual}, this process had written up to {expected}): it goes on there, and this process stopped at its next append, sending nothing more; see `runlet runs show {id}`"
            ),
        ),
        _ => Failure::new(error.code(), format!("the journal failed: {error}")),
    })?;
    if let Some(Err(failure)) = written {
        // The run ended all the same: the failure says how, and which run it was.
        let (code, message) = failure.first().unwrap_or((codes::FILE_UNWRITABLE, "the events file failed"));
        let ended = match &outcome {
            Outcome::Succeeded(_) => "succeeded",
            Outcome::Failed(_) => "failed",
            Outcome::Cancelled => "was cancelled",
        };
        // Announced runs are those of a durable journal, which holds their events.
        let again = match announce {
            true => format!("; `runlet runs show {id} --events` reads them from the journal"),
            false => String::new(),
        };
        return Err(Failure::new(
            code,
            format!("run `{id}` {ended}, and its events were not all written: {message}{again}"),
        ));
    }
    Ok(Followed { outcome, observer })
}

/// Cancels the run on the first SIGINT or SIGTERM; exits with status 130 on the second.
fn cancel_on_signals(canceller: RunCanceller) -> crate::signals::SignalWatch {
    crate::signals::on_first_signal("cancelling the run", move || canceller.cancel())
}
