//! Recovery when a runtime starts (spec §5.3): the journal's interrupted runs — not ended, no
//! live process owning them — that this runtime can run (their header retains the program, and
//! pins this runtime's registry) are compiled again from their headers and resumed, each at
//! most a bounded number of times: a run already resumed that often without ending is parked as
//! failed (`RL7306`) rather than resumed once more. Runs that need a host's decision about an
//! uncertain call (`RL8405`, found by replaying them), runs whose journal is damaged, and runs
//! this runtime cannot run, are left for an operator, with the reason; so are runs another
//! process claimed since they were listed (`RL7010`). A run is claimed after its replay, and
//! replayed again under the claim when another process journaled more of it meanwhile.

use super::{
    Recovery, RetainedProgram, RunDamage, RunHandle, RunOptions, RunStatus, Runtime, UncertainOperation,
};
use crate::diag::{Code, codes};
use crate::engine::HostData;
use crate::journal::{JournalError, JournalErrorKind, RunId};
use crate::registry::RegistryOptions;

/// Why recovery at start leaves a run whose calls await a host's decision (`RL8405`).
pub const NEEDS_DECISION: &str =
    "calls it left dispatching need a host's decision: resolve them, then resume it";

/// What recovery at start did with one interrupted run.
#[derive(Debug)]
pub enum Recovered {
    /// Resumed, or started when it had never started: the run goes on under this handle
    /// (dropping it lets the run go on unwatched).
    Resumed(RunHandle),
    /// Resumed `resumes` times before without ending: parked as failed (`RL7306`).
    Parked { run: RunId, resumes: u32 },
    /// Left for an operator, for the reason `code` and `message` give (a decision it needs, a
    /// damaged journal, another registry, another process that took it meanwhile).
    Left { run: RunId, code: Code, message: String },
}

impl Recovered {
    /// The run this is about.
    pub fn run_id(&self) -> &RunId {
        match self {
            Recovered::Resumed(handle) => handle.run_id(),
            Recovered::Parked { run, .. } | Recovered::Left { run, .. } => run,
        }
    }
}

impl Runtime {
    /// Resumes every interrupted run of this runtime's journal that it can run, in the order the
    /// runs were created, parking as failed those already resumed `max_resumes` times. What a
    /// host calls once it has built its runtime, so runs its last process left go on. A run
    /// whose header or last record is damaged is left, with the journal's error, and the others
    /// go on. Blocks while it replays each run; fails only when the journal cannot list its runs.
    pub fn recover_interrupted(&self, max_resumes: u32) -> Result<Vec<Recovered>, JournalError> {
        self.recover_interrupted_with(max_resumes, None)
    }

    /// [`Runtime::recover_interrupted`], giving the calls of the runs it resumes `host_data`
    /// ([`RunOptions::host_data`]).
    pub fn recover_interrupted_with(
        &self,
        max_resumes: u32,
        host_data: Option<HostData>,
    ) -> Result<Vec<Recovered>, JournalError> {
        let mut recovered = Vec::new();
        for listing in self.runs()? {
            let run = listing.run_id;
            let (code, message) = match (listing.status, listing.damage) {
                (RunStatus::Interrupted, _) => {
                    recovered.push(self.recover_run_with(&run, max_resumes, host_data.clone()));
                    continue;
                }
                (RunStatus::NeedsResolution, _) => (codes::RUN_NEEDS_RESOLUTION, NEEDS_DECISION.to_owned()),
                (_, Some(RunDamage { code, message })) => (code, message),
                _ => continue,
            };
            recovered.push(Recovered::Left { run, code, message });
        }
        Ok(recovered)
    }

    /// Resumes the interrupted run `run` of this runtime's journal, or parks it as failed once
    /// it was resumed `max_resumes` times, or says why it cannot: the step
    /// [`Runtime::recover_interrupted`] takes for each interrupted run. Blocks while it replays.
    pub fn recover_run(&self, run: &RunId, max_resumes: u32) -> Recovered {
        self.recover_run_with(run, max_resumes, None)
    }

    /// [`Runtime::recover_run`], giving the run's calls `host_data` ([`RunOptions::host_data`]).
    pub fn recover_run_with(&self, run: &RunId, max_resumes: u32, host_data: Option<HostData>) -> Recovered {
        self.restart(run, max_resumes, host_data).unwrap_or_else(|(code, message)| Recovered::Left {
            run: run.clone(),
            code,
            message,
        })
    }

    fn restart(
        &self,
        run: &RunId,
        max_resumes: u32,
        host_data: Option<HostData>,
    ) -> Result<Recovered, (Code, String)> {
        let header = self.run_header(run).map_err(|e| reason(e.code(), &e))?;
        let retained = RetainedProgram::from_header(&header, &RegistryOptions::default())
            .map_err(|e| reason(e.code(), &e))?;
        let registry = self.registry.digest().to_string();
        if header.registry_digest != registry {
            let message = format!(
                "it was started against the registry {}, this runtime runs {registry}",
                header.registry_digest
            );
            return Err((codes::RUN_PIN_MISMATCH, message));
        }
        let program = self.compile(&retained.source, &retained.inputs).map_err(|diagnostics| {
            let first = diagnostics.iter().find(|d| d.is_error());
            let message =
                first.map_or_else(|| "its program does not compile".to_owned(), |d| d.message.clone());
            (first.map_or(codes::RUN_RETAINED_UNREADABLE, |d| d.code), message)
        })?;
        let refused = |e: super::RecoveryError| reason(e.code(), &e);
        let unread = |e: JournalError| reason(e.code(), &e);
        let options = RunOptions { limits: retained.limits.clone(), host_data, ..RunOptions::default() };
        let replay = || self.recovery(&program, run, options.clone()).map_err(refused);
        if self.never_started(run).map_err(unread)? {
            let mut prepared = self.prepare_retained(&program, &header, &retained).map_err(refused)?;
            prepared.driving.host_data = options.host_data.clone();
            self.claim(run)?;
            return match self.never_started(run) {
                Ok(true) => Ok(Recovered::Resumed(self.begin(&program, prepared, None))),
                // Another process started it since.
                Ok(false) => replay().and_then(|recovery| self.go_on(run, recovery, max_resumes)),
                Err(e) => Err(unread(e)),
            }
            .map_err(|reason| self.let_go(run, reason));
        }
        let recovery = replay()?;
        // Neither resumed nor parked: an operator decides about the calls first.
        if awaits_decision(&recovery) {
            return Err((codes::RUN_NEEDS_RESOLUTION, NEEDS_DECISION.to_owned()));
        }
        self.claim(run)?;
        // Another process may have driven the run on between its replay and this claim (and let
        // it go): what it journaled is replayed too, now that no other process can write.
        let moved = self.journaled_after(run, recovery.journaled()).map_err(unread);
        let recovery = match moved {
            Ok(false) => Ok(recovery),
            Ok(true) => {
                // Let go of the stale replay first: a run is opened for recovery once at a time.
                drop(recovery);
                replay()
            }
            Err(reason) => Err(reason),
        };
        recovery
            .and_then(|recovery| self.go_on(run, recovery, max_resumes))
            .map_err(|reason| self.let_go(run, reason))
    }

    /// Goes on with run `run`, which this runtime has claimed and `recovery` replayed: resumes
    /// it (a run that has ended stays ended), or parks it once resumed `max_resumes` times;
    /// leaves it (let go) when its calls await a host's decision.
    fn go_on(
        &self,
        run: &RunId,
        mut recovery: Recovery<'_>,
        max_resumes: u32,
    ) -> Result<Recovered, (Code, String)> {
        if recovery.outcome().is_none() {
            if awaits_decision(&recovery) {
                return Err((codes::RUN_NEEDS_RESOLUTION, NEEDS_DECISION.to_owned()));
            }
            let resumes = recovery.resumes();
            if resumes >= max_resumes {
                recovery.park().map_err(|e| reason(e.code(), &e))?;
                let _ = self.pool.block_on(self.journal.end(run, &self.owner));
                return Ok(Recovered::Parked { run: run.clone(), resumes });
            }
        }
        Ok(Recovered::Resumed(recovery.resume()))
    }

    /// Whether run `run`'s journal holds records after `seq`.
    fn journaled_after(&self, run: &RunId, seq: u64) -> Result<bool, JournalError> {
        Ok(!self.pool.block_on(self.journal.read(run, seq, 1))?.is_empty())
    }

    /// Lets go of this runtime's claim on run `run`, which it does not go on with, so that
    /// other processes may, and gives back `reason`, why. Best effort: a claim that cannot be
    /// let go lapses when this process ends.
    fn let_go<T>(&self, run: &RunId, reason: T) -> T {
        let _ = self.pool.block_on(self.journal.release(run, &self.owner));
        reason
    }

    /// Claims run `run` for this runtime before it writes to it (a resume, a park), so that a
    /// run another process took since it was listed is left with the journal's refusal
    /// (`RL7010`) rather than reported resumed and then failed. Any other failure of the claim
    /// is the run's: its task claims it again under the same name and reports what the journal
    /// says through its handle.
    fn claim(&self, run: &RunId) -> Result<(), (Code, String)> {
        match self.pool.block_on(self.journal.claim(run, &self.owner)) {
            Err(refused) if refused.kind == JournalErrorKind::OwnedElsewhere => {
                Err(reason(refused.code(), &refused))
            }
            _ => Ok(()),
        }
    }

    /// Whether run `run` has no journaled event (nor a snapshot): submitted, or stopped before
    /// its start was committed.
    fn never_started(&self, run: &RunId) -> Result<bool, JournalError> {
        self.pool.block_on(async {
            Ok(self.journal.read(run, 0, 1).await?.is_empty()
                && self.journal.load_snapshot(run).await?.is_none())
        })
    }
}

/// Why a run is left: `code`, and `error`'s message without that code before it (some errors
/// name their code in their text, which the listing gives beside it).
fn reason(code: Code, error: &dyn std::fmt::Display) -> (Code, String) {
    (code, code.unprefixed(&error.to_string()).to_owned())
}

/// Whether calls the run left dispatching await a host's decision (`RL8405`).
fn awaits_decision(recovery: &Recovery<'_>) -> bool {
    recovery.uncertain_operations().iter().any(UncertainOperation::needs_decision)
}
