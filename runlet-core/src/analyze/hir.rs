//! The analyzer's output (HIR): a resolved, typed program the plan stage lowers into graph
//! templates. Names are resolved, conversions are explicit, and lazy parts are regions.

use std::sync::Arc;

use crate::diag::Span;
use crate::registry::ToolId;
use crate::schema::{SchemaArena, SchemaId};
use crate::stdlib::Intrinsic;
use crate::syntax::path::SyntaxPath;
use crate::value::{BinaryOp, Sensitivity, UnaryOp, Value};

macro_rules! id {
    ($($(#[$doc:meta])* $name:ident),*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
        pub struct $name(pub u32);

        impl $name {
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
    )*};
}

id! {
    /// An expression in [`Program::exprs`].
    ExprId,
    /// A region in [`Program::regions`].
    RegionId,
    /// A name in [`Program::bindings`].
    BindingId,
    /// A host input in [`Program::inputs`].
    InputId
}

/// A whole analyzed program without errors. Every id indexes one of these arenas; tool ids index
/// the registry the program was analyzed against.
#[derive(Debug, Clone)]
pub struct Program {
    pub exprs: Vec<Expr>,
    pub regions: Vec<Region>,
    pub bindings: Vec<Binding>,
    /// The host inputs the program reads, in order of first use.
    pub inputs: Vec<Input>,
    /// The program's top level.
    pub root: RegionId,
    /// Every schema id of the program: the registry's arena with the schemas analysis built
    /// (literal shapes, unions, narrowed variants, the `catch` error record) layered on it.
    pub schemas: Arc<SchemaArena>,
}

impl Program {
    pub fn expr(&self, id: ExprId) -> &Expr {
        &self.exprs[id.index()]
    }

    pub fn region(&self, id: RegionId) -> &Region {
        &self.regions[id.index()]
    }

    pub fn binding(&self, id: BindingId) -> &Binding {
        &self.bindings[id.index()]
    }

    pub fn input(&self, id: InputId) -> &Input {
        &self.inputs[id.index()]
    }
}

/// A host input the program reads, with the schema it was declared (or inferred) with.
#[derive(Debug, Clone)]
pub struct Input {
    pub name: String,
    pub schema: SchemaId,
}

/// A scope whose work runs only when the region is entered: the program, a block, one arm of a
/// conditional, the right operand of `and`/`or`. An expression belongs to exactly one region and
/// reads only expressions of its own region and bindings of enclosing ones.
#[derive(Debug, Clone)]
pub struct Region {
    pub kind: RegionKind,
    /// Statements in source order.
    pub steps: Vec<Step>,
    /// The value the region produces.
    pub result: ExprId,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegionKind {
    Program,
    /// A block of `if`/`else`.
    Branch,
    /// A postfix conditional arm, the right operand of `and`/`or`, the implicit `null` of a
    /// missing `else`, or an `else if` chain's next conditional: one expression, no steps.
    Arm,
    ForBody,
    FoldBody,
    BoundaryBody,
    CatchBody,
}

#[derive(Debug, Clone)]
pub enum Step {
    /// `name = value`. `root` when the value contains an effectful call: an implicit effect root
    /// that runs whether or not anything references it (spec §2.5). A binding that is neither a
    /// root nor referenced is pruned by reachability and reported as `RL1205`.
    Let { binding: BindingId, value: ExprId, root: bool },
    /// `skip [if condition]` in a loop or fold body; `None` is an unconditional skip. A condition
    /// of schema `Any` is wrapped in [`ExprKind::ExpectBoolean`].
    Skip { condition: Option<ExprId>, span: Span },
}

#[derive(Debug, Clone)]
pub struct Binding {
    pub name: String,
    /// The name where it is declared.
    pub span: Span,
    pub kind: BindingKind,
    pub schema: SchemaId,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BindingKind {
    /// `name = value`: the binding is the value expression.
    Let(ExprId),
    LoopItem,
    FoldAccumulator,
    CatchError,
}

/// Where an expression's schema comes from (schema provenance, spec §8.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A literal, or a value computed only from literals.
    Literal,
    /// A host input's schema, or a part of it.
    Input(InputId),
    /// A tool's output schema, or a part of it.
    ToolOutput(ToolId),
    /// An operator, a constructed composite, a union of alternatives or a conversion.
    Derived,
}

#[derive(Debug, Clone)]
pub struct Expr {
    pub kind: ExprKind,
    /// The schema of the value after any conversion this expression performs. For an
    /// expression that never produces a value (`diverges`) it is `Any`.
    pub schema: SchemaId,
    /// True when the expression never produces a value: `fail(...)`, or one whose every
    /// alternative fails (spec §2.7.3: its type is `Never`).
    pub diverges: bool,
    pub origin: Origin,
    pub region: RegionId,
    pub span: Span,
    /// The stable identity of the source node this expression lowers (spec §4.2). Expressions the
    /// analyzer adds (conversions, boolean checks, the `null` of a missing `else`) carry the path
    /// of the node they belong to, shared.
    pub path: Arc<SyntaxPath>,
    /// The strongest sensitivity the schemas give any part of the value, and never less than
    /// that of the values it was derived from (spec §11, invariant 10).
    pub sensitivity: Sensitivity,
    /// True when evaluating it may call a tool that is not `pure`, including inside the regions
    /// it owns.
    pub effectful: bool,
}

#[derive(Debug, Clone)]
pub enum ExprKind {
    /// A literal, or an expression folded at compile time (literal-only operators and
    /// conversions, composites of constants).
    Const(Value),
    Input(InputId),
    /// A reference to a binding of this or an enclosing region.
    Binding(BindingId),
    /// A registered tool call; `args` is the canonical argument list (spec §2.3), each argument
    /// already converted to its parameter schema. A call with one object argument has one
    /// argument; a call leaving out an optional object argument has none.
    Call {
        tool: ToolId,
        args: Vec<ExprId>,
    },
    /// A call of a prelude intrinsic (docs/STDLIB.md): checked like a tool call, evaluated by the
    /// run core itself — a compute node when deterministic, a journaled sample otherwise.
    /// `args` is the canonical argument list, converted like a tool call's.
    Intrinsic {
        function: Intrinsic,
        args: Vec<ExprId>,
    },
    Unary {
        op: UnaryOp,
        operand: ExprId,
    },
    /// Operands are converted already where the operator's row needs it (Integer → Number in
    /// numeric pairs, a scalar formatted into String concatenation).
    Binary {
        op: BinaryOp,
        left: ExprId,
        right: ExprId,
    },
    /// `left and right` / `left or right`: `right` (an `Arm` region) runs only when needed.
    Logical {
        op: LogicalOp,
        left: ExprId,
        right: RegionId,
    },
    /// Postfix or block conditional: only the selected region runs; a missing `else` is an arm
    /// returning `null`.
    Conditional {
        condition: ExprId,
        then: RegionId,
        otherwise: RegionId,
    },
    List(Vec<ExprId>),
    Object(Vec<ObjectEntry>),
    /// `target.name` or `target[index]`.
    Project {
        target: ExprId,
        key: ProjectKey,
    },
    /// A schema-directed conversion at a typed context (spec §3.3), done with
    /// `value::convert` to the shape of `target` (`schema::ShapeMap`). Present wherever the
    /// value's schema is not already exactly the target's, including every value of schema `Any`.
    Convert {
        value: ExprId,
        target: SchemaId,
    },
    /// A condition whose schema is `Any`: fails with `RL5202` unless the value is a Boolean.
    ExpectBoolean(ExprId),
    /// `limit` is `None` when the source gives none (the runtime's default applies).
    For {
        item: BindingId,
        collection: ExprId,
        limit: Option<u32>,
        body: RegionId,
    },
    /// The accumulator's binding has the fold's schema: the initial value's, or the body's when
    /// the initial value widens into it (spec §2.7.2). The body is typed once, against the initial
    /// schema; its result converts back to the accumulator's schema where needed.
    Fold {
        accumulator: BindingId,
        init: ExprId,
        item: BindingId,
        collection: ExprId,
        body: RegionId,
    },
    /// `retries` is 0 without a `retry` clause.
    Boundary {
        retries: u32,
        body: RegionId,
        error: BindingId,
        catch: RegionId,
    },
    Fail {
        code: ExprId,
        message: ExprId,
        details: Option<ExprId>,
    },
}

impl ExprKind {
    /// The expressions this one evaluates directly, and the regions it owns, in source order.
    pub fn parts(&self) -> (Vec<ExprId>, Vec<RegionId>) {
        let (mut exprs, mut regions) = (Vec::new(), Vec::new());
        self.for_each_part(|part| match part {
            Part::Expr(e) => exprs.push(e),
            Part::Region(r) => regions.push(r),
        });
        (exprs, regions)
    }

    /// Calls `visit` with each expression this one evaluates directly and each region it owns,
    /// in source order.
    pub fn for_each_part(&self, mut visit: impl FnMut(Part)) {
        use Part::{Expr as E, Region as R};
        match self {
            ExprKind::Const(_) | ExprKind::Input(_) | ExprKind::Binding(_) => {}
            ExprKind::Call { args, .. } | ExprKind::Intrinsic { args, .. } => {
                args.iter().for_each(|&a| visit(E(a)))
            }
            ExprKind::Unary { operand, .. } => visit(E(*operand)),
            ExprKind::Binary { left, right, .. } => {
                visit(E(*left));
                visit(E(*right));
            }
            ExprKind::Logical { left, right, .. } => {
                visit(E(*left));
                visit(R(*right));
            }
            ExprKind::Conditional { condition, then, otherwise } => {
                visit(E(*condition));
                visit(R(*then));
                visit(R(*otherwise));
            }
            ExprKind::List(items) => items.iter().for_each(|&i| visit(E(i))),
            ExprKind::Object(entries) => {
                for entry in entries {
                    match entry {
                        ObjectEntry::Static { value, .. } => visit(E(*value)),
                        ObjectEntry::Computed { key, value } => {
                            visit(E(*key));
                            visit(E(*value));
                        }
                    }
                }
            }
            ExprKind::Project { target, key } => {
                visit(E(*target));
                if let ProjectKey::Index(index) = key {
                    visit(E(*index));
                }
            }
            ExprKind::Convert { value, .. } | ExprKind::ExpectBoolean(value) => visit(E(*value)),
            ExprKind::For { collection, body, .. } => {
                visit(E(*collection));
                visit(R(*body));
            }
            ExprKind::Fold { init, collection, body, .. } => {
                visit(E(*init));
                visit(E(*collection));
                visit(R(*body));
            }
            ExprKind::Boundary { body, catch, .. } => {
                visit(R(*body));
                visit(R(*catch));
            }
            ExprKind::Fail { code, message, details } => {
                visit(E(*code));
                visit(E(*message));
                details.iter().for_each(|&d| visit(E(d)));
            }
        }
    }
}

/// A direct part of an expression: an expression it evaluates or a region it owns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Expr(ExprId),
    Region(RegionId),
}

impl Region {
    /// The expressions the region evaluates directly: step values, skip conditions, the result.
    pub fn parts(&self) -> Vec<ExprId> {
        let mut parts: Vec<ExprId> = self
            .steps
            .iter()
            .filter_map(|step| match step {
                Step::Let { value, .. } => Some(*value),
                Step::Skip { condition, .. } => *condition,
            })
            .collect();
        parts.push(self.result);
        parts
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogicalOp {
    And,
    Or,
}

#[derive(Debug, Clone)]
pub enum ObjectEntry {
    Static {
        key: String,
        value: ExprId,
    },
    /// `[key]: value`; the key is a String, or a scalar the runtime formats (`RL5209` otherwise).
    Computed {
        key: ExprId,
        value: ExprId,
    },
}

#[derive(Debug, Clone)]
pub enum ProjectKey {
    Field(String),
    Index(ExprId),
}
