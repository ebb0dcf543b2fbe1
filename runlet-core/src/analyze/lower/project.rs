//! Projection and indexing (spec §2.4.2, §3.2): properties checked against every variant of the
//! value's schema (`RL2103` with the closest properties, `RL2205` for partial properties with a
//! discriminator-based fix), the index table, and what `for` iterates over.

use std::sync::Arc;

use crate::diag::{Applicability, Diagnostic, Edit, Fix, Span, codes};
use crate::schema::{Constant, SchemaId, SchemaKind, constant_text, discriminant_value};
use crate::syntax::ast::{self, FieldName};
use crate::value::{self, Value};

use super::super::candidates::{Candidate, Ranked, clear_winner, rank};
use super::super::foreign;
use super::super::hir::{BindingId, ExprId, ExprKind, Origin, ProjectKey};
use super::super::types::{NamedProperty, PropertyLookup, Ty};
use super::{At, Expect, Inherited, Lowerer, is_path};

/// A property read `object.name`: the lowered target, its schema, the name and its span.
#[derive(Debug, Clone, Copy)]
struct Read<'e> {
    target: ExprId,
    schema: SchemaId,
    name: &'e str,
    span: Span,
    object: &'e ast::Expr,
}

impl Lowerer<'_> {
    pub(super) fn member(&mut self, e: &ast::Expr, object: &ast::Expr, name: &FieldName) -> ExprId {
        if let Some(path) = self.registry_path(e) {
            return self.registry_value(e, &path);
        }
        // Short names are held inline: no allocation per property read.
        let read = matches!(object.kind, ast::ExprKind::Ident(_)).then(|| name.name.clone());
        let outer = std::mem::replace(&mut self.reading, read);
        let target = self.expr(object, Expect::Nothing);
        self.reading = outer;
        let at = self.at(e);
        let ty = match self.ty(target) {
            Ty::Never => Ty::Never,
            Ty::Schema(schema) => {
                match self.property_of(&Read { target, schema, name: &name.name, span: name.span, object }) {
                    Some(schema) => Ty::Schema(schema),
                    None => return self.poison(&at),
                }
            }
        };
        self.project(target, ProjectKey::Field(name.name.to_string()), ty, &at)
    }

    /// Adds a projection from `target`, inheriting its origin and the label of its path.
    fn project(&mut self, target: ExprId, key: ProjectKey, ty: Ty, at: &At) -> ExprId {
        let origin = self.expr_ref(target).origin;
        let label = self.expr_facts[target.index()].label;
        let inherited = Inherited { sensitivity: label, label };
        self.push_inheriting(ExprKind::Project { target, key }, ty, origin, at, Some(inherited))
    }

    /// The schema of the property `read` names, or `None` after reporting why it cannot be read.
    fn property_of(&mut self, read: &Read<'_>) -> Option<SchemaId> {
        let variants = self.types.variants(read.schema);
        let mut found = Vec::new();
        let mut lacking = Vec::new();
        let mut declared_somewhere = false;
        for &variant in &variants {
            match self.types.property(variant, read.name) {
                PropertyLookup::Found { schema, .. } => {
                    declared_somewhere |=
                        !matches!(self.types.kind(variant), SchemaKind::Any | SchemaKind::Map(_));
                    found.push(Ty::Schema(schema));
                }
                PropertyLookup::Additional(_) | PropertyLookup::Missing | PropertyLookup::NotAnObject => {
                    lacking.push(variant)
                }
            }
        }
        if lacking.is_empty() {
            return match self.union_at(&found, read.span) {
                Ty::Schema(schema) => Some(schema),
                Ty::Never => None,
            };
        }
        if declared_somewhere
            || (!found.is_empty() && lacking.iter().all(|&v| matches!(self.types.kind(v), SchemaKind::Null)))
        {
            self.partial_property(read, &variants, &lacking);
        } else {
            self.unknown_property(read);
        }
        None
    }

    /// `RL2103`: no variant declares the property (spec §3.4's example).
    fn unknown_property(&mut self, read: &Read<'_>) {
        let Read { target, schema, name, span, object } = *read;
        if !self.search(self.types.property_names(schema).len()) {
            self.report(Diagnostic::error(codes::UNKNOWN_PROPERTY, span, format!("no property `{name}`")));
            return;
        }
        let what = self.describe(object.span);
        let names = self.types.property_names(schema);
        if names.is_empty() {
            let kind = self.types.kind_name(schema);
            let mut diagnostic = Diagnostic::error(
                codes::UNKNOWN_PROPERTY,
                span,
                format!("{what} is {kind}, which has no property `{name}`"),
            );
            // What a length is taken of, ignoring null: text, a list, or neither.
            let variants = self.types.variants(schema);
            let nullable = variants.iter().any(|&v| matches!(self.types.kind(v), SchemaKind::Null));
            let kinds: Vec<&SchemaKind> = variants
                .iter()
                .map(|&v| self.types.kind(v))
                .filter(|k| !matches!(k, SchemaKind::Null))
                .collect();
            let all = |test: fn(&SchemaKind) -> bool| !kinds.is_empty() && kinds.iter().all(|k| test(k));
            let measured = match () {
                () if all(|k| matches!(k, SchemaKind::String(_))) => Some("text.length"),
                () if all(|k| matches!(k, SchemaKind::List(_))) => Some("list.length"),
                () => None,
            };
            let length = foreign::property(name).and(measured).and_then(|f| self.prelude_function(f));
            diagnostic = match (length, foreign::property(name), self.types.kind(schema)) {
                (Some(function), _, _) => {
                    let text = self.text(object.span);
                    let read = Span::new(object.span.start, span.end);
                    // The guard narrows a name or one property of it, no deeper path.
                    let guardable = is_path(text) && text.matches('.').count() <= 1;
                    match (nullable, guardable) {
                        // `text.length` takes no null: the length of a value that may be null,
                        // with 0 for null, for review.
                        (true, true) => {
                            let call = format!("({function}({text}) if {text} != null else 0)");
                            diagnostic
                                .with_help(format!("{what} may be null: `{call}`"))
                                .with_fix(Fix::suggest(format!("call `{function}` where it is not null"), read, call))
                        }
                        (true, false) => diagnostic.with_help(format!(
                            "{what} may be null: bind it, then call `{function}` where it is not null"
                        )),
                        (false, _) => {
                            let call = format!("{function}({text})");
                            diagnostic
                                .with_help(format!("call `{call}`"))
                                .with_fix(Fix::machine(format!("call `{function}`"), read, call))
                        }
                    }
                }
                (None, Some(_), _) if measured == Some("text.length") => diagnostic.with_help(
                    "strings have no length property: call a length intrinsic the host registers (the prelude's `text.length`)",
                ),
                (None, Some(help), _) => diagnostic.with_help(help),
                (None, None, SchemaKind::List(list)) => {
                    let element = list.items;
                    let fix =
                        self.each_element_fix(object, element, name, Span::new(object.span.start, span.end));
                    let diagnostic = diagnostic.with_help(format!(
                        "read `{name}` of each element with `for`: `for item in … {{ return item.{name} }}`"
                    ));
                    match fix {
                        Some(fix) => diagnostic.with_fix(fix),
                        None => diagnostic,
                    }
                }
                _ => diagnostic.with_help("read properties of objects only"),
            };
            self.report(diagnostic.with_note(self.schema_origin(target, schema)));
            return;
        }
        let ranked = ranked_properties(names, name);
        let mut diagnostic = Diagnostic::error(
            codes::UNKNOWN_PROPERTY,
            span,
            format!("property `{name}` does not exist on {what}"),
        );
        if let Some(fix) = self.entry_loop_fix(object, name) {
            diagnostic = diagnostic.with_help(fix.message.clone()).with_fix(fix);
        } else if let Some(best) = clear_winner(&ranked) {
            let replacement = best.candidate.name.clone();
            diagnostic = diagnostic
                .with_help(format!("replace `{name}` with `{replacement}`"))
                .with_fix(Fix::machine(format!("replace `{name}` with `{replacement}`"), span, replacement));
        }
        let closest = closest_properties(&ranked);
        diagnostic = diagnostic.with_candidate_records(closest.iter().map(|name| {
            crate::diag::CandidateRecord { name: name.clone(), namespace: None, kind: "property" }
        }));
        diagnostic = diagnostic.with_note(format!("closest properties: {}", closest.join(", ")));
        if let SchemaKind::Object(object_schema) = self.types.kind(schema) {
            if object_schema.additional.is_some() {
                diagnostic = diagnostic.with_note(format!(
                    "the schema allows undeclared properties: `{}[\"{name}\"]` reads one unchecked",
                    self.text(object.span)
                ));
            }
        }
        self.report(diagnostic.with_note(self.schema_origin(target, schema)));
    }

    /// `for issue in issues { return issue.title }` for `issues.title`, when every element has
    /// the property: the list of each element's value.
    fn each_element_fix(&self, list: &ast::Expr, element: SchemaId, name: &str, read: Span) -> Option<Fix> {
        let has = self
            .types
            .variants(element)
            .iter()
            .all(|&v| matches!(self.types.property(v, name), PropertyLookup::Found { .. }));
        if !has {
            return None;
        }
        let text = self.text(list.span);
        let item = self.fresh(&element_name(text));
        let rewritten = format!("for {item} in {text} {{ return {item}.{name} }}");
        let rewritten = if self.stands_alone(read) { rewritten } else { format!("({rewritten})") };
        Some(Fix::machine(format!("read `{name}` of each element: `{rewritten}`"), read, rewritten))
    }

    /// `RL2205`: some variants (or null) lack the property; the fix narrows first.
    fn partial_property(&mut self, read: &Read<'_>, variants: &[SchemaId], lacking: &[SchemaId]) {
        let Read { target, schema, name, span, object } = *read;
        let what = self.describe(object.span);
        let text = self.text(object.span).to_owned();
        let projection = Span::new(object.span.start, span.end);
        let null_only = lacking.iter().all(|&v| matches!(self.types.kind(v), SchemaKind::Null));
        let mut diagnostic = if null_only {
            Diagnostic::error(
                codes::PARTIAL_PROPERTY,
                span,
                format!("{what} may be null, so it may have no property `{name}`"),
            )
        } else {
            Diagnostic::error(
                codes::PARTIAL_PROPERTY,
                span,
                format!("only some variants of {what} have property `{name}`"),
            )
            .with_note(format!("{what} is {}", self.types.display(schema)))
        };
        let guard = if null_only {
            Some(format!("{text} != null"))
        } else {
            self.discriminant_guard(schema, variants, lacking).map(|(property, values)| {
                values.iter().map(|v| format!("{text}.{property} == {v}")).collect::<Vec<_>>().join(" or ")
            })
        };
        match (guard, is_path(&text)) {
            (Some(guard), true) => {
                let replacement = format!("{text}.{name} if {guard} else null");
                diagnostic =
                    diagnostic.with_help(format!("check first: `{replacement}`")).with_fix(Fix::new(
                        format!("read `{name}` only where it exists"),
                        Applicability::MaybeIncorrect,
                        vec![Edit { span: projection, replacement }],
                    ));
            }
            (Some(guard), false) => {
                diagnostic = diagnostic.with_help(format!(
                    "bind the value to a name, then read `{name}` only when `{guard}` holds"
                ));
            }
            (None, _) => {
                diagnostic =
                    diagnostic.with_help("narrow the value with a condition before reading the property")
            }
        }
        self.report(diagnostic.with_note(self.schema_origin(target, schema)));
    }

    /// The discriminator of `schema` and its values on the variants that have the property.
    fn discriminant_guard(
        &self,
        schema: SchemaId,
        variants: &[SchemaId],
        lacking: &[SchemaId],
    ) -> Option<(String, Vec<String>)> {
        let SchemaKind::Union(union) = self.types.kind(schema) else { return None };
        let property = union.discriminator.clone()?;
        let arena = self.types.arena();
        let values: Option<Vec<String>> = variants
            .iter()
            .filter(|v| !lacking.contains(v))
            .map(|&v| discriminant_value(arena, v, &property).ok().map(|c: Constant| constant_text(&c)))
            .collect();
        Some((property.to_string(), values?))
    }

    /// "schema: `crm.customer` result (registry sha256:4b2d…)" and the like.
    pub(super) fn schema_origin(&self, target: ExprId, schema: SchemaId) -> String {
        match self.expr_ref(target).origin {
            Origin::ToolOutput(tool) => {
                let digest = self.registry.digest().to_string();
                let short: String = digest.chars().take("sha256:".len() + 8).collect();
                format!("schema: `{}` result (registry {short}…)", self.registry.tool(tool).name)
            }
            Origin::Input(input) => format!("schema: host input `{}`", self.host_inputs[input.index()].name),
            Origin::Literal | Origin::Derived => format!("schema: {}", self.types.display(schema)),
        }
    }

    pub(super) fn index(&mut self, e: &ast::Expr, object: &ast::Expr, index: &ast::Expr) -> ExprId {
        let target = self.expr(object, Expect::Nothing);
        let key = self.expr(index, Expect::Nothing);
        let at = self.at(e);
        if let (Some(target_value), Some(key_value)) =
            (self.constant(target).cloned(), self.constant(key).cloned())
        {
            return match value::index(&target_value, &key_value) {
                Ok(result) => self.constant_at(result, &at),
                Err(error) => {
                    let mut diagnostic = Diagnostic::error(error.code(), e.span, error.message().to_owned())
                        .with_note("both sides are literals, so this would fail every run");
                    // A misspelt literal key of a literal object: the one key it is closest to.
                    if let (Value::Object(object), Some(wanted), ast::ExprKind::String(_)) =
                        (&target_value, key_value.as_str(), &index.kind)
                        && let [only] = value::closest_keys(wanted, object.keys()).as_slice()
                    {
                        let replacement = crate::syntax::quote_string(only);
                        diagnostic = diagnostic.with_fix(Fix::machine(
                            format!("write `{replacement}`"),
                            index.span,
                            replacement,
                        ));
                    }
                    self.report(diagnostic);
                    self.poison(&at)
                }
            };
        }
        let (Ty::Schema(target_schema), Ty::Schema(key_schema)) = (self.ty(target), self.ty(key)) else {
            return self.project(target, ProjectKey::Index(key), Ty::Never, &at);
        };
        let literal_key = self.constant(key).and_then(Value::as_str).map(str::to_owned);
        let mut results = Vec::new();
        for variant in self.types.variants(target_schema) {
            match self.index_row(variant, key_schema, literal_key.as_deref()) {
                Ok(result) => results.push(Ty::Schema(result)),
                Err(()) => {
                    self.index_mismatch(e, object, index, variant, key_schema);
                    return self.poison(&at);
                }
            }
        }
        let ty = self.union_at(&results, e.span);
        self.project(target, ProjectKey::Index(key), ty, &at)
    }

    /// One row of the index table (spec §2.4.2) for one target variant.
    fn index_row(
        &mut self,
        target: SchemaId,
        key: SchemaId,
        literal_key: Option<&str>,
    ) -> Result<SchemaId, ()> {
        let key_kinds = self.types.variants(key);
        let keys_are = |lowerer: &Self, integer: bool| {
            key_kinds.iter().all(|&k| match lowerer.types.kind(k) {
                SchemaKind::Any => true,
                SchemaKind::Integer(_) => integer,
                SchemaKind::String(_) => !integer,
                _ => false,
            })
        };
        match self.types.kind(target) {
            SchemaKind::Any if keys_are(self, true) || keys_are(self, false) => Ok(self.types.any),
            SchemaKind::List(list) if keys_are(self, true) => Ok(list.items),
            SchemaKind::String(_) if keys_are(self, true) => Ok(self.types.string),
            SchemaKind::Bytes if keys_are(self, true) => Ok(self.types.integer),
            SchemaKind::Map(values) if keys_are(self, false) => Ok(*values),
            SchemaKind::Object(object) if keys_are(self, false) => {
                if let Some(key) = literal_key {
                    return match (object.property(key), object.additional) {
                        (Some(p), _) => Ok(p.schema),
                        (None, Some(additional)) => Ok(additional),
                        (None, None) => Err(()),
                    };
                }
                let schemas: Vec<Ty> = object
                    .properties
                    .iter()
                    .map(|p| Ty::Schema(p.schema))
                    .chain(object.additional.map(Ty::Schema))
                    .collect();
                match self.types.union(&schemas).0 {
                    Ty::Schema(schema) => Ok(schema),
                    Ty::Never => Err(()),
                }
            }
            _ => Err(()),
        }
    }

    /// The one list property of a closed object (`page.nodes`, `found.results`): what indexing or
    /// iterating a tool's response object usually meant.
    fn only_list_property(&self, schema: SchemaId) -> Option<(Arc<str>, SchemaId)> {
        let SchemaKind::Object(object) = self.types.kind(self.types.resolve(schema)) else { return None };
        let mut lists =
            object.properties.iter().filter_map(|p| match self.types.kind(self.types.resolve(p.schema)) {
                SchemaKind::List(list) if p.required => Some((p.name.clone(), list.items)),
                _ => None,
            });
        let first = lists.next()?;
        lists.next().is_none().then_some(first).filter(|_| object.additional.is_none())
    }

    /// Remembers a loop over such an object's entries, for the fix of a property its item lacks.
    pub(super) fn note_entry_loop(&mut self, item: BindingId, collection: ExprId) {
        if let Ty::Schema(schema) = self.ty(collection)
            && let Some((name, items)) = self.only_list_property(schema)
        {
            self.entry_loops.push((item, self.expr_ref(collection).span.end, name, items));
        }
    }

    /// `.nodes` inserted after the collection of the loop whose item `object` is, when the list's
    /// elements have the property `name` the entry lacks.
    fn entry_loop_fix(&self, object: &ast::Expr, name: &str) -> Option<Fix> {
        let ast::ExprKind::Ident(ident) = &object.kind else { return None };
        let binding = self.scopes.lookup(&ident.name)?;
        let (_, end, list, items) = self.entry_loops.iter().find(|entry| entry.0 == binding)?;
        matches!(self.types.property(*items, name), PropertyLookup::Found { .. }).then(|| {
            Fix::machine(
                format!("iterate `.{list}`, the list inside the object"),
                Span::at(*end),
                format!(".{list}"),
            )
        })
    }

    /// `RL2206`: no row of the index table takes this target and index (or a literal key the
    /// closed object does not declare).
    fn index_mismatch(
        &mut self,
        e: &ast::Expr,
        object: &ast::Expr,
        index: &ast::Expr,
        target: SchemaId,
        key: SchemaId,
    ) {
        let what = self.describe(object.span);
        // A key the closed object does not declare: the misspelt property it likely is.
        if let (SchemaKind::Object(_), ast::ExprKind::String(key)) = (self.types.kind(target), &index.kind) {
            let ranked = ranked_properties(self.types.property_names(target), key);
            let mut diagnostic = Diagnostic::error(
                codes::UNKNOWN_PROPERTY,
                index.span,
                format!("property `{key}` does not exist on {what}"),
            );
            if let Some(best) = clear_winner(&ranked) {
                let message = format!("replace `{key}` with `{}`", best.candidate.name);
                let replacement = crate::syntax::quote_string(&best.candidate.name);
                diagnostic = diagnostic.with_help(message.clone()).with_fix(Fix::machine(
                    message,
                    index.span,
                    replacement,
                ));
            }
            let closest = closest_properties(&ranked);
            if !closest.is_empty() {
                diagnostic = diagnostic.with_note(format!("closest properties: {}", closest.join(", ")));
            }
            self.report(diagnostic);
            return;
        }
        let help = match self.types.kind(target) {
            SchemaKind::List(_) | SchemaKind::String(_) | SchemaKind::Bytes => {
                "index lists, strings and bytes with an Integer position"
            }
            SchemaKind::Object(_) | SchemaKind::Map(_) => {
                "index objects and maps with a String key the schema declares"
            }
            _ => "only lists, strings, bytes, objects and maps can be indexed",
        };
        let inner = match self.types.kind(key) {
            SchemaKind::Integer(_) => self.only_list_property(target),
            _ => None,
        };
        let fix = inner.map(|(list, _)| {
            Fix::machine(
                format!("index `.{list}`, the list inside the object"),
                Span::at(object.span.end),
                format!(".{list}"),
            )
        });
        let mut diagnostic = Diagnostic::error(
            codes::INDEX_MISMATCH,
            index.span,
            format!(
                "{what} is {}, which cannot be indexed by {}",
                self.types.display(target),
                self.types.display(key)
            ),
        )
        .with_label(e.span, "this index")
        .with_help(help);
        if let Some(fix) = fix {
            diagnostic = diagnostic.with_fix(fix);
        }
        self.report(diagnostic);
    }

    /// The schema of one iteration's item: list elements, or `{ key, value }` entries of an
    /// object or map; `None` after reporting `RL2307`.
    pub(super) fn iteration_item(&mut self, collection: ExprId, construct: &str) -> Option<Ty> {
        let schema = match self.ty(collection) {
            Ty::Never => return Some(Ty::Never),
            Ty::Schema(schema) => schema,
        };
        let mut items = Vec::new();
        for variant in self.types.variants(schema) {
            let item = match self.types.kind(variant) {
                SchemaKind::Any => self.types.any,
                SchemaKind::List(list) if list.length.max == Some(0) => continue,
                SchemaKind::List(list) => list.items,
                SchemaKind::Map(values) => self.entry_schema(*values),
                SchemaKind::Object(object) => {
                    let values: Vec<Ty> = object
                        .properties
                        .iter()
                        .map(|p| Ty::Schema(p.schema))
                        .chain(object.additional.map(Ty::Schema))
                        .collect();
                    let values = match self.types.union(&values).0 {
                        Ty::Schema(values) => values,
                        Ty::Never => self.types.any,
                    };
                    self.entry_schema(values)
                }
                _ => {
                    let span = self.expr_ref(collection).span;
                    let what = self.describe(span);
                    self.report(
                        Diagnostic::error(
                            codes::NOT_ITERABLE,
                            span,
                            format!(
                                "`{construct}` iterates over lists, objects and maps, but {what} is {}",
                                self.types.display(schema)
                            ),
                        )
                        .with_help("iterate over a list (wrap a single value as `[value]`)"),
                    );
                    return None;
                }
            };
            items.push(Ty::Schema(item));
        }
        let span = self.expr_ref(collection).span;
        Some(match self.union_at(&items, span) {
            Ty::Never => Ty::Schema(self.types.any),
            ty => ty,
        })
    }

    /// `{ key: String, value: V }`: what iterating an object or map yields.
    fn entry_schema(&mut self, values: SchemaId) -> SchemaId {
        let string = self.types.string;
        self.types.object(vec![
            crate::schema::Property::new("key", string, true),
            crate::schema::Property::new("value", values, true),
        ])
    }
}

/// A name for an element of the list written `list`: `issues` → `issue`, `entries` → `entry`,
/// else `item`.
pub(super) fn element_name(list: &str) -> String {
    let last = list.rsplit('.').next().unwrap_or(list);
    let singular = if let Some(stem) = last.strip_suffix("ies") {
        format!("{stem}y")
    } else if let Some(stem) = last.strip_suffix('s').filter(|s| !s.ends_with('s')) {
        stem.to_owned()
    } else {
        String::new()
    };
    if singular.len() > 1 && crate::schema::is_identifier(&singular) { singular } else { "item".to_owned() }
}

/// Properties ranked against the misspelling `name`, each with its schema aliases and the names
/// other APIs give it.
fn ranked_properties(names: Vec<NamedProperty>, name: &str) -> Vec<Ranked> {
    let pool = names.into_iter().map(|(n, aliases)| {
        let synonyms = foreign::property_synonyms(&n).iter().map(|&s| Arc::from(s));
        let aliases = aliases.iter().cloned().chain(synonyms).collect();
        Candidate { aliases, ..Candidate::named(n.as_ref()) }
    });
    rank(name, pool)
}

/// The three properties closest to a misspelling, for a note.
fn closest_properties(ranked: &[Ranked]) -> Vec<String> {
    ranked.iter().take(3).map(|r| r.candidate.name.clone()).collect()
}
