//! Fuzzes the analyzer: any UTF-8 input, checked against the Appendix A registry, must analyze
//! without panicking, with bounded diagnostics, and with HIR exactly when there is no error.
//! Run with `cargo fuzz run analyze` from the repository root.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use runlet::analyze::{AnalyzeOptions, Inputs, analyze};
use runlet::diag::apply_fixes;
use runlet::registry::{Registry, RegistryOptions};

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let text = include_str!("../../examples/appendix-a/registry.json");
        Registry::from_json_str(text, &RegistryOptions::default()).expect("the example registry loads").registry
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(source) = std::str::from_utf8(data) else { return };
    let options = AnalyzeOptions { max_work: 100_000, ..AnalyzeOptions::default() };
    let analysis = analyze(source, registry(), &Inputs::new(), &options);
    assert!(analysis.diagnostics.len() <= 2 * options.max_diagnostics + 2);
    assert_eq!(analysis.hir.is_some(), !analysis.has_errors());
    for diagnostic in &analysis.diagnostics {
        assert!(diagnostic.span.end as usize <= source.len());
        for fix in &diagnostic.fixes {
            assert!(apply_fixes(source, [fix]).is_some());
        }
    }
});
