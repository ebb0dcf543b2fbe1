//! The registry's canonical form and digest (spec §3.1, §5.5): a `Value` of names, normalized
//! schemas and execution-relevant metadata, hashed as SHA-256 over its RCVE v1 bytes.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::value::{List, Object, Value};

use super::HostInput;
use crate::schema::{DefId, LengthRange, SchemaArena, SchemaId, SchemaKind, ToolDescriptor};

/// Names the layout of the canonical form; a layout change must change it.
const FORMAT: &str = "runlet.registry/1";

/// The canonical form of a registry:
///
/// `{format, schemas: [node…], definitions: [schema index…], tools: [tool…], inputs: {name: index}}`
///
/// Schemas form a table in which a node refers to others by index, children before parents, in
/// the order a walk over tools (by name), then inputs (by name), then definitions (in order of
/// first use) meets them, so shared schemas appear once and the form never grows beyond the
/// arena. A `ref` node names a definition by its position in `definitions`. Tools carry their
/// name, parameters (name, schema, optional), input object, output, execution class, schema
/// version and errors (code, retryable), and, for a tool renamed from its server's name, `mcp`:
/// that name and the server (absent otherwise, so other tools digest as before). Free text (descriptions, titles, examples) is left out:
/// it changes nothing that compiles or runs. A registry of MCP servers' tools adds
/// `mcp_servers` (the registry file's object as given: each server's protocol version and
/// implementation), so the same tools from another server version are another registry.
pub(super) fn canonical_form(
    arena: &SchemaArena,
    tools: &[ToolDescriptor],
    inputs: &BTreeMap<String, HostInput>,
    mcp_servers: Option<&Value>,
) -> Value {
    let mut table = Table {
        arena,
        nodes: Vec::new(),
        index: HashMap::new(),
        definitions: Vec::new(),
        def_numbers: HashMap::new(),
    };
    let tools: Vec<Value> = tools.iter().map(|tool| table.tool(tool)).collect();
    let inputs: Vec<(Arc<str>, Value)> =
        inputs.iter().map(|(name, input)| (name.as_str().into(), table.schema(input.schema))).collect();
    let mut definitions = Vec::new();
    while let Some(def) = table.definitions.get(definitions.len()).copied() {
        definitions.push(match arena.definition(def).body {
            Some(body) => table.schema(body),
            None => Value::Null,
        });
    }
    let mut form = vec![
        ("definitions", list(definitions)),
        ("format", Value::from(FORMAT)),
        ("inputs", object_of(inputs)),
        ("schemas", list(table.nodes)),
        ("tools", list(tools)),
    ];
    form.extend(mcp_servers.map(|servers| ("mcp_servers", servers.clone())));
    object(form)
}

struct Table<'a> {
    arena: &'a SchemaArena,
    nodes: Vec<Value>,
    index: HashMap<SchemaId, i64>,
    definitions: Vec<DefId>,
    def_numbers: HashMap<DefId, i64>,
}

impl Table<'_> {
    fn tool(&mut self, tool: &ToolDescriptor) -> Value {
        let params = tool.input.positional.as_ref().map(|params| {
            list(
                params
                    .iter()
                    .map(|p| {
                        object([
                            ("name", Value::from(&*p.name)),
                            ("optional", Value::Bool(p.optional)),
                            ("schema", self.schema(p.schema)),
                        ])
                    })
                    .collect(),
            )
        });
        let input = tool.input.object.map(|id| self.schema(id));
        let errors = tool
            .errors
            .iter()
            .map(|e| {
                object([("code", Value::from(e.code.as_str())), ("retryable", Value::Bool(e.retryable))])
            })
            .collect();
        let mut fields = vec![
            ("errors", list(errors)),
            ("execution", Value::from(tool.execution.as_str())),
            ("input", input.unwrap_or(Value::Null)),
            ("name", Value::from(tool.name.as_str())),
            ("output", self.schema(tool.output)),
            ("params", params.unwrap_or(Value::Null)),
            ("schema_version", Value::from(&*tool.schema_version)),
        ];
        if let Some(origin) = &tool.mcp {
            let server = origin.server.as_deref().map_or(Value::Null, Value::from);
            fields.push(("mcp", object([("name", Value::from(origin.name.as_str())), ("server", server)])));
        }
        object(fields)
    }

    /// The table index of `id`, adding it (after its children) on first sight.
    fn schema(&mut self, id: SchemaId) -> Value {
        if let Some(&index) = self.index.get(&id) {
            return Value::Int(index);
        }
        let schema = self.arena.get(id);
        let mut fields: Vec<(&str, Value)> = Vec::new();
        let kind = match &schema.kind {
            SchemaKind::Any => "any",
            SchemaKind::Null => "null",
            SchemaKind::Boolean(value) => {
                fields.extend(value.map(|v| ("value", Value::Bool(v))));
                "boolean"
            }
            SchemaKind::Integer(range) => {
                fields.extend(range.min.map(|m| ("min", Value::Int(m))));
                fields.extend(range.max.map(|m| ("max", Value::Int(m))));
                "integer"
            }
            SchemaKind::Number(range) => {
                fields.extend(range.min.map(|m| ("min", Value::Number(m))));
                fields.extend(range.max.map(|m| ("max", Value::Number(m))));
                "number"
            }
            SchemaKind::String(string) => {
                fields.extend(string.format.as_ref().map(|f| ("format", Value::String(f.clone()))));
                fields.extend(
                    string
                        .values
                        .as_ref()
                        .map(|v| ("values", list(v.iter().map(|s| Value::String(s.clone())).collect()))),
                );
                length_fields(&mut fields, string.length);
                "string"
            }
            SchemaKind::Bytes => "bytes",
            SchemaKind::List(items) => {
                fields.push(("items", self.schema(items.items)));
                length_fields(&mut fields, items.length);
                "list"
            }
            SchemaKind::Object(object_schema) => {
                let properties = object_schema
                    .properties
                    .iter()
                    .map(|p| {
                        let aliases = list(p.aliases.iter().map(|a| Value::String(a.clone())).collect());
                        object([
                            ("aliases", aliases),
                            ("deprecated", Value::Bool(p.deprecated)),
                            ("name", Value::String(p.name.clone())),
                            ("required", Value::Bool(p.required)),
                            ("schema", self.schema(p.schema)),
                        ])
                    })
                    .collect();
                fields.push(("properties", list(properties)));
                fields.extend(object_schema.additional.map(|a| ("additional", self.schema(a))));
                "object"
            }
            SchemaKind::Map(values) => {
                fields.push(("values", self.schema(*values)));
                "map"
            }
            SchemaKind::Union(union) => {
                let variants = union.variants.iter().map(|&v| self.schema(v)).collect();
                fields.push(("variants", list(variants)));
                fields.extend(
                    union.discriminator.as_ref().map(|d| ("discriminator", Value::String(d.clone()))),
                );
                "union"
            }
            SchemaKind::Ref(def) => {
                fields.push(("definition", Value::Int(self.definition_number(*def))));
                "ref"
            }
        };
        fields.push(("kind", Value::from(kind)));
        fields.push(("sensitivity", Value::from(schema.sensitivity.name())));
        let index = self.nodes.len() as i64;
        self.nodes.push(object(fields));
        self.index.insert(id, index);
        Value::Int(index)
    }

    fn definition_number(&mut self, def: DefId) -> i64 {
        *self.def_numbers.entry(def).or_insert_with(|| {
            self.definitions.push(def);
            self.definitions.len() as i64 - 1
        })
    }
}

fn length_fields(fields: &mut Vec<(&str, Value)>, length: LengthRange) {
    fields.extend(length.min.map(|m| ("min_len", count(m))));
    fields.extend(length.max.map(|m| ("max_len", count(m))));
}

/// A length bound: an Integer, or its decimal text beyond the 64-bit signed range.
fn count(n: u64) -> Value {
    i64::try_from(n).map_or_else(|_| Value::from(n.to_string()), Value::Int)
}

fn list(items: Vec<Value>) -> Value {
    // Canonical registry values nest at most five levels, far below the value depth limit.
    Value::List(List::new(items).expect("canonical registry values are shallow"))
}

fn object<'k>(pairs: impl IntoIterator<Item = (&'k str, Value)>) -> Value {
    object_of(pairs.into_iter().map(|(k, v)| (Arc::from(k), v)).collect())
}

fn object_of(pairs: Vec<(Arc<str>, Value)>) -> Value {
    Value::Object(Object::from_pairs(pairs).expect("canonical registry values are shallow"))
}
