//! The schema of a value a host supplies without declaring one (`--inputs` without an `inputs`
//! schema): exact kinds, closed objects with every property required, lists over element unions.

use crate::value::{Segment, Value};

use super::arena::SchemaArena;
use super::model::{
    IntegerRange, LengthRange, ListSchema, NumberRange, ObjectSchema, Property, Schema, SchemaId, SchemaKind,
    StringSchema,
};
use super::union::PrecisionLoss;

/// A list whose elements had more distinct schemas than the variant cap: its element schema was
/// widened to `Any`. `path` leads to the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InferenceLoss {
    pub path: Vec<Segment>,
    pub loss: PrecisionLoss,
}

/// An inferred schema and where it lost precision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inferred {
    pub schema: SchemaId,
    pub losses: Vec<InferenceLoss>,
}

impl SchemaArena {
    /// The schema of `value`: `Null`, `Boolean`, `Integer`, `Number`, `String` and `Bytes` for
    /// scalars (not their constants), a closed object requiring each of its properties, and a
    /// list over the union of its elements' schemas (`Any` for an empty list). Values are at
    /// most `crate::value::MAX_DEPTH` deep, which bounds the recursion.
    pub fn infer(&mut self, value: &Value, max_union_variants: usize) -> Inferred {
        let mut losses = Vec::new();
        let mut path = Vec::new();
        let schema = self.infer_at(value, max_union_variants, &mut path, &mut losses);
        Inferred { schema, losses }
    }

    fn infer_at(
        &mut self,
        value: &Value,
        max_union_variants: usize,
        path: &mut Vec<Segment>,
        losses: &mut Vec<InferenceLoss>,
    ) -> SchemaId {
        let kind = match value {
            Value::Null => SchemaKind::Null,
            Value::Bool(_) => SchemaKind::Boolean(None),
            Value::Int(_) => SchemaKind::Integer(IntegerRange::default()),
            Value::Number(_) => SchemaKind::Number(NumberRange::default()),
            Value::String(_) => SchemaKind::String(StringSchema::default()),
            Value::Bytes(_) => SchemaKind::Bytes,
            Value::List(list) => {
                let mut elements = Vec::with_capacity(list.len());
                for (i, item) in list.iter().enumerate() {
                    path.push(Segment::Index(i));
                    elements.push(self.infer_at(item, max_union_variants, path, losses));
                    path.pop();
                }
                let items = self.union(&elements, max_union_variants);
                if let Some(loss) = items.widened {
                    losses.push(InferenceLoss { path: path.clone(), loss });
                }
                SchemaKind::List(ListSchema { items: items.schema, length: LengthRange::default() })
            }
            Value::Object(object) => {
                let mut properties = Vec::with_capacity(object.len());
                for (key, item) in object.entries() {
                    path.push(Segment::Key(key.clone()));
                    let schema = self.infer_at(item, max_union_variants, path, losses);
                    path.pop();
                    properties.push(Property::new(key.clone(), schema, true));
                }
                SchemaKind::Object(ObjectSchema { properties: properties.into(), additional: None })
            }
        };
        self.intern(Schema::public(kind))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::parse_json;

    fn inferred(json: &str, limit: usize) -> (String, Vec<InferenceLoss>) {
        let value = parse_json(json).expect("valid JSON");
        let mut arena = SchemaArena::new();
        let Inferred { schema, losses } = arena.infer(&value, limit);
        (arena.display(schema).to_string(), losses)
    }

    #[test]
    fn infers_exact_closed_schemas() {
        let (schema, losses) = inferred(
            r#"{"id": "c-42", "age": 7, "score": 0.5, "tags": ["a", 1, "b"], "none": [], "ok": true, "x": null}"#,
            8,
        );
        assert_eq!(
            schema,
            "{ age: Integer, id: String, none: List<Any>, ok: Boolean, score: Number, tags: List<Integer | String>, x: Null }"
        );
        assert!(losses.is_empty());
    }

    #[test]
    fn wide_element_unions_are_reported() {
        let (schema, losses) = inferred(r#"{"rows": [1, "a", true, null, [1]]}"#, 3);
        assert_eq!(schema, "{ rows: List<Any> }");
        assert_eq!(
            losses,
            vec![InferenceLoss {
                path: vec![Segment::Key("rows".into())],
                loss: PrecisionLoss { variants: 5, limit: 3 }
            }]
        );
    }
}
