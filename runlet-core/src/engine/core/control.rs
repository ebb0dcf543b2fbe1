//! Dynamic nodes and scope outcomes: conditionals and `and`/`or` enter one arm, `for` keeps at
//! most `limit` iterations active, `fold` steps one at a time, boundaries retry or catch, and a
//! failed scope cancels what it owns before its owner decides.

use std::sync::Arc;

use compact_str::CompactString;
use smallvec::{SmallVec, smallvec};

use super::state::{
    BoundaryPhase, BoundaryState, Control, FoldState, LoopState, NodeIx, NodeState, Owner, ScopeIx,
    ScopeStatus,
};
use super::{Effect, Outcome, RunCore, TracedScope};
use crate::analyze::hir::{ExprKind, LogicalOp};
use crate::diag::codes;
use crate::engine::error::RunError;
use crate::engine::event::{Arm, Event};
use crate::engine::limits::LimitKey;
use crate::value::{DigestKey, Labelled, Value, ValueError, expect_bool};

impl RunCore {
    /// A ready control node: its operands are resolved, so it picks or creates its scopes.
    pub(super) fn expand(&mut self, node: NodeIx) {
        let (expr, scope) = {
            let entry = &self.arena.nodes[node];
            (entry.expr, entry.scope)
        };
        let program = Arc::clone(&self.program);
        let id = self.node_id(node);
        self.arena.nodes[node].state = NodeState::Running;
        match &program.expr(expr).kind {
            ExprKind::Logical { op, left, right } => {
                let left = match expect_bool(self.value_of(scope, *left).value(), "an `and`/`or` operand") {
                    Ok(left) => left,
                    Err(error) => return self.fail_compute(node, &error),
                };
                let decided = match op {
                    LogicalOp::And => !left,
                    LogicalOp::Or => left,
                };
                if decided {
                    self.outbox.events.push(Event::BranchSelected { node: id, arm: Arm::ShortCircuit });
                    self.succeed(node, Labelled::public(Value::Bool(left)));
                } else {
                    self.outbox.events.push(Event::BranchSelected { node: id, arm: Arm::Right });
                    self.enter_arm(node, scope, *right, "right");
                }
            }
            ExprKind::Conditional { condition, then, otherwise } => {
                match expect_bool(self.value_of(scope, *condition).value(), "a condition") {
                    Ok(true) => {
                        self.outbox.events.push(Event::BranchSelected { node: id, arm: Arm::Then });
                        self.enter_arm(node, scope, *then, "then");
                    }
                    Ok(false) => {
                        self.outbox.events.push(Event::BranchSelected { node: id, arm: Arm::Else });
                        self.enter_arm(node, scope, *otherwise, "else");
                    }
                    Err(error) => self.fail_compute(node, &error),
                }
            }
            ExprKind::For { collection, limit, .. } => {
                let items = match elements(self.value_of(scope, *collection)) {
                    Ok(items) => items,
                    Err(error) => return self.fail_compute(node, &error),
                };
                self.outbox
                    .events
                    .push(Event::LoopCollectionResolved { node: id.clone(), items: items.len() });
                self.enter_traced_scope(node, id, TracedScope::Loop { items: items.len() });
                if !self.within_loop_iterations(node, items.len()) {
                    return;
                }
                let limit = limit.unwrap_or(self.settings.default_loop_limit).max(1) as usize;
                self.arena.nodes[node].control = Control::Loop(Box::new(LoopState {
                    items: items.into_iter().map(Some).collect(),
                    limit,
                    next: 0,
                    active: Vec::new(),
                    finished: 0,
                    starting: false,
                }));
                self.start_iterations(node);
            }
            ExprKind::Fold { init, collection, .. } => {
                let items = match elements(self.value_of(scope, *collection)) {
                    Ok(items) => items,
                    Err(error) => return self.fail_compute(node, &error),
                };
                self.outbox
                    .events
                    .push(Event::LoopCollectionResolved { node: id.clone(), items: items.len() });
                self.enter_traced_scope(node, id, TracedScope::Loop { items: items.len() });
                if !self.within_loop_iterations(node, items.len()) {
                    return;
                }
                let accumulator = self.value_of(scope, *init);
                self.arena.nodes[node].control = Control::Fold(Box::new(FoldState {
                    items,
                    index: 0,
                    accumulator,
                    step: None,
                    stepping: false,
                }));
                self.advance_fold(node);
            }
            ExprKind::Boundary { retries, .. } => {
                self.arena.nodes[node].control = Control::Boundary(Box::new(BoundaryState {
                    attempt: 0,
                    retries: *retries,
                    catching: false,
                    attempt_scope: scope,
                    phase: BoundaryPhase::Running,
                }));
                self.start_attempt(node);
            }
            _ => {}
        }
    }

    /// Checks a loop's item count against `loop_iterations`.
    fn within_loop_iterations(&mut self, node: NodeIx, items: usize) -> bool {
        let span = self.program.expr(self.arena.nodes[node].expr).span;
        self.within(LimitKey::LoopIterations, items as u64, span, Some(node))
    }

    fn enter_arm(&mut self, node: NodeIx, scope: ScopeIx, region: crate::analyze::hir::RegionId, path: &str) {
        let attempt = self.attempt_of(scope);
        self.enter(region, Some(scope), Owner::Arm(node), path.into(), attempt, SmallVec::new());
    }

    /// Enters iterations while fewer than `limit` are active; iterations that finish while this
    /// runs are counted without re-entering it, so a long loop of instant bodies stays flat.
    fn start_iterations(&mut self, node: NodeIx) {
        let program = Arc::clone(&self.program);
        let (ExprKind::For { item, body, .. }, scope) =
            (&program.expr(self.arena.nodes[node].expr).kind, self.arena.nodes[node].scope)
        else {
            return;
        };
        if let Control::Loop(state) = &mut self.arena.nodes[node].control {
            state.starting = true;
        }
        loop {
            let next = match &mut self.arena.nodes[node].control {
                Control::Loop(state)
                    if state.active.len() < state.limit && state.next < state.items.len() =>
                {
                    state.next += 1;
                    // Items from `next` on have not started, so each still holds its element.
                    let Some(element) = state.items[state.next - 1].take() else { continue };
                    (state.next - 1, element)
                }
                _ => break,
            };
            let (index, value) = next;
            self.outbox.events.push(Event::IterationMaterialized { node: self.node_id(node), index });
            let attempt = self.attempt_of(scope);
            let iteration = self.enter(
                *body,
                Some(scope),
                Owner::Iteration(node, index),
                iteration_key(index, &value, &self.digest_key),
                attempt,
                smallvec![(*item, value)],
            );
            if let Control::Loop(state) = &mut self.arena.nodes[node].control {
                // An iteration that finished while it was entered is no longer active.
                if self.arena.scopes[iteration].status == ScopeStatus::Active {
                    state.active.push(iteration);
                }
            }
        }
        let done = match &mut self.arena.nodes[node].control {
            Control::Loop(state) => {
                state.starting = false;
                state.finished == state.items.len()
            }
            _ => false,
        };
        if done && self.arena.nodes[node].state == NodeState::Running {
            self.finish_loop(node);
        }
    }

    fn iteration_done(&mut self, node: NodeIx, index: usize, scope: ScopeIx, value: Option<Labelled>) {
        let (starting, done) = match &mut self.arena.nodes[node].control {
            Control::Loop(state) => {
                state.items[index] = value;
                state.finished += 1;
                state.active.retain(|s| *s != scope);
                (state.starting, state.finished == state.items.len())
            }
            _ => return,
        };
        self.retire(scope);
        if starting {
            return;
        }
        if done {
            self.finish_loop(node);
        } else {
            self.start_iterations(node);
        }
    }

    fn finish_loop(&mut self, node: NodeIx) {
        let results = match &mut self.arena.nodes[node].control {
            Control::Loop(state) => std::mem::take(&mut state.items),
            _ => return,
        };
        let kept: Vec<Labelled> = results.into_iter().flatten().collect();
        match Labelled::list(kept) {
            Ok(list) => self.succeed(node, list),
            Err(error) => self.fail_compute(node, &error),
        }
    }

    /// Runs fold steps one after another; steps that finish at once are taken in this loop
    /// rather than by recursion.
    fn advance_fold(&mut self, node: NodeIx) {
        let program = Arc::clone(&self.program);
        let (ExprKind::Fold { accumulator, item, body, .. }, scope) =
            (&program.expr(self.arena.nodes[node].expr).kind, self.arena.nodes[node].scope)
        else {
            return;
        };
        loop {
            let step = match &mut self.arena.nodes[node].control {
                Control::Fold(state) if state.step.is_none() && !state.stepping => {
                    if state.index == state.items.len() {
                        None
                    } else {
                        state.stepping = true;
                        Some((state.index, state.items[state.index].clone(), state.accumulator.clone()))
                    }
                }
                _ => return,
            };
            let Some((index, value, acc)) = step else {
                let acc = match &self.arena.nodes[node].control {
                    Control::Fold(state) => state.accumulator.clone(),
                    _ => return,
                };
                self.succeed(node, acc);
                return;
            };
            let attempt = self.attempt_of(scope);
            let step_scope = self.enter(
                *body,
                Some(scope),
                Owner::FoldStep(node),
                iteration_key(index, &value, &self.digest_key),
                attempt,
                smallvec![(*accumulator, acc), (*item, value)],
            );
            match &mut self.arena.nodes[node].control {
                Control::Fold(state) => {
                    state.stepping = false;
                    if state.index == index {
                        state.step = Some(step_scope);
                        return;
                    }
                }
                _ => return,
            }
        }
    }

    fn fold_step_done(&mut self, node: NodeIx, scope: ScopeIx, value: Option<Labelled>) {
        let stepping = match &mut self.arena.nodes[node].control {
            Control::Fold(state) => {
                if let Some(value) = value {
                    state.accumulator = value;
                }
                state.index += 1;
                state.step = None;
                state.stepping
            }
            _ => return,
        };
        self.retire(scope);
        if !stepping {
            self.advance_fold(node);
        }
    }

    /// A scope finished with its result, or `None` when a `skip` ended it.
    pub(super) fn scope_succeeded(&mut self, scope: ScopeIx, value: Option<Labelled>) {
        let null = || Labelled::public(Value::Null);
        match self.arena.scopes[scope].owner {
            Owner::Run => {
                if self.record_success() {
                    self.finish(Outcome::Succeeded(value.unwrap_or_else(null)));
                }
            }
            Owner::Arm(node) | Owner::Attempt(node) | Owner::Catch(node) => {
                self.succeed(node, value.unwrap_or_else(null));
            }
            Owner::Iteration(node, index) => self.iteration_done(node, index, scope, value),
            Owner::FoldStep(node) => self.fold_step_done(node, scope, value),
        }
    }

    /// A node of `scope` failed: cancel what the scope still runs, then let its owner decide.
    pub(super) fn scope_failed(&mut self, scope: ScopeIx, error: RunError) {
        if self.arena.scopes[scope].status != ScopeStatus::Active {
            if scope == ScopeIx(0) && !error.is_catchable() {
                self.policy_failure_while_draining(error);
            }
            return;
        }
        self.arena.scopes[scope].status = ScopeStatus::Failed;
        self.cancel_contents(scope);
        match self.arena.scopes[scope].owner {
            Owner::Run => self.run_failed(error),
            Owner::Arm(node) | Owner::Iteration(node, _) | Owner::FoldStep(node) | Owner::Catch(node) => {
                self.fail(node, error)
            }
            Owner::Attempt(node) => self.attempt_failed(node, error),
        }
    }

    /// Cancels `scope` (if still active) and everything it owns.
    pub(super) fn cancel_scope(&mut self, scope: ScopeIx) {
        if self.arena.scopes[scope].status == ScopeStatus::Active {
            self.arena.scopes[scope].status = ScopeStatus::Cancelled;
        }
        self.cancel_contents(scope);
    }

    /// Cancels the unfinished nodes of `scope` and its children. A running call gets a `Cancel`
    /// and stays `Cancelling` until it acknowledges (spec §4.4, §4.6); other nodes are cancelled
    /// at once, releasing the timers and permits they hold.
    fn cancel_contents(&mut self, scope: ScopeIx) {
        let nodes: Vec<NodeIx> = self.arena.scopes[scope].nodes.values().copied().collect();
        for node in nodes {
            let state = self.arena.nodes[node].state;
            if state.is_terminal() || state == NodeState::Cancelling {
                continue;
            }
            let is_call =
                matches!(self.program.expr(self.arena.nodes[node].expr).kind, ExprKind::Call { .. });
            if state == NodeState::Running && is_call {
                self.outbox.effects.push(Effect::Cancel(super::CallHandle(node.0)));
                self.arena.nodes[node].state = NodeState::Cancelling;
                self.outbox.events.push(Event::NodeCancelling { node: self.node_id(node) });
                continue;
            }
            if state == NodeState::AwaitingPermits {
                // Never dispatched: withdrawing its permit request is all its cancellation takes.
                self.operations.parked.remove(&node);
                self.outbox.effects.push(Effect::Cancel(super::CallHandle(node.0)));
            }
            self.release_control(node);
            self.arena.nodes[node].state = NodeState::Cancelled;
            self.outbox.events.push(Event::NodeCancelled { node: self.node_id(node) });
        }
        let children = self.arena.scopes[scope].children.clone();
        for child in children {
            self.cancel_scope(child);
        }
    }
}

/// An iteration's dynamic key (spec §4.2): its input index and a short digest of its element,
/// keyed under the run's key when the element is sensitive or secret (spec §6.2).
fn iteration_key(index: usize, element: &Labelled, key: &DigestKey) -> CompactString {
    let digest = element.digest(key);
    let mut number = itoa::Buffer::new();
    let mut hex = [0u8; 8];
    hex::encode_to_slice(&digest.bytes()[..4], &mut hex).expect("8 hex digits of 4 bytes");
    // Held inline (no allocation) up to 24 bytes: any index below 10^13.
    let mut text = CompactString::const_new("i");
    text.push_str(number.format(index));
    text.push('~');
    text.push_str(std::str::from_utf8(&hex).expect("hex digits are ASCII"));
    text
}

/// The items a `for`/`fold` iterates: list elements in order, or `{ key, value }` records of an
/// object or map in key order (spec §2.7).
fn elements(collection: Labelled) -> Result<Vec<Labelled>, ValueError> {
    match collection.value() {
        Value::List(list) => {
            (0..list.len()).map(|i| collection.index(&Labelled::public(Value::Int(i as i64)))).collect()
        }
        Value::Object(object) => object
            .entries()
            .iter()
            .map(|(key, _)| {
                let key = Labelled::public(Value::from(&**key));
                let value = collection.index(&key)?;
                Labelled::object(vec![
                    (Labelled::public(Value::from("key")), key),
                    (Labelled::public(Value::from("value")), value),
                ])
            })
            .collect(),
        other => Err(ValueError::new(
            codes::OPERAND_KIND_MISMATCH,
            format!("`for` and `fold` iterate a list, an object or a map, not {}", other.kind().name()),
        )),
    }
}
