//! Host recovery decisions about calls left dispatching (spec §5.4, invariant 8): resolving an
//! uncertain outcome or authorizing a fresh operation generation, journaled and applied on resume.

use super::state::{NodeIx, NodeState};
use super::{CallHandle, RunCore};
use crate::analyze::hir::ExprKind;
use crate::engine::event::{Event, RecordedResolution};
use crate::engine::executor::ToolError;
use crate::registry::ToolId;
use crate::value::{List, Value};

/// What the host learned about an operation whose outcome was uncertain.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Resolution {
    /// The operation took effect with this output: the call succeeds with it.
    Applied(Value),
    /// The operation did not take effect: the call is dispatched again under the same operation
    /// id (a new dispatch id).
    NotApplied,
    /// The operation failed with this confirmed error: the call fails, not uncertain.
    Failed(ToolError),
}

/// A journaled host decision waiting for the next resume.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(super) enum HostDecision {
    Resolved(Resolution),
    /// Dispatch under this operation generation: a new operation id.
    FreshGeneration(u32),
}

impl RunCore {
    /// True when `call` is a call left dispatching that no host decision covers yet: the only
    /// calls a host may resolve or give a fresh generation.
    pub fn awaits_host_decision(&self, call: CallHandle) -> bool {
        let node = NodeIx(call.0);
        let Some(entry) = self.arena.nodes.get(NodeIx(node.0)) else { return false };
        entry.state == NodeState::Running
            && matches!(self.program.expr(entry.expr).kind, ExprKind::Call { .. })
            && !self.operations.host_decisions.contains_key(&node)
    }

    pub(super) fn operation_resolved(&mut self, call: CallHandle, resolution: Resolution) {
        if !self.awaits_host_decision(call) {
            return;
        }
        let node = NodeIx(call.0);
        let recorded = RecordedResolution::from(&resolution);
        self.outbox.events.push(Event::OperationResolved { node: self.node_id(node), resolution: recorded });
        self.operations.host_decisions.insert(node, HostDecision::Resolved(resolution));
    }

    pub(super) fn fresh_generation_authorized(&mut self, call: CallHandle, generation: u32) {
        if !self.awaits_host_decision(call) {
            return;
        }
        let node = NodeIx(call.0);
        self.outbox.events.push(Event::FreshGenerationAuthorized { node: self.node_id(node), generation });
        self.operations.host_decisions.insert(node, HostDecision::FreshGeneration(generation));
    }

    /// Applies the host's decision about `node`, a call left dispatching, on resume: the
    /// resolved answer, or a new dispatch (same operation after `NotApplied`, the authorized
    /// generation otherwise).
    pub(super) fn apply_host_decision(
        &mut self,
        node: NodeIx,
        tool: ToolId,
        arguments: List,
        decision: HostDecision,
    ) {
        let call = CallHandle(node.0);
        let generation = match decision {
            HostDecision::Resolved(Resolution::Applied(value)) => {
                return self.call_answered(call, Ok(self.labelled_output(call, value)));
            }
            HostDecision::Resolved(Resolution::Failed(error)) => {
                return self.call_answered(call, Err(error.with_uncertain(false)));
            }
            HostDecision::Resolved(Resolution::NotApplied) => 0,
            HostDecision::FreshGeneration(generation) => generation,
        };
        self.operation_settled(node);
        let input_digest = self.input_digest(node, &arguments);
        self.prepare_dispatch(node, tool, arguments, input_digest, false, generation);
    }
}
