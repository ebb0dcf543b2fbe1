//! The registry's nested namespaces: a tree of path segments whose nodes may hold a tool, with
//! longest-callable-path resolution (spec §2.3) and member listing for candidates.

use std::collections::BTreeMap;
use std::sync::Arc;

/// Index of a tool in its registry, in name order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct ToolId(pub(super) u32);

impl ToolId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One namespace: its members by segment and the tool at this exact path, if any.
#[derive(Debug, Clone, Default)]
pub struct Namespace {
    members: BTreeMap<Arc<str>, Namespace>,
    tool: Option<ToolId>,
}

/// A callable path found at the start of a dotted path, and how many segments it used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Callable {
    pub tool: ToolId,
    pub segments: usize,
}

impl Namespace {
    pub(super) fn insert<'a>(&mut self, segments: impl IntoIterator<Item = &'a str>, tool: ToolId) {
        let node =
            segments.into_iter().fold(self, |node, segment| node.members.entry(segment.into()).or_default());
        node.tool = Some(tool);
    }

    /// The namespace at `segments` (the root for none).
    pub fn get<S: AsRef<str>>(&self, segments: &[S]) -> Option<&Namespace> {
        segments.iter().try_fold(self, |node, segment| node.members.get(segment.as_ref()))
    }

    /// The tool registered at exactly this namespace's path.
    pub fn tool(&self) -> Option<ToolId> {
        self.tool
    }

    /// The names one level below, sorted.
    pub fn members(&self) -> impl Iterator<Item = &str> {
        self.members.keys().map(|k| &**k)
    }

    /// The longest prefix of `segments` that names a tool: given `crm.customer.email`, the tool
    /// `crm.customer` with 2 segments used, leaving `email` to project from its result.
    pub fn longest_callable<S: AsRef<str>>(&self, segments: &[S]) -> Option<Callable> {
        let mut node = self;
        let mut found = None;
        for (used, segment) in segments.iter().enumerate() {
            let Some(next) = node.members.get(segment.as_ref()) else { break };
            node = next;
            if let Some(tool) = node.tool {
                found = Some(Callable { tool, segments: used + 1 });
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_the_longest_callable_prefix() {
        let mut root = Namespace::default();
        root.insert(["crm", "customer"], ToolId(0));
        root.insert(["crm", "customer", "email"], ToolId(1));
        root.insert(["crm", "orders", "list"], ToolId(2));
        let callable = |path: &[&str]| root.longest_callable(path);
        assert_eq!(callable(&["crm", "customer", "name"]), Some(Callable { tool: ToolId(0), segments: 2 }));
        assert_eq!(
            callable(&["crm", "customer", "email", "x"]),
            Some(Callable { tool: ToolId(1), segments: 3 })
        );
        assert_eq!(callable(&["crm", "orders"]), None);
        assert_eq!(callable(&["crm"]), None);
        assert_eq!(
            root.get(&["crm"]).map(|n| n.members().collect::<Vec<_>>()),
            Some(vec!["customer", "orders"])
        );
        assert_eq!(root.members().collect::<Vec<_>>(), ["crm"]);
    }
}
