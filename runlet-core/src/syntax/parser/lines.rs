//! Line-break diagnostics: a line break that ended a construct too early (`{`, `else`, `catch`,
//! `.`, `(`, `[` or an infix operator on the next line) and Python-style `header:` blocks.

use super::Parser;
use super::stmt::BlockKind;
use crate::diag::{Applicability, Diagnostic, Edit, Fix, Span, codes};
use crate::syntax::ast::{ExprKind, Stmt};
use crate::syntax::token::{Keyword, TokenKind};

impl Parser<'_> {
    /// The offset where the line holding `offset` ends.
    pub(super) fn line_end(&self, offset: u32) -> u32 {
        let rest = self.source.get(offset as usize..).unwrap_or_default();
        rest.find('\n').map_or(self.source.len(), |i| offset as usize + i) as u32
    }

    /// `{` (or `else`, `catch`, `.`) that must stay on the previous line: one diagnostic whose fix
    /// joins the lines when only whitespace separates them.
    pub(super) fn report_line_break(&mut self, token: Span, message: &str) {
        let gap = Span::new(self.prev_end(), token.start);
        let mut diagnostic = Diagnostic::error(codes::MISPLACED_LINE_BREAK, token, message)
            .with_help("a line break ends the statement here; keep the construct on one line, or wrap a long expression in `( … )`");
        if self.text(gap).trim().is_empty() {
            let joined =
                if matches!(self.source.as_bytes().get(token.start as usize), Some(b'.' | b'(' | b'[')) {
                    ""
                } else {
                    " "
                };
            diagnostic = diagnostic.with_fix(Fix::machine("join the lines", gap, joined));
        }
        self.push(diagnostic);
    }

    /// Before a part of a header or binding that the parser reads next (`in`, `limit N`, a bound
    /// name, a fold's `=` and `for`, `retry N`, a binding's `=`): a line break there comes after a
    /// token that does not continue the line, so by spec §2.1 it ended the statement. Reported
    /// once with a fix joining the lines; the part is then read as intended. Callers check that
    /// the part is there.
    pub(super) fn keep_on_line(&mut self) {
        // After an error in the statement the position is uncertain: no second diagnostic.
        if self.at_line_end() && !self.at_eof() && !self.recovering {
            let token = self.peek();
            let what = token.kind.describe();
            self.report_line_break(
                token.span,
                &format!("a line break before {what} ends the statement before it"),
            );
        }
    }

    /// A statement that starts with `(`, `[`, `.`, an infix operator or the `else` of a postfix
    /// conditional left open, right after another statement: the line break ended
    /// the previous expression (spec §2.1), which was surely not meant. One diagnostic whose fix
    /// joins the lines; the rest of the line is skipped.
    pub(super) fn broken_continuation(&mut self) -> bool {
        let token = self.peek();
        let continues_expression = matches!(
            token.kind,
            TokenKind::LParen
                | TokenKind::LBracket
                | TokenKind::Plus
                | TokenKind::Minus
                | TokenKind::Star
                | TokenKind::Slash
                | TokenKind::Percent
                | TokenKind::EqEq
                | TokenKind::NotEq
                | TokenKind::Lt
                | TokenKind::LtEq
                | TokenKind::Gt
                | TokenKind::GtEq
                | TokenKind::Keyword(Keyword::And | Keyword::Or | Keyword::In)
        ) || (token.kind == TokenKind::Keyword(Keyword::Else)
            && self.open_conditional);
        let previous = self.pos.checked_sub(1).map(|i| self.tokens[i].kind);
        let after_expression = matches!(
            previous,
            Some(
                TokenKind::Ident
                    | TokenKind::RParen
                    | TokenKind::RBracket
                    | TokenKind::String
                    | TokenKind::Integer
                    | TokenKind::Number
                    | TokenKind::Keyword(Keyword::Null | Keyword::True | Keyword::False)
            )
        );
        if !(continues_expression && token.line_break_before && after_expression) {
            return false;
        }
        let what = token.kind.describe();
        self.report_line_break(
            token.span,
            &format!("a line break before {what} ends the statement before it"),
        );
        self.recovering = true;
        true
    }

    /// A Python-style `header:` followed by an indented block: one diagnostic whose fix puts the
    /// body (and its `else:`/`elif …:` clauses) in braces.
    pub(super) fn colon_block(&mut self, kind: BlockKind) {
        let colon = self.peek().span;
        let header_start = self.tokens[self.pos.saturating_sub(1)].span.start;
        let header_indent = self.indent_of(header_start);
        let line_start = self.source[..header_start as usize].rfind('\n').map_or(0, |i| i + 1);
        let indent = self.source[line_start..line_start + header_indent].to_owned();
        let mut edits = vec![self.open_brace(colon)];
        let first = self.pos;
        self.bump();
        self.skip_indented_block(header_start);
        // The clauses that continue the construct: `else:`, `elif …:`, `except …:`, `finally:`.
        let mut braced = true;
        loop {
            let token = self.peek();
            let word = self.text(token.span);
            let continues = token.kind == TokenKind::Keyword(Keyword::Else)
                || (token.kind == TokenKind::Ident && matches!(word, "elif" | "except" | "finally"));
            if !(continues && self.indent_of(token.span.start) == header_indent) {
                break;
            }
            braced &= token.kind == TokenKind::Keyword(Keyword::Else) || word == "elif";
            let replacement = if word == "elif" { "else if" } else { word };
            edits.push(Edit {
                span: Span::new(self.prev_end(), token.span.end),
                replacement: format!("\n{indent}}} {replacement}"),
            });
            while !self.at_eof() && !self.at(TokenKind::Colon) && !self.nth(1).line_break_before {
                self.bump();
            }
            if self.at(TokenKind::Colon) {
                edits.push(self.open_brace(self.peek().span));
            } else {
                braced = false;
            }
            self.bump();
            self.skip_indented_block(header_start);
        }
        edits.push(Edit { span: Span::at(self.prev_end()), replacement: format!("\n{indent}}}") });
        let mut diagnostic = Diagnostic::error(
            codes::COLON_BLOCK,
            colon,
            format!("{} is written in braces, not after `:`", kind.describe()),
        )
        .with_help(
            "write `{ … }` around the body, with `{` on the header line; indentation is not significant",
        );
        if braced {
            // Braces alone repair a loop or boundary whose body has no mistakes of its own; an `if`
            // statement still needs its value bound.
            let applicability = if kind != BlockKind::IfBranch && self.plain_lines(first) {
                Applicability::MachineApplicable
            } else {
                Applicability::MaybeIncorrect
            };
            diagnostic = diagnostic.with_fix(Fix::new("put the body in braces", applicability, edits));
        }
        self.report_unexpected(diagnostic);
    }

    /// Whether the tokens after index `first` up to the cursor hold no other language's operators
    /// and no further `header:` line.
    fn plain_lines(&self, first: usize) -> bool {
        (first + 1..self.pos).all(|i| match self.tokens[i].kind {
            TokenKind::Foreign(_) | TokenKind::Unknown => false,
            TokenKind::Colon => !self.tokens[i + 1].line_break_before,
            _ => true,
        })
    }

    /// The edit turning the `:` at `colon` (and the spaces before it) into ` {`.
    fn open_brace(&self, colon: Span) -> Edit {
        let before = &self.source[..colon.start as usize];
        let start = before.trim_end_matches([' ', '\t']).len() as u32;
        Edit { span: Span::new(start, colon.end), replacement: " {".into() }
    }
}

/// True when `stmt` ends with a postfix conditional that has no `else` (`x = a if c`).
pub(super) fn ends_in_open_conditional(stmt: &Stmt) -> bool {
    let mut expr = match stmt {
        Stmt::Let(s) => &s.value,
        Stmt::Return(s) => &s.value,
        Stmt::Expr(s) => &s.expr,
        Stmt::Skip(_) => return false,
    };
    loop {
        match &expr.kind {
            ExprKind::Conditional { otherwise: None, .. } => return true,
            ExprKind::Conditional { otherwise: Some(otherwise), .. } => expr = otherwise,
            _ => return false,
        }
    }
}
