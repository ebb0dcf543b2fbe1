//! The schema arena: hash-consed, normalized nodes with ids, the definitions `Ref` nodes point
//! at, and layering on a frozen base so later stages add schemas without copying a registry's.

use std::collections::HashMap;
use std::sync::Arc;

use super::fingerprint::{Fingerprint, fingerprint};
use super::model::{DefId, LengthRange, ObjectSchema, Property, Schema, SchemaId, SchemaKind};
use crate::value::Sensitivity;

/// Interned schemas. Equal ids are equal schemas; union variants are ordered by fingerprint, so the
/// same schemas built in any order get the same ids and the same canonical form.
#[derive(Debug, Default)]
pub struct SchemaArena {
    base: Option<Arc<SchemaArena>>,
    first_schema: u32,
    first_def: u32,
    nodes: Vec<Node>,
    /// Interned nodes by value; a fixed-seed fast hash (the map is never iterated).
    index: HashMap<Schema, SchemaId, foldhash::fast::FixedState>,
    defs: Vec<Definition>,
}

#[derive(Debug)]
struct Node {
    schema: Schema,
    fingerprint: Fingerprint,
}

/// A definition: its registry-unique key (such as `crm.tree/outputSchema#/$defs/Node`), the
/// short name shown to people (`Node`), and its body, set once the body has been imported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    pub key: Arc<str>,
    pub name: Arc<str>,
    pub body: Option<SchemaId>,
}

impl SchemaArena {
    pub fn new() -> SchemaArena {
        SchemaArena::default()
    }

    /// An empty arena whose ids continue after `base`'s; every schema of `base` is visible and is
    /// reused when an equal one is interned.
    pub fn layered_on(base: Arc<SchemaArena>) -> SchemaArena {
        SchemaArena {
            first_schema: base.schema_count(),
            first_def: base.def_count(),
            base: Some(base),
            ..SchemaArena::default()
        }
    }

    pub(in crate::schema) fn schema_count(&self) -> u32 {
        self.first_schema + self.nodes.len() as u32
    }

    fn def_count(&self) -> u32 {
        self.first_def + self.defs.len() as u32
    }

    fn node(&self, id: SchemaId) -> &Node {
        match (id.0.checked_sub(self.first_schema), &self.base) {
            (Some(local), _) => &self.nodes[local as usize],
            (None, Some(base)) => base.node(id),
            (None, None) => unreachable!("schema ids start at zero in an arena without a base"),
        }
    }

    pub fn get(&self, id: SchemaId) -> &Schema {
        &self.node(id).schema
    }

    pub fn kind(&self, id: SchemaId) -> &SchemaKind {
        &self.node(id).schema.kind
    }

    /// A digest of the node's structure, equal for equal schemas in any arena (definitions are
    /// identified by key). Canonical orders sort by it.
    pub fn fingerprint(&self, id: SchemaId) -> Fingerprint {
        self.node(id).fingerprint
    }

    pub fn definition(&self, def: DefId) -> &Definition {
        match (def.0.checked_sub(self.first_def), &self.base) {
            (Some(local), _) => &self.defs[local as usize],
            (None, Some(base)) => base.definition(def),
            (None, None) => unreachable!("definition ids start at zero in an arena without a base"),
        }
    }

    /// Follows `Ref` nodes to the schema they stand for. A definition whose body is not set yet
    /// (it is being imported) resolves to its `Ref`.
    pub fn resolve(&self, mut id: SchemaId) -> SchemaId {
        for _ in 0..=self.def_count() {
            match self.kind(id) {
                SchemaKind::Ref(def) => match self.definition(*def).body {
                    Some(body) => id = body,
                    None => return id,
                },
                _ => return id,
            }
        }
        id
    }

    /// Reserves a definition; its body is set later with [`SchemaArena::set_body`].
    pub fn define(&mut self, key: impl Into<Arc<str>>, name: impl Into<Arc<str>>) -> DefId {
        let def = DefId(self.def_count());
        self.defs.push(Definition { key: key.into(), name: name.into(), body: None });
        def
    }

    /// Sets the body of a definition of this layer; definitions of a base are frozen.
    pub fn set_body(&mut self, def: DefId, body: SchemaId) {
        if let Some(local) = def.0.checked_sub(self.first_def) {
            self.defs[local as usize].body = Some(body);
        }
    }

    pub fn any(&mut self) -> SchemaId {
        self.intern(Schema::public(SchemaKind::Any))
    }

    /// The same schema with at least `sensitivity` (for a union: every variant with at least it).
    pub fn with_sensitivity(&mut self, id: SchemaId, sensitivity: Sensitivity) -> SchemaId {
        let schema = self.get(id);
        if schema.sensitivity >= sensitivity {
            return id;
        }
        let kind = schema.kind.clone();
        self.intern(Schema { kind, sensitivity })
    }

    /// Interns `schema` in normal form: sorted and distinct string values and properties,
    /// zero minimum lengths dropped, a property-less object with `additional` as a map, unions
    /// flattened, deduplicated and ordered (without a variant cap: see [`SchemaArena::union`]).
    pub fn intern(&mut self, schema: Schema) -> SchemaId {
        let Schema { kind, sensitivity } = schema;
        let kind = match kind {
            SchemaKind::String(mut string) => {
                if let Some(values) = &string.values {
                    let mut values = values.to_vec();
                    values.sort();
                    values.dedup();
                    string.values = Some(values.into());
                }
                string.length = LengthRange::new(string.length.min, string.length.max);
                SchemaKind::String(string)
            }
            SchemaKind::List(mut list) => {
                list.length = LengthRange::new(list.length.min, list.length.max);
                SchemaKind::List(list)
            }
            SchemaKind::Object(object) => normal_object(object),
            SchemaKind::Union(union) => {
                // A union's label applies to each variant; the union node itself stays public.
                let variants: Vec<SchemaId> =
                    union.variants.iter().map(|&v| self.with_sensitivity(v, sensitivity)).collect();
                return self.exact_union(&variants, union.discriminator.as_deref());
            }
            other => other,
        };
        self.insert(Schema { kind, sensitivity })
    }

    fn lookup(&self, schema: &Schema) -> Option<SchemaId> {
        self.index.get(schema).copied().or_else(|| self.base.as_ref()?.lookup(schema))
    }

    /// Adds an already normal node unless an equal one exists.
    pub(super) fn insert(&mut self, schema: Schema) -> SchemaId {
        if let Some(id) = self.lookup(&schema) {
            return id;
        }
        let fingerprint =
            fingerprint(&schema, |child| self.fingerprint(child), |def| self.definition(def).key.clone());
        let id = SchemaId(self.schema_count());
        self.nodes.push(Node { schema: schema.clone(), fingerprint });
        self.index.insert(schema, id);
        id
    }
}

fn normal_object(object: ObjectSchema) -> SchemaKind {
    let mut properties: Vec<Property> = object.properties.to_vec();
    properties.sort_by(|a, b| a.name.cmp(&b.name));
    properties.dedup_by(|later, earlier| later.name == earlier.name);
    for property in &mut properties {
        if !property.aliases.is_sorted() || property.aliases.windows(2).any(|w| w[0] == w[1]) {
            let mut aliases = property.aliases.to_vec();
            aliases.sort();
            aliases.dedup();
            property.aliases = aliases.into();
        }
    }
    match (properties.is_empty(), object.additional) {
        (true, Some(values)) => SchemaKind::Map(values),
        _ => {
            SchemaKind::Object(ObjectSchema { properties: properties.into(), additional: object.additional })
        }
    }
}
