//! The run core's side of execution limits: what the run has used of each cap, the check every
//! counted step makes, and failing the run — past every boundary — once a cap is crossed.

use super::state::{NodeIx, NodeState, ScopeIx};
use super::{Outcome, RunCore};
use crate::analyze::hir::ExprKind;
use crate::diag::Span;
use crate::engine::event::Event;
use crate::engine::limits::{Breach, LimitKey, Limits};

/// One run's limits and its use of them. Fresh for every run; never shared.
#[derive(Debug, Default)]
pub(super) struct Budget {
    limits: Limits,
    /// The program's source size, checked against `source_bytes` when the run starts.
    pub(super) source_bytes: u64,
    /// Uses so far of the counted limits (`tool_calls`, `node_evaluations`, `retries`), by key.
    used: [u64; LimitKey::ALL.len()],
    /// The first limit crossed and the node responsible, until the run fails with it.
    breach: Option<(Breach, Option<NodeIx>)>,
}

impl Budget {
    pub(super) fn new(limits: Limits, source_bytes: u64) -> Budget {
        Budget { limits, source_bytes, ..Budget::default() }
    }
}

impl RunCore {
    /// Whether `current` is within the cap of `key`. When it is not — or another limit was
    /// already crossed — the work must not go on: the first breach is kept, and the run fails
    /// with it once the current step ends (`apply_breach`).
    pub(super) fn within(&mut self, key: LimitKey, current: u64, span: Span, node: Option<NodeIx>) -> bool {
        if self.budget.breach.is_some() {
            return false;
        }
        match self.budget.limits.get(key) {
            Some(cap) if current > cap => {
                self.budget.breach = Some((Breach { key, current, cap, span }, node));
                false
            }
            _ => true,
        }
    }

    /// Counts one more use of `key` (a tool call, a node evaluation, a retry) by `node`, and
    /// checks the total against its cap.
    pub(super) fn count(&mut self, key: LimitKey, span: Span, node: NodeIx) -> bool {
        let used = &mut self.budget.used[key as usize];
        *used += 1;
        let current = *used;
        self.within(key, current, span, Some(node))
    }

    /// Whether a limit applies to `key` (so measuring for it is worth its cost).
    pub(super) fn is_limited(&self, key: LimitKey) -> bool {
        self.budget.limits.get(key).is_some()
    }

    /// The shell's timer for `wall_clock_ms` fired.
    pub(super) fn wall_clock_expired(&mut self, elapsed_ms: u64) {
        let span = self.program.region(self.program.root).span;
        self.within(LimitKey::WallClockMs, elapsed_ms, span, None);
    }

    /// The one-based nesting depth of `scope` (the program's scope is 1).
    pub(super) fn depth_of(&self, scope: ScopeIx) -> u64 {
        let mut depth = 0;
        let mut current = Some(scope);
        while let Some(ix) = current {
            depth += 1;
            current = self.scopes[ix.0 as usize].parent;
        }
        depth
    }

    /// Fails the run with the pending breach, if any: the responsible node fails, everything
    /// still running is cancelled, and no boundary gets to catch or retry (limits are policy).
    pub(super) fn apply_breach(&mut self) {
        let Some((breach, node)) = self.budget.breach.take() else { return };
        if self.finished {
            return;
        }
        let node_id = node.map(|n| self.node_id(n)).unwrap_or_default();
        let mut error = breach.to_error(node_id.clone());
        if let Some(node) = node {
            let entry = &self.nodes[node.0 as usize];
            error.attempt = self.attempt_of(entry.scope);
            if let ExprKind::Call { tool, .. } = self.program.expr(entry.expr).kind {
                error.tool = Some(self.tool_name(tool));
            }
        }
        self.events.push(Event::LimitExceeded {
            limit: breach.key.as_str().to_owned(),
            current: breach.current,
            cap: breach.cap,
            node: node_id.clone(),
        });
        if let Some(node) = node {
            let entry = &mut self.nodes[node.0 as usize];
            if !entry.state.is_terminal() {
                entry.state = NodeState::Failed;
                self.events.push(Event::NodeFailed { node: node_id, code: error.code.clone() });
            }
        }
        if self.scopes.is_empty() {
            self.events.push(Event::RunFailed { code: error.code.clone() });
            self.finish(Outcome::Failed(error));
        } else {
            self.scope_failed(ScopeIx(0), error);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{continue_run, fresh_core};
    use super::super::{Effect, Input, Outcome};
    use crate::engine::event::Event;
    use crate::engine::limits::{LimitKey, Limits};
    use crate::engine::testing::{appendix_b, appendix_b_oracle};

    fn failure_code(outcome: &Outcome) -> &str {
        match outcome {
            Outcome::Failed(error) => &error.code,
            other => panic!("expected a failed run, got {other:?}"),
        }
    }

    #[test]
    fn a_limit_fails_the_run_under_every_completion_order_and_replays_exactly() {
        let (program, registry) = appendix_b();
        let limits = Limits::new().with(LimitKey::ToolCalls, 3);
        for seed in 0..32 {
            let core = fresh_core(&program, &registry).with_limits(limits.clone(), 0);
            let start = Some(Input::Start { inputs: Vec::new() });
            let trace = continue_run(core, Vec::new(), start, &registry, &appendix_b_oracle, seed);
            assert_eq!(failure_code(&trace.outcome), "RL4101", "seed {seed}");
            assert_eq!(trace.dispatched.len(), 3, "seed {seed}: the fourth call is never dispatched");
            let replayed = crate::engine::replay(
                fresh_core(&program, &registry).with_limits(limits.clone(), 0),
                &trace.events,
            )
            .expect("replays");
            assert_eq!(replayed.outcome.as_ref().map(failure_code), Some("RL4101"));
        }
    }

    #[test]
    fn the_wall_clock_input_is_journaled_and_replays() {
        let (program, registry) = appendix_b();
        let limits = Limits::new().with(LimitKey::WallClockMs, 40);
        let mut core = fresh_core(&program, &registry).with_limits(limits.clone(), 0);
        let mut events = Vec::new();
        let mut dispatched = 0;
        for input in [Input::Start { inputs: Vec::new() }, Input::WallClockExpired { elapsed_ms: 41 }] {
            for effect in core.react(input) {
                match effect {
                    Effect::Append(batch) => events.extend(batch),
                    Effect::Dispatch(_) => dispatched += 1,
                    Effect::Cancel(_) => dispatched -= 1,
                    Effect::Finish(outcome) => assert_eq!(failure_code(&outcome), "RL4104"),
                    Effect::StartTimer { .. } | Effect::CancelTimer(_) | Effect::Sample(_) => {}
                }
            }
        }
        assert!(core.is_finished());
        assert_eq!(dispatched, 0, "every call in flight is cancelled");
        let limit_event =
            Event::LimitExceeded { limit: "wall_clock_ms".into(), current: 41, cap: 40, node: String::new() };
        assert!(events.contains(&limit_event));
        let replayed = crate::engine::replay(fresh_core(&program, &registry).with_limits(limits, 0), &events)
            .expect("replays");
        assert_eq!(replayed.outcome.as_ref().map(failure_code), Some("RL4104"));
        assert!(replayed.in_flight.is_empty());
    }
}
