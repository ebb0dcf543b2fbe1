//! Equality, ordering and membership rows of the operator table: structural equality with exact
//! numeric comparison, order by number or Unicode scalar values, and `in`.

use std::cmp::Ordering;

use super::error::ValueError;
use super::model::Value;
use super::number::Number;
use super::ops::{BinaryOp, mismatch};

/// The language's `==`: structural equality where lists compare in order, objects compare their
/// key/value sets, and an Integer equals a Number exactly when they denote the same number
/// (compared without rounding either side). Values of other differing kinds are unequal.
pub fn equals(left: &Value, right: &Value) -> bool {
    match (left, right) {
        (Value::Int(i), Value::Number(n)) | (Value::Number(n), Value::Int(i)) => {
            Number::cmp_integer(*i, *n) == Ordering::Equal
        }
        (Value::List(l), Value::List(r)) => {
            l.len() == r.len() && l.iter().zip(r.iter()).all(|(a, b)| equals(a, b))
        }
        (Value::Object(l), Value::Object(r)) => {
            l.len() == r.len()
                && l.entries().iter().zip(r.entries()).all(|((lk, lv), (rk, rv))| lk == rk && equals(lv, rv))
        }
        _ => left == right,
    }
}

/// The order of a numeric pair (exact, across Integer and Number) or of two Strings (Unicode
/// scalar values lexicographically — the same as UTF-8 byte order, never locale collation).
pub(super) fn order(op: BinaryOp, left: &Value, right: &Value) -> Result<Ordering, ValueError> {
    match (left, right) {
        (Value::Int(l), Value::Int(r)) => Ok(l.cmp(r)),
        (Value::Number(l), Value::Number(r)) => Ok(l.cmp(r)),
        (Value::Int(l), Value::Number(r)) => Ok(Number::cmp_integer(*l, *r)),
        (Value::Number(l), Value::Int(r)) => Ok(Number::cmp_integer(*r, *l).reverse()),
        (Value::String(l), Value::String(r)) => Ok(l.as_bytes().cmp(r.as_bytes())),
        _ => Err(mismatch(op, left, right)),
    }
}

/// `item in container`: structural membership in a List, key presence in an Object/Map, or
/// substring (by Unicode scalars, i.e. a UTF-8 substring) in a String.
pub(super) fn contains(item: &Value, container: &Value) -> Result<bool, ValueError> {
    match (item, container) {
        (_, Value::List(list)) => Ok(list.iter().any(|element| equals(item, element))),
        (Value::String(key), Value::Object(object)) => Ok(object.contains_key(key)),
        (Value::String(needle), Value::String(haystack)) => Ok(haystack.contains(&**needle)),
        _ => Err(mismatch(BinaryOp::In, item, container)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::codes;
    use crate::value::test_values::{list, num, object};

    #[test]
    fn equality_is_structural_with_exact_numbers() {
        assert!(equals(&1.into(), &num(1.0)));
        assert!(!equals(&((1i64 << 53) + 1).into(), &num(9007199254740992.0)));
        assert!(equals(&list(vec![1.into(), "a".into()]), &list(vec![num(1.0), "a".into()])));
        assert!(!equals(&list(vec![1.into(), 2.into()]), &list(vec![2.into(), 1.into()])));
        assert!(equals(
            &object(vec![("a", 1.into()), ("b", 2.into())]),
            &object(vec![("b", num(2.0)), ("a", 1.into())])
        ));
        assert!(!equals(&object(vec![("a", 1.into())]), &object(vec![("a", 1.into()), ("b", 2.into())])));
        assert!(!equals(&1.into(), &"1".into()));
        assert!(!equals(&Value::Null, &false.into()));
        assert!(equals(&Value::bytes(vec![1, 2]), &Value::bytes(vec![1, 2])));
    }

    #[test]
    fn strings_order_by_scalar_values() {
        let lt =
            |a: &str, b: &str| order(BinaryOp::Lt, &a.into(), &b.into()).expect("strings") == Ordering::Less;
        assert!(lt("Z", "a"));
        assert!(lt("a", "ab"));
        assert!(lt("\u{ffff}", "\u{10000}"));
        assert!(lt("é", "😀"));
        assert!(!lt("b", "a"));
        assert_eq!(order(BinaryOp::Lt, &num(2.5), &2.into()), Ok(Ordering::Greater));
        assert_eq!(
            order(BinaryOp::Lt, &list(vec![]), &list(vec![])).map_err(|e| e.code()),
            Err(codes::OPERAND_KIND_MISMATCH)
        );
    }

    #[test]
    fn membership_rows() {
        assert_eq!(contains(&num(2.0), &list(vec![1.into(), 2.into()])), Ok(true));
        assert_eq!(contains(&list(vec![]), &list(vec![list(vec![])])), Ok(true));
        assert_eq!(contains(&"a".into(), &object(vec![("a", Value::Null)])), Ok(true));
        assert_eq!(contains(&"b".into(), &object(vec![("a", Value::Null)])), Ok(false));
        assert_eq!(contains(&"é😀".into(), &"caf é😀!".into()), Ok(true));
        assert_eq!(contains(&"".into(), &"".into()), Ok(true));
        assert_eq!(
            contains(&1.into(), &object(vec![])).map_err(|e| e.code()),
            Err(codes::OPERAND_KIND_MISMATCH)
        );
        assert_eq!(contains(&"a".into(), &1.into()).map_err(|e| e.code()), Err(codes::OPERAND_KIND_MISMATCH));
    }
}
