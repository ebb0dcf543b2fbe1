//! A bounded diagnostic collector shared by the front end and the analyzer: past the configured
//! count, further diagnostics are dropped and one `RL4003` note says so.

use crate::diag::{Diagnostic, Severity, Span, codes};

#[derive(Debug)]
pub(crate) struct Sink {
    diagnostics: Vec<Diagnostic>,
    max: usize,
    dropped: bool,
    /// The cut-off note: which host setting sets `max`.
    setting: &'static str,
}

impl Sink {
    /// A sink keeping at most `max` diagnostics; `setting` is the note that says where hosts
    /// configure `max`.
    pub fn new(max: usize, setting: &'static str) -> Self {
        Sink { diagnostics: Vec::new(), max, dropped: false, setting }
    }

    /// Whether further diagnostics would be dropped.
    pub fn is_full(&self) -> bool {
        self.diagnostics.len() >= self.max
    }

    /// Records `diagnostic` unless the cap is reached; returns its index when recorded.
    pub fn push(&mut self, diagnostic: Diagnostic) -> Option<usize> {
        if self.diagnostics.len() >= self.max {
            self.dropped = true;
            return None;
        }
        self.diagnostics.push(diagnostic);
        Some(self.diagnostics.len() - 1)
    }

    pub fn get_mut(&mut self, index: usize) -> Option<&mut Diagnostic> {
        self.diagnostics.get_mut(index)
    }

    /// The diagnostics ordered by position (stable for equal positions), plus the cut-off note.
    pub fn finish(self) -> Vec<Diagnostic> {
        let mut diagnostics = self.diagnostics;
        diagnostics.sort_by_key(|d| (d.span.start, d.span.end));
        if self.dropped {
            let at = diagnostics.last().map_or(Span::at(0), |d| d.span);
            diagnostics.push(
                Diagnostic::new(
                    codes::TOO_MANY_DIAGNOSTICS,
                    Severity::Note,
                    at,
                    format!("stopped after {} diagnostics", self.max),
                )
                .with_help("fix the reported problems and check again")
                .with_note(self.setting),
            );
        }
        diagnostics
    }
}
