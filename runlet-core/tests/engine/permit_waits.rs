//! Calls that wait for a concurrency permit are not dispatched: their `CallDispatchPrepared` is
//! journaled only once they hold every permit, so a worker that stops while they wait leaves
//! them ready (dispatched on resume), never uncertain.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use async_trait::async_trait;
use runlet::analyze::Inputs;
use runlet::engine::event::Event;
use runlet::engine::{LimitKey, Limits, Outcome, ToolCall, ToolError, ToolExecutor, ToolOutput};
use runlet::journal::{Journal, MemoryJournal, RunId};
use runlet::registry::{Registry, RegistryOptions};
use runlet::runtime::{RunOptions, Runtime};
use runlet::value::{Value, to_presentation_json};

/// Three independent `at_most_once` calls: without a cap they would all be in flight at once.
const PROGRAM: &str = "a = t.send(1)\nb = t.send(2)\nc = t.send(3)\nreturn [a, b, c]\n";

fn registry() -> Registry {
    let text = r#"{"tools": [{"name": "t.send", "params": [{"name": "x", "schema": {"type": "integer"}}],
        "outputSchema": {"type": "integer"}, "execution": "at_most_once"}]}"#;
    Registry::from_json_str(text, &RegistryOptions::default()).expect("registry").registry
}

/// Answers `t.send(x)` with `x` unless `hang` is set (a worker that stops mid-call); counts
/// every dispatch.
#[derive(Default)]
struct Sends {
    hang: AtomicBool,
    dispatched: AtomicUsize,
}

#[async_trait]
impl ToolExecutor for Sends {
    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        self.dispatched.fetch_add(1, Ordering::SeqCst);
        if self.hang.load(Ordering::SeqCst) {
            std::future::pending::<()>().await;
        }
        Ok(ToolOutput::new(call.arguments.iter().next().cloned().unwrap_or(Value::Null)))
    }
}

fn runtime(journal: &Arc<MemoryJournal>, tools: &Arc<Sends>) -> Runtime {
    Runtime::builder()
        .registry(registry())
        .executor(tools.clone())
        .journal(journal.clone())
        .digest_key("permit-waits", b"the key both workers share")
        .build()
        .expect("runtime")
}

fn capped() -> RunOptions {
    RunOptions { limits: Limits::new().with(LimitKey::Concurrency, 1), ..RunOptions::default() }
}

fn prepared(journal: &MemoryJournal, run: &RunId) -> usize {
    let reader = tokio::runtime::Builder::new_current_thread().build().expect("tokio");
    let records = reader.block_on(journal.read(run, 0, usize::MAX)).expect("reads");
    records
        .iter()
        .filter(|r| matches!(Event::decode(&r.bytes), Ok((_, Event::CallDispatchPrepared { .. }))))
        .count()
}

#[test]
fn calls_waiting_for_a_permit_are_neither_prepared_nor_uncertain_after_a_crash() {
    let journal = Arc::new(MemoryJournal::new());
    let tools = Arc::new(Sends { hang: AtomicBool::new(true), ..Sends::default() });
    let first = runtime(&journal, &tools);
    let program = first.compile(PROGRAM, &Inputs::new()).expect("compiles");
    let mut run = first.start_with(&program, &Inputs::new(), capped()).expect("starts");
    let run_id = run.run_id().clone();
    while !matches!(run.events().blocking_recv(), Some((_, Event::CallDispatchPrepared { .. })) | None) {}
    // The observer may hear of the prepared call before the executor has it.
    while tools.dispatched.load(Ordering::SeqCst) == 0 {
        std::thread::yield_now();
    }
    // The worker stops with one call in flight and two waiting for the run's only permit.
    drop(run);
    drop(first);
    assert_eq!(tools.dispatched.load(Ordering::SeqCst), 1);
    assert_eq!(prepared(&journal, &run_id), 1, "only the call holding the permit was prepared");

    tools.hang.store(false, Ordering::SeqCst);
    let second = runtime(&journal, &tools);
    let program = second.compile(PROGRAM, &Inputs::new()).expect("compiles");
    let recovery = second.recovery(&program, &run_id, capped()).expect("recovers");
    let uncertain = recovery.uncertain_operations();
    assert_eq!(uncertain.len(), 1, "the two calls that waited are not uncertain: {uncertain:?}");
    match recovery.resume().wait().expect("journal") {
        Outcome::Failed(error) => {
            assert!(error.uncertain, "the call in flight at the crash is uncertain: {error:?}");
            assert_eq!(error.node_id, uncertain[0].node_id);
        }
        other => panic!("expected the uncertain call to fail the run, got {other:?}"),
    }
}

#[test]
fn a_capped_run_prepares_each_call_when_it_gets_its_permit_and_replays_exactly() {
    let journal = Arc::new(MemoryJournal::new());
    let tools = Arc::new(Sends::default());
    let runtime = runtime(&journal, &tools);
    let program = runtime.compile(PROGRAM, &Inputs::new()).expect("compiles");
    let run = runtime.start_with(&program, &Inputs::new(), capped()).expect("starts");
    let run_id = run.run_id().clone();
    match run.wait().expect("journal") {
        Outcome::Succeeded(value) => {
            assert_eq!(to_presentation_json(value.value()).expect("json"), "[1,2,3]")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(prepared(&journal, &run_id), 3);
    // Resuming a finished run replays the journal, permit grants included, without a difference.
    let resumed = runtime.recovery(&program, &run_id, capped()).expect("replays exactly");
    assert!(resumed.uncertain_operations().is_empty());
    assert!(matches!(resumed.resume().wait().expect("journal"), Outcome::Succeeded(_)));
    assert_eq!(tools.dispatched.load(Ordering::SeqCst), 3, "nothing is dispatched again");
}
