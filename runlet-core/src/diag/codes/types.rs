//! Codes for names, schemas, types and conversions (RL2xxx).
//! Add a code here together with its catalogue entry in `docs/diagnostics/`.

declare_codes! {
    range TYPES;
    /// The same static key twice in one object literal.
    DUPLICATE_OBJECT_KEY = 2203,
}
