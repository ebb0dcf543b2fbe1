//! Presentation JSON (spec §3.3, RFC 8785): canonical numbers and string escapes, keys sorted by
//! UTF-8 bytes, no whitespace. Bytes anywhere inside fail with `RL5207 NOT_JSON_REPRESENTABLE`.

use super::error::ValueError;
use super::format::push_scalar_text;
use super::model::Value;
use super::sensitivity::{Segment, path_text};
use crate::diag::codes;

/// The canonical presentation JSON text of `value`.
///
/// Presentation JSON is for people and hosts; RCVE is the lossless form. Reading the text back
/// gives an equal value (by [`super::equals`]) except for an integral Number of magnitude 2^53 or
/// more below 1e21: ECMAScript prints its shortest digits without `.` or exponent (for example
/// `90071992549999790` for the Number 90071992549999792), which a reader takes as an Integer
/// that may be out of range or not exactly the Number's value.
pub fn to_presentation_json(value: &Value) -> Result<String, ValueError> {
    let mut out = String::new();
    write_presentation_json(value, &mut out, usize::MAX)?;
    Ok(out)
}

/// Appends the presentation JSON of `value` to `out`, failing with
/// `RL4302 CONVERSION_BYTES_EXCEEDED` once the text written by this call passes `max_bytes`.
pub fn write_presentation_json(value: &Value, out: &mut String, max_bytes: usize) -> Result<(), ValueError> {
    let start = out.len();
    Writer { out, start, max_bytes }.value(value).map_err(|failure| failure.into_error(max_bytes))
}

/// Why writing stopped; the path is collected while unwinding, innermost segment first.
enum Failure {
    Bytes(Vec<Segment>),
    TooLarge(usize),
}

impl Failure {
    /// Adds the segment of the composite the failure came out of.
    fn within(self, segment: Segment) -> Failure {
        match self {
            Failure::Bytes(mut path) => {
                path.push(segment);
                Failure::Bytes(path)
            }
            too_large => too_large,
        }
    }

    fn into_error(self, max_bytes: usize) -> ValueError {
        match self {
            Failure::Bytes(mut path) => {
                path.reverse();
                let path = path_text(&path);
                ValueError::new(
                    codes::NOT_JSON_REPRESENTABLE,
                    format!("Bytes at `{path}` have no JSON representation; choose an explicit encoding"),
                )
                .with_detail("path", path)
            }
            Failure::TooLarge(current) => ValueError::new(
                codes::CONVERSION_BYTES_EXCEEDED,
                format!("the canonical text grew past the conversion limit of {max_bytes} bytes"),
            )
            .with_detail("limit", "conversion_bytes")
            .with_detail("current", current as i64)
            .with_detail("cap", i64::try_from(max_bytes).unwrap_or(i64::MAX)),
        }
    }
}

struct Writer<'a> {
    out: &'a mut String,
    start: usize,
    max_bytes: usize,
}

impl Writer<'_> {
    fn check_size(&self) -> Result<(), Failure> {
        let written = self.out.len() - self.start;
        if written > self.max_bytes { Err(Failure::TooLarge(written)) } else { Ok(()) }
    }

    fn value(&mut self, value: &Value) -> Result<(), Failure> {
        match value {
            Value::Null => self.out.push_str("null"),
            Value::String(text) => push_json_string(self.out, text),
            Value::Bytes(_) => return Err(Failure::Bytes(Vec::new())),
            Value::List(list) => {
                self.out.push('[');
                for (i, item) in list.iter().enumerate() {
                    if i > 0 {
                        self.out.push(',');
                    }
                    self.value(item).map_err(|f| f.within(Segment::Index(i)))?;
                }
                self.out.push(']');
            }
            Value::Object(object) => {
                self.out.push('{');
                for (i, (key, item)) in object.entries().iter().enumerate() {
                    if i > 0 {
                        self.out.push(',');
                    }
                    push_json_string(self.out, key);
                    self.out.push(':');
                    self.value(item).map_err(|f| f.within(Segment::Key(key.clone())))?;
                }
                self.out.push('}');
            }
            scalar => {
                push_scalar_text(self.out, scalar);
            }
        }
        self.check_size()
    }
}

/// The bytes a JSON string must escape: `"`, `\\` and U+0000–U+001F.
static NEEDS_ESCAPE: [bool; 256] = {
    let mut table = [false; 256];
    let mut control = 0;
    while control < 0x20 {
        table[control] = true;
        control += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// Appends `text` as a JSON string with the RFC 8785 escapes: `\"`, `\\`, `\b`, `\t`, `\n`,
/// `\f`, `\r`, lowercase `\u00xx` for the other controls, everything else verbatim.
pub fn push_json_string(out: &mut String, text: &str) {
    out.push('"');
    let mut run_start = 0;
    for (i, &byte) in text.as_bytes().iter().enumerate() {
        if !NEEDS_ESCAPE[usize::from(byte)] {
            continue;
        }
        let escape: &str = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            0x09 => "\\t",
            0x0a => "\\n",
            0x0c => "\\f",
            0x0d => "\\r",
            _ => "",
        };
        // Every byte matched above is ASCII, so `i` is a character boundary.
        out.push_str(&text[run_start..i]);
        if escape.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push_str("\\u00");
            out.push(HEX[usize::from(byte >> 4)] as char);
            out.push(HEX[usize::from(byte & 0xf)] as char);
        } else {
            out.push_str(escape);
        }
        run_start = i + 1;
    }
    out.push_str(&text[run_start..]);
    out.push('"');
}

/// `value` as a `serde_json::Value`, for embedding in host-facing JSON documents. Numbers become
/// JSON numbers of the same binary64 value; use [`to_presentation_json`] where the exact
/// canonical text matters. Bytes fail with `RL5207`.
pub fn to_serde_json(value: &Value) -> Result<serde_json::Value, ValueError> {
    use serde_json::Value as Json;
    Ok(match value {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => Json::from(*i),
        // Every Number is finite, and `from_f64` only refuses non-finite values.
        Value::Number(n) => serde_json::Number::from_f64(n.get()).map_or(Json::Null, Json::Number),
        Value::String(text) => Json::String(text.to_string()),
        Value::Bytes(_) => return Err(Failure::Bytes(Vec::new()).into_error(usize::MAX)),
        Value::List(list) => Json::Array(list.iter().map(to_serde_json).collect::<Result<_, _>>()?),
        Value::Object(object) => Json::Object(
            object
                .entries()
                .iter()
                .map(|(k, v)| Ok((k.to_string(), to_serde_json(v)?)))
                .collect::<Result<_, ValueError>>()?,
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::model::{List, Object};

    fn json(value: Value) -> String {
        to_presentation_json(&value).expect("representable")
    }

    #[test]
    fn strings_use_the_rfc_8785_escapes() {
        let all_controls: String = (0u8..0x20).map(char::from).collect();
        assert_eq!(
            json(Value::from(all_controls)),
            "\"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000b\\f\\r\\u000e\\u000f\
             \\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018\\u0019\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f\""
        );
        assert_eq!(json(Value::from("\"\\/\u{7f}é€😀")), "\"\\\"\\\\/\u{7f}é€😀\"");
    }

    #[test]
    fn composites_are_compact_with_sorted_keys() {
        let inner =
            List::new(vec![Value::Null, Value::number(1e21).expect("finite"), (-3).into()]).expect("shallow");
        let object = Object::from_pairs(vec![
            ("b".into(), inner.into()),
            ("a".into(), Value::number(0.5).expect("finite")),
            ("\u{e9}".into(), true.into()),
            ("A".into(), Value::from(Object::empty())),
        ])
        .expect("shallow");
        assert_eq!(json(object.into()), r#"{"A":{},"a":0.5,"b":[null,1e+21,-3],"é":true}"#);
    }

    #[test]
    fn bytes_fail_with_their_path() {
        let inner = Object::from_pairs(vec![("k\"".into(), Value::bytes(vec![1]))]).expect("shallow");
        let value: Value = List::new(vec![Value::Null, inner.into()]).expect("shallow").into();
        let error = to_presentation_json(&value).expect_err("bytes inside");
        assert_eq!(error.code(), codes::NOT_JSON_REPRESENTABLE);
        assert_eq!(error.details().get("path"), Some(&Value::from(r#"$[1]["k\""]"#)));
        assert_eq!(to_serde_json(&value).map_err(|e| e.code()), Err(codes::NOT_JSON_REPRESENTABLE));
    }

    #[test]
    fn the_byte_limit_is_inclusive() {
        let value: Value = List::new(vec![Value::from("abc"); 3]).expect("shallow").into();
        let text = json(value.clone());
        let mut out = String::from("prefix");
        assert!(write_presentation_json(&value, &mut out, text.len()).is_ok());
        assert_eq!(out, format!("prefix{text}"));
        let error =
            write_presentation_json(&value, &mut String::new(), text.len() - 1).expect_err("one byte over");
        assert_eq!(error.code(), codes::CONVERSION_BYTES_EXCEEDED);
        assert_eq!(error.details().get("cap"), Some(&Value::Int(text.len() as i64 - 1)));
    }

    #[test]
    fn serde_json_output_keeps_values() {
        let value: Value = List::new(vec![1.into(), Value::number(0.1).expect("finite"), "x".into()])
            .expect("shallow")
            .into();
        assert_eq!(to_serde_json(&value).expect("representable"), serde_json::json!([1, 0.1, "x"]));
    }
}
