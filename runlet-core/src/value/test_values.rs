//! Builders shared by the value module's unit tests: short spellings for numbers, lists and
//! objects that panic on the (test-authored) invalid input they never receive.

use super::model::{List, Object, Value};

pub(crate) fn num(v: f64) -> Value {
    Value::number(v).expect("finite")
}

pub(crate) fn list(items: Vec<Value>) -> Value {
    List::new(items).expect("shallow").into()
}

pub(crate) fn object(pairs: Vec<(&str, Value)>) -> Value {
    Object::from_pairs(pairs.into_iter().map(|(k, v)| (k.into(), v)).collect()).expect("shallow").into()
}
