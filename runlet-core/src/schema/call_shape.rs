//! Whether a tool's positional and object call shapes can accept the same call (spec §2.3: such
//! overloads are rejected), by a conservative test of whether two schemas share a value.

use super::arena::SchemaArena;
use super::descriptor::CallSchema;
use super::model::{
    IntegerRange, LengthRange, NumberRange, ObjectSchema, SchemaId, SchemaKind, StringSchema,
};

/// How deep the overlap test follows nested schemas before assuming an overlap.
const MAX_DEPTH: usize = 32;

/// Why both call shapes accept some call, or `None` when they cannot overlap (or only one
/// shape is given).
pub fn overlap(arena: &SchemaArena, call: &CallSchema) -> Option<String> {
    let (params, object) = (call.positional.as_ref()?, call.object?);
    let required = params.iter().filter(|p| !p.optional).count();
    if required == 0 && accepts_empty_object(arena, object) {
        return Some("both accept a call with no arguments".into());
    }
    let first = params.first().filter(|_| required <= 1)?;
    may_share_value(arena, first.schema, object, 0).then(|| {
        format!("a call with one argument can match both parameter `{}` and the input object", first.name)
    })
}

/// Whether `{}` satisfies the object schema, so the object argument may be left out.
pub fn accepts_empty_object(arena: &SchemaArena, schema: SchemaId) -> bool {
    match arena.kind(arena.resolve(schema)) {
        SchemaKind::Object(object) => object.properties.iter().all(|p| !p.required),
        SchemaKind::Map(_) | SchemaKind::Any | SchemaKind::Ref(_) => true,
        SchemaKind::Union(union) => union.variants.iter().any(|&v| accepts_empty_object(arena, v)),
        _ => false,
    }
}

/// Conservatively: `false` only when no value can satisfy both schemas.
fn may_share_value(arena: &SchemaArena, a: SchemaId, b: SchemaId, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return true;
    }
    let deeper = |x, y| may_share_value(arena, x, y, depth + 1);
    match (arena.kind(arena.resolve(a)), arena.kind(arena.resolve(b))) {
        (SchemaKind::Any | SchemaKind::Ref(_), _) | (_, SchemaKind::Any | SchemaKind::Ref(_)) => true,
        (SchemaKind::Union(union), _) => union.variants.iter().any(|&v| deeper(v, b)),
        (_, SchemaKind::Union(union)) => union.variants.iter().any(|&v| deeper(a, v)),
        (SchemaKind::Null, SchemaKind::Null) | (SchemaKind::Bytes, SchemaKind::Bytes) => true,
        (SchemaKind::Map(_), SchemaKind::Map(_)) => true,
        (SchemaKind::Boolean(x), SchemaKind::Boolean(y)) => x.is_none() || y.is_none() || x == y,
        (SchemaKind::Integer(x), SchemaKind::Integer(y)) => {
            intervals_meet(integer_bounds(*x), integer_bounds(*y))
        }
        (SchemaKind::Integer(i), SchemaKind::Number(n)) | (SchemaKind::Number(n), SchemaKind::Integer(i)) => {
            intervals_meet(integer_as_number_bounds(*i), number_bounds(*n))
        }
        (SchemaKind::Number(x), SchemaKind::Number(y)) => {
            intervals_meet(number_bounds(*x), number_bounds(*y))
        }
        (SchemaKind::String(x), SchemaKind::String(y)) => strings_meet(x, y),
        (SchemaKind::List(x), SchemaKind::List(y)) => {
            let empty = x.length.contains(0) && y.length.contains(0);
            empty || (lengths_meet(x.length, y.length) && deeper(x.items, y.items))
        }
        (SchemaKind::Object(x), SchemaKind::Object(y)) => objects_meet(x, y, &deeper),
        (SchemaKind::Object(object), SchemaKind::Map(values))
        | (SchemaKind::Map(values), SchemaKind::Object(object)) => {
            object.properties.iter().filter(|p| p.required).all(|p| deeper(p.schema, *values))
        }
        _ => false,
    }
}

/// Every property one side requires must be allowed, with a shared value, by the other side.
fn objects_meet(x: &ObjectSchema, y: &ObjectSchema, deeper: &dyn Fn(SchemaId, SchemaId) -> bool) -> bool {
    let one_way = |from: &ObjectSchema, to: &ObjectSchema| {
        from.properties.iter().filter(|p| p.required).all(|p| match (to.property(&p.name), to.additional) {
            (Some(other), _) => deeper(p.schema, other.schema),
            (None, Some(additional)) => deeper(p.schema, additional),
            (None, None) => false,
        })
    };
    one_way(x, y) && one_way(y, x)
}

/// Whether two inclusive intervals intersect; `None` leaves an end open.
fn intervals_meet<T: PartialOrd + Copy>(x: (Option<T>, Option<T>), y: (Option<T>, Option<T>)) -> bool {
    let tighter = |a: Option<T>, b: Option<T>, prefer_a: fn(T, T) -> bool| match (a, b) {
        (Some(a), Some(b)) => Some(if prefer_a(a, b) { a } else { b }),
        (a, b) => a.or(b),
    };
    let low = tighter(x.0, y.0, |a, b| a > b);
    let high = tighter(x.1, y.1, |a, b| a < b);
    low.zip(high).is_none_or(|(low, high)| low <= high)
}

fn integer_bounds(range: IntegerRange) -> (Option<i64>, Option<i64>) {
    (range.min, range.max)
}

fn number_bounds(range: NumberRange) -> (Option<f64>, Option<f64>) {
    (range.min.map(|m| m.get()), range.max.map(|m| m.get()))
}

/// Integer bounds as numbers (an Integer argument converts to a Number parameter).
fn integer_as_number_bounds(range: IntegerRange) -> (Option<f64>, Option<f64>) {
    (range.min.map(|m| m as f64), range.max.map(|m| m as f64))
}

fn lengths_meet(x: LengthRange, y: LengthRange) -> bool {
    intervals_meet((x.min, x.max), (y.min, y.max))
}

fn strings_meet(x: &StringSchema, y: &StringSchema) -> bool {
    let fits = |value: &str, other: &StringSchema| {
        other.values.as_ref().is_none_or(|values| values.iter().any(|v| &**v == value))
            && other.length.contains(value.chars().count() as u64)
    };
    match (&x.values, &y.values) {
        (Some(values), _) => values.iter().any(|v| fits(v, y) && x.length.contains(v.chars().count() as u64)),
        (None, Some(values)) => {
            values.iter().any(|v| fits(v, x) && y.length.contains(v.chars().count() as u64))
        }
        (None, None) => lengths_meet(x.length, y.length),
    }
}
