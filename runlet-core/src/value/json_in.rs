//! Reading host JSON (RFC 8259) into values, strictly: integers outside i64, duplicate keys,
//! lone surrogates and numbers that overflow binary64 are errors, never silent approximations.
//!
//! This is a small dedicated parser rather than a serde `Visitor` over `serde_json`, because
//! `serde_json` hands an integer literal beyond `u64` to visitors as an `f64`, so "integer out of
//! range" could not be told apart from a float; it also reads `-0` as a float. Here a number
//! without `.` or exponent is an Integer, anything else a Number.

use std::sync::Arc;

use super::error::ValueError;
use super::model::{List, MAX_DEPTH, Object, Value};
use super::number::Number;
use crate::diag::codes;

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
    InvalidEscape,
    /// A `\uD800`–`\uDFFF` escape that is not half of a surrogate pair.
    LoneSurrogate,
    /// A raw U+0000–U+001F inside a string.
    ControlCharacter,
    DuplicateKey(Arc<str>),
    TrailingCharacters,
    TooDeep,
    InvalidUtf8,
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
            JsonErrorKind::InvalidEscape => "invalid_escape",
            JsonErrorKind::LoneSurrogate => "lone_surrogate",
            JsonErrorKind::ControlCharacter => "control_character",
            JsonErrorKind::DuplicateKey(_) => "duplicate_key",
            JsonErrorKind::TrailingCharacters => "trailing_characters",
            JsonErrorKind::TooDeep => "too_deep",
            JsonErrorKind::InvalidUtf8 => "invalid_utf8",
        }
    }
}

/// A rejected JSON text: what is wrong and where (byte offset; 1-based line and column, the
/// column counting Unicode scalar values).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid JSON at line {line}, column {column}: {}{}", .kind.reason(), match &.kind {
    JsonErrorKind::DuplicateKey(key) => format!(" `{key}`"),
    _ => String::new(),
})]
pub struct JsonError {
    pub kind: JsonErrorKind,
    pub offset: usize,
    pub line: usize,
    pub column: usize,
}

impl From<JsonError> for ValueError {
    fn from(error: JsonError) -> ValueError {
        let mut converted = ValueError::new(codes::INVALID_HOST_JSON, error.to_string())
            .with_detail("reason", error.kind.reason())
            .with_detail("offset", error.offset as i64)
            .with_detail("line", error.line as i64)
            .with_detail("column", error.column as i64);
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
        Err(e) => Err(error_at(&String::from_utf8_lossy(bytes), JsonErrorKind::InvalidUtf8, e.valid_up_to())),
    }
}

/// Like [`parse_json`] with a lower nesting limit (`max_depth` above [`MAX_DEPTH`] is capped).
pub fn parse_json_with_depth(text: &str, max_depth: usize) -> Result<Value, JsonError> {
    let mut parser = Parser { text, bytes: text.as_bytes(), pos: 0, max_depth: max_depth.min(MAX_DEPTH) };
    let result = parser.document();
    result.map_err(|(kind, offset)| error_at(text, kind, offset))
}

fn error_at(text: &str, kind: JsonErrorKind, offset: usize) -> JsonError {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    JsonError { kind, offset, line, column }
}

type Step<T> = Result<T, (JsonErrorKind, usize)>;

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    max_depth: usize,
}

impl Parser<'_> {
    fn document(&mut self) -> Step<Value> {
        let value = self.value(0)?;
        self.skip_whitespace();
        if self.pos != self.bytes.len() {
            return Err((JsonErrorKind::TrailingCharacters, self.pos));
        }
        Ok(value)
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Step<u8> {
        self.bytes.get(self.pos).copied().ok_or((JsonErrorKind::UnexpectedEnd, self.pos))
    }

    fn expect(&mut self, byte: u8) -> Step<()> {
        if self.peek()? != byte {
            return Err((JsonErrorKind::UnexpectedCharacter, self.pos));
        }
        self.pos += 1;
        Ok(())
    }

    fn value(&mut self, depth: usize) -> Step<Value> {
        self.skip_whitespace();
        match self.peek()? {
            b'{' => self.object(depth),
            b'[' => self.list(depth),
            b'"' => Ok(Value::String(self.string()?)),
            b't' => self.literal("true", Value::Bool(true)),
            b'f' => self.literal("false", Value::Bool(false)),
            b'n' => self.literal("null", Value::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => Err((JsonErrorKind::UnexpectedCharacter, self.pos)),
        }
    }

    fn literal(&mut self, word: &str, value: Value) -> Step<Value> {
        for &expected in word.as_bytes() {
            self.expect(expected)?;
        }
        Ok(value)
    }

    fn enter(&mut self, depth: usize) -> Step<()> {
        if depth + 1 > self.max_depth {
            return Err((JsonErrorKind::TooDeep, self.pos));
        }
        self.pos += 1;
        self.skip_whitespace();
        Ok(())
    }

    fn list(&mut self, depth: usize) -> Step<Value> {
        let start = self.pos;
        self.enter(depth)?;
        let mut items = Vec::new();
        if self.peek()? == b']' {
            self.pos += 1;
        } else {
            loop {
                items.push(self.value(depth + 1)?);
                self.skip_whitespace();
                match self.peek()? {
                    b',' => self.pos += 1,
                    b']' => {
                        self.pos += 1;
                        break;
                    }
                    _ => return Err((JsonErrorKind::UnexpectedCharacter, self.pos)),
                }
            }
        }
        List::new(items).map(Value::List).map_err(|_| (JsonErrorKind::TooDeep, start))
    }

    fn object(&mut self, depth: usize) -> Step<Value> {
        let start = self.pos;
        self.enter(depth)?;
        let mut entries: Vec<(Arc<str>, Value, usize)> = Vec::new();
        if self.peek()? == b'}' {
            self.pos += 1;
        } else {
            loop {
                self.skip_whitespace();
                let key_offset = self.pos;
                if self.peek()? != b'"' {
                    return Err((JsonErrorKind::UnexpectedCharacter, self.pos));
                }
                let key = self.string()?;
                self.skip_whitespace();
                self.expect(b':')?;
                let value = self.value(depth + 1)?;
                entries.push((key, value, key_offset));
                self.skip_whitespace();
                match self.peek()? {
                    b',' => self.pos += 1,
                    b'}' => {
                        self.pos += 1;
                        break;
                    }
                    _ => return Err((JsonErrorKind::UnexpectedCharacter, self.pos)),
                }
            }
        }
        // Stable: equal keys stay in source order, so the second of a pair is the repeat.
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        if let Some(pair) = entries.windows(2).find(|pair| pair[0].0 == pair[1].0) {
            return Err((JsonErrorKind::DuplicateKey(pair[1].0.clone()), pair[1].2));
        }
        let entries = entries.into_iter().map(|(k, v, _)| (k, v)).collect();
        Object::from_sorted_unique(entries).map(Value::Object).map_err(|_| (JsonErrorKind::TooDeep, start))
    }

    /// A string starting at the opening quote; the text between escapes is copied verbatim.
    fn string(&mut self) -> Step<Arc<str>> {
        self.pos += 1;
        let mut decoded = String::new();
        let mut run_start = self.pos;
        loop {
            let byte = self.peek()?;
            match byte {
                b'"' => {
                    let tail = &self.text[run_start..self.pos];
                    self.pos += 1;
                    if decoded.is_empty() {
                        return Ok(Arc::from(tail));
                    }
                    decoded.push_str(tail);
                    return Ok(Arc::from(decoded));
                }
                b'\\' => {
                    decoded.push_str(&self.text[run_start..self.pos]);
                    self.escape(&mut decoded)?;
                    run_start = self.pos;
                }
                0x00..=0x1f => return Err((JsonErrorKind::ControlCharacter, self.pos)),
                _ => self.pos += 1,
            }
        }
    }

    fn escape(&mut self, out: &mut String) -> Step<()> {
        let start = self.pos;
        self.pos += 1;
        let decoded = match self.peek()? {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                self.pos += 1;
                let unit = self.hex4()?;
                let scalar = match unit {
                    0xd800..=0xdbff => {
                        let low_start = self.pos;
                        if self.bytes.get(self.pos..self.pos + 2) != Some(b"\\u") {
                            return Err((JsonErrorKind::LoneSurrogate, start));
                        }
                        self.pos += 2;
                        let low = self.hex4()?;
                        if !(0xdc00..=0xdfff).contains(&low) {
                            return Err((JsonErrorKind::LoneSurrogate, low_start));
                        }
                        0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00)
                    }
                    0xdc00..=0xdfff => return Err((JsonErrorKind::LoneSurrogate, start)),
                    _ => unit,
                };
                out.push(char::from_u32(scalar).ok_or((JsonErrorKind::InvalidEscape, start))?);
                return Ok(());
            }
            _ => return Err((JsonErrorKind::InvalidEscape, start)),
        };
        self.pos += 1;
        out.push(decoded);
        Ok(())
    }

    fn hex4(&mut self) -> Step<u32> {
        let digits =
            self.bytes.get(self.pos..self.pos + 4).ok_or((JsonErrorKind::UnexpectedEnd, self.pos))?;
        let mut unit = 0;
        for &digit in digits {
            let nibble = (digit as char).to_digit(16).ok_or((JsonErrorKind::InvalidEscape, self.pos))?;
            unit = unit * 16 + nibble;
        }
        self.pos += 4;
        Ok(unit)
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while let Some(b'0'..=b'9') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Step<Value> {
        let start = self.pos;
        let invalid = |at: usize| (JsonErrorKind::InvalidNumber, at);
        if self.bytes[self.pos] == b'-' {
            self.pos += 1;
        }
        let int_start = self.pos;
        match self.digits() {
            0 => return Err(invalid(self.pos)),
            n if n > 1 && self.bytes[int_start] == b'0' => return Err(invalid(int_start)),
            _ => {}
        }
        let mut integral = true;
        if self.bytes.get(self.pos) == Some(&b'.') {
            integral = false;
            self.pos += 1;
            if self.digits() == 0 {
                return Err(invalid(self.pos));
            }
        }
        if let Some(b'e' | b'E') = self.bytes.get(self.pos) {
            integral = false;
            self.pos += 1;
            if let Some(b'+' | b'-') = self.bytes.get(self.pos) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(invalid(self.pos));
            }
        }
        let literal = &self.text[start..self.pos];
        if integral {
            return literal
                .parse::<i64>()
                .map(Value::Int)
                .map_err(|_| (JsonErrorKind::IntegerOutOfRange, start));
        }
        // Rust's float parsing is correctly rounded; magnitudes below the smallest subnormal
        // round to zero (and `-0` to `0`), magnitudes above the largest finite fail.
        let parsed: f64 = literal.parse().map_err(|_| invalid(start))?;
        Number::new(parsed).map(Value::Number).ok_or((JsonErrorKind::NonFiniteNumber, start))
    }
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
        assert_eq!(parse_json("1e-400"), Ok(Value::number(0.0).expect("finite")));
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
    }
}
