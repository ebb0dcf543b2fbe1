//! Redaction closure for observers (spec §6.2): under the default view no secret-labelled tool
//! output — nor a message of a tool whose output is secret — appears in any published event or in
//! the graph snapshot, while a fully cleared view does see it.

use std::sync::Arc;

use proptest::prelude::*;
use runlet::analyze::Inputs;
use runlet::engine::Outcome;
use runlet::observe::{GraphEvent, ViewPolicy};
use runlet::runtime::Runtime;
use runlet::scripted::ScriptedExecutor;

use super::{drain, registry};

const VAULT: &str = r#"{"tools": [
    {"name": "vault.get", "params": [], "execution": "pure",
     "outputSchema": {"type": "object", "required": ["id", "token"], "properties": {
        "id": {"type": "string"},
        "token": {"type": "string", "x-runlet-sensitivity": "secret"}}}},
    {"name": "vault.check", "params": [{"name": "id", "schema": {"type": "string"}}], "execution": "pure",
     "outputSchema": {"type": "object", "properties": {"key": {"type": "string", "x-runlet-sensitivity": "secret"}}}},
    {"name": "notes.save", "params": [{"name": "text", "schema": {"type": "string"}}], "execution": "pure",
     "outputSchema": {"type": "string"}}
]}"#;

const PROGRAM: &str = "s = vault.get()\nchecked = boundary {\n    return vault.check(s.id)\n} catch err {\n    return \"unchecked\"\n}\nsaved = notes.save(s.id)\nreturn { saved, checked }\n";

/// Runs `source` over `tools` answered from `fixtures`; its outcome and everything it published
/// under `view` (the events, then the final snapshot) as JSON text.
pub(super) fn run_published(
    tools: &str,
    fixtures: &serde_json::Value,
    source: &str,
    view: &ViewPolicy,
) -> (Outcome, String) {
    let runtime = Runtime::builder()
        .registry(registry(tools))
        .executor(Arc::new(ScriptedExecutor::from_json_str(&fixtures.to_string()).expect("fixtures")))
        .build()
        .expect("runtime");
    let program = runtime.compile(source, &Inputs::new()).unwrap_or_else(|d| panic!("{source}\n{d:?}"));
    let run = runtime.start(&program, &Inputs::new()).expect("starts");
    let observer = run.observer();
    let subscription = observer.subscribe(0, view.clone());
    let outcome = run.wait().expect("journal");
    let events: Vec<GraphEvent> = drain(subscription);
    let published = format!(
        "{}\n{}",
        serde_json::to_string(&events).expect("events serialize"),
        serde_json::to_string(&observer.snapshot(view)).expect("snapshot serializes")
    );
    (outcome, published)
}

/// Everything the run published and its final snapshot under `view`, as JSON text.
fn published(secret: &str, view: ViewPolicy) -> String {
    let fixtures = serde_json::json!({
        "vault.get": [{"result": {"id": "v-1", "token": secret}}],
        "vault.check": [{"error": {"code": "LEAKY", "retryable": false, "message": format!("key {secret} is wrong")}}],
        "notes.save": [{"result": "saved"}]
    });
    run_published(VAULT, &fixtures, PROGRAM, &view).1
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn secret_values_never_reach_a_default_viewer(secret in "[A-Za-z0-9]{12,24}") {
        let secret = format!("SECRET{secret}");
        let hidden = published(&secret, ViewPolicy::default());
        prop_assert!(!hidden.contains(&secret), "the secret leaked: {hidden}");
        prop_assert!(hidden.contains("<redacted:secret>"), "the secret path is shown as redacted");
        let cleared = published(&secret, ViewPolicy::everything());
        prop_assert!(cleared.contains(&secret), "a cleared view sees the value, so the check can fail");
    }
}
