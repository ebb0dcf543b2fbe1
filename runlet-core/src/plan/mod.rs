//! The plan: what each region of a program owns and what each expression reads, computed once per
//! compiled program from the HIR and shared by every run of it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::analyze::hir::{
    BindingId, BindingKind, ExprId, ExprKind, ObjectEntry, Program, ProjectKey, RegionId, Step,
};
use crate::schema::ShapeMap;
use crate::value::{ShapeId, Shapes};

/// Per-program facts the run core looks up on every reaction.
#[derive(Debug, Clone)]
pub struct Plan {
    /// For each binding, the region whose scope holds its value.
    binding_region: Vec<RegionId>,
    /// For each region, its steps split at every `skip`: segment `k` holds the effect roots before
    /// skip `k` (the last segment those after the last skip).
    segments: Vec<Vec<Segment>>,
    /// For each region, the `let` bindings of enclosing regions that it (or a loop or boundary
    /// body inside it) reads: started as soon as the construct owning the region is demanded,
    /// so that work a loop body will need does not wait for the loop (spec §2.9, step 1).
    prefetch: Vec<Vec<BindingId>>,
    /// Each expression's syntax path as text, the last part of its nodes' ids.
    paths: Vec<Arc<str>>,
    /// The runtime shapes of every conversion target, and which shape each `Convert` uses.
    shapes: Shapes,
    convert_targets: BTreeMap<ExprId, ShapeId>,
}

/// Effect roots that run together, and the skip that gates what follows them.
#[derive(Debug, Clone, Default)]
pub struct Segment {
    pub roots: Vec<ExprId>,
    /// The skip closing this segment: `Some(None)` is an unconditional `skip`, `None` means the
    /// segment is the last and the region's result follows.
    pub skip: Option<Option<ExprId>>,
}

impl Plan {
    pub fn new(program: &Program) -> Plan {
        let mut binding_region = vec![program.root; program.bindings.len()];
        for (index, binding) in program.bindings.iter().enumerate() {
            if let BindingKind::Let(value) = binding.kind {
                binding_region[index] = program.expr(value).region;
            }
        }
        for expr in &program.exprs {
            match &expr.kind {
                ExprKind::For { item, body, .. } => binding_region[item.index()] = *body,
                ExprKind::Fold { accumulator, item, body, .. } => {
                    binding_region[accumulator.index()] = *body;
                    binding_region[item.index()] = *body;
                }
                ExprKind::Boundary { error, catch, .. } => binding_region[error.index()] = *catch,
                _ => {}
            }
        }
        let segments = program.regions.iter().map(|region| segments_of(&region.steps)).collect();
        let prefetch = prefetch_sets(program, &binding_region);
        let mut shape_map = ShapeMap::new();
        let mut convert_targets = BTreeMap::new();
        for (index, expr) in program.exprs.iter().enumerate() {
            if let ExprKind::Convert { target, .. } = expr.kind {
                convert_targets.insert(ExprId(index as u32), shape_map.shape(&program.schemas, target));
            }
        }
        let paths = distinct_paths(program);
        Plan { binding_region, segments, prefetch, paths, shapes: shape_map.into_shapes(), convert_targets }
    }

    /// `expr`'s syntax path as text.
    pub fn path(&self, expr: ExprId) -> &Arc<str> {
        &self.paths[expr.index()]
    }

    /// The shapes conversions convert to.
    pub fn shapes(&self) -> &Shapes {
        &self.shapes
    }

    /// The target shape of the `Convert` expression `expr`.
    pub fn convert_target(&self, expr: ExprId) -> Option<ShapeId> {
        self.convert_targets.get(&expr).copied()
    }

    /// The region whose scope holds `binding`'s value.
    pub fn binding_region(&self, binding: BindingId) -> RegionId {
        self.binding_region[binding.index()]
    }

    pub fn segments(&self, region: RegionId) -> &[Segment] {
        &self.segments[region.index()]
    }

    /// The outer `let` bindings to start when the construct owning `region` is demanded.
    pub fn prefetch(&self, region: RegionId) -> &[BindingId] {
        &self.prefetch[region.index()]
    }
}

/// Each expression's syntax path as text. Expressions the analyzer adds (conversions, boolean
/// checks) share the path of the source node they belong to; the second and later expressions of
/// a shared path get `@k` appended (`k` counting from 1 in lowering order), so that no two nodes
/// of one scope share an id.
fn distinct_paths(program: &Program) -> Vec<Arc<str>> {
    let mut seen: BTreeMap<String, u32> = BTreeMap::new();
    program
        .exprs
        .iter()
        .map(|expr| {
            let text = expr.path.to_string();
            let count = seen.entry(text.clone()).or_insert(0);
            *count += 1;
            if *count == 1 { Arc::from(text) } else { Arc::from(format!("{text}@{}", *count - 1)) }
        })
        .collect()
}

/// The regions a construct enters whenever it runs: loop and fold bodies and boundary bodies.
/// Conditional arms, `and`/`or` operands and catch blocks run only sometimes and are not here.
pub fn eager_bodies(kind: &ExprKind) -> Option<RegionId> {
    match kind {
        ExprKind::For { body, .. } | ExprKind::Fold { body, .. } | ExprKind::Boundary { body, .. } => {
            Some(*body)
        }
        _ => None,
    }
}

/// For every region: the `let` bindings declared outside it that it reads, directly or through
/// the eager bodies nested in it. Regions are nested at most as deep as the parser allows.
fn prefetch_sets(program: &Program, binding_region: &[RegionId]) -> Vec<Vec<BindingId>> {
    let count = program.regions.len();
    let mut reads: Vec<BTreeSet<BindingId>> = vec![BTreeSet::new(); count];
    let mut children: Vec<Vec<RegionId>> = vec![Vec::new(); count];
    let mut parent: Vec<Option<RegionId>> = vec![None; count];
    for expr in &program.exprs {
        match &expr.kind {
            ExprKind::Binding(binding) if matches!(program.binding(*binding).kind, BindingKind::Let(_)) => {
                reads[expr.region.index()].insert(*binding);
            }
            kind => {
                if let Some(body) = eager_bodies(kind) {
                    children[expr.region.index()].push(body);
                }
                for owned in owned_regions(kind) {
                    parent[owned.index()] = Some(expr.region);
                }
            }
        }
    }
    let inside = |region: RegionId, mut candidate: RegionId| loop {
        if candidate == region {
            return true;
        }
        match parent[candidate.index()] {
            Some(up) => candidate = up,
            None => return false,
        }
    };
    let mut sets = Vec::with_capacity(count);
    for region in 0..count {
        let region = RegionId(region as u32);
        let mut gathered = BTreeSet::new();
        let mut pending = vec![region];
        while let Some(next) = pending.pop() {
            gathered.extend(reads[next.index()].iter().copied());
            pending.extend(children[next.index()].iter().copied());
        }
        sets.push(gathered.into_iter().filter(|b| !inside(region, binding_region[b.index()])).collect());
    }
    sets
}

/// Every region an expression owns.
pub fn owned_regions(kind: &ExprKind) -> Vec<RegionId> {
    match kind {
        ExprKind::Logical { right, .. } => vec![*right],
        ExprKind::Conditional { then, otherwise, .. } => vec![*then, *otherwise],
        ExprKind::For { body, .. } | ExprKind::Fold { body, .. } => vec![*body],
        ExprKind::Boundary { body, catch, .. } => vec![*body, *catch],
        _ => Vec::new(),
    }
}

fn segments_of(steps: &[Step]) -> Vec<Segment> {
    let mut segments = vec![Segment::default()];
    for step in steps {
        let current = segments.last_mut().expect("at least one segment");
        match step {
            Step::Let { value, root: true, .. } => current.roots.push(*value),
            Step::Let { root: false, .. } => {}
            Step::Skip { condition, .. } => {
                current.skip = Some(*condition);
                segments.push(Segment::default());
            }
        }
    }
    segments
}

/// The expressions of the same region that `kind` reads before it can be evaluated. Regions it
/// enters later (arms, bodies) are not operands.
pub fn operands(kind: &ExprKind) -> Vec<ExprId> {
    match kind {
        ExprKind::Const(_) | ExprKind::Input(_) | ExprKind::Binding(_) | ExprKind::Boundary { .. } => {
            Vec::new()
        }
        ExprKind::Call { args, .. } | ExprKind::Intrinsic { args, .. } => args.clone(),
        ExprKind::Unary { operand, .. } => vec![*operand],
        ExprKind::Binary { left, right, .. } => vec![*left, *right],
        ExprKind::Logical { left, .. } => vec![*left],
        ExprKind::Conditional { condition, .. } => vec![*condition],
        ExprKind::List(items) => items.clone(),
        ExprKind::Object(entries) => entries
            .iter()
            .flat_map(|entry| match entry {
                ObjectEntry::Static { value, .. } => vec![*value],
                ObjectEntry::Computed { key, value } => vec![*key, *value],
            })
            .collect(),
        ExprKind::Project { target, key } => match key {
            ProjectKey::Field(_) => vec![*target],
            ProjectKey::Index(index) => vec![*target, *index],
        },
        ExprKind::Convert { value, .. } => vec![*value],
        ExprKind::ExpectBoolean(value) => vec![*value],
        ExprKind::For { collection, .. } => vec![*collection],
        ExprKind::Fold { init, collection, .. } => vec![*init, *collection],
        ExprKind::Fail { code, message, details } => {
            let mut operands = vec![*code, *message];
            operands.extend(*details);
            operands
        }
    }
}
