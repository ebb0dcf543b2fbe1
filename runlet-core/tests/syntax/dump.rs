//! A compact, indented rendering of the AST for golden snapshots: one node per line with its
//! byte span, so that reviewers can read the tree.

use std::fmt::Write;

use runlet::syntax::ast::{Block, ElseBranch, Expr, ExprKind, IfExpr, ObjectItem, Program, Stmt};

pub fn program(program: &Program) -> String {
    let mut out = String::new();
    for stmt in &program.stmts {
        stmt_line(&mut out, 0, stmt);
    }
    out
}

fn line(out: &mut String, depth: usize, text: impl std::fmt::Display, span: runlet::diag::Span) {
    let _ = writeln!(out, "{}{text} @{}..{}", "  ".repeat(depth), span.start, span.end);
}

fn stmt_line(out: &mut String, depth: usize, stmt: &Stmt) {
    match stmt {
        Stmt::Let(l) => {
            line(out, depth, format_args!("let {}", l.name.name), l.span);
            expr(out, depth + 1, &l.value);
        }
        Stmt::Skip(s) => {
            line(out, depth, "skip", s.span);
            if let Some(c) = &s.condition {
                expr(out, depth + 1, c);
            }
        }
        Stmt::Return(r) => {
            line(out, depth, "return", r.span);
            expr(out, depth + 1, &r.value);
        }
        Stmt::Expr(e) => {
            line(out, depth, "expr-stmt", e.span);
            expr(out, depth + 1, &e.expr);
        }
    }
}

fn block(out: &mut String, depth: usize, label: &str, block: &Block) {
    line(out, depth, label, block.span);
    for stmt in &block.stmts {
        stmt_line(out, depth + 1, stmt);
    }
}

fn if_expr(out: &mut String, depth: usize, if_expr: &IfExpr) {
    expr(out, depth, &if_expr.condition);
    block(out, depth, "then", &if_expr.then_block);
    match if_expr.else_branch.as_deref() {
        Some(ElseBranch::If { if_expr: inner, span }) => {
            line(out, depth, "else-if", *span);
            self::if_expr(out, depth + 1, inner);
        }
        Some(ElseBranch::Block(b)) => block(out, depth, "else", b),
        None => {}
    }
}

fn expr(out: &mut String, depth: usize, e: &Expr) {
    let d = depth + 1;
    match &e.kind {
        ExprKind::Null => line(out, depth, "null", e.span),
        ExprKind::Bool(b) => line(out, depth, b, e.span),
        ExprKind::Integer(digits) => line(out, depth, format_args!("int {digits}"), e.span),
        ExprKind::Number(text) => line(out, depth, format_args!("number {text}"), e.span),
        ExprKind::String(s) => line(out, depth, format_args!("string {s:?}"), e.span),
        ExprKind::Ident(i) => line(out, depth, format_args!("name {}", i.name), e.span),
        ExprKind::List(items) => {
            line(out, depth, "list", e.span);
            items.iter().for_each(|i| expr(out, d, i));
        }
        ExprKind::Object(items) => {
            line(out, depth, "object", e.span);
            for item in items {
                match item {
                    ObjectItem::Field { key, value, span } => {
                        let quote = if key.quoted { "quoted " } else { "" };
                        line(out, d, format_args!("field {quote}{}", key.name), *span);
                        expr(out, d + 1, value);
                    }
                    ObjectItem::Computed { key, value, span } => {
                        line(out, d, "computed", *span);
                        expr(out, d + 1, key);
                        expr(out, d + 1, value);
                    }
                    ObjectItem::Shorthand(i) => line(out, d, format_args!("shorthand {}", i.name), i.span),
                }
            }
        }
        ExprKind::Paren(inner) => {
            line(out, depth, "paren", e.span);
            expr(out, d, inner);
        }
        ExprKind::Unary(op, inner) => {
            line(out, depth, format_args!("unary {}", op.as_str()), e.span);
            expr(out, d, inner);
        }
        ExprKind::Binary(op, lhs, rhs) => {
            line(out, depth, format_args!("binary {}", op.as_str()), e.span);
            expr(out, d, lhs);
            expr(out, d, rhs);
        }
        ExprKind::Conditional { then, condition, otherwise } => {
            line(out, depth, "conditional", e.span);
            expr(out, d, then);
            expr(out, d, condition);
            if let Some(o) = otherwise {
                expr(out, d, o);
            }
        }
        ExprKind::Member { object, name } => {
            line(out, depth, format_args!("member .{}", name.name), e.span);
            expr(out, d, object);
        }
        ExprKind::Index { object, index } => {
            line(out, depth, "index", e.span);
            expr(out, d, object);
            expr(out, d, index);
        }
        ExprKind::Call { callee, args } => {
            line(out, depth, "call", e.span);
            expr(out, d, callee);
            args.iter().for_each(|a| expr(out, d, a));
        }
        ExprKind::If(i) => {
            line(out, depth, "if", e.span);
            if_expr(out, d, i);
        }
        ExprKind::For(f) => {
            let limit = f.limit.as_ref().map_or(String::new(), |l| format!(" limit {}", l.digits));
            line(out, depth, format_args!("for {}{limit}", f.item.name), e.span);
            expr(out, d, &f.iterable);
            block(out, d, "body", &f.body);
        }
        ExprKind::Fold(f) => {
            line(out, depth, format_args!("fold {} for {}", f.acc.name, f.item.name), e.span);
            expr(out, d, &f.init);
            expr(out, d, &f.iterable);
            block(out, d, "body", &f.body);
        }
        ExprKind::Fail(args) => {
            line(out, depth, "fail", e.span);
            args.iter().for_each(|a| expr(out, d, a));
        }
        ExprKind::Boundary(b) => {
            let retry = b.retry.as_ref().map_or(String::new(), |r| format!(" retry {}", r.digits));
            line(out, depth, format_args!("boundary{retry}"), e.span);
            block(out, d, "body", &b.body);
            block(out, d, &format!("catch {}", b.catch.binding.name), &b.catch.body);
        }
        ExprKind::Error => line(out, depth, "error", e.span),
    }
}
