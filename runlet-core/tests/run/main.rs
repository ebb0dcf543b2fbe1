//! Programs compiled from source and run end to end through the `Runtime`: parallel starts, loop
//! limits under real concurrency, result order, failures, and the journal a run leaves.

mod cap_properties;
mod failure;
mod keyed;
mod lifecycle;
mod limit_catalogue;
mod limits;
mod retained;
mod snapshots;

#[path = "../common/examples.rs"]
mod examples;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use examples::{example, inputs, registry};
use runlet::analyze::Inputs;
use runlet::engine::event::Event;
use runlet::engine::{Outcome, ToolCall, ToolError, ToolExecutor, ToolOutput};
use runlet::journal::{Journal, MemoryJournal};
use runlet::runtime::Runtime;
use runlet::scripted::ScriptedExecutor;
use runlet::value::{Value, parse_json, to_presentation_json};

fn succeeded(outcome: Outcome) -> String {
    match outcome {
        Outcome::Succeeded(value) => to_presentation_json(value.value()).expect("JSON"),
        other => panic!("expected success, got {other:?}"),
    }
}

#[test]
fn appendix_a_starts_its_three_independent_calls_together() {
    let journal = Arc::new(MemoryJournal::new());
    let runtime = Runtime::builder()
        .registry(registry(&example("appendix-a", "registry.json")))
        .executor(Arc::new(
            ScriptedExecutor::from_json_str(&example("appendix-a", "tools.json")).expect("fixtures"),
        ))
        .journal(journal.clone())
        .build()
        .expect("runtime");
    let inputs = inputs(&example("appendix-a", "inputs.json"));
    let program = runtime.compile(&example("appendix-a", "main.run"), &inputs).expect("compiles");
    let mut run = runtime.start(&program, &inputs).expect("starts");
    let run_id = run.run_id().clone();
    let mut events: Vec<Event> = Vec::new();
    while !events.iter().any(|e| matches!(e, Event::RunSucceeded | Event::RunFailed { .. })) {
        match run.events().blocking_recv() {
            Some((_, event)) => events.push(event),
            None => panic!("the run's event stream closed before its end event"),
        }
    }
    assert_eq!(
        succeeded(run.wait().expect("journal")),
        "\"Ada (pro) has 3 recent orders, none risky, and one open high-priority refund ticket.\""
    );
    let first_answer = events.iter().position(|e| matches!(e, Event::CallCompleted { .. })).expect("answers");
    let started: Vec<&str> = events[..first_answer]
        .iter()
        .filter_map(|e| match e {
            Event::CallDispatchPrepared { tool, .. } => Some(&**tool),
            _ => None,
        })
        .collect();
    assert_eq!(started.len(), 3, "{started:?}");
    for tool in ["crm.customer", "billing.limits", "support.tickets"] {
        assert!(started.contains(&tool), "{tool} did not start with the others: {started:?}");
    }
    let scores = events
        .iter()
        .filter(|e| matches!(e, Event::CallDispatchPrepared { tool, .. } if &**tool == "fraud.score"))
        .count();
    assert_eq!(scores, 3, "one fraud score per order");
    let journaled = tokio::runtime::Runtime::new()
        .expect("tokio")
        .block_on(journal.read(&run_id, 0, usize::MAX))
        .expect("journal read");
    assert_eq!(journaled.len(), events.len(), "every published event is journaled");
}

/// Counts calls in flight and remembers the most at once.
struct Concurrency {
    in_flight: AtomicUsize,
    peak: AtomicUsize,
}

#[async_trait]
impl ToolExecutor for Concurrency {
    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(2)).await;
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        let value = match call.tool.as_ref() {
            "numbers" => {
                parse_json(&format!("[{}]", (1..=30).map(|n| n.to_string()).collect::<Vec<_>>().join(",")))
            }
            _ => match call.arguments.iter().next() {
                Some(Value::Int(n)) => Ok(Value::Int(n * n)),
                other => return Err(ToolError::new("BAD_ARGUMENT", format!("{other:?}"))),
            },
        };
        Ok(ToolOutput::new(value.expect("JSON")))
    }
}

const SQUARES: &str = r#"{"tools": [
    {"name": "numbers", "params": [], "outputSchema": {"type": "array", "items": {"type": "integer"}}, "execution": "pure"},
    {"name": "square", "params": [{"name": "n", "schema": {"type": "integer"}}], "outputSchema": {"type": "integer"}, "execution": "pure"}
]}"#;

#[test]
fn a_loop_never_runs_more_than_its_limit_and_keeps_input_order() {
    let executor = Arc::new(Concurrency { in_flight: AtomicUsize::new(0), peak: AtomicUsize::new(0) });
    let runtime =
        Runtime::builder().registry(registry(SQUARES)).executor(executor.clone()).build().expect("runtime");
    let source = "squares = for n in numbers() limit 4 {\n    return square(n)\n}\nreturn squares\n";
    let program = runtime.compile(source, &Inputs::new()).expect("compiles");
    let result = succeeded(runtime.start(&program, &Inputs::new()).expect("starts").wait().expect("journal"));
    let expected: Vec<String> = (1..=30).map(|n: i64| (n * n).to_string()).collect();
    assert_eq!(result, format!("[{}]", expected.join(",")));
    let peak = executor.peak.load(Ordering::SeqCst);
    assert!((1..=4).contains(&peak), "{peak} calls ran at once under `limit 4`");
}

#[test]
fn one_program_runs_many_times_at_once_with_independent_results() {
    let runtime = Runtime::builder()
        .registry(registry(SQUARES))
        .executor(Arc::new(Concurrency { in_flight: AtomicUsize::new(0), peak: AtomicUsize::new(0) }))
        .build()
        .expect("runtime");
    let program = runtime
        .compile("return for n in numbers() { return square(n) }\n", &Inputs::new())
        .expect("compiles");
    let runs: Vec<_> = (0..16).map(|_| runtime.start(&program, &Inputs::new()).expect("starts")).collect();
    let ids: std::collections::BTreeSet<String> = runs.iter().map(|r| r.run_id().to_string()).collect();
    assert_eq!(ids.len(), 16, "every run has its own id");
    let results: Vec<String> = runs.into_iter().map(|r| succeeded(r.wait().expect("journal"))).collect();
    assert!(results.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn a_failing_tool_fails_the_run_with_its_own_code() {
    let runtime = Runtime::builder()
        .registry(registry(SQUARES))
        .executor(Arc::new(
            ScriptedExecutor::from_json_str(
                r#"{"numbers": [{"result": [1, 2]}], "square": [{"error": {"code": "QUOTA", "message": "no more squares", "retryable": false}}]}"#,
            )
            .expect("fixtures"),
        ))
        .build()
        .expect("runtime");
    let program = runtime
        .compile("return for n in numbers() { return square(n) }\n", &Inputs::new())
        .expect("compiles");
    match runtime.start(&program, &Inputs::new()).expect("starts").wait().expect("journal") {
        Outcome::Failed(error) => {
            assert_eq!(error.code, "QUOTA");
            assert_eq!(error.tool.as_deref(), Some("square"));
        }
        other => panic!("expected failure, got {other:?}"),
    }
}

#[test]
fn compile_errors_come_back_as_diagnostics_and_inputs_are_checked() {
    let runtime = Runtime::builder()
        .registry(registry(SQUARES))
        .executor(Arc::new(ScriptedExecutor::from_json_str("{}").expect("fixtures")))
        .build()
        .expect("runtime");
    let diagnostics = runtime.compile("return squar(2)\n", &Inputs::new()).expect_err("unknown tool");
    assert!(
        diagnostics[0].candidates.iter().any(|c| c.starts_with("square")),
        "{:?}",
        diagnostics[0].candidates
    );
    let program = runtime.compile("return square(n)\n", &inputs(r#"{"n": 3}"#)).expect("compiles");
    assert!(runtime.start(&program, &Inputs::new()).is_err(), "a missing input is refused");
}

/// Records whether it was ever called.
struct MustNotBeCalled(AtomicUsize);

#[async_trait]
impl ToolExecutor for MustNotBeCalled {
    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        match call.tool.as_ref() {
            "names.short" => Ok(ToolOutput::new(Value::from("ab"))),
            other => Err(ToolError::new("UNEXPECTED", other.to_owned())),
        }
    }
}

#[test]
fn arguments_that_break_a_parameter_constraint_are_not_sent() {
    let registry = registry(
        r#"{"tools": [
        {"name": "names.short", "params": [], "outputSchema": {"type": "string"}, "execution": "pure"},
        {"name": "names.greet", "params": [{"name": "name", "schema": {"type": "string", "minLength": 3}}],
         "outputSchema": {"type": "string"}, "execution": "pure"}]}"#,
    );
    let executor = Arc::new(MustNotBeCalled(AtomicUsize::new(0)));
    let runtime = Runtime::builder().registry(registry).executor(executor.clone()).build().expect("runtime");
    let program = runtime.compile("return names.greet(names.short())\n", &Inputs::new()).expect("compiles");
    match runtime.start(&program, &Inputs::new()).expect("starts").wait().expect("journal") {
        Outcome::Failed(error) => assert_eq!(error.code, "TOOL_INPUT_SCHEMA_MISMATCH"),
        other => panic!("expected failure, got {other:?}"),
    }
    assert_eq!(executor.0.load(Ordering::SeqCst), 1, "only names.short was called");
}
