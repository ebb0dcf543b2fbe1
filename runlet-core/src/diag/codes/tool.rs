//! Codes for tool execution and recovery (RL6xxx).
//! Add a code here together with its catalogue entry in `docs/diagnostics/`.

declare_codes! {
    range TOOL;
    /// A tool call did not answer within the host's tool deadline.
    TOOL_TIMEOUT = 6102,
    /// A call's arguments do not match the tool's input schema, so it was not sent. Tool errors
    /// carry the name, `TOOL_INPUT_SCHEMA_MISMATCH`, as their code.
    TOOL_INPUT_SCHEMA_MISMATCH = 6103,
    /// A tool returned a value its output schema does not accept. Tool errors carry the name,
    /// `TOOL_OUTPUT_SCHEMA_MISMATCH`, as their code.
    TOOL_OUTPUT_SCHEMA_MISMATCH = 6104,
    /// A host's tool executor panicked while answering a call; the call fails, uncertain unless
    /// its tool is `pure`.
    TOOL_EXECUTOR_PANICKED = 6105,
    /// The outcome of a dispatched operation is unknown and the runtime may not redispatch it.
    UNCERTAIN_OUTCOME = 6109,
    /// The MCP server of a tool is gone (its process exited, its connection closed) while the
    /// call was in flight or before it could be sent.
    MCP_SERVER_UNAVAILABLE = 6111,
    /// An MCP server answered a `tools/call` with a JSON-RPC error instead of a result.
    MCP_PROTOCOL_ERROR = 6112,
    /// An MCP tool reported a failure (`isError: true`); the message is the server's text.
    MCP_TOOL_ERROR = 6113,
    /// An MCP tool answered with neither `structuredContent` nor text content.
    MCP_NO_TEXT_CONTENT = 6114,
    /// A tool call stopped because its cancellation token fired.
    TOOL_CALL_CANCELLED = 6201,
}
