//! The newline rules of spec §2.1: where a line break ends a statement and where it continues.

use runlet::diag::codes;
use runlet::syntax::parse;

use crate::support::render_report;

const INFIX: &[&str] = &["+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "and", "or", "in"];

fn assert_clean(source: &str) {
    let parse = parse(source);
    assert!(parse.diagnostics.is_empty(), "{source}\n{}", render_report(source, &parse.diagnostics));
}

fn assert_reports(source: &str, code: runlet::diag::Code) {
    let reported: Vec<_> = parse(source).diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(reported, [code], "{source}");
}

#[test]
fn a_line_break_after_a_continuation_token_continues() {
    for op in INFIX {
        assert_clean(&format!("x = a {op}\n  b\nreturn x\n"));
    }
    for source in [
        "x =\n  1\nreturn x\n",
        "x = f(a,\n  b)\nreturn x\n",
        "x = { a:\n  1 }\nreturn x\n",
        "x = not\n  y\nreturn x\n",
        "ys = for y in\n  xs { return y }\nreturn ys\n",
        "x = a if\n  c else b\nreturn x\n",
        "x = a if c else\n  b\nreturn x\n",
        "x = a if c else\n  b if d else\n  e\nreturn x\n",
    ] {
        assert_clean(source);
    }
}

#[test]
fn a_line_break_before_an_infix_operator_ends_the_statement() {
    for op in INFIX {
        assert_reports(&format!("x = a\n  {op} b\nreturn x\n"), codes::MISPLACED_LINE_BREAK);
    }
}

#[test]
fn a_line_break_before_a_conditionals_else_ends_the_statement() {
    for source in ["x = a if c\n  else b\nreturn x\n", "x = a if c else b if d\n  else e\nreturn x\n"] {
        assert_reports(source, codes::MISPLACED_LINE_BREAK);
        let fixes: Vec<_> = parse(source).diagnostics.into_iter().flat_map(|d| d.fixes).collect();
        assert_clean(&runlet::diag::apply_fixes(source, &fixes).expect("the fix applies"));
    }
    // Without an open conditional before it, `else` continues nothing: no join is offered.
    let stray = parse("x = a\nelse b\nreturn x\n").diagnostics;
    assert!(stray.iter().all(|d| d.code != codes::MISPLACED_LINE_BREAK), "{stray:?}");
}

#[test]
fn a_line_break_before_call_or_index_never_continues() {
    assert_reports("f = g\n(x)\nreturn f\n", codes::MISPLACED_LINE_BREAK);
    assert_reports("f = g\n[0]\nreturn f\n", codes::MISPLACED_LINE_BREAK);
    assert!(parse("f = (g\n(x))\nreturn f\n").has_errors());
    assert!(parse("f = [g\n[0]]\nreturn f\n").has_errors());
    assert_clean("f = g(\n  x\n)[\n  0\n]\nreturn f\n");
}

#[test]
fn header_parts_after_a_line_break_end_the_statement() {
    // None of `for`, a bound name, an expression's end, `boundary`, `catch` or `limit` continues a
    // line, so the line break before each of these parts ends the statement: one diagnostic
    // whose fix joins the lines.
    for source in [
        "ys = for\n  y in xs { return y }\nreturn ys\n",
        "ys = for y\n  in xs { return y }\nreturn ys\n",
        "ys = for y in xs\n  limit 4 { return y }\nreturn ys\n",
        "ys = for y in xs limit\n  4 { return y }\nreturn ys\n",
        "t = fold acc\n  = 0 for y in xs { return acc + y }\nreturn t\n",
        "t = fold acc = 0\n  for y in xs { return acc + y }\nreturn t\n",
        "r = boundary\n  retry 2 { return 1 } catch e { return 2 }\nreturn r\n",
        "r = boundary { return 1 } catch\n  e { return 2 }\nreturn r\n",
        "x\n  = 1\nreturn x\n",
    ] {
        assert_reports(source, codes::MISPLACED_LINE_BREAK);
        let fixes: Vec<_> = parse(source).diagnostics.into_iter().flat_map(|d| d.fixes).collect();
        let joined = runlet::diag::apply_fixes(source, &fixes).expect("the fix applies");
        assert_clean(&joined);
    }
    assert_clean("ys = [for y\n  in xs\n  limit 4 { return y }]\nreturn ys\n");
    // After an error in the header, the next line is not blamed on a line break.
    let after_error = parse("t = fold acc = for y in xs { return y }\nkeyed = 1\nreturn keyed\n");
    assert!(after_error.diagnostics.iter().all(|d| d.code != codes::MISPLACED_LINE_BREAK));
}

#[test]
fn a_member_access_without_a_receiver_is_not_a_line_break_problem() {
    // Nothing precedes the `.`: there are no lines to join, only a missing expression.
    assert_reports(".a = 1\nreturn a\n", codes::UNEXPECTED_TOKEN);
}

#[test]
fn inside_brackets_and_objects_line_breaks_are_whitespace() {
    assert_clean("x = (a\n  + b\n  .c)\nreturn x\n");
    assert_clean("x = [\n  a\n  + b,\n  c\n]\nreturn x\n");
    assert_clean("x = {\n  a: b\n    .c,\n  d: 1\n}\nreturn x\n");
    assert_clean("x = f(\n  a,\n  b,\n)\nreturn x\n");
}

#[test]
fn blocks_inside_brackets_make_line_breaks_significant_again() {
    assert_clean("x = f(for a in as {\n  b = a\n  return b\n})\nreturn x\n");
    assert_reports(
        "x = f(for a in as {\n  b = a\n  + 1\n  return b\n})\nreturn x\n",
        codes::MISPLACED_LINE_BREAK,
    );
}

#[test]
fn compound_headers_keep_their_braces_on_one_line() {
    assert_reports("ys = for y in xs\n{ return y }\nreturn ys\n", codes::MISPLACED_LINE_BREAK);
    assert_reports(
        "r = boundary\n{ return 1 } catch e { return 2 }\nreturn r\n",
        codes::MISPLACED_LINE_BREAK,
    );
    assert_reports(
        "r = boundary { return 1 }\ncatch e { return 2 }\nreturn r\n",
        codes::MISPLACED_LINE_BREAK,
    );
    assert_reports("r = if a { return 1 }\nelse { return 2 }\nreturn r\n", codes::MISPLACED_LINE_BREAK);
    assert_reports("x = a\n  .b\nreturn x\n", codes::MISPLACED_LINE_BREAK);
}

#[test]
fn semicolons_are_optional_before_a_closing_brace() {
    assert_clean("ys = for y in xs { z = y; return z; }\nreturn ys;\n");
    assert_clean("ys = for y in xs { z = y; return z }\nreturn ys\n");
    assert_clean("a = 1; b = 2;\nreturn a + b\n");
}
