//! Bracketed sequences (lists, objects, call arguments) and their shared recovery: a missing `,`
//! is inserted, an unclosed group is closed where the next statement starts.

use super::Parser;
use super::spread::Piece;
use crate::diag::{Applicability, Diagnostic, Edit, Fix, Span, codes};
use crate::syntax::ast::{Expr, ExprKind, Ident, ObjectItem, ObjectKey, Text};
use crate::syntax::escape::string_value;
use crate::syntax::foreign_string;
use crate::syntax::token::{ForeignToken, Keyword, TokenKind};

impl Parser<'_> {
    pub(super) fn list(&mut self) -> Expr {
        let open = self.bump().span;
        let mut items = Vec::new();
        let mut pieces = Vec::new();
        let end = self.with_lines(false, |p| {
            p.delimited(open, TokenKind::RBracket, |p| {
                if let Some(spread) = p.spread(false) {
                    pieces.push(Piece::Spread(spread));
                    return;
                }
                let item = p.expression();
                pieces.push(Piece::Item(item.span));
                if items.is_empty() && p.at_keyword(Keyword::For) {
                    let comprehension = p.list_comprehension(open, item);
                    items.push(comprehension);
                    return;
                }
                items.push(item);
            })
        });
        self.report_spreads(open.to(Span::at(end)), &pieces, false);
        Expr { span: open.to(Span::at(end)), kind: ExprKind::List(items) }
    }

    pub(super) fn object(&mut self) -> Expr {
        let open = self.bump().span;
        let mut items = Vec::new();
        let mut pieces = Vec::new();
        let end = self.with_lines(false, |p| {
            p.delimited(open, TokenKind::RBrace, |p| {
                if let Some(spread) = p.spread(true) {
                    pieces.push(Piece::Spread(spread));
                } else if let Some(item) = p.object_item() {
                    pieces.push(Piece::Item(item.span()));
                    items.push(item);
                }
            })
        });
        self.report_spreads(open.to(Span::at(end)), &pieces, true);
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
            TokenKind::Ident if matches!(next, TokenKind::Dot | TokenKind::LBracket) => {
                // `{ user.id: user }`: a key computed from a value is written in brackets.
                let key = self.expression();
                if !self.at(TokenKind::Colon) {
                    self.expected("`:` after the object key");
                    return None;
                }
                self.push(
                    Diagnostic::error(
                        codes::UNEXPECTED_TOKEN,
                        key.span,
                        "a key computed from a value is written in brackets",
                    )
                    .with_help(format!("write `[{}]: …`", self.text(key.span)))
                    .with_fix(Fix::new(
                        format!("write `[{}]`", self.text(key.span)),
                        Applicability::MachineApplicable,
                        vec![
                            Edit { span: Span::at(key.span.start), replacement: "[".to_owned() },
                            Edit { span: Span::at(key.span.end), replacement: "]".to_owned() },
                        ],
                    )),
                );
                self.bump();
                let value = self.expression();
                Some(ObjectItem::Computed { span: token.span.to(value.span), key, value })
            }
            // A key in other quotes (`'a'`, already reported by the lexer) is read as the key.
            TokenKind::String
            | TokenKind::Ident
            | TokenKind::Keyword(_)
            | TokenKind::Foreign(ForeignToken::SingleQuotedString | ForeignToken::CurlyQuotedString) => {
                let foreign = match token.kind {
                    TokenKind::Foreign(kind) => Some(kind),
                    _ => None,
                };
                let quoted = token.kind == TokenKind::String || foreign.is_some();
                if token.kind == TokenKind::Ident && matches!(next, TokenKind::Comma | TokenKind::RBrace) {
                    self.bump();
                    return Some(ObjectItem::Shorthand(Ident {
                        name: self.name(token.span),
                        span: token.span,
                    }));
                }
                if let TokenKind::Keyword(keyword) = token.kind
                    && matches!(next, TokenKind::Comma | TokenKind::RBrace)
                {
                    return self.reserved_shorthand(keyword);
                }
                self.bump();
                let name = match (foreign, quoted) {
                    (Some(kind), _) => {
                        Text::from(foreign_string::value(kind, self.text(token.span)).as_str())
                    }
                    (None, true) => string_value(self.text(token.span)),
                    (None, false) => self.name(token.span),
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
            let key_end = self.prev_end();
            let eq = self.bump().span;
            self.push(
                Diagnostic::error(codes::UNEXPECTED_TOKEN, eq, "object fields are written `key: value`")
                    .with_fix(Fix::machine("write `:`", Span::new(key_end, eq.end), ":")),
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
        let mut group = Group { close, closed_at: None };
        loop {
            if let Some(token) = self.eat(close) {
                return token.span.end;
            }
            if self.at_eof() || self.aborted || self.group_ends_here(&mut group) {
                return self.report_unclosed(open, close_text);
            }
            let before = self.pos;
            item(self);
            if self.eat(TokenKind::Comma).is_some() {
                continue;
            }
            if self.at(TokenKind::Semicolon) && !self.recovering {
                let semicolon = self.bump().span;
                self.push(
                    Diagnostic::error(
                        codes::MISSING_SEPARATOR,
                        semicolon,
                        "items are separated by `,`, not `;`",
                    )
                    .with_fix(Fix::machine("write `,`", semicolon, ",")),
                );
                continue;
            }
            if let Some(token) = self.eat(close) {
                return token.span.end;
            }
            if self.at_eof() || self.group_ends_here(&mut group) {
                return self.report_unclosed(open, close_text);
            }
            // `{k: v for x in xs}`: a comma would not make it an object.
            if close == TokenKind::RBrace && self.at_keyword(Keyword::For) && !self.recovering {
                self.report_dict_comprehension();
                self.skip_to_item_end(&mut group);
                continue;
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
            self.skip_to_item_end(&mut group);
        }
    }

    /// `RL1040` for a dict comprehension's `for`. Out of line: the item loop it is called from
    /// recurses once per nesting level, and its frame is kept small.
    #[inline(never)]
    fn report_dict_comprehension(&mut self) {
        self.push(
            Diagnostic::error(
                codes::LIST_COMPREHENSION,
                self.peek().span,
                "Runlet has no dict comprehensions: an object's keys are written out",
            )
            .with_help("a `for` expression builds a list: `for x in xs { return { key: x, value: 1 } }`"),
        );
    }

    /// True when the group was never closed: a closing token of another kind starts the line,
    /// or the line starts like a statement (`name =`, `return`) and no closing token follows
    /// before the next `return` (a `name = value` line can also be a mistyped object field).
    fn group_ends_here(&self, group: &mut Group) -> bool {
        let token = self.peek();
        if !token.line_break_before {
            return false;
        }
        let other_close = matches!(token.kind, TokenKind::RBrace | TokenKind::RParen | TokenKind::RBracket)
            && token.kind != group.close;
        if other_close {
            return true;
        }
        // `return: 1` on its own line inside an object is a key, not the start of a statement.
        let object_key = group.close == TokenKind::RBrace && self.nth(1).kind == TokenKind::Colon;
        let statement_start = !object_key
            && (self.looks_like_statement_start() || token.kind == TokenKind::Keyword(Keyword::Return));
        if !statement_start || group.closed_at.is_some_and(|at| at > self.pos) {
            return false;
        }
        group.closed_at = self.find_close(group.close);
        group.closed_at.is_none()
    }

    /// The index of the token closing the current group, scanning forward; `None` when a `return`
    /// or another group's closing token comes first at this level.
    fn find_close(&self, close: TokenKind) -> Option<usize> {
        let mut balance = 0u32;
        for (index, token) in self.tokens.iter().enumerate().skip(self.pos) {
            match token.kind {
                TokenKind::LParen | TokenKind::LBracket | TokenKind::LBrace => balance += 1,
                kind if kind == close && balance == 0 => return Some(index),
                TokenKind::RParen | TokenKind::RBracket | TokenKind::RBrace => {
                    balance = balance.checked_sub(1)?;
                }
                TokenKind::Keyword(Keyword::Return) | TokenKind::Eof if balance == 0 => return None,
                _ => {}
            }
        }
        None
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
    fn skip_to_item_end(&mut self, group: &mut Group) {
        loop {
            let kind = self.kind();
            if kind == group.close || kind == TokenKind::Eof || self.group_ends_here(group) {
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

/// The group `delimited` is parsing: its closing token, and where a forward scan found it.
struct Group {
    close: TokenKind,
    closed_at: Option<usize>,
}
