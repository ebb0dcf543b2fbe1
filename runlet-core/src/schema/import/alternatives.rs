//! `anyOf`/`oneOf` as unions, with the discriminator named by `discriminator.propertyName`
//! (its `mapping` checked against the variants) or inferred from a shared constant property.

use serde_json::{Map, Value};

use crate::diag::codes;

use super::super::discriminator::{self, DiscriminatorError};
use super::super::issue::RegistryIssue;
use super::super::json_path::At;
use super::super::model::{Constant, Schema, SchemaId, SchemaKind, UnionSchema};
use super::keywords::{Keywords, Mapped};
use super::{Importer, Place};

impl<'a> Importer<'a, '_> {
    pub(super) fn alternatives(&mut self, keywords: &Keywords<'a>, path: &At<'_>) -> SchemaId {
        let (key, list) = match (keywords.get(Mapped::AnyOf), keywords.get(Mapped::OneOf)) {
            (Some(any_of), one_of) => {
                if one_of.is_some() {
                    let issue = RegistryIssue::error(
                        codes::UNSUPPORTED_SCHEMA_KEYWORD,
                        path.key("oneOf"),
                        "`anyOf` and `oneOf` in one schema are not supported",
                    );
                    self.report(issue.with_help("merge the alternatives into one `anyOf`"));
                }
                ("anyOf", any_of)
            }
            (None, Some(one_of)) => ("oneOf", one_of),
            (None, None) => return self.arena.any(),
        };
        let allowed = |m: Mapped| matches!(m, Mapped::AnyOf | Mapped::OneOf | Mapped::Discriminator);
        self.check_siblings(keywords, path, key, allowed, |k| format!("move `{k}` into each variant"));
        let Some(items) = list.as_array().filter(|items| !items.is_empty()) else {
            self.invalid(path.key(key), format!("`{key}` must be a non-empty array of schemas"));
            return self.arena.any();
        };
        let variants: Vec<SchemaId> = items
            .iter()
            .enumerate()
            .map(|(i, v)| self.schema(v, &path.key(key).index(i), Place::Other))
            .collect();
        let max = self.options.max_union_variants;
        let named = keywords
            .get(Mapped::Discriminator)
            .and_then(|d| self.discriminator(d, &path.key("discriminator")));
        let Some((property, mapping)) = named else {
            let normalized = self.arena.union(&variants, max);
            return self.widened(normalized, path);
        };
        let discriminator_at = path.key("discriminator");
        let at = discriminator_at.key("propertyName");
        let id = match self.arena.discriminated_union(&variants, &property, max) {
            Ok(normalized) => self.widened(normalized, path),
            Err(DiscriminatorError::Unresolved) => {
                let union =
                    UnionSchema { variants: variants.into(), discriminator: Some(property.as_str().into()) };
                let id = self.arena.intern(Schema::public(SchemaKind::Union(union)));
                self.pending_discriminators.push((id, property.clone(), at.into()));
                return id;
            }
            Err(error) => {
                let message =
                    format!("`{property}` does not discriminate these variants: {}", self.describe(&error));
                self.report(RegistryIssue::error(codes::INVALID_DISCRIMINATOR, at, message));
                let normalized = self.arena.union(&variants, max);
                self.widened(normalized, path)
            }
        };
        if let Some(mapping) = mapping {
            self.check_mapping(
                mapping,
                items,
                &variants,
                &property,
                &path.key("discriminator").key("mapping"),
            );
        }
        id
    }

    /// The error with the offending variant in type notation.
    fn describe(&self, error: &DiscriminatorError) -> String {
        match error {
            DiscriminatorError::NotAnObject { variant }
            | DiscriminatorError::NotRequired { variant }
            | DiscriminatorError::NotConstant { variant } => {
                format!("{error}: {}", self.arena.display(*variant))
            }
            _ => error.to_string(),
        }
    }

    /// `discriminator`: the property name and the optional `mapping`.
    fn discriminator(
        &mut self,
        value: &'a Value,
        path: &At<'_>,
    ) -> Option<(String, Option<&'a Map<String, Value>>)> {
        let Some(object) = value.as_object() else {
            self.invalid(*path, "`discriminator` must be an object with `propertyName`");
            return None;
        };
        for key in object.keys().filter(|k| !matches!(k.as_str(), "propertyName" | "mapping")) {
            let message = format!("unsupported `discriminator` field `{key}`");
            let issue = RegistryIssue::error(codes::UNSUPPORTED_SCHEMA_KEYWORD, path.key(key), message);
            self.report(issue.with_help("a discriminator has `propertyName` and optionally `mapping`"));
        }
        let mapping = match object.get("mapping") {
            None => None,
            Some(Value::Object(mapping)) => Some(mapping),
            Some(_) => {
                self.invalid(path.key("mapping"), "`mapping` must be an object from values to references");
                None
            }
        };
        match object.get("propertyName") {
            Some(Value::String(name)) => Some((name.clone(), mapping)),
            Some(_) => {
                self.invalid(path.key("propertyName"), "`propertyName` must be a string");
                None
            }
            None => {
                self.invalid(*path, "`discriminator` needs `propertyName`");
                None
            }
        }
    }

    /// A `mapping` only restates what the variants' constants say; it must agree with them.
    fn check_mapping(
        &mut self,
        mapping: &Map<String, Value>,
        items: &[Value],
        variants: &[SchemaId],
        property: &str,
        path: &At<'_>,
    ) {
        for (value, target) in mapping {
            let index = items.iter().position(|item| item.get("$ref").is_some_and(|r| r == target));
            let Some(index) = index else {
                let message = format!("{target} is not the `$ref` of a variant");
                self.report(RegistryIssue::error(codes::INVALID_DISCRIMINATOR, path.key(value), message));
                continue;
            };
            let expected = Constant::String(value.as_str().into());
            match discriminator::value_of(self.arena, variants[index], property) {
                Ok(actual) if actual != expected => {
                    let message = format!(
                        "maps {} to {target}, whose `{property}` is {}",
                        discriminator::constant_text(&expected),
                        discriminator::constant_text(&actual)
                    );
                    self.report(RegistryIssue::error(codes::INVALID_DISCRIMINATOR, path.key(value), message));
                }
                _ => {}
            }
        }
    }
}
