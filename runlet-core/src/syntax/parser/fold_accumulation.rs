//! An accumulator updated in a loop (`total = 0`, then `total += x` or `total = total + x`
//! ending the body of a `for` statement): the loop rewritten as `total = fold acc = 0 for … {
//! return acc + x }`. Rebinding `total` in the loop's body would bind a new name there and
//! leave the outer `total` as it was.

use super::Parser;
use crate::diag::{Applicability, Edit, Fix, Span};
use crate::syntax::ast::{BinaryOp, Expr, ExprKind};
use crate::syntax::token::{Keyword, TokenKind};

impl Parser<'_> {
    /// Keeps the fold for `name = name op operand` (the binding whose name is token `at`, its
    /// value just parsed) when it ends the body of an unbound `for` after `name = initial`: that
    /// loop's unbound-statement diagnostic offers it.
    pub(super) fn note_accumulation(&mut self, at: usize, value: &Expr) {
        let ExprKind::Binary(op, left, right) = &value.kind else { return };
        let operator = match op {
            BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem => op.as_str(),
            _ => return,
        };
        let name = self.text(self.tokens[at].span);
        let reads_itself = self.tokens.get(at + 1).is_some_and(|t| t.kind == TokenKind::Eq)
            && self.tokens.get(at + 2).is_some_and(|t| t.span == left.span)
            && matches!(&left.kind, ExprKind::Ident(ident) if ident.name == name);
        if !reads_itself {
            return;
        }
        let operand = match right.kind {
            ExprKind::Binary(..) | ExprKind::Conditional { .. } => format!("({})", self.text(right.span)),
            _ => self.text(right.span).to_owned(),
        };
        if let Some(folded) = self.fold_accumulation(at, at + 4, operator, &operand) {
            self.accumulated_loops.push(folded);
        }
    }

    /// The fold for the update of an accumulator whose name is token `at` and whose value was
    /// just parsed (`operand`, from token `operand_from` on, combined with `operator`), with the
    /// offset of the `for` it replaces; `None` unless it is the last statement of an unbound
    /// `for` after `name = initial`.
    pub(super) fn fold_accumulation(
        &self,
        at: usize,
        operand_from: usize,
        operator: &str,
        operand: &str,
    ) -> Option<(Fix, u32)> {
        let name = self.text(self.tokens[at].span);
        if !self.at(TokenKind::RBrace) {
            return None;
        }
        let open = self.enclosing_open(at)?;
        let keyword = (0..open)
            .rev()
            .take_while(|&k| k + 1 == open || !self.tokens[k + 1].line_break_before)
            .find(|&k| self.tokens[k].kind == TokenKind::Keyword(Keyword::For))?;
        let starts_line = keyword == 0 || self.tokens[keyword].line_break_before;
        // A read of the name (not a property spelled like it, after `.`).
        let reads = |i: usize| {
            self.text(self.tokens[i].span) == name && (i == 0 || self.tokens[i - 1].kind != TokenKind::Dot)
        };
        let spelled = |from: usize, to: usize| (from..to).any(reads);
        if !starts_line || spelled(keyword, at) || spelled(operand_from, self.pos) {
            return None;
        }
        let init = self.initial_binding(keyword, name)?;
        let init_end = self.line_end(self.tokens[init].span.start);
        let mut between = (init + 1..keyword).filter(|&i| self.tokens[i].span.start > init_end);
        if between.any(reads) {
            return None;
        }
        let initial = self.text(Span::new(self.tokens[init + 2].span.start, init_end)).trim();
        let acc = if self.tokens.iter().all(|t| self.text(t.span) != "acc") {
            "acc".to_owned()
        } else {
            crate::syntax::rename::fresh_name(self.source, self.tokens, "acc")
        };
        let for_start = self.tokens[keyword].span.start;
        let edits = vec![
            Edit {
                span: self.line_removal(Span::new(self.tokens[init].span.start, init_end)),
                replacement: String::new(),
            },
            Edit { span: Span::at(for_start), replacement: format!("{name} = fold {acc} = {initial} ") },
            Edit {
                span: Span::new(self.tokens[at].span.start, self.prev_end()),
                replacement: format!("return {acc} {operator} {operand}"),
            },
        ];
        let fix =
            Fix::new(format!("accumulate `{name}` with a `fold`"), Applicability::MachineApplicable, edits);
        Some((fix, for_start))
    }

    /// The unmatched `{` before token `at`.
    fn enclosing_open(&self, at: usize) -> Option<usize> {
        let mut depth = 0usize;
        for i in (0..at).rev() {
            match self.tokens[i].kind {
                TokenKind::RBrace => depth += 1,
                TokenKind::LBrace if depth == 0 => return Some(i),
                TokenKind::LBrace => depth -= 1,
                _ => {}
            }
        }
        None
    }

    /// The token of `name` in a one-line `name = initial` before token `before`, in its block.
    fn initial_binding(&self, before: usize, name: &str) -> Option<usize> {
        let mut depth = 0usize;
        for i in (0..before).rev() {
            match self.tokens[i].kind {
                TokenKind::RBrace | TokenKind::RParen | TokenKind::RBracket => depth += 1,
                TokenKind::LBrace if depth == 0 => return None,
                TokenKind::LBrace | TokenKind::LParen | TokenKind::LBracket => {
                    depth = depth.checked_sub(1)?
                }
                _ => {}
            }
            let token = self.tokens[i];
            let binds = depth == 0
                && token.kind == TokenKind::Ident
                && (i == 0 || token.line_break_before)
                && self.tokens[i + 1].kind == TokenKind::Eq
                && self.text(token.span) == name;
            if binds {
                return (self.tokens[i + 2].span.start < self.line_end(token.span.start)).then_some(i);
            }
        }
        None
    }
}
