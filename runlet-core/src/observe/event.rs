//! The public event stream's items (spec §6.1): one `GraphEvent` per journal record, with the
//! node's public id, the tool, the time since the run started, and details redacted under a
//! `ViewPolicy` before they leave the runtime.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use serde::Serialize;

use super::context::GraphContext;
use super::view::ViewPolicy;
use crate::engine::event::Amount;
use crate::engine::event::{Arm, Event, OperationId};
use crate::schema::{labels_of, strongest_label};
use crate::value::{Labels, Sensitivity, rcve};

/// One committed transition as observers see it. Fields a kind does not have are absent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GraphEvent {
    pub seq: u64,
    /// The event name of spec §5.2 (`RunCreated`, `CallDispatchPrepared`, …).
    pub kind: &'static str,
    /// The kind's stable number, as the journal envelope records it (`Event::KINDS`).
    #[serde(skip)]
    pub kind_number: u16,
    /// The node's public id, for events about a node.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// The called tool, for events about a call node.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Milliseconds since the run was created (its header's time, else this observer's start),
    /// when the event was published in this process; for an event read back from a journal,
    /// when its record was appended (`None` where the journal keeps no times).
    pub at_ms: Option<u64>,
    /// The moment `at_ms` names, in Unix milliseconds, for hosts that show wall-clock times (the
    /// C ABI's `runlet_event.unix_ms`).
    #[serde(skip)]
    pub unix_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
    /// The operation id of a call's dispatch (`CallDispatchPrepared`), and of the events that
    /// end it (`CallCompleted`, `CallFailed`, `NodeSucceeded`, `NodeFailed`,
    /// `OrphanedCompletion`) in a stream that delivered its dispatch ([`CallOperations`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
    /// The error code of a failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// A tool error's message, when the view may see it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retryable: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uncertain: Option<bool>,
    /// The alternative a branch took: `then`, `else`, `short_circuit` or `right`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arm: Option<&'static str>,
    /// How many items a loop's collection has.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<usize>,
    /// Which item an iteration is for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    /// The public ids of the nodes a planned node reads.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<String>,
    /// The configuration key of a crossed limit, with the count that crossed it and its cap.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cap: Option<u64>,
    /// For `CallReused`: the public id of the earlier attempt's node whose result was taken.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reused_from: Option<String>,
    /// The timer a timer event is about, its delay and its wall-clock deadline (Unix ms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timer: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadline_unix_ms: Option<u64>,
    /// A tool output's preview with the paths the view may not see redacted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// For `CallHeartbeat`: how far the call is, of `total` when the tool knows it; its
    /// message is `message`, when the view may see it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progress: Option<Amount>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<Amount>,
}

/// When a record was published in this process, by the observer's one clock; for a record read
/// back from a journal, when it was appended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Published {
    /// Milliseconds since the run was created (its header's time, else the observer's start).
    pub at_ms: u64,
    /// The same moment in Unix milliseconds.
    pub unix_ms: u64,
}

pub(crate) fn arm_name(arm: Arm) -> &'static str {
    match arm {
        Arm::Then => "then",
        Arm::Else => "else",
        Arm::ShortCircuit => "short_circuit",
        Arm::Right => "right",
    }
}

/// The journal's node id of `event`, when it is about a node.
pub(crate) fn event_node(event: &Event) -> Option<&str> {
    match event {
        Event::NodeReady { node }
        | Event::NodePlanned { node, .. }
        | Event::CallDispatchPrepared { node, .. }
        | Event::NodeSucceeded { node }
        | Event::CallCompleted { node, .. }
        | Event::CallFailed { node, .. }
        | Event::OrphanedCompletion { node }
        | Event::NodeFailed { node, .. }
        | Event::NodeCancelled { node }
        | Event::BranchSelected { node, .. }
        | Event::LoopCollectionResolved { node, .. }
        | Event::IterationMaterialized { node, .. }
        | Event::BoundaryAttemptStarted { node, .. }
        | Event::BoundaryRetryScheduled { node, .. }
        | Event::CatchSelected { node }
        | Event::IntrinsicSampled { node, .. }
        | Event::NodeCancelling { node }
        | Event::CallReused { node, .. }
        | Event::OperationResolved { node, .. }
        | Event::FreshGenerationAuthorized { node, .. }
        | Event::CallHeartbeat { node, .. } => Some(node),
        Event::TimerStarted { node, .. } => (!node.is_empty()).then_some(&**node),
        Event::LimitExceeded { node, .. } => (!node.is_empty()).then_some(&**node),
        Event::RunCreated { .. }
        | Event::CancellationRequested
        | Event::RunSucceeded
        | Event::RunFailed { .. }
        | Event::RunCancelled
        | Event::TimerArmed { .. }
        | Event::TimerFired { .. }
        | Event::RunResumed
        | Event::RunParked { .. }
        | Event::WallClockStarted { .. } => None,
    }
}

impl GraphContext {
    /// Whether `view` may see what the tool of call `node` says in words (an error's message, a
    /// progress report's): text a tool writes is as sensitive as its output's strongest label.
    fn shows_tool_text(&self, node: &str, view: &ViewPolicy) -> bool {
        let label = self
            .expr_of(node)
            .and_then(|e| self.tool_of(e))
            .map(|tool| strongest_label(self.registry().schemas(), tool.output));
        label.is_some_and(|label| view.shows_metadata(label))
    }

    /// The labels of a sampled intrinsic's value: its expression's label on every path (secret
    /// when the node is unknown).
    pub(crate) fn sample_labels(&self, node: &str) -> Labels {
        Labels::uniform(
            self.expr_of(node).map_or(Sensitivity::Secret, |e| self.program().expr(e).sensitivity),
        )
    }

    /// The public form of the journal record `seq`, redacted for `view`, published at
    /// `published` (`None` for records read back from a journal); `operation` names the call
    /// it ends ([`CallOperations::name`]).
    pub(crate) fn graph_event(
        &self,
        seq: u64,
        event: &Event,
        published: Option<Published>,
        view: &ViewPolicy,
        operation: Option<OperationId>,
    ) -> GraphEvent {
        let local = event_node(event);
        let mut public = GraphEvent {
            seq,
            kind: event.kind(),
            kind_number: event.kind_number(),
            node: local.map(|l| self.node_id(l).to_string()),
            tool: local.and_then(|l| self.tool_name(l)),
            at_ms: published.map(|p| p.at_ms),
            unix_ms: published.map(|p| p.unix_ms),
            attempt: None,
            operation: operation.map(|operation| operation.to_string()),
            code: None,
            message: None,
            retryable: None,
            uncertain: None,
            arm: None,
            items: None,
            index: None,
            inputs: Vec::new(),
            limit: None,
            current: None,
            cap: None,
            reused_from: None,
            timer: None,
            delay_ms: None,
            deadline_unix_ms: None,
            value: None,
            progress: None,
            total: None,
        };
        match event {
            Event::NodePlanned { inputs, .. } => {
                public.inputs = inputs.iter().map(|i| self.node_id(i).to_string()).collect();
            }
            Event::CallDispatchPrepared { tool, attempt, operation, .. } => {
                public.tool = Some(tool.to_string());
                public.attempt = Some(*attempt);
                public.operation = operation.map(|operation| operation.to_string());
            }
            Event::CallCompleted { node, output } => {
                let tool = self.expr_of(node).and_then(|e| self.tool_of(e));
                public.value = match (output.inline().map(rcve::decode), tool) {
                    (Some(Ok(value)), Some(tool)) => {
                        let labels = labels_of(self.registry().schemas(), tool.output, &value);
                        Some(view.preview(&value, &labels))
                    }
                    _ => None,
                };
            }
            Event::CallFailed { node, error } => {
                public.code = Some(error.code.clone());
                public.retryable = Some(error.retryable);
                public.uncertain = Some(error.uncertain);
                if self.shows_tool_text(node, view) {
                    public.message = Some(error.message.clone());
                }
            }
            Event::CallHeartbeat { node, progress } => {
                public.progress = Some(progress.progress);
                public.total = progress.total;
                if self.shows_tool_text(node, view) {
                    public.message = progress.message.clone();
                }
            }
            Event::NodeFailed { code, .. } | Event::RunFailed { code } => public.code = Some(code.clone()),
            Event::BranchSelected { arm, .. } => public.arm = Some(arm_name(*arm)),
            Event::LoopCollectionResolved { items, .. } => public.items = Some(*items),
            Event::IterationMaterialized { index, .. } => public.index = Some(*index),
            Event::BoundaryAttemptStarted { attempt, .. } | Event::BoundaryRetryScheduled { attempt, .. } => {
                public.attempt = Some(*attempt)
            }
            Event::IntrinsicSampled { node, output } => {
                public.value = match output {
                    Ok(bytes) => {
                        rcve::decode(bytes).ok().map(|value| view.preview(&value, &self.sample_labels(node)))
                    }
                    Err(_) => None,
                };
            }
            Event::CallReused { from, .. } => public.reused_from = Some(self.node_id(from).to_string()),
            Event::TimerStarted { timer, delay_ms, .. } => {
                public.timer = Some(*timer);
                public.delay_ms = Some(*delay_ms);
            }
            Event::TimerArmed { timer, deadline_unix_ms } => {
                public.timer = Some(*timer);
                public.deadline_unix_ms = Some(*deadline_unix_ms);
            }
            Event::TimerFired { timer } => public.timer = Some(*timer),
            Event::LimitExceeded { limit, current, cap, .. } => {
                public.limit = Some(limit.clone());
                public.current = Some(*current);
                public.cap = Some(*cap);
            }
            Event::RunCreated { .. }
            | Event::NodeReady { .. }
            | Event::NodeSucceeded { .. }
            | Event::OrphanedCompletion { .. }
            | Event::NodeCancelled { .. }
            | Event::CancellationRequested
            | Event::CatchSelected { .. }
            | Event::RunSucceeded
            | Event::RunCancelled
            | Event::NodeCancelling { .. }
            | Event::RunResumed
            | Event::RunParked { .. }
            | Event::WallClockStarted { .. }
            | Event::OperationResolved { .. }
            | Event::FreshGenerationAuthorized { .. } => {}
        }
        public
    }
}

/// How many cancelled calls' operation ids a stream keeps for a late `OrphanedCompletion`.
const CANCELLED_KEPT: usize = 1024;

/// The operation ids a stream of one run's events names the ends of its calls with, learnt from
/// each call's `CallDispatchPrepared` as the stream delivers it: held until the call's node
/// ends (the latest [`CANCELLED_KEPT`] cancelled calls' a while longer, for a late
/// `OrphanedCompletion`), so about as many as the run has calls in flight. A stream that starts
/// after a call's dispatch was prepared names that call's end with none.
#[derive(Debug, Default)]
pub(crate) struct CallOperations {
    in_flight: HashMap<Arc<str>, OperationId>,
    cancelled: VecDeque<(Arc<str>, OperationId)>,
}

impl CallOperations {
    /// Takes in `event`, the stream's next, whether or not it is delivered; the operation id
    /// of the call it ends, if it ends one.
    pub(crate) fn name(&mut self, event: &Event) -> Option<OperationId> {
        match event {
            Event::CallDispatchPrepared { node, operation: Some(operation), .. } => {
                self.in_flight.insert(Arc::clone(node), *operation);
                None
            }
            Event::CallCompleted { node, .. } | Event::CallFailed { node, .. } => {
                self.in_flight.get(node).copied()
            }
            Event::NodeSucceeded { node } | Event::NodeFailed { node, .. } => self.in_flight.remove(node),
            Event::NodeCancelled { node } => {
                if let Some(operation) = self.in_flight.remove(node) {
                    if self.cancelled.len() == CANCELLED_KEPT {
                        self.cancelled.pop_front();
                    }
                    self.cancelled.push_back((Arc::clone(node), operation));
                }
                None
            }
            Event::OrphanedCompletion { node } => self
                .cancelled
                .iter()
                .rev()
                .find(|(cancelled, _)| cancelled == node)
                .map(|(_, operation)| *operation),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn operation(byte: char) -> OperationId {
        format!("op:{}", byte.to_string().repeat(64)).parse().expect("an operation id")
    }

    fn prepared(node: &Arc<str>, operation: OperationId) -> Event {
        Event::CallDispatchPrepared {
            node: Arc::clone(node),
            tool: "t.a".into(),
            attempt: 0,
            operation: Some(operation),
        }
    }

    #[test]
    fn a_call_s_end_is_named_with_the_operation_its_dispatch_prepared() {
        let (a, b): (Arc<str>, Arc<str>) = ("a".into(), "b".into());
        let mut operations = CallOperations::default();
        assert_eq!(operations.name(&prepared(&a, operation('1'))), None);
        assert_eq!(operations.name(&prepared(&b, operation('2'))), None);
        assert_eq!(operations.name(&Event::NodeSucceeded { node: Arc::clone(&a) }), Some(operation('1')));
        assert_eq!(operations.name(&Event::NodeSucceeded { node: Arc::clone(&a) }), None, "ended, forgotten");
        assert_eq!(operations.name(&Event::NodeCancelled { node: Arc::clone(&b) }), None);
        assert_eq!(
            operations.name(&Event::OrphanedCompletion { node: Arc::clone(&b) }),
            Some(operation('2'))
        );
        assert!(operations.in_flight.is_empty());
        // Cancelled calls are kept for a late answer only up to a bound.
        for n in 0..CANCELLED_KEPT + 10 {
            let node: Arc<str> = format!("c{n}").into();
            operations.name(&prepared(&node, operation('3')));
            operations.name(&Event::NodeCancelled { node });
        }
        assert_eq!(operations.cancelled.len(), CANCELLED_KEPT);
        assert_eq!(operations.name(&Event::OrphanedCompletion { node: "c0".into() }), None);
    }
}
