//! A runtime whose registry has the standard prelude and one tool, and helpers that compile and
//! run a program on it and report its value as presentation JSON or its failure code.

use std::sync::Arc;

use runlet::analyze::Inputs;
use runlet::engine::Outcome;
use runlet::registry::{Registry, RegistryOptions};
use runlet::runtime::Runtime;
use runlet::scripted::ScriptedExecutor;
use runlet::value::to_presentation_json;

/// A registry with the standard prelude and `store.items() -> List<Any>`, which answers with
/// whatever [`run_with`] is given as items.
pub const REGISTRY: &str = r#"{
    "prelude": "standard",
    "tools": [
        { "name": "store.items", "params": [], "outputSchema": { "type": "array" }, "execution": "pure" }
    ]
}"#;

pub fn registry(json: &str) -> Registry {
    Registry::from_json_str(json, &RegistryOptions::default()).expect("registry loads").registry
}

pub fn runtime(items: &str) -> Runtime {
    let fixtures = format!(r#"{{ "store.items": [{{ "result": {items} }}] }}"#);
    Runtime::builder()
        .registry(registry(REGISTRY))
        .executor(Arc::new(ScriptedExecutor::from_json_str(&fixtures).expect("fixtures")))
        .worker_threads(1)
        .build()
        .expect("runtime")
}

/// Host inputs from a JSON object.
pub fn inputs(json: &str) -> Inputs {
    Inputs::from_json(json, &Registry::empty()).expect("inputs JSON")
}

/// Runs `source` with `inputs`; the result's presentation JSON, or `RLnnnn` of the compile
/// error or run failure (compile errors are prefixed `compile `).
pub fn run_with(runtime: &Runtime, source: &str, inputs: &Inputs) -> String {
    let program = match runtime.compile(source, inputs) {
        Ok(program) => program,
        Err(diagnostics) => {
            let codes: Vec<String> = diagnostics.iter().map(|d| d.code.to_string()).collect();
            return format!("compile {}", codes.join(" "));
        }
    };
    match runtime.start(&program, inputs).expect("starts").wait().expect("journal works") {
        Outcome::Succeeded(value) => to_presentation_json(value.value()).expect("JSON"),
        Outcome::Failed(error) => error.code,
        Outcome::Cancelled => "cancelled".to_owned(),
    }
}

/// Runs `source` without inputs and without store items.
pub fn run(runtime: &Runtime, source: &str) -> String {
    run_with(runtime, source, &Inputs::new())
}
