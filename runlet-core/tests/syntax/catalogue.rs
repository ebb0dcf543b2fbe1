//! The catalogue's examples are checked against the parser: for every code the front end
//! reports, the `Wrong` example reports that code and the `Right` example parses cleanly.

use runlet::diag::{Code, catalogue};
use runlet::syntax::parse;

/// The fenced `runlet` block following `heading` in a catalogue entry.
fn example<'t>(text: &'t str, heading: &str) -> &'t str {
    let section = &text[text.find(heading).expect("section") + heading.len()..];
    let start = section.find("```runlet\n").expect("runlet block") + "```runlet\n".len();
    let end = section[start..].find("```").expect("closing fence");
    &section[start..start + end]
}

#[test]
fn front_end_catalogue_examples_behave_as_documented() {
    // Limits need configured caps to trigger; they have their own tests. RL12xx and the other
    // RL2xxx codes are the analyzer's (tests/analyze/catalogue.rs).
    let front_end = |code: Code| code.number() < 1200 || code.number() == 2203;
    let mut checked = 0;
    for entry in catalogue::entries() {
        let code = Code::parse(entry.code).expect("declared");
        if !front_end(code) {
            continue;
        }
        let wrong = example(entry.text, "## Wrong");
        let reported: Vec<Code> = parse(wrong).diagnostics.iter().map(|d| d.code).collect();
        assert!(reported.contains(&code), "{}: the Wrong example reports {reported:?}", entry.code);
        let right = example(entry.text, "## Right");
        let diagnostics = parse(right).diagnostics;
        assert!(diagnostics.is_empty(), "{}: the Right example reports {diagnostics:?}", entry.code);
        checked += 1;
    }
    assert!(checked >= 40, "only {checked} entries checked");
}
