//! A runtime's own bookkeeping of its runs: programs run only where they were compiled, a
//! handle's events come from the run's observer whenever it asks, a run it drives is not
//! resumed or resolved beside itself, and `shutdown` cancels what is still running and waits
//! for it, attached tasks included.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use runlet::analyze::Inputs;
use runlet::diag::codes;
use runlet::engine::event::Event;
use runlet::engine::{Outcome, ToolCall, ToolError, ToolExecutor, ToolOutput};
use runlet::registry::{Registry, RegistryOptions};
use runlet::runtime::{ENDED_RUNS_KEPT_IN_MEMORY, RunOptions, Runtime, StartError};

const REGISTRY: &str = r#"{"tools": [{"name": "t.wait", "params": [{"name": "n", "schema": {"type": "integer"}}],
    "outputSchema": {"type": "integer"}, "execution": "idempotent"}]}"#;

/// Answers `t.wait(n)` with `n` after `n` milliseconds, unless the call is cancelled first.
#[derive(Debug)]
struct Waits;

#[async_trait]
impl ToolExecutor for Waits {
    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        let n = match call.arguments.iter().next() {
            Some(runlet::value::Value::Int(n)) => *n,
            _ => 0,
        };
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(n.unsigned_abs())) => Ok(ToolOutput::new(runlet::value::Value::Int(n))),
            () = call.context.cancellation.cancelled() => Err(ToolError::cancelled(&call.tool)),
        }
    }
}

fn runtime() -> Runtime {
    let registry = Registry::from_json_str(REGISTRY, &RegistryOptions::default()).expect("registry").registry;
    Runtime::builder().registry(registry).executor(Arc::new(Waits)).build().expect("runtime")
}

#[test]
fn a_program_runs_only_on_the_runtime_that_compiled_it() {
    let (first, second) = (runtime(), runtime());
    let program = first.compile("return t.wait(1)\n", &Inputs::new()).expect("compiles");
    let error = second.start(&program, &Inputs::new()).expect_err("another runtime's program");
    assert!(matches!(error, StartError::ForeignProgram), "{error}");
    assert_eq!(error.code(), codes::FOREIGN_PROGRAM);
    assert!(matches!(
        first.start(&program, &Inputs::new()).expect("starts").wait(),
        Ok(Outcome::Succeeded(_))
    ));
}

#[test]
fn a_handle_asking_for_events_after_the_run_ended_still_gets_every_one() {
    let runtime = runtime();
    let program = runtime.compile("a = t.wait(1)\nreturn t.wait(a)\n", &Inputs::new()).expect("compiles");
    let mut run = runtime.start(&program, &Inputs::new()).expect("starts");
    while runtime.running() > 0 {
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut seen = Vec::new();
    while let Some((seq, event)) = run.events().blocking_recv() {
        seen.push((seq, event.kind()));
    }
    assert!(run.events().failure().is_none());
    let numbers: Vec<u64> = seen.iter().map(|(seq, _)| *seq).collect();
    assert_eq!(numbers, (1..=seen.len() as u64).collect::<Vec<_>>(), "every record once, in order");
    assert_eq!(seen.first().map(|(_, kind)| *kind), Some("RunCreated"));
    assert_eq!(seen.last().map(|(_, kind)| *kind), Some("RunSucceeded"));
    assert_eq!(seen.iter().filter(|(_, kind)| *kind == "CallDispatchPrepared").count(), 2);
}

#[test]
fn a_run_this_runtime_drives_or_recovers_is_not_resumed_beside_itself() {
    let runtime = runtime();
    let program = runtime.compile("return t.wait(60000)\n", &Inputs::new()).expect("compiles");
    let run = runtime.start(&program, &Inputs::new()).expect("starts");
    let error = match runtime.recovery(&program, run.run_id(), RunOptions::default()) {
        Ok(_) => panic!("a live run was opened for recovery"),
        Err(error) => error,
    };
    assert_eq!(error.code(), codes::RUN_OWNED_ELSEWHERE, "{error}");
    assert!(error.to_string().contains("running or being recovered in this runtime"), "{error}");
    let run_id = run.run_id().clone();
    run.canceller().cancel();
    assert!(matches!(run.wait(), Ok(Outcome::Cancelled)));
    // Ended, it may be opened, once at a time: a cancelled run resumes to its recorded end.
    let recovery = runtime.recovery(&program, &run_id, RunOptions::default()).expect("opens");
    let Err(refused) = runtime.recovery(&program, &run_id, RunOptions::default()) else {
        panic!("a run opened for recovery was opened again")
    };
    assert_eq!(refused.code(), codes::RUN_OWNED_ELSEWHERE, "{refused}");
    drop(recovery);
    let recovery =
        runtime.recovery(&program, &run_id, RunOptions::default()).expect("let go, it opens again");
    assert!(matches!(recovery.resume().wait(), Ok(Outcome::Cancelled)));
    assert!(runtime.recovery(&program, &run_id, RunOptions::default()).is_ok(), "ended again");
}

#[test]
fn a_runtime_without_a_journal_keeps_the_latest_ended_runs() {
    let runtime = runtime();
    let program = runtime.compile("return t.wait(0)\n", &Inputs::new()).expect("compiles");
    let mut ids = Vec::new();
    for _ in 0..ENDED_RUNS_KEPT_IN_MEMORY + 10 {
        let run = runtime.start(&program, &Inputs::new()).expect("starts");
        ids.push(run.run_id().clone());
        assert!(matches!(run.wait(), Ok(Outcome::Succeeded(_))));
    }
    while runtime.running() > 0 {
        std::thread::sleep(Duration::from_millis(1));
    }
    let listed: Vec<_> = runtime.runs().expect("lists").into_iter().map(|run| run.run_id).collect();
    assert_eq!(listed, ids[10..], "the latest to end, in the order they were created");
}

/// Answers every call with the number its run's host data holds (-1 for none).
#[derive(Debug)]
struct HostNumber;

#[async_trait]
impl ToolExecutor for HostNumber {
    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        let number = call.context.host_data.as_ref().and_then(|data| data.downcast_ref::<i64>()).copied();
        Ok(ToolOutput::new(runlet::value::Value::Int(number.unwrap_or(-1))))
    }
}

#[test]
fn every_call_of_a_run_carries_the_host_data_it_was_started_with() {
    let registry = Registry::from_json_str(REGISTRY, &RegistryOptions::default()).expect("registry").registry;
    let runtime =
        Runtime::builder().registry(registry).executor(Arc::new(HostNumber)).build().expect("runtime");
    let program =
        runtime.compile("a = t.wait(1)\nreturn [a, t.wait(a)]\n", &Inputs::new()).expect("compiles");
    let tagged = RunOptions { host_data: Some(Arc::new(42_i64)), ..RunOptions::default() };
    let answered =
        |options| match runtime.start_with(&program, &Inputs::new(), options).expect("starts").wait() {
            Ok(Outcome::Succeeded(value)) => {
                runlet::value::to_presentation_json(value.value()).expect("json")
            }
            other => panic!("{other:?}"),
        };
    assert_eq!(answered(tagged), "[42,42]");
    assert_eq!(answered(RunOptions::default()), "[-1,-1]");
}

#[test]
fn shutdown_cancels_running_runs_and_waits_for_them_and_their_attached_tasks() {
    let runtime = runtime();
    let program = runtime.compile("return t.wait(60000)\n", &Inputs::new()).expect("compiles");
    let mut run = runtime.start(&program, &Inputs::new()).expect("starts");
    while !matches!(run.events().blocking_recv(), Some((_, Event::CallDispatchPrepared { .. })) | None) {}
    let attached_done = Arc::new(AtomicBool::new(false));
    let done = Arc::clone(&attached_done);
    runtime.spawn_attached(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        done.store(true, Ordering::SeqCst);
    });
    assert_eq!(runtime.running(), 1);
    runtime.shutdown();
    assert_eq!(runtime.running(), 0);
    assert!(attached_done.load(Ordering::SeqCst), "shutdown waited for the attached task");
    assert!(matches!(run.wait(), Ok(Outcome::Cancelled)));
    let late = runtime.start(&program, &Inputs::new()).expect("starts");
    assert!(matches!(late.wait(), Ok(Outcome::Cancelled)), "a run started after shutdown is cancelled");
    runtime.shutdown();
}
