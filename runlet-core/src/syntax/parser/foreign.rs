//! Shapes carried over from other languages (`const x =`, `await`, lambdas, `def`, `x += 1`, `?:`,
//! `not in`, `.map(…)`, comprehensions, `try`, `while`): each consumed whole, with one diagnostic.

use super::{Parser, try_boundary};
use crate::diag::{Applicability, Diagnostic, Edit, Fix, Span, codes};
use crate::syntax::ast::{BinaryOp, Expr, ExprKind, Stmt, UnaryOp};
use crate::syntax::token::{ForeignToken, Keyword, TokenKind};

const DECLARATION_WORDS: &[&str] = &["const", "let", "var", "val", "auto"];
const FUNCTION_WORDS: &[&str] = &["def", "function", "fn", "func", "fun", "async"];
const COLLECTION_METHODS: &[&str] = &[
    "map", "filter", "forEach", "reduce", "flatMap", "find", "some", "every", "each", "select", "collect",
    "sort",
];

/// The operator a compound assignment stands for; `None` for one Runlet lacks.
fn compound_operator(op: ForeignToken) -> Option<&'static str> {
    match op {
        ForeignToken::PlusEq | ForeignToken::PlusPlus => Some("+"),
        ForeignToken::MinusEq | ForeignToken::MinusMinus => Some("-"),
        ForeignToken::StarEq => Some("*"),
        ForeignToken::SlashEq => Some("/"),
        _ => None,
    }
}

impl Parser<'_> {
    /// A statement in another language's shape, fully consumed with its one diagnostic.
    pub(super) fn foreign_statement(&mut self) -> Option<Stmt> {
        let token = self.peek();
        if token.kind != TokenKind::Ident {
            return None;
        }
        let word = self.text(token.span);
        let next = self.nth(1);
        if next.line_break_before {
            return None;
        }
        let declares = matches!(next.kind, TokenKind::Ident | TokenKind::Keyword(_))
            && matches!(self.nth(2).kind, TokenKind::Eq | TokenKind::Colon);
        if DECLARATION_WORDS.contains(&word) && declares {
            self.bump();
            self.push(
                Diagnostic::error(
                    codes::FOREIGN_DECLARATION,
                    token.span,
                    format!("Runlet declares names without `{word}`"),
                )
                .with_help("write `name = value`; every name is declared once and never reassigned")
                .with_fix(Fix::machine(
                    format!("remove `{word}`"),
                    Span::new(token.span.start, next.span.start),
                    "",
                )),
            );
            if let TokenKind::Keyword(keyword) = next.kind {
                self.report_reserved_binding(keyword);
            }
            self.report_type_annotation();
            return Some(Stmt::Let(self.let_stmt()));
        }
        if self.report_type_annotation() {
            return Some(Stmt::Let(self.let_stmt()));
        }
        if let TokenKind::Foreign(
            op @ (ForeignToken::PlusEq
            | ForeignToken::MinusEq
            | ForeignToken::StarEq
            | ForeignToken::SlashEq
            | ForeignToken::PlusPlus
            | ForeignToken::MinusMinus),
        ) = next.kind
        {
            return Some(self.compound_assignment(op));
        }
        let opens_body = |p: &Self| p.nth(1).kind == TokenKind::LBrace || p.nth(1).kind == TokenKind::Colon;
        let (code, message, help) = if FUNCTION_WORDS.contains(&word) && next.kind == TokenKind::Ident {
            (
                codes::FUNCTION_DEFINITION,
                "Runlet has no user-defined functions",
                "write the steps inline; to apply steps to each element of a list use `for x in xs { … return … }`",
            )
        } else if word == "while" || (word == "loop" && opens_body(self)) {
            (
                codes::FOREIGN_LOOP,
                "Runlet has no `while` loops",
                "iterate over a list with `for x in xs { … }` or `fold`",
            )
        } else if word == "try" && opens_body(self) {
            (
                codes::TRY_CATCH,
                "Runlet handles failures with `boundary`, not `try`",
                "write `result = boundary { … return value } catch err { return fallback }`",
            )
        } else {
            return None;
        };
        // `async def name` and `async function name` give the name after their second word.
        let after = self.nth(2);
        let name = match FUNCTION_WORDS.contains(&self.text(next.span)) && after.kind == TokenKind::Ident {
            true => after.span,
            false => next.span,
        };
        let start = token.span;
        self.skip_foreign_construct(start);
        let span = start.to(Span::at(self.prev_end()));
        let mut diagnostic = Diagnostic::error(code, span, message).with_help(help);
        // Removing it repairs the program only when other statements remain.
        let others = self
            .tokens
            .iter()
            .any(|t| t.kind != TokenKind::Eof && (t.span.end <= span.start || t.span.start >= span.end));
        if code == codes::TRY_CATCH {
            let before = &self.source[..span.start as usize];
            let indent = &before[before.rfind('\n').map_or(0, |i| i + 1)..];
            let rewrite =
                indent.trim().is_empty().then(|| try_boundary::boundary_rewrite(self.text(span), indent));
            if let Some((rewritten, applicability)) = rewrite.flatten() {
                let fix = Fix::new(
                    "bind the name to a `boundary`",
                    applicability,
                    vec![Edit { span, replacement: rewritten }],
                );
                diagnostic = diagnostic.with_fix(fix);
            }
        }
        if code == codes::FUNCTION_DEFINITION && others && !self.spelled_elsewhere(name) {
            let removal = self.line_removal(span);
            diagnostic =
                diagnostic.with_fix(Fix::machine("remove the function, which nothing calls", removal, ""));
        }
        self.push(diagnostic);
        Some(Stmt::Expr(crate::syntax::ast::ExprStmt { expr: self.error_expr(span), span }))
    }

    /// The one argument of `Promise.all(…)`, when `e` is that call.
    fn promise_all_operand<'e>(&self, e: &'e Expr) -> Option<&'e Expr> {
        let ExprKind::Call { callee, args } = &e.kind else { return None };
        let ExprKind::Member { object, name } = &callee.kind else { return None };
        let promise = matches!(&object.kind, ExprKind::Ident(ident) if ident.name == "Promise");
        match &args[..] {
            [list] if promise && name.name == "all" => Some(list),
            _ => None,
        }
    }

    /// Whether a token other than the one at `name` spells the same text.
    fn spelled_elsewhere(&self, name: Span) -> bool {
        let text = self.text(name);
        self.tokens.iter().any(|t| t.span != name && self.text(t.span) == text)
    }

    /// `span` with the indentation before it and the line break after it, when it fills its lines.
    pub(super) fn line_removal(&self, span: Span) -> Span {
        let before = &self.source[..span.start as usize];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let start = if before[line_start..].trim().is_empty() { line_start } else { span.start as usize };
        let after = &self.source[span.end as usize..];
        let end = match after.find('\n') {
            Some(i) if after[..i].trim().is_empty() => span.end as usize + i + 1,
            None if after.trim().is_empty() => self.source.len(),
            _ => span.end as usize,
        };
        Span::new(start as u32, end as u32)
    }

    /// Reports `name: Type =` at the cursor (the caller then parses the binding).
    fn report_type_annotation(&mut self) -> bool {
        let Some(end) = self.type_annotation_end() else { return false };
        let annotation = Span::new(self.peek().span.end, end);
        self.push(
            Diagnostic::error(codes::TYPE_ANNOTATION, annotation, "Runlet has no type annotations")
                .with_help("types come from tool schemas and are never written: `name = value`")
                .with_fix(Fix::machine("remove the annotation", annotation, "")),
        );
        true
    }

    /// `name: Type =` at the cursor: the end of `Type` (simple, dotted, generic or list types).
    fn type_annotation_end(&self) -> Option<u32> {
        if self.nth(1).kind != TokenKind::Colon {
            return None;
        }
        let mut n = 2;
        loop {
            let token = self.nth(n);
            if token.line_break_before {
                return None;
            }
            match token.kind {
                TokenKind::Eq if n > 2 => return Some(self.nth(n - 1).span.end),
                TokenKind::Ident
                | TokenKind::Keyword(Keyword::Null)
                | TokenKind::Dot
                | TokenKind::Comma
                | TokenKind::Lt
                | TokenKind::Gt
                | TokenKind::LBracket
                | TokenKind::RBracket
                | TokenKind::Foreign(ForeignToken::Question) => n += 1,
                _ => return None,
            }
        }
    }

    /// Skips a header and its braced body (and trailing `else`/`catch`/`finally` clauses), or a
    /// Python-style `header:` with its indented lines.
    fn skip_foreign_construct(&mut self, start: Span) {
        loop {
            match self.kind() {
                TokenKind::Eof => return,
                TokenKind::LBrace => {
                    self.skip_group();
                    let continues = matches!(self.kind(), TokenKind::Keyword(Keyword::Catch | Keyword::Else))
                        || (self.at(TokenKind::Ident)
                            && matches!(self.text(self.peek().span), "finally" | "except"));
                    if !continues {
                        return;
                    }
                }
                TokenKind::Colon if self.nth(1).line_break_before => {
                    self.bump();
                    self.skip_indented_block(start.start);
                    let clause = self.at(TokenKind::Ident)
                        && matches!(self.text(self.peek().span), "except" | "finally")
                        || self.at(TokenKind::Keyword(Keyword::Else));
                    if !(clause && self.indent_of(self.peek().span.start) == self.indent_of(start.start)) {
                        return;
                    }
                    self.bump();
                }
                _ if self.peek().line_break_before && self.peek().span.start > start.start => return,
                _ => {
                    self.bump();
                }
            }
        }
    }

    fn compound_assignment(&mut self, op: ForeignToken) -> Stmt {
        let at = self.pos;
        let name = self.bump();
        let operator = self.bump();
        let name_text = self.text(name.span);
        let value = if matches!(op, ForeignToken::PlusPlus | ForeignToken::MinusMinus) {
            None
        } else {
            Some(self.expression())
        };
        let span = name.span.to(value.as_ref().map_or(operator.span, |v| v.span));
        let mut diagnostic =
            Diagnostic::error(codes::COMPOUND_ASSIGNMENT, span, format!("names cannot be reassigned (`{}`)", op.as_str()))
                .with_help(format!("bind a new name such as `next_{name_text} = {name_text} …`; to accumulate over a list use `fold acc = 0 for x in xs {{ return acc + x }}`"));
        let operand = self.compound_operand(value.as_ref());
        let fix = compound_operator(op).map(|operator| {
            match self.fold_accumulation(at, at + 2, operator, &operand) {
                Some((fix, for_start)) => {
                    self.folded_loops.push(for_start);
                    fix
                }
                None => self.compound_rebinding(operator, name_text, &operand, span),
            }
        });
        if let Some(fix) = fix {
            diagnostic = diagnostic.with_fix(fix);
        }
        self.push(diagnostic);
        let expr = self.error_expr(span);
        Stmt::Expr(crate::syntax::ast::ExprStmt { expr, span })
    }

    /// The right operand of the operator a compound assignment stands for (`1` for `++`/`--`),
    /// parenthesized when it is itself an operation.
    fn compound_operand(&self, value: Option<&Expr>) -> String {
        match value {
            None => "1".to_owned(),
            Some(v) if matches!(v.kind, ExprKind::Binary(..) | ExprKind::Conditional { .. }) => {
                format!("({})", self.text(v.span))
            }
            Some(v) => self.text(v.span).to_owned(),
        }
    }

    /// `next_n = n + v` for `n += v` (`n + 1` for `n++`), with the later reads of `n` in its
    /// block reading `next_n`.
    fn compound_rebinding(&self, operator: &str, name: &str, operand: &str, span: Span) -> Fix {
        let renamed = crate::syntax::rename::fresh_name(self.source, self.tokens, name);
        let mut edits = vec![Edit { span, replacement: format!("{renamed} = {name} {operator} {operand}") }];
        edits.extend(crate::syntax::rename::later_references(
            self.source,
            self.tokens,
            name,
            &renamed,
            span.end,
        ));
        Fix::new(
            format!("name the new value `{renamed}` and read it after"),
            Applicability::MaybeIncorrect,
            edits,
        )
    }

    /// An identifier that starts another language's expression form (`await x`, `lambda x: …`,
    /// `x => …`, `function (…) {…}`), consumed with its diagnostic.
    pub(super) fn foreign_primary(&mut self) -> Option<Expr> {
        let token = self.peek();
        let word = self.text(token.span);
        let next = self.nth(1);
        if next.line_break_before {
            return None;
        }
        if word == "await" && (next.kind == TokenKind::Ident || next.kind == TokenKind::LParen) {
            self.bump();
            let awaited = self.unary();
            // `await Promise.all([a, b])` waits for a list of values: in Runlet, the list.
            let fix = match self.promise_all_operand(&awaited) {
                Some(list) => Fix::machine(
                    "write the list itself",
                    token.span.to(awaited.span),
                    self.text(list.span).to_owned(),
                ),
                None => Fix::machine("remove `await`", Span::new(token.span.start, next.span.start), ""),
            };
            self.push(
                Diagnostic::error(codes::AWAIT, token.span, "Runlet has no `await`")
                    .with_note("calls return hidden future values; a value is waited for where it is used")
                    .with_fix(fix),
            );
            return Some(awaited);
        }
        if matches!(word, "list" | "map" | "filter") && next.kind == TokenKind::LParen {
            if let Some(call) = self.lambda_call() {
                return Some(call);
            }
        }
        let arrow = matches!(next.kind, TokenKind::Foreign(ForeignToken::FatArrow | ForeignToken::ThinArrow));
        if word == "lambda" || arrow || (word == "function" && next.kind == TokenKind::LParen) {
            return Some(self.lambda(token.span));
        }
        None
    }

    /// `(a, b) => …`: a lambda that starts with a parameter list.
    pub(super) fn parenthesized_lambda(&mut self) -> Option<Expr> {
        let mut depth = 0usize;
        let mut n = 0;
        loop {
            match self.nth(n).kind {
                TokenKind::LParen => depth += 1,
                TokenKind::RParen => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                TokenKind::Eof => return None,
                _ => {}
            }
            n += 1;
            if n > 64 {
                return None;
            }
        }
        let after = self.nth(n + 1).kind;
        matches!(after, TokenKind::Foreign(ForeignToken::FatArrow | ForeignToken::ThinArrow)).then(|| {
            let start = self.peek().span;
            self.lambda(start)
        })
    }

    /// Consumes a lambda (parameters, arrow or `:`, body) and reports it.
    fn lambda(&mut self, start: Span) -> Expr {
        let mut balance = 0u32;
        // The parameters, up to the arrow / `:` / function body.
        loop {
            match self.kind() {
                TokenKind::Eof => break,
                TokenKind::LParen => balance += 1,
                TokenKind::RParen => balance = balance.saturating_sub(1),
                TokenKind::Foreign(ForeignToken::FatArrow | ForeignToken::ThinArrow) | TokenKind::Colon
                    if balance == 0 =>
                {
                    self.bump();
                    break;
                }
                TokenKind::LBrace if balance == 0 => break,
                _ => {}
            }
            self.bump();
        }
        if self.at(TokenKind::LBrace) {
            self.skip_group();
        } else {
            let saved = self.recovering;
            self.recovering = true;
            self.expression();
            self.recovering = saved;
        }
        let span = start.to(Span::at(self.prev_end()));
        self.push(Diagnostic::error(codes::LAMBDA, span, "Runlet has no functions or lambdas").with_help(
            "to transform each element use `for x in xs { return … }`; to filter add `skip if …`",
        ));
        self.error_expr(span)
    }

    /// `.map(x => …)` and friends: one diagnostic pointing to `for`/`skip`/`fold`, and the whole
    /// call consumed.
    pub(super) fn collection_method_with_lambda(
        &mut self,
        receiver: Span,
        name: &crate::syntax::ast::FieldName,
    ) -> bool {
        if !COLLECTION_METHODS.contains(&name.name.as_str()) {
            return false;
        }
        let mut depth = 0usize;
        let mut n = 0;
        let mut has_lambda = false;
        loop {
            let token = self.nth(n);
            match token.kind {
                TokenKind::LParen => depth += 1,
                TokenKind::RParen => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                TokenKind::Foreign(ForeignToken::FatArrow | ForeignToken::ThinArrow) => has_lambda = true,
                TokenKind::Ident if matches!(self.text(token.span), "lambda" | "function") => {
                    has_lambda = true
                }
                TokenKind::Eof => return false,
                _ => {}
            }
            n += 1;
        }
        if !has_lambda {
            return false;
        }
        let rewrite = self.lambda_rewrite(receiver, &name.name, n);
        self.skip_group();
        let form = match name.name.as_str() {
            "filter" | "select" | "find" => "`for x in xs { skip if not (condition); return x }`",
            "reduce" => "`fold acc = initial for x in xs { return acc + x }`",
            _ => "`for x in xs { return … }`",
        };
        let mut diagnostic = Diagnostic::error(
            codes::COLLECTION_METHOD,
            name.span.to(Span::at(self.prev_end())),
            format!("lists have no `.{}` method and Runlet has no lambdas", name.name),
        )
        .with_help(format!("write {form}"));
        if let Some(rewritten) = rewrite {
            let span = receiver.to(Span::at(self.prev_end()));
            diagnostic = diagnostic.with_fix(Fix::machine(format!("write `{rewritten}`"), span, rewritten));
        }
        self.push(diagnostic);
        true
    }

    /// `xs.map(x => body)` as `for x in xs { return body }`, `xs.filter(x => test)` as
    /// `for x in xs { skip if not (test); return x }`: for a one-parameter lambda with an
    /// expression body, the method's only argument (its `)` is `close` tokens ahead).
    fn lambda_rewrite(&self, receiver: Span, method: &str, close: usize) -> Option<String> {
        let param = match (self.nth(1).kind, self.nth(2).kind, self.nth(3).kind, self.nth(4).kind) {
            (TokenKind::Ident, TokenKind::Foreign(ForeignToken::FatArrow), _, _) => (self.nth(1), 3),
            (
                TokenKind::LParen,
                TokenKind::Ident,
                TokenKind::RParen,
                TokenKind::Foreign(ForeignToken::FatArrow),
            ) => (self.nth(2), 5),
            _ => return None,
        };
        let (param, body_start) = param;
        if body_start >= close || self.nth(body_start).kind == TokenKind::LBrace {
            return None;
        }
        // A body in another language's syntax (`===`, `'text'`) has mistakes of its own.
        if (body_start..close).any(|i| matches!(self.nth(i).kind, TokenKind::Foreign(_) | TokenKind::Unknown))
        {
            return None;
        }
        let body = self.text(Span::new(self.nth(body_start).span.start, self.nth(close - 1).span.end));
        super::lambda_call::for_rewrite(method, self.text(param.span), self.text(receiver), body)
    }

    /// `[expr for x in xs if cond]`: reported with a rewrite into a `for` expression.
    pub(super) fn list_comprehension(&mut self, open: Span, element: Expr) -> Expr {
        self.bump();
        let item = self.peek();
        let item_ok = item.kind == TokenKind::Ident;
        if item_ok {
            self.bump();
        }
        let has_in = self.eat(TokenKind::Keyword(Keyword::In)).is_some();
        let iterable = self.binary(0);
        let condition = self.eat(TokenKind::Keyword(Keyword::If)).map(|_| self.binary(0));
        let close = self.peek();
        let mut diagnostic = Diagnostic::error(
            codes::LIST_COMPREHENSION,
            open.to(close.span),
            "Runlet has no list comprehensions; `for` is an expression that returns a list",
        );
        if item_ok && has_in && close.kind == TokenKind::RBracket {
            let skip = condition
                .as_ref()
                .map_or(String::new(), |c| format!("skip if not ({}); ", self.text(c.span)));
            let rewritten = format!(
                "for {} in {} {{ {skip}return {} }}",
                self.text(item.span),
                self.text(iterable.span),
                self.text(element.span)
            );
            diagnostic = diagnostic.with_help(format!("write `{rewritten}`")).with_fix(Fix::machine(
                "rewrite as a `for` expression",
                open.to(close.span),
                rewritten,
            ));
        }
        self.push(diagnostic);
        self.error_expr(open.to(close.span))
    }

    /// `cond ? a : b`, rewritten as `a if cond else b`.
    pub(super) fn ternary(&mut self, condition: Expr) -> Expr {
        self.bump();
        let then = self.binary(0);
        let has_colon = self.eat(TokenKind::Colon).is_some();
        let otherwise = has_colon.then(|| self.binary(0));
        let end = otherwise.as_ref().map_or(then.span, |o| o.span);
        let span = condition.span.to(end);
        let mut diagnostic = Diagnostic::error(
            codes::TERNARY,
            span,
            "Runlet writes the conditional as `a if condition else b`",
        );
        if let Some(otherwise) = &otherwise {
            let rewritten = format!(
                "{} if {} else {}",
                self.text(then.span),
                self.text(condition.span),
                self.text(otherwise.span)
            );
            diagnostic = diagnostic.with_fix(Fix::machine(format!("write `{rewritten}`"), span, rewritten));
        }
        self.push(diagnostic);
        Expr {
            span,
            kind: ExprKind::Conditional {
                then: Box::new(then),
                condition: Box::new(condition),
                otherwise: otherwise.map(Box::new),
            },
        }
    }

    /// Python's `a not in b` and `a is [not] b`, at an infix position: rewritten to
    /// `not (a in b)` and `a == b` / `a != b`, with one machine fix. At any other token it hands
    /// `lhs` back.
    pub(super) fn foreign_membership(&mut self, lhs: Expr) -> Result<Expr, Expr> {
        let token = self.peek();
        let (negated, operator_end) = match token.kind {
            TokenKind::Keyword(Keyword::Not) => (true, self.nth(1).span.end),
            TokenKind::Ident => {
                let not = self.nth(1).kind == TokenKind::Keyword(Keyword::Not);
                (not, if not { self.nth(1).span.end } else { token.span.end })
            }
            _ => return Err(lhs),
        };
        let is_membership = token.kind == TokenKind::Keyword(Keyword::Not);
        self.bump();
        if negated {
            self.bump();
        }
        let rhs = self.binary(BinaryOp::In.precedence() + 1);
        let operator = Span::new(token.span.start, operator_end);
        let span = lhs.span.to(rhs.span);
        let (message, edits, kind) = if is_membership {
            let edits = vec![
                Edit { span: Span::at(lhs.span.start), replacement: "not (".into() },
                Edit { span: operator, replacement: "in".into() },
                Edit { span: Span::at(rhs.span.end), replacement: ")".into() },
            ];
            let inner = Expr { span, kind: ExprKind::Binary(BinaryOp::In, Box::new(lhs), Box::new(rhs)) };
            let paren = Expr { span, kind: ExprKind::Paren(Box::new(inner)) };
            (
                "Runlet writes `a not in b` as `not (a in b)`",
                edits,
                ExprKind::Unary(UnaryOp::Not, Box::new(paren)),
            )
        } else {
            let op = if negated { BinaryOp::NotEq } else { BinaryOp::Eq };
            let null_rhs = matches!(&rhs.kind, ExprKind::Ident(i) if matches!(i.name.as_str(), "None" | "nil" | "null"))
                || rhs.kind == ExprKind::Null;
            let (edit_span, replacement, rhs) = if null_rhs {
                (
                    Span::new(operator.start, rhs.span.end),
                    format!("{} null", op.as_str()),
                    Expr { kind: ExprKind::Null, span: rhs.span },
                )
            } else {
                (operator, op.as_str().to_owned(), rhs)
            };
            let edits = vec![Edit { span: edit_span, replacement }];
            let message =
                if negated { "Runlet writes `is not` as `!=`" } else { "Runlet writes `is` as `==`" };
            (message, edits, ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)))
        };
        self.push(Diagnostic::error(codes::PYTHON_OPERATOR, operator, message).with_fix(Fix::new(
            "rewrite the comparison",
            Applicability::MachineApplicable,
            edits,
        )));
        Ok(Expr { span, kind })
    }

    /// `f(name = value, …)`: Runlet passes named values as one object argument.
    pub(super) fn report_keyword_arguments(&mut self, args: &[Expr], keyword_args: &[(Span, Span)]) {
        let (first_name, _) = keyword_args[0];
        let mut diagnostic = Diagnostic::error(
            codes::KEYWORD_ARGUMENTS,
            first_name.to(args.last().map_or(first_name, |a| a.span)),
            "Runlet has no keyword arguments; pass one object",
        )
        .with_help("write `f({ name: value, … })`");
        if keyword_args.len() == args.len()
            && let Some(last) = args.last()
        {
            let mut edits = vec![Edit { span: Span::at(first_name.start), replacement: "{ ".into() }];
            edits.extend(keyword_args.iter().map(|(name, eq)| {
                let spaced = self.text(Span::new(eq.end, eq.end + 1)).starts_with([' ', '\t', '\n']);
                Edit {
                    span: Span::new(name.end, eq.end),
                    replacement: if spaced { ":" } else { ": " }.into(),
                }
            }));
            edits.push(Edit { span: Span::at(last.span.end), replacement: " }".into() });
            diagnostic =
                diagnostic.with_fix(Fix::new("pass an object", Applicability::MachineApplicable, edits));
        }
        self.push(diagnostic);
    }

    /// `for (…)` headers from C and JavaScript: consumed with the body.
    pub(super) fn foreign_for_header(&mut self, keyword: Span) -> Expr {
        let header = self.for_header_rewrite();
        self.skip_group();
        let header_end = self.prev_end();
        if self.at(TokenKind::LBrace) {
            self.skip_group();
        }
        let span = keyword.to(Span::at(self.prev_end()));
        self.leave(1);
        let mut diagnostic = Diagnostic::error(
            codes::FOREIGN_LOOP,
            span,
            "Runlet loops are written `for item in items { … }`",
        )
        .with_help(
            "no parentheses around the header; `for` is an expression: `results = for x in xs { return … }`",
        );
        if let Some(rewritten) = header {
            diagnostic = diagnostic.with_fix(Fix::machine(
                format!("write `{rewritten}`"),
                Span::new(keyword.start, header_end),
                rewritten,
            ));
        }
        self.report_unexpected(diagnostic);
        self.error_expr(span)
    }

    /// `(const x of xs)`, `(let x of xs)`, `(x in xs)` after `for` (the cursor is at the `(`) as
    /// the header Runlet writes, `for x in xs`.
    fn for_header_rewrite(&self) -> Option<String> {
        let mut n = 1;
        if self.nth(n).kind == TokenKind::Ident && DECLARATION_WORDS.contains(&self.text(self.nth(n).span)) {
            n += 1;
        }
        let item = self.nth(n);
        let of = self.nth(n + 1);
        let is_of = (of.kind == TokenKind::Ident && self.text(of.span) == "of")
            || of.kind == TokenKind::Keyword(Keyword::In);
        if item.kind != TokenKind::Ident || !is_of {
            return None;
        }
        let (start, mut depth, mut end) = (n + 2, 0usize, n + 2);
        loop {
            match self.nth(end).kind {
                TokenKind::LParen | TokenKind::LBracket => depth += 1,
                TokenKind::RBracket => depth = depth.checked_sub(1)?,
                TokenKind::RParen if depth == 0 => break,
                TokenKind::RParen => depth -= 1,
                TokenKind::Eof | TokenKind::LBrace => return None,
                _ => {}
            }
            end += 1;
        }
        if end == start {
            return None;
        }
        let iterable = self.text(Span::new(self.nth(start).span.start, self.nth(end - 1).span.end));
        Some(format!("for {} in {iterable}", self.text(item.span)))
    }
}

impl Parser<'_> {
    /// `a ?? b`, reported with the fix `a if a != null else b`; parsing goes on with a conditional
    /// of `a` and `b`.
    pub(super) fn null_coalescing(&mut self, lhs: Expr) -> Expr {
        let operator = self.bump().span;
        let rhs = self.binary(BinaryOp::Or.precedence() + 1);
        let span = lhs.span.to(rhs.span);
        let (left, right) = (self.text(lhs.span), self.text(rhs.span));
        let rewritten = format!("{left} if {left} != null else {right}");
        let applicability =
            if left.contains('(') { Applicability::MaybeIncorrect } else { Applicability::MachineApplicable };
        let mut diagnostic =
            Diagnostic::error(codes::FOREIGN_OPERATOR, operator, "Runlet has no `??` operator");
        // With an operand missing or unreadable (already reported) there is nothing to rewrite.
        if !self.recovering {
            diagnostic = diagnostic.with_help(format!("write `{rewritten}`")).with_fix(Fix::new(
                format!("write `{rewritten}`"),
                applicability,
                vec![Edit { span, replacement: rewritten.clone() }],
            ));
        }
        self.push(diagnostic);
        let null = Expr { kind: ExprKind::Null, span: operator };
        // The test reads `lhs` through a placeholder rather than a second copy of it: each `??` of
        // a chain would otherwise double the tree.
        let tested = Expr { kind: ExprKind::Error, span: lhs.span };
        let condition =
            Expr { span, kind: ExprKind::Binary(BinaryOp::NotEq, Box::new(tested), Box::new(null)) };
        Expr {
            span,
            kind: ExprKind::Conditional {
                then: Box::new(lhs),
                condition: Box::new(condition),
                otherwise: Some(Box::new(rhs)),
            },
        }
    }
}
