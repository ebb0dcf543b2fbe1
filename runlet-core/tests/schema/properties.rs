//! Properties: normalization is idempotent and order-insensitive, the registry digest ignores key
//! and tool order (and free text), and loading arbitrary JSON or text never panics.

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use runlet::schema::{SchemaArena, SchemaId};

use runlet::registry::{Registry, RegistryOptions};

/// A JSON Schema in the supported subset (with references only in the registry strategy).
fn schema() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(json!({ "type": "string" })),
        Just(json!({ "type": "string", "format": "email", "x-runlet-sensitivity": "secret" })),
        (0i64..5, 5i64..9)
            .prop_map(|(min, max)| json!({ "type": "integer", "minimum": min, "maximum": max })),
        Just(json!({ "type": "number" })),
        Just(json!({ "type": "boolean" })),
        Just(json!({ "type": "null" })),
        Just(json!({ "x-runlet-type": "bytes" })),
        Just(json!({})),
        prop_oneof![
            Just(json!(true)),
            Just(json!(false)),
            Just(json!(1)),
            Just(json!("a")),
            Just(json!("b")),
            Just(json!(null))
        ]
        .prop_map(|c| json!({ "const": c })),
        proptest::collection::vec(prop_oneof![Just("x"), Just("y"), Just("z")], 1..3)
            .prop_map(|e| json!({ "enum": e })),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        let name = prop_oneof![Just("a"), Just("b"), Just("kind"), Just("id")];
        prop_oneof![
            inner.clone().prop_map(|items| json!({ "type": "array", "items": items })),
            (
                proptest::collection::btree_map(name, inner.clone(), 0..4),
                proptest::collection::vec(any::<bool>(), 4),
                prop_oneof![Just(json!(false)), Just(json!(true)), inner.clone()]
            )
                .prop_map(|(properties, required, additional)| {
                    let required: Vec<&str> =
                        properties.keys().zip(required).filter(|(_, r)| *r).map(|(k, _)| *k).collect();
                    json!({ "type": "object", "properties": properties, "required": required, "additionalProperties": additional })
                }),
            inner.clone().prop_map(|values| json!({ "type": "object", "additionalProperties": values })),
            proptest::collection::vec(inner, 1..4).prop_map(|variants| json!({ "anyOf": variants })),
            Just(json!({ "type": ["string", "null", "integer"] })),
        ]
    })
}

/// A registry file of tools with the given output schemas, a first tool whose output is the
/// union of them all (so reversing the tools changes which schemas are interned first), and a
/// tool with a recursive definition.
fn registry(outputs: Vec<Value>, classes: Vec<usize>) -> Value {
    let classes_named = ["pure", "idempotent", "recoverable", "at_most_once", "unsafe"];
    let all = json!({ "name": "all.union", "params": [], "outputSchema": { "anyOf": outputs.clone() }, "execution": "pure" });
    let mut tools: Vec<Value> = std::iter::once(all)
        .chain(outputs.into_iter().zip(classes).enumerate().map(|(i, (output, class))| {
            json!({
                "name": format!("ns{}.tool{i}", i % 3),
                "description": format!("tool {i}"),
                "params": [ { "name": "input", "schema": output.clone() } ],
                "outputSchema": output,
                "execution": classes_named[class % classes_named.len()],
                "errors": [ { "code": "B", "retryable": true }, { "code": "A" } ]
            })
        }))
        .collect();
    tools.push(json!({
        "name": "tree.walk",
        "inputSchema": { "type": "object", "properties": { "root": { "type": "string" } }, "required": ["root"] },
        "outputSchema": {
            "$ref": "#/$defs/Node",
            "$defs": { "Node": { "type": "object", "properties": { "name": { "type": "string" }, "children": { "type": "array", "items": { "$ref": "#/$defs/Node" } } }, "required": ["name"] } }
        },
        "annotations": { "readOnlyHint": true }
    }));
    json!({ "tools": tools, "inputs": { "customer_id": { "type": "string" } } })
}

/// `value` as JSON text whose object members are rotated by `rotation` at every level.
fn rotated_text(value: &Value, rotation: usize) -> String {
    match value {
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            if !members.is_empty() {
                let by = rotation % members.len();
                members.rotate_left(by);
            }
            let members: Vec<String> = members
                .into_iter()
                .map(|(k, v)| format!("{}: {}", Value::from(k.as_str()), rotated_text(v, rotation)))
                .collect();
            format!("{{{}}}", members.join(", "))
        }
        Value::Array(items) => {
            format!("[{}]", items.iter().map(|v| rotated_text(v, rotation)).collect::<Vec<_>>().join(", "))
        }
        scalar => scalar.to_string(),
    }
}

fn load(text: &str) -> Registry {
    match Registry::from_json_str(text, &RegistryOptions::default()) {
        Ok(loaded) => loaded.registry,
        Err(error) => panic!("generated registry did not load: {}", error),
    }
}

/// Every schema reachable from the registry's tools and inputs.
fn reachable(registry: &Registry) -> Vec<SchemaId> {
    let arena = registry.schemas();
    let mut stack: Vec<SchemaId> = registry.tools().map(|(_, t)| t.output).collect();
    for (_, tool) in registry.tools() {
        stack.extend(tool.input.object);
        stack.extend(tool.input.positional.iter().flatten().map(|p| p.schema));
    }
    stack.extend(registry.inputs().values().map(|i| i.schema));
    super::reachable(arena, stack).0.into_iter().collect()
}

/// Imports each schema as a tool output of one registry and returns the arena and ids.
fn imported(schemas: Vec<Value>) -> (SchemaArena, Vec<SchemaId>) {
    let count = schemas.len();
    let registry = load(&registry(schemas, vec![0; count]).to_string());
    let outputs: Vec<SchemaId> =
        registry.tools().filter(|(_, t)| t.name.root().starts_with("ns")).map(|(_, t)| t.output).collect();
    (SchemaArena::layered_on(registry.schemas().clone()), outputs)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Every normalized node is a fixed point: interning it again gives the same id.
    #[test]
    fn normalization_is_idempotent(outputs in proptest::collection::vec(schema(), 1..6)) {
        let count = outputs.len();
        let registry = load(&registry(outputs, vec![0; count]).to_string());
        let mut arena = SchemaArena::layered_on(registry.schemas().clone());
        for id in reachable(&registry) {
            let again = arena.intern(arena.get(id).clone());
            prop_assert_eq!(again, id, "{} was not in normal form", arena.display_annotated(id));
        }
    }

    /// Unions do not depend on the order or repetition of their variants, and nest flat.
    #[test]
    fn union_is_order_insensitive(schemas in proptest::collection::vec(schema(), 1..6), rotation in 0usize..6) {
        let (mut arena, ids) = imported(schemas);
        let mut reordered = ids.clone();
        reordered.reverse();
        let by = rotation % reordered.len();
        reordered.rotate_left(by);
        let forward = arena.union(&ids, 64).schema;
        prop_assert_eq!(arena.union(&reordered, 64).schema, forward);
        let doubled: Vec<SchemaId> = ids.iter().chain(&reordered).copied().collect();
        prop_assert_eq!(arena.union(&doubled, 64).schema, forward);
        if ids.len() >= 2 {
            let (left, right) = ids.split_at(ids.len() / 2);
            let nested = [arena.union(left, 64).schema, arena.union(right, 64).schema];
            prop_assert_eq!(arena.union(&nested, 64).schema, forward);
        }
        prop_assert_eq!(arena.union(&[forward], 64).schema, forward);
    }

    /// The digest ignores the order of keys and of tools, and free text.
    #[test]
    fn digest_ignores_key_and_tool_order(
        outputs in proptest::collection::vec(schema(), 1..6),
        classes in proptest::collection::vec(0usize..5, 6),
        rotation in 1usize..7,
    ) {
        let file = registry(outputs, classes);
        let digest = load(&file.to_string()).digest().clone();
        let mut reordered = file.clone();
        if let Some(tools) = reordered.get_mut("tools").and_then(Value::as_array_mut) {
            tools.reverse();
            for tool in tools.iter_mut() {
                tool["description"] = Value::from("reworded");
            }
        }
        let reloaded = load(&rotated_text(&reordered, rotation));
        prop_assert_eq!(reloaded.digest(), &digest);
    }

    /// Changing an execution class changes the digest.
    #[test]
    fn digest_covers_execution_classes(outputs in proptest::collection::vec(schema(), 1..4)) {
        let count = outputs.len();
        let pure = load(&registry(outputs.clone(), vec![0; count]).to_string());
        let unsafe_ = load(&registry(outputs, vec![4; count]).to_string());
        prop_assert_ne!(pure.digest(), unsafe_.digest());
    }

    /// Any JSON value loads or fails with findings; it never panics.
    #[test]
    fn loading_arbitrary_json_never_panics(value in arbitrary_json()) {
        let text = value.to_string();
        let _ = Registry::from_json_str(&text, &RegistryOptions::default());
        let wrapped = json!({ "tools": [ { "name": "t.x", "params": [ { "name": "p", "schema": value.clone() } ], "outputSchema": value.clone(), "inputSchema": value } ] });
        if let Err(error) = Registry::from_json_str(&wrapped.to_string(), &RegistryOptions::default()) {
            for issue in &error.issues {
                let _ = issue.to_diagnostic(&text);
            }
        }
    }

    /// Any text loads or fails with findings; it never panics.
    #[test]
    fn loading_arbitrary_text_never_panics(text in ".{0,200}") {
        if let Err(error) = Registry::from_json_str(&text, &RegistryOptions::default()) {
            prop_assert!(error.error_count() > 0);
            let _ = error.diagnostics(&text);
        }
    }
}

/// JSON built from the keys and values the registry format and schema import look at.
fn arbitrary_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1e20f64..1e20).prop_map(Value::from),
        prop_oneof![
            Just("object"),
            Just("array"),
            Just("string"),
            Just("integer"),
            Just("number"),
            Just("null"),
            Just("#"),
            Just("#/$defs/a"),
            Just("#/properties/a"),
            Just("bytes"),
            Just("secret"),
            Just("pure"),
            Just("a"),
            Just("a.b"),
            Just("kind"),
            Just(""),
        ]
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(6, 64, 6, |inner| {
        let key = prop_oneof![
            Just("tools"),
            Just("name"),
            Just("params"),
            Just("schema"),
            Just("inputSchema"),
            Just("outputSchema"),
            Just("type"),
            Just("properties"),
            Just("required"),
            Just("items"),
            Just("anyOf"),
            Just("oneOf"),
            Just("enum"),
            Just("const"),
            Just("$ref"),
            Just("$defs"),
            Just("a"),
            Just("kind"),
            Just("minimum"),
            Just("maximum"),
            Just("minLength"),
            Just("additionalProperties"),
            Just("discriminator"),
            Just("propertyName"),
            Just("mapping"),
            Just("x-runlet-type"),
            Just("x-runlet-aliases"),
            Just("x-runlet-sensitivity"),
            Just("execution"),
            Just("annotations"),
            Just("readOnlyHint"),
            Just("errors"),
            Just("code"),
            Just("inputs"),
            Just("optional"),
            Just("pattern"),
        ];
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            proptest::collection::vec((key, inner), 0..6).prop_map(|members| Value::Object(
                members.into_iter().map(|(k, v)| (k.to_owned(), v)).collect::<Map<_, _>>()
            )),
        ]
    })
}
