//! Codes for tool execution and recovery (RL6xxx).
//! Add a code here together with its catalogue entry in `docs/diagnostics/`.

declare_codes! {
    range TOOL;
    /// A tool call stopped because its cancellation token fired.
    TOOL_CALL_CANCELLED = 6201,
}
