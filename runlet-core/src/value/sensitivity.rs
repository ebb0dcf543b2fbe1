//! Sensitivity labels (public < sensitive < secret) and the sparse label tree that says which
//! paths of a value carry which label (spec §6.2).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// How sensitive a value is. The order is the order of strength: a derived value gets the
/// strongest label of what it was derived from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Sensitivity {
    #[default]
    Public,
    Sensitive,
    Secret,
}

impl Sensitivity {
    /// The name schemas use (`x-runlet-sensitivity`): `public`, `sensitive` or `secret`.
    pub const fn name(self) -> &'static str {
        match self {
            Sensitivity::Public => "public",
            Sensitivity::Sensitive => "sensitive",
            Sensitivity::Secret => "secret",
        }
    }

    pub fn parse(name: &str) -> Option<Sensitivity> {
        [Sensitivity::Public, Sensitivity::Sensitive, Sensitivity::Secret]
            .into_iter()
            .find(|s| s.name() == name)
    }
}

impl fmt::Display for Sensitivity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One step of a path into a value: a list (or string/bytes) position or an object key.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Segment {
    Index(usize),
    Key(Arc<str>),
}

impl fmt::Display for Segment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Segment::Index(i) => write!(f, "[{i}]"),
            Segment::Key(k) => write!(f, "[{}]", serde_json::Value::String(k.to_string())),
        }
    }
}

/// Renders a path as `$`, `$.a[0]`-style text for error details (`$["key"]` for keys).
pub fn path_text(path: &[Segment]) -> String {
    let mut text = String::from("$");
    for segment in path {
        text.push_str(&segment.to_string());
    }
    text
}

/// Which paths of one value carry which label. The label of a path is the strongest label on
/// it or on any of its ancestors, so labelling an object `secret` labels everything inside.
///
/// The tree is sparse and normalized: a child is stored only when something inside it is
/// stronger than its parent, so a fully public value costs nothing and two trees that label
/// the same paths the same way are `==`.
#[derive(Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Labels {
    level: Sensitivity,
    max: Sensitivity,
    children: Option<Arc<BTreeMap<Segment, Labels>>>,
}

impl Labels {
    /// Every path public.
    pub fn public() -> Labels {
        Labels::default()
    }

    /// Every path at `level`.
    pub fn uniform(level: Sensitivity) -> Labels {
        Labels { level, max: level, children: None }
    }

    /// `level` on `path` and everything below it; public elsewhere.
    pub fn at_path(path: &[Segment], level: Sensitivity) -> Labels {
        path.iter().rev().fold(Labels::uniform(level), |inner, segment| {
            Labels::composite(Sensitivity::Public, [(segment.clone(), inner)])
        })
    }

    /// A composite's labels: `level` on the whole, and each element's labels below its segment.
    pub fn composite(level: Sensitivity, children: impl IntoIterator<Item = (Segment, Labels)>) -> Labels {
        let mut kept = BTreeMap::new();
        let mut max = level;
        for (segment, child) in children {
            let child = child.raised(level);
            if child.max > level {
                max = max.max(child.max);
                kept.insert(segment, child);
            }
        }
        Labels { level, max, children: (!kept.is_empty()).then(|| Arc::new(kept)) }
    }

    /// The label of the whole value (the root path).
    pub fn level(&self) -> Sensitivity {
        self.level
    }

    /// The strongest label anywhere in the value. A value whose `max` is not public needs the
    /// keyed digest (spec §6.2).
    pub fn max(&self) -> Sensitivity {
        self.max
    }

    /// The labels of the element under `segment`.
    pub fn child(&self, segment: &Segment) -> Labels {
        self.children
            .as_ref()
            .and_then(|children| children.get(segment))
            .cloned()
            .unwrap_or_else(|| Labels::uniform(self.level))
    }

    /// The stored children, in segment order.
    pub fn children(&self) -> impl Iterator<Item = (&Segment, &Labels)> {
        self.children.iter().flat_map(|children| children.iter())
    }

    /// The label of `path`.
    pub fn level_at(&self, path: &[Segment]) -> Sensitivity {
        match path.split_first() {
            None => self.level,
            Some((first, rest)) => match self.children.as_ref().and_then(|c| c.get(first)) {
                Some(child) => child.level_at(rest),
                None => self.level,
            },
        }
    }

    /// These labels with every path raised to at least `floor`.
    pub fn raised(&self, floor: Sensitivity) -> Labels {
        if floor <= self.level {
            return self.clone();
        }
        if floor >= self.max {
            return Labels::uniform(floor);
        }
        Labels::composite(floor, self.children().map(|(s, l)| (s.clone(), l.clone())))
    }

    /// Every path at the strongest label anywhere inside: what a value derived from the whole
    /// (a formatted string, a comparison result) must carry.
    pub fn flattened(&self) -> Labels {
        Labels::uniform(self.max)
    }

    /// The pointwise strongest of two label trees over the same value shape.
    pub fn join(&self, other: &Labels) -> Labels {
        let level = self.level.max(other.level);
        let segments: std::collections::BTreeSet<&Segment> =
            self.children().chain(other.children()).map(|(s, _)| s).collect();
        Labels::composite(
            level,
            segments.into_iter().map(|s| (s.clone(), self.child(s).join(&other.child(s)))),
        )
    }

    /// Every stored labelled path and its label, depth first, in segment order. Paths whose
    /// label equals their parent's are implied and not listed; the root is listed first.
    pub fn paths(&self) -> Vec<(Vec<Segment>, Sensitivity)> {
        fn walk(labels: &Labels, path: &mut Vec<Segment>, out: &mut Vec<(Vec<Segment>, Sensitivity)>) {
            out.push((path.clone(), labels.level));
            for (segment, child) in labels.children() {
                path.push(segment.clone());
                walk(child, path, out);
                path.pop();
            }
        }
        let mut out = Vec::new();
        walk(self, &mut Vec::new(), &mut out);
        out
    }
}

impl fmt::Debug for Labels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.paths().into_iter().map(|(p, l)| (path_text(&p), l))).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: &str) -> Segment {
        Segment::Key(k.into())
    }

    #[test]
    fn labels_apply_to_descendants() {
        let labels = Labels::at_path(&[key("user"), key("email")], Sensitivity::Sensitive);
        assert_eq!(labels.level(), Sensitivity::Public);
        assert_eq!(labels.max(), Sensitivity::Sensitive);
        assert_eq!(labels.level_at(&[key("user")]), Sensitivity::Public);
        assert_eq!(labels.level_at(&[key("user"), key("email")]), Sensitivity::Sensitive);
        assert_eq!(labels.level_at(&[key("user"), key("email"), Segment::Index(3)]), Sensitivity::Sensitive);
        assert_eq!(labels.level_at(&[key("other")]), Sensitivity::Public);
    }

    #[test]
    fn raising_prunes_children_that_are_no_longer_stronger() {
        let labels = Labels::at_path(&[key("a")], Sensitivity::Sensitive)
            .join(&Labels::at_path(&[key("b")], Sensitivity::Secret));
        let raised = labels.raised(Sensitivity::Sensitive);
        assert_eq!(
            raised.paths(),
            vec![(vec![], Sensitivity::Sensitive), (vec![key("b")], Sensitivity::Secret)]
        );
        assert_eq!(labels.raised(Sensitivity::Secret), Labels::uniform(Sensitivity::Secret));
    }

    #[test]
    fn join_is_pointwise_and_normalized() {
        let a = Labels::at_path(&[key("x")], Sensitivity::Secret);
        let b = Labels::uniform(Sensitivity::Secret);
        assert_eq!(a.join(&b), b);
        assert_eq!(a.join(&Labels::public()), a);
        assert_eq!(Labels::public().join(&Labels::public()), Labels::public());
    }

    #[test]
    fn names_round_trip() {
        for s in [Sensitivity::Public, Sensitivity::Sensitive, Sensitivity::Secret] {
            assert_eq!(Sensitivity::parse(s.name()), Some(s));
        }
        assert!(Sensitivity::Public < Sensitivity::Sensitive && Sensitivity::Sensitive < Sensitivity::Secret);
        assert_eq!(path_text(&[key("a b"), Segment::Index(2)]), "$[\"a b\"][2]");
    }
}
