//! Evaluating a ready node: local work (operators, composites, projections, conversions,
//! checks, `fail`) with the `value` functions compile-time folding uses, and call dispatch.

use std::sync::Arc;

use super::RunCore;
use super::state::{NodeIx, NodeState, ScopeIx, ScopeStatus};
use crate::analyze::hir::{BindingId, BindingKind, ExprId, ExprKind, ObjectEntry, ProjectKey};
use crate::engine::error::{FailureClass, RunError};
use crate::engine::limits::LimitKey;
use crate::value::{Labelled, List, Object, Sensitivity, Value, ValueError, expect_bool};

impl RunCore {
    pub(super) fn evaluate(&mut self, node: NodeIx) {
        let (expr, scope) = {
            let entry = &self.arena.nodes[node];
            (entry.expr, entry.scope)
        };
        if self.arena.nodes[node].state != NodeState::Waiting
            || self.arena.scopes[scope].status != ScopeStatus::Active
        {
            return;
        }
        if !self.count(LimitKey::NodeEvaluations, self.program.expr(expr).span, node) {
            return;
        }
        let program = Arc::clone(&self.program);
        let result: Result<Labelled, ValueError> = match &program.expr(expr).kind {
            ExprKind::Const(value) => Ok(Labelled::public(value.clone())),
            ExprKind::Input(input) => Ok(self.inputs.get(input.index()).cloned().unwrap_or_else(null)),
            ExprKind::Binding(binding) => Ok(self.binding_value(scope, *binding)),
            ExprKind::Unary { op, operand } => self.value_of(scope, *operand).unary(*op),
            ExprKind::Binary { op, left, right } => {
                self.value_of(scope, *left).binary(*op, &self.value_of(scope, *right))
            }
            ExprKind::List(items) => Labelled::list(items.iter().map(|i| self.value_of(scope, *i)).collect()),
            ExprKind::Object(entries) => Labelled::object(
                entries
                    .iter()
                    .map(|entry| match entry {
                        ObjectEntry::Static { key, value } => {
                            (Labelled::public(Value::from(key.as_str())), self.value_of(scope, *value))
                        }
                        ObjectEntry::Computed { key, value } => {
                            (self.value_of(scope, *key), self.value_of(scope, *value))
                        }
                    })
                    .collect(),
            ),
            ExprKind::Project { target, key } => {
                let target = self.value_of(scope, *target);
                match key {
                    ProjectKey::Field(name) => target.member(name),
                    ProjectKey::Index(index) => target.index(&self.value_of(scope, *index)),
                }
            }
            ExprKind::Convert { value, .. } => match self.plan.convert_target(expr) {
                Some(shape) => self
                    .value_of(scope, *value)
                    .convert(shape, self.plan.shapes(), &self.budget.conversion_limits())
                    .map(|(converted, _)| converted),
                None => Ok(self.value_of(scope, *value)),
            },
            ExprKind::ExpectBoolean(value) => {
                let value = self.value_of(scope, *value);
                expect_bool(value.value(), "a condition").map(|_| value)
            }
            ExprKind::Fail { code, message, details } => {
                let error = self.raised(node, scope, *code, *message, *details);
                self.fail(node, error);
                return;
            }
            ExprKind::Call { tool, args } => {
                let values: Vec<Value> =
                    args.iter().map(|a| self.value_of(scope, *a).value().clone()).collect();
                match List::new(values) {
                    Ok(arguments) => self.start_call(node, *tool, arguments),
                    Err(error) => self.fail_compute(node, &error),
                }
                return;
            }
            ExprKind::Intrinsic { function, args } => {
                self.evaluate_intrinsic(node, scope, *function, args);
                return;
            }
            ExprKind::Logical { .. }
            | ExprKind::Conditional { .. }
            | ExprKind::For { .. }
            | ExprKind::Fold { .. }
            | ExprKind::Boundary { .. } => {
                self.expand(node);
                return;
            }
        };
        match result {
            Ok(value) => self.succeed(node, value),
            Err(error) => self.fail_compute(node, &error),
        }
    }

    pub(super) fn fail_compute(&mut self, node: NodeIx, error: &ValueError) {
        let scope = self.arena.nodes[node].scope;
        let run_error = RunError::compute(error, self.node_id(node).to_string(), self.attempt_of(scope));
        self.fail(node, run_error);
    }

    /// The error a `fail(code, message[, details])` raises: never retryable (spec §2.7.3). The
    /// error is journaled, published and caught as plain values, so every sensitive or secret
    /// path of its code, message and details is replaced by its redaction marker
    /// (`"<redacted:secret>"`) first; details keep their structure (spec §6.2).
    fn raised(
        &self,
        node: NodeIx,
        scope: ScopeIx,
        code: ExprId,
        message: ExprId,
        details: Option<ExprId>,
    ) -> RunError {
        let public = |expr: ExprId| self.value_of(scope, expr).redacted(Sensitivity::Public);
        let text = |expr: ExprId| match public(expr) {
            Value::String(text) => text.to_string(),
            other => crate::value::scalar_text(&other).unwrap_or_default(),
        };
        let details = details
            .and_then(|d| match public(d) {
                Value::Object(object) => Some(object),
                _ => None,
            })
            .unwrap_or_else(Object::empty);
        RunError {
            code: text(code),
            message: text(message),
            retryable: false,
            retry_after: None,
            tool: None,
            node_id: self.node_id(node).to_string(),
            attempt: self.attempt_of(scope),
            details,
            causes: Vec::new(),
            uncertain: false,
            class: FailureClass::Compute,
        }
    }

    /// The value of the succeeded node of `expr` in `scope`.
    pub(super) fn value_of(&self, scope: ScopeIx, expr: ExprId) -> Labelled {
        self.arena.scopes[scope]
            .nodes
            .get(&expr)
            .and_then(|node| self.arena.nodes[node].value.clone())
            .unwrap_or_else(null)
    }

    /// A binding's value seen from `scope`: a `let` value from the scope declaring it, or a value
    /// a scope provides (loop item, accumulator, caught error).
    fn binding_value(&self, scope: ScopeIx, binding: BindingId) -> Labelled {
        if let BindingKind::Let(value) = self.program.binding(binding).kind {
            let region = self.plan.binding_region(binding);
            return self.scope_of_region(scope, region).map(|s| self.value_of(s, value)).unwrap_or_else(null);
        }
        let mut current = Some(scope);
        while let Some(ix) = current {
            let entry = &self.arena.scopes[ix];
            if let Some((_, value)) = entry.provided.iter().find(|(b, _)| *b == binding) {
                return value.clone();
            }
            current = entry.parent;
        }
        null()
    }
}

fn null() -> Labelled {
    Labelled::public(Value::Null)
}
