//! Destructuring bindings from JavaScript and Python (`{ a, b } = value`, `[a, b] = value`,
//! `a, b = value`): one diagnostic whose fix binds each name that is read with a projection.

use super::Parser;
use crate::diag::{Applicability, Diagnostic, Edit, Fix, Span, codes};
use crate::syntax::ast::{Expr, ExprKind, ExprStmt, Stmt};
use crate::syntax::token::TokenKind;

impl Parser<'_> {
    /// A destructuring binding at the cursor, consumed with its diagnostic; `None` for another
    /// statement.
    pub(super) fn destructuring(&mut self) -> Option<Stmt> {
        let (names, eq, by_key) = self.destructured_names()?;
        let start = self.peek().span;
        for _ in 0..eq {
            self.bump();
        }
        let eq_token = self.bump();
        let value = self.expression();
        let span = start.to(value.span);
        let mut diagnostic =
            Diagnostic::error(codes::DESTRUCTURING, start.to(eq_token.span), "Runlet has no destructuring")
                .with_help("bind the value to one name and read each part: `c = value` then `name = c.name`");
        if let Some(rewritten) = self.destructured_lines(&names, by_key, &value, span) {
            let edit = Edit { span, replacement: rewritten };
            diagnostic =
                diagnostic.with_fix(Fix::new("bind each part", Applicability::MachineApplicable, vec![edit]));
        }
        self.push(diagnostic);
        Some(Stmt::Expr(ExprStmt { expr: self.error_expr(span), span }))
    }

    /// The names of `{ a, b } =` (read by key), `[a, b] =` or `a, b =` (read by position) at
    /// the cursor, with the index of the `=`.
    fn destructured_names(&self) -> Option<(Vec<Span>, usize, bool)> {
        let (open, close, by_key) = match self.kind() {
            TokenKind::LBrace => (1, TokenKind::RBrace, true),
            TokenKind::LBracket => (1, TokenKind::RBracket, false),
            TokenKind::Ident if self.nth(1).kind == TokenKind::Comma => (0, TokenKind::Eq, false),
            _ => return None,
        };
        let mut names = Vec::new();
        let mut n = open;
        loop {
            let token = self.nth(n);
            if token.kind != TokenKind::Ident || (n > 0 && token.line_break_before) {
                return None;
            }
            names.push(token.span);
            n += 1;
            if self.nth(n).kind != TokenKind::Comma {
                break;
            }
            n += 1;
            if self.nth(n).kind == close {
                break;
            }
        }
        if self.nth(n).kind != close {
            return None;
        }
        let eq = if close == TokenKind::Eq { n } else { n + 1 };
        let single = names.len() < 2 && !by_key;
        (self.nth(eq).kind == TokenKind::Eq && !single && !self.nth(eq + 1).line_break_before)
            .then_some((names, eq, by_key))
    }

    /// The bindings replacing the destructuring at `span`: the value bound to a name of its own
    /// unless it is one, then one projection for each name read later (every name when none is).
    fn destructured_lines(&self, names: &[Span], by_key: bool, value: &Expr, span: Span) -> Option<String> {
        let reads = |name: Span| {
            let text = self.text(name);
            self.tokens.iter().enumerate().any(|(i, t)| {
                t.span.start >= span.end
                    && self.text(t.span) == text
                    && (i == 0 || self.tokens[i - 1].kind != TokenKind::Dot)
            })
        };
        let read: Vec<Span> = names.iter().copied().filter(|n| reads(*n)).collect();
        let read = if read.is_empty() { names.to_vec() } else { read };
        let before = &self.source[..span.start as usize];
        let indent = &before[before.rfind('\n').map_or(0, |i| i + 1)..];
        if !indent.trim().is_empty() {
            return None;
        }
        let mut lines = Vec::new();
        let base = match &value.kind {
            ExprKind::Ident(ident) => ident.name.to_string(),
            _ => {
                let base = self.base_name(value, names);
                lines.push(format!("{base} = {}", self.text(value.span)));
                base
            }
        };
        for (index, name) in names.iter().enumerate().filter(|(_, n)| read.contains(n)) {
            let name = self.text(*name);
            let part = if by_key { format!("{base}.{name}") } else { format!("{base}[{index}]") };
            lines.push(format!("{name} = {part}"));
        }
        Some(lines.join(&format!("\n{indent}")))
    }

    /// A name for the destructured value: the last segment of the path it calls (`customer`
    /// for `crm.customer(id)`), else `value`, made fresh.
    fn base_name(&self, value: &Expr, names: &[Span]) -> String {
        let mut callee = value;
        if let ExprKind::Call { callee: c, .. } = &value.kind {
            callee = c;
        }
        let base = match &callee.kind {
            ExprKind::Member { name, .. } => name.name.to_string(),
            ExprKind::Ident(ident) => ident.name.to_string(),
            _ => "value".to_owned(),
        };
        let taken = |candidate: &str| {
            names.iter().any(|n| self.text(*n) == candidate)
                || self.tokens.iter().enumerate().any(|(i, t)| {
                    self.text(t.span) == candidate && (i == 0 || self.tokens[i - 1].kind != TokenKind::Dot)
                })
        };
        if taken(&base) { crate::syntax::rename::fresh_name(self.source, self.tokens, &base) } else { base }
    }
}
