//! The async shell around one run's core: it appends each event batch to the journal and only
//! after the commit publishes the events and dispatches calls (invariant 7); tool answers come
//! back to the core through one channel, so the run's journal writes stay serialized.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::core::{CallHandle, CallRequest, Effect, Input, Outcome, RunCore};
use super::event::Event;
use super::executor::{CallContext, ToolCall, ToolError, ToolExecutor};
use super::identity::{OperationComponents, OperationId, WorkflowIdentity};
use super::permits::RunPermits;
use crate::journal::{Journal, JournalError, Record, RunId};
use crate::schema::{Registry, SchemaArena, ToolDescriptor, validate};
use crate::value::{Labelled, List, Value};

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
    /// Fired by the host to cancel the run.
    pub cancel: CancellationToken,
    /// The run's `wall_clock_ms` limit: past it, the core is told the time is up.
    pub wall_clock: Option<Duration>,
    /// The permits each call must hold while it runs (spec §4.5); `None` when nothing is capped.
    pub permits: Option<RunPermits>,
}

impl std::fmt::Debug for RunEnvironment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunEnvironment").field("run_id", &self.run_id).finish_non_exhaustive()
    }
}

/// Drives `core` from `Start { inputs }` to its end. A journal failure stops the run: nothing
/// that was not committed is acted on.
pub async fn drive(
    mut core: RunCore,
    env: RunEnvironment,
    inputs: Vec<Labelled>,
) -> Result<Outcome, JournalError> {
    let (answers, mut incoming) = mpsc::unbounded_channel::<Input>();
    let mut tokens: BTreeMap<CallHandle, CancellationToken> = BTreeMap::new();
    let mut last_seq = 0u64;
    let mut next = Some(Input::Start { inputs });
    let mut cancel_sent = false;
    let started = tokio::time::Instant::now();
    // Inclusive: the run may take exactly the cap; the timer fires one millisecond past it.
    let cap = env.wall_clock.map(|cap| cap + Duration::from_millis(1));
    let deadline = async {
        match cap {
            Some(cap) => tokio::time::sleep_until(started + cap).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(deadline);
    let mut deadline_sent = false;
    loop {
        let input = match next.take() {
            Some(input) => input,
            None => tokio::select! {
                biased;
                _ = env.cancel.cancelled(), if !cancel_sent => {
                    cancel_sent = true;
                    Input::CancelRequested
                }
                _ = &mut deadline, if !deadline_sent => {
                    deadline_sent = true;
                    let elapsed = started.elapsed().max(cap.unwrap_or_default());
                    Input::WallClockExpired { elapsed_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX) }
                }
                answer = incoming.recv() => match answer {
                    Some(input) => input,
                    None => return Ok(Outcome::Cancelled),
                },
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
                Effect::Sample(request) => {
                    let answer = request.function.sample();
                    let _ = answers.send(Input::Sampled { call: request.call, answer });
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

/// Checks resolved arguments against the tool's call shapes (spec §7.2: validated immediately
/// before dispatch): the single object argument, else the positional parameters.
fn check_arguments(schemas: &SchemaArena, tool: &ToolDescriptor, arguments: &List) -> Result<(), String> {
    let values: Vec<&Value> = arguments.iter().collect();
    let mut failure = String::from("no call shape of the tool accepts them");
    if let Some(object) = tool.input.object {
        match values.as_slice() {
            [] => return Ok(()),
            [only] => match validate(schemas, object, only) {
                Ok(()) => return Ok(()),
                Err(mismatch) => failure = mismatch.to_string(),
            },
            _ => {}
        }
    }
    if let Some(params) = &tool.input.positional {
        if values.len() > params.len() {
            return Err(format!("{} arguments for {} parameters", values.len(), params.len()));
        }
        for (param, value) in params.iter().zip(&values) {
            validate(schemas, param.schema, value)
                .map_err(|mismatch| format!("`{}` {mismatch}", param.name))?;
        }
        return Ok(());
    }
    Err(failure)
}

/// Runs one call on its own task and reports the validated answer to the core.
fn spawn_call(
    env: &RunEnvironment,
    request: CallRequest,
    token: CancellationToken,
    answers: mpsc::UnboundedSender<Input>,
) {
    let tool = env.registry.tool(request.tool).clone();
    let schemas = Arc::clone(env.registry.schemas());
    let input_digest = crate::value::sha256(&Value::List(request.arguments.clone()));
    let operation = OperationId::derive(&OperationComponents {
        workflow: &env.workflow,
        call_site: &request.call_site,
        dynamic_key: &request.dynamic_key,
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
    let checked = check_arguments(&schemas, &tool, &call.arguments);
    // Requested now, in dispatch order, so waiting calls start in that order.
    let mut permit = env.permits.as_ref().map(|p| p.request(request.tool));
    tokio::spawn(async move {
        if let Err(reason) = checked {
            let error = ToolError::new(
                "TOOL_INPUT_SCHEMA_MISMATCH",
                format!(
                    "the call to `{}` was not sent: its arguments do not match its input schema: {reason}",
                    tool.name
                ),
            );
            let _ = answers.send(Input::ToolFailed { call: handle, error });
            return;
        }
        if let Some(permit) = &mut permit {
            tokio::select! {
                () = permit.granted() => {}
                () = call.context.cancellation.cancelled() => return,
            }
        }
        let answer = match executor.dispatch(call).await {
            Ok(output) => match validate(&schemas, tool.output, &output.value) {
                Ok(()) => Input::ToolCompleted { call: handle, value: Labelled::public(output.value) },
                Err(mismatch) => Input::ToolFailed {
                    call: handle,
                    error: ToolError::new(
                        "TOOL_OUTPUT_SCHEMA_MISMATCH",
                        format!(
                            "`{}` returned a value its output schema does not accept: {mismatch}",
                            tool.name
                        ),
                    ),
                },
            },
            Err(error) => Input::ToolFailed { call: handle, error },
        };
        let _ = answers.send(answer);
    });
}

#[cfg(test)]
mod tests {
    use async_trait::async_trait;

    use super::*;
    use crate::engine::core::RunSettings;
    use crate::engine::executor::ToolOutput;
    use crate::engine::plan::Plan;
    use crate::engine::scripted::ScriptedExecutor;
    use crate::engine::testing::{appendix_b, list};
    use crate::journal::{MemoryJournal, RunHeader};
    use crate::value::sha256;

    const FIXTURES: &str = r#"{
        "github.me": [{ "result": { "login": "octo" }, "delay_ms": 5 }],
        "linear.me": [{ "result": { "id": "u1" } }],
        "linear.issues": [{ "args": [{ "owner": "u1" }], "result": ["i1", "i2"] }],
        "github.prs": [{ "args": [{ "owner": "octo" }], "result": ["p1"] }]
    }"#;

    /// Checks, at every dispatch, that the call's `CallDispatchPrepared` is already in the journal.
    struct CommittedFirst {
        journal: Arc<MemoryJournal>,
        run: RunId,
        inner: ScriptedExecutor,
    }

    #[async_trait]
    impl ToolExecutor for CommittedFirst {
        async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
            let records = self.journal.read(&self.run, 0, usize::MAX).await.expect("read journal");
            let prepared = records.iter().any(|record| {
                matches!(Event::decode(&record.bytes), Ok((_, Event::CallDispatchPrepared { node, .. })) if *node == *call.context.node_id)
            });
            assert!(
                prepared,
                "{} was dispatched before its CallDispatchPrepared was committed",
                call.context.node_id
            );
            self.inner.dispatch(call).await
        }
    }

    /// A core for `program`, an environment around it with a fresh in-memory journal holding
    /// the run's header, and that journal.
    async fn prepared(
        program: &Arc<crate::analyze::hir::Program>,
        registry: &Arc<Registry>,
        run: &str,
        executor: impl FnOnce(Arc<MemoryJournal>) -> Arc<dyn ToolExecutor>,
    ) -> (RunCore, RunEnvironment, Arc<MemoryJournal>) {
        let names: Arc<[String]> = registry.tools().map(|(_, t)| t.name.to_string()).collect();
        let core =
            RunCore::new(Arc::clone(program), Arc::new(Plan::new(program)), names, RunSettings::default());
        let run_id = RunId::new(run);
        let journal = Arc::new(MemoryJournal::new());
        let digest = sha256(&Value::Null);
        let header = RunHeader {
            run_id: run_id.clone(),
            language_version: 1,
            runtime_version: "test".into(),
            source_digest: digest.to_string(),
            registry_digest: registry.digest().to_string(),
            inputs_digest: digest.to_string(),
            config_digest: digest.to_string(),
            value_encoding_version: 1,
            event_encoding_version: 1,
        };
        journal.create_run(&header).await.expect("create run");
        let env = RunEnvironment {
            run_id,
            workflow: Arc::new(WorkflowIdentity {
                source_digest: digest,
                registry_digest: registry.digest().clone(),
                language_version: 1,
            }),
            registry: Arc::clone(registry),
            journal: journal.clone(),
            executor: executor(journal.clone()),
            observer: None,
            cancel: CancellationToken::new(),
            wall_clock: None,
            permits: None,
        };
        (core, env, journal)
    }

    #[tokio::test]
    async fn appendix_b_runs_with_every_event_journaled_before_it_is_seen() {
        let (program, registry) = appendix_b();
        let (core, mut env, journal) = prepared(&program, &registry, "appendix-b", |journal| {
            let inner = ScriptedExecutor::from_json_str(FIXTURES).expect("fixtures");
            Arc::new(CommittedFirst { journal, run: RunId::new("appendix-b"), inner })
        })
        .await;
        let (observer, mut observed) = mpsc::unbounded_channel();
        env.observer = Some(observer);
        let run = env.run_id.clone();
        match drive(core, env, Vec::new()).await.expect("journal works") {
            Outcome::Succeeded(value) => {
                assert_eq!(value.value(), &list(vec!["i1".into(), "i2".into(), "p1".into()]))
            }
            other => panic!("expected success, got {other:?}"),
        }
        let journaled: Vec<(u64, Event)> = journal
            .read(&run, 0, usize::MAX)
            .await
            .expect("read")
            .iter()
            .map(|record| Event::decode(&record.bytes).expect("decodes"))
            .collect();
        let mut seen = Vec::new();
        while let Ok(event) = observed.try_recv() {
            seen.push(event);
        }
        assert_eq!(seen, journaled, "observers see exactly the committed events, in order");
        assert!(
            journaled.iter().enumerate().all(|(i, (seq, _))| *seq == i as u64 + 1),
            "sequence has no gap"
        );
        assert!(matches!(journaled.first(), Some((_, Event::RunCreated { .. }))));
        assert_eq!(journaled.last().map(|(_, e)| e), Some(&Event::RunSucceeded));
        let dispatched =
            journaled.iter().filter(|(_, e)| matches!(e, Event::CallDispatchPrepared { .. })).count();
        assert_eq!(dispatched, 4);
    }

    #[tokio::test]
    async fn a_tool_output_its_schema_rejects_fails_the_call() {
        let json = r#"{"tools": [{"name": "counter", "inputSchema": {"type": "object"}, "outputSchema": {"type": "integer"}}]}"#;
        let registry =
            Arc::new(Registry::from_json_str(json, &Default::default()).expect("registry").registry);
        let mut builder = crate::engine::testing::Builder::with_registry(Arc::clone(&registry));
        let root = crate::analyze::hir::RegionId(0);
        let call = builder.call(root, "counter", vec![]);
        builder.result(root, call);
        let (program, registry) = builder.finish();
        let (core, env, _) = prepared(&program, &registry, "bad-output", |_| {
            Arc::new(
                ScriptedExecutor::from_json_str(r#"{"counter": [{"result": "seven"}]}"#).expect("fixtures"),
            )
        })
        .await;
        match drive(core, env, Vec::new()).await.expect("journal works") {
            Outcome::Failed(error) => {
                assert_eq!(error.code, "TOOL_OUTPUT_SCHEMA_MISMATCH");
                assert!(!error.retryable);
                assert_eq!(error.tool.as_deref(), Some("counter"));
            }
            other => panic!("expected a failed run, got {other:?}"),
        }
    }
}
