//! Executor capabilities (spec §4.6): a cancelled call whose executor cannot cancel it is detached
//! at once — no acknowledgement is awaited — and what it answers later is an orphaned completion,
//! whether the call runs on the run's task or on one of its own.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::Notify;

use runlet::analyze::Inputs;
use runlet::diag::codes;
use runlet::engine::event::Event;
use runlet::engine::{Outcome, ToolCall, ToolCapabilities, ToolError, ToolExecutor, ToolOutput};
use runlet::registry::{Registry, RegistryOptions};
use runlet::runtime::Runtime;
use runlet::value::{Value, to_presentation_json};

/// `t.hang` answers when `release` is notified, `t.gate` when `gate` is; `t.fail` fails at once.
/// None of them can be cancelled.
struct Uncancellable {
    inline: bool,
    release: Notify,
    gate: Notify,
}

#[async_trait]
impl ToolExecutor for Uncancellable {
    fn capabilities(&self, _tool: &str) -> ToolCapabilities {
        ToolCapabilities { answers_inline: self.inline, ..ToolCapabilities::default() }
    }

    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        match &*call.tool {
            "t.hang" => self.release.notified().await,
            "t.gate" => self.gate.notified().await,
            _ => return Err(ToolError::new("BOOM", "it failed")),
        }
        Ok(ToolOutput::new(Value::from("done")))
    }
}

const PROGRAM: &str = "r = boundary {\n    h = t.hang(1)\n    f = t.fail(2)\n    return [h, f]\n} catch e {\n    return e.code\n}\ng = t.gate(r)\nreturn [r, g]\n";

#[test]
fn a_cancelled_call_that_cannot_be_cancelled_is_detached_and_its_late_answer_orphaned() {
    detached_and_orphaned(false);
}

#[test]
fn a_call_on_the_run_task_that_cannot_be_cancelled_is_detached_and_its_late_answer_orphaned() {
    detached_and_orphaned(true);
}

fn detached_and_orphaned(inline: bool) {
    let tool = |name: &str| {
        format!(
            r#"{{"name": "{name}", "params": [{{"name": "x", "schema": {{}}}}], "execution": "idempotent"}}"#
        )
    };
    let text = format!(r#"{{"tools": [{}, {}, {}]}}"#, tool("t.hang"), tool("t.fail"), tool("t.gate"));
    let registry = Registry::from_json_str(&text, &RegistryOptions::default()).expect("registry").registry;
    let tools = Arc::new(Uncancellable { inline, release: Notify::new(), gate: Notify::new() });
    let runtime = Runtime::builder()
        .registry(registry)
        .executor(tools.clone())
        .cancellation_grace(Some(Duration::from_secs(60)))
        .build()
        .expect("runtime");
    let program = runtime.compile(PROGRAM, &Inputs::new()).expect("compiles");
    let mut run = runtime.start(&program, &Inputs::new()).expect("starts");
    let mut seen = Vec::new();
    let mut next = |seen: &mut Vec<Event>, wanted: &dyn Fn(&Event) -> bool| {
        while let Some((_, event)) = run.events().blocking_recv() {
            seen.push(event.clone());
            if wanted(&event) {
                return;
            }
        }
        panic!("the run ended first: {seen:?}");
    };
    // The boundary catches without waiting out the grace: `t.hang` is detached, not timed out.
    next(&mut seen, &|e| matches!(e, Event::CallDispatchPrepared { tool, .. } if &**tool == "t.gate"));
    let detached = seen.iter().find_map(|e| match e {
        Event::CallFailed { error, .. } if error.code == codes::TOOL_CALL_CANCELLED.to_string() => {
            Some(error.to_tool_error().expect("details"))
        }
        _ => None,
    });
    let details = Value::Object(detached.expect("a cancellation answer for t.hang").details);
    assert_eq!(to_presentation_json(&details).expect("json"), r#"{"cancellation":"not_delivered"}"#);
    assert!(!seen.iter().any(|e| matches!(e, Event::TimerFired { .. })), "no grace was waited out: {seen:?}");
    tools.release.notify_one();
    next(&mut seen, &|e| matches!(e, Event::OrphanedCompletion { .. }));
    tools.gate.notify_one();
    match run.wait().expect("journal works") {
        Outcome::Succeeded(value) => {
            assert_eq!(to_presentation_json(value.value()).expect("json"), r#"["BOOM","done"]"#)
        }
        other => panic!("{other:?}"),
    }
}
