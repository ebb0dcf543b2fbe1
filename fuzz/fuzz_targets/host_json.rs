//! Fuzzes the strict host JSON reader: it must never panic, and a value it reads must print as
//! presentation JSON that reads back to an equal value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use runlet::value;

fuzz_target!(|bytes: &[u8]| {
    if let Ok(parsed) = value::parse_json_bytes(bytes) {
        let json = value::to_presentation_json(&parsed).expect("JSON input has no Bytes");
        if let Ok(again) = value::parse_json(&json) {
            assert!(value::equals(&again, &parsed), "{json} does not read back");
        }
    }
});
