//! `enum` and `const`: the strings become one string enumeration, and each other value a constant
//! (an integer or number range of one value, a boolean constant, null), all checked against
//! `type` and bounds.

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

impl Facets {
    fn allows(&self, json_type: JsonType) -> bool {
        self.types.as_ref().is_none_or(|types| types.contains(&json_type))
    }
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
        // The strings become one enumeration at once, not a schema per value that the union
        // would merge: a registry's enumeration of many strings costs little more than its text.
        let (mut ids, mut strings) = (Vec::new(), Vec::new());
        for (at, value) in values {
            match value {
                Value::String(text) if facets.allows(JsonType::String) => {
                    if facets.length.contains(text.chars().count() as u64) {
                        strings.push(text.as_str().into());
                    } else {
                        self.invalid(at, format!("{value} is outside `minLength`..`maxLength`"));
                    }
                }
                _ => ids.extend(self.literal(value, at, &facets)),
            }
        }
        if !strings.is_empty() {
            let values = Some(strings.into());
            let string = StringSchema { format: facets.format.clone(), values, ..Default::default() };
            ids.push(self.arena.intern(Schema::public(SchemaKind::String(string))));
        }
        let normalized = self.arena.union(&ids, self.options.max_union_variants);
        self.widened(normalized, path)
    }

    /// The constant schema of `value`, a literal other than an allowed string.
    fn literal(&mut self, value: &Value, at: At<'_>, facets: &Facets) -> Option<SchemaId> {
        let kind = match value {
            Value::Null if facets.allows(JsonType::Null) => SchemaKind::Null,
            Value::Bool(b) if facets.allows(JsonType::Boolean) => SchemaKind::Boolean(Some(*b)),
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
                    (Some(_), _) if facets.allows(JsonType::Integer) => integer,
                    _ if facets.allows(JsonType::Number) => number,
                    (None, Some(i)) if facets.allows(JsonType::Integer) => {
                        SchemaKind::Integer(IntegerRange { min: Some(i), max: Some(i) })
                    }
                    _ => return self.mismatch(value, at),
                }
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::super::docs::SchemaDocs;
    use super::super::super::fingerprint::Fingerprint;
    use super::super::super::json_path::JsonPath;
    use super::super::{Document, Findings, ImportOptions, import_document};
    use super::*;
    use crate::schema::SchemaArena;

    /// Imports `schema` into a fresh arena: the schema's kind, its fingerprint and how many
    /// schemas were interned.
    fn imported(schema: &Value) -> (SchemaKind, Fingerprint, u32) {
        let (mut arena, mut issues, mut docs) = (SchemaArena::new(), Vec::new(), SchemaDocs::default());
        let path = JsonPath::root();
        let document = Document { json: schema, path: &path, name: "t" };
        let findings = Findings { issues: &mut issues, docs: &mut docs, docs_base: &path };
        let id = import_document(&mut arena, &ImportOptions::default(), document, findings);
        assert!(issues.is_empty(), "{issues:?}");
        (arena.kind(id).clone(), arena.fingerprint(id), arena.schema_count())
    }

    #[test]
    fn an_enumeration_of_many_strings_is_one_schema_not_one_per_value() {
        let values: Vec<String> = (0..10_000).rev().map(|i| format!("v{i:05}")).collect();
        let (kind, _, interned) = imported(&json!({ "enum": values }));
        let SchemaKind::String(string) = kind else { panic!("{kind:?}") };
        let values = string.values.expect("an enumeration");
        assert_eq!(values.len(), 10_000);
        assert!(values.windows(2).all(|pair| pair[0] < pair[1]), "sorted and distinct");
        assert!(interned < 10, "{interned} schemas interned");
    }

    #[test]
    fn strings_and_other_literals_make_the_same_union_in_any_order() {
        let (forward, fingerprint, _) = imported(&json!({ "enum": ["b", 1, "a", null, "b", true] }));
        let (_, same, _) = imported(&json!({ "enum": [true, "b", null, "a", 1] }));
        assert_eq!(fingerprint, same);
        let SchemaKind::Union(union) = forward else { panic!("{forward:?}") };
        assert_eq!(union.variants.len(), 4, "null, true, 1 and the strings a and b");
    }
}
