//! Loading what a program is checked against: the registry file (empty without one) and the
//! `--inputs` file of host input values; problems with either are usage errors (exit 2).

use std::path::Path;
use std::process::ExitCode;

use runlet::analyze::Inputs;
use runlet::diag::render_text;
use runlet::registry::{Registry, RegistryBuilder, RegistryOptions};
use runlet::schema::{is_identifier, is_reserved, validate};
use runlet::value::{Value, parse_json};

use crate::input::{SourceFile, read_text, usage_error};
use crate::report::{Format, print_diagnostics};

/// Loads the registry file at `path`, or an empty registry without one. Registry errors are
/// printed as diagnostics about the registry file (in `format`) with exit status 2; warnings go
/// to stderr.
pub fn load_registry(path: Option<&Path>, format: Format) -> Result<Registry, ExitCode> {
    let Some(path) = path else {
        return RegistryBuilder::new(RegistryOptions::default())
            .build()
            .map(|loaded| loaded.registry)
            .map_err(|error| usage_error(format!("the empty registry does not build: {error}")));
    };
    let file = read_text(path)?;
    match Registry::from_json_str(&file.text, &RegistryOptions::default()) {
        Ok(loaded) => {
            if !loaded.warnings.is_empty() {
                let diagnostics: Vec<_> =
                    loaded.warnings.iter().map(|w| w.to_diagnostic(&file.text)).collect();
                eprint!("{}", render_text(&file.text, &file.display_name(), &diagnostics));
            }
            Ok(loaded.registry)
        }
        Err(error) => {
            print_diagnostics(&file, &error.diagnostics(&file.text), format);
            eprintln!("error: the registry `{}` has errors", file.display_name());
            Err(ExitCode::from(2))
        }
    }
}

/// Reads `--inputs`: a JSON object of host input names to values. Each name must be one a
/// program can use, and a value whose schema the registry declares must match it.
pub fn load_inputs(path: Option<&Path>, registry: &Registry) -> Result<Inputs, ExitCode> {
    let Some(path) = path else { return Ok(Inputs::new()) };
    let file = read_text(path)?;
    let json = parse_json(&file.text)
        .map_err(|e| usage_error(format!("`{}` is not valid JSON: {e}", file.display_name())))?;
    let Value::Object(object) = json else {
        return Err(usage_error(format!(
            "`{}` must be a JSON object of input names to values",
            file.display_name()
        )));
    };
    let mut inputs = Inputs::new();
    for (name, value) in object.entries() {
        check_input(&file, name, value, registry)?;
        inputs.insert(name.to_string(), value.clone());
    }
    Ok(inputs)
}

fn check_input(file: &SourceFile, name: &str, value: &Value, registry: &Registry) -> Result<(), ExitCode> {
    if !is_identifier(name) || is_reserved(name) || registry.is_root(name) {
        return Err(usage_error(format!(
            "`{}`: the input name `{name}` is not one a program can use (an identifier that is no reserved word or registry root)",
            file.display_name()
        )));
    }
    if let Some(declared) = registry.inputs().get(name) {
        validate(registry.schemas(), declared.schema, value).map_err(|e| {
            usage_error(format!(
                "`{}`: the input `{name}` does not match the registry's schema for it: {e}",
                file.display_name()
            ))
        })?;
    }
    Ok(())
}
