//! `heal` over the corpora: valid programs come back unchanged, every repair only inserts text,
//! a healed program parses cleanly, and each note points at the text it inserted.

use std::fmt::Write;

use runlet::syntax::{heal, parse};

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
fn replacements_are_never_applied() {
    // `&&` has a machine-applicable fix, but it replaces text, which heal must not do.
    let source = "x = a && b\nreturn x\n";
    let healed = heal(source);
    assert!(!healed.is_healed());
    assert_eq!(healed.source, source);
}
