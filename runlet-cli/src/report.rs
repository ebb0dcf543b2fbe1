//! Printing diagnostics the way every command does: rustc-style text, or the JSON object of
//! INTERFACES.md §1 on stdout with `--format json` (inside a run report for the run commands).

use runlet::diag::{Diagnostic, JsonDiagnostics, json_diagnostics, render_json, render_text, source_digest};
use serde::Serialize;

use crate::files::SourceFile;
use crate::registry::RegistryWarnings;

/// `--format`: how a command prints diagnostics and results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    #[default]
    Text,
    Json,
}

/// Prints `diagnostics` about `file` in `format`.
pub fn print_diagnostics(file: &SourceFile, diagnostics: &[Diagnostic], format: Format) {
    match format {
        Format::Json => outln!("{}", render_json(&file.text, diagnostics)),
        Format::Text => {
            out!("{}", render_text(&file.text, &file.display_name(), diagnostics));
            outln!("{}", summary(diagnostics));
        }
    }
}

/// The diagnostics report of §1 about a program, with a second one about the registry file it
/// was checked against: `{"source_digest", "diagnostics", "registry": {"source_digest",
/// "diagnostics"}}`, each report's spans and digest about its own file.
#[derive(Serialize)]
struct ReportWithRegistry<'a> {
    #[serde(flatten)]
    program: FileReport<'a>,
    registry: FileReport<'a>,
}

#[derive(Serialize)]
struct FileReport<'a> {
    source_digest: String,
    diagnostics: JsonDiagnostics<'a>,
}

impl<'a> FileReport<'a> {
    fn of(text: &str, diagnostics: &'a [Diagnostic]) -> FileReport<'a> {
        FileReport { source_digest: source_digest(text), diagnostics: json_diagnostics(text, diagnostics) }
    }
}

/// Prints, as one JSON object on stdout, `diagnostics` about `file` and the registry's
/// `warnings` about its own text.
pub fn print_diagnostics_with_registry(
    file: &SourceFile,
    diagnostics: &[Diagnostic],
    warnings: &RegistryWarnings,
) {
    let report =
        ReportWithRegistry { program: FileReport::of(&file.text, diagnostics), registry: warnings.report() };
    outln!("{}", serde_json::to_string(&report).expect("diagnostics serialize"));
}

/// A run report that carries diagnostics instead of a result: `{"status", "source_digest",
/// "diagnostics", "registry"?}`, the diagnostics in the order of §1.
#[derive(Serialize)]
struct RunDiagnostics<'a> {
    status: &'a str,
    source_digest: String,
    diagnostics: JsonDiagnostics<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    registry: Option<FileReport<'a>>,
}

/// Prints the run report of `status` (`compile_error`, `usage_error`) with `diagnostics` about
/// `text`, and the registry's `warnings` when it has any, as one line of JSON.
pub fn print_run_diagnostics(
    status: &str,
    text: &str,
    diagnostics: &[Diagnostic],
    warnings: Option<&RegistryWarnings>,
) {
    let report = RunDiagnostics {
        status,
        source_digest: source_digest(text),
        diagnostics: json_diagnostics(text, diagnostics),
        registry: warnings.map(RegistryWarnings::report),
    };
    outln!("{}", serde_json::to_string(&report).expect("diagnostics serialize"));
}

/// The `"registry"` member a run report carries when the registry loaded with `warnings`:
/// `,"registry":{"source_digest","diagnostics"}`, or nothing.
pub fn registry_member(warnings: Option<&RegistryWarnings>) -> String {
    warnings.map_or_else(String::new, |warnings| {
        format!(
            r#","registry":{}"#,
            serde_json::to_string(&warnings.report()).expect("diagnostics serialize")
        )
    })
}

impl RegistryWarnings {
    /// The §1 report of the warnings about the registry's own text.
    fn report(&self) -> FileReport<'_> {
        FileReport::of(&self.file.text, &self.diagnostics)
    }
}

/// `2 errors, 1 warning` or `no problems found`.
pub fn summary(diagnostics: &[Diagnostic]) -> String {
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    let warnings = diagnostics.len() - errors;
    let count = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    match (errors, warnings) {
        (0, 0) => "no problems found".to_owned(),
        (0, w) => count(w, "warning"),
        (e, 0) => count(e, "error"),
        (e, w) => format!("{}, {}", count(e, "error"), count(w, "warning")),
    }
}
