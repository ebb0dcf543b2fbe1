//! The transcript reader: exact round trips of every answer shape, coded errors located at the
//! bad field, and a property test that no text — arbitrary or a damaged transcript — panics it.

use std::time::Duration;

use proptest::prelude::*;
use runlet::analyze::WorkflowIdentity;
use runlet::diag::{catalogue, codes};
use runlet::engine::{OperationId, ToolError};
use runlet::scripted::{CallKey, Transcript, TranscriptEntry};
use runlet::value::{List, Object, Value, parse_json, sha256};

fn workflow() -> WorkflowIdentity {
    WorkflowIdentity {
        source_digest: sha256(&Value::from("source")),
        registry_digest: sha256(&Value::from("registry")),
        language_version: 1,
    }
}

fn operation(n: u8) -> OperationId {
    format!("op:{}", hex_of(n)).parse().expect("an operation id")
}

fn hex_of(n: u8) -> String {
    format!("{n:02x}").repeat(32)
}

fn entry(site: &str, dynamic_key: &str, attempt: u32, answer: Result<Value, ToolError>) -> TranscriptEntry {
    TranscriptEntry {
        key: CallKey { call_site: site.into(), dynamic_key: dynamic_key.into(), attempt },
        operation_id: operation(attempt as u8),
        tool: "crm.customer".into(),
        arguments: List::new(vec![Value::from("c-42"), Value::Int(1)]).expect("shallow"),
        answer,
    }
}

/// A transcript with a result, an error using every field, and same-key entries out of key order.
fn sample() -> Transcript {
    let details = Object::from_pairs(vec![("limit".into(), Value::Int(3))]).expect("shallow");
    let error = ToolError::retryable("RATE_LIMITED", "slow down")
        .with_retry_after(Duration::from_millis(1500))
        .with_details(details)
        .with_uncertain(true);
    let number = parse_json(r#"{"score": 1.0, "count": 1, "tiny": 1e-300}"#).expect("JSON");
    Transcript::new(
        workflow(),
        vec![
            entry("let:b/value", "0:sha256:ab", 2, Ok(number)),
            entry("let:a/value", "", 1, Err(error)),
            entry("let:b/value", "0:sha256:ab", 1, Ok(Value::Null)),
        ],
    )
}

#[test]
fn every_answer_shape_round_trips_exactly() {
    let transcript = sample();
    let keys: Vec<(&str, u32)> =
        transcript.entries().iter().map(|e| (&*e.key.call_site, e.key.attempt)).collect();
    assert_eq!(keys, [("let:a/value", 1), ("let:b/value", 1), ("let:b/value", 2)], "sorted by key");
    let text = transcript.to_json().expect("JSON");
    let back = Transcript::from_json_str(&text).expect("reads back");
    assert_eq!(back, transcript);
    let score = match &back.entries()[2].answer {
        Ok(Value::Object(object)) => object.get("score").cloned(),
        other => panic!("{other:?}"),
    };
    assert!(matches!(score, Some(Value::Number(_))), "1.0 stays a Number: {score:?}");
}

#[test]
fn the_digest_key_id_round_trips_and_must_be_a_key_id() {
    let keyed = sample().with_digest_key("fp-0123456789abcdef");
    let text = keyed.to_json().expect("JSON");
    assert!(text.contains(r#""digest_key": "fp-0123456789abcdef""#), "{text}");
    let back = Transcript::from_json_str(&text).expect("reads back");
    assert_eq!(back.digest_key(), Some("fp-0123456789abcdef"));
    assert_eq!(back, keyed);
    assert_eq!(
        Transcript::from_json_str(&sample().to_json().expect("JSON")).expect("reads").digest_key(),
        None
    );
    for bad in [r#""tenant:7""#, r#""""#, "7"] {
        let text = text.replace(r#""fp-0123456789abcdef""#, bad);
        assert_eq!(codes_of(&text), ["RL8301"], "{bad}");
    }
}

#[test]
fn bytes_cannot_be_written() {
    let transcript =
        Transcript::new(workflow(), vec![entry("let:a/value", "", 1, Ok(Value::bytes(vec![1])))]);
    assert_eq!(transcript.to_json().map_err(|e| e.code()), Err(codes::NOT_JSON_REPRESENTABLE));
}

/// The codes reading `text` reports.
fn codes_of(text: &str) -> Vec<String> {
    match Transcript::from_json_str(text) {
        Ok(_) => Vec::new(),
        Err(error) => error.diagnostics.iter().map(|d| d.code.to_string()).collect(),
    }
}

#[test]
fn malformed_transcripts_are_coded_errors_at_the_bad_field() {
    let valid = sample().to_json().expect("JSON");
    let cases: Vec<(String, &str)> = vec![
        ("{".into(), "RL8101"),
        (r#"{"format": "runlet.transcript/1", "format": 1}"#.into(), "RL8101"),
        ("[]".into(), "RL8301"),
        (valid.replace("runlet.transcript/1", "runlet.transcript/2"), "RL8302"),
        (r#"{"calls": []}"#.into(), "RL8302"),
        (valid.replace(r#""attempt": 1"#, r#""attempt": -1"#), "RL8301"),
        (valid.replace(r#""attempt": 2"#, r#""attempt": 4294967296"#), "RL8301"),
        (valid.replace("op:01", "op:zz"), "RL8301"),
        (valid.replace(r#""tool": "crm.customer""#, r#""tool": "crm..customer""#), "RL8301"),
        (valid.replace(r#""retryable": true"#, r#""retryable": "yes""#), "RL8301"),
        (valid.replace(r#""retry_after_ms": 1500"#, r#""retry_after_ms": -1"#), "RL8301"),
        (valid.replace(r#""result": null"#, r#""result": null, "error": null"#), "RL8301"),
        (valid.replace(r#""result": null"#, r#""delay_ms": 5"#), "RL8301"),
        (valid.replace(r#""language_version": 1"#, r#""language_version": 1, "extra": 1"#), "RL8301"),
        (valid.replace("sha256:", "md5:"), "RL8301"),
    ];
    for (text, code) in cases {
        assert_ne!(text, valid, "the edit for {code} applied");
        let found = codes_of(&text);
        assert!(
            !found.is_empty() && found.iter().all(|c| c == code),
            "expected {code}, got {found:?}:\n{text}"
        );
    }
    let text = valid.replacen(r#""attempt": 1"#, r#""attempt": -1"#, 1);
    let error = Transcript::from_json_str(&text).expect_err("attempt -1");
    let diagnostic = &error.diagnostics[0];
    assert_eq!(diagnostic.notes, ["transcript path: /calls/0/attempt"]);
    assert!(
        text[diagnostic.span.start as usize..].starts_with(r#""attempt": -1"#),
        "the span covers the field"
    );
}

/// The first ```json block after `heading`.
fn json_block<'a>(text: &'a str, heading: &str) -> &'a str {
    let section = &text[text.find(heading).expect("heading")..];
    let start = section.find("```json\n").expect("a json block") + "```json\n".len();
    &section[start..start + section[start..].find("```").expect("closed")]
}

#[test]
fn the_transcript_catalogue_examples_show_their_code() {
    for code in [codes::TRANSCRIPT_BAD_FIELD, codes::TRANSCRIPT_FORMAT] {
        let entry = catalogue::of(code).expect("an entry");
        assert_eq!(codes_of(json_block(entry.text, "## Wrong")), [code.to_string()]);
        assert!(Transcript::from_json_str(json_block(entry.text, "## Right")).is_ok(), "{code}");
    }
}

/// Damages a text: truncates it, or replaces a range with other characters.
fn damaged(text: &str, at: usize, cut: usize, insert: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let at = at % (chars.len() + 1);
    let end = (at + cut).min(chars.len());
    chars[..at].iter().chain(insert.chars().collect::<Vec<_>>().iter()).chain(&chars[end..]).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn the_reader_never_panics_and_every_error_is_coded(text in "\\PC{0,200}") {
        if let Err(error) = Transcript::from_json_str(&text) {
            prop_assert!(!error.diagnostics.is_empty());
        }
    }

    #[test]
    fn damaged_transcripts_read_or_fail_with_transcript_codes(
        at in 0usize..2000,
        cut in 0usize..40,
        insert in prop_oneof![
            Just(String::new()),
            Just("0".to_owned()),
            Just("-1".to_owned()),
            Just("\"".to_owned()),
            Just("{".to_owned()),
            Just("]".to_owned()),
            Just("null".to_owned()),
            Just(",\"x\":1".to_owned()),
            "\\PC{0,6}",
        ],
    ) {
        let text = damaged(&sample().to_json().expect("JSON"), at, cut, &insert);
        match Transcript::from_json_str(&text) {
            Ok(transcript) => prop_assert!(transcript.to_json().is_ok()),
            Err(error) => {
                prop_assert!(!error.diagnostics.is_empty());
                for diagnostic in &error.diagnostics {
                    let code = diagnostic.code.to_string();
                    prop_assert!(["RL8101", "RL8301", "RL8302"].contains(&code.as_str()), "{code}");
                    prop_assert!(diagnostic.span.end as usize <= text.len());
                }
            }
        }
    }
}
