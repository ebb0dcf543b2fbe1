//! The RCVE v1 decoder for untrusted bytes (journals, blobs, peers): accepts exactly the
//! encoder's output and reports every other input with its own error kind and byte offset.

use std::sync::Arc;

use super::{
    TAG_BYTES, TAG_FALSE, TAG_INTEGER, TAG_LIST, TAG_NULL, TAG_NUMBER, TAG_OBJECT, TAG_STRING, TAG_TRUE,
};
use crate::diag::codes;
use crate::value::error::ValueError;
use crate::value::model::{List, MAX_DEPTH, Object, Value};
use crate::value::number::Number;

/// Why bytes are not a canonical RCVE v1 encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeErrorKind {
    /// The input ends inside a value.
    Truncated,
    /// A LEB128 number has a redundant terminal zero group.
    NonMinimalLeb128,
    /// A LEB128 number does not fit in 64 bits.
    Leb128Overflow,
    /// A byte where a value starts is not one of the nine tags.
    UnknownTag(u8),
    /// String or key bytes are not valid UTF-8.
    InvalidUtf8,
    /// A Number's bits are NaN or an infinity.
    NonFiniteNumber,
    /// A Number's bits are `-0.0`, which the encoder writes as `0.0`.
    NegativeZero,
    /// An object key is not String-encoded (tag `0x20`).
    KeyNotString,
    /// Object keys are not in ascending byte order.
    UnsortedKeys,
    /// An object key repeats.
    DuplicateKey,
    /// Bytes follow the one top-level value.
    TrailingBytes,
    /// Composites nest deeper than the decoder's depth limit.
    TooDeep,
}

impl DecodeErrorKind {
    /// A stable snake_case name, used as `reason` in error details.
    pub const fn reason(self) -> &'static str {
        match self {
            DecodeErrorKind::Truncated => "truncated",
            DecodeErrorKind::NonMinimalLeb128 => "non_minimal_leb128",
            DecodeErrorKind::Leb128Overflow => "leb128_overflow",
            DecodeErrorKind::UnknownTag(_) => "unknown_tag",
            DecodeErrorKind::InvalidUtf8 => "invalid_utf8",
            DecodeErrorKind::NonFiniteNumber => "non_finite_number",
            DecodeErrorKind::NegativeZero => "negative_zero",
            DecodeErrorKind::KeyNotString => "key_not_string",
            DecodeErrorKind::UnsortedKeys => "unsorted_keys",
            DecodeErrorKind::DuplicateKey => "duplicate_key",
            DecodeErrorKind::TrailingBytes => "trailing_bytes",
            DecodeErrorKind::TooDeep => "too_deep",
        }
    }
}

/// A decoding failure: what is wrong and the byte offset of the item where it was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("invalid RCVE at byte {offset}: {}", .kind.reason())]
pub struct DecodeError {
    pub kind: DecodeErrorKind,
    pub offset: usize,
}

impl From<DecodeError> for ValueError {
    fn from(error: DecodeError) -> ValueError {
        let mut converted = ValueError::new(codes::INVALID_RCVE, error.to_string())
            .with_detail("reason", error.kind.reason())
            .with_detail("offset", error.offset as i64);
        if let DecodeErrorKind::UnknownTag(tag) = error.kind {
            converted = converted.with_detail("tag", i64::from(tag));
        }
        converted
    }
}

/// Decodes exactly one value that spans all of `bytes`, nesting at most [`MAX_DEPTH`].
pub fn decode(bytes: &[u8]) -> Result<Value, DecodeError> {
    decode_with_depth(bytes, MAX_DEPTH)
}

/// Like [`decode`] with a lower nesting limit (`max_depth` above [`MAX_DEPTH`] is capped).
///
/// Work and memory are bounded by the input: a count or length is checked against the bytes
/// that remain before anything is allocated for it.
pub fn decode_with_depth(bytes: &[u8], max_depth: usize) -> Result<Value, DecodeError> {
    let mut reader = Reader { bytes, pos: 0, max_depth: max_depth.min(MAX_DEPTH) };
    let value = reader.value(0)?;
    if reader.pos != bytes.len() {
        return Err(DecodeError { kind: DecodeErrorKind::TrailingBytes, offset: reader.pos });
    }
    Ok(value)
}

/// At most this many elements are reserved from a declared count before they are decoded. A count
/// is only a claim: nested composites could each claim the whole remaining input, so beyond this
/// the vectors grow with the elements actually present.
const PREALLOCATED_ITEMS: usize = 64;

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    max_depth: usize,
}

impl<'a> Reader<'a> {
    fn fail<T>(&self, kind: DecodeErrorKind, offset: usize) -> Result<T, DecodeError> {
        Err(DecodeError { kind, offset })
    }

    fn byte(&mut self) -> Result<u8, DecodeError> {
        let byte = *self
            .bytes
            .get(self.pos)
            .ok_or(DecodeError { kind: DecodeErrorKind::Truncated, offset: self.pos })?;
        self.pos += 1;
        Ok(byte)
    }

    fn take(&mut self, len: usize) -> Result<&'a [u8], DecodeError> {
        let start = self.pos;
        let end = start.checked_add(len).filter(|&end| end <= self.bytes.len());
        let Some(end) = end else { return self.fail(DecodeErrorKind::Truncated, start) };
        self.pos = end;
        Ok(&self.bytes[start..end])
    }

    fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// A minimal unsigned LEB128 number.
    fn leb128(&mut self) -> Result<u64, DecodeError> {
        let start = self.pos;
        let mut value: u64 = 0;
        for shift in (0..64).step_by(7) {
            let byte = self.byte()?;
            let group = u64::from(byte & 0x7f);
            if shift == 63 && group > 1 {
                return self.fail(DecodeErrorKind::Leb128Overflow, start);
            }
            value |= group << shift;
            if byte & 0x80 == 0 {
                if byte == 0 && shift > 0 {
                    return self.fail(DecodeErrorKind::NonMinimalLeb128, start);
                }
                return Ok(value);
            }
        }
        self.fail(DecodeErrorKind::Leb128Overflow, start)
    }

    /// A length or count that must not exceed the bytes left, since every counted item takes at
    /// least one byte.
    fn length(&mut self) -> Result<usize, DecodeError> {
        let start = self.pos;
        let n = self.leb128()?;
        match usize::try_from(n) {
            Ok(n) if n <= self.remaining() => Ok(n),
            _ => self.fail(DecodeErrorKind::Truncated, start),
        }
    }

    fn string_body(&mut self) -> Result<Arc<str>, DecodeError> {
        let len = self.length()?;
        let start = self.pos;
        let bytes = self.take(len)?;
        match std::str::from_utf8(bytes) {
            Ok(text) => Ok(Arc::from(text)),
            Err(_) => self.fail(DecodeErrorKind::InvalidUtf8, start),
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, DecodeError> {
        let start = self.pos;
        Ok(match self.byte()? {
            TAG_NULL => Value::Null,
            TAG_FALSE => Value::Bool(false),
            TAG_TRUE => Value::Bool(true),
            TAG_INTEGER => {
                let zigzag = self.leb128()?;
                Value::Int(((zigzag >> 1) as i64) ^ -((zigzag & 1) as i64))
            }
            TAG_NUMBER => {
                let body: [u8; 8] = self
                    .take(8)?
                    .try_into()
                    .map_err(|_| DecodeError { kind: DecodeErrorKind::Truncated, offset: start })?;
                let bits = u64::from_be_bytes(body);
                if bits == (-0.0f64).to_bits() {
                    return self.fail(DecodeErrorKind::NegativeZero, start);
                }
                match Number::new(f64::from_bits(bits)) {
                    Some(n) => Value::Number(n),
                    None => return self.fail(DecodeErrorKind::NonFiniteNumber, start),
                }
            }
            TAG_STRING => Value::String(self.string_body()?),
            TAG_BYTES => {
                let len = self.length()?;
                Value::Bytes(Arc::from(self.take(len)?))
            }
            TAG_LIST => {
                let count = self.enter(depth, start)?;
                let mut items = Vec::with_capacity(count.min(PREALLOCATED_ITEMS));
                for _ in 0..count {
                    items.push(self.value(depth + 1)?);
                }
                Value::List(self.built(List::new(items), start)?)
            }
            TAG_OBJECT => {
                let count = self.enter(depth, start)?;
                let mut entries: Vec<(Arc<str>, Value)> = Vec::with_capacity(count.min(PREALLOCATED_ITEMS));
                for _ in 0..count {
                    let key_start = self.pos;
                    if self.byte()? != TAG_STRING {
                        return self.fail(DecodeErrorKind::KeyNotString, key_start);
                    }
                    let key = self.string_body()?;
                    if let Some((previous, _)) = entries.last() {
                        match previous.as_bytes().cmp(key.as_bytes()) {
                            std::cmp::Ordering::Less => {}
                            std::cmp::Ordering::Equal => {
                                return self.fail(DecodeErrorKind::DuplicateKey, key_start);
                            }
                            std::cmp::Ordering::Greater => {
                                return self.fail(DecodeErrorKind::UnsortedKeys, key_start);
                            }
                        }
                    }
                    let item = self.value(depth + 1)?;
                    entries.push((key, item));
                }
                Value::Object(self.built(Object::from_sorted_unique(entries), start)?)
            }
            tag => return self.fail(DecodeErrorKind::UnknownTag(tag), start),
        })
    }

    /// Checks the depth of a composite starting at `start` and reads its element count.
    fn enter(&mut self, depth: usize, start: usize) -> Result<usize, DecodeError> {
        if depth + 1 > self.max_depth {
            return self.fail(DecodeErrorKind::TooDeep, start);
        }
        self.length()
    }

    /// A composite's constructor can only fail on depth, which `enter` has already checked.
    fn built<T>(&self, composite: Result<T, ValueError>, start: usize) -> Result<T, DecodeError> {
        composite.map_err(|_| DecodeError { kind: DecodeErrorKind::TooDeep, offset: start })
    }
}

#[cfg(test)]
mod tests {
    use super::super::encode;
    use super::*;

    fn fails(hex_text: &str) -> DecodeError {
        let bytes = hex::decode(hex_text).expect("test hex");
        decode(&bytes).expect_err("must be rejected")
    }

    fn kind(hex_text: &str) -> DecodeErrorKind {
        fails(hex_text).kind
    }

    #[test]
    fn round_trips_a_mixed_value() {
        let object = Object::from_pairs(vec![
            ("b".into(), Value::bytes(vec![0, 255])),
            (
                "a".into(),
                Value::from(List::new(vec![Value::Null, true.into(), (-7).into()]).expect("shallow")),
            ),
            ("ü".into(), Value::number(0.1).expect("finite")),
        ])
        .expect("shallow");
        let value = Value::Object(object);
        assert_eq!(decode(&encode(&value)), Ok(value));
    }

    #[test]
    fn every_non_canonical_form_has_its_own_error() {
        assert_eq!(kind(""), DecodeErrorKind::Truncated);
        assert_eq!(kind("10"), DecodeErrorKind::Truncated);
        assert_eq!(kind("1080"), DecodeErrorKind::Truncated);
        assert_eq!(kind("11000000"), DecodeErrorKind::Truncated);
        assert_eq!(kind("2005616263"), DecodeErrorKind::Truncated);
        assert_eq!(kind("30ffffffff0f"), DecodeErrorKind::Truncated);
        assert_eq!(kind("108000"), DecodeErrorKind::NonMinimalLeb128);
        assert_eq!(kind("20800000"), DecodeErrorKind::NonMinimalLeb128);
        assert_eq!(kind("10ffffffffffffffffff02"), DecodeErrorKind::Leb128Overflow);
        assert_eq!(kind("10ffffffffffffffffff8100"), DecodeErrorKind::Leb128Overflow);
        assert_eq!(kind("12"), DecodeErrorKind::UnknownTag(0x12));
        assert_eq!(kind("2002c328"), DecodeErrorKind::InvalidUtf8);
        assert_eq!(kind("2003eda080"), DecodeErrorKind::InvalidUtf8);
        assert_eq!(kind("117ff0000000000000"), DecodeErrorKind::NonFiniteNumber);
        assert_eq!(kind("117ff8000000000000"), DecodeErrorKind::NonFiniteNumber);
        assert_eq!(kind("118000000000000000"), DecodeErrorKind::NegativeZero);
        assert_eq!(kind("3101210161"), DecodeErrorKind::KeyNotString);
        assert_eq!(kind("31022001620020016100"), DecodeErrorKind::UnsortedKeys);
        assert_eq!(kind("31022001610020016100"), DecodeErrorKind::DuplicateKey);
        assert_eq!(kind("000000"), DecodeErrorKind::TrailingBytes);
    }

    #[test]
    fn offsets_point_at_the_offending_item() {
        assert_eq!(fails("30020012"), DecodeError { kind: DecodeErrorKind::UnknownTag(0x12), offset: 3 });
        assert_eq!(fails("0000"), DecodeError { kind: DecodeErrorKind::TrailingBytes, offset: 1 });
    }

    #[test]
    fn depth_is_limited() {
        let nested = |depth: usize| {
            let mut bytes = "3001".repeat(depth);
            bytes.push_str("00");
            hex::decode(bytes).expect("test hex")
        };
        assert!(decode(&nested(MAX_DEPTH)).is_ok());
        assert_eq!(decode(&nested(MAX_DEPTH + 1)).map_err(|e| e.kind), Err(DecodeErrorKind::TooDeep));
        assert_eq!(decode_with_depth(&nested(3), 2).map_err(|e| e.kind), Err(DecodeErrorKind::TooDeep));
        assert!(decode_with_depth(&nested(2), 2).is_ok());
    }

    #[test]
    fn converts_to_a_persistence_error() {
        let error: ValueError = fails("12").into();
        assert_eq!(error.code(), codes::INVALID_RCVE);
        assert_eq!(error.details().get("reason"), Some(&Value::from("unknown_tag")));
        assert_eq!(error.details().get("tag"), Some(&Value::Int(0x12)));
    }
}
