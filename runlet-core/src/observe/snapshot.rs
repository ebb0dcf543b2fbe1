//! The consistent graph snapshot of spec §6.1 as public data: nodes (§4.1 kinds, identity,
//! state, timestamps, tools, schemas, failures, redacted previews), labelled edges (§4.3), regions
//! never materialised, and large loops' iterations as ranges with state counts (§6.3).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::engine::event::Amount;

use super::context::NodeKind;
use super::model::RunState;
use super::node_id::NodeId;
use super::state::NodeState;

/// How much of a large graph a snapshot spells out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotOptions {
    /// A loop with more items than this shows its first iteration and every iteration holding a
    /// failed node in full; the others are folded into [`IterationRange`]s. The observer itself
    /// keeps only counts for the finished iterations of loops over 1,024 items, so above that
    /// those stay in ranges whatever this says.
    pub iteration_detail_limit: usize,
}

impl Default for SnapshotOptions {
    fn default() -> Self {
        SnapshotOptions { iteration_detail_limit: 32 }
    }
}

/// A run's graph as of journal record `seq`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GraphSnapshot {
    pub run_id: String,
    pub source_unit: String,
    /// The last journal record the snapshot includes: subscribe from here for what follows.
    pub seq: u64,
    pub run: RunSummary,
    /// Nodes in id order.
    pub nodes: Vec<GraphNode>,
    pub edges: Vec<GraphEdge>,
    pub iteration_ranges: Vec<IterationRange>,
    pub not_materialized: Vec<UnmaterializedRegion>,
    /// Journal records the state machine refused; empty for every run this runtime wrote.
    pub integrity_errors: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunSummary {
    pub state: RunState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    pub cancellation_requested: bool,
    /// How often the run was resumed after a restart.
    pub resumptions: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SourceSpan {
    pub start: u32,
    pub end: u32,
}

/// One scope a node is inside: its segment and the node that opened it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OwningScope {
    pub segment: String,
    pub owner: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Timestamps {
    pub planned_at_ms: Option<u64>,
    pub started_at_ms: Option<u64>,
    pub finished_at_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolInfo {
    pub name: String,
    pub execution: &'static str,
    pub schema_version: String,
    /// The attempt of the last dispatch, once dispatched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dispatch_attempt: Option<u32>,
}

/// Why a node is not running yet (spec §6.3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockedOn {
    /// Waiting for these producers' values.
    Data { producers: Vec<String> },
    /// Ready, but waiting for concurrency or resource permits.
    Permits { resources: Vec<String> },
}

/// A boundary's attempts and retries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RetryInfo {
    pub attempt: u32,
    pub retries_allowed: u32,
    /// Attempts scheduled after a retryable failure, in order.
    pub scheduled_attempts: Vec<u32>,
    pub catch_selected: bool,
    /// The backoff before the next attempt, while it waits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backoff: Option<RetryWait>,
}

/// A scheduled retry's wait (spec §6.3: scheduled retry and deadline).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RetryWait {
    pub delay_ms: u64,
    /// The wall-clock deadline (Unix ms) once the timer is armed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadline_unix_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CancellationInfo {
    /// `pruned`: cancelled before it ever became eligible.
    pub never_eligible: bool,
    /// Tool answers that arrived after the cancellation: evidence of an external effect.
    pub orphaned_completions: u32,
}

/// A failure: a known one, or an uncertain external outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FailureInfo {
    pub code: String,
    /// The execution limit whose crossing caused the failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<String>,
    /// The tool's message, when the view may see it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    pub retryable: bool,
    pub uncertain: bool,
    /// What the tool's registry entry says about this error code (its declared error's
    /// `description`): the tool author's remediation text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remediation: Option<String>,
}

/// A call's latest progress report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProgressInfo {
    pub progress: Amount,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<Amount>,
    /// The tool's message, when the view may see it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LoopInfo {
    pub items: usize,
    pub iterations_started: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GraphNode {
    /// The identity's text form.
    pub id: String,
    pub identity: NodeId,
    pub kind: NodeKind,
    pub label: String,
    pub span: SourceSpan,
    /// Outermost first.
    pub scopes: Vec<OwningScope>,
    pub state: NodeState,
    pub timestamps: Timestamps,
    pub attempt: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<ToolInfo>,
    pub input_schemas: Vec<String>,
    pub output_schema: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked_on: Option<BlockedOn>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry: Option<RetryInfo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cancellation: Option<CancellationInfo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<FailureInfo>,
    /// The selected alternative of a branch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selected_arm: Option<&'static str>,
    #[serde(rename = "loop", skip_serializing_if = "Option::is_none")]
    pub loop_info: Option<LoopInfo>,
    /// For a call that took the durable result of an earlier attempt instead of dispatching:
    /// that attempt's node (reused work, not a fresh attempt).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reused_from: Option<String>,
    /// The node's value with unauthorized paths redacted (tool outputs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The latest progress the call's tool reported (`CallHeartbeat`), while it runs and after.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progress: Option<ProgressInfo>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    /// A value flows from producer to consumer.
    Data,
    /// A branch selected the arm its target belongs to.
    Control,
    /// A loop, fold or boundary owns its target.
    Contains,
    /// The target is the same logical node in the next boundary attempt.
    RetryOf,
    /// The target (a catch block's result) replaced the failure at the source.
    FallbackOf,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct GraphEdge {
    pub kind: EdgeKind,
    pub from: String,
    pub to: String,
    /// Data edges: the producer's output path and the consumer's input path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub producer_path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consumer_path: Option<String>,
    /// Control edges: the arm selected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    /// Data edges into a retry attempt from work that an earlier attempt already did.
    pub reused: bool,
}

/// Iterations of a large loop shown as counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IterationRange {
    #[serde(rename = "loop")]
    pub loop_node: String,
    pub first: usize,
    pub last: usize,
    pub iterations: usize,
    /// How many iterations are in each state (failed if any node failed, running while any is
    /// unfinished, cancelled if any was cancelled or pruned, else succeeded).
    pub iteration_states: BTreeMap<NodeState, usize>,
    /// How many of the folded nodes are in each state.
    pub node_states: BTreeMap<NodeState, usize>,
}

/// A region that was never entered: an untaken arm or an unused catch block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnmaterializedRegion {
    pub owner: String,
    pub arm: &'static str,
    pub span: SourceSpan,
}
