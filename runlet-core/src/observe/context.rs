//! What the observer knows about a run without its events: the compiled program, its plan and
//! the registry, used to turn journal node ids into nodes with kinds, labels, spans, owners,
//! tools and schemas.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;
use smallvec::SmallVec;

use super::node_id::{NodeId, split_local};
use crate::analyze::hir::{BindingKind, ExprId, ExprKind, LogicalOp, ObjectEntry, Program, ProjectKey};
use crate::plan::Plan;
use crate::plan::{operands, owned_regions};
use crate::registry::Registry;
use crate::schema::ToolDescriptor;
use crate::value::Digest;

/// The node kinds of spec §4.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum NodeKind {
    Root,
    Call,
    Compute,
    Convert,
    Project,
    Composite,
    Branch,
    Loop,
    Iteration,
    Boundary,
    External,
}

/// The static facts of a compiled program the observer needs: built once per program and shared
/// by every run of it.
#[derive(Debug)]
pub struct ProgramGraph {
    source_unit: String,
    program: Arc<Program>,
    plan: Arc<Plan>,
    registry: Arc<Registry>,
    exprs_by_path: BTreeMap<Arc<str>, ExprId>,
    /// For each region, the expression owning it (none for the program's root region).
    region_owner: Vec<Option<ExprId>>,
}

impl ProgramGraph {
    pub fn new(
        source_digest: &Digest,
        program: Arc<Program>,
        plan: Arc<Plan>,
        registry: Arc<Registry>,
    ) -> ProgramGraph {
        let exprs_by_path = (0..program.exprs.len())
            .map(|index| {
                let expr = ExprId(index as u32);
                (Arc::clone(plan.path(expr)), expr)
            })
            .collect();
        let mut region_owner = vec![None; program.regions.len()];
        for (index, expr) in program.exprs.iter().enumerate() {
            for region in owned_regions(&expr.kind) {
                region_owner[region.index()] = Some(ExprId(index as u32));
            }
        }
        ProgramGraph {
            source_unit: format!("src-{}", &hex::encode(source_digest.bytes())[..16]),
            program,
            plan,
            registry,
            exprs_by_path,
            region_owner,
        }
    }
}

/// One run's program graph: what turns the journal's node ids into public nodes.
#[derive(Debug, Clone)]
pub struct GraphContext {
    run_id: String,
    graph: Arc<ProgramGraph>,
}

impl std::ops::Deref for GraphContext {
    type Target = ProgramGraph;

    fn deref(&self) -> &ProgramGraph {
        &self.graph
    }
}

impl GraphContext {
    pub fn new(run_id: &str, graph: Arc<ProgramGraph>) -> GraphContext {
        GraphContext { run_id: run_id.to_owned(), graph }
    }

    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    pub fn source_unit(&self) -> &str {
        &self.source_unit
    }

    pub(crate) fn program(&self) -> &Program {
        &self.program
    }

    pub(crate) fn registry(&self) -> &Registry {
        &self.registry
    }

    pub(crate) fn plan(&self) -> &Plan {
        &self.plan
    }

    pub fn node_id(&self, local: &str) -> NodeId {
        NodeId::from_local(&self.run_id, &self.source_unit, local)
    }

    /// The expression a journal node id instantiates.
    pub(crate) fn expr_of(&self, local: &str) -> Option<ExprId> {
        self.exprs_by_path.get(split_local(local).1).copied()
    }

    /// The tool a node calls.
    pub(crate) fn tool_of(&self, expr: ExprId) -> Option<&ToolDescriptor> {
        match &self.program.expr(expr).kind {
            ExprKind::Call { tool, .. } => Some(self.registry.tool(*tool)),
            _ => None,
        }
    }

    /// The tool name of the node `local`, when it is a call.
    pub(crate) fn tool_name(&self, local: &str) -> Option<String> {
        self.expr_of(local).and_then(|e| self.tool_of(e)).map(|t| t.name.to_string())
    }

    pub(crate) fn kind(&self, expr: ExprId, local: &str) -> NodeKind {
        let root = self.program.region(self.program.root).result;
        if expr == root && split_local(local).0.is_empty() {
            return NodeKind::Root;
        }
        match &self.program.expr(expr).kind {
            ExprKind::Call { .. } => NodeKind::Call,
            ExprKind::Const(_)
            | ExprKind::Intrinsic { .. }
            | ExprKind::Unary { .. }
            | ExprKind::Binary { .. }
            | ExprKind::Fail { .. } => NodeKind::Compute,
            ExprKind::Input(_) => NodeKind::External,
            ExprKind::Binding(_) | ExprKind::Project { .. } => NodeKind::Project,
            ExprKind::List(_) | ExprKind::Object(_) => NodeKind::Composite,
            ExprKind::Convert { .. } | ExprKind::ExpectBoolean(_) => NodeKind::Convert,
            ExprKind::Logical { .. } | ExprKind::Conditional { .. } => NodeKind::Branch,
            ExprKind::For { .. } | ExprKind::Fold { .. } => NodeKind::Loop,
            ExprKind::Boundary { .. } => NodeKind::Boundary,
        }
    }

    /// A short display label: it names what the node does and never shows a value.
    pub(crate) fn label(&self, expr: ExprId) -> String {
        let program = &self.program;
        match &program.expr(expr).kind {
            ExprKind::Call { tool, .. } => self.registry.tool(*tool).name.to_string(),
            ExprKind::Intrinsic { function, .. } => function.name().to_owned(),
            ExprKind::Const(value) => format!("constant {}", value.kind().name()),
            ExprKind::Input(input) => format!("input {}", program.input(*input).name),
            ExprKind::Binding(binding) => program.binding(*binding).name.clone(),
            ExprKind::Unary { op, .. } => op.symbol().to_owned(),
            ExprKind::Binary { op, .. } => op.symbol().to_owned(),
            ExprKind::Logical { op: LogicalOp::And, .. } => "and".to_owned(),
            ExprKind::Logical { op: LogicalOp::Or, .. } => "or".to_owned(),
            ExprKind::Conditional { .. } => "if".to_owned(),
            ExprKind::List(items) => format!("list of {}", items.len()),
            ExprKind::Object(entries) => format!("object of {}", entries.len()),
            ExprKind::Project { key: ProjectKey::Field(name), .. } => format!(".{name}"),
            ExprKind::Project { key: ProjectKey::Index(_), .. } => "[index]".to_owned(),
            ExprKind::Convert { target, .. } => format!("to {}", program.schemas.display(*target)),
            ExprKind::ExpectBoolean(_) => "expect Boolean".to_owned(),
            ExprKind::For { item, .. } => format!("for {}", program.binding(*item).name),
            ExprKind::Fold { item, .. } => format!("fold {}", program.binding(*item).name),
            ExprKind::Boundary { retries, .. } => format!("boundary retry {retries}"),
            ExprKind::Fail { .. } => "fail".to_owned(),
        }
    }

    /// The name of the input slot `index` of `expr` (the consumer path of a data edge).
    pub(crate) fn slot(&self, expr: ExprId, index: usize) -> String {
        let kind = &self.program.expr(expr).kind;
        let numbered = |name: &str| format!("{name}[{index}]");
        match kind {
            ExprKind::Binding(binding) => match self.program.binding(*binding).kind {
                BindingKind::Let(_) => "value".to_owned(),
                _ => numbered("input"),
            },
            ExprKind::Call { .. } | ExprKind::Intrinsic { .. } => numbered("args"),
            ExprKind::List(_) => numbered("items"),
            ExprKind::Object(entries) => object_slot(entries, index),
            ExprKind::Unary { .. } | ExprKind::Convert { .. } | ExprKind::ExpectBoolean(_) => {
                "value".to_owned()
            }
            ExprKind::Binary { .. } => {
                ["left", "right"].get(index).map_or_else(|| numbered("input"), |s| (*s).into())
            }
            ExprKind::Logical { .. } => "left".to_owned(),
            ExprKind::Conditional { .. } => "condition".to_owned(),
            ExprKind::Project { .. } => {
                ["target", "index"].get(index).map_or_else(|| numbered("input"), |s| (*s).into())
            }
            ExprKind::For { .. } => "collection".to_owned(),
            ExprKind::Fold { .. } => {
                ["init", "collection"].get(index).map_or_else(|| numbered("input"), |s| (*s).into())
            }
            ExprKind::Fail { .. } => {
                ["code", "message", "details"].get(index).map_or_else(|| numbered("input"), |s| (*s).into())
            }
            ExprKind::Const(_) | ExprKind::Input(_) | ExprKind::Boundary { .. } => numbered("input"),
        }
    }

    /// The schemas of `expr`'s operands and of its own value, in type notation.
    pub(crate) fn schemas(&self, expr: ExprId) -> (Vec<String>, String) {
        let schemas = &self.program.schemas;
        let inputs = operands(&self.program.expr(expr).kind)
            .into_iter()
            .map(|operand| schemas.display(self.program.expr(operand).schema).to_string())
            .collect();
        (inputs, schemas.display(self.program.expr(expr).schema).to_string())
    }

    /// The scopes owning the node `local`, outermost first: each scope's segment and the local
    /// id of the node that opened it (a branch, loop, fold or boundary).
    pub(crate) fn owners(&self, local: &str, expr: ExprId) -> Vec<(String, String)> {
        let owners = self.owner_scopes(local, expr);
        owners
            .outermost_first()
            .map(|scope| (scope.segment.to_owned(), self.owner_local(&owners, scope)))
            .collect()
    }

    /// The scopes owning the node `local` (of expression `expr`), without building their
    /// owners' ids: [`GraphContext::owner_local`] builds the one a caller needs.
    pub(crate) fn owner_scopes<'a>(&self, local: &'a str, expr: ExprId) -> OwnerScopes<'a> {
        let scope_path = split_local(local).0;
        let segments: SmallVec<[&str; 8]> = scope_path.split('/').filter(|s| !s.is_empty()).collect();
        let mut scopes = SmallVec::new();
        let mut region = self.program.expr(expr).region;
        for depth in (0..segments.len()).rev() {
            let Some(owner) = self.region_owner[region.index()] else { break };
            scopes.push(OwnerScope { segment: segments[depth], depth, owner });
            region = self.program.expr(owner).region;
        }
        OwnerScopes { segments, scopes }
    }

    /// The local id of the node that opened `scope`, one of `owners`.
    pub(crate) fn owner_local(&self, owners: &OwnerScopes<'_>, scope: &OwnerScope<'_>) -> String {
        let outer = &owners.segments[..scope.depth];
        let path = self.plan.path(scope.owner);
        let mut local = String::with_capacity(outer.iter().map(|s| s.len() + 1).sum::<usize>() + path.len());
        for (at, segment) in outer.iter().enumerate() {
            if at > 0 {
                local.push('/');
            }
            local.push_str(segment);
        }
        if !outer.is_empty() {
            local.push('|');
        }
        local.push_str(path);
        local
    }
}

/// The scopes owning one node ([`GraphContext::owner_scopes`]).
#[derive(Debug)]
pub(crate) struct OwnerScopes<'a> {
    /// The node's scope path, split.
    segments: SmallVec<[&'a str; 8]>,
    /// Innermost first.
    scopes: SmallVec<[OwnerScope<'a>; 8]>,
}

impl<'a> OwnerScopes<'a> {
    pub(crate) fn outermost_first(&self) -> impl Iterator<Item = &OwnerScope<'a>> {
        self.scopes.iter().rev()
    }
}

/// One scope owning a node: its segment of the node's id, and the node that opened it.
#[derive(Debug)]
pub(crate) struct OwnerScope<'a> {
    pub(crate) segment: &'a str,
    /// How many segments are outside it.
    depth: usize,
    owner: ExprId,
}

fn object_slot(entries: &[ObjectEntry], index: usize) -> String {
    let mut position = 0;
    for entry in entries {
        match entry {
            ObjectEntry::Static { key, .. } => {
                if position == index {
                    return key.to_string();
                }
                position += 1;
            }
            ObjectEntry::Computed { .. } => {
                if position == index {
                    return format!("key[{index}]");
                }
                if position + 1 == index {
                    return format!("value[{}]", index - 1);
                }
                position += 2;
            }
        }
    }
    format!("input[{index}]")
}
