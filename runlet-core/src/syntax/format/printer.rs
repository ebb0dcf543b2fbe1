//! Prints an error-free AST in the one canonical style: four-space indents, one statement per
//! line, blocks always broken, lists/objects/calls on one line when they fit in 100 columns.

use super::comments::Comments;
use crate::diag::Span;
use crate::syntax::ast::*;
use crate::syntax::quote_string;

const WIDTH: usize = 100;
const INDENT: &str = "    ";

pub(super) struct Printer<'a> {
    source: &'a str,
    comments: Comments<'a>,
}

impl<'a> Printer<'a> {
    pub(super) fn new(source: &'a str, comments: Comments<'a>) -> Self {
        Printer { source, comments }
    }

    pub(super) fn program(mut self, program: &Program) -> String {
        let mut out = String::new();
        self.statements(&mut out, &program.stmts, 0);
        let mut previous_end = program.stmts.last().map(|s| s.span().end);
        for comment in self.comments.take_rest() {
            let gap = previous_end.and_then(|end| self.source.get(end as usize..comment.span.start as usize));
            if gap.is_some_and(has_blank_line) {
                out.push('\n');
            }
            push_line(&mut out, 0, comment.text);
            previous_end = Some(comment.span.end);
        }
        out
    }

    /// Writes `stmts` one per line at `depth`, with their comments and single blank lines kept.
    fn statements(&mut self, out: &mut String, stmts: &[Stmt], depth: usize) {
        let mut previous_end: Option<u32> = None;
        for stmt in stmts {
            let span = stmt.span();
            let leading = self.comments.take_before(span.start);
            if let Some(end) = previous_end {
                let next_start = leading.first().map_or(span.start, |c| c.span.start);
                if self.source.get(end as usize..next_start as usize).is_some_and(has_blank_line) {
                    out.push('\n');
                }
            }
            for comment in leading {
                push_line(out, depth, comment.text);
            }
            let text = self.statement(stmt, depth);
            indent(out, depth);
            out.push_str(&text);
            if let Some(comment) = self.comments.take_trailing(span.end) {
                out.push(' ');
                out.push_str(comment.text);
            }
            out.push('\n');
            previous_end = Some(span.end);
        }
    }

    fn statement(&mut self, stmt: &Stmt, depth: usize) -> String {
        match stmt {
            Stmt::Let(s) => {
                let head = format!("{} = ", s.name.name);
                let value = self.expr(&s.value, depth, depth * 4 + head.len());
                head + &value
            }
            Stmt::Skip(s) => match &s.condition {
                None => "skip".to_owned(),
                Some(c) => format!("skip if {}", self.expr(c, depth, depth * 4 + 8)),
            },
            Stmt::Return(s) => format!("return {}", self.expr(&s.value, depth, depth * 4 + 7)),
            Stmt::Expr(s) => self.expr(&s.expr, depth, depth * 4),
        }
    }

    /// `{`, the block's statements one level deeper, its dangling comments, and `}`.
    fn block(&mut self, block: &Block, depth: usize) -> String {
        let mut out = String::from("{\n");
        self.statements(&mut out, &block.stmts, depth + 1);
        self.dangling(&mut out, block.span.end, depth + 1);
        indent(&mut out, depth);
        out.push('}');
        out
    }

    /// Renders `expr`, which starts at `column` of a line indented `depth` levels.
    fn expr(&mut self, expr: &Expr, depth: usize, column: usize) -> String {
        if let Some(flat) = self.flat(expr) {
            if column + flat.chars().count() <= WIDTH {
                return flat;
            }
        }
        match &expr.kind {
            ExprKind::List(items) => self.broken("[", items, "]", expr.span.end, depth, Self::element),
            ExprKind::Object(items) => self.broken("{", items, "}", expr.span.end, depth, Self::object_item),
            ExprKind::Call { callee, args } => {
                let head = self.expr(callee, depth, column) + "(";
                match args.as_slice() {
                    [only]
                        if hugs(only)
                            && !self.comments.any_within(Span::new(only.span.end, expr.span.end)) =>
                    {
                        let arg = self.expr(only, depth, last_line_end(&head, column));
                        head + &arg + ")"
                    }
                    _ => head + &self.broken("", args, ")", expr.span.end, depth, Self::element),
                }
            }
            ExprKind::Fail(args) => self.broken("fail(", args, ")", expr.span.end, depth, Self::element),
            ExprKind::Paren(inner) => format!("({})", self.expr(inner, depth, column + 1)),
            ExprKind::Unary(op, operand) => {
                let head = unary_head(*op, operand);
                let operand = self.expr(operand, depth, column + head.len());
                head.to_owned() + &operand
            }
            ExprKind::Binary(op, left, right) => {
                let left = self.expr(left, depth, column);
                let op = format!(" {} ", op.as_str());
                let right = self.expr(right, depth, last_line_end(&left, column) + op.len());
                left + &op + &right
            }
            ExprKind::Conditional { then, condition, otherwise } => {
                let then = self.expr(then, depth, column);
                let condition = self.expr(condition, depth, last_line_end(&then, column) + 4);
                let mut out = format!("{then} if {condition}");
                if let Some(otherwise) = otherwise {
                    let otherwise = self.expr(otherwise, depth, last_line_end(&out, column) + 6);
                    out = format!("{out} else {otherwise}");
                }
                out
            }
            ExprKind::Member { object, name } => {
                format!("{}.{}", self.expr(object, depth, column), name.name)
            }
            ExprKind::Index { object, index } => {
                let object = self.expr(object, depth, column);
                let index = self.expr(index, depth, last_line_end(&object, column) + 1);
                format!("{object}[{index}]")
            }
            ExprKind::If(if_expr) => self.if_expr(if_expr, depth, column),
            ExprKind::For(f) => {
                let iterable = self.expr(&f.iterable, depth, column + 8 + f.item.name.len());
                let limit = f.limit.as_ref().map(|l| format!(" limit {}", l.digits)).unwrap_or_default();
                format!("for {} in {iterable}{limit} {}", f.item.name, self.block(&f.body, depth))
            }
            ExprKind::Fold(f) => {
                let init = self.expr(&f.init, depth, column + 8 + f.acc.name.len());
                let iterable = self.expr(&f.iterable, depth, last_line_end(&init, column) + 9);
                format!(
                    "fold {} = {init} for {} in {iterable} {}",
                    f.acc.name,
                    f.item.name,
                    self.block(&f.body, depth)
                )
            }
            ExprKind::Boundary(b) => {
                let retry = b.retry.as_ref().map(|r| format!("retry {} ", r.digits)).unwrap_or_default();
                let body = self.block(&b.body, depth);
                let catch = self.block(&b.catch.body, depth);
                format!("boundary {retry}{body} catch {} {catch}", b.catch.binding.name)
            }
            _ => self.flat(expr).unwrap_or_default(),
        }
    }

    fn if_expr(&mut self, if_expr: &IfExpr, depth: usize, column: usize) -> String {
        let condition = self.expr(&if_expr.condition, depth, column + 3);
        let mut out = format!("if {condition} {}", self.block(&if_expr.then_block, depth));
        match if_expr.else_branch.as_deref() {
            None => {}
            Some(ElseBranch::If { if_expr, .. }) => {
                out.push_str(" else ");
                out.push_str(&self.if_expr(if_expr, depth, depth * 4 + 7));
            }
            Some(ElseBranch::Block(block)) => {
                out.push_str(" else ");
                out.push_str(&self.block(block, depth));
            }
        }
        out
    }

    /// A list element or call argument on its own line.
    fn element(&mut self, expr: &Expr, depth: usize) -> String {
        self.expr(expr, depth, depth * 4)
    }

    /// Comments left before `end` (a closing delimiter), each on its own line.
    fn dangling(&mut self, out: &mut String, end: u32, depth: usize) {
        for comment in self.comments.take_before(end) {
            push_line(out, depth, comment.text);
        }
    }

    fn object_item(&mut self, item: &ObjectItem, depth: usize) -> String {
        match item {
            ObjectItem::Field { key, value, .. } => {
                let key = object_key(key);
                let value = self.expr(value, depth, depth * 4 + key.len() + 2);
                format!("{key}: {value}")
            }
            ObjectItem::Computed { key, value, .. } => {
                let key = self.expr(key, depth, depth * 4 + 1);
                let value = self.expr(value, depth, last_line_end(&key, depth * 4) + 3);
                format!("[{key}]: {value}")
            }
            ObjectItem::Shorthand(ident) => ident.name.to_string(),
        }
    }

    /// `open`, one item per line one level deeper (each with a trailing comma and its
    /// comments), then `close` back at `depth`; `end` is where the source's container ends.
    fn broken<T: Spanned>(
        &mut self,
        open: &str,
        items: &[T],
        close: &str,
        end: u32,
        depth: usize,
        mut item: impl FnMut(&mut Self, &T, usize) -> String,
    ) -> String {
        let mut out = format!("{open}\n");
        for element in items {
            for comment in self.comments.take_before(element.span().start) {
                push_line(&mut out, depth + 1, comment.text);
            }
            indent(&mut out, depth + 1);
            out.push_str(&item(self, element, depth + 1));
            out.push(',');
            if let Some(comment) =
                self.comments.take_trailing(after_separator(self.source, element.span().end))
            {
                out.push(' ');
                out.push_str(comment.text);
            }
            out.push('\n');
        }
        self.dangling(&mut out, end, depth + 1);
        indent(&mut out, depth);
        out.push_str(close);
        out
    }

    /// The one-line form of `expr`, or `None` when it holds a block or a comment.
    fn flat(&self, expr: &Expr) -> Option<String> {
        if self.comments.any_within(expr.span) {
            return None;
        }
        let list = |items: &[Expr]| -> Option<String> {
            Some(items.iter().map(|e| self.flat(e)).collect::<Option<Vec<_>>>()?.join(", "))
        };
        Some(match &expr.kind {
            ExprKind::Null => "null".to_owned(),
            ExprKind::Bool(b) => b.to_string(),
            ExprKind::Integer(digits) | ExprKind::Number(digits) => digits.to_string(),
            ExprKind::String(text) => quote_string(text),
            ExprKind::Ident(ident) => ident.name.to_string(),
            ExprKind::List(items) => format!("[{}]", list(items)?),
            ExprKind::Object(items) if items.is_empty() => "{}".to_owned(),
            ExprKind::Object(items) => {
                let items: Option<Vec<String>> = items.iter().map(|i| self.flat_object_item(i)).collect();
                format!("{{ {} }}", items?.join(", "))
            }
            ExprKind::Paren(inner) => format!("({})", self.flat(inner)?),
            ExprKind::Unary(op, operand) => format!("{}{}", unary_head(*op, operand), self.flat(operand)?),
            ExprKind::Binary(op, left, right) => {
                format!("{} {} {}", self.flat(left)?, op.as_str(), self.flat(right)?)
            }
            ExprKind::Conditional { then, condition, otherwise } => {
                let mut out = format!("{} if {}", self.flat(then)?, self.flat(condition)?);
                if let Some(otherwise) = otherwise {
                    out = format!("{out} else {}", self.flat(otherwise)?);
                }
                out
            }
            ExprKind::Member { object, name } => format!("{}.{}", self.flat(object)?, name.name),
            ExprKind::Index { object, index } => format!("{}[{}]", self.flat(object)?, self.flat(index)?),
            ExprKind::Call { callee, args } => format!("{}({})", self.flat(callee)?, list(args)?),
            ExprKind::Fail(args) => format!("fail({})", list(args)?),
            ExprKind::If(_)
            | ExprKind::For(_)
            | ExprKind::Fold(_)
            | ExprKind::Boundary(_)
            | ExprKind::Error => {
                return None;
            }
        })
    }

    fn flat_object_item(&self, item: &ObjectItem) -> Option<String> {
        Some(match item {
            ObjectItem::Field { key, value, .. } => format!("{}: {}", object_key(key), self.flat(value)?),
            ObjectItem::Computed { key, value, .. } => {
                format!("[{}]: {}", self.flat(key)?, self.flat(value)?)
            }
            ObjectItem::Shorthand(ident) => ident.name.to_string(),
        })
    }
}

/// Anything with a source span that `broken` lays out one per line.
trait Spanned {
    fn span(&self) -> Span;
}

impl Spanned for Expr {
    fn span(&self) -> Span {
        self.span
    }
}

impl Spanned for ObjectItem {
    fn span(&self) -> Span {
        ObjectItem::span(self)
    }
}

/// A sole call argument that opens its own bracket or block stays on the call's line:
/// `ai.summarize({` … `})` rather than a one-item argument list.
fn hugs(arg: &Expr) -> bool {
    matches!(
        arg.kind,
        ExprKind::List(_) | ExprKind::Object(_) | ExprKind::If(_) | ExprKind::For(_) | ExprKind::Fold(_)
    )
}

fn object_key(key: &ObjectKey) -> String {
    if key.quoted { quote_string(&key.name) } else { key.name.to_string() }
}

/// `not ` or `-`; a minus before another minus keeps a space so it cannot read as `--`.
fn unary_head(op: UnaryOp, operand: &Expr) -> &'static str {
    match (op, &operand.kind) {
        (UnaryOp::Not, _) => "not ",
        (UnaryOp::Neg, ExprKind::Unary(UnaryOp::Neg, _)) => "- ",
        (UnaryOp::Neg, _) => "-",
    }
}

/// The column after the last line of `text`, which started at `column`.
fn last_line_end(text: &str, column: usize) -> usize {
    match text.rfind('\n') {
        Some(i) => text[i + 1..].chars().count(),
        None => column + text.chars().count(),
    }
}

fn indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str(INDENT);
    }
}

fn push_line(out: &mut String, depth: usize, text: &str) {
    indent(out, depth);
    out.push_str(text);
    out.push('\n');
}

fn has_blank_line(between: &str) -> bool {
    let mut lines = between.split('\n');
    lines.next();
    let mut rest: Vec<&str> = lines.collect();
    rest.pop();
    rest.iter().any(|line| line.trim().is_empty())
}

/// The offset just past the `,` that directly follows an item ending at `end`, or `end`.
fn after_separator(source: &str, end: u32) -> u32 {
    let rest = &source[end as usize..];
    let trimmed = rest.trim_start_matches([' ', '\t']);
    if trimmed.starts_with(',') { end + (rest.len() - trimmed.len()) as u32 + 1 } else { end }
}
