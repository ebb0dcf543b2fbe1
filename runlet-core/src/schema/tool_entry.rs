//! One tool entry of a registry file (an MCP tool definition plus Runlet's fields) read into a
//! [`ToolDescriptor`]: name, parameters, schemas, errors, and the execution class.

use std::sync::Arc;

use serde_json::Value;

use crate::diag::{codes, nearest};

use super::arena::SchemaArena;
use super::call_shape;
use super::descriptor::{
    CallSchema, ErrorDescriptor, ExecutionClass, ExecutionOrigin, McpOrigin, Param, ToolDescriptor,
};
use super::docs::SchemaDocs;
use super::fields::Fields;
use super::import::{Document, Findings, ImportOptions, import_document};
use super::issue::RegistryIssue;
use super::json_path::JsonPath;
use super::model::{SchemaId, SchemaKind};
use super::names::{NameError, QualifiedName, is_identifier};

/// Fields of a tool entry. `title`, `annotations`, `_meta` and `icons` come from MCP; `_meta`
/// and `icons` are accepted and not used.
const TOOL_FIELDS: &[&str] = &[
    "name",
    "title",
    "description",
    "params",
    "inputSchema",
    "outputSchema",
    "execution",
    "schema_version",
    "max_concurrency",
    "resource_group",
    "errors",
    "annotations",
    "_meta",
    "icons",
    "x-runlet-mcp",
];
const PARAM_FIELDS: &[&str] = &["name", "schema", "optional", "description"];
const ERROR_FIELDS: &[&str] = &["code", "retryable", "description"];
const MCP_FIELDS: &[&str] = &["server", "name"];
/// MCP tool annotations: hints; `readOnlyHint` and `idempotentHint` choose the execution class.
const ANNOTATION_FIELDS: &[&str] =
    &["title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"];

/// What the MCP annotations say.
#[derive(Debug, Default)]
struct Hints {
    title: Option<String>,
    read_only: bool,
    idempotent: bool,
}

/// Reads the tool entry `json` at `path`. `None` when it has no usable name (after reporting
/// why); other problems are reported and the descriptor is still returned.
pub(crate) fn read_tool(
    arena: &mut SchemaArena,
    options: &ImportOptions,
    json: &Value,
    path: &JsonPath,
    issues: &mut Vec<RegistryIssue>,
) -> Option<ToolDescriptor> {
    let mut fields = Fields::of(json, path, issues, "a tool")?;
    fields.reject_unknown(TOOL_FIELDS, "a tool");
    let raw_name = fields.required_string("name", "a tool");
    let mapped = raw_name.and_then(|raw| parse_name(raw, &path.key("name"), fields.issues));
    let declared_origin = read_origin(&mut fields);
    let (name, mcp) = match mapped {
        Some((name, mapped_from)) => (Some(name), declared_origin.or(mapped_from)),
        None => (None, None),
    };
    let title = fields.string("title").map(str::to_owned);
    let description = fields.string("description").unwrap_or_default().to_owned();
    let schema_version = Arc::from(fields.string("schema_version").unwrap_or("1"));
    let max_concurrency = fields.positive_integer("max_concurrency");
    let resource_group = fields.string("resource_group").map(str::to_owned);
    let hints = read_hints(&mut fields);
    let execution = read_execution(&mut fields, &hints);
    let mut reader = ToolReader {
        arena,
        options,
        issues: fields.issues,
        docs: SchemaDocs::new(),
        tool_path: path,
        tool_name: raw_name.unwrap_or("tool"),
    };
    let positional = json.get("params").and_then(|p| reader.params(p));
    let object = json.get("inputSchema").map(|schema| reader.input_object(schema));
    let output = match json.get("outputSchema") {
        Some(schema) => reader.import(schema, "outputSchema", &path.key("outputSchema")),
        None => reader.arena.any(),
    };
    let errors = json.get("errors").map(|e| reader.errors(e)).unwrap_or_default();
    let input = CallSchema { positional: positional.or_else(|| object.is_none().then(Vec::new)), object };
    if let Some(why) = call_shape::overlap(reader.arena, &input) {
        let message = format!("the call shapes of `params` and `inputSchema` overlap: {why}");
        let issue = RegistryIssue::error(codes::OVERLAPPING_CALL_SHAPES, path.clone(), message)
            .with_help("give only one of `params` and `inputSchema`, or make their accepted calls disjoint");
        reader.issues.push(issue);
    }
    let (execution, execution_origin) = execution;
    Some(ToolDescriptor {
        name: name?,
        title: title.or(hints.title),
        description,
        input,
        output,
        errors,
        execution,
        execution_origin,
        schema_version,
        max_concurrency,
        resource_group,
        mcp,
        docs: reader.docs,
    })
}

/// The tool's registry name, and where it came from when it had to be mapped: a name whose
/// segments are not identifiers (`get-env`, as MCP servers name tools) is registered under the
/// nearest valid name (`get_env`, [`QualifiedName::suggest`]) with a warning, and calls keep the
/// name as written. A name with an empty segment, or nothing usable, is an error.
fn parse_name(
    raw: &str,
    path: &JsonPath,
    issues: &mut Vec<RegistryIssue>,
) -> Option<(QualifiedName, Option<McpOrigin>)> {
    let error = match QualifiedName::parse(raw) {
        Ok(name) => return Some((name, None)),
        Err(error) => error,
    };
    let suggestion = QualifiedName::suggest(raw);
    if let Some(suggestion) = suggestion.clone().filter(|_| !matches!(error, NameError::EmptySegment)) {
        let message =
            format!("`{raw}` is not a valid tool name ({error}); it is registered as `{suggestion}`");
        let issue = RegistryIssue::warning(codes::TOOL_NAME_MAPPED, path.clone(), message)
            .with_help(format!("programs call it as `{suggestion}`; the call still goes to `{raw}`"));
        issues.push(issue);
        return Some((suggestion, Some(McpOrigin { server: None, name: raw.to_owned() })));
    }
    let message = format!("`{raw}` is not a valid tool name: {error}");
    let mut issue = RegistryIssue::error(codes::INVALID_TOOL_NAME, path.clone(), message);
    issue.help.push("a tool name is a dotted path of identifiers, such as `crm.customer`".into());
    if let Some(suggestion) = suggestion {
        issue.help.push(format!("rename the tool to `{suggestion}`"));
    }
    issues.push(issue);
    None
}

/// `x-runlet-mcp`: the server a tool comes from and its name there (INTERFACES.md §4.2).
fn read_origin(fields: &mut Fields<'_, '_>) -> Option<McpOrigin> {
    let json = fields.get("x-runlet-mcp")?;
    let path = fields.path.key("x-runlet-mcp");
    let mut origin = Fields::of(json, &path, fields.issues, "`x-runlet-mcp`")?;
    origin.reject_unknown(MCP_FIELDS, "`x-runlet-mcp`");
    let server = origin.string("server").map(str::to_owned);
    let name = origin.required_string("name", "`x-runlet-mcp`")?;
    if name.is_empty() {
        let message = "`x-runlet-mcp.name` must be the tool's name at its server, not empty";
        origin.issues.push(RegistryIssue::error(codes::REGISTRY_BAD_FIELD, path.key("name"), message));
        return None;
    }
    Some(McpOrigin { server, name: name.to_owned() })
}

fn read_hints(fields: &mut Fields<'_, '_>) -> Hints {
    let Some(json) = fields.get("annotations") else { return Hints::default() };
    let path = fields.path.key("annotations");
    let Some(mut annotations) = Fields::of(json, &path, fields.issues, "`annotations`") else {
        return Hints::default();
    };
    for key in annotations.keys().filter(|k| !ANNOTATION_FIELDS.contains(&k.as_str())) {
        let message = format!("the tool annotation `{key}` is not known to Runlet and has no effect");
        annotations.issues.push(RegistryIssue::warning(
            codes::UNKNOWN_TOOL_ANNOTATION,
            path.key(key),
            message,
        ));
    }
    // Validated for their type though they do not change anything Runlet does.
    annotations.boolean("destructiveHint");
    annotations.boolean("openWorldHint");
    Hints {
        title: annotations.string("title").map(str::to_owned),
        read_only: annotations.boolean("readOnlyHint").unwrap_or(false),
        idempotent: annotations.boolean("idempotentHint").unwrap_or(false),
    }
}

fn read_execution(fields: &mut Fields<'_, '_>, hints: &Hints) -> (ExecutionClass, ExecutionOrigin) {
    let text = match fields.get("execution") {
        Some(Value::String(text)) => text,
        // MCP's `execution` object (`taskSupport`) is protocol metadata Runlet does not use.
        None | Some(Value::Object(_)) => {
            return match (hints.read_only, hints.idempotent) {
                (true, _) => (ExecutionClass::Pure, ExecutionOrigin::ReadOnlyHint),
                (false, true) => (ExecutionClass::Idempotent, ExecutionOrigin::IdempotentHint),
                (false, false) => (ExecutionClass::Unsafe, ExecutionOrigin::Default),
            };
        }
        Some(_) => {
            let message =
                "`execution` must be an execution class such as \"pure\" (or MCP's execution object)";
            fields.issues.push(RegistryIssue::error(
                codes::REGISTRY_BAD_FIELD,
                fields.path.key("execution"),
                message,
            ));
            return (ExecutionClass::Unsafe, ExecutionOrigin::Declared);
        }
    };
    if let Some(class) = ExecutionClass::parse(text) {
        return (class, ExecutionOrigin::Declared);
    }
    let mut nearest: Vec<(usize, &str)> = ExecutionClass::ALL
        .iter()
        .filter_map(|c| Some((nearest::distance(c.as_str(), text)?, c.as_str())))
        .filter(|(distance, _)| *distance <= 3)
        .collect();
    nearest.sort();
    let message = format!("`{text}` is not an execution class");
    let issue = RegistryIssue::error(codes::INVALID_EXECUTION_CLASS, fields.path.key("execution"), message)
        .with_help("the classes are `pure`, `idempotent`, `recoverable`, `at_most_once` and `unsafe`")
        .with_candidates(nearest.into_iter().take(1).map(|(_, c)| c));
    fields.issues.push(issue);
    (ExecutionClass::Unsafe, ExecutionOrigin::Declared)
}

/// Imports the schemas of one tool entry.
struct ToolReader<'a, 'i> {
    arena: &'a mut SchemaArena,
    options: &'a ImportOptions,
    issues: &'i mut Vec<RegistryIssue>,
    docs: SchemaDocs,
    tool_path: &'a JsonPath,
    tool_name: &'a str,
}

impl ToolReader<'_, '_> {
    /// Imports the schema document at `path`; `label` names it inside the tool (`outputSchema`).
    fn import(&mut self, json: &Value, label: &str, path: &JsonPath) -> SchemaId {
        let name = format!("{}/{label}", self.tool_name);
        let document = Document { json, path, name: &name };
        let findings = Findings { issues: self.issues, docs: &mut self.docs, docs_base: self.tool_path };
        import_document(self.arena, self.options, document, findings)
    }

    fn input_object(&mut self, json: &Value) -> SchemaId {
        let path = self.tool_path.key("inputSchema");
        let schema = self.import(json, "inputSchema", &path);
        if !is_object_schema(self.arena, schema) {
            let message =
                format!("`inputSchema` must describe an object, not {}", self.arena.display(schema));
            let issue = RegistryIssue::error(codes::INPUT_SCHEMA_NOT_OBJECT, path, message).with_help(
                "write `\"type\": \"object\"` with `properties`, or give positional `params` instead",
            );
            self.issues.push(issue);
        }
        schema
    }

    fn params(&mut self, json: &Value) -> Option<Vec<Param>> {
        let path = self.tool_path.key("params");
        let Some(items) = json.as_array() else {
            let issue = RegistryIssue::error(
                codes::REGISTRY_BAD_FIELD,
                path,
                "`params` must be an array of parameters",
            );
            self.issues.push(issue);
            return None;
        };
        let mut params: Vec<Param> = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let at = path.index(i);
            if let Some(param) = self.param(item, &at, i) {
                self.check_param(&params, &param, &at);
                params.push(param);
            }
        }
        Some(params)
    }

    fn param(&mut self, json: &Value, path: &JsonPath, index: usize) -> Option<Param> {
        let mut fields = Fields::of(json, path, self.issues, "a parameter")?;
        fields.reject_unknown(PARAM_FIELDS, "a parameter");
        let name = fields.required_string("name", "a parameter");
        let optional = fields.boolean("optional").unwrap_or(false);
        let description = fields.string("description").map(str::to_owned);
        if fields.get("schema").is_none() {
            let issue =
                RegistryIssue::error(codes::REGISTRY_BAD_FIELD, path.clone(), "a parameter needs `schema`");
            fields.issues.push(issue);
        }
        let schema = match json.get("schema") {
            Some(schema) => self.import(schema, &format!("params/{index}"), &path.key("schema")),
            None => self.arena.any(),
        };
        Some(Param { name: name?.into(), schema, optional, description })
    }

    fn check_param(&mut self, earlier: &[Param], param: &Param, path: &JsonPath) {
        let name = &param.name;
        let problem = if !is_identifier(name) {
            Some((path.key("name"), format!("parameter name `{name}` is not an identifier"), None))
        } else if earlier.iter().any(|p| p.name == *name) {
            Some((path.key("name"), format!("two parameters are named `{name}`"), None))
        } else {
            earlier.iter().find(|p| p.optional && !param.optional).map(|optional| {
                let message =
                    format!("required parameter `{name}` follows optional parameter `{}`", optional.name);
                (path.clone(), message, Some("put optional parameters after the required ones"))
            })
        };
        if let Some((at, message, help)) = problem {
            let mut issue = RegistryIssue::error(codes::INVALID_PARAMS, at, message);
            issue.help.extend(help.map(str::to_owned));
            self.issues.push(issue);
        }
    }

    fn errors(&mut self, json: &Value) -> Vec<ErrorDescriptor> {
        let path = self.tool_path.key("errors");
        let Some(items) = json.as_array() else {
            let issue = RegistryIssue::error(codes::REGISTRY_BAD_FIELD, path, "`errors` must be an array");
            self.issues.push(issue);
            return Vec::new();
        };
        let mut errors: Vec<ErrorDescriptor> = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let at = path.index(i);
            let Some(mut fields) = Fields::of(item, &at, self.issues, "an error") else { continue };
            fields.reject_unknown(ERROR_FIELDS, "an error");
            let code = fields.required_string("code", "an error");
            let retryable = fields.boolean("retryable").unwrap_or(false);
            let description = fields.string("description").map(str::to_owned);
            let Some(code) = code else { continue };
            if errors.iter().any(|e| e.code == code) {
                let message = format!("the error code `{code}` is listed twice");
                fields.issues.push(RegistryIssue::error(
                    codes::DUPLICATE_ERROR_CODE,
                    at.key("code"),
                    message,
                ));
                continue;
            }
            errors.push(ErrorDescriptor { code: code.to_owned(), retryable, description });
        }
        errors.sort_by(|a, b| a.code.cmp(&b.code));
        errors
    }
}

/// Whether `schema` describes objects only: an object, a map, or a union of them.
fn is_object_schema(arena: &SchemaArena, schema: SchemaId) -> bool {
    match arena.kind(arena.resolve(schema)) {
        SchemaKind::Object(_) | SchemaKind::Map(_) => true,
        SchemaKind::Union(union) => union.variants.iter().all(|&v| is_object_schema(arena, v)),
        _ => false,
    }
}
