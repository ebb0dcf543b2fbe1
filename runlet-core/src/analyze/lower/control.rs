//! Control constructs (spec §2.6–2.8): conditions without truthiness, conditionals as lazy arms
//! with narrowing, `for`, `fold` with accumulator unification, `boundary`/`catch`, and `fail`.

use crate::diag::{Applicability, Diagnostic, Edit, Fix, Span, codes};
use crate::schema::SchemaKind;
use crate::syntax::ast::{self, BoundaryExpr, ElseBranch, FoldExpr, ForExpr, IfExpr, IntegerClause};
use crate::value::{Rank, Value};

use super::super::hir::{BindingKind, ExprId, ExprKind, Origin, RegionId, RegionKind, Step};
use super::super::types::Ty;
use super::{At, Context, Expect, Lowerer, NullGuard, is_path};

impl Lowerer<'_> {
    /// A condition: Boolean, checked at run time (`ExpectBoolean`) when its schema is `Any`, an
    /// error (`RL2302`) when it is known not to be Boolean.
    pub(super) fn condition(&mut self, e: &ast::Expr, what: &str) -> ExprId {
        let value = self.expr(e, Expect::Nothing);
        let Ty::Schema(schema) = self.ty(value) else { return value };
        if self.types.is_any(schema) {
            let at = self.at(e);
            let boolean = self.types.boolean;
            return self.push(ExprKind::ExpectBoolean(value), Ty::Schema(boolean), Origin::Derived, &at);
        }
        let variants = self.types.variants(schema);
        if variants.iter().all(|&v| matches!(self.types.kind(v), SchemaKind::Boolean(_))) {
            return value;
        }
        let text = self.text(e.span).to_owned();
        let nullable = variants.iter().any(|&v| matches!(self.types.kind(v), SchemaKind::Null));
        let (test, help) =
            if nullable && variants.iter().any(|&v| matches!(self.types.kind(v), SchemaKind::Boolean(_))) {
                (format!("{text} == true"), "it may be null: compare with `true`")
            } else {
                match variants.first().map(|&v| self.types.kind(v)) {
                    Some(SchemaKind::String(_)) => (format!("{text} != \"\""), "compare the text explicitly"),
                    Some(SchemaKind::List(_)) => (format!("{text} != []"), "compare the list with `[]`"),
                    Some(SchemaKind::Integer(_) | SchemaKind::Number(_)) => {
                        (format!("{text} != 0"), "compare the number explicitly")
                    }
                    Some(SchemaKind::Null) => (format!("{text} != null"), "test for null explicitly"),
                    Some(SchemaKind::Object(_) | SchemaKind::Map(_)) => {
                        (format!("{text} != {{}}"), "test a property, or compare with `{}`")
                    }
                    _ => (format!("{text} != null"), "compare explicitly to get a Boolean"),
                }
            };
        let mut diagnostic = Diagnostic::error(
            codes::CONDITION_NOT_BOOLEAN,
            e.span,
            format!(
                "{what} must be a Boolean, but {} is {}",
                self.describe(e.span),
                self.types.display(schema)
            ),
        )
        .with_help(format!("Runlet has no truthiness: {help}"));
        if is_path(&text) {
            diagnostic = diagnostic.with_fix(Fix::new(
                format!("test `{test}`"),
                Applicability::MaybeIncorrect,
                vec![Edit { span: e.span, replacement: test }],
            ));
        }
        self.report(diagnostic);
        value
    }

    /// `then if condition [else otherwise]`: each arm a lazy region, narrowed by the condition.
    pub(super) fn postfix_conditional(
        &mut self,
        e: &ast::Expr,
        then: &ast::Expr,
        condition: &ast::Expr,
        otherwise: Option<&ast::Expr>,
        expect: Expect<'_>,
    ) -> ExprId {
        let at = self.at(e);
        let guard = self.null_guard(e, then, condition, otherwise);
        let outer = std::mem::replace(&mut self.null_guard, guard);
        let cond = self.condition(condition, "the condition");
        self.null_guard = outer;
        let facts = self.facts(condition);
        let mark = self.scopes.narrow(&facts.when_true);
        let then_region = self.arm(then.span, |lowerer| lowerer.expr(then, expect));
        self.scopes.forget(mark);
        let mark = self.scopes.narrow(&facts.when_false);
        let else_region = match otherwise {
            Some(otherwise) => self.arm(otherwise.span, |lowerer| lowerer.expr(otherwise, expect)),
            None => self.null_arm(&at, expect),
        };
        self.scopes.forget(mark);
        self.conditional(cond, then_region, else_region, &at)
    }

    /// The conditional `e` as a [`NullGuard`], when its condition compares a value with `null`.
    fn null_guard(
        &self,
        e: &ast::Expr,
        then: &ast::Expr,
        condition: &ast::Expr,
        otherwise: Option<&ast::Expr>,
    ) -> Option<NullGuard> {
        let comparison = condition.unparenthesized();
        let ast::ExprKind::Binary(op, left, right) = &comparison.kind else { return None };
        if ![left, right].iter().any(|side| matches!(side.unparenthesized().kind, ast::ExprKind::Null)) {
            return None;
        }
        let reads_as = match op {
            ast::BinaryOp::NotEq => self.text(then.span),
            ast::BinaryOp::Eq => otherwise.map_or("null", |otherwise| self.text(otherwise.span)),
            _ => return None,
        };
        Some(NullGuard { comparison: comparison.span, conditional: e.span, reads_as: reads_as.to_owned() })
    }

    /// The implicit `else null` of a conditional without `else`.
    fn null_arm(&mut self, at: &At, expect: Expect<'_>) -> RegionId {
        let null_at = At { span: Span::at(at.span.end), path: at.path.clone() };
        self.arm(null_at.span, |lowerer| {
            let null = lowerer.constant_at(Value::Null, &null_at);
            lowerer.meet(null, expect)
        })
    }

    fn conditional(&mut self, condition: ExprId, then: RegionId, otherwise: RegionId, at: &At) -> ExprId {
        let results = [self.regions[then.index()].result, self.regions[otherwise.index()].result];
        let tys: Vec<Ty> = results.iter().map(|&r| self.ty(r)).collect();
        let ty = self.union_at(&tys, at.span);
        self.push(ExprKind::Conditional { condition, then, otherwise }, ty, Origin::Derived, at)
    }

    pub(super) fn if_expr(&mut self, e: &ast::Expr, if_expr: &IfExpr, expect: Expect<'_>) -> ExprId {
        let at = self.at(e);
        self.if_chain(if_expr, &at, expect)
    }

    fn if_chain(&mut self, if_expr: &IfExpr, at: &At, expect: Expect<'_>) -> ExprId {
        let cond = self.condition(&if_expr.condition, "the `if` condition");
        let facts = self.facts(&if_expr.condition);
        let then = &if_expr.then_block;
        let then_region =
            self.block(RegionKind::Branch, then.span, &then.stmts, &[], facts.when_true.clone(), expect);
        let else_region = match if_expr.else_branch.as_deref() {
            Some(ElseBranch::Block(block)) => {
                self.block(RegionKind::Branch, block.span, &block.stmts, &[], facts.when_false, expect)
            }
            Some(ElseBranch::If { if_expr: inner, span }) => {
                let mark = self.scopes.narrow(&facts.when_false);
                let inner_at = At { span: *span, path: at.path.clone() };
                let region = self.arm(*span, |lowerer| lowerer.if_chain(inner, &inner_at, expect));
                self.scopes.forget(mark);
                region
            }
            None => self.null_arm(at, expect),
        };
        self.conditional(cond, then_region, else_region, at)
    }

    pub(super) fn for_expr(&mut self, e: &ast::Expr, for_expr: &ForExpr) -> ExprId {
        let at = self.at(e);
        let collection = self.expr(&for_expr.iterable, Expect::Nothing);
        let item_ty = self.iteration_item(collection, "for").unwrap_or(Ty::Schema(self.types.any));
        let limit =
            for_expr.limit.as_ref().map(|clause| self.count(clause, "limit", self.options.max_loop_limit));
        let item = self.new_binding(
            &for_expr.item.name,
            for_expr.item.span,
            BindingKind::LoopItem,
            item_ty,
            self.expr_ref(collection).origin,
        );
        self.note_entry_loop(item, collection);
        self.loop_items.push((for_expr.item.name.to_string(), for_expr.iterable.span));
        let body = &for_expr.body;
        let region =
            self.block(RegionKind::ForBody, body.span, &body.stmts, &[item], Vec::new(), Expect::Nothing);
        let result = self.regions[region.index()].result;
        let ty = match self.ty(result) {
            Ty::Schema(schema) => Ty::Schema(self.types.list_of(schema)),
            Ty::Never => Ty::Schema(self.types.empty_list),
        };
        let ty = if self.ty(collection) == Ty::Never { Ty::Never } else { ty };
        self.push(ExprKind::For { item, collection, limit, body: region }, ty, Origin::Derived, &at)
    }

    pub(super) fn fold(&mut self, e: &ast::Expr, fold: &FoldExpr) -> ExprId {
        let at = self.at(e);
        let init = self.expr(&fold.init, Expect::Nothing);
        let collection = self.expr(&fold.iterable, Expect::Nothing);
        let item_ty = self.iteration_item(collection, "fold").unwrap_or(Ty::Schema(self.types.any));
        // The keyed-accumulation idiom (spec §2.7.2): an `{}` seed merged with computed-key
        // entries and read by key in the body is read there as the map it widens to, so
        // `acc[key] if key in acc else 0` type-checks before the widening.
        let init_ty = match &fold.init.kind {
            ast::ExprKind::Object(items) if items.is_empty() && self.keyed_accumulation(fold) => {
                Ty::Schema(self.types.map_of(self.types.any))
            }
            _ => self.ty(init),
        };
        let accumulator = self.new_binding(
            &fold.acc.name,
            fold.acc.span,
            BindingKind::FoldAccumulator,
            init_ty,
            Origin::Derived,
        );
        self.accumulator_seeds.push((accumulator, fold.init.span));
        let item = self.new_binding(
            &fold.item.name,
            fold.item.span,
            BindingKind::LoopItem,
            item_ty,
            self.expr_ref(collection).origin,
        );
        self.note_entry_loop(item, collection);
        let body = &fold.body;
        let region = self.block(
            RegionKind::FoldBody,
            body.span,
            &body.stmts,
            &[accumulator, item],
            Vec::new(),
            Expect::Nothing,
        );
        let ty = self.unify_accumulator(fold, init, region, accumulator);
        self.ignored_accumulator_lint(region, accumulator, &fold.acc.name);
        self.push(
            ExprKind::Fold { accumulator, init, item, collection, body: region },
            ty,
            Origin::Derived,
            &at,
        )
    }

    /// Whether the fold's body merges computed-key entries (`[key]: value`, the only place a `]`
    /// is directly followed by `:`) and reads the accumulator by key (`acc[…]`, `… in acc`).
    fn keyed_accumulation(&self, fold: &FoldExpr) -> bool {
        use crate::syntax::token::{Keyword, TokenKind};
        let source = self.text(fold.body.span);
        let tokens = crate::syntax::lexer::lex(source).tokens;
        let is_acc = |t: &crate::syntax::token::Token| {
            t.kind == TokenKind::Ident && &source[t.span.range()] == fold.acc.name.as_str()
        };
        let computed =
            tokens.windows(2).any(|p| p[0].kind == TokenKind::RBracket && p[1].kind == TokenKind::Colon);
        let read = tokens.windows(2).any(|p| {
            (is_acc(&p[0]) && p[1].kind == TokenKind::LBracket)
                || (p[0].kind == TokenKind::Keyword(Keyword::In) && is_acc(&p[1]))
        });
        computed && read
    }

    /// The accumulator keeps one schema (spec §2.7.2): the body's result converts back to the
    /// initial value's schema, or — the one widening — the initial value converts structurally
    /// into the body's schema, which the accumulator then adopts. Otherwise `RL2313`.
    fn unify_accumulator(
        &mut self,
        fold: &FoldExpr,
        init: ExprId,
        region: RegionId,
        accumulator: super::super::hir::BindingId,
    ) -> Ty {
        let result = self.regions[region.index()].result;
        let (Ty::Schema(initial), Ty::Schema(body)) = (self.ty(init), self.ty(result)) else {
            return self.ty(init);
        };
        let back = self.fitter.fit(&self.types, body, initial);
        if back.as_ref().is_ok_and(|fit| fit.is_identity()) {
            return Ty::Schema(initial);
        }
        let widens = self.fitter.fit(&self.types, initial, body);
        if widens.is_ok_and(|fit| fit.rank <= Rank::Structural) {
            self.bindings[accumulator.index()].schema = body;
            self.binding_facts[accumulator.index()].ty = Ty::Schema(body);
            return Ty::Schema(body);
        }
        if back.is_ok() {
            let context = Context::new(format!("the accumulator `{}`", fold.acc.name));
            let previous = std::mem::replace(&mut self.current, region);
            let converted = self.coerce(result, initial, &context);
            self.current = previous;
            self.regions[region.index()].result = converted;
            return Ty::Schema(initial);
        }
        let span = self.expr_ref(result).span;
        self.report(
            Diagnostic::error(
                codes::FOLD_ACCUMULATOR_MISMATCH,
                span,
                format!(
                    "the `fold` body returns {}, which does not convert back to the accumulator `{}` ({})",
                    self.types.display(body),
                    fold.acc.name,
                    self.types.display(initial)
                ),
            )
            .with_label(fold.init.span, "the accumulator starts here")
            .with_help("start the accumulator with a value of the schema the body returns, or return a value of the accumulator's schema"),
        );
        Ty::Schema(initial)
    }

    /// `RL1206`: an effectful statement of a fold body that never reads the accumulator.
    fn ignored_accumulator_lint(
        &mut self,
        region: RegionId,
        accumulator: super::super::hir::BindingId,
        name: &str,
    ) {
        let steps = self.regions[region.index()].steps.clone();
        for step in steps {
            let Step::Let { binding, value, root: true } = step else { continue };
            if !self.expr_ref(value).effectful || self.reads(value, accumulator) {
                continue;
            }
            let statement =
                self.binding_facts[binding.index()].statement.unwrap_or(self.bindings[binding.index()].span);
            let binding_name = self.bindings[binding.index()].name.clone();
            self.report(
                Diagnostic::warning(
                    codes::FOLD_EFFECT_IGNORES_ACCUMULATOR,
                    statement,
                    format!("`{binding_name}` has an effect but does not read the accumulator `{name}`, so `fold` runs it one iteration at a time"),
                )
                .with_help("if the iterations do not depend on each other, use `for` with a `limit` to run them concurrently"),
            );
        }
    }

    pub(super) fn boundary(&mut self, e: &ast::Expr, boundary: &BoundaryExpr, expect: Expect<'_>) -> ExprId {
        let at = self.at(e);
        let retries =
            boundary.retry.as_ref().map_or(0, |clause| self.count(clause, "retry", self.options.max_retries));
        self.boundary_depth += 1;
        let body = self.block(
            RegionKind::BoundaryBody,
            boundary.body.span,
            &boundary.body.stmts,
            &[],
            Vec::new(),
            expect,
        );
        self.boundary_depth -= 1;
        let error_schema = self.error_schema();
        let catch = &boundary.catch;
        let error = self.new_binding(
            &catch.binding.name,
            catch.binding.span,
            BindingKind::CatchError,
            Ty::Schema(error_schema),
            Origin::Derived,
        );
        let catch_region = self.block(
            RegionKind::CatchBody,
            catch.body.span,
            &catch.body.stmts,
            &[error],
            Vec::new(),
            expect,
        );
        let results = [self.regions[body.index()].result, self.regions[catch_region.index()].result];
        let tys: Vec<Ty> = results.iter().map(|&r| self.ty(r)).collect();
        let ty = self.union_at(&tys, e.span);
        self.push(ExprKind::Boundary { retries, body, error, catch: catch_region }, ty, Origin::Derived, &at)
    }

    /// `fail(code, message[, details])`: never produces a value.
    pub(super) fn fail(&mut self, e: &ast::Expr, args: &[ast::Expr]) -> ExprId {
        let at = self.at(e);
        let string = self.types.string;
        let any_map = self.types.any_map;
        let contexts = [
            (string, Context::new("the code of `fail`")),
            (string, Context::new("the message of `fail`")),
            (any_map, Context::new("the details of `fail`")),
        ];
        let mut parts: Vec<ExprId> = args
            .iter()
            .zip(&contexts)
            .map(|(arg, (schema, context))| self.expr(arg, Expect::Schema(*schema, context)))
            .collect();
        if parts.len() < 2 {
            return self.poison(&at);
        }
        let details = (parts.len() > 2).then(|| parts.remove(2));
        let (code, message) = (parts[0], parts[1]);
        self.push(ExprKind::Fail { code, message, details }, Ty::Never, Origin::Derived, &at)
    }

    /// The count of `limit N` / `retry N`, at most `maximum` (`RL4005` beyond it).
    fn count(&mut self, clause: &IntegerClause, what: &str, maximum: u32) -> u32 {
        match clause.digits.parse::<u32>() {
            Ok(count) if count <= maximum => count,
            _ => {
                self.report(
                    Diagnostic::error(
                        codes::COUNT_ABOVE_MAXIMUM,
                        clause.value_span,
                        format!("`{what} {}` is above this host's maximum of {maximum}", clause.digits),
                    )
                    .with_help(format!("use a `{what}` of at most {maximum}"))
                    .with_fix(Fix::new(
                        format!("use `{what} {maximum}`"),
                        Applicability::MaybeIncorrect,
                        vec![Edit { span: clause.value_span, replacement: maximum.to_string() }],
                    ))
                    .with_note(format!(
                        "the limit is `max_{}` in the analyze options",
                        if what == "limit" { "loop_limit" } else { "retries" }
                    )),
                );
                maximum
            }
        }
    }
}
