//! The frozen registry's lookups: roots, full names, longest callable paths, namespaces, the
//! unsafe-tool policy, the digest's coverage, and layering later schemas on the registry's.

use runlet::schema::SchemaArena;

use runlet::registry::{Callable, Registry, RegistryOptions, UnsafeToolPolicy};
use runlet::value::{Value, parse_json};

use crate::read;

fn load(relative: &str, options: &RegistryOptions) -> Registry {
    Registry::from_json_str(&read(relative), options).expect("fixture loads").registry
}

fn appendix_a() -> Registry {
    load("../../../examples/appendix-a/registry.json", &RegistryOptions::default())
}

#[test]
fn roots_and_full_names() {
    let registry = appendix_a();
    assert_eq!(registry.roots().collect::<Vec<_>>(), ["ai", "billing", "crm", "fraud", "shop", "support"]);
    assert!(registry.is_root("crm"));
    assert!(!registry.is_root("customer"));
    let customer = registry.tool_named("crm.customer").expect("registered");
    assert_eq!(registry.tool(customer).name.as_str(), "crm.customer");
    assert_eq!(registry.tool_named("crm"), None);
    assert_eq!(registry.tool_named("crm.customer.email"), None);
    let names: Vec<&str> = registry.tools().map(|(_, t)| t.name.as_str()).collect();
    assert!(names.is_sorted(), "tools are in name order: {names:?}");
}

#[test]
fn longest_callable_path_leaves_projections() {
    let registry = appendix_a();
    let customer = registry.tool_named("crm.customer").expect("registered");
    assert_eq!(
        registry.resolve_callable(&["crm", "customer", "email"]),
        Some(Callable { tool: customer, segments: 2 })
    );
    assert_eq!(registry.resolve_callable(&["crm", "custmer"]), None);
    assert_eq!(registry.namespace(&["crm"]).map(|n| n.members().collect::<Vec<_>>()), Some(vec!["customer"]));
    let nested = load("fixtures/vocabulary.json", &RegistryOptions::default());
    let email = nested.tool_named("vocab.crm.customer.email").expect("registered");
    let path = ["vocab", "crm", "customer", "email", "domain"];
    assert_eq!(nested.resolve_callable(&path), Some(Callable { tool: email, segments: 4 }));
    let customer = nested.tool_named("vocab.crm.customer").expect("registered");
    assert_eq!(nested.resolve_callable(&path[..3]), Some(Callable { tool: customer, segments: 3 }));
}

#[test]
fn unsafe_tools_can_require_a_boundary() {
    let policy = RegistryOptions { unsafe_tools: UnsafeToolPolicy::RequireBoundary, ..Default::default() };
    let registry = load("fixtures/mcp_tools_list.json", &policy);
    assert_eq!(registry.unsafe_tool_policy(), UnsafeToolPolicy::RequireBoundary);
    let delete = registry.tool_named("delete_file").expect("registered");
    let get_me = registry.tool_named("get_me").expect("registered");
    assert!(registry.requires_boundary(delete));
    assert!(!registry.requires_boundary(get_me));
    let allowed = load("fixtures/mcp_tools_list.json", &RegistryOptions::default());
    assert!(!allowed.requires_boundary(delete));
}

/// Replaces `from` with `to` in Appendix A's registry and returns the digest's text.
fn digest_after(from: &str, to: &str) -> String {
    let text = read("../../../examples/appendix-a/registry.json");
    assert!(text.contains(from), "{from} is not in the registry");
    let edited = text.replacen(from, to, 1);
    Registry::from_json_str(&edited, &RegistryOptions::default())
        .expect("edited registry loads")
        .registry
        .digest()
        .to_string()
}

#[test]
fn digest_covers_what_compiles_and_runs_but_not_free_text() {
    let original = appendix_a().digest().to_string();
    assert_eq!(appendix_a().digest().to_string(), original, "loading is deterministic");
    assert_eq!(digest_after("Look up one customer by id.", "Find a customer."), original);
    assert_eq!(digest_after("ISO 3166-1 alpha-2 code.", "Country code."), original);
    assert_eq!(digest_after("\"title\": \"Summarize for a support agent\",", ""), original);
    for (from, to) in [
        ("\"schema_version\": \"4\"", "\"schema_version\": \"5\""),
        ("\"x-runlet-sensitivity\": \"sensitive\", \"x-runlet-aliases\"", "\"x-runlet-aliases\""),
        ("\"e_mail\", ", ""),
        (
            "\"retryable\": true, \"description\": \"Too many",
            "\"retryable\": false, \"description\": \"Too many",
        ),
        ("\"minimum\": 0, \"maximum\": 1", "\"minimum\": 0"),
        ("\"execution\": \"idempotent\"", "\"execution\": \"recoverable\""),
    ] {
        assert_ne!(digest_after(from, to), original, "changing {from} must change the digest");
    }
}

#[test]
fn canonical_form_is_a_value_and_hashes_to_the_digest() {
    let registry = appendix_a();
    let form = registry.canonical_form();
    let Value::Object(fields) = &form else { panic!("the canonical form is an object") };
    assert_eq!(fields.keys().collect::<Vec<_>>(), ["definitions", "format", "inputs", "schemas", "tools"]);
    assert_eq!(&runlet::value::sha256(&form), registry.digest());
}

#[test]
fn later_layers_reuse_registry_schemas() {
    let registry = appendix_a();
    let mut arena = SchemaArena::layered_on(registry.schemas().clone());
    let input = registry.inputs()["customer_id"].schema;
    let summary = registry.tool(registry.tool_named("ai.summarize").expect("registered")).output;
    let inferred = arena.infer(&parse_json(r#""c-42""#).expect("JSON"), 64);
    assert_eq!(inferred.schema, summary, "a plain String is the registry's String node");
    assert_ne!(inferred.schema, input, "the declared input has a length bound");
    let list = arena.infer(&parse_json(r#"["a", "b"]"#).expect("JSON"), 64).schema;
    assert_eq!(arena.display(list).to_string(), "List<String>");
    assert_eq!(registry.schemas().display(summary).to_string(), "String");
}
