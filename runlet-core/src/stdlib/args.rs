//! Reading an intrinsic's canonical argument list and building its results: typed accessors that
//! fail with a stable code instead of panicking, and the result-size caps.

use std::sync::Arc;

use crate::diag::codes;
use crate::value::{List, Number, Value, ValueError};

use super::{MAX_RESULT_BYTES, MAX_RESULT_ITEMS};

/// The arguments of one call, converted to the intrinsic's parameter schemas by the analyzer.
#[derive(Debug, Clone, Copy)]
pub(super) struct Args<'a> {
    pub name: &'static str,
    pub values: &'a [Value],
}

impl<'a> Args<'a> {
    fn missing(&self, index: usize, wanted: &str) -> ValueError {
        ValueError::new(
            codes::OPERAND_KIND_MISMATCH,
            format!("`{}` needs {wanted} as argument {}", self.name, index + 1),
        )
        .with_detail("argument", index as i64 + 1)
    }

    pub fn text(&self, index: usize) -> Result<&'a str, ValueError> {
        match self.values.get(index) {
            Some(Value::String(text)) => Ok(text),
            _ => Err(self.missing(index, "a String")),
        }
    }

    pub fn integer(&self, index: usize) -> Result<i64, ValueError> {
        match self.values.get(index) {
            Some(Value::Int(value)) => Ok(*value),
            _ => Err(self.missing(index, "an Integer")),
        }
    }

    /// An optional Integer argument: `None` when it is left out or `null`.
    pub fn optional_integer(&self, index: usize) -> Result<Option<i64>, ValueError> {
        match self.values.get(index) {
            None | Some(Value::Null) => Ok(None),
            Some(_) => self.integer(index).map(Some),
        }
    }

    /// A Number argument; an Integer is accepted when binary64 holds it exactly.
    pub fn number(&self, index: usize) -> Result<f64, ValueError> {
        match self.values.get(index) {
            Some(Value::Number(number)) => Ok(number.get()),
            Some(Value::Int(value)) => {
                Number::from_i64_exact(*value).map(Number::get).ok_or_else(|| self.missing(index, "a Number"))
            }
            _ => Err(self.missing(index, "a Number")),
        }
    }

    pub fn list(&self, index: usize) -> Result<&'a List, ValueError> {
        match self.values.get(index) {
            Some(Value::List(list)) => Ok(list),
            _ => Err(self.missing(index, "a List")),
        }
    }

    pub fn value(&self, index: usize) -> Result<&'a Value, ValueError> {
        self.values.get(index).ok_or_else(|| self.missing(index, "a value"))
    }

    /// `RL5405`: an argument outside the function's domain.
    pub fn invalid(&self, message: impl Into<String>) -> ValueError {
        ValueError::new(codes::INTRINSIC_ARGUMENT_INVALID, format!("`{}`: {}", self.name, message.into()))
            .with_detail("function", self.name)
    }

    /// `RL5406`: a result beyond the caps of [`MAX_RESULT_BYTES`] / [`MAX_RESULT_ITEMS`].
    pub fn too_large(&self, what: &str, size: usize, cap: usize) -> ValueError {
        ValueError::new(
            codes::INTRINSIC_RESULT_TOO_LARGE,
            format!("`{}` would build {what} of {size}, more than the cap of {cap}", self.name),
        )
        .with_detail("function", self.name)
        .with_detail("size", size.min(i64::MAX as usize) as i64)
        .with_detail("cap", cap as i64)
    }

    /// A String result, checked against the byte cap.
    pub fn string_result(&self, text: String) -> Result<Value, ValueError> {
        if text.len() > MAX_RESULT_BYTES {
            return Err(self.too_large("a string", text.len(), MAX_RESULT_BYTES));
        }
        Ok(Value::String(Arc::from(text)))
    }

    /// A List result, checked against the element cap.
    pub fn list_result(&self, items: Vec<Value>) -> Result<Value, ValueError> {
        if items.len() > MAX_RESULT_ITEMS {
            return Err(self.too_large("a list", items.len(), MAX_RESULT_ITEMS));
        }
        List::new(items).map(Value::List)
    }
}

/// A list of strings as a value.
pub(super) fn strings<'s>(parts: impl IntoIterator<Item = &'s str>) -> Vec<Value> {
    parts.into_iter().map(Value::from).collect()
}

/// The half-open range `[start, end)` of positions of a sequence of `length` elements, with
/// negative positions counted from the end and both ends clamped to `[0, length]` (Python's
/// slice rules); an end before the start gives an empty range.
pub(super) fn slice_bounds(length: usize, start: i64, end: Option<i64>) -> (usize, usize) {
    let length_i = i64::try_from(length).unwrap_or(i64::MAX);
    let clamp = |position: i64| {
        let normalized = if position < 0 { length_i.saturating_add(position) } else { position };
        normalized.clamp(0, length_i) as usize
    };
    let start = clamp(start);
    let end = end.map_or(length, clamp);
    (start, end.max(start))
}
