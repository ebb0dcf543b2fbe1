//! The type notation schemas are shown in, such as `{ owner: String, limit?: Integer, .. }`:
//! compact for diagnostics, or annotated with sensitivity, deprecation, aliases, discriminators.

use std::fmt::{self, Write};

use super::arena::SchemaArena;
use super::model::{IntegerRange, LengthRange, NumberRange, SchemaId, SchemaKind};
use super::names::is_identifier;
use crate::value::Sensitivity;

/// Displays one schema; see [`SchemaArena::display`].
#[derive(Debug, Clone, Copy)]
pub struct SchemaDisplay<'a> {
    arena: &'a SchemaArena,
    id: SchemaId,
    annotated: bool,
}

impl SchemaArena {
    /// The schema in compact type notation: `String`, `Integer[0..=10]`, `"free" | "pro"`,
    /// `List<T>`, `Map<T>`, `{ id: String, note?: String }` (closed), `{ id: String, .. }` (other
    /// properties of any schema allowed), `{ id: String, ..: T }`, and definitions by name.
    pub fn display(&self, id: SchemaId) -> SchemaDisplay<'_> {
        SchemaDisplay { arena: self, id, annotated: false }
    }

    /// The compact notation plus `@sensitive`/`@secret` labels, `@deprecated` and `@aliases(..)`
    /// on properties, and `@discriminator(..)` on unions.
    pub fn display_annotated(&self, id: SchemaId) -> SchemaDisplay<'_> {
        SchemaDisplay { arena: self, id, annotated: true }
    }
}

impl fmt::Display for SchemaDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let schema = self.arena.get(self.id);
        match &schema.kind {
            SchemaKind::Any => f.write_str("Any")?,
            SchemaKind::Null => f.write_str("Null")?,
            SchemaKind::Boolean(None) => f.write_str("Boolean")?,
            SchemaKind::Boolean(Some(value)) => write!(f, "{value}")?,
            SchemaKind::Integer(range) => integer(f, *range)?,
            SchemaKind::Number(range) => number(f, *range)?,
            SchemaKind::String(string) => {
                match &string.values {
                    None => f.write_str("String")?,
                    Some(values) => {
                        for (i, value) in values.iter().enumerate() {
                            f.write_str(if i == 0 { "" } else { " | " })?;
                            write!(f, "{}", serde_json::Value::from(&**value))?;
                        }
                    }
                }
                if let Some(format) = &string.format {
                    write!(f, "({format})")?;
                }
                length(f, string.length)?;
            }
            SchemaKind::Bytes => f.write_str("Bytes")?,
            SchemaKind::List(list) => {
                write!(f, "List<{}>", self.child(list.items))?;
                length(f, list.length)?;
            }
            SchemaKind::Object(object) => {
                f.write_str("{")?;
                for (i, property) in object.properties.iter().enumerate() {
                    f.write_str(if i == 0 { " " } else { ", " })?;
                    let optional = if property.required { "" } else { "?" };
                    write!(
                        f,
                        "{}{optional}: {}",
                        property_name(&property.name),
                        self.child(property.schema)
                    )?;
                    if self.annotated && property.deprecated {
                        f.write_str(" @deprecated")?;
                    }
                    if self.annotated && !property.aliases.is_empty() {
                        write!(f, " @aliases({})", property.aliases.join(", "))?;
                    }
                }
                match object.additional {
                    None => {}
                    Some(additional) if self.is_plain_any(additional) => f.write_str(", ..")?,
                    Some(additional) => write!(f, ", ..: {}", self.child(additional))?,
                }
                // A property-less object with `additional` is a map, so `{}` is the empty object.
                f.write_str(if object.properties.is_empty() { "}" } else { " }" })?;
            }
            SchemaKind::Map(values) => write!(f, "Map<{}>", self.child(*values))?,
            SchemaKind::Union(union) => {
                let parenthesize = self.annotated && union.discriminator.is_some();
                f.write_str(if parenthesize { "(" } else { "" })?;
                for (i, &variant) in union.variants.iter().enumerate() {
                    f.write_str(if i == 0 { "" } else { " | " })?;
                    write!(f, "{}", self.child(variant))?;
                }
                if let (true, Some(name)) = (parenthesize, &union.discriminator) {
                    write!(f, ") @discriminator({name})")?;
                }
            }
            SchemaKind::Ref(def) => f.write_str(&self.arena.definition(*def).name)?,
        }
        match schema.sensitivity {
            Sensitivity::Public => Ok(()),
            _ if !self.annotated => Ok(()),
            label => write!(f, " @{}", label.name()),
        }
    }
}

impl SchemaDisplay<'_> {
    fn child(&self, id: SchemaId) -> SchemaDisplay<'_> {
        SchemaDisplay { id, ..*self }
    }

    /// `Any` that this notation shows without a label.
    fn is_plain_any(&self, id: SchemaId) -> bool {
        let schema = self.arena.get(id);
        matches!(schema.kind, SchemaKind::Any)
            && (!self.annotated || schema.sensitivity == Sensitivity::Public)
    }
}

/// A property name as written in source: bare when it is an identifier, else quoted.
fn property_name(name: &str) -> String {
    if is_identifier(name) { name.to_owned() } else { serde_json::Value::from(name).to_string() }
}

fn integer(f: &mut fmt::Formatter<'_>, range: IntegerRange) -> fmt::Result {
    match range.constant() {
        Some(value) => write!(f, "{value}"),
        None => {
            f.write_str("Integer")?;
            bounds(f, range.min, range.max)
        }
    }
}

fn number(f: &mut fmt::Formatter<'_>, range: NumberRange) -> fmt::Result {
    match range.constant() {
        Some(value) => write!(f, "{value}"),
        None => {
            f.write_str("Number")?;
            bounds(f, range.min, range.max)
        }
    }
}

fn length(f: &mut fmt::Formatter<'_>, length: LengthRange) -> fmt::Result {
    if length.min.is_none() && length.max.is_none() {
        return Ok(());
    }
    f.write_str("[len ")?;
    range_text(f, length.min, length.max)?;
    f.write_char(']')
}

fn bounds<T: fmt::Display>(f: &mut fmt::Formatter<'_>, min: Option<T>, max: Option<T>) -> fmt::Result {
    if min.is_none() && max.is_none() {
        return Ok(());
    }
    f.write_char('[')?;
    range_text(f, min, max)?;
    f.write_char(']')
}

fn range_text<T: fmt::Display>(f: &mut fmt::Formatter<'_>, min: Option<T>, max: Option<T>) -> fmt::Result {
    if let Some(min) = min {
        write!(f, "{min}")?;
    }
    f.write_str("..")?;
    if let Some(max) = max {
        write!(f, "={max}")?;
    }
    Ok(())
}
