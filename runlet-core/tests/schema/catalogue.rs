//! The registry codes' catalogue entries: each `## Wrong` registry reports its code, and each
//! `## Right` registry loads without errors and without that code.

use runlet::diag::{Code, catalogue, codes};
use runlet::registry::{McpImportOptions, Registry, RegistryOptions, UnsafeToolPolicy, import_mcp_tools};
use runlet::schema::{ImportOptions, RegistryIssue, UnsupportedKeywords};

/// The first ```json block after `heading`.
fn example<'a>(text: &'a str, heading: &str) -> &'a str {
    let section = &text[text.find(heading).unwrap_or_else(|| panic!("no {heading}"))..];
    let start = section.find("```json\n").expect("a json block") + "```json\n".len();
    let end = section[start..].find("```").expect("a closed block");
    &section[start..start + end]
}

/// The options under which a code's examples are meant.
fn options_for(code: Code) -> RegistryOptions {
    let mut options = RegistryOptions::default();
    match code {
        codes::SCHEMA_KEYWORD_DROPPED => {
            options.import.unsupported_keywords = UnsupportedKeywords::DropConstraints
        }
        codes::UNION_WIDENED_TO_ANY => options.import.max_union_variants = 4,
        codes::SCHEMA_TOO_DEEP => options.import = ImportOptions { max_depth: 4, ..ImportOptions::default() },
        codes::UNSAFE_TOOL_PROHIBITED => options.unsafe_tools = UnsafeToolPolicy::Prohibit,
        _ => {}
    }
    options
}

/// Whether `text` loads, and its findings; the examples of a code of MCP import are a server's
/// `tools/list` result, imported as server `server`.
fn findings(code: Code, text: &str, options: &RegistryOptions) -> (bool, Vec<RegistryIssue>) {
    if code == codes::TOOL_LEFT_OUT {
        let listed: serde_json::Value = serde_json::from_str(text).expect("a JSON example");
        let options = McpImportOptions { registry: *options, ..McpImportOptions::default() };
        return match import_mcp_tools("server", &listed, &options) {
            Ok(import) => (true, import.warnings),
            Err(error) => (false, error.issues),
        };
    }
    match Registry::from_json_str(text, options) {
        Ok(loaded) => (true, loaded.warnings),
        Err(error) => (false, error.issues),
    }
}

#[test]
fn registry_code_examples_show_the_code() {
    for code in codes::HOST.iter().copied().filter(|c| c.number() < 8100) {
        let entry = catalogue::of(code).unwrap_or_else(|| panic!("{code} has no catalogue entry"));
        let options = options_for(code);
        let (_, wrong) = findings(code, example(entry.text, "## Wrong"), &options);
        assert!(
            wrong.iter().any(|i| i.code == code),
            "{code}: the Wrong example does not report it: {wrong:?}"
        );
        let (loaded, right) = findings(code, example(entry.text, "## Right"), &options);
        assert!(loaded, "{code}: the Right example does not load: {right:?}");
        assert!(right.iter().all(|i| i.code != code), "{code}: the Right example still reports it");
    }
}
