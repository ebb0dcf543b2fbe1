//! Printing diagnostics the way every command does: rustc-style text, or the JSON object of
//! INTERFACES.md §1 on stdout with `--format json`.

use runlet::diag::{Diagnostic, render_json, render_text};

use crate::input::SourceFile;

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
