//! Host inputs (spec §7.1): the values a host supplies to a program by name, and the one reader
//! of their JSON form that the CLI's `--inputs`, the C ABI and the Go binding share.

use std::collections::BTreeMap;

use crate::diag::{Code, codes};
use crate::registry::Registry;
use crate::schema::{is_identifier, is_reserved, validate};
use crate::syntax::unicode::{is_default_ignorable, nfc, visible};
use crate::value::{JsonError, Segment, Value, ValueError, parse_json_widening};

/// Host inputs supplied as values: each is readable by name, with the registry's declared
/// schema when it has one, else the schema inferred from the value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Inputs {
    values: BTreeMap<String, Value>,
}

impl Inputs {
    pub fn new() -> Inputs {
        Inputs::default()
    }

    pub fn insert(&mut self, name: impl Into<String>, value: Value) {
        self.values.insert(name.into(), value);
    }

    pub fn get(&self, name: &str) -> Option<&Value> {
        self.values.get(name)
    }

    /// The supplied names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.values.keys().map(String::as_str)
    }
}

impl FromIterator<(String, Value)> for Inputs {
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(iter: I) -> Self {
        Inputs { values: iter.into_iter().collect() }
    }
}

impl Inputs {
    /// Reads a JSON object of input names to values, as hosts write them (`runlet run --inputs`,
    /// `runlet_program_compile`'s and `runlet_run_start`'s `inputs_json`). Each name must be one
    /// a program can use (an identifier that is no reserved word or root of `registry`), and a
    /// value whose schema the registry declares must match it. Empty text is no inputs.
    ///
    /// The JSON is read strictly (`RL8101`), except that an integer literal outside i64 (such
    /// as 2^64) is kept as the Number it spells where the registry declares a schema that takes
    /// that Number, so any finite JSON number is a valid Number input.
    pub fn from_json(text: &str, registry: &Registry) -> Result<Inputs, InputsError> {
        if text.trim().is_empty() {
            return Ok(Inputs::new());
        }
        let (document, widened) = parse_json_widening(text).map_err(InputsError::NotJson)?;
        let Value::Object(object) = document else {
            return Err(InputsError::NotAnObject);
        };
        let mut inputs = Inputs::new();
        for (name, value) in object.entries() {
            let within = widened
                .iter()
                .find(|literal| matches!(literal.path.first(), Some(Segment::Key(key)) if key == name));
            inputs.insert_checked(name, value.clone(), within, registry)?;
        }
        Ok(inputs)
    }

    /// Adds one `NAME=JSON` assignment (`runlet run --input`), checked as
    /// [`Inputs::from_json`] checks each of its entries; a later assignment of a name replaces
    /// the earlier value.
    pub fn insert_assignment(&mut self, text: &str, registry: &Registry) -> Result<(), InputsError> {
        let (name, json) =
            text.split_once('=').ok_or_else(|| InputsError::NotAnAssignment(text.to_owned()))?;
        let (value, widened) = parse_json_widening(json).map_err(InputsError::NotJson)?;
        self.insert_checked(name, value, widened.first(), registry)
    }

    /// Adds `value` as the input `name` (in NFC, as the lexer reads names). `widened` is an integer literal outside i64 that the
    /// value holds as a Number: kept only when the declared schema takes the value, else the
    /// integer-out-of-range error it is.
    fn insert_checked(
        &mut self,
        name: &str,
        value: Value,
        widened: Option<&JsonError>,
        registry: &Registry,
    ) -> Result<(), InputsError> {
        let name = &*nfc(name);
        if !is_identifier(name) || is_reserved(name) || registry.is_root(name) {
            return Err(InputsError::UnusableName { name: name.to_owned() });
        }
        if name.chars().any(is_default_ignorable) {
            return Err(InputsError::InvisibleName { name: visible(name) });
        }
        let checked = match registry.inputs().get(name) {
            Some(declared) => validate(registry.schemas(), declared.schema, &value).map_err(|mismatch| {
                InputsError::Mismatch { name: name.to_owned(), reason: mismatch.showing_value() }
            }),
            None => Ok(()),
        };
        match (checked, widened) {
            (Ok(()), None) => {}
            (Ok(()), Some(_)) if registry.inputs().contains_key(name) => {}
            (_, Some(literal)) => return Err(InputsError::NotJson(literal.clone())),
            (Err(mismatch), None) => return Err(mismatch),
        }
        self.insert(name, value);
        Ok(())
    }
}

/// Why host inputs given as JSON were not accepted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum InputsError {
    #[error("the inputs are not valid JSON: {0}")]
    NotJson(JsonError),
    #[error("the inputs must be a JSON object of input names to values")]
    NotAnObject,
    #[error("`{0}` is not NAME=JSON")]
    NotAnAssignment(String),
    #[error(
        "the input name `{name}` is not one a program can use (an identifier that is no reserved word or registry root)"
    )]
    UnusableName { name: String },
    #[error(
        "the input name `{name}` holds invisible characters, so a reader cannot tell it from the name without them"
    )]
    InvisibleName { name: String },
    #[error("the input `{name}` does not match the registry's schema for it: {reason}")]
    Mismatch { name: String, reason: String },
}

impl InputsError {
    /// The stable code of the error: the JSON error's for text that does not parse,
    /// `RL8018` (`INVALID_HOST_INPUT`) otherwise.
    pub fn code(&self) -> Code {
        match self {
            InputsError::NotJson(error) => ValueError::from(error.clone()).code(),
            _ => codes::INVALID_HOST_INPUT,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::RegistryOptions;

    fn registry() -> Registry {
        let json = r#"{"tools": [{"name": "crm.customer", "inputSchema": {"type": "object"}}],
            "inputs": {"page_size": {"type": "integer", "minimum": 1}}}"#;
        Registry::from_json_str(json, &RegistryOptions::default()).expect("registry").registry
    }

    #[test]
    fn inputs_are_read_by_name_and_checked_against_declared_schemas() {
        let inputs = Inputs::from_json(r#"{"page_size": 3, "who": "ada"}"#, &registry()).expect("valid");
        assert_eq!(inputs.names().collect::<Vec<_>>(), ["page_size", "who"]);
        assert_eq!(inputs.get("page_size"), Some(&Value::Int(3)));
        assert_eq!(Inputs::from_json("  ", &registry()), Ok(Inputs::new()));
    }

    #[test]
    fn every_bad_input_is_a_clear_error_with_a_code() {
        let registry = registry();
        let error = |json: &str| Inputs::from_json(json, &registry).expect_err(json);
        assert!(matches!(error("{"), InputsError::NotJson(_)));
        assert_eq!(error("[1]"), InputsError::NotAnObject);
        for name in ["crm", "return", "limit", "not-an-identifier"] {
            let json = format!(r#"{{"{name}": 1}}"#);
            assert_eq!(error(&json), InputsError::UnusableName { name: name.into() });
            assert_eq!(error(&json).code(), codes::INVALID_HOST_INPUT);
        }
        assert!(
            matches!(error(r#"{"page_size": 0}"#), InputsError::Mismatch { name, .. } if name == "page_size")
        );
        assert_ne!(error("{").code(), codes::INVALID_HOST_INPUT);
    }

    #[test]
    fn a_number_input_takes_any_finite_json_number() {
        let json = r#"{"tools": [], "inputs": {"amount": {"type": "number"}, "count": {"type": "integer"}}}"#;
        let registry = Registry::from_json_str(json, &RegistryOptions::default()).expect("registry").registry;
        let two_to_64 = Value::number(18446744073709551616.0).expect("finite");
        let inputs =
            Inputs::from_json(r#"{"amount": 18446744073709551616, "count": 3}"#, &registry).expect("valid");
        assert_eq!(inputs.get("amount"), Some(&two_to_64));
        let mut assigned = Inputs::new();
        assigned.insert_assignment("amount=18446744073709551616", &registry).expect("valid");
        assert_eq!(assigned.get("amount"), Some(&two_to_64));
        for refused in [r#"{"count": 18446744073709551616}"#, r#"{"other": 18446744073709551616}"#] {
            let InputsError::NotJson(error) = Inputs::from_json(refused, &registry).expect_err(refused)
            else {
                panic!("{refused}: an integer out of range")
            };
            assert_eq!(error.kind, crate::value::JsonErrorKind::IntegerOutOfRange, "{refused}");
        }
        let error = Inputs::from_json(r#"{"amount": 1e-400}"#, &registry).expect_err("underflow");
        assert_eq!(error.code(), codes::INVALID_HOST_JSON);
    }

    #[test]
    fn assignments_are_checked_like_entries_and_replace_earlier_values() {
        let registry = registry();
        let mut inputs = Inputs::from_json(r#"{"who": "ada"}"#, &registry).expect("valid");
        inputs.insert_assignment(r#"who="grace""#, &registry).expect("valid");
        inputs.insert_assignment("page_size=2", &registry).expect("valid");
        assert_eq!(inputs.get("who"), Some(&Value::from("grace")));
        assert_eq!(inputs.get("page_size"), Some(&Value::Int(2)));
        let mut refused = |text: &str| inputs.insert_assignment(text, &registry).expect_err(text);
        assert_eq!(refused("who"), InputsError::NotAnAssignment("who".into()));
        assert!(matches!(refused("who={"), InputsError::NotJson(_)));
        assert_eq!(refused("crm=1"), InputsError::UnusableName { name: "crm".into() });
        assert!(matches!(refused("page_size=0"), InputsError::Mismatch { .. }));
    }
}
