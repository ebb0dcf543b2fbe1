//! Tool transcripts (docs/transcripts.md): every tool call of a run, keyed by where it sits in the
//! run rather than when it arrived, with its request and the answer it got, and every sampled
//! intrinsic value, keyed by its node.

mod file;
mod record;
mod replayer;

use std::fmt;
use std::sync::Arc;

use crate::engine::{CallContext, OperationId, ToolError};

use crate::analyze::WorkflowIdentity;
use crate::stdlib::SampledFunction;
use crate::value::{List, Value, to_presentation_json};

pub use file::{TRANSCRIPT_FORMAT, TranscriptError};
pub use record::RecordingExecutor;
pub use replayer::{ReplayExecutor, ReplayMismatch, RequestedCall};

/// Where a call sits in a run (spec §4.2): the same for a call however the run's calls
/// interleave, so parallel runs record and replay deterministically.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CallKey {
    /// The call's syntax path.
    pub call_site: Arc<str>,
    /// The loop iterations and arms the call is inside; empty for a static call.
    pub dynamic_key: Arc<str>,
    /// The boundary attempt: 0 outside any boundary, from 1 inside one.
    pub attempt: u32,
}

impl CallKey {
    /// The key of the call `context` belongs to.
    pub fn of(context: &CallContext) -> CallKey {
        CallKey {
            call_site: Arc::clone(&context.call_site),
            dynamic_key: Arc::clone(&context.dynamic_key),
            attempt: context.attempt,
        }
    }
}

impl fmt::Display for CallKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "call site `{}`", self.call_site)?;
        if !self.dynamic_key.is_empty() {
            write!(f, " (dynamic key `{}`)", self.dynamic_key)?;
        }
        write!(f, ", attempt {}", self.attempt)
    }
}

/// One dispatched call: what was asked and what the tool answered.
#[derive(Debug, Clone, PartialEq)]
pub struct TranscriptEntry {
    pub key: CallKey,
    /// Covers the workflow, call site, dynamic key, schema version and canonical arguments, so
    /// equal ids mean the same request.
    pub operation_id: OperationId,
    pub tool: Arc<str>,
    /// The canonical argument list (spec §2.3).
    pub arguments: List,
    pub answer: Result<Value, ToolError>,
}

impl TranscriptEntry {
    /// The request as `tool(arguments)` with the arguments as presentation JSON.
    pub fn request_text(&self) -> String {
        request_text(&self.tool, &self.arguments)
    }
}

/// `tool([arguments])`, the arguments as presentation JSON (or their debug form when they hold
/// Bytes, which JSON cannot show).
fn request_text(tool: &str, arguments: &List) -> String {
    let arguments = Value::List(arguments.clone());
    let shown = to_presentation_json(&arguments).unwrap_or_else(|_| format!("{arguments:?}"));
    format!("{tool}({shown})")
}

/// One sampled intrinsic (`time.now()`, `number.random()`): the value the run got, or why it got
/// none.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleEntry {
    /// The public id of the intrinsic's node: where it sits in the run, like a [`CallKey`].
    pub node_id: Arc<str>,
    pub function: SampledFunction,
    pub answer: Result<Value, String>,
}

/// The calls of one run of one workflow, ordered by [`CallKey`]; calls sharing a key (redispatches
/// of one operation) keep the order they were dispatched in. Its samples are ordered by node id.
#[derive(Debug, Clone, PartialEq)]
pub struct Transcript {
    workflow: WorkflowIdentity,
    /// The id of the digest key some call's identity was keyed under (spec §6.2), if any was.
    digest_key: Option<Arc<str>>,
    entries: Vec<TranscriptEntry>,
    samples: Vec<SampleEntry>,
}

impl Transcript {
    /// A transcript of `entries`, sorted by key (stably, so same-key entries keep their order).
    pub fn new(workflow: WorkflowIdentity, mut entries: Vec<TranscriptEntry>) -> Transcript {
        entries.sort_by(|a, b| a.key.cmp(&b.key));
        Transcript { workflow, digest_key: None, entries, samples: Vec::new() }
    }

    /// This transcript with `samples`, sorted by node id (stably).
    pub fn with_samples(mut self, mut samples: Vec<SampleEntry>) -> Transcript {
        samples.sort_by(|a, b| a.node_id.cmp(&b.node_id));
        self.samples = samples;
        self
    }

    /// The transcript noting that its run keyed some call's identity under `key_id` (spec §6.2):
    /// a replay under another key gets other ids for such calls, and its mismatches say so.
    pub fn with_digest_key(mut self, key_id: &str) -> Transcript {
        self.digest_key = Some(Arc::from(key_id));
        self
    }

    /// The program and registry the transcript was recorded with.
    pub fn workflow(&self) -> &WorkflowIdentity {
        &self.workflow
    }

    /// The id of the digest key the run was recorded under, when the transcript names one.
    pub fn digest_key(&self) -> Option<&str> {
        self.digest_key.as_deref()
    }

    pub fn entries(&self) -> &[TranscriptEntry] {
        &self.entries
    }

    pub fn samples(&self) -> &[SampleEntry] {
        &self.samples
    }

    /// Fails with [`ReplayMismatch::WorkflowChanged`] when `current` is not the workflow the
    /// transcript was recorded with: an edited program or registry makes every call a new
    /// operation (spec §4.2), so nothing recorded may answer it.
    pub fn check_workflow(&self, current: &WorkflowIdentity) -> Result<(), ReplayMismatch> {
        if &self.workflow == current {
            return Ok(());
        }
        Err(ReplayMismatch::WorkflowChanged {
            recorded: Box::new(self.workflow.clone()),
            current: Box::new(current.clone()),
        })
    }
}
