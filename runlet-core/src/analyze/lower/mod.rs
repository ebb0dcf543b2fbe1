//! Lowering the AST to HIR in one pass: names resolved through scopes, types inferred (and
//! checked against what each context expects), conversions inserted, effects marked.
//!
//! The pass is bidirectional: [`Lowerer::expr`] takes an [`Expect`]ation, which object and list
//! literals, conditionals and blocks push inwards, and every other expression meets by a
//! conversion ([`Lowerer::coerce`]). After an error the expression gets schema `Any`, which
//! meets every expectation silently, so one mistake yields one diagnostic.

mod absent;
mod call;
mod context;
mod control;
mod convert;
mod expr;
mod intrinsic;
mod literal_fix;
mod names;
mod narrow;
mod operand_fix;
mod operator;
mod project;
mod scope;
mod stmt;

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::diag::sink::Sink;
use crate::diag::{Diagnostic, Span, codes};
use crate::registry::Registry;
use crate::schema::SchemaId;
use crate::syntax::ast;
use crate::syntax::path::{Fingerprint, Node, SyntaxPath, walk};
use crate::value::{Sensitivity, Value};

use super::fit::Fitter;
use super::hir::{
    Binding, BindingId, BindingKind, Expr, ExprId, ExprKind, Input, InputId, Origin, Part, Program, Region,
    RegionId, RegionKind, Step,
};
use super::types::{Ty, Types};
use super::{AnalyzeOptions, FastMap, Inputs};
pub(super) use context::Context;
use scope::Scopes;

/// What the context of an expression expects of its value.
#[derive(Debug, Clone, Copy)]
pub(super) enum Expect<'c> {
    Nothing,
    Schema(SchemaId, &'c Context),
}

/// What the analysis knows about an expression beyond its HIR node.
#[derive(Debug, Clone, Copy)]
struct ExprFacts {
    /// It may raise an explicit `fail`, which makes its statement a root like an effect does.
    raises: bool,
    /// The label on the value's own path (ancestors included): what a projection inherits.
    label: Sensitivity,
    /// It stands in for an expression that had an error (see [`Lowerer::poison`]).
    poisoned: bool,
}

/// What the analysis tracks about a binding beyond its HIR node.
#[derive(Debug, Clone)]
struct BindingFacts {
    ty: Ty,
    origin: Origin,
    sensitivity: Sensitivity,
    label: Sensitivity,
    /// Where it is read, for rename fixes; `true` marks an object shorthand `{ name }`.
    references: Vec<(Span, bool)>,
    /// The whole `name = value` statement, for a removal fix.
    statement: Option<Span>,
    root: bool,
}

/// Everything one analysis run builds.
pub(super) struct Lowerer<'a> {
    source: &'a str,
    registry: &'a Registry,
    inputs: &'a Inputs,
    options: &'a AnalyzeOptions,
    types: Types,
    fitter: Fitter,
    shapes: crate::schema::ShapeMap,
    /// Syntax paths by the address of the AST expression they belong to.
    paths: FastMap<usize, Arc<SyntaxPath>>,
    exprs: Vec<Expr>,
    expr_facts: Vec<ExprFacts>,
    regions: Vec<Region>,
    region_effectful: Vec<bool>,
    region_raises: Vec<bool>,
    bindings: Vec<Binding>,
    binding_facts: Vec<BindingFacts>,
    host_inputs: Vec<Input>,
    input_ids: BTreeMap<String, InputId>,
    scopes: Scopes,
    sink: Sink,
    current: RegionId,
    /// How many `boundary` bodies enclose the expression being lowered.
    boundary_depth: u32,
    work: u64,
    /// Names scored by candidate searches.
    candidate_work: u64,
    exhausted: bool,
    /// Where the work budget ran out.
    exhausted_at: Option<Span>,
    error_schema: Option<SchemaId>,
    /// Errors reported so far: a composite whose parts had errors is not checked again whole.
    errors: usize,
    /// Bindings a diagnostic suggested using: not reported as unused.
    suggested: Vec<BindingId>,
    /// The property read of the name being lowered (`name` of `customer.name`): a misspelt
    /// name's candidates that have it fit.
    reading: Option<ast::Text>,
    /// Statements whose binding was read before its declaration: not reported as unused.
    read_early: Vec<Span>,
    /// Loop items over an object whose one list property was probably meant (`for i in page`
    /// for `for i in page.nodes`): the item, where the collection ends, the property and its
    /// elements' schema.
    entry_loops: Vec<(BindingId, u32, Arc<str>, SchemaId)>,
    /// Each `fold` accumulator with the span of its seed, for a fix that changes the seed.
    accumulator_seeds: Vec<(BindingId, Span)>,
    /// Each `for` item's name with the span of its collection, for a read after the loop.
    loop_items: Vec<(String, Span)>,
    /// The conditional whose condition is being lowered, when that condition compares a value
    /// with `null`: what the conditional reads as should the comparison be constant.
    null_guard: Option<NullGuard>,
}

/// `then if x != null else otherwise` (or `x == null`) while its condition is lowered: when `x`
/// is never null the comparison is an error (`RL2301`), whose fix writes the conditional as
/// the one arm it always takes.
#[derive(Debug, Clone)]
pub(super) struct NullGuard {
    /// The comparison with `null`.
    pub comparison: Span,
    /// The whole conditional.
    pub conditional: Span,
    /// Its arm when the comparison is constant: `then` for `!=`, `otherwise` (or `null`) for `==`.
    pub reads_as: String,
}

/// The sensitivity a reading expression takes from what it reads.
#[derive(Debug, Clone, Copy)]
pub(super) struct Inherited {
    pub sensitivity: Sensitivity,
    pub label: Sensitivity,
}

/// The span and syntax path an expression being built belongs to.
#[derive(Debug, Clone)]
pub(super) struct At {
    pub span: Span,
    pub path: Arc<SyntaxPath>,
}

impl<'a> Lowerer<'a> {
    pub fn new(
        source: &'a str,
        program: &ast::Program,
        registry: &'a Registry,
        inputs: &'a Inputs,
        options: &'a AnalyzeOptions,
        diagnostic_room: usize,
    ) -> Lowerer<'a> {
        // About one expression per four bytes of source: sized once, never rehashed.
        let mut paths = FastMap::with_capacity_and_hasher(source.len() / 4, Default::default());
        walk(program, |path, node| {
            if let Node::Expr(expr) = node {
                paths.insert(expr as *const ast::Expr as usize, Arc::new(path));
            }
        });
        // About one HIR expression per source expression.
        let expressions = paths.len();
        Lowerer {
            source,
            registry,
            inputs,
            options,
            types: Types::new(registry, options.max_union_variants),
            fitter: Fitter::default(),
            shapes: crate::schema::ShapeMap::new(),
            paths,
            exprs: Vec::with_capacity(expressions),
            expr_facts: Vec::with_capacity(expressions),
            regions: Vec::new(),
            region_effectful: Vec::new(),
            region_raises: Vec::new(),
            bindings: Vec::new(),
            binding_facts: Vec::new(),
            host_inputs: Vec::new(),
            input_ids: BTreeMap::new(),
            scopes: Scopes::default(),
            sink: Sink::new(diagnostic_room, "the limit key is `diagnostics` (`--limit diagnostics=N`)"),
            current: RegionId(0),
            boundary_depth: 0,
            work: 0,
            candidate_work: 0,
            exhausted: false,
            exhausted_at: None,
            error_schema: None,
            errors: 0,
            entry_loops: Vec::new(),
            accumulator_seeds: Vec::new(),
            loop_items: Vec::new(),
            null_guard: None,
            suggested: Vec::new(),
            reading: None,
            read_early: Vec::new(),
        }
    }

    /// Lowers the whole program; the HIR is returned only when no error was reported, with the
    /// diagnostics and the units of work spent.
    pub fn run(mut self, program: &ast::Program) -> (Option<Program>, Vec<Diagnostic>, u64) {
        let root =
            self.block(RegionKind::Program, program.span, &program.stmts, &[], Vec::new(), Expect::Nothing);
        if self.exhausted {
            let diagnostic = Diagnostic::error(
                codes::ANALYSIS_BUDGET_EXCEEDED,
                self.exhausted_at.unwrap_or(program.span),
                format!("analysis stopped after {} units of work", self.options.max_work),
            )
            .with_help("split the program into smaller programs")
            .with_note("the limit key is `analysis_work` (`--limit analysis_work=N`)");
            self.sink.push(diagnostic);
        }
        let work = self.work + self.fitter.steps;
        let diagnostics = self.sink.finish();
        if diagnostics.iter().any(Diagnostic::is_error) {
            return (None, diagnostics, work);
        }
        let program = Program {
            exprs: self.exprs,
            regions: self.regions,
            bindings: self.bindings,
            inputs: self.host_inputs,
            root,
            schemas: Arc::new(self.types.into_arena()),
        };
        (Some(program), diagnostics, work)
    }

    fn report(&mut self, diagnostic: Diagnostic) {
        if diagnostic.is_error() {
            self.errors += 1;
        }
        self.sink.push(diagnostic);
    }

    /// Whether a candidate search over `pool` names may run: a diagnostic reported now would be
    /// kept, and the searches so far have not scored `max_candidate_work` names. Counts the pool.
    fn search(&mut self, pool: usize) -> bool {
        if self.sink.is_full() || self.candidate_work + pool as u64 > self.options.max_candidate_work {
            return false;
        }
        self.candidate_work += pool as u64;
        true
    }

    /// Counts one unit of work; false once the budget is spent.
    fn spend(&mut self) -> bool {
        self.work += 1;
        if self.work + self.fitter.steps > self.options.max_work {
            self.exhausted = true;
        }
        !self.exhausted
    }

    /// The source text of `span` (empty when out of range).
    fn text(&self, span: Span) -> &'a str {
        self.source.get(span.range()).unwrap_or_default()
    }

    /// How a message names the expression at `span`: its text when short and on one line.
    fn describe(&self, span: Span) -> String {
        let text = self.text(span);
        if text.is_empty() || text.len() > 40 || text.contains('\n') {
            "this value".to_owned()
        } else {
            format!("`{text}`")
        }
    }

    fn at(&self, expr: &ast::Expr) -> At {
        let path = self.paths.get(&(expr as *const ast::Expr as usize)).cloned();
        At { span: expr.span, path: path.unwrap_or_else(|| self.current_path()) }
    }

    /// The program root's path, for a position the walk has no node for (the end of a block
    /// without `return`, which only a program with syntax errors has).
    fn current_path(&self) -> Arc<SyntaxPath> {
        Arc::new(SyntaxPath { steps: String::new(), fingerprint: Fingerprint([0; 16]) })
    }

    pub(super) fn ty(&self, id: ExprId) -> Ty {
        let expr = &self.exprs[id.index()];
        if expr.diverges { Ty::Never } else { Ty::Schema(expr.schema) }
    }

    fn expr_ref(&self, id: ExprId) -> &Expr {
        &self.exprs[id.index()]
    }

    /// The value of an expression known now: a literal, a folded expression, or a binding of
    /// one (so `n = 9223372036854775807` then `n + 1` is a literal-only overflow).
    fn constant(&self, id: ExprId) -> Option<&Value> {
        if self.expr_facts[id.index()].poisoned {
            return None;
        }
        match &self.exprs[id.index()].kind {
            ExprKind::Const(value) => Some(value),
            ExprKind::Binding(binding) => match self.bindings[binding.index()].kind {
                BindingKind::Let(value) => self.constant(value),
                _ => None,
            },
            _ => None,
        }
    }

    /// Adds an expression to the current region. Its effects, failures and sensitivity follow
    /// from its parts.
    fn push(&mut self, kind: ExprKind, ty: Ty, origin: Origin, at: &At) -> ExprId {
        self.push_inheriting(kind, ty, origin, at, None)
    }

    /// Like [`Lowerer::push`], for an expression that reads part of another value (a binding, a
    /// projection): it carries at least `inherited`'s sensitivity and takes its path label.
    fn push_inheriting(
        &mut self,
        kind: ExprKind,
        ty: Ty,
        origin: Origin,
        at: &At,
        inherited: Option<Inherited>,
    ) -> ExprId {
        // Whether the value is computed from its parts' values (and so as sensitive as they are):
        // not a call (its output schema says), a projection (it inherits) or a `fail`.
        let derives = !matches!(
            kind,
            ExprKind::Const(_)
                | ExprKind::Input(_)
                | ExprKind::Binding(_)
                | ExprKind::Call { .. }
                | ExprKind::Project { .. }
                | ExprKind::Fail { .. }
        );
        let mut effectful = match &kind {
            ExprKind::Call { tool, .. } => self.registry.tool(*tool).execution.is_effectful(),
            _ => false,
        };
        let mut raises = matches!(kind, ExprKind::Fail { .. });
        let mut derived = Sensitivity::Public;
        kind.for_each_part(|part| {
            let (part_effectful, part_raises, value) = match part {
                Part::Expr(e) => (self.exprs[e.index()].effectful, self.expr_facts[e.index()].raises, e),
                Part::Region(r) => (
                    self.region_effectful[r.index()],
                    self.region_raises[r.index()],
                    self.regions[r.index()].result,
                ),
            };
            effectful |= part_effectful;
            raises |= part_raises;
            derived = derived.max(self.exprs[value.index()].sensitivity);
        });
        let (schema, diverges) = match ty {
            Ty::Never => (self.types.any, true),
            Ty::Schema(schema) => (schema, false),
        };
        let mut sensitivity =
            if diverges { Sensitivity::Public } else { self.types.deep_sensitivity(schema) };
        if derives {
            sensitivity = sensitivity.max(derived);
        }
        let label = match inherited {
            Some(inherited) => {
                sensitivity = sensitivity.max(inherited.sensitivity);
                inherited.label.max(self.types.label(schema))
            }
            None if derives => sensitivity,
            None => self.types.label(schema),
        };
        let id = ExprId(self.exprs.len() as u32);
        self.exprs.push(Expr {
            kind,
            schema,
            diverges,
            origin,
            region: self.current,
            span: at.span,
            path: at.path.clone(),
            sensitivity,
            effectful,
        });
        self.expr_facts.push(ExprFacts { raises, label, poisoned: false });
        id
    }

    /// An expression standing in for one that had an error: `Any`, so nothing else complains.
    fn poison(&mut self, at: &At) -> ExprId {
        let any = self.types.any;
        let id = self.push(ExprKind::Const(Value::Null), Ty::Schema(any), Origin::Derived, at);
        self.expr_facts[id.index()].poisoned = true;
        id
    }

    /// Reserves a region and makes it current; returns it and the region it interrupts.
    fn open_region(&mut self, kind: RegionKind, span: Span) -> (RegionId, RegionId) {
        let id = RegionId(self.regions.len() as u32);
        self.regions.push(Region { kind, steps: Vec::new(), result: ExprId(0), span });
        self.region_effectful.push(false);
        self.region_raises.push(false);
        let previous = std::mem::replace(&mut self.current, id);
        (id, previous)
    }

    /// Completes a region opened by [`Lowerer::open_region`] and returns to `previous`.
    fn close_region(&mut self, id: RegionId, previous: RegionId, steps: Vec<Step>, result: ExprId) {
        let region = &mut self.regions[id.index()];
        region.steps = steps;
        region.result = result;
        let parts = region.parts();
        let effectful = parts.iter().any(|part| self.exprs[part.index()].effectful);
        let raises = parts.iter().any(|part| self.expr_facts[part.index()].raises);
        self.region_effectful[id.index()] = effectful;
        self.region_raises[id.index()] = raises;
        self.current = previous;
    }

    /// A region holding one expression, lowered by `lower`.
    fn arm(&mut self, span: Span, lower: impl FnOnce(&mut Self) -> ExprId) -> RegionId {
        let (id, previous) = self.open_region(RegionKind::Arm, span);
        let result = lower(self);
        self.close_region(id, previous, Vec::new(), result);
        id
    }

    /// Creates a binding (not yet in scope).
    fn new_binding(
        &mut self,
        name: &str,
        span: Span,
        kind: BindingKind,
        ty: Ty,
        origin: Origin,
    ) -> BindingId {
        let (sensitivity, label) = match kind {
            BindingKind::Let(value) => {
                (self.exprs[value.index()].sensitivity, self.expr_facts[value.index()].label)
            }
            _ => match ty {
                Ty::Schema(schema) => {
                    let deep = self.types.deep_sensitivity(schema);
                    (deep, self.types.label(schema))
                }
                Ty::Never => (Sensitivity::Public, Sensitivity::Public),
            },
        };
        let schema = match ty {
            Ty::Schema(schema) => schema,
            Ty::Never => self.types.any,
        };
        let id = BindingId(self.bindings.len() as u32);
        self.bindings.push(Binding { name: name.to_owned(), span, kind, schema });
        self.binding_facts.push(BindingFacts {
            ty,
            origin,
            sensitivity,
            label,
            references: Vec::new(),
            statement: None,
            root: false,
        });
        id
    }

    /// The schema of the error value a `catch` binds (spec §2.8), built once.
    fn error_schema(&mut self) -> SchemaId {
        if let Some(schema) = self.error_schema {
            return schema;
        }
        use crate::schema::{Property, SchemaKind};
        let types = &mut self.types;
        let def = types.define("runlet/catch/Error", "Error");
        let error_ref = types.intern(SchemaKind::Ref(def));
        let causes = types.list_of(error_ref);
        let null = types.null;
        let string = types.string;
        let tool = types.union(&[Ty::Schema(string), Ty::Schema(null)]).0;
        let tool = match tool {
            Ty::Schema(schema) => schema,
            Ty::Never => string,
        };
        let properties = vec![
            Property::new("code", string, true),
            Property::new("message", string, true),
            Property::new("retryable", types.boolean, true),
            Property::new("tool", tool, true),
            Property::new("node_id", string, true),
            Property::new("attempt", types.integer, true),
            Property::new("details", types.any_map, true),
            Property::new("causes", causes, true),
            Property::new("uncertain", types.boolean, true),
        ];
        let body = types.object(properties);
        types.set_body(def, body);
        self.error_schema = Some(body);
        body
    }
}

/// Whether `text` is a name or dotted path, which a fix may repeat (it reads, never calls).
fn is_path(text: &str) -> bool {
    !text.is_empty() && text.split('.').all(crate::schema::is_identifier)
}
