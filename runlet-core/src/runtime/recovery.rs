//! The host recovery API (spec §4.4, §5.3, §5.4): bringing an interrupted run back from the
//! runtime's journal, journaling host decisions about its uncertain operations, and resuming it.

use super::{Driving, Executable, RunHandle, RunOptions, Runtime, config_digest};
use crate::analyze::WorkflowIdentity;
use crate::diag::{Code, codes};
use std::sync::Arc;

use crate::engine::event::{Event, EventDecodeError};
use crate::engine::snapshot;
use crate::engine::{CallRequest, Effect, Input, Outcome, Resolution};
use crate::engine::{DispatchId, OperationId};
use crate::engine::{Ledger, ReplayError, Resumed, RunCore, replay_after};
use crate::engine::{LimitKey, Limits};
use crate::engine::{operation_of, records_after, resume};
use crate::journal::{JournalError, JournalErrorKind, RunHeader, RunId};
use crate::schema::{ExecutionClass, validate};

/// Why a run could not be recovered, or a host decision about it was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RecoveryError {
    #[error(
        "RL8104: the program was compiled by another runtime: compile it with the runtime that resumes it"
    )]
    ForeignProgram,
    #[error(transparent)]
    Journal(#[from] JournalError),
    #[error(transparent)]
    Decode(#[from] EventDecodeError),
    #[error(transparent)]
    Replay(#[from] ReplayError),
    #[error(
        "RL7301: run `{run}` pins {field} `{journal}`, but this runtime would resume it with `{runtime}`"
    )]
    PinMismatch { run: String, field: &'static str, journal: String, runtime: String },
    #[error(
        "RL7305: run `{run}` never started: its journal holds the header but no event, so its worker stopped before the start was committed and nothing ran; start it from the inputs its header retains (`Runtime::recover_run`, `runlet resume {run}`), or delete it"
    )]
    NotStarted { run: String },
    #[error(
        "RL8401: operation `{operation}` is not uncertain: no call of the run is left dispatching under it without a journaled decision"
    )]
    NotUncertain { operation: String },
    #[error("RL8402: `{tool}` is `{class}`: {reason}")]
    DecisionRefused { tool: String, class: &'static str, reason: &'static str },
    #[error("RL8403: `{tool}` does not accept the resolved output: {reason}")]
    OutputMismatch { tool: String, reason: String },
    #[error(
        "RL7304: run `{run}` was written by runtime {version}, and this runtime ({current}) replays runs written by {oldest} through {current}: resume it with runtime {version}, or cancel it"
    )]
    ReplayIncompatible { run: String, version: String, oldest: &'static str, current: &'static str },
    #[error("RL8404: run `{run}` has ended: {status}")]
    Ended { run: String, status: &'static str },
    #[error("RL7303: run `{run}` never started, and what its header retains cannot start it: {reason}")]
    Unstartable { run: String, reason: String },
}

/// The JSON hosts and operators read an uncertain operation as (`runlet runs show`,
/// `runlet_run_uncertain_json`): `{"operation_id", "node", "tool", "class", "dispatch_id",
/// "prepared_seq", "generation", "needs_decision"}`.
impl serde::Serialize for UncertainOperation {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut fields = serializer.serialize_struct("UncertainOperation", 8)?;
        fields.serialize_field("operation_id", &self.operation_id)?;
        fields.serialize_field("node", &self.node_id)?;
        fields.serialize_field("tool", &self.tool)?;
        fields.serialize_field("class", self.class.as_str())?;
        fields.serialize_field("dispatch_id", &self.dispatch_id)?;
        fields.serialize_field("prepared_seq", &self.prepared_seq)?;
        fields.serialize_field("generation", &self.generation)?;
        fields.serialize_field("needs_decision", &self.needs_decision())?;
        fields.end()
    }
}

impl UncertainOperation {
    /// Whether a resume leaves it to the host (spec §5.4): an `at_most_once` or `unsafe` call
    /// is never sent again on its own, so until a decision is journaled it fails uncertain
    /// (`RL6109`). Calls of the other classes are sent again, or asked about first
    /// (`recoverable`), by the resume itself.
    pub fn needs_decision(&self) -> bool {
        matches!(self.class, ExecutionClass::AtMostOnce | ExecutionClass::Unsafe)
    }
}

impl RecoveryError {
    pub fn code(&self) -> Code {
        match self {
            RecoveryError::ForeignProgram => codes::FOREIGN_PROGRAM,
            RecoveryError::Journal(error) => error.code(),
            RecoveryError::Decode(error) => error.code(),
            RecoveryError::Replay(error) => error.code(),
            RecoveryError::PinMismatch { .. } => codes::RUN_PIN_MISMATCH,
            RecoveryError::NotStarted { .. } => codes::RUN_NOT_STARTED,
            RecoveryError::NotUncertain { .. } => codes::OPERATION_NOT_UNCERTAIN,
            RecoveryError::DecisionRefused { .. } => codes::RECOVERY_DECISION_REFUSED,
            RecoveryError::OutputMismatch { .. } => codes::RESOLVED_OUTPUT_MISMATCH,
            RecoveryError::ReplayIncompatible { .. } => codes::REPLAY_INCOMPATIBLE,
            RecoveryError::Ended { .. } => codes::RUN_ENDED,
            RecoveryError::Unstartable { .. } => codes::RUN_RETAINED_UNREADABLE,
        }
    }
}

/// A call an interrupted run left dispatching: its outcome is unknown until the host decides or
/// the run resumes (invariant 8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UncertainOperation {
    pub operation_id: OperationId,
    pub node_id: String,
    pub tool: String,
    pub class: ExecutionClass,
    /// The operation generation it was dispatched under (0 unless the host authorized one).
    pub generation: u32,
    /// The id of the dispatch left uncertain (the operation's transport attempt).
    pub dispatch_id: DispatchId,
    /// The sequence number of the `CallDispatchPrepared` record of that dispatch.
    pub prepared_seq: u64,
}

/// An interrupted run brought up to its journal's end, for host decisions and resumption.
/// Nothing runs until [`Recovery::resume`]; decisions are journaled as they are made (blocking
/// the calling thread; not for use inside an async task). The run must not be running
/// elsewhere: the journal's sequence check refuses the second of two writers, so a decision
/// racing a live worker fails with `RL7003` rather than interleaving.
pub struct Recovery<'r> {
    runtime: &'r Runtime,
    program: Executable,
    header: Arc<RunHeader>,
    driving: Driving,
    workflow: WorkflowIdentity,
    resumed: Resumed,
    snapshot: SnapshotUse,
    opened: Opened<'r>,
}

/// A run opened for recovery in its runtime: no other recovery of it opens there until this
/// one is dropped, or resumed (the run is live then, which keeps them out).
struct Opened<'r> {
    runtime: &'r Runtime,
    run: RunId,
}

impl Drop for Opened<'_> {
    fn drop(&mut self) {
        self.runtime.recovering.lock().remove(&self.run);
    }
}

/// Whether a recovery started from a snapshot (spec §5.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SnapshotUse {
    /// The run has none: the whole journal was replayed.
    None,
    /// The snapshot at `upto_seq` was restored; only the records after it were replayed.
    Restored { upto_seq: u64 },
    /// The snapshot at `upto_seq` did not verify, for `reason`; the whole journal was replayed.
    Refused { upto_seq: u64, reason: String },
}

impl std::fmt::Debug for Recovery<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recovery").field("run_id", &self.header.run_id).finish_non_exhaustive()
    }
}

impl Runtime {
    /// Brings run `run_id` of `program` back from this runtime's journal: checks what its header
    /// pins (source, registry, versions, configuration with `options.limits`, encodings), then
    /// replays its events. A run with no journaled event never started (`RL7305`). Blocks the
    /// calling thread; not for use inside an async task.
    pub fn recovery(
        &self,
        program: &Executable,
        run_id: &RunId,
        options: RunOptions,
    ) -> Result<Recovery<'_>, RecoveryError> {
        if !self.compiled(program) {
            return Err(RecoveryError::ForeignProgram);
        }
        let opened = self.open_for_recovery(run_id)?;
        let limits = self.limits.overridden_by(&options.limits);
        let (header, resumed, snapshot) = self.pool.block_on(async {
            let header = self.journal.header(run_id).await?;
            self.check_pins(program, &header, &limits)?;
            let (core, ledger, snapshot) = self.restored(program, &limits, &header).await?;
            let records = self.journal.read(run_id, ledger.last_seq(), usize::MAX).await?;
            // Nothing was dispatched before the first commit, and the inputs are in it.
            if records.is_empty() && ledger.last_seq() == 0 {
                return Err(RecoveryError::NotStarted { run: run_id.to_string() });
            }
            let mut events = records.iter().map(Event::decode_record).collect::<Result<Vec<_>, _>>()?;
            for event in &mut events {
                event.attach_blobs(self.journal.as_ref()).await?;
            }
            Ok::<_, RecoveryError>((header, replay_after(core, ledger, &events)?, snapshot))
        })?;
        Ok(Recovery {
            runtime: self,
            program: program.clone(),
            header: Arc::new(header),
            driving: Driving {
                own_concurrency: options.limits.get(LimitKey::Concurrency),
                limits,
                host_data: options.host_data,
            },
            workflow: program.compiled.identity().clone(),
            resumed,
            snapshot,
            opened,
        })
    }

    /// Marks `run` opened for recovery, unless this runtime is driving it or recovering it
    /// already (`RL7010`): two writers of one run in one process would fail each other.
    fn open_for_recovery(&self, run: &RunId) -> Result<Opened<'_>, RecoveryError> {
        let mut recovering = self.recovering.lock();
        let live = self.observers.get(run).is_some_and(|observer| !observer.is_finished());
        if live || !recovering.insert(run.clone()) {
            return Err(RecoveryError::Journal(JournalError::new(
                JournalErrorKind::OwnedElsewhere,
                format!(
                    "run `{run}` is running or being recovered in this runtime: wait until that ends, or cancel it, before resuming or resolving it"
                ),
            )));
        }
        Ok(Opened { runtime: self, run: run.clone() })
    }

    /// The state replay starts from: the run's latest snapshot when it verifies (spec §5.3),
    /// else a fresh core at the first record; and what became of the snapshot.
    async fn restored(
        &self,
        program: &Executable,
        limits: &Limits,
        header: &RunHeader,
    ) -> Result<(RunCore, Ledger, SnapshotUse), RecoveryError> {
        let fresh = self.core_for(program, limits);
        let Some(snapshot) = self.journal.load_snapshot(&header.run_id).await? else {
            return Ok((fresh, Ledger::default(), SnapshotUse::None));
        };
        let at = snapshot.upto_seq;
        let record = match at {
            0 => None,
            _ => self.journal.read(&header.run_id, at - 1, 1).await?.pop(),
        };
        Ok(match snapshot::restore(&snapshot, header, record.as_ref(), fresh) {
            Ok((core, ledger)) => (core, ledger, SnapshotUse::Restored { upto_seq: at }),
            Err(reason) => {
                let fresh = self.core_for(program, limits);
                (fresh, Ledger::default(), SnapshotUse::Refused { upto_seq: at, reason })
            }
        })
    }

    /// Resumes the interrupted run `run_id` of `program`, started without per-run options, from
    /// this runtime's journal: finished work is never repeated, calls left dispatching take the
    /// host's journaled decisions or are recovered by execution class (spec §5.4), and a run the
    /// journal records as ended stays ended. Blocks while it replays the journal.
    pub fn resume(&self, program: &Executable, run_id: &RunId) -> Result<RunHandle, RecoveryError> {
        Ok(self.recovery(program, run_id, RunOptions::default())?.resume())
    }

    /// Journals the host's resolution of an uncertain operation of run `run_id` (started
    /// without per-run options); the next resume applies it. See [`Recovery::resolve`].
    pub fn resolve_operation(
        &self,
        program: &Executable,
        run_id: &RunId,
        operation: &OperationId,
        resolution: Resolution,
    ) -> Result<(), RecoveryError> {
        self.recovery(program, run_id, RunOptions::default())?.resolve(operation, resolution)
    }

    /// Journals the host's authorization of a fresh generation of an uncertain operation of run
    /// `run_id` (started without per-run options). See [`Recovery::authorize_fresh_generation`].
    pub fn authorize_fresh_generation(
        &self,
        program: &Executable,
        run_id: &RunId,
        operation: &OperationId,
    ) -> Result<OperationId, RecoveryError> {
        self.recovery(program, run_id, RunOptions::default())?.authorize_fresh_generation(operation)
    }

    /// Refuses a journal whose header pins something else than this runtime runs `program` with.
    pub(super) fn check_pins(
        &self,
        program: &Executable,
        header: &RunHeader,
        limits: &Limits,
    ) -> Result<(), RecoveryError> {
        if !replays(&header.runtime_version) {
            return Err(RecoveryError::ReplayIncompatible {
                run: header.run_id.to_string(),
                version: header.runtime_version.clone(),
                oldest: REPLAYS_FROM,
                current: env!("CARGO_PKG_VERSION"),
            });
        }
        let identity = program.compiled.identity();
        let pinned = [
            ("the source digest", header.source_digest.clone(), identity.source_digest.to_string()),
            ("the registry digest", header.registry_digest.clone(), identity.registry_digest.to_string()),
            ("language version", header.language_version.to_string(), identity.language_version.to_string()),
            ("the configuration digest", header.config_digest.clone(), config_digest(&self.settings, limits)),
            ("the digest key", header.keyed_digest.clone(), self.digest_key.pinned()),
            ("value encoding version", header.value_encoding_version.to_string(), "1".to_owned()),
            ("event encoding version", header.event_encoding_version.to_string(), "1".to_owned()),
        ];
        match pinned.into_iter().find(|(_, journal, runtime)| journal != runtime) {
            Some((field, journal, runtime)) => {
                Err(RecoveryError::PinMismatch { run: header.run_id.to_string(), field, journal, runtime })
            }
            None => Ok(()),
        }
    }
}

/// The oldest runtime version whose journals this one replays: its declared replay
/// compatibility (spec §5.5) runs from here through its own version. Raised whenever a change
/// makes a journal of an older version replay differently.
pub const REPLAYS_FROM: &str = "0.1.0";

/// Whether a run written by runtime `version` replays here: `REPLAYS_FROM` ≤ version ≤ this
/// runtime's version, comparing `major.minor.patch` numerically.
fn replays(version: &str) -> bool {
    let parse = |text: &str| -> Option<[u64; 3]> {
        let mut parts = text.split('.').map(|part| part.parse::<u64>().ok());
        let triple = [parts.next()??, parts.next()??, parts.next()??];
        parts.next().is_none().then_some(triple)
    };
    match (parse(REPLAYS_FROM), parse(version), parse(env!("CARGO_PKG_VERSION"))) {
        (Some(oldest), Some(version), Some(current)) => oldest <= version && version <= current,
        _ => false,
    }
}

impl Recovery<'_> {
    /// How the run ended, when its journal records its end.
    pub fn outcome(&self) -> Option<&Outcome> {
        self.resumed.outcome.as_ref()
    }

    /// Journals the run's cancellation, as if its host had cancelled it: its calls left
    /// dispatching are abandoned (their outcome stays what it was), and a resume ends at once.
    /// Refused for a run that has ended (`RL8404`).
    pub fn cancel(&mut self) -> Result<(), RecoveryError> {
        self.end_with(Input::CancelRequested)
    }

    /// The sequence number of the last record replayed: where the run goes on.
    pub(super) fn journaled(&self) -> u64 {
        self.resumed.last_seq
    }

    /// How many times the journal records the run was resumed.
    pub fn resumes(&self) -> u32 {
        self.resumed.ledger.resumes()
    }

    /// Parks the run as failed (`RL7306`) instead of resuming it again: what a host does with a
    /// run resumed as many times as it allows without ending ([`Runtime::recover_interrupted`]).
    /// Its calls left dispatching are abandoned, as [`Recovery::cancel`] abandons them. Refused
    /// for a run that has ended (`RL8404`).
    pub fn park(&mut self) -> Result<(), RecoveryError> {
        let resumes = self.resumes();
        self.end_with(Input::Park { resumes })
    }

    /// Journals `ending`, an input that ends the run at once, unless the run has ended.
    fn end_with(&mut self, ending: Input) -> Result<(), RecoveryError> {
        if let Some(outcome) = &self.resumed.outcome {
            let status = match outcome {
                Outcome::Succeeded(_) => "it succeeded",
                Outcome::Failed(_) => "it failed",
                Outcome::Cancelled => "it was cancelled",
            };
            return Err(RecoveryError::Ended { run: self.header.run_id.to_string(), status });
        }
        self.journal(ending)?;
        self.resumed.outcome = self.resumed.ledger.outcome().cloned();
        Ok(())
    }

    /// The operations the run left dispatching that no host decision covers yet, in node order.
    /// Empty once the journal records the run's end.
    pub fn uncertain_operations(&self) -> Vec<UncertainOperation> {
        self.pending().map(|request| self.operation(request)).collect()
    }

    /// The operations of a run that has ended whose calls were dispatched and never answered
    /// (cancelled in flight, say): nothing will settle them, and whether they took effect stays
    /// unknown. Empty while the run has not ended.
    pub fn abandoned_operations(&self) -> Vec<UncertainOperation> {
        match self.resumed.outcome {
            Some(_) => self.resumed.ledger.unsettled().map(|request| self.operation(request)).collect(),
            None => Vec::new(),
        }
    }

    /// The operation that call `request` dispatched.
    fn operation(&self, request: &CallRequest) -> UncertainOperation {
        let tool = self.runtime.registry.tool(request.tool);
        let operation_id = operation_of(&self.workflow, tool, request);
        UncertainOperation {
            dispatch_id: operation_id.dispatch_id(request.dispatch_generation),
            operation_id,
            node_id: request.node_id.to_string(),
            tool: tool.name.to_string(),
            class: tool.execution,
            generation: request.operation_generation,
            prepared_seq: self.resumed.ledger.prepared().get(&request.node_id).copied().unwrap_or(0),
        }
    }

    /// Journals the host's resolution of `operation` (spec §5.4); the next resume applies it.
    /// `Applied(output)` — validated against the tool's output schema — makes the call succeed
    /// with that output; `NotApplied` dispatches it once more under the same operation id (a
    /// new dispatch id; refused for `unsafe` tools, which need a fresh generation);
    /// `Failed(error)` fails it with that error, no longer uncertain.
    pub fn resolve(&mut self, operation: &OperationId, resolution: Resolution) -> Result<(), RecoveryError> {
        let request = self.uncertain(operation)?;
        let tool = self.runtime.registry.tool(request.tool);
        match &resolution {
            Resolution::Applied(output) => validate(self.runtime.registry.schemas(), tool.output, output)
                .map_err(|mismatch| RecoveryError::OutputMismatch {
                    tool: tool.name.to_string(),
                    reason: mismatch.to_string(),
                })?,
            Resolution::NotApplied if tool.execution == ExecutionClass::Unsafe => {
                return Err(RecoveryError::DecisionRefused {
                    tool: tool.name.to_string(),
                    class: tool.execution.as_str(),
                    reason: "an unsafe operation is never dispatched again under the same operation id; authorize a fresh generation or resolve it as failed",
                });
            }
            Resolution::NotApplied | Resolution::Failed(_) => {}
        }
        self.journal(Input::OperationResolved { call: request.call, resolution })
    }

    /// Journals the host's authorization of a fresh generation of `operation` (spec §5.4): the
    /// next resume dispatches the call under generation + 1, a new operation id, which this
    /// returns. Allowed for `unsafe` tools only: `at_most_once` ones reach here only with a
    /// prepared dispatch, and the other classes keep their operation id.
    pub fn authorize_fresh_generation(
        &mut self,
        operation: &OperationId,
    ) -> Result<OperationId, RecoveryError> {
        let request = self.uncertain(operation)?;
        let tool = self.runtime.registry.tool(request.tool);
        let reason = match tool.execution {
            ExecutionClass::Unsafe => None,
            ExecutionClass::AtMostOnce => Some(
                "its dispatch was prepared (`CallDispatchPrepared` is journaled), so only a resolution can settle it",
            ),
            ExecutionClass::Pure | ExecutionClass::Idempotent | ExecutionClass::Recoverable => {
                Some("its operation id never changes; resolve it as not applied to dispatch it again")
            }
        };
        if let Some(reason) = reason {
            return Err(RecoveryError::DecisionRefused {
                tool: tool.name.to_string(),
                class: tool.execution.as_str(),
                reason,
            });
        }
        let generation = request.operation_generation + 1;
        let fresh = CallRequest { operation_generation: generation, ..request.clone() };
        let fresh_operation = operation_of(&self.workflow, tool, &fresh);
        self.journal(Input::FreshGenerationAuthorized { call: request.call, generation })?;
        Ok(fresh_operation)
    }

    /// Continues the run on the runtime's pool (see [`Runtime::resume`]).
    pub fn resume(self) -> RunHandle {
        let Recovery { runtime, program, header, driving, resumed, opened, .. } = self;
        let owner = Arc::clone(&runtime.owner);
        let journaled = resumed.last_seq;
        let handle = runtime.launch(&program, &header, driving, journaled, move |env| async move {
            env.journal.claim(&env.run_id, &owner).await?;
            resume(resumed, env).await
        });
        // Only now that the run is live, which keeps other recoveries of it out.
        drop(opened);
        handle
    }

    /// The calls left dispatching that await a host decision.
    fn pending(&self) -> impl Iterator<Item = &CallRequest> {
        let open = self.resumed.outcome.is_none();
        self.resumed
            .in_flight
            .iter()
            .filter(move |request| open && self.resumed.core.awaits_host_decision(request.call))
    }

    fn uncertain(&self, operation: &OperationId) -> Result<CallRequest, RecoveryError> {
        self.pending()
            .find(|request| {
                operation_of(&self.workflow, self.runtime.registry.tool(request.tool), request) == *operation
            })
            .cloned()
            .ok_or_else(|| RecoveryError::NotUncertain { operation: operation.to_string() })
    }

    /// Feeds a host decision to the replayed core and journals the event it records; the
    /// ledger follows, as replay's would.
    fn journal(&mut self, decision: Input) -> Result<(), RecoveryError> {
        let (mut events, mut effects) = (Vec::new(), Vec::new());
        self.resumed.ledger.reacting();
        for effect in self.resumed.core.react(decision) {
            match effect {
                Effect::Append(batch) => events.extend(batch),
                effect => effects.push(effect),
            }
        }
        // Decisions record no value large enough for a blob worth its lookup.
        let (records, _) = records_after(self.resumed.last_seq, &events, 0, None);
        let (journal, run) = (&self.runtime.journal, &self.header.run_id);
        self.resumed.last_seq =
            self.runtime.pool.block_on(journal.append(run, self.resumed.last_seq, &records))?;
        for (record, event) in records.iter().zip(&events) {
            self.resumed.ledger.recorded(record.seq, event);
        }
        for effect in &effects {
            self.resumed.ledger.effect(effect);
        }
        Ok(())
    }

    /// Whether this recovery started from a snapshot, and which.
    pub fn snapshot(&self) -> &SnapshotUse {
        &self.snapshot
    }
}
