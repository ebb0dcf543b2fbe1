//! `heal` (spec §2.2): applies only safe repairs — machine-applicable fixes whose edits insert
//! text — re-parses, and repeats; returns the healed source with one note per applied repair.

use crate::diag::{Diagnostic, Fix, Severity, Span};

/// Repairs can enable further repairs (a missing `return` inside a block found after the block's
/// brace was inserted); this bounds the rounds.
const MAX_ROUNDS: usize = 8;

/// The outcome of [`heal`].
#[derive(Debug, Clone)]
pub struct Healed {
    /// The repaired source (the input itself when nothing was applied).
    pub source: String,
    pub changed: bool,
    /// One warning per applied repair, its span covering the inserted text in `source`.
    pub notes: Vec<Diagnostic>,
    /// What the healed source still reports; errors here mean it could not be healed.
    pub remaining: Vec<Diagnostic>,
}

impl Healed {
    /// True when the healed source has no errors left.
    pub fn is_healed(&self) -> bool {
        !self.remaining.iter().any(Diagnostic::is_error)
    }
}

/// One insertion of a round, in that round's coordinates.
struct Insertion {
    offset: u32,
    text: String,
}

/// Heals `source` with the syntax front end's repairs.
pub fn heal(source: &str) -> Healed {
    let mut current = source.to_owned();
    let mut notes: Vec<Diagnostic> = Vec::new();
    let mut remaining = super::parse(&current).diagnostics;
    for _ in 0..MAX_ROUNDS {
        let repairs = choose_repairs(&remaining);
        if repairs.is_empty() {
            break;
        }
        let mut insertions: Vec<Insertion> = Vec::new();
        for (_, fix) in &repairs {
            insertions.extend(
                fix.edits.iter().map(|e| Insertion { offset: e.span.start, text: e.replacement.clone() }),
            );
        }
        insertions.sort_by_key(|i| i.offset);
        let next = apply(&current, &insertions);
        let next_remaining = super::parse(&next).diagnostics;
        if repairs.iter().any(|(diagnostic, _)| persists(diagnostic, &insertions, &next_remaining)) {
            // A repair that leaves its own problem in place would only be inserted again and
            // again: the round is dropped and healing stops.
            break;
        }
        for note in &mut notes {
            note.span = shift(note.span, &insertions);
        }
        let mut round: Vec<Diagnostic> =
            repairs.into_iter().map(|(diagnostic, fix)| note(diagnostic, fix, &insertions)).collect();
        round.sort_by_key(|note| note.span.start);
        notes.extend(round);
        current = next;
        remaining = next_remaining;
    }
    Healed { changed: current != source, source: current, notes, remaining }
}

/// True when `after` (parsed after `insertions`) still reports the error `repaired`: the same code
/// and message starting at the same place.
fn persists(repaired: &Diagnostic, insertions: &[Insertion], after: &[Diagnostic]) -> bool {
    let start = shift(repaired.span, insertions).start;
    after.iter().any(|d| {
        d.is_error() && d.code == repaired.code && d.message == repaired.message && d.span.start == start
    })
}

/// For each error, its first machine-applicable insertion-only fix, skipping fixes that insert
/// at an offset another chosen fix already inserts at (their order would be a guess). Where two
/// fixes insert at one offset, the one closing the innermost construct around that offset is
/// taken — a string before the statement holding it, a list before the call holding it — ahead of
/// one reported at a later token; the other is reconsidered in the next round.
fn choose_repairs(diagnostics: &[Diagnostic]) -> Vec<(&Diagnostic, &Fix)> {
    let mut candidates: Vec<(&Diagnostic, &Fix)> = diagnostics
        .iter()
        .filter(|d| d.is_error())
        .filter_map(|d| {
            let safe = d.fixes.iter().find(|f| {
                f.applicability == crate::diag::Applicability::MachineApplicable
                    && !f.edits.is_empty()
                    && f.is_insertion_only()
            });
            safe.map(|fix| (d, fix))
        })
        .collect();
    candidates.sort_by_key(|(diagnostic, fix)| {
        let at = fix.edits[0].span.start;
        let encloses = diagnostic.span.start <= at && at <= diagnostic.span.end;
        (!encloses, std::cmp::Reverse(diagnostic.span.start))
    });
    let mut taken: Vec<u32> = Vec::new();
    let mut chosen = Vec::new();
    for (diagnostic, fix) in candidates {
        if fix.edits.iter().all(|e| !taken.contains(&e.span.start)) {
            taken.extend(fix.edits.iter().map(|e| e.span.start));
            chosen.push((diagnostic, fix));
        }
    }
    chosen
}

fn apply(source: &str, insertions: &[Insertion]) -> String {
    let mut out =
        String::with_capacity(source.len() + insertions.iter().map(|i| i.text.len()).sum::<usize>());
    let mut cursor = 0;
    for insertion in insertions {
        let at = (insertion.offset as usize).min(source.len());
        out.push_str(&source[cursor..at]);
        out.push_str(&insertion.text);
        cursor = at;
    }
    out.push_str(&source[cursor..]);
    out
}

/// Moves `span` over `insertions`: text inserted at or before its start shifts the start, text
/// inserted strictly inside or before its end shifts the end.
fn shift(span: Span, insertions: &[Insertion]) -> Span {
    Span::new(
        span.start + inserted_before(insertions, span.start, true),
        span.end + inserted_before(insertions, span.end, false),
    )
}

/// Bytes inserted before `offset` (and at it, when `inclusive`).
fn inserted_before(insertions: &[Insertion], offset: u32, inclusive: bool) -> u32 {
    insertions
        .iter()
        .filter(|i| if inclusive { i.offset <= offset } else { i.offset < offset })
        .map(|i| i.text.len() as u32)
        .sum()
}

/// The note for an applied repair: the original code and message, pointing at what was inserted
/// (from the fix's first insertion to the end of its last, in healed coordinates).
fn note(diagnostic: &Diagnostic, fix: &Fix, insertions: &[Insertion]) -> Diagnostic {
    let first = fix.edits.iter().map(|e| e.span.start).min().unwrap_or_default();
    let last = fix.edits.iter().map(|e| e.span.start).max().unwrap_or_default();
    let span = Span::new(
        first + inserted_before(insertions, first, false),
        last + inserted_before(insertions, last, true),
    );
    let mut note = Diagnostic::new(diagnostic.code, Severity::Warning, span, &diagnostic.message);
    note.help.push(format!("applied: {}", fix.message));
    note
}
