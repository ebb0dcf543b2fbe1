//! Stable syntax paths (spec §4.2): a node's structural roles from the root plus a fingerprint of
//! its normalized subtree; neither depends on byte offsets, layout, comments or parentheses.

use std::collections::HashMap;
use std::fmt::{self, Write};

use sha2::{Digest, Sha256};

use super::ast::{Block, ElseBranch, Expr, ExprKind, IfExpr, ObjectItem, Program, Stmt};
use crate::diag::Span;

/// A digest of a node's normalized subtree: node kinds, names, operators and literal values, but
/// no spans, trivia or parentheses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Fingerprint(pub [u8; 16]);

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&hex::encode(self.0))
    }
}

/// The stable identity of one syntax node.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SyntaxPath {
    /// `/`-separated roles from the program root, such as
    /// `let:report/value/boundary/body/return/value` (the call returned by a boundary's body).
    /// A `let` step is named by the binding (unique in its scope); other statements by role and
    /// position among their kind, so inserting a binding does not shift its siblings.
    pub steps: String,
    pub fingerprint: Fingerprint,
}

impl fmt::Display for SyntaxPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}#{}", self.steps, self.fingerprint)
    }
}

/// A node handed to [`walk`]'s visitor.
#[derive(Debug, Clone, Copy)]
pub enum Node<'a> {
    Stmt(&'a Stmt),
    Block(&'a Block),
    Expr(&'a Expr),
}

impl Node<'_> {
    pub fn span(self) -> Span {
        match self {
            Node::Stmt(s) => s.span(),
            Node::Block(b) => b.span,
            Node::Expr(e) => e.span,
        }
    }
}

/// Visits every statement, block and expression of `program` (children before parents) with its
/// syntax path, handed over. Parentheses are transparent: `(x)` is visited as `x`.
pub fn walk<'a>(program: &'a Program, mut visit: impl FnMut(SyntaxPath, Node<'a>)) {
    let mut walker = Walker { steps: String::new(), visit: &mut visit };
    walker.stmts(&program.stmts);
}

/// Every node's path and span, in visiting order.
pub fn syntax_paths(program: &Program) -> Vec<(SyntaxPath, Span)> {
    let mut out = Vec::new();
    walk(program, |path, node| out.push((path, node.span())));
    out
}

struct Walker<'v, F> {
    /// The `/`-separated steps to the node being visited.
    steps: String,
    visit: &'v mut F,
}

impl<'a, F: FnMut(SyntaxPath, Node<'a>)> Walker<'_, F> {
    fn emit(&mut self, digest: &Sha256, node: Node<'a>) -> [u8; 32] {
        let full: [u8; 32] = digest.clone().finalize().into();
        let mut short = [0u8; 16];
        short.copy_from_slice(&full[..16]);
        let path = SyntaxPath { steps: self.steps.clone(), fingerprint: Fingerprint(short) };
        (self.visit)(path, node);
        full
    }

    fn with_step<T>(&mut self, step: impl fmt::Display, f: impl FnOnce(&mut Self) -> T) -> T {
        let length = self.steps.len();
        if length > 0 {
            self.steps.push('/');
        }
        let _ = write!(self.steps, "{step}");
        let out = f(self);
        self.steps.truncate(length);
        out
    }

    /// The statements of one scope; returns the digest of the sequence.
    fn stmts(&mut self, stmts: &'a [Stmt]) -> [u8; 32] {
        let mut digest = Sha256::new();
        let mut names: HashMap<&str, usize> = HashMap::new();
        let (mut skips, mut others) = (0, 0);
        for stmt in stmts {
            let step = match stmt {
                Stmt::Let(l) => {
                    let count = names.entry(&l.name.name).or_insert(0);
                    let seen = *count;
                    *count += 1;
                    if seen == 0 {
                        format!("let:{}", l.name.name)
                    } else {
                        format!("let:{}~{seen}", l.name.name)
                    }
                }
                Stmt::Return(_) => "return".to_owned(),
                Stmt::Skip(_) => {
                    skips += 1;
                    format!("skip.{}", skips - 1)
                }
                Stmt::Expr(_) => {
                    others += 1;
                    format!("stmt.{}", others - 1)
                }
            };
            let child = self.with_step(step, |w| w.stmt(stmt));
            digest.update(child);
        }
        digest.finalize().into()
    }

    fn stmt(&mut self, stmt: &'a Stmt) -> [u8; 32] {
        let mut digest = Sha256::new();
        match stmt {
            Stmt::Let(l) => {
                tag(&mut digest, "let", &l.name.name);
                digest.update(self.child("value", &l.value));
            }
            Stmt::Return(r) => {
                tag(&mut digest, "return", "");
                digest.update(self.child("value", &r.value));
            }
            Stmt::Skip(s) => {
                tag(&mut digest, "skip", "");
                if let Some(c) = &s.condition {
                    digest.update(self.with_step("cond", |w| w.expr(c)));
                }
            }
            Stmt::Expr(e) => {
                tag(&mut digest, "expr-stmt", "");
                digest.update(self.child("expr", &e.expr));
            }
        }
        self.emit(&digest, Node::Stmt(stmt))
    }

    fn block(&mut self, role: &str, block: &'a Block) -> [u8; 32] {
        self.with_step(role, |w| {
            let mut digest = Sha256::new();
            tag(&mut digest, "block", "");
            digest.update(w.stmts(&block.stmts));
            w.emit(&digest, Node::Block(block))
        })
    }

    fn child(&mut self, role: impl fmt::Display, expr: &'a Expr) -> [u8; 32] {
        self.with_step(role, |w| w.expr(expr))
    }

    fn expr(&mut self, expr: &'a Expr) -> [u8; 32] {
        let mut digest = Sha256::new();
        match &expr.kind {
            ExprKind::Paren(inner) => return self.expr(inner),
            ExprKind::Null => tag(&mut digest, "null", ""),
            ExprKind::Bool(b) => tag(&mut digest, "bool", if *b { "true" } else { "false" }),
            ExprKind::Integer(digits) => tag(&mut digest, "int", digits.trim_start_matches('0')),
            ExprKind::Number(text) => tag(&mut digest, "number", text),
            ExprKind::String(s) => tag(&mut digest, "string", s),
            ExprKind::Ident(i) => tag(&mut digest, "name", &i.name),
            ExprKind::Error => tag(&mut digest, "error", ""),
            ExprKind::List(items) => {
                tag(&mut digest, "list", &items.len().to_string());
                for (i, item) in items.iter().enumerate() {
                    digest.update(self.child(format_args!("item.{i}"), item));
                }
            }
            ExprKind::Object(items) => {
                tag(&mut digest, "object", &items.len().to_string());
                for (i, item) in items.iter().enumerate() {
                    digest.update(self.object_item(i, item));
                }
            }
            ExprKind::Unary(op, operand) => {
                tag(&mut digest, "unary", op.as_str());
                digest.update(self.child("operand", operand));
            }
            ExprKind::Binary(op, lhs, rhs) => {
                tag(&mut digest, "binary", op.as_str());
                digest.update(self.child("lhs", lhs));
                digest.update(self.child("rhs", rhs));
            }
            ExprKind::Conditional { then, condition, otherwise } => {
                tag(&mut digest, "conditional", if otherwise.is_some() { "else" } else { "" });
                digest.update(self.child("then", then));
                digest.update(self.child("cond", condition));
                if let Some(o) = otherwise {
                    digest.update(self.child("else", o));
                }
            }
            ExprKind::Member { object, name } => {
                tag(&mut digest, "member", &name.name);
                digest.update(self.child("object", object));
            }
            ExprKind::Index { object, index } => {
                tag(&mut digest, "index", "");
                digest.update(self.child("object", object));
                digest.update(self.child("index", index));
            }
            ExprKind::Call { callee, args } => {
                tag(&mut digest, "call", &args.len().to_string());
                digest.update(self.child("callee", callee));
                for (i, arg) in args.iter().enumerate() {
                    digest.update(self.child(format_args!("arg.{i}"), arg));
                }
            }
            ExprKind::Fail(args) => {
                tag(&mut digest, "fail", &args.len().to_string());
                for (i, arg) in args.iter().enumerate() {
                    digest.update(self.child(format_args!("arg.{i}"), arg));
                }
            }
            ExprKind::If(if_expr) => {
                tag(&mut digest, "if", "");
                digest.update(self.with_step("if", |w| w.if_expr(if_expr)));
            }
            ExprKind::For(f) => {
                tag(&mut digest, "for", &f.item.name);
                tag(&mut digest, "limit", f.limit.as_ref().map_or("", |l| l.digits.as_str()));
                self.with_step("for", |w| {
                    digest.update(w.child("iterable", &f.iterable));
                    digest.update(w.block("body", &f.body));
                });
            }
            ExprKind::Fold(f) => {
                tag(&mut digest, "fold", &f.acc.name);
                tag(&mut digest, "item", &f.item.name);
                self.with_step("fold", |w| {
                    digest.update(w.child("init", &f.init));
                    digest.update(w.child("iterable", &f.iterable));
                    digest.update(w.block("body", &f.body));
                });
            }
            ExprKind::Boundary(b) => {
                tag(&mut digest, "boundary", b.retry.as_ref().map_or("", |r| r.digits.as_str()));
                tag(&mut digest, "catch", &b.catch.binding.name);
                self.with_step("boundary", |w| {
                    digest.update(w.block("body", &b.body));
                    digest.update(w.block("catch", &b.catch.body));
                });
            }
        }
        self.emit(&digest, Node::Expr(expr))
    }

    fn if_expr(&mut self, if_expr: &'a IfExpr) -> [u8; 32] {
        let mut digest = Sha256::new();
        digest.update(self.child("cond", &if_expr.condition));
        digest.update(self.block("then", &if_expr.then_block));
        match if_expr.else_branch.as_deref() {
            Some(ElseBranch::If { if_expr: inner, .. }) => {
                tag(&mut digest, "else-if", "");
                digest.update(self.with_step("else-if", |w| w.if_expr(inner)));
            }
            Some(ElseBranch::Block(block)) => {
                tag(&mut digest, "else", "");
                digest.update(self.block("else", block));
            }
            None => {}
        }
        digest.finalize().into()
    }

    fn object_item(&mut self, index: usize, item: &'a ObjectItem) -> [u8; 32] {
        let mut digest = Sha256::new();
        match item {
            ObjectItem::Field { key, value, .. } => {
                tag(&mut digest, "field", &key.name);
                digest.update(self.child(format_args!("field:{}", key.name), value));
            }
            ObjectItem::Shorthand(ident) => tag(&mut digest, "field", &ident.name),
            ObjectItem::Computed { key, value, .. } => {
                tag(&mut digest, "computed", "");
                digest.update(self.child(format_args!("computed.{index}.key"), key));
                digest.update(self.child(format_args!("computed.{index}.value"), value));
            }
        }
        digest.finalize().into()
    }
}

/// Feeds a node tag and its payload, length-prefixed so that no two sequences collide.
fn tag(digest: &mut Sha256, kind: &str, payload: &str) {
    for part in [kind, payload] {
        digest.update((part.len() as u64).to_le_bytes());
        digest.update(part.as_bytes());
    }
}
