//! Repairs offered with `RL2301` when an operator meets operands it cannot take: a fallback for
//! an operand that may be null, a number for a numeric string compared with a number, `+` joins
//! for Python's `"…%s…" % value` formatting, and a `fold` seed of the kind the body adds to it.

use crate::diag::{Applicability, Edit, Fix, Span};
use crate::schema::{SchemaId, SchemaKind};
use crate::syntax::ast;
use crate::syntax::quote_string;
use crate::value::BinaryOp;

use super::super::hir::BindingKind;
use super::{Lowerer, is_path};

impl Lowerer<'_> {
    /// The repair for `left op right` whose variants `lv` and `rv` no row of `op` takes, where
    /// one follows from the operands alone.
    pub(super) fn operand_repair(
        &self,
        op: BinaryOp,
        (left, ls, lv): (&ast::Expr, SchemaId, SchemaId),
        (right, rs, rv): (&ast::Expr, SchemaId, SchemaId),
    ) -> Option<Fix> {
        let (lk, rk) = (self.types.kind(lv), self.types.kind(rv));
        // Python's `%` formatting, whatever the values' variants: its repair is the join.
        if op == BinaryOp::Rem
            && let ast::ExprKind::String(format) = &left.kind
        {
            return self.percent_repair(format, left, right, rs);
        }
        if matches!(lk, SchemaKind::Null) {
            return self.null_fallback(left, ls);
        }
        if matches!(rk, SchemaKind::Null) {
            return self.null_fallback(right, rs);
        }
        if matches!(op, BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge) {
            let numeric = |k: &SchemaKind| matches!(k, SchemaKind::Integer(_) | SchemaKind::Number(_));
            let literal = match (&left.kind, &right.kind) {
                (ast::ExprKind::String(digits), _) if numeric(rk) => Some((left.span, digits)),
                (_, ast::ExprKind::String(digits)) if numeric(lk) => Some((right.span, digits)),
                _ => None,
            };
            let (span, digits) = literal?;
            let digits = digits.trim();
            return digits.parse::<f64>().is_ok_and(f64::is_finite).then(|| {
                Fix::machine(format!("compare with the number `{digits}`"), span, digits.to_owned())
            });
        }
        if op == BinaryOp::Add {
            return self.seed_of_kind(left, rk).or_else(|| self.seed_of_kind(right, lk));
        }
        None
    }

    /// `"…%s…" % values` (of schema `values_schema`) as the join it means. `+` takes no null: a
    /// single value that may be null is given "" for it (Python would write `None`), offered
    /// for review; a list whose items may be null gets no repair.
    fn percent_repair(
        &self,
        format: &str,
        left: &ast::Expr,
        right: &ast::Expr,
        values_schema: SchemaId,
    ) -> Option<Fix> {
        let span = left.span.to(right.span);
        let (listed, nullable) = match (&right.kind, self.types.kind(self.types.resolve(values_schema))) {
            (ast::ExprKind::List(_), SchemaKind::List(list)) => (true, self.types.admits_null(list.items)),
            _ => (false, self.types.admits_null(values_schema)),
        };
        let value = self.text(right.span);
        if nullable && (listed || !is_path(value)) {
            return None;
        }
        let guarded = null_guarded(value, "\"\"");
        let text = |at: Span| if nullable && at == right.span { guarded.as_str() } else { self.text(at) };
        let joined = percent_format(format, right, text)?;
        let joined = if self.stands_alone(span) { joined } else { format!("({joined})") };
        let applicability =
            if nullable { Applicability::MaybeIncorrect } else { Applicability::MachineApplicable };
        Some(Fix::new(format!("write `{joined}`"), applicability, vec![Edit { span, replacement: joined }]))
    }

    /// `(x if x != null else fallback)` for a path `x` whose other variants are all text, all
    /// numbers or all lists: the fallback is the empty value of that kind.
    fn null_fallback(&self, operand: &ast::Expr, schema: SchemaId) -> Option<Fix> {
        let text = self.text(operand.span);
        if !is_path(text) {
            return None;
        }
        let kinds: Vec<&SchemaKind> = self
            .types
            .variants(schema)
            .into_iter()
            .map(|v| self.types.kind(v))
            .filter(|k| !matches!(k, SchemaKind::Null))
            .collect();
        let fallback = empty_value(&kinds)?;
        let replacement = null_guarded(text, fallback);
        Some(Fix::suggest(format!("use {fallback} when `{text}` is null"), operand.span, replacement))
    }

    /// For `acc + x` in a `fold` whose seed is of another kind than `x`: the seed of `x`'s kind.
    fn seed_of_kind(&self, accumulator: &ast::Expr, other: &SchemaKind) -> Option<Fix> {
        let ast::ExprKind::Ident(ident) = &accumulator.kind else { return None };
        let binding = self.scopes.lookup(&ident.name)?;
        if !matches!(self.bindings[binding.index()].kind, BindingKind::FoldAccumulator) {
            return None;
        }
        let seed = self.accumulator_seeds.iter().find(|(b, _)| *b == binding)?.1;
        let fallback = empty_value(&[other])?;
        Some(Fix::machine(format!("start `{}` at {fallback}", ident.name), seed, fallback))
    }
}

/// `(path if path != null else fallback)`: the value of `path`, or `fallback` where it is null.
pub(super) fn null_guarded(path: &str, fallback: &str) -> String {
    format!("({path} if {path} != null else {fallback})")
}

/// The empty value of one kind shared by all of `kinds`: `""`, `0`, `0.0` or `[]`.
pub(super) fn empty_value(kinds: &[&SchemaKind]) -> Option<&'static str> {
    let all = |test: fn(&SchemaKind) -> bool| !kinds.is_empty() && kinds.iter().all(|k| test(k));
    if all(|k| matches!(k, SchemaKind::String(_))) {
        Some("\"\"")
    } else if all(|k| matches!(k, SchemaKind::Integer(_))) {
        Some("0")
    } else if all(|k| matches!(k, SchemaKind::Integer(_) | SchemaKind::Number(_))) {
        Some("0.0")
    } else if all(|k| matches!(k, SchemaKind::List(_))) {
        Some("[]")
    } else {
        None
    }
}

/// `"Hello %s, %d items" % [name, n]` as `"Hello " + name + ", " + n + " items"`: each `%s`,
/// `%d` or `%i` takes the next value (one value, or the elements of a list literal). `None` for
/// other conversions, which have no Runlet spelling, or when the counts differ.
fn percent_format<'s>(format: &str, values: &ast::Expr, text: impl Fn(Span) -> &'s str) -> Option<String> {
    let values: Vec<&str> = match &values.kind {
        ast::ExprKind::List(items) => items.iter().map(|item| text(item.span)).collect(),
        _ => vec![text(values.span)],
    };
    let mut parts = Vec::new();
    let mut literal = String::new();
    let mut next = values.iter();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            literal.push(c);
            continue;
        }
        match chars.next()? {
            '%' => literal.push('%'),
            's' | 'd' | 'i' => {
                if !literal.is_empty() || parts.is_empty() {
                    parts.push(quote_string(&std::mem::take(&mut literal)));
                }
                parts.push((*next.next()?).to_owned());
            }
            _ => return None,
        }
    }
    if next.next().is_some() || parts.is_empty() {
        return None;
    }
    if !literal.is_empty() {
        parts.push(quote_string(&literal));
    }
    Some(parts.join(" + "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn formatted(format: &str, values: &str) -> Option<String> {
        let source = format!("x = {values}");
        let program = crate::syntax::parse(&source).program;
        let ast::Stmt::Let(stmt) = &program.stmts[0] else { panic!("not a binding") };
        percent_format(format, &stmt.value, |span| &source[span.range()])
    }

    #[test]
    fn percent_formats_become_joins() {
        assert_eq!(formatted("Hello %s", "name").as_deref(), Some(r#""Hello " + name"#));
        assert_eq!(formatted("%d of %d", "[a, b]").as_deref(), Some(r#""" + a + " of " + b"#));
        assert_eq!(formatted("100%% %s", "x").as_deref(), Some(r#""100% " + x"#));
        assert_eq!(formatted("%.2f", "x"), None);
        assert_eq!(formatted("%s %s", "x"), None);
    }
}
