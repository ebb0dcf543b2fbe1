//! Codes for effects, reachability, safety and policy (RL3xxx).
//! Add a code here together with its catalogue entry in `docs/diagnostics/`.

declare_codes! {
    range POLICY;
}
