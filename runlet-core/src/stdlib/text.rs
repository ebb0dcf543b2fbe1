//! The `text` namespace: length, case, trimming, splitting, joining, replacing, affixes and
//! slicing, all by Unicode scalar value and independent of any locale.

use crate::value::{Value, ValueError};

use super::MAX_RESULT_BYTES;
use super::args::{Args, slice_bounds, strings};

pub(super) fn length(args: Args<'_>) -> Result<Value, ValueError> {
    Ok(Value::Int(args.text(0)?.chars().count() as i64))
}

pub(super) fn upper(args: Args<'_>) -> Result<Value, ValueError> {
    args.string_result(args.text(0)?.to_uppercase())
}

pub(super) fn lower(args: Args<'_>) -> Result<Value, ValueError> {
    args.string_result(args.text(0)?.to_lowercase())
}

pub(super) fn trim(args: Args<'_>) -> Result<Value, ValueError> {
    Ok(Value::from(args.text(0)?.trim()))
}

pub(super) fn split(args: Args<'_>) -> Result<Value, ValueError> {
    let (text, separator) = (args.text(0)?, args.text(1)?);
    if separator.is_empty() {
        return Err(args.invalid("the separator is empty; take single characters with `text.slice`"));
    }
    args.list_result(strings(text.split(separator)))
}

/// `text.join(parts, separator)`: the size is known before anything is copied.
pub(super) fn join(args: Args<'_>) -> Result<Value, ValueError> {
    let (parts, separator) = (args.list(0)?, args.text(1)?);
    let mut texts = Vec::with_capacity(parts.len());
    for (index, part) in parts.iter().enumerate() {
        match part {
            Value::String(part) => texts.push(&**part),
            _ => return Err(args.invalid(format!("element {index} of the parts is not a String"))),
        }
    }
    let size = texts.iter().map(|t| t.len()).sum::<usize>()
        + separator.len().saturating_mul(texts.len().saturating_sub(1));
    if size > MAX_RESULT_BYTES {
        return Err(args.too_large("a string", size, MAX_RESULT_BYTES));
    }
    Ok(Value::from(texts.join(separator)))
}

/// `text.replace(text, old, new)`: every occurrence, left to right, without overlaps.
pub(super) fn replace(args: Args<'_>) -> Result<Value, ValueError> {
    let (text, old, new) = (args.text(0)?, args.text(1)?, args.text(2)?);
    if old.is_empty() {
        return Err(args.invalid("the text to replace is empty"));
    }
    let count = text.matches(old).count();
    let size = (text.len() - count * old.len()).saturating_add(count.saturating_mul(new.len()));
    if size > MAX_RESULT_BYTES {
        return Err(args.too_large("a string", size, MAX_RESULT_BYTES));
    }
    Ok(Value::from(text.replace(old, new)))
}

pub(super) fn starts_with(args: Args<'_>) -> Result<Value, ValueError> {
    Ok(Value::Bool(args.text(0)?.starts_with(args.text(1)?)))
}

pub(super) fn ends_with(args: Args<'_>) -> Result<Value, ValueError> {
    Ok(Value::Bool(args.text(0)?.ends_with(args.text(1)?)))
}

/// `text.slice(text, start, end?)` by scalar position, with Python's slice rules.
pub(super) fn slice(args: Args<'_>) -> Result<Value, ValueError> {
    let text = args.text(0)?;
    let (start, end) = slice_bounds(text.chars().count(), args.integer(1)?, args.optional_integer(2)?);
    Ok(Value::from(text.chars().skip(start).take(end - start).collect::<String>()))
}
