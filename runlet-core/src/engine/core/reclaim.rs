//! Slot reuse in the node and scope arenas: a loop iteration or fold step whose value was taken
//! gives its nodes and scopes back, so a long loop holds about `limit` iterations at a time.

use compact_str::CompactString;
use smallvec::{SmallVec, smallvec};

use super::RunCore;
use super::state::{Node, NodeIx, NodeState, Owner, Scope, ScopeIx, ScopeStatus, TimerPurpose};
use crate::analyze::hir::RegionId;

impl RunCore {
    /// Queues a finished iteration or fold step whose value its owner has taken.
    pub(super) fn retire(&mut self, scope: ScopeIx) {
        self.arena.retired.push(scope);
    }

    /// Releases the retired scopes. Called between steps, when no caller holds their indices.
    pub(super) fn release_retired(&mut self) {
        // Taken and put back empty, so the list keeps its room for the next step's.
        let mut retired = std::mem::take(&mut self.arena.retired);
        for scope in retired.drain(..) {
            self.release(scope);
        }
        self.arena.retired = retired;
    }

    /// Gives `scope`, its descendants and their nodes back to the free lists, when everything in
    /// them succeeded: nothing can then still answer, wait on or cancel them. Anything else
    /// (a cancelled call still acknowledging, a timer) keeps the scope for the rest of the run.
    fn release(&mut self, scope: ScopeIx) {
        // A released slot reads as the run's own scope: an outer iteration retired in the same
        // step has released this one already.
        if self.arena.scopes[scope].owner == Owner::Run {
            return;
        }
        // An iteration's scopes and nodes are few: on the stack, the nodes sorted for lookup.
        let mut scopes: SmallVec<[ScopeIx; 4]> = smallvec![scope];
        let mut next = 0;
        while let Some(&ix) = scopes.get(next) {
            scopes.extend(self.arena.scopes[ix].children.iter().copied());
            next += 1;
        }
        let mut nodes: SmallVec<[NodeIx; 16]> =
            scopes.iter().flat_map(|ix| self.arena.scopes[ix].nodes.values().copied()).collect();
        nodes.sort_unstable();
        nodes.dedup();
        let holds = |node: &NodeIx| nodes.binary_search(node).is_ok();
        let all_succeeded = nodes.iter().all(|node| self.arena.nodes[node].state == NodeState::Succeeded);
        let timed = self.timers.purposes.values().any(|purpose| match purpose {
            TimerPurpose::Backoff(node) | TimerPurpose::Grace(Some(node)) => holds(node),
            TimerPurpose::Grace(None) => false,
        });
        if !all_succeeded || timed {
            return;
        }
        if let Some(parent) = self.arena.scopes[scope].parent {
            self.arena.scopes[parent].children.retain(|child| *child != scope);
        }
        self.agenda.ready.retain(|node| !holds(node));
        self.agenda.fresh.retain(|node| !holds(node));
        for &node in &nodes {
            self.operations.by_call.remove(&node);
            let expr = self.arena.nodes[node].expr;
            // A released slot holds a finished node with nothing in it until it is reused.
            self.arena.nodes.release(node, Node::new(expr, ScopeIx(0), NodeState::Succeeded));
            self.recent_ids.forget(node);
        }
        for &ix in &scopes {
            let region = self.arena.scopes[ix].region;
            self.arena.scopes.release(ix, released_scope(region));
        }
    }
}

/// What a released scope slot holds until it is reused: a finished scope owning nothing.
fn released_scope(region: RegionId) -> Scope {
    Scope {
        region,
        parent: None,
        owner: Owner::Run,
        path: CompactString::default(),
        attempt: 0,
        provided: SmallVec::new(),
        nodes: Default::default(),
        children: Vec::new(),
        status: ScopeStatus::Succeeded,
        segment: 0,
        outstanding: 0,
        result: None,
        skipped: false,
    }
}
