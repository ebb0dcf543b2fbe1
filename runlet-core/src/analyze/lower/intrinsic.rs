//! Calls of prelude intrinsics (docs/STDLIB.md), after the call machinery has checked and
//! converted their arguments like a tool's: the result schema and the literal-pattern check.

use crate::diag::{Diagnostic, Span, codes};
use crate::schema::{SchemaId, SchemaKind};
use crate::stdlib::{self, Intrinsic, OutputRule, PureFunction};
use crate::value::Value;

use super::super::hir::{ExprId, ExprKind, Origin};
use super::super::types::Ty;
use super::{At, Lowerer};

impl Lowerer<'_> {
    /// The `Intrinsic` expression of a checked call; `declared` is the descriptor's output.
    pub(super) fn intrinsic_call(
        &mut self,
        function: Intrinsic,
        args: Vec<ExprId>,
        declared: SchemaId,
        at: &At,
    ) -> ExprId {
        let signature = function.signature();
        if let Some(&pattern) = signature.pattern.and_then(|index| args.get(index)) {
            self.check_literal_pattern(pattern);
        }
        if function == Intrinsic::Pure(PureFunction::ListSort)
            && let Some(&items) = args.first()
        {
            self.check_sortable(items);
        }
        let ty = if args.iter().any(|&a| self.ty(a) == Ty::Never) {
            Ty::Never
        } else {
            Ty::Schema(self.intrinsic_output(signature.rule, &args).unwrap_or(declared))
        };
        self.push(ExprKind::Intrinsic { function, args }, ty, Origin::Derived, at)
    }

    /// The prelude function named `name`, when this registry offers it.
    pub(super) fn prelude_function(&self, name: &str) -> Option<&'static str> {
        let tool = self.registry.tool_named(name)?;
        self.registry.intrinsic(tool).map(Intrinsic::name)
    }

    /// The result schema an output rule gives for these arguments, when the first argument's
    /// schema is precise enough to say more than the declared output.
    fn intrinsic_output(&mut self, rule: OutputRule, args: &[ExprId]) -> Option<SchemaId> {
        let Ty::Schema(first) = self.ty(*args.first()?) else { return None };
        let items = |this: &Self, list: SchemaId| match this.types.kind(this.types.resolve(list)) {
            SchemaKind::List(list) => Some(list.items),
            _ => None,
        };
        let elements = match rule {
            OutputRule::Declared => return None,
            OutputRule::SameElements => items(self, first)?,
            OutputRule::InnerElements => {
                let inner = items(self, first)?;
                items(self, inner)?
            }
        };
        Some(self.types.list_of(elements))
    }

    /// `RL5407` for `list.sort` of a list whose elements can be neither numbers nor strings (a
    /// tool's list of objects): every run that sorts a non-empty one fails the same way. A list
    /// whose elements may be either, or null, is left to the run, where it may well sort.
    fn check_sortable(&mut self, items: ExprId) {
        let Ty::Schema(list) = self.ty(items) else { return };
        let SchemaKind::List(list) = self.types.kind(self.types.resolve(list)) else { return };
        let variants = self.types.variants(list.items);
        let sortable = |kind: &SchemaKind| {
            matches!(
                kind,
                SchemaKind::Integer(_)
                    | SchemaKind::Number(_)
                    | SchemaKind::String(_)
                    | SchemaKind::Any
                    | SchemaKind::Null
            )
        };
        if variants.is_empty() || variants.iter().any(|&v| sortable(self.types.kind(v))) {
            return;
        }
        let mut held: Vec<&str> = variants.iter().map(|&v| self.types.kind_name(v)).collect();
        held.sort_unstable();
        held.dedup();
        let held = held.join(" or ");
        self.report(
            Diagnostic::error(
                codes::NOT_SORTABLE,
                self.exprs[items.index()].span,
                format!("`list.sort` sorts numbers or strings, and each element of this list is {held}"),
            )
            .with_help("sort a list of numbers or of strings: take the values to sort by with `for x in xs { return x.key }`"),
        );
    }

    /// `RL5401` for a literal pattern that does not compile: every run would fail the same way.
    /// When the literal has no escapes, the span is the part of the pattern at fault.
    fn check_literal_pattern(&mut self, pattern: ExprId) {
        let expr = &self.exprs[pattern.index()];
        let ExprKind::Const(Value::String(text)) = &expr.kind else { return };
        let Err(error) = stdlib::compile_regex(text) else { return };
        let literal = expr.span;
        let offset = |key: &str| match error.details().get(key) {
            Some(Value::Int(offset)) => u32::try_from(*offset).ok(),
            _ => None,
        };
        let verbatim = self.text(literal).get(1..).and_then(|t| t.strip_suffix('"')) == Some(&**text);
        let span = match (verbatim, offset("start"), offset("end")) {
            (true, Some(start), Some(end)) => Span::new(
                literal.start + 1 + start,
                literal.start + 1 + end.max(start + 1).min(text.len() as u32),
            ),
            _ => literal,
        };
        self.report(
            Diagnostic::error(error.code(), span, error.message().to_owned())
                .with_help("fix the pattern; the regex dialect has no look-around or backreferences (docs/STDLIB.md)")
                .with_note("the pattern is a literal, so it was compiled while checking"),
        );
    }
}
