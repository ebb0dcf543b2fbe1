//! Codes for effects, reachability, safety and policy (RL3xxx).
//! Add a code here together with its catalogue entry in `docs/diagnostics/`.

declare_codes! {
    range POLICY;
    /// A call of an `unsafe` tool outside every `boundary` body, where the host requires one.
    UNSAFE_CALL_OUTSIDE_BOUNDARY = 3001,
}
