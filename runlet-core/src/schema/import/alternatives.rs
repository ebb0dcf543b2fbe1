//! `anyOf`/`oneOf` as unions, with the discriminator named by `discriminator.propertyName`
//! (its `mapping` checked against the variants) or inferred from a shared constant property.

use serde_json::{Map, Value};

use crate::diag::codes;

use super::super::discriminator::{self, DiscriminatorError};
use super::super::issue::RegistryIssue;
use super::super::json_path::At;
use super::super::model::{Constant, Schema, SchemaId, SchemaKind, UnionSchema};
use super::keywords::{Keywords, Mapped};
use super::typed::JsonType;
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
        let allowed =
            |m: Mapped| matches!(m, Mapped::AnyOf | Mapped::OneOf | Mapped::Discriminator | Mapped::Type);
        self.check_siblings(keywords, path, key, allowed, |k| format!("move `{k}` into each variant"));
        let Some(items) = list.as_array().filter(|items| !items.is_empty()) else {
            self.invalid(path.key(key), format!("`{key}` must be a non-empty array of schemas"));
            return self.arena.any();
        };
        let types = match keywords.get(Mapped::Type) {
            Some(value) => match self.type_names(value, &path.key("type")) {
                Some(types) => Some(types),
                None => return self.arena.any(),
            },
            None => None,
        };
        let list_at = path.key(key);
        let variants: Vec<SchemaId> = items
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                let at = list_at.index(i);
                let variant = self.schema(v, &at, Place::Other);
                match &types {
                    Some(types) => self.narrowed(variant, types, &at),
                    None => Some(variant),
                }
            })
            .collect();
        if variants.is_empty() {
            return self.arena.any();
        }
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

    /// A variant under a sibling `type` (`{"type": "object", "oneOf": [...]}`): a value must
    /// satisfy both, so the variant keeps only the kinds `type` allows — a variant without a
    /// kind of its own (`{}`, only a description) takes `type`'s, one that already has them
    /// stays as it is. A variant left with no kind is an error (`None`).
    fn narrowed(&mut self, variant: SchemaId, types: &[JsonType], at: &At<'_>) -> Option<SchemaId> {
        let resolved = self.arena.resolve(variant);
        let sensitivity = self.arena.get(resolved).sensitivity;
        let members: Vec<SchemaId> = match self.arena.kind(resolved) {
            SchemaKind::Any => {
                let empty = Keywords::default();
                let ids: Vec<SchemaId> = types.iter().map(|&t| self.of_type(t, &empty, at, false)).collect();
                let normalized = self.arena.union(&ids, self.options.max_union_variants);
                let id = self.widened(normalized, at);
                return Some(self.arena.with_sensitivity(id, sensitivity));
            }
            // Still being imported (a recursive reference): its kinds are not known yet.
            SchemaKind::Ref(_) => return Some(variant),
            SchemaKind::Union(union) => union.variants.to_vec(),
            _ => vec![resolved],
        };
        let kept: Vec<SchemaId> =
            members.iter().copied().filter(|&m| admits(types, self.arena.kind(m))).collect();
        if kept.len() == members.len() {
            return Some(variant);
        }
        if kept.is_empty() {
            let names: Vec<&str> = types.iter().map(|t| t.name()).collect();
            let message = format!(
                "this variant accepts {}, which the `type` beside it ({}) does not allow",
                self.arena.display(resolved),
                names.join(", ")
            );
            let issue = RegistryIssue::error(codes::INVALID_SCHEMA, *at, message)
                .with_help("correct the variant's `type`, or remove the variant");
            self.report(issue);
            return None;
        }
        let normalized = self.arena.union(&kept, self.options.max_union_variants);
        Some(self.widened(normalized, at))
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

/// Whether a value of `kind` can be of one of the JSON `types` (an integer is also a number,
/// bytes travel as strings).
fn admits(types: &[JsonType], kind: &SchemaKind) -> bool {
    let json_type = match kind {
        SchemaKind::Any | SchemaKind::Ref(_) | SchemaKind::Union(_) => return true,
        SchemaKind::Null => JsonType::Null,
        SchemaKind::Boolean(_) => JsonType::Boolean,
        SchemaKind::Integer(_) => {
            return types.iter().any(|t| matches!(t, JsonType::Integer | JsonType::Number));
        }
        SchemaKind::Number(_) => JsonType::Number,
        SchemaKind::String(_) | SchemaKind::Bytes => JsonType::String,
        SchemaKind::List(_) => JsonType::Array,
        SchemaKind::Object(_) | SchemaKind::Map(_) => JsonType::Object,
    };
    types.contains(&json_type)
}
