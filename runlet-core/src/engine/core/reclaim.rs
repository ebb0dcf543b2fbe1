//! Slot reuse in the node and scope arenas: a loop iteration or fold step whose value was taken
//! gives its nodes and scopes back, so a long loop holds about `limit` iterations at a time.

use std::collections::BTreeSet;

use compact_str::CompactString;
use smallvec::SmallVec;

use super::RunCore;
use super::state::{Node, NodeIx, NodeState, Owner, Scope, ScopeIx, ScopeStatus, TimerPurpose};
use crate::analyze::hir::RegionId;

impl RunCore {
    /// The slot the next `place_node` fills.
    pub(super) fn next_node(&self) -> NodeIx {
        self.free_nodes.last().copied().unwrap_or(NodeIx(self.nodes.len() as u32))
    }

    /// Stores `node` in the slot `next_node` named.
    pub(super) fn place_node(&mut self, node: Node) {
        match self.free_nodes.pop() {
            Some(slot) => self.nodes[slot.0 as usize] = node,
            None => push_with_little_slack(&mut self.nodes, node),
        }
    }

    /// The slot the next `place_scope` fills.
    pub(super) fn next_scope(&self) -> ScopeIx {
        self.free_scopes.last().copied().unwrap_or(ScopeIx(self.scopes.len() as u32))
    }

    /// Stores `scope` in the slot `next_scope` named.
    pub(super) fn place_scope(&mut self, scope: Scope) {
        match self.free_scopes.pop() {
            Some(slot) => self.scopes[slot.0 as usize] = scope,
            None => push_with_little_slack(&mut self.scopes, scope),
        }
    }

    /// Queues a finished iteration or fold step whose value its owner has taken.
    pub(super) fn retire(&mut self, scope: ScopeIx) {
        self.retired.push(scope);
    }

    /// Releases the retired scopes. Called between steps, when no caller holds their indices.
    pub(super) fn release_retired(&mut self) {
        for scope in std::mem::take(&mut self.retired) {
            self.release(scope);
        }
    }

    /// Gives `scope`, its descendants and their nodes back to the free lists, when everything in
    /// them succeeded: nothing can then still answer, wait on or cancel them. Anything else
    /// (a cancelled call still acknowledging, a timer) keeps the scope for the rest of the run.
    fn release(&mut self, scope: ScopeIx) {
        // A released slot reads as the run's own scope: an outer iteration retired in the same
        // step has released this one already.
        if self.scopes[scope.0 as usize].owner == Owner::Run {
            return;
        }
        let mut scopes = vec![scope];
        let mut next = 0;
        while let Some(&ix) = scopes.get(next) {
            scopes.extend(self.scopes[ix.0 as usize].children.iter().copied());
            next += 1;
        }
        let nodes: BTreeSet<NodeIx> =
            scopes.iter().flat_map(|ix| self.scopes[ix.0 as usize].nodes.values().copied()).collect();
        let all_succeeded =
            nodes.iter().all(|node| self.nodes[node.0 as usize].state == NodeState::Succeeded);
        let timed = self.timers.values().any(|purpose| match purpose {
            TimerPurpose::Backoff(node) | TimerPurpose::Grace(Some(node)) => nodes.contains(node),
            TimerPurpose::Grace(None) => false,
        });
        if !all_succeeded || timed {
            return;
        }
        if let Some(parent) = self.scopes[scope.0 as usize].parent {
            self.scopes[parent.0 as usize].children.retain(|child| *child != scope);
        }
        self.ready.retain(|node| !nodes.contains(node));
        self.fresh.retain(|node| !nodes.contains(node));
        for &node in &nodes {
            self.call_operations.remove(&node);
            let expr = self.nodes[node.0 as usize].expr;
            // A released slot holds a finished node with nothing in it until it is reused.
            self.nodes[node.0 as usize] = Node::new(expr, ScopeIx(0), NodeState::Succeeded);
            self.free_nodes.push(node);
        }
        for &ix in &scopes {
            let region = self.scopes[ix.0 as usize].region;
            self.scopes[ix.0 as usize] = released_scope(region);
            self.free_scopes.push(ix);
        }
    }
}

/// Appends to an arena growing by an eighth rather than doubling: the arenas hold a run's
/// largest allocations, and doubling leaves up to half of one unused for the rest of the run.
/// The extra reallocations are cheap where it matters: large blocks are remapped, not copied.
fn push_with_little_slack<T>(arena: &mut Vec<T>, item: T) {
    if arena.len() == arena.capacity() {
        arena.reserve_exact(arena.len() / 8 + 16);
    }
    arena.push(item);
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
