//! Fixes make progress: for every golden case with machine-applicable fixes, applying them
//! (all compatible ones together, and each alone) leaves a program with strictly fewer errors
//! (a warning's fix: strictly fewer of that warning) or none at all.

use runlet::diag::{Applicability, apply_fixes};

use crate::support::{Setup, cases, compatible, errors};

#[test]
fn machine_fixes_leave_fewer_errors() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for (name, source) in cases("cases") {
        let setup = Setup::of(&source);
        let before = setup.analyze(&source);
        let fixes = compatible(&before.diagnostics);
        if fixes.is_empty() {
            continue;
        }
        checked += 1;
        let Some(fixed) = apply_fixes(&source, fixes.iter().copied()) else {
            failures.push(format!("{name}: the fixes do not apply"));
            continue;
        };
        let after = setup.analyze(&fixed);
        if errors(&after) >= errors(&before) && errors(&before) > 0 {
            failures.push(format!(
                "{name}: {} errors before, {} after:\n{fixed}\n{:?}",
                errors(&before),
                errors(&after),
                after.diagnostics.iter().map(|d| format!("{} {}", d.code, d.message)).collect::<Vec<_>>()
            ));
        }
    }
    assert!(checked >= 15, "only {checked} cases have machine-applicable fixes");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn each_machine_fix_alone_removes_its_diagnostic() {
    let mut failures = Vec::new();
    for (name, source) in cases("cases") {
        let setup = Setup::of(&source);
        let before = setup.analyze(&source);
        for diagnostic in &before.diagnostics {
            for fix in diagnostic.fixes.iter().filter(|f| f.applicability == Applicability::MachineApplicable)
            {
                let Some(fixed) = apply_fixes(&source, [fix]) else {
                    failures.push(format!("{name}: fix {:?} does not apply", fix.message));
                    continue;
                };
                let after = setup.analyze(&fixed);
                let count = |a: &runlet::analyze::Analysis| {
                    a.diagnostics.iter().filter(|d| d.code == diagnostic.code).count()
                };
                let progress = if diagnostic.is_error() {
                    errors(&after) < errors(&before)
                } else {
                    count(&after) < count(&before) && errors(&after) <= errors(&before)
                };
                if !progress {
                    failures.push(format!(
                        "{name}: fix {:?} of {} makes no progress:\n{fixed}",
                        fix.message, diagnostic.code
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
