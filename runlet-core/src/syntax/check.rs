//! Structural checks on the parsed tree: a name declared twice in one scope, a static object key
//! written twice (`RL2203`), and `None`/`True`/… where Runlet spells `null`/`true`/….

use std::collections::BTreeMap;

use super::ast::{Block, ElseBranch, Expr, ExprKind, Ident, IfExpr, ObjectItem, Program, Stmt};
use super::rename;
use super::token::Token;
use crate::diag::sink::Sink;
use crate::diag::{Applicability, Diagnostic, Fix, Span, codes};

/// Runs every check over `program`.
pub(crate) fn check(program: &Program, source: &str, tokens: &[Token], sink: &mut Sink) {
    let mut checker = Checker { sink, source, tokens, scopes: Vec::new() };
    checker.scope(&[], &program.stmts);
}

struct Checker<'a, 't> {
    sink: &'a mut Sink,
    source: &'a str,
    tokens: &'a [Token],
    /// The names declared in each enclosing scope, innermost last.
    scopes: Vec<BTreeMap<&'t str, Span>>,
}

impl<'t> Checker<'_, 't> {
    /// A block scope: `bound` are the names the construct binds (loop variable, accumulator,
    /// caught error), then the block's statements.
    fn scope(&mut self, bound: &[&'t Ident], stmts: &'t [Stmt]) {
        self.scopes.push(BTreeMap::new());
        for ident in bound {
            self.declare(ident, None);
        }
        for stmt in stmts {
            match stmt {
                Stmt::Let(l) => {
                    self.expr(&l.value);
                    self.declare(&l.name, Some(l.value.span));
                }
                Stmt::Skip(s) => {
                    if let Some(c) = &s.condition {
                        self.expr(c);
                    }
                }
                Stmt::Return(r) => self.expr(&r.value),
                Stmt::Expr(e) => self.expr(&e.expr),
            }
        }
        self.scopes.pop();
    }

    fn block(&mut self, bound: &[&'t Ident], block: &'t Block) {
        self.scope(bound, &block.stmts);
    }

    /// Declares `ident`; a `name = value` rebinding (`value` given) gets a fix naming the new
    /// value apart.
    fn declare(&mut self, ident: &'t Ident, value: Option<Span>) {
        if ident.name.is_empty() {
            return;
        }
        let Some(scope) = self.scopes.last_mut() else { return };
        if let Some(&first) = scope.get(ident.name.as_str()) {
            let mut diagnostic = Diagnostic::error(
                codes::DUPLICATE_BINDING,
                ident.span,
                format!("`{}` is already declared in this scope", ident.name),
            )
            .with_label(first, "first declared here")
            .with_help("names are declared once and never reassigned; give the new value its own name");
            if let Some(value) = value {
                let (renamed, edits) = rename::rebinding_edits(self.source, self.tokens, ident.span, value);
                diagnostic = diagnostic.with_fix(Fix::new(
                    format!("name the new value `{renamed}` and read it after"),
                    Applicability::MaybeIncorrect,
                    edits,
                ));
            }
            self.sink.push(diagnostic);
            return;
        }
        scope.insert(&ident.name, ident.span);
    }

    fn is_declared(&self, name: &str) -> bool {
        self.scopes.iter().any(|scope| scope.contains_key(name))
    }

    fn expr(&mut self, expr: &'t Expr) {
        match &expr.kind {
            ExprKind::Null
            | ExprKind::Bool(_)
            | ExprKind::Integer(_)
            | ExprKind::Number(_)
            | ExprKind::String(_)
            | ExprKind::Error => {}
            ExprKind::Ident(ident) => self.foreign_literal(ident),
            ExprKind::List(items) | ExprKind::Fail(items) => items.iter().for_each(|e| self.expr(e)),
            ExprKind::Object(items) => self.object(items),
            ExprKind::Paren(inner) | ExprKind::Unary(_, inner) => self.expr(inner),
            ExprKind::Binary(_, lhs, rhs) => {
                self.expr(lhs);
                self.expr(rhs);
            }
            ExprKind::Conditional { then, condition, otherwise } => {
                self.expr(then);
                self.expr(condition);
                if let Some(o) = otherwise {
                    self.expr(o);
                }
            }
            ExprKind::Member { object, .. } => self.expr(object),
            ExprKind::Index { object, index } => {
                self.expr(object);
                self.expr(index);
            }
            ExprKind::Call { callee, args } => {
                self.expr(callee);
                args.iter().for_each(|e| self.expr(e));
            }
            ExprKind::If(if_expr) => self.if_expr(if_expr),
            ExprKind::For(f) => {
                self.expr(&f.iterable);
                self.block(&[&f.item], &f.body);
            }
            ExprKind::Fold(f) => {
                self.expr(&f.init);
                self.expr(&f.iterable);
                self.block(&[&f.acc, &f.item], &f.body);
            }
            ExprKind::Boundary(b) => {
                self.block(&[], &b.body);
                self.block(&[&b.catch.binding], &b.catch.body);
            }
        }
    }

    fn if_expr(&mut self, if_expr: &'t IfExpr) {
        self.expr(&if_expr.condition);
        self.block(&[], &if_expr.then_block);
        match if_expr.else_branch.as_deref() {
            Some(ElseBranch::If { if_expr, .. }) => self.if_expr(if_expr),
            Some(ElseBranch::Block(block)) => self.block(&[], block),
            None => {}
        }
    }

    fn object(&mut self, items: &'t [ObjectItem]) {
        let mut seen: BTreeMap<&str, Span> = BTreeMap::new();
        for item in items {
            let mut value_read = None;
            let key = match item {
                ObjectItem::Field { key, value, .. } => {
                    self.expr(value);
                    if let ExprKind::Member { name, .. } = &value.kind {
                        value_read = Some(name.name.as_str());
                    }
                    Some((key.name.as_str(), key.span))
                }
                ObjectItem::Shorthand(ident) => {
                    self.foreign_literal(ident);
                    Some((ident.name.as_str(), ident.span))
                }
                ObjectItem::Computed { key, value, .. } => {
                    self.expr(key);
                    self.expr(value);
                    None
                }
            };
            let Some((name, span)) = key else { continue };
            if let Some(&first) = seen.get(name) {
                let mut diagnostic = Diagnostic::error(
                    codes::DUPLICATE_OBJECT_KEY,
                    span,
                    format!("the key `{name}` appears twice in this object"),
                )
                .with_label(first, "first written here")
                .with_help("write each static key once");
                if let Some(fix) = renamed_key(items, value_read, span) {
                    diagnostic = diagnostic.with_fix(fix);
                }
                self.sink.push(diagnostic);
            } else {
                seen.insert(name, span);
            }
        }
    }

    /// `None`, `True`, `nil`, … used as values and not declared: almost certainly Runlet's
    /// `null`, `true`, `false`. A warning, since a host could supply such a name.
    fn foreign_literal(&mut self, ident: &Ident) {
        let runlet = match ident.name.as_str() {
            "None" | "nil" | "undefined" | "NULL" | "Null" | "none" => "null",
            "True" | "TRUE" => "true",
            "False" | "FALSE" => "false",
            _ => return,
        };
        if self.is_declared(&ident.name) {
            return;
        }
        self.sink.push(
            Diagnostic::warning(
                codes::FOREIGN_LITERAL,
                ident.span,
                format!("`{}` is not a Runlet literal; Runlet writes `{runlet}`", ident.name),
            )
            .with_fix(Fix::machine(format!("write `{runlet}`"), ident.span, runlet)),
        );
    }
}

/// For a repeated key whose value reads a property (`name: c.email` after `name: c.name`): the
/// key named after that property, when no key of the object has that name yet.
fn renamed_key(items: &[ObjectItem], read: Option<&str>, key: Span) -> Option<Fix> {
    let read = read.filter(|r| crate::syntax::unicode::is_identifier(r))?;
    let taken = items.iter().any(|item| match item {
        ObjectItem::Field { key, .. } => key.name == read,
        ObjectItem::Shorthand(ident) => ident.name == read,
        ObjectItem::Computed { .. } => false,
    });
    (!taken).then(|| Fix::suggest(format!("name the key `{read}`, the property it reads"), key, read))
}
