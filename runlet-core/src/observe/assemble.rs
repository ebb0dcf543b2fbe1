//! Building a snapshot from the graph model: public nodes with their identities and redacted
//! details, edges by kind, untaken regions, and large loops folded into iteration ranges.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::event::arm_name;
use super::iterations::{IterationNodes, RangeBuilder, iteration_local};
use super::model::{GraphModel, NodeRecord};
use super::node_id::{attempt_number, iteration_index, split_local};
use super::snapshot::{
    BlockedOn, CancellationInfo, EdgeKind, FailureInfo, GraphEdge, GraphNode, GraphSnapshot, LoopInfo,
    OwningScope, ProgressInfo, RetryInfo, RetryWait, RunSummary, SnapshotOptions, SourceSpan, Timestamps,
    ToolInfo, UnmaterializedRegion,
};
use super::state::NodeState;
use super::view::ViewPolicy;
use crate::analyze::hir::{ExprId, ExprKind, RegionId};
use crate::engine::event::Arm;
use crate::schema::strongest_label;

impl GraphModel {
    pub(crate) fn snapshot(&self, view: &ViewPolicy, options: &SnapshotOptions) -> GraphSnapshot {
        let context = &*self.context;
        let mut integrity_errors = self.violations.clone();
        let mut nodes = Vec::new();
        let mut edges = Vec::new();
        let mut ranges = RangeBuilder::default();
        let mut listed: Vec<(&Arc<str>, &NodeRecord)> = self.nodes.iter().collect();
        listed.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let placed: Vec<(&Arc<str>, &NodeRecord, ExprId)> = listed
            .into_iter()
            .filter_map(|(local, record)| match context.expr_of(local) {
                Some(expr) => Some((local, record, expr)),
                None => {
                    integrity_errors.push(format!("`{local}` names no expression of the program"));
                    None
                }
            })
            .collect();
        let expanded = self.expanded_iterations(&placed, options);
        let mut folded = BTreeSet::new();
        let mut iterations = IterationNodes::default();
        for &(local, record, expr) in &placed {
            if let Some(key) = self.folding_loop(local, expr, options, &expanded) {
                ranges.add(key, record.state, 1);
                folded.insert(&**local);
                continue;
            }
            iterations.add(&context.owners(local, expr), record);
            nodes.push(self.public_node(local, record, expr, view));
        }
        self.add_folded_spans(&mut ranges, options, &expanded);
        let (iteration_nodes, iteration_edges) = iterations.finish(context);
        nodes.extend(iteration_nodes);
        nodes.sort_by(|a, b| a.id.cmp(&b.id));
        edges.extend(iteration_edges);
        for &(local, record, expr) in &placed {
            if folded.contains(&**local) {
                continue;
            }
            self.node_edges(local, record, expr, &mut edges);
        }
        let hidden = |local: &str, data: bool| folded.contains(local) || (data && self.folded_away(local));
        edges.retain(|edge| !hidden(&edge.from, edge.kind == EdgeKind::Data) && !hidden(&edge.to, false));
        let to_public = |local: &str| context.node_id(local).to_string();
        let edges = edges
            .into_iter()
            .map(|edge| GraphEdge { from: to_public(&edge.from), to: to_public(&edge.to), ..edge })
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        GraphSnapshot {
            run_id: context.run_id().to_owned(),
            source_unit: context.source_unit().to_owned(),
            seq: self.seq,
            run: RunSummary {
                state: self.run,
                code: self.run_code.clone(),
                cancellation_requested: self.cancellation_requested,
                resumptions: self.resumptions,
            },
            nodes,
            edges,
            iteration_ranges: ranges.finish(context),
            not_materialized: self.not_materialized(&placed, &folded),
            integrity_errors,
        }
    }

    fn public_node(&self, local: &str, record: &NodeRecord, expr: ExprId, view: &ViewPolicy) -> GraphNode {
        let context = &*self.context;
        let identity = context.node_id(local);
        let source = context.program().expr(expr);
        let tool = context.tool_of(expr);
        let (input_schemas, output_schema) = context.schemas(expr);
        let blocked_on = if record.state == NodeState::Blocked {
            Some(BlockedOn::Data {
                producers: record
                    .inputs
                    .iter()
                    .filter(|i| !self.succeeded(i))
                    .map(|i| context.node_id(i).to_string())
                    .collect(),
            })
        } else {
            self.permit_waits.get(local).map(|resources| BlockedOn::Permits { resources: resources.clone() })
        };
        let label = tool.map(|t| strongest_label(context.registry().schemas(), t.output));
        let shows_tool_text = label.is_some_and(|l| view.shows_metadata(l));
        let remediation = |code: &str| {
            let declared = tool?.errors.iter().find(|declared| declared.code == code)?;
            declared.description.clone()
        };
        let details = record.details();
        let failure = match (&details.tool_error, &details.failure_code) {
            (Some(error), _) => Some(FailureInfo {
                code: error.code.clone(),
                limit: details.limit_exceeded.clone(),
                message: shows_tool_text.then(|| error.message.clone()),
                retryable: error.retryable,
                uncertain: error.uncertain,
                remediation: remediation(&error.code),
            }),
            (None, Some(code)) => Some(FailureInfo {
                code: code.clone(),
                limit: details.limit_exceeded.clone(),
                message: None,
                retryable: false,
                uncertain: false,
                remediation: None,
            }),
            (None, None) => None,
        };
        let retry = match &source.kind {
            ExprKind::Boundary { retries, .. } => Some(RetryInfo {
                attempt: details.boundary_attempt.unwrap_or(0),
                retries_allowed: *retries,
                scheduled_attempts: details.scheduled_retries.clone(),
                catch_selected: details.catching,
                backoff: details
                    .backoff
                    .map(|(delay_ms, deadline_unix_ms)| RetryWait { delay_ms, deadline_unix_ms }),
            }),
            _ => None,
        };
        let cancellation =
            matches!(record.state, NodeState::Cancelled | NodeState::Pruned | NodeState::Cancelling).then(
                || CancellationInfo {
                    never_eligible: record.state == NodeState::Pruned,
                    orphaned_completions: details.orphaned_completions,
                },
            );
        GraphNode {
            id: identity.to_string(),
            attempt: identity.attempt,
            identity,
            kind: context.kind(expr, local),
            label: context.label(expr),
            span: SourceSpan { start: source.span.start, end: source.span.end },
            scopes: context
                .owners(local, expr)
                .into_iter()
                .map(|(segment, owner)| OwningScope { segment, owner: context.node_id(&owner).to_string() })
                .collect(),
            state: record.state,
            timestamps: Timestamps {
                planned_at_ms: record.planned_at_ms,
                started_at_ms: record.started_at_ms,
                finished_at_ms: record.finished_at_ms,
            },
            tool: tool.map(|t| ToolInfo {
                name: t.name.to_string(),
                execution: t.execution.as_str(),
                schema_version: t.schema_version.to_string(),
                dispatch_attempt: record.dispatch_attempt,
            }),
            input_schemas,
            output_schema,
            blocked_on,
            retry,
            cancellation,
            failure,
            selected_arm: details.arm.map(arm_name),
            loop_info: details
                .loop_items
                .map(|items| LoopInfo { items, iterations_started: details.iterations_started }),
            reused_from: details.reused_from.as_ref().map(|from| context.node_id(from).to_string()),
            value: record.output.as_ref().map(|(value, labels)| view.preview(value, labels)),
            progress: details.progress.as_ref().map(|p| ProgressInfo {
                progress: p.progress,
                total: p.total,
                message: p.message.clone().filter(|_| shows_tool_text),
            }),
        }
    }

    /// The edges into `local` (by local ids): data from its inputs, control or containment from
    /// the node owning its scope, retry from its previous attempt, fallback into a catch result.
    fn node_edges(&self, local: &str, record: &NodeRecord, expr: ExprId, edges: &mut Vec<GraphEdge>) {
        let context = &*self.context;
        let edge = |kind, from: &str, to: &str| GraphEdge {
            kind,
            from: from.to_owned(),
            to: to.to_owned(),
            producer_path: None,
            consumer_path: None,
            condition: None,
            reused: false,
        };
        let attempt = context.node_id(local).attempt;
        for (index, input) in record.inputs.iter().enumerate() {
            let producer_attempt = context.node_id(input).attempt;
            edges.push(GraphEdge {
                producer_path: Some("$".into()),
                consumer_path: Some(context.slot(expr, index)),
                reused: attempt > 1 && producer_attempt < attempt,
                ..edge(EdgeKind::Data, input, local)
            });
        }
        if let Some((segment, owner)) = context.owners(local, expr).pop() {
            if matches!(segment.as_str(), "then" | "else" | "right") {
                edges.push(GraphEdge { condition: Some(segment), ..edge(EdgeKind::Control, &owner, local) });
            } else if iteration_index(&segment).is_some() {
                edges.push(edge(EdgeKind::Contains, &iteration_local(&owner, &segment), local));
            } else {
                edges.push(edge(EdgeKind::Contains, &owner, local));
            }
        }
        if let Some(previous) = previous_attempt(local).filter(|p| self.nodes.contains_key(p.as_str())) {
            edges.push(edge(EdgeKind::RetryOf, &previous, local));
        }
        if let ExprKind::Boundary { catch, .. } = &context.program().expr(expr).kind {
            if let Some((failed, catch_result)) = self.fallback(local, record, *catch) {
                edges.push(edge(EdgeKind::FallbackOf, &failed, &catch_result));
            }
        }
    }

    /// For a boundary that caught: the first node to fail in its last attempt, and the catch
    /// block's result node.
    fn fallback(&self, boundary: &str, record: &NodeRecord, catch: RegionId) -> Option<(String, String)> {
        if !record.details().catching {
            return None;
        }
        let context = &*self.context;
        let scope = split_local(boundary).0;
        let within =
            |segment: &str| if scope.is_empty() { segment.to_owned() } else { format!("{scope}/{segment}") };
        let last_attempt = within(&format!("a{}", record.details().boundary_attempt?));
        let result = context.program().region(catch).result;
        let catch_result = format!("{}|{}", within("catch"), context.plan().path(result));
        if !self.nodes.contains_key(catch_result.as_str()) {
            return None;
        }
        let failed = self
            .nodes
            .iter()
            .filter(|(local, r)| {
                r.state == NodeState::Failed
                    && (split_local(local).0 == last_attempt
                        || split_local(local).0.starts_with(&format!("{last_attempt}/")))
            })
            .min_by_key(|(local, r)| (r.settled_seq, *local))?;
        Some((failed.0.to_string(), catch_result))
    }

    /// The regions shown nodes never entered.
    fn not_materialized(
        &self,
        placed: &[(&Arc<str>, &NodeRecord, ExprId)],
        folded: &BTreeSet<&str>,
    ) -> Vec<UnmaterializedRegion> {
        let context = &*self.context;
        let mut regions = Vec::new();
        for &(local, record, expr) in placed.iter().filter(|(local, ..)| !folded.contains(&local[..])) {
            let untaken: Vec<(&'static str, RegionId)> =
                match (&context.program().expr(expr).kind, record.details().arm) {
                    (ExprKind::Conditional { otherwise, .. }, Some(Arm::Then)) => vec![("else", *otherwise)],
                    (ExprKind::Conditional { then, .. }, Some(Arm::Else)) => vec![("then", *then)],
                    (ExprKind::Logical { right, .. }, Some(Arm::ShortCircuit)) => vec![("right", *right)],
                    (ExprKind::Boundary { catch, .. }, _)
                        if record.state == NodeState::Succeeded && !record.details().catching =>
                    {
                        vec![("catch", *catch)]
                    }
                    _ => Vec::new(),
                };
            for (arm, region) in untaken {
                let span = context.program().region(region).span;
                regions.push(UnmaterializedRegion {
                    owner: context.node_id(local).to_string(),
                    arm,
                    span: SourceSpan { start: span.start, end: span.end },
                });
            }
        }
        regions
    }

    /// The iterations the model folded as it went: ranges of their loop, or counted in the
    /// iteration this snapshot folds the loop itself into.
    fn add_folded_spans(
        &self,
        ranges: &mut RangeBuilder,
        options: &SnapshotOptions,
        expanded: &BTreeSet<(String, usize)>,
    ) {
        for (loop_node, spans) in self.retention.folded() {
            let outer = self
                .context
                .expr_of(loop_node)
                .and_then(|expr| self.folding_loop(loop_node, expr, options, expanded));
            match outer {
                Some(key) => ranges.add(key, NodeState::Succeeded, spans.values().map(|s| s.nodes).sum()),
                None => {
                    for (&first, &span) in spans {
                        ranges.add_span(loop_node.clone(), first, span);
                    }
                }
            }
        }
    }

    /// The iterations of large loops shown in full: the first, and every one with a failed node.
    fn expanded_iterations(
        &self,
        placed: &[(&Arc<str>, &NodeRecord, ExprId)],
        options: &SnapshotOptions,
    ) -> BTreeSet<(String, usize)> {
        let mut expanded = BTreeSet::new();
        for &(local, record, expr) in placed {
            for (loop_node, index) in self.large_loop_iterations(local, expr, options) {
                if index == 0 || record.state == NodeState::Failed {
                    expanded.insert((loop_node, index));
                }
            }
        }
        expanded
    }

    /// The outermost large-loop iteration `local` belongs to, unless that iteration is shown.
    fn folding_loop(
        &self,
        local: &str,
        expr: ExprId,
        options: &SnapshotOptions,
        expanded: &BTreeSet<(String, usize)>,
    ) -> Option<(String, usize)> {
        self.large_loop_iterations(local, expr, options).into_iter().find(|key| !expanded.contains(key))
    }

    /// The (loop node, item index) of every large-loop iteration `local` is inside, outermost
    /// first.
    fn large_loop_iterations(
        &self,
        local: &str,
        expr: ExprId,
        options: &SnapshotOptions,
    ) -> Vec<(String, usize)> {
        self.context
            .owners(local, expr)
            .into_iter()
            .filter_map(|(segment, owner)| {
                let index = iteration_index(&segment)?;
                let items = self.nodes.get(owner.as_str())?.details().loop_items?;
                (items > options.iteration_detail_limit).then_some((owner, index))
            })
            .collect()
    }
}

/// The local id of the same node in the previous attempt of its innermost boundary.
fn previous_attempt(local: &str) -> Option<String> {
    let (scope, syntax) = split_local(local);
    let segments: Vec<&str> = scope.split('/').collect();
    let position = segments.iter().rposition(|s| attempt_number(s).is_some())?;
    let attempt = attempt_number(segments[position])?;
    if attempt < 2 {
        return None;
    }
    let previous = format!("a{}", attempt - 1);
    let mut rewritten: Vec<&str> = segments.clone();
    rewritten[position] = &previous;
    Some(format!("{}|{syntax}", rewritten.join("/")))
}
