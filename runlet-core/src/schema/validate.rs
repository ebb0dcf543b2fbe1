//! Checking a runtime value against a schema (tool inputs before dispatch, outputs before they
//! are journaled): the first mismatch with its path, the expected schema, the actual kind and the
//! bound it breaks.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::fmt;

use crate::value::{Number, Object, Segment, Value, path_text};

use super::arena::SchemaArena;
use super::discriminator;
use super::model::{
    Constant, IntegerRange, LengthRange, NumberRange, ObjectSchema, SchemaId, SchemaKind, StringSchema,
};

/// Where a value left its schema. `expected` is the schema in type notation, `actual` describes
/// the value by kind only and `bound` the schema bound it breaks ("below the minimum 1"), so the
/// error as displayed never carries sensitive data. `value` is the scalar itself, shown only by
/// [`ValidationError::showing_value`] to whoever supplied it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationError {
    pub path: Vec<Segment>,
    pub expected: String,
    pub actual: String,
    pub bound: Option<String>,
    pub value: Option<String>,
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at {}: expected {}, found {}", self.path_text(), self.expected, self.actual)?;
        match &self.bound {
            Some(bound) => write!(f, ", {bound}"),
            None => Ok(()),
        }
    }
}

impl ValidationError {
    /// Where the value left its schema (`$["v"]["a"][2]`), cut to [`PATH_CHARS`] characters
    /// with `…` (keys are untrusted text of any length).
    pub fn path_text(&self) -> String {
        let text = path_text(&self.path);
        match text.char_indices().nth(PATH_CHARS) {
            Some((cut, _)) => format!("{}…", &text[..cut]),
            None => text,
        }
    }

    /// The error as data, for `details` of the errors it causes: `path`, `expected` and `found`,
    /// each bounded, and `bound` when a schema bound was broken. Never the value itself.
    pub fn details(&self) -> Object {
        let mut pairs: Vec<(std::sync::Arc<str>, Value)> = vec![
            ("path".into(), Value::from(self.path_text())),
            ("expected".into(), Value::from(self.expected.as_str())),
            ("found".into(), Value::from(self.actual.as_str())),
        ];
        if let Some(bound) = &self.bound {
            pairs.push(("bound".into(), Value::from(bound.as_str())));
        }
        Object::from_pairs(pairs).unwrap_or_else(|_| Object::empty())
    }

    /// The error with the offending scalar's value, for the host that supplied it (a host
    /// input): `at $: expected Integer[1..], found Integer 0, below the minimum 1`.
    pub fn showing_value(&self) -> String {
        let ValidationError { value: Some(value), .. } = self else { return self.to_string() };
        let shown =
            ValidationError { actual: format!("{} {value}", self.actual), value: None, ..self.clone() };
        shown.to_string()
    }
}

impl std::error::Error for ValidationError {}

/// The longest `expected` an error spells out; a longer schema notation is cut with `…`.
const EXPECTED_CHARS: usize = 240;

/// The longest path an error spells out; a longer one is cut with `…`.
pub const PATH_CHARS: usize = 512;

/// Checks `value` against `schema`. Integers are accepted where numbers are expected when they
/// are exactly representable; string `format`s are documentation and are not checked. The work
/// is linear in the value times the schema, however the schema's unions nest and share parts:
/// each (union variant, part of the value) pair is tried once.
pub fn validate(arena: &SchemaArena, schema: SchemaId, value: &Value) -> Result<(), ValidationError> {
    let mut path = Vec::new();
    Validator { arena, probing: Cell::new(false), tried: RefCell::default() }.check(schema, value, &mut path)
}

struct Validator<'a> {
    arena: &'a SchemaArena,
    /// Inside a union's search for an accepting variant: a mismatch is only a no, so it is not
    /// described.
    probing: Cell<bool>,
    /// Whether a variant accepts a part of the value (by the part's address, stable while the
    /// value is borrowed), for union searches.
    tried: RefCell<HashMap<(SchemaId, usize), bool>>,
}

impl Validator<'_> {
    fn check(&self, schema: SchemaId, value: &Value, path: &mut Vec<Segment>) -> Result<(), ValidationError> {
        let schema = self.arena.resolve(schema);
        let fits = match (self.arena.kind(schema), value) {
            (SchemaKind::Any, _) | (SchemaKind::Null, Value::Null) | (SchemaKind::Bytes, Value::Bytes(_)) => {
                true
            }
            (SchemaKind::Boolean(constant), Value::Bool(b)) => constant.is_none_or(|c| c == *b),
            (SchemaKind::Integer(range), Value::Int(i)) => in_integer_range(*range, *i),
            (SchemaKind::Number(range), Value::Number(n)) => in_number_range(*range, *n),
            (SchemaKind::Number(range), Value::Int(i)) => {
                Number::from_i64_exact(*i).is_some_and(|n| in_number_range(*range, n))
            }
            (SchemaKind::String(string), Value::String(s)) => fits_string(string, s),
            (SchemaKind::List(list), Value::List(items)) => {
                if !list.length.contains(items.len() as u64) {
                    let mut error = self.mismatch(schema, &describe(value), path);
                    error.bound = length_bound(list.length, items.len() as u64);
                    return Err(error);
                }
                for (i, item) in items.iter().enumerate() {
                    path.push(Segment::Index(i));
                    self.check(list.items, item, path)?;
                    path.pop();
                }
                true
            }
            (SchemaKind::Object(object), Value::Object(entries)) => {
                return self.check_object(schema, object, entries, path);
            }
            (SchemaKind::Map(values), Value::Object(entries)) => {
                for (key, item) in entries.entries() {
                    path.push(Segment::Key(key.clone()));
                    self.check(*values, item, path)?;
                    path.pop();
                }
                true
            }
            (SchemaKind::Union(union), _) => {
                return self.check_union(
                    schema,
                    union.variants.as_ref(),
                    union.discriminator.as_deref(),
                    value,
                    path,
                );
            }
            _ => false,
        };
        if fits {
            return Ok(());
        }
        let mut error = self.mismatch(schema, &describe(value), path);
        error.bound = broken_bound(self.arena.kind(schema), value);
        error.value = scalar_text(value);
        Err(error)
    }

    fn check_object(
        &self,
        schema: SchemaId,
        object: &ObjectSchema,
        entries: &Object,
        path: &mut Vec<Segment>,
    ) -> Result<(), ValidationError> {
        if let Some(missing) = object.properties.iter().find(|p| p.required && !entries.contains_key(&p.name))
        {
            return Err(self.mismatch(schema, &format!("Object without `{}`", missing.name), path));
        }
        for (key, item) in entries.entries() {
            let property_schema = match (object.property(key), object.additional) {
                (Some(property), _) => property.schema,
                (None, Some(additional)) => additional,
                (None, None) => return Err(self.mismatch(schema, &format!("Object with `{key}`"), path)),
            };
            path.push(Segment::Key(key.clone()));
            self.check(property_schema, item, path)?;
            path.pop();
        }
        Ok(())
    }

    /// A discriminated union checks the one variant the discriminant selects; any other union
    /// accepts the value if some variant does.
    fn check_union(
        &self,
        schema: SchemaId,
        variants: &[SchemaId],
        discriminator: Option<&str>,
        value: &Value,
        path: &mut Vec<Segment>,
    ) -> Result<(), ValidationError> {
        if let (Some(name), Value::Object(object)) = (discriminator, value) {
            let Some(wanted) = object.get(name).and_then(constant_of) else {
                return Err(self.mismatch(schema, &format!("Object without a constant `{name}`"), path));
            };
            let selected = variants.iter().find(|&&variant| {
                discriminator::value_of(self.arena, variant, name).is_ok_and(|c| c == wanted)
            });
            return match selected {
                Some(&variant) => self.check(variant, value, path),
                None => {
                    Err(self.mismatch(schema, &format!("Object whose `{name}` matches no variant"), path))
                }
            };
        }
        if variants.iter().any(|&variant| self.accepts(variant, value, path)) {
            return Ok(());
        }
        Err(self.mismatch(schema, &describe(value), path))
    }

    /// Whether `variant` accepts `value`, decided once per pair.
    fn accepts(&self, variant: SchemaId, value: &Value, path: &[Segment]) -> bool {
        let key = (variant, std::ptr::from_ref(value) as usize);
        if let Some(&known) = self.tried.borrow().get(&key) {
            return known;
        }
        let outer = self.probing.replace(true);
        let accepted = self.check(variant, value, &mut path.to_vec()).is_ok();
        self.probing.set(outer);
        self.tried.borrow_mut().insert(key, accepted);
        accepted
    }

    fn mismatch(&self, schema: SchemaId, actual: &str, path: &[Segment]) -> ValidationError {
        if self.probing.get() {
            let quiet = ValidationError {
                path: Vec::new(),
                expected: String::new(),
                actual: String::new(),
                bound: None,
                value: None,
            };
            return quiet;
        }
        ValidationError {
            path: path.to_vec(),
            expected: bounded(&self.arena.display(schema)),
            actual: actual.to_owned(),
            bound: None,
            value: None,
        }
    }
}

/// `display` written out up to [`EXPECTED_CHARS`] characters: a schema whose notation is larger
/// (deep unions of shared parts can spell out exponentially) is cut, and never built whole.
fn bounded(display: &impl fmt::Display) -> String {
    struct Capped(String, bool);
    impl fmt::Write for Capped {
        fn write_str(&mut self, text: &str) -> fmt::Result {
            let room = EXPECTED_CHARS.saturating_sub(self.0.chars().count());
            if text.chars().count() > room {
                self.0.extend(text.chars().take(room));
                self.1 = true;
                return Err(fmt::Error);
            }
            self.0.push_str(text);
            Ok(())
        }
    }
    let mut capped = Capped(String::new(), false);
    let _ = fmt::write(&mut capped, format_args!("{display}"));
    if capped.1 {
        capped.0.push('…');
    }
    capped.0
}

/// The bound of `kind` that `value`, of the kind `kind` takes, breaks.
fn broken_bound(kind: &SchemaKind, value: &Value) -> Option<String> {
    let bound = |below: Option<String>, above: Option<String>| match (below, above) {
        (Some(min), _) => Some(format!("below the minimum {min}")),
        (None, Some(max)) => Some(format!("above the maximum {max}")),
        (None, None) => None,
    };
    match (kind, value) {
        (SchemaKind::Integer(range), Value::Int(i)) => bound(
            range.min.filter(|min| i < min).map(|min| min.to_string()),
            range.max.filter(|max| i > max).map(|max| max.to_string()),
        ),
        (SchemaKind::Number(_), Value::Int(i)) if Number::from_i64_exact(*i).is_none() => {
            Some("not exactly a Number (beyond 2^53)".to_owned())
        }
        (SchemaKind::Number(range), Value::Int(_) | Value::Number(_)) => {
            let n = match value {
                Value::Int(i) => Number::from_i64_exact(*i)?,
                Value::Number(n) => *n,
                _ => return None,
            };
            bound(
                range.min.filter(|&min| n < min).map(|min| min.to_string()),
                range.max.filter(|&max| n > max).map(|max| max.to_string()),
            )
        }
        (SchemaKind::String(string), Value::String(s)) => match &string.values {
            Some(values) if !values.iter().any(|v| **v == **s) => {
                Some("not one of the allowed values".to_owned())
            }
            _ => length_bound(string.length, s.chars().count() as u64),
        },
        (SchemaKind::Boolean(Some(constant)), Value::Bool(_)) => Some(format!("not the constant {constant}")),
        _ => None,
    }
}

/// The bound of `length` that a string or list of `actual` elements breaks.
fn length_bound(length: LengthRange, actual: u64) -> Option<String> {
    match (length.min, length.max) {
        (Some(min), _) if actual < min => Some(format!("shorter than the minimum length {min}")),
        (_, Some(max)) if actual > max => Some(format!("longer than the maximum length {max}")),
        _ => None,
    }
}

/// The text of a number or Boolean, for [`ValidationError::showing_value`].
fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::Int(i) => Some(i.to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The discriminator constant a value holds, if it is a scalar.
fn constant_of(value: &Value) -> Option<Constant> {
    match value {
        Value::Null => Some(Constant::Null),
        Value::Bool(b) => Some(Constant::Boolean(*b)),
        Value::Int(i) => Some(Constant::Integer(*i)),
        Value::Number(n) => Some(Constant::Number(*n)),
        Value::String(s) => Some(Constant::String(s.clone())),
        _ => None,
    }
}

fn in_integer_range(range: IntegerRange, value: i64) -> bool {
    range.min.is_none_or(|min| value >= min) && range.max.is_none_or(|max| value <= max)
}

fn in_number_range(range: NumberRange, value: Number) -> bool {
    range.min.is_none_or(|min| value >= min) && range.max.is_none_or(|max| value <= max)
}

fn fits_string(schema: &StringSchema, value: &str) -> bool {
    schema.values.as_ref().is_none_or(|values| values.iter().any(|v| &**v == value))
        && schema.length.contains(value.chars().count() as u64)
}

/// A value's kind, with the length of composites; never the value itself.
fn describe(value: &Value) -> String {
    match value {
        Value::List(list) => format!("List of length {}", list.len()),
        Value::String(s) => format!("String of length {}", s.chars().count()),
        other => other.kind().name().to_owned(),
    }
}
