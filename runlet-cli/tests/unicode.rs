//! Unicode in names and strings end to end: names compare in NFC, names that invisible
//! characters alone tell apart are refused, and bidirectional controls in a string are flagged.

mod support;

use support::{Scratch, failure_code, json, runlet, stdout};

#[test]
fn an_nfd_name_in_source_calls_the_nfc_tool() {
    let scratch = Scratch::new("unicode-nfc");
    let registry = scratch.file(
        "registry.json",
        r#"{"tools": [{"name": "caf\u00e9.menu", "params": [], "outputSchema": {"type": "string"}, "execution": "pure"}]}"#,
    );
    let program = scratch.file("main.run", "menu = cafe\u{301}.menu()\nreturn menu\n");
    let output = runlet(&["check", &program, "--registry", &registry, "--format", "json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
}

#[test]
fn names_apart_only_by_a_zero_width_joiner_are_refused() {
    let scratch = Scratch::new("unicode-ignorable");
    let registry = scratch.file("registry.json", r#"{"tools": [{"name": "a.b"}, {"name": "a\u200d.b"}]}"#);
    let output = runlet(&[
        "check",
        &scratch.file("main.run", "return 1\n"),
        "--registry",
        &registry,
        "--format",
        "json",
    ]);
    assert_eq!(failure_code(&output), "RL8024");
    let message = json(&output)["diagnostics"][0]["message"].as_str().expect("message").to_owned();
    assert!(message.contains(r"`a\u{200D}.b`") && message.contains("`a.b`"), "{message}");
}

#[test]
fn a_bidi_control_in_a_string_is_a_warning_with_an_escaping_fix() {
    let scratch = Scratch::new("unicode-bidi");
    let program = scratch.file("main.run", "return \"user\u{202E}nimda\"\n");
    let output = runlet(&["check", &program, "--format", "json"]);
    assert_eq!(output.status.code(), Some(0), "a warning only: {}", stdout(&output));
    let diagnostic = &json(&output)["diagnostics"][0];
    assert_eq!(
        (diagnostic["code"].as_str(), diagnostic["severity"].as_str()),
        (Some("RL1006"), Some("warning"))
    );
    let fix = &diagnostic["fixes"][0];
    assert_eq!(fix["applicability"], "machine_applicable");
    assert_eq!(fix["edits"][0]["replacement"], r"\u202E");
    assert_eq!((fix["edits"][0]["start"].as_u64(), fix["edits"][0]["end"].as_u64()), (Some(12), Some(15)));
}

#[test]
fn a_host_input_name_with_an_invisible_character_is_refused_wherever_it_is_named() {
    let scratch = Scratch::new("unicode-input");
    let program = scratch.file("main.run", "return 1\n");
    let registry =
        scratch.file("registry.json", r#"{"tools": [], "inputs": {"a\ufe00": {"type": "integer"}}}"#);
    let output = runlet(&["check", &program, "--registry", &registry, "--format", "json"]);
    assert_eq!(failure_code(&output), "RL8018");
    let message = json(&output)["diagnostics"][0]["message"].as_str().expect("message").to_owned();
    assert!(message.contains(r"`a\u{FE00}`"), "{message}");

    let empty = scratch.file("empty.json", r#"{"tools": []}"#);
    let inputs = scratch.file("inputs.json", "{\"a\u{FE00}\": 1}");
    let tools = scratch.file("tools.json", "{}");
    let args = ["run", &program, "--registry", &empty, "--tools", &tools, "--format", "json"];
    for given in [vec!["--inputs", inputs.as_str()], vec!["--input", "a\u{FE00}=1"]] {
        let output = runlet(&[&args[..], &given[..]].concat());
        assert_eq!(output.status.code(), Some(2), "{}", stdout(&output));
        let report = json(&output);
        assert_eq!(report["diagnostics"][0]["code"], "RL8018", "{report}");
        assert!(report["diagnostics"][0]["message"].as_str().is_some_and(|m| m.contains(r"a\u{FE00}")));
    }
}
