//! Syntax paths: golden paths for the motivating program, and the stability property — layout,
//! comments and inserted bindings do not change the paths of existing nodes.

use proptest::prelude::*;
use runlet::syntax::path::{SyntaxPath, syntax_paths};
use runlet::syntax::{parse, token::TokenKind};

use crate::support::corpus;

fn paths(source: &str) -> Vec<SyntaxPath> {
    let parse = parse(source);
    assert!(parse.diagnostics.is_empty(), "{source}: {:?}", parse.diagnostics);
    syntax_paths(&parse.program).into_iter().map(|(path, _)| path).collect()
}

#[test]
fn appendix_a_paths() {
    let source =
        corpus("valid").into_iter().find(|(n, _)| n == "appendix_a_motivating_program").expect("file").1;
    let rendered: Vec<String> = paths(&source).iter().map(ToString::to_string).collect();
    insta::assert_snapshot!(rendered.join("\n"));
}

/// Re-lays `source` out: every gap between tokens gets other horizontal whitespace, every line
/// break other indentation, blank lines and comments. `choices` drives the variation.
fn relayout(source: &str, choices: &[u8]) -> String {
    let tokens = parse(source).tokens;
    let mut out = String::new();
    let mut cursor = 0usize;
    let mut pick = choices.iter().cycle().copied();
    for (i, token) in tokens.iter().enumerate() {
        let start = token.span.start as usize;
        let gap = &source[cursor..start];
        let choice = pick.next().unwrap_or(0);
        if gap.contains('\n') {
            let comment = if choice % 2 == 0 { "  # note" } else { "" };
            let blank = if choice % 3 == 0 { "\n\n" } else { "\n" };
            out.push_str(&format!("{comment}{blank}{}", " ".repeat(usize::from(choice % 5))));
        } else if i > 0 && token.kind != TokenKind::Eof {
            out.push_str(&" ".repeat(usize::from(choice % 3) + usize::from(!gap.is_empty())));
        }
        out.push_str(&source[start..token.span.end as usize]);
        cursor = token.span.end as usize;
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn layout_and_comments_do_not_change_paths(file in 0usize..64, choices in proptest::collection::vec(0u8..30, 1..64)) {
        let files = corpus("valid");
        let (name, source) = &files[file % files.len()];
        let variant = relayout(source, &choices);
        prop_assert_eq!(paths(source), paths(&variant), "{} relaid out as:\n{}", name, variant);
    }
}

#[test]
fn inserting_a_binding_keeps_the_other_paths() {
    let before = paths("a = api.one()\nb = api.two(a)\nreturn b\n");
    let after = paths("a = api.one()\nextra = api.three()\nb = api.two(a)\nreturn b\n");
    for path in &before {
        if path.steps.starts_with("let:b") || path.steps.starts_with("let:a") {
            assert!(after.contains(path), "{path} changed");
        }
    }
}

#[test]
fn content_changes_the_fingerprint_and_identical_subtrees_differ_by_position() {
    let of = |source: &str, steps: &str| {
        paths(source).into_iter().find(|p| p.steps == steps).unwrap_or_else(|| panic!("{steps} in {source}"))
    };
    let one = of("x = f(1)\nreturn x", "let:x/value");
    assert_ne!(one, of("x = f(2)\nreturn x", "let:x/value"));
    assert_eq!(one.fingerprint, of("x = (f(1))\nreturn x", "let:x/value").fingerprint);
    let pair = paths("x = [f(1), f(1)]\nreturn x");
    let calls: Vec<&SyntaxPath> =
        pair.iter().filter(|p| p.steps.ends_with("item.0") || p.steps.ends_with("item.1")).collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].fingerprint, calls[1].fingerprint);
    assert_ne!(calls[0], calls[1]);
}
