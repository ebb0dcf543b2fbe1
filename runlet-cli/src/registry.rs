//! Loading what a program is checked against: the registry file (empty without one) and the
//! `--inputs` file of host input values; problems with either are usage errors (exit 2).

use std::path::Path;
use std::process::ExitCode;

use runlet::analyze::Inputs;
use runlet::diag::render_text;
use runlet::registry::{Registry, RegistryOptions};

use crate::input::{read_text, usage_error};
use crate::report::{Format, print_diagnostics};

/// Loads the registry file at `path`, or an empty registry without one. Registry errors are
/// printed as diagnostics about the registry file (in `format`) with exit status 2; warnings go
/// to stderr.
pub fn load_registry(path: Option<&Path>, format: Format) -> Result<Registry, ExitCode> {
    let Some(path) = path else {
        return Ok(Registry::empty());
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

/// Reads `--inputs`: a JSON object of host input names to values (`Inputs::from_json`, which
/// checks each name and each value the registry declares a schema for).
pub fn load_inputs(path: Option<&Path>, registry: &Registry) -> Result<Inputs, ExitCode> {
    let Some(path) = path else { return Ok(Inputs::new()) };
    let file = read_text(path)?;
    Inputs::from_json(&file.text, registry)
        .map_err(|error| usage_error(format!("`{}`: {error} ({})", file.display_name(), error.code())))
}
