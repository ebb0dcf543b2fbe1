//! Names: bindings in scope, host inputs, registry paths used where a value is expected, and
//! unknown names with ranked candidates and targeted fixes for names from other languages.

use crate::diag::{Applicability, CandidateRecord, Diagnostic, Edit, Fix, Span, codes};
use crate::schema::{SchemaId, SchemaKind, accepts_empty_object};
use crate::syntax::ast::{self, Ident};

use super::super::candidates::{Candidate, Ranked, clear_winner, rank, scored, sort};
use super::super::foreign;
use super::super::hir::{BindingId, ExprId, ExprKind, Input, InputId, Origin};
use super::super::types::{PropertyLookup, Ty};
use super::scope::Narrowable;
use super::{At, Expect, Inherited, Lowerer, is_path};

/// The label of host inputs among candidates.
const INPUT_LABEL: &str = "host input";

impl Lowerer<'_> {
    /// A name used as a value.
    pub(super) fn name(&mut self, e: &ast::Expr, ident: &Ident, expect: Expect<'_>) -> ExprId {
        let at = self.at(e);
        let id = self.resolve_name(ident, &at, expect, false);
        self.meet(id, expect)
    }

    /// A name read by an object shorthand `{ name }` (`shorthand`) or as a value.
    pub(super) fn reference(&mut self, ident: &Ident, at: &At, shorthand: bool) -> ExprId {
        self.resolve_name(ident, at, Expect::Nothing, shorthand)
    }

    fn resolve_name(&mut self, ident: &Ident, at: &At, expect: Expect<'_>, shorthand: bool) -> ExprId {
        let name = ident.name.as_str();
        if let Some(binding) = self.scopes.lookup(name) {
            return self.binding_reference(binding, ident.span, at, shorthand);
        }
        if let Some(input) = self.input(name) {
            let schema = self.host_inputs[input.index()].schema;
            let ty = self.scopes.narrowed(Narrowable::Input(input)).unwrap_or(Ty::Schema(schema));
            return self.push(ExprKind::Input(input), ty, Origin::Input(input), at);
        }
        if self.registry.is_root(name) {
            self.namespace_as_value(name, ident.span);
            return self.poison(at);
        }
        self.unknown_name(ident, at, expect)
    }

    fn binding_reference(&mut self, binding: BindingId, span: Span, at: &At, shorthand: bool) -> ExprId {
        let facts = &mut self.binding_facts[binding.index()];
        facts.references.push((span, shorthand));
        let inherited = Inherited { sensitivity: facts.sensitivity, label: facts.label };
        let (ty, origin) = (facts.ty, facts.origin);
        let ty = self.scopes.narrowed(Narrowable::Binding(binding)).unwrap_or(ty);
        self.push_inheriting(ExprKind::Binding(binding), ty, origin, at, Some(inherited))
    }

    /// The host input `name`, with the schema the registry declares or one inferred from the
    /// value the host supplies; registered on first use.
    pub(super) fn input(&mut self, name: &str) -> Option<InputId> {
        if let Some(&id) = self.input_ids.get(name) {
            return Some(id);
        }
        let schema = match (self.registry.inputs().get(name), self.inputs.get(name)) {
            (Some(declared), _) => declared.schema,
            (None, Some(value)) if !self.registry.is_root(name) => self.types.infer(value),
            _ => return None,
        };
        let id = InputId(self.host_inputs.len() as u32);
        self.host_inputs.push(Input { name: name.to_owned(), schema });
        self.input_ids.insert(name.to_owned(), id);
        Some(id)
    }

    /// Whether a host input called `name` exists (declared by the registry or supplied).
    pub(super) fn input_available(&self, name: &str) -> bool {
        self.registry.inputs().contains_key(name)
            || (self.inputs.get(name).is_some() && !self.registry.is_root(name))
    }

    /// `RL2106`: a registry root where a value is expected.
    fn namespace_as_value(&mut self, name: &str, span: Span) {
        let members: Vec<String> = self
            .registry
            .tools()
            .filter(|(_, t)| t.name.root() == name)
            .take(5)
            .map(|(_, t)| t.name.to_string())
            .collect();
        self.report(
            Diagnostic::error(
                codes::TOOL_USED_AS_VALUE,
                span,
                format!("`{name}` is a registry namespace, not a value"),
            )
            .with_help(format!("call one of the tools under `{name}`"))
            .with_candidates(members),
        );
    }

    /// `true` when `e` is a dotted path whose root is a registry root: such a path names tools
    /// and namespaces, never a value (spec §2.3).
    ///
    /// A binding named like a root is an error of its own (`RL2104`); while it is in scope, a path
    /// the registry does not know reads the binding, so that its rename fix covers the path.
    pub(super) fn registry_path<'e>(&self, e: &'e ast::Expr) -> Option<Vec<(&'e str, Span)>> {
        let path = dotted_from_root(e, &|root| self.registry.is_root(root))?;
        let segments: Vec<&str> = path.iter().map(|(s, _)| *s).collect();
        let known = self.registry.namespace(&segments).is_some()
            || self.registry.resolve_callable(&segments).is_some();
        (known || self.scopes.lookup(segments[0]).is_none()).then_some(path)
    }

    /// A registry path used as a value: a tool not called (`RL2106`, with the call added), or a
    /// path the registry does not have (`RL2102`).
    pub(super) fn registry_value(&mut self, e: &ast::Expr, path: &[(&str, Span)]) -> ExprId {
        let at = self.at(e);
        let segments: Vec<&str> = path.iter().map(|(s, _)| *s).collect();
        match self.registry.resolve_callable(&segments) {
            Some(callable) => {
                let tool = self.registry.tool(callable.tool);
                let name = tool.name.to_string();
                let end = path[callable.segments - 1].1.end;
                let takes_nothing = tool.input.positional_arity().is_some_and(|(required, _)| required == 0)
                    || (tool.input.positional.is_none()
                        && tool
                            .input
                            .object
                            .is_none_or(|o| accepts_empty_object(self.registry.schemas(), o)));
                let (insertion, applicability) = if takes_nothing {
                    ("()".to_owned(), Applicability::MachineApplicable)
                } else if let Some(arguments) = self.arguments_in_scope(callable.tool) {
                    (format!("({arguments})"), Applicability::MaybeIncorrect)
                } else {
                    (format!("({})", self.call_placeholders(callable.tool)), Applicability::HasPlaceholders)
                };
                self.report(
                    Diagnostic::error(
                        codes::TOOL_USED_AS_VALUE,
                        Span::new(path[0].1.start, end),
                        format!("`{name}` is a tool, not a value: call it to use its result"),
                    )
                    .with_help(format!("call it: `{name}{insertion}`"))
                    .with_fix(Fix::new(
                        format!("call `{name}`"),
                        applicability,
                        vec![Edit { span: Span::at(end), replacement: insertion }],
                    )),
                );
            }
            None => {
                let text = segments.join(".");
                let span = Span::new(path[0].1.start, path[path.len() - 1].1.end);
                let diagnostic = Diagnostic::error(
                    codes::UNKNOWN_TOOL,
                    span,
                    format!("the registry has no tool or namespace `{text}`"),
                );
                let diagnostic = self.with_tool_candidates(diagnostic, &text, span, None);
                self.report(diagnostic.with_note(format!("registry {}", self.registry.digest())));
            }
        }
        self.poison(&at)
    }

    /// The required positional arguments of `tool` as the bindings or host inputs named like
    /// its parameters, when every one exists and its value fits the parameter's schema.
    fn arguments_in_scope(&mut self, tool: crate::registry::ToolId) -> Option<String> {
        let params = self.registry.tool(tool).input.positional.clone()?;
        let mut names = Vec::new();
        for param in params.iter().filter(|p| !p.optional) {
            let schema = match self.scopes.lookup(&param.name) {
                Some(binding) => match self.binding_facts[binding.index()].ty {
                    Ty::Schema(schema) => schema,
                    Ty::Never => return None,
                },
                None => {
                    let input = self.input(&param.name)?;
                    self.host_inputs[input.index()].schema
                }
            };
            self.fitter.fit(&self.types, schema, param.schema).ok()?;
            names.push(param.name.to_string());
        }
        (!names.is_empty()).then(|| names.join(", "))
    }

    /// `issues[-1]` for `issue` read after `for issue in issues { … }` ended, when `issues` is
    /// a path whose root is still visible.
    fn last_item_of_loop(&self, name: &str) -> Option<String> {
        let &(_, collection) = self.loop_items.iter().rev().find(|(item, _)| item == name)?;
        let text = self.text(collection);
        let root = text.split('.').next().unwrap_or_default();
        let visible = self.scopes.lookup(root).is_some() || self.input_available(root);
        (is_path(text) && visible).then(|| format!("{text}[-1]"))
    }

    /// `<customer_id>` placeholders for a call of `tool`'s first shape, for fixes.
    pub(super) fn call_placeholders(&self, tool: crate::registry::ToolId) -> String {
        let input = &self.registry.tool(tool).input;
        match (&input.positional, input.object) {
            (Some(params), _) => params
                .iter()
                .filter(|p| !p.optional)
                .map(|p| format!("<{}>", p.name))
                .collect::<Vec<_>>()
                .join(", "),
            (None, Some(object)) => self.registry.schemas().display(object).to_string(),
            (None, None) => String::new(),
        }
    }

    /// Ranked registry tools for a misspelt dotted path: by the whole path, and by the last
    /// segment so the same tool in another namespace is found (and labelled).
    /// When the misspelling is called with `arguments`, tools that take that many fit.
    pub(super) fn tool_candidates(&self, wanted: &str, arguments: Option<usize>) -> Vec<Ranked> {
        let wanted_root = wanted.split('.').next().unwrap_or_default();
        let wanted_leaf = wanted.rsplit('.').next().unwrap_or_default();
        let candidate = |(full, fits): &(String, Option<bool>), key: &str| {
            let root = full.split('.').next().unwrap_or_default();
            let label = (root != wanted_root).then(|| format!("in namespace `{root}`"));
            Candidate { key: key.to_owned(), label, fits: *fits, ..Candidate::named(full.as_str()) }
        };
        let tools: Vec<(String, Option<bool>)> = self
            .registry
            .tools()
            .map(|(id, t)| (t.name.to_string(), arguments.map(|given| self.takes_argument_count(id, given))))
            .collect();
        let by_path = scored(wanted, tools.iter().map(|tool| candidate(tool, &tool.0)));
        let by_leaf = scored(
            wanted_leaf,
            tools.iter().map(|tool| candidate(tool, tool.0.rsplit('.').next().unwrap_or_default())),
        );
        // Both lists follow the registry's order: keep the better score of each tool.
        let mut merged: Vec<Ranked> = by_path
            .into_iter()
            .zip(by_leaf)
            .map(|(path, leaf)| if leaf.score < path.score { leaf } else { path })
            .collect();
        sort(&mut merged);
        merged
    }

    /// Adds the closest tools to `diagnostic`, and a replacement of `span` when one in the same
    /// namespace is clearly meant: of those that take as many arguments as the misspelling was
    /// called with (`arguments`), when it was called.
    pub(super) fn with_tool_candidates(
        &mut self,
        mut diagnostic: Diagnostic,
        wanted: &str,
        span: Span,
        arguments: Option<usize>,
    ) -> Diagnostic {
        if !self.search(2 * self.registry.tool_count()) {
            return diagnostic;
        }
        let mut ranked = self.tool_candidates(wanted, arguments);
        let close: Vec<&Ranked> = ranked.iter().filter(|r| r.close).take(3).collect();
        diagnostic = diagnostic
            .with_candidates(close.iter().map(|r| r.candidate.shown()))
            .with_candidate_records(close.iter().map(|r| tool_record(&r.candidate.name)));
        // The winner is of the tools that take the call's arguments; a tool of another namespace
        // competes with those of the written one only when it is closer than all of them.
        let root = wanted.split('.').next().unwrap_or_default();
        let in_namespace = |r: &Ranked| r.candidate.label.is_none() && self.registry.is_root(root);
        let fits = |r: &Ranked| r.candidate.fits != Some(false);
        let closest_here =
            ranked.iter().filter(|r| r.close && fits(r) && in_namespace(r)).map(|r| r.distance).min();
        let competes =
            |r: &Ranked| fits(r) && (in_namespace(r) || closest_here.is_none_or(|here| r.distance < here));
        // The closest tool left out for the arguments it takes: one at least as close as the
        // winner may be the one meant, called with an argument too few or too many.
        let closest_left_out = ranked.iter().filter(|r| r.close && !fits(r)).map(|r| r.distance).min();
        ranked.retain(competes);
        if let Some(best) = clear_winner(&ranked) {
            let name = best.candidate.name.clone();
            let message = format!("replace `{wanted}` with `{name}`");
            // A tool of another namespace is offered for review when the written namespace exists;
            // when it does not (`shops.orders`, a bare `customer(…)`), the path itself is the slip.
            let root = wanted.split('.').next().unwrap_or_default();
            let sure = best.candidate.label.is_none() || !self.registry.is_root(root);
            let applicability = match sure && closest_left_out.is_none_or(|left_out| left_out > best.distance)
            {
                true => Applicability::MachineApplicable,
                false => Applicability::MaybeIncorrect,
            };
            diagnostic = diagnostic.with_help(message.clone()).with_fix(Fix::new(
                message,
                applicability,
                vec![Edit { span, replacement: name }],
            ));
        }
        diagnostic
    }

    /// Records a read of `root` by a construct that is reported as an error without being
    /// lowered, so the binding is not also reported as unused.
    pub(super) fn mark_read(&mut self, root: &str, span: Span) {
        if let Some(binding) = self.scopes.lookup(root) {
            self.binding_facts[binding.index()].references.push((span, false));
        }
    }

    /// `RL2101`: a name that is no binding, input or registry root.
    fn unknown_name(&mut self, ident: &Ident, at: &At, expect: Expect<'_>) -> ExprId {
        let name = ident.name.as_str();
        if let Some(runlet) = foreign::literal(name) {
            self.report(
                Diagnostic::error(
                    codes::UNKNOWN_NAME,
                    ident.span,
                    format!("`{name}` is not a Runlet name; Runlet writes `{runlet}`"),
                )
                .with_fix(Fix::machine(format!("write `{runlet}`"), ident.span, runlet)),
            );
            let value = match runlet {
                "true" => crate::value::Value::Bool(true),
                "false" => crate::value::Value::Bool(false),
                _ => crate::value::Value::Null,
            };
            return self.constant_at(value, at);
        }
        if let Some(later) = self.scopes.declared_later(name) {
            self.read_early.push(later);
            self.report(
                Diagnostic::error(
                    codes::UNKNOWN_NAME,
                    ident.span,
                    format!("`{name}` is used before it is declared"),
                )
                .with_label(later, "declared here")
                .with_help(format!("move the statement that declares `{name}` above this use")),
            );
            return self.poison(at);
        }
        if let Some(last) = self.last_item_of_loop(name) {
            self.report(
                Diagnostic::error(
                    codes::UNKNOWN_NAME,
                    ident.span,
                    format!("`{name}` is a loop's item, which exists only inside its body"),
                )
                .with_help(format!("the last element, which `{name}` holds after a Python loop, is `{last}`"))
                .with_fix(Fix::suggest(format!("read `{last}`"), ident.span, last)),
            );
            return self.poison(at);
        }
        let mut diagnostic =
            Diagnostic::error(codes::UNKNOWN_NAME, ident.span, format!("`{name}` is not defined"));
        // `error.message` inside `catch e { … }`: the error value is the one the catch names.
        let caught = self.scopes.visible().into_iter().find(|(_, b)| {
            matches!(self.bindings[b.index()].kind, super::super::hir::BindingKind::CatchError)
        });
        if let Some((caught, _)) = caught.filter(|_| foreign::error_name(name)) {
            self.report(
                diagnostic
                    .with_help(format!("the error value of this `catch` is `{caught}`"))
                    .with_fix(Fix::machine(format!("replace `{name}` with `{caught}`"), ident.span, caught)),
            );
            return self.poison(at);
        }
        if !self.search(self.scopes.visible().len() + self.registry.tool_count()) {
            self.report(diagnostic);
            return self.poison(at);
        }
        let values = rank(name, self.value_candidates(expect));
        let tools = rank(name, self.tool_leaf_candidates());
        for close in values.iter().filter(|r| r.close && r.candidate.label.is_none()) {
            self.suggested.extend(self.scopes.lookup(&close.candidate.name));
        }
        let shown: Vec<&Ranked> = values
            .iter()
            .filter(|r| r.close)
            .take(3)
            .chain(tools.iter().filter(|r| r.close).take(2))
            .collect();
        let records = shown.iter().map(|r| match r.candidate.label.as_deref() {
            Some(INPUT_LABEL) => {
                CandidateRecord { name: r.candidate.name.clone(), namespace: None, kind: "host_input" }
            }
            Some(_) => tool_record(&r.candidate.name),
            None => CandidateRecord { name: r.candidate.name.clone(), namespace: None, kind: "binding" },
        });
        diagnostic = diagnostic
            .with_candidate_records(records)
            .with_candidates(shown.iter().map(|r| r.candidate.shown()));
        match (clear_winner(&values), tools.first().filter(|r| r.close)) {
            (Some(best), _) => {
                let replacement = best.candidate.name.clone();
                diagnostic = diagnostic.with_help(format!("replace `{name}` with `{replacement}`")).with_fix(
                    Fix::machine(format!("replace `{name}` with `{replacement}`"), ident.span, replacement),
                );
            }
            (None, Some(tool)) => {
                diagnostic = diagnostic
                    .with_help(format!("to use a tool's result, call it: `{}(…)`", tool.candidate.name));
            }
            (None, None) => {
                diagnostic = diagnostic
                    .with_help("names are bindings declared above, host inputs, or registered tools called by their path");
            }
        }
        self.report(diagnostic);
        self.poison(at)
    }

    /// The values a misspelt name may have meant: bindings in scope and host inputs.
    /// Those whose schema takes the expected one, or has the property read of the name, fit.
    fn value_candidates(&mut self, expect: Expect<'_>) -> Vec<Candidate> {
        let mut candidates = Vec::new();
        for (name, binding) in self.scopes.visible() {
            let fits = match (expect, self.binding_facts[binding.index()].ty) {
                (Expect::Schema(target, _), Ty::Schema(schema)) => {
                    Some(self.fitter.fit(&self.types, schema, target).is_ok())
                }
                (Expect::Nothing, Ty::Schema(schema)) => self.has_read_property(schema),
                _ => None,
            };
            candidates.push(Candidate { fits, ..Candidate::named(name) });
        }
        let mut inputs: Vec<String> = self.registry.inputs().keys().cloned().collect();
        inputs.extend(self.inputs.names().filter(|n| !self.registry.is_root(n)).map(str::to_owned));
        inputs.sort();
        inputs.dedup();
        for name in inputs {
            let fits = match self.input(&name) {
                Some(input) => self.has_read_property(self.host_inputs[input.index()].schema),
                None => None,
            };
            candidates.push(Candidate { fits, ..Candidate::labelled(name, INPUT_LABEL) });
        }
        candidates
    }

    /// Whether a value of `schema` has the property read of the name being lowered, when one
    /// is: every variant but null declares it.
    fn has_read_property(&self, schema: SchemaId) -> Option<bool> {
        let read = self.reading.as_deref()?;
        let variants: Vec<SchemaId> = self
            .types
            .variants(schema)
            .into_iter()
            .filter(|&v| !matches!(self.types.kind(v), SchemaKind::Null))
            .collect();
        // Any value, a map, or null alone: whether it has the property is not known.
        let unknown = |&v: &SchemaId| matches!(self.types.kind(v), SchemaKind::Any | SchemaKind::Map(_));
        if variants.is_empty() || variants.iter().any(unknown) {
            return None;
        }
        let declared = |&v: &SchemaId| matches!(self.types.property(v, read), PropertyLookup::Found { .. });
        Some(variants.iter().all(declared))
    }

    /// Tools, matched by their last segment, for a bare name that may mean a tool's result.
    fn tool_leaf_candidates(&self) -> Vec<Candidate> {
        self.registry
            .tools()
            .map(|(_, tool)| {
                let leaf = tool.name.segments().last().unwrap_or_default().to_owned();
                Candidate {
                    key: leaf,
                    label: Some("tool; call it".to_owned()),
                    ..Candidate::named(tool.name.to_string())
                }
            })
            .collect()
    }
}

/// The record of a registry tool offered as a candidate, with its namespace.
fn tool_record(name: &str) -> CandidateRecord {
    let namespace = name.rsplit_once('.').map(|(namespace, _)| namespace.to_owned());
    CandidateRecord { name: name.to_owned(), namespace, kind: "tool" }
}

/// The dotted path `e` spells (`a.b.c`) when its root passes `root_ok`.
pub(super) fn dotted_from_root<'e>(
    e: &'e ast::Expr,
    root_ok: &dyn Fn(&str) -> bool,
) -> Option<Vec<(&'e str, Span)>> {
    match &e.kind {
        ast::ExprKind::Ident(ident) if root_ok(&ident.name) => Some(vec![(&ident.name, ident.span)]),
        ast::ExprKind::Member { object, name } => {
            let mut path = dotted_from_root(object, root_ok)?;
            path.push((&name.name, name.span));
            Some(path)
        }
        _ => None,
    }
}
