//! Snapshots of the normalized schemas of each registry fixture under `fixtures/` and of the
//! example registries under `examples/`.

use runlet::schema::{ImportOptions, UnsupportedKeywords};

use runlet::registry::RegistryOptions;

use crate::{describe, read};

fn snapshot(name: &str, relative: &str, options: &RegistryOptions) {
    insta::assert_snapshot!(name, describe(&read(relative), options));
}

fn strict(fixture: &str) {
    snapshot(fixture, &format!("fixtures/{fixture}.json"), &RegistryOptions::default());
}

#[test]
fn interfaces_example() {
    strict("interfaces_example");
}

#[test]
fn appendix_a_example_registry() {
    snapshot("appendix_a", "../../../examples/appendix-a/registry.json", &RegistryOptions::default());
}

#[test]
fn appendix_b_example_registry() {
    snapshot("appendix_b", "../../../examples/appendix-b/registry.json", &RegistryOptions::default());
}

#[test]
fn pasted_mcp_tools_list() {
    strict("mcp_tools_list");
}

#[test]
fn recursive_references() {
    strict("recursive");
}

#[test]
fn discriminated_unions() {
    strict("discriminated");
}

#[test]
fn vocabulary() {
    strict("vocabulary");
}

/// Keywords real MCP servers use: exclusive bounds (as inclusive ones, the same values), `format`
/// beside any type, string `propertyNames`, untyped float constants, `type` beside `oneOf`.
#[test]
fn real_world_keywords() {
    strict("real_world_keywords");
}

/// A host that allows dropping constraints loads schemas using them, with a warning each.
#[test]
fn dropped_constraints() {
    let import = ImportOptions {
        unsupported_keywords: UnsupportedKeywords::DropConstraints,
        ..ImportOptions::default()
    };
    snapshot(
        "dropped_constraints",
        "fixtures/dropped_constraints.json",
        &RegistryOptions { import, ..RegistryOptions::default() },
    );
}

/// A union over the configured variant limit widens to any value with a warning.
#[test]
fn union_widened_to_any() {
    let import = ImportOptions { max_union_variants: 3, ..ImportOptions::default() };
    snapshot(
        "union_widened",
        "fixtures/union_widened.json",
        &RegistryOptions { import, ..RegistryOptions::default() },
    );
}
