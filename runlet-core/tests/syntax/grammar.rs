//! The mechanical grammar test (spec §12.1): every nonterminal of `docs/grammar.ebnf` is defined
//! exactly once, every referenced one is defined, and each maps to a parser function and to an
//! AST node that an example program produces.

use std::collections::BTreeMap;

use runlet::syntax::ast::{BinaryOp, ExprKind, Stmt};
use runlet::syntax::parse;
use runlet::syntax::path::{Node, walk};

const GRAMMAR: &str = include_str!("../../../docs/grammar.ebnf");
const PARSER_SOURCES: &[&str] = &[
    include_str!("../../src/syntax/parser/stmt.rs"),
    include_str!("../../src/syntax/parser/expr.rs"),
    include_str!("../../src/syntax/parser/collections.rs"),
    include_str!("../../src/syntax/parser/control.rs"),
];
const TERMINALS: &[&str] = &["IDENT", "INTEGER", "NUMBER", "STRING", "FIELD_NAME"];

/// `(definitions per nonterminal, nonterminals referenced on right-hand sides)`.
fn rules() -> (BTreeMap<String, usize>, Vec<String>) {
    let mut text = GRAMMAR.to_owned();
    while let Some(start) = text.find("(*") {
        let end = text[start..].find("*)").map_or(text.len(), |e| start + e + 2);
        text.replace_range(start..end, " ");
    }
    let mut definitions = BTreeMap::new();
    let mut referenced = Vec::new();
    for rule in text.split(';').map(str::trim).filter(|r| !r.is_empty()) {
        let (name, body) = rule.split_once('=').unwrap_or_else(|| panic!("not a rule: {rule}"));
        *definitions.entry(name.trim().to_owned()).or_insert(0) += 1;
        let mut in_string = false;
        let mut word = String::new();
        for c in body.chars().chain([' ']) {
            if c == '"' {
                in_string = !in_string;
                continue;
            }
            if !in_string && (c.is_alphanumeric() || c == '_') {
                word.push(c);
            } else if !word.is_empty() {
                if !TERMINALS.contains(&word.as_str()) {
                    referenced.push(std::mem::take(&mut word));
                }
                word.clear();
            }
        }
    }
    (definitions, referenced)
}

type Produces = fn(Node<'_>) -> bool;

/// Each nonterminal: the parser function that handles it, an example, and the node it yields.
const TABLE: &[(&str, &str, &str, Produces)] = &[
    ("program", "program", "return 1", |n| matches!(n, Node::Stmt(Stmt::Return(_)))),
    ("let_stmt", "let_stmt", "x = 1\nreturn x", |n| matches!(n, Node::Stmt(Stmt::Let(_)))),
    (
        "skip_stmt",
        "skip_stmt",
        "y = for x in xs { skip if x; return x }\nreturn y",
        |n| matches!(n, Node::Stmt(Stmt::Skip(s)) if s.condition.is_some()),
    ),
    ("return_stmt", "return_stmt", "return 1", |n| matches!(n, Node::Stmt(Stmt::Return(_)))),
    (
        "if_expr",
        "if_expr",
        "y = if a { return 1 } else if b { return 2 } else { return 3 }\nreturn y",
        |n| matches!(n, Node::Expr(e) if matches!(&e.kind, ExprKind::If(i) if i.else_branch.is_some())),
    ),
    (
        "for_expr",
        "for_expr",
        "y = for x in xs limit 2 { return x }\nreturn y",
        |n| matches!(n, Node::Expr(e) if matches!(&e.kind, ExprKind::For(f) if f.limit.is_some())),
    ),
    (
        "fold_expr",
        "fold_expr",
        "y = fold a = 0 for x in xs { return a + x }\nreturn y",
        |n| matches!(n, Node::Expr(e) if matches!(e.kind, ExprKind::Fold(_))),
    ),
    (
        "fail_expr",
        "fail_expr",
        "y = fail(\"C\", \"m\", {})\nreturn y",
        |n| matches!(n, Node::Expr(e) if matches!(&e.kind, ExprKind::Fail(args) if args.len() == 3)),
    ),
    (
        "boundary_expr",
        "boundary_expr",
        "y = boundary { return 1 } catch e { return 2 }\nreturn y",
        |n| matches!(n, Node::Expr(e) if matches!(e.kind, ExprKind::Boundary(_))),
    ),
    (
        "retry_clause",
        "integer_clause",
        "y = boundary retry 3 { return 1 } catch e { return 2 }\nreturn y",
        |n| matches!(n, Node::Expr(e) if matches!(&e.kind, ExprKind::Boundary(b) if b.retry.as_ref().is_some_and(|r| r.digits == "3"))),
    ),
    (
        "catch_clause_return",
        "catch_clause",
        "y = boundary { return 1 } catch err { return err }\nreturn y",
        |n| matches!(n, Node::Expr(e) if matches!(&e.kind, ExprKind::Boundary(b) if b.catch.binding.name == "err")),
    ),
    (
        "block_return",
        "block",
        "y = for x in xs { z = x; return z }\nreturn y",
        |n| matches!(n, Node::Block(b) if b.stmts.len() == 2),
    ),
    (
        "expression",
        "expression",
        "y = a if b else c\nreturn y",
        |n| matches!(n, Node::Expr(e) if matches!(&e.kind, ExprKind::Conditional { otherwise: Some(_), .. })),
    ),
    ("conditional_or", "binary", "y = a or b\nreturn y", |n| binary(n, BinaryOp::Or)),
    ("conditional_and", "binary", "y = a and b\nreturn y", |n| binary(n, BinaryOp::And)),
    ("equality", "binary", "y = a != b\nreturn y", |n| binary(n, BinaryOp::NotEq)),
    ("comparison", "binary", "y = a in b\nreturn y", |n| binary(n, BinaryOp::In)),
    ("additive", "binary", "y = a - b\nreturn y", |n| binary(n, BinaryOp::Sub)),
    ("multiplicative", "binary", "y = a % b\nreturn y", |n| binary(n, BinaryOp::Rem)),
    (
        "unary",
        "unary",
        "y = not -a\nreturn y",
        |n| matches!(n, Node::Expr(e) if matches!(e.kind, ExprKind::Unary(..))),
    ),
    (
        "postfix",
        "postfix",
        "y = a.b[0](c)\nreturn y",
        |n| matches!(n, Node::Expr(e) if matches!(&e.kind, ExprKind::Call { callee, .. } if matches!(callee.kind, ExprKind::Index { .. }))),
    ),
    (
        "member",
        "member",
        "y = a.limit\nreturn y",
        |n| matches!(n, Node::Expr(e) if matches!(&e.kind, ExprKind::Member { name, .. } if name.name == "limit")),
    ),
    (
        "index",
        "index",
        "y = a[0]\nreturn y",
        |n| matches!(n, Node::Expr(e) if matches!(e.kind, ExprKind::Index { .. })),
    ),
    (
        "call",
        "call",
        "y = f()\nreturn y",
        |n| matches!(n, Node::Expr(e) if matches!(e.kind, ExprKind::Call { .. })),
    ),
    (
        "arguments",
        "call_arguments",
        "y = f(a, b,)\nreturn y",
        |n| matches!(n, Node::Expr(e) if matches!(&e.kind, ExprKind::Call { args, .. } if args.len() == 2)),
    ),
    (
        "primary",
        "primary",
        "y = (a)\nreturn y",
        |n| matches!(n, Node::Expr(e) if matches!(e.kind, ExprKind::Ident(_))),
    ),
    (
        "literal",
        "primary",
        "y = 6e4\nreturn y",
        |n| matches!(n, Node::Expr(e) if matches!(e.kind, ExprKind::Number(_))),
    ),
    (
        "list",
        "list",
        "y = [1, 2,]\nreturn y",
        |n| matches!(n, Node::Expr(e) if matches!(&e.kind, ExprKind::List(items) if items.len() == 2)),
    ),
    (
        "object",
        "object",
        "y = { a: 1, }\nreturn y",
        |n| matches!(n, Node::Expr(e) if matches!(e.kind, ExprKind::Object(_))),
    ),
    (
        "object_item",
        "object_item",
        "y = { a: 1, \"b\": 2, [k]: 3, c }\nreturn y",
        |n| matches!(n, Node::Expr(e) if matches!(&e.kind, ExprKind::Object(items) if items.len() == 4)),
    ),
];

fn binary(node: Node<'_>, op: BinaryOp) -> bool {
    matches!(node, Node::Expr(e) if matches!(e.kind, ExprKind::Binary(o, ..) if o == op))
}

#[test]
fn every_nonterminal_is_defined_exactly_once() {
    let (definitions, referenced) = rules();
    let twice: Vec<_> = definitions.iter().filter(|(_, n)| **n != 1).collect();
    assert!(twice.is_empty(), "defined more than once: {twice:?}");
    let undefined: Vec<_> = referenced.iter().filter(|r| !definitions.contains_key(*r)).collect();
    assert!(undefined.is_empty(), "referenced but not defined: {undefined:?}");
    let unreferenced: Vec<_> =
        definitions.keys().filter(|d| *d != "program" && !referenced.contains(d)).collect();
    assert!(unreferenced.is_empty(), "defined but never used: {unreferenced:?}");
}

#[test]
fn every_nonterminal_is_handled_by_the_parser() {
    let (definitions, _) = rules();
    let table: Vec<&str> = TABLE.iter().map(|(name, ..)| *name).collect();
    let defined: Vec<&str> = definitions.keys().map(String::as_str).collect();
    let mut sorted = table.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, defined, "the table must cover exactly the grammar's nonterminals");
    for (name, function, example, produces) in TABLE {
        let signature = format!("fn {function}(");
        assert!(
            PARSER_SOURCES.iter().any(|s| s.contains(&signature)),
            "{name}: no parser function `{function}`"
        );
        let parse = parse(example);
        assert!(parse.diagnostics.is_empty(), "{name}: {example:?} reports {:?}", parse.diagnostics);
        let mut found = false;
        walk(&parse.program, |_, node| found |= produces(node));
        assert!(found, "{name}: {example:?} has no node of the expected shape");
    }
}
