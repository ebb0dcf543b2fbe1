//! The front end's malformed corpus meets the analyzer: programs that parse cleanly (names from
//! other languages such as `None`, `True`, `undefined`) are rejected by analysis, whose `RL2101`
//! error with its fix replaces the parser's `RL1037` warning. And every code the analyzer
//! reports has a golden case.

use std::collections::BTreeSet;
use std::path::PathBuf;

use runlet::analyze::{AnalyzeOptions, Inputs, analyze};
use runlet::diag::{Applicability, Code, codes};
use runlet::registry::RegistryOptions;

use crate::catalogue::ANALYZER_CODES;
use crate::support::{cases, check, registry};

#[test]
fn foreign_names_the_parser_only_warns_about_are_analysis_errors() {
    let registry = registry("base", &RegistryOptions::default());
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/syntax/malformed");
    let mut checked = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("corpus").filter_map(Result::ok) {
        let source = std::fs::read_to_string(entry.path()).expect("read");
        let parse = runlet::syntax::parse(&source);
        if parse.has_errors() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let analysis = analyze(&source, &registry, &Inputs::new(), &AnalyzeOptions::default());
        assert!(analysis.has_errors(), "{name}: the analyzer accepts it");
        assert!(analysis.diagnostics.iter().all(|d| d.code != codes::FOREIGN_LITERAL), "{name}: RL1037 kept");
        for diagnostic in analysis.diagnostics.iter().filter(|d| d.code == codes::UNKNOWN_NAME) {
            assert!(
                diagnostic.fixes.iter().any(|f| f.applicability == Applicability::MachineApplicable),
                "{name}: {diagnostic:?} has no machine fix"
            );
        }
        checked.push(name);
    }
    checked.sort();
    assert_eq!(checked, ["js_undefined.run", "python_none.run", "python_true_false.run"]);
}

#[test]
fn every_analyzer_code_has_a_golden_case() {
    let reported: BTreeSet<Code> =
        cases("cases").iter().flat_map(|(_, source)| check(source).diagnostics).map(|d| d.code).collect();
    let expected = ANALYZER_CODES.iter().copied().chain([
        codes::TOO_MANY_DIAGNOSTICS,
        codes::ANALYSIS_BUDGET_EXCEEDED,
        codes::NUMERIC_OVERFLOW,
        codes::DIVISION_BY_ZERO,
        codes::INDEX_OUT_OF_BOUNDS,
    ]);
    let missing: Vec<String> =
        expected.filter(|c| !reported.contains(c)).map(|c| format!("{c} {}", c.name())).collect();
    assert!(missing.is_empty(), "codes without a golden case: {missing:?}");
}
