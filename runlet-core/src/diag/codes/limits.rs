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
}
