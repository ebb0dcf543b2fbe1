//! Intrinsic nodes (docs/STDLIB.md): deterministic ones evaluated in place as compute nodes;
//! nondeterministic ones handed to the shell to sample once, their answer journaled.

use super::state::{NodeIx, NodeState, ScopeIx};
use super::{CallHandle, Effect, RunCore, SampleRequest};
use crate::analyze::hir::{ExprId, ExprKind};
use crate::engine::event::Event;
use crate::stdlib::{Intrinsic, PureFunction};
use crate::value::{Labelled, Sensitivity, Value, ValueError, rcve};

impl RunCore {
    /// Evaluates the intrinsic node `node` over its converted arguments.
    pub(super) fn evaluate_intrinsic(
        &mut self,
        node: NodeIx,
        scope: ScopeIx,
        function: Intrinsic,
        args: &[ExprId],
    ) {
        match function {
            Intrinsic::Pure(function) => match self.pure_result(scope, function, args) {
                Ok(value) => self.succeed(node, value),
                Err(error) => self.fail_compute(node, &error),
            },
            Intrinsic::Sampled(function) => {
                self.arena.nodes[node].state = NodeState::Running;
                let node_id = self.node_id(node);
                self.outbox.effects.push(Effect::Sample(SampleRequest {
                    call: CallHandle(node.0),
                    function,
                    node_id,
                }));
            }
        }
    }

    /// A deterministic intrinsic's result, as sensitive as its most sensitive argument.
    fn pure_result(
        &mut self,
        scope: ScopeIx,
        function: PureFunction,
        args: &[ExprId],
    ) -> Result<Labelled, ValueError> {
        let arguments: Vec<Labelled> = args.iter().map(|a| self.value_of(scope, *a)).collect();
        let level = arguments.iter().map(Labelled::max_sensitivity).max().unwrap_or(Sensitivity::Public);
        let values: Vec<Value> = arguments.into_iter().map(|a| a.into_parts().0).collect();
        match function.evaluate_with(&values, &mut self.patterns) {
            Ok(value) => Ok(Labelled::uniform(value, level)),
            Err(error) => Err(error.with_sensitivity(level)),
        }
    }

    /// The shell's (or the journal's) answer to a sample: journaled, then the node's result. An
    /// answer for a node that is no longer waiting for one (cancelled meanwhile) is dropped.
    pub(super) fn sampled(&mut self, call: CallHandle, answer: Result<Value, ValueError>) {
        let node = NodeIx(call.0);
        let Some(entry) = self.arena.nodes.get(NodeIx(node.0)) else { return };
        let is_sample = matches!(
            self.program.expr(entry.expr).kind,
            ExprKind::Intrinsic { function: Intrinsic::Sampled(_), .. }
        );
        if !is_sample || entry.state != NodeState::Running {
            return;
        }
        let node_id = self.node_id(node);
        let output = match &answer {
            Ok(value) => Ok(serde_bytes::ByteBuf::from(rcve::encode(value))),
            Err(error) => Err(error.message().to_owned()),
        };
        self.outbox.events.push(Event::IntrinsicSampled { node: node_id, output });
        match answer {
            Ok(value) => self.succeed(node, Labelled::public(value)),
            Err(error) => self.fail_compute(node, &error),
        }
    }
}
