//! Replay (spec §5.3, invariant 6): a fresh run core fed the inputs a journal recorded — host
//! inputs, tool answers, cancellation, the wall-clock timer — must regenerate the journal's
//! events exactly. The first difference is a determinism violation; a journal that ends early
//! leaves calls to resume.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use super::core::{CallHandle, CallRequest, Effect, Input, Outcome, RunCore, SampleRequest, TimerHandle};
use super::event::{Event, RecordedValue};
use super::limits::LimitKey;
use crate::diag::{Code, codes};
use crate::journal::RunHeader;
use crate::value::{Labelled, Value, ValueError, rcve};

/// A core brought up to the journal's end.
#[derive(Debug)]
pub struct Resumed {
    pub core: RunCore,
    /// Calls dispatched and not answered when the journal ends: the ones to recover.
    pub in_flight: Vec<CallRequest>,
    /// Samples requested and not answered when the journal ends: to sample now (nothing has
    /// seen a value for them). A node cancelled meanwhile drops its answer.
    pub unsampled: Vec<SampleRequest>,
    /// How the run ended, when the journal records its end. A cancelled run stays cancelled:
    /// resuming it dispatches nothing (spec §4.6).
    pub outcome: Option<Outcome>,
    /// Timers started and neither fired nor cancelled when the journal ends.
    pub timers: Vec<PendingTimer>,
    /// The journal's last sequence number: where appending continues.
    pub last_seq: u64,
    /// When the shell started the run's wall clock (Unix milliseconds), if the journal records
    /// it: a resumed run's `wall_clock_ms` counts from here.
    pub started_unix_ms: Option<u64>,
    /// What replay kept besides the core, from which the fields above were read: a snapshot of
    /// the resumed run starts from it.
    pub ledger: Ledger,
}

/// A timer a resumed run still waits for (spec §5.3: its deadline is not reset).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PendingTimer {
    pub timer: TimerHandle,
    /// The delay the core chose.
    pub delay: Duration,
    /// The wall-clock deadline the shell armed it with, if that was journaled.
    pub deadline_unix_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReplayError {
    #[error("journal record {seq} is {journal:?}, but replay produced {replayed:?}")]
    Diverged { seq: u64, journal: Box<Option<Event>>, replayed: Box<Option<Event>> },
    #[error("journal record {seq} answers `{node}`, which replay never dispatched")]
    UnknownCall { seq: u64, node: String },
    #[error("journal record {seq} holds bytes that are not a canonical value: {reason}")]
    Unreadable { seq: u64, reason: String },
    #[error(
        "RL8103: the run was recorded under the digest key `{recorded}`, but this core keys digests with `{given}`: operation ids and loop keys of sensitive or secret values would all differ; replay with the key the run was recorded with"
    )]
    DigestKeyMismatch { recorded: String, given: String },
}

impl ReplayError {
    pub fn code(&self) -> Code {
        match self {
            ReplayError::DigestKeyMismatch { .. } => codes::DIGEST_KEY_MISMATCH,
            _ => codes::DETERMINISM_VIOLATION,
        }
    }
}

/// [`replay`] of a journaled run after checking that `core` keys digests under the key id the
/// run's header pins (spec §5.5): under another key its keyed ids could never match. A host
/// resuming a journaled run replays it through here.
pub fn replay_run(core: RunCore, header: &RunHeader, events: &[Event]) -> Result<Resumed, ReplayError> {
    let given = core.digest_key().pinned();
    if header.keyed_digest != given {
        return Err(ReplayError::DigestKeyMismatch { recorded: header.keyed_digest.clone(), given });
    }
    replay(core, events)
}

/// What replay keeps besides the core as it reads a journal: the calls, samples and timers the
/// core asked for and the journal has not settled, how the run ended, and where the journal
/// is. A live shell that writes snapshots keeps one too, fed the same effects and events, so a
/// snapshot (core image and ledger) is the state replay would have reached at its position.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Ledger {
    /// Calls dispatched and not settled, by node id; a cancelled call stays until its late
    /// answer or its end is journaled.
    dispatched: BTreeMap<Arc<str>, CallRequest>,
    /// Calls waiting for permits, by node id: the journal's `CallDispatchPrepared` for one is
    /// the moment its permits were granted.
    parked: BTreeMap<Arc<str>, CallHandle>,
    samples: BTreeMap<Arc<str>, SampleRequest>,
    /// The dispatched calls not answered and not cancelled.
    in_flight: BTreeMap<CallHandle, Arc<str>>,
    /// The sequence number of the `CallDispatchPrepared` of each call in `dispatched`.
    prepared: BTreeMap<Arc<str>, u64>,
    outcome: Option<Outcome>,
    timers: BTreeMap<TimerHandle, PendingTimer>,
    started_unix_ms: Option<u64>,
    /// The last reaction yielded with work left: the core's own events that follow came from a
    /// `Continue`.
    yielded: bool,
    last_seq: u64,
    /// How many times the run was resumed (`RunResumed` records).
    resumes: u32,
}

impl Ledger {
    /// The journal's last sequence number the ledger has seen.
    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// How the run ended, once the core said so.
    pub fn outcome(&self) -> Option<&Outcome> {
        self.outcome.as_ref()
    }

    /// How many times the journal records the run was resumed.
    pub fn resumes(&self) -> u32 {
        self.resumes
    }

    /// Whether the core is between a reaction that yielded and the `Continue` that goes on
    /// with it.
    pub fn yielded(&self) -> bool {
        self.yielded
    }

    /// A reaction begins: a yield before it has been answered.
    pub fn reacting(&mut self) {
        self.yielded = false;
    }

    /// The journal's record `seq` is `event`, which the core produced.
    pub fn recorded(&mut self, seq: u64, event: &Event) {
        match event {
            Event::CallDispatchPrepared { node, .. } => {
                self.prepared.insert(node.clone(), seq);
            }
            Event::CallCompleted { node, .. } | Event::OrphanedCompletion { node } => {
                self.settled(node, true)
            }
            Event::CallFailed { node, .. } | Event::NodeFailed { node, .. } => self.settled(node, false),
            // The host decided what became of the operation: whatever the run does next, its
            // outcome is no longer unknown (a `NotApplied` one is dispatched again, anew).
            Event::OperationResolved { node, .. } => self.settled(node, true),
            Event::IntrinsicSampled { node, .. } => {
                self.samples.remove(node);
            }
            Event::TimerArmed { timer, deadline_unix_ms } => {
                if let Some(pending) = self.timers.get_mut(&TimerHandle(*timer)) {
                    pending.deadline_unix_ms = Some(*deadline_unix_ms);
                }
            }
            Event::TimerFired { timer } => {
                self.timers.remove(&TimerHandle(*timer));
            }
            Event::WallClockStarted { started_unix_ms } => self.started_unix_ms = Some(*started_unix_ms),
            Event::RunResumed => self.resumes = self.resumes.saturating_add(1),
            _ => {}
        }
        self.last_seq = seq;
    }

    /// The call of `node` was answered or failed. A call still in flight is settled; a
    /// cancelled one is settled only by its `final` record (a late answer may follow a failure
    /// that detached it).
    fn settled(&mut self, node: &str, last: bool) {
        let answered =
            self.dispatched.get(node).is_some_and(|request| self.in_flight.remove(&request.call).is_some());
        if answered || last {
            self.dispatched.remove(node);
            self.prepared.remove(node);
        }
    }

    /// The core asked for `effect` (its events are given to [`Ledger::recorded`]).
    pub fn effect(&mut self, effect: &Effect) {
        match effect {
            // A replayed scope's span belongs to the process that ran it.
            Effect::Append(_) | Effect::EnterScope { .. } => {}
            Effect::AwaitPermits { call, node_id, .. } => {
                self.parked.insert(node_id.clone(), *call);
            }
            Effect::Dispatch(request) => {
                self.parked.remove(&request.node_id);
                self.in_flight.insert(request.call, request.node_id.clone());
                self.dispatched.insert(request.node_id.clone(), request.clone());
            }
            Effect::Cancel(call) => {
                self.in_flight.remove(call);
                self.parked.retain(|_, parked| parked != call);
            }
            Effect::StartTimer { timer, delay } => {
                self.timers
                    .insert(*timer, PendingTimer { timer: *timer, delay: *delay, deadline_unix_ms: None });
            }
            Effect::CancelTimer(timer) => {
                self.timers.remove(timer);
            }
            Effect::Finish(end) => self.outcome = Some(end.clone()),
            Effect::Yield => self.yielded = true,
            Effect::Sample(request) => {
                self.samples.insert(request.node_id.clone(), request.clone());
            }
        }
    }

    /// The calls dispatched whose outcome the journal does not record (a cancelled call's
    /// included, until its late answer), in node order.
    pub fn unsettled(&self) -> impl Iterator<Item = &CallRequest> {
        self.dispatched.values()
    }

    /// The sequence number of the `CallDispatchPrepared` of each call dispatched and not
    /// settled, by node id.
    pub fn prepared(&self) -> &BTreeMap<Arc<str>, u64> {
        &self.prepared
    }

    /// The core and what the ledger holds, as a resume continues from them.
    fn resumed(self, core: RunCore) -> Resumed {
        let in_flight =
            self.in_flight.values().filter_map(|node| self.dispatched.get(node).cloned()).collect();
        Resumed {
            core,
            in_flight,
            unsampled: self.samples.values().cloned().collect(),
            outcome: self.outcome.clone(),
            timers: self.timers.values().cloned().collect(),
            last_seq: self.last_seq,
            started_unix_ms: self.started_unix_ms,
            ledger: self,
        }
    }
}

/// Replays `events` (the journal from sequence 1, in order) into `core`, a fresh core of the
/// same program, plan and settings.
pub fn replay(core: RunCore, events: &[Event]) -> Result<Resumed, ReplayError> {
    replay_after(core, Ledger::default(), events)
}

/// Replays `events` — the journal's records after `ledger.last_seq()`, in order — into `core`,
/// which, with `ledger`, is the state replay reached at that position (a fresh core and an
/// empty ledger at the start; a restored snapshot).
pub fn replay_after(mut core: RunCore, mut ledger: Ledger, events: &[Event]) -> Result<Resumed, ReplayError> {
    let first = ledger.last_seq;
    let mut position = 0usize;
    while position < events.len() {
        let seq = first + position as u64 + 1;
        let input = match &events[position] {
            Event::IntrinsicSampled { node, output } => sampled_input(node, output, seq, &ledger.samples)?,
            Event::CallDispatchPrepared { node, .. } if ledger.parked.contains_key(node) => {
                Input::PermitsGranted { call: ledger.parked[node] }
            }
            event => match recorded_input(event, seq, &ledger.dispatched, &core) {
                Err(ReplayError::Diverged { .. }) if ledger.yielded => Input::Continue,
                input => input?,
            },
        };
        ledger.reacting();
        for effect in core.react(input) {
            let Effect::Append(produced) = effect else {
                ledger.effect(&effect);
                continue;
            };
            for replayed in produced {
                let seq = first + position as u64 + 1;
                let journal = events.get(position);
                if !journal.is_some_and(|journal| records(journal, &replayed)) {
                    return Err(ReplayError::Diverged {
                        seq,
                        journal: Box::new(journal.cloned()),
                        replayed: Box::new(Some(replayed)),
                    });
                }
                ledger.recorded(seq, &replayed);
                position += 1;
            }
        }
    }
    Ok(ledger.resumed(core))
}

/// The recorded answer to a sample replay requested: the journal's value, never a new sample.
fn sampled_input(
    node: &str,
    output: &Result<serde_bytes::ByteBuf, String>,
    seq: u64,
    samples: &BTreeMap<Arc<str>, SampleRequest>,
) -> Result<Input, ReplayError> {
    let request = samples.get(node).ok_or_else(|| ReplayError::UnknownCall { seq, node: node.to_owned() })?;
    let answer = match output {
        Ok(bytes) => {
            Ok(rcve::decode(bytes).map_err(|e| ReplayError::Unreadable { seq, reason: e.to_string() })?)
        }
        Err(message) => Err(ValueError::new(codes::SAMPLE_UNAVAILABLE, message.clone())),
    };
    Ok(Input::Sampled { call: request.call, answer })
}

/// The input a journal record carries; any other record at this point is one replay should have
/// produced itself.
fn recorded_input(
    event: &Event,
    seq: u64,
    dispatched: &BTreeMap<Arc<str>, CallRequest>,
    core: &RunCore,
) -> Result<Input, ReplayError> {
    let call = |node: &str| {
        dispatched
            .get(node)
            .map(|r| r.call)
            .ok_or_else(|| ReplayError::UnknownCall { seq, node: node.to_owned() })
    };
    let value = |recorded: &RecordedValue| {
        let bytes = recorded.inline().ok_or_else(|| ReplayError::Unreadable {
            seq,
            reason: "the record names a blob that was not read from the journal".into(),
        })?;
        rcve::decode(bytes).map_err(|e| ReplayError::Unreadable { seq, reason: e.to_string() })
    };
    Ok(match event {
        Event::RunCreated { inputs } => match value(inputs)? {
            Value::List(list) => {
                Input::Start { inputs: core.labelled_inputs(list.iter().cloned().collect()) }
            }
            _ => {
                return Err(ReplayError::Unreadable {
                    seq,
                    reason: "the recorded inputs are not a list".into(),
                });
            }
        },
        Event::CallCompleted { node, output } => {
            let call = call(node)?;
            Input::ToolCompleted { call, value: core.labelled_output(call, value(output)?) }
        }
        Event::CallFailed { node, error } => Input::ToolFailed {
            call: call(node)?,
            error: error.to_tool_error().ok_or_else(|| ReplayError::Unreadable {
                seq,
                reason: "the recorded error details are not an object".into(),
            })?,
        },
        Event::OrphanedCompletion { node } => {
            Input::ToolCompleted { call: call(node)?, value: Labelled::public(Value::Null) }
        }
        Event::CancellationRequested => Input::CancelRequested,
        Event::TimerArmed { timer, deadline_unix_ms } => {
            Input::TimerArmed { timer: TimerHandle(*timer), deadline_unix_ms: *deadline_unix_ms }
        }
        Event::TimerFired { timer } => Input::TimerFired { timer: TimerHandle(*timer) },
        Event::RunResumed => Input::Resume,
        Event::RunParked { resumes } => Input::Park { resumes: *resumes },
        Event::WallClockStarted { started_unix_ms } => {
            Input::WallClockStarted { started_unix_ms: *started_unix_ms }
        }
        Event::OperationResolved { node, resolution } => Input::OperationResolved {
            call: call(node)?,
            resolution: resolution
                .to_resolution()
                .map_err(|reason| ReplayError::Unreadable { seq, reason })?,
        },
        Event::FreshGenerationAuthorized { node, generation } => {
            Input::FreshGenerationAuthorized { call: call(node)?, generation: *generation }
        }
        Event::CallHeartbeat { node, progress } => {
            Input::CallHeartbeat { call: call(node)?, progress: progress.clone() }
        }
        Event::LimitExceeded { limit, current, .. } if limit == LimitKey::WallClockMs.as_str() => {
            Input::WallClockExpired { elapsed_ms: *current }
        }
        other => {
            return Err(ReplayError::Diverged {
                seq,
                journal: Box::new(Some(other.clone())),
                replayed: Box::new(None),
            });
        }
    })
}

/// Whether the journal's `journal` is the record of the core's `replayed`: the same event, or a
/// `CallDispatchPrepared` of a journal written before dispatches recorded their operation id.
fn records(journal: &Event, replayed: &Event) -> bool {
    match (journal, replayed) {
        (
            Event::CallDispatchPrepared { operation: None, node, tool, attempt },
            Event::CallDispatchPrepared { node: n, tool: t, attempt: a, .. },
        ) => node == n && tool == t && attempt == a,
        _ => journal == replayed,
    }
}
