//! Failure decisions (spec §2.8, §4.6, §9.3): a failed attempt or run first waits for its
//! cancelled calls (or the grace timer), collecting later failures as causes; then a boundary
//! retries after its backoff or catches, and a failed run ends. Timers live here too.

use std::sync::Arc;
use std::time::Duration;

use compact_str::format_compact;
use smallvec::{SmallVec, smallvec};

use super::state::{BoundaryPhase, Control, Drain, NodeIx, NodeState, Owner, ScopeIx, TimerPurpose};
use super::{Effect, Outcome, RunCore, TimerHandle, TracedScope};
use crate::analyze::hir::ExprKind;
use crate::diag::codes;
use crate::engine::error::RunError;
use crate::engine::event::{Event, RecordedToolError};
use crate::engine::executor::ToolError;
use crate::engine::limits::LimitKey;
use crate::engine::retry::retry_delay;
use crate::value::Labelled;

/// Who decides about a drained failure: a boundary node, or the run when `None`.
type DrainPoint = Option<NodeIx>;

impl RunCore {
    /// A boundary attempt failed. A failure no boundary may catch, or one from the catch block,
    /// passes outward at once; otherwise the boundary drains the attempt, then decides.
    pub(super) fn attempt_failed(&mut self, node: NodeIx, error: RunError) {
        let Control::Boundary(state) = &self.arena.nodes[node].control else { return };
        if !error.is_catchable() || state.catching {
            return self.fail(node, error);
        }
        self.begin_drain(Some(node), error);
    }

    /// The run's own scope failed: drain it, then end the run. A failure no boundary may catch
    /// (a limit breach) ends the run at once: its cancelled calls are given up, not awaited.
    pub(super) fn run_failed(&mut self, error: RunError) {
        if !error.is_catchable() {
            for node in self.cancelling_below(ScopeIx(0)) {
                self.mark_cancelled(node);
            }
        }
        self.begin_drain(None, error);
    }

    /// A limit breach after the run's own scope ended — while the run drains another failure, or
    /// when its success did not fit a limit (`record_success`): the run ends at once with the breach.
    pub(super) fn policy_failure_while_draining(&mut self, error: RunError) {
        if self.finished {
            return;
        }
        if let Some(timer) = self.run_drain.take().and_then(|drain| drain.grace) {
            self.cancel_timer(timer);
        }
        self.run_failed(error);
    }

    /// Holds `error` as the primary failure of `point` until the calls its scope cancelled have
    /// acknowledged (or the grace timer fires), then decides.
    fn begin_drain(&mut self, point: DrainPoint, error: RunError) {
        if !self.has_cancelling(self.drain_scope(point)) {
            return self.decide(point, error);
        }
        let grace =
            self.settings.cancellation_grace.map(|grace| self.start_timer(TimerPurpose::Grace(point), grace));
        let drain = Drain { error, grace };
        match point {
            None => self.run_drain = Some(drain),
            Some(node) => {
                if let Control::Boundary(state) = &mut self.arena.nodes[node].control {
                    state.phase = BoundaryPhase::Draining(drain);
                }
            }
        }
    }

    /// The scope whose cancelled calls a drain waits for.
    fn drain_scope(&self, point: DrainPoint) -> ScopeIx {
        match point.map(|node| &self.arena.nodes[node].control) {
            Some(Control::Boundary(state)) => state.attempt_scope,
            _ => ScopeIx(0),
        }
    }

    /// The failure `point` holds while it drains; `None` when it is not draining (a boundary
    /// that was cancelled meanwhile no longer decides anything).
    fn drain_mut(&mut self, point: DrainPoint) -> Option<&mut Drain> {
        match point {
            None => self.run_drain.as_mut(),
            Some(node) => {
                let entry = &mut self.arena.nodes[node];
                match (entry.state, &mut entry.control) {
                    (NodeState::Running, Control::Boundary(state)) => match &mut state.phase {
                        BoundaryPhase::Draining(drain) => Some(drain),
                        _ => None,
                    },
                    _ => None,
                }
            }
        }
    }

    fn is_draining(&self, point: DrainPoint) -> bool {
        match point {
            None => self.run_drain.is_some(),
            Some(node) => {
                let entry = &self.arena.nodes[node];
                entry.state == NodeState::Running
                    && matches!(&entry.control, Control::Boundary(state) if matches!(state.phase, BoundaryPhase::Draining(_)))
            }
        }
    }

    /// The draining points whose scope contains `scope`, innermost first.
    fn drains_around(&self, scope: ScopeIx) -> Vec<DrainPoint> {
        let mut points = Vec::new();
        let mut current = Some(scope);
        while let Some(ix) = current {
            let entry = &self.arena.scopes[ix];
            let parent = entry.parent;
            match entry.owner {
                Owner::Attempt(node) => {
                    let draining_this = matches!(
                        &self.arena.nodes[node].control,
                        Control::Boundary(state) if state.attempt_scope == ix
                    );
                    if draining_this && self.is_draining(Some(node)) {
                        points.push(Some(node));
                    }
                }
                Owner::Run if self.run_drain.is_some() => points.push(None),
                _ => {}
            }
            current = parent;
        }
        points
    }

    /// Whether a call in `scope` or below still waits for its cancellation acknowledgement.
    fn has_cancelling(&self, scope: ScopeIx) -> bool {
        !self.cancelling_below(scope).is_empty()
    }

    /// The calls in `scope` or below that wait for their cancellation acknowledgement.
    fn cancelling_below(&self, scope: ScopeIx) -> Vec<NodeIx> {
        let mut scopes = vec![scope];
        let mut found = Vec::new();
        while let Some(ix) = scopes.pop() {
            let entry = &self.arena.scopes[ix];
            let cancelling = entry.nodes.values().copied();
            found.extend(cancelling.filter(|n| self.arena.nodes[n].state == NodeState::Cancelling));
            scopes.extend(entry.children.iter().copied());
        }
        found
    }

    /// A call whose token fired answered. A success is orphaned evidence (spec §4.6); a failure
    /// other than the acknowledgement itself is a cause of the failure being drained (§9.3).
    pub(super) fn cancelled_call_answered(&mut self, node: NodeIx, answer: Result<Labelled, ToolError>) {
        let id = self.node_id(node);
        match answer {
            Ok(_) => self.outbox.events.push(Event::OrphanedCompletion { node: id }),
            Err(error) => {
                self.outbox
                    .events
                    .push(Event::CallFailed { node: id, error: RecordedToolError::from(&error) });
                if error.code != codes::TOOL_CALL_CANCELLED.to_string() {
                    let cause = self.tool_error(node, error);
                    let scope = self.arena.nodes[node].scope;
                    if let Some(point) = self.drains_around(scope).first().copied() {
                        if let Some(drain) = self.drain_mut(point) {
                            drain.error.causes.push(cause);
                        }
                    }
                }
            }
        }
        let scope = self.arena.nodes[node].scope;
        self.mark_cancelled(node);
        self.settle_drains(scope);
    }

    /// A call that was cancelling is cancelled now; whatever it did, its result is never used.
    pub(super) fn mark_cancelled(&mut self, node: NodeIx) {
        self.operation_unsettled(node);
        self.arena.nodes[node].state = NodeState::Cancelled;
        self.outbox.events.push(Event::NodeCancelled { node: self.node_id(node) });
    }

    /// Decides every drain around `scope` that has nothing left to wait for.
    fn settle_drains(&mut self, scope: ScopeIx) {
        for point in self.drains_around(scope) {
            if self.finished {
                return;
            }
            if self.is_draining(point) && !self.has_cancelling(self.drain_scope(point)) {
                self.end_drain(point);
            }
        }
    }

    /// Decides every drain that has nothing left to wait for, wherever it is.
    pub(super) fn settle_all_drains(&mut self) {
        let boundaries: Vec<NodeIx> =
            self.arena.nodes.slots().filter(|node| self.is_draining(Some(*node))).collect();
        for node in boundaries {
            let scope = self.drain_scope(Some(node));
            self.settle_drains(scope);
        }
        self.settle_drains(ScopeIx(0));
    }

    /// Takes `point`'s drained failure and decides.
    fn end_drain(&mut self, point: DrainPoint) {
        let drain = match point {
            None => self.run_drain.take(),
            Some(node) => match &mut self.arena.nodes[node].control {
                Control::Boundary(state) => match std::mem::replace(&mut state.phase, BoundaryPhase::Running)
                {
                    BoundaryPhase::Draining(drain) => Some(drain),
                    other => {
                        state.phase = other;
                        None
                    }
                },
                _ => None,
            },
        };
        let Some(drain) = drain else { return };
        if let Some(timer) = drain.grace {
            self.cancel_timer(timer);
        }
        self.decide(point, drain.error);
    }

    /// The failure of `point` is final: causes in node order, then retry, catch or end the run.
    fn decide(&mut self, point: DrainPoint, mut error: RunError) {
        error.causes.sort_by(|a, b| a.node_id.cmp(&b.node_id));
        match point {
            None => {
                self.outbox.events.push(Event::RunFailed { code: error.code.clone() });
                self.finish(Outcome::Failed(error));
            }
            Some(node) => self.retry_or_catch(node, error),
        }
    }

    /// Retry while the error is retryable and attempts remain, after the host's backoff;
    /// otherwise run the catch block with the error value (spec §2.8).
    fn retry_or_catch(&mut self, node: NodeIx, error: RunError) {
        let Control::Boundary(state) = &self.arena.nodes[node].control else { return };
        let (attempt, retries) = (state.attempt, state.retries);
        let id = self.node_id(node);
        if error.retryable && attempt <= retries {
            if !self.count(LimitKey::Retries, self.program.expr(self.arena.nodes[node].expr).span, node) {
                return;
            }
            self.outbox.events.push(Event::BoundaryRetryScheduled { node: id, attempt: attempt + 1 });
            let delay = retry_delay(self.settings.retry_backoff.as_ref(), attempt, error.retry_after);
            if delay.is_zero() {
                return self.start_attempt(node);
            }
            let timer = self.start_timer(TimerPurpose::Backoff(node), delay);
            if let Control::Boundary(state) = &mut self.arena.nodes[node].control {
                state.phase = BoundaryPhase::Backoff(timer);
            }
            return;
        }
        self.outbox.events.push(Event::CatchSelected { node: id });
        if let Control::Boundary(state) = &mut self.arena.nodes[node].control {
            state.catching = true;
        }
        let program = Arc::clone(&self.program);
        let (ExprKind::Boundary { error: binding, catch, .. }, scope) =
            (&program.expr(self.arena.nodes[node].expr).kind, self.arena.nodes[node].scope)
        else {
            return;
        };
        let attempt = self.attempt_of(scope);
        let caught = Labelled::public(error.to_value());
        self.enter(
            *catch,
            Some(scope),
            Owner::Catch(node),
            "catch".into(),
            attempt,
            smallvec![(*binding, caught)],
        );
    }

    /// Enters the boundary's next attempt (the first when the boundary expands).
    pub(super) fn start_attempt(&mut self, node: NodeIx) {
        let program = Arc::clone(&self.program);
        let (ExprKind::Boundary { body, .. }, scope) =
            (&program.expr(self.arena.nodes[node].expr).kind, self.arena.nodes[node].scope)
        else {
            return;
        };
        let next_scope = self.arena.scopes.next();
        let attempt = match &mut self.arena.nodes[node].control {
            Control::Boundary(state) => {
                state.attempt += 1;
                state.attempt_scope = next_scope;
                state.phase = BoundaryPhase::Running;
                state.attempt
            }
            _ => return,
        };
        let id = self.node_id(node);
        self.outbox.events.push(Event::BoundaryAttemptStarted { node: id.clone(), attempt });
        self.enter_traced_scope(node, id, TracedScope::BoundaryAttempt { attempt });
        self.enter(
            *body,
            Some(scope),
            Owner::Attempt(node),
            format_compact!("a{attempt}"),
            attempt,
            SmallVec::new(),
        );
    }

    /// Asks the shell for a timer and records why.
    fn start_timer(&mut self, purpose: TimerPurpose, delay: Duration) -> TimerHandle {
        let timer = TimerHandle(self.timers.next);
        self.timers.next += 1;
        self.timers.purposes.insert(timer, purpose);
        let node = match purpose {
            TimerPurpose::Backoff(node) | TimerPurpose::Grace(Some(node)) => self.node_id(node),
            TimerPurpose::Grace(None) => Arc::from(""),
        };
        let delay_ms = delay.as_millis().min(u128::from(u64::MAX)) as u64;
        self.outbox.events.push(Event::TimerStarted { timer: timer.0, node, delay_ms });
        self.outbox.effects.push(Effect::StartTimer { timer, delay });
        timer
    }

    pub(super) fn cancel_timer(&mut self, timer: TimerHandle) {
        if self.timers.purposes.remove(&timer).is_some() {
            self.outbox.effects.push(Effect::CancelTimer(timer));
        }
    }

    /// The shell armed `timer` with a wall-clock deadline; the journal keeps it.
    pub(super) fn timer_armed(&mut self, timer: TimerHandle, deadline_unix_ms: u64) {
        if self.timers.purposes.contains_key(&timer) {
            self.outbox.events.push(Event::TimerArmed { timer: timer.0, deadline_unix_ms });
        }
    }

    /// A backoff ends with the next attempt; a grace period ends the wait for acknowledgements.
    pub(super) fn timer_fired(&mut self, timer: TimerHandle) {
        let Some(purpose) = self.timers.purposes.remove(&timer) else { return };
        self.outbox.events.push(Event::TimerFired { timer: timer.0 });
        match purpose {
            TimerPurpose::Backoff(node) => {
                let waiting = matches!(
                    &self.arena.nodes[node].control,
                    Control::Boundary(state) if matches!(state.phase, BoundaryPhase::Backoff(t) if t == timer)
                );
                if waiting && self.arena.nodes[node].state == NodeState::Running {
                    self.start_attempt(node);
                }
            }
            TimerPurpose::Grace(point) => {
                if !self.is_draining(point) {
                    return;
                }
                for node in self.cancelling_below(self.drain_scope(point)) {
                    self.mark_cancelled(node);
                }
                if let Some(drain) = self.drain_mut(point) {
                    drain.grace = None;
                }
                self.end_drain(point);
            }
        }
    }

    /// Stops a cancelled boundary's timers (a backoff is cancellable) and a cancelled loop's
    /// permits.
    pub(super) fn release_control(&mut self, node: NodeIx) {
        let timer = match &mut self.arena.nodes[node].control {
            Control::Boundary(state) => match std::mem::replace(&mut state.phase, BoundaryPhase::Running) {
                BoundaryPhase::Backoff(timer) => Some(timer),
                BoundaryPhase::Draining(drain) => drain.grace,
                BoundaryPhase::Running => None,
            },
            Control::Loop(state) => {
                state.active.clear();
                None
            }
            _ => None,
        };
        if let Some(timer) = timer {
            self.cancel_timer(timer);
        }
    }
}
