//! Calls of names Runlet deliberately lacks (`len(xs)`, `list.sum(xs)`, `x.upper()`,
//! `", ".join(xs)`): the edit to the Runlet form the table of `analyze/foreign.rs` names, chosen
//! by the operands' kinds, offered only when every name it writes is registered.

use crate::diag::{Applicability, Fix, Span};
use crate::schema::SchemaKind;
use crate::syntax::ast::{self, ExprKind as Ast};
use crate::syntax::quote_string;

use super::super::foreign::Absent;
use super::super::hir::ExprId;
use super::super::types::Ty;
use super::operand_fix::null_guarded;
use super::{Lowerer, is_path};

/// What the operands of a foreign call are, as far as choosing the Runlet form needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    List,
    Other,
}

/// The help line and, when one exists, the fix for a call of an absent name.
pub(super) struct Rewrite {
    pub help: String,
    pub fix: Option<Fix>,
}

impl Lowerer<'_> {
    /// The Runlet form of the call at `call` of `form` with `operands` (a method's receiver
    /// first), lowered already.
    pub(super) fn absent_rewrite(
        &mut self,
        form: Absent,
        call: Span,
        operands: &[(&ast::Expr, ExprId)],
    ) -> Rewrite {
        if let Absent::Help(help) = form {
            return Rewrite { help: help.to_owned(), fix: None };
        }
        let kinds: Vec<Kind> = operands.iter().map(|&(_, id)| self.operand_kind(id)).collect();
        let texts: Vec<String> = operands.iter().map(|(e, _)| self.operand_text(e)).collect();
        let simple = operands.iter().all(|(e, _)| repeatable(e));
        let Some((replacement, loose, applicability)) =
            self.runlet_form(form, &kinds, &texts, operands, simple, call)
        else {
            return Rewrite { help: describe(form), fix: None };
        };
        let replacement =
            if loose && !self.stands_alone(call) { format!("({replacement})") } else { replacement };
        let help = format!("write `{replacement}`");
        let fix = Fix::new(help.clone(), applicability, vec![crate::diag::Edit { span: call, replacement }]);
        Rewrite { help, fix: Some(fix) }
    }

    /// The replacement text, whether it needs parentheses inside a larger expression, and how
    /// safe it is; `None` when the operands do not choose a registered form.
    fn runlet_form(
        &self,
        form: Absent,
        kinds: &[Kind],
        texts: &[String],
        operands: &[(&ast::Expr, ExprId)],
        simple: bool,
        call: Span,
    ) -> Option<(String, bool, Applicability)> {
        use Absent::*;
        let machine = Applicability::MachineApplicable;
        let by_kind = |text: &'static str, list: &'static str| match kinds.first() {
            Some(Kind::Text) => Some(text),
            Some(Kind::List) => Some(list),
            _ => None,
        };
        let called = |name: &str| self.intrinsic_text(name, kinds, texts);
        Some(match (form, texts) {
            (Intrinsic(name), _) => {
                let applicability =
                    if name == "hash.sha256" { Applicability::MaybeIncorrect } else { machine };
                (called(name)?, false, applicability)
            }
            (Length, [_]) => (called(by_kind("text.length", "list.length")?)?, false, machine),
            (Slice, [_, ..]) => (called(by_kind("text.slice", "list.slice")?)?, false, machine),
            (Range, [end]) => (
                self.intrinsic_text("list.range", &[Kind::Other; 2], &["0".to_owned(), end.clone()])?,
                false,
                machine,
            ),
            (Range, [_, _]) => (called("list.range")?, false, machine),
            (Text, [value]) if self.after_plus(call) => (value.clone(), false, machine),
            (Text, [value]) => (format!("\"\" + {value}"), true, machine),
            (Parse { integer }, [_]) if kinds[0] == Kind::Text => {
                (called(if integer { "number.parse_integer" } else { "number.parse" })?, false, machine)
            }
            (Sum, [list]) if kinds[0] == Kind::List => {
                let (acc, item) = (self.fresh("total"), self.fresh("item"));
                (format!("fold {acc} = 0 for {item} in {list} {{ return {acc} + {item} }}"), true, machine)
            }
            (Max | Min, [list]) if kinds[0] == Kind::List && simple => {
                let (best, item) = (self.fresh("best"), self.fresh("item"));
                let op = if form == Max { ">" } else { "<" };
                let fold = format!(
                    "fold {best} = {list}[0] for {item} in {list} {{ return {item} if {item} {op} {best} else {best} }}"
                );
                (fold, true, machine)
            }
            (Max | Min, [a, b]) if simple => {
                let op = if form == Max { ">" } else { "<" };
                (format!("{a} if {a} {op} {b} else {b}"), true, machine)
            }
            (Membership, [container, item]) => (format!("{item} in {container}"), true, machine),
            (Append, [list, item]) => (format!("{list} + [{item}]"), true, machine),
            (Concat, [a, b]) => (format!("{a} + {b}"), true, machine),
            (First, [list]) => (format!("{list}[0]"), false, machine),
            (Last, [list]) => (format!("{list}[-1]"), false, machine),
            (Abs, [x]) if simple => (format!("-{x} if {x} < 0 else {x}"), true, machine),
            (Get, [map, key]) => (format!("{map}[{key}]"), false, machine),
            (Get, [map, key, default])
                if repeatable(operands[0].0) && (repeatable(operands[1].0) || is_literal(operands[1].0)) =>
            {
                (format!("{map}[{key}] if {key} in {map} else {default}"), true, machine)
            }
            (Keys | Values, [map]) => {
                let entry = self.fresh("entry");
                let part = if form == Keys { "key" } else { "value" };
                (format!("for {entry} in {map} {{ return {entry}.{part} }}"), true, machine)
            }
            (Join, [a, b]) => match (kinds[0], kinds[1]) {
                (Kind::List, _) => (called("text.join")?, false, machine),
                (Kind::Text, Kind::List) => (
                    self.intrinsic_text("text.join", &[Kind::List, Kind::Text], &[b.clone(), a.clone()])?,
                    false,
                    machine,
                ),
                _ => return None,
            },
            (Format, [_, rest @ ..]) => {
                // `+` takes no null: a value that may be null is given "" for it, which Python
                // would have written as `None`, so the fix is offered for review.
                let mut guarded = false;
                let mut parts = Vec::with_capacity(rest.len());
                for (text, &(_, value)) in rest.iter().zip(&operands[1..]) {
                    let nullable =
                        matches!(self.ty(value), Ty::Schema(schema) if self.types.admits_null(schema));
                    match (nullable, is_path(text)) {
                        (false, _) => parts.push(text.clone()),
                        (true, true) => {
                            guarded = true;
                            parts.push(null_guarded(text, "\"\""));
                        }
                        (true, false) => return None,
                    }
                }
                let applicability = if guarded { Applicability::MaybeIncorrect } else { machine };
                (format_concatenation(operands[0].0, &parts)?, true, applicability)
            }
            _ => return None,
        })
    }

    /// `name(texts…)` when `name` is a registered intrinsic whose arity takes the operands and
    /// whose namespace fits the first operand's kind.
    fn intrinsic_text(&self, name: &str, kinds: &[Kind], texts: &[String]) -> Option<String> {
        let function = self.prelude_function(name)?;
        let input = &self.registry.tool(self.registry.tool_named(function)?).input;
        let (required, total) = input.positional_arity()?;
        if texts.len() < required || texts.len() > total {
            return None;
        }
        let first = input.positional.as_deref().and_then(|params| params.first());
        let wanted = first.map(|param| match self.types.kind(self.types.resolve(param.schema)) {
            SchemaKind::String(_) => Kind::Text,
            SchemaKind::List(_) => Kind::List,
            _ => Kind::Other,
        });
        let clash =
            |&kind: &Kind| kind != Kind::Other && wanted.is_some_and(|w| w != Kind::Other && w != kind);
        if kinds.first().is_some_and(clash) {
            return None;
        }
        Some(format!("{function}({})", texts.join(", ")))
    }

    fn operand_kind(&self, id: ExprId) -> Kind {
        let Ty::Schema(schema) = self.ty(id) else { return Kind::Other };
        let mut kinds = self.types.variants(schema).into_iter().filter_map(|v| {
            match self.types.kind(self.types.resolve(v)) {
                SchemaKind::Null => None,
                SchemaKind::String(_) => Some(Kind::Text),
                SchemaKind::List(_) => Some(Kind::List),
                _ => Some(Kind::Other),
            }
        });
        let first = kinds.next().unwrap_or(Kind::Other);
        if kinds.all(|k| k == first) { first } else { Kind::Other }
    }

    /// The operand's source, parenthesized unless it is a postfix expression or a literal.
    fn operand_text(&self, e: &ast::Expr) -> String {
        let text = self.text(e.span);
        match &e.kind {
            // A literal the parser supplied (a slice's missing start) has no source text.
            Ast::Integer(digits) if e.span.is_empty() => digits.to_string(),
            Ast::Binary(..)
            | Ast::Unary(..)
            | Ast::Conditional { .. }
            | Ast::For(_)
            | Ast::Fold(_)
            | Ast::If(_) => {
                format!("({text})")
            }
            _ => text.to_owned(),
        }
    }

    /// A name for a `fold` or `for` variable that no binding, host input or registry root has.
    pub(super) fn fresh(&self, base: &str) -> String {
        (1..)
            .map(|n| if n == 1 { base.to_owned() } else { format!("{base}{n}") })
            .find(|name| {
                self.scopes.lookup(name).is_none()
                    && !self.registry.is_root(name)
                    && !self.input_available(name)
            })
            .unwrap_or_else(|| base.to_owned())
    }

    /// Whether the expression at `span` is a whole operand of what holds it (a binding's value,
    /// an argument, an element, a returned value), so an operator form needs no parentheses.
    pub(super) fn stands_alone(&self, span: Span) -> bool {
        let before = self.source[..span.start as usize].trim_end();
        let after = self.source[span.end as usize..].trim_start_matches([' ', '\t']);
        let comparison = ["==", "!=", "<=", ">="].iter().any(|op| before.ends_with(op));
        let opens =
            before.ends_with("return") || (before.ends_with(['=', '(', ',', '[', '{', ':']) && !comparison);
        let closes = after.is_empty() || after.starts_with(['\n', '\r', ')', ',', ']', '}', '#']);
        opens && closes
    }

    /// Whether `+` comes right before the expression at `span` (text is being concatenated).
    fn after_plus(&self, span: Span) -> bool {
        self.source[..span.start as usize].trim_end().ends_with('+')
    }
}

/// A bare name or a projection of one by names and literal indexes, safe to write twice.
fn repeatable(e: &ast::Expr) -> bool {
    match &e.kind {
        Ast::Ident(_) => true,
        Ast::Member { object, .. } => repeatable(object),
        Ast::Index { object, index } => repeatable(object) && is_literal(index),
        _ => false,
    }
}

/// A literal, safe to write twice.
fn is_literal(e: &ast::Expr) -> bool {
    matches!(e.kind, Ast::String(_) | Ast::Integer(_) | Ast::Number(_) | Ast::Bool(_) | Ast::Null)
}

/// `"a {} b".format(x)` as `"a " + x + " b"`, when the template is a literal with one `{}` per
/// operand.
fn format_concatenation(template: &ast::Expr, operands: &[String]) -> Option<String> {
    let Ast::String(text) = &template.kind else { return None };
    let pieces: Vec<&str> = text.split("{}").collect();
    if pieces.len() != operands.len() + 1 || pieces.iter().any(|p| p.contains(['{', '}'])) {
        return None;
    }
    let mut parts: Vec<String> = Vec::new();
    for (i, piece) in pieces.iter().enumerate() {
        if !piece.is_empty() {
            parts.push(quote_string(piece));
        }
        if let Some(operand) = operands.get(i) {
            parts.push(operand.clone());
        }
    }
    if pieces[0].is_empty() {
        parts.insert(0, "\"\"".to_owned());
    }
    Some(parts.join(" + "))
}

/// What to write instead, in words, when no edit applies (the prelude is off, or the operands'
/// kinds do not choose a form).
fn describe(form: Absent) -> String {
    use Absent::*;
    const PRELUDE: &str = "with the prelude (`\"prelude\": \"deterministic\"` in the registry)";
    match form {
        Intrinsic("json.stringify") => format!(
            "objects format as canonical JSON where a String is expected; `json.stringify` comes {PRELUDE}"
        ),
        Intrinsic(name) => format!("`{name}` does this; it comes {PRELUDE}"),
        Length => format!(
            "count with `fold n = 0 for x in xs {{ return n + 1 }}`; `list.length` and `text.length` come {PRELUDE}"
        ),
        Slice => format!("`list.slice` and `text.slice` take part of a list or text; they come {PRELUDE}"),
        Range => format!("`list.range(start, end)` makes a list of integers; it comes {PRELUDE}"),
        Text => "values convert to String where a String is expected; `\"\" + n` formats one explicitly"
            .to_owned(),
        Parse { .. } => format!("`number.parse` and `number.parse_integer` parse text; they come {PRELUDE}"),
        Sum | Max | Min => {
            "reduce with `fold`: `total = fold acc = 0 for x in xs { return acc + x }`".to_owned()
        }
        Membership => {
            "test membership with `in`: `item in xs`, `\"sub\" in text`, `key in object`".to_owned()
        }
        Append | Concat => "build lists and text with `+`: `xs + [x]`, `a + b`".to_owned(),
        First | Last => "index the list: `xs[0]` is the first element, `xs[-1]` the last".to_owned(),
        Abs => "write the absolute value as `-x if x < 0 else x`".to_owned(),
        Get => "index the object: `obj[key]`, or `obj[key] if key in obj else fallback`".to_owned(),
        Keys | Values => {
            "iterate an object with `for entry in obj { return entry.key }`: each entry is `{ key, value }`"
                .to_owned()
        }
        Join => format!("`text.join(parts, separator)` joins text; it comes {PRELUDE}"),
        Format => "build text with `+`: `\"Hello \" + name`".to_owned(),
        Help(help) => help.to_owned(),
    }
}
