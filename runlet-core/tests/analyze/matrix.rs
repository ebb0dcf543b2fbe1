//! The conversion and inference matrices of spec §12.1: every source schema (tool results and
//! literals) against every target parameter, across unions, optionals and composites; and the
//! schemas inference gives to conditionals, lists, merges, projections and narrowings.

use std::fmt::Write;

use runlet::analyze::hir::{ExprKind, Program};
use runlet::analyze::{Analysis, AnalyzeOptions, Inputs, analyze};
use runlet::registry::{Registry, RegistryOptions};
use runlet::value::to_serde_json;

use crate::support::registry;

const TARGETS: &[&str] = &[
    "integer",
    "number",
    "string",
    "boolean",
    "bytes",
    "nullable_string",
    "list_number",
    "object",
    "map_number",
    "int_or_string",
    "list_or_string",
    "any",
];

const SOURCES: &[&str] = &[
    "give.integer()",
    "give.number()",
    "give.string()",
    "give.boolean()",
    "give.bytes()",
    "give.null_string()",
    "give.list_integer()",
    "give.object_ab()",
    "give.object_a_optional()",
    "give.object_extra()",
    "give.object_null_b()",
    "give.map_integer()",
    "give.file()",
    "give.any()",
    "3",
    "4.7",
    "true",
    "null",
    "\"text\"",
    "[1, 2]",
    "{ a: 1 }",
    "{ a: 1, b: null }",
    "{ a: 1, z: 2 }",
];

/// How the argument of `take.*(source)` ended up: passed as is (`=`), converted at run time
/// (`convert`), folded to a constant (its JSON), or the error codes reported.
fn outcome(analysis: &Analysis) -> String {
    let errors: Vec<String> =
        analysis.diagnostics.iter().filter(|d| d.is_error()).map(|d| d.code.to_string()).collect();
    if !errors.is_empty() {
        return errors.join("+");
    }
    let program: &Program = analysis.hir.as_ref().expect("HIR without errors");
    let call = program.expr(program.region(program.root).result);
    let ExprKind::Call { args, .. } = &call.kind else { return "not a call".to_owned() };
    let [argument] = args.as_slice() else { return format!("{} arguments", args.len()) };
    match &program.expr(*argument).kind {
        ExprKind::Convert { .. } => "convert".to_owned(),
        ExprKind::Const(value) => {
            to_serde_json(value).map(|j| j.to_string()).unwrap_or_else(|_| "bytes".to_owned())
        }
        _ => "=".to_owned(),
    }
}

fn run(registry: &Registry, source: &str) -> Analysis {
    analyze(source, registry, &Inputs::new(), &AnalyzeOptions::default())
}

#[test]
fn conversion_matrix() {
    let registry = registry("matrix", &RegistryOptions::default());
    let mut table = String::new();
    for source in SOURCES {
        for target in TARGETS {
            let program = format!("return take.{target}({source})\n");
            let _ = writeln!(table, "{source:<28} -> {target:<16} {}", outcome(&run(&registry, &program)));
        }
        table.push('\n');
    }
    // A few cells spelled out, so that a reviewer of the snapshot has anchors.
    let cell =
        |source: &str, target: &str| outcome(&run(&registry, &format!("return take.{target}({source})\n")));
    assert_eq!(cell("give.integer()", "number"), "convert");
    assert_eq!(cell("give.number()", "integer"), "RL2204");
    assert_eq!(cell("4.7", "integer"), "RL2311");
    assert_eq!(cell("3", "number"), "3.0");
    assert_eq!(cell("3", "string"), "\"3\"");
    assert_eq!(cell("give.null_string()", "string"), "RL2304");
    assert_eq!(cell("give.null_string()", "nullable_string"), "=");
    assert_eq!(cell("give.bytes()", "string"), "RL2305");
    assert_eq!(cell("give.file()", "string"), "RL2305");
    assert_eq!(cell("give.list_integer()", "list_or_string"), "RL2303");
    assert_eq!(cell("give.object_a_optional()", "object"), "RL2208");
    assert_eq!(cell("give.object_extra()", "object"), "RL2207");
    assert_eq!(cell("give.object_null_b()", "object"), "convert");
    assert_eq!(cell("give.any()", "integer"), "convert");
    assert_eq!(cell("give.integer()", "int_or_string"), "=");
    insta::assert_snapshot!(table);
}

/// The schema of `value` in `program` (`x = …` bindings before `return value`).
fn inferred(registry: &Registry, program: &str) -> String {
    let analysis = run(registry, program);
    let errors: Vec<String> = analysis
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| format!("{} {}", d.code, d.message))
        .collect();
    if !errors.is_empty() {
        return errors.join("; ");
    }
    let hir = analysis.hir.expect("HIR");
    let result = hir.expr(hir.region(hir.root).result);
    if result.diverges { "Never".to_owned() } else { hir.schemas.display(result.schema).to_string() }
}

#[test]
fn inference_matrix() {
    let registry = registry("matrix", &RegistryOptions::default());
    let programs = [
        "return 1 if give.boolean() else null",
        "return 1 if give.boolean() else 2.5",
        "return [1, \"a\", null]",
        "return []",
        "return [1] + [\"a\"]",
        "return [] + [give.string()]",
        "return { a: 1 } + { b: \"x\" }",
        "return { a: 1, b: 2 } + { b: \"x\" }",
        "return { a: 1 } + give.map_integer()",
        "return { [give.string()]: 1, b: \"x\" }",
        "return give.shape().kind",
        "s = give.shape()\nreturn s if s.kind == \"circle\" else null",
        "s = give.shape()\nreturn s.radius if s.kind == \"circle\" else s.side",
        "o = give.optional_object()\nreturn o.id if o != null else \"none\"",
        "o = give.optional_object()\nreturn o if o == null else null",
        "return give.any().anything",
        "return give.list_integer()[0]",
        "return give.map_integer()[\"k\"]",
        "return give.string()[0]",
        "return give.bytes()[0]",
        "return for x in give.list_integer() { return x * 1.5 }",
        "return for e in give.map_integer() { return e }",
        "return fold acc = 0 for x in give.list_integer() { return acc + x }",
        "return fold acc = 0 for x in give.list_integer() { return acc + x / 2 }",
        "return fold acc = {} for x in give.list_integer() { return acc + { [x]: x } }",
        "return fold found = null for x in give.list_integer() { return x if x > 2 else found }",
        "return fold acc = [] for x in give.list_integer() { return acc + [x] }",
        "return boundary { return give.integer() } catch err { return err.message }",
        "return boundary { return give.integer() } catch err { return err }",
        "return fail(\"E\", \"m\")",
        "return give.integer() if give.boolean() else fail(\"E\", \"m\")",
        "return -give.integer()",
        "return not give.boolean()",
        "return give.integer() / 2",
        "return give.integer() % 2",
        "return \"n=\" + give.number()",
        "return give.object_ab() == { a: 1, b: \"x\" }",
    ];
    let mut table = String::new();
    for program in programs {
        let _ = writeln!(
            table,
            "{:<80} : {}",
            program.replace('\n', "; "),
            inferred(&registry, &format!("{program}\n"))
        );
    }
    insta::assert_snapshot!(table);
}
