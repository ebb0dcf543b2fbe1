//! Spread syntax from JavaScript and Python (`{ ...a, k: v }`, `{ **a }`, `[...xs, x]`): one
//! diagnostic per literal whose fix is the `+` merge or concatenation Runlet writes, in the
//! literal's order (`{ ...a, k: v }` is `a + { k: v }`; both are shallow and right-biased).

use super::Parser;
use crate::diag::{Diagnostic, Fix, Span, codes};
use crate::syntax::token::TokenKind;

/// A piece of a literal: a spread operand, or an ordinary item, by span.
#[derive(Debug, Clone, Copy)]
pub(super) enum Piece {
    Spread(Span),
    Item(Span),
}

impl Parser<'_> {
    /// Consumes `...` (or `**` in an object) at the cursor and the expression after it; returns
    /// the expression's span.
    pub(super) fn spread(&mut self, object: bool) -> Option<Span> {
        let dots = self.at(TokenKind::Dot)
            && self.nth(1).kind == TokenKind::Dot
            && self.nth(2).kind == TokenKind::Dot;
        let stars = object && self.at(TokenKind::Star) && self.nth(1).kind == TokenKind::Star;
        if !dots && !stars {
            return None;
        }
        for _ in 0..if dots { 3 } else { 2 } {
            self.bump();
        }
        Some(self.expression().span)
    }

    /// Reports the spreads of the literal at `literal`, made of `pieces`, with the rewrite.
    pub(super) fn report_spreads(&mut self, literal: Span, pieces: &[Piece], object: bool) {
        let Some(first) = pieces.iter().find_map(|p| match p {
            Piece::Spread(span) => Some(*span),
            Piece::Item(_) => None,
        }) else {
            return;
        };
        let (open, close) = if object { ("{ ", " }") } else { ("[", "]") };
        let mut parts: Vec<String> = Vec::new();
        let mut items: Vec<&str> = Vec::new();
        for piece in pieces {
            match piece {
                Piece::Item(span) => items.push(self.text(*span)),
                Piece::Spread(span) => {
                    if !items.is_empty() {
                        parts.push(format!("{open}{}{close}", items.join(", ")));
                        items.clear();
                    }
                    parts.push(self.text(*span).to_owned());
                }
            }
        }
        if !items.is_empty() {
            parts.push(format!("{open}{}{close}", items.join(", ")));
        }
        let rewritten = parts.join(" + ");
        let (what, how) =
            if object { ("an object", "merge objects") } else { ("a list", "concatenate lists") };
        self.push(
            Diagnostic::error(
                codes::UNEXPECTED_TOKEN,
                first,
                format!("Runlet has no spread syntax in {what}"),
            )
            .with_help(format!("{how} with `+`: `{rewritten}`"))
            .with_fix(Fix::machine(format!("write `{rewritten}`"), literal, rewritten)),
        );
    }
}
