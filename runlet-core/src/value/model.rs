//! The `Value` tree of the portable domain: scalars, shared strings and bytes, and the two
//! composites (`List`, and `Object` whose keys are unique and sorted by raw UTF-8 bytes).

use std::fmt;
use std::sync::Arc;

use triomphe::ThinArc;

use super::error::ValueError;
use super::number::Number;
use crate::diag::codes;

/// The deepest nesting any value may have: `[]` has depth 1, `[[]]` depth 2, a scalar depth 0.
/// Every recursive walk over values (encoding, equality, formatting, conversion) therefore has a
/// bounded stack. Hosts may configure a lower structural depth; this is the hard ceiling.
pub const MAX_DEPTH: usize = 256;

/// A canonical Runlet value. Cloning is cheap: strings, bytes and composites are shared.
///
/// `==` on `Value` is *identity*: two values are equal exactly when their RCVE encodings are
/// equal, so `Int(1) != Number(1.0)`. The language's `==` operator, which compares numbers by
/// value, is [`super::equals`].
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Number(Number),
    String(Arc<str>),
    Bytes(Arc<[u8]>),
    List(List),
    /// An Object or a Map: both are string-keyed and share one representation and encoding.
    Object(Object),
}

/// The kind of a value, as diagnostics and conversion errors name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Null,
    Boolean,
    Integer,
    Number,
    String,
    Bytes,
    List,
    Object,
}

impl Kind {
    /// The kind's name as the spec writes it (`Integer`, `Object`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            Kind::Null => "Null",
            Kind::Boolean => "Boolean",
            Kind::Integer => "Integer",
            Kind::Number => "Number",
            Kind::String => "String",
            Kind::Bytes => "Bytes",
            Kind::List => "List",
            Kind::Object => "Object",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Value {
    pub fn kind(&self) -> Kind {
        match self {
            Value::Null => Kind::Null,
            Value::Bool(_) => Kind::Boolean,
            Value::Int(_) => Kind::Integer,
            Value::Number(_) => Kind::Number,
            Value::String(_) => Kind::String,
            Value::Bytes(_) => Kind::Bytes,
            Value::List(_) => Kind::List,
            Value::Object(_) => Kind::Object,
        }
    }

    /// Nesting depth: 0 for scalars, 1 + the deepest element for composites. O(1).
    pub fn depth(&self) -> usize {
        match self {
            Value::List(list) => list.depth(),
            Value::Object(object) => object.depth(),
            _ => 0,
        }
    }

    /// The value's weight: about the size of its canonical encoding in bytes (9 for a number,
    /// 5 plus the length for a string or bytes, 5 plus its entries' for a composite, counting
    /// each key), with shared parts counted as often as they occur. A composite keeps its
    /// weight, so this is O(1); the `value_bytes` limit caps it.
    pub fn weight(&self) -> u64 {
        match self {
            Value::Null | Value::Bool(_) => 1,
            Value::Int(_) | Value::Number(_) => 9,
            Value::String(text) => FRAME_WEIGHT.saturating_add(text.len() as u64),
            Value::Bytes(bytes) => FRAME_WEIGHT.saturating_add(bytes.len() as u64),
            Value::List(list) => list.weight(),
            Value::Object(object) => object.weight(),
        }
    }

    /// A String value (the text is already valid UTF-8 by construction of `str`).
    pub fn string(text: impl Into<Arc<str>>) -> Value {
        Value::String(text.into())
    }

    pub fn bytes(bytes: impl Into<Arc<[u8]>>) -> Value {
        Value::Bytes(bytes.into())
    }

    /// A Number value, or `None` for a non-finite `value`.
    pub fn number(value: f64) -> Option<Value> {
        Number::new(value).map(Value::Number)
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(text) => Some(text),
            _ => None,
        }
    }
}

impl From<bool> for Value {
    fn from(value: bool) -> Self {
        Value::Bool(value)
    }
}

impl From<i64> for Value {
    fn from(value: i64) -> Self {
        Value::Int(value)
    }
}

impl From<Number> for Value {
    fn from(value: Number) -> Self {
        Value::Number(value)
    }
}

impl From<&str> for Value {
    fn from(value: &str) -> Self {
        Value::String(value.into())
    }
}

impl From<String> for Value {
    fn from(value: String) -> Self {
        Value::String(value.into())
    }
}

impl From<List> for Value {
    fn from(value: List) -> Self {
        Value::List(value)
    }
}

impl From<Object> for Value {
    fn from(value: Object) -> Self {
        Value::Object(value)
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Number(n) => write!(f, "{n}f"),
            Value::String(s) => write!(f, "{s:?}"),
            Value::Bytes(b) => write!(f, "b\"{}\"", hex::encode(b)),
            Value::List(list) => fmt::Debug::fmt(list, f),
            Value::Object(object) => fmt::Debug::fmt(object, f),
        }
    }
}

/// What a composite keeps about itself, computed once when it is built: its depth and its
/// weight (see [`Value::weight`]), so neither is ever recomputed by walking it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Extent {
    depth: u32,
    weight: u64,
}

/// The weight a composite adds for itself, and each of its entries for its framing.
const FRAME_WEIGHT: u64 = 5;

impl Extent {
    /// The extent of a composite of `items` (their depths and weights) beside `keys` bytes of
    /// keys, or the error for crossing [`MAX_DEPTH`].
    fn of<'v>(items: impl Iterator<Item = &'v Value>, keys: u64) -> Result<Extent, ValueError> {
        let (mut inner, mut weight) = (0, FRAME_WEIGHT.saturating_add(keys));
        for item in items {
            inner = inner.max(item.depth());
            weight = weight.saturating_add(item.weight());
        }
        Ok(Extent { depth: composite_depth(inner)?, weight })
    }

    const EMPTY: Extent = Extent { depth: 1, weight: FRAME_WEIGHT };
}

/// What a key adds to its object's weight.
fn key_weight(key: &str) -> u64 {
    FRAME_WEIGHT.saturating_add(key.len() as u64)
}

/// The depth of a composite whose deepest element has depth `inner`, or the error for crossing
/// [`MAX_DEPTH`].
fn composite_depth(inner: usize) -> Result<u32, ValueError> {
    let depth = inner + 1;
    if depth > MAX_DEPTH {
        return Err(ValueError::new(
            codes::VALUE_TOO_DEEP,
            format!("a value would nest {depth} levels deep; values nest at most {MAX_DEPTH} levels"),
        )
        .with_detail("limit", "max_value_depth")
        .with_detail("current", depth as i64)
        .with_detail("cap", MAX_DEPTH as i64));
    }
    // MAX_DEPTH fits in u32, so this conversion cannot truncate.
    Ok(depth as u32)
}

/// An ordered, shared list of values. One allocation holds the extent and the elements, behind
/// a thin pointer, so reaching an element is a single indirection.
#[derive(Clone)]
pub struct List(ThinArc<Extent, Value>);

impl List {
    /// A list of `items`; fails only when the result would be deeper than [`MAX_DEPTH`].
    pub fn new(items: Vec<Value>) -> Result<List, ValueError> {
        let extent = Extent::of(items.iter(), 0)?;
        Ok(List(ThinArc::from_header_and_iter(extent, items.into_iter())))
    }

    pub fn empty() -> List {
        List(ThinArc::from_header_and_iter(Extent::EMPTY, std::iter::empty()))
    }

    /// The list's [`Value::weight`], kept since it was built.
    pub fn weight(&self) -> u64 {
        self.0.header.header.weight
    }

    pub fn items(&self) -> &[Value] {
        &self.0.slice
    }

    pub fn len(&self) -> usize {
        self.items().len()
    }

    pub fn is_empty(&self) -> bool {
        self.items().is_empty()
    }

    pub fn depth(&self) -> usize {
        self.0.header.header.depth as usize
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Value> {
        self.items().iter()
    }

    /// `self` followed by `other`. Concatenation cannot deepen a list, so it cannot fail.
    pub fn concat(&self, other: &List) -> List {
        let (mine, theirs) = (self.0.header.header, other.0.header.header);
        let extent = Extent {
            depth: mine.depth.max(theirs.depth),
            weight: mine.weight.saturating_add(theirs.weight).saturating_sub(FRAME_WEIGHT),
        };
        let items: Vec<Value> = self.iter().chain(other.iter()).cloned().collect();
        List(ThinArc::from_header_and_iter(extent, items.into_iter()))
    }
}

impl PartialEq for List {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.items(), other.items()) || self.items() == other.items()
    }
}

impl Eq for List {}

impl std::hash::Hash for List {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.items().hash(state);
    }
}

impl fmt::Debug for List {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a> IntoIterator for &'a List {
    type Item = &'a Value;
    type IntoIter = std::slice::Iter<'a, Value>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// A shared string-keyed collection (an Object or a Map) whose keys are unique and kept sorted
/// by their raw UTF-8 bytes, which is the order RCVE and presentation JSON need. Rust's `str`
/// ordering is exactly that byte order. Like [`List`], one allocation behind a thin pointer.
#[derive(Clone)]
pub struct Object(ThinArc<Extent, (Arc<str>, Value)>);

impl Object {
    /// An object of `pairs`. When a key repeats, the last pair wins, as for computed keys in
    /// object literals (spec §2.2). Fails only when the result would be deeper than
    /// [`MAX_DEPTH`].
    pub fn from_pairs(mut pairs: Vec<(Arc<str>, Value)>) -> Result<Object, ValueError> {
        // A stable sort keeps equal keys in source order; keeping the last of each run is
        // "last wins".
        pairs.sort_by(|a, b| a.0.cmp(&b.0));
        let mut unique: Vec<(Arc<str>, Value)> = Vec::with_capacity(pairs.len());
        for pair in pairs {
            match unique.last_mut() {
                Some(last) if last.0 == pair.0 => *last = pair,
                _ => unique.push(pair),
            }
        }
        Object::from_sorted_unique(unique)
    }

    /// An object of pairs the caller has already checked to be sorted with unique keys (the
    /// RCVE decoder and the JSON reader report violations with their own errors).
    pub(super) fn from_sorted_unique(entries: Vec<(Arc<str>, Value)>) -> Result<Object, ValueError> {
        let keys = entries.iter().map(|(key, _)| key_weight(key)).fold(0, u64::saturating_add);
        let extent = Extent::of(entries.iter().map(|(_, value)| value), keys)?;
        Ok(Object(ThinArc::from_header_and_iter(extent, entries.into_iter())))
    }

    pub fn empty() -> Object {
        Object(ThinArc::from_header_and_iter(Extent::EMPTY, std::iter::empty()))
    }

    /// The object's [`Value::weight`], kept since it was built.
    pub fn weight(&self) -> u64 {
        self.0.header.header.weight
    }

    /// The value under `key` (binary search over the sorted keys).
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.entries().binary_search_by(|(k, _)| (**k).cmp(key)).ok().map(|i| &self.entries()[i].1)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The entries in key order.
    pub fn entries(&self) -> &[(Arc<str>, Value)] {
        &self.0.slice
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries().iter().map(|(k, _)| &**k)
    }

    pub fn len(&self) -> usize {
        self.entries().len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries().is_empty()
    }

    pub fn depth(&self) -> usize {
        self.0.header.header.depth as usize
    }

    /// Shallow right-biased merge: every key of both sides, `other`'s value winning on
    /// collision (spec §2.4.1). A merge cannot deepen an object, so it cannot fail.
    pub fn merge(&self, other: &Object) -> Object {
        let (left, right) = (self.entries(), other.entries());
        let mut merged = Vec::with_capacity(left.len() + right.len());
        let (mut i, mut j) = (0, 0);
        while i < left.len() && j < right.len() {
            match left[i].0.cmp(&right[j].0) {
                std::cmp::Ordering::Less => {
                    merged.push(left[i].clone());
                    i += 1;
                }
                std::cmp::Ordering::Greater => {
                    merged.push(right[j].clone());
                    j += 1;
                }
                std::cmp::Ordering::Equal => {
                    merged.push(right[j].clone());
                    i += 1;
                    j += 1;
                }
            }
        }
        merged.extend_from_slice(&left[i..]);
        merged.extend_from_slice(&right[j..]);
        // Overwritten entries may have been the deepest, so the extent is taken from what is
        // kept; the depth cannot exceed either side's, so it is within the cap.
        let keys = merged.iter().map(|(key, _)| key_weight(key)).fold(0, u64::saturating_add);
        let mut extent = Extent { depth: 1, weight: FRAME_WEIGHT.saturating_add(keys) };
        for (_, value) in &merged {
            extent.depth = extent.depth.max(1 + value.depth() as u32);
            extent.weight = extent.weight.saturating_add(value.weight());
        }
        Object(ThinArc::from_header_and_iter(extent, merged.into_iter()))
    }
}

impl PartialEq for Object {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.entries(), other.entries()) || self.entries() == other.entries()
    }
}

impl Eq for Object {}

impl std::hash::Hash for Object {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.entries().hash(state);
    }
}

impl fmt::Debug for Object {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.entries().iter().map(|(k, v)| (k, v))).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(pairs: &[(&str, Value)]) -> Object {
        Object::from_pairs(pairs.iter().map(|(k, v)| (Arc::from(*k), v.clone())).collect()).expect("shallow")
    }

    #[test]
    fn keys_are_sorted_by_utf8_bytes_and_last_wins() {
        let o =
            object(&[("é", 1.into()), ("z", 2.into()), ("a", 3.into()), ("z", 4.into()), ("Z", 5.into())]);
        assert_eq!(o.keys().collect::<Vec<_>>(), ["Z", "a", "z", "é"]);
        assert_eq!(o.get("z"), Some(&Value::Int(4)));
        assert_eq!(o.get("missing"), None);
    }

    #[test]
    fn merge_is_right_biased_and_keeps_every_key() {
        let left = object(&[("a", 1.into()), ("b", 2.into())]);
        let right = object(&[("b", 20.into()), ("c", 30.into())]);
        assert_eq!(left.merge(&right), object(&[("a", 1.into()), ("b", 20.into()), ("c", 30.into())]));
        assert_eq!(Object::empty().merge(&Object::empty()).depth(), 1);
        let deep = object(&[("a", List::new(vec![List::empty().into()]).expect("shallow").into())]);
        assert_eq!(deep.depth(), 3);
        assert_eq!(deep.merge(&object(&[("a", 1.into())])).depth(), 1);
    }

    #[test]
    fn depth_is_tracked_and_capped() {
        let mut value = Value::Int(0);
        for expected in 1..=MAX_DEPTH {
            value = List::new(vec![value]).expect("within the cap").into();
            assert_eq!(value.depth(), expected);
        }
        let error = List::new(vec![value.clone()]).expect_err("one too deep");
        assert_eq!(error.code(), crate::diag::codes::VALUE_TOO_DEEP);
        let error = Object::from_pairs(vec![("k".into(), value)]).expect_err("one too deep");
        assert_eq!(error.code(), crate::diag::codes::VALUE_TOO_DEEP);
    }

    #[test]
    fn identity_equality_distinguishes_integer_and_number() {
        assert_ne!(Value::Int(1), Value::number(1.0).expect("finite"));
        assert_eq!(List::empty().concat(&List::empty()), List::empty());
    }
}
