//! Helpers shared by the value test files: which values cannot be expected to read back from
//! their presentation JSON.

use runlet::value::Value;

/// Whether `value` holds an integral Number of magnitude 2^53 or more below 1e21. Such a Number
/// presents as plain digits (ECMAScript's shortest form, e.g. `90071992549999790`), which a JSON
/// reader takes as an Integer — out of range, or not exactly the Number's value.
pub fn has_large_integral_number(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.get().abs() >= 9_007_199_254_740_992.0 && n.get().abs() < 1e21,
        Value::List(list) => list.iter().any(has_large_integral_number),
        Value::Object(object) => object.entries().iter().any(|(_, v)| has_large_integral_number(v)),
        _ => false,
    }
}
