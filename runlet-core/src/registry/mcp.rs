//! An MCP server's `tools/list` result as registry entries (INTERFACES.md §2, §4.2): the tools of
//! server `NAME` under `NAME.`, names that are not identifiers mapped, the server's own name kept
//! for the call, and a tool that does not import left out with a warning.
//!
//! ```
//! use runlet::registry::{McpImportOptions, Registry, RegistryOptions, import_mcp_tools};
//!
//! let listed = serde_json::json!({"tools": [
//!     {"name": "get-sum", "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}}},
//!      "annotations": {"readOnlyHint": true}},
//!     {"name": "broken", "inputSchema": {"type": "object", "properties": {"x": {"type": "tuple"}}}},
//! ]});
//! let import = import_mcp_tools("everything", &listed, &McpImportOptions::default()).unwrap();
//! // One entry, `everything.get_sum`, carrying `"x-runlet-mcp": {"server": "everything", "name": "get-sum"}`;
//! // `broken` is left out with an RL8027 warning naming it and why.
//! assert_eq!(import.entries[0]["name"], "everything.get_sum");
//! assert_eq!(import.entries[0]["x-runlet-mcp"]["name"], "get-sum");
//! assert_eq!(import.warnings[0].code.to_string(), "RL8027");
//! let file = serde_json::json!({"tools": import.entries});
//! let loaded = Registry::from_json(&file, &RegistryOptions::default()).unwrap();
//! let tool = loaded.registry.tool_named("everything.get_sum").unwrap();
//! assert_eq!(loaded.registry.tool(tool).call_name(), "get-sum");
//! ```
//!
//! [`import_mcp_tools`] takes the server's name and its `tools/list` result (`{"tools": [...]}`,
//! the pages of a paged listing joined; `nextCursor` and `_meta` are ignored) and returns one
//! registry entry per tool that imports, as registry-file JSON: the tool's own fields with
//! `name` set to `NAME.<mapped>` ([`mcp_tool_identifier`]), `"x-runlet-mcp": {"server": NAME,
//! "name": ORIGINAL}`, and an `execution` class chosen by [`McpImportOptions`]. Findings carry
//! JSON paths into the `tools/list` result (`/tools/3/inputSchema/...`), so
//! [`RegistryIssue::to_diagnostic`] can point into its text. Entries load with
//! [`Registry::from_json`](super::Registry::from_json) (beside a host's own registry file's
//! tools), which puts the server, the original name and every imported schema into the digest.
//!
//! Errors (the `Err` side) are: a server name that is not an identifier (`RL8004`), a result
//! without a `tools` array (`RL8002`), two tools whose mapped names collide (`RL8026`, naming
//! both), and, with `strict`, every finding of every tool that does not import.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::diag::codes;
use crate::schema::tool_entry::read_tool;
use crate::schema::{
    ExecutionClass, JsonPath, RegistryError, RegistryIssue, SchemaArena, identifier_from, is_identifier,
    is_reserved,
};

use super::RegistryOptions;

/// How a server's tools become registry entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McpImportOptions {
    /// Refuse the whole server when one tool does not import, instead of leaving it out with a
    /// warning (`RL8027`).
    pub strict: bool,
    /// Whether the server's annotations may choose execution classes: `readOnlyHint` → `pure`,
    /// `idempotentHint` → `idempotent`. Only for servers the host trusts.
    pub trust_annotations: bool,
    /// The class of every other tool: `unsafe` (the default) or `at_most_once`, as the host
    /// configures.
    pub default_execution: ExecutionClass,
    /// How each tool's schemas are imported (as the registry will load them).
    pub registry: RegistryOptions,
}

impl Default for McpImportOptions {
    fn default() -> McpImportOptions {
        McpImportOptions {
            strict: false,
            trust_annotations: false,
            default_execution: ExecutionClass::Unsafe,
            registry: RegistryOptions::default(),
        }
    }
}

/// The registry entries of one server's tools, and the warnings found on the way (tools left
/// out, unknown annotations, dropped constraints).
#[derive(Debug, Clone, PartialEq)]
pub struct McpImport {
    /// Registry-file tool entries, in the order the server listed them.
    pub entries: Vec<Value>,
    pub warnings: Vec<RegistryIssue>,
}

/// An MCP tool name as one registry segment: every character that cannot continue an identifier
/// (`-`, `.`, spaces) becomes `_`, a name that cannot start one gets a leading `_`, and a
/// reserved word a trailing `_`: `get-tiny-image` → `get_tiny_image`, `v2.search` →
/// `v2_search`, `3d` → `_3d`, `if` → `if_`. `None` for the empty name.
pub fn mcp_tool_identifier(name: &str) -> Option<String> {
    if name.is_empty() {
        return None;
    }
    let mut identifier = identifier_from(name);
    if is_reserved(&identifier) {
        identifier.push('_');
    }
    Some(identifier)
}

/// The registry entries of the tools `tools_list` (a `tools/list` result) lists for the server
/// `server`; see the module documentation.
pub fn import_mcp_tools(
    server: &str,
    tools_list: &Value,
    options: &McpImportOptions,
) -> Result<McpImport, RegistryError> {
    let root = JsonPath::root();
    if !is_identifier(server) || is_reserved(server) {
        let message = format!("the server name `{server}` is not an identifier a program can use");
        let issue = RegistryIssue::error(codes::INVALID_TOOL_NAME, root, message)
            .with_help("name the server with letters, digits and `_`, such as `github`");
        return Err(RegistryError { issues: vec![issue] });
    }
    let Some(tools) = tools_list.get("tools").and_then(Value::as_array) else {
        let message = "a `tools/list` result needs a `tools` array";
        return Err(RegistryError {
            issues: vec![RegistryIssue::error(codes::REGISTRY_BAD_FIELD, root, message)],
        });
    };
    let mut entries = Vec::new();
    let mut warnings = Vec::new();
    let mut errors = Vec::new();
    let mut mapped: BTreeMap<String, (&str, JsonPath)> = BTreeMap::new();
    for (i, tool) in tools.iter().enumerate() {
        let path = root.key("tools").index(i);
        let entry = match entry(server, tool, &path, options) {
            Ok((entry, found)) => {
                warnings.extend(found);
                entry
            }
            Err(issues) => {
                leave_out(tool, &path, issues, options.strict, &mut warnings, &mut errors);
                continue;
            }
        };
        let original = tool["name"].as_str().unwrap_or_default();
        let name = entry["name"].as_str().unwrap_or_default().to_owned();
        if let Some((earlier, earlier_path)) = mapped.get(&name) {
            let message = format!("`{original}` and `{earlier}` (at {earlier_path}) both map to `{name}`");
            let issue = RegistryIssue::error(codes::MAPPED_TOOL_NAMES_COLLIDE, path.key("name"), message)
                .with_help("name the tool in a registry file of the host's, or ask the server to rename one");
            errors.push(issue);
            continue;
        }
        mapped.insert(name, (original, path));
        entries.push(entry);
    }
    if !errors.is_empty() {
        return Err(RegistryError { issues: errors });
    }
    Ok(McpImport { entries, warnings })
}

/// The registry entry of one listed tool, checked by importing it as the registry will; the
/// tool's findings when it does not import, the warnings about it when it does.
fn entry(
    server: &str,
    tool: &Value,
    path: &JsonPath,
    options: &McpImportOptions,
) -> Result<(Value, Vec<RegistryIssue>), Vec<RegistryIssue>> {
    let name_at = path.key("name");
    let Some(object) = tool.as_object() else {
        return Err(vec![RegistryIssue::error(
            codes::REGISTRY_BAD_FIELD,
            path.clone(),
            "a tool must be a JSON object",
        )]);
    };
    let Some(original) = object.get("name").and_then(Value::as_str) else {
        return Err(vec![RegistryIssue::error(
            codes::REGISTRY_BAD_FIELD,
            name_at,
            "a tool needs a string `name`",
        )]);
    };
    let Some(identifier) = mcp_tool_identifier(original) else {
        return Err(vec![RegistryIssue::error(
            codes::INVALID_TOOL_NAME,
            name_at,
            "the tool's name is empty",
        )]);
    };
    let mut entry: Map<String, Value> = object.clone();
    entry.insert("name".into(), Value::from(format!("{server}.{identifier}")));
    entry.insert("x-runlet-mcp".into(), serde_json::json!({"server": server, "name": original}));
    entry.insert("execution".into(), Value::from(execution(object, options).as_str()));
    let entry = Value::Object(entry);
    let mut issues = Vec::new();
    let mut arena = SchemaArena::new();
    read_tool(&mut arena, &options.registry.import, &entry, path, &mut issues);
    if issues.iter().any(RegistryIssue::is_error) {
        return Err(issues);
    }
    Ok((entry, issues))
}

/// The execution class of a listed tool: its annotations' when the host trusts them, else the
/// host's default.
fn execution(tool: &Map<String, Value>, options: &McpImportOptions) -> ExecutionClass {
    let hint = |key: &str| tool.get("annotations").and_then(|a| a.get(key)) == Some(&Value::Bool(true));
    match options.trust_annotations {
        true if hint("readOnlyHint") => ExecutionClass::Pure,
        true if hint("idempotentHint") => ExecutionClass::Idempotent,
        _ => options.default_execution,
    }
}

/// Records a tool that did not import: a warning naming it and the reason (every finding as
/// help), or, when `strict`, its findings as errors of the import.
fn leave_out(
    tool: &Value,
    path: &JsonPath,
    issues: Vec<RegistryIssue>,
    strict: bool,
    warnings: &mut Vec<RegistryIssue>,
    errors: &mut Vec<RegistryIssue>,
) {
    if strict {
        errors.extend(issues.into_iter().filter(RegistryIssue::is_error));
        return;
    }
    let name =
        tool.get("name").and_then(Value::as_str).map_or_else(|| format!("at {path}"), |n| format!("`{n}`"));
    let failures: Vec<&RegistryIssue> = issues.iter().filter(|issue| issue.is_error()).collect();
    let reason = failures.first().map_or("", |issue| issue.message.as_str());
    let message = format!("the tool {name} was left out: {reason}");
    let mut warning = RegistryIssue::warning(codes::TOOL_LEFT_OUT, path.clone(), message);
    warning.help =
        failures.iter().map(|issue| format!("{} at {}: {}", issue.code, issue.path, issue.message)).collect();
    warnings.push(warning);
}
