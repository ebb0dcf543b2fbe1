//! `runlet fmt`: one canonical layout for Runlet source. Comments are kept, formatting is
//! idempotent, and formatted source parses to the same tree as the original (spans aside).

mod comments;
mod printer;

use crate::diag::Diagnostic;

use comments::Comments;
use printer::Printer;

/// Formats `source`. A source with syntax errors is not formatted: its errors come back instead.
pub fn format(source: &str) -> Result<String, Vec<Diagnostic>> {
    let parsed = super::parse(source);
    if parsed.diagnostics.iter().any(Diagnostic::is_error) {
        return Err(parsed.diagnostics);
    }
    Ok(Printer::new(source, Comments::new(source, &parsed.trivia)).program(&parsed.program))
}
