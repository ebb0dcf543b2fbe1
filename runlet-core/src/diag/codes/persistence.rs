//! Codes for persistence, replay and compatibility (RL7xxx).
//! Add a code here together with its catalogue entry in `docs/diagnostics/`.

declare_codes! {
    range PERSISTENCE;
    /// Stored bytes are not a canonical RCVE v1 value.
    INVALID_RCVE = 7201,
}
