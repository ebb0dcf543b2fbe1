//! Expressions: the dispatch, literals, and list and object literals checked against what their
//! context expects (per element and per property, so errors point at the property).

use std::sync::Arc;

use crate::diag::{Applicability, Diagnostic, Edit, Fix, Span, codes};
use crate::schema::{Property, SchemaId, SchemaKind};
use crate::syntax::ast::{self, ObjectItem, ObjectKey};
use crate::value::{List, Object, Value};

use super::super::candidates::{Candidate, clear_winner, rank};
use super::super::hir::{BindingId, ExprId, ExprKind, ObjectEntry, Origin};
use super::super::types::{PropertyLookup, Ty};
use super::{At, Context, Expect, Lowerer};

impl Lowerer<'_> {
    /// Lowers `e`; its value meets `expect` (by conversion, or by checking its parts).
    pub(super) fn expr(&mut self, e: &ast::Expr, expect: Expect<'_>) -> ExprId {
        if !self.spend() {
            self.exhausted_at.get_or_insert(e.span);
            let at = self.at(e);
            return self.poison(&at);
        }
        use ast::ExprKind as K;
        let inferred = match &e.kind {
            K::Paren(inner) => return self.expr(inner, expect),
            K::List(items) => return self.list(e, items, expect),
            K::Object(items) => return self.object(e, items, expect),
            K::Conditional { then, condition, otherwise } => {
                return self.postfix_conditional(e, then, condition, otherwise.as_deref(), expect);
            }
            K::If(if_expr) => return self.if_expr(e, if_expr, expect),
            K::Boundary(boundary) => return self.boundary(e, boundary, expect),
            K::Ident(ident) => return self.name(e, ident, expect),
            K::Null => self.literal(e, Value::Null),
            K::Bool(b) => self.literal(e, Value::Bool(*b)),
            K::Integer(digits) => self.integer(e, digits, false),
            K::Number(text) => self.number(e, text),
            K::String(text) => self.literal(e, Value::string(text.as_str())),
            K::Unary(op, operand) => self.unary(e, *op, operand),
            K::Binary(op, left, right) => self.binary(e, *op, left, right),
            K::Member { object, name } => self.member(e, object, name),
            K::Index { object, index } => self.index(e, object, index),
            K::Call { callee, args } => self.call(e, callee, args),
            K::For(for_expr) => self.for_expr(e, for_expr),
            K::Fold(fold) => self.fold(e, fold),
            K::Fail(args) => self.fail(e, args),
            K::Error => {
                let at = self.at(e);
                self.poison(&at)
            }
        };
        self.meet(inferred, expect)
    }

    /// Converts `id` to what `expect` asks for, if anything.
    pub(super) fn meet(&mut self, id: ExprId, expect: Expect<'_>) -> ExprId {
        match expect {
            Expect::Nothing => id,
            Expect::Schema(schema, context) => self.coerce(id, schema, context),
        }
    }

    pub(super) fn literal(&mut self, e: &ast::Expr, value: Value) -> ExprId {
        let at = self.at(e);
        self.constant_at(value, &at)
    }

    /// A folded constant, unless it crosses a value-size cap: every run would fail building it,
    /// so that is the cap's error here, and folding stops at the same sizes a run does.
    pub(super) fn constant_at(&mut self, value: Value, at: &At) -> ExprId {
        if let Err(error) = self.options.value_caps.check(&value) {
            return self.folding_failed(error, at);
        }
        let schema = self.types.of_value(&value);
        self.push(ExprKind::Const(value), Ty::Schema(schema), Origin::Literal, at)
    }

    /// An integer literal (`negative`: under a unary minus, so `-9223372036854775808` fits).
    pub(super) fn integer(&mut self, e: &ast::Expr, digits: &str, negative: bool) -> ExprId {
        let text = if negative { format!("-{digits}") } else { digits.to_owned() };
        match text.parse::<i64>() {
            Ok(value) => self.literal(e, Value::Int(value)),
            Err(_) => {
                self.report(
                    Diagnostic::error(
                        codes::LITERAL_OUT_OF_RANGE,
                        e.span,
                        format!("the integer `{text}` is outside the 64-bit Integer range"),
                    )
                    .with_help("Integers are 64-bit; write a Number (such as `1e20`) or a String instead"),
                );
                let at = self.at(e);
                self.poison(&at)
            }
        }
    }

    fn number(&mut self, e: &ast::Expr, text: &str) -> ExprId {
        match text.parse::<f64>().ok().and_then(Value::number) {
            Some(value) => self.literal(e, value),
            None => {
                self.report(
                    Diagnostic::error(
                        codes::LITERAL_OUT_OF_RANGE,
                        e.span,
                        format!("the number `{text}` is too large to be a finite 64-bit float"),
                    )
                    .with_help("Numbers are IEEE-754 binary64; write a smaller number or a String"),
                );
                let at = self.at(e);
                self.poison(&at)
            }
        }
    }

    /// The expected schema when it is of a kind `pick` accepts, possibly nullable. A union with
    /// other variants is not pushed into a literal: which variant it meets is the conversion
    /// ranking's decision, made on the whole literal (spec §3.3).
    fn expected_variant(&self, expect: Expect<'_>, pick: fn(&SchemaKind) -> bool) -> Option<SchemaId> {
        let Expect::Schema(schema, _) = expect else { return None };
        let mut variants = self
            .types
            .variants(schema)
            .into_iter()
            .filter(|&v| !matches!(self.types.kind(v), SchemaKind::Null));
        let only = variants.next()?;
        (variants.next().is_none() && pick(self.types.kind(only))).then_some(only)
    }

    fn list(&mut self, e: &ast::Expr, items: &[ast::Expr], expect: Expect<'_>) -> ExprId {
        let at = self.at(e);
        let errors = self.errors;
        let target = self.expected_variant(expect, |k| matches!(k, SchemaKind::List(_)));
        let element = match (target, expect) {
            (Some(list), Expect::Schema(_, context)) => match self.types.kind(list) {
                SchemaKind::List(list) => Some((list.items, context.element())),
                _ => None,
            },
            _ => None,
        };
        let ids: Vec<ExprId> = items
            .iter()
            .map(|item| match &element {
                Some((schema, context)) => self.expr(item, Expect::Schema(*schema, context)),
                None => self.expr(item, Expect::Nothing),
            })
            .collect();
        let tys: Vec<Ty> = ids.iter().map(|&id| self.ty(id)).collect();
        let ty = if tys.contains(&Ty::Never) {
            Ty::Never
        } else if ids.is_empty() {
            Ty::Schema(self.types.empty_list)
        } else {
            let items = self.union_at(&tys, e.span);
            Ty::Schema(match items {
                Ty::Schema(items) => self.types.list_of(items),
                Ty::Never => self.types.empty_list,
            })
        };
        let constants: Option<Vec<Value>> = ids.iter().map(|&id| self.constant(id).cloned()).collect();
        let id = match constants.and_then(|values| List::new(values).ok()) {
            Some(list) => self.push(ExprKind::Const(Value::List(list)), ty, Origin::Literal, &at),
            None => self.push(ExprKind::List(ids), ty, Origin::Derived, &at),
        };
        if self.errors > errors { id } else { self.meet(id, expect) }
    }

    fn object(&mut self, e: &ast::Expr, items: &[ObjectItem], expect: Expect<'_>) -> ExprId {
        let at = self.at(e);
        let errors = self.errors;
        let target =
            self.expected_variant(expect, |k| matches!(k, SchemaKind::Object(_) | SchemaKind::Map(_)));
        let context = match expect {
            Expect::Schema(_, context) => Some(context),
            Expect::Nothing => None,
        };
        let mut entries = Vec::with_capacity(items.len());
        let mut properties = Vec::new();
        let mut value_tys = Vec::new();
        let mut computed = false;
        let mut given: Vec<Arc<str>> = Vec::new();
        // Required properties an undeclared key's rename fix supplies (`subjet` for `subject`):
        // not reported missing as well, so one misspelt key is one error.
        let mut renamed: Vec<Arc<str>> = Vec::new();
        let mut reported = false;
        let keys: Vec<Arc<str>> = items
            .iter()
            .filter_map(|item| match item {
                ObjectItem::Field { key, .. } => Some(Arc::from(key.name.as_str())),
                ObjectItem::Shorthand(ident) => Some(Arc::from(ident.name.as_str())),
                ObjectItem::Computed { .. } => None,
            })
            .collect();
        for item in items {
            match item {
                ObjectItem::Field { key, value, .. } => {
                    let expectation =
                        self.field_expectation(target, context, key, &keys, &mut reported, &mut renamed);
                    let id = match &expectation {
                        Some((schema, context)) => self.expr(value, Expect::Schema(*schema, context)),
                        None => self.expr(value, Expect::Nothing),
                    };
                    self.add_field(&key.name, id, &mut entries, &mut properties, &mut value_tys, &mut given);
                }
                ObjectItem::Shorthand(ident) => {
                    let key = ObjectKey { name: ident.name.clone(), quoted: false, span: ident.span };
                    let expectation =
                        self.field_expectation(target, context, &key, &keys, &mut reported, &mut renamed);
                    let shorthand_at = At { span: ident.span, path: at.path.clone() };
                    let value = self.reference(ident, &shorthand_at, true);
                    let id = match &expectation {
                        Some((schema, context)) => self.coerce(value, *schema, context),
                        None => value,
                    };
                    self.add_field(
                        &ident.name,
                        id,
                        &mut entries,
                        &mut properties,
                        &mut value_tys,
                        &mut given,
                    );
                }
                ObjectItem::Computed { key, value, .. } => {
                    computed = true;
                    let key_id = self.expr(key, Expect::Nothing);
                    self.check_computed_key(key_id);
                    let values = target.and_then(|t| match self.types.kind(t) {
                        SchemaKind::Map(values) => Some(*values),
                        _ => None,
                    });
                    let id = match (values, context) {
                        (Some(values), Some(context)) => {
                            let child = context.element();
                            self.expr(value, Expect::Schema(values, &child))
                        }
                        _ => self.expr(value, Expect::Nothing),
                    };
                    value_tys.push(self.ty(id));
                    entries.push(ObjectEntry::Computed { key: key_id, value: id });
                }
            }
        }
        if let (Some(target), Some(context), false) = (target, context, computed) {
            given.extend(renamed);
            reported |= self.missing_properties(e, items, target, context, &given);
        }
        let ty = if value_tys.contains(&Ty::Never) {
            Ty::Never
        } else if computed {
            let values = self.union_at(&value_tys, e.span);
            let values = match values {
                Ty::Schema(values) => values,
                Ty::Never => self.types.any,
            };
            Ty::Schema(self.types.map_of(values))
        } else {
            Ty::Schema(self.types.object(properties))
        };
        let id = match self.constant_object(&entries) {
            Some(object) => self.push(ExprKind::Const(Value::Object(object)), ty, Origin::Literal, &at),
            None => self.push(ExprKind::Object(entries), ty, Origin::Derived, &at),
        };
        if reported || self.errors > errors { id } else { self.meet(id, expect) }
    }

    fn add_field(
        &mut self,
        key: &str,
        id: ExprId,
        entries: &mut Vec<ObjectEntry>,
        properties: &mut Vec<Property>,
        value_tys: &mut Vec<Ty>,
        given: &mut Vec<Arc<str>>,
    ) {
        let ty = self.ty(id);
        value_tys.push(ty);
        let schema = match ty {
            Ty::Schema(schema) => schema,
            Ty::Never => self.types.any,
        };
        properties.push(Property::new(key, schema, true));
        given.push(Arc::from(key));
        entries.push(ObjectEntry::Static { key: key.to_owned(), value: id });
    }

    /// The object a literal with only constant static entries folds to.
    fn constant_object(&self, entries: &[ObjectEntry]) -> Option<Object> {
        let mut pairs = Vec::with_capacity(entries.len());
        for entry in entries {
            match entry {
                ObjectEntry::Static { key, value } => {
                    pairs.push((Arc::from(key.as_str()), self.constant(*value)?.clone()))
                }
                ObjectEntry::Computed { .. } => return None,
            }
        }
        Object::from_pairs(pairs).ok()
    }

    /// What a property of an object literal must be, given the expected object: the property's
    /// schema (accepting null when an absent optional property may be written as null), the
    /// map's values, or nothing. A key the closed target does not declare is reported here.
    fn field_expectation(
        &mut self,
        target: Option<SchemaId>,
        context: Option<&Context>,
        key: &ObjectKey,
        given: &[Arc<str>],
        reported: &mut bool,
        renamed: &mut Vec<Arc<str>>,
    ) -> Option<(SchemaId, Context)> {
        let (target, context) = (target?, context?);
        let child = context.property(&key.name);
        match self.types.property(target, &key.name) {
            PropertyLookup::Found { schema, required } => {
                let schema = if required || self.types.admits_null(schema) {
                    schema
                } else {
                    match self.types.union(&[Ty::Schema(schema), Ty::Schema(self.types.null)]).0 {
                        Ty::Schema(with_null) => with_null,
                        Ty::Never => schema,
                    }
                };
                Some((schema, child))
            }
            PropertyLookup::Additional(schema) => Some((schema, child)),
            PropertyLookup::Missing => {
                *reported = true;
                renamed.extend(self.undeclared_key(target, context, key, given));
                None
            }
            PropertyLookup::NotAnObject => None,
        }
    }

    /// `RL2207`: a key the expected closed object does not declare, with the closest
    /// undeclared-yet properties and a rename fix when one clearly is meant (returned).
    fn undeclared_key(
        &mut self,
        target: SchemaId,
        context: &Context,
        key: &ObjectKey,
        given: &[Arc<str>],
    ) -> Option<Arc<str>> {
        let pool: Vec<Candidate> = self
            .types
            .property_names(target)
            .into_iter()
            .filter(|(name, _)| !given.contains(name))
            .map(|(name, aliases)| Candidate { aliases, ..Candidate::named(name.as_ref()) })
            .collect();
        let ranked = rank(&key.name, pool);
        let mut diagnostic = Diagnostic::error(
            codes::UNDECLARED_PROPERTY,
            key.span,
            format!("{} has no property `{}`", context.what(self.registry), key.name),
        )
        .with_note(format!("accepted: {}", self.types.display(target)))
        .with_candidates(ranked.iter().take(3).map(|r| r.candidate.name.clone()));
        match clear_winner(&ranked) {
            Some(best) => {
                let name = &best.candidate.name;
                let replacement = if key.quoted {
                    serde_json::Value::from(name.as_str()).to_string()
                } else {
                    name.clone()
                };
                diagnostic = diagnostic.with_help(format!("replace `{}` with `{name}`", key.name)).with_fix(
                    Fix::machine(format!("replace `{}` with `{name}`", key.name), key.span, replacement),
                );
                let renamed = Arc::from(name.as_str());
                self.report(diagnostic);
                Some(renamed)
            }
            None => {
                self.report(diagnostic.with_help("remove the property, or use one the schema declares"));
                None
            }
        }
    }

    /// `RL2208`: required properties of the expected object the literal does not give. Returns
    /// whether anything was reported.
    fn missing_properties(
        &mut self,
        e: &ast::Expr,
        items: &[ObjectItem],
        target: SchemaId,
        context: &Context,
        given: &[Arc<str>],
    ) -> bool {
        let SchemaKind::Object(object) = self.types.kind(target) else { return false };
        let missing: Vec<(Arc<str>, SchemaId)> = object
            .properties
            .iter()
            .filter(|p| p.required && !given.contains(&p.name))
            .map(|p| (p.name.clone(), p.schema))
            .collect();
        if missing.is_empty() {
            return false;
        }
        let names: Vec<String> = missing.iter().map(|(name, _)| format!("`{name}`")).collect();
        let subject = context.owner(self.registry).unwrap_or_else(|| context.what(self.registry));
        let plural = if missing.len() == 1 { "property" } else { "properties" };
        let mut fields = Vec::new();
        let mut placeholders = false;
        let root = context.tool().map(|tool| self.registry.tool(tool).name.root().to_owned());
        for (name, schema) in &missing {
            match self.value_for(name, *schema, root.as_deref()) {
                Some((value, binding)) => {
                    self.suggested.extend(binding);
                    fields.push(if value == **name { value } else { format!("{name}: {value}") });
                }
                None => {
                    placeholders = true;
                    fields.push(format!("{name}: <{}>", self.types.display(*schema)));
                }
            }
        }
        let addition = fields.join(", ");
        let (span, replacement) = match items.last() {
            Some(last) => (Span::at(last.span().end), format!(", {addition}")),
            None => (e.span, format!("{{ {addition} }}")),
        };
        let applicability =
            if placeholders { Applicability::HasPlaceholders } else { Applicability::MaybeIncorrect };
        let diagnostic = Diagnostic::error(
            codes::REQUIRED_PROPERTY_MISSING,
            e.span,
            format!("{subject} requires {plural} {}", names.join(", ")),
        )
        .with_help(format!("add `{addition}`"))
        .with_note(format!("accepted input: {}", self.types.display(target)))
        .with_shapes([self.types.display(target)], None)
        .with_fix(Fix::new(
            format!("add `{addition}`"),
            applicability,
            vec![Edit { span, replacement }],
        ));
        self.report(diagnostic);
        true
    }

    /// A value in scope that could give the missing property `name` of schema `schema`: a
    /// binding or host input of that name, else a binding's property of that name, else its `id`
    /// (spec §9.2's `add owner: linear_me.id`); bindings named after the tool's namespace `root`
    /// first, then the latest declared.
    fn value_for(
        &mut self,
        name: &str,
        schema: SchemaId,
        root: Option<&str>,
    ) -> Option<(String, Option<BindingId>)> {
        let fits =
            |lowerer: &mut Self, from: SchemaId| lowerer.fitter.fit(&lowerer.types, from, schema).is_ok();
        if let Some(binding) = self.scopes.lookup(name) {
            if let Ty::Schema(from) = self.binding_facts[binding.index()].ty {
                if fits(self, from) {
                    return Some((name.to_owned(), Some(binding)));
                }
            }
        } else if self.input_available(name) {
            return Some((name.to_owned(), None));
        }
        let mut best: Option<((u8, bool, BindingId), String)> = None;
        for (binding_name, binding) in self.scopes.visible() {
            let Ty::Schema(from) = self.binding_facts[binding.index()].ty else { continue };
            let SchemaKind::Object(object) = self.types.kind(from).clone() else { continue };
            for (rank, property) in [(2, name), (1, "id")] {
                let Some(p) = object.property(property).filter(|p| p.required) else { continue };
                if !fits(self, p.schema) {
                    continue;
                }
                let key = (rank, root.is_some_and(|r| binding_name.contains(r)), binding);
                if best.as_ref().is_none_or(|(k, _)| key > *k) {
                    best = Some((key, format!("{binding_name}.{property}")));
                }
            }
        }
        best.map(|((_, _, binding), value)| (value, Some(binding)))
    }

    /// `RL2315`: a computed key that can be neither a String nor a scalar.
    fn check_computed_key(&mut self, key: ExprId) {
        let Ty::Schema(schema) = self.ty(key) else { return };
        let fine = self.types.variants(schema).into_iter().all(|v| {
            matches!(
                self.types.kind(v),
                SchemaKind::Any
                    | SchemaKind::String(_)
                    | SchemaKind::Integer(_)
                    | SchemaKind::Number(_)
                    | SchemaKind::Boolean(_)
            )
        });
        if fine {
            return;
        }
        let span = self.expr_ref(key).span;
        let what = self.describe(span);
        self.report(
            Diagnostic::error(
                codes::INVALID_COMPUTED_KEY_KIND,
                span,
                format!("{what} cannot be an object key: it is {}", self.types.display(schema)),
            )
            .with_help("a computed key must be a String, Integer, Number or Boolean; use one of its properties, such as its id"),
        );
    }

    /// The union of `tys`, warning (`RL2308`) at `span` when it had to widen to `Any`.
    pub(super) fn union_at(&mut self, tys: &[Ty], span: Span) -> Ty {
        let (ty, loss) = self.types.union(tys);
        if let Some(loss) = loss {
            self.report(
                Diagnostic::warning(
                    codes::UNION_WIDENED,
                    span,
                    format!(
                        "this value can have {} different schemas, more than the limit of {}; it is checked as any value",
                        loss.variants, loss.limit
                    ),
                )
                .with_help("give the alternatives a common shape, or split the value")
                .with_note("the limit is `max_union_variants` in the analyze options"),
            );
        }
        ty
    }
}
