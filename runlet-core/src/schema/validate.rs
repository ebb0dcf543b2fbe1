//! Checking a runtime value against a schema (tool inputs before dispatch, outputs before they
//! are journaled): the first mismatch with its path, the expected schema and the actual kind.

use std::fmt;

use crate::value::{Number, Object, Segment, Value, path_text};

use super::arena::SchemaArena;
use super::discriminator;
use super::model::{Constant, IntegerRange, NumberRange, ObjectSchema, SchemaId, SchemaKind, StringSchema};

/// Where a value left its schema. `expected` is the schema in type notation and `actual`
/// describes the value by kind only, so an error never carries sensitive data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationError {
    pub path: Vec<Segment>,
    pub expected: String,
    pub actual: String,
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at {}: expected {}, found {}", path_text(&self.path), self.expected, self.actual)
    }
}

impl std::error::Error for ValidationError {}

/// Checks `value` against `schema`. Integers are accepted where numbers are expected when they
/// are exactly representable; string `format`s are documentation and are not checked.
pub fn validate(arena: &SchemaArena, schema: SchemaId, value: &Value) -> Result<(), ValidationError> {
    let mut path = Vec::new();
    Validator { arena }.check(schema, value, &mut path)
}

struct Validator<'a> {
    arena: &'a SchemaArena,
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
                    return Err(self.mismatch(schema, &format!("List of length {}", items.len()), path));
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
        if fits { Ok(()) } else { Err(self.mismatch(schema, &describe(value), path)) }
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
        let mut scratch = path.clone();
        if variants.iter().any(|&variant| self.check(variant, value, &mut scratch).is_ok()) {
            return Ok(());
        }
        Err(self.mismatch(schema, &describe(value), path))
    }

    fn mismatch(&self, schema: SchemaId, actual: &str, path: &[Segment]) -> ValidationError {
        ValidationError {
            path: path.to_vec(),
            expected: self.arena.display(schema).to_string(),
            actual: actual.to_owned(),
        }
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
