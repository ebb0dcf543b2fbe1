//! The spec's Appendix A and B programs against their example registries: they check clean, and
//! their HIR has the expected shape (effect roots, regions, calls, identities).

use std::path::PathBuf;

use runlet::analyze::dump::dump;
use runlet::analyze::hir::{ExprKind, Program, RegionKind, Step};
use runlet::analyze::{AnalyzeOptions, Inputs, LANGUAGE_VERSION, analyze};
use runlet::diag::source_digest;
use runlet::registry::{Registry, RegistryOptions};

fn example(relative: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples").join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn inputs(relative: &str) -> Inputs {
    Inputs::from_json(&example(relative), &Registry::empty()).expect("inputs JSON")
}

/// Every step of every region, with the binding names, as `(region kind, name, root)`.
fn lets(program: &Program) -> Vec<(RegionKind, String, bool)> {
    program
        .regions
        .iter()
        .flat_map(|region| {
            region.steps.iter().filter_map(move |step| match step {
                Step::Let { binding, root, .. } => {
                    Some((region.kind, program.binding(*binding).name.clone(), *root))
                }
                Step::Skip { .. } => None,
            })
        })
        .collect()
}

#[test]
fn appendix_a_lowers_to_roots_regions_and_calls() {
    let source = example("appendix-a/main.run");
    let registry = Registry::from_json_str(&example("appendix-a/registry.json"), &RegistryOptions::default())
        .expect("registry loads")
        .registry;
    let analysis = analyze(&source, &registry, &inputs("appendix-a/inputs.json"), &AnalyzeOptions::default());
    assert!(analysis.diagnostics.is_empty(), "{:?}", analysis.diagnostics);
    assert_eq!(analysis.identity.source_digest.to_string(), source_digest(&source));
    assert_eq!(&analysis.identity.registry_digest, registry.digest());
    assert_eq!(analysis.identity.language_version, LANGUAGE_VERSION);
    let compiled = analysis.compiled().expect("no errors, so a compiled program");
    let program = compiled.program();
    insta::assert_snapshot!("appendix_a_hir", dump(program, &registry));

    // Only `report` (it calls the idempotent `ai.summarize`) is an implicit effect root.
    assert_eq!(
        lets(program),
        [
            (RegionKind::Program, "customer".to_owned(), false),
            (RegionKind::Program, "limits".to_owned(), false),
            (RegionKind::Program, "tickets".to_owned(), false),
            (RegionKind::Program, "report".to_owned(), true),
            (RegionKind::BoundaryBody, "orders".to_owned(), false),
            (RegionKind::BoundaryBody, "scores".to_owned(), false),
        ]
    );
    let kinds: Vec<RegionKind> = program.regions.iter().map(|r| r.kind).collect();
    assert_eq!(kinds.iter().filter(|k| **k == RegionKind::ForBody).count(), 1);
    assert_eq!(kinds.iter().filter(|k| **k == RegionKind::CatchBody).count(), 1);
    let boundary = program.exprs.iter().find_map(|e| match &e.kind {
        ExprKind::Boundary { retries, error, .. } => Some((*retries, program.binding(*error).name.clone())),
        _ => None,
    });
    assert_eq!(boundary, Some((2, "err".to_owned())));
    let limit = program.exprs.iter().find_map(|e| match e.kind {
        ExprKind::For { limit, .. } => limit,
        _ => None,
    });
    assert_eq!(limit, Some(12));
    // Every argument already has its parameter's schema: no conversion is needed anywhere.
    assert!(program.exprs.iter().all(|e| !matches!(e.kind, ExprKind::Convert { .. })));
    let calls = program.exprs.iter().filter(|e| matches!(e.kind, ExprKind::Call { .. })).count();
    assert_eq!(calls, 7);
    // The one effectful call makes its boundary and the program's `report` effectful.
    let summaries: Vec<bool> = program
        .exprs
        .iter()
        .filter(|e| matches!(&e.kind, ExprKind::Call { tool, .. } if registry.tool(*tool).name.as_str() == "ai.summarize"))
        .map(|e| e.effectful)
        .collect();
    assert_eq!(summaries, [true, true]);
    let customer = program.bindings.iter().find(|b| b.name == "customer").expect("customer");
    assert!(program.schemas.display(customer.schema).to_string().contains("email"));
}

#[test]
fn appendix_b_lowers_to_a_list_concatenation_of_two_queries() {
    let source = example("appendix-b/main.run");
    let registry = Registry::from_json_str(&example("appendix-b/registry.json"), &RegistryOptions::default())
        .expect("registry loads")
        .registry;
    let analysis = analyze(&source, &registry, &Inputs::new(), &AnalyzeOptions::default());
    assert!(analysis.diagnostics.is_empty(), "{:?}", analysis.diagnostics);
    let program = analysis.hir.as_ref().expect("HIR");
    insta::assert_snapshot!("appendix_b_hir", dump(program, &registry));
    assert!(lets(program).iter().all(|(_, _, root)| !root), "every tool is read-only: no roots");
    let root = program.region(program.root);
    let result = program.expr(root.result);
    assert!(matches!(result.kind, ExprKind::Binary { op: runlet::value::BinaryOp::Add, .. }));
    let element = program.schemas.display(result.schema).to_string();
    assert!(element.starts_with("List<{ id: String"), "{element}");
}
