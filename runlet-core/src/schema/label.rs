//! Sensitivity labels from schemas (spec §6.2): which paths of a validated value a schema's
//! `x-runlet-sensitivity` annotations label, and the strongest label a schema can give anything.

use std::collections::BTreeSet;

use super::arena::SchemaArena;
use super::model::{SchemaId, SchemaKind};
use super::validate::validate;
use crate::value::{Labels, Segment, Sensitivity, Value};

/// The labels `schema` gives the paths of `value` (a value that validates against it). A path's
/// label is the strongest on it or any ancestor; a union labels the value as every variant that
/// accepts it does, or with its strongest variant's label when none does.
pub fn labels_of(arena: &SchemaArena, schema: SchemaId, value: &Value) -> Labels {
    let id = arena.resolve(schema);
    let node = arena.get(id);
    let level = node.sensitivity;
    match (&node.kind, value) {
        (SchemaKind::List(list), Value::List(items)) => Labels::composite(
            level,
            items.iter().enumerate().map(|(i, item)| (Segment::Index(i), labels_of(arena, list.items, item))),
        ),
        (SchemaKind::Object(object), Value::Object(entries)) => Labels::composite(
            level,
            entries.entries().iter().filter_map(|(key, item)| {
                let schema = object.property(key).map(|p| p.schema).or(object.additional)?;
                Some((Segment::Key(key.clone()), labels_of(arena, schema, item)))
            }),
        ),
        (SchemaKind::Map(values), Value::Object(entries)) => Labels::composite(
            level,
            entries
                .entries()
                .iter()
                .map(|(key, item)| (Segment::Key(key.clone()), labels_of(arena, *values, item))),
        ),
        (SchemaKind::Union(union), _) => {
            let accepting: Vec<Labels> = union
                .variants
                .iter()
                .filter(|&&variant| validate(arena, variant, value).is_ok())
                .map(|&variant| labels_of(arena, variant, value))
                .collect();
            let joined = accepting.iter().fold(None::<Labels>, |acc, labels| {
                Some(acc.map_or_else(|| labels.clone(), |acc| acc.join(labels)))
            });
            joined.unwrap_or_else(|| Labels::uniform(strongest_label(arena, id))).raised(level)
        }
        _ => Labels::uniform(level),
    }
}

/// The strongest label `schema` gives any path: what metadata about a value of it (a tool's
/// error message, say) must be treated as.
pub fn strongest_label(arena: &SchemaArena, schema: SchemaId) -> Sensitivity {
    let mut strongest = Sensitivity::Public;
    let mut seen = BTreeSet::new();
    let mut pending = vec![schema];
    while let Some(next) = pending.pop() {
        let id = arena.resolve(next);
        if !seen.insert(id) {
            continue;
        }
        let node = arena.get(id);
        strongest = strongest.max(node.sensitivity);
        match &node.kind {
            SchemaKind::List(list) => pending.push(list.items),
            SchemaKind::Map(values) => pending.push(*values),
            SchemaKind::Object(object) => {
                pending.extend(object.properties.iter().map(|p| p.schema));
                pending.extend(object.additional);
            }
            SchemaKind::Union(union) => pending.extend(union.variants.iter().copied()),
            _ => {}
        }
    }
    strongest
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;
    use crate::value::parse_json;

    fn output_schema(schema: &str) -> (Registry, SchemaId) {
        let json = format!(r#"{{"tools": [{{"name": "t.get", "outputSchema": {schema}}}]}}"#);
        let registry = Registry::from_json_str(&json, &Default::default()).expect("registry").registry;
        let output = registry.tools().next().map(|(_, t)| t.output).expect("one tool");
        (registry, output)
    }

    #[test]
    fn secret_properties_are_labelled_and_the_rest_stays_public() {
        let (registry, output) = output_schema(
            r#"{"type": "object", "properties": {
                "id": {"type": "string"},
                "token": {"type": "string", "x-runlet-sensitivity": "secret"},
                "notes": {"type": "array", "items": {"type": "string", "x-runlet-sensitivity": "sensitive"}}
            }}"#,
        );
        let value = parse_json(r#"{"id": "c1", "token": "s3cr3t", "notes": ["a"]}"#).expect("json");
        let labels = labels_of(registry.schemas(), output, &value);
        assert_eq!(labels.level(), Sensitivity::Public);
        assert_eq!(labels.max(), Sensitivity::Secret);
        assert_eq!(labels.level_at(&[Segment::Key("token".into())]), Sensitivity::Secret);
        assert_eq!(
            labels.level_at(&[Segment::Key("notes".into()), Segment::Index(0)]),
            Sensitivity::Sensitive
        );
        assert_eq!(labels.level_at(&[Segment::Key("id".into())]), Sensitivity::Public);
        assert_eq!(strongest_label(registry.schemas(), output), Sensitivity::Secret);
    }

    #[test]
    fn a_public_schema_labels_nothing() {
        let (registry, output) = output_schema(r#"{"type": "array", "items": {"type": "integer"}}"#);
        let value = parse_json("[1, 2]").expect("json");
        assert_eq!(labels_of(registry.schemas(), output, &value), Labels::public());
        assert_eq!(strongest_label(registry.schemas(), output), Sensitivity::Public);
    }
}
