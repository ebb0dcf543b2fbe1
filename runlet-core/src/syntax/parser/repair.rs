//! Block rules (one final `return`: missing, early, duplicate) and expression statements. Missing
//! returns are reported by the enclosing statement, so a statement-form construct gets one fix.

use std::collections::{BTreeMap, BTreeSet};

use super::Parser;
use super::stmt::BlockKind;
use crate::diag::{Applicability, Code, Diagnostic, Edit, Fix, Span, codes};
use crate::syntax::ast::{Block, ElseBranch, Expr, ExprKind, Stmt};
use crate::syntax::token::Keyword;

/// A block (or the program) that has no `return`, with the insertion edits that would add one.
#[derive(Debug)]
pub(crate) struct MissingReturn {
    pub code: Code,
    /// "a `for` expression body", "the program", …
    pub owner: &'static str,
    /// The block's last statement, or the block itself when it is empty.
    pub span: Span,
    /// The construct keyword that owns the block.
    pub header: Option<Span>,
    /// Insertion edits adding the `return` (empty when no repair is evident).
    pub edits: Vec<Edit>,
    pub applicability: Applicability,
    pub help: Option<String>,
    /// What the fix says it does.
    pub fix_message: &'static str,
}

impl MissingReturn {
    pub fn into_diagnostic(self) -> Diagnostic {
        let mut diagnostic =
            Diagnostic::error(self.code, self.span, format!("{} must return a value", self.owner));
        if let Some(header) = self.header {
            let starts =
                if self.code == codes::FOR_BODY_MISSING_RETURN { "loop starts here" } else { "starts here" };
            diagnostic = diagnostic.with_label(header, starts);
        }
        if let Some(help) = self.help {
            diagnostic = diagnostic.with_help(help);
        }
        if !self.edits.is_empty() {
            diagnostic = diagnostic.with_fix(Fix::new(self.fix_message, self.applicability, self.edits));
        }
        diagnostic
    }
}

/// The shape of an expression used as a statement, which decides the name and wording of its fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Construct {
    /// A call, possibly under a postfix conditional.
    Call,
    /// A block `if`, `for`, `fold` or `boundary`.
    Control(&'static str),
    Other,
}

impl Construct {
    pub fn of(expr: &Expr) -> Construct {
        match &expr.kind {
            ExprKind::Call { .. } => Construct::Call,
            ExprKind::Conditional { then, .. } if matches!(then.kind, ExprKind::Call { .. }) => {
                Construct::Call
            }
            ExprKind::If(_) => Construct::Control("if"),
            ExprKind::For(_) => Construct::Control("for"),
            ExprKind::Fold(_) => Construct::Control("fold"),
            ExprKind::Boundary(_) => Construct::Control("boundary"),
            _ => Construct::Other,
        }
    }

    /// A readable name for the value: `update_result` for `crm.update(…)`, `order_results` for
    /// `for order in …`, the accumulator's name for a `fold`.
    pub fn binding_base(self, expr: &Expr) -> String {
        let callee_name = |callee: &Expr| match &callee.kind {
            ExprKind::Member { name, .. } => Some(name.name.clone()),
            ExprKind::Ident(ident) => Some(ident.name.clone()),
            _ => None,
        };
        let base = match &expr.kind {
            ExprKind::Call { callee, .. } => callee_name(callee).map(|n| format!("{n}_result")),
            ExprKind::Conditional { then, .. } => match &then.kind {
                ExprKind::Call { callee, .. } => callee_name(callee).map(|n| format!("{n}_result")),
                _ => None,
            },
            ExprKind::For(f) => Some(format!("{}_results", f.item.name)),
            ExprKind::Fold(f) => Some(f.acc.name.to_string()),
            ExprKind::If(_) => Some("branch_result".to_owned()),
            ExprKind::Boundary(_) => Some("boundary_result".to_owned()),
            _ => None,
        };
        base.filter(|b| b.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or_else(|| "value".to_owned())
    }
}

/// An expression statement waiting for its diagnostic, with the missing returns of its blocks.
#[derive(Debug)]
pub(crate) struct Unbound {
    pub construct: Construct,
    pub inner: Vec<MissingReturn>,
}

impl Parser<'_> {
    /// Reports the blocks of one statement that lack `return`. The branches of one `if … else`
    /// that all lack it are one mistake: one diagnostic whose fix adds every `return`.
    pub(super) fn report_missing_returns(&mut self, missing: Vec<MissingReturn>) {
        let branches = missing.len() > 1
            && missing.iter().all(|m| {
                m.code == codes::MISSING_RETURN && m.owner == missing[0].owner && !m.edits.is_empty()
            });
        if !branches {
            for m in missing {
                self.push(m.into_diagnostic());
            }
            return;
        }
        let mut missing = missing.into_iter();
        let Some(mut first) = missing.next() else { return };
        let mut others = Vec::new();
        for m in missing {
            if m.applicability != Applicability::MachineApplicable {
                first.applicability = m.applicability;
            }
            first.edits.extend(m.edits);
            others.push(m.span);
        }
        let diagnostic =
            others.into_iter().fold(first.into_diagnostic(), |d, span| d.with_label(span, "and here"));
        self.push(diagnostic);
    }

    /// Reports every expression statement of a block except a final one in a block without
    /// `return` (the missing-return repair covers that one).
    pub(super) fn report_unbound(
        &mut self,
        kind: BlockKind,
        stmts: &[Stmt],
        mut unbound: Vec<Option<Unbound>>,
    ) {
        let has_return = stmts.iter().any(|s| matches!(s, Stmt::Return(_)));
        // The names a binding fix must avoid; collected only when some statement needs one.
        let mut taken: Option<FreshNames> = None;
        let last = stmts.len().saturating_sub(1);
        let final_unbound = if has_return { None } else { unbound.last_mut().and_then(Option::take) };
        // The names bound before the statement at hand, kept as the loop goes.
        let mut bound_before: BTreeSet<&str> = BTreeSet::new();
        for (index, (stmt, needs_binding)) in stmts.iter().zip(unbound).enumerate() {
            if let Stmt::Let(binding) = stmt {
                bound_before.insert(binding.name.name.as_str());
            }
            let (Stmt::Expr(expr_stmt), Some(needs_binding)) = (stmt, needs_binding) else { continue };
            if self.folded_loops.contains(&expr_stmt.expr.span.start) {
                continue;
            }
            let rewritten = match kind.is_loop_body() {
                true => self.loop_exit_as_skip(kind, &expr_stmt.expr),
                false => self.guard_as_conditional(stmts, index),
            };
            let rewritten = self
                .accumulated_loop(&expr_stmt.expr)
                .or(rewritten)
                .or_else(|| self.print_statement(expr_stmt));
            if let Some(diagnostic) = rewritten {
                self.push(diagnostic);
                continue;
            }
            let followed_by_more = index < last;
            let taken = taken.get_or_insert_with(|| {
                FreshNames::avoiding(stmts.iter().filter_map(|s| match s {
                    Stmt::Let(l) => Some(l.name.name.to_string()),
                    _ => None,
                }))
            });
            let updated = updated_outer_name(&expr_stmt.expr, &bound_before);
            let diagnostic = needs_binding.into_diagnostic(&expr_stmt.expr, taken, followed_by_more, updated);
            self.push(diagnostic);
        }
        self.pending_final_unbound = final_unbound;
    }

    /// The return rules of one block: exactly one `return`, and it comes last.
    pub(super) fn finish_block(&mut self, kind: BlockKind, block: &Block, header: Option<Span>) {
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
                let Some(missing) = MissingReturn::new(kind, block, header, final_unbound, self) else {
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
                let guard = self.guard_as_skip(kind, header, &block.stmts[*first]);
                let first = block.stmts[*first].span();
                let second = block.stmts[*second].span();
                let diagnostic = Diagnostic::error(
                    codes::DUPLICATE_RETURN,
                    second,
                    format!("{} already returned", kind.describe()),
                )
                .with_label(first, "the block returns here");
                let diagnostic = match guard {
                    Some(fix) => diagnostic
                        .with_help("a loop body has one `return`, at its end; leave an element out with `skip if`")
                        .with_fix(fix),
                    None => diagnostic
                        .with_help("a block has exactly one `return`, at its end; choose between values with `if … else`")
                        .with_fix(Fix::suggest("remove the second `return`", second, "")),
                };
                self.push(diagnostic);
            }
        }
    }

    /// An unbound `for` whose body ends rebinding an accumulator bound before it (`total =
    /// total + x`): one diagnostic whose fix is the `fold` the accumulator means.
    fn accumulated_loop(&mut self, expr: &Expr) -> Option<Diagnostic> {
        let index = self.accumulated_loops.iter().position(|(_, start)| *start == expr.span.start)?;
        let (fix, _) = self.accumulated_loops.swap_remove(index);
        Some(
            Diagnostic::error(
                codes::STATEMENT_FORM_CONTROL,
                expr.span,
                "`for` is an expression: bind or return its value",
            )
            .with_help(
                "a name bound in a loop's body is a new name of that body, and the one bound before \
                 the loop keeps its value: accumulate with `fold`",
            )
            .with_fix(fix),
        )
    }

    /// `continue`, `break`, `continue if c` or `if c { continue }` (or `{ return null }`) in a
    /// loop body: one diagnostic whose fix is the `skip` Runlet writes. `continue` is exactly a
    /// skip; a `break` or a guard returning a value needs review.
    fn loop_exit_as_skip(&self, kind: BlockKind, expr: &Expr) -> Option<Diagnostic> {
        let exit = |e: &Expr| match &e.kind {
            ExprKind::Ident(ident) if ident.name == "continue" => Some(true),
            ExprKind::Ident(ident) if ident.name == "break" => Some(false),
            _ => None,
        };
        let (condition, exact) = match &expr.kind {
            ExprKind::Conditional { then, condition, otherwise: None } => {
                (Some(condition.as_ref()), exit(then)?)
            }
            ExprKind::If(if_expr) if if_expr.else_branch.is_none() => {
                let exact = match if_expr.then_block.stmts.as_slice() {
                    [Stmt::Expr(inner)] => exit(&inner.expr)?,
                    [Stmt::Return(ret)] => match (&ret.value.kind, kind) {
                        (ExprKind::Null, BlockKind::ForBody) | (ExprKind::Ident(_), BlockKind::FoldBody) => {
                            false
                        }
                        _ => return None,
                    },
                    _ => return None,
                };
                (Some(if_expr.condition.as_ref()), exact)
            }
            _ => (None, exit(expr)?),
        };
        let skip = match condition {
            Some(condition) => format!("skip if {}", self.text(condition.span)),
            None => "skip".to_owned(),
        };
        let applicability =
            if exact { Applicability::MachineApplicable } else { Applicability::MaybeIncorrect };
        Some(
            Diagnostic::error(
                codes::EXPRESSION_STATEMENT,
                expr.span,
                "Runlet loops leave an element out with `skip`, not an early exit",
            )
            .with_help(format!("write `{skip}`; a loop always visits every element"))
            .with_fix(Fix::new(
                format!("write `{skip}`"),
                applicability,
                vec![Edit { span: expr.span, replacement: skip }],
            )),
        )
    }

    /// `if c { return v }` followed at once by its block's final `return w`: an early-return
    /// guard. One diagnostic whose fix is the conditional value Runlet writes, `return v if c
    /// else w`, which keeps the meaning: nothing between the guard and the final `return` is
    /// left to run or not.
    fn guard_as_conditional(&self, stmts: &[Stmt], index: usize) -> Option<Diagnostic> {
        let Stmt::Expr(guard) = &stmts[index] else { return None };
        let ExprKind::If(if_expr) = &guard.expr.kind else { return None };
        let [Stmt::Return(early)] = if_expr.then_block.stmts.as_slice() else { return None };
        let (None, [Stmt::Return(last)]) = (&if_expr.else_branch, &stmts[index + 1..]) else { return None };
        // A `return` before the guard is reported (and repaired) as an early return of its own.
        if stmts[..index].iter().any(|stmt| matches!(stmt, Stmt::Return(_))) {
            return None;
        }
        // The operands of a conditional bind tighter than it, but for another conditional.
        let operand = |e: &Expr| match e.kind {
            ExprKind::Conditional { .. } => format!("({})", self.text(e.span)),
            _ => self.text(e.span).to_owned(),
        };
        let rewritten = format!(
            "return {} if {} else {}",
            operand(&early.value),
            operand(&if_expr.condition),
            operand(&last.value)
        );
        // The rewrite keeps the three expressions' text only: comments around them would go.
        let replaced = guard.span.to(last.span);
        let comments = |span: Span| {
            let text = self.text(span);
            text.matches('#').count() + text.matches("//").count() + text.matches("/*").count()
        };
        let kept = comments(early.value.span) + comments(if_expr.condition.span) + comments(last.value.span);
        let applicability = match comments(replaced) > kept {
            true => Applicability::MaybeIncorrect,
            false => Applicability::MachineApplicable,
        };
        Some(
            Diagnostic::error(codes::EARLY_RETURN, early.span, "Runlet has no early return")
                .with_label(last.span, "the block returns here")
                .with_help(format!("choose the value with a conditional: `{rewritten}`"))
                .with_fix(Fix::new(
                    "return a conditional value",
                    applicability,
                    vec![Edit { span: replaced, replacement: rewritten }],
                )),
        )
    }

    /// A printing statement (`print(x)`, `console.log(x)`): Runlet has no output but the returned
    /// value, so the fix removes the line.
    fn print_statement(&self, stmt: &crate::syntax::ast::ExprStmt) -> Option<Diagnostic> {
        let ExprKind::Call { callee, .. } = &stmt.expr.kind else { return None };
        let name = self.text(callee.span);
        if !matches!(
            name,
            "print" | "println" | "puts" | "console.log" | "console.error" | "console.info" | "echo"
        ) {
            return None;
        }
        let line_start = self.source[..stmt.span.start as usize].rfind('\n').map_or(0, |i| i + 1) as u32;
        let before = &self.source[line_start as usize..stmt.span.start as usize];
        let after = &self.source[stmt.span.end as usize..];
        let line_end = after.find('\n').map_or(self.source.len(), |i| stmt.span.end as usize + i + 1) as u32;
        let alone =
            before.trim().is_empty() && after[..(line_end - stmt.span.end) as usize].trim().is_empty();
        let removal = if alone { Span::new(line_start, line_end) } else { stmt.span };
        Some(
            Diagnostic::error(
                codes::EXPRESSION_STATEMENT,
                stmt.span,
                format!("Runlet has no `{name}`: nothing is printed"),
            )
            .with_help("return the value, or pass it to a tool")
            .with_fix(Fix::machine(format!("remove the `{name}` call"), removal, "")),
        )
    }

    /// An early-return guard in a loop body (`return null if c`, `return acc if c` in a fold) as
    /// the `skip if c` it means. In a `fold` the accumulator passes through either way; in a `for`
    /// a skip drops the element where the guard returned null, so that fix needs review.
    fn guard_as_skip(&self, kind: BlockKind, header: Option<Span>, stmt: &Stmt) -> Option<Fix> {
        let Stmt::Return(ret) = stmt else { return None };
        let ExprKind::Conditional { then, condition, otherwise: None } = &ret.value.kind else { return None };
        // The accumulator is the name after `fold`.
        let accumulator = header.and_then(|h| {
            let rest = self.source.get(h.end as usize..)?.trim_start();
            rest.split(|c: char| !(c.is_alphanumeric() || c == '_')).next()
        });
        let passes_through = match (kind, &then.kind) {
            (BlockKind::ForBody, ExprKind::Null) => false,
            (BlockKind::FoldBody, ExprKind::Ident(ident)) => Some(ident.name.as_str()) == accumulator,
            _ => return None,
        };
        let skip = format!("skip if {}", self.text(condition.span));
        let applicability =
            if passes_through { Applicability::MachineApplicable } else { Applicability::MaybeIncorrect };
        Some(Fix::new(
            format!("write `{skip}`"),
            applicability,
            vec![Edit { span: ret.span, replacement: skip }],
        ))
    }

    /// `if c { return v }` (no `else`) ending a `for` body: the filter it likely means, `skip if
    /// not (c)` then `return v`, with its help. Returning the `if` would make `null` the value of
    /// every element that fails `c`.
    fn filter_guard(&self, kind: BlockKind, stmt: &crate::syntax::ast::ExprStmt) -> Option<(Edit, String)> {
        let ExprKind::If(if_expr) = &stmt.expr.kind else { return None };
        let (BlockKind::ForBody, None, [Stmt::Return(kept)]) =
            (kind, &if_expr.else_branch, if_expr.then_block.stmts.as_slice())
        else {
            return None;
        };
        let condition = self.text(if_expr.condition.span);
        let kept = self.text(kept.value.span);
        let before = &self.source[..stmt.span.start as usize];
        let indent = &before[before.rfind('\n').map_or(0, |i| i + 1)..];
        let replacement = match indent.trim().is_empty() {
            true => format!("skip if not ({condition})\n{indent}return {kept}"),
            false => format!("skip if not ({condition}); return {kept}"),
        };
        let help = format!(
            "keep only the elements for which `{condition}` holds: `skip if not ({condition})`, then `return`"
        );
        Some((Edit { span: stmt.span, replacement }, help))
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
        let gap = self.text(Span::new(ret.end, next.start));
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
}

/// The names binding fixes may still use in one block.
#[derive(Debug)]
struct FreshNames {
    taken: BTreeSet<String>,
    /// For each base, the suffix to try next: every earlier one is taken, so a block of many
    /// unbound statements costs linear time, not quadratic.
    next_suffix: BTreeMap<String, u32>,
}

impl FreshNames {
    fn avoiding(declared: impl IntoIterator<Item = String>) -> Self {
        FreshNames { taken: declared.into_iter().collect(), next_suffix: BTreeMap::new() }
    }

    /// A name nobody declared yet in the block: `base`, `base_2`, `base_3`, …
    fn fresh(&mut self, base: &str) -> String {
        let mut n = self.next_suffix.get(base).copied().unwrap_or(1);
        loop {
            let name = if n == 1 { base.to_owned() } else { format!("{base}_{n}") };
            n += 1;
            if !self.taken.contains(&name) && Keyword::from_word(&name).is_none() {
                self.next_suffix.insert(base.to_owned(), n);
                self.taken.insert(name.clone());
                return name;
            }
        }
    }
}

impl MissingReturn {
    fn new(
        kind: BlockKind,
        block: &Block,
        header: Option<Span>,
        final_unbound: Option<Unbound>,
        parser: &Parser<'_>,
    ) -> Option<Self> {
        let last = block.stmts.last();
        let target = last.map_or(block.span, Stmt::span);
        let mut missing = MissingReturn {
            code: kind.missing_return_code(),
            owner: kind.describe(),
            span: target,
            header,
            edits: Vec::new(),
            applicability: Applicability::MachineApplicable,
            help: None,
            fix_message: "add `return`",
        };
        match (last, final_unbound) {
            (Some(Stmt::Expr(stmt)), Some(_)) if let Some((edit, help)) = parser.filter_guard(kind, stmt) => {
                missing.edits.push(edit);
                missing.help = Some(help);
                missing.fix_message = "keep the elements that pass: `skip if not`, then `return`";
                // Meant as a filter, or as an early exit finding the first that passes: review.
                missing.applicability = Applicability::MaybeIncorrect;
            }
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
                let line_end = parser.line_end(binding.span.end);
                let same_line = line_end >= block.span.end;
                let (at, replacement) = if same_line {
                    (binding.span.end, format!("; return {}", binding.name.name))
                } else {
                    let indent = " ".repeat(parser.indent_of(binding.span.start));
                    // After a comment ending the binding's line, so that the comment stays on it.
                    let rest = parser.text(Span::new(binding.span.end, line_end));
                    let commented = rest.trim_start_matches([' ', '\t', ';']).starts_with(['#', '/']);
                    let at =
                        if commented { line_end - rest.ends_with('\r') as u32 } else { binding.span.end };
                    (at, format!("\n{indent}return {}", binding.name.name))
                };
                missing.edits.push(Edit { span: Span::at(at), replacement });
                missing.help = Some(format!("write `return {}` at the end", binding.name.name));
            }
            // A program with no statements at all: `return null` is the one program it can be.
            (None, _) if kind == BlockKind::Program => {
                let source = parser.source;
                let replacement = if source.is_empty() || source.ends_with('\n') {
                    "return null\n"
                } else {
                    "\nreturn null"
                };
                missing.edits.push(Edit { span: Span::at(block.span.end), replacement: replacement.into() });
                missing.applicability = Applicability::MaybeIncorrect;
                missing.help =
                    Some("a program returns a value; return `null` when there is nothing to return".into());
            }
            _ => {
                missing.help =
                    Some("end the block with `return value` (`return null` when there is no value)".into());
            }
        }
        Some(missing)
    }
}

/// A name of `outer` that a block of the construct `expr` binds again or calls a method of
/// (`total = …`, `ids.append(…)`): an update the author meant to reach past the construct, which
/// binding the construct's value does not make.
fn updated_outer_name(expr: &Expr, outer: &BTreeSet<&str>) -> Option<String> {
    let blocks: Vec<&Block> = match &expr.kind {
        ExprKind::If(if_expr) => {
            let mut blocks = vec![&if_expr.then_block];
            let mut branch = if_expr.else_branch.as_deref();
            while let Some(else_branch) = branch {
                match else_branch {
                    ElseBranch::Block(block) => {
                        blocks.push(block);
                        branch = None;
                    }
                    ElseBranch::If { if_expr, .. } => {
                        blocks.push(&if_expr.then_block);
                        branch = if_expr.else_branch.as_deref();
                    }
                }
            }
            blocks
        }
        ExprKind::For(for_expr) => vec![&for_expr.body],
        ExprKind::Fold(fold) => vec![&fold.body],
        ExprKind::Boundary(boundary) => vec![&boundary.body, &boundary.catch.body],
        _ => return None,
    };
    blocks.into_iter().flat_map(|block| &block.stmts).find_map(|stmt| match stmt {
        Stmt::Let(binding) if outer.contains(binding.name.name.as_str()) => {
            Some(binding.name.name.to_string())
        }
        Stmt::Expr(statement) => match &statement.expr.kind {
            ExprKind::Call { callee, .. } => match &callee.kind {
                ExprKind::Member { object, .. } => match &object.kind {
                    ExprKind::Ident(ident) if outer.contains(ident.name.as_str()) => {
                        Some(ident.name.to_string())
                    }
                    _ => None,
                },
                _ => None,
            },
            _ => updated_outer_name(&statement.expr, outer),
        },
        _ => None,
    })
}

/// Used by `report_unbound`: the binding fix for an expression statement.
impl Unbound {
    /// `updated` is a name bound before the statement that it binds again or updates inside:
    /// binding the statement's value does not carry that update out, so the fix needs review.
    fn into_diagnostic(
        self,
        expr: &Expr,
        taken: &mut FreshNames,
        followed_by_more: bool,
        updated: Option<String>,
    ) -> Diagnostic {
        let name = taken.fresh(&self.construct.binding_base(expr));
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
        if !inner_returns || looks_like_early_exit || updated.is_some() {
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
        if let (Some(name), Construct::Control(keyword)) = (updated, self.construct) {
            diagnostic = diagnostic.with_note(format!(
                "names and values are never updated: what the `{keyword}` does to `{name}` stays inside \
                 it, and the `{name}` bound before keeps its value; bind the value the `{keyword}` \
                 returns to the name read after it (over a list, accumulate with `fold`)"
            ));
        }
        diagnostic
    }
}
