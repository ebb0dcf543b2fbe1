//! Operators typed by the table of spec §2.4.1 over every pair of operand variants; literal-only
//! operations folded with `value::unary`/`value::binary`, so compile time and run time agree.

use std::sync::Arc;

use crate::diag::{Applicability, Diagnostic, Edit, Fix, Span, codes};
use crate::schema::{Property, SchemaId, SchemaKind};
use crate::syntax::{ast, quote_string};
use crate::value::{self, BinaryOp, UnaryOp};

use super::super::candidates::{Candidate, clear_winner, rank};
use super::super::hir::{BindingKind, ExprId, ExprKind, LogicalOp, Origin, ProjectKey};
use super::super::types::{PropertyLookup, Ty};
use super::names::dotted_from_root;
use super::operand_fix::empty_value;
use super::{At, Context, Expect, Lowerer, is_path};

/// Pairs of operand variants beyond which an operator is typed as producing any value.
const MAX_PAIRS: usize = 64;

/// What an operand needs before the operator applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Need {
    Nothing,
    Number,
    Text,
}

/// One accepted row: the result and what each side needs.
#[derive(Debug, Clone, Copy)]
struct Row {
    result: SchemaId,
    left: Need,
    right: Need,
}

impl Lowerer<'_> {
    pub(super) fn unary(&mut self, e: &ast::Expr, op: ast::UnaryOp, operand: &ast::Expr) -> ExprId {
        if let (ast::UnaryOp::Neg, ast::ExprKind::Integer(digits)) = (op, &operand.kind) {
            return self.integer(e, digits, true);
        }
        let at = self.at(e);
        let value = match op {
            ast::UnaryOp::Not => self.condition(operand, "the operand of `not`"),
            ast::UnaryOp::Neg => self.expr(operand, Expect::Nothing),
        };
        let op = match op {
            ast::UnaryOp::Not => UnaryOp::Not,
            ast::UnaryOp::Neg => UnaryOp::Neg,
        };
        if let Some(constant) = self.constant(value).cloned() {
            return match value::unary(op, &constant) {
                Ok(result) => self.constant_at(result, &at),
                Err(error) => self.folding_failed(error, &at),
            };
        }
        let ty = match (op, self.ty(value)) {
            (_, Ty::Never) => Ty::Never,
            (UnaryOp::Not, _) => Ty::Schema(self.types.boolean),
            (UnaryOp::Neg, Ty::Schema(schema)) => {
                let numeric = self.types.variants(schema).iter().all(|&v| {
                    matches!(
                        self.types.kind(v),
                        SchemaKind::Integer(_) | SchemaKind::Number(_) | SchemaKind::Any
                    )
                });
                if !numeric {
                    self.report(
                        Diagnostic::error(
                            codes::OPERAND_TYPES,
                            e.span,
                            format!(
                                "`-` needs a number, but {} is {}",
                                self.describe(operand.span),
                                self.types.display(schema)
                            ),
                        )
                        .with_help("negate an Integer or a Number"),
                    );
                    return self.poison(&at);
                }
                let plain: Vec<Ty> = self
                    .types
                    .variants(schema)
                    .into_iter()
                    .map(|v| match self.types.kind(v) {
                        SchemaKind::Integer(_) => Ty::Schema(self.types.integer),
                        SchemaKind::Number(_) => Ty::Schema(self.types.number),
                        _ => Ty::Schema(self.types.any),
                    })
                    .collect();
                self.types.union(&plain).0
            }
        };
        self.push(ExprKind::Unary { op, operand: value }, ty, Origin::Derived, &at)
    }

    pub(super) fn binary(
        &mut self,
        e: &ast::Expr,
        op: ast::BinaryOp,
        left: &ast::Expr,
        right: &ast::Expr,
    ) -> ExprId {
        let op = match op {
            ast::BinaryOp::And => return self.logical(e, LogicalOp::And, left, right),
            ast::BinaryOp::Or => return self.logical(e, LogicalOp::Or, left, right),
            ast::BinaryOp::Eq => BinaryOp::Eq,
            ast::BinaryOp::NotEq => BinaryOp::Ne,
            ast::BinaryOp::Lt => BinaryOp::Lt,
            ast::BinaryOp::LtEq => BinaryOp::Le,
            ast::BinaryOp::Gt => BinaryOp::Gt,
            ast::BinaryOp::GtEq => BinaryOp::Ge,
            ast::BinaryOp::In => BinaryOp::In,
            ast::BinaryOp::Add => BinaryOp::Add,
            ast::BinaryOp::Sub => BinaryOp::Sub,
            ast::BinaryOp::Mul => BinaryOp::Mul,
            ast::BinaryOp::Div => BinaryOp::Div,
            ast::BinaryOp::Rem => BinaryOp::Rem,
        };
        if op == BinaryOp::Sub
            && let Some(call) = self.hyphenated_tool_call(e, left, right)
        {
            return call;
        }
        let at = self.at(e);
        let l = self.expr(left, Expect::Nothing);
        let r = self.expr(right, Expect::Nothing);
        // Literals fold, except equality of kinds that are never equal: the check below reports
        // it as it does for typed operands (spec §2.4.1: a lossless common schema).
        let never_equal = matches!(op, BinaryOp::Eq | BinaryOp::Ne)
            && matches!((self.ty(l), self.ty(r)), (Ty::Schema(ls), Ty::Schema(rs)) if !self.may_be_equal(ls, rs));
        if let (Some(a), Some(b), false) = (self.constant(l).cloned(), self.constant(r).cloned(), never_equal)
        {
            return match value::binary(op, &a, &b) {
                Ok(result) => self.constant_at(result, &at),
                Err(error) => self.folding_failed(error, &at),
            };
        }
        let (Ty::Schema(ls), Ty::Schema(rs)) = (self.ty(l), self.ty(r)) else {
            return self.push(ExprKind::Binary { op, left: l, right: r }, Ty::Never, Origin::Derived, &at);
        };
        let (lv, rv) = (self.types.variants(ls), self.types.variants(rs));
        if lv.len() * rv.len() > MAX_PAIRS {
            let any = self.types.any;
            return self.push(
                ExprKind::Binary { op, left: l, right: r },
                Ty::Schema(any),
                Origin::Derived,
                &at,
            );
        }
        if matches!(op, BinaryOp::Eq | BinaryOp::Ne) {
            return self.equality(e, op, (left, l, ls), (right, r, rs), &at);
        }
        let mut rows = Vec::new();
        for &a in &lv {
            for &b in &rv {
                match self.row(op, a, b) {
                    Some(row) => rows.push(row),
                    None => {
                        self.operand_mismatch(e, op, left, right, (ls, a), (rs, b));
                        return self.poison(&at);
                    }
                }
            }
        }
        let results: Vec<Ty> = rows.iter().map(|row| Ty::Schema(row.result)).collect();
        let ty = self.union_at(&results, e.span);
        let left_need = uniform(rows.iter().map(|row| row.left));
        let right_need = uniform(rows.iter().map(|row| row.right));
        let l = self.operand_conversion(l, left_need, op, "left");
        let r = self.operand_conversion(r, right_need, op, "right");
        self.push(ExprKind::Binary { op, left: l, right: r }, ty, Origin::Derived, &at)
    }

    /// Whether some variant of `ls` and some variant of `rs` can be equal.
    fn may_be_equal(&self, ls: SchemaId, rs: SchemaId) -> bool {
        let (lv, rv) = (self.types.variants(ls), self.types.variants(rs));
        lv.iter().any(|&a| rv.iter().any(|&b| comparable(self.types.kind(a), self.types.kind(b))))
    }

    /// `==` / `!=`: accepted when some pair of variants can be equal (a nullable value compared
    /// with null, say); values that can never be equal are an error.
    fn equality(
        &mut self,
        e: &ast::Expr,
        op: BinaryOp,
        (left, l, ls): (&ast::Expr, ExprId, SchemaId),
        (right, r, rs): (&ast::Expr, ExprId, SchemaId),
        at: &At,
    ) -> ExprId {
        let not_allowed = self.value_not_allowed((left, ls), (right, rs));
        if !self.may_be_equal(ls, rs) || not_allowed.is_some() {
            let (lw, rw) = (self.describe(left.span), self.describe(right.span));
            let null_side = [(ls, &rw, rs), (rs, &lw, ls)]
                .into_iter()
                .find(|(side, _, _)| matches!(self.types.kind(*side), SchemaKind::Null))
                .map(|(_, other, _)| other.clone());
            let mut diagnostic = Diagnostic::error(
                codes::OPERAND_TYPES,
                e.span,
                format!(
                    "{lw} ({}) and {rw} ({}) are never equal",
                    self.types.display(ls),
                    self.types.display(rs)
                ),
            );
            diagnostic = match null_side {
                Some(other) => {
                    let operand =
                        if matches!(self.types.kind(ls), SchemaKind::Null) { (right, r) } else { (left, l) };
                    let help = match self.first_optional_read(operand.0.unparenthesized(), operand.1) {
                        Some((object, name)) => format!(
                            "{other} is never null; reading it fails when the optional property `{name}` is absent, so test presence with `{} in {}`",
                            quote_string(name),
                            self.text(object.span)
                        ),
                        None => {
                            format!("{other} is never null, so the comparison always gives the same answer")
                        }
                    };
                    let diagnostic = diagnostic.with_help(help);
                    match self.never_null_fix(e, op, operand) {
                        Some(fix) => diagnostic.with_fix(fix),
                        None => diagnostic,
                    }
                }
                None => match not_allowed {
                    Some((help, fix)) => {
                        let diagnostic = diagnostic.with_help(help);
                        match fix {
                            Some(fix) => diagnostic.with_fix(fix),
                            None => diagnostic,
                        }
                    }
                    None => diagnostic
                        .with_help("values of different kinds are never equal; compare values of one kind"),
                },
            };
            self.report(diagnostic);
            return self.poison(at);
        }
        let boolean = self.types.boolean;
        self.push(ExprKind::Binary { op, left: l, right: r }, Ty::Schema(boolean), Origin::Derived, at)
    }

    /// For a string literal compared with a value its schema limits to other strings (an enum,
    /// a discriminant), which is never equal to it: the help listing the allowed values, and the
    /// closest of them as the fix when one is clearly meant (`"sucess"` → `"succeeded"`).
    fn value_not_allowed(
        &self,
        (left, ls): (&ast::Expr, SchemaId),
        (right, rs): (&ast::Expr, SchemaId),
    ) -> Option<(String, Option<Fix>)> {
        // The strings a value may be, when its schema names them all (null aside).
        let allowed = |schema: SchemaId| -> Option<Vec<Arc<str>>> {
            let mut values = Vec::new();
            for variant in self.types.variants(schema) {
                match self.types.kind(variant) {
                    SchemaKind::String(string) => values.extend(string.values.as_deref()?.iter().cloned()),
                    SchemaKind::Null => {}
                    _ => return None,
                }
            }
            (!values.is_empty()).then_some(values)
        };
        let (literal, text, other, other_schema) = match (&left.kind, &right.kind) {
            (ast::ExprKind::String(text), _) => (left, text, right, rs),
            (_, ast::ExprKind::String(text)) => (right, text, left, ls),
            _ => return None,
        };
        // A fold's accumulator is typed by its seed until its body is lowered: it may take
        // other values from the second step on.
        if let ast::ExprKind::Ident(ident) = &other.unparenthesized().kind
            && self.scopes.lookup(&ident.name).is_some_and(|binding| {
                matches!(self.bindings[binding.index()].kind, BindingKind::FoldAccumulator)
            })
        {
            return None;
        }
        let text: &str = text;
        let values = allowed(other_schema)?;
        if values.iter().any(|value| **value == *text) {
            return None;
        }
        let listed: Vec<String> = values.iter().take(12).map(|v| quote_string(v)).collect();
        let more = if values.len() > listed.len() { ", …" } else { "" };
        let help = format!("{} is one of {}{more}", self.describe(other.span), listed.join(", "));
        let ranked = rank(text, values.iter().map(|v| Candidate::named(v.as_ref())));
        // For review: the closest value may be the opposite one (`"unpaid"` and `"paid"`).
        let fix = clear_winner(&ranked).map(|best| {
            let replacement = quote_string(&best.candidate.name);
            Fix::suggest(format!("compare with {replacement}"), literal.span, replacement)
        });
        Some((help, fix))
    }

    /// The fix of `x != null` (or `x == null`), `e`, for an `x` that is never null. When `x`
    /// reads an optional property (`o.p`, or deeper: `o.p.q`), reading it fails when the
    /// property is absent: the property nearest the root is tested for presence (`"p" in o`),
    /// for review. Otherwise a conditional the comparison guards is written as the arm it always
    /// takes: machine-applicable when `x` is a path (dropping it drops nothing that runs), for
    /// review when it calls something.
    fn never_null_fix(
        &self,
        e: &ast::Expr,
        op: BinaryOp,
        (operand, id): (&ast::Expr, ExprId),
    ) -> Option<Fix> {
        if let Some((object, name)) = self.first_optional_read(operand.unparenthesized(), id) {
            let present = format!("{} in {}", quote_string(name), self.text(object.span));
            let test = if op == BinaryOp::Ne { present } else { format!("not ({present})") };
            return Some(Fix::suggest(format!("test presence: write `{test}`"), e.span, test));
        }
        let guard = self.null_guard.as_ref().filter(|guard| guard.comparison == e.span)?;
        let message = format!("drop the guard: write `{}`", guard.reads_as);
        Some(match is_path(self.text(operand.span)) {
            true => Fix::machine(message, guard.conditional, guard.reads_as.clone()),
            false => Fix::suggest(message, guard.conditional, guard.reads_as.clone()),
        })
    }

    /// In the member chain `operand` (lowered as `id`), the read nearest the root of a property
    /// some object variant of its target declares optional: the target and the property.
    fn first_optional_read<'e>(
        &self,
        operand: &'e ast::Expr,
        id: ExprId,
    ) -> Option<(&'e ast::Expr, &'e str)> {
        let ast::ExprKind::Member { object, name } = &operand.kind else { return None };
        let ExprKind::Project { target, key: ProjectKey::Field(_) } = &self.expr_ref(id).kind else {
            return None;
        };
        self.first_optional_read(object.unparenthesized(), *target)
            .or_else(|| self.reads_optional_property(id).then_some((object.as_ref(), name.name.as_str())))
    }

    /// Whether `id` reads a property some object variant of its target declares optional.
    fn reads_optional_property(&self, id: ExprId) -> bool {
        let ExprKind::Project { target, key: ProjectKey::Field(name) } = &self.expr_ref(id).kind else {
            return false;
        };
        let Ty::Schema(schema) = self.ty(*target) else { return false };
        self.types.variants(schema).into_iter().any(|variant| {
            matches!(self.types.kind(variant), SchemaKind::Object(_))
                && matches!(self.types.property(variant, name), PropertyLookup::Found { required: false, .. })
        })
    }

    /// The row of the operator table for one pair of (non-union) operand schemas.
    fn row(&mut self, op: BinaryOp, left: SchemaId, right: SchemaId) -> Option<Row> {
        use SchemaKind as K;
        let (l, r) = (self.types.kind(left).clone(), self.types.kind(right).clone());
        let row = |result, left, right| Some(Row { result, left, right });
        let t = &self.types;
        let (any, boolean, integer, number, string) = (t.any, t.boolean, t.integer, t.number, t.string);
        let numeric = |k: &K| matches!(k, K::Integer(_) | K::Number(_));
        let widen = |k: &K| if matches!(k, K::Integer(_)) { Need::Number } else { Need::Nothing };
        match op {
            BinaryOp::Eq | BinaryOp::Ne => comparable(&l, &r).then_some(Row {
                result: boolean,
                left: Need::Nothing,
                right: Need::Nothing,
            }),
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => match (&l, &r) {
                (K::Any, _) | (_, K::Any) => row(boolean, Need::Nothing, Need::Nothing),
                (a, b) if numeric(a) && numeric(b) => row(boolean, Need::Nothing, Need::Nothing),
                (K::String(_), K::String(_)) => row(boolean, Need::Nothing, Need::Nothing),
                _ => None,
            },
            BinaryOp::In => match (&l, &r) {
                (_, K::Any) | (_, K::List(_)) => row(boolean, Need::Nothing, Need::Nothing),
                (K::Any | K::String(_), K::Object(_) | K::Map(_) | K::String(_)) => {
                    row(boolean, Need::Nothing, Need::Nothing)
                }
                _ => None,
            },
            BinaryOp::Add => match (&l, &r) {
                (K::Any, _) | (_, K::Any) => row(any, Need::Nothing, Need::Nothing),
                (K::Integer(_), K::Integer(_)) => row(integer, Need::Nothing, Need::Nothing),
                (a, b) if numeric(a) && numeric(b) => row(number, widen(a), widen(b)),
                (K::String(_), K::String(_)) => row(string, Need::Nothing, Need::Nothing),
                (K::String(_), b) if scalar(b) => row(string, Need::Nothing, Need::Text),
                (a, K::String(_)) if scalar(a) => row(string, Need::Text, Need::Nothing),
                (K::List(a), K::List(b)) => {
                    let items = match (a.length.max == Some(0), b.length.max == Some(0)) {
                        (true, true) => return row(self.types.empty_list, Need::Nothing, Need::Nothing),
                        (true, false) => Ty::Schema(b.items),
                        (false, true) => Ty::Schema(a.items),
                        (false, false) => self.types.union(&[Ty::Schema(a.items), Ty::Schema(b.items)]).0,
                    };
                    let items = match items {
                        Ty::Schema(items) => items,
                        Ty::Never => any,
                    };
                    row(self.types.list_of(items), Need::Nothing, Need::Nothing)
                }
                (K::Object(_) | K::Map(_), K::Object(_) | K::Map(_)) => {
                    row(self.merged(left, right), Need::Nothing, Need::Nothing)
                }
                _ => None,
            },
            BinaryOp::Sub | BinaryOp::Mul => match (&l, &r) {
                (K::Any, _) | (_, K::Any) => row(any, Need::Nothing, Need::Nothing),
                (K::Integer(_), K::Integer(_)) => row(integer, Need::Nothing, Need::Nothing),
                (a, b) if numeric(a) && numeric(b) => row(number, widen(a), widen(b)),
                _ => None,
            },
            BinaryOp::Div => match (&l, &r) {
                (K::Any, _) | (_, K::Any) => row(number, Need::Nothing, Need::Nothing),
                (a, b) if numeric(a) && numeric(b) => row(number, widen(a), widen(b)),
                _ => None,
            },
            BinaryOp::Rem => match (&l, &r) {
                (K::Any, _) | (_, K::Any) => row(integer, Need::Nothing, Need::Nothing),
                (K::Integer(_), K::Integer(_)) => row(integer, Need::Nothing, Need::Nothing),
                _ => None,
            },
            BinaryOp::And | BinaryOp::Or => row(boolean, Need::Nothing, Need::Nothing),
        }
    }

    /// The schema of `left + right` for objects and maps: the exact combined object for two
    /// objects (right-biased), else a map over both sides' value schemas.
    fn merged(&mut self, left: SchemaId, right: SchemaId) -> SchemaId {
        match (self.types.kind(left).clone(), self.types.kind(right).clone()) {
            (SchemaKind::Object(a), SchemaKind::Object(b)) => {
                let mut properties: Vec<Property> =
                    a.properties.iter().filter(|p| b.property(&p.name).is_none()).cloned().collect();
                for p in b.properties.iter() {
                    match a.property(&p.name) {
                        Some(earlier) if !p.required => {
                            let schema =
                                match self.types.union(&[Ty::Schema(earlier.schema), Ty::Schema(p.schema)]).0
                                {
                                    Ty::Schema(schema) => schema,
                                    Ty::Never => p.schema,
                                };
                            properties.push(Property::new(p.name.clone(), schema, earlier.required));
                        }
                        _ => properties.push(p.clone()),
                    }
                }
                let additional = match (a.additional, b.additional) {
                    (Some(x), Some(y)) => match self.types.union(&[Ty::Schema(x), Ty::Schema(y)]).0 {
                        Ty::Schema(schema) => Some(schema),
                        Ty::Never => None,
                    },
                    (x, y) => x.or(y),
                };
                self.types.intern(SchemaKind::Object(crate::schema::ObjectSchema {
                    properties: properties.into(),
                    additional,
                }))
            }
            (a, b) => {
                let values: Vec<Ty> = [a, b].iter().flat_map(|k| self.value_schemas(k)).collect();
                let values = match self.types.union(&values).0 {
                    Ty::Schema(values) => values,
                    Ty::Never => self.types.any,
                };
                self.types.map_of(values)
            }
        }
    }

    /// Every schema a value of an object or map can hold.
    fn value_schemas(&self, kind: &SchemaKind) -> Vec<Ty> {
        match kind {
            SchemaKind::Map(values) => vec![Ty::Schema(*values)],
            SchemaKind::Object(object) => object
                .properties
                .iter()
                .map(|p| Ty::Schema(p.schema))
                .chain(object.additional.map(Ty::Schema))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Converts an operand the row needs as a Number or as text (a Convert node, folded for a
    /// literal).
    fn operand_conversion(&mut self, operand: ExprId, need: Need, op: BinaryOp, side: &str) -> ExprId {
        let target = match need {
            Need::Nothing => return operand,
            Need::Number => self.types.number,
            Need::Text => self.types.string,
        };
        let context = Context::new(format!("the {side} operand of `{op}`"));
        self.coerce(operand, target, &context)
    }

    /// `RL2301`: no row takes this pair of operand kinds.
    fn operand_mismatch(
        &mut self,
        e: &ast::Expr,
        op: BinaryOp,
        left: &ast::Expr,
        right: &ast::Expr,
        (ls, lv): (SchemaId, SchemaId),
        (rs, rv): (SchemaId, SchemaId),
    ) {
        let (lk, rk) = (self.types.kind(lv).clone(), self.types.kind(rv).clone());
        let nullable = matches!(lk, SchemaKind::Null) || matches!(rk, SchemaKind::Null);
        let (lw, rw) = (self.describe(left.span), self.describe(right.span));
        let message = if nullable {
            let which = if matches!(lk, SchemaKind::Null) { &lw } else { &rw };
            format!("`{op}` cannot take null, and {which} may be null")
        } else {
            format!("`{op}` cannot take {} and {}", self.types.display(lv), self.types.display(rv))
        };
        let help = match (op, nullable) {
            (_, true) => "handle null first: `value if value != null else fallback`".to_owned(),
            (BinaryOp::Add, _) => "`+` adds numbers, joins strings (formatting a number or Boolean), concatenates lists and merges objects".to_owned(),
            (BinaryOp::In, _) => "`in` tests list membership, object keys (a String) or substrings".to_owned(),
            _ => format!("`{op}` takes {}", accepted_operands(op)),
        };
        let mut diagnostic = Diagnostic::error(codes::OPERAND_TYPES, e.span, message).with_help(help);
        for fix in self.operand_repairs(op, (left, ls, lv), (right, rs, rv)) {
            diagnostic = diagnostic.with_fix(fix);
        }
        if lv != ls || rv != rs {
            diagnostic = diagnostic.with_note(format!(
                "{lw} is {}, {rw} is {}",
                self.types.display(ls),
                self.types.display(rs)
            ));
        }
        self.report(diagnostic);
    }

    /// `and` / `or`: both sides Boolean conditions; the right side is a lazy region evaluated
    /// under what the left side establishes.
    fn logical(&mut self, e: &ast::Expr, op: LogicalOp, left: &ast::Expr, right: &ast::Expr) -> ExprId {
        let at = self.at(e);
        if op == LogicalOp::Or && is_default_literal(right) {
            return self.or_default(e, left, right, &at);
        }
        let l = self.condition(left, &format!("the left operand of `{}`", logical_symbol(op)));
        let facts = self.facts(left);
        let known = match op {
            LogicalOp::And => facts.when_true,
            LogicalOp::Or => facts.when_false,
        };
        let mark = self.scopes.narrow(&known);
        let what = format!("the right operand of `{}`", logical_symbol(op));
        let region = self.arm(right.span, |lowerer| lowerer.condition(right, &what));
        self.scopes.forget(mark);
        let boolean = self.types.boolean;
        self.push(ExprKind::Logical { op, left: l, right: region }, Ty::Schema(boolean), Origin::Derived, &at)
    }

    /// `ns.get-sum(…)`, a tool an MCP server names with `-`, written as that name: it parses
    /// as `ns.get - sum(…)`. When the tool is registered as `ns.get_sum` (Runlet's name for it)
    /// and nothing stands between the words and the `-`, one diagnostic whose fix writes that
    /// name, and the call is checked as the tool's. Out of line: [`Lowerer::binary`] recurses
    /// once per nesting level, and its frame is kept small.
    #[inline(never)]
    fn hyphenated_tool_call(&mut self, e: &ast::Expr, left: &ast::Expr, right: &ast::Expr) -> Option<ExprId> {
        let ast::ExprKind::Call { callee, args } = &right.kind else { return None };
        let ast::ExprKind::Ident(last) = &callee.kind else { return None };
        // `a-b-c(…)` is `(a - b) - c(…)`: the words before the last, left to right.
        let mut words = vec![last.name.as_str()];
        let mut rest = left;
        let path = loop {
            match &rest.kind {
                ast::ExprKind::Binary(ast::BinaryOp::Sub, left, right) => {
                    let ast::ExprKind::Ident(word) = &right.kind else { return None };
                    words.push(word.name.as_str());
                    rest = left;
                }
                _ => break dotted_from_root(rest, &|root| self.registry.is_root(root))?,
            }
        };
        let written = Span::new(rest.span.start, callee.span.end);
        let text = self.text(written);
        if path.len() < 2 || text.chars().any(char::is_whitespace) {
            return None;
        }
        words.reverse();
        let mut segments: Vec<&str> = path.iter().map(|(segment, _)| *segment).collect();
        let leaf = format!("{}_{}", segments.pop()?, words.join("_"));
        segments.push(&leaf);
        let callable = self.registry.resolve_callable(&segments).filter(|c| c.segments == segments.len())?;
        let name = self.registry.tool(callable.tool).name.to_string();
        self.report(
            Diagnostic::error(
                codes::UNKNOWN_TOOL,
                written,
                format!("`{text}` is not a Runlet name: the registry names this tool `{name}`"),
            )
            .with_help(format!("a `-` in a tool's name is written `_`: `{name}(…)`"))
            .with_fix(Fix::machine(format!("write `{name}`"), written, name.clone())),
        );
        Some(self.tool_call(e, callable.tool, args))
    }

    /// `x or "fallback"`, Python's default: one diagnostic whose fix is the null test Runlet
    /// writes, `x if x != null else "fallback"`.
    fn or_default(&mut self, e: &ast::Expr, left: &ast::Expr, right: &ast::Expr, at: &At) -> ExprId {
        let value = self.expr(left, Expect::Nothing);
        self.expr(right, Expect::Nothing);
        let (l, r) = (self.text(left.span), self.text(right.span));
        if let Ty::Schema(schema) = self.ty(value)
            && !self.types.admits_null(schema)
        {
            return self.needless_default(e, schema, l, r, at);
        }
        let rewritten = format!("{l} if {l} != null else {r}");
        let applicability =
            if is_path(l) { Applicability::MachineApplicable } else { Applicability::MaybeIncorrect };
        self.report(
            Diagnostic::error(
                codes::OPERAND_TYPES,
                e.span,
                format!("`or` takes two Booleans; `{r}` is not a default for `{l}`"),
            )
            .with_help(format!("for a fallback when the value is null, write `{rewritten}`"))
            .with_fix(Fix::new(
                format!("write `{rewritten}`"),
                applicability,
                vec![Edit { span: e.span, replacement: rewritten }],
            )),
        );
        self.poison(at)
    }

    /// `x or default` where `x`, of `schema`, is never null: there is nothing to fall back from.
    /// A default that is the empty value of `x`'s kind (`0` for a number, `""` for text, `[]`
    /// for a list) is what Python's `or` would give for an empty `x`, which `x` then is already,
    /// so dropping it keeps the meaning; another default is not a slip this can repair.
    fn needless_default(&mut self, e: &ast::Expr, schema: SchemaId, l: &str, r: &str, at: &At) -> ExprId {
        let (l, r) = (l.to_owned(), r.to_owned());
        let mut diagnostic = Diagnostic::error(
            codes::OPERAND_TYPES,
            e.span,
            format!("`or` takes two Booleans; `{l}` is never null, so `{r}` is no default for it"),
        );
        let kinds: Vec<&SchemaKind> =
            self.types.variants(schema).into_iter().map(|variant| self.types.kind(variant)).collect();
        let empty = match empty_value(&kinds) {
            Some("0" | "0.0") => matches!(r.as_str(), "0" | "0.0"),
            Some("\"\"") => matches!(r.as_str(), "\"\"" | "''"),
            Some(value) => r == value,
            None => false,
        };
        if empty {
            diagnostic = diagnostic.with_fix(Fix::machine(format!("drop `or {r}`"), e.span, l));
        } else {
            diagnostic = diagnostic.with_help(format!(
                "to replace an empty `{l}`, compare it with its empty value: `{l} if {l} != … else {r}`"
            ));
        }
        self.report(diagnostic);
        self.poison(at)
    }

    /// A literal-only operation that fails: reported with the runtime failure's own code
    /// (`RL5101`, `RL5102`, …) at the expression, since every run would fail the same way.
    pub(super) fn folding_failed(&mut self, error: value::ValueError, at: &At) -> ExprId {
        self.report(
            Diagnostic::error(error.code(), at.span, error.message().to_owned())
                .with_help("the operands are literals, so this fails on every run: change the literals")
                .with_note("found while checking, before anything runs"),
        );
        self.poison(at)
    }
}

/// A literal that is no Boolean: the right side of Python's `x or default`.
fn is_default_literal(e: &ast::Expr) -> bool {
    matches!(
        e.kind,
        ast::ExprKind::String(_)
            | ast::ExprKind::Integer(_)
            | ast::ExprKind::Number(_)
            | ast::ExprKind::List(_)
    )
}

fn logical_symbol(op: LogicalOp) -> &'static str {
    match op {
        LogicalOp::And => "and",
        LogicalOp::Or => "or",
    }
}

/// The need every row agrees on; mixed needs are left to the operator (`value::binary` applies
/// the same widening and formatting per value).
fn uniform(needs: impl Iterator<Item = Need>) -> Need {
    let mut needs = needs.peekable();
    let Some(&first) = needs.peek() else { return Need::Nothing };
    if needs.all(|n| n == first) { first } else { Need::Nothing }
}

/// Integer, Number and Boolean: what String concatenation formats.
fn scalar(kind: &SchemaKind) -> bool {
    matches!(kind, SchemaKind::Integer(_) | SchemaKind::Number(_) | SchemaKind::Boolean(_))
}

/// Whether `==` can ever be true between values of these kinds.
fn comparable(a: &SchemaKind, b: &SchemaKind) -> bool {
    use SchemaKind as K;
    matches!(
        (a, b),
        (K::Any, _)
            | (_, K::Any)
            | (K::Null, K::Null)
            | (K::Boolean(_), K::Boolean(_))
            | (K::Integer(_) | K::Number(_), K::Integer(_) | K::Number(_))
            | (K::String(_), K::String(_))
            | (K::Bytes, K::Bytes)
            | (K::List(_), K::List(_))
            | (K::Object(_) | K::Map(_), K::Object(_) | K::Map(_))
    )
}

fn accepted_operands(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div => "two numbers",
        BinaryOp::Rem => "two Integers",
        BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => "two numbers or two strings",
        _ => "operands of one kind",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_need_applies_only_when_every_row_agrees() {
        assert_eq!(uniform([Need::Number, Need::Number].into_iter()), Need::Number);
        assert_eq!(uniform([Need::Number, Need::Nothing].into_iter()), Need::Nothing);
        assert_eq!(uniform(std::iter::empty()), Need::Nothing);
        assert!(comparable(&SchemaKind::Null, &SchemaKind::Null));
        assert!(!comparable(&SchemaKind::Null, &SchemaKind::Bytes));
    }
}
