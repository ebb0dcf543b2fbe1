//! Loading what a program is checked against: the registry file (empty without one) and the
//! `--inputs` file of host input values; problems with either are [`Failure`]s (exit 2).

use std::path::Path;

use runlet::analyze::{Inputs, InputsError};
use runlet::diag::render_text;
use runlet::registry::{Registry, RegistryOptions};

use crate::failure::Failure;
use crate::files::{FileKind, read_text};

/// Loads the registry file at `path`, or an empty registry without one. Registry errors are
/// diagnostics about the registry file; warnings go to stderr.
pub fn load_registry(path: Option<&Path>) -> Result<Registry, Failure> {
    let Some(path) = path else {
        return Ok(Registry::empty());
    };
    let file = read_text(path, FileKind::Registry)?;
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
            let diagnostics = error.diagnostics(&file.text);
            Err(Failure::in_file(FileKind::Registry.what(), file, diagnostics))
        }
    }
}

/// Reads `--inputs`: a JSON object of host input names to values (`Inputs::from_json`, which
/// checks each name and each value the registry declares a schema for).
pub fn load_inputs(path: Option<&Path>, registry: &Registry) -> Result<Inputs, Failure> {
    let Some(path) = path else { return Ok(Inputs::new()) };
    let file = read_text(path, FileKind::Inputs)?;
    match Inputs::from_json(&file.text, registry) {
        Ok(inputs) => Ok(inputs),
        Err(InputsError::NotJson(error)) => {
            let diagnostic = error.to_diagnostic(FileKind::Inputs.what(), &file.text);
            Err(Failure::in_file(FileKind::Inputs.what(), file, vec![diagnostic]))
        }
        Err(error) => Err(Failure::new(error.code(), format!("`{}`: {error}", file.display_name()))),
    }
}
