//! Golden diagnostics for misusing intrinsics: misspelt names, wrong arity and types, a literal
//! pattern that does not compile, an object where positional arguments go, a binding named like
//! a prelude namespace, and registries that take a prelude namespace or name no prelude.

use runlet::analyze::hir::ExprKind;
use runlet::analyze::{AnalyzeOptions, Inputs, analyze};
use runlet::diag::render_text;
use runlet::registry::{Registry, RegistryOptions};

use crate::support::{REGISTRY, registry};

fn check(name: &str, source: &str) {
    let analysis = analyze(source, &registry(REGISTRY), &Inputs::new(), &AnalyzeOptions::default());
    insta::assert_snapshot!(name, render_text(source, "main.run", &analysis.diagnostics));
}

#[test]
fn misspelt_intrinsics_get_the_closest_function() {
    check("misspelt", "a = text.uper(\"x\")\nb = list.lenght([1])\nc = txt.upper(\"x\")\nreturn [a, b, c]\n");
}

#[test]
fn arity_and_argument_types_are_checked_like_tool_calls() {
    check(
        "arity_and_types",
        "a = text.length(\"x\", \"y\")\nb = text.slice(\"abc\")\nc = list.length(\"abc\")\nd = number.floor(\"1.5\")\nreturn [a, b, c, d]\n",
    );
}

#[test]
fn positional_intrinsics_reject_one_object_with_a_fix() {
    check("object_argument", "return text.split({ text: \"a,b\", separator: \",\" })\n");
}

#[test]
fn literal_patterns_are_compiled_while_checking() {
    check(
        "literal_patterns",
        "a = regex.matches(\"ab(c\", \"abc\")\nb = regex.find(\"(\\\\w)\\\\1\", \"aa\")\nc = regex.replace(\"x{1000}{1000}\", \"x\", \"y\")\nreturn [a, b, c]\n",
    );
}

#[test]
fn prelude_namespaces_are_registry_roots() {
    check("namespace_binding", "text = \"hello\"\nreturn text.upper(text)\n");
}

#[test]
fn intrinsic_results_are_typed_from_their_schemas() {
    check(
        "typed_results",
        "n = text.length(\"abc\")\nparts = text.split(\"a,b\", \",\")\nreturn { upper: n.upper, first: parts[0].size, ok: text.upper(n) }\n",
    );
}

fn registry_errors(json: &str) -> String {
    let error =
        Registry::from_json_str(json, &RegistryOptions::default()).expect_err("the registry is rejected");
    render_text(json, "registry.json", &error.diagnostics(json))
}

#[test]
fn a_host_tool_in_a_prelude_namespace_is_a_registry_error() {
    insta::assert_snapshot!(
        "namespace_taken",
        registry_errors(
            r#"{"prelude": "deterministic", "tools": [{"name": "text.summarize", "params": [], "outputSchema": {"type": "string"}, "execution": "pure"}, {"name": "time.now", "params": [], "outputSchema": {"type": "integer"}, "execution": "pure"}]}"#
        )
    );
}

#[test]
fn an_unknown_prelude_is_a_registry_error() {
    insta::assert_snapshot!("invalid_prelude", registry_errors(r#"{"prelude": "full", "tools": []}"#));
}

#[test]
fn without_a_prelude_the_namespaces_are_the_hosts() {
    let json = r#"{"tools": [{"name": "text.summarize", "params": [{"name": "text", "schema": {"type": "string"}}], "outputSchema": {"type": "string"}, "execution": "pure"}]}"#;
    let registry = Registry::from_json_str(json, &RegistryOptions::default()).expect("loads").registry;
    let source = "return text.upper(\"x\")\n";
    let analysis = analyze(source, &registry, &Inputs::new(), &AnalyzeOptions::default());
    let codes: Vec<String> = analysis.diagnostics.iter().map(|d| d.code.to_string()).collect();
    assert_eq!(codes, ["RL2102"], "{:?}", analysis.diagnostics);
    assert!(analysis.diagnostics[0].message.contains("is not a registered tool"));
}

#[test]
fn the_prose_lint_offers_the_prelude_encoder() {
    let json = r#"{"prelude": "deterministic", "tools": [{"name": "mail.send", "params": [{"name": "body", "schema": {"type": "string", "description": "The message text for the reader."}}], "outputSchema": {"type": "null"}, "execution": "idempotent"}]}"#;
    let source = "sent = mail.send({ id: 7, tags: list.range(0, 2) })\nreturn sent\n";
    let analysis = analyze(source, &registry(json), &Inputs::new(), &AnalyzeOptions::default());
    insta::assert_snapshot!("prose_encoder", render_text(source, "main.run", &analysis.diagnostics));
}

#[test]
fn lengths_and_numeric_text_get_prelude_fixes() {
    check(
        "prelude_fixes",
        "xs = list.range(0, 3)\nname = \"ada\"\nreturn [xs.length, name.size, list.range(0, name), number.floor(name)]\n",
    );
}

#[test]
fn without_a_prelude_a_host_tool_named_like_an_intrinsic_is_a_tool_call() {
    let json = r#"{"tools": [{"name": "text.upper", "params": [{"name": "text", "schema": {"type": "string"}}], "outputSchema": {"type": "string"}, "execution": "pure"}]}"#;
    let registry = Registry::from_json_str(json, &RegistryOptions::default()).expect("loads").registry;
    let analysis =
        analyze("return text.upper(\"x\")\n", &registry, &Inputs::new(), &AnalyzeOptions::default());
    let program = analysis.hir.expect("analyzes");
    assert!(program.exprs.iter().any(|e| matches!(e.kind, ExprKind::Call { .. })));
    assert!(!program.exprs.iter().any(|e| matches!(e.kind, ExprKind::Intrinsic { .. })));
}
