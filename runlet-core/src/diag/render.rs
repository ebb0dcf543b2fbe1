//! Renders diagnostics as rustc-style text (via annotate-snippets) and as the JSON contract of
//! INTERFACES.md §1 (field order and names are part of that contract).

use annotate_snippets::{AnnotationKind, Group, Level, Patch, Renderer, Snippet};
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::{Applicability, Diagnostic, LineIndex, Severity, Span};

/// Renders `diagnostics` about `source` (shown as `path`) as plain rustc-style text.
pub fn render_text(source: &str, path: &str, diagnostics: &[Diagnostic]) -> String {
    let renderer = Renderer::plain();
    let mut out = String::new();
    for diagnostic in diagnostics {
        let report = text_report(source, path, diagnostic);
        out.push_str(&renderer.render(&report));
        out.push_str("\n\n");
    }
    out
}

fn text_report<'a>(source: &'a str, path: &'a str, d: &'a Diagnostic) -> Vec<Group<'a>> {
    let level = match d.severity {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
        Severity::Note => Level::NOTE,
    };
    let mut snippet =
        Snippet::source(source).path(path).annotation(AnnotationKind::Primary.span(clamp(source, d.span)));
    for label in &d.labels {
        snippet =
            snippet.annotation(AnnotationKind::Context.span(clamp(source, label.span)).label(&label.message));
    }
    let mut main = level.primary_title(&d.message).id(d.code.to_string()).element(snippet);
    for help in &d.help {
        main = main.element(Level::HELP.message(help));
    }
    for note in &d.notes {
        main = main.element(Level::NOTE.message(note));
    }
    if !d.candidates.is_empty() {
        main = main.element(Level::NOTE.message(format!("candidates: {}", d.candidates.join(", "))));
    }
    let mut groups = vec![main];
    for fix in &d.fixes {
        let mut patched = Snippet::source(source).path(path);
        for edit in &fix.edits {
            patched = patched.patch(Patch::new(clamp(source, edit.span), edit.replacement.as_str()));
        }
        groups.push(Group::with_title(Level::HELP.secondary_title(&fix.message)).element(patched));
    }
    groups
}

/// Clamps a span to the source and to character boundaries, so rendering never panics.
fn clamp(source: &str, span: Span) -> std::ops::Range<usize> {
    let fit = |mut at: usize| {
        at = at.min(source.len());
        while !source.is_char_boundary(at) {
            at -= 1;
        }
        at
    };
    let start = fit(span.start as usize);
    start..fit(span.end as usize).max(start)
}

#[derive(Serialize)]
struct JsonReport<'a> {
    source_digest: String,
    diagnostics: JsonDiagnostics<'a>,
}

/// The `diagnostics` array of the JSON contract, to embed in a larger document (such as the
/// output of `runlet heal`) with every field in contract order.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct JsonDiagnostics<'a>(Vec<JsonDiagnostic<'a>>);

#[derive(Debug, Serialize)]
struct JsonSpan {
    start: u32,
    end: u32,
    line: u32,
    column: u32,
}

#[derive(Debug, Serialize)]
struct JsonLabel<'a> {
    span: JsonSpan,
    message: &'a str,
}

#[derive(Debug, Serialize)]
struct JsonEdit<'a> {
    start: u32,
    end: u32,
    replacement: &'a str,
}

#[derive(Debug, Serialize)]
struct JsonFix<'a> {
    message: &'a str,
    applicability: Applicability,
    edits: Vec<JsonEdit<'a>>,
}

#[derive(Debug, Serialize)]
struct JsonDiagnostic<'a> {
    code: super::Code,
    severity: Severity,
    message: &'a str,
    span: JsonSpan,
    labels: Vec<JsonLabel<'a>>,
    help: &'a [String],
    fixes: Vec<JsonFix<'a>>,
    candidates: &'a [String],
    doc: String,
    notes: &'a [String],
    title: &'static str,
    phase: &'static str,
    expected_shapes: &'a [String],
    actual_shape: Option<&'a str>,
    candidate_records: Vec<JsonCandidate<'a>>,
}

#[derive(Debug, Serialize)]
struct JsonCandidate<'a> {
    name: &'a str,
    namespace: Option<&'a str>,
    kind: Option<&'a str>,
}

/// The stage that reports a code's range (spec §9.1).
fn phase(code: super::Code) -> &'static str {
    match code.number() / 1000 {
        1 => "syntax",
        2 => "analysis",
        3 => "policy",
        4 => "limits",
        5 => "runtime",
        6 => "tool",
        7 => "persistence",
        _ => "host",
    }
}

/// `sha256:<hex>` of the exact source bytes that diagnostic offsets refer to.
pub fn source_digest(source: &str) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(source.as_bytes())))
}

/// The JSON value of one diagnostics report: `{ "source_digest", "diagnostics": [...] }`.
pub fn report_json(source: &str, diagnostics: &[Diagnostic]) -> serde_json::Value {
    serde_json::to_value(json_report(source, diagnostics)).expect("diagnostics serialize")
}

/// The same report as compact JSON text, fields in contract order.
pub fn render_json(source: &str, diagnostics: &[Diagnostic]) -> String {
    serde_json::to_string(&json_report(source, diagnostics)).expect("diagnostics serialize")
}

fn json_report<'a>(source: &str, diagnostics: &'a [Diagnostic]) -> JsonReport<'a> {
    JsonReport { source_digest: source_digest(source), diagnostics: json_diagnostics(source, diagnostics) }
}

/// `diagnostics` about `source` as the contract's `diagnostics` array.
pub fn json_diagnostics<'a>(source: &str, diagnostics: &'a [Diagnostic]) -> JsonDiagnostics<'a> {
    let index = LineIndex::new(source);
    let span = |s: Span| {
        let at = index.line_col(s.start);
        JsonSpan { start: s.start, end: s.end, line: at.line, column: at.column }
    };
    let diagnostics = diagnostics
        .iter()
        .map(|d| JsonDiagnostic {
            code: d.code,
            severity: d.severity,
            message: &d.message,
            span: span(d.span),
            labels: d.labels.iter().map(|l| JsonLabel { span: span(l.span), message: &l.message }).collect(),
            help: &d.help,
            fixes: d
                .fixes
                .iter()
                .map(|f| JsonFix {
                    message: &f.message,
                    applicability: f.applicability,
                    edits: f
                        .edits
                        .iter()
                        .map(|e| JsonEdit {
                            start: e.span.start,
                            end: e.span.end,
                            replacement: &e.replacement,
                        })
                        .collect(),
                })
                .collect(),
            candidates: &d.candidates,
            doc: d.code.to_string(),
            notes: &d.notes,
            title: super::catalogue::of(d.code).map_or("", |entry| entry.title),
            phase: phase(d.code),
            expected_shapes: &d.expected_shapes,
            actual_shape: d.actual_shape.as_deref(),
            candidate_records: if d.candidate_records.is_empty() {
                d.candidates.iter().map(|name| JsonCandidate { name, namespace: None, kind: None }).collect()
            } else {
                d.candidate_records
                    .iter()
                    .map(|c| JsonCandidate {
                        name: &c.name,
                        namespace: c.namespace.as_deref(),
                        kind: Some(c.kind),
                    })
                    .collect()
            },
        })
        .collect();
    JsonDiagnostics(diagnostics)
}
