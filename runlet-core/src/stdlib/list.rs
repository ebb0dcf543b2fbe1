//! The `list` namespace: length, slicing, reversing, sorting, deduplicating, flattening and
//! integer ranges. Elements are never converted; aggregation is `fold`'s job, filtering `skip`'s.

use std::cmp::Ordering;
use std::collections::BTreeSet;

use crate::diag::codes;
use crate::value::{List, Number, Object, Value, ValueError, rcve};

use super::MAX_RESULT_ITEMS;
use super::args::{Args, slice_bounds};

pub(super) fn length(args: Args<'_>) -> Result<Value, ValueError> {
    Ok(Value::Int(args.list(0)?.len() as i64))
}

pub(super) fn slice(args: Args<'_>) -> Result<Value, ValueError> {
    let items = args.list(0)?.items();
    let (start, end) = slice_bounds(items.len(), args.integer(1)?, args.optional_integer(2)?);
    args.list_result(items[start..end].to_vec())
}

pub(super) fn reverse(args: Args<'_>) -> Result<Value, ValueError> {
    args.list_result(args.list(0)?.iter().rev().cloned().collect())
}

/// Ascending and stable: all numbers (Integers and Numbers compare by value) or all strings (by
/// Unicode scalar values); anything else is `RL5407`.
pub(super) fn sort(args: Args<'_>) -> Result<Value, ValueError> {
    let items = args.list(0)?;
    let numbers = items.iter().all(|v| matches!(v, Value::Int(_) | Value::Number(_)));
    let texts = items.iter().all(|v| matches!(v, Value::String(_)));
    if !numbers && !texts {
        let kinds: BTreeSet<String> = items.iter().map(|v| v.kind().to_string()).collect();
        let kinds: Vec<String> = kinds.into_iter().collect();
        let message =
            format!("`list.sort` sorts numbers or strings, and the list holds {}", kinds.join(", "));
        return Err(ValueError::new(codes::NOT_SORTABLE, message).with_detail("kinds", kinds.join(", ")));
    }
    let mut sorted = items.items().to_vec();
    sorted.sort_by(order);
    args.list_result(sorted)
}

/// The order of two sortable elements of the same family.
fn order(left: &Value, right: &Value) -> Ordering {
    match (left, right) {
        (Value::Int(a), Value::Int(b)) => a.cmp(b),
        (Value::Int(a), Value::Number(b)) => Number::cmp_integer(*a, *b),
        (Value::Number(a), Value::Int(b)) => Number::cmp_integer(*b, *a).reverse(),
        (Value::Number(a), Value::Number(b)) => a.get().partial_cmp(&b.get()).unwrap_or(Ordering::Equal),
        (Value::String(a), Value::String(b)) => a.cmp(b),
        _ => Ordering::Equal,
    }
}

/// The first occurrence of each element, where elements are equal as `==` says (so `1` and
/// `1.0` are one element).
pub(super) fn unique(args: Args<'_>) -> Result<Value, ValueError> {
    let mut seen = BTreeSet::new();
    let kept = args.list(0)?.iter().filter(|item| seen.insert(rcve::encode(&equality_form(item)))).cloned();
    args.list_result(kept.collect())
}

/// The value with every Number that is exactly an Integer written as that Integer: values are
/// `==` exactly when their equality forms have the same RCVE bytes.
fn equality_form(value: &Value) -> Value {
    match value {
        Value::Number(number) => {
            let float = number.get();
            let integral = float.fract() == 0.0 && float >= -(2f64.powi(63)) && float < 2f64.powi(63);
            if integral { Value::Int(float as i64) } else { value.clone() }
        }
        Value::List(list) => {
            List::new(list.iter().map(equality_form).collect()).map_or_else(|_| value.clone(), Value::List)
        }
        Value::Object(object) => {
            let pairs = object.entries().iter().map(|(k, v)| (k.clone(), equality_form(v))).collect();
            Object::from_pairs(pairs).map_or_else(|_| value.clone(), Value::Object)
        }
        other => other.clone(),
    }
}

pub(super) fn flatten(args: Args<'_>) -> Result<Value, ValueError> {
    let lists = args.list(0)?;
    let mut items = Vec::new();
    for (index, inner) in lists.iter().enumerate() {
        let Value::List(inner) = inner else {
            return Err(args.invalid(format!("element {index} is not a list")));
        };
        if items.len() + inner.len() > MAX_RESULT_ITEMS {
            return Err(args.too_large("a list", items.len() + inner.len(), MAX_RESULT_ITEMS));
        }
        items.extend(inner.iter().cloned());
    }
    args.list_result(items)
}

/// `list.range(start, end)`: `start, start + 1, …, end - 1`; empty when `end <= start`.
pub(super) fn range(args: Args<'_>) -> Result<Value, ValueError> {
    let (start, end) = (args.integer(0)?, args.integer(1)?);
    let count = (i128::from(end) - i128::from(start)).max(0);
    if count > MAX_RESULT_ITEMS as i128 {
        return Err(args.too_large("a list", usize::try_from(count).unwrap_or(usize::MAX), MAX_RESULT_ITEMS));
    }
    args.list_result((start..end).map(Value::Int).collect())
}
