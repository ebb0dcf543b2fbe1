//! Findings about a registry: a stable `RL8xxx` code, the JSON path they are about and help;
//! turned into [`Diagnostic`]s pointing into the registry file's text on demand.

use std::fmt;

use crate::diag::{Code, Diagnostic, Severity, Span};

use super::json_path::JsonPath;
use super::locate::locate;

/// One finding about a registry file or descriptor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryIssue {
    pub code: Code,
    pub severity: Severity,
    /// Where in the registry document the finding is.
    pub path: JsonPath,
    pub message: String,
    pub help: Vec<String>,
    pub candidates: Vec<String>,
    /// A known position in the file's text, used instead of locating `path` (such as where a
    /// JSON syntax error is).
    pub span: Option<Span>,
}

impl RegistryIssue {
    pub fn error(code: Code, path: impl Into<JsonPath>, message: impl Into<String>) -> RegistryIssue {
        RegistryIssue {
            code,
            severity: Severity::Error,
            path: path.into(),
            message: message.into(),
            help: Vec::new(),
            candidates: Vec::new(),
            span: None,
        }
    }

    pub fn warning(code: Code, path: impl Into<JsonPath>, message: impl Into<String>) -> RegistryIssue {
        RegistryIssue { severity: Severity::Warning, ..RegistryIssue::error(code, path, message) }
    }

    pub fn with_help(mut self, help: impl Into<String>) -> RegistryIssue {
        self.help.push(help.into());
        self
    }

    pub fn with_candidates<S: Into<String>>(
        mut self,
        candidates: impl IntoIterator<Item = S>,
    ) -> RegistryIssue {
        self.candidates.extend(candidates.into_iter().map(Into::into));
        self
    }

    pub fn at(mut self, span: Span) -> RegistryIssue {
        self.span = Some(span);
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The finding as a diagnostic about `source`, the registry file's text: the span is the
    /// known one, or covers the value (or `"key": value` member) at the path, or is the file's
    /// start when the path is not in the text; a note repeats the path.
    pub fn to_diagnostic(&self, source: &str) -> Diagnostic {
        let span = self.span.or_else(|| locate(source, &self.path)).unwrap_or(Span::at(0));
        let mut diagnostic = Diagnostic::new(self.code, self.severity, span, self.message.clone())
            .with_note(format!("registry path: {}", display_path(&self.path)))
            .with_candidates(self.candidates.iter().cloned());
        for help in &self.help {
            diagnostic = diagnostic.with_help(help.clone());
        }
        diagnostic
    }
}

/// The path as a JSON pointer, with `/` for the whole document.
fn display_path(path: &JsonPath) -> String {
    if path.segments().is_empty() { "/".to_owned() } else { path.to_string() }
}

impl fmt::Display for RegistryIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let severity = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        };
        write!(f, "{severity}[{}] {}: {}", self.code, display_path(&self.path), self.message)?;
        for help in &self.help {
            write!(f, "\n  help: {help}")?;
        }
        if !self.candidates.is_empty() {
            write!(f, "\n  candidates: {}", self.candidates.join(", "))?;
        }
        Ok(())
    }
}

/// A registry that could not be built, with every finding (errors and warnings) in document order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the registry has {} error(s); the first: {}", self.error_count(), self.first_error())]
pub struct RegistryError {
    pub issues: Vec<RegistryIssue>,
}

impl RegistryError {
    pub fn error_count(&self) -> usize {
        self.issues.iter().filter(|i| i.is_error()).count()
    }

    fn first_error(&self) -> String {
        self.issues.iter().find(|i| i.is_error()).map(ToString::to_string).unwrap_or_default()
    }

    /// Every finding as a diagnostic about `source`, the registry file's text.
    pub fn diagnostics(&self, source: &str) -> Vec<Diagnostic> {
        self.issues.iter().map(|i| i.to_diagnostic(source)).collect()
    }
}
