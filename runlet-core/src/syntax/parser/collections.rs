//! Bracketed sequences (lists, objects, call arguments) and their shared recovery: a missing `,`
//! is inserted, an unclosed group is closed where the next statement starts.

use super::Parser;
use crate::diag::{Diagnostic, Fix, Span, codes};
use crate::syntax::ast::{Expr, ExprKind, Ident, ObjectItem, ObjectKey, Text};
use crate::syntax::escape::string_value;
use crate::syntax::token::{Keyword, TokenKind};

impl Parser<'_> {
    pub(super) fn list(&mut self) -> Expr {
        let open = self.bump().span;
        let mut items = Vec::new();
        let end = self.with_lines(false, |p| {
            p.delimited(open, TokenKind::RBracket, |p| {
                let item = p.expression();
                if items.is_empty() && p.at_keyword(Keyword::For) {
                    let comprehension = p.list_comprehension(open, item);
                    items.push(comprehension);
                    return;
                }
                items.push(item);
            })
        });
        Expr { span: open.to(Span::at(end)), kind: ExprKind::List(items) }
    }

    pub(super) fn object(&mut self) -> Expr {
        let open = self.bump().span;
        let mut items = Vec::new();
        let end = self.with_lines(false, |p| {
            p.delimited(open, TokenKind::RBrace, |p| {
                if let Some(item) = p.object_item() {
                    items.push(item);
                }
            })
        });
        Expr { span: open.to(Span::at(end)), kind: ExprKind::Object(items) }
    }

    fn object_item(&mut self) -> Option<ObjectItem> {
        let token = self.peek();
        let next = self.nth(1).kind;
        match token.kind {
            TokenKind::LBracket => {
                self.bump();
                let key = self.expression();
                self.close(TokenKind::RBracket, "`]`");
                self.object_colon()?;
                let value = self.expression();
                Some(ObjectItem::Computed { span: token.span.to(value.span), key, value })
            }
            TokenKind::String | TokenKind::Ident | TokenKind::Keyword(_) => {
                let quoted = token.kind == TokenKind::String;
                if token.kind == TokenKind::Ident && matches!(next, TokenKind::Comma | TokenKind::RBrace) {
                    self.bump();
                    return Some(ObjectItem::Shorthand(Ident {
                        name: Text::from(self.text(token.span)),
                        span: token.span,
                    }));
                }
                if let TokenKind::Keyword(keyword) = token.kind
                    && matches!(next, TokenKind::Comma | TokenKind::RBrace)
                {
                    return self.reserved_shorthand(keyword);
                }
                self.bump();
                let name = if quoted {
                    string_value(self.text(token.span))
                } else {
                    Text::from(self.text(token.span))
                };
                let key = ObjectKey { name, quoted, span: token.span };
                self.object_colon()?;
                let value = self.expression();
                Some(ObjectItem::Field { span: token.span.to(value.span), key, value })
            }
            _ => {
                self.expected("an object key");
                None
            }
        }
    }

    /// The `:` after a key; `=` gets a machine fix.
    fn object_colon(&mut self) -> Option<()> {
        if self.eat(TokenKind::Colon).is_some() {
            return Some(());
        }
        if self.at(TokenKind::Eq) {
            let eq = self.bump().span;
            self.push(
                Diagnostic::error(codes::UNEXPECTED_TOKEN, eq, "object fields are written `key: value`")
                    .with_fix(Fix::machine("write `:`", eq, ":")),
            );
            return Some(());
        }
        self.expected("`:` after the object key");
        None
    }

    fn reserved_shorthand(&mut self, keyword: Keyword) -> Option<ObjectItem> {
        if self.use_of_reserved_binding(keyword, true) {
            let span = self.bump().span;
            return Some(ObjectItem::Shorthand(Ident { name: Text::from(keyword.as_str()), span }));
        }
        let span = self.bump().span;
        self.report_unexpected(
            Diagnostic::error(
                codes::UNEXPECTED_TOKEN,
                span,
                format!("`{}` is a reserved word and cannot be a shorthand field", keyword.as_str()),
            )
            .with_help(format!("write `{}: value`", keyword.as_str())),
        );
        None
    }

    /// `arguments? )` of a call whose `(` is at `open`; returns the arguments and the end offset.
    pub(super) fn call_arguments(&mut self, open: Span) -> (Vec<Expr>, u32) {
        let mut args = Vec::new();
        let mut keyword_args = Vec::new();
        let end = self.with_lines(false, |p| {
            p.delimited(open, TokenKind::RParen, |p| {
                if matches!(p.kind(), TokenKind::Ident | TokenKind::Keyword(_))
                    && p.nth(1).kind == TokenKind::Eq
                {
                    keyword_args.push((p.peek().span, p.nth(1).span));
                    p.bump();
                    p.bump();
                }
                args.push(p.expression());
            })
        });
        if !keyword_args.is_empty() {
            self.report_keyword_arguments(&args, &keyword_args);
        }
        (args, end)
    }

    /// Parses `item, item, …` up to `close` (after the opening token at `open`), with local
    /// recovery: a missing `,` between items is inserted, garbage is skipped to the next `,` or
    /// the closing token, and an obviously unclosed group is closed where the next statement
    /// starts. Returns the end offset of the group.
    pub(super) fn delimited(&mut self, open: Span, close: TokenKind, mut item: impl FnMut(&mut Self)) -> u32 {
        let close_text = close.punctuation().unwrap_or("?");
        loop {
            if let Some(token) = self.eat(close) {
                return token.span.end;
            }
            if self.at_eof() || self.aborted || self.group_ends_here(close) {
                return self.report_unclosed(open, close_text);
            }
            let before = self.pos;
            item(self);
            if self.eat(TokenKind::Comma).is_some() {
                continue;
            }
            if let Some(token) = self.eat(close) {
                return token.span.end;
            }
            if self.at_eof() || self.group_ends_here(close) {
                return self.report_unclosed(open, close_text);
            }
            if self.can_start_item() && !self.recovering && self.pos > before {
                let at = Span::at(self.prev_end());
                self.push(
                    Diagnostic::error(
                        codes::MISSING_SEPARATOR,
                        self.peek().span,
                        format!("expected `,` or `{close_text}`"),
                    )
                    .with_fix(Fix::machine("insert `,`", at, ",")),
                );
                continue;
            }
            self.expected(&format!("`,` or `{close_text}`"));
            self.skip_to_item_end(close);
        }
    }

    /// A token that cannot belong to the group and starts the next statement on a new line, or a
    /// `}` that closes a surrounding block: the group was never closed.
    fn group_ends_here(&self, close: TokenKind) -> bool {
        let token = self.peek();
        let statement_start = token.line_break_before
            && (self.looks_like_statement_start() || token.kind == TokenKind::Keyword(Keyword::Return));
        let foreign_close = matches!(token.kind, TokenKind::RBrace | TokenKind::RParen | TokenKind::RBracket)
            && token.kind != close;
        statement_start || (foreign_close && token.line_break_before)
    }

    fn report_unclosed(&mut self, open: Span, close_text: &str) -> u32 {
        let end = self.prev_end();
        if !self.aborted {
            let diagnostic = Diagnostic::error(
                codes::UNCLOSED_DELIMITER,
                open,
                format!("this group is never closed with `{close_text}`"),
            )
            .with_fix(Fix::machine(format!("insert `{close_text}`"), Span::at(end), close_text));
            if !self.recovering {
                self.push(diagnostic);
            }
            self.recovering = true;
        }
        end
    }

    fn can_start_item(&self) -> bool {
        matches!(
            self.kind(),
            TokenKind::Ident
                | TokenKind::Integer
                | TokenKind::Number
                | TokenKind::String
                | TokenKind::LParen
                | TokenKind::LBracket
                | TokenKind::LBrace
                | TokenKind::Minus
                | TokenKind::Keyword(
                    Keyword::Null
                        | Keyword::True
                        | Keyword::False
                        | Keyword::Not
                        | Keyword::If
                        | Keyword::For
                        | Keyword::Fold
                        | Keyword::Fail
                        | Keyword::Boundary
                )
        )
    }

    /// Skips to the next `,` (consumed) or to `close` (left), keeping nested groups balanced.
    fn skip_to_item_end(&mut self, close: TokenKind) {
        loop {
            let kind = self.kind();
            if kind == close || kind == TokenKind::Eof || self.group_ends_here(close) {
                return;
            }
            match kind {
                TokenKind::Comma => {
                    self.bump();
                    return;
                }
                TokenKind::LParen | TokenKind::LBracket | TokenKind::LBrace => self.skip_group(),
                _ => {
                    self.bump();
                }
            }
        }
    }
}
