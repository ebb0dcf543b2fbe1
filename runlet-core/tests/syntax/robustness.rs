//! Property tests: any input — arbitrary text, bytes read as UTF-8, or soups of Runlet and foreign
//! tokens — parses without panicking, within its limits, deterministically, with diagnostics
//! whose spans and fixes fit the source.

use proptest::prelude::*;
use runlet::diag::apply_fixes;
use runlet::syntax::{ParseOptions, parse_with};

use crate::token_soup::soup;

fn check(source: &str, options: &ParseOptions) -> Result<(), TestCaseError> {
    let parse = parse_with(source, options);
    prop_assert!(parse.diagnostics.len() <= options.max_diagnostics + 1);
    for diagnostic in &parse.diagnostics {
        for span in std::iter::once(diagnostic.span).chain(diagnostic.labels.iter().map(|l| l.span)) {
            prop_assert!(span.start <= span.end && span.end as usize <= source.len(), "{diagnostic:?}");
            prop_assert!(
                source.is_char_boundary(span.start as usize) && source.is_char_boundary(span.end as usize)
            );
        }
        for fix in &diagnostic.fixes {
            prop_assert!(apply_fixes(source, [fix]).is_some(), "fix {fix:?} does not apply to {source:?}");
        }
    }
    let mut deepest = 0;
    runlet::syntax::path::walk(&parse.program, |path, _| {
        deepest = deepest.max(path.steps.split('/').count())
    });
    let bound = 3 * (options.max_nesting_depth as usize + options.max_operator_chain as usize + 2);
    prop_assert!(deepest <= bound, "tree depth {deepest} exceeds {bound}");
    let again = parse_with(source, options);
    prop_assert_eq!(&parse.diagnostics, &again.diagnostics);
    prop_assert_eq!(&parse.program, &again.program);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics(source in any::<String>()) {
        check(&source, &ParseOptions::default())?;
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        check(&String::from_utf8_lossy(&bytes), &ParseOptions::default())?;
    }

    #[test]
    fn token_soups_never_panic(source in soup(120)) {
        check(&source, &ParseOptions::default())?;
    }

    #[test]
    fn token_soups_respect_tight_limits(source in soup(120)) {
        let options = ParseOptions {
            max_source_bytes: 400,
            max_nesting_depth: 6,
            max_operator_chain: 6,
            max_diagnostics: 4,
        };
        check(&source, &options)?;
    }
}
