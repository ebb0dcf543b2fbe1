//! Replay (spec §5.3, invariant 6): a fresh run core fed the inputs a journal recorded — host
//! inputs, tool answers, cancellation, the wall-clock timer — must regenerate the journal's
//! events exactly. The first difference is a determinism violation; a journal that ends early
//! leaves calls to resume.

use std::collections::BTreeMap;
use std::time::Duration;

use super::core::{CallHandle, CallRequest, Effect, Input, Outcome, RunCore, SampleRequest, TimerHandle};
use super::event::Event;
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
}

/// A timer a resumed run still waits for (spec §5.3: its deadline is not reset).
#[derive(Debug, Clone, PartialEq, Eq)]
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

/// Replays `events` (the journal from sequence 1, in order) into `core`, a fresh core of the
/// same program, plan and settings.
pub fn replay(mut core: RunCore, events: &[Event]) -> Result<Resumed, ReplayError> {
    let mut position = 0usize;
    let mut dispatched: BTreeMap<String, CallRequest> = BTreeMap::new();
    // Calls waiting for permits, by node id: the journal's `CallDispatchPrepared` for one is
    // the moment its permits were granted.
    let mut parked: BTreeMap<String, CallHandle> = BTreeMap::new();
    let mut samples: BTreeMap<String, SampleRequest> = BTreeMap::new();
    let mut in_flight: BTreeMap<CallHandle, String> = BTreeMap::new();
    let mut outcome = None;
    let mut timers: BTreeMap<TimerHandle, PendingTimer> = BTreeMap::new();
    let mut started_unix_ms = None;
    // The last reaction yielded with work left: the core's own events that follow came from a
    // `Continue`.
    let mut yielded = false;
    while position < events.len() {
        let seq = position as u64 + 1;
        let input = match &events[position] {
            Event::IntrinsicSampled { node, output } => sampled_input(node, output, seq, &mut samples)?,
            Event::CallDispatchPrepared { node, .. } if parked.contains_key(node) => {
                Input::PermitsGranted { call: parked[node] }
            }
            event => match recorded_input(event, seq, &dispatched, &core) {
                Err(ReplayError::Diverged { .. }) if yielded => Input::Continue,
                input => input?,
            },
        };
        yielded = false;
        for effect in core.react(input) {
            match effect {
                Effect::Append(produced) => {
                    for replayed in produced {
                        let journal = events.get(position);
                        if !journal.is_some_and(|journal| records(journal, &replayed)) {
                            let seq = position as u64 + 1;
                            return Err(ReplayError::Diverged {
                                seq,
                                journal: Box::new(journal.cloned()),
                                replayed: Box::new(Some(replayed)),
                            });
                        }
                        // The core settles a call itself when it applies a host's decision or
                        // fails an uncertain one on resume.
                        if let Event::CallCompleted { node, .. }
                        | Event::CallFailed { node, .. }
                        | Event::NodeFailed { node, .. } = &replayed
                        {
                            in_flight.retain(|_, n| n != node);
                        }
                        position += 1;
                    }
                }
                Effect::AwaitPermits { call, node_id, .. } => {
                    parked.insert(node_id, call);
                }
                Effect::Dispatch(request) => {
                    parked.remove(&request.node_id);
                    in_flight.insert(request.call, request.node_id.clone());
                    dispatched.insert(request.node_id.clone(), request);
                }
                Effect::Cancel(call) => {
                    in_flight.remove(&call);
                    parked.retain(|_, parked| *parked != call);
                }
                Effect::StartTimer { timer, delay } => {
                    timers.insert(timer, PendingTimer { timer, delay, deadline_unix_ms: None });
                }
                Effect::CancelTimer(timer) => {
                    timers.remove(&timer);
                }
                Effect::Finish(end) => outcome = Some(end),
                Effect::Yield => yielded = true,
                Effect::Sample(request) => {
                    samples.insert(request.node_id.clone(), request);
                }
            }
        }
        match events.get(seq as usize - 1) {
            Some(Event::CallCompleted { node, .. } | Event::CallFailed { node, .. }) => {
                in_flight.retain(|_, n| n != node);
            }
            Some(Event::TimerArmed { timer, deadline_unix_ms }) => {
                if let Some(pending) = timers.get_mut(&TimerHandle(*timer)) {
                    pending.deadline_unix_ms = Some(*deadline_unix_ms);
                }
            }
            Some(Event::TimerFired { timer }) => {
                timers.remove(&TimerHandle(*timer));
            }
            Some(Event::WallClockStarted { started_unix_ms: started }) => started_unix_ms = Some(*started),
            _ => {}
        }
    }
    let in_flight = in_flight.values().filter_map(|node| dispatched.get(node).cloned()).collect();
    let unsampled = samples.into_values().collect();
    let timers = timers.into_values().collect();
    Ok(Resumed { core, in_flight, unsampled, outcome, timers, last_seq: position as u64, started_unix_ms })
}

/// The recorded answer to a sample replay requested: the journal's value, never a new sample.
fn sampled_input(
    node: &str,
    output: &Result<serde_bytes::ByteBuf, String>,
    seq: u64,
    samples: &mut BTreeMap<String, SampleRequest>,
) -> Result<Input, ReplayError> {
    let request =
        samples.remove(node).ok_or_else(|| ReplayError::UnknownCall { seq, node: node.to_owned() })?;
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
    dispatched: &BTreeMap<String, CallRequest>,
    core: &RunCore,
) -> Result<Input, ReplayError> {
    let call = |node: &str| {
        dispatched
            .get(node)
            .map(|r| r.call)
            .ok_or_else(|| ReplayError::UnknownCall { seq, node: node.to_owned() })
    };
    let value = |bytes: &[u8]| {
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
