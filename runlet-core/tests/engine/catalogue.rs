//! The fixture codes' catalogue entries: each `## Wrong` fixture file shows its code and each
//! `## Right` one loads; for `RL8204` the example files are asked `crm.customer("c-42")`.

use runlet::diag::{catalogue, codes};
use runlet::engine::ToolExecutor;
use runlet::scripted::{ScriptedExecutor, ToolFixtures};

use crate::{call, registry};

/// The first ```json block after `heading`.
fn example<'a>(text: &'a str, heading: &str) -> &'a str {
    let section = &text[text.find(heading).unwrap_or_else(|| panic!("no {heading}"))..];
    let start = section.find("```json\n").expect("a json block") + "```json\n".len();
    let end = section[start..].find("```").expect("a closed block");
    &section[start..start + end]
}

#[test]
fn fixture_file_examples_show_their_code() {
    for code in [codes::TOOL_FIXTURE_BAD_FIELD, codes::TOOL_FIXTURE_UNKNOWN_FIELD, codes::TOOL_FIXTURE_ANSWER]
    {
        let entry = catalogue::of(code).unwrap_or_else(|| panic!("{code} has no catalogue entry"));
        let wrong = ToolFixtures::from_json_str(example(entry.text, "## Wrong")).expect_err("Wrong fails");
        assert!(wrong.diagnostics.iter().any(|d| d.code == code), "{code}: {wrong}");
        let right = ToolFixtures::from_json_str(example(entry.text, "## Right"));
        assert!(right.is_ok(), "{code}: the Right example does not load: {right:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn the_unanswered_call_example_shows_its_code() {
    let entry = catalogue::of(codes::NO_FIXTURE_CASE).expect("an entry");
    let ask = |text: &str| {
        let executor = ScriptedExecutor::from_json_str(text).expect("loads");
        async move { executor.dispatch(call(&registry(), "crm.customer", r#"["c-42"]"#)).await }
    };
    let wrong = ask(example(entry.text, "## Wrong")).await;
    assert_eq!(wrong.map_err(|e| e.code), Err(codes::NO_FIXTURE_CASE.to_string()));
    assert!(ask(example(entry.text, "## Right")).await.is_ok());
}
