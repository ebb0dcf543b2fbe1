//! Public node identity (spec §4.2): run, source unit, syntax path, scope path, dynamic key and
//! attempt, with one stable text form, derived from the local ids the run core journals.

use std::fmt;

use serde::Serialize;

/// The identity of one logical node. Its text form is `run/source_unit/local`, where `local`
/// is the id journal events carry: `scope_path|syntax_path`, or the syntax path alone at the
/// program's top level.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct NodeId {
    pub run_id: String,
    /// The compiled source the node comes from: `src-` and 16 hex digits of its digest.
    pub source_unit: String,
    /// The expression's stable syntax path (`@k` marks the k-th analyzer-added expression).
    pub syntax_path: String,
    /// The `/`-joined scope segments: arms (`then`, `else`, `right`), iterations (`i3~…`),
    /// boundary attempts (`a2`) and catches.
    pub scope_path: String,
    /// The scope segments without boundary attempts: empty for a static node (spec §4.2).
    pub dynamic_key: String,
    /// The innermost boundary attempt the node belongs to; 0 outside every boundary.
    pub attempt: u32,
}

impl NodeId {
    /// The identity of the journal's local id `local` in run `run_id` of `source_unit`.
    pub fn from_local(run_id: &str, source_unit: &str, local: &str) -> NodeId {
        let (scope_path, syntax_path) = split_local(local);
        let mut attempt = 0;
        let mut dynamic = Vec::new();
        for segment in scope_path.split('/').filter(|s| !s.is_empty()) {
            match attempt_number(segment) {
                Some(number) => attempt = number,
                None => dynamic.push(segment),
            }
        }
        NodeId {
            run_id: run_id.to_owned(),
            source_unit: source_unit.to_owned(),
            syntax_path: syntax_path.to_owned(),
            scope_path: scope_path.to_owned(),
            dynamic_key: dynamic.join("/"),
            attempt,
        }
    }

    /// The id journal events use for this node.
    pub fn local(&self) -> String {
        if self.scope_path.is_empty() {
            self.syntax_path.clone()
        } else {
            format!("{}|{}", self.scope_path, self.syntax_path)
        }
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.run_id, self.source_unit, self.local())
    }
}

/// A local id's scope path and syntax path.
pub(crate) fn split_local(local: &str) -> (&str, &str) {
    local.split_once('|').unwrap_or(("", local))
}

/// The attempt number of a boundary attempt segment (`a1`, `a2`, …).
pub(crate) fn attempt_number(segment: &str) -> Option<u32> {
    let digits = segment.strip_prefix('a')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The input index of an iteration segment (`i3~1a2b3c4d`).
pub(crate) fn iteration_index(segment: &str) -> Option<usize> {
    let (index, _) = segment.strip_prefix('i')?.split_once('~')?;
    index.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_parts_come_from_the_scope_path() {
        let id = NodeId::from_local("run-1", "src-00ff", "a2/i3~0badf00d/then|let:x/value#ab");
        assert_eq!(id.syntax_path, "let:x/value#ab");
        assert_eq!(id.scope_path, "a2/i3~0badf00d/then");
        assert_eq!(id.dynamic_key, "i3~0badf00d/then");
        assert_eq!(id.attempt, 2);
        assert_eq!(id.local(), "a2/i3~0badf00d/then|let:x/value#ab");
        assert_eq!(id.to_string(), "run-1/src-00ff/a2/i3~0badf00d/then|let:x/value#ab");
    }

    #[test]
    fn a_static_node_has_no_dynamic_key_and_attempt_zero() {
        let id = NodeId::from_local("run-1", "src-00ff", "return/value#cd");
        assert_eq!((id.scope_path.as_str(), id.dynamic_key.as_str(), id.attempt), ("", "", 0));
        assert_eq!(id.local(), "return/value#cd");
    }

    #[test]
    fn segments_are_classified_strictly() {
        assert_eq!(attempt_number("a12"), Some(12));
        assert_eq!(attempt_number("a"), None);
        assert_eq!(attempt_number("and"), None);
        assert_eq!(iteration_index("i7~00"), Some(7));
        assert_eq!(iteration_index("i7"), None);
        assert_eq!(iteration_index("then"), None);
    }
}
