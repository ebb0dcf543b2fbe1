//! The block-bodied expressions: `if`/`else if`/`else`, `for … in … limit N`, `fold`, `boundary
//! retry N … catch err`, and `fail(…)`, with their header diagnostics.

use super::Parser;
use super::stmt::BlockKind;
use crate::diag::{Applicability, Diagnostic, Edit, Fix, Span, codes};
use crate::syntax::ast::{
    Block, BoundaryExpr, CatchClause, ElseBranch, Expr, ExprKind, FoldExpr, ForExpr, Ident, IfExpr,
    IntegerClause, Text,
};
use crate::syntax::token::{Keyword, TokenKind};

impl Parser<'_> {
    pub(super) fn if_expr(&mut self) -> Expr {
        let keyword = self.peek().span;
        if !self.enter() {
            return self.error_expr(keyword);
        }
        let if_expr = self.if_chain();
        self.leave(1);
        let end = if_expr.else_branch.as_deref().map_or(if_expr.then_block.span, |e| match e {
            ElseBranch::If { span, .. } => *span,
            ElseBranch::Block(block) => block.span,
        });
        Expr { span: keyword.to(end), kind: ExprKind::If(Box::new(if_expr)) }
    }

    /// `if condition { … } [else …]`, starting at `if`.
    fn if_chain(&mut self) -> IfExpr {
        let keyword = self.bump().span;
        let condition = Box::new(self.expression());
        let then_block = self.block(BlockKind::IfBranch, keyword);
        let else_branch = self.else_branch().map(Box::new);
        IfExpr { condition, then_block, else_branch }
    }

    fn else_branch(&mut self) -> Option<ElseBranch> {
        let token = self.peek();
        let is_elif =
            token.kind == TokenKind::Ident && matches!(self.text(token.span), "elif" | "elsif" | "elseif");
        if is_elif {
            let gap = Span::new(self.prev_end(), token.span.end);
            let fix = if self.text(Span::new(gap.start, token.span.start)).trim().is_empty() {
                Fix::machine("write `else if`", gap, " else if")
            } else {
                Fix::machine("write `else if`", token.span, "else if")
            };
            self.push(
                Diagnostic::error(
                    codes::ELIF,
                    token.span,
                    format!("Runlet spells `{}` as `else if`", self.text(token.span)),
                )
                .with_fix(fix),
            );
            return Some(self.else_if(token.span));
        }
        if token.kind != TokenKind::Keyword(Keyword::Else) {
            return None;
        }
        if token.line_break_before {
            self.report_line_break(token.span, "`else` must be on the same line as the `}` before it");
        }
        self.bump();
        match self.kind() {
            TokenKind::Keyword(Keyword::If) => Some(self.else_if(token.span)),
            _ => Some(ElseBranch::Block(self.block(BlockKind::IfBranch, token.span))),
        }
    }

    /// The `if …` after `else` (or after a reported `elif`, which stands for `else if`).
    fn else_if(&mut self, else_span: Span) -> ElseBranch {
        let start = self.peek().span;
        if !self.enter() {
            return ElseBranch::Block(Block { stmts: Vec::new(), span: else_span });
        }
        let if_expr = if self.at_keyword(Keyword::If) {
            self.if_chain()
        } else {
            // `elif condition { … }`: the `elif` stands for both keywords.
            self.bump();
            let condition = Box::new(self.expression());
            let then_block = self.block(BlockKind::IfBranch, start);
            let else_branch = self.else_branch().map(Box::new);
            IfExpr { condition, then_block, else_branch }
        };
        self.leave(1);
        let end = Span::at(self.prev_end());
        ElseBranch::If { if_expr, span: start.to(end) }
    }

    pub(super) fn for_expr(&mut self) -> Expr {
        let keyword = self.peek().span;
        if !self.enter() {
            return self.error_expr(keyword);
        }
        self.bump();
        if self.at(TokenKind::LParen) {
            return self.foreign_for_header(keyword);
        }
        let item = self.binding_name();
        let pair = self.eat(TokenKind::Comma).map(|_| self.binding_name());
        // `for x limit 4 in xs`: the clause before the list, moved after it.
        let early =
            self.at_keyword(Keyword::Limit).then(|| (self.prev_end(), self.integer_clause(Keyword::Limit)));
        self.expect_in();
        let iterable = Box::new(self.expression());
        let limit = match early {
            Some((from, clause)) => {
                let moved = self.text(clause.span).to_owned();
                self.push(
                    Diagnostic::error(
                        codes::UNEXPECTED_TOKEN,
                        clause.span,
                        "`limit` comes after the list: `for x in xs limit N`",
                    )
                    .with_fix(Fix::new(
                        format!("move `{moved}` after the list"),
                        Applicability::MachineApplicable,
                        vec![
                            Edit { span: Span::new(from, clause.span.end), replacement: String::new() },
                            Edit { span: Span::at(iterable.span.end), replacement: format!(" {moved}") },
                        ],
                    )),
                );
                Some(clause)
            }
            None => self.at_keyword(Keyword::Limit).then(|| {
                self.keep_on_line();
                self.integer_clause(Keyword::Limit)
            }),
        };
        let body = self.block(BlockKind::ForBody, keyword);
        if let Some(second) = &pair {
            self.report_pair_loop(&item, second, &iterable, body.span);
        }
        self.leave(1);
        Expr {
            span: keyword.to(body.span),
            kind: ExprKind::For(Box::new(ForExpr { item, iterable, limit, body })),
        }
    }

    pub(super) fn fold_expr(&mut self) -> Expr {
        let keyword = self.peek().span;
        if !self.enter() {
            return self.error_expr(keyword);
        }
        self.bump();
        let acc = self.binding_name();
        if self.at(TokenKind::Eq) {
            self.keep_on_line();
        }
        let missing = self.eat(TokenKind::Eq).is_none();
        if missing {
            self.expected("`=` and the accumulator's initial value");
        }
        // `fold acc for …` lacks only the initial value: the rest is the fold's, not a value's.
        let init = match missing && self.at_keyword(Keyword::For) {
            true => Box::new(self.error_expr(Span::at(self.prev_end()))),
            false => Box::new(self.expression()),
        };
        if self.at_keyword(Keyword::For) {
            self.keep_on_line();
        }
        // `fold acc = 0, o in orders`: a comma where `for` goes, before the item and `in`.
        let comma_for_for = !missing
            && !matches!(init.kind, ExprKind::Error)
            && self.at(TokenKind::Comma)
            && self.nth(1).kind == TokenKind::Ident
            && self.nth(2).kind == TokenKind::Keyword(Keyword::In);
        if comma_for_for {
            let comma = self.bump().span;
            let gap = Span::new(self.tokens[self.pos - 2].span.end, self.peek().span.start);
            self.push(
                Diagnostic::error(
                    codes::UNEXPECTED_TOKEN,
                    comma,
                    "`fold` names its item after `for`, not a comma",
                )
                .with_help("write `fold acc = initial for item in list { … }`")
                .with_fix(Fix::machine("write `for`", gap, " for ")),
            );
        } else if self.eat(TokenKind::Keyword(Keyword::For)).is_none() {
            self.expected("`for` after the initial value");
        }
        let item = self.binding_name();
        self.expect_in();
        let iterable = Box::new(self.expression());
        if self.at_keyword(Keyword::Limit) {
            self.keep_on_line();
            let from = self.prev_end();
            let clause = self.integer_clause(Keyword::Limit);
            self.push(
                Diagnostic::error(codes::FOLD_WITH_LIMIT, clause.span, "`fold` takes no `limit`")
                    .with_help("fold iterations run one after another by definition; use `for` for bounded concurrency")
                    .with_fix(Fix::machine("remove the `limit`", Span::new(from, clause.span.end), "")),
            );
        }
        let body = self.block(BlockKind::FoldBody, keyword);
        self.leave(1);
        Expr {
            span: keyword.to(body.span),
            kind: ExprKind::Fold(Box::new(FoldExpr { acc, init, item, iterable, body })),
        }
    }

    pub(super) fn boundary_expr(&mut self) -> Expr {
        let keyword = self.peek().span;
        if !self.enter() {
            return self.error_expr(keyword);
        }
        self.bump();
        let retry = self.at_keyword(Keyword::Retry).then(|| {
            self.keep_on_line();
            self.integer_clause(Keyword::Retry)
        });
        let body = self.block(BlockKind::BoundaryBody, keyword);
        let catch = self.catch_clause(body.span);
        self.leave(1);
        Expr {
            span: keyword.to(catch.span),
            kind: ExprKind::Boundary(Box::new(BoundaryExpr { retry, body, catch })),
        }
    }

    fn catch_clause(&mut self, body: Span) -> CatchClause {
        let token = self.peek();
        if token.kind != TokenKind::Keyword(Keyword::Catch) {
            let missing = Span::at(self.prev_end());
            if !self.recovering {
                self.push(
                    Diagnostic::error(codes::MISSING_CATCH, body, "a `boundary` needs a `catch` clause")
                        .with_help("write `} catch err { return … }`: the catch body's value replaces the failed body's")
                        .with_fix(Fix::new(
                            "add a catch clause",
                            Applicability::HasPlaceholders,
                            vec![crate::diag::Edit { span: missing, replacement: " catch err { return null }".into() }],
                        )),
                );
            }
            let binding = Ident { name: Text::default(), span: missing };
            return CatchClause { binding, body: Block { stmts: Vec::new(), span: missing }, span: missing };
        }
        if token.line_break_before {
            self.report_line_break(
                token.span,
                "`catch` must be on the same line as the boundary's `}`: `} catch err {`",
            );
        }
        self.bump();
        let binding = if self.at(TokenKind::LParen) && self.nth(2).kind == TokenKind::RParen {
            let open = self.bump().span;
            let name = self.binding_name();
            let close = self.bump().span;
            self.push(
                Diagnostic::error(
                    codes::TRY_CATCH,
                    open.to(close),
                    "the caught error is named without parentheses",
                )
                .with_fix(Fix::new(
                    format!("write `catch {}`", name.name),
                    Applicability::MachineApplicable,
                    vec![
                        crate::diag::Edit { span: open, replacement: String::new() },
                        crate::diag::Edit { span: close, replacement: String::new() },
                    ],
                )),
            );
            name
        } else {
            self.binding_name()
        };
        let body = self.block(BlockKind::CatchBody, token.span);
        CatchClause { binding, span: token.span.to(body.span), body }
    }

    pub(super) fn fail_expr(&mut self) -> Expr {
        let keyword = self.bump().span;
        if !self.at(TokenKind::LParen) || self.peek().line_break_before {
            self.expected("`(` after `fail`: `fail(code, message)`");
            return self.error_expr(keyword);
        }
        let open = self.bump().span;
        let mut args = Vec::new();
        let end =
            self.with_lines(false, |p| p.delimited(open, TokenKind::RParen, |p| args.push(p.expression())));
        let span = keyword.to(Span::at(end));
        if !(2..=3).contains(&args.len()) && !self.recovering {
            let mut diagnostic = Diagnostic::error(
                codes::FAIL_ARGUMENTS,
                span,
                format!(
                    "`fail` takes a code, a message and optional details, not {} argument(s)",
                    args.len()
                ),
            )
            .with_help(
                "write `fail(\"NOT_FOUND\", \"no such order\")` or add a details object as a third argument",
            );
            // A lone message (Python's `raise Error("…")`, JavaScript's `new Error("…")`): a code first.
            if let [message] = &args[..] {
                diagnostic = diagnostic.with_fix(Fix::suggest(
                    "give the failure a code before its message",
                    Span::at(message.span.start),
                    "\"ERROR\", ",
                ));
            }
            self.push(diagnostic);
        }
        Expr { span, kind: ExprKind::Fail(args) }
    }

    /// A name being declared (loop variable, accumulator, caught error). A reserved word is
    /// reported and used as the name.
    fn binding_name(&mut self) -> Ident {
        let token = self.peek();
        match token.kind {
            TokenKind::Ident => {
                self.keep_on_line();
                self.bump();
                Ident { name: self.name(token.span), span: token.span }
            }
            TokenKind::Keyword(keyword) if !matches!(keyword, Keyword::In | Keyword::For) => {
                self.keep_on_line();
                self.report_reserved_binding(keyword);
                self.bump();
                Ident { name: Text::from(keyword.as_str()), span: token.span }
            }
            _ => {
                self.expected("a name");
                Ident { name: Text::default(), span: Span::at(self.prev_end()) }
            }
        }
    }

    /// The `in` of a loop header; JavaScript's `of` gets a machine fix.
    fn expect_in(&mut self) {
        if self.at_keyword(Keyword::In) {
            self.keep_on_line();
            self.bump();
            return;
        }
        let token = self.peek();
        if token.kind == TokenKind::Ident && self.text(token.span) == "of" {
            self.keep_on_line();
            self.bump();
            self.push(
                Diagnostic::error(
                    codes::FOREIGN_LOOP,
                    token.span,
                    "Runlet loops are written `for item in items`",
                )
                .with_fix(Fix::machine("write `in`", token.span, "in")),
            );
            return;
        }
        self.expected("`in`");
    }

    /// `for i, x in enumerate(xs)` and `for k, v in obj` (or `obj.items()`): a loop binds one
    /// item. The fix loops over `xs` dropping an unused index, or over the object's
    /// `{ key, value }` entries with `k` and `v` read as `entry.key` and `entry.value`.
    fn report_pair_loop(&mut self, first: &Ident, second: &Ident, iterable: &Expr, body: Span) {
        let header = Span::new(first.span.start, iterable.span.end);
        let uses = |name: &str| -> Vec<Span> {
            let text = self.text(body);
            crate::syntax::lexer::lex(text)
                .tokens
                .windows(2)
                .filter(|pair| pair[1].kind == TokenKind::Ident && pair[0].kind != TokenKind::Dot)
                .filter(|pair| &text[pair[1].span.range()] == name)
                .map(|pair| Span::new(body.start + pair[1].span.start, body.start + pair[1].span.end))
                .collect()
        };
        let mut edits = Vec::new();
        match &iterable.kind {
            ExprKind::Call { callee, args } if self.text(callee.span) == "enumerate" && args.len() == 1 => {
                if uses(&first.name).is_empty() {
                    let rewritten = format!("{} in {}", second.name, self.text(args[0].span));
                    edits.push(Edit { span: header, replacement: rewritten });
                }
            }
            _ => {
                let object = match &iterable.kind {
                    ExprKind::Call { callee, args }
                        if args.is_empty() && self.text(callee.span).ends_with(".items") =>
                    {
                        let text = self.text(callee.span);
                        &text[..text.len() - ".items".len()]
                    }
                    _ => self.text(iterable.span),
                };
                let entry = if uses("entry").is_empty() { "entry" } else { "entry_" };
                edits.push(Edit { span: header, replacement: format!("{entry} in {object}") });
                for span in uses(&first.name) {
                    edits.push(Edit { span, replacement: format!("{entry}.key") });
                }
                for span in uses(&second.name) {
                    edits.push(Edit { span, replacement: format!("{entry}.value") });
                }
            }
        }
        let mut diagnostic = Diagnostic::error(
            codes::FOREIGN_LOOP,
            first.span.to(second.span),
            "a Runlet loop binds one item; an object's entries are `{ key, value }` records",
        )
        .with_help("write `for entry in obj { … entry.key … entry.value … }`, or `for x in xs` for a list");
        if !edits.is_empty() {
            diagnostic =
                diagnostic.with_fix(Fix::new("loop over one item", Applicability::MachineApplicable, edits));
        }
        self.push(diagnostic);
    }

    /// The digits of a binding `name = 12` on a line of its own before `before`: what a count
    /// written as that name means.
    fn integer_binding(&self, name: &str, before: u32) -> Option<String> {
        self.source[..before as usize].lines().rev().find_map(|line| {
            let (left, right) = line.split_once('=')?;
            let right = right.trim();
            (left.trim() == name && !right.is_empty() && right.bytes().all(|b| b.is_ascii_digit()))
                .then(|| right.to_owned())
        })
    }

    /// `limit N` / `retry N`: an integer literal (`limit` must be at least 1).
    fn integer_clause(&mut self, keyword: Keyword) -> IntegerClause {
        let start = self.bump().span;
        let token = self.peek();
        if token.kind == TokenKind::Integer {
            self.keep_on_line();
            self.bump();
            let digits = Text::from(self.text(token.span));
            if keyword == Keyword::Limit && digits.bytes().all(|b| b == b'0') {
                self.push(
                    Diagnostic::error(codes::INVALID_COUNT, token.span, "`limit` must be at least 1")
                        .with_help("`limit N` bounds how many iterations run at once")
                        .with_fix(Fix::suggest("write `limit 1`", token.span, "1")),
                );
            }
            return IntegerClause { digits, value_span: token.span, span: start.to(token.span) };
        }
        let word = keyword.as_str();
        let mut diagnostic = Diagnostic::error(
            codes::INVALID_COUNT,
            if token.line_break_before { start } else { token.span },
            format!("`{word}` takes an integer literal such as `{word} 4`"),
        );
        // `retry=3`, `retry(3)`: the count in another language's shape.
        let wrapped = match (token.kind, self.nth(1).kind, self.nth(2).kind) {
            (TokenKind::Eq, TokenKind::Integer, _) => Some(2),
            (TokenKind::LParen, TokenKind::Integer, TokenKind::RParen) => Some(3),
            _ => None,
        };
        if let Some(tokens) = wrapped.filter(|_| !token.line_break_before) {
            let digits = self.nth(1).span;
            let mut end = token.span;
            for _ in 0..tokens {
                end = self.bump().span;
            }
            let count = self.text(digits).to_owned();
            self.push(diagnostic.with_fix(Fix::machine(
                format!("write `{word} {count}`"),
                Span::new(start.end, end.end),
                format!(" {count}"),
            )));
            return IntegerClause {
                digits: Text::from(count.as_str()),
                value_span: digits,
                span: start.to(end),
            };
        }
        // `limit -1`: a negative count, read whole so the block after it still parses.
        if token.kind == TokenKind::Minus
            && self.nth(1).kind == TokenKind::Integer
            && !token.line_break_before
        {
            self.bump();
            let count = self.bump().span;
            self.push(diagnostic.with_help(format!("`{word}` counts up from 1: write `{word} 1` or more")));
            return IntegerClause { digits: Text::default(), value_span: count, span: start.to(count) };
        }
        let simple_operand =
            matches!(token.kind, TokenKind::Ident | TokenKind::Number) && !token.line_break_before;
        if simple_operand {
            self.bump();
            diagnostic =
                diagnostic.with_help(format!("the count is fixed in the source; write a number: `{word} 8`"));
            if let Some(value) = self.integer_binding(self.text(token.span), token.span.start) {
                diagnostic =
                    diagnostic.with_fix(Fix::machine(format!("write `{word} {value}`"), token.span, value));
            }
        } else if keyword == Keyword::Retry && token.kind == TokenKind::LBrace {
            diagnostic = diagnostic.with_fix(Fix::suggest("write `retry 1`", Span::at(start.end), " 1"));
        }
        self.push(diagnostic);
        let end = if simple_operand { token.span } else { start };
        IntegerClause { digits: Text::default(), value_span: end, span: start.to(end) }
    }
}
