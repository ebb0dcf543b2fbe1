//! The plan: a fixture as the C and Go host programs read it on their standard input, reduced to
//! what a host needs to run it — texts it hands to Runlet unread, and the scripted tools' cases
//! with canonical argument lists — so that no host parses the fixture format itself.
//!
//! The format is a header line `runlet-conformance-plan 1`, then fields, each a line
//! `KEY LENGTH` followed by LENGTH bytes of value and a newline:
//!
//! | key | value |
//! |---|---|
//! | `source`, `registry`, `inputs` | the program, the registry file, the host inputs (JSON object) |
//! | `limits` | the limits JSON object, empty for none |
//! | `crash` | decimal: stop the runtime after this many journal appends (absent: never) |
//! | `unanswered` | the tool error code for a call no case answers |
//! | `tool` | one per registry tool: its name |
//! | `case` | a tool name: starts a case of that tool; the fields below belong to it |
//! | `args` | the canonical argument list the case answers (presentation JSON); absent: any |
//! | `times` | decimal: how many calls the case answers; absent: any number |
//! | `delay_ms` | decimal: how long the case waits before it answers |
//! | `result` | the result as presentation JSON |
//! | `error_code`, `error_message` | the tool error the case fails with |
//! | `error_retryable` | `true` or `false` |
//! | `error_retry_after_ms` | decimal; absent: no hint |
//! | `error_details` | a JSON object; absent: none |
//!
//! A case has `result` or the `error_*` fields. A call is answered by the first case of its tool
//! whose `args` equal the call's argument list as values (numbers by value) and whose `times`
//! is not used up; the counters live in the host program, so they carry over a crash.

use runlet::diag::codes;
use runlet::registry::{Registry, RegistryOptions};
use runlet::scripted::{FixtureAnswer, ToolFixtures};
use runlet::value::{Value, to_presentation_json};

use crate::fixture::Fixture;

/// The first line of every plan.
pub const HEADER: &str = "runlet-conformance-plan 1\n";

/// The plan of `fixture`, or why the fixture cannot have one.
pub fn plan(fixture: &Fixture) -> Result<Vec<u8>, String> {
    let registry_text = fixture.registry_json();
    let registry = Registry::from_json_str(&registry_text, &RegistryOptions::default())
        .map_err(|e| format!("the registry does not load: {e}"))?
        .registry;
    let tools = ToolFixtures::from_json_str(&fixture.tools_json())
        .map_err(|e| format!("the tool fixtures do not load: {e}"))?;
    let mut plan = Plan(HEADER.as_bytes().to_vec());
    plan.field("source", &fixture.source);
    plan.field("registry", &registry_text);
    plan.field("inputs", &fixture.inputs_json());
    plan.field("limits", &fixture.limits_json());
    if let Some(crash) = fixture.crash {
        plan.field("crash", &crash.after_appends.to_string());
    }
    plan.field("unanswered", &codes::NO_FIXTURE_CASE.to_string());
    for (id, tool) in registry.tools() {
        if registry.intrinsic(id).is_none() {
            plan.field("tool", &tool.name.to_string());
        }
    }
    for (tool, cases) in tools.tools() {
        for case in cases {
            plan.field("case", tool);
            if let Some(args) = &case.args {
                plan.field("args", &json(&Value::List(args.clone()))?);
            }
            if let Some(times) = case.times {
                plan.field("times", &times.to_string());
            }
            plan.field("delay_ms", &case.delay.as_millis().to_string());
            match &case.answer {
                FixtureAnswer::Result(value) => plan.field("result", &json(value)?),
                FixtureAnswer::Error(error) => {
                    plan.field("error_code", &error.code);
                    plan.field("error_message", &error.message);
                    plan.field("error_retryable", if error.retryable { "true" } else { "false" });
                    if let Some(after) = error.retry_after {
                        plan.field("error_retry_after_ms", &after.as_millis().to_string());
                    }
                    if !error.details.is_empty() {
                        plan.field("error_details", &json(&Value::Object(error.details.clone()))?);
                    }
                }
            }
        }
    }
    Ok(plan.0)
}

struct Plan(Vec<u8>);

impl Plan {
    fn field(&mut self, key: &str, value: &str) {
        self.0.extend_from_slice(format!("{key} {}\n", value.len()).as_bytes());
        self.0.extend_from_slice(value.as_bytes());
        self.0.push(b'\n');
    }
}

fn json(value: &Value) -> Result<String, String> {
    to_presentation_json(value).map_err(|e| format!("a fixture value has no JSON form: {e}"))
}
