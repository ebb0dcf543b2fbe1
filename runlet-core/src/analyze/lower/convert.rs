//! Conversions at typed contexts (spec §3.3): a Convert node where the value's schema is not the
//! target's, literal conversions folded now with `value::convert`, and a diagnostic naming the
//! context when no conversion exists.

use crate::diag::{Applicability, Diagnostic, Edit, Fix, Span, codes};
use crate::schema::{SchemaId, SchemaKind, validate};
use crate::value::{ConversionLimits, Labels, Rank, Segment, Value, ValueError, convert, path_text};

use super::super::candidates::{Candidate, clear_winner, rank};
use super::super::fit::{Misfit, Reason};
use super::super::hir::{ExprId, ExprKind, Origin};
use super::super::types::Ty;
use super::{At, Context, Lowerer, is_path};

/// Words in a parameter's name or description that mark it as prose for people.
const PROSE_NAMES: &[&str] = &[
    "prompt",
    "message",
    "text",
    "body",
    "content",
    "summary",
    "description",
    "question",
    "instructions",
    "note",
    "comment",
    "reason",
    "explanation",
    "subject",
    "title",
];
const PROSE_WORDS: &[&str] = &["prose", "human", "natural language", "plain text", "readable", "sentence"];

impl Lowerer<'_> {
    /// Converts `value` to `target` for `context`: unchanged when it already fits exactly, a
    /// Convert node (folded now for a constant) when a conversion exists, else a diagnostic.
    pub(super) fn coerce(&mut self, value: ExprId, target: SchemaId, context: &Context) -> ExprId {
        let Ty::Schema(from) = self.ty(value) else { return value };
        if let Some(constant) = self.constant(value).cloned() {
            return self.convert_constant(value, constant, target, context);
        }
        let verdict = self.fitter.fit(&self.types, from, target);
        match verdict {
            Ok(fit) if fit.is_identity() => value,
            Ok(fit) => {
                if fit.rank == Rank::Formatting {
                    self.prose_lint(value, from, target, context);
                }
                let at = At { span: self.expr_ref(value).span, path: self.expr_ref(value).path.clone() };
                self.push(ExprKind::Convert { value, target }, Ty::Schema(target), Origin::Derived, &at)
            }
            Err(misfit) => {
                self.report_misfit(value, from, target, misfit, context);
                value
            }
        }
    }

    /// A literal conversion, evaluated now with the runtime's own `value::convert` and checked
    /// against the target's constraints (spec §3.3).
    fn convert_constant(
        &mut self,
        id: ExprId,
        constant: Value,
        target: SchemaId,
        context: &Context,
    ) -> ExprId {
        let shape = self.shapes.shape(self.types.arena(), target);
        let converted =
            convert(&constant, &Labels::public(), shape, self.shapes.shapes(), &ConversionLimits::default());
        let span = self.expr_ref(id).span;
        match converted {
            Ok(converted) => {
                if let Err(error) = validate(self.types.arena(), target, &converted.value) {
                    self.literal_rejected(span, &constant, target, &error.expected, &error.path, context);
                    return id;
                }
                // The constant is known to fit: it takes the target's schema (its constraints
                // included), less the null an optional property's expectation admits.
                let schema = match (&converted.value, self.types.without_null(target)) {
                    (Value::Null, _) | (_, Ty::Never) => self.types.null,
                    (_, Ty::Schema(schema)) => schema,
                };
                if converted.rank == Rank::Exact {
                    self.exprs[id.index()].schema = schema;
                    return id;
                }
                let at = At { span, path: self.expr_ref(id).path.clone() };
                self.push(ExprKind::Const(converted.value), Ty::Schema(schema), Origin::Literal, &at)
            }
            Err(error) => {
                self.constant_misfit(id, &constant, target, error, context);
                id
            }
        }
    }

    /// Reports why a constant does not convert: `RL2311` for a Number where an Integer is
    /// required, else the static reason its kind does not fit.
    fn constant_misfit(
        &mut self,
        id: ExprId,
        constant: &Value,
        target: SchemaId,
        error: ValueError,
        context: &Context,
    ) {
        let span = self.expr_ref(id).span;
        let wants_integer =
            self.types.variants(target).iter().any(|&v| matches!(self.types.kind(v), SchemaKind::Integer(_)));
        if let (Value::Number(_), true, codes::UNSUPPORTED_CONVERSION) =
            (constant, wants_integer, error.code())
        {
            let text = self.text(span).to_owned();
            let mut diagnostic = Diagnostic::error(
                codes::NUMBER_LITERAL_TO_INTEGER,
                span,
                format!(
                    "cannot safely convert `{text}` from Number to Integer for {}",
                    context.what(self.registry)
                ),
            );
            if let Value::Number(number) = constant
                && number.get().fract() == 0.0
                && number.get().abs() < 1e15
            {
                // `2.0` is the Integer `2`: the exact literal, not a rounding call.
                let exact = format!("{}", number.get() as i64);
                diagnostic = diagnostic
                    .with_help(format!("write the Integer `{exact}`"))
                    .with_fix(Fix::machine(format!("write `{exact}`"), span, exact));
            } else {
                diagnostic = self.with_rounding(diagnostic, span);
            }
            self.report(diagnostic);
            return;
        }
        let from = self.types.of_value(constant);
        match self.fitter.fit(&self.types, from, target) {
            Err(misfit) => self.report_misfit(id, from, target, misfit, context),
            Ok(_) => self.report(
                Diagnostic::error(
                    error.code(),
                    span,
                    format!("{} for {}", error.message(), context.what(self.registry)),
                )
                .with_note("the literal is converted while checking, so this would fail every run"),
            ),
        }
    }

    /// `RL2310`: a literal outside the range, length or enumeration its target allows.
    fn literal_rejected(
        &mut self,
        span: Span,
        constant: &Value,
        target: SchemaId,
        expected: &str,
        path: &[Segment],
        context: &Context,
    ) {
        let at = if path.is_empty() { String::new() } else { format!(" at `{}`", path_text(path)) };
        // An optional property's expectation admits null only so that null drops the key.
        let accepted = match (constant, path.is_empty(), self.types.without_null(target)) {
            (Value::Null, _, _) | (_, false, _) | (_, true, Ty::Never) => expected.to_owned(),
            (_, true, Ty::Schema(without_null)) => self.types.display(without_null),
        };
        let mut diagnostic = Diagnostic::error(
            codes::LITERAL_OUT_OF_RANGE,
            span,
            format!("{}{at} is not a value {} accepts", self.describe(span), context.what(self.registry)),
        )
        .with_note(format!("accepted: {accepted}"));
        let enumeration = self.types.variants(target).into_iter().find_map(|v| match self.types.kind(v) {
            SchemaKind::String(string) => string.values.clone(),
            _ => None,
        });
        if let Value::String(text) = constant {
            if let Some(values) = &enumeration {
                let ranked = rank(text, values.iter().map(|v| Candidate::named(v.as_ref())));
                diagnostic = diagnostic
                    .with_candidates(ranked.iter().take(3).map(|r| format!("{:?}", r.candidate.name)));
                if let Some(best) = clear_winner(&ranked) {
                    let quoted = serde_json::Value::from(best.candidate.name.as_str()).to_string();
                    diagnostic = diagnostic
                        .with_help(format!("replace it with {quoted}"))
                        .with_fix(Fix::machine(format!("replace with {quoted}"), span, quoted));
                }
            }
        }
        if diagnostic.fixes.is_empty()
            && let Some(fix) = self.literal_repair(span, constant, target)
        {
            diagnostic = diagnostic.with_help(fix.message.clone()).with_fix(fix);
        }
        if diagnostic.fixes.is_empty() {
            diagnostic = diagnostic.with_help("use a literal within what the schema accepts");
        }
        self.report(diagnostic);
    }

    /// The diagnostic for a value of schema `from` that cannot become `target`.
    pub(super) fn report_misfit(
        &mut self,
        id: ExprId,
        from: SchemaId,
        target: SchemaId,
        misfit: Misfit,
        context: &Context,
    ) {
        let span = self.expr_ref(id).span;
        let what = self.describe(span);
        let inside = if misfit.path.is_empty() {
            String::new()
        } else {
            format!(" (at `{}`)", path_text(&misfit.path))
        };
        let diagnostic = match misfit.reason {
            Reason::NullToString => {
                let text = self.text(span).to_owned();
                let mut diagnostic = Diagnostic::error(
                    codes::NULLABLE_TO_STRING,
                    span,
                    format!(
                        "{what} may be null{inside}, and null does not become text for {}",
                        context.what(self.registry)
                    ),
                )
                .with_help("give a fallback for null, or format it deliberately with an intrinsic");
                if is_path(&text) {
                    let replacement = format!("{text} if {text} != null else \"…\"");
                    diagnostic = diagnostic.with_fix(Fix::new(
                        format!("use `{replacement}`"),
                        Applicability::HasPlaceholders,
                        vec![Edit { span, replacement }],
                    ));
                }
                diagnostic
            }
            Reason::Bytes => {
                let encoders = self.tools_matching(&["base64", "hex", "bytes."]);
                let mut diagnostic = Diagnostic::error(
                    codes::BYTES_TO_STRING,
                    span,
                    format!("{what} holds Bytes{inside}, which have no implicit text form for {}", context.what(self.registry)),
                )
                .with_help("encode the bytes explicitly with an encoding intrinsic the host registers (base64 or hex)");
                if !encoders.is_empty() {
                    diagnostic = diagnostic.with_candidates(encoders);
                }
                diagnostic
            }
            Reason::NumberToInteger => {
                let mut diagnostic = Diagnostic::error(
                    codes::TYPE_MISMATCH,
                    span,
                    format!(
                        "{what} is a Number{inside}, and {} requires an Integer",
                        context.what(self.registry)
                    ),
                )
                .with_help("Numbers never become Integers implicitly: round explicitly");
                if misfit.path.is_empty() {
                    diagnostic = self.with_rounding(diagnostic, span);
                }
                diagnostic
            }
            Reason::MissingProperty { name, maybe, target: object } => {
                let message = if maybe {
                    format!(
                        "{what} may lack property `{name}`{inside}, which {} requires",
                        context.what(self.registry)
                    )
                } else {
                    format!(
                        "{what} has no property `{name}`{inside}, which {} requires",
                        context.what(self.registry)
                    )
                };
                Diagnostic::error(codes::REQUIRED_PROPERTY_MISSING, span, message)
                    .with_help(format!("build the object explicitly with a `{name}` property"))
                    .with_note(format!("accepted input: {}", self.types.display(object)))
            }
            Reason::UndeclaredProperty { name, target: object } => Diagnostic::error(
                codes::UNDECLARED_PROPERTY,
                span,
                format!(
                    "{what} has property `{name}`{inside}, which {} does not accept",
                    context.what(self.registry)
                ),
            )
            .with_help(format!("build the object explicitly without `{name}`"))
            .with_note(format!("accepted: {}", self.types.display(object))),
            Reason::Ambiguous { variants, rank } => Diagnostic::error(
                codes::AMBIGUOUS_VARIANTS,
                span,
                format!(
                    "{what} converts to {} variants of {} equally well ({}){inside}",
                    variants.len(),
                    context.what(self.registry),
                    rank_name(rank)
                ),
            )
            .with_help("convert the value explicitly so exactly one variant accepts it")
            .with_candidates(variants.iter().map(|&v| self.types.display(v))),
            Reason::Kinds { from: part, to } => {
                let mut diagnostic = Diagnostic::error(
                    codes::TYPE_MISMATCH,
                    span,
                    format!(
                        "{} expects {}, but {what}{inside} is {}",
                        context.what(self.registry),
                        self.types.display(to),
                        self.types.display(part)
                    ),
                );
                let parser = match (self.types.kind(part), self.types.kind(to)) {
                    (SchemaKind::String(_), SchemaKind::Integer(_)) => {
                        self.prelude_function("number.parse_integer")
                    }
                    (SchemaKind::String(_), SchemaKind::Number(_)) => self.prelude_function("number.parse"),
                    _ => None,
                };
                let digits = match (self.constant(id), self.types.kind(to)) {
                    (Some(Value::String(text)), SchemaKind::Integer(_)) => {
                        text.parse::<i64>().ok().map(|n| n.to_string())
                    }
                    (Some(Value::String(text)), SchemaKind::Number(_)) => {
                        let literal = text.strip_prefix('-').unwrap_or(text);
                        let numeric = literal.starts_with(|c: char| c.is_ascii_digit())
                            && literal
                                .chars()
                                .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '-' | '+'));
                        numeric
                            .then(|| {
                                text.parse::<f64>().ok().filter(|n| n.is_finite()).map(|_| text.to_string())
                            })
                            .flatten()
                    }
                    _ => None,
                };
                // A single value where a list of such values is expected: `["bug"]` for `"bug"`.
                let wraps = part == from
                    && self.types.variants(target).into_iter().any(|v| {
                        match self.types.kind(self.types.resolve(v)) {
                            // Not into a list of anything: `list.length("abc")` means the
                            // text's length, not a list's.
                            SchemaKind::List(list) if !self.types.is_any(list.items) => {
                                let items = list.items;
                                self.fitter.fit(&self.types, from, items).is_ok()
                            }
                            _ => false,
                        }
                    });
                diagnostic = match (digits, parser.filter(|_| part == from)) {
                    _ if wraps => {
                        let wrapped = format!("[{}]", self.text(span));
                        diagnostic
                            .with_help(format!("wrap it in a list: `{wrapped}`"))
                            .with_fix(Fix::machine(format!("write `{wrapped}`"), span, wrapped))
                    }
                    (Some(literal), _) => diagnostic
                        .with_help(format!("write the number `{literal}` without quotes"))
                        .with_fix(Fix::machine(format!("write `{literal}`"), span, literal)),
                    (None, Some(parser)) => {
                        let call = format!("{parser}({})", self.text(span));
                        diagnostic.with_help(format!("parse the text explicitly: `{call}`")).with_fix(
                            Fix::new(
                                format!("parse it with `{parser}`"),
                                Applicability::MaybeIncorrect,
                                vec![Edit { span, replacement: call }],
                            ),
                        )
                    }
                    (None, None) => {
                        diagnostic.with_help(kind_help(self.types.kind(part), self.types.kind(to)))
                    }
                };
                if part != from || to != target {
                    diagnostic = diagnostic.with_note(format!("the value: {}", self.types.display(from)));
                }
                diagnostic
            }
        };
        let expected = self.types.display(target);
        let actual = self.types.display(from);
        self.report(diagnostic.with_shapes([expected], Some(actual)));
    }

    /// The rounding calls that make the Number at `span` an Integer (nearest first), when the
    /// registry offers them; else which prelude does.
    fn with_rounding(&self, mut diagnostic: Diagnostic, span: Span) -> Diagnostic {
        let text = self.text(span);
        let functions: Vec<&str> = ["number.round", "number.floor", "number.ceil"]
            .into_iter()
            .filter_map(|f| self.prelude_function(f))
            .collect();
        if functions.is_empty() {
            return diagnostic.with_help(
                "`number.round`, `number.floor` and `number.ceil` come with the prelude (`\"prelude\": \"deterministic\"` in the registry), which this registry does not offer",
            );
        }
        let calls: Vec<String> = functions.iter().map(|f| format!("`{f}({text})`")).collect();
        diagnostic = diagnostic.with_help(format!("use {}", calls.join(", ")));
        for function in functions {
            diagnostic = diagnostic.with_fix(Fix::new(
                format!("use `{function}({text})`"),
                Applicability::MaybeIncorrect,
                vec![Edit { span, replacement: format!("{function}({text})") }],
            ));
        }
        diagnostic
    }

    /// `RL2306`: an object or list formatted into a String parameter meant for people.
    fn prose_lint(&mut self, value: ExprId, from: SchemaId, target: SchemaId, context: &Context) {
        let composite = self.types.variants(from).iter().any(|&v| {
            matches!(self.types.kind(v), SchemaKind::List(_) | SchemaKind::Object(_) | SchemaKind::Map(_))
        });
        if !composite || !matches!(self.types.kind(target), SchemaKind::String(_)) || !self.is_prose(context)
        {
            return;
        }
        let span = self.expr_ref(value).span;
        let text = self.text(span).to_owned();
        let mut diagnostic = Diagnostic::warning(
            codes::PROSE_PARAMETER,
            span,
            format!(
                "{} is text for people, and {} will be sent as canonical JSON",
                context.what(self.registry),
                self.describe(span)
            ),
        );
        // The prelude's encoder (docs/STDLIB.md), else one the host registers.
        let encoder =
            ["json.stringify", "json.encode"].into_iter().find(|n| self.registry.tool_named(n).is_some());
        if let Some(encoder) = encoder {
            diagnostic = diagnostic.with_fix(Fix::new(
                format!("use `{encoder}({text})` to say so"),
                Applicability::MaybeIncorrect,
                vec![Edit { span, replacement: format!("{encoder}({text})") }],
            ));
        }
        self.report(diagnostic.with_help(format!(
            "pass the properties the text needs, or encode the value explicitly with `{}`",
            encoder.unwrap_or("json.encode")
        )));
    }

    fn is_prose(&self, context: &Context) -> bool {
        let name = context.name(self.registry).unwrap_or_default().to_lowercase();
        let description = context.description(self.registry).unwrap_or_default().to_lowercase();
        if description.contains("json") {
            return false;
        }
        PROSE_NAMES.iter().any(|word| name == *word || name.ends_with(&format!("_{word}")))
            || PROSE_WORDS.iter().any(|word| description.contains(word))
    }

    /// Registered tools whose names contain one of `words`, for "use an intrinsic" candidates.
    fn tools_matching(&self, words: &[&str]) -> Vec<String> {
        self.registry
            .tools()
            .map(|(_, t)| t.name.to_string())
            .filter(|name| words.iter().any(|w| name.contains(w)))
            .take(5)
            .collect()
    }
}

fn rank_name(rank: Rank) -> &'static str {
    match rank {
        Rank::Exact => "exactly",
        Rank::Structural => "by structural adaptation",
        Rank::Formatting => "by formatting to text",
    }
}

/// What to do instead, for a pair of kinds no conversion joins.
fn kind_help(from: &SchemaKind, to: &SchemaKind) -> &'static str {
    match (from, to) {
        (SchemaKind::String(_), SchemaKind::Integer(_) | SchemaKind::Number(_) | SchemaKind::Boolean(_)) => {
            "text never becomes a number or Boolean implicitly; call a parsing intrinsic the host registers"
        }
        (SchemaKind::List(_), _) => "pass one element, or iterate with `for`",
        (_, SchemaKind::List(_)) => "wrap a single value in a list: `[value]`",
        (SchemaKind::Object(_) | SchemaKind::Map(_), _) => "pass one of its properties instead",
        (SchemaKind::Null, _) => "give a fallback: `value if value != null else fallback`",
        _ => "pass a value of the expected kind",
    }
}
