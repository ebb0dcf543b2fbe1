//! Discriminators of unions: checking that a property tells the variants apart (every variant
//! is an object requiring it with a distinct constant) and inferring one when none is named.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

use super::arena::SchemaArena;
use super::model::{Constant, ObjectSchema, SchemaId, SchemaKind};

/// Why a property does not discriminate a union's variants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiscriminatorError {
    /// A variant is `Any`, so nothing can tell it apart.
    AnyVariant,
    NotAnObject {
        variant: SchemaId,
    },
    NotRequired {
        variant: SchemaId,
    },
    NotConstant {
        variant: SchemaId,
    },
    SharedValue {
        value: Constant,
    },
    /// A variant is a definition whose body is still being built.
    Unresolved,
}

impl fmt::Display for DiscriminatorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DiscriminatorError::AnyVariant => f.write_str("a variant accepts any value"),
            DiscriminatorError::NotAnObject { .. } => f.write_str("a variant is not an object"),
            DiscriminatorError::NotRequired { .. } => f.write_str("a variant does not require the property"),
            DiscriminatorError::NotConstant { .. } => {
                f.write_str("in a variant the property is not a single constant value")
            }
            DiscriminatorError::SharedValue { value } => {
                write!(f, "two variants share the value {}", constant_text(value))
            }
            DiscriminatorError::Unresolved => {
                f.write_str("a variant is a recursive reference still being defined")
            }
        }
    }
}

/// The constant written as JSON.
pub fn constant_text(constant: &Constant) -> String {
    match constant {
        Constant::Null => "null".into(),
        Constant::Boolean(b) => b.to_string(),
        Constant::Integer(i) => i.to_string(),
        Constant::Number(n) => n.to_string(),
        Constant::String(s) => serde_json::Value::from(&**s).to_string(),
    }
}

/// Checks that `property` discriminates `variants`.
pub fn check(arena: &SchemaArena, variants: &[SchemaId], property: &str) -> Result<(), DiscriminatorError> {
    let mut seen = BTreeSet::new();
    for &variant in variants {
        let value = value_of(arena, variant, property)?;
        if !seen.insert(value.clone()) {
            return Err(DiscriminatorError::SharedValue { value });
        }
    }
    Ok(())
}

/// The first property, by name, that discriminates `variants`.
pub fn infer(arena: &SchemaArena, variants: &[SchemaId]) -> Option<Arc<str>> {
    let first = object_of(arena, *variants.first()?).ok()?;
    first
        .properties
        .iter()
        .filter(|p| p.required && arena.kind(arena.resolve(p.schema)).constant().is_some())
        .find(|p| check(arena, variants, &p.name).is_ok())
        .map(|p| p.name.clone())
}

/// The constant `property` has in `variant` (an object, perhaps through a reference).
pub fn value_of(
    arena: &SchemaArena,
    variant: SchemaId,
    property: &str,
) -> Result<Constant, DiscriminatorError> {
    let object = object_of(arena, variant)?;
    discriminant(arena, variant, object, property)
}

fn object_of(arena: &SchemaArena, variant: SchemaId) -> Result<&ObjectSchema, DiscriminatorError> {
    match arena.kind(arena.resolve(variant)) {
        SchemaKind::Object(object) => Ok(object),
        SchemaKind::Ref(_) => Err(DiscriminatorError::Unresolved),
        _ => Err(DiscriminatorError::NotAnObject { variant }),
    }
}

fn discriminant(
    arena: &SchemaArena,
    variant: SchemaId,
    object: &ObjectSchema,
    property: &str,
) -> Result<Constant, DiscriminatorError> {
    let found = object.property(property).filter(|p| p.required);
    let schema = found.ok_or(DiscriminatorError::NotRequired { variant })?.schema;
    match arena.kind(arena.resolve(schema)) {
        SchemaKind::Ref(_) => Err(DiscriminatorError::Unresolved),
        kind => kind.constant().ok_or(DiscriminatorError::NotConstant { variant }),
    }
}
