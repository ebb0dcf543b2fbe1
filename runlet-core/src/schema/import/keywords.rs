//! Which JSON Schema keywords a registry may use: the mapped subset of INTERFACES.md §2, the
//! documentation-only annotations accepted as such, and every other keyword with its help text.

use serde_json::{Map, Value};

/// A keyword Runlet maps onto its vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mapped {
    Type,
    Properties,
    Required,
    AdditionalProperties,
    PropertyNames,
    Items,
    Enum,
    Const,
    Minimum,
    Maximum,
    ExclusiveMinimum,
    ExclusiveMaximum,
    MinLength,
    MaxLength,
    MinItems,
    MaxItems,
    Format,
    AnyOf,
    OneOf,
    Discriminator,
    Ref,
    Defs,
    RunletType,
    RunletSensitivity,
    RunletAliases,
}

/// The JSON type a facet keyword constrains (a schema without `type` takes it from its facets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Family {
    Number,
    String,
    Array,
    Object,
}

impl Mapped {
    /// Every mapped keyword, in declaration order (`ALL[m as usize] == m`).
    const ALL: [Mapped; 25] = [
        Mapped::Type,
        Mapped::Properties,
        Mapped::Required,
        Mapped::AdditionalProperties,
        Mapped::PropertyNames,
        Mapped::Items,
        Mapped::Enum,
        Mapped::Const,
        Mapped::Minimum,
        Mapped::Maximum,
        Mapped::ExclusiveMinimum,
        Mapped::ExclusiveMaximum,
        Mapped::MinLength,
        Mapped::MaxLength,
        Mapped::MinItems,
        Mapped::MaxItems,
        Mapped::Format,
        Mapped::AnyOf,
        Mapped::OneOf,
        Mapped::Discriminator,
        Mapped::Ref,
        Mapped::Defs,
        Mapped::RunletType,
        Mapped::RunletSensitivity,
        Mapped::RunletAliases,
    ];

    /// The kind of value the keyword constrains. `format` has none: it is information, allowed
    /// beside any `type` (`{"type": "integer", "format": "int32"}`), though alone it means a string.
    pub(super) fn family(self) -> Option<Family> {
        match self {
            Mapped::Minimum | Mapped::Maximum | Mapped::ExclusiveMinimum | Mapped::ExclusiveMaximum => {
                Some(Family::Number)
            }
            Mapped::MinLength | Mapped::MaxLength => Some(Family::String),
            Mapped::Items | Mapped::MinItems | Mapped::MaxItems => Some(Family::Array),
            Mapped::Properties | Mapped::Required | Mapped::AdditionalProperties | Mapped::PropertyNames => {
                Some(Family::Object)
            }
            _ => None,
        }
    }

    /// Keywords that only say where things are or label them, allowed beside `$ref`/`anyOf`.
    pub(super) fn is_structural_only(self) -> bool {
        matches!(self, Mapped::Defs | Mapped::RunletSensitivity | Mapped::RunletAliases)
    }
}

/// A JSON Schema annotation that never changes which values are valid: accepted and kept as
/// documentation (`$schema` and `$comment` are accepted and not kept).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Annotation {
    Description,
    Title,
    Examples,
    Default,
    Deprecated,
    ReadOnly,
    WriteOnly,
    Comment,
    Dialect,
}

/// A keyword outside the subset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Unsupported {
    /// Whether leaving the keyword out can only make the schema accept more values, so a host may
    /// choose to drop it with a warning; otherwise dropping would change what its siblings mean.
    pub droppable: bool,
    pub help: &'static str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Keyword {
    Mapped(Mapped),
    Annotation(Annotation),
    Unsupported(Unsupported),
}

const GENERIC_HELP: &str =
    "Runlet's schema vocabulary cannot express this keyword (the supported subset is in docs/registry.md)";

pub(super) fn classify(key: &str) -> Keyword {
    use Keyword::{Annotation as A, Mapped as M};
    let unsupported = |droppable, help| Keyword::Unsupported(Unsupported { droppable, help });
    match key {
        "type" => M(Mapped::Type),
        "properties" => M(Mapped::Properties),
        "required" => M(Mapped::Required),
        "additionalProperties" => M(Mapped::AdditionalProperties),
        "items" => M(Mapped::Items),
        "enum" => M(Mapped::Enum),
        "const" => M(Mapped::Const),
        "minimum" => M(Mapped::Minimum),
        "maximum" => M(Mapped::Maximum),
        "exclusiveMinimum" => M(Mapped::ExclusiveMinimum),
        "exclusiveMaximum" => M(Mapped::ExclusiveMaximum),
        "propertyNames" => M(Mapped::PropertyNames),
        "minLength" => M(Mapped::MinLength),
        "maxLength" => M(Mapped::MaxLength),
        "minItems" => M(Mapped::MinItems),
        "maxItems" => M(Mapped::MaxItems),
        "format" => M(Mapped::Format),
        "anyOf" => M(Mapped::AnyOf),
        "oneOf" => M(Mapped::OneOf),
        "discriminator" => M(Mapped::Discriminator),
        "$ref" => M(Mapped::Ref),
        "$defs" => M(Mapped::Defs),
        "x-runlet-type" => M(Mapped::RunletType),
        "x-runlet-sensitivity" => M(Mapped::RunletSensitivity),
        "x-runlet-aliases" => M(Mapped::RunletAliases),
        "description" => A(Annotation::Description),
        "title" => A(Annotation::Title),
        "examples" => A(Annotation::Examples),
        "default" => A(Annotation::Default),
        "deprecated" => A(Annotation::Deprecated),
        "readOnly" => A(Annotation::ReadOnly),
        "writeOnly" => A(Annotation::WriteOnly),
        "$comment" => A(Annotation::Comment),
        "$schema" => A(Annotation::Dialect),
        "pattern" => {
            unsupported(true, "Runlet does not check regular expressions; the tool must validate the pattern")
        }
        "multipleOf" | "uniqueItems" | "minProperties" | "maxProperties" | "contains" | "minContains"
        | "maxContains" | "dependentRequired" | "dependentSchemas" | "dependencies" | "if" | "then"
        | "else" | "not" | "contentEncoding" | "contentMediaType" | "contentSchema" => {
            unsupported(true, GENERIC_HELP)
        }
        "allOf" => unsupported(true, "merge the subschemas into one schema"),
        "example" => unsupported(true, "write `examples`, an array of examples"),
        "nullable" => unsupported(
            false,
            "write `\"type\": [\"…\", \"null\"]` or an `anyOf` with `{\"type\": \"null\"}`",
        ),
        "definitions" => unsupported(false, "rename `definitions` to `$defs` and refer to `#/$defs/…`"),
        "patternProperties" => {
            unsupported(false, "describe the other properties with `additionalProperties`")
        }
        "prefixItems" | "additionalItems" => {
            unsupported(false, "tuples are not in Runlet's vocabulary: use a list or an object")
        }
        "unevaluatedProperties" | "unevaluatedItems" => {
            unsupported(false, "use `additionalProperties` or `items` on the schema itself")
        }
        "$id" | "$anchor" | "$dynamicRef" | "$dynamicAnchor" | "$recursiveRef" | "$recursiveAnchor"
        | "$vocabulary" => {
            unsupported(false, "refer to definitions with local references such as `#/$defs/Name`")
        }
        _ if key.starts_with("x-runlet-") => unsupported(
            false,
            "the Runlet extensions are `x-runlet-type`, `x-runlet-sensitivity` and `x-runlet-aliases`",
        ),
        _ => unsupported(true, GENERIC_HELP),
    }
}

/// The keywords of one schema object, sorted into what the importer reads.
#[derive(Debug, Default)]
pub(super) struct Keywords<'a> {
    /// Mapped keywords with their spelling (for messages), by `Mapped as usize`.
    mapped: [Option<(&'a str, &'a Value)>; Mapped::ALL.len()],
    pub annotations: Vec<(Annotation, &'a str, &'a Value)>,
    pub unsupported: Vec<(&'a str, Unsupported)>,
}

impl<'a> Keywords<'a> {
    pub(super) fn sort(object: &'a Map<String, Value>) -> Keywords<'a> {
        let mut keywords = Keywords::default();
        for (key, value) in object {
            match classify(key) {
                Keyword::Mapped(m) => keywords.mapped[m as usize] = Some((key, value)),
                Keyword::Annotation(a) => keywords.annotations.push((a, key, value)),
                Keyword::Unsupported(u) => keywords.unsupported.push((key, u)),
            }
        }
        keywords
    }

    pub(super) fn get(&self, keyword: Mapped) -> Option<&'a Value> {
        self.mapped[keyword as usize].map(|(_, value)| value)
    }

    /// The mapped keywords present, with their spelling.
    pub(super) fn mapped(&self) -> impl Iterator<Item = (Mapped, &'a str, &'a Value)> + '_ {
        Mapped::ALL
            .iter()
            .zip(&self.mapped)
            .filter_map(|(&m, present)| present.map(|(key, value)| (m, key, value)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapped_keywords_index_their_table() {
        for (i, mapped) in Mapped::ALL.iter().enumerate() {
            assert_eq!(*mapped as usize, i);
        }
    }
}
