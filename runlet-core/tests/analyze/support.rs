//! Shared helpers: reading fixtures, loading registries, and running the analyzer on a case whose
//! header comments choose its registry, inputs and options.

use std::path::PathBuf;

use runlet::analyze::{Analysis, AnalyzeOptions, Inputs, analyze};
use runlet::diag::{Applicability, Diagnostic, Fix};
use runlet::registry::{Registry, RegistryOptions, UnsafeToolPolicy};

/// The text of a file under `tests/analyze/`.
pub fn read(relative: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/analyze").join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every `*.run` file of a directory under `tests/analyze/`, by name.
pub fn cases(dir: &str) -> Vec<(String, String)> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/analyze").join(dir);
    let mut files: Vec<(String, String)> = std::fs::read_dir(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|p| p.extension().is_some_and(|e| e == "run"))
        .map(|p| {
            let name = p.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_owned();
            let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (name, text)
        })
        .collect();
    files.sort();
    files
}

/// Loads `registries/{name}.json` with `options`.
pub fn registry(name: &str, options: &RegistryOptions) -> Registry {
    let text = read(&format!("registries/{name}.json"));
    match Registry::from_json_str(&text, options) {
        Ok(loaded) => loaded.registry,
        Err(error) => panic!("registry {name} does not load: {error}"),
    }
}

/// How a case is analyzed, from `# key: value` lines at its top.
#[derive(Debug, Clone)]
pub struct Setup {
    pub registry: String,
    pub registry_options: RegistryOptions,
    pub inputs: Inputs,
    pub options: AnalyzeOptions,
}

impl Setup {
    pub fn of(source: &str) -> Setup {
        let mut setup = Setup {
            registry: "base".to_owned(),
            registry_options: RegistryOptions::default(),
            inputs: Inputs::new(),
            options: AnalyzeOptions::default(),
        };
        for line in source.lines().take_while(|l| l.starts_with('#')) {
            let Some((key, value)) = line.trim_start_matches('#').split_once(':') else { continue };
            let value = value.trim();
            match key.trim() {
                "registry" => setup.registry = value.to_owned(),
                "unsafe" if value == "require_boundary" => {
                    setup.registry_options.unsafe_tools = UnsafeToolPolicy::RequireBoundary
                }
                "inputs" => {
                    let json = runlet::value::parse_json(value).expect("inputs are JSON");
                    let runlet::value::Value::Object(object) = json else {
                        panic!("inputs must be an object")
                    };
                    for (name, value) in object.entries() {
                        setup.inputs.insert(name.to_string(), value.clone());
                    }
                }
                "max_work" => setup.options.max_work = value.parse().expect("a number"),
                "max_union_variants" => setup.options.max_union_variants = value.parse().expect("a number"),
                "max_diagnostics" => setup.options.max_diagnostics = value.parse().expect("a number"),
                "max_loop_limit" => setup.options.max_loop_limit = value.parse().expect("a number"),
                _ => {}
            }
        }
        setup
    }

    pub fn registry(&self) -> Registry {
        registry(&self.registry, &self.registry_options)
    }

    pub fn analyze(&self, source: &str) -> Analysis {
        analyze(source, &self.registry(), &self.inputs, &self.options)
    }
}

/// Analyzes `source` as a case does.
pub fn check(source: &str) -> Analysis {
    Setup::of(source).analyze(source)
}

/// How many errors `analysis` reports.
pub fn errors(analysis: &Analysis) -> usize {
    analysis.diagnostics.iter().filter(|d| d.is_error()).count()
}

/// The machine-applicable fixes of `diagnostics` whose edits do not overlap, in order.
pub fn compatible<'a>(diagnostics: impl IntoIterator<Item = &'a Diagnostic>) -> Vec<&'a Fix> {
    let mut chosen: Vec<&Fix> = Vec::new();
    for fix in diagnostics.into_iter().flat_map(|d| &d.fixes) {
        if fix.applicability != Applicability::MachineApplicable {
            continue;
        }
        let overlaps = chosen.iter().flat_map(|c| &c.edits).any(|a| {
            fix.edits
                .iter()
                .any(|b| a.span.start < b.span.end && b.span.start < a.span.end || a.span == b.span)
        });
        if !overlaps {
            chosen.push(fix);
        }
    }
    chosen
}
