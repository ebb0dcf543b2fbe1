//! Python's `map(lambda x: …, xs)` and `filter(…)` (also inside `list(…)`, or with an arrow
//! function): the call of a lambda over a list, consumed whole and rewritten as a `for`
//! expression.

use super::Parser;
use crate::diag::{Diagnostic, Fix, Span, codes};
use crate::syntax::ast::Expr;
use crate::syntax::token::{ForeignToken, TokenKind};

/// `for item in list { return body }` for a mapping method, with `skip if not (body)` for a
/// filtering one; `None` for other methods.
pub(super) fn for_rewrite(method: &str, item: &str, list: &str, body: &str) -> Option<String> {
    match method {
        "map" | "forEach" | "each" | "collect" => Some(format!("for {item} in {list} {{ return {body} }}")),
        "filter" | "select" => {
            Some(format!("for {item} in {list} {{ skip if not ({body}); return {item} }}"))
        }
        _ => None,
    }
}

impl Parser<'_> {
    /// `map(lambda x: body, xs)` at the cursor (`list(` before it allowed): reported with its
    /// rewrite; `None` when the tokens have another shape.
    pub(super) fn lambda_call(&mut self) -> Option<Expr> {
        let wrapped = self.text(self.peek().span) == "list";
        let call = usize::from(wrapped) * 2;
        let method = self.text(self.nth(call).span);
        let shaped = (!wrapped || self.nth(1).kind == TokenKind::LParen)
            && self.nth(call).kind == TokenKind::Ident
            && matches!(method, "map" | "filter")
            && self.nth(call + 1).kind == TokenKind::LParen;
        if !shaped {
            return None;
        }
        let (item, body_start) = self.lambda_head(call + 2)?;
        let comma = self.top_level(body_start, TokenKind::Comma)?;
        let close = self.top_level(comma + 1, TokenKind::RParen)?;
        let end = if wrapped { close + 1 } else { close };
        if comma == body_start || close == comma + 1 || self.nth(end).kind != TokenKind::RParen {
            return None;
        }
        let foreign = (body_start..close)
            .any(|i| matches!(self.nth(i).kind, TokenKind::Foreign(_) | TokenKind::Unknown));
        let source = |from: usize, to: usize| self.text(self.nth(from).span.to(self.nth(to).span));
        let rewrite = (!foreign)
            .then(|| {
                for_rewrite(
                    method,
                    self.text(item),
                    source(comma + 1, close - 1),
                    source(body_start, comma - 1),
                )
            })
            .flatten();
        let span = self.peek().span.to(self.nth(end).span);
        for _ in 0..=end {
            self.bump();
        }
        let mut diagnostic = Diagnostic::error(codes::LAMBDA, span, "Runlet has no functions or lambdas")
            .with_help("to transform each element use `for x in xs { return … }`; to filter add `skip if …`");
        if let Some(rewritten) = rewrite {
            diagnostic = diagnostic.with_fix(Fix::machine(format!("write `{rewritten}`"), span, rewritten));
        }
        self.push(diagnostic);
        Some(self.error_expr(span))
    }

    /// The parameter of a one-parameter lambda `n` tokens ahead (`lambda x:`, `x =>`, `(x) =>`)
    /// and where its body starts.
    fn lambda_head(&self, n: usize) -> Option<(Span, usize)> {
        let arrow = |i: usize| matches!(self.nth(i).kind, TokenKind::Foreign(ForeignToken::FatArrow));
        let ident = |i: usize| self.nth(i).kind == TokenKind::Ident;
        if ident(n) && self.text(self.nth(n).span) == "lambda" && ident(n + 1) {
            return (self.nth(n + 2).kind == TokenKind::Colon).then(|| (self.nth(n + 1).span, n + 3));
        }
        if ident(n) && arrow(n + 1) {
            return Some((self.nth(n).span, n + 2));
        }
        let parenthesized = self.nth(n).kind == TokenKind::LParen
            && ident(n + 1)
            && self.nth(n + 2).kind == TokenKind::RParen
            && arrow(n + 3);
        parenthesized.then(|| (self.nth(n + 1).span, n + 4))
    }

    /// The first `kind` token at nesting depth zero from `n` tokens ahead on.
    fn top_level(&self, n: usize, kind: TokenKind) -> Option<usize> {
        let mut depth = 0usize;
        for i in n.. {
            let found = self.nth(i).kind;
            if depth == 0 && found == kind {
                return Some(i);
            }
            match found {
                TokenKind::LParen | TokenKind::LBracket | TokenKind::LBrace => depth += 1,
                TokenKind::RParen | TokenKind::RBracket | TokenKind::RBrace => {
                    depth = depth.checked_sub(1)?
                }
                TokenKind::Eof => return None,
                _ => {}
            }
        }
        None
    }
}
