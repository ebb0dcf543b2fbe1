//! Tool fixture files: the INTERFACES.md §3 example loads as written, and each file under `bad/`
//! is rendered as the golden text diagnostics a host shows, pointing into the file.

use std::collections::BTreeSet;
use std::time::Duration;

use runlet::diag::{Code, codes, render_text};
use runlet::scripted::{FixtureAnswer, ToolFixtures};
use runlet::value::{Value, parse_json};

use crate::read;

/// The example of INTERFACES.md §3.
pub const INTERFACES_EXAMPLE: &str = r#"{
  "crm.customer": [
    { "args": ["c-42"], "result": { "id": "c-42", "email": "a@example.com", "tier": "pro" }, "delay_ms": 200 }
  ],
  "fraud.score": [
    { "error": { "code": "RATE_LIMITED", "message": "slow down", "retryable": true }, "times": 1 },
    { "result": 0.25, "delay_ms": 50 }
  ]
}"#;

/// Renders the diagnostics of `bad/{case}.json` and returns the codes they carry.
fn golden(case: &str) -> BTreeSet<Code> {
    let source = read(&format!("bad/{case}.json"));
    let error = ToolFixtures::from_json_str(&source).expect_err("the file has errors");
    insta::assert_snapshot!(case, render_text(&source, &format!("{case}.json"), &error.diagnostics));
    error.diagnostics.iter().map(|d| d.code).collect()
}

#[test]
fn the_interfaces_example_loads() {
    let fixtures = ToolFixtures::from_json_str(INTERFACES_EXAMPLE).expect("loads");
    let tools: Vec<&str> = fixtures.tools().map(|(name, _)| &**name).collect();
    assert_eq!(tools, ["crm.customer", "fraud.score"]);
    let customer = &fixtures.cases("crm.customer")[0];
    assert_eq!(customer.args.clone().map(Value::List), Some(parse_json(r#"["c-42"]"#).expect("json")));
    assert_eq!(customer.delay, Duration::from_millis(200));
    assert_eq!(customer.times, None);
    let expected = parse_json(r#"{"email": "a@example.com", "id": "c-42", "tier": "pro"}"#).expect("json");
    assert_eq!(customer.answer, FixtureAnswer::Result(expected));
    let [limited, score] = fixtures.cases("fraud.score") else { panic!("two cases") };
    let FixtureAnswer::Error(error) = &limited.answer else { panic!("an error case") };
    assert_eq!(
        (error.code.as_str(), error.message.as_str(), error.retryable),
        ("RATE_LIMITED", "slow down", true)
    );
    assert_eq!((error.retry_after, limited.times, limited.delay), (None, Some(1), Duration::ZERO));
    assert_eq!(score.answer, FixtureAnswer::Result(Value::number(0.25).expect("finite")));
    assert_eq!((score.args.is_none(), score.delay), (true, Duration::from_millis(50)));
    assert!(fixtures.cases("no.such").is_empty());
}

#[test]
fn error_answers_keep_every_field() {
    let text = r#"{"t": [{"error": {"code": "C", "message": "m", "retryable": false,
        "retry_after_ms": 1500, "details": {"limit": 3}}}]}"#;
    let fixtures = ToolFixtures::from_json_str(text).expect("loads");
    let FixtureAnswer::Error(error) = &fixtures.cases("t")[0].answer else { panic!("an error case") };
    assert!(!error.retryable && !error.uncertain);
    assert_eq!(error.retry_after, Some(Duration::from_millis(1500)));
    assert_eq!(Value::Object(error.details.clone()), parse_json(r#"{"limit": 3}"#).expect("json"));
}

#[test]
fn an_empty_file_and_an_empty_case_list_load() {
    assert_eq!(ToolFixtures::from_json_str("{}").expect("loads").tools().count(), 0);
    let fixtures = ToolFixtures::from_json_str(r#"{"a.b": []}"#).expect("loads");
    assert!(fixtures.cases("a.b").is_empty());
}

#[test]
fn not_object() {
    assert_eq!(golden("not_object"), BTreeSet::from([codes::TOOL_FIXTURE_BAD_FIELD]));
}

#[test]
fn not_json() {
    assert_eq!(golden("not_json"), BTreeSet::from([codes::INVALID_HOST_JSON]));
}

#[test]
fn duplicate_key() {
    assert_eq!(golden("duplicate_key"), BTreeSet::from([codes::INVALID_HOST_JSON]));
}

#[test]
fn integer_out_of_range() {
    assert_eq!(golden("integer_out_of_range"), BTreeSet::from([codes::INVALID_HOST_JSON]));
}

#[test]
fn bad_fields() {
    assert_eq!(golden("bad_fields"), BTreeSet::from([codes::TOOL_FIXTURE_BAD_FIELD]));
}

#[test]
fn unknown_fields() {
    assert_eq!(golden("unknown_fields"), BTreeSet::from([codes::TOOL_FIXTURE_UNKNOWN_FIELD]));
}

#[test]
fn answers() {
    assert_eq!(golden("answers"), BTreeSet::from([codes::TOOL_FIXTURE_ANSWER]));
}

#[test]
fn bad_errors() {
    assert_eq!(golden("bad_errors"), BTreeSet::from([codes::TOOL_FIXTURE_BAD_FIELD]));
}
