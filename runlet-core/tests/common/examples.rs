//! Loading the repository's example programs in integration tests: their files, registries and
//! host inputs, shared by the run and observe suites.

use runlet::analyze::Inputs;
use runlet::registry::{Registry, RegistryOptions};
use runlet::value::{Value, parse_json};

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
    match parse_json(json).expect("inputs JSON") {
        Value::Object(object) => object.entries().iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
        _ => panic!("inputs must be an object"),
    }
}
