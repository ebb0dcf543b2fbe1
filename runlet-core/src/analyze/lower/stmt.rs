//! Blocks and their statements: regions with their steps, declarations (shadowing lint, registry
//! root collisions with a rename fix) and the unused-binding lint with a removal fix.

use crate::diag::{Applicability, Diagnostic, Edit, Fix, Span, codes};
use crate::syntax::ast::Stmt;

use super::super::hir::{BindingId, BindingKind, ExprId, ExprKind, RegionId, RegionKind, Step};
use super::super::types::Ty;
use super::scope::Narrowable;
use super::{At, Expect, Lowerer};

impl Lowerer<'_> {
    /// Lowers `stmts` into a new region of `kind`. `bound` are the bindings the construct
    /// introduces (loop item, accumulator, caught error); `facts` are narrowings in force in the
    /// block; the returned value meets `expect`.
    pub(super) fn block(
        &mut self,
        kind: RegionKind,
        span: Span,
        stmts: &[Stmt],
        bound: &[BindingId],
        facts: Vec<(Narrowable, Ty)>,
        expect: Expect<'_>,
    ) -> RegionId {
        let (region, previous) = self.open_region(kind, span);
        let later: Vec<(&str, Span)> = stmts
            .iter()
            .filter_map(|s| match s {
                Stmt::Let(l) => Some((l.name.name.as_str(), l.span)),
                _ => None,
            })
            .collect();
        self.scopes.push(later);
        for &binding in bound {
            self.declare(binding);
        }
        let mark = self.scopes.narrow(&facts);
        let mut steps = Vec::new();
        let mut result = None;
        for stmt in stmts {
            if self.exhausted {
                break;
            }
            match stmt {
                Stmt::Let(l) => {
                    let value = self.expr(&l.value, Expect::Nothing);
                    let origin = self.expr_ref(value).origin;
                    let binding = self.new_binding(
                        &l.name.name,
                        l.name.span,
                        BindingKind::Let(value),
                        self.ty(value),
                        origin,
                    );
                    let root = self.expr_ref(value).effectful || self.expr_facts[value.index()].raises;
                    let facts = &mut self.binding_facts[binding.index()];
                    facts.statement = Some(l.span);
                    facts.root = root;
                    self.declare(binding);
                    steps.push(Step::Let { binding, value, root });
                }
                Stmt::Skip(skip) => {
                    let condition =
                        skip.condition.as_ref().map(|c| self.condition(c, "the `skip` condition"));
                    steps.push(Step::Skip { condition, span: skip.span });
                    // The statements after `skip if c` run only where `c` is false.
                    if let Some(c) = &skip.condition {
                        let facts = self.facts(c);
                        self.scopes.narrow(&facts.when_false);
                    }
                }
                Stmt::Return(r) => result = Some(self.expr(&r.value, expect)),
                // Only recovery produces expression statements, and always with a parse error,
                // which stops analysis before lowering.
                Stmt::Expr(_) => {}
            }
        }
        let result = match result {
            Some(result) => result,
            None => {
                let at = At { span: Span::at(span.end), path: self.current_path() };
                self.poison(&at)
            }
        };
        self.scopes.forget(mark);
        let declared = self.scopes.pop();
        for binding in declared {
            self.check_binding(binding);
        }
        self.close_region(region, previous, steps, result);
        region
    }

    /// Brings `binding` into scope, warning when it hides an outer binding or a host input.
    pub(super) fn declare(&mut self, binding: BindingId) {
        let name = self.bindings[binding.index()].name.clone();
        if name.is_empty() {
            return;
        }
        let span = self.bindings[binding.index()].span;
        if !self.registry.is_root(&name) {
            if let Some(outer) = self.scopes.outer(&name) {
                let outer_span = self.bindings[outer.index()].span;
                self.report(
                    Diagnostic::warning(
                        codes::SHADOWED_BINDING,
                        span,
                        format!("`{name}` hides the `{name}` of an enclosing block"),
                    )
                    .with_label(outer_span, "the outer binding")
                    .with_help("give the inner binding its own name, so each name means one value"),
                );
            } else if self.scopes.lookup(&name).is_none() && self.input_available(&name) {
                self.report(
                    Diagnostic::warning(
                        codes::SHADOWED_BINDING,
                        span,
                        format!("`{name}` hides the host input `{name}`"),
                    )
                    .with_help("give the binding its own name, so the host input stays readable"),
                );
            }
        }
        self.scopes.declare(&name, binding);
    }

    /// The checks that need every reference of a binding: registry root collisions (error, with
    /// a rename of every use) and unused bindings without effect (warning, with a removal fix).
    fn check_binding(&mut self, binding: BindingId) {
        let name = self.bindings[binding.index()].name.clone();
        let span = self.bindings[binding.index()].span;
        if self.registry.is_root(&name) {
            let diagnostic = self.root_collision(binding, &name, span);
            self.report(diagnostic);
            return;
        }
        let facts = &self.binding_facts[binding.index()];
        let BindingKind::Let(value) = self.bindings[binding.index()].kind else { return };
        let excused = self.exhausted
            || self.expr_facts[value.index()].poisoned
            || self.suggested.contains(&binding)
            || facts.statement.is_some_and(|s| self.read_early.contains(&s));
        if excused || !facts.references.is_empty() || facts.root {
            return;
        }
        let mut diagnostic = Diagnostic::warning(
            codes::UNUSED_BINDING,
            span,
            format!("`{name}` is never used and its value has no effect, so it is not computed"),
        )
        .with_help("remove it, or use it where it was meant to go");
        if let Some(statement) = facts.statement {
            let removal = self.statement_removal(statement);
            diagnostic = diagnostic.with_fix(Fix::new(
                format!("remove `{name}`"),
                Applicability::MaybeIncorrect,
                vec![Edit { span: removal, replacement: String::new() }],
            ));
        }
        self.report(diagnostic);
    }

    fn root_collision(&self, binding: BindingId, name: &str, span: Span) -> Diagnostic {
        let tools: Vec<String> = self
            .registry
            .tools()
            .filter(|(_, t)| t.name.root() == name)
            .take(3)
            .map(|(_, t)| format!("`{}`", t.name))
            .collect();
        let renamed = self.fresh_name(name);
        let mut edits = vec![Edit { span, replacement: renamed.clone() }];
        for &(at, shorthand) in &self.binding_facts[binding.index()].references {
            let replacement = if shorthand { format!("{name}: {renamed}") } else { renamed.clone() };
            edits.push(Edit { span: at, replacement });
        }
        Diagnostic::error(
            codes::BINDING_SHADOWS_REGISTRY_ROOT,
            span,
            format!("`{name}` is a registry root, so no binding can be named `{name}`"),
        )
        .with_note(format!(
            "the registry {} has tools under `{name}`: {}",
            self.registry.digest(),
            tools.join(", ")
        ))
        .with_help("registry roots are reserved in every scope so that calls resolve the same everywhere")
        .with_fix(Fix::new(
            format!("rename `{name}` to `{renamed}`"),
            Applicability::MachineApplicable,
            edits,
        ))
    }

    /// `{name}_value`, or with a number when that is taken by a binding, input or root.
    fn fresh_name(&self, name: &str) -> String {
        let taken = |candidate: &str| {
            self.registry.is_root(candidate)
                || self.input_available(candidate)
                || self.bindings.iter().any(|b| b.name == candidate)
        };
        let mut candidate = format!("{name}_value");
        let mut n = 2;
        while taken(&candidate) {
            candidate = format!("{name}_value{n}");
            n += 1;
        }
        candidate
    }

    /// The span that removes a statement with its indentation and line break, when it stands
    /// alone on its line.
    fn statement_removal(&self, statement: Span) -> Span {
        let bytes = self.source.as_bytes();
        let (mut start, mut end) = (statement.start as usize, statement.end as usize);
        let line_start = self.source.get(..start).and_then(|before| before.rfind('\n')).map_or(0, |i| i + 1);
        if self
            .source
            .get(line_start..start)
            .is_some_and(|indent| indent.chars().all(|c| c == ' ' || c == '\t'))
        {
            start = line_start;
        }
        while end < bytes.len() && matches!(bytes[end], b' ' | b'\t' | b';') {
            end += 1;
        }
        if bytes.get(end) == Some(&b'\r') {
            end += 1;
        }
        if bytes.get(end) == Some(&b'\n') {
            end += 1;
        }
        Span::new(start as u32, end as u32)
    }

    /// Whether evaluating `root` (with the regions it owns) reads `binding`.
    pub(super) fn reads(&self, root: ExprId, binding: BindingId) -> bool {
        let mut stack = vec![root];
        while let Some(id) = stack.pop() {
            let kind = &self.exprs[id.index()].kind;
            if matches!(kind, ExprKind::Binding(b) if *b == binding) {
                return true;
            }
            let (parts, regions) = kind.parts();
            stack.extend(parts);
            for region in regions {
                stack.extend(self.regions[region.index()].parts());
            }
        }
        false
    }
}
