//! The portable schema vocabulary of spec §3.1 as plain data: one node per [`Schema`], children
//! referred to by [`SchemaId`] into a [`SchemaArena`](super::SchemaArena).

use std::sync::Arc;

use crate::value::{Number, Sensitivity};

/// An interned schema node. Equal ids mean structurally equal schemas within one arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SchemaId(pub(super) u32);

/// A named definition that [`SchemaKind::Ref`] nodes point at: the only way a schema can refer
/// back to itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DefId(pub(super) u32);

/// One schema node: its kind plus the sensitivity label declared at this path (spec §6.2; the
/// label of a value path is the strongest label on it or any ancestor).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Schema {
    pub kind: SchemaKind,
    pub sensitivity: Sensitivity,
}

impl Schema {
    pub fn public(kind: SchemaKind) -> Schema {
        Schema { kind, sensitivity: Sensitivity::Public }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SchemaKind {
    Any,
    Null,
    /// `Some(b)` is the constant `b`.
    Boolean(Option<bool>),
    Integer(IntegerRange),
    Number(NumberRange),
    String(StringSchema),
    Bytes,
    List(ListSchema),
    Object(ObjectSchema),
    Map(SchemaId),
    Union(UnionSchema),
    /// A use of a definition whose body may (indirectly) contain this node.
    Ref(DefId),
}

/// Inclusive integer bounds; `min == max` is a constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct IntegerRange {
    pub min: Option<i64>,
    pub max: Option<i64>,
}

impl IntegerRange {
    pub fn constant(self) -> Option<i64> {
        self.min.filter(|&min| Some(min) == self.max)
    }
}

/// Inclusive number bounds; `min == max` is a constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct NumberRange {
    pub min: Option<Number>,
    pub max: Option<Number>,
}

impl NumberRange {
    pub fn constant(self) -> Option<Number> {
        self.min.filter(|&min| Some(min) == self.max)
    }
}

/// Inclusive length bounds of strings and lists; a minimum of zero is stored as `None`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct LengthRange {
    pub min: Option<u64>,
    pub max: Option<u64>,
}

impl LengthRange {
    pub fn new(min: Option<u64>, max: Option<u64>) -> LengthRange {
        LengthRange { min: min.filter(|&m| m > 0), max }
    }

    pub fn contains(self, length: u64) -> bool {
        self.min.is_none_or(|m| length >= m) && self.max.is_none_or(|m| length <= m)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct StringSchema {
    pub format: Option<Arc<str>>,
    /// The allowed values, sorted and distinct; one value is a constant.
    pub values: Option<Arc<[Arc<str>]>>,
    pub length: LengthRange,
}

impl StringSchema {
    pub fn constant(&self) -> Option<&str> {
        match self.values.as_deref() {
            Some([only]) => Some(only),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ListSchema {
    pub items: SchemaId,
    pub length: LengthRange,
}

/// An object with named properties, sorted by name. `additional` is the schema of properties not
/// named (`None`: no other property is allowed).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ObjectSchema {
    pub properties: Arc<[Property]>,
    pub additional: Option<SchemaId>,
}

impl ObjectSchema {
    pub fn property(&self, name: &str) -> Option<&Property> {
        self.properties.binary_search_by(|p| (*p.name).cmp(name)).ok().map(|i| &self.properties[i])
    }
}

/// A named property. `deprecated` and `aliases` drive diagnostics (spec §3.4); free-text
/// documentation is kept per tool, outside the interned node (see `ToolDescriptor::docs`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Property {
    pub name: Arc<str>,
    pub schema: SchemaId,
    pub required: bool,
    pub deprecated: bool,
    /// Other names the property is known by, sorted; only used to suggest candidates.
    pub aliases: Arc<[Arc<str>]>,
}

impl Property {
    pub fn new(name: impl Into<Arc<str>>, schema: SchemaId, required: bool) -> Property {
        Property { name: name.into(), schema, required, deprecated: false, aliases: Arc::from([]) }
    }
}

/// Two or more variants in canonical order, none of them a union or `Any`. `discriminator`
/// names a property that every variant requires with a distinct constant value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UnionSchema {
    pub variants: Arc<[SchemaId]>,
    pub discriminator: Option<Arc<str>>,
}

/// A constant a discriminator property can take.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Constant {
    Null,
    Boolean(bool),
    Integer(i64),
    Number(Number),
    String(Arc<str>),
}

impl SchemaKind {
    /// The single value this schema admits, if it is a constant.
    pub fn constant(&self) -> Option<Constant> {
        match self {
            SchemaKind::Null => Some(Constant::Null),
            SchemaKind::Boolean(value) => value.map(Constant::Boolean),
            SchemaKind::Integer(range) => range.constant().map(Constant::Integer),
            SchemaKind::Number(range) => range.constant().map(Constant::Number),
            SchemaKind::String(string) => string.constant().map(|s| Constant::String(s.into())),
            _ => None,
        }
    }
}
