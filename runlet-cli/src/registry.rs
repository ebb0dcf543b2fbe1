//! Loading what a program is checked against: the registry file (empty without one), or the
//! registry of attached MCP servers with the registry file laid over it, with the warnings it
//! loaded with, and the `--inputs` file of host input values; problems with either are
//! [`Failure`]s (exit 2).

use std::path::{Path, PathBuf};

use runlet::analyze::{Inputs, InputsError};
use runlet::diag::{Diagnostic, render_text};
use runlet::registry::{Registry, RegistryOptions};
use runlet::value::parse_json_document;
use runlet_mcp::McpClient;

use crate::failure::Failure;
use crate::files::{FileKind, SourceFile, read_text};

/// How deep the registry file laid over the servers' tools may nest.
const MAX_FILE_DEPTH: usize = 128;

/// The registry a program runs against: the tools of the attached servers (with their
/// `mcp_servers` record) and the registry file at `path` laid over them, or the file alone
/// without servers (an empty registry without either). Registry errors are diagnostics about
/// the registry's text; warnings go to stderr.
pub fn load_registry_with(path: Option<&Path>, servers: Option<&McpClient>) -> Result<Registry, Failure> {
    let (registry, warnings) = load_registry_reporting(path, servers)?;
    if let Some(warnings) = warnings {
        err!("{}", render_text(&warnings.file.text, &warnings.file.display_name(), &warnings.diagnostics));
    }
    Ok(registry)
}

/// The warnings a registry file loaded with, as diagnostics about its text.
#[derive(Debug)]
pub struct RegistryWarnings {
    pub file: SourceFile,
    pub diagnostics: Vec<Diagnostic>,
}

/// Loads the registry of [`load_registry_with`] and hands back its warnings (the registry
/// file's, and the tools the servers' import left out), when it has any, for the caller to
/// print.
pub fn load_registry_reporting(
    path: Option<&Path>,
    servers: Option<&McpClient>,
) -> Result<(Registry, Option<RegistryWarnings>), Failure> {
    let (file, what) = match (servers, path) {
        (Some(servers), _) => (registry_document(path, servers)?, "the registry of the MCP servers"),
        (None, Some(path)) => (read_text(path, FileKind::Registry)?, FileKind::Registry.what()),
        (None, None) => return Ok((Registry::empty(), None)),
    };
    match Registry::from_json_str(&file.text, &RegistryOptions::default()) {
        Ok(loaded) => {
            // The tools a server's import left out are warnings about the registry it produced.
            let left_out = servers.map(McpClient::warnings).unwrap_or_default();
            let diagnostics: Vec<_> =
                left_out.iter().chain(&loaded.warnings).map(|w| w.to_diagnostic(&file.text)).collect();
            let warnings = (!diagnostics.is_empty()).then_some(RegistryWarnings { file, diagnostics });
            Ok((loaded.registry, warnings))
        }
        Err(error) => {
            let diagnostics = error.diagnostics(&file.text);
            Err(Failure::in_file(what, file, diagnostics))
        }
    }
}

/// The registry file of the servers' tools with the file at `path` laid over them, as text.
pub fn registry_document(path: Option<&Path>, servers: &McpClient) -> Result<SourceFile, Failure> {
    let host = match path {
        None => None,
        Some(path) => {
            let file = read_text(path, FileKind::Registry)?;
            let json = parse_json_document(&file.text, MAX_FILE_DEPTH).map_err(|error| {
                let message = format!("the registry file is not valid JSON: {}", error.describe(&file.text));
                Failure::new(
                    runlet::diag::codes::REGISTRY_NOT_JSON,
                    format!("`{}`: {message}", file.display_name()),
                )
            })?;
            Some(json)
        }
    };
    let document = servers.registry_document(host.as_ref());
    let text = serde_json::to_string_pretty(&document).expect("a registry document serializes");
    let name = path.map_or_else(
        || "(the MCP servers' tools)".to_owned(),
        |p| format!("(the MCP servers' tools and {})", p.display()),
    );
    Ok(SourceFile { path: PathBuf::from(name), text })
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
