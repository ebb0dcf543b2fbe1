//! Codes for syntax and structure (RL1xxx).
//! Add a code here together with its catalogue entry in `docs/diagnostics/`.

declare_codes! {
    range SYNTAX;
}
