//! Golden diagnostics for registries with problems: each case under `bad/` rendered as the text
//! diagnostics a host shows, pointing into the registry file.

use std::collections::BTreeSet;

use runlet::diag::{Code, codes, render_text};
use runlet::registry::{McpImportOptions, Registry, RegistryOptions, UnsafeToolPolicy, import_mcp_tools};
use runlet::schema::{ImportOptions, RegistryIssue};

use crate::read;

fn issues(source: &str, options: &RegistryOptions) -> Vec<RegistryIssue> {
    match Registry::from_json_str(source, options) {
        Ok(loaded) => loaded.warnings,
        Err(error) => error.issues,
    }
}

/// Renders the findings of `bad/{case}.json` and returns the codes they carry.
fn golden_with(case: &str, options: &RegistryOptions) -> BTreeSet<Code> {
    let source = read(&format!("bad/{case}.json"));
    let issues = issues(&source, options);
    assert!(!issues.is_empty(), "{case} has no findings");
    let diagnostics: Vec<_> = issues.iter().map(|i| i.to_diagnostic(&source)).collect();
    insta::assert_snapshot!(case, render_text(&source, &format!("{case}.json"), &diagnostics));
    issues.iter().map(|i| i.code).collect()
}

fn golden(case: &str) -> BTreeSet<Code> {
    golden_with(case, &RegistryOptions::default())
}

#[test]
fn unsupported_keywords() {
    golden("unsupported_keywords");
}

#[test]
fn not_json() {
    golden("not_json");
}

/// Registry JSON is read as strictly as host JSON: each of these is refused with Runlet's own
/// message naming the JSON path, not read last-wins or approximated.
#[test]
fn strict_json() {
    for case in [
        "duplicate_keys",
        "duplicate_prelude",
        "nested_duplicate_key",
        "number_overflow",
        "number_underflow",
        "byte_order_mark",
        "lone_surrogate",
    ] {
        golden(case);
    }
}

/// Names compare in NFC, and names that only invisible characters tell apart are refused.
#[test]
fn confusable_names() {
    golden("confusable_names");
}

#[test]
fn jsonrpc_envelope() {
    golden("jsonrpc_envelope");
}

#[test]
fn bad_fields() {
    golden("bad_fields");
}

#[test]
fn bad_tool_names() {
    golden("bad_tool_names");
}

#[test]
fn bad_execution() {
    golden("bad_execution");
}

#[test]
fn bad_permits() {
    let codes = golden("bad_permits");
    assert_eq!(codes, BTreeSet::from([codes::REGISTRY_BAD_FIELD]));
}

#[test]
fn permit_declarations_load_and_leave_the_digest_alone() {
    let with = r#"{"resource_groups": {"tenant": 4}, "tools": [
        {"name": "crm.read", "params": [], "resource_group": "tenant", "max_concurrency": 2}]}"#;
    let without = r#"{"tools": [{"name": "crm.read", "params": []}]}"#;
    let options = RegistryOptions::default();
    let with = Registry::from_json_str(with, &options).expect("loads").registry;
    let without = Registry::from_json_str(without, &options).expect("loads").registry;
    let tool = with.tool(with.tool_named("crm.read").expect("tool"));
    assert_eq!((tool.max_concurrency, tool.resource_group.as_deref()), (Some(2), Some("tenant")));
    assert_eq!(with.resource_groups().get("tenant"), Some(&4));
    assert_eq!(with.digest(), without.digest(), "permits are scheduling policy, not identity");
}

/// The name a call goes out under is part of a tool's identity: it enters the digest.
#[test]
fn the_call_name_enters_the_digest() {
    let entry = |origin: &str| format!(r#"{{"tools": [{{"name": "srv.get_env", "params": []{origin}}}]}}"#);
    let digest = |text: &str| {
        let loaded = Registry::from_json_str(text, &RegistryOptions::default()).expect("loads");
        assert_eq!(loaded.warnings, []);
        loaded.registry.digest().clone()
    };
    let plain = digest(&entry(""));
    let hyphen = digest(&entry(r#", "x-runlet-mcp": {"server": "srv", "name": "get-env"}"#));
    let dotted = digest(&entry(r#", "x-runlet-mcp": {"server": "srv", "name": "get.env"}"#));
    let other_server = digest(&entry(r#", "x-runlet-mcp": {"server": "other", "name": "get-env"}"#));
    assert_eq!(BTreeSet::from([&plain, &hyphen, &dotted, &other_server]).len(), 4);
    let mapped = Registry::from_json_str(
        r#"{"tools": [{"name": "get-env", "params": []}]}"#,
        &RegistryOptions::default(),
    )
    .expect("loads with a warning");
    let tool = mapped.registry.tool(mapped.registry.tool_named("get_env").expect("mapped"));
    assert_eq!(tool.call_name(), "get-env");
    assert_eq!(mapped.warnings.iter().map(|w| w.code).collect::<Vec<_>>(), [codes::TOOL_NAME_MAPPED]);
}

#[test]
fn overlapping_shapes() {
    golden("overlapping_shapes");
}

#[test]
fn bad_schemas() {
    golden("bad_schemas");
}

#[test]
fn bad_refs() {
    golden("bad_refs");
}

#[test]
fn bad_discriminators() {
    golden("bad_discriminators");
}

#[test]
fn bad_params() {
    golden("bad_params");
}

#[test]
fn bad_inputs() {
    golden("bad_inputs");
}

#[test]
fn unknown_annotations() {
    golden("unknown_annotations");
}

#[test]
fn unsafe_prohibited() {
    golden_with(
        "unsafe_prohibited",
        &RegistryOptions { unsafe_tools: UnsafeToolPolicy::Prohibit, ..Default::default() },
    );
}

#[test]
fn too_deep() {
    let import = ImportOptions { max_depth: 4, ..ImportOptions::default() };
    golden_with("too_deep", &RegistryOptions { import, ..Default::default() });
}

/// The findings of importing `bad/{case}.json` as the `tools/list` result of server `srv`,
/// rendered as text pointing into it, and their codes.
fn mcp_golden(case: &str, options: &McpImportOptions) -> BTreeSet<Code> {
    let source = read(&format!("bad/{case}.json"));
    let listed: serde_json::Value = serde_json::from_str(&source).expect("JSON");
    let issues = match import_mcp_tools("srv", &listed, options) {
        Ok(import) => import.warnings,
        Err(error) => error.issues,
    };
    let diagnostics: Vec<_> = issues.iter().map(|i| i.to_diagnostic(&source)).collect();
    insta::assert_snapshot!(case, render_text(&source, &format!("{case}.json"), &diagnostics));
    issues.iter().map(|i| i.code).collect()
}

/// A tool that does not import is left out with a warning naming it and every reason; the
/// others import (`get-sum` as `srv.get_sum`), with their own warnings.
#[test]
fn mcp_tools_left_out() {
    let source = read("bad/mcp_tools_left_out.json");
    let listed: serde_json::Value = serde_json::from_str(&source).expect("JSON");
    let import = import_mcp_tools("srv", &listed, &McpImportOptions::default()).expect("imports");
    let names: Vec<&str> = import.entries.iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["srv.get_sum"]);
    let codes = mcp_golden("mcp_tools_left_out", &McpImportOptions::default());
    assert_eq!(codes, BTreeSet::from([codes::TOOL_LEFT_OUT]));
}

/// With `strict`, the same result is refused with the left-out tools' own errors.
#[test]
fn mcp_strict_import_refuses_the_server() {
    let source = read("bad/mcp_tools_left_out.json");
    let listed: serde_json::Value = serde_json::from_str(&source).expect("JSON");
    let strict = McpImportOptions { strict: true, ..McpImportOptions::default() };
    let error = import_mcp_tools("srv", &listed, &strict).expect_err("strict");
    let codes: BTreeSet<Code> = error.issues.iter().map(|i| i.code).collect();
    assert_eq!(
        codes,
        BTreeSet::from([
            codes::INVALID_TOOL_NAME,
            codes::UNSUPPORTED_SCHEMA_KEYWORD,
            codes::INVALID_SCHEMA,
            codes::INPUT_SCHEMA_NOT_OBJECT
        ])
    );
}

/// `get-env` and `get.env` both map to `srv.get_env`: an error naming both.
#[test]
fn mcp_names_collide() {
    let codes = mcp_golden("mcp_names_collide", &McpImportOptions::default());
    assert_eq!(codes, BTreeSet::from([codes::MAPPED_TOOL_NAMES_COLLIDE]));
}

#[test]
fn mcp_server_names_are_identifiers() {
    let listed = serde_json::json!({"tools": []});
    let error =
        import_mcp_tools("my-server", &listed, &McpImportOptions::default()).expect_err("not an identifier");
    assert_eq!(error.issues[0].code, codes::INVALID_TOOL_NAME);
    let error = import_mcp_tools("srv", &serde_json::json!({"result": {}}), &McpImportOptions::default())
        .expect_err("no tools");
    assert_eq!(error.issues[0].code, codes::REGISTRY_BAD_FIELD);
}

/// Every registry code is shown by at least one golden case (the widening and dropped-keyword
/// warnings by the fixture snapshots, the prelude's codes by the stdlib diagnostics).
#[test]
fn every_registry_code_has_a_golden_case() {
    let mut seen: BTreeSet<Code> = BTreeSet::new();
    for case in [
        "unsupported_keywords",
        "not_json",
        "duplicate_keys",
        "confusable_names",
        "jsonrpc_envelope",
        "bad_fields",
        "bad_tool_names",
        "bad_execution",
        "overlapping_shapes",
        "bad_schemas",
        "bad_refs",
        "bad_discriminators",
        "bad_params",
        "bad_inputs",
        "unknown_annotations",
    ] {
        seen.extend(
            issues(&read(&format!("bad/{case}.json")), &RegistryOptions::default()).iter().map(|i| i.code),
        );
    }
    let prohibit = RegistryOptions { unsafe_tools: UnsafeToolPolicy::Prohibit, ..Default::default() };
    seen.extend(issues(&read("bad/unsafe_prohibited.json"), &prohibit).iter().map(|i| i.code));
    let shallow = RegistryOptions {
        import: ImportOptions { max_depth: 4, ..Default::default() },
        ..Default::default()
    };
    seen.extend(issues(&read("bad/too_deep.json"), &shallow).iter().map(|i| i.code));
    let listed: serde_json::Value = serde_json::from_str(&read("bad/mcp_tools_left_out.json")).expect("JSON");
    let import = import_mcp_tools("srv", &listed, &McpImportOptions::default()).expect("imports");
    seen.extend(import.warnings.iter().map(|i| i.code));
    let shown_elsewhere = [
        codes::SCHEMA_KEYWORD_DROPPED,
        codes::UNION_WIDENED_TO_ANY,
        codes::PRELUDE_NAMESPACE_TAKEN,
        codes::INVALID_PRELUDE,
    ];
    let registry_codes = codes::HOST.iter().filter(|c| c.number() < 8100 && !shown_elsewhere.contains(c));
    let missing: Vec<String> =
        registry_codes.filter(|c| !seen.contains(c)).map(|c| format!("{c} {}", c.name())).collect();
    assert!(missing.is_empty(), "registry codes without a golden case: {missing:?}");
}
