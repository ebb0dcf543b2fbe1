//! The `json` namespace: strict JSON text to a value with the value module's reader, and a value
//! to canonical compact presentation JSON (spec §3.3).

use crate::diag::codes;
use crate::value::{Value, ValueError, parse_json, to_presentation_json};

use super::args::Args;

/// `json.parse(text)`: RFC 8259 strictly (no duplicate keys, integers within i64, finite
/// numbers, no trailing text); failures are `RL5402` with the reason and position.
pub(super) fn parse(args: Args<'_>) -> Result<Value, ValueError> {
    parse_json(args.text(0)?).map_err(|error| {
        ValueError::new(codes::INVALID_JSON_TEXT, format!("`json.parse` was given {error}"))
            .with_detail("reason", error.kind.reason())
            .with_detail("line", error.line as i64)
            .with_detail("column", error.column as i64)
    })
}

/// `json.stringify(value)`: a value holding Bytes is `RL5207`.
pub(super) fn stringify(args: Args<'_>) -> Result<Value, ValueError> {
    args.string_result(to_presentation_json(args.value(0)?)?)
}
