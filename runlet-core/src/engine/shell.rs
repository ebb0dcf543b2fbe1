//! The async shell around one run's core: it appends each event batch to the journal and only
//! after the commit publishes the events and dispatches calls (invariant 7); tool answers come
//! back to the core through one channel, so the run's journal writes stay serialized.

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::core::{CallHandle, CallRequest, Effect, Input, Outcome, RunCore};
use super::event::Event;
use super::executor::{CallContext, ToolCall, ToolError, ToolExecutor};
use super::identity::{OperationComponents, OperationId, WorkflowIdentity};
use crate::journal::{Journal, JournalError, Record, RunId};
use crate::schema::{Registry, validate};
use crate::value::{Labelled, Value};

/// Everything outside the core that one run talks to.
#[derive(Clone)]
pub struct RunEnvironment {
    pub run_id: RunId,
    pub workflow: Arc<WorkflowIdentity>,
    pub registry: Arc<Registry>,
    pub journal: Arc<dyn Journal>,
    pub executor: Arc<dyn ToolExecutor>,
    /// Receives every committed event with its sequence number, in order.
    pub observer: Option<mpsc::UnboundedSender<(u64, Event)>>,
}

impl std::fmt::Debug for RunEnvironment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunEnvironment").field("run_id", &self.run_id).finish_non_exhaustive()
    }
}

/// Drives `core` from `Start { inputs }` to its end. A journal failure stops the run: nothing
/// that was not committed is acted on.
pub async fn drive(mut core: RunCore, env: RunEnvironment, inputs: Vec<Labelled>) -> Result<Outcome, JournalError> {
    let (answers, mut incoming) = mpsc::unbounded_channel::<Input>();
    let mut tokens: BTreeMap<CallHandle, CancellationToken> = BTreeMap::new();
    let mut last_seq = 0u64;
    let mut next = Some(Input::Start { inputs });
    loop {
        let input = match next.take() {
            Some(input) => input,
            None => match incoming.recv().await {
                Some(input) => input,
                None => return Ok(Outcome::Cancelled),
            },
        };
        if let Input::ToolCompleted { call, .. } | Input::ToolFailed { call, .. } = &input {
            tokens.remove(call);
        }
        for effect in core.react(input) {
            match effect {
                Effect::Append(events) => last_seq = append(&env, last_seq, events).await?,
                Effect::Dispatch(request) => {
                    let token = CancellationToken::new();
                    tokens.insert(request.call, token.clone());
                    spawn_call(&env, request, token, answers.clone());
                }
                Effect::Cancel(call) => {
                    if let Some(token) = tokens.remove(&call) {
                        token.cancel();
                    }
                }
                Effect::Finish(outcome) => {
                    for token in tokens.values() {
                        token.cancel();
                    }
                    return Ok(outcome);
                }
            }
        }
    }
}

async fn append(env: &RunEnvironment, last_seq: u64, events: Vec<Event>) -> Result<u64, JournalError> {
    let records: Vec<Record> = events
        .iter()
        .enumerate()
        .map(|(offset, event)| {
            let seq = last_seq + 1 + offset as u64;
            Record { seq, bytes: Arc::from(event.encode(seq)) }
        })
        .collect();
    let committed = env.journal.append(&env.run_id, last_seq, &records).await?;
    if let Some(observer) = &env.observer {
        for (offset, event) in events.into_iter().enumerate() {
            let _ = observer.send((last_seq + 1 + offset as u64, event));
        }
    }
    Ok(committed)
}

/// Runs one call on its own task and reports the validated answer to the core.
fn spawn_call(env: &RunEnvironment, request: CallRequest, token: CancellationToken, answers: mpsc::UnboundedSender<Input>) {
    let tool = env.registry.tool(request.tool).clone();
    let schemas = Arc::clone(env.registry.schemas());
    let input_digest = crate::value::sha256(&Value::List(request.arguments.clone()));
    let operation = OperationId::derive(&OperationComponents {
        workflow: &env.workflow,
        call_site: &request.node_id,
        dynamic_key: "",
        schema_version: &tool.schema_version,
        input_digest: &input_digest,
        generation: 0,
    });
    let context = CallContext::new(
        env.run_id.clone(),
        request.node_id.as_str(),
        request.attempt,
        operation,
        operation.dispatch_id(request.attempt),
        tool.schema_version.as_str(),
    )
    .with_cancellation(token);
    let call = ToolCall {
        tool: Arc::from(tool.name.to_string()),
        tool_id: request.tool,
        arguments: request.arguments,
        context,
    };
    let executor = Arc::clone(&env.executor);
    let handle = request.call;
    tokio::spawn(async move {
        let answer = match executor.dispatch(call).await {
            Ok(output) => match validate(&schemas, tool.output, &output.value) {
                Ok(()) => Input::ToolCompleted { call: handle, value: Labelled::public(output.value) },
                Err(mismatch) => Input::ToolFailed {
                    call: handle,
                    error: ToolError::new(
                        "TOOL_OUTPUT_SCHEMA_MISMATCH",
                        format!("`{}` returned a value its output schema does not accept: {mismatch}", tool.name),
                    ),
                },
            },
            Err(error) => Input::ToolFailed { call: handle, error },
        };
        let _ = answers.send(answer);
    });
}
