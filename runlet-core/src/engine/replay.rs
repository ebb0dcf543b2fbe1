//! Replay (spec §5.3, invariant 6): a fresh run core fed the inputs a journal recorded — host
//! inputs, tool answers, cancellation, the wall-clock timer — must regenerate the journal's
//! events exactly. The first difference is a determinism violation; a journal that ends early
//! leaves calls to resume.

use std::collections::BTreeMap;

use super::core::{CallHandle, CallRequest, Effect, Input, Outcome, RunCore};
use super::event::Event;
use super::limits::LimitKey;
use crate::diag::{Code, codes};
use crate::value::{Labelled, Value, rcve};

/// A core brought up to the journal's end.
#[derive(Debug)]
pub struct Resumed {
    pub core: RunCore,
    /// Calls dispatched and not answered when the journal ends: the ones to recover.
    pub in_flight: Vec<CallRequest>,
    /// How the run ended, when the journal records its end.
    pub outcome: Option<Outcome>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReplayError {
    #[error("journal record {seq} is {journal:?}, but replay produced {replayed:?}")]
    Diverged { seq: u64, journal: Box<Option<Event>>, replayed: Box<Option<Event>> },
    #[error("journal record {seq} answers `{node}`, which replay never dispatched")]
    UnknownCall { seq: u64, node: String },
    #[error("journal record {seq} holds bytes that are not a canonical value: {reason}")]
    Unreadable { seq: u64, reason: String },
}

impl ReplayError {
    pub fn code(&self) -> Code {
        codes::DETERMINISM_VIOLATION
    }
}

/// Replays `events` (the journal from sequence 1, in order) into `core`, a fresh core of the
/// same program, plan and settings.
pub fn replay(mut core: RunCore, events: &[Event]) -> Result<Resumed, ReplayError> {
    let mut position = 0usize;
    let mut dispatched: BTreeMap<String, CallRequest> = BTreeMap::new();
    let mut in_flight: BTreeMap<CallHandle, String> = BTreeMap::new();
    let mut outcome = None;
    while position < events.len() {
        let seq = position as u64 + 1;
        let input = recorded_input(&events[position], seq, &dispatched)?;
        for effect in core.react(input) {
            match effect {
                Effect::Append(produced) => {
                    for replayed in produced {
                        let journal = events.get(position);
                        if journal != Some(&replayed) {
                            let seq = position as u64 + 1;
                            return Err(ReplayError::Diverged {
                                seq,
                                journal: Box::new(journal.cloned()),
                                replayed: Box::new(Some(replayed)),
                            });
                        }
                        position += 1;
                    }
                }
                Effect::Dispatch(request) => {
                    in_flight.insert(request.call, request.node_id.clone());
                    dispatched.insert(request.node_id.clone(), request);
                }
                Effect::Cancel(call) => {
                    in_flight.remove(&call);
                }
                Effect::Finish(end) => outcome = Some(end),
            }
        }
        if let Some(Event::CallCompleted { node, .. } | Event::CallFailed { node, .. }) =
            events.get(seq as usize - 1)
        {
            in_flight.retain(|_, n| n != node);
        }
    }
    let in_flight = in_flight.values().filter_map(|node| dispatched.get(node).cloned()).collect();
    Ok(Resumed { core, in_flight, outcome })
}

/// The input a journal record carries; any other record at this point is one replay should have
/// produced itself.
fn recorded_input(
    event: &Event,
    seq: u64,
    dispatched: &BTreeMap<String, CallRequest>,
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
                Input::Start { inputs: list.iter().cloned().map(Labelled::public).collect() }
            }
            _ => {
                return Err(ReplayError::Unreadable {
                    seq,
                    reason: "the recorded inputs are not a list".into(),
                });
            }
        },
        Event::CallCompleted { node, output } => {
            Input::ToolCompleted { call: call(node)?, value: Labelled::public(value(output)?) }
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
