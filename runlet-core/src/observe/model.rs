//! The graph model: a fold of a run's journaled events into node records whose states move only
//! through `NodeState::transition`, so the same events give the same model live or from the
//! journal.

use std::collections::BTreeMap;
use std::sync::Arc;

use indexmap::IndexMap;

use super::context::GraphContext;
use super::retention::Retention;
use super::state::NodeState;
use crate::engine::event::Progress;
use crate::engine::event::{Arm, Event, RecordedToolError};
use crate::value::{Labels, Value, rcve};

/// How the run itself stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunState {
    Running,
    Succeeded,
    Failed,
    Cancelled,
}

/// What the events said about one node: what every node has inline, the rest boxed, so the
/// records of a wide loop's calls stay small (a run keeps thousands of them, and each growth of
/// the table copies them all).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NodeRecord {
    pub(crate) state: NodeState,
    /// The attempt of the node's last dispatch.
    pub(crate) dispatch_attempt: Option<u32>,
    pub(crate) inputs: Vec<Arc<str>>,
    pub(crate) planned_at_ms: Option<u64>,
    pub(crate) started_at_ms: Option<u64>,
    pub(crate) finished_at_ms: Option<u64>,
    /// The record that put the node in a terminal state.
    pub(crate) settled_seq: Option<u64>,
    pub(crate) output: Option<(Value, Labels)>,
    details: Option<Box<NodeDetails>>,
}

/// What only some nodes have: failures, branches, loops, boundaries, timers, progress.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NodeDetails {
    pub(crate) tool_error: Option<RecordedToolError>,
    pub(crate) failure_code: Option<String>,
    pub(crate) arm: Option<Arm>,
    pub(crate) loop_items: Option<usize>,
    pub(crate) iterations_started: usize,
    pub(crate) boundary_attempt: Option<u32>,
    pub(crate) scheduled_retries: Vec<u32>,
    pub(crate) catching: bool,
    /// Tool answers that arrived after the node was cancelled (spec §4.6).
    pub(crate) orphaned_completions: u32,
    /// The execution limit the node crossed (its failure follows).
    pub(crate) limit_exceeded: Option<String>,
    /// For a call that took an earlier attempt's durable result: that attempt's node.
    pub(crate) reused_from: Option<Arc<str>>,
    /// A boundary's retry backoff waiting to fire: its delay and, once armed, its deadline.
    pub(crate) backoff: Option<(u64, Option<u64>)>,
    /// The latest progress its tool reported.
    pub(crate) progress: Option<Progress>,
}

/// The details of a node the events said nothing more about, and what a node's first detail
/// starts from.
static NO_DETAILS: NodeDetails = NodeDetails {
    tool_error: None,
    failure_code: None,
    arm: None,
    loop_items: None,
    iterations_started: 0,
    boundary_attempt: None,
    scheduled_retries: Vec::new(),
    catching: false,
    orphaned_completions: 0,
    limit_exceeded: None,
    reused_from: None,
    backoff: None,
    progress: None,
};

impl NodeRecord {
    fn planned(inputs: Vec<Arc<str>>, at_ms: Option<u64>) -> NodeRecord {
        NodeRecord {
            state: NodeState::Planned,
            dispatch_attempt: None,
            inputs,
            planned_at_ms: at_ms,
            started_at_ms: None,
            finished_at_ms: None,
            settled_seq: None,
            output: None,
            details: None,
        }
    }

    pub(crate) fn details(&self) -> &NodeDetails {
        self.details.as_deref().unwrap_or(&NO_DETAILS)
    }

    fn details_mut(&mut self) -> &mut NodeDetails {
        self.details.get_or_insert_with(|| Box::new(NO_DETAILS.clone()))
    }
}

/// Records by node id. Every event looks a node up by its long id, so by hash (with a fixed
/// seed) rather than by comparison; whatever lists them sorts them first (snapshots do). An
/// `IndexMap` keeps each key's hash beside its entry, so growing the table moves indices and
/// hashes no key again (a run's model grows from nothing to thousands of records).
pub(crate) type NodeMap<V> = IndexMap<Arc<str>, V, foldhash::fast::FixedState>;

/// A fold of one run's events.
#[derive(Debug, Clone)]
pub(crate) struct GraphModel {
    pub(crate) context: Arc<GraphContext>,
    /// Whether the model folds every event into node records, or only the run's own state
    /// (the observer of a runtime without a live graph).
    folds_nodes: bool,
    pub(crate) seq: u64,
    pub(crate) nodes: NodeMap<NodeRecord>,
    /// For each node that has yet to succeed, the nodes that read it and wait for it.
    pub(crate) consumers: NodeMap<Vec<Arc<str>>>,
    pub(crate) run: RunState,
    pub(crate) run_code: Option<String>,
    pub(crate) cancellation_requested: bool,
    /// How often the run was resumed after a restart.
    pub(crate) resumptions: u32,
    /// Timers started and not yet fired, with the node they are for ("" for the run).
    pub(crate) timers: BTreeMap<u32, Arc<str>>,
    /// Calls waiting for concurrency or resource permits, with the resources they wait for: a
    /// live condition the shell reports, not a journaled transition.
    pub(crate) permit_waits: BTreeMap<String, Vec<String>>,
    /// Events the state machine refused, in order: a journal this runtime did not write, or a
    /// bug. Never silently dropped.
    pub(crate) violations: Vec<String>,
    /// Large loops' iterations being tracked, and those folded into counts.
    pub(crate) retention: Retention,
}

impl GraphModel {
    /// A model of the whole graph.
    pub(crate) fn new(context: Arc<GraphContext>) -> GraphModel {
        GraphModel::folding(context, true)
    }

    /// A model of the run's own state (its end, cancellation and resumptions) and no nodes.
    pub(crate) fn run_state_only(context: Arc<GraphContext>) -> GraphModel {
        GraphModel::folding(context, false)
    }

    fn folding(context: Arc<GraphContext>, folds_nodes: bool) -> GraphModel {
        GraphModel {
            context,
            folds_nodes,
            seq: 0,
            nodes: NodeMap::default(),
            consumers: NodeMap::default(),
            run: RunState::Running,
            run_code: None,
            cancellation_requested: false,
            resumptions: 0,
            timers: BTreeMap::new(),
            permit_waits: BTreeMap::new(),
            violations: Vec::new(),
            retention: Retention::default(),
        }
    }

    /// Applies the journal record `seq`, published `at_ms` after the run started when known.
    pub(crate) fn apply(&mut self, seq: u64, event: &Event, at_ms: Option<u64>) {
        if self.folds_nodes {
            self.apply_event(seq, event, at_ms);
            self.fold_finished_iterations();
        } else {
            self.seq = self.seq.max(seq);
            self.run_event(event);
        }
    }

    /// Whether the model folds node records, not only the run's own state.
    pub(crate) fn folds_nodes(&self) -> bool {
        self.folds_nodes
    }

    fn apply_event(&mut self, seq: u64, event: &Event, at_ms: Option<u64>) {
        if seq != self.seq + 1 {
            self.violations.push(format!("record {seq} follows record {}", self.seq));
        }
        self.seq = self.seq.max(seq);
        match event {
            Event::NodePlanned { node, inputs } => self.plan(seq, node, inputs, at_ms),
            Event::NodeReady { node } => self.advance(seq, node, NodeState::Ready, at_ms),
            Event::CallDispatchPrepared { node, attempt, .. } => {
                self.advance(seq, node, NodeState::Dispatching, at_ms);
                self.with(seq, node, |r| r.dispatch_attempt = Some(*attempt));
            }
            Event::CallCompleted { node, output } => {
                let tool = self.context.expr_of(node).and_then(|e| self.context.tool_of(e)).map(|t| t.output);
                let output = output.inline().and_then(|bytes| rcve::decode(bytes).ok()).map(|value| {
                    let labels = tool.map_or_else(
                        || Labels::uniform(crate::value::Sensitivity::Secret),
                        |schema| crate::schema::labels_of(self.context.registry().schemas(), schema, &value),
                    );
                    (value, labels)
                });
                self.advance(seq, node, NodeState::Running, at_ms);
                self.with(seq, node, |r| r.output = output);
            }
            Event::IntrinsicSampled { node, output } => {
                let output = output
                    .as_ref()
                    .ok()
                    .and_then(|bytes| rcve::decode(bytes).ok())
                    .map(|value| (value, self.context.sample_labels(node)));
                self.advance(seq, node, NodeState::Running, at_ms);
                self.with(seq, node, |r| r.output = output);
            }
            Event::CallFailed { node, error } => {
                let error = error.clone();
                self.with(seq, node, |r| r.details_mut().tool_error = Some(error));
            }
            Event::NodeSucceeded { node } => {
                self.advance(seq, node, NodeState::Succeeded, at_ms);
                self.release_consumers(seq, node, at_ms);
            }
            Event::NodeFailed { node, code } => {
                self.advance(seq, node, NodeState::Failed, at_ms);
                let code = code.clone();
                self.with(seq, node, |r| r.details_mut().failure_code = Some(code));
            }
            Event::NodeCancelled { node } => {
                let never_eligible = self
                    .nodes
                    .get(node)
                    .is_some_and(|r| matches!(r.state, NodeState::Planned | NodeState::Blocked));
                let target = if never_eligible { NodeState::Pruned } else { NodeState::Cancelled };
                self.advance(seq, node, target, at_ms);
            }
            Event::OrphanedCompletion { node } => {
                self.with(seq, node, |r| r.details_mut().orphaned_completions += 1)
            }
            Event::CallHeartbeat { node, progress } => {
                let progress = progress.clone();
                self.with(seq, node, |r| r.details_mut().progress = Some(progress));
            }
            Event::BranchSelected { node, arm } => {
                self.advance(seq, node, NodeState::Running, at_ms);
                self.with(seq, node, |r| r.details_mut().arm = Some(*arm));
            }
            Event::LoopCollectionResolved { node, items } => {
                self.retention.loop_resolved(*items);
                self.advance(seq, node, NodeState::Running, at_ms);
                self.with(seq, node, |r| r.details_mut().loop_items = Some(*items));
            }
            Event::IterationMaterialized { node, .. } => {
                self.with(seq, node, |r| r.details_mut().iterations_started += 1)
            }
            Event::BoundaryAttemptStarted { node, attempt } => {
                self.advance(seq, node, NodeState::Running, at_ms);
                self.with(seq, node, |r| r.details_mut().boundary_attempt = Some(*attempt));
            }
            Event::BoundaryRetryScheduled { node, attempt } => {
                self.with(seq, node, |r| r.details_mut().scheduled_retries.push(*attempt))
            }
            Event::CatchSelected { node } => self.with(seq, node, |r| r.details_mut().catching = true),
            Event::CancellationRequested
            | Event::RunResumed
            | Event::RunSucceeded
            | Event::RunFailed { .. }
            | Event::RunCancelled => self.run_event(event),
            Event::RunCreated { .. } | Event::WallClockStarted { .. } | Event::RunParked { .. } => {}
            Event::OperationResolved { .. } | Event::FreshGenerationAuthorized { .. } => {}
            Event::NodeCancelling { node } => self.advance(seq, node, NodeState::Cancelling, at_ms),
            Event::CallReused { node, from } => {
                let from = from.clone();
                self.with(seq, node, |r| r.details_mut().reused_from = Some(from));
            }
            Event::TimerStarted { timer, node, delay_ms } => {
                self.timers.insert(*timer, node.clone());
                if !node.is_empty() {
                    self.with(seq, node, |r| r.details_mut().backoff = Some((*delay_ms, None)));
                }
            }
            Event::TimerArmed { timer, deadline_unix_ms } => {
                if let Some(node) = self.timers.get(timer).filter(|n| !n.is_empty()).cloned() {
                    self.with(seq, &node, |r| {
                        if let Some((_, deadline)) = r.details.as_deref_mut().and_then(|d| d.backoff.as_mut())
                        {
                            *deadline = Some(*deadline_unix_ms);
                        }
                    });
                }
            }
            Event::TimerFired { timer } => {
                if let Some(node) = self.timers.remove(timer).filter(|n| !n.is_empty()) {
                    self.with(seq, &node, |r| {
                        if let Some(details) = r.details.as_deref_mut() {
                            details.backoff = None;
                        }
                    });
                }
            }
            Event::LimitExceeded { node, limit, .. } if !node.is_empty() => {
                let limit = limit.clone();
                self.with(seq, node, |r| r.details_mut().limit_exceeded = Some(limit));
            }
            Event::LimitExceeded { .. } => {}
        }
    }

    fn run_event(&mut self, event: &Event) {
        match event {
            Event::CancellationRequested => self.cancellation_requested = true,
            Event::RunResumed => self.resumptions += 1,
            Event::RunSucceeded => self.end(RunState::Succeeded, None),
            Event::RunFailed { code } => self.end(RunState::Failed, Some(code.clone())),
            Event::RunCancelled => self.end(RunState::Cancelled, None),
            _ => {}
        }
    }

    fn end(&mut self, state: RunState, code: Option<String>) {
        self.run = state;
        self.run_code = code;
    }

    fn plan(&mut self, seq: u64, node: &Arc<str>, inputs: &[Arc<str>], at_ms: Option<u64>) {
        if self.nodes.contains_key(node) {
            self.violations.push(format!("record {seq} plans `{node}` a second time"));
            return;
        }
        // Only inputs that have yet to succeed will release it.
        for input in inputs {
            if !self.succeeded(input) {
                self.consumers.entry(Arc::clone(input)).or_default().push(Arc::clone(node));
            }
        }
        self.nodes.insert(Arc::clone(node), NodeRecord::planned(inputs.to_vec(), at_ms));
        self.track_planned(seq, node);
        self.advance(seq, node, NodeState::Blocked, at_ms);
        if self.inputs_succeeded(node) {
            self.advance(seq, node, NodeState::Ready, at_ms);
        }
    }

    fn inputs_succeeded(&self, node: &str) -> bool {
        self.nodes.get(node).is_some_and(|record| record.inputs.iter().all(|i| self.succeeded(i)))
    }

    /// Whether `node` succeeded, its record kept or folded into its iteration's count.
    pub(crate) fn succeeded(&self, node: &str) -> bool {
        match self.nodes.get(node) {
            Some(record) => record.state == NodeState::Succeeded,
            None => self.folded_away(node),
        }
    }

    /// A node succeeded: its blocked consumers whose inputs all succeeded become ready. A node
    /// succeeds once, so its list of consumers is done with.
    fn release_consumers(&mut self, seq: u64, node: &str, at_ms: Option<u64>) {
        let Some(consumers) = self.consumers.swap_remove(node) else { return };
        for consumer in consumers {
            let blocked = self.nodes.get(&consumer).is_some_and(|r| r.state == NodeState::Blocked);
            if blocked && self.inputs_succeeded(&consumer) {
                self.advance(seq, &consumer, NodeState::Ready, at_ms);
            }
        }
    }

    /// Moves `node` to `target` along the lifecycle, each step checked by the state machine.
    fn advance(&mut self, seq: u64, node: &str, target: NodeState, at_ms: Option<u64>) {
        let Some(record) = self.nodes.get_mut(node) else {
            self.violations.push(format!("record {seq} moves `{node}`, which was never planned"));
            return;
        };
        let Some(path) = record.state.path_to(target) else {
            self.violations.push(format!(
                "record {seq} would move `{node}` from {} to {}",
                record.state.name(),
                target.name()
            ));
            return;
        };
        for step in path {
            match record.state.transition(step) {
                Ok(next) => record.state = next,
                Err(illegal) => {
                    self.violations.push(format!("record {seq}: `{node}`: {illegal}"));
                    return;
                }
            }
            if step == NodeState::Dispatching {
                record.started_at_ms = record.started_at_ms.or(at_ms);
            }
            if step.is_terminal() {
                record.finished_at_ms = at_ms;
                record.settled_seq = Some(seq);
                self.permit_waits.remove(node);
                self.retention.settled(node);
            }
        }
    }

    fn with(&mut self, seq: u64, node: &str, change: impl FnOnce(&mut NodeRecord)) {
        match self.nodes.get_mut(node) {
            Some(record) => change(record),
            None => self.violations.push(format!("record {seq} is about `{node}`, which was never planned")),
        }
    }
}
