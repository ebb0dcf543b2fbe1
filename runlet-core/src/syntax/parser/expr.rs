//! Expressions: the postfix conditional, Pratt parsing of the binary operators (with the
//! comparison-chain check), unary and postfix operators, primaries, lists, objects and arguments.

use super::Parser;
use crate::diag::{Applicability, Diagnostic, Edit, Fix, Span, codes};
use crate::syntax::ast::{BinaryOp, Expr, ExprKind, FieldName, Ident, Text, UnaryOp};
use crate::syntax::escape::string_value;
use crate::syntax::foreign_string;
use crate::syntax::token::{ForeignToken, Keyword, TokenKind};

impl Parser<'_> {
    pub(super) fn error_expr(&self, span: Span) -> Expr {
        Expr { kind: ExprKind::Error, span }
    }

    /// `expression = conditional_or ( "if" conditional_or ( "else" expression )? )?`
    pub(super) fn expression(&mut self) -> Expr {
        if !self.enter() {
            return self.error_expr(Span::at(self.prev_end()));
        }
        let mut expr = self.binary(0);
        if self.at_keyword(Keyword::If) && !self.at_line_end() {
            self.bump();
            let condition = self.binary(0);
            let otherwise = (self.at_keyword(Keyword::Else) && !self.at_line_end()).then(|| {
                self.bump();
                Box::new(self.expression())
            });
            let end = otherwise.as_ref().map_or(condition.span, |o| o.span);
            expr = Expr {
                span: expr.span.to(end),
                kind: ExprKind::Conditional {
                    then: Box::new(expr),
                    condition: Box::new(condition),
                    otherwise,
                },
            };
        } else if self.at(TokenKind::Foreign(ForeignToken::Question)) && !self.at_line_end() {
            expr = self.ternary(expr);
        }
        self.leave(1);
        expr
    }

    /// Pratt loop over the binary operators, loosest first; left-associative. Each operator sits
    /// above its operands, so the operators on a path down the tree are counted (`deep`) and
    /// bounded by `max_operator_chain`, whichever side the operands nest on.
    pub(super) fn binary(&mut self, min_precedence: u8) -> Expr {
        // What the expressions parsed before this one reached is kept for the caller; this one's
        // own count starts from its first operand's.
        let before = std::mem::take(&mut self.operators_deep);
        let mut lhs = self.unary();
        let mut deep = self.operators_deep;
        while !self.at_line_end() {
            // A chain of `??` nests as deep as one of `or`, so it counts toward the same limit.
            let coalescing = self.at(TokenKind::Foreign(ForeignToken::QuestionQuestion))
                && min_precedence <= BinaryOp::Or.precedence();
            let op = if coalescing { None } else { self.binary_operator() };
            if !coalescing && op.is_none_or(|op| op.precedence() < min_precedence) {
                break;
            }
            let operator = self.peek().span;
            if !self.within_chain(deep + 1, operator) {
                break;
            }
            self.operators_deep = 0;
            lhs = match op {
                None => self.null_coalescing(lhs),
                Some(op) => match self.foreign_membership(lhs) {
                    Ok(rewritten) => rewritten,
                    Err(lhs) => {
                        self.bump_binary_operator(op);
                        let rhs = self.binary(op.precedence() + 1);
                        Expr {
                            span: lhs.span.to(rhs.span),
                            kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
                        }
                    }
                },
            };
            deep = deep.max(self.operators_deep) + 1;
            if !self.within_chain(deep, operator) {
                break;
            }
        }
        self.operators_deep = before.max(deep);
        if min_precedence <= BinaryOp::Eq.precedence() {
            self.check_comparison_chain(&lhs);
        }
        lhs
    }

    fn binary_operator(&self) -> Option<BinaryOp> {
        Some(match self.kind() {
            TokenKind::Keyword(Keyword::Or) | TokenKind::Foreign(ForeignToken::PipePipe) => BinaryOp::Or,
            TokenKind::Keyword(Keyword::And) | TokenKind::Foreign(ForeignToken::AmpAmp) => BinaryOp::And,
            TokenKind::EqEq | TokenKind::Foreign(ForeignToken::EqEqEq) => BinaryOp::Eq,
            TokenKind::NotEq | TokenKind::Foreign(ForeignToken::NotEqEq) => BinaryOp::NotEq,
            TokenKind::Lt => BinaryOp::Lt,
            TokenKind::LtEq => BinaryOp::LtEq,
            TokenKind::Gt => BinaryOp::Gt,
            TokenKind::GtEq => BinaryOp::GtEq,
            TokenKind::Keyword(Keyword::In) => BinaryOp::In,
            TokenKind::Keyword(Keyword::Not) if self.nth(1).kind == TokenKind::Keyword(Keyword::In) => {
                BinaryOp::In
            }
            TokenKind::Ident if self.text(self.peek().span) == "is" => BinaryOp::Eq,
            TokenKind::Plus => BinaryOp::Add,
            TokenKind::Minus => BinaryOp::Sub,
            TokenKind::Star => BinaryOp::Mul,
            TokenKind::Slash => BinaryOp::Div,
            TokenKind::Percent => BinaryOp::Rem,
            _ => return None,
        })
    }

    /// Consumes the operator; a C-style spelling gets its machine fix.
    fn bump_binary_operator(&mut self, op: BinaryOp) {
        let token = self.bump();
        if let TokenKind::Foreign(foreign) = token.kind {
            // `a&&b` becomes `a and b`: a word operator needs spaces where the symbol had none.
            let word = op.as_str().bytes().all(|b| b.is_ascii_alphabetic());
            let touches = |c: Option<char>| word && c.is_some_and(|c| !c.is_whitespace());
            let before = self.source.get(..token.span.start as usize).and_then(|s| s.chars().next_back());
            let after = self.source.get(token.span.end as usize..).and_then(|s| s.chars().next());
            let replacement = format!(
                "{}{}{}",
                if touches(before) { " " } else { "" },
                op.as_str(),
                if touches(after) { " " } else { "" }
            );
            self.push(
                Diagnostic::error(
                    codes::FOREIGN_OPERATOR,
                    token.span,
                    format!("Runlet spells `{}` as `{}`", foreign.as_str(), op.as_str()),
                )
                .with_fix(Fix::machine(
                    format!("write `{}`", op.as_str()),
                    token.span,
                    replacement,
                )),
            );
        }
    }

    /// Reports a chain of two or more equality/relational/membership operators once, with the
    /// fix that spells out each comparison: `a < b < c` becomes `a < b and b < c`.
    fn check_comparison_chain(&mut self, expr: &Expr) {
        let ExprKind::Binary(op, _, _) = &expr.kind else { return };
        if !op.is_relational() {
            return;
        }
        let mut operands = Vec::new();
        let mut ops = Vec::new();
        flatten_relational(expr, &mut operands, &mut ops);
        // A missing operand is already reported; its chain is not what the author wrote.
        if ops.len() < 2 || operands.iter().any(|o| matches!(o.kind, ExprKind::Error)) {
            return;
        }
        if let Some(diagnostic) = self.compared_with_boolean(expr, &operands, &ops) {
            self.push(diagnostic);
            return;
        }
        let middle = &operands[1..operands.len() - 1];
        let mut edits = Vec::new();
        for operand in middle {
            edits.push(Edit {
                span: Span::at(operand.span.end),
                replacement: format!(" and {}", self.text(operand.span)),
            });
        }
        let has_call = middle.iter().any(|o| self.text(o.span).contains('('));
        let applicability =
            if has_call { Applicability::MaybeIncorrect } else { Applicability::MachineApplicable };
        let rewritten = self.spelled_out(&operands, &ops);
        self.push(
            Diagnostic::error(codes::COMPARISON_CHAIN, expr.span, "comparisons cannot be chained")
                .with_help(format!("write `{rewritten}`"))
                .with_note(
                    "Runlet has no implicit chaining: each comparison is written out and joined with `and`",
                )
                .with_fix(Fix::new(format!("write `{rewritten}`"), applicability, edits)),
        );
    }

    /// A chain whose last comparison is with `true` or `false` (`"a" in tags == true`): what is
    /// meant is the comparison before it, not Python's chain (`"a" in tags and tags == true`,
    /// which compares a list with a Boolean). The fix keeps that comparison (spelled out when it
    /// is a chain itself), negated for `== false` and `!= true`.
    fn compared_with_boolean(&self, expr: &Expr, operands: &[&Expr], ops: &[BinaryOp]) -> Option<Diagnostic> {
        let (Some(&last_op), Some(last)) = (ops.last(), operands.last()) else { return None };
        let ExprKind::Bool(value) = last.kind else { return None };
        let negated = match last_op {
            BinaryOp::Eq => !value,
            BinaryOp::NotEq => value,
            _ => return None,
        };
        let comparison = self.spelled_out(operands, &ops[..ops.len() - 1]);
        let rewritten = if negated { format!("not ({comparison})") } else { comparison };
        Some(
            Diagnostic::error(codes::COMPARISON_CHAIN, expr.span, "comparisons cannot be chained")
                .with_help(format!(
                    "a comparison is already a Boolean: write `{rewritten}` rather than comparing it with `{value}`"
                ))
                .with_fix(Fix::suggest(format!("write `{rewritten}`"), expr.span, rewritten)),
        )
    }

    /// The comparisons `ops` make between neighbouring `operands`, each written out and joined
    /// with `and`: `a < b and b < c`.
    fn spelled_out(&self, operands: &[&Expr], ops: &[BinaryOp]) -> String {
        let pairs: Vec<String> = ops
            .iter()
            .enumerate()
            .map(|(i, op)| {
                format!("{} {} {}", self.text(operands[i].span), op.as_str(), self.text(operands[i + 1].span))
            })
            .collect();
        pairs.join(" and ")
    }

    /// `unary = ( "not" | "-" )* , postfix`, iteratively (each operator counts as one level).
    pub(super) fn unary(&mut self) -> Expr {
        let mut ops = Vec::new();
        loop {
            let token = self.peek();
            let op = match token.kind {
                TokenKind::Keyword(Keyword::Not) if !self.reads_as_reserved_binding(Keyword::Not) => {
                    UnaryOp::Not
                }
                TokenKind::Minus => UnaryOp::Neg,
                TokenKind::Foreign(ForeignToken::Bang) => {
                    let spaced = self.nth(1).span.start > token.span.end;
                    let replacement = if spaced { "not" } else { "not " };
                    self.push(
                        Diagnostic::error(codes::FOREIGN_OPERATOR, token.span, "Runlet spells `!` as `not`")
                            .with_fix(Fix::machine("write `not`", token.span, replacement)),
                    );
                    UnaryOp::Not
                }
                _ => break,
            };
            if !self.enter() {
                break;
            }
            self.bump();
            ops.push((op, token.span));
        }
        let mut operand = self.postfix();
        self.leave(ops.len() as u32);
        for (op, span) in ops.into_iter().rev() {
            operand = Expr { span: span.to(operand.span), kind: ExprKind::Unary(op, Box::new(operand)) };
        }
        operand
    }

    /// `postfix = primary ( member | index | call )*`. A line break before `(` or `[` never
    /// continues an expression; a line break before `.` does only inside brackets.
    pub(super) fn postfix(&mut self) -> Expr {
        let mut expr = self.primary();
        let mut chained = 0;
        loop {
            let token = self.peek();
            let continues = match token.kind {
                TokenKind::Dot | TokenKind::Foreign(ForeignToken::QuestionDot) => true,
                TokenKind::LParen | TokenKind::LBracket => !token.line_break_before,
                _ => false,
            };
            if !continues || !self.enter() {
                break;
            }
            chained += 1;
            expr = match token.kind {
                TokenKind::LParen => self.call(expr),
                TokenKind::LBracket => self.index(expr),
                _ => self.member(expr),
            };
        }
        self.leave(chained);
        expr
    }

    fn member(&mut self, object: Expr) -> Expr {
        let dot = self.peek();
        // Without a receiver (the expression before is already an error) there is no line to join.
        let has_receiver = !matches!(object.kind, ExprKind::Error);
        if dot.line_break_before && self.lines_significant && has_receiver {
            self.report_line_break(dot.span, "a `.` member access must stay on the line of its receiver");
        }
        let optional = dot.kind == TokenKind::Foreign(ForeignToken::QuestionDot);
        let member = self.member_after_dot(object, dot.span);
        if optional {
            let mut diagnostic =
                Diagnostic::error(codes::FOREIGN_OPERATOR, dot.span, "Runlet has no optional chaining `?.`")
                    .with_help("guard the access instead: `x.y if x != null`");
            if let Some(fix) = self.guarded_member(&member) {
                diagnostic = diagnostic.with_fix(fix);
            }
            self.push(diagnostic);
        }
        member
    }

    /// `(x.y if x != null)` for `x?.y` where `x` is a name or path and nothing reads on from
    /// `x.y` (a further `.z` would read it from null).
    fn guarded_member(&self, member: &Expr) -> Option<Fix> {
        let ExprKind::Member { object, name } = &member.kind else { return None };
        let receiver = self.text(object.span);
        let path = !receiver.is_empty() && receiver.split('.').all(crate::syntax::unicode::is_identifier);
        let continues = matches!(
            self.kind(),
            TokenKind::Dot
                | TokenKind::LParen
                | TokenKind::LBracket
                | TokenKind::Foreign(ForeignToken::QuestionDot)
        ) && !self.peek().line_break_before;
        if !path || continues {
            return None;
        }
        let guarded = format!("({receiver}.{} if {receiver} != null)", name.name);
        Some(Fix::machine(format!("write `{guarded}`"), member.span, guarded))
    }

    /// The rest of a member access, at its `.` (or `?.`) at `dot`.
    fn member_after_dot(&mut self, object: Expr, dot: Span) -> Expr {
        self.bump();
        let token = self.peek();
        let on_next_line = token.line_break_before && self.lines_significant;
        if !matches!(token.kind, TokenKind::Ident | TokenKind::Keyword(_)) || on_next_line {
            self.expected("a field name after `.`");
            return self.error_expr(object.span.to(dot));
        }
        self.bump();
        let name = FieldName { name: self.name(token.span), span: token.span };
        if self.at(TokenKind::LParen) && self.collection_method_with_lambda(object.span, &name) {
            return self.error_expr(object.span.to(Span::at(self.prev_end())));
        }
        Expr { span: object.span.to(name.span), kind: ExprKind::Member { object: Box::new(object), name } }
    }

    fn index(&mut self, object: Expr) -> Expr {
        self.bump();
        if self.at(TokenKind::Colon) {
            return self.slice(object, None);
        }
        let index = self.with_lines(false, |p| p.expression());
        if self.at(TokenKind::Colon) {
            return self.slice(object, Some(index));
        }
        let end = self.close(TokenKind::RBracket, "`]`");
        Expr {
            span: object.span.to(Span::at(end)),
            kind: ExprKind::Index { object: Box::new(object), index: Box::new(index) },
        }
    }

    fn call(&mut self, callee: Expr) -> Expr {
        let open = self.bump().span;
        let (args, end) = self.call_arguments(open);
        Expr { span: callee.span.to(Span::at(end)), kind: ExprKind::Call { callee: Box::new(callee), args } }
    }

    /// Consumes the closing delimiter and returns its end offset; reports it missing otherwise.
    pub(super) fn close(&mut self, kind: TokenKind, name: &str) -> u32 {
        if let Some(token) = self.eat(kind) {
            return token.span.end;
        }
        self.expected(name);
        self.prev_end()
    }

    fn primary(&mut self) -> Expr {
        let token = self.peek();
        let span = token.span;
        let literal = |kind| Expr { kind, span };
        match token.kind {
            TokenKind::Keyword(keyword)
                if self.reads_as_reserved_binding(keyword)
                    && self.use_of_reserved_binding(keyword, false) =>
            {
                self.bump();
                literal(ExprKind::Ident(Ident { name: Text::from(keyword.as_str()), span }))
            }
            TokenKind::Keyword(Keyword::Null) => {
                self.bump();
                literal(ExprKind::Null)
            }
            TokenKind::Keyword(Keyword::True) => {
                self.bump();
                literal(ExprKind::Bool(true))
            }
            TokenKind::Keyword(Keyword::False) => {
                self.bump();
                literal(ExprKind::Bool(false))
            }
            TokenKind::Integer => {
                self.bump();
                literal(ExprKind::Integer(Text::from(self.text(span))))
            }
            TokenKind::Number => {
                self.bump();
                literal(ExprKind::Number(Text::from(self.text(span))))
            }
            TokenKind::String => {
                self.bump();
                literal(ExprKind::String(string_value(self.text(span))))
            }
            TokenKind::Foreign(foreign) if foreign.is_string() => {
                self.bump();
                literal(ExprKind::String(foreign_string::value(foreign, self.text(span)).into()))
            }
            TokenKind::Ident => self.identifier_primary(),
            TokenKind::LParen => self.parenthesized(),
            TokenKind::LBracket => self.list(),
            TokenKind::LBrace => self.object(),
            TokenKind::Keyword(Keyword::If) => self.if_expr(),
            TokenKind::Keyword(Keyword::For) => self.for_expr(),
            TokenKind::Keyword(Keyword::Fold) => self.fold_expr(),
            TokenKind::Keyword(Keyword::Boundary) => self.boundary_expr(),
            TokenKind::Keyword(Keyword::Fail) => self.fail_expr(),
            TokenKind::Keyword(keyword) if !(token.line_break_before && self.pos > self.statement_start) => {
                let message =
                    format!("expected an expression, found the reserved word `{}`", keyword.as_str());
                self.report_unexpected(Diagnostic::error(codes::UNEXPECTED_TOKEN, span, message));
                self.error_expr(span)
            }
            TokenKind::Unknown => {
                // Already reported by the lexer.
                self.bump();
                self.recovering = true;
                self.error_expr(span)
            }
            _ => {
                self.expected("an expression");
                self.error_expr(Span::at(span.start))
            }
        }
    }

    fn identifier_primary(&mut self) -> Expr {
        let token = self.peek();
        if let Some(expr) = self.raise().or_else(|| self.foreign_primary()) {
            return expr;
        }
        self.bump();
        let ident = Ident { name: self.name(token.span), span: token.span };
        Expr { span: token.span, kind: ExprKind::Ident(ident) }
    }

    fn parenthesized(&mut self) -> Expr {
        if let Some(lambda) = self.parenthesized_lambda() {
            return lambda;
        }
        let open = self.bump().span;
        let inner = self.with_lines(false, |p| p.expression());
        let end = self.close(TokenKind::RParen, "`)`");
        Expr { span: open.to(Span::at(end)), kind: ExprKind::Paren(Box::new(inner)) }
    }

    /// True when `keyword` at the cursor was declared as a name (already reported) and what
    /// follows cannot continue the construct or literal the keyword would start, so that it is a
    /// use of the name: `for = 1` then `return for + 1` reads the second `for` as the name.
    fn reads_as_reserved_binding(&self, keyword: Keyword) -> bool {
        if !self.reserved_bindings.iter().any(|(declared, _)| *declared == keyword) {
            return false;
        }
        let next = self.nth(1);
        let line_ends = next.line_break_before && self.lines_significant;
        let ends_operand = line_ends
            || next.kind.punctuation().is_some_and(|p| p != "(" && p != "[" && p != "{" && p != "-")
            || matches!(
                next.kind,
                TokenKind::Eof | TokenKind::Keyword(Keyword::And | Keyword::Or | Keyword::In | Keyword::Else)
            );
        match keyword {
            Keyword::For | Keyword::Fold => {
                line_ends || !matches!(next.kind, TokenKind::Ident | TokenKind::LParen)
            }
            Keyword::Boundary => {
                line_ends || !matches!(next.kind, TokenKind::LBrace | TokenKind::Keyword(Keyword::Retry))
            }
            Keyword::Fail => line_ends || next.kind != TokenKind::LParen,
            Keyword::If | Keyword::Not => ends_operand,
            _ => true,
        }
    }

    /// True when `keyword` was declared as a name (already reported): the use at the cursor is
    /// read as that name and added to the diagnostic's rename fix.
    pub(super) fn use_of_reserved_binding(&mut self, keyword: Keyword, shorthand: bool) -> bool {
        let Some(&(_, index)) = self.reserved_bindings.iter().find(|(k, _)| *k == keyword) else {
            return false;
        };
        let span = self.peek().span;
        if let Some(fix) = self.sink.get_mut(index).and_then(|d| d.fixes.first_mut()) {
            let word = keyword.as_str();
            let renamed = if shorthand { format!("{word}: {word}_value") } else { format!("{word}_value") };
            fix.edits.push(Edit { span, replacement: renamed });
        }
        true
    }
}

/// Collects the operands and operators of an unparenthesized chain of relational operators.
fn flatten_relational<'e>(expr: &'e Expr, operands: &mut Vec<&'e Expr>, ops: &mut Vec<BinaryOp>) {
    match &expr.kind {
        ExprKind::Binary(op, lhs, rhs) if op.is_relational() => {
            flatten_relational(lhs, operands, ops);
            ops.push(*op);
            flatten_relational(rhs, operands, ops);
        }
        _ => operands.push(expr),
    }
}
