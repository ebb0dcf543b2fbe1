//! Indexing and projection (spec §2.4.2): list, String (by scalar) and Bytes positions with
//! negative-index normalization, object/map keys with closest-key suggestions, computed keys.

use std::sync::Arc;

use super::error::ValueError;
use super::format::scalar_text;
use super::model::{List, Object, Value};
use super::sensitivity::Segment;
use crate::diag::{codes, nearest};

/// `target[index]`: a List element, a one-scalar String, a byte as an Integer in `0..=255`, or
/// the value under an Object/Map key. A negative position counts from the end.
///
/// Fails with `RL5203 NOT_INDEXABLE` when no row accepts the pair of kinds,
/// `RL5205 INDEX_OUT_OF_BOUNDS` (details: `index`, `normalized`, `length`) or
/// `RL5206 KEY_NOT_FOUND` (details: `key`, `closest`). Never an implicit null.
pub fn index(target: &Value, index: &Value) -> Result<Value, ValueError> {
    located(target, index).map(|(value, _)| value)
}

/// [`index`] together with the segment it selected (the normalized position or the key), so
/// labels can follow the projection.
pub(super) fn located(target: &Value, index: &Value) -> Result<(Value, Segment), ValueError> {
    match (target, index) {
        (Value::List(list), Value::Int(i)) => {
            let position = normalize(*i, list.len())?;
            Ok((list.items()[position].clone(), Segment::Index(position)))
        }
        (Value::String(text), Value::Int(i)) => {
            let position = normalize(*i, text.chars().count())?;
            // `position` is below the scalar count, so the scalar exists.
            let scalar = text.chars().nth(position).map(String::from).unwrap_or_default();
            Ok((Value::string(scalar), Segment::Index(position)))
        }
        (Value::Bytes(bytes), Value::Int(i)) => {
            let position = normalize(*i, bytes.len())?;
            Ok((Value::Int(i64::from(bytes[position])), Segment::Index(position)))
        }
        (Value::Object(object), Value::String(key)) => {
            Ok((object_value(object, key)?.clone(), Segment::Key(key.clone())))
        }
        _ => Err(ValueError::new(
            codes::NOT_INDEXABLE,
            format!("a {} cannot be indexed by a {}", target.kind(), index.kind()),
        )
        .with_detail("target", target.kind().name())
        .with_detail("index", index.kind().name())),
    }
}

/// `target.name`: the value under a literal key of an Object/Map.
pub fn member(target: &Value, name: &str) -> Result<Value, ValueError> {
    match target {
        Value::Object(object) => Ok(object_value(object, name)?.clone()),
        other => Err(ValueError::new(
            codes::NOT_INDEXABLE,
            format!("a {} has no properties, so `.{name}` cannot be read", other.kind()),
        )
        .with_detail("target", other.kind().name())
        .with_detail("index", "String")
        .with_detail("key", name)),
    }
}

fn object_value<'a>(object: &'a Object, key: &str) -> Result<&'a Value, ValueError> {
    object.get(key).ok_or_else(|| {
        let closest = closest_keys(key, object.keys());
        let hint = match closest.first() {
            Some(best) => format!("; did you mean `{best}`?"),
            None => String::new(),
        };
        let candidates: Vec<Value> = closest.into_iter().map(Value::String).collect();
        ValueError::new(codes::KEY_NOT_FOUND, format!("key `{key}` not found{hint}"))
            .with_detail("key", key)
            .with_detail("closest", List::new(candidates).unwrap_or_else(|_| List::empty()))
    })
}

/// `length + index` for a negative index; the position when it lies in `[0, length)`.
fn normalize(index: i64, length: usize) -> Result<usize, ValueError> {
    let normalized = if index < 0 { i128::from(index) + length as i128 } else { i128::from(index) };
    usize::try_from(normalized).ok().filter(|&p| p < length).ok_or_else(|| {
        ValueError::new(
            codes::INDEX_OUT_OF_BOUNDS,
            format!("index {index} is out of bounds for length {length}"),
        )
        .with_detail("index", index)
        .with_detail("normalized", i64::try_from(normalized).unwrap_or(i64::MIN))
        .with_detail("length", i64::try_from(length).unwrap_or(i64::MAX))
    })
}

/// How many keys of a plausible length [`closest_keys`] compares letter by letter at most: the
/// first ones, in the object's key order. An object can hold a million keys.
const KEYS_COMPARED: usize = 4096;

/// Up to three keys nearest to `wanted` by Damerau-Levenshtein distance over scalars, closest
/// first and ties broken by key order; a key qualifies when at most a third of the longer
/// spelling (and at least one edit) differs. Spellings longer than
/// [`nearest::LONGEST_COMPARED`] scalars get no suggestions, and at most [`KEYS_COMPARED`]
/// keys are compared.
pub fn closest_keys<'a>(wanted: &str, keys: impl Iterator<Item = &'a str>) -> Vec<Arc<str>> {
    let compared_len = |text: &str| text.chars().take(nearest::LONGEST_COMPARED + 1).count();
    let wanted_len = compared_len(wanted);
    if wanted_len > nearest::LONGEST_COMPARED {
        return Vec::new();
    }
    let mut scored: Vec<(usize, &str)> = keys
        .filter_map(|key| {
            let key_len = compared_len(key);
            let allowed = (wanted_len.max(key_len) / 3).max(1);
            // The distance is at least the difference in length.
            (key_len.abs_diff(wanted_len) <= allowed).then_some((key, allowed))
        })
        .take(KEYS_COMPARED)
        .filter_map(|(key, allowed)| {
            let distance = nearest::distance(wanted, key)?;
            (distance <= allowed).then_some((distance, key))
        })
        .collect();
    scored.sort();
    scored.into_iter().take(3).map(|(_, key)| Arc::from(key)).collect()
}

/// The key a computed object key `{ [expr]: value }` denotes: a String as is, an Integer,
/// Number or Boolean by its canonical text (`42` → `"42"`). Other kinds fail with
/// `RL5209 INVALID_COMPUTED_KEY`.
pub fn computed_key(key: &Value) -> Result<Arc<str>, ValueError> {
    match key {
        Value::String(text) => Ok(text.clone()),
        scalar => scalar_text(scalar).map(Arc::from).ok_or_else(|| {
            ValueError::new(
                codes::INVALID_COMPUTED_KEY,
                format!("a computed key must be a String, Integer, Number or Boolean, not {}", scalar.kind()),
            )
            .with_detail("actual", scalar.kind().name())
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Code;
    use crate::value::test_values::list;

    fn object(keys: &[&str]) -> Value {
        Object::from_pairs(keys.iter().map(|k| (Arc::from(*k), Value::from(*k))).collect())
            .expect("shallow")
            .into()
    }

    fn code(result: Result<Value, ValueError>) -> Code {
        result.expect_err("must fail").code()
    }

    #[test]
    fn positions_normalize_negative_indices() {
        let xs = list(vec![10.into(), 20.into(), 30.into()]);
        assert_eq!(index(&xs, &0.into()), Ok(10.into()));
        assert_eq!(index(&xs, &2.into()), Ok(30.into()));
        assert_eq!(index(&xs, &(-1).into()), Ok(30.into()));
        assert_eq!(index(&xs, &(-3).into()), Ok(10.into()));
        assert_eq!(index(&"héllo😀".into(), &1.into()), Ok("é".into()));
        assert_eq!(index(&"héllo😀".into(), &(-1).into()), Ok("😀".into()));
        assert_eq!(index(&Value::bytes(vec![0, 255]), &(-1).into()), Ok(255.into()));
    }

    #[test]
    fn out_of_bounds_reports_original_and_normalized_index() {
        let xs = list(vec![10.into(), 20.into(), 30.into()]);
        let error = index(&xs, &(-4).into()).expect_err("out of bounds");
        assert_eq!(error.code(), codes::INDEX_OUT_OF_BOUNDS);
        assert_eq!(error.details().get("index"), Some(&Value::Int(-4)));
        assert_eq!(error.details().get("normalized"), Some(&Value::Int(-1)));
        assert_eq!(error.details().get("length"), Some(&Value::Int(3)));
        assert_eq!(code(index(&xs, &3.into())), codes::INDEX_OUT_OF_BOUNDS);
        assert_eq!(code(index(&xs, &i64::MIN.into())), codes::INDEX_OUT_OF_BOUNDS);
        assert_eq!(code(index(&xs, &i64::MAX.into())), codes::INDEX_OUT_OF_BOUNDS);
        assert_eq!(code(index(&"".into(), &0.into())), codes::INDEX_OUT_OF_BOUNDS);
        assert_eq!(code(index(&Value::bytes(vec![]), &(-1).into())), codes::INDEX_OUT_OF_BOUNDS);
        let error = index(&list(vec![]), &i64::MIN.into()).expect_err("out of bounds");
        assert_eq!(error.details().get("normalized"), Some(&Value::Int(i64::MIN)));
    }

    #[test]
    fn missing_keys_name_the_closest_keys() {
        let customer = object(&["email", "secondary_email", "mailing_address", "id"]);
        assert_eq!(member(&customer, "id"), Ok("id".into()));
        assert_eq!(index(&customer, &"email".into()), Ok("email".into()));
        let error = member(&customer, "emali").expect_err("missing");
        assert_eq!(error.code(), codes::KEY_NOT_FOUND);
        assert_eq!(error.details().get("closest"), Some(&list(vec!["email".into()])));
        assert!(error.message().contains("did you mean `email`"));
        let error = index(&customer, &"zzzzzzzz".into()).expect_err("missing");
        assert_eq!(error.details().get("closest"), Some(&list(vec![])));
    }

    #[test]
    fn long_keys_are_not_compared_for_suggestions() {
        // Many long keys must not make a missing-key error cost the product of their lengths.
        let long = "k".repeat(100_000);
        let keys: Vec<String> = (0..50).map(|i| format!("{long}{i}")).collect();
        let wide = Value::from(
            Object::from_pairs(keys.iter().map(|k| (Arc::from(k.as_str()), Value::Null)).collect())
                .expect("shallow"),
        );
        let error = member(&wide, &format!("{long}x")).expect_err("missing");
        assert_eq!(error.details().get("closest"), Some(&list(vec![])));
        assert_eq!(closest_keys("emial", ["email", &long].into_iter()), [Arc::from("email")]);
    }

    #[test]
    fn other_pairs_are_not_indexable() {
        assert_eq!(code(index(&list(vec![1.into()]), &"0".into())), codes::NOT_INDEXABLE);
        assert_eq!(code(index(&object(&["a"]), &0.into())), codes::NOT_INDEXABLE);
        assert_eq!(code(index(&1.into(), &0.into())), codes::NOT_INDEXABLE);
        assert_eq!(
            code(index(&list(vec![1.into()]), &Value::number(0.0).expect("finite"))),
            codes::NOT_INDEXABLE
        );
        assert_eq!(code(member(&list(vec![]), "a")), codes::NOT_INDEXABLE);
    }

    #[test]
    fn computed_keys_format_scalars() {
        assert_eq!(computed_key(&42.into()).as_deref(), Ok("42"));
        assert_eq!(computed_key(&Value::number(0.5).expect("finite")).as_deref(), Ok("0.5"));
        assert_eq!(computed_key(&true.into()).as_deref(), Ok("true"));
        assert_eq!(computed_key(&"k".into()).as_deref(), Ok("k"));
        for bad in [Value::Null, Value::bytes(vec![]), list(vec![]), object(&[])] {
            assert_eq!(computed_key(&bad).map_err(|e| e.code()), Err(codes::INVALID_COMPUTED_KEY));
        }
    }
}
