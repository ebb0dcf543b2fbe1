//! Codes for tool execution and recovery (RL6xxx).
//! Add a code here together with its catalogue entry in `docs/diagnostics/`.

declare_codes! {
    range TOOL;
    /// A tool call did not answer within the host's tool deadline.
    TOOL_TIMEOUT = 6102,
    /// The outcome of a dispatched operation is unknown and the runtime may not redispatch it.
    UNCERTAIN_OUTCOME = 6109,
    /// A tool call stopped because its cancellation token fired.
    TOOL_CALL_CANCELLED = 6201,
}
