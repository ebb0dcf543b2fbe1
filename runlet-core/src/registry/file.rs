//! The registry file (INTERFACES.md §2): a superset of an MCP `tools/list` result with `tools`
//! and optional `inputs`, parsed into a [`Registry`] with findings that point into the text.

use serde_json::{Map, Value};

use crate::diag::{Span, codes};

use super::{LoadedRegistry, Registry, RegistryBuilder, RegistryOptions};
use crate::schema::fields::Fields;
use crate::schema::{JsonPath, RegistryError, RegistryIssue};
use crate::stdlib::Prelude;

/// Top-level fields. `nextCursor` and `_meta` are MCP's and are accepted and not used.
const FILE_FIELDS: &[&str] = &["tools", "inputs", "resource_groups", "prelude", "nextCursor", "_meta"];

impl Registry {
    /// Loads a registry file's text. Findings carry JSON paths; turn them into diagnostics
    /// about `text` with [`RegistryIssue::to_diagnostic`].
    pub fn from_json_str(text: &str, options: &RegistryOptions) -> Result<LoadedRegistry, RegistryError> {
        match serde_json::from_str::<Value>(text) {
            Ok(json) => Registry::from_json(&json, options),
            Err(error) => {
                let message = format!("the registry file is not valid JSON: {error}");
                let issue = RegistryIssue::error(codes::REGISTRY_NOT_JSON, JsonPath::root(), message)
                    .at(error_offset(text, error.line(), error.column()));
                Err(RegistryError { issues: vec![issue] })
            }
        }
    }

    /// Loads a parsed registry file.
    pub fn from_json(json: &Value, options: &RegistryOptions) -> Result<LoadedRegistry, RegistryError> {
        let mut issues = Vec::new();
        let (tools, inputs) = top_level(json, &mut issues)?;
        let groups = resource_groups(json, &mut issues);
        let mut builder = RegistryBuilder::new(*options);
        if let Some(prelude) = prelude_field(json, &mut issues) {
            builder.prelude(prelude);
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
        builder.build()
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

/// The byte offset of serde_json's 1-based line and byte column in `text`.
fn error_offset(text: &str, line: usize, column: usize) -> Span {
    let line_start: usize = text.split_inclusive('\n').take(line.saturating_sub(1)).map(str::len).sum();
    let mut offset = (line_start + column.saturating_sub(1)).min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    Span::at(offset as u32)
}
