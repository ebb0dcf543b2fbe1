//! Property tests: analysis of arbitrary programs (generated from the grammar with registry
//! names, misspellings and names from other languages mixed in, and token soups) never panics,
//! is deterministic, reports spans and fixes that fit the source, and yields well-formed HIR
//! exactly when it reports no error.

use proptest::prelude::*;
use runlet::analyze::hir::{ExprKind, Program, Step};
use runlet::analyze::{AnalyzeOptions, Inputs, analyze};
use runlet::diag::apply_fixes;
use runlet::registry::{Registry, RegistryOptions};

use crate::support::registry;

const NAMES: &[&str] = &["customer_id", "a", "b", "c", "None", "True", "len", "custmer", "crm", "item"];
const TOOLS: &[&str] = &[
    "crm.customer",
    "crm.update",
    "shop.orders",
    "shop.refund",
    "geo.shape",
    "pay.charge",
    "mail.send",
    "linear.issues",
    "files.read",
    "users.list",
    "kv.get",
    "labels.set",
    "crm.custmer",
    "print",
];
const PROPERTIES: &[&str] =
    &["id", "name", "email", "total", "status", "kind", "radius", "manager", "emali", "length"];
const OPERATORS: &[&str] = &["+", "-", "*", "/", "%", "==", "!=", "<", ">=", "in", "and", "or"];

fn literal() -> impl Strategy<Value = String> {
    prop_oneof![
        (0i64..1000).prop_map(|n| n.to_string()),
        Just("9223372036854775807".to_owned()),
        Just("2.5".to_owned()),
        Just("\"text\"".to_owned()),
        Just("\"pro\"".to_owned()),
        Just("true".to_owned()),
        Just("null".to_owned()),
        Just("[]".to_owned()),
        Just("{}".to_owned()),
    ]
}

fn expression() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![literal(), prop::sample::select(NAMES).prop_map(str::to_owned)];
    leaf.prop_recursive(4, 40, 4, |inner| {
        prop_oneof![
            (prop::sample::select(TOOLS), prop::collection::vec(inner.clone(), 0..3))
                .prop_map(|(tool, args)| format!("{tool}({})", args.join(", "))),
            (inner.clone(), prop::sample::select(PROPERTIES)).prop_map(|(e, p)| format!("({e}).{p}")),
            (inner.clone(), inner.clone()).prop_map(|(e, i)| format!("({e})[{i}]")),
            (inner.clone(), prop::sample::select(OPERATORS), inner.clone())
                .prop_map(|(l, op, r)| format!("({l}) {op} ({r})")),
            inner.clone().prop_map(|e| format!("not ({e})")),
            inner.clone().prop_map(|e| format!("-({e})")),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(t, c, o)| format!("({t}) if ({c}) else ({o})")),
            (inner.clone(), inner.clone()).prop_map(|(t, c)| format!("({t}) if ({c})")),
            prop::collection::vec(inner.clone(), 0..3).prop_map(|items| format!("[{}]", items.join(", "))),
            (prop::sample::select(PROPERTIES), inner.clone(), inner.clone())
                .prop_map(|(k, v, c)| format!("{{ {k}: {v}, [{c}]: 1 }}")),
            (inner.clone(), inner.clone()).prop_map(|(c, e)| format!(
                "for item in {c} limit 3 {{\n skip if item == null\n return {e}\n}}"
            )),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(i, c, e)| format!("fold a = {i} for item in {c} {{\n return {e}\n}}")),
            (inner.clone(), inner.clone()).prop_map(|(b, c)| format!(
                "boundary retry 1 {{\n return {b}\n}} catch err {{\n return {c}\n}}"
            )),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(c, t, e)| format!("if {c} {{\n return {t}\n}} else {{\n return {e}\n}}")),
            (inner.clone(), inner).prop_map(|(c, m)| format!("fail({c}, {m})")),
        ]
    })
}

fn program() -> impl Strategy<Value = String> {
    (
        prop::collection::vec((prop::sample::select(&["a", "b", "c", "crm", "x"][..]), expression()), 0..4),
        expression(),
    )
        .prop_map(|(lets, result)| {
            let mut source: String =
                lets.into_iter().map(|(name, value)| format!("{name} = {value}\n")).collect();
            source.push_str(&format!("return {result}\n"));
            source
        })
}

/// Every id in `program` indexes its arenas, and every expression's region exists.
fn well_formed(program: &Program) -> bool {
    let expr_ok = |id: runlet::analyze::hir::ExprId| id.index() < program.exprs.len();
    let region_ok = |id: runlet::analyze::hir::RegionId| id.index() < program.regions.len();
    program.exprs.iter().all(|e| {
        let (parts, regions) = e.kind.parts();
        region_ok(e.region)
            && parts.into_iter().all(expr_ok)
            && regions.into_iter().all(region_ok)
            && match &e.kind {
                ExprKind::Binding(b) => b.index() < program.bindings.len(),
                ExprKind::Input(i) => i.index() < program.inputs.len(),
                _ => true,
            }
    }) && program.regions.iter().all(|r| {
        expr_ok(r.result)
            && r.steps.iter().all(|s| match s {
                Step::Let { binding, value, .. } => {
                    binding.index() < program.bindings.len() && expr_ok(*value)
                }
                Step::Skip { condition, .. } => condition.is_none_or(expr_ok),
            })
    })
}

fn check(registry: &Registry, source: &str) -> Result<(), TestCaseError> {
    let options = AnalyzeOptions::default();
    let analysis = analyze(source, registry, &Inputs::new(), &options);
    let again = analyze(source, registry, &Inputs::new(), &options);
    prop_assert_eq!(&analysis.diagnostics, &again.diagnostics, "analysis is deterministic");
    for diagnostic in &analysis.diagnostics {
        prop_assert!(
            diagnostic.span.end as usize <= source.len(),
            "span out of the source: {:?}",
            diagnostic
        );
        for fix in &diagnostic.fixes {
            prop_assert!(apply_fixes(source, [fix]).is_some(), "fix does not apply: {:?}", fix);
        }
    }
    prop_assert_eq!(analysis.hir.is_some(), !analysis.has_errors());
    if let Some(program) = &analysis.hir {
        prop_assert!(well_formed(program));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn generated_programs_analyze_without_panicking(source in program()) {
        let registry = registry("base", &RegistryOptions::default());
        check(&registry, &source)?;
    }

    #[test]
    fn token_soups_analyze_without_panicking(pieces in prop::collection::vec(prop::sample::select(&[
        "x", "crm.customer", "(", ")", "[", "]", "{", "}", ",", ":", ".", "+", "==", "=", "return", "for", "in",
        "if", "else", "fold", "fail", "boundary", "catch", "customer_id", "1", "\"s\"", "null", "\n", " ",
    ][..]), 0..40)) {
        let registry = registry("base", &RegistryOptions::default());
        check(&registry, &pieces.concat())?;
    }
}
