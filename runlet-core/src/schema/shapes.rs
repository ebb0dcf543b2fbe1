//! The runtime face of schemas: maps [`SchemaArena`] nodes onto a `value::Shapes` arena, so that
//! literal folding at compile time and Convert nodes at run time use the one `value::convert`.

use std::collections::HashMap;

use crate::value::{ObjectShape, PropertyShape, Shape, ShapeId, Shapes};

use super::arena::SchemaArena;
use super::model::{SchemaId, SchemaKind};

/// Builds the shapes of schemas on demand, each schema once. Constraints that are not kinds
/// (integer bounds, string formats and enumerations, lengths, constants) are not part of a
/// shape: conversions work on kinds, and validation (`schema::validate`) checks the rest.
///
/// A map remembers the shapes it built by schema id, so every call must pass the same arena or
/// one layered on it (ids of a layer never change meaning as the layer grows).
#[derive(Debug, Default)]
pub struct ShapeMap {
    shapes: Shapes,
    mapped: HashMap<SchemaId, ShapeId>,
}

impl ShapeMap {
    pub fn new() -> ShapeMap {
        ShapeMap::default()
    }

    /// The shape of `schema` in `arena`. Every schema node gets its shape node reserved before
    /// its children are mapped, so recursive definitions map onto cyclic shapes.
    pub fn shape(&mut self, arena: &SchemaArena, schema: SchemaId) -> ShapeId {
        if let Some(&shape) = self.mapped.get(&schema) {
            return shape;
        }
        let id = self.shapes.declare();
        self.mapped.insert(schema, id);
        let node = arena.get(schema);
        let sensitivity = node.sensitivity;
        let shape = match &node.kind {
            SchemaKind::Any => Shape::Any,
            SchemaKind::Null => Shape::Null,
            SchemaKind::Boolean(_) => Shape::Boolean,
            SchemaKind::Integer(_) => Shape::Integer,
            SchemaKind::Number(_) => Shape::Number,
            SchemaKind::String(_) => Shape::String,
            SchemaKind::Bytes => Shape::Bytes,
            SchemaKind::List(list) => Shape::List(self.shape(arena, list.items)),
            SchemaKind::Map(values) => Shape::Map(self.shape(arena, *values)),
            SchemaKind::Object(object) => {
                let properties = object
                    .properties
                    .iter()
                    .map(|p| PropertyShape {
                        name: p.name.clone(),
                        shape: self.shape(arena, p.schema),
                        required: p.required,
                    })
                    .collect();
                let additional = object.additional.map(|a| self.shape(arena, a));
                Shape::Object(ObjectShape::new(properties, additional))
            }
            SchemaKind::Union(union) => {
                Shape::Union(union.variants.iter().map(|&v| self.shape(arena, v)).collect())
            }
            SchemaKind::Ref(def) => match arena.definition(*def).body {
                Some(body) => {
                    let body = self.shape(arena, body);
                    Shape::Union(vec![body])
                }
                None => Shape::Any,
            },
        };
        self.shapes.define(id, shape, sensitivity);
        id
    }

    /// The shapes built so far; ids returned by [`ShapeMap::shape`] index it.
    pub fn shapes(&self) -> &Shapes {
        &self.shapes
    }

    pub fn into_shapes(self) -> Shapes {
        self.shapes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{ListSchema, ObjectSchema, Property, Schema};
    use crate::value::{ConversionLimits, Labels, Rank, Value, convert};

    #[test]
    fn objects_lists_and_unions_map_to_shapes_that_convert() {
        let mut arena = SchemaArena::new();
        let number = arena.intern(Schema::public(SchemaKind::Number(Default::default())));
        let null = arena.intern(Schema::public(SchemaKind::Null));
        let optional_number = arena.union(&[number, null], 8).schema;
        let list = arena.intern(Schema::public(SchemaKind::List(ListSchema {
            items: number,
            length: Default::default(),
        })));
        let object = arena.intern(Schema::public(SchemaKind::Object(ObjectSchema {
            properties: vec![Property::new("xs", list, true), Property::new("n", optional_number, false)]
                .into(),
            additional: None,
        })));
        let mut map = ShapeMap::new();
        let target = map.shape(&arena, object);
        assert_eq!(map.shape(&arena, object), target, "each schema maps once");
        let value = crate::value::parse_json(r#"{"xs": [1, 2.5], "n": null}"#).expect("json");
        let converted =
            convert(&value, &Labels::public(), target, map.shapes(), &ConversionLimits::default())
                .expect("converts");
        assert_eq!(converted.rank, Rank::Structural);
        assert_eq!(
            converted.value,
            crate::value::parse_json(r#"{"xs": [1.0, 2.5], "n": null}"#).expect("json")
        );
        let wrong = Value::from("x");
        assert!(
            convert(&wrong, &Labels::public(), target, map.shapes(), &ConversionLimits::default()).is_err()
        );
    }

    #[test]
    fn recursive_definitions_map_to_cyclic_shapes() {
        let mut arena = SchemaArena::new();
        let def = arena.define("test/Node", "Node");
        let node_ref = arena.intern(Schema::public(SchemaKind::Ref(def)));
        let children = arena.intern(Schema::public(SchemaKind::List(ListSchema {
            items: node_ref,
            length: Default::default(),
        })));
        let body = arena.intern(Schema::public(SchemaKind::Object(ObjectSchema {
            properties: vec![Property::new("children", children, true)].into(),
            additional: None,
        })));
        arena.set_body(def, body);
        let mut map = ShapeMap::new();
        let target = map.shape(&arena, node_ref);
        let value = crate::value::parse_json(r#"{"children": [{"children": []}]}"#).expect("json");
        let converted =
            convert(&value, &Labels::public(), target, map.shapes(), &ConversionLimits::default())
                .expect("converts");
        assert_eq!(converted.value, value);
        let bad = crate::value::parse_json(r#"{"children": [{"kids": []}]}"#).expect("json");
        assert!(
            convert(&bad, &Labels::public(), target, map.shapes(), &ConversionLimits::default()).is_err()
        );
    }
}
