//! Programs that check clean: narrowing, conversions, fold widenings, effect roots, guards. Each
//! has no diagnostic at all, and its HIR (a readable dump) is a golden snapshot.

use runlet::analyze::dump::dump;
use runlet::diag::render_text;

use crate::support::{Setup, cases};

#[test]
fn valid_programs_check_clean_and_lower_to_the_expected_hir() {
    let files = cases("valid");
    assert!(files.len() >= 10);
    for (name, source) in files {
        let setup = Setup::of(&source);
        let analysis = setup.analyze(&source);
        assert!(
            analysis.diagnostics.is_empty(),
            "{name}:\n{}",
            render_text(&source, &format!("{name}.run"), &analysis.diagnostics)
        );
        let program = analysis.hir.as_ref().unwrap_or_else(|| panic!("{name}: no HIR"));
        let text = dump(program, &setup.registry());
        insta::with_settings!({ snapshot_path => "snapshots/valid", prepend_module_to_snapshot => false, description => source.clone() }, {
            insta::assert_snapshot!(name.as_str(), text);
        });
    }
}
