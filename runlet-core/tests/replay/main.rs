//! Tool transcripts end to end: runs recorded through the recording executor and replayed from
//! the transcript's JSON text without tools — identical outcomes, drift and unconsumed entries
//! named by call site, and a transcript reader that rejects any malformed text with codes.

mod reader;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use runlet::analyze::Inputs;
use runlet::analyze::WorkflowIdentity;
use runlet::diag::codes;
use runlet::engine::event::Event;
use runlet::engine::{Outcome, ToolCall, ToolError, ToolExecutor, ToolOutput};
use runlet::registry::{Registry, RegistryOptions};
use runlet::runtime::Runtime;
use runlet::scripted::{RecordingExecutor, ReplayExecutor, ReplayMismatch, ScriptedExecutor, Transcript};
use runlet::value::to_presentation_json;

fn example(name: &str, file: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples").join(name).join(file);
    std::fs::read_to_string(path).expect("example file")
}

fn inputs(json: &str) -> Inputs {
    Inputs::from_json(json, &Registry::empty()).expect("inputs JSON")
}

/// A program with its registry and the tool fixtures that answer it when recording.
struct Case {
    source: String,
    registry: String,
    tools: String,
}

impl Case {
    fn example(name: &str) -> Case {
        Case {
            source: example(name, "main.run"),
            registry: example(name, "registry.json"),
            tools: example(name, "tools.json"),
        }
    }
}

/// What a run ended with, and the tools whose calls completed, in completion order.
#[derive(Debug)]
struct Ran {
    outcome: String,
    completed: Vec<String>,
    workflow: WorkflowIdentity,
}

fn run(case: &Case, inputs: &Inputs, executor: Arc<dyn ToolExecutor>) -> Ran {
    let registry =
        Registry::from_json_str(&case.registry, &RegistryOptions::default()).expect("registry").registry;
    // Recording and replaying runtimes share the host key: the examples' sensitive arguments
    // have keyed operation ids, and a transcript replays only under the key that recorded it.
    let runtime = Runtime::builder()
        .registry(registry)
        .executor(executor)
        .digest_key("replay-tests.v1", b"transcript key")
        .build()
        .expect("runtime");
    let program = runtime.compile(&case.source, inputs).expect("compiles");
    let mut handle = runtime.start(&program, inputs).expect("starts");
    let mut tools = BTreeMap::new();
    let mut completed = Vec::new();
    while let Some((_, event)) = handle.events().blocking_recv() {
        match event {
            Event::CallDispatchPrepared { node, tool, .. } => {
                tools.insert(node, tool);
            }
            Event::CallCompleted { node, .. } => {
                completed.extend(tools.get(&node).map(|tool: &std::sync::Arc<str>| tool.to_string()))
            }
            Event::RunSucceeded | Event::RunFailed { .. } | Event::RunCancelled => break,
            _ => {}
        }
    }
    let outcome = match handle.wait().expect("journal") {
        Outcome::Succeeded(value) => to_presentation_json(value.value()).expect("JSON"),
        Outcome::Failed(error) => format!("failed {} at {}: {}", error.code, error.node_id, error.message),
        Outcome::Cancelled => "cancelled".to_owned(),
    };
    Ran { outcome, completed, workflow: program.compiled().identity().clone() }
}

/// Counts the calls that reach the tools.
struct Counting {
    inner: ScriptedExecutor,
    calls: AtomicUsize,
}

#[async_trait]
impl ToolExecutor for Counting {
    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.inner.dispatch(call).await
    }
}

/// Records a run of `case` and returns it with the transcript's JSON text and the number of calls
/// that reached the tools.
fn record(case: &Case, inputs: &Inputs) -> (Ran, String, usize) {
    record_with(case, inputs, |tools| tools)
}

/// Records a run of `case` through `wrap` around the counted scripted tools.
fn record_with(
    case: &Case,
    inputs: &Inputs,
    wrap: impl FnOnce(Arc<dyn ToolExecutor>) -> Arc<dyn ToolExecutor>,
) -> (Ran, String, usize) {
    let tools = Arc::new(Counting {
        inner: ScriptedExecutor::from_json_str(&case.tools).expect("fixtures"),
        calls: AtomicUsize::new(0),
    });
    let recorder = Arc::new(RecordingExecutor::new(wrap(tools.clone())));
    let ran = run(case, inputs, recorder.clone());
    let text = recorder.transcript(ran.workflow.clone()).to_json().expect("JSON-representable values");
    (ran, text, tools.calls.load(Ordering::SeqCst))
}

/// Replays `case` from a transcript's text, with `wrap` around the replay executor.
fn replay_with(
    case: &Case,
    inputs: &Inputs,
    text: &str,
    wrap: impl FnOnce(Arc<dyn ToolExecutor>) -> Arc<dyn ToolExecutor>,
) -> (Ran, Vec<ReplayMismatch>) {
    let transcript = Transcript::from_json_str(text).expect("the transcript reads back");
    let replay = Arc::new(ReplayExecutor::new(transcript));
    let ran = run(case, inputs, wrap(replay.clone()));
    (ran, replay.mismatches())
}

fn replay(case: &Case, inputs: &Inputs, text: &str) -> (Ran, Vec<ReplayMismatch>) {
    replay_with(case, inputs, text, |replay| replay)
}

#[test]
fn appendix_a_and_b_replay_to_the_recorded_results_without_calling_tools() {
    for (name, inputs_file) in [("appendix-a", Some("inputs.json")), ("appendix-b", None)] {
        let case = Case::example(name);
        let inputs = inputs_file.map_or_else(Inputs::new, |file| inputs(&example(name, file)));
        let (recorded, text, tool_calls) = record(&case, &inputs);
        assert!(tool_calls > 0, "{name}: the recording called tools");
        let transcript = Transcript::from_json_str(&text).expect("reads back");
        assert_eq!(transcript.entries().len(), tool_calls, "{name}: one entry per call");
        assert_eq!(transcript.to_json().expect("JSON"), text, "{name}: the text round-trips exactly");
        let (replayed, mismatches) = replay(&case, &inputs, &text);
        assert_eq!(replayed.outcome, recorded.outcome, "{name}");
        assert!(!replayed.outcome.starts_with("failed"), "{name}: {}", replayed.outcome);
        assert!(mismatches.is_empty(), "{name}: {mismatches:?}");
    }
}

/// Delays each call to the executor it wraps by a per-tool time.
struct Delayed {
    inner: Arc<dyn ToolExecutor>,
    delays: BTreeMap<&'static str, u64>,
}

#[async_trait]
impl ToolExecutor for Delayed {
    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        let delay = self.delays.get(call.tool.as_ref()).copied().unwrap_or(0);
        tokio::time::sleep(Duration::from_millis(delay)).await;
        self.inner.dispatch(call).await
    }
}

#[test]
fn answers_arriving_in_another_order_still_replay() {
    let case = Case::example("appendix-a");
    let inputs = inputs(&example("appendix-a", "inputs.json"));
    // Gaps of 150 ms (on top of the fixtures' own delays) set the order the answers arrive in:
    // support.tickets first and crm.customer last when recording, the reverse when replaying.
    let delays = BTreeMap::from([("crm.customer", 300), ("billing.limits", 150), ("support.tickets", 0)]);
    let (recorded, text, _) = record_with(&case, &inputs, |inner| Arc::new(Delayed { inner, delays }));
    let delays = BTreeMap::from([("crm.customer", 0), ("billing.limits", 150), ("support.tickets", 300)]);
    let (replayed, mismatches) =
        replay_with(&case, &inputs, &text, |inner| Arc::new(Delayed { inner, delays }));
    let three = ["crm.customer", "billing.limits", "support.tickets"];
    let first_three =
        |ran: &Ran| ran.completed.iter().filter(|t| three.contains(&t.as_str())).cloned().collect::<Vec<_>>();
    assert_eq!(first_three(&recorded), ["support.tickets", "billing.limits", "crm.customer"]);
    assert_eq!(first_three(&replayed), ["crm.customer", "billing.limits", "support.tickets"]);
    assert_eq!(replayed.outcome, recorded.outcome);
    assert!(mismatches.is_empty(), "{mismatches:?}");
}

#[test]
fn an_edited_input_drifts_at_the_calls_it_reaches_and_shows_both_requests() {
    let case = Case::example("appendix-a");
    let (_, text, _) = record(&case, &inputs(r#"{"customer_id": "c-42"}"#));
    let (replayed, mismatches) = replay(&case, &inputs(r#"{"customer_id": "c-43"}"#), &text);
    assert!(replayed.outcome.starts_with("failed RL8304"), "{}", replayed.outcome);
    // The failed run never reaches the boundary, whose recorded calls are left unconsumed.
    let drifted: Vec<String> = mismatches
        .iter()
        .filter(|mismatch| mismatch.code() == codes::REPLAY_DRIFT)
        .map(ToString::to_string)
        .collect();
    let unconsumed = mismatches.iter().filter(|m| m.code() == codes::REPLAY_UNCONSUMED).count();
    assert_eq!(drifted.len() + unconsumed, mismatches.len(), "{mismatches:?}");
    assert!(unconsumed > 0, "{mismatches:?}");
    let customer = drifted.iter().find(|m| m.contains("crm.customer")).expect("crm.customer drifted");
    assert!(customer.contains("call site `"), "{customer}");
    assert!(customer.contains(r#"recorded `crm.customer(["c-42"])`"#), "{customer}");
    assert!(customer.contains(r#"requested `crm.customer(["c-43"])`"#), "{customer}");
}

const PERKS_REGISTRY: &str = r#"{"tools": [
    {"name": "crm.perks", "params": [{"name": "id", "schema": {"type": "string"}}],
     "outputSchema": {"type": "array", "items": {"type": "string"}}, "execution": "pure"}
]}"#;

#[test]
fn a_recorded_call_the_replay_never_requests_is_unconsumed() {
    let case = Case {
        source: "perks = if vip { return crm.perks(customer_id) } else { return [] }\nreturn perks\n".into(),
        registry: PERKS_REGISTRY.into(),
        tools: r#"{"crm.perks": [{"args": ["c-42"], "result": ["free shipping"]}]}"#.into(),
    };
    let (recorded, text, _) = record(&case, &inputs(r#"{"vip": true, "customer_id": "c-42"}"#));
    assert_eq!(recorded.outcome, r#"["free shipping"]"#);
    let (replayed, mismatches) = replay(&case, &inputs(r#"{"vip": false, "customer_id": "c-42"}"#), &text);
    assert_eq!(replayed.outcome, "[]");
    assert_eq!(mismatches.len(), 1, "{mismatches:?}");
    assert_eq!(mismatches[0].code(), codes::REPLAY_UNCONSUMED);
    let message = mismatches[0].to_string();
    assert!(message.contains(r#"recorded `crm.perks(["c-42"])`"#), "{message}");
    assert!(message.contains("call site `") && message.contains("never requested it"), "{message}");
}

#[test]
fn a_failed_attempt_with_cancelled_calls_replays_with_its_retry() {
    let mut case = Case::example("appendix-a");
    // The first fraud score fails, failing the boundary's first attempt and cancelling the
    // scores still out; the retry then succeeds.
    case.tools = case.tools.replace(
        r#""fraud.score": ["#,
        r#""fraud.score": [{ "error": { "code": "MODEL_DOWN", "message": "down", "retryable": true }, "times": 1 },"#,
    );
    let inputs = inputs(&example("appendix-a", "inputs.json"));
    let (recorded, text, _) = record(&case, &inputs);
    let transcript = Transcript::from_json_str(&text).expect("reads back");
    assert!(transcript.entries().iter().any(|e| e.key.attempt == 2), "the boundary was retried");
    let (replayed, mismatches) = replay(&case, &inputs, &text);
    assert_eq!(replayed.outcome, recorded.outcome);
    assert!(mismatches.is_empty(), "{mismatches:?}");
}

#[test]
fn a_transcript_of_another_program_is_refused_up_front() {
    let case = Case::example("appendix-b");
    let (recorded, text, _) = record(&case, &Inputs::new());
    let transcript = Transcript::from_json_str(&text).expect("reads back");
    assert_eq!(transcript.check_workflow(&recorded.workflow), Ok(()));
    let edited = Case { source: format!("{}\n", case.source), ..case };
    let registry =
        Registry::from_json_str(&edited.registry, &RegistryOptions::default()).expect("registry").registry;
    let analysis = runlet::analyze::analyze(&edited.source, &registry, &Inputs::new(), &Default::default());
    let mismatch = transcript.check_workflow(&analysis.identity).expect_err("edited");
    assert_eq!(mismatch.code(), codes::REPLAY_WORKFLOW_CHANGED);
    assert!(mismatch.to_string().contains(&recorded.workflow.source_digest.to_string()), "{mismatch}");
}
