//! Fuzzes the strict host JSON reader: it must never panic, and a value it reads must print as
//! presentation JSON that reads back to an equal value (except integral Numbers of magnitude
//! 2^53 or more, whose shortest digits read back as a different Integer).
#![no_main]

use libfuzzer_sys::fuzz_target;
use runlet::value::{self, Value};

fn has_large_integral_number(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.get().abs() >= 9_007_199_254_740_992.0 && n.get().abs() < 1e21,
        Value::List(list) => list.iter().any(has_large_integral_number),
        Value::Object(object) => object.entries().iter().any(|(_, v)| has_large_integral_number(v)),
        _ => false,
    }
}

fuzz_target!(|bytes: &[u8]| {
    if let Ok(parsed) = value::parse_json_bytes(bytes) {
        let json = value::to_presentation_json(&parsed).expect("JSON input has no Bytes");
        if !has_large_integral_number(&parsed) {
            let again = value::parse_json(&json).expect("presentation JSON reads back");
            assert!(value::equals(&again, &parsed), "{json} does not read back");
        }
    }
});
