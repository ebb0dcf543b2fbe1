//! Codes for planning and resource limits (RL4xxx).
//! Add a code here together with its catalogue entry in `docs/diagnostics/`.

declare_codes! {
    range LIMITS;
    /// The source is larger than the configured maximum.
    SOURCE_TOO_LARGE = 4001,
    /// Brackets, blocks or operators nest deeper than the configured maximum.
    NESTING_TOO_DEEP = 4002,
    /// More diagnostics than the configured maximum; the rest are not reported.
    TOO_MANY_DIAGNOSTICS = 4003,
}
