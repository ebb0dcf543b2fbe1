//! The analyzer's view of schemas: `Ty` (a schema, or `Never` for values that are never
//! produced), the layered schema arena analysis builds in, and the queries inference needs.

use std::sync::Arc;

use crate::schema::{
    IntegerRange, LengthRange, ListSchema, NumberRange, ObjectSchema, PrecisionLoss, Property, Schema,
    SchemaArena, SchemaId, SchemaKind, StringSchema,
};

use crate::registry::Registry;
use crate::value::{Sensitivity, Value};

use super::FastMap;

/// The type of an expression: a schema, or `Never` for an expression that never produces a
/// value (`fail`, spec §2.7.3), which unifies with everything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ty {
    Never,
    Schema(SchemaId),
}

/// The longest schema text a diagnostic message quotes before eliding the rest.
const MAX_DISPLAY: usize = 160;

/// The schemas of one analysis: the registry's arena with analysis schemas layered on it.
#[derive(Debug)]
pub(crate) struct Types {
    arena: SchemaArena,
    max_variants: usize,
    pub any: SchemaId,
    pub null: SchemaId,
    pub boolean: SchemaId,
    pub integer: SchemaId,
    pub number: SchemaId,
    pub string: SchemaId,
    pub bytes: SchemaId,
    pub any_map: SchemaId,
    /// `List<Any>` of length at most zero: the schema of `[]`, whose items are never read.
    pub empty_list: SchemaId,
    deep_sensitivity: FastMap<SchemaId, Sensitivity>,
}

/// A declared property name with its aliases (for candidate searches).
pub(crate) type NamedProperty = (Arc<str>, Arc<[Arc<str>]>);

/// What projecting a property name gives on one schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PropertyLookup {
    /// A declared property (or the values of a map, or `Any`).
    Found { schema: SchemaId, required: bool },
    /// Not declared, but the object allows other properties of this schema.
    Additional(SchemaId),
    /// Not declared by an object that allows no other property.
    Missing,
    /// The schema is not an object, map or `Any`.
    NotAnObject,
}

impl Types {
    pub fn new(registry: &Registry, max_variants: usize) -> Types {
        let mut arena = SchemaArena::layered_on(registry.schemas().clone());
        let mut kind = |kind: SchemaKind| arena.intern(Schema::public(kind));
        let any = kind(SchemaKind::Any);
        let null = kind(SchemaKind::Null);
        let boolean = kind(SchemaKind::Boolean(None));
        let integer = kind(SchemaKind::Integer(IntegerRange::default()));
        let number = kind(SchemaKind::Number(NumberRange::default()));
        let string = kind(SchemaKind::String(StringSchema::default()));
        let bytes = kind(SchemaKind::Bytes);
        let any_map = kind(SchemaKind::Map(any));
        let empty_list =
            kind(SchemaKind::List(ListSchema { items: any, length: LengthRange::new(None, Some(0)) }));
        Types {
            arena,
            max_variants,
            any,
            null,
            boolean,
            integer,
            number,
            string,
            bytes,
            any_map,
            empty_list,
            deep_sensitivity: FastMap::default(),
        }
    }

    pub fn arena(&self) -> &SchemaArena {
        &self.arena
    }

    pub fn into_arena(self) -> SchemaArena {
        self.arena
    }

    /// Reserves a recursive definition in the analysis layer; see [`SchemaArena::define`].
    pub fn define(&mut self, key: &str, name: &str) -> crate::schema::DefId {
        self.arena.define(key, name)
    }

    pub fn set_body(&mut self, def: crate::schema::DefId, body: SchemaId) {
        self.arena.set_body(def, body);
    }

    pub fn intern(&mut self, kind: SchemaKind) -> SchemaId {
        self.arena.intern(Schema::public(kind))
    }

    /// The kind of `id` with references followed.
    pub fn kind(&self, id: SchemaId) -> &SchemaKind {
        self.arena.kind(self.arena.resolve(id))
    }

    pub fn resolve(&self, id: SchemaId) -> SchemaId {
        self.arena.resolve(id)
    }

    /// The schema itself, or each variant of a union (references followed).
    pub fn variants(&self, id: SchemaId) -> Vec<SchemaId> {
        let id = self.resolve(id);
        match self.arena.kind(id) {
            SchemaKind::Union(union) => union.variants.iter().map(|&v| self.resolve(v)).collect(),
            _ => vec![id],
        }
    }

    pub fn is_any(&self, id: SchemaId) -> bool {
        matches!(self.kind(id), SchemaKind::Any)
    }

    /// Whether null is one of the values `id` admits.
    pub fn admits_null(&self, id: SchemaId) -> bool {
        self.variants(id).iter().any(|&v| matches!(self.arena.kind(v), SchemaKind::Null | SchemaKind::Any))
    }

    /// The union of `types` (`Never` when all are `Never`), widened to `Any` past the variant
    /// limit; the loss is returned for a diagnostic.
    pub fn union(&mut self, types: &[Ty]) -> (Ty, Option<PrecisionLoss>) {
        let schemas: Vec<SchemaId> = types
            .iter()
            .filter_map(|t| match t {
                Ty::Schema(s) => Some(*s),
                Ty::Never => None,
            })
            .collect();
        match schemas.as_slice() {
            [] => return (Ty::Never, None),
            [first, rest @ ..] if rest.iter().all(|s| s == first) => return (Ty::Schema(*first), None),
            _ => {}
        }
        let normalized = self.arena.union(&schemas, self.max_variants);
        (Ty::Schema(normalized.schema), normalized.widened)
    }

    /// `id` without its Null variant (`Never` when it is only Null).
    pub fn without_null(&mut self, id: SchemaId) -> Ty {
        if !self.admits_null(id) || self.is_any(id) {
            return Ty::Schema(id);
        }
        let rest: Vec<Ty> = self
            .variants(id)
            .into_iter()
            .filter(|&v| !matches!(self.arena.kind(v), SchemaKind::Null))
            .map(Ty::Schema)
            .collect();
        self.union(&rest).0
    }

    pub fn list_of(&mut self, items: SchemaId) -> SchemaId {
        self.intern(SchemaKind::List(ListSchema { items, length: LengthRange::default() }))
    }

    pub fn map_of(&mut self, values: SchemaId) -> SchemaId {
        self.intern(SchemaKind::Map(values))
    }

    /// A closed object with `properties` (a repeated name keeps its last entry).
    pub fn object(&mut self, mut properties: Vec<Property>) -> SchemaId {
        properties.reverse();
        properties.sort_by(|a, b| a.name.cmp(&b.name));
        properties.dedup_by(|later, earlier| later.name == earlier.name);
        self.intern(SchemaKind::Object(ObjectSchema { properties: properties.into(), additional: None }))
    }

    /// The schema of a host input's value (exact kinds; see `SchemaArena::infer`).
    pub fn infer(&mut self, value: &Value) -> SchemaId {
        self.arena.infer(value, self.max_variants).schema
    }

    /// The schema of a constant as inference uses it: its kind, not the constant itself, so that
    /// `n = 0` is an Integer (constants stay in the expression for folding and validation).
    pub fn of_value(&mut self, value: &Value) -> SchemaId {
        match value {
            Value::Null => self.null,
            Value::Bool(_) => self.boolean,
            Value::Int(_) => self.integer,
            Value::Number(_) => self.number,
            Value::String(_) => self.string,
            Value::Bytes(_) => self.bytes,
            Value::List(list) if list.is_empty() => self.empty_list,
            Value::List(list) => {
                let items: Vec<Ty> = list.iter().map(|item| Ty::Schema(self.of_value(item))).collect();
                match self.union(&items).0 {
                    Ty::Schema(items) => self.list_of(items),
                    Ty::Never => self.empty_list,
                }
            }
            Value::Object(object) => {
                let properties = object
                    .entries()
                    .iter()
                    .map(|(key, item)| Property::new(key.clone(), self.of_value(item), true))
                    .collect();
                self.object(properties)
            }
        }
    }

    /// What `id.name` denotes on one non-union schema.
    pub fn property(&self, id: SchemaId, name: &str) -> PropertyLookup {
        match self.kind(id) {
            SchemaKind::Any => PropertyLookup::Found { schema: self.any, required: false },
            SchemaKind::Map(values) => PropertyLookup::Found { schema: *values, required: false },
            SchemaKind::Object(object) => match (object.property(name), object.additional) {
                (Some(p), _) => PropertyLookup::Found { schema: p.schema, required: p.required },
                (None, Some(additional)) => PropertyLookup::Additional(additional),
                (None, None) => PropertyLookup::Missing,
            },
            _ => PropertyLookup::NotAnObject,
        }
    }

    /// The declared property names of every object variant of `id`, with their aliases.
    pub fn property_names(&self, id: SchemaId) -> Vec<NamedProperty> {
        let mut names: Vec<NamedProperty> = Vec::new();
        for variant in self.variants(id) {
            if let SchemaKind::Object(object) = self.arena.kind(variant) {
                for p in object.properties.iter() {
                    if !names.iter().any(|(n, _)| *n == p.name) {
                        names.push((p.name.clone(), p.aliases.clone()));
                    }
                }
            }
        }
        names.sort();
        names
    }

    /// The schema in type notation for messages, elided past a readable length.
    pub fn display(&self, id: SchemaId) -> String {
        let text = self.arena.display(id).to_string();
        elide(text)
    }

    /// A one-word description of the schema's kind (`an object`, `a list`, `a number`, ...).
    pub fn kind_name(&self, id: SchemaId) -> &'static str {
        match self.kind(id) {
            SchemaKind::Any => "any value",
            SchemaKind::Null => "null",
            SchemaKind::Boolean(_) => "a Boolean",
            SchemaKind::Integer(_) => "an Integer",
            SchemaKind::Number(_) => "a Number",
            SchemaKind::String(_) => "a String",
            SchemaKind::Bytes => "Bytes",
            SchemaKind::List(_) => "a list",
            SchemaKind::Object(_) => "an object",
            SchemaKind::Map(_) => "a map",
            SchemaKind::Union(_) => "one of several kinds",
            SchemaKind::Ref(_) => "a recursive value",
        }
    }

    /// The node's own label (sensitivity on the schema's root, not below it).
    pub fn label(&self, id: SchemaId) -> Sensitivity {
        let resolved = self.resolve(id);
        self.arena.get(id).sensitivity.max(self.arena.get(resolved).sensitivity)
    }

    /// The strongest label anywhere in the schema.
    pub fn deep_sensitivity(&mut self, id: SchemaId) -> Sensitivity {
        if let Some(&known) = self.deep_sensitivity.get(&id) {
            return known;
        }
        // Provisional entry: a recursive schema revisiting itself adds nothing new.
        self.deep_sensitivity.insert(id, self.arena.get(id).sensitivity);
        let children: Vec<SchemaId> = match self.arena.kind(id) {
            SchemaKind::List(list) => vec![list.items],
            SchemaKind::Map(values) => vec![*values],
            SchemaKind::Object(object) => {
                object.properties.iter().map(|p| p.schema).chain(object.additional).collect()
            }
            SchemaKind::Union(union) => union.variants.to_vec(),
            SchemaKind::Ref(def) => self.arena.definition(*def).body.into_iter().collect(),
            _ => Vec::new(),
        };
        let mut level = self.arena.get(id).sensitivity;
        for child in children {
            level = level.max(self.deep_sensitivity(child));
        }
        self.deep_sensitivity.insert(id, level);
        level
    }
}

/// `text`, cut at a character boundary past [`MAX_DISPLAY`] bytes with `…` appended.
fn elide(mut text: String) -> String {
    if text.len() <= MAX_DISPLAY {
        return text;
    }
    let mut cut = MAX_DISPLAY;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
    text.push('…');
    text
}
