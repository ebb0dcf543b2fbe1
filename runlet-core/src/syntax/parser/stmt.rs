//! Statements and blocks: `name = value`, `skip [if c]`, `return value`, and the block rules (one
//! final `return`, `skip` only directly in loop bodies), with their one-diagnostic repairs.

use super::Parser;
use super::repair::{Construct, MissingReturn, Unbound};
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
    fn is_loop_body(self) -> bool {
        matches!(self, BlockKind::ForBody | BlockKind::FoldBody)
    }

    fn missing_return_code(self) -> Code {
        if self.is_loop_body() { codes::FOR_BODY_MISSING_RETURN } else { codes::MISSING_RETURN }
    }

    fn describe(self) -> &'static str {
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

/// What the block check needs to know about one statement beyond its syntax.
struct StmtInfo {
    /// For an expression statement that still needs its diagnostic.
    unbound: Option<Unbound>,
}

impl Parser<'_> {
    pub(super) fn program(&mut self) -> Program {
        let stmts = self.statements(BlockKind::Program);
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
        let saved_block = std::mem::replace(&mut self.block, kind);
        let saved_recovering = std::mem::replace(&mut self.recovering, false);
        let saved_start = self.statement_start;
        let stmts = self.with_lines(true, |p| p.statements(kind));
        let close = self.eat(TokenKind::RBrace).map(|close| close.span.end);
        if close.is_none() {
            self.report_unclosed_block(open.span);
        }
        self.block = saved_block;
        self.recovering = saved_recovering || close.is_none();
        self.statement_start = saved_start;
        self.leave(1);
        let block = Block { stmts, span: open.span.to(Span::at(close.unwrap_or(self.prev_end()))) };
        self.finish_block(kind, &block, Some(header));
        block
    }

    fn open_brace_on_header_line(&mut self, kind: BlockKind) -> Option<crate::syntax::token::Token> {
        if !self.at(TokenKind::LBrace) {
            if self.at(TokenKind::Colon) && self.peek().span.end == self.line_end(self.peek().span.start) {
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

    fn report_unclosed_block(&mut self, open: Span) {
        let end = self.source.len() as u32;
        self.push(
            Diagnostic::error(codes::UNCLOSED_DELIMITER, open, "this `{` is never closed")
                .with_fix(Fix::suggest("close the block at the end", Span::at(end), "\n}")),
        );
    }

    /// Statements up to the closing `}` (or the end, for the program), with recovery.
    fn statements(&mut self, kind: BlockKind) -> Vec<Stmt> {
        let mut stmts = Vec::new();
        let mut infos = Vec::new();
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
            let (stmt, info) = self.statement(kind);
            last_errored = self.recovering;
            if self.recovering {
                self.synchronize();
            } else {
                self.statement_end();
            }
            if self.pos == before {
                self.bump();
            }
            stmts.push(stmt);
            infos.push(info);
        }
        self.report_unbound(&stmts, &mut infos);
        self.last_statement_errored = last_errored;
        stmts
    }

    fn statement(&mut self, kind: BlockKind) -> (Stmt, StmtInfo) {
        let bound = StmtInfo { unbound: None };
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
                if let Some(stmt) = self.foreign_statement() {
                    return (stmt, bound);
                }
                if self.broken_continuation() {
                    let expr = self.expression();
                    return (Stmt::Expr(ExprStmt { span: expr.span, expr }), bound);
                }
                let start = self.peek().span;
                let mark = self.missing_returns.len();
                let expr = self.expression();
                let inner = self.missing_returns.split_off(mark);
                let span = start.to(expr.span);
                let unbound = if self.recovering {
                    self.report_missing_returns(inner);
                    None
                } else {
                    Some(Unbound { construct: Construct::of(&expr), inner })
                };
                (Stmt::Expr(ExprStmt { expr, span }), StmtInfo { unbound })
            }
        }
    }

    /// `name = value` (the name may be a reserved word already reported by the caller).
    pub(super) fn let_stmt(&mut self) -> LetStmt {
        let name_token = self.bump();
        let name = Ident { name: self.text(name_token.span).to_owned(), span: name_token.span };
        self.bump();
        let value = self.reported_expression();
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
            return ReturnStmt {
                value: Expr { kind: crate::syntax::ast::ExprKind::Null, span: keyword },
                span: keyword,
            };
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
            let inner = self.missing_returns.split_off(mark);
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
        let expr = self.expression();
        let inner = self.missing_returns.split_off(mark);
        self.report_missing_returns(inner);
        expr
    }

    fn report_missing_returns(&mut self, missing: Vec<MissingReturn>) {
        for m in missing {
            self.push(m.into_diagnostic());
        }
    }

    /// After a statement: `;`, `}`, the end, or a line break. Two statements on one line get a
    /// `;` inserted when the second clearly starts a statement.
    fn statement_end(&mut self) {
        match self.kind() {
            TokenKind::Semicolon => {
                self.bump();
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

    /// Reports every expression statement of a block except a final one in a block without
    /// `return` (the missing-return repair covers that one).
    fn report_unbound(&mut self, stmts: &[Stmt], infos: &mut [StmtInfo]) {
        let has_return = stmts.iter().any(|s| matches!(s, Stmt::Return(_)));
        let declared: Vec<&str> = stmts
            .iter()
            .filter_map(|s| match s {
                Stmt::Let(l) => Some(l.name.name.as_str()),
                _ => None,
            })
            .collect();
        let mut taken: Vec<String> = declared.iter().map(|s| (*s).to_owned()).collect();
        let last = stmts.len().saturating_sub(1);
        for (index, (stmt, info)) in stmts.iter().zip(infos.iter_mut()).enumerate() {
            let (Stmt::Expr(expr_stmt), Some(unbound)) = (stmt, info.unbound.take()) else { continue };
            if index == last && !has_return {
                info.unbound = Some(unbound);
                continue;
            }
            let followed_by_more = index < last;
            let diagnostic = unbound.into_diagnostic(&expr_stmt.expr, &mut taken, followed_by_more);
            self.push(diagnostic);
        }
        self.pending_final_unbound = infos.last_mut().and_then(|i| i.unbound.take());
    }

    /// The return rules of one block: exactly one `return`, and it comes last.
    fn finish_block(&mut self, kind: BlockKind, block: &Block, header: Option<Span>) {
        let returns: Vec<usize> = block
            .stmts
            .iter()
            .enumerate()
            .filter(|(_, s)| matches!(s, Stmt::Return(_)))
            .map(|(i, _)| i)
            .collect();
        let final_unbound = self.pending_final_unbound.take();
        let last_errored = std::mem::take(&mut self.last_statement_errored);
        if self.aborted || (last_errored && returns.is_empty()) {
            return;
        }
        match returns.as_slice() {
            [] => {
                let code = kind.missing_return_code();
                let Some(missing) =
                    MissingReturn::new(code, kind.describe(), block, header, final_unbound, self)
                else {
                    return;
                };
                if kind == BlockKind::Program {
                    self.push(missing.into_diagnostic());
                } else {
                    self.missing_returns.push(missing);
                }
            }
            [only] if *only + 1 == block.stmts.len() => {}
            [only] => self.report_early_return(block, *only),
            [first, second, ..] => {
                let first = block.stmts[*first].span();
                let second = block.stmts[*second].span();
                self.push(
                    Diagnostic::error(codes::DUPLICATE_RETURN, second, format!("{} already returned", kind.describe()))
                        .with_label(first, "the block returns here")
                        .with_help("a block has exactly one `return`, at its end; choose between values with `if … else`")
                        .with_fix(Fix::suggest("remove the second `return`", second, "")),
                );
            }
        }
    }

    fn report_early_return(&mut self, block: &Block, index: usize) {
        let ret = block.stmts[index].span();
        let next = block.stmts[index + 1].span();
        let last = block.stmts[block.stmts.len() - 1].span();
        let mut diagnostic = Diagnostic::error(
            codes::EARLY_RETURN,
            ret,
            "`return` must be the last statement of its block",
        )
        .with_label(next.to(last), "these statements come after the `return`")
        .with_help(
            "Runlet has no early return: move the `return` to the end, or choose the value with `if … else`",
        );
        let gap = &self.source[ret.end as usize..next.start as usize];
        if gap.trim().is_empty() {
            let indent = " ".repeat(self.indent_of(last.start));
            let moved = format!("\n{indent}{}", self.text(ret));
            diagnostic = diagnostic.with_fix(Fix::new(
                "move the `return` to the end",
                Applicability::MaybeIncorrect,
                vec![
                    Edit { span: Span::new(ret.start, next.start), replacement: String::new() },
                    Edit { span: Span::at(last.end), replacement: moved },
                ],
            ));
        }
        self.push(diagnostic);
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

    /// The offset where the line holding `offset` ends.
    pub(super) fn line_end(&self, offset: u32) -> u32 {
        self.source[offset as usize..].find('\n').map_or(self.source.len(), |i| offset as usize + i) as u32
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

    /// A statement that starts with `(`, `[`, `.` or an infix operator right after another
    /// statement: the line break ended the previous expression (spec §2.1), which was surely not
    /// meant. One diagnostic whose fix joins the lines; the rest of the line is skipped.
    fn broken_continuation(&mut self) -> bool {
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
        );
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

    /// A Python-style `header:` followed by an indented block.
    fn colon_block(&mut self, kind: BlockKind) {
        let colon = self.peek().span;
        let header_start = self.tokens[self.pos.saturating_sub(1)].span.start;
        self.report_unexpected(
            Diagnostic::error(
                codes::COLON_BLOCK,
                colon,
                format!("{} is written in braces, not after `:`", kind.describe()),
            )
            .with_help(
                "write `{ … }` around the body, with `{` on the header line; indentation is not significant",
            ),
        );
        self.bump();
        self.skip_indented_block(header_start);
    }
}

/// A name nobody declared yet in a block: `base`, `base_2`, `base_3`, …
pub(super) fn fresh_name(base: &str, taken: &mut Vec<String>) -> String {
    let mut name = base.to_owned();
    let mut n = 2;
    while taken.contains(&name) || Keyword::from_word(&name).is_some() {
        name = format!("{base}_{n}");
        n += 1;
    }
    taken.push(name.clone());
    name
}

impl MissingReturn {
    fn new(
        code: Code,
        owner: &'static str,
        block: &Block,
        header: Option<Span>,
        final_unbound: Option<Unbound>,
        parser: &Parser<'_>,
    ) -> Option<Self> {
        let last = block.stmts.last();
        let target = last.map_or(block.span, Stmt::span);
        let mut missing = MissingReturn {
            code,
            owner,
            span: target,
            header,
            edits: Vec::new(),
            applicability: Applicability::MachineApplicable,
            help: None,
        };
        match (last, final_unbound) {
            (Some(Stmt::Expr(stmt)), Some(unbound)) => {
                missing.edits.push(Edit { span: Span::at(stmt.span.start), replacement: "return ".into() });
                missing.edits.extend(unbound.inner.into_iter().flat_map(|m| m.edits));
                let text = parser.text(stmt.span);
                if !text.contains('\n') && text.len() <= 80 {
                    missing.help = Some(format!("write `return {text}`"));
                }
            }
            // An expression statement that already has its own error: no second diagnostic.
            (Some(Stmt::Expr(_)), None) => return None,
            (Some(Stmt::Let(binding)), _) => {
                let same_line = parser.line_end(binding.span.end) >= block.span.end;
                let replacement = if same_line {
                    format!("; return {}", binding.name.name)
                } else {
                    format!(
                        "\n{}return {}",
                        " ".repeat(parser.indent_of(binding.span.start)),
                        binding.name.name
                    )
                };
                missing.edits.push(Edit { span: Span::at(binding.span.end), replacement });
                missing.help = Some(format!("write `return {}` at the end", binding.name.name));
            }
            _ => {
                missing.help =
                    Some("end the block with `return value` (`return null` when there is no value)".into());
            }
        }
        Some(missing)
    }
}

/// Used by `report_unbound`: the binding fix for an expression statement.
impl Unbound {
    fn into_diagnostic(self, expr: &Expr, taken: &mut Vec<String>, followed_by_more: bool) -> Diagnostic {
        let name = fresh_name(&self.construct.binding_base(expr), taken);
        let mut edits = vec![Edit { span: Span::at(expr.span.start), replacement: format!("{name} = ") }];
        let mut applicability = match self.construct {
            Construct::Other => Applicability::MaybeIncorrect,
            _ => Applicability::MachineApplicable,
        };
        let then_returns = matches!(&expr.kind, ExprKind::If(i) if i.then_block.returned().is_some());
        let looks_like_early_exit = followed_by_more && then_returns;
        let inner_returns = self.inner.iter().all(|m| !m.edits.is_empty());
        for inner in self.inner {
            edits.extend(inner.edits);
        }
        if !inner_returns || looks_like_early_exit {
            applicability = Applicability::MaybeIncorrect;
        }
        let (code, message, help) = match self.construct {
            Construct::Control(keyword) => (
                codes::STATEMENT_FORM_CONTROL,
                format!("`{keyword}` is an expression: bind or return its value"),
                format!("write `{name} = {keyword} …` and end each block with `return`"),
            ),
            Construct::Call => (
                codes::EXPRESSION_STATEMENT,
                "a call must be bound to a name".to_owned(),
                format!(
                    "write `{name} = …`; a bound effectful call still runs even if `{name}` is never used"
                ),
            ),
            Construct::Other => (
                codes::EXPRESSION_STATEMENT,
                "this expression is not used".to_owned(),
                "bind it to a name or return it".to_owned(),
            ),
        };
        let mut diagnostic = Diagnostic::error(code, expr.span, message).with_help(help).with_fix(Fix::new(
            format!("bind it to `{name}`"),
            applicability,
            edits,
        ));
        if looks_like_early_exit {
            diagnostic = diagnostic
                .with_note("Runlet has no early return: put the rest of the block in the `else` branch");
        }
        diagnostic
    }
}
