//! Loading the repository's example programs in integration tests: their files, registries and
//! host inputs, shared by the run and observe suites.

use runlet::analyze::Inputs;
use runlet::registry::{Registry, RegistryOptions};

/// The text of `examples/{name}/{file}`.
pub fn example(name: &str, file: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples").join(name).join(file);
    std::fs::read_to_string(path).expect("example file")
}

/// A registry file's text, loaded with the default options.
pub fn registry(json: &str) -> Registry {
    Registry::from_json_str(json, &RegistryOptions::default()).expect("registry loads").registry
}

/// A JSON object of host inputs.
pub fn inputs(json: &str) -> Inputs {
    Inputs::from_json(json, &Registry::empty()).expect("inputs JSON")
}
