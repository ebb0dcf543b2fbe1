//! Schemas built from `type` (or, without it, from the one kind of facet present): scalars with
//! bounds, bytes through `x-runlet-type`, lists, objects with property metadata, and maps.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::{Number as JsonNumber, Value};

use crate::diag::codes;
use crate::value::Number;

use super::super::issue::RegistryIssue;
use super::super::json_path::At;
use super::super::model::{
    IntegerRange, LengthRange, ListSchema, NumberRange, ObjectSchema, Property, Schema, SchemaId, SchemaKind,
    StringSchema,
};
use super::keywords::{Family, Keywords, Mapped};
use super::{Importer, Place};

/// A JSON Schema `type` name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum JsonType {
    Null,
    Boolean,
    Integer,
    Number,
    String,
    Array,
    Object,
}

const TYPES: [(&str, JsonType); 7] = [
    ("null", JsonType::Null),
    ("boolean", JsonType::Boolean),
    ("integer", JsonType::Integer),
    ("number", JsonType::Number),
    ("string", JsonType::String),
    ("array", JsonType::Array),
    ("object", JsonType::Object),
];

impl JsonType {
    fn family(self) -> Option<Family> {
        match self {
            JsonType::Integer | JsonType::Number => Some(Family::Number),
            JsonType::String => Some(Family::String),
            JsonType::Array => Some(Family::Array),
            JsonType::Object => Some(Family::Object),
            JsonType::Null | JsonType::Boolean => None,
        }
    }
}

impl Family {
    fn described(self) -> &'static str {
        match self {
            Family::Number => "numbers",
            Family::String => "strings",
            Family::Array => "arrays",
            Family::Object => "objects",
        }
    }

    fn json_type(self) -> JsonType {
        match self {
            Family::Number => JsonType::Number,
            Family::String => JsonType::String,
            Family::Array => JsonType::Array,
            Family::Object => JsonType::Object,
        }
    }
}

/// Where a JSON number lies relative to the 64-bit integers, after rounding into them.
enum IntegerBound {
    BelowAll,
    At(i64),
    AboveAll,
}

impl<'a> Importer<'a, '_> {
    pub(super) fn typed(&mut self, keywords: &Keywords<'a>, path: &At<'_>) -> SchemaId {
        let bytes = self.is_bytes(keywords, path);
        let types = match keywords.get(Mapped::Type) {
            Some(value) => self.type_names(value, &path.key("type")),
            None => self.types_from_facets(keywords, path, bytes),
        };
        let Some(types) = types.filter(|t| !t.is_empty()) else {
            return self.arena.any();
        };
        self.check_facet_families(keywords, path, &types, bytes);
        let ids: Vec<SchemaId> = types.iter().map(|&t| self.of_type(t, keywords, path, bytes)).collect();
        let normalized = self.arena.union(&ids, self.options.max_union_variants);
        self.widened(normalized, path)
    }

    /// The `type` keyword's names, sorted and distinct; `None` after reporting a bad one.
    pub(super) fn type_names(&mut self, value: &Value, path: &At<'_>) -> Option<Vec<JsonType>> {
        let names: Vec<(At<'_>, &Value)> = match value {
            Value::Array(items) if !items.is_empty() => {
                items.iter().enumerate().map(|(i, v)| (path.index(i), v)).collect()
            }
            Value::Array(_) => {
                self.invalid(*path, "`type` must name at least one type");
                return None;
            }
            single => vec![(*path, single)],
        };
        let mut types = BTreeSet::new();
        for (at, name) in names {
            match TYPES.iter().find(|(n, _)| Some(*n) == name.as_str()) {
                Some((_, t)) => {
                    types.insert(*t);
                }
                None => {
                    let message = format!("{name} is not a JSON Schema type");
                    let wanted = name.as_str().unwrap_or_default();
                    let mut candidates: Vec<(usize, &str)> =
                        TYPES.iter().map(|(n, _)| (strsim::damerau_levenshtein(n, wanted), *n)).collect();
                    candidates.sort();
                    let candidates = candidates.into_iter().take(2).map(|(_, n)| n);
                    self.report(
                        RegistryIssue::error(codes::INVALID_SCHEMA, at, message).with_candidates(candidates),
                    );
                    return None;
                }
            }
        }
        Some(types.into_iter().collect())
    }

    /// Without `type`: the one kind of value the facets present constrain (none: any value).
    fn types_from_facets(
        &mut self,
        keywords: &Keywords<'_>,
        path: &At<'_>,
        bytes: bool,
    ) -> Option<Vec<JsonType>> {
        let families: BTreeMap<Family, &str> =
            keywords.mapped().filter_map(|(m, key, _)| Some((m.family()?, key))).collect();
        match (families.len(), bytes) {
            (0, true) => Some(vec![JsonType::String]),
            (0, false) => Some(Vec::new()),
            (1, _) => Some(families.keys().map(|f| f.json_type()).collect()),
            _ => {
                let keys: Vec<String> = families.values().map(|k| format!("`{k}`")).collect();
                let message =
                    format!("without `type`, {} constrain different kinds of values", keys.join(" and "));
                let issue = RegistryIssue::error(codes::INVALID_SCHEMA, *path, message)
                    .with_help("add `type` naming the kinds of values the schema accepts");
                self.report(issue);
                None
            }
        }
    }

    fn check_facet_families(
        &mut self,
        keywords: &Keywords<'_>,
        path: &At<'_>,
        types: &[JsonType],
        bytes: bool,
    ) {
        for (mapped, key, _) in keywords.mapped() {
            let Some(family) = mapped.family() else { continue };
            if bytes && family == Family::String {
                self.invalid(path.key(key), format!("`{key}` does not apply to bytes"));
            } else if !types.iter().any(|t| t.family() == Some(family)) {
                let message =
                    format!("`{key}` constrains {}, which `type` does not allow here", family.described());
                self.invalid(path.key(key), message);
            }
        }
    }

    fn is_bytes(&mut self, keywords: &Keywords<'_>, path: &At<'_>) -> bool {
        let Some(value) = keywords.get(Mapped::RunletType) else { return false };
        if value.as_str() == Some("bytes") {
            let string_only = keywords.get(Mapped::Type).is_none_or(|t| t.as_str() == Some("string"));
            if !string_only {
                self.invalid(
                    path.key("type"),
                    "bytes travel as strings: `type` must be \"string\" or absent",
                );
            }
            return true;
        }
        let message = format!("`x-runlet-type` must be \"bytes\", not {value}");
        let issue = RegistryIssue::error(codes::INVALID_SCHEMA, path.key("x-runlet-type"), message)
            .with_candidates(["bytes"]);
        self.report(issue);
        false
    }

    fn of_type(
        &mut self,
        json_type: JsonType,
        keywords: &Keywords<'a>,
        path: &At<'_>,
        bytes: bool,
    ) -> SchemaId {
        let kind = match json_type {
            JsonType::Null => SchemaKind::Null,
            JsonType::Boolean => SchemaKind::Boolean(None),
            JsonType::Integer => SchemaKind::Integer(self.integer_range(keywords, path)),
            JsonType::Number => SchemaKind::Number(self.number_range(keywords, path)),
            JsonType::String if bytes => SchemaKind::Bytes,
            JsonType::String => SchemaKind::String(StringSchema {
                format: self.format(keywords, path),
                values: None,
                length: self.length(
                    keywords,
                    path,
                    ("minLength", Mapped::MinLength),
                    ("maxLength", Mapped::MaxLength),
                ),
            }),
            JsonType::Array => return self.list(keywords, path),
            JsonType::Object => return self.object(keywords, path),
        };
        self.arena.intern(Schema::public(kind))
    }

    pub(super) fn format(&mut self, keywords: &Keywords<'_>, path: &At<'_>) -> Option<Arc<str>> {
        let value = keywords.get(Mapped::Format)?;
        let format = value.as_str().map(Arc::from);
        if format.is_none() {
            self.invalid(path.key("format"), "`format` must be a string");
        }
        format
    }

    fn number_facet(
        &mut self,
        keywords: &Keywords<'_>,
        path: &At<'_>,
        key: &str,
        mapped: Mapped,
    ) -> Option<JsonNumber> {
        let value = keywords.get(mapped)?;
        let number = value.as_number().cloned();
        if number.is_none() {
            self.invalid(path.key(key), format!("`{key}` must be a number"));
        }
        number
    }

    pub(super) fn integer_range(&mut self, keywords: &Keywords<'_>, path: &At<'_>) -> IntegerRange {
        let min = self.number_facet(keywords, path, "minimum", Mapped::Minimum);
        let max = self.number_facet(keywords, path, "maximum", Mapped::Maximum);
        let lower = match min.as_ref().map(|n| integer_bound(n, f64::ceil)) {
            None | Some(IntegerBound::BelowAll) => None,
            Some(IntegerBound::At(i)) => Some(i),
            Some(IntegerBound::AboveAll) => {
                self.invalid(path.key("minimum"), "no 64-bit integer is this large");
                None
            }
        };
        let upper = match max.as_ref().map(|n| integer_bound(n, f64::floor)) {
            None | Some(IntegerBound::AboveAll) => None,
            Some(IntegerBound::At(i)) => Some(i),
            Some(IntegerBound::BelowAll) => {
                self.invalid(path.key("maximum"), "no 64-bit integer is this small");
                None
            }
        };
        if lower.zip(upper).is_some_and(|(lower, upper)| lower > upper) {
            self.invalid(*path, "no integer lies between `minimum` and `maximum`");
            return IntegerRange::default();
        }
        IntegerRange { min: lower, max: upper }
    }

    pub(super) fn number_range(&mut self, keywords: &Keywords<'_>, path: &At<'_>) -> NumberRange {
        let finite = |n: Option<JsonNumber>| n.and_then(|n| n.as_f64()).and_then(Number::new);
        let min = finite(self.number_facet(keywords, path, "minimum", Mapped::Minimum));
        let max = finite(self.number_facet(keywords, path, "maximum", Mapped::Maximum));
        if min.zip(max).is_some_and(|(lower, upper)| lower.get() > upper.get()) {
            self.invalid(*path, "`minimum` is greater than `maximum`");
            return NumberRange::default();
        }
        NumberRange { min, max }
    }

    pub(super) fn length(
        &mut self,
        keywords: &Keywords<'_>,
        path: &At<'_>,
        (min_key, min): (&str, Mapped),
        (max_key, max): (&str, Mapped),
    ) -> LengthRange {
        let min = keywords.get(min).and_then(|v| self.count(v, &path.key(min_key)));
        let max = keywords.get(max).and_then(|v| self.count(v, &path.key(max_key)));
        if min.zip(max).is_some_and(|(lower, upper)| lower > upper) {
            self.invalid(*path, format!("`{min_key}` is greater than `{max_key}`"));
            return LengthRange::default();
        }
        LengthRange::new(min, max)
    }

    fn count(&mut self, value: &Value, path: &At<'_>) -> Option<u64> {
        let count = value.as_u64().or_else(|| {
            let f = value.as_f64()?;
            (f >= 0.0 && f.fract() == 0.0 && f < u64::MAX as f64).then_some(f as u64)
        });
        if count.is_none() {
            self.invalid(*path, "a length bound must be a non-negative integer");
        }
        count
    }

    fn list(&mut self, keywords: &Keywords<'a>, path: &At<'_>) -> SchemaId {
        let items = match keywords.get(Mapped::Items) {
            None => self.arena.any(),
            Some(Value::Array(_)) => {
                let message = "tuple-form `items` (an array of schemas) is not supported";
                let issue =
                    RegistryIssue::error(codes::UNSUPPORTED_SCHEMA_KEYWORD, path.key("items"), message)
                        .with_help("tuples are not in Runlet's vocabulary: use a list or an object");
                self.report(issue);
                self.arena.any()
            }
            Some(items) => self.schema(items, &path.key("items"), Place::Other),
        };
        let length =
            self.length(keywords, path, ("minItems", Mapped::MinItems), ("maxItems", Mapped::MaxItems));
        self.arena.intern(Schema::public(SchemaKind::List(ListSchema { items, length })))
    }

    fn object(&mut self, keywords: &Keywords<'a>, path: &At<'_>) -> SchemaId {
        let additional = match keywords.get(Mapped::AdditionalProperties) {
            None | Some(Value::Bool(true)) => Some(self.arena.any()),
            Some(Value::Bool(false)) => None,
            Some(schema) => Some(self.schema(schema, &path.key("additionalProperties"), Place::Other)),
        };
        let mut properties = Vec::new();
        match keywords.get(Mapped::Properties).map(Value::as_object) {
            None => {}
            Some(None) => self.invalid(path.key("properties"), "`properties` must be an object of schemas"),
            Some(Some(declared)) => {
                // Sorted, so which definitions become references never depends on key order.
                let mut declared: Vec<(&String, &'a Value)> = declared.iter().collect();
                declared.sort_by_key(|(name, _)| *name);
                let properties_at = path.key("properties");
                for (name, json) in declared {
                    let at = properties_at.key(name);
                    let schema = self.schema(json, &at, Place::Property);
                    let aliases = self.aliases(json, &at);
                    let deprecated = json.get("deprecated").and_then(Value::as_bool).unwrap_or(false);
                    properties.push(Property {
                        deprecated,
                        aliases,
                        ..Property::new(name.as_str(), schema, false)
                    });
                }
            }
        }
        self.mark_required(keywords, path, &mut properties, additional);
        self.check_aliases(&properties, path);
        self.arena.intern(Schema::public(SchemaKind::Object(ObjectSchema {
            properties: properties.into(),
            additional,
        })))
    }

    fn mark_required(
        &mut self,
        keywords: &Keywords<'_>,
        path: &At<'_>,
        properties: &mut Vec<Property>,
        additional: Option<SchemaId>,
    ) {
        let Some(required) = keywords.get(Mapped::Required) else { return };
        let names: Option<Vec<&str>> =
            required.as_array().and_then(|r| r.iter().map(Value::as_str).collect());
        let Some(names) = names else {
            self.invalid(path.key("required"), "`required` must be an array of property names");
            return;
        };
        for (i, name) in names.into_iter().enumerate() {
            match (properties.iter_mut().find(|p| &*p.name == name), additional) {
                (Some(property), _) => property.required = true,
                (None, Some(schema)) => properties.push(Property::new(name, schema, true)),
                (None, None) => {
                    let message = format!(
                        "`{name}` is required, but `properties` does not list it and `additionalProperties` is false"
                    );
                    self.invalid(path.key("required").index(i), message);
                }
            }
        }
    }

    fn aliases(&mut self, json: &Value, path: &At<'_>) -> Arc<[Arc<str>]> {
        let Some(value) = json.get("x-runlet-aliases") else { return Arc::from([]) };
        let names: Option<Vec<Arc<str>>> = value
            .as_array()
            .and_then(|a| a.iter().map(|v| v.as_str().filter(|s| !s.is_empty()).map(Arc::from)).collect());
        names.map(Arc::from).unwrap_or_else(|| {
            self.invalid(
                path.key("x-runlet-aliases"),
                "`x-runlet-aliases` must be an array of non-empty names",
            );
            Arc::from([])
        })
    }

    /// An alias must not be another property's name nor be shared by two properties.
    fn check_aliases(&mut self, properties: &[Property], path: &At<'_>) {
        let mut owners: BTreeMap<&str, &str> = BTreeMap::new();
        let properties_at = path.key("properties");
        for property in properties {
            let property_at = properties_at.key(&property.name);
            for alias in property.aliases.iter() {
                let at = property_at.key("x-runlet-aliases");
                if properties.iter().any(|p| p.name == *alias) {
                    self.invalid(at, format!("alias `{alias}` is the name of a property"));
                } else if let Some(owner) =
                    owners.insert(alias, &property.name).filter(|o| *o != &*property.name)
                {
                    self.invalid(at, format!("alias `{alias}` also names property `{owner}`"));
                }
            }
        }
    }
}

/// Rounds `number` into the 64-bit integers with `round` (ceil for minimums, floor for maximums).
fn integer_bound(number: &JsonNumber, round: fn(f64) -> f64) -> IntegerBound {
    const TWO_TO_63: f64 = 9_223_372_036_854_775_808.0;
    if let Some(i) = number.as_i64() {
        return IntegerBound::At(i);
    }
    if number.is_u64() {
        return IntegerBound::AboveAll;
    }
    let rounded = round(number.as_f64().unwrap_or_default());
    if rounded < -TWO_TO_63 {
        IntegerBound::BelowAll
    } else if rounded >= TWO_TO_63 {
        IntegerBound::AboveAll
    } else {
        IntegerBound::At(rounded as i64)
    }
}
