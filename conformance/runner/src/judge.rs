//! The comparator: judges one host's observation of a fixture against the fixture's `expect`,
//! and one host's observation against another's. Both answer with what differed, in words.

use serde_json::Value as Json;

use crate::fixture::{Expect, ExpectedStatus};
use crate::observation::{Observation, Outcome};

/// Every way `seen` departs from `expect`; empty when it passes.
pub fn judge(expect: &Expect, seen: &Observation) -> Vec<String> {
    let mut differences = Vec::new();
    let mut differ = |what: String| differences.push(what);
    if let Outcome::HostError { message } = &seen.outcome {
        differ(format!("the host could not run it: {message}"));
        return differences;
    }
    if seen.outcome.status() != expect.status.as_str() {
        differ(format!(
            "status {} (expected {}){}",
            seen.outcome.status(),
            expect.status.as_str(),
            outcome_detail(&seen.outcome)
        ));
    }
    match (&seen.outcome, expect.status) {
        (Outcome::Succeeded { value }, ExpectedStatus::Succeeded) => {
            if let Some(expected) = &expect.value
                && !same_value(expected, value)
            {
                differ(format!("value {value} (expected {expected})"));
            }
        }
        (Outcome::Failed { error }, ExpectedStatus::Failed) => {
            if let Some(expected) = &expect.error {
                for (key, want) in expected {
                    let got = error.get(key);
                    let matches = match (key.as_str(), got) {
                        ("details", Some(got)) => is_subset(want, got),
                        (_, Some(got)) => same_value(want, got),
                        (_, None) => false,
                    };
                    if !matches {
                        let got = got.map_or_else(|| "nothing".to_owned(), Json::to_string);
                        differ(format!("error.{key} {got} (expected {want})"));
                    }
                }
            }
        }
        _ => {}
    }
    if let Some(expected) = &expect.diagnostics {
        let got = seen.diagnostic_codes().unwrap_or_default();
        if &got != expected {
            differ(format!("diagnostics {got:?} (expected {expected:?})"));
        }
    }
    let dispatches = seen.dispatches();
    for (tool, want) in expect.dispatches.iter().flatten() {
        let got = dispatches.get(tool.as_str()).copied().unwrap_or(0);
        if got != *want {
            differ(format!("{tool} dispatched {got} times (expected {want})"));
        }
    }
    for call in expect.calls.iter().flatten() {
        let found = seen.invocations.iter().any(|i| i.tool == call.tool && same_value(&call.args, &i.args));
        if !found {
            differ(format!("{} was never called with {}", call.tool, call.args));
        }
    }
    for (tool, want) in expect.max_in_flight.iter().flatten() {
        let got = seen.max_in_flight.get(tool).copied().unwrap_or(0);
        if got != *want {
            differ(format!("{tool} had at most {got} calls in flight (expected {want})"));
        }
    }
    if let Some(expected) = &expect.events {
        let kinds = seen.event_kinds();
        if let Some(missing) = first_missing(expected, &kinds) {
            differ(format!("events {kinds:?} lack {missing} in the order {expected:?}"));
        }
    }
    differences
}

/// Where the hosts' observations of one fixture differ in what a fixture can state (status,
/// value, error code and flags, diagnostics, dispatch counts); empty when they agree.
pub fn disagreement(reference: &Observation, other: &Observation) -> Vec<String> {
    let mut differences = Vec::new();
    let (a, b) = (&reference.outcome, &other.outcome);
    match (a, b) {
        (Outcome::Succeeded { value: x }, Outcome::Succeeded { value: y }) if !same_value(x, y) => {
            differences.push(format!("value {y} against {x}"));
        }
        (Outcome::Failed { error: x }, Outcome::Failed { error: y }) => {
            for key in ["code", "retryable", "uncertain"] {
                if x.get(key) != y.get(key) {
                    let show = |v: Option<&Json>| v.map_or_else(|| "nothing".to_owned(), Json::to_string);
                    differences.push(format!(
                        "error.{key} {} against {}",
                        show(y.get(key)),
                        show(x.get(key))
                    ));
                }
            }
        }
        _ if a.status() != b.status() => {
            differences.push(format!("status {} against {}", b.status(), a.status()))
        }
        _ => {}
    }
    if reference.diagnostic_codes() != other.diagnostic_codes() {
        differences.push(format!(
            "diagnostics {:?} against {:?}",
            other.diagnostic_codes().unwrap_or_default(),
            reference.diagnostic_codes().unwrap_or_default()
        ));
    }
    if reference.dispatches() != other.dispatches() {
        differences.push(format!("dispatches {:?} against {:?}", other.dispatches(), reference.dispatches()));
    }
    differences
}

/// A short word on how a run ended, for a status that was not expected.
fn outcome_detail(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Failed { error } => {
            let field = |key: &str| error.get(key).and_then(Json::as_str).unwrap_or("?").to_owned();
            format!(": {} {}", field("code"), field("message"))
        }
        Outcome::Succeeded { value } => format!(": {value}"),
        Outcome::CompileError { report } => {
            let first = report.pointer("/diagnostics/0");
            let field =
                |key: &str| first.and_then(|d| d.get(key)).and_then(Json::as_str).unwrap_or("?").to_owned();
            format!(": {} {}", field("code"), field("message"))
        }
        Outcome::Cancelled | Outcome::HostError { .. } => String::new(),
    }
}

/// Whether two JSON values are the same value: numbers by value (`1` equals `1.0`), objects
/// regardless of key order.
pub fn same_value(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => x.as_f64() == y.as_f64(),
        },
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_value(x, y))
        }
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(key, x)| y.get(key).is_some_and(|y| same_value(x, y)))
        }
        _ => a == b,
    }
}

/// Whether every key of the object `want` is in `got` with the same value (nested objects as
/// subsets too); other values compare as values.
fn is_subset(want: &Json, got: &Json) -> bool {
    match (want, got) {
        (Json::Object(want), Json::Object(got)) => {
            want.iter().all(|(key, want)| got.get(key).is_some_and(|got| is_subset(want, got)))
        }
        _ => same_value(want, got),
    }
}

/// The first of `expected` that does not occur, in order, as a subsequence of `kinds`.
fn first_missing<'a>(expected: &'a [String], kinds: &[&str]) -> Option<&'a str> {
    let mut rest = kinds.iter();
    expected.iter().find(|want| !rest.any(|kind| kind == want)).map(String::as_str)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn numbers_compare_by_value_and_objects_by_keys() {
        assert!(same_value(&json!(1), &json!(1.0)));
        assert!(same_value(&json!({"a": 1, "b": [2]}), &json!({"b": [2.0], "a": 1})));
        assert!(!same_value(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
        assert!(!same_value(&json!("1"), &json!(1)));
    }

    #[test]
    fn details_are_a_subset() {
        assert!(is_subset(&json!({"limit": "tool_calls"}), &json!({"limit": "tool_calls", "cap": 3})));
        assert!(!is_subset(&json!({"limit": "depth"}), &json!({"limit": "tool_calls"})));
    }

    #[test]
    fn events_are_a_subsequence() {
        let expected = vec!["RunCreated".to_owned(), "RunSucceeded".to_owned()];
        assert_eq!(first_missing(&expected, &["RunCreated", "NodeSucceeded", "RunSucceeded"]), None);
        assert_eq!(first_missing(&expected, &["RunSucceeded", "RunCreated"]), Some("RunSucceeded"));
    }
}
