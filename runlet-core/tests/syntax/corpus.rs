//! The malformed and valid program corpora: one golden snapshot per file.

use runlet::diag::{Applicability, Diagnostic, Severity, apply_fixes};
use runlet::syntax::parse;

use crate::dump;
use crate::support::{apply, compatible_machine_fixes, corpus, error_count, render_report};

/// Every malformed program reports at least one diagnostic; each fix is internally consistent;
/// applying the machine-applicable fixes leaves strictly fewer errors.
#[test]
fn malformed_corpus() {
    let files = corpus("malformed");
    assert!(files.len() >= 80, "the malformed corpus has {} programs", files.len());
    let mut not_improved = Vec::new();
    for (name, source) in files {
        let parse = parse(&source);
        assert!(!parse.diagnostics.is_empty(), "{name}: no diagnostic");
        for fix in parse.diagnostics.iter().flat_map(|d| &d.fixes) {
            assert!(
                apply_fixes(&source, [fix]).is_some(),
                "{name}: fix {:?} has overlapping edits",
                fix.message
            );
        }
        let mut report = render_report(&source, &parse.diagnostics);
        let fixes = compatible_machine_fixes(&parse.diagnostics);
        if !fixes.is_empty() {
            let fixed = apply(&source, &fixes);
            let after = parse_errors(&fixed);
            let before = error_count(&parse.diagnostics);
            if !(after < before || before == 0) {
                not_improved.push(format!(
                    "{name}: {before} errors before the machine fixes, {after} after:\n{fixed}"
                ));
            }
            report.push_str(&format!("---- after machine fixes ({before} errors -> {after})\n{fixed}"));
        }
        insta::with_settings!({ snapshot_path => "snapshots/malformed", prepend_module_to_snapshot => false, description => source.clone() }, {
            insta::assert_snapshot!(name.as_str(), report);
        });
    }
    assert!(not_improved.is_empty(), "{}", not_improved.join("\n"));
}

/// Each machine-applicable fix of the malformed corpus, applied alone, removes its diagnostic
/// without adding others: strictly fewer errors (or, for a warning's fix, fewer warnings).
#[test]
fn each_machine_fix_alone_makes_progress() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for (name, source) in corpus("malformed") {
        let diagnostics = parse(&source).diagnostics;
        for diagnostic in &diagnostics {
            for fix in diagnostic.fixes.iter().filter(|f| f.applicability == Applicability::MachineApplicable)
            {
                checked += 1;
                let fixed = apply(&source, &[fix]);
                let after = parse(&fixed).diagnostics;
                let count =
                    |ds: &[Diagnostic], severity| ds.iter().filter(|d| d.severity == severity).count();
                let progress = if diagnostic.is_error() {
                    count(&after, Severity::Error) < count(&diagnostics, Severity::Error)
                } else {
                    count(&after, Severity::Error) <= count(&diagnostics, Severity::Error)
                        && count(&after, diagnostic.severity) < count(&diagnostics, diagnostic.severity)
                };
                if !progress {
                    failures
                        .push(format!("{name}: fix {:?} of {} gives\n{fixed}", fix.message, diagnostic.code));
                }
            }
        }
    }
    assert!(checked >= 50, "only {checked} machine fixes in the corpus");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn parse_errors(source: &str) -> usize {
    error_count(&parse(source).diagnostics)
}

/// Every valid program parses without any diagnostic; the snapshot is its tree.
#[test]
fn valid_corpus() {
    let files = corpus("valid");
    assert!(!files.is_empty());
    for (name, source) in files {
        let parse = parse(&source);
        assert!(
            parse.diagnostics.is_empty(),
            "{name}: {}",
            runlet::diag::render_text(&source, &name, &parse.diagnostics)
        );
        insta::with_settings!({ snapshot_path => "snapshots/valid", prepend_module_to_snapshot => false, description => source.clone() }, {
            insta::assert_snapshot!(name.as_str(), dump::program(&parse.program));
        });
    }
}
