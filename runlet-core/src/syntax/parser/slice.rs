//! Python's slices `xs[a:b]`, `xs[:b]`, `xs[a:]`: read as the method call `xs.slice(a, b)` (the
//! name's span empty, since the source does not spell it), which the analyzer reports with the
//! rewrite to `list.slice` or `text.slice` its operand's kind chooses. A missing start is `0`.

use super::Parser;
use crate::diag::Span;
use crate::syntax::ast::{Expr, ExprKind, FieldName};
use crate::syntax::token::TokenKind;

impl Parser<'_> {
    /// At the `:` of `object[start:…`, with `start` parsed (`None` for `[:`).
    pub(super) fn slice(&mut self, object: Expr, start: Option<Expr>) -> Expr {
        let colon = self.bump().span;
        let start =
            start.unwrap_or(Expr { kind: ExprKind::Integer("0".into()), span: Span::at(colon.start) });
        let mut args = vec![start];
        if !self.at(TokenKind::RBracket) {
            args.push(self.with_lines(false, |p| p.expression()));
        }
        let end = self.close(TokenKind::RBracket, "`]`");
        let span = object.span.to(Span::at(end));
        let name = FieldName { name: "slice".into(), span: Span::at(object.span.end) };
        let callee = Expr { span: object.span, kind: ExprKind::Member { object: Box::new(object), name } };
        Expr { span, kind: ExprKind::Call { callee: Box::new(callee), args } }
    }
}
