//! The registry file (INTERFACES.md §2): a superset of an MCP `tools/list` result with `tools`
//! and optional `inputs`, parsed into a [`Registry`] with findings that point into the text.

use serde_json::{Map, Value};

use crate::diag::{Span, codes};

use super::{LoadedRegistry, Registry, RegistryBuilder, RegistryOptions};
use crate::schema::fields::Fields;
use crate::schema::{JsonPath, RegistryError, RegistryIssue};
use crate::stdlib::Prelude;
use crate::value::{JsonError, JsonErrorKind, parse_json_document};

/// How deep arrays and objects of a registry file nest at most (`serde_json`'s own limit).
const MAX_FILE_DEPTH: usize = 128;

/// Top-level fields. `nextCursor` and `_meta` are MCP's and are accepted and not used;
/// `mcp_servers` records the MCP servers the tools come from.
const FILE_FIELDS: &[&str] =
    &["tools", "inputs", "resource_groups", "prelude", "mcp_servers", "nextCursor", "_meta"];

impl Registry {
    /// Loads a registry file's text. Findings carry JSON paths; turn them into diagnostics
    /// about `text` with [`RegistryIssue::to_diagnostic`].
    ///
    /// The text is read as strictly as host JSON (`value::parse_json_document`): a duplicate key
    /// at any depth (`RL8023`), a byte order mark, a lone surrogate, or a number that overflows
    /// or underflows binary64 (`RL8001`) is an error naming its JSON path, never a silent
    /// last-wins or approximation.
    pub fn from_json_str(text: &str, options: &RegistryOptions) -> Result<LoadedRegistry, RegistryError> {
        match parse_json_document(text, MAX_FILE_DEPTH) {
            Ok(json) => Registry::from_json(&json, options),
            Err(error) => Err(RegistryError { issues: vec![not_json(text, &error)] }),
        }
    }

    /// Loads a parsed registry file, which the registry keeps ([`Registry::file`]).
    pub fn from_json(json: &Value, options: &RegistryOptions) -> Result<LoadedRegistry, RegistryError> {
        let mut issues = Vec::new();
        let (tools, inputs) = top_level(json, &mut issues)?;
        let groups = resource_groups(json, &mut issues);
        let mut builder = RegistryBuilder::new(*options);
        if let Some(prelude) = prelude_field(json, &mut issues) {
            builder.prelude(prelude);
        }
        if let Some(servers) = mcp_servers(json, &mut issues) {
            builder.mcp_servers(servers);
        }
        builder.extend_issues(issues);
        for (name, cap) in groups {
            builder.add_resource_group(&name, cap);
        }
        for (i, tool) in tools.into_iter().flatten().enumerate() {
            builder.add_tool_json(tool, JsonPath::root().key("tools").index(i));
        }
        for (name, schema) in inputs.into_iter().flatten() {
            builder.add_input_json(name, schema, JsonPath::root().key("inputs").key(name));
        }
        let mut loaded = builder.build()?;
        loaded.registry.file = Some(std::sync::Arc::new(json.clone()));
        Ok(loaded)
    }
}

/// The `tools` array and `inputs` object of a registry file.
type TopLevel<'a> = (Option<&'a Vec<Value>>, Option<&'a Map<String, Value>>);

/// The top-level fields, reporting what is wrong around them; a pasted JSON-RPC response is an
/// error of its own.
fn top_level<'a>(json: &'a Value, issues: &mut Vec<RegistryIssue>) -> Result<TopLevel<'a>, RegistryError> {
    let root = JsonPath::root();
    let Some(mut fields) = Fields::of(json, &root, issues, "a registry file") else {
        return Ok((None, None));
    };
    if fields.get("tools").is_none() && json.pointer("/result/tools").is_some() {
        let message = "this is a JSON-RPC response: the registry is its `result` object";
        let issue = RegistryIssue::error(codes::REGISTRY_BAD_FIELD, root.clone(), message)
            .with_help("save the value of `result` as the registry file");
        return Err(RegistryError { issues: vec![issue] });
    }
    fields.reject_unknown(FILE_FIELDS, "a registry file");
    fields.string("nextCursor");
    if fields.get("tools").is_none() {
        fields.issues.push(RegistryIssue::error(
            codes::REGISTRY_BAD_FIELD,
            root.clone(),
            "a registry file needs `tools`",
        ));
    }
    Ok((fields.array("tools"), fields.object("inputs")))
}

/// The `resource_groups` object: group names and their caps (whole numbers of at least 1).
fn resource_groups(json: &Value, issues: &mut Vec<RegistryIssue>) -> Vec<(String, u64)> {
    let path = JsonPath::root().key("resource_groups");
    let Some(groups) = json.get("resource_groups") else { return Vec::new() };
    let Some(mut fields) = Fields::of(groups, &path, issues, "`resource_groups`") else { return Vec::new() };
    let names: Vec<String> = fields.keys().cloned().collect();
    names.into_iter().filter_map(|name| fields.positive_integer(&name).map(|cap| (name, cap))).collect()
}

/// The `prelude` field: `none`, `deterministic` or `standard` (docs/STDLIB.md); absent is none.
fn prelude_field(json: &Value, issues: &mut Vec<RegistryIssue>) -> Option<Prelude> {
    let field = json.get("prelude")?;
    let chosen = field.as_str().and_then(Prelude::parse);
    if chosen.is_none() {
        let message = format!("`prelude` is {field}, which is not a prelude");
        let names = Prelude::ALL.iter().map(|p| format!("\"{}\"", p.as_str()));
        issues.push(
            RegistryIssue::error(codes::INVALID_PRELUDE, JsonPath::root().key("prelude"), message)
                .with_help("choose the intrinsics the registry offers")
                .with_candidates(names),
        );
    }
    chosen
}

/// The `mcp_servers` object: server name → `{protocol_version, implementation?: {name,
/// version}}`, as a value for the digest.
fn mcp_servers(json: &Value, issues: &mut Vec<RegistryIssue>) -> Option<crate::value::Value> {
    let servers = json.get("mcp_servers")?;
    let path = JsonPath::root().key("mcp_servers");
    let well_formed = servers.as_object().is_some_and(|servers| {
        servers.values().all(|server| {
            server.get("protocol_version").is_some_and(Value::is_string)
                && server.as_object().is_some_and(|fields| {
                    fields.keys().all(|key| key == "protocol_version" || key == "implementation")
                })
                && server.get("implementation").is_none_or(|implementation| {
                    ["name", "version"]
                        .iter()
                        .all(|key| implementation.get(key).is_some_and(Value::is_string))
                })
        })
    });
    let value = well_formed.then(|| crate::value::parse_json(&servers.to_string()).ok()).flatten();
    if value.is_none() {
        let message = "`mcp_servers` is an object of server names to `{\"protocol_version\": …, \"implementation\": {\"name\": …, \"version\": …}}`";
        issues.push(RegistryIssue::error(codes::REGISTRY_BAD_FIELD, path, message));
    }
    value
}

/// The finding for registry text the strict reader rejected, at the problem's offset and path.
fn not_json(text: &str, error: &JsonError) -> RegistryIssue {
    let (code, message) = match &error.kind {
        JsonErrorKind::DuplicateKey(_) => (codes::REGISTRY_DUPLICATE_KEY, error.describe(text)),
        _ => (
            codes::REGISTRY_NOT_JSON,
            format!("the registry file is not valid JSON: {}", error.describe(text)),
        ),
    };
    let offset = u32::try_from(error.offset).unwrap_or(u32::MAX);
    RegistryIssue::error(code, JsonPath::from(error.path.as_slice()), message).at(Span::at(offset))
}
