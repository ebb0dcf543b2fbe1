//! Hand-built programs for the engine's tests: a small HIR builder (unique syntax paths, the
//! `Any` schema everywhere) and the spec's Appendix B with an answering oracle.

use std::sync::Arc;

use crate::analyze::hir::{
    Binding, BindingId, BindingKind, Expr, ExprId, ExprKind, ObjectEntry, Origin, Program, ProjectKey,
    Region, RegionId, RegionKind, Step,
};
use crate::engine::executor::ToolError;
use crate::registry::{Registry, RegistryOptions};
use crate::schema::{SchemaArena, SchemaId};
use crate::syntax::path::{Fingerprint, SyntaxPath};
use crate::value::{BinaryOp, List, Object, Sensitivity, Value};

/// Builds HIR by hand: every expression gets a unique syntax path and the `Any` schema.
pub(crate) struct Builder {
    program: Program,
    any: SchemaId,
    registry: Arc<Registry>,
}

impl Builder {
    /// A builder whose calls name tools of a registry of object-argument tools named `tools`.
    pub(crate) fn new(tools: &[&str]) -> Builder {
        let entries: Vec<String> = tools
            .iter()
            .map(|t| {
                format!(
                    r#"{{"name": "{t}", "inputSchema": {{"type": "object"}}, "execution": "idempotent"}}"#
                )
            })
            .collect();
        let json = format!(r#"{{"tools": [{}]}}"#, entries.join(","));
        let registry =
            Registry::from_json_str(&json, &RegistryOptions::default()).expect("registry").registry;
        Builder::with_registry(Arc::new(registry))
    }

    /// A builder whose calls name tools of `registry`.
    pub(crate) fn with_registry(registry: Arc<Registry>) -> Builder {
        let mut arena = SchemaArena::new();
        let any = arena.any();
        let program = Program {
            exprs: Vec::new(),
            regions: Vec::new(),
            bindings: Vec::new(),
            inputs: Vec::new(),
            root: RegionId(0),
            schemas: Arc::new(arena),
        };
        let mut builder = Builder { program, any, registry };
        builder.region(RegionKind::Program);
        builder
    }

    pub(crate) fn region(&mut self, kind: RegionKind) -> RegionId {
        let id = RegionId(self.program.regions.len() as u32);
        self.program.regions.push(Region {
            kind,
            steps: Vec::new(),
            result: ExprId(u32::MAX),
            span: Default::default(),
        });
        id
    }

    pub(crate) fn expr(&mut self, region: RegionId, kind: ExprKind) -> ExprId {
        let id = ExprId(self.program.exprs.len() as u32);
        self.program.exprs.push(Expr {
            kind,
            schema: self.any,
            diverges: false,
            origin: Origin::Derived,
            region,
            span: Default::default(),
            path: Arc::new(SyntaxPath { steps: format!("e{}", id.0), fingerprint: Fingerprint([0; 16]) }),
            sensitivity: Sensitivity::Public,
            effectful: false,
        });
        id
    }

    pub(crate) fn constant(&mut self, region: RegionId, value: Value) -> ExprId {
        self.expr(region, ExprKind::Const(value))
    }

    pub(crate) fn call(&mut self, region: RegionId, tool: &str, args: Vec<ExprId>) -> ExprId {
        let tool = self.registry.tool_named(tool).expect("tool in registry");
        self.expr(region, ExprKind::Call { tool, args })
    }

    pub(crate) fn binding(&mut self, name: &str, kind: BindingKind) -> BindingId {
        let id = BindingId(self.program.bindings.len() as u32);
        self.program.bindings.push(Binding {
            name: name.into(),
            span: Default::default(),
            kind,
            schema: self.any,
        });
        id
    }

    pub(crate) fn let_(&mut self, region: RegionId, name: &str, value: ExprId, root: bool) -> ExprId {
        let binding = self.binding(name, BindingKind::Let(value));
        self.program.regions[region.index()].steps.push(Step::Let { binding, value, root });
        self.expr(region, ExprKind::Binding(binding))
    }

    pub(crate) fn skip_if(&mut self, region: RegionId, condition: ExprId) {
        self.program.regions[region.index()]
            .steps
            .push(Step::Skip { condition: Some(condition), span: Default::default() });
    }

    pub(crate) fn result(&mut self, region: RegionId, result: ExprId) {
        self.program.regions[region.index()].result = result;
    }

    pub(crate) fn field(&mut self, region: RegionId, target: ExprId, name: &str) -> ExprId {
        self.expr(region, ExprKind::Project { target, key: ProjectKey::Field(name.into()) })
    }

    pub(crate) fn object(&mut self, region: RegionId, entries: Vec<(&str, ExprId)>) -> ExprId {
        let entries =
            entries.into_iter().map(|(key, value)| ObjectEntry::Static { key: key.into(), value }).collect();
        self.expr(region, ExprKind::Object(entries))
    }

    pub(crate) fn finish(self) -> (Arc<Program>, Arc<Registry>) {
        (Arc::new(self.program), self.registry)
    }
}

pub(crate) fn int(n: i64) -> Value {
    Value::Int(n)
}

pub(crate) fn record(pairs: Vec<(&str, Value)>) -> Value {
    Object::from_pairs(pairs.into_iter().map(|(k, v)| (k.into(), v)).collect()).expect("object").into()
}

pub(crate) fn list(items: Vec<Value>) -> Value {
    List::new(items).expect("list").into()
}

/// `me = github.me(); lme = linear.me(); a = linear.issues({owner: lme.id});
/// b = github.prs({owner: me.login}); return a + b` (spec Appendix B).
pub(crate) fn appendix_b() -> (Arc<Program>, Arc<Registry>) {
    let mut b = Builder::new(&["github.me", "linear.me", "linear.issues", "github.prs"]);
    let root = RegionId(0);
    let me_call = b.call(root, "github.me", vec![]);
    let me = b.let_(root, "me", me_call, false);
    let lme_call = b.call(root, "linear.me", vec![]);
    let lme = b.let_(root, "linear_me", lme_call, false);
    let lme_id = b.field(root, lme, "id");
    let issues_arg = b.object(root, vec![("owner", lme_id)]);
    let issues_call = b.call(root, "linear.issues", vec![issues_arg]);
    let issues = b.let_(root, "my_issues", issues_call, false);
    let login = b.field(root, me, "login");
    let prs_arg = b.object(root, vec![("owner", login)]);
    let prs_call = b.call(root, "github.prs", vec![prs_arg]);
    let prs = b.let_(root, "my_prs", prs_call, false);
    let sum = b.expr(root, ExprKind::Binary { op: BinaryOp::Add, left: issues, right: prs });
    b.result(root, sum);
    b.finish()
}

pub(crate) fn appendix_b_oracle(tool: &str, _args: &List, _attempt: u32) -> Result<Value, ToolError> {
    Ok(match tool {
        "github.me" => record(vec![("login", "octo".into())]),
        "linear.me" => record(vec![("id", "u1".into())]),
        "linear.issues" => list(vec!["i1".into(), "i2".into()]),
        "github.prs" => list(vec!["p1".into()]),
        other => panic!("unexpected call to {other}"),
    })
}
