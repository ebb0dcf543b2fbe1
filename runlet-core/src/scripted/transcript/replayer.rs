//! The replay executor: answers each call from the transcript entry recorded at the same call key
//! (never by arrival order) without calling any tool, and each sample from the value recorded at
//! the same node, and keeps every drift and unconsumed entry.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use parking_lot::Mutex;

use super::{CallKey, SampleEntry, Transcript, TranscriptEntry, request_text};
use crate::analyze::WorkflowIdentity;
use crate::diag::{Code, codes};
use crate::engine::OperationId;
use crate::engine::Sampler;
use crate::engine::{ToolCall, ToolCapabilities, ToolError, ToolExecutor, ToolOutput};
use crate::stdlib::{Intrinsic, SampledFunction};
use crate::value::{DigestKey, List, Value, ValueError};

/// Answers calls from a transcript. A call is answered by the first unused entry recorded at its
/// [`CallKey`] when that entry's operation id and tool equal the call's (the operation id covers
/// the canonical arguments and schema version); anything else is drift, answered with an
/// `RL8304` error. An entry recorded as cancelled answers only once its call is cancelled again.
pub struct ReplayExecutor {
    /// The id of the digest key the transcript was recorded under, when it names one.
    recorded_key: Option<Arc<str>>,
    entries: Mutex<BTreeMap<CallKey, VecDeque<TranscriptEntry>>>,
    /// Recorded samples by node id, each answering once.
    samples: Mutex<BTreeMap<Arc<str>, SampleEntry>>,
    drift: Mutex<Vec<ReplayMismatch>>,
}

impl fmt::Debug for ReplayExecutor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReplayExecutor").field("drift", &self.drift.lock().len()).finish_non_exhaustive()
    }
}

/// What the replayed run asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestedCall {
    pub key: CallKey,
    pub operation_id: OperationId,
    pub tool: Arc<str>,
    pub arguments: List,
}

/// Why a replay does not match its transcript.
#[derive(Debug, Clone, PartialEq)]
pub enum ReplayMismatch {
    /// The transcript was recorded with another program or registry (`RL8303`).
    WorkflowChanged { recorded: Box<WorkflowIdentity>, current: Box<WorkflowIdentity> },
    /// The run asked for something else than was recorded at the call's key (`RL8304`).
    Drift { recorded: Box<TranscriptEntry>, requested: Box<RequestedCall> },
    /// The run asked for a call the transcript has no unused entry for (`RL8304`); `nearest` is an
    /// unused entry of the same call site, when there is one.
    NotRecorded { requested: Box<RequestedCall>, nearest: Option<Box<TranscriptEntry>> },
    /// The run ended without asking for a recorded call (`RL8305`).
    Unconsumed { recorded: Box<TranscriptEntry> },
    /// The run sampled an intrinsic the transcript recorded no value of at that node (`RL8304`).
    SampleNotRecorded { node_id: Arc<str>, function: SampledFunction },
    /// The replay mismatched, and the transcript was recorded under another digest key than
    /// the replaying runtime's (`RL8103`): calls with sensitive or secret values get other ids.
    DigestKeyChanged { recorded: Arc<str>, current: Arc<str> },
}

impl ReplayMismatch {
    pub fn code(&self) -> Code {
        match self {
            ReplayMismatch::WorkflowChanged { .. } => codes::REPLAY_WORKFLOW_CHANGED,
            ReplayMismatch::Drift { .. }
            | ReplayMismatch::NotRecorded { .. }
            | ReplayMismatch::SampleNotRecorded { .. } => codes::REPLAY_DRIFT,
            ReplayMismatch::Unconsumed { .. } => codes::REPLAY_UNCONSUMED,
            ReplayMismatch::DigestKeyChanged { .. } => codes::DIGEST_KEY_MISMATCH,
        }
    }

    /// The call key the mismatch is about; none for a changed workflow or digest key, or a
    /// sample.
    pub fn key(&self) -> Option<&CallKey> {
        match self {
            ReplayMismatch::WorkflowChanged { .. }
            | ReplayMismatch::DigestKeyChanged { .. }
            | ReplayMismatch::SampleNotRecorded { .. } => None,
            ReplayMismatch::Drift { requested, .. } | ReplayMismatch::NotRecorded { requested, .. } => {
                Some(&requested.key)
            }
            ReplayMismatch::Unconsumed { recorded } => Some(&recorded.key),
        }
    }
}

impl fmt::Display for ReplayMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReplayMismatch::WorkflowChanged { recorded, current } => write!(
                f,
                "the transcript was recorded with source {} and registry {} (language version {}), \
                 but the replayed program has source {} and registry {} (language version {}); an \
                 edited program or registry makes every call a new operation: record the run again",
                recorded.source_digest,
                recorded.registry_digest,
                recorded.language_version,
                current.source_digest,
                current.registry_digest,
                current.language_version
            ),
            ReplayMismatch::Drift { recorded, requested } => {
                let was = recorded.request_text();
                let now = request_text(&requested.tool, &requested.arguments);
                write!(
                    f,
                    "replay drift at {}: the transcript recorded `{was}` ({}), but the run requested \
                     `{now}` ({})",
                    requested.key, recorded.operation_id, requested.operation_id
                )?;
                if was == now {
                    f.write_str(
                        "; the tool and arguments read the same, so the tool's schema version changed",
                    )?;
                }
                Ok(())
            }
            ReplayMismatch::NotRecorded { requested, nearest } => {
                let now = request_text(&requested.tool, &requested.arguments);
                write!(
                    f,
                    "replay drift at {}: the run requested `{now}` ({}), but the transcript recorded \
                     no call there",
                    requested.key, requested.operation_id
                )?;
                match nearest {
                    Some(entry) => write!(
                        f,
                        "; at the same call site it recorded `{}` at {}",
                        entry.request_text(),
                        entry.key
                    ),
                    None => f.write_str(" nor anywhere else at that call site"),
                }
            }
            ReplayMismatch::SampleNotRecorded { node_id, function } => write!(
                f,
                "replay drift at node `{node_id}`: the run sampled `{}()`, but the transcript recorded \
                 no such sample there",
                Intrinsic::Sampled(*function).name()
            ),
            ReplayMismatch::Unconsumed { recorded } => write!(
                f,
                "the transcript recorded `{}` ({}) at {}, but the replayed run never requested it",
                recorded.request_text(),
                recorded.operation_id,
                recorded.key
            ),
            ReplayMismatch::DigestKeyChanged { recorded, current } => {
                write!(
                    f,
                    "the transcript was recorded under the digest key `{recorded}`, but this replay \
                     keys digests with `{current}`: calls whose arguments or loop items are \
                     sensitive or secret get other operation ids under another key; "
                )?;
                if recorded.starts_with(DigestKey::RANDOM_ID_PREFIX) {
                    f.write_str(
                        "the recording used a random key of its own process (no key was given), \
                         which no other process can replay: record the run again with \
                         `--digest-key-file PATH` and replay it with the same file",
                    )
                } else if current.starts_with(DigestKey::RANDOM_ID_PREFIX) {
                    f.write_str("pass the key the run was recorded with: `--digest-key-file PATH`")
                } else {
                    f.write_str("the given key is not the one the run was recorded with")
                }
            }
        }
    }
}

impl ReplayExecutor {
    pub fn new(transcript: Transcript) -> ReplayExecutor {
        let recorded_key = transcript.digest_key.clone();
        let mut entries: BTreeMap<CallKey, VecDeque<TranscriptEntry>> = BTreeMap::new();
        for entry in transcript.entries {
            entries.entry(entry.key.clone()).or_default().push_back(entry);
        }
        let samples = transcript.samples.into_iter().map(|sample| (Arc::clone(&sample.node_id), sample));
        ReplayExecutor {
            recorded_key,
            entries: Mutex::new(entries),
            samples: Mutex::new(samples.collect()),
            drift: Mutex::new(Vec::new()),
        }
    }

    /// [`ReplayExecutor::mismatches`] of a replay whose runtime keys digests under
    /// `current_key`: when there are mismatches and the transcript names another key, they are
    /// led by [`ReplayMismatch::DigestKeyChanged`], their likely cause. A run whose calls and
    /// loops carry only public values has the same ids under every key, so a key change alone
    /// is no mismatch.
    pub fn mismatches_under_key(&self, current_key: &str) -> Vec<ReplayMismatch> {
        let mut mismatches = self.mismatches();
        match &self.recorded_key {
            Some(recorded) if !mismatches.is_empty() && recorded.as_ref() != current_key => {
                let changed = ReplayMismatch::DigestKeyChanged {
                    recorded: Arc::clone(recorded),
                    current: current_key.into(),
                };
                mismatches.insert(0, changed);
            }
            _ => {}
        }
        mismatches
    }

    /// Every mismatch of the replay, by call key: the drift seen so far and every entry no call
    /// used. Entries recorded as cancelled are not required: whether a cancelled call was
    /// dispatched at all depends on timing. Ask after the run ended.
    pub fn mismatches(&self) -> Vec<ReplayMismatch> {
        let mut mismatches = self.drift.lock().clone();
        let entries = self.entries.lock();
        let unconsumed = entries.values().flatten().filter(|entry| !is_cancelled(entry));
        mismatches
            .extend(unconsumed.map(|entry| ReplayMismatch::Unconsumed { recorded: Box::new(entry.clone()) }));
        mismatches.sort_by(|a, b| a.key().cmp(&b.key()));
        mismatches
    }

    /// Takes the entry that answers `requested`, or records the drift.
    fn take(&self, requested: RequestedCall) -> Result<TranscriptEntry, ToolError> {
        let mut entries = self.entries.lock();
        let recorded = entries.get_mut(&requested.key).and_then(VecDeque::pop_front);
        let mismatch = match recorded {
            Some(entry) if entry.operation_id == requested.operation_id && entry.tool == requested.tool => {
                return Ok(entry);
            }
            Some(entry) => {
                ReplayMismatch::Drift { recorded: Box::new(entry), requested: Box::new(requested) }
            }
            None => {
                let nearest = entries
                    .values()
                    .flatten()
                    .find(|entry| entry.key.call_site == requested.key.call_site)
                    .map(|entry| Box::new(entry.clone()));
                ReplayMismatch::NotRecorded { requested: Box::new(requested), nearest }
            }
        };
        let error = ToolError::new(codes::REPLAY_DRIFT.to_string(), mismatch.to_string());
        self.drift.lock().push(mismatch);
        Err(error)
    }
}

fn is_cancelled(entry: &TranscriptEntry) -> bool {
    entry.answer.as_ref().is_err_and(|error| error.code == codes::TOOL_CALL_CANCELLED.to_string())
}

#[async_trait]
impl ToolExecutor for ReplayExecutor {
    fn capabilities(&self, _tool: &str) -> ToolCapabilities {
        ToolCapabilities { cancellation: true, completion_after_cancel: false, answers_inline: true }
    }

    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        let requested = RequestedCall {
            key: CallKey::of(&call.context),
            operation_id: call.context.operation_id,
            tool: Arc::clone(&call.tool),
            arguments: call.arguments,
        };
        let entry = self.take(requested)?;
        if is_cancelled(&entry) {
            call.context.cancellation.cancelled().await;
        }
        entry.answer.map(ToolOutput::new)
    }
}

/// Used as the run's sampler too ([`crate::runtime::RuntimeBuilder::sampler`]), it answers each
/// sample with the value recorded at the same node, never sampling again.
impl Sampler for ReplayExecutor {
    fn sample(&self, function: SampledFunction, node_id: &str) -> Result<Value, ValueError> {
        let recorded = self.samples.lock().remove(node_id).filter(|sample| sample.function == function);
        match recorded {
            Some(sample) => {
                sample.answer.map_err(|message| ValueError::new(codes::SAMPLE_UNAVAILABLE, message))
            }
            None => {
                let mismatch = ReplayMismatch::SampleNotRecorded { node_id: Arc::from(node_id), function };
                let error = ValueError::new(codes::REPLAY_DRIFT, mismatch.to_string());
                self.drift.lock().push(mismatch);
                Err(error)
            }
        }
    }
}
