//! The trees the strict reader builds: Runlet [`Value`]s (an integer literal is an Integer or,
//! outside i64, an error or a widened Number) and `serde_json` values for documents whose
//! readers walk `serde_json` (the registry file).

use std::sync::Arc;

use super::JsonErrorKind;
use super::reader::Build;
use crate::value::Segment;
use crate::value::model::{List, Object, Value};
use crate::value::number::Number;

/// Builds [`Value`]s. An integer literal outside i64 is an error, or with `widened` set a
/// Number recorded there by offset and path.
pub(super) struct ValueTree {
    pub(super) widened: Option<Vec<(usize, Vec<Segment>)>>,
}

impl Build for ValueTree {
    type Node = Value;

    fn null(&mut self) -> Value {
        Value::Null
    }

    fn bool(&mut self, value: bool) -> Value {
        Value::Bool(value)
    }

    fn string(&mut self, text: Arc<str>) -> Value {
        Value::String(text)
    }

    fn integer(&mut self, literal: &str, offset: usize, path: &[Segment]) -> Result<Value, JsonErrorKind> {
        if let Ok(integer) = literal.parse::<i64>() {
            return Ok(Value::Int(integer));
        }
        let Some(widened) = &mut self.widened else { return Err(JsonErrorKind::IntegerOutOfRange) };
        let number =
            literal.parse::<f64>().ok().and_then(Number::new).ok_or(JsonErrorKind::NonFiniteNumber)?;
        widened.push((offset, path.to_vec()));
        Ok(Value::Number(number))
    }

    fn number(&mut self, value: f64) -> Result<Value, JsonErrorKind> {
        Number::new(value).map(Value::Number).ok_or(JsonErrorKind::NonFiniteNumber)
    }

    fn list(&mut self, items: Vec<Value>) -> Result<Value, JsonErrorKind> {
        List::new(items).map(Value::List).map_err(|_| JsonErrorKind::TooDeep)
    }

    fn object(&mut self, members: Vec<(Arc<str>, Value)>) -> Result<Value, JsonErrorKind> {
        Object::from_sorted_unique(members).map(Value::Object).map_err(|_| JsonErrorKind::TooDeep)
    }
}

/// Builds `serde_json` values. Integer literals are kept as i64 or u64 where they fit, else as
/// the nearest binary64, as `serde_json` itself reads them.
pub(super) struct SerdeTree;

impl Build for SerdeTree {
    type Node = serde_json::Value;

    fn null(&mut self) -> serde_json::Value {
        serde_json::Value::Null
    }

    fn bool(&mut self, value: bool) -> serde_json::Value {
        serde_json::Value::Bool(value)
    }

    fn string(&mut self, text: Arc<str>) -> serde_json::Value {
        serde_json::Value::String(text.to_string())
    }

    fn integer(
        &mut self,
        literal: &str,
        _: usize,
        _: &[Segment],
    ) -> Result<serde_json::Value, JsonErrorKind> {
        if let Ok(integer) = literal.parse::<i64>() {
            return Ok(integer.into());
        }
        if let Ok(integer) = literal.parse::<u64>() {
            return Ok(integer.into());
        }
        let value: f64 = literal.parse().map_err(|_| JsonErrorKind::InvalidNumber)?;
        self.number(value)
    }

    fn number(&mut self, value: f64) -> Result<serde_json::Value, JsonErrorKind> {
        serde_json::Number::from_f64(value)
            .map(serde_json::Value::Number)
            .ok_or(JsonErrorKind::NonFiniteNumber)
    }

    fn list(&mut self, items: Vec<serde_json::Value>) -> Result<serde_json::Value, JsonErrorKind> {
        Ok(serde_json::Value::Array(items))
    }

    fn object(
        &mut self,
        members: Vec<(Arc<str>, serde_json::Value)>,
    ) -> Result<serde_json::Value, JsonErrorKind> {
        Ok(serde_json::Value::Object(
            members.into_iter().map(|(key, value)| (key.to_string(), value)).collect(),
        ))
    }
}
