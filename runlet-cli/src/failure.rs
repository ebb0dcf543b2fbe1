//! The command line's one error contract (INTERFACES.md §4): every problem a command reports
//! besides a program's own diagnostics — a malformed command line or a bad flag value, a file
//! that cannot be read, is too large or is not UTF-8, a registry, inputs, fixture or transcript
//! file with errors, a journal that cannot be opened — is a [`Failure`]: diagnostics with stable
//! RL codes, printed as text or, with `--format json`, as the diagnostics JSON of §1 on stdout
//! (a run report with `"status": "usage_error"` for `run`, `graph` and `replay`). Exit status 2.

use std::process::ExitCode;

use runlet::diag::{Code, Diagnostic, Span, render_json};

use crate::files::SourceFile;
use crate::report::{Format, print_diagnostics, print_run_diagnostics};

/// A problem that stops a command, with its diagnostics.
#[derive(Debug)]
pub struct Failure {
    /// The file whose text the diagnostics point into, with what it is ("the registry"); none
    /// for problems outside any file's text.
    file: Option<(&'static str, SourceFile)>,
    diagnostics: Vec<Diagnostic>,
}

/// What a command's JSON output is: a diagnostics report (§1) or a run report (§4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Diagnostics,
    Run,
}

impl Failure {
    /// A problem outside any file's text, such as a file that cannot be read. A message that
    /// starts with its own code (the `Display` of core errors, `RL8401: …`) loses that prefix,
    /// which the diagnostic carries already.
    pub fn new(code: Code, message: impl Into<String>) -> Failure {
        let message = message.into();
        let message = code.unprefixed(&message).to_owned();
        Failure { file: None, diagnostics: vec![Diagnostic::error(code, Span::at(0), message)] }
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Failure {
        if let Some(last) = self.diagnostics.pop() {
            self.diagnostics.push(last.with_help(help));
        }
        self
    }

    /// The code and message of its first diagnostic: what a list of many runs' outcomes says
    /// of one that failed.
    pub fn first(&self) -> Option<(Code, &str)> {
        self.diagnostics.first().map(|diagnostic| (diagnostic.code, diagnostic.message.as_str()))
    }

    /// Whether its first diagnostic has `code`: a failure a command treats apart.
    pub fn is(&self, code: Code) -> bool {
        self.first().is_some_and(|(first, _)| first == code)
    }

    /// The diagnostics of `what` (such as "the registry"), whose text is `file`.
    pub fn in_file(what: &'static str, file: SourceFile, diagnostics: Vec<Diagnostic>) -> Failure {
        Failure { file: Some((what, file)), diagnostics }
    }

    /// Prints the failure in `format` (JSON of `shape`) and returns exit status 2.
    pub fn report(&self, format: Format, shape: Shape) -> ExitCode {
        let text = self.file.as_ref().map_or("", |(_, file)| file.text.as_str());
        match (format, shape) {
            (Format::Json, Shape::Diagnostics) => outln!("{}", render_json(text, &self.diagnostics)),
            (Format::Json, Shape::Run) => print_run_diagnostics("usage_error", text, &self.diagnostics, None),
            (Format::Text, _) => match &self.file {
                Some((what, file)) => {
                    print_diagnostics(file, &self.diagnostics, Format::Text);
                    let code = self.diagnostics.iter().find(|d| d.is_error()).map(|d| d.code);
                    let code = code.map(|code| format!(" ({code})")).unwrap_or_default();
                    errln!("error: {what} `{}` has errors{code}", file.display_name());
                }
                None => self.diagnostics.iter().for_each(print_plain),
            },
        }
        ExitCode::from(2)
    }
}

/// One diagnostic that points into no text, on stderr: `error[RL8502]: message` and its help.
fn print_plain(diagnostic: &Diagnostic) {
    errln!("error[{}]: {}", diagnostic.code, diagnostic.message);
    for help in &diagnostic.help {
        errln!("  = help: {help}");
    }
}

#[cfg(test)]
mod tests {
    use runlet::diag::codes;

    use super::*;

    #[test]
    fn help_goes_with_the_diagnostic() {
        let failure = Failure::new(codes::FILE_UNREADABLE, "cannot read `x`").with_help("check the path");
        assert_eq!(failure.diagnostics.len(), 1);
        assert_eq!(failure.diagnostics[0].code, codes::FILE_UNREADABLE);
        assert_eq!(failure.diagnostics[0].help, ["check the path"]);
    }
}
