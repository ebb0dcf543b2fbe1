//! Printing diagnostics the way every command does: rustc-style text, or the JSON object of
//! INTERFACES.md §1 on stdout with `--format json` (inside a run report for the run commands).

use runlet::diag::{Diagnostic, JsonDiagnostics, json_diagnostics, render_json, render_text, source_digest};
use serde::Serialize;

use crate::files::SourceFile;

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
        Format::Json => println!("{}", render_json(&file.text, diagnostics)),
        Format::Text => {
            print!("{}", render_text(&file.text, &file.display_name(), diagnostics));
            println!("{}", summary(diagnostics));
        }
    }
}

/// A run report that carries diagnostics instead of a result: `{"status", "source_digest",
/// "diagnostics"}`, the diagnostics in the order of §1.
#[derive(Serialize)]
struct RunDiagnostics<'a> {
    status: &'a str,
    source_digest: String,
    diagnostics: JsonDiagnostics<'a>,
}

/// Prints the run report of `status` (`compile_error`, `usage_error`) with `diagnostics` about
/// `text` as one line of JSON.
pub fn print_run_diagnostics(status: &str, text: &str, diagnostics: &[Diagnostic]) {
    let report = RunDiagnostics {
        status,
        source_digest: source_digest(text),
        diagnostics: json_diagnostics(text, diagnostics),
    };
    println!("{}", serde_json::to_string(&report).expect("diagnostics serialize"));
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
