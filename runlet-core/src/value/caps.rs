//! Value-size caps (spec §10): the longest string, the longest list, the largest object and
//! the heaviest whole value any computation may build, so that no source, input or tool output
//! can make a run or the analyzer allocate without bound. Checking a value built from checked
//! parts looks at its top level only (a composite keeps its weight); a value from outside (a
//! host input, a tool output) is checked all the way down.

use super::error::ValueError;
use super::model::Value;
use crate::diag::{Code, codes};

/// One cap, by its host configuration key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cap {
    /// [`Value::weight`] of a whole value.
    ValueBytes,
    /// Elements of one list.
    ListLength,
    /// UTF-8 bytes of one string (and bytes of one Bytes value).
    StringBytes,
    /// Entries of one object or map.
    ObjectEntries,
}

impl Cap {
    /// The host configuration key, as limit errors name it.
    pub fn key(self) -> &'static str {
        match self {
            Cap::ValueBytes => "value_bytes",
            Cap::ListLength => "list_length",
            Cap::StringBytes => "string_bytes",
            Cap::ObjectEntries => "object_entries",
        }
    }

    pub fn code(self) -> Code {
        match self {
            Cap::ValueBytes => codes::VALUE_BYTES_LIMIT_EXCEEDED,
            Cap::ListLength => codes::LIST_LENGTH_LIMIT_EXCEEDED,
            Cap::StringBytes => codes::STRING_BYTES_LIMIT_EXCEEDED,
            Cap::ObjectEntries => codes::OBJECT_ENTRIES_LIMIT_EXCEEDED,
        }
    }

    fn what(self) -> &'static str {
        match self {
            Cap::ValueBytes => "bytes in one value",
            Cap::ListLength => "elements in one list",
            Cap::StringBytes => "bytes in one string",
            Cap::ObjectEntries => "entries in one object",
        }
    }
}

/// The caps, inclusive. The defaults are safe for any host: 64 MiB per value, 16 MiB per string,
/// a million elements per list and entries per object (the prelude's own result caps).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValueCaps {
    pub value_bytes: u64,
    pub list_length: u64,
    pub string_bytes: u64,
    pub object_entries: u64,
}

impl ValueCaps {
    pub const DEFAULT: ValueCaps = ValueCaps {
        value_bytes: 64 * 1024 * 1024,
        list_length: 1_000_000,
        string_bytes: 16 * 1024 * 1024,
        object_entries: 1_000_000,
    };
}

impl Default for ValueCaps {
    fn default() -> Self {
        ValueCaps::DEFAULT
    }
}

/// A value that crossed a cap: which, how far, and its cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Excess {
    pub cap: Cap,
    pub current: u64,
    pub limit: u64,
}

impl Excess {
    /// The error of building a value this large: the cap's code, with `details {limit,
    /// current, cap}` as every limit error has.
    pub fn to_error(self) -> ValueError {
        ValueError::new(
            self.cap.code(),
            format!(
                "the value would have {current} {what}; the limit is {limit} (host configuration key `{key}`)",
                current = self.current,
                what = self.cap.what(),
                limit = self.limit,
                key = self.cap.key(),
            ),
        )
        .with_detail("limit", self.cap.key())
        .with_detail("current", i64::try_from(self.current).unwrap_or(i64::MAX))
        .with_detail("cap", i64::try_from(self.limit).unwrap_or(i64::MAX))
    }
}

impl ValueCaps {
    /// The first cap `value`'s own top level crosses, if any: its weight, and its length when
    /// it is a string, bytes, a list or an object. Its parts are taken to be checked already.
    pub fn excess(&self, value: &Value) -> Option<Excess> {
        let over =
            |cap: Cap, current: u64, limit: u64| (current > limit).then_some(Excess { cap, current, limit });
        let length = match value {
            Value::String(text) => over(Cap::StringBytes, text.len() as u64, self.string_bytes),
            Value::Bytes(bytes) => over(Cap::StringBytes, bytes.len() as u64, self.string_bytes),
            Value::List(list) => over(Cap::ListLength, list.len() as u64, self.list_length),
            Value::Object(object) => over(Cap::ObjectEntries, object.len() as u64, self.object_entries),
            _ => None,
        };
        length.or_else(|| over(Cap::ValueBytes, value.weight(), self.value_bytes))
    }

    /// The first cap any part of `value` crosses, for values from outside: the whole value's
    /// weight first, then every string, list and object in it, depth first.
    pub fn excess_anywhere(&self, value: &Value) -> Option<Excess> {
        if let Some(excess) = self.excess(value) {
            return Some(excess);
        }
        match value {
            Value::List(list) => list.iter().find_map(|item| self.excess_anywhere(item)),
            Value::Object(object) => object.entries().iter().find_map(|(key, item)| {
                let key = (key.len() as u64 > self.string_bytes).then_some(Excess {
                    cap: Cap::StringBytes,
                    current: key.len() as u64,
                    limit: self.string_bytes,
                });
                key.or_else(|| self.excess_anywhere(item))
            }),
            _ => None,
        }
    }

    /// `Ok` when `value`'s top level is within every cap, else the cap's error.
    pub fn check(&self, value: &Value) -> Result<(), ValueError> {
        self.excess(value).map_or(Ok(()), |excess| Err(excess.to_error()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::model::{List, Object};

    #[test]
    fn a_composite_weighs_its_parts_and_is_checked_without_a_walk() {
        let item = Value::from("abc");
        assert_eq!(item.weight(), 8);
        let list = Value::List(List::new(vec![item.clone(), Value::Int(1)]).expect("list"));
        assert_eq!(list.weight(), 5 + 8 + 9);
        let doubled = match &list {
            Value::List(l) => Value::List(l.concat(l)),
            _ => unreachable!(),
        };
        let rebuilt =
            Value::List(List::new(vec![item.clone(), Value::Int(1), item, Value::Int(1)]).expect("list"));
        assert_eq!(doubled.weight(), rebuilt.weight(), "concatenation keeps the weight exact");
        let object = Object::from_pairs(vec![("k".into(), list.clone())]).expect("object");
        assert_eq!(Value::Object(object.clone()).weight(), 5 + (5 + 1) + list.weight());
        assert_eq!(Value::Object(object.merge(&object)).weight(), Value::Object(object).weight());
    }

    #[test]
    fn each_cap_is_checked_at_the_top_and_anywhere_inside() {
        let caps = ValueCaps { value_bytes: 100, list_length: 3, string_bytes: 4, object_entries: 1 };
        let list = |items: Vec<Value>| Value::List(List::new(items).expect("list"));
        assert_eq!(caps.excess(&Value::from("abcd")), None);
        assert_eq!(caps.excess(&Value::from("abcde")).map(|e| e.cap), Some(Cap::StringBytes));
        assert_eq!(
            caps.excess(&list(vec![Value::Null; 4])).map(|e| (e.cap, e.current)),
            Some((Cap::ListLength, 4))
        );
        let heavy = list(vec![Value::from("abcd"); 3]);
        let heavier = list(vec![heavy.clone(), heavy.clone(), heavy]);
        assert_eq!(caps.excess(&heavier).map(|e| e.cap), Some(Cap::ValueBytes));
        let nested = list(vec![list(vec![Value::from("abcdef")])]);
        assert_eq!(caps.excess(&nested), None, "the top level alone is within the caps");
        assert_eq!(caps.excess_anywhere(&nested).map(|e| e.cap), Some(Cap::StringBytes));
        let error = caps.check(&Value::from("abcde")).expect_err("too long");
        assert_eq!(error.code(), codes::STRING_BYTES_LIMIT_EXCEEDED);
        assert_eq!(error.details().get("limit"), Some(&Value::from("string_bytes")));
    }
}
