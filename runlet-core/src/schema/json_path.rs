//! JSON paths into registry files, written as RFC 6901 JSON pointers
//! (`/tools/3/outputSchema/properties/x`), and their resolution against a parsed document.

use std::fmt;

use serde_json::Value;

use crate::value::Segment;

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PathSegment {
    Key(String),
    Index(usize),
}

/// A location inside a JSON document; the empty path is the document itself.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct JsonPath(Vec<PathSegment>);

impl JsonPath {
    pub fn root() -> JsonPath {
        JsonPath::default()
    }

    /// Parses a JSON pointer (`""` or `/a/b~1c`); every segment is read as a key, which
    /// [`JsonPath::resolve`] also accepts as an array index.
    pub fn from_pointer(pointer: &str) -> Option<JsonPath> {
        if pointer.is_empty() {
            return Some(JsonPath::root());
        }
        let rest = pointer.strip_prefix('/')?;
        let mut segments = Vec::new();
        for raw in rest.split('/') {
            let mut segment = String::with_capacity(raw.len());
            let mut chars = raw.chars();
            while let Some(c) = chars.next() {
                let decoded = if c != '~' {
                    c
                } else {
                    match chars.next() {
                        Some('0') => '~',
                        Some('1') => '/',
                        _ => return None,
                    }
                };
                segment.push(decoded);
            }
            segments.push(PathSegment::Key(segment));
        }
        Some(JsonPath(segments))
    }

    pub fn segments(&self) -> &[PathSegment] {
        &self.0
    }

    pub fn key(&self, key: &str) -> JsonPath {
        let mut path = self.clone();
        path.0.push(PathSegment::Key(key.to_owned()));
        path
    }

    pub fn index(&self, index: usize) -> JsonPath {
        let mut path = self.clone();
        path.0.push(PathSegment::Index(index));
        path
    }

    /// This path followed by `suffix`.
    pub fn join(&self, suffix: &JsonPath) -> JsonPath {
        let mut path = self.clone();
        path.0.extend(suffix.0.iter().cloned());
        path
    }

    /// The path of `self` relative to `prefix`, if `prefix` starts it.
    pub fn strip_prefix(&self, prefix: &JsonPath) -> Option<JsonPath> {
        self.0.strip_prefix(prefix.0.as_slice()).map(|rest| JsonPath(rest.to_vec()))
    }

    /// The value at this path under `document`.
    pub fn resolve<'a>(&self, document: &'a Value) -> Option<&'a Value> {
        self.0.iter().try_fold(document, |value, segment| match (value, segment) {
            (Value::Object(map), PathSegment::Key(key)) => map.get(key),
            (Value::Array(items), PathSegment::Index(i)) => items.get(*i),
            (Value::Array(items), PathSegment::Key(key)) => items.get(array_index(key)?),
            _ => None,
        })
    }
}

/// A location being walked: a base path plus borrowed steps, so descending allocates nothing;
/// it becomes a [`JsonPath`] only when something is reported there.
#[derive(Debug, Clone, Copy)]
pub(crate) enum At<'a> {
    Path(&'a JsonPath),
    Key(&'a At<'a>, &'a str),
    Index(&'a At<'a>, usize),
}

impl<'a> At<'a> {
    pub(crate) fn key<'b>(&'b self, key: &'b str) -> At<'b> {
        At::Key(self, key)
    }

    pub(crate) fn index(&self, index: usize) -> At<'_> {
        At::Index(self, index)
    }
}

impl From<At<'_>> for JsonPath {
    fn from(at: At<'_>) -> JsonPath {
        let mut steps = Vec::new();
        let mut cursor = at;
        let base = loop {
            match cursor {
                At::Path(base) => break base,
                At::Key(parent, key) => {
                    steps.push(PathSegment::Key(key.to_owned()));
                    cursor = *parent;
                }
                At::Index(parent, index) => {
                    steps.push(PathSegment::Index(index));
                    cursor = *parent;
                }
            }
        };
        let mut path = base.clone();
        path.0.extend(steps.into_iter().rev());
        path
    }
}

/// The path a value reader reports (such as a JSON error's), as a registry path.
impl From<&[Segment]> for JsonPath {
    fn from(segments: &[Segment]) -> JsonPath {
        let segment = |segment: &Segment| match segment {
            Segment::Index(i) => PathSegment::Index(*i),
            Segment::Key(key) => PathSegment::Key(key.to_string()),
        };
        JsonPath(segments.iter().map(segment).collect())
    }
}

/// An RFC 6901 array index: `0` or digits without a leading zero.
pub fn array_index(text: &str) -> Option<usize> {
    let canonical = text == "0" || (!text.starts_with('0') && text.bytes().all(|b| b.is_ascii_digit()));
    if canonical { text.parse().ok() } else { None }
}

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for segment in &self.0 {
            match segment {
                PathSegment::Index(i) => write!(f, "/{i}")?,
                PathSegment::Key(key) => write!(f, "/{}", key.replace('~', "~0").replace('/', "~1"))?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_round_trip_with_escapes() {
        let path = JsonPath::root().key("tools").index(3).key("a/b~c");
        assert_eq!(path.to_string(), "/tools/3/a~1b~0c");
        let parsed = JsonPath::from_pointer("/tools/3/a~1b~0c").expect("valid pointer");
        assert_eq!(parsed.to_string(), path.to_string());
        assert_eq!(JsonPath::from_pointer("tools"), None);
        assert_eq!(JsonPath::from_pointer("/a~2"), None);
    }

    #[test]
    fn resolves_keys_and_indices() {
        let doc = serde_json::json!({ "tools": [ { "name": "a" }, { "name": "b" } ] });
        let by_key = JsonPath::from_pointer("/tools/1/name").expect("valid pointer");
        assert_eq!(by_key.resolve(&doc), Some(&Value::from("b")));
        assert_eq!(JsonPath::root().key("tools").index(0).key("name").resolve(&doc), Some(&Value::from("a")));
        assert_eq!(JsonPath::from_pointer("/tools/01").and_then(|p| p.resolve(&doc).cloned()), None);
    }
}
