//! `heal` with the registry: after the syntax front end's insertion repairs (`syntax::heal`),
//! applies the machine-applicable fixes of parsing and analysis it can prove safe, round after
//! round, each reported as a note like an insertion.
//!
//! A round is kept only when it is safe: every fix is machine-applicable, the edits do not
//! overlap, the healed program has strictly fewer syntax errors (or as many and fewer errors in
//! all), and it calls no registered tool the source did not already call (so healing never adds
//! an effect the author did not write; an intrinsic is local and pure). Anything else is left
//! for the author, in `remaining`.

use std::collections::BTreeSet;

use crate::diag::{Applicability, Diagnostic, Edit, Fix, Severity, Span, apply_fixes};
use crate::registry::Registry;
use crate::syntax::token::TokenKind;
use crate::syntax::{Healed, heal as heal_insertions};

use super::{AnalyzeOptions, Inputs, analyze};

/// Rounds of fixes: one repair can reveal the next.
const MAX_ROUNDS: usize = 8;

/// Heals `source` against `registry`: insertions first, then the safe machine-applicable fixes.
pub fn heal(source: &str, registry: &Registry, inputs: &Inputs, options: &AnalyzeOptions) -> Healed {
    let inserted = heal_insertions(source);
    let tools = called_tools(source, registry);
    let mut current = inserted.source;
    let mut notes = inserted.notes;
    let mut remaining = analyze(&current, registry, inputs, options).diagnostics;
    for _ in 0..MAX_ROUNDS {
        let errors = count_errors(&remaining);
        let fixes = chosen(&remaining);
        if errors == (0, 0) || fixes.is_empty() {
            break;
        }
        let Some(next) = apply_fixes(&current, fixes.iter().map(|(_, fix)| *fix)) else { break };
        let after = analyze(&next, registry, inputs, options).diagnostics;
        if count_errors(&after) >= errors || !called_tools(&next, registry).is_subset(&tools) {
            break;
        }
        let edits: Vec<&Edit> = fixes.iter().flat_map(|(_, fix)| &fix.edits).collect();
        for earlier in &mut notes {
            earlier.span = shift(earlier.span, &edits);
        }
        let mut applied: Vec<Diagnostic> =
            fixes.iter().map(|(diagnostic, fix)| note(diagnostic, fix, &edits)).collect();
        applied.sort_by_key(|n| n.span.start);
        notes.extend(applied);
        current = next;
        remaining = after;
    }
    Healed { changed: current != source, source: current, notes, remaining }
}

/// Syntax errors, then all errors: progress is a decrease in this order, since syntax errors
/// hide the analysis errors behind them.
fn count_errors(diagnostics: &[Diagnostic]) -> (usize, usize) {
    let errors = diagnostics.iter().filter(|d| d.is_error());
    let syntax = errors.clone().filter(|d| d.code.number() < 2000).count();
    (syntax, errors.count())
}

/// For each error, its first machine-applicable fix, skipping fixes whose edits overlap (or
/// insert at the same place as) one already chosen.
fn chosen(diagnostics: &[Diagnostic]) -> Vec<(&Diagnostic, &Fix)> {
    let mut chosen: Vec<(&Diagnostic, &Fix)> = Vec::new();
    for diagnostic in diagnostics.iter().filter(|d| d.is_error()) {
        let Some(fix) = diagnostic
            .fixes
            .iter()
            .find(|f| f.applicability == Applicability::MachineApplicable && !f.edits.is_empty())
        else {
            continue;
        };
        let clashes = chosen.iter().flat_map(|(_, c)| &c.edits).any(|a| {
            fix.edits.iter().any(|b| {
                (a.span.start < b.span.end && b.span.start < a.span.end) || a.span.start == b.span.start
            })
        });
        if !clashes {
            chosen.push((diagnostic, fix));
        }
    }
    chosen
}

/// The registered tools (not intrinsics) `source` calls, by name: dotted paths followed by `(`.
fn called_tools(source: &str, registry: &Registry) -> BTreeSet<String> {
    let tokens = crate::syntax::lexer::lex(source).tokens;
    let text = |i: usize| &source[tokens[i].span.range()];
    let mut tools = BTreeSet::new();
    let mut i = 0;
    while i < tokens.len() {
        let starts = tokens[i].kind == TokenKind::Ident && (i == 0 || tokens[i - 1].kind != TokenKind::Dot);
        if !starts {
            i += 1;
            continue;
        }
        let mut path = text(i).to_owned();
        let mut j = i + 1;
        while j + 1 < tokens.len()
            && tokens[j].kind == TokenKind::Dot
            && tokens[j + 1].kind == TokenKind::Ident
        {
            path.push('.');
            path.push_str(text(j + 1));
            j += 2;
        }
        if tokens.get(j).is_some_and(|t| t.kind == TokenKind::LParen)
            && let Some(tool) = registry.tool_named(&path)
            && registry.intrinsic(tool).is_none()
        {
            tools.insert(path);
        }
        i = j;
    }
    tools
}

/// Where `offset` lands once `edits` are applied: edits ending before it (or at it, when
/// `inclusive`) move it by how much they grow or shrink the text.
fn moved(offset: u32, edits: &[&Edit], inclusive: bool) -> u32 {
    let delta: i64 = edits
        .iter()
        .filter(|e| if inclusive { e.span.end <= offset } else { e.span.end < offset })
        .map(|e| e.replacement.len() as i64 - i64::from(e.span.len()))
        .sum();
    (i64::from(offset) + delta).max(0) as u32
}

/// Moves an earlier note's span over a round's edits.
fn shift(span: Span, edits: &[&Edit]) -> Span {
    let start = moved(span.start, edits, true);
    Span::new(start, moved(span.end, edits, false).max(start))
}

/// The note for an applied fix: the original code and message, spanning what the fix wrote.
fn note(diagnostic: &Diagnostic, fix: &Fix, edits: &[&Edit]) -> Diagnostic {
    let (Some(first), Some(last)) =
        (fix.edits.iter().min_by_key(|e| e.span.start), fix.edits.iter().max_by_key(|e| e.span.start))
    else {
        return Diagnostic::new(diagnostic.code, Severity::Warning, Span::default(), &diagnostic.message);
    };
    let start = moved(first.span.start, edits, false);
    let end = moved(last.span.start, edits, false) + last.replacement.len() as u32;
    let mut note = Diagnostic::new(
        diagnostic.code,
        Severity::Warning,
        Span::new(start, end.max(start)),
        &diagnostic.message,
    );
    note.help.push(format!("applied: {}", fix.message));
    note
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::RegistryOptions;

    fn registry() -> Registry {
        let json = r#"{"prelude": "deterministic", "tools": [
            {"name": "shop.orders", "params": [{"name": "id", "schema": {"type": "string"}}],
             "outputSchema": {"type": "array", "items": {"type": "number"}}, "execution": "pure"}]}"#;
        Registry::from_json_str(json, &RegistryOptions::default()).expect("loads").registry
    }

    fn healed(source: &str) -> Healed {
        heal(source, &registry(), &Inputs::new(), &AnalyzeOptions::default())
    }

    #[test]
    fn machine_fixes_are_applied_and_noted() {
        let out = healed("xs = shop.orders(\"c\")\nreturn len(xs) > 0 && true\n");
        assert_eq!(out.source, "xs = shop.orders(\"c\")\nreturn list.length(xs) > 0 and true\n");
        assert!(out.is_healed(), "{:?}", out.remaining);
        let codes: Vec<String> = out.notes.iter().map(|n| n.code.to_string()).collect();
        assert_eq!(codes, ["RL1036", "RL2102"]);
        // Each note spans the text its fix wrote.
        assert_eq!(&out.source[out.notes[0].span.range()], "and");
        assert_eq!(&out.source[out.notes[1].span.range()], "list.length(xs)");
    }

    #[test]
    fn a_fix_that_would_call_a_tool_the_source_does_not_is_left_alone() {
        // `shops.orders` is not registered; the fix to `shop.orders` would add a tool call.
        let out = healed("return shops.orders(\"c\")\n");
        assert!(!out.changed);
        assert!(!out.is_healed());
        assert_eq!(out.remaining[0].code.to_string(), "RL2102");
    }
}
