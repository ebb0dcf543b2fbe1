//! Calls (spec §2.3): the callee resolved as the longest callable registry path, the call shape
//! chosen (positional or one object), and the canonical argument list converted per parameter.

use crate::diag::{Applicability, Diagnostic, Edit, Fix, codes};
use crate::registry::ToolId;
use crate::schema::{SchemaKind, accepts_empty_object};
use crate::syntax::ast::{self, ObjectItem};

use super::super::foreign;
use super::super::hir::{ExprId, ExprKind, Origin};
use super::super::types::Ty;
use super::names::dotted_from_root;
use super::{Context, Expect, Lowerer};

impl Lowerer<'_> {
    pub(super) fn call(&mut self, e: &ast::Expr, callee: &ast::Expr, args: &[ast::Expr]) -> ExprId {
        let path = dotted_from_root(callee, &|_| true);
        let Some(path) = path.filter(|p| !p.is_empty()) else {
            return self.not_callable(e, callee, args, None);
        };
        let root = path[0].0;
        if !self.registry.is_root(root) && (self.scopes.lookup(root).is_some() || self.input_available(root))
        {
            let text = path.iter().map(|(s, _)| *s).collect::<Vec<_>>().join(".");
            self.mark_read(root, path[0].1);
            return self.not_callable(e, callee, args, Some(text));
        }
        let segments: Vec<&str> = path.iter().map(|(s, _)| *s).collect();
        match self.registry.resolve_callable(&segments) {
            Some(callable) if callable.segments == segments.len() => self.tool_call(e, callable.tool, args),
            found => {
                let text = segments.join(".");
                let message = match self.registry.intrinsic_namespace(root) {
                    Some(namespace) => format!("`{text}` is not an intrinsic of the `{namespace}` namespace"),
                    None => format!("`{text}` is not a registered tool"),
                };
                let mut diagnostic = Diagnostic::error(codes::UNKNOWN_TOOL, callee.span, message);
                if let Some(found) = found {
                    let tool = self.registry.tool(found.tool).name.to_string();
                    let rest = segments[found.segments..].join(".");
                    diagnostic = diagnostic.with_help(format!(
                        "`{tool}` is a tool and `.{rest}` would read its result: call the tool first, `{tool}(…).{rest}`"
                    ));
                }
                if !self.registry.is_root(root) {
                    diagnostic = diagnostic.with_note(format!(
                        "only registered tools can be called; registry {}",
                        self.registry.digest()
                    ));
                }
                if found.is_none() {
                    if let Some(form) = foreign::function(&text) {
                        return self.absent_call(e, diagnostic, form, args, None);
                    }
                    diagnostic = self.with_tool_candidates(diagnostic, &text, callee.span, Some(args.len()));
                }
                self.report(diagnostic);
                self.lower_arguments_for_errors(args);
                let at = self.at(e);
                self.poison(&at)
            }
        }
    }

    /// One diagnostic for a call of a name Runlet deliberately lacks, with the edit to the Runlet
    /// form (`analyze/foreign.rs`) instead of a spelling search; `receiver` is a method's.
    fn absent_call(
        &mut self,
        e: &ast::Expr,
        diagnostic: Diagnostic,
        form: foreign::Absent,
        args: &[ast::Expr],
        receiver: Option<&ast::Expr>,
    ) -> ExprId {
        let operands: Vec<(&ast::Expr, ExprId)> =
            receiver.into_iter().chain(args).map(|arg| (arg, self.expr(arg, Expect::Nothing))).collect();
        let rewrite = self.absent_rewrite(form, e.span, &operands);
        let mut diagnostic = diagnostic.with_help(rewrite.help);
        if let Some(fix) = rewrite.fix {
            diagnostic = diagnostic.with_fix(fix);
        }
        self.report(diagnostic);
        let at = self.at(e);
        self.poison(&at)
    }

    /// `RL2105`: calling something that is not a registered tool.
    fn not_callable(
        &mut self,
        e: &ast::Expr,
        callee: &ast::Expr,
        args: &[ast::Expr],
        path: Option<String>,
    ) -> ExprId {
        if let ast::ExprKind::Member { object, name } = &callee.kind
            && let Some(form) = foreign::method(&name.name)
        {
            let method = &name.name;
            // A method name the source does not spell is the parser's reading of `xs[a:b]`.
            let diagnostic = if name.span.is_empty() {
                Diagnostic::error(codes::NOT_CALLABLE, e.span, "Runlet has no `[start:end]` slices")
            } else {
                Diagnostic::error(
                    codes::NOT_CALLABLE,
                    callee.span,
                    format!("Runlet values have no methods: `.{method}(…)` is not a Runlet call"),
                )
            };
            return self.absent_call(e, diagnostic, form, args, Some(object));
        }
        let what = self.describe(callee.span);
        let mut diagnostic = Diagnostic::error(
            codes::NOT_CALLABLE,
            callee.span,
            format!("{what} is a value, not a tool: only registered tools can be called"),
        )
        .with_help("call a tool by its registry path, such as `namespace.tool(arguments)`");
        let tools = 2 * self.registry.tool_count();
        if let Some(path) = path.filter(|_| self.search(tools)) {
            let close: Vec<String> = self
                .tool_candidates(&path, Some(args.len()))
                .iter()
                .filter(|r| r.close)
                .take(3)
                .map(|r| r.candidate.shown())
                .collect();
            diagnostic = diagnostic.with_candidates(close);
        }
        self.report(diagnostic);
        self.lower_arguments_for_errors(args);
        let at = self.at(e);
        self.poison(&at)
    }

    /// Lowers the arguments of a call that cannot be made, to report what is wrong inside them.
    fn lower_arguments_for_errors(&mut self, args: &[ast::Expr]) {
        for arg in args {
            self.expr(arg, Expect::Nothing);
        }
    }

    pub(super) fn tool_call(&mut self, e: &ast::Expr, tool: ToolId, args: &[ast::Expr]) -> ExprId {
        let at = self.at(e);
        let descriptor = self.registry.tool(tool);
        let name = descriptor.name.to_string();
        let positional = descriptor.input.positional.clone();
        let arity = descriptor.input.positional_arity();
        let shape = self.call_shape(tool, args.len(), matches!(args, [arg] if is_object_literal(arg)));
        let converted: Vec<ExprId> = match shape {
            Shape::Omitted => Vec::new(),
            Shape::Object(schema) => {
                let context = Context::input(tool);
                vec![self.expr(&args[0], Expect::Schema(schema, &context))]
            }
            Shape::ByValue { object, has_positional } => {
                let value = self.expr(&args[0], Expect::Nothing);
                let is_object = match self.ty(value) {
                    Ty::Schema(schema) => self.types.variants(schema).iter().any(|&v| {
                        matches!(
                            self.types.kind(v),
                            SchemaKind::Object(_) | SchemaKind::Map(_) | SchemaKind::Any
                        )
                    }),
                    Ty::Never => true,
                };
                match (is_object, has_positional, positional.as_deref()) {
                    (true, _, _) => {
                        let context = Context::input(tool);
                        vec![self.coerce(value, object, &context)]
                    }
                    (false, true, Some([param, ..])) => {
                        let context = Context::parameter(tool, 0);
                        vec![self.coerce(value, param.schema, &context)]
                    }
                    _ => {
                        self.object_shape_expected(tool, &args[0], value);
                        vec![value]
                    }
                }
            }
            Shape::Unaccepted => {
                self.argument_count(e, tool, args.len());
                self.lower_arguments_for_errors(args);
                return self.poison(&at);
            }
            Shape::Positional => {
                let params = positional.unwrap_or_default();
                let (required, total) = arity.unwrap_or((0, 0));
                let object_for_params = match args {
                    [arg] if is_object_literal(arg) => self.positional_fix(tool, &params, args),
                    _ => None,
                };
                if let Some(diagnostic) = object_for_params {
                    self.report(diagnostic);
                    self.lower_arguments_for_errors(args);
                    return self.poison(&at);
                }
                if args.len() < required || args.len() > total {
                    self.argument_count(e, tool, args.len());
                    self.lower_arguments_for_errors(args);
                    return self.poison(&at);
                }
                params
                    .iter()
                    .zip(args)
                    .enumerate()
                    .map(|(i, (param, arg))| {
                        let context = Context::parameter(tool, i);
                        self.expr(arg, Expect::Schema(param.schema, &context))
                    })
                    .collect()
            }
        };
        if self.registry.requires_boundary(tool) && self.boundary_depth == 0 {
            self.report(
                Diagnostic::error(
                    codes::UNSAFE_CALL_OUTSIDE_BOUNDARY,
                    e.span,
                    format!("`{name}` is unsafe, and this host requires unsafe calls inside a `boundary`"),
                )
                .with_help("wrap the call in `boundary { … } catch err { … }` so its failure is handled"),
            );
        }
        let output = self.registry.tool(tool).output;
        if let Some(function) = self.registry.intrinsic(tool) {
            return self.intrinsic_call(function, converted, output, &at);
        }
        let ty =
            if converted.iter().any(|&a| self.ty(a) == Ty::Never) { Ty::Never } else { Ty::Schema(output) };
        self.push(ExprKind::Call { tool, args: converted }, ty, Origin::ToolOutput(tool), &at)
    }

    /// `RL2202`: a tool taking one object argument given something else; wrapping the value as
    /// the object's one required property is offered when that is the only thing it can mean.
    fn object_shape_expected(&mut self, tool: ToolId, arg: &ast::Expr, value: ExprId) {
        let name = self.registry.tool(tool).name.to_string();
        let accepted = self.accepted_shapes(tool);
        let mut diagnostic = Diagnostic::error(
            codes::ARGUMENT_SHAPE,
            arg.span,
            format!("`{name}` takes one object argument, and {} is not an object", self.describe(arg.span)),
        )
        .with_note(format!("accepted calls: {}", accepted.join(" or ")));
        if let Some(schema) = self.registry.tool(tool).input.object {
            if let SchemaKind::Object(object) = self.types.kind(schema) {
                let required: Vec<_> = object.properties.iter().filter(|p| p.required).collect();
                if let [only] = required.as_slice() {
                    let fits = match self.ty(value) {
                        Ty::Schema(from) => self.fitter.fit(&self.types, from, only.schema).is_ok(),
                        Ty::Never => false,
                    };
                    let text = self.text(arg.span);
                    let replacement = format!("{{ {}: {text} }}", only.name);
                    let applicability =
                        if fits { Applicability::MachineApplicable } else { Applicability::MaybeIncorrect };
                    diagnostic =
                        diagnostic.with_help(format!("pass it as `{replacement}`")).with_fix(Fix::new(
                            format!("pass it as property `{}`", only.name),
                            applicability,
                            vec![Edit { span: arg.span, replacement }],
                        ));
                }
            }
        }
        self.report(diagnostic);
    }

    /// For a positional tool given one object literal whose keys are its parameter names: the
    /// `RL2202` diagnostic with the positional call as a fix.
    fn positional_fix(
        &self,
        tool: ToolId,
        params: &[crate::schema::Param],
        args: &[ast::Expr],
    ) -> Option<Diagnostic> {
        let [arg] = args else { return None };
        let ast::ExprKind::Object(items) = &arg.kind else { return None };
        let first_takes_objects = params.first().is_some_and(|p| {
            self.types.variants(p.schema).iter().any(|&v| {
                matches!(self.types.kind(v), SchemaKind::Object(_) | SchemaKind::Map(_) | SchemaKind::Any)
            })
        });
        if first_takes_objects {
            return None;
        }
        let mut values: Vec<Option<String>> = vec![None; params.len()];
        for item in items {
            let (key, value) = match item {
                ObjectItem::Field { key, value, .. } => (key.name.as_str(), self.text(value.span).to_owned()),
                ObjectItem::Shorthand(ident) => (ident.name.as_str(), ident.name.to_string()),
                ObjectItem::Computed { .. } => return None,
            };
            let position = params.iter().position(|p| &*p.name == key)?;
            values[position] = Some(value);
        }
        let mut written = Vec::new();
        for (param, value) in params.iter().zip(values) {
            match value {
                Some(value) => written.push(value),
                None if param.optional => break,
                None => return None,
            }
        }
        let name = self.registry.tool(tool).name.to_string();
        let replacement = written.join(", ");
        Some(
            Diagnostic::error(
                codes::ARGUMENT_SHAPE,
                arg.span,
                format!("`{name}` takes positional arguments, not one object"),
            )
            .with_help(format!("pass the values in parameter order: `{name}({replacement})`"))
            .with_note(format!("accepted calls: {}", self.accepted_shapes(tool).join(" or ")))
            .with_fix(Fix::machine("pass the values positionally", arg.span, replacement)),
        )
    }

    /// The call shape a call of `tool` with `given` arguments selects; `object_literal` when
    /// its one argument is an object literal.
    fn call_shape(&self, tool: ToolId, given: usize, object_literal: bool) -> Shape {
        let input = &self.registry.tool(tool).input;
        let no_required = input.positional_arity().is_some_and(|(required, _)| required == 0);
        match (given, input.positional.is_some(), input.object) {
            (0, _, _) if no_required => Shape::Positional,
            (0, false, None) => Shape::Positional,
            (0, _, Some(object)) if accepts_empty_object(self.registry.schemas(), object) => Shape::Omitted,
            (1, _, Some(schema)) if object_literal => Shape::Object(schema),
            (1, has_positional, Some(schema)) => Shape::ByValue { object: schema, has_positional },
            (_, true, _) => Shape::Positional,
            _ => Shape::Unaccepted,
        }
    }

    /// Whether a call of `tool` with `given` arguments has a shape: that many positional
    /// arguments, or one object (none, when the object may be empty).
    pub(super) fn takes_argument_count(&self, tool: ToolId, given: usize) -> bool {
        match self.call_shape(tool, given, false) {
            Shape::Positional => {
                let (required, most) = self.registry.tool(tool).input.positional_arity().unwrap_or((0, 0));
                (required..=most).contains(&given)
            }
            Shape::Unaccepted => false,
            Shape::Object(_) | Shape::ByValue { .. } | Shape::Omitted => true,
        }
    }

    /// `RL2201`: no call shape takes this many arguments.
    fn argument_count(&mut self, e: &ast::Expr, tool: ToolId, given: usize) {
        let name = self.registry.tool(tool).name.to_string();
        let accepted = self.accepted_shapes(tool);
        let plural = if given == 1 { "" } else { "s" };
        self.report(
            Diagnostic::error(
                codes::ARGUMENT_COUNT,
                e.span,
                format!("`{name}` cannot be called with {given} argument{plural}"),
            )
            .with_help("call it in one of the accepted shapes")
            .with_shapes(accepted.clone(), Some(format!("{given} argument{plural}")))
            .with_candidates(accepted),
        );
    }

    /// The call shapes of `tool` as calls: `crm.customer(customer_id: String)`,
    /// `linear.issues({ owner: String, limit?: Integer })`.
    pub(super) fn accepted_shapes(&self, tool: ToolId) -> Vec<String> {
        let descriptor = self.registry.tool(tool);
        let name = &descriptor.name;
        let mut shapes = Vec::new();
        if let Some(params) = &descriptor.input.positional {
            let params: Vec<String> = params
                .iter()
                .map(|p| {
                    format!(
                        "{}{}: {}",
                        p.name,
                        if p.optional { "?" } else { "" },
                        self.types.display(p.schema)
                    )
                })
                .collect();
            shapes.push(format!("{name}({})", params.join(", ")));
        }
        if let Some(object) = descriptor.input.object {
            shapes.push(format!("{name}({})", self.types.display(object)));
        }
        if shapes.is_empty() {
            shapes.push(format!("{name}()"));
        }
        shapes
    }
}

/// The call shape a call's arguments select.
#[derive(Debug, Clone, Copy)]
enum Shape {
    Positional,
    /// One object literal, checked against the object argument's schema.
    Object(crate::schema::SchemaId),
    /// One argument that is not a literal object: the object shape when its value is an object,
    /// else the first positional parameter (when there is a positional shape).
    ByValue {
        object: crate::schema::SchemaId,
        has_positional: bool,
    },
    /// No argument for a tool whose object argument may be left out.
    Omitted,
    /// No shape accepts this many arguments.
    Unaccepted,
}

fn is_object_literal(e: &ast::Expr) -> bool {
    match &e.kind {
        ast::ExprKind::Object(_) => true,
        ast::ExprKind::Paren(inner) => is_object_literal(inner),
        _ => false,
    }
}
