//! The recording executor: a decorator that passes every call to the executor it wraps and keeps
//! the call's key, operation id, request and answer — and, as the run's sampler, every sampled
//! intrinsic value — for a [`Transcript`] of the run.

use std::sync::Arc;

use async_trait::async_trait;
use parking_lot::Mutex;

use super::{CallKey, SampleEntry, Transcript, TranscriptEntry};
use crate::analyze::WorkflowIdentity;
use crate::engine::{
    RecoveryOutcome, RecoveryRequest, ToolCall, ToolCapabilities, ToolError, ToolExecutor, ToolOutput,
};
use crate::engine::{Sampler, SystemSampler};
use crate::stdlib::SampledFunction;
use crate::value::{Value, ValueError};

/// Records every call dispatched through it, in dispatch order, and answers with whatever the
/// wrapped executor answers. Recovery queries pass through unrecorded: a transcript describes
/// the calls of one uninterrupted run.
pub struct RecordingExecutor {
    inner: Arc<dyn ToolExecutor>,
    /// One entry per dispatch, answered as cancelled until its answer arrives.
    calls: Mutex<Vec<TranscriptEntry>>,
    /// One entry per sample taken through it (as the run's [`Sampler`]).
    samples: Mutex<Vec<SampleEntry>>,
    /// The digest key a dispatched call's identity was keyed under, once one was.
    digest_key: Mutex<Option<Arc<str>>>,
}

impl std::fmt::Debug for RecordingExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordingExecutor").field("calls", &self.calls.lock().len()).finish_non_exhaustive()
    }
}

impl RecordingExecutor {
    pub fn new(inner: Arc<dyn ToolExecutor>) -> RecordingExecutor {
        RecordingExecutor {
            inner,
            calls: Mutex::new(Vec::new()),
            samples: Mutex::new(Vec::new()),
            digest_key: Mutex::new(None),
        }
    }

    /// The transcript of every call dispatched and sample taken so far, for the run's
    /// `workflow`. Take it after the run ended: a call still unanswered then is written as
    /// cancelled (`RL6201`), since its answer can no longer reach the run (a finished run cancels
    /// the calls it still has out). The transcript names the digest key when some call's
    /// identity was keyed under it.
    pub fn transcript(&self, workflow: WorkflowIdentity) -> Transcript {
        let transcript =
            Transcript::new(workflow, self.calls.lock().clone()).with_samples(self.samples.lock().clone());
        match self.digest_key.lock().as_deref() {
            Some(key_id) => transcript.with_digest_key(key_id),
            None => transcript,
        }
    }
}

/// Used as the run's sampler too ([`crate::runtime::RuntimeBuilder::sampler`]), it samples the
/// system's clock and random source and keeps every value for the transcript.
impl Sampler for RecordingExecutor {
    fn sample(&self, function: SampledFunction, node_id: &str) -> Result<Value, ValueError> {
        let answer = SystemSampler.sample(function, node_id);
        let recorded = answer.clone().map_err(|error| error.message().to_owned());
        self.samples.lock().push(SampleEntry { node_id: Arc::from(node_id), function, answer: recorded });
        answer
    }
}

#[async_trait]
impl ToolExecutor for RecordingExecutor {
    fn capabilities(&self, tool: &str) -> ToolCapabilities {
        self.inner.capabilities(tool)
    }

    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        let request = TranscriptEntry {
            key: CallKey::of(&call.context),
            operation_id: call.context.operation_id,
            tool: Arc::clone(&call.tool),
            arguments: call.arguments.clone(),
            answer: Err(ToolError::cancelled(&call.tool)),
        };
        if let Some(key_id) = &call.context.digest_key {
            self.digest_key.lock().get_or_insert_with(|| Arc::clone(key_id));
        }
        let slot = {
            let mut calls = self.calls.lock();
            calls.push(request);
            calls.len() - 1
        };
        let answer = self.inner.dispatch(call).await;
        self.calls.lock()[slot].answer =
            answer.as_ref().map(|output| output.value.clone()).map_err(Clone::clone);
        answer
    }

    async fn recover(&self, request: RecoveryRequest) -> Result<RecoveryOutcome, ToolError> {
        self.inner.recover(request).await
    }
}
