//! The operations a run's calls perform (spec §4.2, §5.4): reuse of durable results across
//! boundary attempts, dispatch generations, the execution-class rules for dispatching again, and
//! recovery of calls left dispatching when a run resumes.

use std::sync::Arc;

use super::state::{NodeIx, NodeState, Owner, ScopeIx};
use super::{CallHandle, CallRequest, Effect, RunCore};
use crate::analyze::hir::ExprKind;
use crate::engine::event::Event;
use crate::engine::executor::ToolError;
use crate::engine::identity::OperationComponents;
use crate::engine::limits::LimitKey;
use crate::engine::retry::{redispatch_permitted, uncertain_error};
use crate::registry::ToolId;
use crate::schema::ExecutionClass;
use crate::value::{Digest, Labelled, List, Sensitivity, Value, keyed, rcve, sha256};

/// What identifies an operation within one run: the call site, the dynamic key and the digest
/// of the canonical inputs. The workflow, schema version and generation are the run's own, so
/// equal keys mean equal operation ids.
pub(super) type OperationKey = (Arc<str>, Arc<str>, Digest);

/// What the run knows about one operation.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub(super) struct OperationRecord {
    /// `CallDispatchPrepared` events so far: the last dispatch generation.
    pub(super) dispatches: u32,
    /// The last dispatch ended without knowing whether the operation took effect.
    pub(super) uncertain: bool,
    /// The last dispatch failed with this confirmed (not uncertain) error.
    pub(super) failure: Option<ToolError>,
    /// A durable success inside a boundary attempt and the node id that produced it: later
    /// attempts reuse it instead of dispatching (spec §2.8).
    pub(super) result: Option<(Labelled, Arc<str>)>,
}

/// What one dispatch of a call needs; kept while the call waits for its permits (spec §4.5).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(super) struct ParkedCall {
    tool: ToolId,
    arguments: List,
    input_digest: Digest,
    recover_first: bool,
    operation_generation: u32,
}

impl ParkedCall {
    /// The tool the call waits to dispatch.
    pub(super) fn tool(&self) -> ToolId {
        self.tool
    }
}

impl RunCore {
    /// A ready call: inside a boundary attempt, reuse the operation's durable result or refuse
    /// a dispatch the class forbids; then prepare the dispatch. Calls outside every attempt are
    /// never demanded twice, so they keep no operation record (a resume counts on the node).
    pub(super) fn start_call(&mut self, node: NodeIx, tool: ToolId, arguments: List) {
        let input_digest = self.input_digest(node, &arguments);
        let id = self.node_id(node);
        let mut recover_first = false;
        if self.inside_attempt(self.arena.nodes[node].scope) {
            let (call_site, dynamic_key) = self.call_identity(node);
            let key: OperationKey = (call_site, dynamic_key, input_digest.clone());
            let class = self.tool_class(tool);
            let record = self.operations.records.entry(key.clone()).or_default();
            if let Some((value, from)) = record.result.clone() {
                self.outbox.events.push(Event::CallReused { node: id, from });
                self.succeed(node, value);
                return;
            }
            if record.dispatches > 0 && !redispatch_permitted(class) {
                let confirmed = record.failure.clone().filter(|_| !record.uncertain);
                let error = match confirmed {
                    Some(failure) => ToolError { retryable: false, ..failure },
                    None => {
                        uncertain_error(&self.tool_name(tool), "after an earlier dispatch was not confirmed")
                    }
                };
                let run_error = self.tool_error(node, error);
                return self.fail(node, run_error);
            }
            recover_first = record.uncertain && class == ExecutionClass::Recoverable;
            self.operations.by_call.insert(node, key);
        }
        self.outbox.events.push(Event::NodeReady { node: id });
        self.prepare_dispatch(node, tool, arguments, input_digest, recover_first, 0);
    }

    /// Dispatches `node`'s operation (under `operation_generation`): at once when its call
    /// needs no permit, else once the shell has its permits (a capped tool, or a run or runtime
    /// with a `concurrency` cap), so that `CallDispatchPrepared` is journaled only for a call
    /// that is really being handed to its executor.
    pub(super) fn prepare_dispatch(
        &mut self,
        node: NodeIx,
        tool: ToolId,
        arguments: List,
        input_digest: Digest,
        recover_first: bool,
        operation_generation: u32,
    ) {
        let call = ParkedCall { tool, arguments, input_digest, recover_first, operation_generation };
        if !self.is_limited(LimitKey::Concurrency) && !self.tools.capped(tool) {
            return self.dispatch(node, call);
        }
        self.arena.nodes[node].state = NodeState::AwaitingPermits;
        self.operations.parked.insert(node, call);
        self.await_permits(node, tool);
    }

    /// Asks the shell for the permits of the parked call `node`.
    pub(super) fn await_permits(&mut self, node: NodeIx, tool: ToolId) {
        let node_id = self.node_id(node);
        self.outbox.effects.push(Effect::AwaitPermits { call: CallHandle(node.0), tool, node_id });
    }

    /// `Input::PermitsGranted`: the parked call dispatches now, unless it was cancelled while
    /// it waited (the shell then gives the permits back).
    pub(super) fn permits_granted(&mut self, call: CallHandle) {
        let node = NodeIx(call.0);
        if self.arena.nodes.get(node).is_none_or(|entry| entry.state != NodeState::AwaitingPermits) {
            return;
        }
        if let Some(call) = self.operations.parked.remove(&node) {
            self.dispatch(node, call);
        }
    }

    /// Records the next dispatch of `node`'s operation and asks the shell to send it. Every
    /// dispatch counts against `tool_calls` and is measured against `call_input_bytes`.
    fn dispatch(&mut self, node: NodeIx, call: ParkedCall) {
        let ParkedCall { tool, arguments, input_digest, recover_first, operation_generation } = call;
        let span = self.program.expr(self.arena.nodes[node].expr).span;
        if !self.count(LimitKey::ToolCalls, span, node) {
            return;
        }
        if self.is_limited(LimitKey::CallInputBytes) {
            let size = rcve::encode(&Value::List(arguments.clone())).len() as u64;
            if !self.within(LimitKey::CallInputBytes, size, span, Some(node)) {
                return;
            }
        }
        let dispatch_generation =
            match self.operations.by_call.get(&node).and_then(|k| self.operations.records.get_mut(k)) {
                Some(record) => {
                    record.dispatches += 1;
                    record.dispatches
                }
                None => {
                    self.arena.nodes[node].dispatches += 1;
                    self.arena.nodes[node].dispatches
                }
            };
        let scope = self.arena.nodes[node].scope;
        self.arena.nodes[node].state = NodeState::Running;
        let node_id = self.node_id(node);
        let attempt = self.attempt_of(scope);
        let (call_site, dynamic_key) = self.call_identity(node);
        let operation = self.workflow.as_ref().map(|workflow| {
            workflow.operation_id(&OperationComponents {
                workflow: workflow.identity(),
                call_site: &call_site,
                dynamic_key: &dynamic_key,
                schema_version: self.tools.schema_version(tool),
                input_digest: &input_digest,
                generation: operation_generation,
            })
        });
        self.outbox.events.push(Event::CallDispatchPrepared {
            node: node_id.clone(),
            tool: self.tools.name(tool),
            attempt,
            operation,
        });
        let digest_key = self.identity_key(&input_digest, scope);
        self.outbox.effects.push(Effect::Dispatch(CallRequest {
            call: CallHandle(node.0),
            tool,
            arguments,
            node_id,
            attempt,
            call_site,
            dynamic_key,
            input_digest,
            digest_key,
            dispatch_generation,
            recover_first,
            timeout: self.settings.tool_timeout,
            operation_generation,
            operation,
            scope: self.traced_scope(scope),
        }));
    }

    /// A dispatched call of a boundary attempt succeeded: its result becomes reusable.
    pub(super) fn operation_succeeded(&mut self, node: NodeIx, value: &Labelled) {
        let id = self.node_id(node);
        let Some(record) =
            self.operations.by_call.get(&node).and_then(|key| self.operations.records.get_mut(key))
        else {
            return;
        };
        record.uncertain = false;
        record.failure = None;
        record.result = Some((value.clone(), id));
    }

    /// A dispatched call of a boundary attempt failed: remember whether its outcome is known.
    pub(super) fn operation_failed(&mut self, node: NodeIx, error: &ToolError) {
        let Some(record) =
            self.operations.by_call.get(&node).and_then(|key| self.operations.records.get_mut(key))
        else {
            return;
        };
        record.uncertain = error.uncertain;
        record.failure = (!error.uncertain).then(|| error.clone());
    }

    /// A cancelled call answered: whatever happened, its result may not be used, so the
    /// operation's outcome counts as unknown for the class rules.
    pub(super) fn operation_unsettled(&mut self, node: NodeIx) {
        if let Some(record) =
            self.operations.by_call.get(&node).and_then(|key| self.operations.records.get_mut(key))
        {
            record.uncertain = true;
            record.failure = None;
        }
    }

    /// The host settled the outcome of `node`'s operation (it did not apply, or a fresh
    /// generation replaces it): it is no longer uncertain.
    pub(super) fn operation_settled(&mut self, node: NodeIx) {
        if let Some(record) =
            self.operations.by_call.get(&node).and_then(|key| self.operations.records.get_mut(key))
        {
            record.uncertain = false;
            record.failure = None;
        }
    }

    fn inside_attempt(&self, mut scope: ScopeIx) -> bool {
        loop {
            let entry = &self.arena.scopes[scope];
            if matches!(entry.owner, Owner::Attempt(_)) {
                return true;
            }
            let Some(parent) = entry.parent else { return false };
            scope = parent;
        }
    }

    /// `Input::Resume`: the worker that ran the journal's prefix is gone. Cancelled calls can no
    /// longer acknowledge, so they are cancelled; calls left dispatching take the host's
    /// journaled decision when there is one (`core/recovery.rs`), otherwise they are uncertain
    /// and recovered by class (spec §5.4): `pure` and `idempotent` are dispatched again with the
    /// same operation id, `recoverable` asks the executor first, `at_most_once` and `unsafe`
    /// fail with an uncertain `RL6109`.
    pub(super) fn resume(&mut self) {
        if self.arena.scopes.is_empty() {
            return;
        }
        self.outbox.events.push(Event::RunResumed);
        let mut dispatching = Vec::new();
        for node in self.arena.nodes.slots() {
            let is_call =
                matches!(self.program.expr(self.arena.nodes[node].expr).kind, ExprKind::Call { .. });
            match self.arena.nodes[node].state {
                NodeState::Cancelling => self.mark_cancelled(node),
                NodeState::Running if is_call => dispatching.push(node),
                // Never dispatched: it asks this worker's shell for its permits again.
                NodeState::AwaitingPermits => {
                    if let Some(tool) = self.operations.parked.get(&node).map(|parked| parked.tool) {
                        self.await_permits(node, tool);
                    }
                }
                _ => {}
            }
        }
        for node in dispatching {
            if self.finished || self.arena.nodes[node].state != NodeState::Running {
                continue;
            }
            let Some((tool, arguments)) = self.call_arguments(node) else { continue };
            if let Some(decision) = self.operations.host_decisions.remove(&node) {
                self.apply_host_decision(node, tool, arguments, decision);
                continue;
            }
            self.operation_unsettled(node);
            let class = self.tool_class(tool);
            if redispatch_permitted(class) {
                let input_digest = self.input_digest(node, &arguments);
                let recover_first = class == ExecutionClass::Recoverable;
                self.prepare_dispatch(node, tool, arguments, input_digest, recover_first, 0);
            } else {
                let error = uncertain_error(&self.tool_name(tool), "after the worker running it stopped");
                let run_error = self.tool_error(node, error);
                self.fail(node, run_error);
            }
        }
        self.settle_all_drains();
    }

    /// The digest of a call's canonical argument list (spec §6.2): keyed under the run's key
    /// when any path of any argument is sensitive or secret, plain SHA-256 when all are public.
    pub(super) fn input_digest(&self, node: NodeIx, arguments: &List) -> Digest {
        let entry = &self.arena.nodes[node];
        let nodes = &self.arena.scopes[entry.scope].nodes;
        let sensitive = match &self.program.expr(entry.expr).kind {
            ExprKind::Call { args, .. } => args.iter().any(|a| {
                let value = nodes.get(a).and_then(|n| self.arena.nodes[n].value.as_ref());
                value.is_some_and(|v| v.max_sensitivity() > Sensitivity::Public)
            }),
            _ => false,
        };
        let list = Value::List(arguments.clone());
        if sensitive { keyed(&list, &self.digest_key) } else { sha256(&list) }
    }

    /// The id of the run's digest key when the identity of a call in `scope` was keyed: its input
    /// digest is, or the key of an iteration or fold step around it is (that key digests the
    /// step's item, the last value the step's scope provides).
    fn identity_key(&self, input_digest: &Digest, scope: ScopeIx) -> Option<Arc<str>> {
        let mut scopes = std::iter::successors(Some(scope), |s| self.arena.scopes[s].parent);
        let keyed_item = scopes.any(|s| {
            let scope = &self.arena.scopes[s];
            matches!(scope.owner, Owner::Iteration(..) | Owner::FoldStep(..))
                && scope.provided.last().is_some_and(|(_, item)| item.max_sensitivity() > Sensitivity::Public)
        });
        let keyed = keyed_item || matches!(input_digest, Digest::HmacSha256 { .. });
        keyed.then(|| Arc::from(self.digest_key.id()))
    }

    /// The tool and canonical argument list of a call node whose operands have succeeded.
    fn call_arguments(&self, node: NodeIx) -> Option<(ToolId, List)> {
        let entry = &self.arena.nodes[node];
        let ExprKind::Call { tool, args } = &self.program.expr(entry.expr).kind else { return None };
        let values = args.iter().map(|a| self.value_of(entry.scope, *a).value().clone()).collect();
        List::new(values).ok().map(|list| (*tool, list))
    }
}
