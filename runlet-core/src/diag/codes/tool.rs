//! Codes for tool execution and recovery (RL6xxx).
//! Add a code here together with its catalogue entry in `docs/diagnostics/`.

declare_codes! {
    range TOOL;
}
