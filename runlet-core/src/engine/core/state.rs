//! The run core's arenas: nodes (expression instances) and scopes (region instances), addressed
//! by compact indices that never reach events or identities.

use compact_str::CompactString;
use smallvec::SmallVec;

use super::TimerHandle;
use crate::analyze::hir::{BindingId, ExprId, RegionId};
use crate::engine::error::RunError;
use crate::value::Labelled;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub(super) struct NodeIx(pub(super) u32);

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub(super) struct ScopeIx(pub(super) u32);

/// A node's place in the state machine of spec §4.4 (`blocked` and `ready` are `Waiting`
/// with and without unresolved dependencies, and a ready call waiting for its permits is
/// `AwaitingPermits`; `dispatching`/`running` and expanded control nodes are `Running`;
/// `Cancelling` is a running call whose token fired and whose acknowledgement has not come
/// back).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(super) enum NodeState {
    Waiting,
    AwaitingPermits,
    Running,
    Cancelling,
    Succeeded,
    Failed,
    Cancelled,
}

impl NodeState {
    pub(super) fn is_terminal(self) -> bool {
        matches!(self, NodeState::Succeeded | NodeState::Failed | NodeState::Cancelled)
    }
}

/// Why a scope watches one of its nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(super) enum Role {
    /// An effect root of the segment being run.
    Root,
    /// The region's result.
    Result,
    /// The condition of the skip closing segment `segment`.
    SkipCondition,
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(super) struct Node {
    pub(super) expr: ExprId,
    pub(super) scope: ScopeIx,
    pub(super) state: NodeState,
    /// Dependencies not yet succeeded.
    pub(super) waiting: u32,
    /// Inline up to four: most nodes have one dependent or none.
    pub(super) dependents: SmallVec<[NodeIx; 4]>,
    pub(super) value: Option<Labelled>,
    pub(super) role: Option<Role>,
    pub(super) control: Control,
    /// Dispatches of a call outside every boundary attempt (more than one only after a resume);
    /// calls inside attempts count per operation instead.
    pub(super) dispatches: u32,
}

impl Node {
    /// A node of `expr` in `scope`, in `state`, with no dependents, value or control state yet.
    pub(super) fn new(expr: ExprId, scope: ScopeIx, state: NodeState) -> Node {
        Node {
            expr,
            scope,
            state,
            waiting: 0,
            dependents: SmallVec::new(),
            value: None,
            role: None,
            control: Control::None,
            dispatches: 0,
        }
    }
}

/// The dynamic part of a control node: what it expanded into.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(super) enum Control {
    None,
    // Boxed: only control nodes have a state, and inline the largest (a boundary draining with
    // its whole error) would size every node of the run.
    Loop(Box<LoopState>),
    Fold(Box<FoldState>),
    Boundary(Box<BoundaryState>),
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(super) struct LoopState {
    /// Per item: its element until its iteration takes it, then nothing until the iteration
    /// finishes, then its result (`None` when skipped). One vector rather than an element list
    /// and a result list, since an element is not read again once its iteration has it.
    pub(super) items: Vec<Option<Labelled>>,
    pub(super) limit: usize,
    pub(super) next: usize,
    pub(super) active: Vec<ScopeIx>,
    pub(super) finished: usize,
    /// True while `start_iterations` runs, so a finishing iteration does not re-enter it.
    pub(super) starting: bool,
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(super) struct FoldState {
    pub(super) items: Vec<Labelled>,
    pub(super) index: usize,
    pub(super) accumulator: Labelled,
    pub(super) step: Option<ScopeIx>,
    /// True while a step is being entered, so a step that finishes at once does not recurse.
    pub(super) stepping: bool,
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(super) struct BoundaryState {
    pub(super) attempt: u32,
    pub(super) retries: u32,
    pub(super) catching: bool,
    /// The scope of the current attempt.
    pub(super) attempt_scope: ScopeIx,
    pub(super) phase: BoundaryPhase,
}

/// Where a boundary is between attempts.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(super) enum BoundaryPhase {
    /// An attempt or the catch block runs.
    Running,
    /// The attempt failed with this primary error; its cancelled calls are acknowledging.
    Draining(Drain),
    /// Waiting out the backoff before the next attempt.
    Backoff(TimerHandle),
}

/// A failed attempt (or run) waiting for its cancelled calls before deciding (spec §2.8, §9.3).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(super) struct Drain {
    /// The first failure committed: the primary error. Later failures join its `causes`.
    pub(super) error: RunError,
    /// The grace timer, when the host configured a cancellation grace.
    pub(super) grace: Option<TimerHandle>,
}

/// What a pending timer is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(super) enum TimerPurpose {
    /// The backoff before the boundary node's next attempt.
    Backoff(NodeIx),
    /// The cancellation grace of a draining boundary node, or of the run when `None`.
    Grace(Option<NodeIx>),
}

/// What a scope's completion feeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(super) enum Owner {
    Run,
    Arm(NodeIx),
    Iteration(NodeIx, usize),
    FoldStep(NodeIx),
    Attempt(NodeIx),
    Catch(NodeIx),
}

impl Owner {
    /// The node whose scope this is, `None` for the run's own.
    pub(super) fn node(self) -> Option<NodeIx> {
        match self {
            Owner::Run => None,
            Owner::Arm(node)
            | Owner::Iteration(node, _)
            | Owner::FoldStep(node)
            | Owner::Attempt(node)
            | Owner::Catch(node) => Some(node),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(super) enum ScopeStatus {
    Active,
    Succeeded,
    Failed,
    Cancelled,
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(super) struct Scope {
    pub(super) region: RegionId,
    pub(super) parent: Option<ScopeIx>,
    pub(super) owner: Owner,
    /// This scope's segment of node ids: `""` for the program, `then`, `i3~…`, `a2`, `catch`, ….
    /// Inline up to 24 bytes; node ids join it with its ancestors' when asked.
    pub(super) path: CompactString,
    pub(super) attempt: u32,
    /// Values of the bindings the scope itself declares (loop item, accumulator, caught error).
    /// Inline when one (a loop's item, a caught error): no allocation per iteration.
    pub(super) provided: SmallVec<[(BindingId, Labelled); 1]>,
    pub(super) nodes: ScopeNodes,
    pub(super) children: Vec<ScopeIx>,
    pub(super) status: ScopeStatus,
    /// The step segment being run (see `Plan::segments`).
    pub(super) segment: u32,
    /// Watched nodes (roots, result, skip condition) not yet succeeded.
    pub(super) outstanding: u32,
    pub(super) result: Option<NodeIx>,
    pub(super) skipped: bool,
}

/// A scope's nodes by expression, in expression order: a sorted vector rather than a map, since
/// most scopes (a loop body's iterations) hold a handful of nodes and a map's smallest
/// allocation would cost each of them over 100 bytes. Two are held inline, without allocating.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub(super) struct ScopeNodes(SmallVec<[(ExprId, NodeIx); 2]>);

impl ScopeNodes {
    pub(super) fn get(&self, expr: &ExprId) -> Option<&NodeIx> {
        let position = self.0.binary_search_by_key(expr, |(e, _)| *e).ok()?;
        Some(&self.0[position].1)
    }

    pub(super) fn contains_key(&self, expr: &ExprId) -> bool {
        self.get(expr).is_some()
    }

    /// Records `node` as the instance of `expr`, replacing any earlier one.
    pub(super) fn insert(&mut self, expr: ExprId, node: NodeIx) {
        match self.0.binary_search_by_key(&expr, |(e, _)| *e) {
            Ok(position) => self.0[position].1 = node,
            Err(position) => self.0.insert(position, (expr, node)),
        }
    }

    /// The expressions and their nodes, in expression order.
    pub(super) fn entries(&self) -> impl Iterator<Item = (crate::analyze::hir::ExprId, NodeIx)> + '_ {
        self.0.iter().copied()
    }

    /// The nodes in expression order.
    pub(super) fn values(&self) -> impl Iterator<Item = &NodeIx> {
        self.0.iter().map(|(_, node)| node)
    }
}
