//! Helpers shared by the syntax tests: corpus walking, diagnostic rendering for snapshots, and
//! applying machine-applicable fixes the way `heal` would (non-overlapping, in order).

use std::path::{Path, PathBuf};

use runlet::diag::{Applicability, Diagnostic, Fix, apply_fixes, render_text, report_json};

/// The `.run` files of one corpus directory under `tests/syntax/`, sorted by name.
pub fn corpus(dir: &str) -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/syntax").join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "run"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let name = path.file_stem().and_then(|s| s.to_str()).expect("utf-8 file name").to_owned();
            let source = std::fs::read_to_string(&path).expect("corpus file is UTF-8");
            (name, source)
        })
        .collect()
}

pub fn error_count(diagnostics: &[Diagnostic]) -> usize {
    diagnostics.iter().filter(|d| d.is_error()).count()
}

/// The machine-applicable fixes of `diagnostics` that can be applied together: each in order of
/// position, skipping any that overlaps one already taken.
pub fn compatible_machine_fixes(diagnostics: &[Diagnostic]) -> Vec<&Fix> {
    let mut fixes: Vec<&Fix> = diagnostics
        .iter()
        .flat_map(|d| &d.fixes)
        .filter(|f| f.applicability == Applicability::MachineApplicable)
        .collect();
    fixes.sort_by_key(|f| f.edits.iter().map(|e| e.span.start).min());
    let mut taken: Vec<&Fix> = Vec::new();
    for fix in fixes {
        let overlaps = fix.edits.iter().any(|e| {
            taken.iter().flat_map(|t| &t.edits).any(|t| {
                let touching_insertions =
                    e.span.is_empty() && t.span.is_empty() && e.span.start == t.span.start;
                touching_insertions
                    || (e.span.start < t.span.end && t.span.start < e.span.end)
                    || (e.span.is_empty() && t.span.start < e.span.start && e.span.start < t.span.end)
                    || (t.span.is_empty() && e.span.start < t.span.start && t.span.start < e.span.end)
            })
        });
        if !overlaps {
            taken.push(fix);
        }
    }
    taken
}

/// Everything a reviewer needs to judge the diagnostics for one source.
pub fn render_report(source: &str, diagnostics: &[Diagnostic]) -> String {
    let mut out = String::new();
    out.push_str(&render_text(source, "input.run", diagnostics));
    out.push_str("---- json\n");
    out.push_str(&serde_json::to_string_pretty(&report_json(source, diagnostics)).expect("json"));
    out.push('\n');
    out
}

/// Applies `fixes` to `source`; panics (failing the test) when they overlap.
pub fn apply(source: &str, fixes: &[&Fix]) -> String {
    apply_fixes(source, fixes.iter().copied()).expect("fixes must not overlap")
}
