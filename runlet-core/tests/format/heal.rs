//! `heal` over the corpora: valid programs come back unchanged, every repair only inserts text,
//! a healed program parses cleanly, and each note points at the text it inserted.

use std::fmt::Write;

use proptest::prelude::*;
use runlet::syntax::{heal, parse};

use crate::token_soup::soup;

/// True when `inner` can be obtained from `outer` by deleting characters.
fn is_subsequence(inner: &str, outer: &str) -> bool {
    let mut outer = outer.chars();
    inner.chars().all(|c| outer.any(|o| o == c))
}

#[test]
fn valid_programs_come_back_unchanged() {
    for (name, source) in super::corpus("valid") {
        let healed = heal(&source);
        assert!(!healed.changed && healed.notes.is_empty() && healed.is_healed(), "{name} was changed");
        assert_eq!(healed.source, source);
    }
}

#[test]
fn malformed_corpus_heals_by_insertion_only() {
    let mut summary = String::new();
    for (name, source) in super::corpus("malformed") {
        let healed = heal(&source);
        assert!(is_subsequence(&source, &healed.source), "{name}: heal removed or replaced text");
        assert_eq!(healed.changed, healed.source != source);
        for note in &healed.notes {
            assert!(healed.source.get(note.span.range()).is_some_and(|t| !t.is_empty()), "{name}: note span");
        }
        if healed.is_healed() {
            assert!(!parse(&healed.source).has_errors(), "{name}: healed source still has errors");
        }
        let status = match (healed.is_healed(), healed.changed) {
            (true, true) => "healed",
            (true, false) => "unchanged",
            (false, _) => "not healable",
        };
        let _ = writeln!(summary, "== {name}: {status}");
        for note in &healed.notes {
            let inserted = &healed.source[note.span.range()];
            let _ = writeln!(summary, "   {} inserted {inserted:?} at {}", note.code, note.span.start);
        }
    }
    insta::assert_snapshot!("malformed_corpus", summary);
}

#[test]
fn missing_loop_return_is_inserted_and_noted() {
    let healed = heal("ys = for x in xs {\n    tools.score(x)\n}\nreturn ys\n");
    assert!(healed.is_healed());
    assert_eq!(healed.source, "ys = for x in xs {\n    return tools.score(x)\n}\nreturn ys\n");
    assert_eq!(healed.notes.len(), 1);
    assert_eq!(healed.notes[0].code.to_string(), "RL1017");
    assert_eq!(&healed.source[healed.notes[0].span.range()], "return ");
}

#[test]
fn an_added_return_goes_after_the_comment_ending_the_last_line() {
    let healed = heal("ys = for x in xs {\n    y = x # keep me here\n}\nreturn ys\n");
    assert_eq!(healed.source, "ys = for x in xs {\n    y = x # keep me here\n    return y\n}\nreturn ys\n");
    let healed = heal("total = 1 // the total\n");
    assert_eq!(healed.source, "total = 1 // the total\nreturn total\n");
}

#[test]
fn an_empty_program_is_offered_return_null_for_review() {
    for source in ["", "# nothing yet\n", "# nothing yet"] {
        let diagnostics = parse(source).diagnostics;
        assert_eq!(diagnostics.len(), 1, "{source:?}");
        let fix = &diagnostics[0].fixes[0];
        assert_eq!(fix.applicability, runlet::diag::Applicability::MaybeIncorrect);
        let fixed = runlet::diag::apply_fixes(source, [fix]).expect("applies");
        assert!(!parse(&fixed).has_errors(), "{fixed:?}");
        assert!(!heal(source).changed, "heal applied a fix that needs review");
    }
}

#[test]
fn replacements_are_never_applied() {
    // `&&` has a machine-applicable fix, but it replaces text, which heal must not do.
    let source = "x = a && b\nreturn x\n";
    let healed = heal(source);
    assert!(!healed.is_healed());
    assert_eq!(healed.source, source);
}

#[test]
fn a_string_left_open_at_the_end_is_closed_before_the_return_is_added() {
    let healed = heal("x = \"abc");
    assert!(healed.is_healed(), "{:?}", healed.remaining);
    assert_eq!(healed.source, "x = \"abc\"; return x");
}

#[test]
fn a_string_left_open_is_closed_before_the_separator_after_it() {
    let healed = heal("xs = [\n    \"a,\n    2\n]\nreturn xs\n");
    assert!(healed.is_healed(), "{:?}", healed.remaining);
    assert_eq!(healed.source, "xs = [\n    \"a,\",\n    2\n]\nreturn xs\n");
}

#[test]
fn a_repair_that_leaves_its_problem_in_place_is_not_repeated() {
    // The `]` goes after the unclosed `{`, so the list is still open after inserting it.
    let source = "[y=>if{";
    let healed = heal(source);
    assert!(!healed.is_healed());
    assert_eq!(healed.source, source);
    assert!(healed.notes.is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Whatever the input, heal only inserts, its notes point at inserted text, and a source it
    /// calls healed parses cleanly.
    #[test]
    fn heal_keeps_its_promises_on_token_soups(source in soup(60)) {
        let healed = heal(&source);
        prop_assert!(is_subsequence(&source, &healed.source));
        for note in &healed.notes {
            prop_assert!(healed.source.get(note.span.range()).is_some_and(|t| !t.is_empty()));
        }
        if healed.is_healed() {
            prop_assert!(!parse(&healed.source).has_errors());
        }
    }
}
