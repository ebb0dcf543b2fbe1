//! Decoding of double-quoted string literals with JSON escapes (spec §2.1): `\" \\ \/ \b \f \n
//! \r \t \uXXXX`, surrogate pairs combined, lone surrogates and raw control characters rejected.

use super::ast::Text;

/// Why part of a string literal could not be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EscapeProblem {
    /// `\` followed by a character that is not a JSON escape.
    UnknownEscape,
    /// `\u` not followed by four hex digits.
    BadUnicodeEscape,
    /// A `\uD800`–`\uDFFF` escape that is not part of a high+low surrogate pair.
    LoneSurrogate,
    /// A raw character below U+0020 (JSON requires it escaped).
    ControlCharacter,
}

/// One decoding problem at `start..end`, byte offsets relative to the literal's opening quote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EscapeError {
    pub problem: EscapeProblem,
    pub start: usize,
    pub end: usize,
}

/// Decodes a literal including its quotes (`"a\nb"`). Problems are collected; the offending
/// escape decodes to U+FFFD so that the rest of the string is still usable.
pub fn decode_string(literal: &str) -> (String, Vec<EscapeError>) {
    let body = literal.strip_prefix('"').unwrap_or(literal);
    let body = body.strip_suffix('"').unwrap_or(body);
    let mut out = String::with_capacity(body.len());
    let mut errors = Vec::new();
    let bytes = body.as_bytes();
    let mut i = 0;
    while i < body.len() {
        let Some(escape_at) = body[i..].find(|c: char| c == '\\' || c < ' ') else {
            out.push_str(&body[i..]);
            break;
        };
        out.push_str(&body[i..i + escape_at]);
        i += escape_at;
        if bytes[i] != b'\\' {
            errors.push(error(EscapeProblem::ControlCharacter, i, i + 1));
            out.push('\u{FFFD}');
            i += 1;
            continue;
        }
        let simple = match bytes.get(i + 1) {
            Some(b'"') => Some('"'),
            Some(b'\\') => Some('\\'),
            Some(b'/') => Some('/'),
            Some(b'b') => Some('\u{8}'),
            Some(b'f') => Some('\u{c}'),
            Some(b'n') => Some('\n'),
            Some(b'r') => Some('\r'),
            Some(b't') => Some('\t'),
            _ => None,
        };
        if let Some(c) = simple {
            out.push(c);
            i += 2;
            continue;
        }
        if bytes.get(i + 1) == Some(&b'u') {
            let (c, consumed, problem) = decode_unicode_escape(body, i);
            out.push(c);
            if let Some(problem) = problem {
                errors.push(error(problem, i, i + consumed));
            }
            i += consumed;
            continue;
        }
        let next_len = body[i + 1..].chars().next().map_or(0, char::len_utf8);
        errors.push(error(EscapeProblem::UnknownEscape, i, i + 1 + next_len));
        out.push('\u{FFFD}');
        i += 1 + next_len;
    }
    (out, errors)
}

fn error(problem: EscapeProblem, start: usize, end: usize) -> EscapeError {
    // Offsets are relative to the opening quote, which the body skipped.
    EscapeError { problem, start: start + 1, end: end + 1 }
}

/// Decodes `\uXXXX` (and a following low surrogate) at `at`; returns the character, the bytes
/// consumed and a problem if any.
fn decode_unicode_escape(body: &str, at: usize) -> (char, usize, Option<EscapeProblem>) {
    let Some(high) = hex4(body, at + 2) else {
        let consumed = 2 + body[at + 2..].chars().take(4).take_while(char::is_ascii_hexdigit).count();
        return ('\u{FFFD}', consumed, Some(EscapeProblem::BadUnicodeEscape));
    };
    match high {
        0xD800..=0xDBFF => {
            let low = body[at + 6..].strip_prefix("\\u").and_then(|_| hex4(body, at + 8));
            match low {
                Some(low @ 0xDC00..=0xDFFF) => {
                    let scalar = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                    (char::from_u32(scalar).unwrap_or('\u{FFFD}'), 12, None)
                }
                _ => ('\u{FFFD}', 6, Some(EscapeProblem::LoneSurrogate)),
            }
        }
        0xDC00..=0xDFFF => ('\u{FFFD}', 6, Some(EscapeProblem::LoneSurrogate)),
        scalar => (char::from_u32(scalar).unwrap_or('\u{FFFD}'), 6, None),
    }
}

fn hex4(body: &str, at: usize) -> Option<u32> {
    let digits = body.get(at..at + 4)?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(digits, 16).ok()
}

/// The value of a well-formed literal (including its quotes), without allocating when it has no
/// escapes and fits inline; escape problems decode to U+FFFD (the lexer reports them).
pub fn string_value(literal: &str) -> Text {
    let body = literal.strip_prefix('"').unwrap_or(literal);
    let body = body.strip_suffix('"').unwrap_or(body);
    if needs_decoding(body) { Text::from(decode_string(literal).0) } else { Text::from(body) }
}

/// True when `text` holds a backslash or a control character, i.e. decoding can change it.
pub(crate) fn needs_decoding(text: &str) -> bool {
    text.bytes().any(|b| b == b'\\' || b < b' ')
}

/// Writes `value` as a double-quoted Runlet string literal with the shortest JSON escapes.
pub fn quote_string(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if c < ' ' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(literal: &str) -> String {
        let (value, errors) = decode_string(literal);
        assert_eq!(errors, [], "{literal}");
        value
    }

    #[test]
    fn decodes_every_json_escape() {
        assert_eq!(decoded(r#""a\"b\\c\/d\be\ff\ng\rh\ti""#), "a\"b\\c/d\u{8}e\u{c}f\ng\rh\ti");
        assert_eq!(decoded(r#""\u00e9\u4e2d""#), "é中");
        assert_eq!(decoded("\"plain é 中\""), "plain é 中");
    }

    #[test]
    fn combines_surrogate_pairs() {
        assert_eq!(decoded(r#""\uD83D\uDE00!""#), "😀!");
    }

    #[test]
    fn rejects_lone_surrogates_and_bad_escapes() {
        let problems = |literal: &str| {
            decode_string(literal).1.into_iter().map(|e| (e.problem, e.start, e.end)).collect::<Vec<_>>()
        };
        assert_eq!(problems(r#""\uD83D""#), [(EscapeProblem::LoneSurrogate, 1, 7)]);
        assert_eq!(problems(r#""\uDE00x""#), [(EscapeProblem::LoneSurrogate, 1, 7)]);
        assert_eq!(problems(r#""\uD83Dx\u0041""#), [(EscapeProblem::LoneSurrogate, 1, 7)]);
        assert_eq!(problems(r#""\q""#), [(EscapeProblem::UnknownEscape, 1, 3)]);
        assert_eq!(problems(r#""\u12""#), [(EscapeProblem::BadUnicodeEscape, 1, 5)]);
        assert_eq!(problems("\"a\tb\""), [(EscapeProblem::ControlCharacter, 2, 3)]);
        assert_eq!(problems(r#""\é""#), [(EscapeProblem::UnknownEscape, 1, 4)]);
    }

    #[test]
    fn quoting_round_trips() {
        for value in ["", "a\"b", "back\\slash", "line\nbreak\u{1}", "é😀"] {
            assert_eq!(decoded(&quote_string(value)), value);
        }
    }
}
