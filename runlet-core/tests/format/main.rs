//! Tests of the formatter and `heal`: golden output for the valid corpus, idempotence, the same
//! tree before and after formatting, every comment kept, and heal's insertion-only guarantee.

#[path = "../syntax/dump.rs"]
mod dump;
mod generated;
mod heal;
#[path = "../common/token_soup.rs"]
mod token_soup;

use std::path::{Path, PathBuf};

use runlet::syntax::{format, parse};

pub fn corpus(dir: &str) -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/syntax").join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("corpus directory")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "run"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let name = p.file_stem().expect("stem").to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).expect("read corpus file"))
        })
        .collect()
}

/// The tree of `source` without byte spans: equal trees print equal.
pub fn tree(source: &str) -> String {
    let parsed = parse(source);
    assert!(!parsed.has_errors(), "unexpected errors in\n{source}\n{:#?}", parsed.diagnostics);
    dump::program(&parsed.program)
        .lines()
        .map(|line| line.rsplit_once(" @").map_or(line, |(node, _)| node))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every comment of `source`, in order.
pub fn comments(source: &str) -> Vec<String> {
    parse(source).trivia.iter().map(|t| source[t.span.range()].trim_end().to_owned()).collect()
}

/// Formats `source` and checks the formatter's promises about it; returns the formatted text.
pub fn format_and_check(source: &str) -> String {
    let formatted = format(source).unwrap_or_else(|d| panic!("format failed on\n{source}\n{d:#?}"));
    assert_eq!(tree(&formatted), tree(source), "formatting changed the tree of\n{source}\n---\n{formatted}");
    assert_eq!(comments(&formatted), comments(source), "formatting lost or reordered comments");
    let again = format(&formatted).expect("formatted source parses");
    assert_eq!(again, formatted, "formatting is not idempotent for\n{source}");
    formatted
}

#[test]
fn valid_corpus_formats_to_golden_output() {
    for (name, source) in corpus("valid") {
        let formatted = format_and_check(&source);
        insta::assert_snapshot!(name, formatted);
    }
}

#[test]
fn source_with_errors_is_not_formatted() {
    let errors = format("x = for y in ys {\n    y\n}\nreturn x\n").expect_err("syntax error");
    assert!(errors.iter().any(|d| d.code.to_string() == "RL1017"), "{errors:#?}");
}

#[test]
fn layout_is_canonical() {
    let cases = [
        ("x=1;y=2;return x+y", "x = 1\ny = 2\nreturn x + y\n"),
        ("return f( a ,b, )", "return f(a, b)\n"),
        ("return {a:1,\"b c\":2,[k]:3, d}", "return { a: 1, \"b c\": 2, [k]: 3, d }\n"),
        ("return - -x", "return - -x\n"),
        ("return not(a and b)", "return not (a and b)\n"),
        ("x = 1\n\n\n\ny = 2\nreturn x", "x = 1\n\ny = 2\nreturn x\n"),
        ("return [\n]", "return []\n"),
        ("return {\n}", "return {}\n"),
    ];
    for (source, expected) in cases {
        assert_eq!(format_and_check(source), expected, "formatting {source:?}");
    }
}

#[test]
fn long_composites_break_one_item_per_line() {
    let long_name = "a_rather_long_binding_name";
    let source = format!(
        "return tools.call({long_name}, {long_name}, {long_name}, {long_name}, [1, 2, 3], {{ k: 1 }})\n"
    );
    let formatted = format_and_check(&source);
    assert_eq!(
        formatted,
        format!(
            "return tools.call(\n    {long_name},\n    {long_name},\n    {long_name},\n    {long_name},\n    [1, 2, 3],\n    {{ k: 1 }},\n)\n"
        )
    );
}

#[test]
fn comments_inside_composites_force_one_item_per_line() {
    let source = "xs = [1, # one\n  2]\nreturn xs\n";
    assert_eq!(format_and_check(source), "xs = [\n    1, # one\n    2,\n]\nreturn xs\n");
}

#[test]
fn trailing_comment_stays_with_the_last_statement_on_its_line() {
    let source = "a = 1; b = 2  # about b\nreturn a\n";
    assert_eq!(format_and_check(source), "a = 1\nb = 2 # about b\nreturn a\n");
}
