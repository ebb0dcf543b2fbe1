//! Schemas built from `type` (or, without it, from the one kind of facet present): scalars with
//! bounds, bytes through `x-runlet-type`, lists, objects with property metadata, and maps.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::{Number as JsonNumber, Value};

use crate::diag::{codes, nearest};
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
    /// The JSON Schema spelling, such as `integer`.
    pub(super) fn name(self) -> &'static str {
        TYPES.iter().find(|(_, t)| *t == self).map_or("", |(name, _)| name)
    }

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

/// A bound as the schema states it.
struct StatedBound {
    number: JsonNumber,
    exclusive: bool,
    key: &'static str,
}

/// One side of a numeric range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Lower,
    Upper,
}

impl Side {
    /// The inclusive and the exclusive keyword of this side.
    fn keys(self) -> (&'static str, &'static str) {
        match self {
            Side::Lower => ("minimum", "exclusiveMinimum"),
            Side::Upper => ("maximum", "exclusiveMaximum"),
        }
    }

    fn keywords(self) -> (Mapped, Mapped) {
        match self {
            Side::Lower => (Mapped::Minimum, Mapped::ExclusiveMinimum),
            Side::Upper => (Mapped::Maximum, Mapped::ExclusiveMaximum),
        }
    }
}

/// The least binary64 above the finite `f` (infinity above the greatest): for every binary64
/// `x`, `x > f` exactly when `x >= next_up(f)`.
fn next_up(f: f64) -> f64 {
    if f == 0.0 {
        return f64::from_bits(1);
    }
    let bits = f.to_bits();
    f64::from_bits(if f > 0.0 { bits + 1 } else { bits - 1 })
}

/// Where a JSON number lies relative to the 64-bit integers, after rounding into them (ordered
/// from below all to above all).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
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
                        TYPES.iter().filter_map(|(n, _)| Some((nearest::distance(n, wanted)?, *n))).collect();
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
        let format = keywords.get(Mapped::Format).is_some();
        match (families.len(), bytes || format) {
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

    pub(super) fn of_type(
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

    /// The bounds one side of a range states, each number with whether it is exclusive and the
    /// keyword that states it: `minimum` (or `maximum`) and its exclusive form, in both JSON
    /// Schema spellings: a number (`"exclusiveMinimum": 0`) and draft 4's flag on the inclusive
    /// bound (`"minimum": 0, "exclusiveMinimum": true`).
    fn stated_bounds(&mut self, keywords: &Keywords<'_>, path: &At<'_>, side: Side) -> Vec<StatedBound> {
        let (key, exclusive_key) = side.keys();
        let (mapped, exclusive) = side.keywords();
        let inclusive = self.number_facet(keywords, path, key, mapped);
        let mut bounds = Vec::new();
        let mut flagged = false;
        match keywords.get(exclusive) {
            None => {}
            Some(Value::Bool(flag)) => {
                flagged = *flag;
                if flagged && inclusive.is_none() {
                    let message =
                        format!("`{exclusive_key}: true` makes `{key}` exclusive, but there is no `{key}`");
                    self.invalid(path.key(exclusive_key), message);
                }
            }
            Some(Value::Number(n)) => {
                bounds.push(StatedBound { number: n.clone(), exclusive: true, key: exclusive_key })
            }
            Some(_) => self.invalid(path.key(exclusive_key), format!("`{exclusive_key}` must be a number")),
        }
        bounds.extend(inclusive.map(|number| StatedBound { number, exclusive: flagged, key }));
        bounds
    }

    /// Inclusive integer bounds: exclusive ones move to the next integer inside (an
    /// `exclusiveMinimum` of 0 is a minimum of 1), fractional ones round inward, and the
    /// tightest of several wins.
    pub(super) fn integer_range(&mut self, keywords: &Keywords<'_>, path: &At<'_>) -> IntegerRange {
        let lower = self
            .stated_bounds(keywords, path, Side::Lower)
            .into_iter()
            .map(|b| match b.exclusive {
                true => (integer_bound(&b.number, f64::floor).step(1), b.key),
                false => (integer_bound(&b.number, f64::ceil), b.key),
            })
            .max();
        let upper = self
            .stated_bounds(keywords, path, Side::Upper)
            .into_iter()
            .map(|b| match b.exclusive {
                true => (integer_bound(&b.number, f64::ceil).step(-1), b.key),
                false => (integer_bound(&b.number, f64::floor), b.key),
            })
            .min();
        let min = match lower {
            None | Some((IntegerBound::BelowAll, _)) => None,
            Some((IntegerBound::At(i), _)) => Some(i),
            Some((IntegerBound::AboveAll, key)) => {
                self.invalid(path.key(key), "no 64-bit integer is this large");
                None
            }
        };
        let max = match upper {
            None | Some((IntegerBound::AboveAll, _)) => None,
            Some((IntegerBound::At(i), _)) => Some(i),
            Some((IntegerBound::BelowAll, key)) => {
                self.invalid(path.key(key), "no 64-bit integer is this small");
                None
            }
        };
        if let (Some((lower, lower_key)), Some((upper, upper_key))) = (lower, upper) {
            if min.zip(max).is_some_and(|_| lower > upper) {
                self.invalid(*path, format!("no integer lies between `{lower_key}` and `{upper_key}`"));
                return IntegerRange::default();
            }
        }
        IntegerRange { min, max }
    }

    /// Inclusive number bounds: an exclusive bound becomes the nearest binary64 inside it, which
    /// admits exactly the same values (`x > 0` is `x >= 5e-324`); the tightest of several wins.
    pub(super) fn number_range(&mut self, keywords: &Keywords<'_>, path: &At<'_>) -> NumberRange {
        let lower = self.number_bound(keywords, path, Side::Lower);
        let upper = self.number_bound(keywords, path, Side::Upper);
        if let (Some((min, lower_key)), Some((max, upper_key))) = (lower, upper) {
            if min.get() > max.get() {
                self.invalid(*path, format!("`{lower_key}` is greater than `{upper_key}`"));
                return NumberRange::default();
            }
        }
        NumberRange { min: lower.map(|(min, _)| min), max: upper.map(|(max, _)| max) }
    }

    /// The tightest bound of one side of a number range, with the keyword stating it.
    fn number_bound(
        &mut self,
        keywords: &Keywords<'_>,
        path: &At<'_>,
        side: Side,
    ) -> Option<(Number, &'static str)> {
        let mut tightest: Option<(Number, &'static str)> = None;
        for bound in self.stated_bounds(keywords, path, side) {
            let Some(f) = bound.number.as_f64() else { continue };
            let inside = match (bound.exclusive, side) {
                (false, _) => f,
                (true, Side::Lower) => next_up(f),
                (true, Side::Upper) => -next_up(-f),
            };
            let Some(inside) = Number::new(inside) else {
                self.invalid(path.key(bound.key), format!("no number lies beyond {}", bound.number));
                continue;
            };
            let tighter = tightest.is_none_or(|(t, _)| match side {
                Side::Lower => inside.get() > t.get(),
                Side::Upper => inside.get() < t.get(),
            });
            if tighter {
                tightest = Some((inside, bound.key));
            }
        }
        tightest
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
        if let Some(names) = keywords.get(Mapped::PropertyNames) {
            self.property_names(names, &path.key("propertyNames"));
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

    /// `propertyNames`: object keys are strings, so a schema accepting every string (`{"type":
    /// "string"}`, with a `format` at most, or `true`) says nothing more and is accepted; one that
    /// narrows the keys is a constraint Runlet cannot express.
    fn property_names(&mut self, json: &'a Value, path: &At<'_>) {
        let names = self.schema(json, path, Place::Other);
        let every_string = match self.arena.kind(self.arena.resolve(names)) {
            SchemaKind::Any => true,
            SchemaKind::String(string) => string.values.is_none() && string.length == LengthRange::default(),
            _ => false,
        };
        if !every_string {
            let help =
                "Runlet checks no constraint on object keys: only `{\"type\": \"string\"}` is expressible";
            self.unsupported("propertyNames", *path, true, help);
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

impl IntegerBound {
    /// The bound `by` integers further (past the 64-bit range: beyond all).
    fn step(self, by: i64) -> IntegerBound {
        match self {
            IntegerBound::At(i) => match i.checked_add(by) {
                Some(i) => IntegerBound::At(i),
                None if by > 0 => IntegerBound::AboveAll,
                None => IntegerBound::BelowAll,
            },
            other => other,
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
