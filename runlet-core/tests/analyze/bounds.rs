//! Bounded analysis: a realistic 10 KiB program against 1,000 tools checks clean, and adversarial
//! inputs finish with work that grows linearly with their size (work is counted, not timed).

use runlet::analyze::{AnalyzeOptions, Inputs, analyze};
use runlet::registry::{Registry, RegistryOptions};

use crate::generated;

fn big_registry() -> Registry {
    Registry::from_json_str(&generated::registry(1000), &RegistryOptions::default()).expect("loads").registry
}

#[test]
fn a_realistic_10_kib_program_against_1000_tools_checks_clean() {
    let registry = big_registry();
    let source = generated::program(10 * 1024);
    assert!(source.len() >= 10 * 1024);
    let analysis = analyze(&source, &registry, &Inputs::new(), &AnalyzeOptions::default());
    assert!(analysis.diagnostics.is_empty(), "{:?}", analysis.diagnostics.first());
    let program = analysis.hir.expect("HIR");
    assert!(program.exprs.len() > 1000, "{} expressions", program.exprs.len());
}

#[test]
fn adversarial_programs_finish_with_linear_work() {
    let registry = big_registry();
    let options = AnalyzeOptions::default();
    let small = generated::adversarial(5 * 1024);
    let large = generated::adversarial(10 * 1024);
    for ((name, small), (_, large)) in small.iter().zip(&large) {
        let parse = runlet::syntax::parse(large);
        assert!(!parse.has_errors(), "{name} does not parse: {:?}", parse.diagnostics.first());
        let a = analyze(small, &registry, &Inputs::new(), &options);
        let b = analyze(large, &registry, &Inputs::new(), &options);
        assert!(a.work > 0 && b.work > 0, "{name}: analysis ran");
        let ratio = b.work as f64 / a.work as f64;
        let size_ratio = large.len() as f64 / small.len() as f64;
        assert!(
            ratio <= size_ratio * 1.3,
            "{name}: work {} -> {} ({ratio:.2}x) for {size_ratio:.2}x the source",
            a.work,
            b.work
        );
        assert!(
            b.diagnostics.len() <= options.max_diagnostics + 1,
            "{name}: {} diagnostics",
            b.diagnostics.len()
        );
        assert!(b.work <= options.max_work, "{name}: {} units of work", b.work);
    }
}

#[test]
fn the_work_budget_stops_analysis_with_one_error() {
    let registry = big_registry();
    let source = generated::program(10 * 1024);
    let options = AnalyzeOptions { max_work: 500, ..AnalyzeOptions::default() };
    let analysis = analyze(&source, &registry, &Inputs::new(), &options);
    let budget: Vec<_> = analysis
        .diagnostics
        .iter()
        .filter(|d| d.code == runlet::diag::codes::ANALYSIS_BUDGET_EXCEEDED)
        .collect();
    assert_eq!(budget.len(), 1);
    assert!(analysis.hir.is_none());
    assert!(analysis.work <= 500 + 50, "{}", analysis.work);
}

/// Names too long to compare letter by letter are never suggested for one another: comparing
/// two names costs the product of their lengths, which made a 480 KB source check for minutes.
#[test]
fn a_misspelt_name_too_long_to_compare_gets_its_error_without_a_suggestion() {
    let defined = "a".repeat(2_000);
    let misspelt = format!("{}b", "a".repeat(1_999));
    let source = format!("{defined} = 1\nreturn {misspelt}\n");
    let analysis = analyze(&source, &big_registry(), &Inputs::new(), &AnalyzeOptions::default());
    let undefined: Vec<_> = analysis.diagnostics.iter().filter(|d| d.code.to_string() == "RL2101").collect();
    let codes: Vec<String> = analysis.diagnostics.iter().map(|d| d.code.to_string()).collect();
    assert_eq!(undefined.len(), 1, "{codes:?}");
    let suggested = (undefined[0].fixes.len(), undefined[0].candidates.len());
    assert_eq!(suggested, (0, 0), "no fix and no candidate for names this long");
    // A short misspelling still gets its suggestion.
    let analysis =
        analyze("total = 1\nreturn totl\n", &big_registry(), &Inputs::new(), &AnalyzeOptions::default());
    assert_eq!(analysis.diagnostics[0].candidates, ["total"], "{:?}", analysis.diagnostics);
}
