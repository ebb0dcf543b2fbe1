//! Token kinds (the logos lexer definition), significant tokens with their line-break flag, and
//! comment trivia. Reserved words are resolved from identifiers after lexing (see [`Keyword`]).

use logos::Logos;

use crate::diag::Span;

/// What logos recognises. Words come out as [`RawToken::Word`] and are split into identifiers and
/// reserved words by [`Keyword::from_word`]; newlines are their own token so that the lexer can
/// mark the token after them (see [`Token::line_break_before`]).
#[derive(Logos, Debug, Clone, Copy, PartialEq, Eq)]
#[logos(skip(r"[ \t\r\u{FEFF}]+", priority = 3))]
pub(crate) enum RawToken {
    #[token("\n")]
    Newline,
    #[regex(r"#[^\n]*", allow_greedy = true)]
    HashComment,
    #[regex(r"//[^\n]*", allow_greedy = true)]
    SlashComment,
    #[regex(r"/\*([^*]|\*+[^*/])*\*+/")]
    BlockComment,
    #[regex(r"[A-Za-z_]|[^\x00-\x7F]", word)]
    Word,
    #[regex(r"[0-9]+", priority = 5)]
    Integer,
    #[regex(r"[0-9]+\.[0-9]+([eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+", priority = 5)]
    Number,
    #[regex(r"[0-9][0-9A-Za-z_]*(\.[0-9A-Za-z_]*)?", priority = 1)]
    MalformedNumber,
    #[regex(r#""([^"\\\n]|\\[^\n])*""#)]
    String,
    #[regex(r#""([^"\\\n]|\\[^\n])*\\?"#)]
    UnterminatedString,
    #[regex(r"'([^'\\\n]|\\[^\n])*'")]
    SingleQuotedString,
    #[regex(r"`[^`]*`")]
    TemplateString,
    #[regex(r#"[fF]"([^"\\\n]|\\[^\n])*""#)]
    FormatString,
    #[regex(r"“[^”\n]*”|‘[^’\n]*’")]
    CurlyQuotedString,
    #[regex(r#""""([^"]|"[^"]|""[^"])*""""#)]
    #[regex(r"'''([^']|'[^']|''[^'])*'''")]
    TripleQuotedString,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token(",")]
    Comma,
    #[token(":")]
    Colon,
    #[token(";")]
    Semicolon,
    #[token(".")]
    Dot,
    #[token("=")]
    Eq,
    #[token("==")]
    EqEq,
    #[token("!=")]
    NotEq,
    #[token("<")]
    Lt,
    #[token("<=")]
    LtEq,
    #[token(">")]
    Gt,
    #[token(">=")]
    GtEq,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("%")]
    Percent,
    #[token("&&")]
    AmpAmp,
    #[token("||")]
    PipePipe,
    #[token("!")]
    Bang,
    #[token("===")]
    EqEqEq,
    #[token("!==")]
    NotEqEq,
    #[token("=>")]
    FatArrow,
    #[token("->")]
    ThinArrow,
    #[token("+=")]
    PlusEq,
    #[token("-=")]
    MinusEq,
    #[token("*=")]
    StarEq,
    #[token("/=")]
    SlashEq,
    #[token("++")]
    PlusPlus,
    #[token("--")]
    MinusMinus,
    #[token("?")]
    Question,
    #[token("??")]
    QuestionQuestion,
    #[token("?.")]
    QuestionDot,
}

/// Extends a word over Unicode XID_Continue characters. The first character must be `_`, an ASCII
/// letter or XID_Start (identifiers may start with `_`, as in Rust and Python).
fn word(lex: &mut logos::Lexer<RawToken>) -> bool {
    let first = lex.slice().chars().next().unwrap_or(' ');
    if !(first == '_' || unicode_ident::is_xid_start(first)) {
        return false;
    }
    let rest = lex.remainder();
    let len = rest.find(|c: char| !unicode_ident::is_xid_continue(c)).unwrap_or(rest.len());
    lex.bump(len);
    true
}

/// The reserved words of spec §2.1 plus `skip`, `fold` and `fail`, which the grammar uses as
/// keywords. Every one is still a valid field name after `.` and a valid object key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Keyword {
    Return,
    For,
    In,
    Limit,
    Boundary,
    Retry,
    Catch,
    If,
    Else,
    And,
    Or,
    Not,
    Null,
    True,
    False,
    Skip,
    Fold,
    Fail,
}

impl Keyword {
    /// Every reserved word, in the order of spec §2.1 followed by `skip`, `fold`, `fail`.
    pub const ALL: [Keyword; 18] = [
        Keyword::Return,
        Keyword::For,
        Keyword::In,
        Keyword::Limit,
        Keyword::Boundary,
        Keyword::Retry,
        Keyword::Catch,
        Keyword::If,
        Keyword::Else,
        Keyword::And,
        Keyword::Or,
        Keyword::Not,
        Keyword::Null,
        Keyword::True,
        Keyword::False,
        Keyword::Skip,
        Keyword::Fold,
        Keyword::Fail,
    ];

    pub fn from_word(word: &str) -> Option<Keyword> {
        Some(match word {
            "return" => Keyword::Return,
            "for" => Keyword::For,
            "in" => Keyword::In,
            "limit" => Keyword::Limit,
            "boundary" => Keyword::Boundary,
            "retry" => Keyword::Retry,
            "catch" => Keyword::Catch,
            "if" => Keyword::If,
            "else" => Keyword::Else,
            "and" => Keyword::And,
            "or" => Keyword::Or,
            "not" => Keyword::Not,
            "null" => Keyword::Null,
            "true" => Keyword::True,
            "false" => Keyword::False,
            "skip" => Keyword::Skip,
            "fold" => Keyword::Fold,
            "fail" => Keyword::Fail,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Keyword::Return => "return",
            Keyword::For => "for",
            Keyword::In => "in",
            Keyword::Limit => "limit",
            Keyword::Boundary => "boundary",
            Keyword::Retry => "retry",
            Keyword::Catch => "catch",
            Keyword::If => "if",
            Keyword::Else => "else",
            Keyword::And => "and",
            Keyword::Or => "or",
            Keyword::Not => "not",
            Keyword::Null => "null",
            Keyword::True => "true",
            Keyword::False => "false",
            Keyword::Skip => "skip",
            Keyword::Fold => "fold",
            Keyword::Fail => "fail",
        }
    }
}

/// The kind of a significant token: what the parser sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    Ident,
    Keyword(Keyword),
    /// Unsigned decimal digits; the value stays arbitrary precision (the text is the value).
    Integer,
    /// A decimal float such as `1.25` or `6e4`.
    Number,
    /// A double-quoted string with JSON escapes (escape errors are reported by the lexer).
    String,
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Colon,
    Semicolon,
    Dot,
    Eq,
    EqEq,
    NotEq,
    Lt,
    LtEq,
    Gt,
    GtEq,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    /// A token from another language (`&&`, `=>`, `'text'`, …). The lexer keeps it so that the
    /// parser can name the Runlet form; it never appears in a valid program.
    Foreign(ForeignToken),
    /// Text the lexer could not read (already reported); the parser skips it silently.
    Unknown,
    /// End of input; always the last token.
    Eof,
}

/// Punctuation and literal shapes that other languages use and Runlet spells differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForeignToken {
    AmpAmp,
    PipePipe,
    Bang,
    EqEqEq,
    NotEqEq,
    FatArrow,
    ThinArrow,
    PlusEq,
    MinusEq,
    StarEq,
    SlashEq,
    PlusPlus,
    MinusMinus,
    Question,
    QuestionQuestion,
    QuestionDot,
    SingleQuotedString,
    TemplateString,
    FormatString,
    CurlyQuotedString,
    TripleQuotedString,
}

impl ForeignToken {
    /// String literals written in another language's quotes.
    pub fn is_string(self) -> bool {
        matches!(
            self,
            ForeignToken::SingleQuotedString
                | ForeignToken::TemplateString
                | ForeignToken::FormatString
                | ForeignToken::CurlyQuotedString
                | ForeignToken::TripleQuotedString
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ForeignToken::AmpAmp => "&&",
            ForeignToken::PipePipe => "||",
            ForeignToken::Bang => "!",
            ForeignToken::EqEqEq => "===",
            ForeignToken::NotEqEq => "!==",
            ForeignToken::FatArrow => "=>",
            ForeignToken::ThinArrow => "->",
            ForeignToken::PlusEq => "+=",
            ForeignToken::MinusEq => "-=",
            ForeignToken::StarEq => "*=",
            ForeignToken::SlashEq => "/=",
            ForeignToken::PlusPlus => "++",
            ForeignToken::MinusMinus => "--",
            ForeignToken::Question => "?",
            ForeignToken::QuestionQuestion => "??",
            ForeignToken::QuestionDot => "?.",
            ForeignToken::SingleQuotedString => "'…'",
            ForeignToken::TemplateString => "`…`",
            ForeignToken::FormatString => "f\"…\"",
            ForeignToken::CurlyQuotedString => "“…”",
            ForeignToken::TripleQuotedString => "\"\"\"…\"\"\"",
        }
    }
}

impl TokenKind {
    /// How the token is named in diagnostics.
    pub fn describe(self) -> String {
        match self {
            TokenKind::Ident => "a name".into(),
            TokenKind::Keyword(k) => format!("`{}`", k.as_str()),
            TokenKind::Integer => "an integer".into(),
            TokenKind::Number => "a number".into(),
            TokenKind::String => "a string".into(),
            TokenKind::Foreign(f) if f.is_string() => "a string in foreign quotes".into(),
            TokenKind::Foreign(f) => format!("`{}`", f.as_str()),
            TokenKind::Unknown => "unreadable text".into(),
            TokenKind::Eof => "the end of the program".into(),
            punct => format!("`{}`", punct.punctuation().unwrap_or("?")),
        }
    }

    /// The fixed spelling of a punctuation token.
    pub fn punctuation(self) -> Option<&'static str> {
        Some(match self {
            TokenKind::LParen => "(",
            TokenKind::RParen => ")",
            TokenKind::LBracket => "[",
            TokenKind::RBracket => "]",
            TokenKind::LBrace => "{",
            TokenKind::RBrace => "}",
            TokenKind::Comma => ",",
            TokenKind::Colon => ":",
            TokenKind::Semicolon => ";",
            TokenKind::Dot => ".",
            TokenKind::Eq => "=",
            TokenKind::EqEq => "==",
            TokenKind::NotEq => "!=",
            TokenKind::Lt => "<",
            TokenKind::LtEq => "<=",
            TokenKind::Gt => ">",
            TokenKind::GtEq => ">=",
            TokenKind::Plus => "+",
            TokenKind::Minus => "-",
            TokenKind::Star => "*",
            TokenKind::Slash => "/",
            TokenKind::Percent => "%",
            _ => return None,
        })
    }
}

/// One significant token. Whitespace, newlines and comments are not tokens: newlines show up as
/// `line_break_before`, comments as [`Trivia`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Span,
    /// True when at least one newline separates this token from the previous significant token
    /// (or from the start of the source). The parser decides what the line break means.
    pub line_break_before: bool,
}

/// A comment, kept for the formatter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trivia {
    pub kind: TriviaKind,
    /// The comment's bytes, including its `#`, `//` or `/* */` but not the line break after it.
    pub span: Span,
    /// True when the comment is the first thing on its line (an own-line comment rather than a
    /// trailing one).
    pub own_line: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TriviaKind {
    /// `# …`
    HashComment,
    /// `// …`
    SlashComment,
    /// `/* … */`: not Runlet (reported as an error), kept so that nothing is lost.
    BlockComment,
}
