//! Codes for host integration (RL8xxx).
//! Add a code here together with its catalogue entry in `docs/diagnostics/`.

declare_codes! {
    range HOST;
}
