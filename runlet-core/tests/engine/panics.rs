//! A host executor that panics fails the call it was answering (`RL6105`) — whether the call was
//! polled on the run's task or ran on a task of its own — and the run goes on: a `boundary`
//! catches the failure. A Rust host's journal that panics stops the run, whose handle says so
//! (never that it was cancelled), and the run resumes from its last commit.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;

use runlet::analyze::Inputs;
use runlet::diag::codes;
use runlet::engine::{Outcome, ToolCall, ToolCapabilities, ToolError, ToolExecutor, ToolOutput};
use runlet::journal::{JournalErrorKind, MemoryJournal};
use runlet::registry::{Registry, RegistryOptions};
use runlet::runtime::Runtime;
use runlet::value::{Value, to_presentation_json};

use crate::faulty::FaultyAppends;

/// `t.boom` panics; `t.ok` answers its argument.
struct Panicking {
    inline: bool,
}

#[async_trait]
impl ToolExecutor for Panicking {
    fn capabilities(&self, _tool: &str) -> ToolCapabilities {
        ToolCapabilities { answers_inline: self.inline, ..ToolCapabilities::default() }
    }

    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        if &*call.tool == "t.boom" {
            panic!("the host's bug");
        }
        Ok(ToolOutput::new(call.arguments.iter().next().cloned().unwrap_or(Value::Null)))
    }
}

const PROGRAM: &str = "r = boundary {\n    return t.boom(1)\n} catch err {\n    return [err.code, err.message, err.retryable, err.uncertain]\n}\nreturn [r, t.ok(2)]\n";

fn registry() -> Registry {
    let tool = |name: &str, class: &str| {
        format!(
            r#"{{"name": "{name}", "params": [{{"name": "x", "schema": {{}}}}], "execution": "{class}"}}"#
        )
    };
    let text = format!(r#"{{"tools": [{}, {}]}}"#, tool("t.boom", "idempotent"), tool("t.ok", "pure"));
    Registry::from_json_str(&text, &RegistryOptions::default()).expect("registry").registry
}

fn run(inline: bool) -> String {
    let registry = registry();
    let runtime = Runtime::builder()
        .registry(registry)
        .executor(Arc::new(Panicking { inline }))
        .build()
        .expect("runtime");
    let program = runtime.compile(PROGRAM, &Inputs::new()).expect("compiles");
    let run = runtime.start(&program, &Inputs::new()).expect("starts");
    match run.wait().expect("journal works") {
        Outcome::Succeeded(value) => to_presentation_json(value.value()).expect("json"),
        other => panic!("the run should go on past the panic, got {other:?}"),
    }
}

#[test]
fn a_panicking_executor_fails_its_call_and_the_run_goes_on() {
    let expected = format!(
        r#"[["{}","the executor panicked while answering the call to `t.boom`: the host's bug",false,true],2]"#,
        codes::TOOL_EXECUTOR_PANICKED
    );
    assert_eq!(run(true), expected, "polled on the run's task");
    assert_eq!(run(false), expected, "on a task of its own");
}

#[test]
fn a_journal_that_panics_stops_its_run_which_says_so_and_resumes() {
    // Every append after the first panics while `broken` is set.
    let broken = Arc::new(AtomicBool::new(true));
    let panics = Arc::clone(&broken);
    let journal = Arc::new(FaultyAppends {
        inner: Arc::new(MemoryJournal::new()),
        fault: move |expected_seq| {
            if expected_seq > 0 && panics.load(Ordering::SeqCst) {
                panic!("the journal's bug");
            }
            None
        },
    });
    let runtime = Runtime::builder()
        .registry(registry())
        .executor(Arc::new(Panicking { inline: true }))
        .journal(journal.clone())
        .build()
        .expect("runtime");
    let program = runtime.compile("return [t.ok(1), t.ok(2)]\n", &Inputs::new()).expect("compiles");
    let run = runtime.start(&program, &Inputs::new()).expect("starts");
    let run_id = run.run_id().clone();
    let observer = run.observer();
    let error = run.wait().expect_err("the run's task panicked: no outcome, and never `Cancelled`");
    assert!(observer.is_finished(), "its observer ends with it, so whoever keeps it until then lets it go");
    assert_eq!((error.kind, error.code()), (JournalErrorKind::RunPanicked, codes::RUN_TASK_PANICKED));
    assert!(
        error.message.contains("its task panicked (the journal's bug)")
            && error.message.contains("resuming it"),
        "{error}"
    );
    // The run's task lets its claim go after delivering the outcome.
    let waited = std::time::Instant::now();
    while runtime.running() > 0 {
        assert!(
            waited.elapsed() < std::time::Duration::from_secs(10),
            "the stopped run is still counted as running"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }

    broken.store(false, Ordering::SeqCst);
    let resumed = runtime.resume(&program, &run_id).expect("resumes from its last commit");
    match resumed.wait().expect("the journal works again") {
        Outcome::Succeeded(value) => assert_eq!(to_presentation_json(value.value()).expect("json"), "[1,2]"),
        other => panic!("the resumed run should succeed, got {other:?}"),
    }
}
