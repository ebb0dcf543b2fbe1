//! Arithmetic rows of the operator table: checked i64 arithmetic, exact Integer → Number
//! widening, binary64 arithmetic whose non-finite results are errors, division and remainder.

use super::error::ValueError;
use super::model::Value;
use super::number::Number;
use super::ops::{BinaryOp, mismatch};
use crate::diag::codes;

/// Unary `-` on an Integer (checked) or a Number.
pub(super) fn negate(operand: &Value) -> Result<Value, ValueError> {
    match operand {
        Value::Int(i) => i.checked_neg().map(Value::Int).ok_or_else(|| {
            ValueError::new(codes::NUMERIC_OVERFLOW, format!("-({i}) overflows the Integer range"))
                .with_detail("operator", "-")
                .with_detail("operand", *i)
        }),
        Value::Number(n) => finite("-", -n.get()),
        other => Err(ValueError::new(
            codes::OPERAND_KIND_MISMATCH,
            format!("operator `-` does not accept {}", other.kind()),
        )
        .with_detail("operator", "-")
        .with_detail("operand", other.kind().name())),
    }
}

/// `+ - * / %` on a numeric pair. `+` on non-numeric operands is handled by the caller.
pub(super) fn arithmetic(op: BinaryOp, left: &Value, right: &Value) -> Result<Value, ValueError> {
    match (op, left, right) {
        (BinaryOp::Rem, Value::Int(_), Value::Int(0)) => Err(division_by_zero(op)),
        // The remainder always fits: `i64::MIN % -1` is 0 even though the quotient overflows.
        (BinaryOp::Rem, Value::Int(l), Value::Int(r)) => Ok(Value::Int(l.wrapping_rem(*r))),
        (BinaryOp::Rem, _, _) => Err(mismatch(op, left, right)),
        (BinaryOp::Div, _, _) => match widened_pair(op, left, right)? {
            (_, 0.0) => Err(division_by_zero(op)),
            (l, r) => finite(op.symbol(), l / r),
        },
        (_, Value::Int(l), Value::Int(r)) => {
            let result = match op {
                BinaryOp::Add => l.checked_add(*r),
                BinaryOp::Sub => l.checked_sub(*r),
                _ => l.checked_mul(*r),
            };
            integer(op, *l, *r, result)
        }
        _ => {
            let (l, r) = widened_pair(op, left, right)?;
            let result = match op {
                BinaryOp::Add => l + r,
                BinaryOp::Sub => l - r,
                _ => l * r,
            };
            finite(op.symbol(), result)
        }
    }
}

fn division_by_zero(op: BinaryOp) -> ValueError {
    ValueError::new(codes::DIVISION_BY_ZERO, format!("`{op}` by zero")).with_detail("operator", op.symbol())
}

fn integer(op: BinaryOp, l: i64, r: i64, result: Option<i64>) -> Result<Value, ValueError> {
    result.map(Value::Int).ok_or_else(|| {
        ValueError::new(codes::NUMERIC_OVERFLOW, format!("{l} {op} {r} overflows the Integer range"))
            .with_detail("operator", op.symbol())
            .with_detail("left", l)
            .with_detail("right", r)
    })
}

/// Both operands as binary64, widening Integers only when exact.
fn widened_pair(op: BinaryOp, left: &Value, right: &Value) -> Result<(f64, f64), ValueError> {
    match (widen(left), widen(right)) {
        (Some(l), Some(r)) => Ok((l?, r?)),
        _ => Err(mismatch(op, left, right)),
    }
}

/// `None` for a non-numeric value; otherwise the exact binary64 value or `RL5104`.
fn widen(value: &Value) -> Option<Result<f64, ValueError>> {
    match value {
        Value::Number(n) => Some(Ok(n.get())),
        Value::Int(i) => {
            Some(Number::from_i64_exact(*i).map(Number::get).ok_or_else(|| inexact_widening(*i)))
        }
        _ => None,
    }
}

/// `RL5104`: the Integer has no exact binary64 value.
pub(super) fn inexact_widening(i: i64) -> ValueError {
    ValueError::new(
        codes::INEXACT_INTEGER_WIDENING,
        format!("Integer {i} has no exact Number value, so it cannot be widened"),
    )
    .with_detail("integer", i)
}

fn finite(symbol: &str, result: f64) -> Result<Value, ValueError> {
    Number::new(result).map(Value::Number).ok_or_else(|| {
        ValueError::new(codes::NON_FINITE_NUMBER, format!("`{symbol}` produced a non-finite Number"))
            .with_detail("operator", symbol)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Code;
    use crate::value::test_values::num;

    fn run(op: BinaryOp, l: impl Into<Value>, r: impl Into<Value>) -> Result<Value, Code> {
        arithmetic(op, &l.into(), &r.into()).map_err(|e| e.code())
    }

    #[test]
    fn integer_arithmetic_is_checked() {
        assert_eq!(run(BinaryOp::Add, i64::MAX - 1, 1), Ok(Value::Int(i64::MAX)));
        assert_eq!(run(BinaryOp::Add, i64::MAX, 1), Err(codes::NUMERIC_OVERFLOW));
        assert_eq!(run(BinaryOp::Sub, i64::MIN, 1), Err(codes::NUMERIC_OVERFLOW));
        assert_eq!(run(BinaryOp::Mul, i64::MAX / 2 + 1, 2), Err(codes::NUMERIC_OVERFLOW));
        assert_eq!(run(BinaryOp::Mul, -3, 4), Ok(Value::Int(-12)));
        assert_eq!(negate(&Value::Int(i64::MIN)).map_err(|e| e.code()), Err(codes::NUMERIC_OVERFLOW));
        assert_eq!(negate(&Value::Int(5)), Ok(Value::Int(-5)));
        assert_eq!(negate(&num(0.0)), Ok(num(0.0)));
        assert_eq!(negate(&"x".into()).map_err(|e| e.code()), Err(codes::OPERAND_KIND_MISMATCH));
    }

    #[test]
    fn remainder_truncates_toward_zero() {
        assert_eq!(run(BinaryOp::Rem, 7, 3), Ok(Value::Int(1)));
        assert_eq!(run(BinaryOp::Rem, -7, 3), Ok(Value::Int(-1)));
        assert_eq!(run(BinaryOp::Rem, 7, -3), Ok(Value::Int(1)));
        assert_eq!(run(BinaryOp::Rem, 7, 0), Err(codes::DIVISION_BY_ZERO));
        assert_eq!(run(BinaryOp::Rem, i64::MIN, -1), Ok(Value::Int(0)));
        assert_eq!(run(BinaryOp::Rem, i64::MIN, i64::MAX), Ok(Value::Int(-1)));
        assert_eq!(run(BinaryOp::Rem, i64::MIN, 7), Ok(Value::Int(-1)));
        assert_eq!(run(BinaryOp::Rem, num(7.0), 2), Err(codes::OPERAND_KIND_MISMATCH));
        assert_eq!(run(BinaryOp::Rem, num(7.0), 0), Err(codes::OPERAND_KIND_MISMATCH));
    }

    #[test]
    fn division_always_yields_a_number() {
        assert_eq!(run(BinaryOp::Div, 7, 2), Ok(num(3.5)));
        assert_eq!(run(BinaryOp::Div, 6, 3), Ok(num(2.0)));
        assert_eq!(run(BinaryOp::Div, 1, 0), Err(codes::DIVISION_BY_ZERO));
        assert_eq!(run(BinaryOp::Div, num(1.0), num(0.0)), Err(codes::DIVISION_BY_ZERO));
        assert_eq!(run(BinaryOp::Div, i64::MAX, 1), Err(codes::INEXACT_INTEGER_WIDENING));
        assert_eq!(run(BinaryOp::Div, num(-0.5), num(1e308)), Ok(num(-5e-309)));
        assert_eq!(run(BinaryOp::Div, num(1e-300), num(-1e300)), Ok(num(0.0)));
        assert_eq!(run(BinaryOp::Div, "a", 0), Err(codes::OPERAND_KIND_MISMATCH));
    }

    #[test]
    fn number_arithmetic_widens_exactly_and_stays_finite() {
        assert_eq!(run(BinaryOp::Add, 1, num(0.5)), Ok(num(1.5)));
        assert_eq!(run(BinaryOp::Sub, num(0.5), 1), Ok(num(-0.5)));
        assert_eq!(run(BinaryOp::Add, num(0.1), num(0.2)), Ok(num(0.30000000000000004)));
        assert_eq!(run(BinaryOp::Mul, num(1e308), 10), Err(codes::NON_FINITE_NUMBER));
        assert_eq!(run(BinaryOp::Add, (1 << 53) + 1, num(0.5)), Err(codes::INEXACT_INTEGER_WIDENING));
        assert_eq!(run(BinaryOp::Sub, true, 1), Err(codes::OPERAND_KIND_MISMATCH));
    }
}
