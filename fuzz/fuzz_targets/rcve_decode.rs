//! Fuzzes the RCVE v1 decoder: it must never panic, and whatever it accepts must be canonical,
//! i.e. re-encode to exactly the input bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use runlet::value;

fuzz_target!(|bytes: &[u8]| {
    if let Ok(decoded) = value::rcve::decode(bytes) {
        assert_eq!(value::rcve::encode(&decoded), bytes, "accepted a non-canonical encoding");
        let _ = value::to_presentation_json(&decoded);
    }
});
