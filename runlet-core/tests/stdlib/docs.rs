//! docs/STDLIB.md documents exactly the intrinsics the code has, each under a heading that is
//! its signature as the analyzer shows accepted calls.

use runlet::stdlib::{Intrinsic, Prelude};

use crate::support::{REGISTRY, registry};

fn stdlib_md() -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/STDLIB.md");
    std::fs::read_to_string(path).expect("docs/STDLIB.md")
}

/// `text.slice(text: String, start: Integer, end?: Integer) -> String`, from the registry.
fn signature(intrinsic: Intrinsic) -> String {
    let registry = registry(REGISTRY);
    let tool = registry.tool_named(intrinsic.name()).expect("the prelude registers every intrinsic");
    let descriptor = registry.tool(tool);
    let params: Vec<String> = descriptor
        .input
        .positional
        .iter()
        .flatten()
        .map(|p| {
            let optional = if p.optional { "?" } else { "" };
            format!("{}{optional}: {}", p.name, registry.schemas().display(p.schema))
        })
        .collect();
    format!(
        "{}({}) -> {}",
        intrinsic.name(),
        params.join(", "),
        registry.schemas().display(descriptor.output)
    )
}

#[test]
fn every_intrinsic_is_documented_and_every_documented_function_exists() {
    let text = stdlib_md();
    let documented: Vec<&str> = text
        .lines()
        .filter_map(|line| line.strip_prefix("### `"))
        .map(|heading| heading.trim_end_matches('`'))
        .collect();
    let expected: Vec<String> = Intrinsic::all().map(signature).collect();
    let missing: Vec<&String> = expected.iter().filter(|s| !documented.contains(&s.as_str())).collect();
    let unknown: Vec<&&str> = documented.iter().filter(|d| !expected.iter().any(|s| s == **d)).collect();
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "undocumented: {missing:#?}\ndocumented but not in the code: {unknown:#?}"
    );
}

#[test]
fn every_documented_function_says_how_deterministic_it_is() {
    let text = stdlib_md();
    for intrinsic in Intrinsic::all() {
        let heading = format!("### `{}`", signature(intrinsic));
        let start = text.find(&heading).map(|i| i + heading.len()).unwrap_or_default();
        let section = &text[start..];
        let section = &section[..section.find("\n### ").unwrap_or(section.len())];
        let expected = match Prelude::Deterministic.includes(intrinsic) {
            true => "Deterministic.",
            false => "Nondeterministic:",
        };
        assert!(section.contains(expected), "{} does not say `{expected}`", intrinsic.name());
    }
}
