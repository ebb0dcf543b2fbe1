//! The deterministic run core (docs/design/engine.md): one run's nodes and scopes, driven by
//! inputs and answering with effects. It never awaits, reads a clock or spawns.

mod arena;
mod control;
mod evaluate;
mod failure;
#[cfg(test)]
mod failure_tests;
#[cfg(test)]
mod generated;
mod image;
mod intrinsic;
mod limits;
mod node_ids;
mod operations;
mod parts;
mod reclaim;
mod recovery;
mod state;
#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::time::Duration;

use compact_str::CompactString;
use smallvec::SmallVec;

use crate::analyze::hir::{BindingKind, ExprId, ExprKind, Program, RegionId};
use crate::diag::codes;
use crate::engine::error::{FailureClass, RunError};
use crate::engine::event::Progress;
use crate::engine::event::{Event, RecordedToolError};
use crate::engine::executor::ToolError;
use crate::engine::identity::{OperationId, Workflow};
use crate::engine::limits::{LimitKey, Limits};
use crate::engine::retry::Backoff;
use crate::plan::{Plan, operands};
use crate::registry::ToolId;
use crate::schema::{ExecutionClass, labels_of};
use crate::stdlib::{PatternCache, SampledFunction};
use crate::value::{Digest, DigestKey, Labelled, List, Value, ValueError, rcve};

use node_ids::RecentNodeIds;
pub use parts::ToolTable;
use parts::{Agenda, Operations, Outbox, RunArena, Timers};
pub use recovery::Resolution;
use state::{Drain, Node, NodeIx, NodeState, Owner, Role, Scope, ScopeIx, ScopeStatus};

/// Per-run policy the core applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunSettings {
    /// The concurrency of a `for` without `limit` (spec §2.7: never unbounded).
    pub default_loop_limit: u32,
    /// The delay between boundary attempts (spec §2.8); `None` retries at once.
    pub retry_backoff: Option<Backoff>,
    /// How long a failed attempt waits for its cancelled calls to acknowledge before it
    /// retries or catches (spec §2.8); `None` waits for every acknowledgement.
    pub cancellation_grace: Option<Duration>,
    /// The host's deadline for one tool call; a call past it fails with `RL6102`.
    pub tool_timeout: Option<Duration>,
}

impl Default for RunSettings {
    fn default() -> Self {
        RunSettings {
            default_loop_limit: 16,
            retry_backoff: None,
            cancellation_grace: Some(Duration::from_secs(5)),
            tool_timeout: None,
        }
    }
}

/// Names one timer the core asked for; `TimerFired` quotes it back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub struct TimerHandle(pub u32);

/// Names one dispatched call; completions quote it back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub struct CallHandle(pub(crate) u32);

/// Names one traced scope of the run (a boundary or a loop) while it lasts: the shell keys the
/// scope's span by it ([`Effect::EnterScope`]) and finds a call's parent span through
/// [`CallRequest::scope`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub struct ScopeHandle(pub(crate) u32);

/// What kind of traced scope began (spec §6.2: structured scopes are spans).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TracedScope {
    /// Attempt `attempt` (from 1) of a boundary.
    BoundaryAttempt { attempt: u32 },
    /// A `for` or `fold` over `items` items.
    Loop { items: usize },
}

/// A call the shell should dispatch once the preceding events are committed.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct CallRequest {
    pub call: CallHandle,
    pub tool: ToolId,
    /// The canonical argument list (spec §2.3).
    pub arguments: List,
    pub node_id: Arc<str>,
    pub attempt: u32,
    /// The call's syntax path: its logical call site (spec §4.2), shared with the program's plan.
    pub call_site: Arc<str>,
    /// Loop iterations and arms the call is inside; empty for a static call.
    pub dynamic_key: Arc<str>,
    /// Digest of the canonical argument list: the operation's input digest (spec §4.2).
    pub input_digest: Digest,
    /// The id of the digest key the operation's identity was keyed under: some argument, or an
    /// item of a loop the call is inside, is sensitive or secret (spec §6.2). None when public.
    pub digest_key: Option<Arc<str>>,
    /// The transport attempt of this operation, from 1: it makes the `dispatch_id`.
    pub dispatch_generation: u32,
    /// An earlier dispatch of this `recoverable` operation ended uncertain: ask the executor's
    /// `recover` first and dispatch only if the operation definitely did not apply (spec §5.4).
    pub recover_first: bool,
    /// The host's deadline for the call (`RunSettings::tool_timeout`).
    pub timeout: Option<Duration>,
    /// The operation generation (spec §4.2): 0 unless the host authorized fresh generations.
    pub operation_generation: u32,
    /// The operation id the core derived and journaled, when it was given the workflow
    /// ([`RunCore::with_workflow`]); a shell without it derives the same id itself.
    #[serde(default)]
    pub operation: Option<OperationId>,
    /// The innermost traced scope the call is inside (a boundary attempt or a loop), for its
    /// span's parent; None at the top of the run.
    #[serde(default)]
    pub scope: Option<ScopeHandle>,
}

/// A nondeterministic intrinsic the shell should sample once (docs/STDLIB.md); the answer comes
/// back as [`Input::Sampled`] and is journaled, so replay never samples again.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct SampleRequest {
    pub call: CallHandle,
    pub function: SampledFunction,
    pub node_id: Arc<str>,
}

/// What the core is told.
#[derive(Debug, Clone)]
pub enum Input {
    /// Host inputs, indexed like `Program::inputs`, already validated.
    Start {
        inputs: Vec<Labelled>,
    },
    ToolCompleted {
        call: CallHandle,
        value: Labelled,
    },
    ToolFailed {
        call: CallHandle,
        error: ToolError,
    },
    CancelRequested,
    /// The shell started `timer`: it fires at this wall-clock time (Unix milliseconds), which
    /// the journal keeps so a resumed run does not restart the wait (spec §5.3).
    TimerArmed {
        timer: TimerHandle,
        deadline_unix_ms: u64,
    },
    TimerFired {
        timer: TimerHandle,
    },
    /// The run continues after a restart: calls left dispatching are recovered by their
    /// execution class (spec §4.4, §5.4).
    Resume,
    /// The run's `wall_clock_ms` limit passed: `elapsed_ms` since the run started.
    WallClockExpired {
        elapsed_ms: u64,
    },
    /// The value (or failure) of a requested sample.
    Sampled {
        call: CallHandle,
        answer: Result<Value, ValueError>,
    },
    /// The shell started the run's `wall_clock_ms` clock at this wall-clock time (Unix
    /// milliseconds); the journal keeps it, so a resumed run counts from the original start.
    WallClockStarted {
        started_unix_ms: u64,
    },
    /// The host resolved the uncertain outcome of a call left dispatching; the next `Resume`
    /// applies it (spec §5.4).
    OperationResolved {
        call: CallHandle,
        resolution: Resolution,
    },
    /// The host authorized a fresh operation generation for a call left dispatching; the next
    /// `Resume` dispatches it under the new operation id (spec §5.4).
    FreshGenerationAuthorized {
        call: CallHandle,
        generation: u32,
    },
    /// The call holds every permit it asked for with [`Effect::AwaitPermits`]: its dispatch is
    /// prepared now. Not journaled itself: replay reads it off the `CallDispatchPrepared` it
    /// causes.
    PermitsGranted {
        call: CallHandle,
    },
    /// Go on with the work a reaction left when it answered [`Effect::Yield`]. Not journaled:
    /// replay sends it where a yield is followed by the core's own events.
    Continue,
    /// The host stops recovering the run, which was resumed `resumes` times without ending: it
    /// fails with `RL7306` at once, its calls left dispatching abandoned (their outcome stays
    /// what it was), as a cancellation abandons them.
    Park {
        resumes: u32,
    },
    /// The running call reported its progress; journaled as `CallHeartbeat`, ignored once the
    /// call is no longer running.
    CallHeartbeat {
        call: CallHandle,
        progress: Progress,
    },
}

/// What the core asks the shell to do, in order.
#[derive(Debug, Clone)]
pub enum Effect {
    /// Append these events as one batch; later effects wait for the commit.
    Append(Vec<Event>),
    /// Send the call; it holds its permits (if it needed any) since [`Input::PermitsGranted`].
    Dispatch(CallRequest),
    /// Stop the call: fire its cancellation token, or withdraw its permit request if it is
    /// still waiting for one.
    Cancel(CallHandle),
    /// A call of `tool` needs permits before its dispatch is prepared (spec §4.5): request them
    /// and answer with [`Input::PermitsGranted`] once they are all held. Until then nothing is
    /// journaled about the call but its `NodeReady`, so a crash while it waits leaves nothing
    /// uncertain.
    AwaitPermits {
        call: CallHandle,
        tool: ToolId,
        node_id: Arc<str>,
    },
    /// The reaction evaluated its share of nodes ([`EVALUATIONS_PER_REACTION`]) and more are
    /// ready: act on the effects so far, check the host's cancellation and the wall clock, then
    /// answer [`Input::Continue`]. So no pure computation, however long, holds off a cancel or
    /// a `wall_clock_ms` limit.
    Yield,
    /// Send `TimerArmed` now and `TimerFired` once `delay` has passed.
    StartTimer {
        timer: TimerHandle,
        delay: Duration,
    },
    /// The timer is no longer wanted; a `TimerFired` for it is ignored anyway.
    CancelTimer(TimerHandle),
    Finish(Outcome),
    /// Sample a nondeterministic intrinsic and answer with [`Input::Sampled`].
    Sample(SampleRequest),
    /// A traced scope began, recorded by the event for `node` in this reaction's batch
    /// (`BoundaryAttemptStarted` or `LoopCollectionResolved`); `parent` is the traced scope it
    /// is inside. It asks for nothing but a span: the scope ends with the events that end its
    /// node (`NodeSucceeded`, `NodeFailed`, `NodeCancelled`, and for an attempt
    /// `BoundaryRetryScheduled` and `CatchSelected`).
    EnterScope {
        scope: ScopeHandle,
        node: Arc<str>,
        parent: Option<ScopeHandle>,
        kind: TracedScope,
    },
}

/// How a run ended.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub enum Outcome {
    Succeeded(Labelled),
    Failed(RunError),
    Cancelled,
}

/// How many ready nodes one reaction evaluates before it yields to the shell (`Effect::Yield`).
pub const EVALUATIONS_PER_REACTION: usize = 4096;

/// The capacity a step's queues (the core's ready nodes, the shell's effects) keep between
/// steps: an ordinary step's, not a wide loop's burst.
pub(crate) const BUFFER_KEPT: usize = 64;

/// One run's state machine.
#[derive(Debug)]
pub struct RunCore {
    program: Arc<Program>,
    plan: Arc<Plan>,
    tools: ToolTable,
    settings: RunSettings,
    /// The run-pinned key for digests of sensitive or secret values (spec §6.2): operation
    /// input digests and iteration keys.
    digest_key: DigestKey,
    inputs: Vec<Labelled>,
    arena: RunArena,
    agenda: Agenda,
    outbox: Outbox,
    operations: Operations,
    timers: Timers,
    /// The regex patterns this run's intrinsics compiled.
    patterns: PatternCache,
    /// The run's failure waiting for cancelled calls before the run ends.
    run_drain: Option<Drain>,
    finished: bool,
    /// The run's limits and what it has used of them (`core/limits.rs`).
    budget: limits::Budget,
    /// The workflow its operations belong to, when the host gave it ([`RunCore::with_workflow`]):
    /// each `CallDispatchPrepared` then records its operation id, derived from the workflow's
    /// prefix hashed once per program.
    workflow: Option<Arc<Workflow>>,
    /// The ids of the nodes the latest events named, shared by the next events that name them.
    recent_ids: RecentNodeIds,
}

impl RunCore {
    /// A core for one run of `program` (planned as `plan`) calling `tools`.
    pub fn new(
        program: Arc<Program>,
        plan: Arc<Plan>,
        tools: ToolTable,
        settings: RunSettings,
        digest_key: DigestKey,
    ) -> RunCore {
        RunCore {
            program,
            plan,
            tools,
            settings,
            digest_key,
            inputs: Vec::new(),
            arena: RunArena::default(),
            agenda: Agenda::default(),
            outbox: Outbox::default(),
            operations: Operations::default(),
            timers: Timers::default(),
            patterns: PatternCache::default(),
            run_drain: None,
            finished: false,
            budget: limits::Budget::default(),
            workflow: None,
            recent_ids: RecentNodeIds::default(),
        }
    }

    /// The key this run's digests of sensitive values are keyed with.
    pub fn digest_key(&self) -> &DigestKey {
        &self.digest_key
    }

    /// Host input values labelled by the schemas the program declares them with (spec §6.2).
    pub fn labelled_inputs(&self, values: Vec<Value>) -> Vec<Labelled> {
        let schemas = &self.program.schemas;
        let labelled = values.into_iter().zip(&self.program.inputs);
        labelled
            .map(|(value, input)| {
                let labels = labels_of(schemas, input.schema, &value);
                Labelled::new(value, labels)
            })
            .collect()
    }

    /// A tool answer to `call` labelled by the tool's output schema, as the shell labels answers
    /// it validates (spec §6.2): replay gives recorded answers the labels they had.
    pub fn labelled_output(&self, call: CallHandle, value: Value) -> Labelled {
        match self.arena.nodes.get(NodeIx(call.0)) {
            Some(node) => {
                let schema = self.program.expr(node.expr).schema;
                let labels = labels_of(&self.program.schemas, schema, &value);
                Labelled::new(value, labels)
            }
            None => Labelled::public(value),
        }
    }

    /// This core with `limits` applied to its run; `source_bytes` is the program's source size.
    pub fn with_limits(mut self, limits: Limits, source_bytes: u64) -> RunCore {
        self.budget = limits::Budget::new(limits, source_bytes);
        self
    }

    /// This core with its calls' operation ids derived in `workflow` and recorded in their
    /// `CallDispatchPrepared` events (INTERFACES.md §4.1), so a journal names each operation.
    pub fn with_workflow(mut self, workflow: Arc<Workflow>) -> RunCore {
        self.workflow = Some(workflow);
        self
    }

    /// True once a `Finish` effect has been returned.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// How many nodes the run has materialized so far, finished and released ones included.
    pub fn materialized_nodes(&self) -> usize {
        self.arena.materialized
    }

    /// How many materialized nodes are not yet succeeded, failed or cancelled. Counts by walking
    /// every node: for measurements, not for hot paths.
    pub fn live_nodes(&self) -> usize {
        self.arena.nodes.iter().filter(|node| !node.state.is_terminal()).count()
    }

    /// How many node slots the run holds: live nodes and finished ones not yet released (a
    /// finished loop iteration's nodes are released once its value is taken).
    pub fn held_nodes(&self) -> usize {
        self.arena.nodes.held()
    }

    /// Applies `input` and returns the effects it causes: first the events to append, then the
    /// dispatches, cancellations and the run's end that wait for that commit.
    pub fn react(&mut self, input: Input) -> Vec<Effect> {
        let (mut events, mut effects) = (Vec::new(), Vec::new());
        self.react_into(input, &mut events, &mut effects);
        if !events.is_empty() {
            effects.insert(0, Effect::Append(events));
        }
        effects
    }

    /// [`RunCore::react`] into buffers the caller keeps between reactions: the events to append
    /// go after those `events` holds (a shell's batch), the other effects after `effects`'. No
    /// `Effect::Append` is among them.
    pub fn react_into(&mut self, input: Input, events: &mut Vec<Event>, effects: &mut Vec<Effect>) {
        debug_assert!(self.outbox.events.is_empty() && self.outbox.effects.is_empty());
        std::mem::swap(&mut self.outbox.events, events);
        std::mem::swap(&mut self.outbox.effects, effects);
        self.budget.events_counted(self.outbox.events.len());
        self.apply(input);
        self.budget.events_counted(0);
        std::mem::swap(&mut self.outbox.events, events);
        std::mem::swap(&mut self.outbox.effects, effects);
        // A step that started a wide loop queued one node per iteration; keep the buffer an
        // ordinary step needs, not that burst's, for the rest of the run.
        self.agenda.ready.shrink_to(BUFFER_KEPT);
    }

    /// Applies `input`, then evaluates what became ready, up to a reaction's worth.
    fn apply(&mut self, input: Input) {
        if !self.finished {
            match input {
                Input::Start { inputs } => self.start(inputs),
                Input::ToolCompleted { call, value } => self.call_answered(call, Ok(value)),
                Input::ToolFailed { call, error } => self.call_answered(call, Err(error)),
                Input::CancelRequested => self.cancel_run(),
                Input::TimerArmed { timer, deadline_unix_ms } => self.timer_armed(timer, deadline_unix_ms),
                Input::TimerFired { timer } => self.timer_fired(timer),
                Input::Resume => self.resume(),
                Input::WallClockExpired { elapsed_ms } => self.wall_clock_expired(elapsed_ms),
                Input::Sampled { call, answer } => self.sampled(call, answer),
                Input::WallClockStarted { started_unix_ms } => self.wall_clock_started(started_unix_ms),
                Input::OperationResolved { call, resolution } => self.operation_resolved(call, resolution),
                Input::FreshGenerationAuthorized { call, generation } => {
                    self.fresh_generation_authorized(call, generation)
                }
                Input::PermitsGranted { call } => self.permits_granted(call),
                Input::Continue => {}
                Input::Park { resumes } => self.park(resumes),
                Input::CallHeartbeat { call, progress } => self.call_heartbeat(call, progress),
            }
            self.measure_journal();
            self.apply_breach();
            self.release_retired();
            let mut evaluated = 0;
            while let Some(node) = self.agenda.ready.pop_front() {
                self.evaluate(node);
                self.measure_journal();
                self.apply_breach();
                self.release_retired();
                evaluated += 1;
                if evaluated == EVALUATIONS_PER_REACTION && !self.agenda.ready.is_empty() {
                    self.outbox.effects.push(Effect::Yield);
                    break;
                }
            }
        }
    }

    fn start(&mut self, inputs: Vec<Labelled>) {
        if !self.arena.scopes.is_empty() {
            return;
        }
        let values: Vec<Value> = inputs.iter().map(|i| i.value().clone()).collect();
        let recorded = List::new(values).map(|l| rcve::encode(&Value::List(l))).unwrap_or_default();
        self.inputs = inputs;
        self.outbox.events.push(Event::RunCreated { inputs: recorded.into() });
        let root = self.program.root;
        let source_bytes = self.budget.source_bytes;
        let whole = self.program.region(root).span;
        if !self.within(LimitKey::SourceBytes, source_bytes, whole, None) {
            return;
        }
        for index in 0..self.inputs.len() {
            let input = self.inputs[index].value().clone();
            if !self.outside_value_within(&input, whole, None) {
                return;
            }
        }
        self.enter(root, None, Owner::Run, CompactString::default(), 0, SmallVec::new());
    }

    fn call_heartbeat(&mut self, call: CallHandle, progress: Progress) {
        let node = NodeIx(call.0);
        let Some(entry) = self.arena.nodes.get(node) else { return };
        let is_call = matches!(self.program.expr(entry.expr).kind, ExprKind::Call { .. });
        if is_call && entry.state == NodeState::Running {
            let id = self.node_id(node);
            self.outbox.events.push(Event::CallHeartbeat { node: id, progress });
        }
    }

    fn call_answered(&mut self, call: CallHandle, answer: Result<Labelled, ToolError>) {
        let node = NodeIx(call.0);
        let Some(entry) = self.arena.nodes.get(NodeIx(node.0)) else { return };
        let is_call = matches!(self.program.expr(entry.expr).kind, ExprKind::Call { .. });
        if !is_call || entry.state == NodeState::Waiting {
            return;
        }
        let id = self.node_id(node);
        match entry.state {
            NodeState::Running => {}
            NodeState::Cancelling => return self.cancelled_call_answered(node, answer),
            _ => {
                self.outbox.events.push(Event::OrphanedCompletion { node: id });
                return;
            }
        }
        let output_bytes = match &answer {
            Ok(value) => {
                let output = rcve::encode(value.value());
                let size = output.len() as u64;
                self.outbox.events.push(Event::CallCompleted { node: id, output: output.into() });
                Some(size)
            }
            Err(error) => {
                self.outbox
                    .events
                    .push(Event::CallFailed { node: id, error: RecordedToolError::from(error) });
                None
            }
        };
        if let Some(size) = output_bytes {
            let span = self.program.expr(self.arena.nodes[node].expr).span;
            if !self.within(LimitKey::CallOutputBytes, size, span, Some(node)) {
                return;
            }
            if let Ok(value) = &answer {
                if !self.outside_value_within(value.value(), span, Some(node)) {
                    return;
                }
            }
        }
        match answer {
            Ok(value) => {
                self.operation_succeeded(node, &value);
                self.succeed(node, value)
            }
            Err(error) => {
                self.operation_failed(node, &error);
                let run_error = self.tool_error(node, error);
                self.fail(node, run_error);
            }
        }
    }

    fn cancel_run(&mut self) {
        self.outbox.events.push(Event::CancellationRequested);
        self.abandon_everything();
        self.outbox.events.push(Event::RunCancelled);
        self.finish(Outcome::Cancelled);
    }

    /// Parks the run as failed (`Input::Park`).
    fn park(&mut self, resumes: u32) {
        self.outbox.events.push(Event::RunParked { resumes });
        self.abandon_everything();
        let code = codes::RECOVERY_EXHAUSTED.to_string();
        let message = format!(
            "the run was resumed {resumes} times without ending, so it was parked as failed instead of being resumed again; find out why its resumes stop (`runlet runs show RUN_ID --events`), then start it again"
        );
        // The host's cap on resumes is a limit of the run's recovery: policy, never caught.
        let error = RunError::limit(code.clone(), message, String::new());
        self.outbox.events.push(Event::RunFailed { code });
        self.finish(Outcome::Failed(error));
    }

    /// Cancels every scope of the run and counts the calls it cancels as cancelled at once:
    /// the run ends without waiting for them.
    fn abandon_everything(&mut self) {
        if let Some(root) = (!self.arena.scopes.is_empty()).then_some(ScopeIx(0)) {
            self.cancel_scope(root);
        }
        for node in self.arena.nodes.slots() {
            if self.arena.nodes[node].state == NodeState::Cancelling {
                self.mark_cancelled(node);
            }
        }
    }

    fn finish(&mut self, outcome: Outcome) {
        self.finished = true;
        self.agenda.ready.clear();
        for timer in std::mem::take(&mut self.timers.purposes).into_keys() {
            self.outbox.effects.push(Effect::CancelTimer(timer));
        }
        self.outbox.effects.push(Effect::Finish(outcome));
    }

    // ---- scopes --------------------------------------------------------------------------

    /// Creates a scope for `region` and demands what entering it runs first.
    fn enter(
        &mut self,
        region: RegionId,
        parent: Option<ScopeIx>,
        owner: Owner,
        path: CompactString,
        attempt: u32,
        provided: SmallVec<[(crate::analyze::hir::BindingId, Labelled); 1]>,
    ) -> ScopeIx {
        let scope = self.arena.scopes.next();
        let depth = 1 + parent.map_or(0, |p| self.depth_of(p));
        self.arena.scopes.place(Scope {
            region,
            parent,
            owner,
            path,
            attempt,
            provided,
            nodes: Default::default(),
            children: Vec::new(),
            status: ScopeStatus::Active,
            segment: 0,
            outstanding: 0,
            result: None,
            skipped: false,
        });
        if let Some(parent) = parent {
            self.arena.scopes[parent].children.push(scope);
        }
        let span = self.program.region(region).span;
        if self.within(LimitKey::Depth, depth, span, owner.node()) {
            self.run_segment(scope);
        }
        scope
    }

    /// Demands the effect roots of the scope's current segment and what closes it: the skip's
    /// condition, or the region's result after the last segment.
    fn run_segment(&mut self, scope: ScopeIx) {
        let region = self.arena.scopes[scope].region;
        let segment_index = self.arena.scopes[scope].segment;
        let plan = Arc::clone(&self.plan);
        let segment = &plan.segments(region)[segment_index as usize];
        for &root in &segment.roots {
            let node = self.demand(scope, root);
            self.watch(node, Role::Root);
        }
        match segment.skip {
            Some(Some(condition)) => {
                let node = self.demand(scope, condition);
                self.watch(node, Role::SkipCondition);
            }
            Some(None) => {
                self.arena.scopes[scope].skipped = true;
            }
            None => {
                let result = self.program.region(region).result;
                let node = self.demand(scope, result);
                self.arena.scopes[scope].result = Some(node);
                self.watch(node, Role::Result);
            }
        }
        self.release_ready_demand();
        self.check_scope_done(scope);
    }

    /// Marks `node` as watched by its scope; an already succeeded node counts at once.
    fn watch(&mut self, node: NodeIx, role: Role) {
        let entry = &mut self.arena.nodes[node];
        if entry.state == NodeState::Succeeded {
            if role == Role::SkipCondition {
                entry.role = Some(role);
                let scope = entry.scope;
                self.arena.scopes[scope].outstanding += 1;
                self.watched_succeeded(node);
            }
            return;
        }
        entry.role = Some(role);
        let scope = entry.scope;
        self.arena.scopes[scope].outstanding += 1;
    }

    /// A watched node succeeded: count it, and act on a skip condition.
    fn watched_succeeded(&mut self, node: NodeIx) {
        let entry = &self.arena.nodes[node];
        let (scope, role) = (entry.scope, entry.role);
        let Some(role) = role else { return };
        if self.arena.scopes[scope].status != ScopeStatus::Active {
            return;
        }
        self.arena.scopes[scope].outstanding -= 1;
        if role == Role::SkipCondition {
            let taken = match self.arena.nodes[node].value.as_ref().map(Labelled::value) {
                Some(Value::Bool(taken)) => *taken,
                _ => false,
            };
            if taken {
                self.arena.scopes[scope].skipped = true;
            } else {
                self.arena.scopes[scope].segment += 1;
                self.run_segment(scope);
                return;
            }
        }
        self.check_scope_done(scope);
    }

    /// Completes `scope` when nothing it watches is outstanding and it has a result or skipped.
    fn check_scope_done(&mut self, scope: ScopeIx) {
        let entry = &self.arena.scopes[scope];
        if entry.status != ScopeStatus::Active || entry.outstanding > 0 {
            return;
        }
        let value = if entry.skipped {
            None
        } else {
            match entry.result.map(|n| self.arena.nodes[n].value.clone()) {
                Some(Some(value)) => Some(value),
                _ => return,
            }
        };
        self.arena.scopes[scope].status = ScopeStatus::Succeeded;
        self.scope_succeeded(scope, value);
    }

    // ---- nodes ---------------------------------------------------------------------------

    /// The node of `expr` in `scope`, materialising it and every dependency it still lacks.
    /// Iterative, so long binding chains cannot exhaust the stack.
    fn demand(&mut self, scope: ScopeIx, expr: ExprId) -> NodeIx {
        if let Some(&node) = self.arena.scopes[scope].nodes.get(&expr) {
            return node;
        }
        let first = self.create(scope, expr);
        let mut pending = vec![first];
        while let Some(node) = pending.pop() {
            let (node_scope, node_expr) = {
                let entry = &self.arena.nodes[node];
                (entry.scope, entry.expr)
            };
            for (prefetch_scope, prefetch_expr) in self.prefetches(node_scope, node_expr) {
                if !self.arena.scopes[prefetch_scope].nodes.contains_key(&prefetch_expr) {
                    let created = self.create(prefetch_scope, prefetch_expr);
                    pending.push(created);
                }
            }
            let mut inputs = Vec::new();
            for (dep_scope, dep_expr) in self.dependencies(node_scope, node_expr) {
                let dependency = match self.arena.scopes[dep_scope].nodes.get(&dep_expr) {
                    Some(&existing) => existing,
                    None => {
                        let created = self.create(dep_scope, dep_expr);
                        pending.push(created);
                        created
                    }
                };
                let span = self.program.expr(node_expr).span;
                self.count(LimitKey::GraphEdges, span, node);
                inputs.push(self.node_id(dependency));
                if self.arena.nodes[dependency].state != NodeState::Succeeded {
                    self.arena.nodes[node].waiting += 1;
                    self.arena.nodes[dependency].dependents.push(node);
                }
            }
            self.outbox.events.push(Event::NodePlanned { node: self.node_id(node), inputs });
        }
        first
    }

    fn create(&mut self, scope: ScopeIx, expr: ExprId) -> NodeIx {
        let node = self.arena.nodes.next();
        self.arena.materialized += 1;
        // Past the cap the node is still made, so this demand stays consistent; the run fails
        // with the breach before anything evaluates it.
        let span = self.program.expr(expr).span;
        self.within(LimitKey::GraphNodes, self.arena.materialized as u64, span, Some(node));
        self.arena.nodes.place(Node::new(expr, scope, NodeState::Waiting));
        self.arena.scopes[scope].nodes.insert(expr, node);
        self.agenda.fresh.push(node);
        node
    }

    /// Nodes created by the last demands whose dependencies are all met become ready.
    fn release_ready_demand(&mut self) {
        for node in std::mem::take(&mut self.agenda.fresh) {
            let entry = &self.arena.nodes[node];
            if entry.state == NodeState::Waiting && entry.waiting == 0 {
                self.agenda.ready.push_back(node);
            }
        }
    }

    /// Where `expr`'s inputs live: its operands in the same scope, and the value expression of a
    /// `let` binding in the scope that declares it.
    fn dependencies(&self, scope: ScopeIx, expr: ExprId) -> Vec<(ScopeIx, ExprId)> {
        let kind = &self.program.expr(expr).kind;
        if let ExprKind::Binding(binding) = kind {
            if let BindingKind::Let(value) = self.program.binding(*binding).kind {
                let region = self.plan.binding_region(*binding);
                return self.scope_of_region(scope, region).map(|s| vec![(s, value)]).unwrap_or_default();
            }
            return Vec::new();
        }
        operands(kind).into_iter().map(|operand| (scope, operand)).collect()
    }

    /// The outer `let` values a loop, fold or boundary node starts alongside itself (not as its
    /// dependencies): what its body will read from enclosing scopes.
    fn prefetches(&self, scope: ScopeIx, expr: ExprId) -> Vec<(ScopeIx, ExprId)> {
        let Some(body) = crate::plan::eager_bodies(&self.program.expr(expr).kind) else {
            return Vec::new();
        };
        self.plan
            .prefetch(body)
            .iter()
            .filter_map(|binding| {
                let BindingKind::Let(value) = self.program.binding(*binding).kind else { return None };
                let declared = self.scope_of_region(scope, self.plan.binding_region(*binding))?;
                Some((declared, value))
            })
            .collect()
    }

    /// The nearest scope from `scope` outwards that instantiates `region`.
    fn scope_of_region(&self, mut scope: ScopeIx, region: RegionId) -> Option<ScopeIx> {
        loop {
            let entry = &self.arena.scopes[scope];
            if entry.region == region {
                return Some(scope);
            }
            scope = entry.parent?;
        }
    }

    fn succeed(&mut self, node: NodeIx, value: Labelled) {
        if self.arena.nodes[node].state.is_terminal() || !self.value_within(value.value(), node) {
            return;
        }
        let entry = &mut self.arena.nodes[node];
        entry.state = NodeState::Succeeded;
        entry.value = Some(value);
        let dependents = std::mem::take(&mut entry.dependents);
        let id = self.node_id(node);
        self.outbox.events.push(Event::NodeSucceeded { node: id });
        for dependent in dependents {
            let waiting = &mut self.arena.nodes[dependent];
            waiting.waiting -= 1;
            if waiting.waiting == 0 && waiting.state == NodeState::Waiting {
                self.agenda.ready.push_back(dependent);
            }
        }
        if self.arena.nodes[node].role.is_some() {
            self.watched_succeeded(node);
        }
    }

    /// `node` failed: its own scope fails (lexical ownership, spec §2.8).
    fn fail(&mut self, node: NodeIx, error: RunError) {
        let entry = &mut self.arena.nodes[node];
        if entry.state.is_terminal() {
            return;
        }
        entry.state = NodeState::Failed;
        let scope = entry.scope;
        self.outbox.events.push(Event::NodeFailed { node: self.node_id(node), code: error.code.clone() });
        self.scope_failed(scope, error);
    }

    /// The public id of a node: its scope path and its expression's syntax path (spec §4.2).
    /// Kept only for the nodes named last ([`RecentNodeIds`]), not per node or scope: held id
    /// strings would cost each node of a wide loop more than the node itself.
    fn node_id(&self, node: NodeIx) -> Arc<str> {
        self.recent_ids.get_or_build(node, || {
            let entry = &self.arena.nodes[node];
            joined(&self.segments(entry.scope, true), Some(self.plan.path(entry.expr)))
        })
    }

    /// The dynamic key of work in `scope` (spec §4.2): the `/`-joined segments of the scope and
    /// its ancestors, leaving out boundary attempts, since an attempt number alone never changes
    /// an operation's identity.
    fn dynamic_key(&self, scope: ScopeIx) -> Arc<str> {
        joined(&self.segments(scope, false), None)
    }

    /// The non-empty segments of `scope` and its ancestors, innermost first; those of boundary
    /// attempts only when `attempts` is set. Node ids are built many times per call, so the
    /// segments stay on the stack for any usual nesting depth.
    fn segments(&self, scope: ScopeIx, attempts: bool) -> SmallVec<[&str; 8]> {
        let mut segments = SmallVec::new();
        let mut current = Some(scope);
        while let Some(ix) = current {
            let s = &self.arena.scopes[ix];
            if !s.path.is_empty() && (attempts || !matches!(s.owner, Owner::Attempt(_))) {
                segments.push(s.path.as_str());
            }
            current = s.parent;
        }
        segments
    }

    /// Where a call is in the program (its syntax path) and which dynamic instance it is.
    fn call_identity(&self, node: NodeIx) -> (Arc<str>, Arc<str>) {
        let entry = &self.arena.nodes[node];
        (Arc::clone(self.plan.path(entry.expr)), self.dynamic_key(entry.scope))
    }

    fn attempt_of(&self, scope: ScopeIx) -> u32 {
        self.arena.scopes[scope].attempt
    }

    /// The innermost traced scope around `scope`: the boundary of an attempt, or the loop of an
    /// iteration or fold step.
    fn traced_scope(&self, scope: ScopeIx) -> Option<ScopeHandle> {
        std::iter::successors(Some(scope), |s| self.arena.scopes[s].parent).find_map(|s| {
            match self.arena.scopes[s].owner {
                Owner::Attempt(node) | Owner::Iteration(node, _) | Owner::FoldStep(node) => {
                    Some(ScopeHandle(node.0))
                }
                Owner::Run | Owner::Arm(_) | Owner::Catch(_) => None,
            }
        })
    }

    /// Asks the shell for the span of the traced scope `node` begins (its event is in the batch).
    fn enter_traced_scope(&mut self, node: NodeIx, id: Arc<str>, kind: TracedScope) {
        let parent = self.traced_scope(self.arena.nodes[node].scope);
        self.outbox.effects.push(Effect::EnterScope { scope: ScopeHandle(node.0), node: id, parent, kind });
    }

    /// The run error of a failed call. It is retryable only when the tool says so and its
    /// execution class lets a boundary dispatch the operation again (spec §5.4).
    fn tool_error(&self, node: NodeIx, error: ToolError) -> RunError {
        let entry = &self.arena.nodes[node];
        let tool = match &self.program.expr(entry.expr).kind {
            ExprKind::Call { tool, .. } => Some(*tool),
            _ => None,
        };
        let permitted = tool.is_some_and(|t| crate::engine::retry::redispatch_permitted(self.tool_class(t)));
        let class = if error.uncertain {
            FailureClass::Uncertain
        } else if error.code == crate::diag::codes::TOOL_CALL_CANCELLED.to_string() {
            FailureClass::Cancelled
        } else {
            FailureClass::Tool
        };
        RunError {
            code: error.code,
            message: error.message,
            retryable: error.retryable && permitted,
            retry_after: error.retry_after,
            tool: tool.map(|t| self.tool_name(t)),
            node_id: self.node_id(node).to_string(),
            attempt: self.attempt_of(entry.scope),
            details: error.details,
            causes: Vec::new(),
            uncertain: error.uncertain,
            class,
        }
    }

    fn tool_name(&self, tool: ToolId) -> String {
        self.tools.name(tool).to_string()
    }

    fn tool_class(&self, tool: ToolId) -> ExecutionClass {
        self.tools.class(tool)
    }
}

/// `segments` (innermost first) `/`-joined outermost first, then `last` after a `|` (alone when
/// there are no segments): built on the stack and copied once into the shared text.
fn joined(segments: &[&str], last: Option<&str>) -> Arc<str> {
    let mut text = SmallVec::<[u8; 128]>::new();
    for (at, segment) in segments.iter().rev().enumerate() {
        if at > 0 {
            text.push(b'/');
        }
        text.extend_from_slice(segment.as_bytes());
    }
    if let Some(last) = last {
        if !text.is_empty() {
            text.push(b'|');
        }
        text.extend_from_slice(last.as_bytes());
    }
    Arc::from(std::str::from_utf8(&text).expect("text joined from text"))
}
