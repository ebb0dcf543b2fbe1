//! Tests of the schema module: normalized-schema snapshots of registry fixtures, golden registry
//! diagnostics, and properties of normalization, digests and loading.

mod catalogue;
mod diagnostics;
mod fixtures;
mod lookup;
mod properties;
mod real_tools;
mod validation;

use std::collections::BTreeSet;
use std::fmt::Write;
use std::path::PathBuf;

use runlet::schema::{CallSchema, DefId, SchemaArena, SchemaDoc, SchemaId, SchemaKind};

use runlet::registry::{Registry, RegistryOptions};

/// The text of a file under `tests/schema/`.
pub fn read(relative: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/schema").join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Loads `text` and describes the registry: every tool with its call shapes, output, errors,
/// execution class and documented positions; the definitions they use; host inputs; warnings.
pub fn describe(text: &str, options: &RegistryOptions) -> String {
    let loaded = match Registry::from_json_str(text, options) {
        Ok(loaded) => loaded,
        Err(error) => panic!(
            "registry did not load:\n{}",
            error.issues.iter().map(|i| format!("{i}\n")).collect::<String>()
        ),
    };
    let registry = &loaded.registry;
    let arena = registry.schemas();
    let mut out = String::new();
    let mut used = Vec::new();
    for (_, tool) in registry.tools() {
        writeln!(
            out,
            "tool {} [{} from {:?}, schema_version {}]",
            tool.name, tool.execution, tool.execution_origin, tool.schema_version
        )
        .unwrap();
        writeln!(out, "  summary: {:?}", tool.summary()).unwrap();
        if let Some(origin) = &tool.mcp {
            writeln!(out, "  calls `{}` at server {:?}", origin.name, origin.server).unwrap();
        }
        describe_call(&mut out, arena, &tool.input, &mut used);
        writeln!(out, "  output: {}", arena.display_annotated(tool.output)).unwrap();
        used.push(tool.output);
        for error in &tool.errors {
            writeln!(out, "  error {} retryable={} {:?}", error.code, error.retryable, error.description)
                .unwrap();
        }
        for (path, doc) in &tool.docs {
            writeln!(out, "  doc {path}: {}", describe_doc(doc)).unwrap();
        }
    }
    for (name, input) in registry.inputs() {
        writeln!(out, "input {name}: {}", arena.display_annotated(input.schema)).unwrap();
        for (path, doc) in &input.docs {
            writeln!(out, "  doc {path:?}: {}", describe_doc(doc)).unwrap();
        }
        used.push(input.schema);
    }
    for def in definitions(arena, &used) {
        let definition = arena.definition(def);
        let body = definition.body.map(|b| arena.display_annotated(b).to_string()).unwrap_or_default();
        writeln!(out, "definition {} ({}) = {body}", definition.name, definition.key).unwrap();
    }
    writeln!(out, "roots: {}", registry.roots().collect::<Vec<_>>().join(", ")).unwrap();
    writeln!(out, "digest: {}", registry.digest()).unwrap();
    for warning in &loaded.warnings {
        writeln!(out, "{warning}").unwrap();
    }
    out
}

/// The set fields of a documentation record.
fn describe_doc(doc: &SchemaDoc) -> String {
    let mut parts = Vec::new();
    parts.extend(doc.title.as_ref().map(|t| format!("title {t:?}")));
    parts.extend(doc.description.as_ref().map(|d| format!("description {d:?}")));
    if !doc.examples.is_empty() {
        parts.push(format!("examples [{}]", doc.examples.join(", ")));
    }
    parts.extend(doc.default.as_ref().map(|d| format!("default {d}")));
    for (flag, name) in
        [(doc.deprecated, "deprecated"), (doc.read_only, "read-only"), (doc.write_only, "write-only")]
    {
        if flag {
            parts.push(name.to_owned());
        }
    }
    parts.join("; ")
}

fn describe_call(out: &mut String, arena: &SchemaArena, call: &CallSchema, used: &mut Vec<SchemaId>) {
    if let Some(params) = &call.positional {
        let params: Vec<String> = params
            .iter()
            .map(|p| {
                used.push(p.schema);
                format!(
                    "{}{}: {}",
                    p.name,
                    if p.optional { "?" } else { "" },
                    arena.display_annotated(p.schema)
                )
            })
            .collect();
        writeln!(out, "  call: ({})", params.join(", ")).unwrap();
    }
    if let Some(object) = call.object {
        used.push(object);
        writeln!(out, "  call: ({})", arena.display_annotated(object)).unwrap();
    }
}

/// The definitions reachable from `roots`, in key order.
fn definitions(arena: &SchemaArena, roots: &[SchemaId]) -> Vec<DefId> {
    let (_, defs) = reachable(arena, roots.to_vec());
    let mut keyed: Vec<_> = defs.into_iter().map(|def| (arena.definition(def).key.clone(), def)).collect();
    keyed.sort();
    keyed.into_iter().map(|(_, def)| def).collect()
}

/// Every schema reachable from `roots` (through items, properties, map values, union variants
/// and definition bodies), and every definition passed on the way.
pub fn reachable(arena: &SchemaArena, mut stack: Vec<SchemaId>) -> (BTreeSet<SchemaId>, BTreeSet<DefId>) {
    let mut seen = BTreeSet::new();
    let mut defs = BTreeSet::new();
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        match arena.kind(id) {
            SchemaKind::List(list) => stack.push(list.items),
            SchemaKind::Object(object) => {
                stack.extend(object.properties.iter().map(|p| p.schema));
                stack.extend(object.additional);
            }
            SchemaKind::Map(values) => stack.push(*values),
            SchemaKind::Union(union) => stack.extend(union.variants.iter().copied()),
            SchemaKind::Ref(def) => {
                defs.insert(*def);
                stack.extend(arena.definition(*def).body);
            }
            _ => {}
        }
    }
    (seen, defs)
}
