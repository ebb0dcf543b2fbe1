//! Loading a generated 1,000-tool registry: parse, import, normalize, check and digest, against
//! the baseline of parsing the same text into `serde_json::Value`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};

use runlet::registry::{Registry, RegistryOptions};

/// A realistic tool entry whose shape varies with `i`: positional or object inputs, enums,
/// bounds, nested lists of objects, nullable fields, discriminated unions and recursion.
fn tool(i: usize) -> Value {
    let status =
        json!({ "type": "string", "enum": ["open", "pending", "closed", format!("custom_{}", i % 7)] });
    let item = json!({
        "type": "object",
        "properties": {
            "id": { "type": "string", "description": "Stable identifier." },
            "title": { "type": "string", "minLength": 1, "maxLength": 200 },
            "status": status,
            "score": { "type": "number", "minimum": 0, "maximum": 1 },
            "owner": { "type": ["string", "null"], "x-runlet-sensitivity": "sensitive" },
            "tags": { "type": "array", "items": { "type": "string" }, "maxItems": 20 },
            "created_at": { "type": "string", "format": "date-time" },
            format!("extra_{}", i % 13): { "type": "integer", "minimum": 0 }
        },
        "required": ["id", "title", "status", "created_at"],
        "additionalProperties": false
    });
    let output = match i % 4 {
        0 => json!({ "type": "array", "items": item }),
        1 => {
            json!({ "type": "object", "properties": { "items": { "type": "array", "items": item }, "next": { "type": ["string", "null"] } }, "required": ["items"] })
        }
        2 => json!({
            "oneOf": [
                { "type": "object", "properties": { "kind": { "const": "found" }, "item": item }, "required": ["kind", "item"] },
                { "type": "object", "properties": { "kind": { "const": "missing" }, "reason": { "type": "string" } }, "required": ["kind"] }
            ],
            "discriminator": { "propertyName": "kind" }
        }),
        _ => json!({
            "$ref": "#/$defs/Node",
            "$defs": { "Node": { "type": "object", "properties": { "name": { "type": "string" }, "children": { "type": "array", "items": { "$ref": "#/$defs/Node" } } }, "required": ["name", "children"] } }
        }),
    };
    let mut entry = json!({
        "name": format!("svc{}.resource{}.op{i}", i % 50, i % 7),
        "title": format!("Operation {i}"),
        "description": format!("Does operation {i} on the service's resources and returns what it found."),
        "outputSchema": output,
        "annotations": { "readOnlyHint": i % 3 != 0, "idempotentHint": i % 3 == 0 },
        "errors": [ { "code": "NOT_FOUND" }, { "code": "RATE_LIMITED", "retryable": true } ]
    });
    if i % 2 == 0 {
        entry["params"] = json!([
            { "name": "id", "schema": { "type": "string", "minLength": 1 } },
            { "name": "limit", "schema": { "type": "integer", "minimum": 1, "maximum": 100 }, "optional": true }
        ]);
    } else {
        entry["inputSchema"] = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "query": { "type": "string", "description": "What to look for." },
                "state": { "type": "string", "enum": ["open", "closed", "all"], "default": "open" },
                "page": { "type": "integer", "minimum": 1, "default": 1 },
                "per_page": { "type": "integer", "minimum": 1, "maximum": 100 }
            },
            "required": ["query"],
            "additionalProperties": false
        });
    }
    entry
}

fn registry_text(tools: usize) -> String {
    json!({ "tools": (0..tools).map(tool).collect::<Vec<_>>() }).to_string()
}

fn bench(c: &mut Criterion) {
    let text = registry_text(1000);
    let options = RegistryOptions::default();
    assert!(Registry::from_json_str(&text, &options).is_ok(), "the generated registry loads");
    eprintln!("generated registry: 1000 tools, {} bytes of JSON", text.len());
    let mut group = c.benchmark_group("registry_1000_tools");
    group.sample_size(30);
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("serde_json_value_baseline", |b| {
        b.iter(|| serde_json::from_str::<Value>(black_box(&text)).map(|v| v.is_object()))
    });
    group.bench_function("load_normalize_digest", |b| {
        b.iter(|| Registry::from_json_str(black_box(&text), &options).map(|l| l.registry.digest().clone()))
    });
    let registry = Registry::from_json_str(&text, &options).expect("loads").registry;
    group.throughput(Throughput::Elements(registry.tools().count() as u64));
    group.bench_function("digest_only", |b| {
        b.iter(|| runlet::value::sha256(&black_box(&registry).canonical_form()))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
