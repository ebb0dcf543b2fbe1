//! Codes for planning and resource limits (RL4xxx).
//! Add a code here together with its catalogue entry in `docs/diagnostics/`.

declare_codes! {
    range LIMITS;
}
