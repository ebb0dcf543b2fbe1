//! The abstract syntax tree of spec §2.2: every node carries the byte [`Span`] of its source text.
//! The tree is what the parser recovered; a program without error diagnostics satisfies the grammar.

use crate::diag::Span;

/// The text of names, keys and literals: a string stored inline when short (as nearly all names
/// are), so that parsing does not allocate per identifier. It dereferences to `str`.
pub type Text = compact_str::CompactString;

/// A whole program: statements at top level. In a program without errors the last statement is
/// the one [`Stmt::Return`] and every other statement is a [`Stmt::Let`].
#[derive(Debug, Clone, PartialEq)]
pub struct Program {
    pub stmts: Vec<Stmt>,
    pub span: Span,
}

/// A braced body (`block_return` in the grammar). `span` covers the braces. Without errors its
/// last statement is its one [`Stmt::Return`]; [`Stmt::Skip`] appears only in `for`/`fold` bodies.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub span: Span,
}

impl Block {
    /// The value the block returns, when it has a `return`.
    pub fn returned(&self) -> Option<&Expr> {
        self.stmts.iter().find_map(|s| match s {
            Stmt::Return(r) => Some(&r.value),
            _ => None,
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    /// `name = value`: a declaration (never a mutation).
    Let(LetStmt),
    /// `skip` or `skip if condition`, in `for`/`fold` bodies.
    Skip(SkipStmt),
    /// `return value`.
    Return(ReturnStmt),
    /// An expression used as a statement. Never valid: it exists so that recovery keeps the code
    /// (for example a statement-form `for` or a standalone call) and always comes with an error.
    Expr(ExprStmt),
}

impl Stmt {
    pub fn span(&self) -> Span {
        match self {
            Stmt::Let(s) => s.span,
            Stmt::Skip(s) => s.span,
            Stmt::Return(s) => s.span,
            Stmt::Expr(s) => s.span,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct LetStmt {
    pub name: Ident,
    pub value: Expr,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SkipStmt {
    pub condition: Option<Expr>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ReturnStmt {
    pub value: Expr,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ExprStmt {
    pub expr: Expr,
    pub span: Span,
}

/// A name: a binding, a reference, a loop variable or a registry root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ident {
    pub name: Text,
    pub span: Span,
}

/// A property name after `.` or an unquoted object key: an identifier or any reserved word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldName {
    pub name: Text,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

impl Expr {
    /// The expression inside any parentheses around it.
    pub fn unparenthesized(&self) -> &Expr {
        match &self.kind {
            ExprKind::Paren(inner) => inner.unparenthesized(),
            _ => self,
        }
    }
}

/// The block-bodied constructs are boxed so that an `Expr` stays small (it is moved a lot).
#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    Null,
    Bool(bool),
    /// An unsigned integer literal: its decimal digits, exactly as written (arbitrary precision).
    Integer(Text),
    /// A decimal float literal such as `1.25` or `6e4`, exactly as written.
    Number(Text),
    /// A string literal, decoded.
    String(Text),
    Ident(Ident),
    List(Vec<Expr>),
    Object(Vec<ObjectItem>),
    /// `( expression )`, kept so that formatting can reproduce the source's grouping.
    Paren(Box<Expr>),
    Unary(UnaryOp, Box<Expr>),
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// The postfix conditional `then if condition [else otherwise]`; a missing `else` is `null`.
    Conditional {
        then: Box<Expr>,
        condition: Box<Expr>,
        otherwise: Option<Box<Expr>>,
    },
    /// `object.name`.
    Member {
        object: Box<Expr>,
        name: FieldName,
    },
    /// `object[index]`.
    Index {
        object: Box<Expr>,
        index: Box<Expr>,
    },
    /// `callee(arguments)`.
    Call {
        callee: Box<Expr>,
        args: Vec<Expr>,
    },
    If(Box<IfExpr>),
    For(Box<ForExpr>),
    Fold(Box<FoldExpr>),
    /// `fail(code, message[, details])`; the arguments as written (arity is checked by the parser).
    Fail(Vec<Expr>),
    Boundary(Box<BoundaryExpr>),
    /// Placeholder for text that could not be parsed; always accompanied by an error.
    Error,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOp {
    Not,
    Neg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    Or,
    And,
    Eq,
    NotEq,
    Lt,
    LtEq,
    Gt,
    GtEq,
    In,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

impl BinaryOp {
    pub fn as_str(self) -> &'static str {
        match self {
            BinaryOp::Or => "or",
            BinaryOp::And => "and",
            BinaryOp::Eq => "==",
            BinaryOp::NotEq => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::LtEq => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::GtEq => ">=",
            BinaryOp::In => "in",
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
        }
    }

    /// Binding power, loosest first: `or` < `and` < equality < comparison < additive <
    /// multiplicative (the EBNF's levels).
    pub fn precedence(self) -> u8 {
        match self {
            BinaryOp::Or => 1,
            BinaryOp::And => 2,
            BinaryOp::Eq | BinaryOp::NotEq => 3,
            BinaryOp::Lt | BinaryOp::LtEq | BinaryOp::Gt | BinaryOp::GtEq | BinaryOp::In => 4,
            BinaryOp::Add | BinaryOp::Sub => 5,
            BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem => 6,
        }
    }

    /// Equality, relational and membership operators: at most one may appear in a chain (§2.4.1).
    pub fn is_relational(self) -> bool {
        matches!(self.precedence(), 3 | 4)
    }
}

impl UnaryOp {
    pub fn as_str(self) -> &'static str {
        match self {
            UnaryOp::Not => "not",
            UnaryOp::Neg => "-",
        }
    }
}

/// One entry of an object literal.
#[derive(Debug, Clone, PartialEq)]
pub enum ObjectItem {
    /// `key: value` with a static key.
    Field { key: ObjectKey, value: Expr, span: Span },
    /// `[key]: value`.
    Computed { key: Expr, value: Expr, span: Span },
    /// `{ name }`, short for `{ name: name }`.
    Shorthand(Ident),
}

impl ObjectItem {
    pub fn span(&self) -> Span {
        match self {
            ObjectItem::Field { span, .. } | ObjectItem::Computed { span, .. } => *span,
            ObjectItem::Shorthand(ident) => ident.span,
        }
    }
}

/// A static object key: written bare (an identifier or reserved word) or quoted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectKey {
    /// The key's text (decoded when quoted).
    pub name: Text,
    pub quoted: bool,
    pub span: Span,
}

/// `if condition { … } [else if … | else { … }]`.
#[derive(Debug, Clone, PartialEq)]
pub struct IfExpr {
    pub condition: Box<Expr>,
    pub then_block: Block,
    pub else_branch: Option<Box<ElseBranch>>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ElseBranch {
    /// `else if …`; the span of the inner `if` expression is `span`.
    If {
        if_expr: IfExpr,
        span: Span,
    },
    Block(Block),
}

/// `for item in iterable [limit N] { … }`.
#[derive(Debug, Clone, PartialEq)]
pub struct ForExpr {
    pub item: Ident,
    pub iterable: Box<Expr>,
    pub limit: Option<IntegerClause>,
    pub body: Block,
}

/// `fold acc = init for item in iterable { … }`.
#[derive(Debug, Clone, PartialEq)]
pub struct FoldExpr {
    pub acc: Ident,
    pub init: Box<Expr>,
    pub item: Ident,
    pub iterable: Box<Expr>,
    pub body: Block,
}

/// `boundary [retry N] { … } catch err { … }`.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundaryExpr {
    pub retry: Option<IntegerClause>,
    pub body: Block,
    pub catch: CatchClause,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CatchClause {
    pub binding: Ident,
    pub body: Block,
    /// From `catch` to the closing brace.
    pub span: Span,
}

/// `limit N` or `retry N`: the integer literal's digits and the span of the whole clause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntegerClause {
    pub digits: Text,
    pub value_span: Span,
    pub span: Span,
}
