//! The run core's side of execution limits: what the run has used of each cap, the check every
//! counted step makes, and failing the run — past every boundary — once a cap is crossed.

use super::state::{NodeIx, NodeState, ScopeIx};
use super::{Outcome, RunCore};
use crate::analyze::hir::ExprKind;
use crate::diag::Span;
use crate::engine::event::Event;
use crate::engine::limits::{Breach, LimitKey, Limits};
use crate::value::{Cap, ConversionLimits, Excess, Value, ValueCaps};

/// One run's limits and its use of them. Fresh for every run; never shared.
#[derive(Debug, Default)]
pub(super) struct Budget {
    limits: Limits,
    /// The value-size caps of `limits`, checked at every value the run builds.
    caps: ValueCaps,
    /// The program's source size, checked against `source_bytes` when the run starts.
    pub(super) source_bytes: u64,
    /// Uses so far of the counted limits (`tool_calls`, `node_evaluations`, `retries`,
    /// `graph_edges`, `journal_bytes`), by key.
    used: [u64; LimitKey::ALL.len()],
    /// How many events of the buffer the step records into `journal_bytes` has counted.
    journal_counted: usize,
    /// The first limit crossed and the node responsible, until the run fails with it.
    breach: Option<(Breach, Option<NodeIx>)>,
}

impl Budget {
    /// Conversions nest within the run's `conversion_depth` and format text within its
    /// `string_bytes` cap.
    pub(super) fn conversion_limits(&self) -> ConversionLimits {
        let max_bytes = usize::try_from(self.caps.string_bytes).unwrap_or(usize::MAX);
        let depth = self.limits.get(LimitKey::ConversionDepth).unwrap_or(u64::MAX);
        ConversionLimits { max_bytes, max_depth: usize::try_from(depth).unwrap_or(usize::MAX) }
    }

    pub(super) fn new(limits: Limits, source_bytes: u64) -> Budget {
        Budget { caps: limits.value_caps(), limits, source_bytes, ..Budget::default() }
    }

    /// The step's events start after the first `counted` of the buffer they are recorded in
    /// (a shell's batch, which `journal_bytes` counted as they were recorded).
    pub(super) fn events_counted(&mut self, counted: usize) {
        self.journal_counted = counted;
    }

    /// What the run has used of its limits, as a snapshot keeps it; the caps themselves come
    /// from the host's configuration, pinned in the run header.
    pub(super) fn usage(&self) -> Usage {
        Usage { source_bytes: self.source_bytes, used: self.used.to_vec(), breach: self.breach.clone() }
    }

    /// The node the first breach names, if any.
    pub(super) fn breach_node(&self) -> Option<NodeIx> {
        self.breach.as_ref().and_then(|(_, node)| *node)
    }

    /// Takes up `usage` from a snapshot, under this budget's caps.
    pub(super) fn restore(&mut self, usage: Usage) -> Result<(), String> {
        if usage.used.len() != self.used.len() {
            return Err(format!(
                "the image counts {} limits, this runtime {}",
                usage.used.len(),
                self.used.len()
            ));
        }
        self.used.copy_from_slice(&usage.used);
        self.source_bytes = usage.source_bytes;
        self.breach = usage.breach;
        self.journal_counted = 0;
        Ok(())
    }
}

/// A run's use of its limits between reactions: see [`Budget::usage`].
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(super) struct Usage {
    source_bytes: u64,
    used: Vec<u64>,
    breach: Option<(Breach, Option<NodeIx>)>,
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

    /// Whether `value`, which `node` built from parts already checked, is within the value-size
    /// caps (spec §10): its top level is all there is to check, a composite keeps its weight.
    /// Else the breach is recorded.
    pub(super) fn value_within(&mut self, value: &Value, node: NodeIx) -> bool {
        match self.budget.caps.excess(value) {
            None => true,
            Some(excess) => {
                let span = self.program.expr(self.arena.nodes[node].expr).span;
                self.exceeded(excess, span, Some(node))
            }
        }
    }

    /// [`RunCore::value_within`] for a value from outside the run (a host input, a tool
    /// output), checked all the way down.
    pub(super) fn outside_value_within(&mut self, value: &Value, span: Span, node: Option<NodeIx>) -> bool {
        match self.budget.caps.excess_anywhere(value) {
            None => true,
            Some(excess) => self.exceeded(excess, span, node),
        }
    }

    fn exceeded(&mut self, excess: Excess, span: Span, node: Option<NodeIx>) -> bool {
        let key = match excess.cap {
            Cap::ValueBytes => LimitKey::ValueBytes,
            Cap::ListLength => LimitKey::ListLength,
            Cap::StringBytes => LimitKey::StringBytes,
            Cap::ObjectEntries => LimitKey::ObjectEntries,
        };
        self.within(key, excess.current, span, node)
    }

    /// Whether a limit applies to `key` (so measuring for it is worth its cost).
    pub(super) fn is_limited(&self, key: LimitKey) -> bool {
        self.budget.limits.get(key).is_some()
    }

    /// Counts the records of the events recorded since the last count against `journal_bytes`,
    /// and whether the run is still within every limit. A run that has ended counts no more: the
    /// records of its end (a limit failure's included) do not count.
    pub(super) fn measure_journal(&mut self) -> bool {
        if self.finished || !self.is_limited(LimitKey::JournalBytes) {
            return self.budget.breach.is_none();
        }
        let uncounted = self.outbox.events.get(self.budget.journal_counted..).unwrap_or_default();
        let bytes: u64 = uncounted.iter().map(|event| event.encoded_len() as u64).sum();
        self.budget.journal_counted = self.outbox.events.len();
        let used = &mut self.budget.used[LimitKey::JournalBytes as usize];
        *used = used.saturating_add(bytes);
        let current = *used;
        let span = self.program.region(self.program.root).span;
        self.within(LimitKey::JournalBytes, current, span, None)
    }

    /// Records `RunSucceeded` when the run may end with it: no limit was crossed, that record
    /// counted. Otherwise nothing is recorded and the breach fails the run as a whole instead
    /// (`apply_breach`), though its own scope already succeeded.
    pub(super) fn record_success(&mut self) -> bool {
        self.outbox.events.push(Event::RunSucceeded);
        if self.measure_journal() {
            return true;
        }
        self.outbox.events.pop();
        self.budget.journal_counted = self.budget.journal_counted.min(self.outbox.events.len());
        false
    }

    /// The shell started the run's wall clock: journaled, so a resumed run keeps the start.
    pub(super) fn wall_clock_started(&mut self, started_unix_ms: u64) {
        self.outbox.events.push(Event::WallClockStarted { started_unix_ms });
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
            current = self.arena.scopes[ix].parent;
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
        let mut error = breach.to_error(node_id.to_string());
        if let Some(node) = node {
            let entry = &self.arena.nodes[node];
            error.attempt = self.attempt_of(entry.scope);
            if let ExprKind::Call { tool, .. } = self.program.expr(entry.expr).kind {
                error.tool = Some(self.tool_name(tool));
            }
        }
        self.outbox.events.push(Event::LimitExceeded {
            limit: breach.key.as_str().to_owned(),
            current: breach.current,
            cap: breach.cap,
            node: node_id.clone(),
        });
        if let Some(node) = node {
            let entry = &mut self.arena.nodes[node];
            if !entry.state.is_terminal() {
                entry.state = NodeState::Failed;
                self.outbox.events.push(Event::NodeFailed { node: node_id, code: error.code.clone() });
            }
        }
        if self.arena.scopes.is_empty() {
            self.outbox.events.push(Event::RunFailed { code: error.code.clone() });
            self.finish(Outcome::Failed(error));
        } else {
            self.scope_failed(ScopeIx(0), error);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{Simulation, Trace, continue_run, fresh_core, value_of};
    use super::super::{Effect, Input, Outcome};
    use crate::engine::error::RunError;
    use crate::engine::event::Event;
    use crate::engine::limits::{LimitKey, Limits};
    use crate::engine::testing::{appendix_b, appendix_b_oracle};
    use crate::value::Value;

    fn failure_code(outcome: &Outcome) -> &str {
        match outcome {
            Outcome::Failed(error) => &error.code,
            other => panic!("expected a failed run, got {other:?}"),
        }
    }

    fn record_bytes(events: &[Event]) -> u64 {
        events.iter().map(|event| event.encoded_len() as u64).sum()
    }

    /// The `current` count of a limit failure.
    fn current(error: &RunError) -> u64 {
        match error.details.get("current") {
            Some(Value::Int(n)) => *n as u64,
            other => panic!("current is {other:?}"),
        }
    }

    /// A `journal_bytes` failure of `journal` counted exactly the records before its
    /// `LimitExceeded`, plus the success record it left out when the crossing step ended the run.
    /// Returns where the failure's records start.
    fn check_journal_failure(journal: &[Event], error: &RunError, cap: u64) -> usize {
        assert_eq!(error.code, "RL4112", "{error:?}");
        assert_eq!(error.node_id, "", "the run as a whole crossed it");
        let crossing = journal
            .iter()
            .position(|e| matches!(e, Event::LimitExceeded { limit, .. } if limit == "journal_bytes"))
            .expect("the breach is journaled");
        let before = record_bytes(&journal[..crossing]);
        let success = Event::RunSucceeded.encoded_len() as u64;
        assert!(current(error) > cap, "{} is within {cap}", current(error));
        assert!(
            current(error) == before || current(error) == before + success,
            "counted {} for {before} bytes of records",
            current(error)
        );
        assert_eq!(journal.last(), Some(&Event::RunFailed { code: "RL4112".into() }));
        crossing
    }

    /// Appendix B under `limits`, its calls answered in the order `seed` draws.
    fn appendix_b_run(limits: &Limits, seed: u64) -> Trace {
        let (program, registry) = appendix_b();
        let core = fresh_core(&program, &registry).with_limits(limits.clone(), 0);
        let start = Some(Input::Start { inputs: Vec::new() });
        continue_run(core, Vec::new(), start, &registry, &appendix_b_oracle, seed)
    }

    #[test]
    fn journal_bytes_end_the_run_at_every_crossing_point_and_replay_and_resume_count_alike() {
        let (program, registry) = appendix_b();
        for seed in 0..6 {
            let full = appendix_b_run(&Limits::new(), seed);
            let total = record_bytes(&full.events);
            let mut through = 0;
            for event in &full.events {
                through += event.encoded_len() as u64;
                // The cap just below and at every record's end: each record crosses once.
                for cap in [through - 1, through] {
                    let limits = Limits::new().with(LimitKey::JournalBytes, cap);
                    // The simulation fails the test if the run stops without ending.
                    let trace = appendix_b_run(&limits, seed);
                    if cap >= total {
                        assert_eq!(
                            value_of(&trace.outcome),
                            value_of(&full.outcome),
                            "seed {seed}, cap {cap}"
                        );
                        continue;
                    }
                    let Outcome::Failed(error) = &trace.outcome else {
                        panic!("seed {seed}, cap {cap}: {:?}", trace.outcome)
                    };
                    let crossing = check_journal_failure(&trace.events, error, cap);
                    assert_eq!(trace.events[..crossing], full.events[..crossing], "the same run until then");
                    let replayed = crate::engine::replay(
                        fresh_core(&program, &registry).with_limits(limits.clone(), 0),
                        &trace.events,
                    )
                    .expect("replays");
                    assert!(matches!(&replayed.outcome, Some(Outcome::Failed(e)) if e == error));
                    // A crash at the last call answer before the crossing: the resumed run counts
                    // the records it replayed and fails again.
                    let answered = trace.events[..crossing]
                        .iter()
                        .rposition(|e| matches!(e, Event::CallCompleted { .. } | Event::CallFailed { .. }));
                    let Some(cut) = answered else { continue };
                    let prefix = &trace.events[..cut];
                    let resumed = crate::engine::replay(
                        fresh_core(&program, &registry).with_limits(limits.clone(), 0),
                        prefix,
                    )
                    .expect("replays a prefix");
                    let mut sim = Simulation::new(resumed.core, Vec::new(), &registry, seed + 1);
                    let rest = match sim.step(Input::Resume) {
                        Some(outcome) => Trace { outcome, ..sim.trace },
                        None => sim.run(None, &appendix_b_oracle),
                    };
                    let journal = [prefix, &rest.events].concat();
                    match &rest.outcome {
                        Outcome::Failed(error) => {
                            check_journal_failure(&journal, error, cap);
                        }
                        other => panic!("seed {seed}, cap {cap}: the resumed run ended {other:?}"),
                    }
                }
            }
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
                    Effect::StartTimer { .. }
                    | Effect::CancelTimer(_)
                    | Effect::Sample(_)
                    | Effect::AwaitPermits { .. }
                    | Effect::EnterScope { .. }
                    | Effect::Yield => {}
                }
            }
        }
        assert!(core.is_finished());
        assert_eq!(dispatched, 0, "every call in flight is cancelled");
        let limit_event =
            Event::LimitExceeded { limit: "wall_clock_ms".into(), current: 41, cap: 40, node: "".into() };
        assert!(events.contains(&limit_event));
        let replayed = crate::engine::replay(fresh_core(&program, &registry).with_limits(limits, 0), &events)
            .expect("replays");
        assert_eq!(replayed.outcome.as_ref().map(failure_code), Some("RL4104"));
        assert!(replayed.in_flight.is_empty());
    }
}
