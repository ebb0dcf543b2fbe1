//! The failure view of spec §3.5 for each failed node of a snapshot: what failed, whether a
//! retry is reasonable, the shortest dependency path from the program's output to it, which of
//! its inputs never resolved, and the tool's remediation text. Computed from the redacted
//! snapshot, so it shows nothing more.

use std::collections::{BTreeMap, VecDeque};

use runlet::observe::{EdgeKind, GraphSnapshot, NodeKind, NodeState};
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct FailureView {
    pub node: String,
    pub code: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    pub retryable: bool,
    pub uncertain: bool,
    /// The tool's remediation text for the code, from its registry entry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remediation: Option<String>,
    /// Node ids from the program's output down to the failed node, along data and containment
    /// edges; empty when no such path is drawn.
    pub path_from_output: Vec<String>,
    /// The producers of the node's inputs that did not succeed.
    pub unresolved_inputs: Vec<String>,
}

/// The failure views of `snapshot`'s failed nodes, in node id order.
pub(crate) fn failure_views(snapshot: &GraphSnapshot) -> Vec<FailureView> {
    let states: BTreeMap<&str, NodeState> =
        snapshot.nodes.iter().map(|node| (node.id.as_str(), node.state)).collect();
    // Upstream neighbours: for each node, what it reads or contains.
    let mut upstream: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for edge in &snapshot.edges {
        match edge.kind {
            EdgeKind::Data => upstream.entry(edge.to.as_str()).or_default().push(edge.from.as_str()),
            EdgeKind::Contains | EdgeKind::FallbackOf => {
                upstream.entry(edge.from.as_str()).or_default().push(edge.to.as_str())
            }
            EdgeKind::Control | EdgeKind::RetryOf => {}
        }
    }
    let root = snapshot.nodes.iter().find(|node| node.kind == NodeKind::Root).map(|node| node.id.as_str());
    snapshot
        .nodes
        .iter()
        .filter_map(|node| {
            let failure = node.failure.as_ref()?;
            let unresolved_inputs = snapshot
                .edges
                .iter()
                .filter(|edge| edge.kind == EdgeKind::Data && edge.to == node.id)
                .filter(|edge| states.get(edge.from.as_str()) != Some(&NodeState::Succeeded))
                .map(|edge| edge.from.clone())
                .collect();
            Some(FailureView {
                node: node.id.clone(),
                code: failure.code.clone(),
                tool: node.tool.as_ref().map(|tool| tool.name.clone()),
                message: failure.message.clone(),
                retryable: failure.retryable,
                uncertain: failure.uncertain,
                remediation: failure.remediation.clone(),
                path_from_output: root.map_or_else(Vec::new, |root| shortest_path(&upstream, root, &node.id)),
                unresolved_inputs,
            })
        })
        .collect()
}

/// The shortest path from `from` to `to` over `next`, both ends included; empty when none.
fn shortest_path(next: &BTreeMap<&str, Vec<&str>>, from: &str, to: &str) -> Vec<String> {
    let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = VecDeque::from([from]);
    came_from.insert(from, from);
    while let Some(at) = queue.pop_front() {
        if at == to {
            let mut path = vec![to.to_owned()];
            let mut step = to;
            while step != from {
                step = came_from[step];
                path.push(step.to_owned());
            }
            path.reverse();
            return path;
        }
        for &neighbour in next.get(at).map_or(&[][..], Vec::as_slice) {
            if !came_from.contains_key(neighbour) {
                came_from.insert(neighbour, at);
                queue.push_back(neighbour);
            }
        }
    }
    Vec::new()
}
