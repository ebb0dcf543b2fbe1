//! Codes for planning and resource limits (RL4xxx).
//! Add a code here together with its catalogue entry in `docs/diagnostics/`.

declare_codes! {
    range LIMITS;
    /// A value to convert nests deeper than the conversion depth limit.
    CONVERSION_DEPTH_EXCEEDED = 4301,
    /// Canonical text produced by a conversion is longer than the conversion byte limit.
    CONVERSION_BYTES_EXCEEDED = 4302,
    /// A value would nest deeper than the implementation ceiling for any value.
    VALUE_TOO_DEEP = 4303,
    /// The source is larger than the configured maximum.
    SOURCE_TOO_LARGE = 4001,
    /// Brackets, blocks or operators nest deeper than the configured maximum.
    NESTING_TOO_DEEP = 4002,
    /// More diagnostics than the configured maximum; the rest are not reported.
    TOO_MANY_DIAGNOSTICS = 4003,
    /// Analysis needed more work than the configured budget.
    ANALYSIS_BUDGET_EXCEEDED = 4004,
    /// A `limit N` or `retry N` above the host's configured maximum.
    COUNT_ABOVE_MAXIMUM = 4005,
    /// A run dispatched more tool calls than its `tool_calls` limit.
    TOOL_CALL_LIMIT_EXCEEDED = 4101,
    /// A run evaluated more nodes than its `node_evaluations` limit.
    NODE_EVALUATION_LIMIT_EXCEEDED = 4102,
    /// A run entered scopes nested deeper than its `depth` limit.
    DEPTH_LIMIT_EXCEEDED = 4103,
    /// A run took longer than its `wall_clock_ms` limit.
    WALL_CLOCK_LIMIT_EXCEEDED = 4104,
    /// A `for` or `fold` has more items than the run's `loop_iterations` limit.
    LOOP_ITERATION_LIMIT_EXCEEDED = 4105,
    /// A run materialized more nodes than its `graph_nodes` limit.
    GRAPH_NODE_LIMIT_EXCEEDED = 4106,
    /// The program's source is larger than the run's `source_bytes` limit.
    SOURCE_BYTES_LIMIT_EXCEEDED = 4107,
    /// A call's canonical argument list is larger than the run's `call_input_bytes` limit.
    CALL_INPUT_BYTES_LIMIT_EXCEEDED = 4108,
    /// A call's canonical output is larger than the run's `call_output_bytes` limit.
    CALL_OUTPUT_BYTES_LIMIT_EXCEEDED = 4109,
    /// A run's boundaries retried more often than its `retries` limit.
    RETRY_LIMIT_EXCEEDED = 4110,
    /// A run materialized more dependency edges than its `graph_edges` limit.
    GRAPH_EDGE_LIMIT_EXCEEDED = 4111,
    /// A run's journal records took more bytes than its `journal_bytes` limit.
    JOURNAL_BYTES_LIMIT_EXCEEDED = 4112,
    /// A value would weigh more than the `value_bytes` limit.
    VALUE_BYTES_LIMIT_EXCEEDED = 4113,
    /// A list would have more elements than the `list_length` limit.
    LIST_LENGTH_LIMIT_EXCEEDED = 4114,
    /// A string would have more bytes than the `string_bytes` limit.
    STRING_BYTES_LIMIT_EXCEEDED = 4115,
    /// An object or map would have more entries than the `object_entries` limit.
    OBJECT_ENTRIES_LIMIT_EXCEEDED = 4116,
}
