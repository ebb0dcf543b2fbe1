//! Python's `raise ValueError("…")` and JavaScript's `throw new Error("…")`: reported with the
//! `fail(code, message)` Runlet writes, the code taken from the exception's class name.

use super::Parser;
use crate::diag::{Diagnostic, Fix, codes};
use crate::syntax::ast::{Expr, ExprKind};
use crate::syntax::token::TokenKind;

impl Parser<'_> {
    /// At `raise` or `throw` followed on its line by an expression: consumes both.
    pub(super) fn raise(&mut self) -> Option<Expr> {
        let keyword = self.peek();
        let word = self.text(keyword.span);
        let next = self.nth(1);
        if !matches!(word, "raise" | "throw") || next.line_break_before || next.kind != TokenKind::Ident {
            return None;
        }
        self.bump();
        if self.text(self.peek().span) == "new" && self.nth(1).kind == TokenKind::Ident {
            self.bump();
        }
        let raised = self.postfix();
        let span = keyword.span.to(raised.span);
        let mut diagnostic = Diagnostic::error(
            codes::FOREIGN_RAISE,
            span,
            format!("Runlet has no `{word}`; a failure is raised with `fail(code, message)`"),
        )
        .with_help("write `fail(\"NOT_FOUND\", \"no such order\")`");
        if let ExprKind::Call { callee, args } = &raised.kind
            && let (ExprKind::Ident(class), [message]) = (&callee.kind, &args[..])
        {
            let rewritten = format!("fail(\"{}\", {})", error_code(&class.name), self.text(message.span));
            diagnostic = diagnostic.with_fix(Fix::suggest(format!("write `{rewritten}`"), span, rewritten));
        }
        self.push(diagnostic);
        Some(self.error_expr(span))
    }
}

/// `ValueError` → `VALUE_ERROR`, `Error` → `ERROR`: an exception class as a failure code.
fn error_code(class: &str) -> String {
    let chars: Vec<char> = class.chars().collect();
    let mut code = String::with_capacity(class.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        let previous = i.checked_sub(1).map(|p| chars[p]);
        let next = chars.get(i + 1);
        let word_starts = c.is_uppercase()
            && (previous.is_some_and(char::is_lowercase)
                || (previous.is_some_and(char::is_uppercase) && next.is_some_and(|n| n.is_lowercase())));
        if word_starts {
            code.push('_');
        }
        code.extend(c.to_uppercase());
    }
    code
}

#[cfg(test)]
mod tests {
    use super::error_code;

    #[test]
    fn class_names_become_codes() {
        assert_eq!(error_code("ValueError"), "VALUE_ERROR");
        assert_eq!(error_code("Error"), "ERROR");
        assert_eq!(error_code("HTTPError"), "HTTP_ERROR");
    }
}
