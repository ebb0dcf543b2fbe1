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
    /// The repairs for `left op right` whose variants `lv` and `rv` no row of `op` takes, where
    /// they follow from the operands alone; most likely first.
    pub(super) fn operand_repairs(
        &self,
        op: BinaryOp,
        (left, ls, lv): (&ast::Expr, SchemaId, SchemaId),
        (right, rs, rv): (&ast::Expr, SchemaId, SchemaId),
    ) -> Vec<Fix> {
        let (lk, rk) = (self.types.kind(lv), self.types.kind(rv));
        // Python's `%` formatting, whatever the values' variants: its repair is the join.
        if op == BinaryOp::Rem
            && let ast::ExprKind::String(format) = &left.kind
        {
            return self.percent_repair(format, left, right, rs).into_iter().collect();
        }
        if matches!(lk, SchemaKind::Null) {
            return self.null_fallback(left, ls).into_iter().collect();
        }
        if matches!(rk, SchemaKind::Null) {
            return self.null_fallback(right, rs).into_iter().collect();
        }
        if matches!(op, BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge) {
            let numeric = |k: &SchemaKind| matches!(k, SchemaKind::Integer(_) | SchemaKind::Number(_));
            let literal = match (&left.kind, &right.kind) {
                (ast::ExprKind::String(digits), _) if numeric(rk) => Some((left.span, digits)),
                (_, ast::ExprKind::String(digits)) if numeric(lk) => Some((right.span, digits)),
                _ => None,
            };
            let Some((span, digits)) = literal else { return Vec::new() };
            let digits = digits.trim();
            return digits
                .parse::<f64>()
                .is_ok_and(f64::is_finite)
                .then(|| Fix::machine(format!("compare with the number `{digits}`"), span, digits.to_owned()))
                .into_iter()
                .collect();
        }
        if op == BinaryOp::Add {
            let repairs = self.seed_of_kind((left, lk), (right, rk));
            return if repairs.is_empty() { self.seed_of_kind((right, rk), (left, lk)) } else { repairs };
        }
        Vec::new()
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

    /// For `acc + x` in a `fold` whose seed is of another kind than `x`: the seed of `x`'s
    /// kind. Where one of the two is a list, which was meant is a guess, so the seed is for
    /// review, beside `acc + [x]` for a list seed: `total = fold acc = [] … acc + o.total`
    /// sums, `ids = fold acc = [] … acc + o.id` gathers, and `0` then `acc + o.items` may count
    /// items or gather them.
    fn seed_of_kind(
        &self,
        (accumulator, kind): (&ast::Expr, &SchemaKind),
        (other, other_kind): (&ast::Expr, &SchemaKind),
    ) -> Vec<Fix> {
        let ast::ExprKind::Ident(ident) = &accumulator.kind else { return Vec::new() };
        let Some(binding) = self.scopes.lookup(&ident.name) else { return Vec::new() };
        if !matches!(self.bindings[binding.index()].kind, BindingKind::FoldAccumulator) {
            return Vec::new();
        }
        let list_seed = matches!(kind, SchemaKind::List(_));
        let guess = list_seed != matches!(other_kind, SchemaKind::List(_));
        let applicability =
            if guess { Applicability::MaybeIncorrect } else { Applicability::MachineApplicable };
        let seed = self.accumulator_seeds.iter().find(|(b, _)| *b == binding).map(|&(_, seed)| seed);
        let mut repairs: Vec<Fix> = seed
            .zip(empty_value(&[other_kind]))
            .map(|(seed, fallback)| {
                let edit = Edit { span: seed, replacement: fallback.to_owned() };
                Fix::new(format!("start `{}` at {fallback}", ident.name), applicability, vec![edit])
            })
            .into_iter()
            .collect();
        if list_seed && guess {
            let element = format!("[{}]", self.text(other.span));
            repairs.push(Fix::suggest(format!("add it as an element: `{element}`"), other.span, element));
        }
        repairs
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
