//! Hands the formatter each comment exactly once, in source order: own-line comments before the
//! item that follows them, trailing comments after the item whose line they end.

use crate::diag::Span;
use crate::syntax::token::Trivia;

/// One comment: where it is and its text without the line break.
#[derive(Debug, Clone, Copy)]
pub(super) struct Comment<'a> {
    pub(super) span: Span,
    pub(super) text: &'a str,
}

/// A cursor over a program's comments.
#[derive(Debug)]
pub(super) struct Comments<'a> {
    source: &'a str,
    trivia: &'a [Trivia],
    next: usize,
}

impl<'a> Comments<'a> {
    pub(super) fn new(source: &'a str, trivia: &'a [Trivia]) -> Self {
        Comments { source, trivia, next: 0 }
    }

    /// True when a comment not yet emitted lies inside `span`; such an expression cannot be
    /// printed on one line.
    pub(super) fn any_within(&self, span: Span) -> bool {
        self.trivia[self.next..]
            .iter()
            .take_while(|c| c.span.start < span.end)
            .any(|c| c.span.start >= span.start)
    }

    /// Every comment not yet emitted that starts before `offset`.
    pub(super) fn take_before(&mut self, offset: u32) -> Vec<Comment<'a>> {
        let start = self.next;
        while self.next < self.trivia.len() && self.trivia[self.next].span.start < offset {
            self.next += 1;
        }
        self.texts(start)
    }

    /// The comment that ends the line on which something ended at `offset`, if only blanks and
    /// separators stand between them.
    pub(super) fn take_trailing(&mut self, offset: u32) -> Option<Comment<'a>> {
        let comment = self.trivia.get(self.next)?;
        let between = self.source.get(offset as usize..comment.span.start as usize)?;
        if comment.own_line || !between.chars().all(|c| matches!(c, ' ' | '\t' | ';' | ',')) {
            return None;
        }
        self.next += 1;
        Some(self.comment(comment))
    }

    /// Every comment not yet emitted.
    pub(super) fn take_rest(&mut self) -> Vec<Comment<'a>> {
        let start = self.next;
        self.next = self.trivia.len();
        self.texts(start)
    }

    fn texts(&self, start: usize) -> Vec<Comment<'a>> {
        self.trivia[start..self.next].iter().map(|c| self.comment(c)).collect()
    }

    fn comment(&self, trivia: &Trivia) -> Comment<'a> {
        Comment { span: trivia.span, text: self.source[trivia.span.range()].trim_end() }
    }
}
