//! `enum` and `const`: each value becomes a constant (a one-value string enumeration, an integer
//! or number range of one value, a boolean constant, null), checked against `type` and bounds.

use serde_json::Value;

use super::super::json_path::At;
use super::super::model::{
    IntegerRange, LengthRange, NumberRange, Schema, SchemaId, SchemaKind, StringSchema,
};
use super::Importer;
use super::keywords::{Keywords, Mapped};
use super::typed::JsonType;
use crate::value::Number;

/// The sibling facets every literal must satisfy.
struct Facets {
    types: Option<Vec<JsonType>>,
    range: NumberRange,
    length: LengthRange,
    format: Option<std::sync::Arc<str>>,
}

impl<'a> Importer<'a, '_> {
    pub(super) fn literals(&mut self, keywords: &Keywords<'a>, path: &At<'_>) -> SchemaId {
        let allowed = |m: Mapped| {
            use Mapped::*;
            matches!(
                m,
                Type | Enum
                    | Const
                    | Format
                    | MinLength
                    | MaxLength
                    | Minimum
                    | Maximum
                    | ExclusiveMinimum
                    | ExclusiveMaximum
            )
        };
        let anchor = if keywords.get(Mapped::Enum).is_some() { "enum" } else { "const" };
        let help = move |key: &str| format!("`{anchor}` fixes the values: remove `{key}`");
        self.check_siblings(keywords, path, anchor, allowed, help);
        let (enum_at, const_at) = (path.key("enum"), path.key("const"));
        let values: Vec<(At<'_>, &Value)> = match (keywords.get(Mapped::Enum), keywords.get(Mapped::Const)) {
            (Some(Value::Array(items)), constant) if !items.is_empty() => {
                if constant.is_some() {
                    self.invalid(path.key("const"), "give either `enum` or `const`, not both");
                }
                items.iter().enumerate().map(|(i, v)| (enum_at.index(i), v)).collect()
            }
            (Some(_), _) => {
                self.invalid(path.key("enum"), "`enum` must be a non-empty array of values");
                return self.arena.any();
            }
            (None, constant) => constant.map(|v| (const_at, v)).into_iter().collect(),
        };
        let types = match keywords.get(Mapped::Type) {
            Some(value) => match self.type_names(value, &path.key("type")) {
                Some(types) => Some(types),
                None => return self.arena.any(),
            },
            None => None,
        };
        let facets = Facets {
            types,
            range: self.number_range(keywords, path),
            length: self.length(
                keywords,
                path,
                ("minLength", Mapped::MinLength),
                ("maxLength", Mapped::MaxLength),
            ),
            format: self.format(keywords, path),
        };
        let ids: Vec<SchemaId> =
            values.into_iter().filter_map(|(at, value)| self.literal(value, at, &facets)).collect();
        let normalized = self.arena.union(&ids, self.options.max_union_variants);
        self.widened(normalized, path)
    }

    fn literal(&mut self, value: &Value, at: At<'_>, facets: &Facets) -> Option<SchemaId> {
        let allows = |t: JsonType| facets.types.as_ref().is_none_or(|types| types.contains(&t));
        let kind = match value {
            Value::Null if allows(JsonType::Null) => SchemaKind::Null,
            Value::Bool(b) if allows(JsonType::Boolean) => SchemaKind::Boolean(Some(*b)),
            Value::Number(n) => {
                let f = n.as_f64().and_then(Number::new)?;
                let below = facets.range.min.is_some_and(|min| f.get() < min.get());
                let above = facets.range.max.is_some_and(|max| f.get() > max.get());
                if below || above {
                    self.invalid(at, format!("{n} is outside the schema's bounds"));
                    return None;
                }
                let integer = SchemaKind::Integer(IntegerRange { min: n.as_i64(), max: n.as_i64() });
                let number = SchemaKind::Number(NumberRange { min: Some(f), max: Some(f) });
                // A number written as an integer is an Integer constant; one written with a
                // fraction or exponent (`-2.0`) reads as a Number, so it is a Number constant,
                // which accepts the integer of the same value too. Only `type: "integer"`
                // makes a whole `-2.0` an Integer constant.
                match (n.as_i64(), whole(f.get())) {
                    (Some(_), _) if allows(JsonType::Integer) => integer,
                    _ if allows(JsonType::Number) => number,
                    (None, Some(i)) if allows(JsonType::Integer) => {
                        SchemaKind::Integer(IntegerRange { min: Some(i), max: Some(i) })
                    }
                    _ => return self.mismatch(value, at),
                }
            }
            Value::String(s) if allows(JsonType::String) => {
                if !facets.length.contains(s.chars().count() as u64) {
                    self.invalid(at, format!("{value} is outside `minLength`..`maxLength`"));
                    return None;
                }
                let format = facets.format.clone();
                SchemaKind::String(StringSchema {
                    format,
                    values: Some([s.as_str().into()].into()),
                    ..Default::default()
                })
            }
            Value::Array(_) | Value::Object(_) => {
                self.invalid(at, "enumerated values must be null, booleans, numbers or strings");
                return None;
            }
            _ => return self.mismatch(value, at),
        };
        Some(self.arena.intern(Schema::public(kind)))
    }

    fn mismatch(&mut self, value: &Value, at: At<'_>) -> Option<SchemaId> {
        self.invalid(at, format!("{value} is not of a type that `type` allows"));
        None
    }
}

/// `f` as an integer when it is a whole number inside the 64-bit range.
fn whole(f: f64) -> Option<i64> {
    const TWO_TO_63: f64 = 9_223_372_036_854_775_808.0;
    (f.fract() == 0.0 && (-TWO_TO_63..TWO_TO_63).contains(&f)).then_some(f as i64)
}
