//! Golden diagnostics: every case under `cases/` rendered as text and as the JSON contract.

use runlet::diag::{render_text, report_json};

use crate::support::{cases, check};

#[test]
fn golden_cases() {
    let files = cases("cases");
    for (name, source) in files {
        let analysis = check(&source);
        let mut report = render_text(&source, &format!("{name}.run"), &analysis.diagnostics);
        let json = serde_json::to_string_pretty(&report_json(&source, &analysis.diagnostics)).expect("json");
        report.push_str("---- json\n");
        report.push_str(&json);
        report.push('\n');
        insta::with_settings!({ snapshot_path => "snapshots/cases", prepend_module_to_snapshot => false, description => source.clone() }, {
            insta::assert_snapshot!(name.as_str(), report);
        });
    }
}
