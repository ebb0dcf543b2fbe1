//! The `tools/list` results of four public MCP servers (the GitHub server's 117 tools and the
//! filesystem, memory and everything reference servers), read from the shared directory
//! `RUNLET_REAL_TOOLS` names (default: `../shared/real-tools` beside the workspace): each loads
//! as pasted into a registry file, and through `import_mcp_tools` under its server's namespace.
//! Without the files the tests fail when `CI=true`, and say so otherwise.

use std::path::PathBuf;

use runlet::diag::codes;
use runlet::registry::{McpImportOptions, Registry, RegistryOptions, import_mcp_tools};
use runlet::schema::{ExecutionClass, SchemaKind, validate};
use runlet::value::parse_json;

/// The four sets: file, server name, number of tools.
const SETS: [(&str, &str, usize); 4] = [
    ("github-mcp-server.tools.json", "github", 117),
    ("mcp-server-filesystem.tools.json", "filesystem", 14),
    ("mcp-server-memory.tools.json", "memory", 9),
    ("mcp-server-everything.tools.json", "everything", 16),
];

fn directory() -> PathBuf {
    match std::env::var_os("RUNLET_REAL_TOOLS") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/real-tools"),
    }
}

/// The text of one set; `None` (after saying why) when the files are absent outside CI.
fn read_set(file: &str) -> Option<String> {
    let path = directory().join(file);
    match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(error) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("{}: {error} (set RUNLET_REAL_TOOLS to the real-tools directory)", path.display())
        }
        Err(error) => {
            eprintln!("{}: {error}; the real-tools tests need it (they fail when CI=true)", path.display());
            None
        }
    }
}

fn all_sets() -> Option<Vec<(String, &'static str, usize)>> {
    SETS.iter().map(|&(file, server, count)| read_set(file).map(|text| (text, server, count))).collect()
}

#[test]
fn every_set_loads_as_pasted() {
    let Some(sets) = all_sets() else { return };
    for (text, server, count) in &sets {
        let loaded = Registry::from_json_str(text, &RegistryOptions::default())
            .unwrap_or_else(|e| panic!("{server}: {:?}", e.issues));
        assert_eq!(loaded.registry.tool_count(), *count, "{server}");
        let mapped: Vec<_> = loaded.warnings.iter().filter(|w| w.code == codes::TOOL_NAME_MAPPED).collect();
        assert_eq!(mapped.len(), loaded.warnings.len(), "{server}: {:?}", loaded.warnings);
        assert_eq!(mapped.len(), if *server == "everything" { 15 } else { 0 }, "{server}");
    }
    let (everything, _, _) = &sets[3];
    let registry = Registry::from_json_str(everything, &RegistryOptions::default()).unwrap().registry;
    let tool = registry.tool(registry.tool_named("get_tiny_image").expect("mapped in place"));
    assert_eq!(tool.call_name(), "get-tiny-image");
    assert_eq!(tool.mcp.as_ref().and_then(|m| m.server.as_deref()), None);
    let echo = registry.tool(registry.tool_named("echo").expect("an identifier already"));
    assert_eq!((echo.call_name(), echo.mcp.is_none()), ("echo", true));
}

#[test]
fn every_server_imports_under_its_namespace() {
    let Some(sets) = all_sets() else { return };
    let mut entries = Vec::new();
    for (text, server, count) in &sets {
        let listed: serde_json::Value = serde_json::from_str(text).expect("JSON");
        let import = import_mcp_tools(server, &listed, &McpImportOptions::default())
            .unwrap_or_else(|e| panic!("{server}: {:?}", e.issues));
        assert_eq!(import.entries.len(), *count, "{server}");
        assert_eq!(import.warnings, [], "{server}");
        entries.extend(import.entries);
    }
    let file = serde_json::json!({ "tools": entries });
    let loaded =
        Registry::from_json(&file, &RegistryOptions::default()).expect("all four servers load together");
    assert_eq!(loaded.warnings, []);
    let registry = loaded.registry;
    assert_eq!(registry.tool_count(), 117 + 14 + 9 + 16);
    assert_eq!(registry.roots().collect::<Vec<_>>(), ["everything", "filesystem", "github", "memory"]);
    for (mapped, original) in [
        ("everything.get_tiny_image", "get-tiny-image"),
        ("everything.trigger_long_running_operation", "trigger-long-running-operation"),
        ("everything.echo", "echo"),
        ("github.projects_write", "projects_write"),
        ("filesystem.read_text_file", "read_text_file"),
    ] {
        let tool = registry.tool(registry.tool_named(mapped).unwrap_or_else(|| panic!("no {mapped}")));
        assert_eq!(tool.call_name(), original);
        let server = mapped.split('.').next();
        assert_eq!(tool.mcp.as_ref().and_then(|m| m.server.as_deref()), server);
        // Untrusted annotations choose nothing: every tool is the host's default class.
        assert_eq!(tool.execution, ExecutionClass::Unsafe, "{mapped}");
    }
    let names: Vec<&str> = registry.namespace(&["everything"]).unwrap().members().collect();
    assert_eq!(names.iter().filter(|n| n.contains('_')).count(), 15, "{names:?}");
}

#[test]
fn trusted_annotations_choose_execution_classes() {
    let Some(text) = read_set("mcp-server-filesystem.tools.json") else { return };
    let listed: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let options = McpImportOptions { trust_annotations: true, ..McpImportOptions::default() };
    let import = import_mcp_tools("fs", &listed, &options).expect("imports");
    let class = |name: &str| {
        let entry = import.entries.iter().find(|e| e["name"] == name).expect("listed");
        entry["execution"].as_str().map(str::to_owned)
    };
    assert_eq!(class("fs.read_text_file").as_deref(), Some("pure"));
    assert_eq!(class("fs.write_file").as_deref(), Some("idempotent"));
    assert_eq!(class("fs.move_file").as_deref(), Some("unsafe"));
    let at_most_once = McpImportOptions { default_execution: ExecutionClass::AtMostOnce, ..options };
    let import = import_mcp_tools("fs", &listed, &at_most_once).expect("imports");
    let moved = import.entries.iter().find(|e| e["name"] == "fs.move_file").expect("listed");
    assert_eq!(moved["execution"], "at_most_once");
}

/// `projects_write` has `type: "object"` beside a `oneOf` of objects: the union of the three
/// closed reference variants, exactly as the server declares them.
#[test]
fn a_type_beside_one_of_keeps_each_variant() {
    let Some(text) = read_set("github-mcp-server.tools.json") else { return };
    let registry = Registry::from_json_str(&text, &RegistryOptions::default()).expect("loads").registry;
    let arena = registry.schemas();
    let tool = registry.tool(registry.tool_named("projects_write").expect("listed"));
    let SchemaKind::Object(input) = arena.kind(tool.input.object.expect("inputSchema")) else {
        panic!("an object input")
    };
    let SchemaKind::List(items) = arena.kind(input.property("items").expect("items").schema) else {
        panic!("a list")
    };
    let SchemaKind::Union(union) = arena.kind(items.items) else { panic!("a union") };
    let mut required: Vec<Vec<String>> = union
        .variants
        .iter()
        .map(|&v| match arena.kind(v) {
            SchemaKind::Object(o) if o.additional.is_none() => {
                o.properties.iter().filter(|p| p.required).map(|p| p.name.to_string()).collect()
            }
            other => panic!("a closed object, not {other:?}"),
        })
        .collect();
    required.sort();
    assert_eq!(required, [&["issue_number", "item_owner", "item_repo"][..], &["item_id"], &["node_id"]]);
    let schema = tool.input.object.unwrap();
    let accepts = |json: &str| validate(arena, schema, &parse_json(json).unwrap()).map_err(|e| e.to_string());
    let call = |items: &str| {
        format!(
            r#"{{"method": "update_project_items", "owner": "o", "project_number": 1, "items": {items}}}"#
        )
    };
    assert_eq!(accepts(&call(r#"[{"node_id": "PVTI_1"}, {"item_id": 7}]"#)), Ok(()));
    assert!(accepts(&call(r#"[{"node_id": 1}]"#)).is_err());
    assert!(accepts(&call(r#"[{"node_id": "PVTI_1", "item_id": 7}]"#)).is_err());
}

#[test]
fn schemas_of_the_reference_servers() {
    let (Some(memory), Some(everything)) =
        (read_set("mcp-server-memory.tools.json"), read_set("mcp-server-everything.tools.json"))
    else {
        return;
    };
    let memory = Registry::from_json_str(&memory, &RegistryOptions::default()).expect("loads").registry;
    let create = memory.tool(memory.tool_named("create_entities").expect("listed"));
    assert_eq!(
        memory.schemas().display(create.output).to_string(),
        "{ entities: List<{ entityType: String, name: String, observations: List<String> }> }"
    );
    let everything =
        Registry::from_json_str(&everything, &RegistryOptions::default()).expect("loads").registry;
    let sum = everything.tool(everything.tool_named("get_sum").expect("mapped"));
    assert_eq!(
        everything.schemas().display(sum.input.object.unwrap()).to_string(),
        "{ a: Number, b: Number, .. }"
    );
}
