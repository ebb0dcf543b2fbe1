//! The operator table of spec §2.4.1 over resolved values: one entry point per arity that
//! dispatches on the operand kinds, used by literal folding and by compute nodes alike.

use std::fmt;
use std::sync::Arc;

use super::arith;
use super::compare;
use super::error::ValueError;
use super::format::push_scalar_text;
use super::model::{Kind, Value};
use crate::diag::codes;

/// A prefix operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `-x`
    Neg,
    /// `not x`
    Not,
}

/// An infix operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
    And,
    Or,
}

impl UnaryOp {
    pub const fn symbol(self) -> &'static str {
        match self {
            UnaryOp::Neg => "-",
            UnaryOp::Not => "not",
        }
    }
}

impl BinaryOp {
    /// The operator as source writes it.
    pub const fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::In => "in",
            BinaryOp::And => "and",
            BinaryOp::Or => "or",
        }
    }
}

impl fmt::Display for UnaryOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

impl fmt::Display for BinaryOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

/// Applies a prefix operator.
pub fn unary(op: UnaryOp, operand: &Value) -> Result<Value, ValueError> {
    match op {
        UnaryOp::Neg => arith::negate(operand),
        UnaryOp::Not => Ok(Value::Bool(!expect_bool(operand, "the operand of `not`")?)),
    }
}

/// Applies an infix operator to two resolved operands. `and`/`or` check both operands here;
/// short-circuiting (not evaluating the right side) is the evaluator's job.
pub fn binary(op: BinaryOp, left: &Value, right: &Value) -> Result<Value, ValueError> {
    match op {
        BinaryOp::Add => add(left, right),
        BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem => arith::arithmetic(op, left, right),
        BinaryOp::Eq => Ok(Value::Bool(compare::equals(left, right))),
        BinaryOp::Ne => Ok(Value::Bool(!compare::equals(left, right))),
        BinaryOp::Lt => Ok(Value::Bool(compare::order(op, left, right)?.is_lt())),
        BinaryOp::Le => Ok(Value::Bool(compare::order(op, left, right)?.is_le())),
        BinaryOp::Gt => Ok(Value::Bool(compare::order(op, left, right)?.is_gt())),
        BinaryOp::Ge => Ok(Value::Bool(compare::order(op, left, right)?.is_ge())),
        BinaryOp::In => Ok(Value::Bool(compare::contains(left, right)?)),
        BinaryOp::And => {
            let (l, r) = (
                expect_bool(left, "the left operand of `and`")?,
                expect_bool(right, "the right operand of `and`")?,
            );
            Ok(Value::Bool(l && r))
        }
        BinaryOp::Or => {
            let (l, r) = (
                expect_bool(left, "the left operand of `or`")?,
                expect_bool(right, "the right operand of `or`")?,
            );
            Ok(Value::Bool(l || r))
        }
    }
}

/// The Boolean inside `value`, or `RL5202 NOT_BOOLEAN` naming `what` (e.g. "the condition")
/// and the actual kind: Runlet has no truthiness.
pub fn expect_bool(value: &Value, what: &str) -> Result<bool, ValueError> {
    match value {
        Value::Bool(b) => Ok(*b),
        other => Err(ValueError::new(
            codes::NOT_BOOLEAN,
            format!(
                "{what} must be a Boolean, not {}; Runlet has no truthiness, so compare explicitly",
                other.kind()
            ),
        )
        .with_detail("actual", other.kind().name())),
    }
}

/// `+`: numeric addition, String concatenation (a scalar on the other side is formatted
/// canonically, so `"count: " + 3` is `"count: 3"`), List concatenation, or the shallow
/// right-biased Object/Map merge.
fn add(left: &Value, right: &Value) -> Result<Value, ValueError> {
    match (left, right) {
        (Value::String(l), Value::String(r)) => {
            let mut text = String::with_capacity(l.len() + r.len());
            text.push_str(l);
            text.push_str(r);
            Ok(Value::String(Arc::from(text)))
        }
        (Value::String(l), scalar) => {
            let mut text = l.to_string();
            if push_scalar_text(&mut text, scalar) {
                Ok(Value::string(text))
            } else {
                Err(mismatch(BinaryOp::Add, left, right))
            }
        }
        (scalar, Value::String(r)) => {
            let mut text = String::new();
            if push_scalar_text(&mut text, scalar) {
                text.push_str(r);
                Ok(Value::string(text))
            } else {
                Err(mismatch(BinaryOp::Add, left, right))
            }
        }
        (Value::List(l), Value::List(r)) => Ok(Value::List(l.concat(r))),
        (Value::Object(l), Value::Object(r)) => Ok(Value::Object(l.merge(r))),
        _ => arith::arithmetic(BinaryOp::Add, left, right),
    }
}

/// `RL5201`: no row of the operator table accepts these operand kinds.
pub(super) fn mismatch(op: BinaryOp, left: &Value, right: &Value) -> ValueError {
    kinds_mismatch(op.symbol(), left.kind(), right.kind())
}

fn kinds_mismatch(symbol: &str, left: Kind, right: Kind) -> ValueError {
    ValueError::new(
        codes::OPERAND_KIND_MISMATCH,
        format!("operator `{symbol}` does not accept {left} and {right}"),
    )
    .with_detail("operator", symbol)
    .with_detail("left", left.name())
    .with_detail("right", right.name())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::model::Object;
    use crate::value::test_values::{list, num};

    fn code(result: Result<Value, ValueError>) -> crate::diag::Code {
        result.expect_err("must fail").code()
    }

    #[test]
    fn addition_rows() {
        assert_eq!(binary(BinaryOp::Add, &1.into(), &2.into()), Ok(Value::Int(3)));
        assert_eq!(binary(BinaryOp::Add, &1.into(), &num(0.5)), Ok(num(1.5)));
        assert_eq!(binary(BinaryOp::Add, &"count: ".into(), &3.into()), Ok("count: 3".into()));
        assert_eq!(binary(BinaryOp::Add, &num(1e21).clone(), &" x".into()), Ok("1e+21 x".into()));
        assert_eq!(binary(BinaryOp::Add, &"ok: ".into(), &true.into()), Ok("ok: true".into()));
        assert_eq!(binary(BinaryOp::Add, &"a".into(), &"b".into()), Ok("ab".into()));
        assert_eq!(
            binary(BinaryOp::Add, &list(vec![1.into()]), &list(vec!["a".into()])),
            Ok(list(vec![1.into(), "a".into()]))
        );
        let l = Object::from_pairs(vec![("a".into(), 1.into()), ("b".into(), 2.into())]).expect("shallow");
        let r = Object::from_pairs(vec![("b".into(), 3.into())]).expect("shallow");
        let merged =
            Object::from_pairs(vec![("a".into(), 1.into()), ("b".into(), 3.into())]).expect("shallow");
        assert_eq!(binary(BinaryOp::Add, &l.into(), &r.into()), Ok(merged.into()));
        assert_eq!(code(binary(BinaryOp::Add, &"a".into(), &Value::Null)), codes::OPERAND_KIND_MISMATCH);
        assert_eq!(code(binary(BinaryOp::Add, &"a".into(), &list(vec![]))), codes::OPERAND_KIND_MISMATCH);
        assert_eq!(code(binary(BinaryOp::Add, &list(vec![]), &1.into())), codes::OPERAND_KIND_MISMATCH);
    }

    #[test]
    fn logic_requires_booleans() {
        assert_eq!(unary(UnaryOp::Not, &true.into()), Ok(false.into()));
        assert_eq!(binary(BinaryOp::And, &true.into(), &false.into()), Ok(false.into()));
        assert_eq!(binary(BinaryOp::Or, &true.into(), &false.into()), Ok(true.into()));
        let error = unary(UnaryOp::Not, &0.into()).expect_err("no truthiness");
        assert_eq!(error.code(), codes::NOT_BOOLEAN);
        assert_eq!(error.details().get("actual"), Some(&"Integer".into()));
        assert_eq!(code(binary(BinaryOp::Or, &false.into(), &list(vec![]))), codes::NOT_BOOLEAN);
        assert_eq!(expect_bool(&"".into(), "the condition").map_err(|e| e.code()), Err(codes::NOT_BOOLEAN));
    }

    #[test]
    fn comparison_rows() {
        assert_eq!(binary(BinaryOp::Lt, &1.into(), &num(1.5)), Ok(true.into()));
        assert_eq!(binary(BinaryOp::Ge, &"b".into(), &"a".into()), Ok(true.into()));
        assert_eq!(binary(BinaryOp::Eq, &1.into(), &num(1.0)), Ok(true.into()));
        assert_eq!(binary(BinaryOp::Ne, &1.into(), &"1".into()), Ok(true.into()));
        assert_eq!(binary(BinaryOp::In, &2.into(), &list(vec![num(2.0)])), Ok(true.into()));
        assert_eq!(code(binary(BinaryOp::Le, &"a".into(), &1.into())), codes::OPERAND_KIND_MISMATCH);
    }
}
