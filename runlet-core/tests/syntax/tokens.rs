//! Golden token streams: kinds, spans, text, line-break flags and comment trivia.

use std::fmt::Write;

use runlet::syntax::lexer::lex;

fn render(source: &str) -> String {
    let lexed = lex(source);
    let mut out = String::new();
    for token in &lexed.tokens {
        let text = &source[token.span.range()];
        let line = if token.line_break_before { " ⏎" } else { "" };
        let _ = writeln!(out, "{:?} {}..{} {text:?}{line}", token.kind, token.span.start, token.span.end);
    }
    for trivia in &lexed.trivia {
        let text = &source[trivia.span.range()];
        let _ = writeln!(out, "trivia {:?} own_line={} {text:?}", trivia.kind, trivia.own_line);
    }
    for diagnostic in &lexed.diagnostics {
        let _ = writeln!(
            out,
            "{} {}..{} {}",
            diagnostic.code, diagnostic.span.start, diagnostic.span.end, diagnostic.message
        );
    }
    out
}

#[test]
fn every_token_kind() {
    let source = "a = b.c(d, [1, 2.5, 6e4], { k: \"s\" }) # c\n// d\nreturn x == y != z < 1 <= 2 > 3 >= 4 + 5 - 6 * 7 / 8 % 9;\n";
    insta::assert_snapshot!(render(source));
}

#[test]
fn reserved_words_and_identifiers() {
    let source = "return for in limit boundary retry catch if else and or not null true false skip fold fail\nreturned _x café 名前";
    insta::assert_snapshot!(render(source));
}

#[test]
fn foreign_tokens() {
    let source = "&& || ! === !== => -> += -= *= /= ++ -- ? ?? ?. 'single' `template ${x}` f\"format {x}\" “curly” /* block */";
    insta::assert_snapshot!(render(source));
}

#[test]
fn strings_and_lexical_errors() {
    let source = "\"ok \\u00e9 \\uD83D\\uDE00\" \"bad \\q\" \"lone \\uDE00\" \"open\n1_000 0x1F 10ms @ $";
    insta::assert_snapshot!(render(source));
}
