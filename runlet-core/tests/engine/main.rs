//! Tests of the engine's tool-call layer: golden diagnostics for tool fixture files, the scripted
//! executor's matching, delays, cancellation and concurrency, fixture loading properties, calls
//! detached on cancellation, calls polled on the run's task, panicking executors, and the host
//! recovery API.

mod catalogue;
mod detach;
mod faulty;
mod fixture_properties;
mod fixtures;
mod inline;
mod panics;
mod permit_waits;
mod recovery;
mod scripted;

use std::path::PathBuf;

use runlet::engine::{CallContext, OperationComponents, OperationId, ToolCall};

use runlet::analyze::WorkflowIdentity;
use runlet::journal::RunId;
use runlet::registry::{Registry, RegistryOptions};
use runlet::value::{List, Value, parse_json, sha256};

/// The text of a file under `tests/engine/`.
pub fn read(relative: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/engine").join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A registry whose tools take one argument of any value.
pub fn registry() -> Registry {
    let tool = |name: &str| format!(r#"{{"name": "{name}", "params": [{{"name": "x", "schema": {{}}}}]}}"#);
    let text =
        format!(r#"{{"tools": [{}, {}, {}]}}"#, tool("crm.customer"), tool("fraud.score"), tool("echo"));
    Registry::from_json_str(&text, &RegistryOptions::default()).expect("valid registry").registry
}

/// A call of `tool` with the canonical argument list written as JSON, in a fresh context.
pub fn call(registry: &Registry, tool: &str, arguments: &str) -> ToolCall {
    let Value::List(arguments) = parse_json(arguments).expect("valid JSON") else {
        panic!("arguments must be a JSON array: {arguments}")
    };
    call_with(registry, tool, arguments)
}

/// A call of `tool` with `arguments`, in a fresh context.
pub fn call_with(registry: &Registry, tool: &str, arguments: List) -> ToolCall {
    let workflow = WorkflowIdentity {
        source_digest: sha256(&Value::from("test program")),
        registry_digest: registry.digest().clone(),
        language_version: 1,
    };
    let input_digest = sha256(&Value::List(arguments.clone()));
    let operation_id = OperationId::derive(&OperationComponents {
        workflow: &workflow,
        call_site: "return/value",
        dynamic_key: "",
        schema_version: "1",
        input_digest: &input_digest,
        generation: 0,
    });
    let context =
        CallContext::new(RunId::new("run-1"), "n1", 1, operation_id, operation_id.dispatch_id(1), "1");
    let tool_id = registry.tool_named(tool).unwrap_or_else(|| panic!("no tool {tool}"));
    ToolCall { tool: tool.into(), tool_id, arguments, context }
}
