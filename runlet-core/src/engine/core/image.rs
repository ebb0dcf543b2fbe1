//! A run core's image (spec §5.3, snapshots): everything the run's inputs built — its inputs,
//! nodes and scopes, agenda, operations, timers, a draining failure and its use of the limits —
//! as bytes, and a core restored from them. Nothing that comes from the program, the plan, the
//! registry or the host's configuration is in the image: a restored core takes those from the
//! fresh core it is restored into, so an image is only meaningful for the run it was taken of.
//!
//! An image is taken between reactions (never with effects not yet handed out). Restoring
//! checks every index the image holds against the program and the image itself, so a damaged
//! image is an error, not a panic later.

use super::RunCore;
use super::limits::Usage;
use super::parts::{Agenda, Operations, RunArena, Timers};
use super::state::{Control, Drain, NodeIx, Owner, ScopeIx, TimerPurpose};
use crate::value::Labelled;

/// The version of the image layout; an image of another version is not restored.
const IMAGE_VERSION: u32 = 1;

/// The parts of an image, in the order they are written.
type Parts = (u32, Vec<Labelled>, RunArena, Agenda, Operations, Timers, Option<Drain>, bool, Usage);

impl RunCore {
    /// This core's image, or why none can be taken now: a reaction's effects not yet handed out.
    pub fn image(&self) -> Result<Vec<u8>, String> {
        if !self.outbox.events.is_empty() || !self.outbox.effects.is_empty() {
            return Err("the core is in the middle of a reaction".into());
        }
        let parts = (
            IMAGE_VERSION,
            &self.inputs,
            &self.arena,
            &self.agenda,
            &self.operations,
            &self.timers,
            &self.run_drain,
            self.finished,
            self.budget.usage(),
        );
        rmp_serde::to_vec(&parts).map_err(|e| format!("the core's state does not encode: {e}"))
    }

    /// This core — fresh, of the run's program, plan, tools and settings, started on nothing —
    /// in the state `image` holds.
    pub fn restore(mut self, image: &[u8]) -> Result<RunCore, String> {
        let parts: Parts =
            rmp_serde::from_slice(image).map_err(|e| format!("the image does not decode: {e}"))?;
        let (version, inputs, arena, agenda, operations, timers, run_drain, finished, usage) = parts;
        if version != IMAGE_VERSION {
            return Err(format!("the image has layout {version}, this runtime restores {IMAGE_VERSION}"));
        }
        self.budget.restore(usage)?;
        self.inputs = inputs;
        self.arena = arena;
        self.agenda = agenda;
        self.operations = operations;
        self.timers = timers;
        self.run_drain = run_drain;
        self.finished = finished;
        self.recent_ids.forget_all();
        self.check_indices()?;
        Ok(self)
    }

    /// Every node, scope, expression, region, binding and tool index of the restored state
    /// names something that exists.
    fn check_indices(&self) -> Result<(), String> {
        let program = &self.program;
        let (nodes, scopes) = (self.arena.nodes.slots().count(), self.arena.scopes.slots().count());
        let node = |ix: NodeIx| (ix.0 as usize) < nodes;
        let scope = |ix: ScopeIx| (ix.0 as usize) < scopes;
        let owner = |owner: Owner| owner.node().is_none_or(node);
        let nodes_ok = self.arena.nodes.iter().all(|n| {
            n.expr.index() < program.exprs.len()
                && scope(n.scope)
                && n.dependents.iter().all(|&d| node(d))
                && match &n.control {
                    Control::None => true,
                    Control::Loop(state) => state.active.iter().all(|&s| scope(s)),
                    Control::Fold(state) => state.step.is_none_or(scope),
                    Control::Boundary(state) => scope(state.attempt_scope),
                }
        });
        let scopes_ok = self.arena.scopes.iter().all(|s| {
            s.region.index() < program.regions.len()
                && s.parent.is_none_or(scope)
                && owner(s.owner)
                && s.provided.iter().all(|(binding, _)| binding.index() < program.bindings.len())
                && s.nodes.entries().all(|(expr, n)| expr.index() < program.exprs.len() && node(n))
                && s.children.iter().all(|&c| scope(c))
                && s.result.is_none_or(node)
        });
        let agenda_ok = self.agenda.ready.iter().chain(&self.agenda.fresh).all(|&n| node(n));
        let operations_ok = self.operations.by_call.keys().all(|&n| node(n))
            && self.operations.host_decisions.keys().all(|&n| node(n))
            && self.operations.parked.iter().all(|(&n, call)| node(n) && self.tools.knows(call.tool()));
        let timers_ok = self.timers.purposes.values().all(|purpose| match *purpose {
            TimerPurpose::Backoff(n) => node(n),
            TimerPurpose::Grace(n) => n.is_none_or(node),
        });
        let retired_ok =
            self.arena.retired.iter().all(|&s| scope(s)) && self.budget.breach_node().is_none_or(node);
        if nodes_ok && scopes_ok && agenda_ok && operations_ok && timers_ok && retired_ok {
            Ok(())
        } else {
            Err("the image names a node, scope, expression, region, binding or tool that does not exist"
                .into())
        }
    }
}
