//! The syntax front end (spec §2.1–2.2, §8.3): lexer, parser with error recovery, the AST with
//! spans, structural checks, stable syntax paths, the formatter and `heal`.
//!
//! Newline significance is resolved in the parser, not the lexer. The lexer marks each token with
//! [`token::Token::line_break_before`]; whether a `{` opens a block (where line breaks end
//! statements) or an expression object (where they do not) depends on grammar context that only
//! the parser has, so the parser keeps that context (see `parser`). The rules, from spec §2.1:
//! a line break ends a simple statement unless it is inside open `()`, `[]` or an expression
//! object, or follows a continuation token (`= , : + - * / % == != < <= > >= and or not in if
//! else`); a line break before `(` or `[` never continues an expression (not even inside
//! brackets); `{` stays on its header's line; `} else` and `} catch err {` stay on one line.
//!
//! Recovery reports one diagnostic per mistake: after an unexpected token the rest of the
//! statement is skipped to a line break, `;` or `}` at delimiter balance zero; constructs from other
//! languages are consumed whole; a statement-form `if`/`for`/`fold`/`boundary` gets one diagnostic
//! whose fix also adds the `return`s its blocks lack. Fixes are insertion-only where the repair is
//! an insertion (missing `return`, binding a statement, separators), so that `heal` can apply them.
//!
//! For formatting, [`Parse`] keeps every significant token and every comment ([`token::Trivia`],
//! with whether it stands on its own line) with byte spans next to the tree.
//!
//! ```
//! let parse = runlet::syntax::parse("x = 1\nreturn x + 1\n");
//! assert!(parse.diagnostics.is_empty());
//! assert_eq!(parse.program.stmts.len(), 2);
//! ```

pub mod ast;
mod check;
mod escape;
mod foreign_string;
mod format;
mod heal;
pub mod lexer;
mod parser;
pub mod path;
mod rename;
pub mod token;
pub mod unicode;

pub use escape::{decode_string, quote_string, string_value};
pub use format::format;
pub use heal::{Healed, heal};

use crate::diag::sink::Sink;
use crate::diag::{Diagnostic, Span, codes};
use ast::Program;
use token::{Token, Trivia};

/// The bounds the front end enforces on untrusted source (spec §8.2, §10).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseOptions {
    /// Largest accepted source, in bytes (`RL4001` beyond it).
    pub max_source_bytes: usize,
    /// Deepest accepted nesting of brackets, blocks and operators (`RL4002` beyond it). Each
    /// level of the tree counts: a chain of N unary or postfix operators is N levels, because it
    /// is a tree of that depth, so bounding it bounds every recursive pass over the tree. The
    /// parser recurses once per level: the default fits a 2 MiB thread stack with room to spare,
    /// and so does [`ParseOptions::NESTING_CEILING`], which larger values are taken as.
    pub max_nesting_depth: u32,
    /// Most binary operators on one path down an expression (`RL4002` beyond it): `a + b + c` is
    /// one level of nesting whatever its length, but a left-deep tree as deep as its chain, so
    /// operators have their own bound, counted through brackets, calls and blocks (`(a + b) + c`
    /// holds two on a path, as `a + b + c` does). The parser does not recurse along a chain; the
    /// tree passes after it do, and the bound keeps them within a 2 MiB thread stack too.
    pub max_operator_chain: u32,
    /// Most diagnostics reported; the rest are summarised by one `RL4003` note.
    pub max_diagnostics: usize,
}

impl ParseOptions {
    /// The most `max_nesting_depth` can be; a larger setting is taken as this. The passes over
    /// the tree recurse once per level, and deeper programs would not fit a 2 MiB thread stack
    /// (a tokio worker's, most hosts' threads) in a build without optimizations.
    pub const NESTING_CEILING: u32 = 256;
    /// The most `max_operator_chain` can be; a larger setting is taken as this, for the same
    /// reason.
    pub const OPERATOR_CHAIN_CEILING: u32 = 512;

    /// The bounds a host that sets none gets.
    pub const DEFAULT: ParseOptions = ParseOptions {
        max_source_bytes: 1 << 20,
        max_nesting_depth: 128,
        max_operator_chain: 256,
        max_diagnostics: 100,
    };
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions::DEFAULT
    }
}

/// The result of parsing: a best-effort AST (complete when there are no errors), every
/// diagnostic ordered by position, and the tokens and comments a formatter needs.
#[derive(Debug, Clone)]
pub struct Parse {
    pub program: Program,
    pub diagnostics: Vec<Diagnostic>,
    /// The significant tokens, ending with `Eof`.
    pub tokens: Vec<Token>,
    /// The comments, in source order.
    pub trivia: Vec<Trivia>,
}

impl Parse {
    /// True when any diagnostic is an error (warnings and notes do not count).
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Parses `source` with the default [`ParseOptions`].
pub fn parse(source: &str) -> Parse {
    parse_with(source, &ParseOptions::default())
}

/// Parses `source`. Never panics; any input yields a `Parse`.
pub fn parse_with(source: &str, options: &ParseOptions) -> Parse {
    let limit = options.max_source_bytes.min(u32::MAX as usize);
    if source.len() > limit {
        let diagnostic = Diagnostic::error(
            codes::SOURCE_TOO_LARGE,
            Span::at(0),
            format!("the source is {} bytes; the limit is {limit}", source.len()),
        )
        .with_help("split the work into smaller programs")
        .with_note("the limit is `max_source_bytes` in the parse options");
        return Parse {
            program: Program { stmts: Vec::new(), span: Span::at(0) },
            diagnostics: vec![diagnostic],
            tokens: vec![Token { kind: token::TokenKind::Eof, span: Span::at(0), line_break_before: true }],
            trivia: Vec::new(),
        };
    }
    let mut sink =
        Sink::new(options.max_diagnostics, "the limit key is `diagnostics` (`--limit diagnostics=N`)");
    let (tokens, trivia) = lexer::lex_into(source, &mut sink);
    let program = parser::Parser::new(source, &tokens, options, &mut sink).parse_program();
    check::check(&program, source, &tokens, &mut sink);
    Parse { program, diagnostics: sink.finish(), tokens, trivia }
}
