//! Codes for host integration (RL8xxx).
//! Add a code here together with its catalogue entry in `docs/diagnostics/`.

declare_codes! {
    range HOST;
    /// JSON supplied by the host is not valid portable JSON.
    INVALID_HOST_JSON = 8101,
    /// The host supplied an unusable digest key.
    INVALID_DIGEST_KEY = 8102,
}
