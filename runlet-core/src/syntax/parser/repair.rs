//! The repairs that span statements: a block without `return` and an expression used as a
//! statement. Both are collected first and reported once the enclosing statement is known, so that
//! a statement-form construct gets one diagnostic whose fix also repairs its inner blocks.

use crate::diag::{Applicability, Code, Diagnostic, Edit, Fix, Span};
use crate::syntax::ast::{Expr, ExprKind};

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
}

impl MissingReturn {
    pub fn into_diagnostic(self) -> Diagnostic {
        let mut diagnostic =
            Diagnostic::error(self.code, self.span, format!("{} must return a value", self.owner));
        if let Some(header) = self.header {
            let starts = if self.code == crate::diag::codes::FOR_BODY_MISSING_RETURN {
                "loop starts here"
            } else {
                "starts here"
            };
            diagnostic = diagnostic.with_label(header, starts);
        }
        if let Some(help) = self.help {
            diagnostic = diagnostic.with_help(help);
        }
        if !self.edits.is_empty() {
            diagnostic = diagnostic.with_fix(Fix::new("add `return`", self.applicability, self.edits));
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
            ExprKind::Fold(f) => Some(f.acc.name.clone()),
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
