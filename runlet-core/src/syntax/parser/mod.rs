//! The parser's state: the token cursor, the newline context, nesting and diagnostic budgets, and
//! statement-level recovery. The grammar lives in `stmt`, `expr`, `collections` and `control`.
//!
//! Newline significance lives here. `lines_significant` is true inside blocks and at top level and
//! false inside open `()`, `[]` and expression objects; a line break before a token ends the
//! current statement only while it is true. Continuation tokens need no special case: each of them
//! (`=`, `,`, `:`, infix operators, `not`, `in`, `if`, `else`) is followed by an operand or
//! clause that the parser asks for unconditionally, and a line break before such an operand never
//! ends anything. The other parts a header or binding reads next (a bound name, `in`, `limit N`,
//! `retry N`, a fold's `=` and `for`, a binding's `=`) follow tokens that do not continue a line;
//! a line break before one of them is reported (`keep_on_line`) and the part read as intended.

mod collections;
mod control;
mod destructuring;
mod expr;
mod fold_accumulation;
mod foreign;
mod lambda_call;
mod lines;
mod raise;
mod repair;
mod slice;
mod spread;
mod stmt;
mod try_boundary;

use super::ParseOptions;
use super::ast::{Program, Text};
use super::token::{Keyword, Token, TokenKind};
use super::unicode::nfc;
use crate::diag::sink::Sink;
use crate::diag::{Diagnostic, Fix, Span, codes};

pub(super) use repair::MissingReturn;

pub(super) struct Parser<'s> {
    source: &'s str,
    tokens: &'s [Token],
    pos: usize,
    sink: &'s mut Sink,
    /// Whether a line break before the current token ends the statement (see the module docs).
    lines_significant: bool,
    depth: u32,
    max_depth: u32,
    /// The most binary operators on one path down the expressions parsed since [`Parser::binary`]
    /// last took it: `a + b + c` has two on its left path, `(a + b) + c` and `a + (b + c)` two
    /// as well. A chain reads flat but is a tree as deep as it is long, so these are bounded
    /// apart from nesting, counted through brackets, calls and blocks alike.
    operators_deep: u32,
    max_chain: u32,
    /// Set once the nesting or chain limit is crossed: the rest of the input is not parsed.
    aborted: bool,
    /// An unexpected-token error was reported in the current statement: further errors of that
    /// kind are suppressed until the statement is resynchronised.
    recovering: bool,
    /// Blocks without `return` found inside the statement being parsed; the statement decides
    /// whether to report each one or fold it into its own diagnostic (see `stmt`).
    missing_returns: Vec<MissingReturn>,
    /// Reserved words that were (wrongly) declared as names, with the diagnostic that said so:
    /// later uses are read as names and added to that diagnostic's rename fix.
    reserved_bindings: Vec<(Keyword, usize)>,
    /// The final expression statement of the block just parsed, when the block has no `return`:
    /// the missing-return repair of that block turns it into the returned value.
    pending_final_unbound: Option<repair::Unbound>,
    /// Whether the last statement of the block just parsed had an error of its own: then its
    /// block is not also reported for a missing `return`.
    last_statement_errored: bool,
    /// Token index where the current statement starts.
    statement_start: usize,
    /// The statement before the current one ends with a postfix conditional without `else`.
    open_conditional: bool,
    /// Where the unbound `for` statements start whose accumulator's diagnostic rewrites them as
    /// a `fold` (so they are not also reported for being unbound).
    folded_loops: Vec<u32>,
    /// Unbound `for` statements (by where they start) whose body ends rebinding an accumulator
    /// bound before them (`total = total + x`), with the `fold` their diagnostic offers.
    accumulated_loops: Vec<(Fix, u32)>,
}

impl<'s> Parser<'s> {
    pub(super) fn new(
        source: &'s str,
        tokens: &'s [Token],
        options: &ParseOptions,
        sink: &'s mut Sink,
    ) -> Self {
        Parser {
            source,
            tokens,
            pos: 0,
            sink,
            lines_significant: true,
            depth: 0,
            max_depth: options.max_nesting_depth.min(ParseOptions::NESTING_CEILING),
            operators_deep: 0,
            max_chain: options.max_operator_chain.min(ParseOptions::OPERATOR_CHAIN_CEILING),
            aborted: false,
            recovering: false,
            missing_returns: Vec::new(),
            reserved_bindings: Vec::new(),
            pending_final_unbound: None,
            last_statement_errored: false,
            statement_start: 0,
            open_conditional: false,
            folded_loops: Vec::new(),
            accumulated_loops: Vec::new(),
        }
    }

    pub(super) fn parse_program(mut self) -> Program {
        self.program()
    }

    // ---- cursor ----

    fn peek(&self) -> Token {
        self.tokens[self.pos.min(self.tokens.len() - 1)]
    }

    fn kind(&self) -> TokenKind {
        self.peek().kind
    }

    fn nth(&self, n: usize) -> Token {
        self.tokens[(self.pos + n).min(self.tokens.len() - 1)]
    }

    fn at(&self, kind: TokenKind) -> bool {
        self.kind() == kind
    }

    fn at_keyword(&self, keyword: Keyword) -> bool {
        self.kind() == TokenKind::Keyword(keyword)
    }

    fn at_eof(&self) -> bool {
        self.at(TokenKind::Eof)
    }

    fn bump(&mut self) -> Token {
        let token = self.peek();
        if token.kind != TokenKind::Eof {
            self.pos += 1;
        }
        token
    }

    fn eat(&mut self, kind: TokenKind) -> Option<Token> {
        self.at(kind).then(|| self.bump())
    }

    /// The source text of `span` (empty if the span does not fit, which no token span does).
    fn text(&self, span: Span) -> &'s str {
        self.source.get(span.range()).unwrap_or_default()
    }

    /// The name an identifier token spells, in NFC, so that names compare as they read.
    fn name(&self, span: Span) -> Text {
        Text::from(nfc(self.text(span)))
    }

    /// The end of the last consumed token (where an insertion after it goes).
    fn prev_end(&self) -> u32 {
        if self.pos == 0 { 0 } else { self.tokens[self.pos - 1].span.end }
    }

    /// True when a line break before the current token ends the current statement.
    fn at_line_end(&self) -> bool {
        self.lines_significant && self.peek().line_break_before
    }

    /// True when the current token is the first of a line (regardless of context).
    fn at_line_start(&self) -> bool {
        self.peek().line_break_before
    }

    /// Runs `f` with line breaks significant (`true`, inside a block) or not (inside brackets).
    fn with_lines<T>(&mut self, significant: bool, f: impl FnOnce(&mut Self) -> T) -> T {
        let saved = std::mem::replace(&mut self.lines_significant, significant);
        let out = f(self);
        self.lines_significant = saved;
        out
    }

    // ---- limits ----

    /// Enters one nesting level; false (after reporting once) when the limit is crossed, in which
    /// case the cursor jumps to the end so that every loop unwinds.
    fn enter(&mut self) -> bool {
        if self.aborted {
            return false;
        }
        self.depth += 1;
        if self.depth <= self.max_depth {
            return true;
        }
        let message = format!("the program nests deeper than {} levels", self.max_depth);
        self.abort(message, "split deeply nested expressions into named steps", "parse_nesting")
    }

    fn leave(&mut self, levels: u32) {
        self.depth = self.depth.saturating_sub(levels);
    }

    /// Whether the binary operator at `operator`, with `deep` operators on its path (itself
    /// included), is within `max_operator_chain`; past it, reports there once and stops, as
    /// [`Parser::enter`] does past the nesting limit.
    fn within_chain(&mut self, deep: u32, operator: Span) -> bool {
        if self.aborted {
            return false;
        }
        if deep <= self.max_chain {
            return true;
        }
        let message = format!("an expression chains more than {} binary operators", self.max_chain);
        let help = "name intermediate results, or collect the terms in a list";
        self.abort_at(operator, message, help, "operator_chain")
    }

    /// Reports a crossed limit (`RL4002`, naming its limit key) once and stops parsing: the
    /// cursor jumps to the end.
    fn abort(&mut self, message: String, help: &str, option: &str) -> bool {
        self.abort_at(self.peek().span, message, help, option)
    }

    /// [`Parser::abort`], reported at `span`.
    fn abort_at(&mut self, span: Span, message: String, help: &str, option: &str) -> bool {
        self.push(
            Diagnostic::error(codes::NESTING_TOO_DEEP, span, message)
                .with_help(help)
                .with_note(format!("the limit key is `{option}` (`--limit {option}=N`)")),
        );
        self.aborted = true;
        self.pos = self.tokens.len() - 1;
        false
    }

    // ---- diagnostics ----

    /// Records a diagnostic (within the diagnostic budget); returns its index when recorded.
    /// After the nesting limit, nothing more is reported: the rest is consequence.
    fn push(&mut self, diagnostic: Diagnostic) -> Option<usize> {
        if self.aborted {
            return None;
        }
        self.sink.push(diagnostic)
    }

    /// Reports an error after which the parser's position is uncertain: at most one per statement.
    fn report_unexpected(&mut self, diagnostic: Diagnostic) {
        if !self.recovering {
            self.push(diagnostic);
            self.recovering = true;
        }
    }

    /// "expected …, found …" at the current token.
    fn expected(&mut self, what: &str) {
        let token = self.peek();
        if token.kind == TokenKind::Unknown {
            // The lexer already reported this text.
            self.recovering = true;
            return;
        }
        let found = token.kind.describe();
        let diagnostic = if token.kind == TokenKind::Eof {
            Diagnostic::error(
                codes::UNEXPECTED_TOKEN,
                Span::at(self.prev_end()),
                format!("expected {what}, found {found}"),
            )
        } else if token.line_break_before && self.pos > self.statement_start {
            Diagnostic::error(
                codes::UNEXPECTED_TOKEN,
                Span::at(self.prev_end()),
                format!("expected {what} before the end of the line"),
            )
        } else {
            Diagnostic::error(codes::UNEXPECTED_TOKEN, token.span, format!("expected {what}, found {found}"))
        };
        self.report_unexpected(diagnostic);
    }

    // ---- recovery ----

    /// Skips to the start of the next statement: a line break, `;` or `}` at delimiter balance
    /// zero (the `;` is consumed, the `}` is left for the block), or the end.
    fn synchronize(&mut self) {
        let mut balance = 0u32;
        loop {
            let token = self.peek();
            if self.pos > self.statement_start && balance == 0 && token.line_break_before {
                break;
            }
            match token.kind {
                TokenKind::Eof => break,
                TokenKind::Semicolon if balance == 0 => {
                    self.bump();
                    break;
                }
                TokenKind::RBrace if balance == 0 => break,
                TokenKind::LParen | TokenKind::LBracket | TokenKind::LBrace => balance += 1,
                TokenKind::RParen | TokenKind::RBracket | TokenKind::RBrace => {
                    balance = balance.saturating_sub(1)
                }
                _ => {}
            }
            self.bump();
        }
    }

    /// Skips a balanced `( … )`, `[ … ]` or `{ … }` group starting at the current token.
    fn skip_group(&mut self) {
        let mut balance = 0u32;
        loop {
            match self.bump().kind {
                TokenKind::Eof => return,
                TokenKind::LParen | TokenKind::LBracket | TokenKind::LBrace => balance += 1,
                TokenKind::RParen | TokenKind::RBracket | TokenKind::RBrace => {
                    balance = balance.saturating_sub(1);
                    if balance == 0 {
                        return;
                    }
                }
                _ if balance == 0 => return,
                _ => {}
            }
        }
    }

    /// The indentation (in bytes of leading whitespace) of the line holding `offset`.
    fn indent_of(&self, offset: u32) -> usize {
        let before = self.source.get(..offset as usize).unwrap_or_default();
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        self.source.as_bytes()[line_start..].iter().take_while(|b| **b == b' ' || **b == b'\t').count()
    }

    /// After a Python-style `header:` line, skips the lines indented deeper than the header.
    fn skip_indented_block(&mut self, header_start: u32) {
        let header_indent = self.indent_of(header_start);
        let ends_block = |p: &Self| p.at_line_start() && p.indent_of(p.peek().span.start) <= header_indent;
        while !(self.at_eof() || ends_block(self)) {
            self.bump();
        }
    }
}
