//! The `number` namespace: parsing numeric text (the explicit conversion spec §3.3 asks for),
//! rounding to Integer with checked range, and fixed-point formatting.

use crate::diag::codes;
use crate::value::{Number, Value, ValueError};

use super::args::Args;

/// The most decimals `number.format` writes.
pub const MAX_DECIMALS: i64 = 20;

fn invalid_text(function: &str, text: &str, why: &str) -> ValueError {
    ValueError::new(codes::INVALID_NUMBER_TEXT, format!("`{function}` cannot read {text:?}: {why}"))
        .with_detail("text", text)
}

/// Whether `text` is a JSON number: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
fn is_json_number(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut at = usize::from(bytes.first() == Some(&b'-'));
    let digits = |at: &mut usize| {
        let start = *at;
        while bytes.get(*at).is_some_and(u8::is_ascii_digit) {
            *at += 1;
        }
        *at - start
    };
    let whole = digits(&mut at);
    if whole == 0 || (whole > 1 && bytes[at - whole] == b'0') {
        return false;
    }
    if bytes.get(at) == Some(&b'.') {
        at += 1;
        if digits(&mut at) == 0 {
            return false;
        }
    }
    if matches!(bytes.get(at), Some(b'e' | b'E')) {
        at += 1;
        if matches!(bytes.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        if digits(&mut at) == 0 {
            return false;
        }
    }
    at == bytes.len()
}

/// `number.parse(text)`: JSON number syntax, correctly rounded to binary64.
pub(super) fn parse(args: Args<'_>) -> Result<Value, ValueError> {
    let text = args.text(0)?;
    if !is_json_number(text) {
        return Err(invalid_text("number.parse", text, "it is not JSON number syntax"));
    }
    text.parse::<f64>()
        .ok()
        .and_then(Number::new)
        .map(Value::Number)
        .ok_or_else(|| invalid_text("number.parse", text, "it is too large for a Number"))
}

/// `number.parse_integer(text)`: an optional `-` and ASCII digits, within i64.
pub(super) fn parse_integer(args: Args<'_>) -> Result<Value, ValueError> {
    let text = args.text(0)?;
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(invalid_text(
            "number.parse_integer",
            text,
            "it is not an optional `-` followed by digits",
        ));
    }
    text.parse::<i64>()
        .map(Value::Int)
        .map_err(|_| invalid_text("number.parse_integer", text, "it is outside the Integer range"))
}

/// An integral binary64 as an Integer, or `RL5101` outside i64.
fn to_integer(function: &str, value: f64, rounded: f64) -> Result<Value, ValueError> {
    // 2^63 is exact in binary64; every integral value below it in magnitude fits i64.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if (-LIMIT..LIMIT).contains(&rounded) {
        return Ok(Value::Int(rounded as i64));
    }
    Err(ValueError::new(
        codes::NUMERIC_OVERFLOW,
        format!("`{function}` of {value} is outside the Integer range"),
    ))
}

pub(super) fn floor(args: Args<'_>) -> Result<Value, ValueError> {
    let value = args.number(0)?;
    to_integer("number.floor", value, value.floor())
}

pub(super) fn ceil(args: Args<'_>) -> Result<Value, ValueError> {
    let value = args.number(0)?;
    to_integer("number.ceil", value, value.ceil())
}

/// Halves round away from zero (`2.5` → `3`, `-2.5` → `-3`).
pub(super) fn round(args: Args<'_>) -> Result<Value, ValueError> {
    let value = args.number(0)?;
    to_integer("number.round", value, value.round())
}

/// `number.format(value, decimals)`: the exact binary64 value correctly rounded (ties to even)
/// to `decimals` places; a result that is all zeros has no `-`.
pub(super) fn format(args: Args<'_>) -> Result<Value, ValueError> {
    let (value, decimals) = (args.number(0)?, args.integer(1)?);
    if !(0..=MAX_DECIMALS).contains(&decimals) {
        return Err(args.invalid(format!("decimals must be 0 to {MAX_DECIMALS}, not {decimals}")));
    }
    let text = format!("{value:.*}", decimals as usize);
    let zero = text.bytes().all(|b| matches!(b, b'-' | b'0' | b'.'));
    Ok(Value::from(if zero { text.trim_start_matches('-') } else { &text }))
}

#[cfg(test)]
mod tests {
    use super::is_json_number;

    #[test]
    fn json_number_syntax() {
        for good in ["0", "-0", "12", "1.5", "-0.25", "1e5", "1E+5", "2.5e-3"] {
            assert!(is_json_number(good), "{good}");
        }
        for bad in ["", "-", "01", "+1", "1.", ".5", "1e", "1e+", " 1", "1 ", "inf", "NaN", "0x10", "1_000"] {
            assert!(!is_json_number(bad), "{bad}");
        }
    }
}
