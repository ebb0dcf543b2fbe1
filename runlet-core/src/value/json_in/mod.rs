//! Reading host JSON (RFC 8259) into values, strictly: integers outside i64, duplicate keys,
//! lone surrogates, a byte order mark and numbers that overflow binary64 or underflow to zero
//! are errors, never silent approximations; every error names its offset and JSON path.
//!
//! This is a small dedicated parser ([`reader`]) rather than a serde `Visitor` over `serde_json`,
//! because `serde_json` hands an integer literal beyond `u64` to visitors as an `f64`, so "integer
//! out of range" could not be told apart from a float; it also reads `-0` as a float, `1e-400` as
//! zero and duplicate keys last-wins. Here a number without `.` or exponent is an Integer,
//! anything else a Number. The same grammar builds `serde_json` values for the registry file
//! ([`parse_json_document`]).

mod reader;
mod tree;

use std::sync::Arc;

use super::error::ValueError;
use super::model::{MAX_DEPTH, Value};
use super::sensitivity::Segment;
use crate::diag::{Diagnostic, Span, codes};
use reader::{Failure, read};
use tree::{SerdeTree, ValueTree};

/// Why host JSON was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JsonErrorKind {
    UnexpectedEnd,
    UnexpectedCharacter,
    InvalidNumber,
    /// An integer literal (no `.` or exponent) outside the i64 range.
    IntegerOutOfRange,
    /// A number literal whose value overflows binary64.
    NonFiniteNumber,
    /// A number literal other than zero whose value is too small for binary64 and would round
    /// to zero.
    NumberUnderflow,
    InvalidEscape,
    /// A `\uD800`–`\uDFFF` escape that is not half of a surrogate pair.
    LoneSurrogate,
    /// A raw U+0000–U+001F inside a string.
    ControlCharacter,
    DuplicateKey(Arc<str>),
    TrailingCharacters,
    TooDeep,
    InvalidUtf8,
    /// The text starts with U+FEFF, which RFC 8259 does not allow in JSON text.
    ByteOrderMark,
}

impl JsonErrorKind {
    /// A stable snake_case name, used as `reason` in error details.
    pub fn reason(&self) -> &'static str {
        match self {
            JsonErrorKind::UnexpectedEnd => "unexpected_end",
            JsonErrorKind::UnexpectedCharacter => "unexpected_character",
            JsonErrorKind::InvalidNumber => "invalid_number",
            JsonErrorKind::IntegerOutOfRange => "integer_out_of_range",
            JsonErrorKind::NonFiniteNumber => "non_finite_number",
            JsonErrorKind::NumberUnderflow => "number_underflow",
            JsonErrorKind::InvalidEscape => "invalid_escape",
            JsonErrorKind::LoneSurrogate => "lone_surrogate",
            JsonErrorKind::ControlCharacter => "control_character",
            JsonErrorKind::DuplicateKey(_) => "duplicate_key",
            JsonErrorKind::TrailingCharacters => "trailing_characters",
            JsonErrorKind::TooDeep => "too_deep",
            JsonErrorKind::InvalidUtf8 => "invalid_utf8",
            JsonErrorKind::ByteOrderMark => "byte_order_mark",
        }
    }
}

/// A rejected JSON text: what is wrong and where (byte offset; 1-based line and column, the
/// column counting Unicode scalar values; the path of the value it is in, or of the repeated
/// key).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid JSON at line {line}, column {column}{}: {}{}", self.path_suffix(), .kind.reason(), match &.kind {
    JsonErrorKind::DuplicateKey(key) => format!(" `{key}`"),
    _ => String::new(),
})]
pub struct JsonError {
    pub kind: JsonErrorKind,
    pub offset: usize,
    pub line: usize,
    pub column: usize,
    pub path: Vec<Segment>,
}

impl JsonError {
    /// The path as an RFC 6901 JSON pointer: `""` for the document, `/tools/0/name` inside it.
    pub fn pointer(&self) -> String {
        let mut pointer = String::new();
        for segment in &self.path {
            pointer.push('/');
            match segment {
                Segment::Index(i) => pointer.push_str(&i.to_string()),
                Segment::Key(key) => pointer.push_str(&key.replace('~', "~0").replace('/', "~1")),
            }
        }
        pointer
    }

    fn path_suffix(&self) -> String {
        if self.path.is_empty() { String::new() } else { format!(" (at {})", self.pointer()) }
    }

    /// What is wrong, as a sentence for a person, quoting the offending text of `text` (the
    /// document this error is about).
    pub fn describe(&self, text: &str) -> String {
        let rest = text.get(self.offset..).unwrap_or_default();
        let number = || {
            rest.split(|c: char| !matches!(c, '0'..='9' | '-' | '+' | '.' | 'e' | 'E'))
                .next()
                .unwrap_or_default()
        };
        match &self.kind {
            JsonErrorKind::UnexpectedEnd => "the text ends inside a JSON value".to_owned(),
            JsonErrorKind::UnexpectedCharacter => match rest.chars().next() {
                Some(c) if c.is_control() => format!("unexpected character `{}`", c.escape_debug()),
                Some(c) => format!("unexpected character `{c}`"),
                None => "unexpected end".to_owned(),
            },
            JsonErrorKind::InvalidNumber => format!("`{}` is not a JSON number", number()),
            JsonErrorKind::IntegerOutOfRange => format!(
                "the integer `{}` is outside the 64-bit range (-2^63 to 2^63-1); write it as a string",
                number()
            ),
            JsonErrorKind::NonFiniteNumber => {
                format!("the number `{}` is too large for a 64-bit float (binary64)", number())
            }
            JsonErrorKind::NumberUnderflow => format!(
                "the number `{}` is too small for a 64-bit float (binary64) and would read as 0; write 0 if zero is meant",
                number()
            ),
            JsonErrorKind::InvalidEscape => {
                format!("invalid escape `{}`", rest.chars().take(2).collect::<String>())
            }
            JsonErrorKind::LoneSurrogate => format!(
                "the escape `{}` is one half of a UTF-16 surrogate pair without the other; a JSON string holds whole characters",
                rest.get(..6).unwrap_or(rest)
            ),
            JsonErrorKind::ControlCharacter => match rest.chars().next() {
                Some(c) => format!(
                    "a raw control character (U+{:04X}) in a string; write it as an escape such as `\\u{:04x}`",
                    c as u32, c as u32
                ),
                None => "a raw control character in a string".to_owned(),
            },
            JsonErrorKind::DuplicateKey(key) => format!(
                "the key `{key}` appears twice in one object; readers disagree about which one counts, so neither does"
            ),
            JsonErrorKind::TrailingCharacters => "text follows the JSON value".to_owned(),
            JsonErrorKind::TooDeep => "arrays and objects nest too deep".to_owned(),
            JsonErrorKind::InvalidUtf8 => "the text is not UTF-8".to_owned(),
            JsonErrorKind::ByteOrderMark => {
                "the text starts with a byte order mark (U+FEFF); save it as UTF-8 without one".to_owned()
            }
        }
    }
}

impl JsonError {
    /// The `RL8101` diagnostic about `text`, the document `what` (such as "the transcript"), at
    /// the offset of the problem, with a note naming its JSON path.
    pub fn to_diagnostic(&self, what: &str, text: &str) -> Diagnostic {
        let message = format!("{what} is not valid JSON: {}", self.describe(text));
        let offset = u32::try_from(self.offset).unwrap_or(u32::MAX);
        let pointer = self.pointer();
        let shown = if pointer.is_empty() { "/" } else { &pointer };
        Diagnostic::error(codes::INVALID_HOST_JSON, Span::at(offset), message)
            .with_note(format!("JSON path: {shown}"))
    }
}

impl From<JsonError> for ValueError {
    fn from(error: JsonError) -> ValueError {
        let mut converted = ValueError::new(codes::INVALID_HOST_JSON, error.to_string())
            .with_detail("reason", error.kind.reason())
            .with_detail("offset", error.offset as i64)
            .with_detail("line", error.line as i64)
            .with_detail("column", error.column as i64)
            .with_detail("path", error.pointer());
        if let JsonErrorKind::DuplicateKey(key) = &error.kind {
            converted = converted.with_detail("key", Value::String(key.clone()));
        }
        converted
    }
}

/// Parses one JSON text into a value, nesting at most [`MAX_DEPTH`].
pub fn parse_json(text: &str) -> Result<Value, JsonError> {
    parse_json_with_depth(text, MAX_DEPTH)
}

/// Like [`parse_json`] for bytes that must first be valid UTF-8.
pub fn parse_json_bytes(bytes: &[u8]) -> Result<Value, JsonError> {
    match std::str::from_utf8(bytes) {
        Ok(text) => parse_json(text),
        Err(e) => Err(error_at(
            &String::from_utf8_lossy(bytes),
            (JsonErrorKind::InvalidUtf8, e.valid_up_to(), Vec::new()),
        )),
    }
}

/// Like [`parse_json`] with a lower nesting limit (`max_depth` above [`MAX_DEPTH`] is capped).
pub fn parse_json_with_depth(text: &str, max_depth: usize) -> Result<Value, JsonError> {
    read(text, max_depth.min(MAX_DEPTH), &mut ValueTree { widened: None })
        .map_err(|failure| error_at(text, failure))
}

/// Like [`parse_json`], except that an integer literal outside i64 reads as the nearest Number;
/// each such literal is returned as the `IntegerOutOfRange` error it would otherwise be, for a
/// caller that accepts it only where a Number is expected (a host input whose schema is Number).
pub fn parse_json_widening(text: &str) -> Result<(Value, Vec<JsonError>), JsonError> {
    let mut tree = ValueTree { widened: Some(Vec::new()) };
    let value = read(text, MAX_DEPTH, &mut tree).map_err(|failure| error_at(text, failure))?;
    let widened = (tree.widened.unwrap_or_default().into_iter())
        .map(|(offset, path)| error_at(text, (JsonErrorKind::IntegerOutOfRange, offset, path)))
        .collect();
    Ok((value, widened))
}

/// Parses one JSON text into a `serde_json` value as strictly as [`parse_json`], nesting at most
/// `max_depth`; integers keep their spelling as `serde_json` reads them (i64, u64, else the
/// nearest binary64). For documents whose reader walks `serde_json`, such as the registry file.
pub fn parse_json_document(text: &str, max_depth: usize) -> Result<serde_json::Value, JsonError> {
    read(text, max_depth, &mut SerdeTree).map_err(|failure| error_at(text, failure))
}

fn error_at(text: &str, (kind, offset, path): Failure) -> JsonError {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    JsonError { kind, offset, line, column, path }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::json_out::to_presentation_json;

    fn kind(text: &str) -> JsonErrorKind {
        parse_json(text).expect_err("must be rejected").kind
    }

    fn canonical(text: &str) -> String {
        to_presentation_json(&parse_json(text).expect("valid")).expect("representable")
    }

    #[test]
    fn reads_integers_and_numbers_by_their_spelling() {
        assert_eq!(parse_json("1"), Ok(Value::Int(1)));
        assert_eq!(parse_json("-0"), Ok(Value::Int(0)));
        assert_eq!(parse_json("1.0"), Ok(Value::number(1.0).expect("finite")));
        assert_eq!(parse_json("1e2"), Ok(Value::number(100.0).expect("finite")));
        assert_eq!(parse_json("-0.0"), Ok(Value::number(0.0).expect("finite")));
        assert_eq!(parse_json("9223372036854775807"), Ok(Value::Int(i64::MAX)));
        assert_eq!(parse_json("-9223372036854775808"), Ok(Value::Int(i64::MIN)));
        assert_eq!(parse_json("5e-324"), Ok(Value::number(5e-324).expect("finite")));
        assert_eq!(parse_json("0e-400"), Ok(Value::number(0.0).expect("finite")));
        assert_eq!(parse_json("-0.000e5"), Ok(Value::number(0.0).expect("finite")));
        assert_eq!(kind("1e-400"), JsonErrorKind::NumberUnderflow);
        assert_eq!(kind("-2e-324"), JsonErrorKind::NumberUnderflow);
        assert_eq!(kind("9223372036854775808"), JsonErrorKind::IntegerOutOfRange);
        assert_eq!(kind("-9223372036854775809"), JsonErrorKind::IntegerOutOfRange);
        assert_eq!(kind("100000000000000000000000"), JsonErrorKind::IntegerOutOfRange);
        assert_eq!(kind("1e400"), JsonErrorKind::NonFiniteNumber);
        for bad in ["01", "-", "1.", ".5", "1e", "+1", "1.e3", "-01", "NaN", "Infinity"] {
            assert!(parse_json(bad).is_err(), "{bad} must be rejected");
        }
    }

    #[test]
    fn strings_decode_escapes_and_reject_lone_surrogates() {
        assert_eq!(
            parse_json(r#""a\"\\\/\b\f\n\r\t\u0041\u00e9\ud83d\ude00""#),
            Ok(Value::from("a\"\\/\u{8}\u{c}\n\r\tAé😀"))
        );
        assert_eq!(kind(r#""\ud800""#), JsonErrorKind::LoneSurrogate);
        assert_eq!(kind(r#""\ud800\u0041""#), JsonErrorKind::LoneSurrogate);
        assert_eq!(kind(r#""\udc00""#), JsonErrorKind::LoneSurrogate);
        assert_eq!(kind(r#""\x""#), JsonErrorKind::InvalidEscape);
        assert_eq!(kind(r#""\u12g4""#), JsonErrorKind::InvalidEscape);
        assert_eq!(kind("\"a\tb\""), JsonErrorKind::ControlCharacter);
        assert_eq!(kind("\"abc"), JsonErrorKind::UnexpectedEnd);
    }

    #[test]
    fn objects_reject_duplicates_and_sort_keys() {
        assert_eq!(
            canonical(r#" { "b" : [ 1 , 2.5 ] , "a" : { } , "é" : null } "#),
            r#"{"a":{},"b":[1,2.5],"é":null}"#
        );
        let error = parse_json("{\"a\": 1,\n \"b\": 2, \"a\": 3}").expect_err("duplicate");
        assert_eq!(error.kind, JsonErrorKind::DuplicateKey("a".into()));
        assert_eq!((error.offset, error.line, error.column), (18, 2, 10));
        assert_eq!(kind(r#"{"a":1,}"#), JsonErrorKind::UnexpectedCharacter);
        assert_eq!(kind(r#"{"a" 1}"#), JsonErrorKind::UnexpectedCharacter);
        assert_eq!(kind("[1,]"), JsonErrorKind::UnexpectedCharacter);
        assert_eq!(kind("[1] x"), JsonErrorKind::TrailingCharacters);
        assert_eq!(kind(""), JsonErrorKind::UnexpectedEnd);
        assert_eq!(kind("tru"), JsonErrorKind::UnexpectedEnd);
    }

    #[test]
    fn depth_is_limited_and_bytes_must_be_utf8() {
        let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        assert!(parse_json(&nested(MAX_DEPTH)).is_ok());
        assert_eq!(kind(&nested(MAX_DEPTH + 1)), JsonErrorKind::TooDeep);
        assert_eq!(parse_json_with_depth(&nested(3), 2).map_err(|e| e.kind), Err(JsonErrorKind::TooDeep));
        assert_eq!(parse_json_bytes(b"\"\xff\"").map_err(|e| e.kind), Err(JsonErrorKind::InvalidUtf8));
        let error: ValueError = parse_json("{\"a\":1,\"a\":2}").expect_err("duplicate").into();
        assert_eq!(error.code(), codes::INVALID_HOST_JSON);
        assert_eq!(error.details().get("key"), Some(&Value::from("a")));
        assert_eq!(error.details().get("path"), Some(&Value::from("/a")));
    }

    #[test]
    fn errors_name_the_json_path_of_the_problem() {
        let error = |text: &str| parse_json(text).expect_err(text);
        let duplicate = error(r#"{"tools": [{"name": "x"}, {"execution": "pure", "execution": "unsafe"}]}"#);
        assert_eq!(duplicate.pointer(), "/tools/1/execution");
        assert!(duplicate.to_string().contains("(at /tools/1/execution): duplicate_key `execution`"));
        assert_eq!(error(r#"{"a/b~": [1, 1e400]}"#).pointer(), "/a~1b~0/1");
        assert_eq!(error("[[1], [2, tru]]").pointer(), "/1/1");
        assert_eq!(error("{").pointer(), "");
    }

    #[test]
    fn a_byte_order_mark_is_refused() {
        assert_eq!(kind("\u{feff}{}"), JsonErrorKind::ByteOrderMark);
        assert_eq!(
            parse_json_bytes(b"\xef\xbb\xbf[]").map_err(|e| e.kind),
            Err(JsonErrorKind::ByteOrderMark)
        );
    }

    #[test]
    fn descriptions_quote_the_offending_text() {
        let describe = |text: &str| parse_json(text).expect_err(text).describe(text);
        assert!(describe("[1e400]").contains("`1e400` is too large"));
        assert!(describe("[1e-400]").contains("`1e-400` is too small"));
        assert!(
            describe("99999999999999999999").contains("`99999999999999999999` is outside the 64-bit range")
        );
        assert!(describe(r#"["\ud800"]"#).contains("`\\ud800` is one half of a UTF-16 surrogate pair"));
        assert!(describe(r#"{"a":1,"a":2}"#).contains("the key `a` appears twice"));
        assert!(describe("\u{feff}1").contains("byte order mark"));
        assert!(describe("\"\t\"").contains("(U+0009)"));
    }

    #[test]
    fn widening_reads_out_of_range_integers_as_numbers_and_says_where() {
        let (value, widened) =
            parse_json_widening(r#"{"big": 18446744073709551616, "small": 1}"#).expect("valid");
        let Value::Object(object) = &value else { panic!("an object") };
        assert_eq!(object.get("big"), Some(&Value::number(18446744073709551616.0).expect("finite")));
        assert_eq!(object.get("small"), Some(&Value::Int(1)));
        assert_eq!(widened.len(), 1);
        assert_eq!(
            (widened[0].kind.clone(), widened[0].pointer()),
            (JsonErrorKind::IntegerOutOfRange, "/big".into())
        );
        assert_eq!(
            parse_json_widening(&"9".repeat(400)).map_err(|e| e.kind),
            Err(JsonErrorKind::NonFiniteNumber)
        );
    }

    #[test]
    fn documents_read_into_serde_json_as_strictly() {
        let document =
            parse_json_document(r#"{"u": 18446744073709551615, "big": 1e30, "i": -3, "f": 0.5}"#, 8)
                .expect("valid");
        assert_eq!(document["u"].as_u64(), Some(u64::MAX));
        assert_eq!(document["i"].as_i64(), Some(-3));
        assert_eq!(document["big"].as_f64(), Some(1e30));
        assert_eq!(
            parse_json_document("123456789012345678901234567890", 8).map(|v| v.as_f64()),
            Ok(Some(1.2345678901234568e29))
        );
        for (text, expected) in [
            (r#"{"a": {"b": 1, "b": 2}}"#, JsonErrorKind::DuplicateKey("b".into())),
            ("[1e400]", JsonErrorKind::NonFiniteNumber),
            ("[1e-400]", JsonErrorKind::NumberUnderflow),
            (r#""\udc00""#, JsonErrorKind::LoneSurrogate),
            ("\u{feff}{}", JsonErrorKind::ByteOrderMark),
            ("[[[]]]", JsonErrorKind::TooDeep),
        ] {
            assert_eq!(parse_json_document(text, 2).map_err(|e| e.kind), Err(expected), "{text}");
        }
    }
}
