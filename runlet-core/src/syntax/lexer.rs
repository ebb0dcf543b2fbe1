//! The lexer: runs the logos machine over the source and produces significant tokens (each with
//! its line-break flag), comment trivia and lexical diagnostics. It never fails and never panics.

use logos::Logos;

use super::escape::{EscapeProblem, decode_string, needs_decoding};
use super::foreign_string;
use super::token::{ForeignToken, Keyword, RawToken, Token, TokenKind, Trivia, TriviaKind};
use super::unicode::is_bidi_control;
use crate::diag::sink::Sink;
use crate::diag::{Applicability, Diagnostic, Edit, Fix, Span, codes};

/// The lexer's output. `tokens` always ends with one [`TokenKind::Eof`] token.
#[derive(Debug, Clone, Default)]
pub struct Lexed {
    pub tokens: Vec<Token>,
    pub trivia: Vec<Trivia>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Lexes `source` (at most `u32::MAX` bytes: [`super::parse_with`] bounds the size first).
pub fn lex(source: &str) -> Lexed {
    let mut sink = Sink::new(usize::MAX, "the lexer reports every diagnostic");
    let (tokens, trivia) = lex_into(source, &mut sink);
    Lexed { tokens, trivia, diagnostics: sink.finish() }
}

/// Lexes `source`, reporting into `sink`.
pub(crate) fn lex_into(source: &str, sink: &mut Sink) -> (Vec<Token>, Vec<Trivia>) {
    let mut out =
        Out { tokens: Vec::with_capacity(source.len() / 4 + 1), trivia: Vec::new(), diagnostics: sink };
    let mut lexer = RawToken::lexer(source);
    let mut line_break = true;
    // True until the first token or comment of the current line has been seen.
    let mut at_line_start = true;
    while let Some(raw) = lexer.next() {
        let range = lexer.span();
        let span = Span::new(range.start as u32, range.end as u32);
        let text = lexer.slice();
        let kind = match raw {
            Ok(RawToken::Newline) => {
                line_break = true;
                at_line_start = true;
                continue;
            }
            Ok(RawToken::HashComment | RawToken::SlashComment | RawToken::BlockComment) => {
                let kind = match raw {
                    Ok(RawToken::HashComment) => TriviaKind::HashComment,
                    Ok(RawToken::SlashComment) => TriviaKind::SlashComment,
                    _ => {
                        out.diagnostics.push(block_comment(span, text));
                        TriviaKind::BlockComment
                    }
                };
                out.trivia.push(Trivia { kind, span, own_line: at_line_start });
                at_line_start = false;
                if text.contains('\n') {
                    line_break = true;
                }
                continue;
            }
            Ok(raw) => classify(raw, text, span, out.diagnostics),
            Err(()) => {
                out.diagnostics.push(unexpected_character(span, text));
                TokenKind::Unknown
            }
        };
        out.tokens.push(Token { kind, span, line_break_before: line_break });
        line_break = false;
        at_line_start = false;
    }
    let end = source.len() as u32;
    out.tokens.push(Token { kind: TokenKind::Eof, span: Span::at(end), line_break_before: line_break });
    (out.tokens, out.trivia)
}

struct Out<'a> {
    tokens: Vec<Token>,
    trivia: Vec<Trivia>,
    diagnostics: &'a mut Sink,
}

fn classify(raw: RawToken, text: &str, span: Span, diagnostics: &mut Sink) -> TokenKind {
    match raw {
        RawToken::Word => Keyword::from_word(text).map_or(TokenKind::Ident, TokenKind::Keyword),
        RawToken::Integer => TokenKind::Integer,
        RawToken::Number => TokenKind::Number,
        RawToken::MalformedNumber => {
            diagnostics.push(malformed_number(span, text));
            TokenKind::Unknown
        }
        RawToken::String => {
            report_escapes(text, span, diagnostics);
            report_bidi_controls(text, span, diagnostics);
            TokenKind::String
        }
        RawToken::UnterminatedString => {
            diagnostics.push(unterminated_string(span, text));
            TokenKind::String
        }
        RawToken::SingleQuotedString => {
            foreign_string(ForeignToken::SingleQuotedString, text, span, diagnostics)
        }
        RawToken::TemplateString => foreign_string(ForeignToken::TemplateString, text, span, diagnostics),
        RawToken::FormatString => foreign_string(ForeignToken::FormatString, text, span, diagnostics),
        RawToken::CurlyQuotedString => {
            foreign_string(ForeignToken::CurlyQuotedString, text, span, diagnostics)
        }
        RawToken::TripleQuotedString => {
            foreign_string(ForeignToken::TripleQuotedString, text, span, diagnostics)
        }
        RawToken::LParen => TokenKind::LParen,
        RawToken::RParen => TokenKind::RParen,
        RawToken::LBracket => TokenKind::LBracket,
        RawToken::RBracket => TokenKind::RBracket,
        RawToken::LBrace => TokenKind::LBrace,
        RawToken::RBrace => TokenKind::RBrace,
        RawToken::Comma => TokenKind::Comma,
        RawToken::Colon => TokenKind::Colon,
        RawToken::Semicolon => TokenKind::Semicolon,
        RawToken::Dot => TokenKind::Dot,
        RawToken::Eq => TokenKind::Eq,
        RawToken::EqEq => TokenKind::EqEq,
        RawToken::NotEq => TokenKind::NotEq,
        RawToken::Lt => TokenKind::Lt,
        RawToken::LtEq => TokenKind::LtEq,
        RawToken::Gt => TokenKind::Gt,
        RawToken::GtEq => TokenKind::GtEq,
        RawToken::Plus => TokenKind::Plus,
        RawToken::Minus => TokenKind::Minus,
        RawToken::Star => TokenKind::Star,
        RawToken::Slash => TokenKind::Slash,
        RawToken::Percent => TokenKind::Percent,
        RawToken::AmpAmp => TokenKind::Foreign(ForeignToken::AmpAmp),
        RawToken::PipePipe => TokenKind::Foreign(ForeignToken::PipePipe),
        RawToken::Bang => TokenKind::Foreign(ForeignToken::Bang),
        RawToken::EqEqEq => TokenKind::Foreign(ForeignToken::EqEqEq),
        RawToken::NotEqEq => TokenKind::Foreign(ForeignToken::NotEqEq),
        RawToken::FatArrow => TokenKind::Foreign(ForeignToken::FatArrow),
        RawToken::ThinArrow => TokenKind::Foreign(ForeignToken::ThinArrow),
        RawToken::PlusEq => TokenKind::Foreign(ForeignToken::PlusEq),
        RawToken::MinusEq => TokenKind::Foreign(ForeignToken::MinusEq),
        RawToken::StarEq => TokenKind::Foreign(ForeignToken::StarEq),
        RawToken::SlashEq => TokenKind::Foreign(ForeignToken::SlashEq),
        RawToken::PlusPlus => TokenKind::Foreign(ForeignToken::PlusPlus),
        RawToken::MinusMinus => TokenKind::Foreign(ForeignToken::MinusMinus),
        RawToken::Question => TokenKind::Foreign(ForeignToken::Question),
        RawToken::QuestionQuestion => TokenKind::Foreign(ForeignToken::QuestionQuestion),
        RawToken::QuestionDot => TokenKind::Foreign(ForeignToken::QuestionDot),
        RawToken::Newline | RawToken::HashComment | RawToken::SlashComment | RawToken::BlockComment => {
            TokenKind::Unknown
        }
    }
}

fn report_escapes(text: &str, span: Span, diagnostics: &mut Sink) {
    if !needs_decoding(text) {
        return;
    }
    for error in decode_string(text).1 {
        let at = Span::new(span.start + error.start as u32, span.start + error.end as u32);
        let (message, help) = match error.problem {
            EscapeProblem::UnknownEscape => (
                "unknown escape in string",
                "the escapes are \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX; write a backslash as \\\\",
            ),
            EscapeProblem::BadUnicodeEscape => {
                ("`\\u` must be followed by four hex digits", "write a code point as `\\u00e9`")
            }
            EscapeProblem::LoneSurrogate => (
                "lone surrogate escape in string",
                "a `\\uD800`-`\\uDFFF` escape must be a high surrogate followed by a low one, such as `\\uD83D\\uDE00`",
            ),
            EscapeProblem::ControlCharacter => {
                ("raw control character in string", "write it as an escape such as `\\t` or `\\u0001`")
            }
        };
        diagnostics.push(Diagnostic::error(codes::INVALID_ESCAPE, at, message).with_help(help));
    }
}

/// A string holding bidirectional controls can display in another order than its characters run
/// (CVE-2021-42574, "Trojan Source"), so what a reviewer reads is not what the program does. A
/// warning with a fix that writes each control as a `\u` escape of four hex digits (`\u202E`):
/// the same string, visible.
fn report_bidi_controls(text: &str, span: Span, diagnostics: &mut Sink) {
    if text.is_ascii() {
        return;
    }
    let controls: Vec<(usize, char)> = text.char_indices().filter(|&(_, c)| is_bidi_control(c)).collect();
    let Some(&(first, first_char)) = controls.first() else { return };
    let edits = controls
        .iter()
        .map(|&(at, c)| {
            let start = span.start + at as u32;
            Edit {
                span: Span::new(start, start + c.len_utf8() as u32),
                replacement: format!("\\u{:04X}", c as u32),
            }
        })
        .collect();
    let mut listed: Vec<String> = controls.iter().map(|&(_, c)| format!("U+{:04X}", c as u32)).collect();
    listed.sort();
    listed.dedup();
    let message = format!(
        "this string holds bidirectional control characters ({}), which can make the source display in another order than it runs",
        listed.join(", ")
    );
    let at = span.start + first as u32;
    diagnostics.push(
        Diagnostic::warning(codes::BIDI_CONTROL_IN_STRING, span, message)
            .with_label(Span::new(at, at + first_char.len_utf8() as u32), "the first is here, invisible")
            .with_fix(Fix::new("write them as escapes", Applicability::MachineApplicable, edits)),
    );
}

/// The fix closes the string where its line ends: before the `\r` of a CRLF line ending (which
/// would otherwise be a raw control character inside it), and after a lone trailing backslash
/// (which would otherwise escape the closing quote) by doubling that backslash. When the rest of
/// the line reads as code, the quote was more likely forgotten earlier, so the fix, which would
/// turn that code into text, is for review.
fn unterminated_string(span: Span, text: &str) -> Diagnostic {
    let content = text.trim_end_matches('\r');
    let end = span.start + content.len() as u32;
    let trailing_backslashes = content.len() - content.trim_end_matches('\\').len();
    let close = if trailing_backslashes % 2 == 1 { "\\\"" } else { "\"" };
    let applicability = match reads_as_code(&content[1..]) {
        true => Applicability::MaybeIncorrect,
        false => Applicability::MachineApplicable,
    };
    Diagnostic::error(codes::UNTERMINATED_STRING, span, "this string is never closed")
        .with_help("a string must end with `\"` on the line where it starts; write a line break as `\\n`")
        .with_fix(Fix::new(
            "close the string",
            applicability,
            vec![Edit { span: Span::at(end), replacement: close.into() }],
        ))
}

/// Whether the text after an unclosed quote holds code rather than prose: a `+` joining
/// operands (`+ name`, `+name`, `", " +`), or a bracket closed that the text never opened
/// (`f("abc)`).
fn reads_as_code(text: &str) -> bool {
    let joins = text.match_indices('+').any(|(at, _)| {
        let after = text[at + 1..].trim_start();
        after.is_empty() || after.starts_with(|c: char| c.is_alphabetic() || c == '_' || c == '"')
    });
    if joins {
        return true;
    }
    let mut depth = 0i32;
    for c in text.chars() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            _ => {}
        }
        if depth < 0 {
            return true;
        }
    }
    false
}

fn unexpected_character(span: Span, text: &str) -> Diagnostic {
    let c = text.chars().next().unwrap_or('?');
    let diagnostic = Diagnostic::error(
        codes::UNEXPECTED_CHARACTER,
        span,
        format!("unexpected character `{}`", c.escape_debug()),
    );
    match c {
        '`' => diagnostic.with_help("Runlet strings use double quotes; join text with `+`"),
        '\'' => diagnostic.with_help("Runlet strings use double quotes: \"text\""),
        '&' | '|' => diagnostic.with_help("Runlet spells boolean operators `and`, `or`, `not`"),
        '@' | '$' => diagnostic.with_help("names are plain identifiers such as `user_id`"),
        // Pasted text carries invisible characters that split a name in two.
        _ if text.chars().all(is_invisible) => diagnostic
            .with_help(format!("U+{:04X} is invisible: it splits what reads as one word", c as u32))
            .with_fix(Fix::machine("remove the invisible character", span, "")),
        _ => diagnostic,
    }
}

/// Characters that display as nothing: zero-width spaces and joiners, the word joiner, a byte
/// order mark past the start, the soft hyphen.
fn is_invisible(c: char) -> bool {
    matches!(c, '\u{200B}' | '\u{200C}' | '\u{200D}' | '\u{2060}' | '\u{FEFF}' | '\u{00AD}')
}

fn malformed_number(span: Span, text: &str) -> Diagnostic {
    let digits: String = text.chars().filter(|c| *c != '_').collect();
    let diagnostic = Diagnostic::error(codes::MALFORMED_NUMBER, span, format!("`{text}` is not a number"))
        .with_help("numbers are decimal: `12`, `1.25` or `6e4`");
    if text.contains('_') && is_plain_number(&digits) {
        return diagnostic.with_fix(Fix::machine("remove the digit separators", span, digits));
    }
    diagnostic
}

fn is_plain_number(text: &str) -> bool {
    let mut lexer = RawToken::lexer(text);
    matches!(lexer.next(), Some(Ok(RawToken::Integer | RawToken::Number))) && lexer.span().end == text.len()
}

fn foreign_string(kind: ForeignToken, text: &str, span: Span, diagnostics: &mut Sink) -> TokenKind {
    diagnostics.push(foreign_string::diagnostic(kind, span, text));
    TokenKind::Foreign(kind)
}

fn block_comment(span: Span, text: &str) -> Diagnostic {
    let lines: Vec<String> = text
        .trim_start_matches("/*")
        .trim_end_matches("*/")
        .lines()
        .map(|l| l.trim().trim_start_matches('*').trim())
        .filter(|l| !l.is_empty())
        .map(|l| format!("# {l}"))
        .collect();
    let diagnostic = Diagnostic::error(codes::BLOCK_COMMENT, span, "Runlet has no block comments")
        .with_help("comments start with `#` or `//` and run to the end of the line");
    if lines.len() == 1 {
        diagnostic.with_fix(Fix::machine("use a line comment", span, lines[0].clone()))
    } else {
        diagnostic
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(source: &str) -> Vec<TokenKind> {
        lex(source).tokens.iter().map(|t| t.kind).collect()
    }

    #[test]
    fn bidi_controls_in_strings_are_a_warning_whose_fix_escapes_them() {
        let source = "x = \"a\u{202E}b\u{2066}c\u{202E}\"\n";
        let lexed = lex(source);
        let [warning] = lexed.diagnostics.as_slice() else { panic!("one warning: {:?}", lexed.diagnostics) };
        assert_eq!(
            (warning.code, warning.severity),
            (codes::BIDI_CONTROL_IN_STRING, crate::diag::Severity::Warning)
        );
        assert!(warning.message.contains("U+202E, U+2066"), "{}", warning.message);
        assert_eq!(&source[warning.span.range()], "\"a\u{202E}b\u{2066}c\u{202E}\"");
        let fixed = crate::diag::apply_fixes(source, &warning.fixes).expect("the edits apply");
        assert_eq!(fixed, "x = \"a\\u202Eb\\u2066c\\u202E\"\n");
        assert!(lex(&fixed).diagnostics.is_empty(), "the escaped string is clean");
        assert_eq!(
            crate::syntax::string_value(&fixed[4..fixed.len() - 1]),
            crate::syntax::string_value(&source[4..source.len() - 1]),
            "the same string"
        );
        for clean in ["x = \"plain\"", "x = \"caf\u{e9} \u{200D}\"", "# \u{202E} in a comment"] {
            assert!(lex(clean).diagnostics.is_empty(), "{clean}");
        }
    }

    #[test]
    fn keywords_need_the_whole_word() {
        assert_eq!(
            kinds("returns return_ x"),
            [TokenKind::Ident, TokenKind::Ident, TokenKind::Ident, TokenKind::Eof]
        );
        assert_eq!(kinds("return"), [TokenKind::Keyword(Keyword::Return), TokenKind::Eof]);
    }

    #[test]
    fn identifiers_follow_xid() {
        assert_eq!(
            kinds("café _x 名前"),
            [TokenKind::Ident, TokenKind::Ident, TokenKind::Ident, TokenKind::Eof]
        );
        let lexed = lex("a → b");
        assert_eq!(lexed.tokens[1].kind, TokenKind::Unknown);
        assert_eq!(lexed.diagnostics[0].code, codes::UNEXPECTED_CHARACTER);
    }

    #[test]
    fn numbers_and_malformed_numbers() {
        assert_eq!(
            kinds("12 1.25 6e4 1E-3"),
            [TokenKind::Integer, TokenKind::Number, TokenKind::Number, TokenKind::Number, TokenKind::Eof]
        );
        let lexed = lex("1_000 0x1F");
        let codes: Vec<_> = lexed.diagnostics.iter().map(|d| d.code).collect();
        assert_eq!(codes, [codes::MALFORMED_NUMBER, codes::MALFORMED_NUMBER]);
        assert_eq!(lexed.diagnostics[0].fixes[0].edits[0].replacement, "1000");
        assert!(lexed.diagnostics[1].fixes.is_empty());
    }

    #[test]
    fn closing_an_unterminated_string_gives_a_clean_string() {
        for (source, closed) in [
            ("x = \"abc\r\n", "x = \"abc\"\r\n"),
            ("x = \"abc\\", "x = \"abc\\\\\""),
            ("x = \"abc\\\r\n", "x = \"abc\\\\\"\r\n"),
            ("x = \"abc\\\\", "x = \"abc\\\\\""),
        ] {
            let lexed = lex(source);
            assert_eq!(lexed.diagnostics.len(), 1, "{source:?}");
            let fixed = crate::diag::apply_fixes(source, &lexed.diagnostics[0].fixes);
            assert_eq!(fixed.as_deref(), Some(closed), "{source:?}");
            assert_eq!(lex(closed).diagnostics, [], "{closed:?}");
        }
    }

    #[test]
    fn closing_before_code_is_for_review() {
        for (source, machine) in [
            ("x = \"abc def, ghi (jkl)\n", true),
            ("msg = \"Hi \" + c.name + \", total: + c.tier\n", false),
            ("return \"Hello + c.name\n", false),
            ("r = slack.post(\"#c, msg)\n", false),
            ("msg = \"Hi +name\n", false),
            ("x = \"1+1 makes 2\n", true),
        ] {
            let lexed = lex(source);
            let fix = &lexed.diagnostics[0].fixes[0];
            assert_eq!(fix.applicability == Applicability::MachineApplicable, machine, "{source:?}");
        }
    }

    #[test]
    fn line_breaks_and_comments() {
        let lexed = lex("a # one\n// two\n  b");
        assert_eq!(lexed.tokens.iter().map(|t| t.line_break_before).collect::<Vec<_>>(), [true, true, false]);
        assert_eq!(
            lexed.trivia.iter().map(|t| (t.kind, t.own_line)).collect::<Vec<_>>(),
            [(TriviaKind::HashComment, false), (TriviaKind::SlashComment, true)]
        );
    }
}
