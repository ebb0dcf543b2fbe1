//! A host executor that panics fails the call it was answering (`RL6105`) — whether the call was
//! polled on the run's task or ran on a task of its own — and the run goes on: a `boundary`
//! catches the failure.

use std::sync::Arc;

use async_trait::async_trait;

use runlet::analyze::Inputs;
use runlet::diag::codes;
use runlet::engine::{Outcome, ToolCall, ToolCapabilities, ToolError, ToolExecutor, ToolOutput};
use runlet::registry::{Registry, RegistryOptions};
use runlet::runtime::Runtime;
use runlet::value::{Value, to_presentation_json};

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

fn run(inline: bool) -> String {
    let tool = |name: &str, class: &str| {
        format!(
            r#"{{"name": "{name}", "params": [{{"name": "x", "schema": {{}}}}], "execution": "{class}"}}"#
        )
    };
    let text = format!(r#"{{"tools": [{}, {}]}}"#, tool("t.boom", "idempotent"), tool("t.ok", "pure"));
    let registry = Registry::from_json_str(&text, &RegistryOptions::default()).expect("registry").registry;
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
