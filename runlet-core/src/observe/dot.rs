//! Graphviz DOT of a graph snapshot: node kinds by shape, states by fill colour, edge kinds by
//! style, large loops' folded iterations as one box with their state counts.

use std::fmt::Write;

use super::context::NodeKind;
use super::snapshot::{EdgeKind, GraphSnapshot};
use super::state::NodeState;

fn shape(kind: NodeKind) -> &'static str {
    match kind {
        NodeKind::Root => "doublecircle",
        NodeKind::Call => "box",
        NodeKind::Compute => "ellipse",
        NodeKind::Convert => "hexagon",
        NodeKind::Project => "cds",
        NodeKind::Composite => "folder",
        NodeKind::Branch => "diamond",
        NodeKind::Loop => "doubleoctagon",
        NodeKind::Iteration => "box3d",
        NodeKind::Boundary => "octagon",
        NodeKind::External => "invhouse",
    }
}

fn colour(state: NodeState) -> &'static str {
    match state {
        NodeState::Planned => "white",
        NodeState::Blocked => "orange",
        NodeState::Ready => "yellow",
        NodeState::Dispatching => "lightblue",
        NodeState::Running => "deepskyblue",
        NodeState::Succeeded => "palegreen",
        NodeState::Failed => "tomato",
        NodeState::Cancelling => "plum",
        NodeState::Cancelled => "gray",
        NodeState::Pruned => "gray90",
    }
}

fn style(kind: EdgeKind) -> &'static str {
    match kind {
        EdgeKind::Data => "style=solid",
        EdgeKind::Control => "style=dashed, color=blue",
        EdgeKind::Contains => "style=dotted",
        EdgeKind::RetryOf => "style=bold, color=red",
        EdgeKind::FallbackOf => "style=dashed, color=darkorange",
    }
}

/// A DOT string literal.
fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn counts(states: &std::collections::BTreeMap<NodeState, usize>) -> String {
    states.iter().map(|(state, n)| format!("{} {n}", state.name())).collect::<Vec<_>>().join(", ")
}

/// The snapshot as a `digraph`. Node and edge order follow the snapshot's, so equal snapshots
/// give equal text.
pub fn to_dot(snapshot: &GraphSnapshot) -> String {
    let mut out =
        String::from("digraph runlet {\n  rankdir=LR;\n  node [style=filled, fontname=\"Helvetica\"];\n");
    for node in &snapshot.nodes {
        let label = format!("{:?}: {}\n{}", node.kind, node.label, node.state.name());
        let _ = writeln!(
            out,
            "  {} [label={}, shape={}, fillcolor={}];",
            quoted(&node.id),
            quoted(&label),
            shape(node.kind),
            colour(node.state)
        );
    }
    for (index, range) in snapshot.iteration_ranges.iter().enumerate() {
        let id = format!("iterations#{index}");
        let label = format!(
            "iterations {}..={} ({})\n{}",
            range.first,
            range.last,
            range.iterations,
            counts(&range.iteration_states)
        );
        let _ = writeln!(
            out,
            "  {} [label={}, shape=box3d, fillcolor=lightyellow];",
            quoted(&id),
            quoted(&label)
        );
        let _ = writeln!(out, "  {} -> {} [style=dotted];", quoted(&range.loop_node), quoted(&id));
    }
    for (index, region) in snapshot.not_materialized.iter().enumerate() {
        let id = format!("not_materialized#{index}");
        let label = format!("{} (not materialized)", region.arm);
        let _ = writeln!(
            out,
            "  {} [label={}, shape=note, style=dashed, fillcolor=white];",
            quoted(&id),
            quoted(&label)
        );
        let _ = writeln!(out, "  {} -> {} [style=dashed, color=gray];", quoted(&region.owner), quoted(&id));
    }
    for edge in &snapshot.edges {
        let label = match edge.kind {
            EdgeKind::Data => edge.consumer_path.clone().unwrap_or_default(),
            EdgeKind::Control => edge.condition.clone().unwrap_or_default(),
            EdgeKind::Contains => String::new(),
            EdgeKind::RetryOf => "retry_of".to_owned(),
            EdgeKind::FallbackOf => "fallback_of".to_owned(),
        };
        let _ = writeln!(
            out,
            "  {} -> {} [label={}, {}];",
            quoted(&edge.from),
            quoted(&edge.to),
            quoted(&label),
            style(edge.kind)
        );
    }
    out.push_str("}\n");
    out
}
