//! Lexical scopes: the bindings each block declares (visible from their statement on), the names
//! it declares later (for "declared below" hints), and the narrowings conditions put in force.

use crate::diag::Span;

use super::super::FastMap;
use super::super::hir::{BindingId, InputId};
use super::super::types::Ty;

/// One block's names.
#[derive(Debug, Default)]
struct Frame {
    declared: FastMap<String, BindingId>,
    /// Names this block declares further down, with where.
    later: FastMap<String, Span>,
    /// Every binding the block declared, in order.
    order: Vec<BindingId>,
}

/// What a condition can narrow: a binding, or a host input (spec §3.2: `x != null` narrows
/// host inputs as it narrows tool outputs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Narrowable {
    Binding(BindingId),
    Input(InputId),
}

/// The scope stack and the narrowings in force, innermost last.
#[derive(Debug, Default)]
pub(super) struct Scopes {
    frames: Vec<Frame>,
    narrowed: Vec<(Narrowable, Ty)>,
}

impl Scopes {
    /// Enters a block whose statements will declare `later` (name and span each).
    pub fn push<'n>(&mut self, later: impl IntoIterator<Item = (&'n str, Span)>) {
        let mut frame = Frame::default();
        for (name, span) in later {
            frame.later.entry(name.to_owned()).or_insert(span);
        }
        self.frames.push(frame);
    }

    /// Leaves the innermost block; returns the bindings it declared, in order.
    pub fn pop(&mut self) -> Vec<BindingId> {
        self.frames.pop().map(|frame| frame.order).unwrap_or_default()
    }

    /// Makes `binding` visible as `name` in the innermost block.
    pub fn declare(&mut self, name: &str, binding: BindingId) {
        if let Some(frame) = self.frames.last_mut() {
            frame.later.remove(name);
            frame.declared.insert(name.to_owned(), binding);
            frame.order.push(binding);
        }
    }

    /// The innermost visible binding called `name`.
    pub fn lookup(&self, name: &str) -> Option<BindingId> {
        self.frames.iter().rev().find_map(|frame| frame.declared.get(name).copied())
    }

    /// A binding called `name` in an enclosing block (not the innermost one).
    pub fn outer(&self, name: &str) -> Option<BindingId> {
        let inner = self.frames.len().checked_sub(1)?;
        self.frames[..inner].iter().rev().find_map(|frame| frame.declared.get(name).copied())
    }

    /// Where an enclosing block declares `name` further down, if it does.
    pub fn declared_later(&self, name: &str) -> Option<Span> {
        self.frames.iter().rev().find_map(|frame| frame.later.get(name).copied())
    }

    /// Every visible binding name, innermost first, each once.
    pub fn visible(&self) -> Vec<(String, BindingId)> {
        let mut seen: Vec<(String, BindingId)> = Vec::new();
        for frame in self.frames.iter().rev() {
            let mut names: Vec<(&String, &BindingId)> = frame.declared.iter().collect();
            names.sort();
            for (name, &binding) in names {
                if !seen.iter().any(|(n, _)| n == name) {
                    seen.push((name.clone(), binding));
                }
            }
        }
        seen
    }

    /// Puts narrowings in force until [`Scopes::forget`] with the returned mark.
    pub fn narrow(&mut self, facts: &[(Narrowable, Ty)]) -> usize {
        let mark = self.narrowed.len();
        self.narrowed.extend_from_slice(facts);
        mark
    }

    pub fn forget(&mut self, mark: usize) {
        self.narrowed.truncate(mark);
    }

    /// The narrowest type a condition in force gives `subject`.
    pub fn narrowed(&self, subject: Narrowable) -> Option<Ty> {
        self.narrowed.iter().rev().find(|(b, _)| *b == subject).map(|(_, ty)| *ty)
    }
}
