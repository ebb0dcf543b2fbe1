//! Statements and blocks: `name = value`, `skip [if c]`, `return value`, and the block rules (one
//! final `return`, `skip` only directly in loop bodies), with their one-diagnostic repairs.

use super::Parser;
use super::repair::{Construct, Unbound};
use crate::diag::{Applicability, Code, Diagnostic, Edit, Fix, Span, codes};
use crate::syntax::ast::{
    Block, Expr, ExprKind, ExprStmt, Ident, LetStmt, Program, ReturnStmt, SkipStmt, Stmt,
};
use crate::syntax::token::{Keyword, TokenKind};

/// The kind of body being parsed; decides where `skip` is allowed and which code a missing
/// `return` gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BlockKind {
    Program,
    ForBody,
    FoldBody,
    IfBranch,
    BoundaryBody,
    CatchBody,
}

impl BlockKind {
    pub(super) fn is_loop_body(self) -> bool {
        matches!(self, BlockKind::ForBody | BlockKind::FoldBody)
    }

    pub(super) fn missing_return_code(self) -> Code {
        if self.is_loop_body() { codes::FOR_BODY_MISSING_RETURN } else { codes::MISSING_RETURN }
    }

    pub(super) fn describe(self) -> &'static str {
        match self {
            BlockKind::Program => "the program",
            BlockKind::ForBody => "a `for` expression body",
            BlockKind::FoldBody => "a `fold` expression body",
            BlockKind::IfBranch => "an `if` branch",
            BlockKind::BoundaryBody => "a `boundary` body",
            BlockKind::CatchBody => "a `catch` body",
        }
    }
}

impl Parser<'_> {
    pub(super) fn program(&mut self) -> Program {
        let stmts = self.statements(BlockKind::Program, None);
        let end = self.source.len() as u32;
        let span = Span::new(0, end);
        let block = Block { stmts, span };
        self.finish_block(BlockKind::Program, &block, None);
        Program { stmts: block.stmts, span }
    }

    /// `{ statements }` after a header whose keyword is at `header`.
    pub(super) fn block(&mut self, kind: BlockKind, header: Span) -> Block {
        let Some(open) = self.open_brace_on_header_line(kind) else {
            self.expected("`{`");
            return Block { stmts: Vec::new(), span: Span::at(self.prev_end()) };
        };
        if !self.enter() {
            return Block { stmts: Vec::new(), span: open.span };
        }
        let saved_recovering = std::mem::replace(&mut self.recovering, false);
        let saved_start = self.statement_start;
        let header_indent = self.indent_of(open.span.start);
        let stmts = self.with_lines(true, |p| p.statements(kind, Some(header_indent)));
        let close = self.eat(TokenKind::RBrace).map(|close| close.span.end);
        if close.is_none() {
            let returned = matches!(stmts.last(), Some(Stmt::Return(_))) && !self.at(TokenKind::Eof);
            self.report_unclosed_block(open.span, returned.then(|| (self.prev_end(), header_indent)));
        }
        self.recovering = saved_recovering || close.is_none();
        self.statement_start = saved_start;
        self.leave(1);
        let block = Block { stmts, span: open.span.to(Span::at(close.unwrap_or(self.prev_end()))) };
        self.finish_block(kind, &block, Some(header));
        block
    }

    fn open_brace_on_header_line(&mut self, kind: BlockKind) -> Option<crate::syntax::token::Token> {
        if !self.at(TokenKind::LBrace) {
            // The `:` ends its line, whatever follows it there (a comment, a `\r`).
            let ends_line = self.nth(1).line_break_before || self.nth(1).kind == TokenKind::Eof;
            if self.at(TokenKind::Colon) && ends_line {
                self.colon_block(kind);
            }
            return None;
        }
        let brace = self.peek();
        if brace.line_break_before {
            self.report_line_break(brace.span, "`{` must be on the same line as its header");
        }
        Some(self.bump())
    }

    /// `RL1011` for a block's `{`. A block that already returned, followed by a line indented no
    /// deeper than its header, closes after that `return` (`after`: where, and the header's
    /// indentation); any other closes at the end.
    fn report_unclosed_block(&mut self, open: Span, after: Option<(u32, usize)>) {
        let fix = match after {
            Some((at, indent)) => {
                let close = format!("\n{}}}", " ".repeat(indent));
                Fix::machine("close the block after its `return`", Span::at(at), close)
            }
            None => Fix::suggest("close the block at the end", Span::at(self.source.len() as u32), "\n}"),
        };
        self.push(
            Diagnostic::error(codes::UNCLOSED_DELIMITER, open, "this `{` is never closed").with_fix(fix),
        );
    }

    /// Statements up to the closing `}` (or the end, for the program), with recovery. In a block
    /// whose header is indented `header_indent`, a line indented no deeper after the block's
    /// `return` ends the block: its `}` was left out.
    fn statements(&mut self, kind: BlockKind, header_indent: Option<usize>) -> Vec<Stmt> {
        let mut stmts = Vec::new();
        let mut unbound = Vec::new();
        let mut last_errored = false;
        loop {
            while self.eat(TokenKind::Semicolon).is_some() {}
            match self.kind() {
                TokenKind::Eof => break,
                TokenKind::RBrace if kind != BlockKind::Program => break,
                TokenKind::RBrace => {
                    let stray = self.bump().span;
                    self.push(
                        Diagnostic::error(codes::UNMATCHED_CLOSING_DELIMITER, stray, "unmatched `}`")
                            .with_fix(Fix::machine("remove it", stray, "")),
                    );
                    continue;
                }
                _ => {}
            }
            self.recovering = false;
            let before = self.pos;
            self.statement_start = before;
            self.open_conditional = stmts.last().is_some_and(super::lines::ends_in_open_conditional);
            let (stmt, needs_binding) = self.statement(kind);
            last_errored = self.recovering;
            if self.recovering {
                self.synchronize();
            } else {
                self.statement_end();
            }
            if self.pos == before {
                self.bump();
            }
            let returned = matches!(stmt, Stmt::Return(_));
            stmts.push(stmt);
            unbound.push(needs_binding);
            let next = self.peek();
            let dedented = header_indent
                .is_some_and(|indent| next.line_break_before && self.indent_of(next.span.start) <= indent);
            if returned && dedented && !matches!(next.kind, TokenKind::RBrace | TokenKind::Eof) {
                break;
            }
        }
        self.report_unbound(kind, &stmts, unbound);
        self.last_statement_errored = last_errored;
        stmts
    }

    /// One statement, and for an expression statement that still needs its diagnostic, what
    /// that diagnostic needs (reported by `report_unbound` once the block is complete).
    fn statement(&mut self, kind: BlockKind) -> (Stmt, Option<Unbound>) {
        let bound = None;
        let next = self.nth(1).kind;
        match self.kind() {
            TokenKind::Ident if next == TokenKind::Eq => (Stmt::Let(self.let_stmt()), bound),
            TokenKind::Keyword(keyword) if next == TokenKind::Eq => {
                self.report_reserved_binding(keyword);
                (Stmt::Let(self.let_stmt()), bound)
            }
            TokenKind::Keyword(Keyword::Return) => (Stmt::Return(self.return_stmt()), bound),
            TokenKind::Keyword(Keyword::Skip) => (Stmt::Skip(self.skip_stmt(kind)), bound),
            _ => {
                if let Some(stmt) = self.destructuring().or_else(|| self.foreign_statement()) {
                    return (stmt, bound);
                }
                if self.broken_continuation() {
                    let expr = self.expression();
                    return (Stmt::Expr(ExprStmt { span: expr.span, expr }), bound);
                }
                let start = self.peek().span;
                let mark = self.missing_returns.len();
                let expr = self.expression();
                let inner = self.missing_returns.drain(mark..).collect::<Vec<_>>();
                let span = start.to(expr.span);
                // A character the lexer refused (already reported) cut the line here: what comes
                // before it is not a statement of its own.
                let cut = self.at(TokenKind::Unknown) && !self.peek().line_break_before;
                let unbound = if self.recovering || cut {
                    self.report_missing_returns(inner);
                    None
                } else {
                    Some(Unbound { construct: Construct::of(&expr), inner })
                };
                (Stmt::Expr(ExprStmt { expr, span }), unbound)
            }
        }
    }

    /// `name = value` (the name may be a reserved word, or followed by a type annotation, both
    /// already reported by the caller: everything up to the `=` is skipped).
    pub(super) fn let_stmt(&mut self) -> LetStmt {
        let at = self.pos;
        let name_token = self.bump();
        let name = Ident { name: self.name(name_token.span), span: name_token.span };
        while !self.at(TokenKind::Eq) && !self.at_eof() && !self.at_line_start() {
            self.bump();
        }
        if self.at(TokenKind::Eq) {
            self.keep_on_line();
        }
        if self.eat(TokenKind::Eq).is_none() {
            self.expected("`=`");
            let value = self.error_expr(Span::at(self.prev_end()));
            return LetStmt { span: name.span, name, value };
        }
        let value = self.reported_expression();
        self.note_accumulation(at, &value);
        let span = name.span.to(value.span);
        LetStmt { name, value, span }
    }

    fn return_stmt(&mut self) -> ReturnStmt {
        let keyword = self.bump().span;
        let ends_here = self.at_line_end()
            || matches!(self.kind(), TokenKind::Semicolon | TokenKind::RBrace | TokenKind::Eof);
        if ends_here {
            self.push(
                Diagnostic::error(codes::EMPTY_RETURN, keyword, "`return` needs a value")
                    .with_help("return `null` when there is nothing to return")
                    .with_fix(Fix::machine("return `null`", Span::at(keyword.end), " null")),
            );
            return ReturnStmt { value: Expr { kind: ExprKind::Null, span: keyword }, span: keyword };
        }
        let value = self.reported_expression();
        ReturnStmt { span: keyword.to(value.span), value }
    }

    fn skip_stmt(&mut self, kind: BlockKind) -> SkipStmt {
        let keyword = self.bump().span;
        let condition = (self.at_keyword(Keyword::If) && !self.at_line_end()).then(|| {
            self.bump();
            let mark = self.missing_returns.len();
            let condition = self.binary(0);
            let inner = self.missing_returns.drain(mark..).collect::<Vec<_>>();
            self.report_missing_returns(inner);
            condition
        });
        let span = condition.as_ref().map_or(keyword, |c| keyword.to(c.span));
        if !kind.is_loop_body() {
            let (message, help) = match kind {
                BlockKind::BoundaryBody => (
                    "`skip` cannot be used inside a `boundary` block",
                    "a skip would abandon the boundary's retry accounting mid-attempt; skip before the boundary, directly in the loop body",
                ),
                BlockKind::Program => (
                    "`skip` is only valid inside a `for` or `fold` body",
                    "to leave out values, filter inside a loop: `for x in xs { skip if not x.ok; return x }`",
                ),
                _ => (
                    "`skip` must be directly inside a `for` or `fold` body",
                    "move the condition into the skip, directly in the loop body: `skip if condition`",
                ),
            };
            self.push(Diagnostic::error(codes::SKIP_OUTSIDE_LOOP_BODY, span, message).with_help(help));
            // The misplaced skip is the block's one problem: no missing-return report for it.
            self.recovering = true;
        }
        SkipStmt { condition, span }
    }

    /// An expression whose blocks' missing returns are reported on their own (it is bound or
    /// returned, so nothing folds them into a statement-level repair).
    fn reported_expression(&mut self) -> Expr {
        let mark = self.missing_returns.len();
        let mut expr = self.expression();
        if self.at(TokenKind::Comma) && !self.at_line_end() {
            expr = self.tuple(expr);
        }
        let inner = self.missing_returns.drain(mark..).collect::<Vec<_>>();
        self.report_missing_returns(inner);
        expr
    }

    /// `value = a, b` or `return a, b`: Python's tuple, read and repaired as the list `[a, b]`.
    fn tuple(&mut self, first: Expr) -> Expr {
        let mut items = vec![first];
        while self.at(TokenKind::Comma) && !self.at_line_end() {
            self.bump();
            items.push(self.expression());
        }
        let span = items[0].span.to(items[items.len() - 1].span);
        self.push(
            Diagnostic::error(codes::TUPLE, span, "Runlet has no tuples; group the values in a list")
                .with_help("write `[a, b]`, or an object `{ a, b }` to name the values")
                .with_fix(Fix::new(
                    "make it a list",
                    Applicability::MachineApplicable,
                    vec![
                        Edit { span: Span::at(span.start), replacement: "[".into() },
                        Edit { span: Span::at(span.end), replacement: "]".into() },
                    ],
                )),
        );
        Expr { span, kind: ExprKind::List(items) }
    }

    /// After a statement: `;`, `}`, the end, or a line break. Two statements on one line get a
    /// `;` inserted when the second clearly starts a statement.
    fn statement_end(&mut self) {
        match self.kind() {
            TokenKind::Semicolon => {
                self.bump();
            }
            TokenKind::RParen | TokenKind::RBracket if !self.at_line_start() => {
                let stray = self.bump().span;
                let text = self.text(stray);
                self.push(
                    Diagnostic::error(
                        codes::UNMATCHED_CLOSING_DELIMITER,
                        stray,
                        format!("unmatched `{text}`"),
                    )
                    .with_fix(Fix::machine("remove it", stray, "")),
                );
                self.statement_end();
            }
            TokenKind::RBrace | TokenKind::Eof => {}
            _ if self.at_line_start() => {}
            _ if self.looks_like_statement_start() => {
                let at = Span::at(self.prev_end());
                self.push(
                    Diagnostic::error(
                        codes::MISSING_SEPARATOR,
                        self.peek().span,
                        "expected a line break or `;` before this statement",
                    )
                    .with_fix(Fix::machine("insert `;`", at, ";")),
                );
            }
            _ => {
                self.expected("a line break or `;` after the statement");
                self.synchronize();
            }
        }
    }

    pub(super) fn looks_like_statement_start(&self) -> bool {
        let next = self.nth(1).kind;
        match self.kind() {
            TokenKind::Ident | TokenKind::Keyword(_) if next == TokenKind::Eq => true,
            TokenKind::Keyword(Keyword::Return) => true,
            _ => false,
        }
    }

    /// Reports `keyword = …`: a reserved word cannot be a binding name.
    pub(super) fn report_reserved_binding(&mut self, keyword: Keyword) {
        let span = self.peek().span;
        let renamed = format!("{}_value", keyword.as_str());
        let index = self.push(
            Diagnostic::error(
                codes::RESERVED_WORD_AS_BINDING,
                span,
                format!("`{}` is a reserved word and cannot be a name", keyword.as_str()),
            )
            .with_help("reserved words work as field names (`x.limit`) and object keys (`{ limit: 10 }`), not as names")
            .with_fix(Fix::suggest(format!("rename it to `{renamed}`"), span, renamed)),
        );
        if let Some(index) = index {
            self.reserved_bindings.push((keyword, index));
        }
    }
}
