//! Diagnostics: the one record every stage reports through (code, spans, help, fixes), its
//! renderings (rustc-style text and the JSON contract) and the catalogue behind `runlet explain`.

pub mod catalogue;
pub mod codes;
mod line_index;
pub mod nearest;
mod render;
pub(crate) mod sink;

pub use codes::Code;
pub use line_index::{LineCol, LineIndex};
pub use render::{JsonDiagnostics, json_diagnostics, render_json, render_text, report_json, source_digest};

use serde::Serialize;

/// A half-open byte range into one UTF-8 source text.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, serde::Serialize, serde::Deserialize,
)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub const fn new(start: u32, end: u32) -> Self {
        Span { start, end }
    }

    /// An empty span at `offset`: where an insertion goes.
    pub const fn at(offset: u32) -> Self {
        Span { start: offset, end: offset }
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }

    pub fn len(self) -> u32 {
        self.end - self.start
    }

    pub fn is_empty(self) -> bool {
        self.start == self.end
    }

    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    Warning,
    Note,
}

/// How safely a fix can be applied without review (rustc's scale).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Applicability {
    MachineApplicable,
    MaybeIncorrect,
    HasPlaceholders,
}

/// Replace the bytes of `span` with `replacement`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub span: Span,
    pub replacement: String,
}

/// A source repair: a set of non-overlapping edits applied together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fix {
    pub message: String,
    pub applicability: Applicability,
    pub edits: Vec<Edit>,
}

impl Fix {
    pub fn new(message: impl Into<String>, applicability: Applicability, edits: Vec<Edit>) -> Self {
        Fix { message: message.into(), applicability, edits }
    }

    /// A single-edit fix that is safe to apply without review.
    pub fn machine(message: impl Into<String>, span: Span, replacement: impl Into<String>) -> Self {
        Fix::new(
            message,
            Applicability::MachineApplicable,
            vec![Edit { span, replacement: replacement.into() }],
        )
    }

    /// A single-edit fix that changes meaning in a way a reader should confirm.
    pub fn suggest(message: impl Into<String>, span: Span, replacement: impl Into<String>) -> Self {
        Fix::new(message, Applicability::MaybeIncorrect, vec![Edit { span, replacement: replacement.into() }])
    }

    /// True when every edit is an insertion (an empty span): what `heal` may apply.
    pub fn is_insertion_only(&self) -> bool {
        self.edits.iter().all(|e| e.span.is_empty())
    }
}

/// A secondary span with a short message, such as "loop starts here".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

/// A candidate a diagnostic offers, as a record (spec §9.2 `candidates[]`): its name, the
/// registry namespace it lives in when that is not the one written, and what kind of name it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CandidateRecord {
    pub name: String,
    pub namespace: Option<String>,
    /// `tool`, `binding`, `host_input` or `property`.
    pub kind: &'static str,
}

/// One finding about a source text. Build it with [`Diagnostic::error`] or
/// [`Diagnostic::warning`] and the chained setters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub code: Code,
    pub severity: Severity,
    pub message: String,
    pub span: Span,
    pub labels: Vec<Label>,
    pub help: Vec<String>,
    pub notes: Vec<String>,
    pub fixes: Vec<Fix>,
    pub candidates: Vec<String>,
    /// The candidates as records, where the reporter knows their kind (else derived from
    /// `candidates` when rendering).
    pub candidate_records: Vec<CandidateRecord>,
    /// The shapes the context accepts and the shape it got (spec §9.2), where known.
    pub expected_shapes: Vec<String>,
    pub actual_shape: Option<String>,
}

impl Diagnostic {
    pub fn new(code: Code, severity: Severity, span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            code,
            severity,
            message: message.into(),
            span,
            labels: Vec::new(),
            help: Vec::new(),
            notes: Vec::new(),
            fixes: Vec::new(),
            candidates: Vec::new(),
            candidate_records: Vec::new(),
            expected_shapes: Vec::new(),
            actual_shape: None,
        }
    }

    pub fn error(code: Code, span: Span, message: impl Into<String>) -> Self {
        Self::new(code, Severity::Error, span, message)
    }

    pub fn warning(code: Code, span: Span, message: impl Into<String>) -> Self {
        Self::new(code, Severity::Warning, span, message)
    }

    pub fn with_label(mut self, span: Span, message: impl Into<String>) -> Self {
        self.labels.push(Label { span, message: message.into() });
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help.push(help.into());
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    pub fn with_fix(mut self, fix: Fix) -> Self {
        self.fixes.push(fix);
        self
    }

    pub fn with_candidates<I, S>(mut self, candidates: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.candidates.extend(candidates.into_iter().map(Into::into));
        self
    }

    pub fn with_candidate_records(mut self, records: impl IntoIterator<Item = CandidateRecord>) -> Self {
        self.candidate_records.extend(records);
        self
    }

    /// The shapes expected where the value was used, and the value's own.
    pub fn with_shapes(mut self, expected: impl IntoIterator<Item = String>, actual: Option<String>) -> Self {
        self.expected_shapes.extend(expected);
        self.actual_shape = actual;
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// Applies every edit of `fixes` to `source`. Edits must not overlap; returns `None` when two do
/// or when an edit falls outside the source or off a character boundary.
pub fn apply_fixes<'a>(source: &str, fixes: impl IntoIterator<Item = &'a Fix>) -> Option<String> {
    let mut edits: Vec<&Edit> = fixes.into_iter().flat_map(|f| f.edits.iter()).collect();
    edits.sort_by_key(|e| (e.span.start, e.span.end));
    let mut out = String::with_capacity(source.len());
    let mut cursor = 0usize;
    for edit in edits {
        let (start, end) = (edit.span.start as usize, edit.span.end as usize);
        if start < cursor
            || end > source.len()
            || !source.is_char_boundary(start)
            || !source.is_char_boundary(end)
        {
            return None;
        }
        out.push_str(&source[cursor..start]);
        out.push_str(&edit.replacement);
        cursor = end;
    }
    out.push_str(&source[cursor..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apply_fixes_applies_in_offset_order() {
        let fixes = [Fix::machine("b", Span::at(5), "X"), Fix::machine("a", Span::new(0, 1), "Y")];
        assert_eq!(apply_fixes("abcdefg", &fixes).as_deref(), Some("YbcdeXfg"));
    }

    #[test]
    fn apply_fixes_rejects_overlap_and_out_of_range() {
        let overlapping = [Fix::machine("a", Span::new(0, 3), ""), Fix::machine("b", Span::new(2, 4), "")];
        assert_eq!(apply_fixes("abcdef", &overlapping), None);
        assert_eq!(apply_fixes("ab", &[Fix::machine("a", Span::new(1, 9), "")]), None);
        assert_eq!(apply_fixes("é", &[Fix::machine("a", Span::at(1), "x")]), None);
    }
}
