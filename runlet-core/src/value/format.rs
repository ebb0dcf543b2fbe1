//! Canonical text of scalars (spec §3.3): Integer as optional `-` and digits, Boolean as
//! `true`/`false`, Number by the ECMAScript algorithm. Used by JSON output, `+` and conversions.

use super::model::Value;

/// Appends the canonical text of an Integer, Number or Boolean to `out` and returns `true`;
/// returns `false` (appending nothing) for every other kind, which has no scalar text.
pub fn push_scalar_text(out: &mut String, value: &Value) -> bool {
    match value {
        Value::Int(i) => out.push_str(itoa::Buffer::new().format(*i)),
        Value::Number(n) => out.push_str(n.canonical_text(&mut ryu_js::Buffer::new())),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        _ => return false,
    }
    true
}

/// The canonical text of an Integer, Number or Boolean; `None` for other kinds.
pub fn scalar_text(value: &Value) -> Option<String> {
    let mut out = String::new();
    push_scalar_text(&mut out, value).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_have_canonical_text() {
        assert_eq!(scalar_text(&Value::Int(i64::MIN)).as_deref(), Some("-9223372036854775808"));
        assert_eq!(scalar_text(&Value::Int(0)).as_deref(), Some("0"));
        assert_eq!(scalar_text(&Value::number(-0.0).expect("finite")).as_deref(), Some("0"));
        assert_eq!(scalar_text(&Value::number(1e21).expect("finite")).as_deref(), Some("1e+21"));
        assert_eq!(scalar_text(&Value::Bool(false)).as_deref(), Some("false"));
        assert_eq!(scalar_text(&Value::Null), None);
        assert_eq!(scalar_text(&Value::from("x")), None);
    }
}
