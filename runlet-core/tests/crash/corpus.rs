//! Crash points of the hand-written corpus: the repository's examples with their tool fixtures
//! (delays left out: the harness's tools answer at once), and small programs over one tool of
//! each execution class — a call after another, a fan-out under a loop limit, a boundary that
//! retries around one, and calls that wait for a run's only concurrency permit.

use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use runlet::engine::{LimitKey, Limits, RunSettings, ToolCall, ToolError, ToolExecutor, ToolOutput};
use runlet::scripted::ScriptedExecutor;
use runlet::value::{List, Value};

use crate::examples::example;
use crate::harness::{Case, Tally};
use crate::{Config, crash_everywhere};

/// Example `name` run with its tool fixture file `tools`.
fn example_case(name: &str, tools: &str) -> Case {
    let mut fixtures: serde_json::Value = serde_json::from_str(&example(name, tools)).expect("fixture JSON");
    for cases in fixtures.as_object_mut().expect("tools by name").values_mut() {
        for case in cases.as_array_mut().expect("cases") {
            case.as_object_mut().expect("a case").remove("delay_ms");
        }
    }
    let fixtures = fixtures.to_string();
    let inputs = match name {
        "appendix-a" => example(name, "inputs.json"),
        _ => "{}".to_owned(),
    };
    Case {
        name: format!("{name}:{tools}"),
        source: example(name, "main.run"),
        registry: example(name, "registry.json"),
        inputs,
        limits: Limits::new(),
        settings: RunSettings::default(),
        tools: Box::new(move || Arc::new(ScriptedExecutor::from_json_str(&fixtures).expect("fixtures"))),
    }
}

/// `t.items(n)` lists 0 to n - 1 and `t.send(x)` answers x × 10, failing retryably once on 7
/// (in a first boundary attempt); `t.send` is of the class under test.
struct ClassTools;

#[async_trait]
impl ToolExecutor for ClassTools {
    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        let n = match call.arguments.iter().next() {
            Some(Value::Int(n)) => *n,
            _ => return Err(ToolError::new("BAD_ARGUMENT", "expected an integer")),
        };
        match &*call.tool {
            "t.items" => {
                Ok(ToolOutput::new(List::new((0..n).map(Value::Int).collect()).expect("list").into()))
            }
            _ if n == 7 && call.context.attempt == 1 => Err(ToolError::retryable("BUSY", "try again")),
            _ => Ok(ToolOutput::new(Value::Int(n * 10))),
        }
    }
}

fn class_registry(class: &str) -> String {
    format!(
        r#"{{"tools": [
            {{"name": "t.items", "params": [{{"name": "n", "schema": {{"type": "integer"}}}}], "outputSchema": {{"type": "array", "items": {{"type": "integer"}}}}, "execution": "pure"}},
            {{"name": "t.send", "params": [{{"name": "x", "schema": {{"type": "integer"}}}}], "outputSchema": {{"type": "integer"}}, "execution": "{class}", "errors": [{{"code": "BUSY", "retryable": true}}]}}
        ]}}"#
    )
}

/// The small programs, each with the per-run limits it runs under.
const PROGRAMS: &[(&str, &str, Option<u64>)] = &[
    ("chain", "a = t.send(1)\nb = t.send(a)\nreturn [a, b]\n", None),
    ("fan-out", "sent = for x in t.items(8) limit 3 {\n    return t.send(x)\n}\nreturn sent\n", None),
    (
        "nested",
        "rows = for n in t.items(3) limit 2 {\n    return for x in t.items(n + 2) limit 2 {\n        return t.send(x + n)\n    }\n}\nreturn rows\n",
        None,
    ),
    (
        "retried",
        "sent = for x in t.items(9) limit 3 {\n    return boundary retry 1 {\n        return t.send(x)\n    } catch err {\n        return 0 - x\n    }\n}\nreturn sent\n",
        None,
    ),
    ("one-permit", "a = t.send(1)\nb = t.send(2)\nc = t.send(3)\nreturn [a, b, c]\n", Some(1)),
];

fn class_cases() -> Vec<Case> {
    let classes = ["pure", "idempotent", "recoverable", "at_most_once", "unsafe"];
    let mut cases = Vec::new();
    for class in classes {
        for (name, source, concurrency) in PROGRAMS {
            let limits =
                concurrency.map_or_else(Limits::new, |cap| Limits::new().with(LimitKey::Concurrency, cap));
            cases.push(Case {
                name: format!("{name}:{class}"),
                source: (*source).to_owned(),
                registry: class_registry(class),
                inputs: "{}".to_owned(),
                limits,
                settings: RunSettings::default(),
                tools: Box::new(|| Arc::new(ClassTools)),
            });
        }
    }
    cases
}

#[test]
fn the_corpus_resumes_alike_after_a_crash_at_every_append() {
    let config = Config::from_env();
    let started = Instant::now();
    let mut cases = vec![
        example_case("appendix-a", "tools.json"),
        example_case("appendix-a", "tools-orders-failing.json"),
        example_case("appendix-b", "tools.json"),
        example_case("stdlib", "tools.json"),
    ];
    cases.extend(class_cases());
    let mut tally = Tally::default();
    for case in cases.iter().filter(|case| !config.skips(&case.name)) {
        tally.add(crash_everywhere(case, &config, usize::MAX).expect("no appends cap"));
    }
    eprintln!("the corpus: {} programs, {tally:?} in {:.1?}", cases.len(), started.elapsed());
    if config.only().is_none() {
        assert!(tally.decisions > 0 && tally.redispatched > 0 && tally.from_snapshot > 0, "{tally:?}");
    }
}
