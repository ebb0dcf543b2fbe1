//! Loading what a program is checked against: the registry file (empty without one), with the
//! warnings it loaded with, and the `--inputs` file of host input values; problems with either
//! are [`Failure`]s (exit 2).

use std::path::Path;

use runlet::analyze::{Inputs, InputsError};
use runlet::diag::{Diagnostic, render_text};
use runlet::registry::{Registry, RegistryOptions};

use crate::failure::Failure;
use crate::files::{FileKind, SourceFile, read_text};

/// Loads the registry file at `path`, or an empty registry without one. Registry errors are
/// diagnostics about the registry file; warnings go to stderr.
pub fn load_registry(path: Option<&Path>) -> Result<Registry, Failure> {
    let (registry, warnings) = load_registry_reporting(path)?;
    if let Some(warnings) = warnings {
        eprint!("{}", render_text(&warnings.file.text, &warnings.file.display_name(), &warnings.diagnostics));
    }
    Ok(registry)
}

/// The warnings a registry file loaded with, as diagnostics about its text.
#[derive(Debug)]
pub struct RegistryWarnings {
    pub file: SourceFile,
    pub diagnostics: Vec<Diagnostic>,
}

/// Loads the registry file at `path` (an empty registry without one) and hands back its
/// warnings, when it has any, for the caller to print.
pub fn load_registry_reporting(path: Option<&Path>) -> Result<(Registry, Option<RegistryWarnings>), Failure> {
    let Some(path) = path else {
        return Ok((Registry::empty(), None));
    };
    let file = read_text(path, FileKind::Registry)?;
    match Registry::from_json_str(&file.text, &RegistryOptions::default()) {
        Ok(loaded) => {
            let diagnostics: Vec<_> = loaded.warnings.iter().map(|w| w.to_diagnostic(&file.text)).collect();
            let warnings = (!diagnostics.is_empty()).then_some(RegistryWarnings { file, diagnostics });
            Ok((loaded.registry, warnings))
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
