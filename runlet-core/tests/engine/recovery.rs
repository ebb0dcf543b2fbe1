//! The host recovery API: a run whose worker stopped with a call left dispatching is resumed
//! through `Runtime`, and host decisions about its uncertain operation are journaled and honoured.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use runlet::analyze::Inputs;
use runlet::diag::codes;
use runlet::engine::event::Event;
use runlet::engine::{
    LimitKey, Limits, OperationId, Outcome, Resolution, ToolCall, ToolError, ToolExecutor, ToolOutput,
};
use runlet::journal::{Journal, JournalError, JournalErrorKind, MemoryJournal, RunId};
use runlet::registry::{Registry, RegistryOptions};
use runlet::runtime::{Executable, RecoveryError, RunOptions, Runtime};
use runlet::value::{Sensitivity, Value, to_presentation_json};

use crate::faulty::FaultyAppends;

/// `t.first` and `t.second` answer at once with their argument times ten; `t.second` is of the
/// class under test. The second call reads the first, so it starts only after the first is done.
/// `t.first`'s output is sensitive, so `t.second`'s operation id is keyed; its own is secret.
fn registry(class: &str) -> Registry {
    let tool = |name: &str, class: &str, label: &str| {
        format!(
            r#"{{"name": "{name}", "params": [{{"name": "x", "schema": {{"type": "integer"}}}}],
                "outputSchema": {{"type": "integer", "x-runlet-sensitivity": "{label}"}}, "execution": "{class}"}}"#
        )
    };
    let first = tool("t.first", "idempotent", "sensitive");
    let text = format!(r#"{{"tools": [{first}, {}]}}"#, tool("t.second", class, "secret"));
    Registry::from_json_str(&text, &RegistryOptions::default()).expect("registry").registry
}

const PROGRAM: &str = "a = t.first(1)\nb = t.second(a)\nreturn [a, b]\n";

/// Answers every call with its integer argument times ten, except the calls of `hangs`, which
/// never answer (a worker that stops while they run); records every dispatch.
struct Tools {
    hangs: Option<&'static str>,
    seen: Mutex<Vec<(String, OperationId)>>,
}

impl Tools {
    fn new(hangs: Option<&'static str>) -> Arc<Tools> {
        Arc::new(Tools { hangs, seen: Mutex::new(Vec::new()) })
    }

    fn seen(&self) -> Vec<(String, OperationId)> {
        self.seen.lock().expect("not poisoned").clone()
    }
}

#[async_trait]
impl ToolExecutor for Tools {
    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        self.seen.lock().expect("not poisoned").push((call.tool.to_string(), call.context.operation_id));
        if self.hangs == Some(&*call.tool) {
            std::future::pending::<()>().await;
        }
        match call.arguments.iter().next() {
            Some(Value::Int(x)) => Ok(ToolOutput::new(Value::Int(x * 10))),
            _ => Err(ToolError::new("BAD_ARGUMENT", "expected an integer")),
        }
    }
}

fn runtime(class: &str, journal: &Arc<MemoryJournal>, tools: &Arc<Tools>) -> (Runtime, Executable) {
    runtime_over(class, journal.clone(), tools)
}

fn runtime_over(class: &str, journal: Arc<dyn Journal>, tools: &Arc<Tools>) -> (Runtime, Executable) {
    let runtime = Runtime::builder()
        .registry(registry(class))
        .executor(tools.clone())
        .journal(journal)
        .digest_key("recovery-test", b"the key every worker of these runs shares")
        .worker_threads(1)
        .build()
        .expect("runtime");
    let program = runtime.compile(PROGRAM, &Inputs::new()).expect("compiles");
    (runtime, program)
}

/// A run of `PROGRAM` whose worker stopped while `t.second` was dispatching: `t.first` finished,
/// `t.second`'s `CallDispatchPrepared` is journaled and nothing answers it.
fn crashed(class: &str) -> (Arc<MemoryJournal>, RunId, Vec<(String, OperationId)>) {
    let journal = Arc::new(MemoryJournal::new());
    let tools = Tools::new(Some("t.second"));
    let (runtime, program) = runtime(class, &journal, &tools);
    let mut run = runtime.start(&program, &Inputs::new()).expect("starts");
    let run_id = run.run_id().clone();
    let mut journaled = None;
    while let Some((_, event)) = run.events().blocking_recv() {
        if let Event::CallDispatchPrepared { tool, operation, .. } = &event {
            if &**tool == "t.second" {
                journaled = *operation;
                break;
            }
        }
    }
    // The observer may hear of the prepared call before the executor has it.
    while !tools.seen().iter().any(|(tool, _)| tool == "t.second") {
        std::thread::yield_now();
    }
    let sent = tools.seen().into_iter().find(|(tool, _)| tool == "t.second").map(|(_, op)| op);
    assert_eq!(journaled, sent, "the journal names the operation the executor was sent");
    drop(run);
    drop(runtime);
    (journal, run_id, tools.seen())
}

/// The run's journal, decoded.
fn events(journal: &MemoryJournal, run: &RunId) -> Vec<Event> {
    let records = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
        .block_on(journal.read(run, 0, usize::MAX))
        .expect("reads");
    records.iter().map(|r| Event::decode(&r.bytes).expect("decodes").1).collect()
}

fn json(outcome: Outcome) -> String {
    match outcome {
        Outcome::Succeeded(value) => {
            let json = to_presentation_json(value.value()).expect("json");
            assert_eq!(
                value.max_sensitivity(),
                Sensitivity::Secret,
                "t.second's answer keeps its label: {json}"
            );
            json
        }
        Outcome::Failed(error) => format!("failed {} uncertain={}", error.code, error.uncertain),
        Outcome::Cancelled => "cancelled".into(),
    }
}

/// Resumes the crashed run with fresh tools that answer everything; the outcome and the calls
/// the resumed worker made.
fn resumed(class: &str, journal: &Arc<MemoryJournal>, run: &RunId) -> (String, Vec<(String, OperationId)>) {
    let tools = Tools::new(None);
    let (runtime, program) = runtime(class, journal, &tools);
    let outcome = runtime.resume(&program, run).expect("resumes").wait().expect("journal works");
    (json(outcome), tools.seen())
}

/// The uncertain operation of the crashed run, which is `t.second`'s.
fn uncertain(class: &str, journal: &Arc<MemoryJournal>, run: &RunId) -> OperationId {
    let (runtime, program) = runtime(class, journal, &Tools::new(None));
    let recovery = runtime.recovery(&program, run, RunOptions::default()).expect("recovers");
    let operations = recovery.uncertain_operations();
    assert_eq!(operations.len(), 1, "{operations:?}");
    assert_eq!(operations[0].tool, "t.second");
    assert_eq!(operations[0].class.as_str(), class);
    assert_eq!(operations[0].generation, 0);
    operations[0].operation_id
}

/// Applies `decide` to the crashed run's uncertain operation through a fresh runtime.
fn decide<T>(
    class: &str,
    journal: &Arc<MemoryJournal>,
    run: &RunId,
    decide: impl FnOnce(&Runtime, &Executable, &OperationId) -> Result<T, RecoveryError>,
) -> Result<T, RecoveryError> {
    let operation = uncertain(class, journal, run);
    let (runtime, program) = runtime(class, journal, &Tools::new(None));
    decide(&runtime, &program, &operation)
}

#[test]
fn a_crashed_run_resumes_through_the_runtime_without_repeating_finished_work() {
    let (journal, run, before) = crashed("idempotent");
    assert_eq!(before.iter().map(|(tool, _)| tool.as_str()).collect::<Vec<_>>(), ["t.first", "t.second"]);
    let (outcome, after) = resumed("idempotent", &journal, &run);
    assert_eq!(outcome, "[10,100]");
    assert_eq!(after.len(), 1, "t.first is not dispatched again: {after:?}");
    assert_eq!(after[0], before[1], "t.second is dispatched again under the same operation id");
    let journaled = events(&journal, &run);
    assert_eq!(journaled.iter().filter(|e| **e == Event::RunResumed).count(), 1);
    assert_eq!(journaled.last(), Some(&Event::RunSucceeded));
    let (again, calls) = resumed("idempotent", &journal, &run);
    assert_eq!((again.as_str(), calls.len()), ("[10,100]", 0), "a finished run stays finished");
}

#[test]
fn without_a_decision_an_at_most_once_operation_stays_uncertain() {
    let (journal, run, _) = crashed("at_most_once");
    let (outcome, after) = resumed("at_most_once", &journal, &run);
    assert_eq!(outcome, format!("failed {} uncertain=true", codes::UNCERTAIN_OUTCOME));
    assert!(after.is_empty(), "{after:?}");
    assert!(left_in_flight("at_most_once", &journal, &run).is_empty(), "the uncertain call failed");
}

#[test]
fn an_applied_resolution_is_the_calls_result_without_dispatching() {
    for class in ["at_most_once", "unsafe", "recoverable"] {
        let (journal, run, _) = crashed(class);
        decide(class, &journal, &run, |runtime, program, operation| {
            runtime.resolve_operation(program, &run, operation, Resolution::Applied(Value::Int(7)))
        })
        .expect("resolves");
        assert!(events(&journal, &run).iter().any(|e| matches!(e, Event::OperationResolved { .. })));
        let (outcome, after) = resumed(class, &journal, &run);
        assert_eq!(outcome, "[10,7]", "{class}");
        assert!(after.is_empty(), "{class}: {after:?}");
        let replayed = resumed(class, &journal, &run);
        assert_eq!(replayed, ("[10,7]".to_owned(), Vec::new()), "{class}: the decided journal replays");
        assert!(left_in_flight(class, &journal, &run).is_empty(), "{class}: the resolved call is answered");
    }
}

/// The calls a replay of the run's journal finds dispatched and not answered.
fn left_in_flight(class: &str, journal: &Arc<MemoryJournal>, run: &RunId) -> Vec<String> {
    let (runtime, program) = runtime(class, journal, &Tools::new(None));
    let core = runtime.core(&program, &RunOptions::default());
    let replayed = runlet::engine::replay(core, &events(journal, run)).expect("replays");
    replayed.in_flight.into_iter().map(|request| request.node_id.to_string()).collect()
}

#[test]
fn a_not_applied_resolution_dispatches_once_more_under_the_same_operation() {
    for class in ["at_most_once", "recoverable", "idempotent"] {
        let (journal, run, before) = crashed(class);
        decide(class, &journal, &run, |runtime, program, operation| {
            runtime.resolve_operation(program, &run, operation, Resolution::NotApplied)
        })
        .expect("resolves");
        let (outcome, after) = resumed(class, &journal, &run);
        assert_eq!(outcome, "[10,100]", "{class}");
        assert_eq!(after, vec![before[1].clone()], "{class}: one dispatch, the same (keyed) operation id");
    }
}

#[test]
fn a_failed_resolution_fails_the_call_with_a_confirmed_error() {
    let (journal, run, _) = crashed("unsafe");
    decide("unsafe", &journal, &run, |runtime, program, operation| {
        let error = ToolError::new("CARD_DECLINED", "the provider declined it").with_uncertain(true);
        runtime.resolve_operation(program, &run, operation, Resolution::Failed(error))
    })
    .expect("resolves");
    let (outcome, after) = resumed("unsafe", &journal, &run);
    assert_eq!(outcome, "failed CARD_DECLINED uncertain=false");
    assert!(after.is_empty());
    assert!(left_in_flight("unsafe", &journal, &run).is_empty(), "the resolved call failed");
}

#[test]
fn an_unsafe_operation_runs_again_only_under_an_authorized_fresh_generation() {
    let (journal, run, before) = crashed("unsafe");
    let refused = decide("unsafe", &journal, &run, |runtime, program, operation| {
        runtime.resolve_operation(program, &run, operation, Resolution::NotApplied)
    });
    assert_eq!(refused.expect_err("refused").code(), codes::RECOVERY_DECISION_REFUSED);
    let fresh = decide("unsafe", &journal, &run, |runtime, program, operation| {
        runtime.authorize_fresh_generation(program, &run, operation)
    })
    .expect("authorized");
    assert_ne!(fresh, before[1].1, "a new operation id");
    let authorized = Event::FreshGenerationAuthorized { node: node_of(&journal, &run).into(), generation: 1 };
    assert!(events(&journal, &run).contains(&authorized));
    let (outcome, after) = resumed("unsafe", &journal, &run);
    assert_eq!(outcome, "[10,100]");
    assert_eq!(after, vec![("t.second".to_owned(), fresh)], "dispatched once, under the fresh generation");
    let replayed = resumed("unsafe", &journal, &run);
    assert_eq!(replayed, ("[10,100]".to_owned(), Vec::new()), "the authorized journal replays");
}

/// The node of the crashed run's `t.second` call.
fn node_of(journal: &MemoryJournal, run: &RunId) -> String {
    events(journal, run)
        .into_iter()
        .find_map(|e| match e {
            Event::CallDispatchPrepared { node, tool, .. } if &*tool == "t.second" => Some(node.to_string()),
            _ => None,
        })
        .expect("prepared")
}

#[test]
fn fresh_generations_are_refused_where_the_class_keeps_its_operation_id() {
    for class in ["at_most_once", "pure", "idempotent", "recoverable"] {
        let (journal, run, _) = crashed(class);
        let refused = decide(class, &journal, &run, |runtime, program, operation| {
            runtime.authorize_fresh_generation(program, &run, operation)
        });
        assert_eq!(refused.expect_err("refused").code(), codes::RECOVERY_DECISION_REFUSED, "{class}");
    }
}

#[test]
fn decisions_about_operations_that_are_not_uncertain_are_refused() {
    let (journal, run, before) = crashed("at_most_once");
    let (runtime, program) = runtime("at_most_once", &journal, &Tools::new(None));
    let finished = runtime.resolve_operation(&program, &run, &before[0].1, Resolution::NotApplied);
    assert_eq!(finished.expect_err("t.first finished").code(), codes::OPERATION_NOT_UNCERTAIN);
    let mismatch = runtime.resolve_operation(
        &program,
        &run,
        &before[1].1,
        Resolution::Applied(Value::from("not an integer")),
    );
    assert_eq!(mismatch.expect_err("schema").code(), codes::RESOLVED_OUTPUT_MISMATCH);
    runtime
        .resolve_operation(&program, &run, &before[1].1, Resolution::Applied(Value::Int(7)))
        .expect("resolves");
    let twice = runtime.resolve_operation(&program, &run, &before[1].1, Resolution::NotApplied);
    assert_eq!(twice.expect_err("already decided").code(), codes::OPERATION_NOT_UNCERTAIN);
}

#[test]
fn a_run_is_not_resumed_under_another_program_or_configuration() {
    let (journal, run, _) = crashed("idempotent");
    let (runtime, _) = runtime("idempotent", &journal, &Tools::new(None));
    let edited = runtime
        .compile("a = t.first(1)\nb = t.second(a)\nreturn [b, a]\n", &Inputs::new())
        .expect("compiles");
    let error = runtime.resume(&edited, &run).expect_err("another source");
    assert_eq!(error.code(), codes::RUN_PIN_MISMATCH);
    let program = runtime.compile(PROGRAM, &Inputs::new()).expect("compiles");
    let limited = RunOptions { limits: Limits::new().with(LimitKey::ToolCalls, 9), ..RunOptions::default() };
    let error = runtime.recovery(&program, &run, limited).expect_err("other limits");
    assert_eq!(error.code(), codes::RUN_PIN_MISMATCH);
    let rekeyed = Runtime::builder()
        .registry(registry("idempotent"))
        .executor(Tools::new(None))
        .journal(journal.clone())
        .build()
        .expect("runtime");
    let program = rekeyed.compile(PROGRAM, &Inputs::new()).expect("compiles");
    let error = rekeyed.resume(&program, &run).expect_err("another digest key");
    assert_eq!(error.code(), codes::RUN_PIN_MISMATCH);
    let foreign = runtime.resume(&program, &run).expect_err("a program of another runtime");
    assert_eq!(foreign.code(), codes::FOREIGN_PROGRAM);
    let own = runtime.compile(PROGRAM, &Inputs::new()).expect("compiles");
    let unknown = runtime.resume(&own, &RunId::new("no-such-run")).expect_err("unknown run");
    assert_eq!(unknown.code(), codes::JOURNAL_UNKNOWN_RUN);
}

#[test]
fn a_run_whose_worker_stopped_before_its_first_commit_is_refused_rather_than_resumed() {
    let journal = Arc::new(MemoryJournal::new());
    let tools = Tools::new(None);
    // Every append fails: the worker stops after creating the run, before its first events commit.
    let unwritable = FaultyAppends {
        inner: journal.clone(),
        fault: |_| Some(JournalError::new(JournalErrorKind::Storage, "the worker stopped")),
    };
    let (stopped, program) = runtime_over("idempotent", Arc::new(unwritable), &tools);
    let run = stopped.start(&program, &Inputs::new()).expect("starts");
    let run_id = run.run_id().clone();
    assert!(run.wait().is_err(), "the run's first append fails");
    drop(stopped);
    assert!(events(&journal, &run_id).is_empty(), "the journal holds the header only");
    let (runtime, program) = runtime("idempotent", &journal, &tools);
    let error = runtime.resume(&program, &run_id).expect_err("a run that never started");
    assert_eq!(error.code(), codes::RUN_NOT_STARTED, "{error}");
    assert!(tools.seen().is_empty(), "nothing was dispatched: {:?}", tools.seen());
}

/// Three `at_most_once` calls of one loop left dispatching: the first resolved as failed, the
/// other two as applied. The resume fails the run with the host's error, and once the run has
/// ended none of the three is reported abandoned (its outcome unknown): the host decided each.
/// Before, the two answered ones were reported abandoned. (The failure is applied first, in
/// node order, and cancels the other two before their answers are journaled: applying answers
/// first would make journals of earlier versions that hold such a resume replay differently.)
#[test]
fn operations_the_host_resolved_are_never_reported_abandoned() {
    const FAN_OUT: &str = "xs = for i in [1, 2, 3] limit 3 { return t.second(i) }\nreturn xs\n";
    let class = "at_most_once";
    let journal = Arc::new(MemoryJournal::new());
    let compiled = |tools: &Arc<Tools>| {
        let (runtime, _) = runtime(class, &journal, tools);
        let program = runtime.compile(FAN_OUT, &Inputs::new()).expect("compiles");
        (runtime, program)
    };
    let hanging = Tools::new(Some("t.second"));
    let (runtime, program) = compiled(&hanging);
    let run = runtime.start(&program, &Inputs::new()).expect("starts");
    let run_id = run.run_id().clone();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while hanging.seen().len() < 3 {
        assert!(std::time::Instant::now() < deadline, "three calls dispatched: {:?}", hanging.seen());
        std::thread::yield_now();
    }
    drop(run);
    drop(runtime);
    let (runtime, program) = compiled(&Tools::new(None));
    let mut operations =
        runtime.recovery(&program, &run_id, RunOptions::default()).expect("recovers").uncertain_operations();
    operations.sort_by_key(|operation| operation.prepared_seq);
    assert_eq!(operations.len(), 3, "{operations:?}");
    let declined = ToolError::new("DECLINED", "the provider declined it");
    runtime
        .resolve_operation(&program, &run_id, &operations[0].operation_id, Resolution::Failed(declined))
        .expect("resolves");
    for (operation, output) in operations[1..].iter().zip([70, 80]) {
        runtime
            .resolve_operation(
                &program,
                &run_id,
                &operation.operation_id,
                Resolution::Applied(Value::Int(output)),
            )
            .expect("resolves");
    }
    let tools = Tools::new(None);
    let (runtime, program) = compiled(&tools);
    let outcome = runtime.resume(&program, &run_id).expect("resumes").wait().expect("journal works");
    assert!(matches!(&outcome, Outcome::Failed(error) if error.code == "DECLINED"), "{outcome:?}");
    assert!(tools.seen().is_empty(), "nothing is dispatched: {:?}", tools.seen());
    let recovery = runtime.recovery(&program, &run_id, RunOptions::default()).expect("recovers");
    assert!(recovery.outcome().is_some(), "the run ended");
    assert_eq!(recovery.abandoned_operations(), Vec::new(), "the host decided every operation");
}
