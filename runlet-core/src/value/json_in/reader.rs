//! The strict JSON grammar (RFC 8259) every reader of host JSON shares: one pass over the text
//! that rejects what portable JSON does not allow (a byte order mark, duplicate keys, lone
//! surrogates, raw control characters, numbers that overflow binary64 or underflow to zero) and
//! hands each value to a [`Build`], which makes the tree its caller wants.
//!
//! The parser keeps the JSON path of the value it is in; a failure leaves that path standing, so
//! every error says where it is.

use std::sync::Arc;

use super::JsonErrorKind;
use crate::value::Segment;

/// Makes the tree of one document from the values the parser reads, bottom up.
pub(super) trait Build {
    type Node;
    fn null(&mut self) -> Self::Node;
    fn bool(&mut self, value: bool) -> Self::Node;
    fn string(&mut self, text: Arc<str>) -> Self::Node;
    /// An integer literal (digits without `.` or exponent) exactly as written, starting at byte
    /// `offset` of the text at `path`.
    fn integer(
        &mut self,
        literal: &str,
        offset: usize,
        path: &[Segment],
    ) -> Result<Self::Node, JsonErrorKind>;
    /// The value of a number literal with a fraction or an exponent: finite, and zero only when
    /// the literal is zero.
    fn number(&mut self, value: f64) -> Result<Self::Node, JsonErrorKind>;
    fn list(&mut self, items: Vec<Self::Node>) -> Result<Self::Node, JsonErrorKind>;
    /// An object's members with unique keys, sorted by key bytes.
    fn object(&mut self, members: Vec<(Arc<str>, Self::Node)>) -> Result<Self::Node, JsonErrorKind>;
}

/// A rejected document: why, the byte offset, and the path of the value where it was found.
pub(super) type Failure = (JsonErrorKind, usize, Vec<Segment>);

/// Parses `text` as one JSON document nesting at most `max_depth` arrays and objects deep.
pub(super) fn read<B: Build>(text: &str, max_depth: usize, build: &mut B) -> Result<B::Node, Failure> {
    let mut parser = Parser { text, bytes: text.as_bytes(), pos: 0, max_depth, path: Vec::new(), build };
    // On failure, `path` still holds the segments entered on the way to the problem.
    parser.document().map_err(|(kind, offset)| (kind, offset, parser.path))
}

type Step<T> = Result<T, (JsonErrorKind, usize)>;

struct Parser<'a, 'b, B> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    max_depth: usize,
    /// The keys and indexes of the values being read; popped only when a value was read.
    path: Vec<Segment>,
    build: &'b mut B,
}

impl<B: Build> Parser<'_, '_, B> {
    fn document(&mut self) -> Step<B::Node> {
        if self.text.starts_with('\u{feff}') {
            return Err((JsonErrorKind::ByteOrderMark, 0));
        }
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

    fn value(&mut self, depth: usize) -> Step<B::Node> {
        self.skip_whitespace();
        match self.peek()? {
            b'{' => self.object(depth),
            b'[' => self.list(depth),
            b'"' => {
                let text = self.string()?;
                Ok(self.build.string(text))
            }
            b't' => self.literal("true").map(|()| self.build.bool(true)),
            b'f' => self.literal("false").map(|()| self.build.bool(false)),
            b'n' => self.literal("null").map(|()| self.build.null()),
            b'-' | b'0'..=b'9' => self.number(),
            _ => Err((JsonErrorKind::UnexpectedCharacter, self.pos)),
        }
    }

    fn literal(&mut self, word: &str) -> Step<()> {
        for &expected in word.as_bytes() {
            self.expect(expected)?;
        }
        Ok(())
    }

    fn enter(&mut self, depth: usize) -> Step<()> {
        if depth + 1 > self.max_depth {
            return Err((JsonErrorKind::TooDeep, self.pos));
        }
        self.pos += 1;
        self.skip_whitespace();
        Ok(())
    }

    fn list(&mut self, depth: usize) -> Step<B::Node> {
        let start = self.pos;
        self.enter(depth)?;
        let mut items = Vec::new();
        if self.peek()? == b']' {
            self.pos += 1;
        } else {
            loop {
                self.path.push(Segment::Index(items.len()));
                items.push(self.value(depth + 1)?);
                self.path.pop();
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
        self.build.list(items).map_err(|kind| (kind, start))
    }

    fn object(&mut self, depth: usize) -> Step<B::Node> {
        let start = self.pos;
        self.enter(depth)?;
        let mut members: Vec<(Arc<str>, B::Node, usize)> = Vec::new();
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
                self.path.push(Segment::Key(key.clone()));
                let value = self.value(depth + 1)?;
                self.path.pop();
                members.push((key, value, key_offset));
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
        members.sort_by(|a, b| a.0.cmp(&b.0));
        if let Some(pair) = members.windows(2).find(|pair| pair[0].0 == pair[1].0) {
            let (key, offset) = (pair[1].0.clone(), pair[1].2);
            self.path.push(Segment::Key(key.clone()));
            return Err((JsonErrorKind::DuplicateKey(key), offset));
        }
        let members = members.into_iter().map(|(key, value, _)| (key, value)).collect();
        self.build.object(members).map_err(|kind| (kind, start))
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

    fn number(&mut self) -> Step<B::Node> {
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
        let mantissa_end = self.pos;
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
            return self.build.integer(literal, start, &self.path).map_err(|kind| (kind, start));
        }
        // Rust's float parsing is correctly rounded: magnitudes above the largest finite value
        // become infinite, those below half the smallest subnormal become zero.
        let parsed: f64 = literal.parse().map_err(|_| invalid(start))?;
        if parsed.is_infinite() {
            return Err((JsonErrorKind::NonFiniteNumber, start));
        }
        let written_zero = !self.text[start..mantissa_end].bytes().any(|b| matches!(b, b'1'..=b'9'));
        if parsed == 0.0 && !written_zero {
            return Err((JsonErrorKind::NumberUnderflow, start));
        }
        self.build.number(parsed).map_err(|kind| (kind, start))
    }
}
