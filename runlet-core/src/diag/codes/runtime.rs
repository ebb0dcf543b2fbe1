//! Codes for runtime compute and data failures (RL5xxx).
//! Add a code here together with its catalogue entry in `docs/diagnostics/`.

declare_codes! {
    range RUNTIME;
}
