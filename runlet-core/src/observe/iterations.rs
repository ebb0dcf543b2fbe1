//! Loop iterations in the public graph (spec §4.1, §6.3): each shown iteration or fold step as an
//! `Iteration` node summing up the states of the nodes inside it, and the iterations of large
//! loops folded into ranges with per-state counts.

use std::collections::BTreeMap;

use super::context::{GraphContext, NodeKind};
use super::model::NodeRecord;
use super::node_id::{iteration_index, split_local};
use super::retention::FoldedSpan;
use super::snapshot::{EdgeKind, GraphEdge, GraphNode, IterationRange, OwningScope, SourceSpan, Timestamps};
use super::state::NodeState;
use crate::analyze::hir::ExprKind;

/// The local id of the iteration scope `segment` opened by the loop or fold `owner`: the scope's
/// path with the loop's syntax path.
pub(crate) fn iteration_local(owner: &str, segment: &str) -> String {
    let (scope, syntax) = split_local(owner);
    if scope.is_empty() { format!("{segment}|{syntax}") } else { format!("{scope}/{segment}|{syntax}") }
}

/// What the shown nodes of one iteration add up to.
struct Iteration {
    loop_node: String,
    segment: String,
    index: usize,
    states: BTreeMap<NodeState, usize>,
    planned_at_ms: Option<u64>,
    finished_at_ms: Option<u64>,
}

/// The iterations the shown nodes are inside, by iteration local id.
#[derive(Default)]
pub(crate) struct IterationNodes {
    iterations: BTreeMap<String, Iteration>,
}

impl IterationNodes {
    /// Counts a shown node in every iteration among its owning scopes.
    pub(crate) fn add(&mut self, owners: &[(String, String)], record: &NodeRecord) {
        for (segment, owner) in owners {
            let Some(index) = iteration_index(segment) else { continue };
            let iteration =
                self.iterations.entry(iteration_local(owner, segment)).or_insert_with(|| Iteration {
                    loop_node: owner.clone(),
                    segment: segment.clone(),
                    index,
                    states: BTreeMap::new(),
                    planned_at_ms: None,
                    finished_at_ms: None,
                });
            *iteration.states.entry(record.state).or_default() += 1;
            iteration.planned_at_ms = min_some(iteration.planned_at_ms, record.planned_at_ms);
            iteration.finished_at_ms = iteration.finished_at_ms.max(record.finished_at_ms);
        }
    }

    /// The `Iteration` nodes, and the `contains` edges from their loops (local ids).
    pub(crate) fn finish(self, context: &GraphContext) -> (Vec<GraphNode>, Vec<GraphEdge>) {
        let mut nodes = Vec::with_capacity(self.iterations.len());
        let mut edges = Vec::with_capacity(self.iterations.len());
        for (local, iteration) in self.iterations {
            let Some(loop_expr) = context.expr_of(&iteration.loop_node) else { continue };
            let (span, output_schema) = match &context.program().expr(loop_expr).kind {
                ExprKind::For { body, .. } | ExprKind::Fold { body, .. } => {
                    let region = context.program().region(*body);
                    let schema = context.program().expr(region.result).schema;
                    (
                        SourceSpan { start: region.span.start, end: region.span.end },
                        context.program().schemas.display(schema).to_string(),
                    )
                }
                _ => continue,
            };
            let identity = context.node_id(&local);
            let state = iteration_state(&iteration.states);
            let mut scopes = context.owners(&iteration.loop_node, loop_expr);
            scopes.push((iteration.segment, iteration.loop_node.clone()));
            edges.push(GraphEdge {
                kind: EdgeKind::Contains,
                from: iteration.loop_node.clone(),
                to: local.clone(),
                producer_path: None,
                consumer_path: None,
                condition: None,
                reused: false,
            });
            nodes.push(GraphNode {
                id: identity.to_string(),
                attempt: identity.attempt,
                identity,
                kind: NodeKind::Iteration,
                label: format!("iteration {}", iteration.index),
                span,
                scopes: scopes
                    .into_iter()
                    .map(|(segment, owner)| OwningScope {
                        segment,
                        owner: context.node_id(&owner).to_string(),
                    })
                    .collect(),
                state,
                timestamps: Timestamps {
                    planned_at_ms: iteration.planned_at_ms,
                    started_at_ms: iteration.planned_at_ms,
                    finished_at_ms: state.is_terminal().then_some(iteration.finished_at_ms).flatten(),
                },
                tool: None,
                input_schemas: Vec::new(),
                output_schema,
                blocked_on: None,
                retry: None,
                cancellation: None,
                failure: None,
                selected_arm: None,
                loop_info: None,
                reused_from: None,
                value: None,
                progress: None,
            });
        }
        (nodes, edges)
    }
}

fn min_some(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Folded nodes grouped by loop and item index, and the iterations the model folded already,
/// turned into ranges of consecutive items.
#[derive(Default)]
pub(crate) struct RangeBuilder {
    iterations: BTreeMap<String, BTreeMap<usize, BTreeMap<NodeState, usize>>>,
    spans: BTreeMap<String, Vec<(usize, FoldedSpan)>>,
}

impl RangeBuilder {
    /// Counts `count` nodes in `state` in iteration `index` of `loop_node`.
    pub(crate) fn add(&mut self, (loop_node, index): (String, usize), state: NodeState, count: usize) {
        *self.iterations.entry(loop_node).or_default().entry(index).or_default().entry(state).or_default() +=
            count;
    }

    /// Adds iterations `first..=span.last` of `loop_node`, whose nodes all succeeded.
    pub(crate) fn add_span(&mut self, loop_node: String, first: usize, span: FoldedSpan) {
        self.spans.entry(loop_node).or_default().push((first, span));
    }

    pub(crate) fn finish(mut self, context: &GraphContext) -> Vec<IterationRange> {
        let mut pieces: BTreeMap<String, Vec<IterationRange>> = BTreeMap::new();
        for (loop_node, iterations) in std::mem::take(&mut self.iterations) {
            let public = context.node_id(&loop_node).to_string();
            let loop_pieces = pieces.entry(loop_node).or_default();
            for (index, states) in iterations {
                loop_pieces.push(IterationRange {
                    loop_node: public.clone(),
                    first: index,
                    last: index,
                    iterations: 1,
                    iteration_states: BTreeMap::from([(iteration_state(&states), 1)]),
                    node_states: states,
                });
            }
        }
        for (loop_node, spans) in self.spans {
            let public = context.node_id(&loop_node).to_string();
            let loop_pieces = pieces.entry(loop_node).or_default();
            for (first, span) in spans {
                let iterations = span.last - first + 1;
                loop_pieces.push(IterationRange {
                    loop_node: public.clone(),
                    first,
                    last: span.last,
                    iterations,
                    iteration_states: BTreeMap::from([(NodeState::Succeeded, iterations)]),
                    node_states: BTreeMap::from([(NodeState::Succeeded, span.nodes)]),
                });
            }
        }
        let mut ranges = Vec::new();
        for (_, mut loop_pieces) in pieces {
            loop_pieces.sort_by_key(|piece| (piece.first, piece.last));
            let mut current: Option<IterationRange> = None;
            for piece in loop_pieces {
                match &mut current {
                    Some(range) if range.last + 1 == piece.first => {
                        range.last = piece.last;
                        range.iterations += piece.iterations;
                        for (state, count) in piece.iteration_states {
                            *range.iteration_states.entry(state).or_default() += count;
                        }
                        for (state, count) in piece.node_states {
                            *range.node_states.entry(state).or_default() += count;
                        }
                    }
                    _ => ranges.extend(current.replace(piece)),
                }
            }
            ranges.extend(current);
        }
        ranges
    }
}

fn iteration_state(states: &BTreeMap<NodeState, usize>) -> NodeState {
    if states.contains_key(&NodeState::Failed) {
        NodeState::Failed
    } else if states.keys().any(|s| !s.is_terminal()) {
        NodeState::Running
    } else if states.contains_key(&NodeState::Cancelled) || states.contains_key(&NodeState::Pruned) {
        NodeState::Cancelled
    } else {
        NodeState::Succeeded
    }
}
