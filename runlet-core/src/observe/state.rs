//! The public node state machine of spec §4.4: the ten states and the one function that decides
//! which moves between them are legal; everything that changes a node's state goes through it.

use serde::Serialize;
use smallvec::SmallVec;

/// A logical node's state (spec §4.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeState {
    Planned,
    Blocked,
    Ready,
    Dispatching,
    Running,
    Succeeded,
    Failed,
    Cancelling,
    Cancelled,
    Pruned,
}

/// A move the state machine does not allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a node cannot move from {} to {}", from.name(), to.name())]
pub struct IllegalTransition {
    pub from: NodeState,
    pub to: NodeState,
}

impl NodeState {
    pub const ALL: [NodeState; 10] = [
        NodeState::Planned,
        NodeState::Blocked,
        NodeState::Ready,
        NodeState::Dispatching,
        NodeState::Running,
        NodeState::Succeeded,
        NodeState::Failed,
        NodeState::Cancelling,
        NodeState::Cancelled,
        NodeState::Pruned,
    ];

    pub fn name(self) -> &'static str {
        match self {
            NodeState::Planned => "planned",
            NodeState::Blocked => "blocked",
            NodeState::Ready => "ready",
            NodeState::Dispatching => "dispatching",
            NodeState::Running => "running",
            NodeState::Succeeded => "succeeded",
            NodeState::Failed => "failed",
            NodeState::Cancelling => "cancelling",
            NodeState::Cancelled => "cancelled",
            NodeState::Pruned => "pruned",
        }
    }

    /// `succeeded`, `failed`, `cancelled` and `pruned` have no outgoing transitions.
    pub fn is_terminal(self) -> bool {
        matches!(self, NodeState::Succeeded | NodeState::Failed | NodeState::Cancelled | NodeState::Pruned)
    }

    /// Whether spec §4.4 allows `self -> to`.
    pub fn allows(self, to: NodeState) -> bool {
        use NodeState::*;
        matches!(
            (self, to),
            (Planned, Blocked | Pruned)
                | (Blocked, Ready | Pruned)
                | (Ready, Dispatching | Failed | Cancelling)
                | (Dispatching, Running | Failed | Cancelling)
                | (Running, Succeeded | Failed | Cancelling)
                | (Cancelling, Cancelled)
        )
    }

    /// The state after `self -> to`, or the error naming the illegal move.
    pub fn transition(self, to: NodeState) -> Result<NodeState, IllegalTransition> {
        if self.allows(to) { Ok(to) } else { Err(IllegalTransition { from: self, to }) }
    }

    /// The legal moves that lead from `self` to `target` along the lifecycle (local work and
    /// control nodes pass through `dispatching` and `running` within one event), or `None` when
    /// `target` cannot be reached from `self`. At most six moves, kept inline: every event an
    /// observer folds takes one.
    pub fn path_to(self, target: NodeState) -> Option<SmallVec<[NodeState; 6]>> {
        use NodeState::*;
        const FORWARD: [NodeState; 5] = [Planned, Blocked, Ready, Dispatching, Running];
        if self == target {
            return Some(SmallVec::new());
        }
        let mut path = SmallVec::new();
        let mut current = self;
        let mut later = FORWARD.iter().skip_while(|s| **s != self).skip(1);
        loop {
            if current.allows(target) {
                path.push(target);
                return Some(path);
            }
            if target == Cancelled && current.allows(Cancelling) {
                path.extend([Cancelling, Cancelled]);
                return Some(path);
            }
            let &next = later.next()?;
            path.push(next);
            current = next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exactly_the_transitions_of_the_spec_are_legal() {
        let legal: Vec<(NodeState, NodeState)> = NodeState::ALL
            .iter()
            .flat_map(|&from| NodeState::ALL.iter().map(move |&to| (from, to)))
            .filter(|(from, to)| from.allows(*to))
            .collect();
        use NodeState::*;
        assert_eq!(
            legal,
            vec![
                (Planned, Blocked),
                (Planned, Pruned),
                (Blocked, Ready),
                (Blocked, Pruned),
                (Ready, Dispatching),
                (Ready, Failed),
                (Ready, Cancelling),
                (Dispatching, Running),
                (Dispatching, Failed),
                (Dispatching, Cancelling),
                (Running, Succeeded),
                (Running, Failed),
                (Running, Cancelling),
                (Cancelling, Cancelled),
            ]
        );
    }

    #[test]
    fn illegal_transitions_are_rejected_and_terminal_states_stay_put() {
        use NodeState::*;
        assert_eq!(Blocked.transition(Succeeded), Err(IllegalTransition { from: Blocked, to: Succeeded }));
        assert_eq!(Planned.transition(Ready), Err(IllegalTransition { from: Planned, to: Ready }));
        for terminal in NodeState::ALL.into_iter().filter(|s| s.is_terminal()) {
            assert!(NodeState::ALL.iter().all(|&to| terminal.transition(to).is_err()), "{terminal:?}");
        }
        assert_eq!(Ready.transition(Dispatching), Ok(Dispatching));
    }

    #[test]
    fn paths_follow_the_lifecycle_through_legal_moves_only() {
        use NodeState::*;
        assert_eq!(
            Blocked.path_to(Succeeded).map(|p| p.to_vec()),
            Some(vec![Ready, Dispatching, Running, Succeeded])
        );
        assert_eq!(Blocked.path_to(Failed).map(|p| p.to_vec()), Some(vec![Ready, Failed]));
        assert_eq!(Blocked.path_to(Pruned).map(|p| p.to_vec()), Some(vec![Pruned]));
        assert_eq!(Running.path_to(Cancelled).map(|p| p.to_vec()), Some(vec![Cancelling, Cancelled]));
        assert_eq!(Ready.path_to(Cancelled).map(|p| p.to_vec()), Some(vec![Cancelling, Cancelled]));
        assert_eq!(Succeeded.path_to(Failed), None);
        assert_eq!(Cancelled.path_to(Succeeded), None);
        for from in NodeState::ALL {
            for to in NodeState::ALL {
                if let Some(path) = from.path_to(to) {
                    let mut current = from;
                    for step in path {
                        current = current.transition(step).expect("every step is legal");
                    }
                    assert_eq!(current, to);
                }
            }
        }
    }
}
