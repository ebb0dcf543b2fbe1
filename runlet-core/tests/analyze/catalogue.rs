//! The analyzer codes' catalogue entries: each `## Wrong` example reports its code and each
//! `## Right` example checks without errors and without that code, against the `base` registry.

use runlet::analyze::{AnalyzeOptions, Inputs, analyze};
use runlet::diag::{Code, catalogue, codes};
use runlet::registry::{RegistryOptions, UnsafeToolPolicy};

use crate::support::registry;

/// The fenced `runlet` block following `heading` in a catalogue entry.
fn example<'t>(text: &'t str, heading: &str) -> &'t str {
    let section = &text[text.find(heading).expect("section") + heading.len()..];
    let start = section.find("```runlet\n").expect("runlet block") + "```runlet\n".len();
    let end = section[start..].find("```").expect("closing fence");
    &section[start..start + end]
}

/// The codes the analyzer reports; their examples are checked here.
pub const ANALYZER_CODES: &[Code] = &[
    codes::SHADOWED_BINDING,
    codes::UNUSED_BINDING,
    codes::FOLD_EFFECT_IGNORES_ACCUMULATOR,
    codes::UNKNOWN_NAME,
    codes::UNKNOWN_TOOL,
    codes::UNKNOWN_PROPERTY,
    codes::BINDING_SHADOWS_REGISTRY_ROOT,
    codes::NOT_CALLABLE,
    codes::TOOL_USED_AS_VALUE,
    codes::ARGUMENT_COUNT,
    codes::ARGUMENT_SHAPE,
    codes::TYPE_MISMATCH,
    codes::PARTIAL_PROPERTY,
    codes::INDEX_MISMATCH,
    codes::UNDECLARED_PROPERTY,
    codes::REQUIRED_PROPERTY_MISSING,
    codes::OPERAND_TYPES,
    codes::CONDITION_NOT_BOOLEAN,
    codes::AMBIGUOUS_VARIANTS,
    codes::NULLABLE_TO_STRING,
    codes::BYTES_TO_STRING,
    codes::PROSE_PARAMETER,
    codes::NOT_ITERABLE,
    codes::UNION_WIDENED,
    codes::LITERAL_OUT_OF_RANGE,
    codes::NUMBER_LITERAL_TO_INTEGER,
    codes::FOLD_ACCUMULATOR_MISMATCH,
    codes::INVALID_COMPUTED_KEY_KIND,
    codes::UNSAFE_CALL_OUTSIDE_BOUNDARY,
    codes::COUNT_ABOVE_MAXIMUM,
];

#[test]
fn analyzer_catalogue_examples_behave_as_documented() {
    for &code in ANALYZER_CODES {
        let entry = catalogue::of(code).unwrap_or_else(|| panic!("{code} has no catalogue entry"));
        let mut registry_options = RegistryOptions::default();
        let mut options = AnalyzeOptions::default();
        match code {
            codes::UNSAFE_CALL_OUTSIDE_BOUNDARY => {
                registry_options.unsafe_tools = UnsafeToolPolicy::RequireBoundary
            }
            codes::UNION_WIDENED => options.max_union_variants = 4,
            _ => {}
        }
        let registry = registry("base", &registry_options);
        let wrong = analyze(example(entry.text, "## Wrong"), &registry, &Inputs::new(), &options);
        assert!(
            wrong.diagnostics.iter().any(|d| d.code == code),
            "{code}: the Wrong example reports {:?}",
            wrong.diagnostics.iter().map(|d| d.code.to_string()).collect::<Vec<_>>()
        );
        let right = analyze(example(entry.text, "## Right"), &registry, &Inputs::new(), &options);
        assert!(
            !right.has_errors() && right.diagnostics.iter().all(|d| d.code != code),
            "{code}: the Right example reports {:?}",
            right.diagnostics.iter().map(|d| format!("{} {}", d.code, d.message)).collect::<Vec<_>>()
        );
    }
}

#[test]
fn the_retired_code_stays_reserved() {
    let entry = catalogue::of(codes::UNREACHABLE_EFFECT).expect("RL1204 has an entry");
    assert!(entry.title.contains("retired"));
    let registry = registry("base", &RegistryOptions::default());
    let program = example(entry.text, "## Wrong");
    let analysis = analyze(program, &registry, &Inputs::new(), &AnalyzeOptions::default());
    assert!(analysis.diagnostics.iter().all(|d| d.code != codes::UNREACHABLE_EFFECT));
    assert!(!analysis.has_errors(), "{:?}", analysis.diagnostics);
}
