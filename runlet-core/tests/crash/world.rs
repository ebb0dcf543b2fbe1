//! The world outside a run: tools that answer at once and deterministically and remember every
//! call they received, from the workers that crashed and from the one that resumed, so the
//! harness can tell what really happened and answer recovery the way a provider would. A worker
//! that stopped reaches the world no more.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use parking_lot::Mutex;
use runlet::engine::{OperationId, RecoveryOutcome, ToolCall, ToolError, ToolExecutor, ToolOutput};
use runlet::value::Value;

/// The worker a call came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Worker {
    /// The worker whose journal stopped after the crash point.
    Crashed,
    /// A worker that resumed the run and crashed too, a few appends later.
    Interrupted,
    /// The worker that resumed the run from what the journal held.
    Resumed,
}

/// One call the tools received.
#[derive(Debug, Clone)]
pub struct Received {
    pub from: Worker,
    pub tool: String,
    pub node: String,
    pub operation: OperationId,
    pub answer: Result<Value, ToolError>,
}

#[derive(Default)]
struct State {
    received: Vec<Received>,
    stopped: Vec<Worker>,
}

/// One run's world: `tools` (a deterministic executor) and what reached them.
pub struct World {
    tools: Arc<dyn ToolExecutor>,
    state: Mutex<State>,
}

impl World {
    pub fn new(tools: Arc<dyn ToolExecutor>) -> Arc<World> {
        Arc::new(World { tools, state: Mutex::new(State::default()) })
    }

    /// `worker` is gone: calls it had not yet handed to the tools never reach them.
    pub fn stop(&self, worker: Worker) {
        self.state.lock().stopped.push(worker);
    }

    pub fn received(&self) -> Vec<Received> {
        self.state.lock().received.clone()
    }

    /// What the tools answered the first call of `operation`, if one reached them.
    pub fn outcome_of(&self, operation: &OperationId) -> Option<Result<Value, ToolError>> {
        let state = self.state.lock();
        state.received.iter().find(|r| r.operation == *operation).map(|r| r.answer.clone())
    }

    /// The tools' answer to `call` from `worker`, recorded; refused once `worker` stopped. One
    /// lock covers the check, the answer and the record, so a call either reached the tools
    /// before the worker stopped, or never.
    pub fn dispatch(&self, from: Worker, call: ToolCall) -> Result<ToolOutput, ToolError> {
        let mut state = self.state.lock();
        if state.stopped.contains(&from) {
            return Err(ToolError::new("WORKER_STOPPED", "the worker that sent this call is gone"));
        }
        let (tool, node, operation) =
            (call.tool.to_string(), call.context.node_id.to_string(), call.context.operation_id);
        let answer = at_once(self.tools.dispatch(call));
        let recorded = answer.as_ref().map(|output| output.value.clone()).map_err(Clone::clone);
        state.received.push(Received { from, tool, node, operation, answer: recorded });
        answer
    }

    /// A provider knows whether an operation reached it: its answer if it succeeded, otherwise
    /// that it did not apply.
    pub fn recover(&self, operation: &OperationId) -> RecoveryOutcome {
        match self.outcome_of(operation) {
            Some(Ok(value)) => RecoveryOutcome::Succeeded(ToolOutput::new(value)),
            _ => RecoveryOutcome::NotApplied,
        }
    }
}

/// The output of a future that is ready when first polled: the tools answer without waiting.
fn at_once<F: Future>(future: F) -> F::Output {
    match pin!(future).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("the crash harness's tools must answer at once"),
    }
}
