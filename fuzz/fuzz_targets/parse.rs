//! Fuzzes the syntax front end: any UTF-8 input must parse without panicking, within the
//! configured limits, with diagnostics whose spans and fixes fit the source.
//! Run with `cargo fuzz run parse` from the repository root.
#![no_main]

use libfuzzer_sys::fuzz_target;
use runlet::diag::apply_fixes;
use runlet::syntax::{ParseOptions, parse_with};

fuzz_target!(|data: &[u8]| {
    let Ok(source) = std::str::from_utf8(data) else { return };
    let options = ParseOptions { max_source_bytes: 64 << 10, max_nesting_depth: 64, max_diagnostics: 50 };
    let parse = parse_with(source, &options);
    assert!(parse.diagnostics.len() <= options.max_diagnostics + 1);
    for diagnostic in &parse.diagnostics {
        assert!(diagnostic.span.end as usize <= source.len());
        for fix in &diagnostic.fixes {
            assert!(apply_fixes(source, [fix]).is_some());
        }
    }
});
