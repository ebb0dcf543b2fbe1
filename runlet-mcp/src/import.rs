//! A server's `tools/list` as registry file entries (INTERFACES.md §2, §4.2): each tool under the
//! server's namespace with a mapped name, its schemas as given, and the execution class the
//! host's policy assigns. A tool that does not load is left out with a warning, unless the host
//! asks for strict import.

use runlet::diag::codes;
use runlet::registry::{Registry, RegistryOptions};
use runlet::schema::{JsonPath, RegistryIssue, is_identifier, is_reserved};
use serde_json::{Map, Value, json};

use crate::config::ClassPolicy;

/// The registry entries of one server's tools.
#[derive(Debug, Default)]
pub(crate) struct Imported {
    /// Registry file tool entries, named `SERVER.tool`.
    pub entries: Vec<Value>,
    /// `(registry name, the server's own name)` of each entry, for the call.
    pub names: Vec<(String, String)>,
    /// Tools left out or renamed, and why.
    pub warnings: Vec<RegistryIssue>,
    /// Findings that fail the import (a collision; any finding under strict import).
    pub errors: Vec<RegistryIssue>,
}

/// The Runlet identifier for a tool name: every character that cannot continue an identifier
/// becomes `_`, a leading character that cannot start one gets a `_` before it, and a reserved
/// word a `_` after it.
pub(crate) fn map_name(name: &str) -> String {
    let mut mapped: String = name.chars().map(|c| if unicode_continue(c) { c } else { '_' }).collect();
    if !mapped.starts_with(|c: char| c == '_' || is_identifier(&c.to_string())) {
        mapped.insert(0, '_');
    }
    if is_reserved(&mapped) {
        mapped.push('_');
    }
    mapped
}

fn unicode_continue(c: char) -> bool {
    is_identifier(&format!("a{c}"))
}

/// The entries for the tools of `server` (MCP `Tool` objects, as `tools/list` lists them).
pub(crate) fn import_tools(server: &str, tools: &[Value], policy: &ClassPolicy, strict: bool) -> Imported {
    let mut imported = Imported::default();
    let mut taken: Vec<(String, String)> = Vec::new();
    for (i, tool) in tools.iter().enumerate() {
        let path = JsonPath::root().key("tools").index(i);
        let Some(original) = tool.get("name").and_then(Value::as_str) else {
            let issue = RegistryIssue::error(
                codes::REGISTRY_BAD_FIELD,
                path,
                format!("a tool of `{server}` has no name"),
            );
            leave_out(&mut imported, issue, strict);
            continue;
        };
        let mapped = map_name(original);
        if let Some((_, earlier)) = taken.iter().find(|(name, _)| *name == mapped) {
            let message = format!(
                "the tools `{earlier}` and `{original}` of `{server}` both map to `{server}.{mapped}`"
            );
            imported.errors.push(RegistryIssue::error(codes::DUPLICATE_TOOL, path.key("name"), message));
            continue;
        }
        taken.push((mapped.clone(), original.to_owned()));
        let entry = entry(server, &mapped, tool, policy);
        if let Err(error) =
            Registry::from_json(&json!({"tools": [entry.clone()]}), &RegistryOptions::default())
        {
            for issue in error.issues.into_iter().filter(RegistryIssue::is_error) {
                let message = format!("the tool `{original}` of `{server}` is left out: {}", issue.message);
                leave_out(&mut imported, RegistryIssue::warning(issue.code, path.clone(), message), strict);
            }
            continue;
        }
        imported.names.push((format!("{server}.{mapped}"), original.to_owned()));
        imported.entries.push(entry);
    }
    imported
}

fn leave_out(imported: &mut Imported, issue: RegistryIssue, strict: bool) {
    if strict {
        imported.errors.push(RegistryIssue::error(issue.code, issue.path, issue.message));
    } else {
        imported.warnings.push(issue);
    }
}

/// One registry entry: the MCP fields Runlet reads, under the mapped name, with the class.
fn entry(server: &str, mapped: &str, tool: &Value, policy: &ClassPolicy) -> Value {
    let mut entry = Map::new();
    entry.insert("name".into(), Value::from(format!("{server}.{mapped}")));
    for key in ["title", "description", "inputSchema", "outputSchema"] {
        if let Some(value) = tool.get(key) {
            entry.insert(key.into(), value.clone());
        }
    }
    let class = policy.class_of(server, tool.get("annotations"));
    entry.insert("execution".into(), Value::from(class.as_str()));
    Value::Object(entry)
}

#[cfg(test)]
mod tests {
    use super::*;
    use runlet::schema::ExecutionClass;

    #[test]
    fn names_become_identifiers() {
        assert_eq!(map_name("read_file"), "read_file");
        assert_eq!(map_name("get-tiny-image"), "get_tiny_image");
        assert_eq!(map_name("files.read"), "files_read");
        assert_eq!(map_name("3d"), "_3d");
        assert_eq!(map_name("for"), "for_");
    }

    #[test]
    fn a_bad_tool_is_left_out_and_collisions_are_errors() {
        let tools = vec![
            json!({"name": "echo", "inputSchema": {"type": "object"}}),
            json!({"name": "bad", "inputSchema": {"type": "object", "not": {}}}),
            json!({"name": "get-sum", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}}),
        ];
        let policy = ClassPolicy { trusted: vec!["s".into()], default: ExecutionClass::Unsafe };
        let imported = import_tools("s", &tools, &policy, false);
        assert_eq!(
            imported.names,
            [("s.echo".into(), "echo".into()), ("s.get_sum".into(), "get-sum".into())]
        );
        assert_eq!(imported.entries[1]["execution"], "pure");
        assert_eq!(imported.entries[0]["execution"], "unsafe");
        assert!(imported.errors.is_empty());
        assert!(
            imported.warnings.iter().any(|w| w.message.contains("`bad` of `s` is left out")),
            "{:?}",
            imported.warnings
        );
        let strict = import_tools("s", &tools, &policy, true);
        assert!(!strict.errors.is_empty());
        let twins =
            vec![json!({"name": "a-b", "inputSchema": {}}), json!({"name": "a.b", "inputSchema": {}})];
        let collided = import_tools("s", &twins, &policy, false);
        assert!(collided.errors[0].message.contains("`a-b` and `a.b` of `s` both map to `s.a_b`"));
    }
}
