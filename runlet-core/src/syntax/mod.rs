//! The syntax front end (spec §2.1–2.2, §8.3): lexer, parser with error recovery, the AST with
//! spans, and stable syntax paths.
//!
//! Newline significance is resolved in the parser, not the lexer. The lexer only marks each token
//! with [`token::Token::line_break_before`]; whether a `{` opens a block or an expression object
//! depends on grammar context the lexer cannot see, so the parser keeps the delimiter context.

pub mod ast;
mod escape;
pub mod lexer;
pub mod token;

pub use escape::{decode_string, quote_string};
