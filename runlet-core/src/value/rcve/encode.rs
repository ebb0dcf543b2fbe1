//! The RCVE v1 encoder: writes a value's canonical bytes into any byte sink (a `Vec` or a
//! digest), so digests can be computed without materializing the encoding.

use super::{
    TAG_BYTES, TAG_FALSE, TAG_INTEGER, TAG_LIST, TAG_NULL, TAG_NUMBER, TAG_OBJECT, TAG_STRING, TAG_TRUE,
};
use crate::value::model::Value;

/// Where encoded bytes go.
pub(in crate::value) trait Sink {
    fn put(&mut self, bytes: &[u8]);
}

impl Sink for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

/// The RCVE v1 bytes of `value`.
pub fn encode(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    encode_into(value, &mut out);
    out
}

/// Appends the RCVE v1 bytes of `value` to `out`.
pub fn encode_into(value: &Value, out: &mut Vec<u8>) {
    write_value(value, out);
}

/// Writes the RCVE v1 bytes of `value` to `sink`. Recursion is bounded by
/// [`crate::value::MAX_DEPTH`], which every value respects by construction.
pub(in crate::value) fn write_value(value: &Value, sink: &mut impl Sink) {
    match value {
        Value::Null => sink.put(&[TAG_NULL]),
        Value::Bool(false) => sink.put(&[TAG_FALSE]),
        Value::Bool(true) => sink.put(&[TAG_TRUE]),
        Value::Int(i) => {
            let zigzag = ((*i << 1) ^ (*i >> 63)) as u64;
            write_tagged_leb128(sink, TAG_INTEGER, zigzag);
        }
        Value::Number(n) => {
            let mut bytes = [0u8; 9];
            bytes[0] = TAG_NUMBER;
            bytes[1..].copy_from_slice(&n.get().to_bits().to_be_bytes());
            sink.put(&bytes);
        }
        Value::String(text) => write_string(sink, text),
        Value::Bytes(bytes) => {
            write_tagged_leb128(sink, TAG_BYTES, bytes.len() as u64);
            sink.put(bytes);
        }
        Value::List(list) => {
            write_tagged_leb128(sink, TAG_LIST, list.len() as u64);
            for item in list {
                write_value(item, sink);
            }
        }
        Value::Object(object) => {
            write_tagged_leb128(sink, TAG_OBJECT, object.len() as u64);
            for (key, item) in object.entries() {
                write_string(sink, key);
                write_value(item, sink);
            }
        }
    }
}

/// A scalar borrowed rather than held in a [`Value`], for encoding short lists of them (the
/// components of an identity) without building values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarRef<'a> {
    Str(&'a str),
    Int(i64),
    Bytes(&'a [u8]),
}

/// Writes the RCVE v1 bytes of the List of `items`: exactly the bytes of the same List of
/// values.
pub(in crate::value) fn write_scalar_list(items: &[ScalarRef<'_>], sink: &mut impl Sink) {
    write_list_header(items.len(), sink);
    write_scalars(items, sink);
}

/// Writes the header of a List of `len` items, which must follow it.
pub(in crate::value) fn write_list_header(len: usize, sink: &mut impl Sink) {
    write_tagged_leb128(sink, TAG_LIST, len as u64);
}

/// Writes `items` as items of a List whose header came before them.
pub(in crate::value) fn write_scalars(items: &[ScalarRef<'_>], sink: &mut impl Sink) {
    for item in items {
        match item {
            ScalarRef::Str(text) => write_string(sink, text),
            ScalarRef::Int(i) => write_tagged_leb128(sink, TAG_INTEGER, ((*i << 1) ^ (*i >> 63)) as u64),
            ScalarRef::Bytes(bytes) => {
                write_tagged_leb128(sink, TAG_BYTES, bytes.len() as u64);
                sink.put(bytes);
            }
        }
    }
}

fn write_string(sink: &mut impl Sink, text: &str) {
    write_tagged_leb128(sink, TAG_STRING, text.len() as u64);
    sink.put(text.as_bytes());
}

/// Writes `tag` followed by the minimal unsigned LEB128 form of `n` in one `put`.
fn write_tagged_leb128(sink: &mut impl Sink, tag: u8, mut n: u64) {
    let mut bytes = [0u8; 11];
    bytes[0] = tag;
    let mut len = 1;
    loop {
        let group = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            bytes[len] = group;
            len += 1;
            break;
        }
        bytes[len] = group | 0x80;
        len += 1;
    }
    sink.put(&bytes[..len]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex_of(value: impl Into<Value>) -> String {
        hex::encode(encode(&value.into()))
    }

    #[test]
    fn scalars_encode_per_the_table() {
        assert_eq!(hex_of(Value::Null), "00");
        assert_eq!(hex_of(false), "01");
        assert_eq!(hex_of(true), "02");
        assert_eq!(hex_of(0), "1000");
        assert_eq!(hex_of(-1), "1001");
        assert_eq!(hex_of(1), "1002");
        assert_eq!(hex_of(63), "107e");
        assert_eq!(hex_of(-64), "107f");
        assert_eq!(hex_of(64), "108001");
        assert_eq!(hex_of(i64::MAX), "10feffffffffffffffff01");
        assert_eq!(hex_of(i64::MIN), "10ffffffffffffffffff01");
        assert_eq!(hex_of(Value::number(1.0).expect("finite")), "113ff0000000000000");
        assert_eq!(hex_of(Value::number(-0.0).expect("finite")), "110000000000000000");
        assert_eq!(hex_of(""), "2000");
        assert_eq!(hex_of("é"), "2002c3a9");
        assert_eq!(hex_of(Value::bytes(vec![0u8; 128])), format!("218001{}", "00".repeat(128)));
    }
}
