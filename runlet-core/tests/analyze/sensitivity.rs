//! Sensitivity in the HIR (spec §6.2, invariant 10): values read from labelled schema paths, and
//! everything derived from them, are at least as sensitive; unrelated parts stay public.

use runlet::analyze::{AnalyzeOptions, Inputs, analyze};
use runlet::registry::RegistryOptions;
use runlet::value::Sensitivity;

use crate::support::registry;

/// The sensitivity of each binding of `program`, by name.
fn labels(program: &str) -> Vec<(String, Sensitivity)> {
    let registry = registry("base", &RegistryOptions::default());
    let analysis = analyze(program, &registry, &Inputs::new(), &AnalyzeOptions::default());
    let hir = analysis.hir.unwrap_or_else(|| panic!("{:?}", analysis.diagnostics));
    hir.bindings
        .iter()
        .filter_map(|b| match b.kind {
            runlet::analyze::hir::BindingKind::Let(value) => {
                Some((b.name.clone(), hir.expr(value).sensitivity))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn labels_follow_reads_and_derivations() {
    let found = labels(
        "customer = crm.customer(customer_id)\n\
         id = customer.id\n\
         email = customer.email\n\
         city = customer.mailing_address.city\n\
         greeting = \"Hello \" + email\n\
         card = { id, email }\n\
         card_id = card.id\n\
         choice = email if id == \"x\" else \"none\"\n\
         return [id, city, greeting, card_id, choice]\n",
    );
    let expected = [
        ("customer", Sensitivity::Sensitive),
        ("id", Sensitivity::Public),
        ("email", Sensitivity::Sensitive),
        ("city", Sensitivity::Sensitive),
        ("greeting", Sensitivity::Sensitive),
        ("card", Sensitivity::Sensitive),
        ("card_id", Sensitivity::Sensitive),
        ("choice", Sensitivity::Sensitive),
    ];
    let expected: Vec<(String, Sensitivity)> = expected.iter().map(|(n, s)| (n.to_string(), *s)).collect();
    assert_eq!(found, expected);
}
