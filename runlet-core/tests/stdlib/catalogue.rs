//! The catalogue entries of the intrinsic codes: each `## Wrong` program fails with its code
//! (at compile time for a literal pattern, else when it runs) and each `## Right` one succeeds;
//! the prelude registry codes' `## Wrong` registries are rejected with them and `## Right` load.

use runlet::diag::{Code, catalogue, codes};
use runlet::registry::{Registry, RegistryOptions};

use crate::support::{run, runtime};

/// The first fenced `lang` block after `heading`.
fn example<'t>(text: &'t str, heading: &str, lang: &str) -> &'t str {
    let section = &text[text.find(heading).expect("section") + heading.len()..];
    let fence = format!("```{lang}\n");
    let start = section.find(&fence).expect("fenced block") + fence.len();
    let end = section[start..].find("```").expect("closing fence");
    &section[start..start + end]
}

fn entry(code: Code) -> &'static str {
    catalogue::of(code).unwrap_or_else(|| panic!("{code} has no catalogue entry")).text
}

#[test]
fn intrinsic_failure_examples_fail_with_their_code() {
    let runtime = runtime("[]");
    let cases = [
        (codes::INVALID_REGEX, "compile RL5401"),
        (codes::INVALID_JSON_TEXT, "RL5402"),
        (codes::INVALID_NUMBER_TEXT, "RL5403"),
        (codes::INVALID_TIME_TEXT, "RL5404"),
        (codes::INTRINSIC_ARGUMENT_INVALID, "RL5405"),
        (codes::INTRINSIC_RESULT_TOO_LARGE, "RL5406"),
        (codes::NOT_SORTABLE, "RL5407"),
    ];
    for (code, failure) in cases {
        let text = entry(code);
        assert_eq!(run(&runtime, example(text, "## Wrong", "runlet")), failure, "{code} Wrong");
        let right = run(&runtime, example(text, "## Right", "runlet"));
        assert!(!right.starts_with("RL") && !right.starts_with("compile"), "{code} Right gives {right}");
    }
}

/// `number.random` cannot be made to fail here; its example is at least a program that runs.
#[test]
fn the_sampling_failure_examples_run() {
    let runtime = runtime("[]");
    let text = entry(codes::SAMPLE_UNAVAILABLE);
    for heading in ["## Wrong", "## Right"] {
        let result = run(&runtime, example(text, heading, "runlet"));
        assert!(result.parse::<f64>().is_ok(), "{heading} gives {result}");
    }
}

#[test]
fn prelude_registry_examples_show_their_code() {
    for code in [codes::PRELUDE_NAMESPACE_TAKEN, codes::INVALID_PRELUDE] {
        let text = entry(code);
        let wrong = Registry::from_json_str(example(text, "## Wrong", "json"), &RegistryOptions::default())
            .expect_err("the Wrong registry is rejected");
        assert!(wrong.issues.iter().any(|i| i.code == code), "{code}: {wrong}");
        let right = Registry::from_json_str(example(text, "## Right", "json"), &RegistryOptions::default());
        assert!(right.is_ok(), "{code}: the Right registry does not load: {right:?}");
    }
}
