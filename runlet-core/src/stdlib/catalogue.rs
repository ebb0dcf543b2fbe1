//! The catalogue of intrinsics: every function's name, parameters, output schema and determinism,
//! which prelude includes it, and its registry descriptor built in a schema arena.

use std::fmt;
use std::sync::Arc;

use crate::schema::{
    CallSchema, ExecutionClass, ExecutionOrigin, IntegerRange, LengthRange, ListSchema, NumberRange, Param,
    QualifiedName, Schema, SchemaArena, SchemaDocs, SchemaId, SchemaKind, StringSchema, ToolDescriptor,
};

/// The `schema_version` of every intrinsic descriptor; it is part of the registry digest, so a
/// registry with the prelude never digests like one without it.
pub const PRELUDE_VERSION: &str = "runlet.prelude/1";

/// The namespaces the prelude owns, sorted. With a prelude, a host tool under one of them is a
/// registry error (`RL8301`).
pub const NAMESPACES: [&str; 7] = ["hash", "json", "list", "number", "regex", "text", "time"];

/// Which intrinsics a registry offers (spec §7.3: the prelude is optional).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Prelude {
    /// No intrinsics: every name is the host's.
    #[default]
    None,
    /// The deterministic intrinsics only: no clock, no randomness.
    Deterministic,
    /// Every intrinsic, including `time.now` and `number.random`.
    Standard,
}

impl Prelude {
    pub const ALL: [Prelude; 3] = [Prelude::None, Prelude::Deterministic, Prelude::Standard];

    /// The registry file spelling: `none`, `deterministic` or `standard`.
    pub fn as_str(self) -> &'static str {
        match self {
            Prelude::None => "none",
            Prelude::Deterministic => "deterministic",
            Prelude::Standard => "standard",
        }
    }

    pub fn parse(text: &str) -> Option<Prelude> {
        Prelude::ALL.into_iter().find(|p| p.as_str() == text)
    }

    /// Whether this prelude offers `intrinsic`.
    pub fn includes(self, intrinsic: Intrinsic) -> bool {
        match self {
            Prelude::None => false,
            Prelude::Deterministic => matches!(intrinsic, Intrinsic::Pure(_)),
            Prelude::Standard => true,
        }
    }

    /// The intrinsics this prelude offers, in name order.
    pub fn intrinsics(self) -> impl Iterator<Item = Intrinsic> {
        Intrinsic::all().filter(move |&i| self.includes(i))
    }
}

/// Declares a fieldless enum together with `ALL`, its variants in declaration order.
macro_rules! enum_with_all {
    ($(#[$meta:meta])* $vis:vis enum $name:ident { $($variant:ident,)+ }) => {
        $(#[$meta])* $vis enum $name { $($variant,)+ }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: [$name; [$($name::$variant),+].len()] = [$($name::$variant),+];
        }
    };
}

enum_with_all! {
/// A deterministic intrinsic: its result depends only on its arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PureFunction {
    TextLength,
    TextUpper,
    TextLower,
    TextTrim,
    TextSplit,
    TextJoin,
    TextReplace,
    TextStartsWith,
    TextEndsWith,
    TextSlice,
    RegexMatches,
    RegexFind,
    RegexFindAll,
    RegexCaptures,
    RegexReplace,
    RegexSplit,
    ListLength,
    ListSlice,
    ListReverse,
    ListSort,
    ListUnique,
    ListFlatten,
    ListRange,
    JsonParse,
    JsonStringify,
    NumberParse,
    NumberParseInteger,
    NumberFloor,
    NumberCeil,
    NumberRound,
    NumberFormat,
    TimeFormat,
    TimeParse,
    HashSha256,
    HashDigest,
}
}

enum_with_all! {
/// A nondeterministic intrinsic: the shell samples it once and the journal keeps the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum SampledFunction {
    TimeNow,
    NumberRandom,
}
}

/// One function of the prelude.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Intrinsic {
    Pure(PureFunction),
    Sampled(SampledFunction),
}

/// A schema shape of the catalogue, built into an arena by [`Type::build`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    Any,
    Boolean,
    Integer,
    Number,
    String,
    List(&'static Type),
    /// The type or `null`.
    Nullable(&'static Type),
}

/// How the analyzer types a call's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputRule {
    /// The declared output schema.
    Declared,
    /// A list of the first argument's element schema (slicing, reordering, deduplicating).
    SameElements,
    /// A list of the element schema of the first argument's elements (flattening one level).
    InnerElements,
}

/// One parameter of an intrinsic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamSpec {
    pub name: &'static str,
    pub ty: Type,
    pub optional: bool,
}

/// Everything the registry and the analyzer know about an intrinsic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signature {
    pub name: &'static str,
    pub params: &'static [ParamSpec],
    pub output: Type,
    pub rule: OutputRule,
    /// The parameter holding a regular expression, checked at compile time when it is a literal.
    pub pattern: Option<usize>,
    pub summary: &'static str,
}

const STRINGS: Type = Type::List(&Type::String);
const ANYS: Type = Type::List(&Type::Any);

const fn p(name: &'static str, ty: Type) -> ParamSpec {
    ParamSpec { name, ty, optional: false }
}

const fn opt(name: &'static str, ty: Type) -> ParamSpec {
    ParamSpec { name, ty, optional: true }
}

const fn sig(
    name: &'static str,
    params: &'static [ParamSpec],
    output: Type,
    summary: &'static str,
) -> Signature {
    Signature { name, params, output, rule: OutputRule::Declared, pattern: None, summary }
}

const fn regex_sig(
    name: &'static str,
    params: &'static [ParamSpec],
    output: Type,
    summary: &'static str,
) -> Signature {
    Signature { name, params, output, rule: OutputRule::Declared, pattern: Some(0), summary }
}

const fn list_sig(
    name: &'static str,
    params: &'static [ParamSpec],
    rule: OutputRule,
    summary: &'static str,
) -> Signature {
    Signature { name, params, output: ANYS, rule, pattern: None, summary }
}

const TEXT: ParamSpec = p("text", Type::String);
const PATTERN: ParamSpec = p("pattern", Type::String);
const ITEMS: ParamSpec = p("items", ANYS);
const START: ParamSpec = p("start", Type::Integer);
const END: ParamSpec = opt("end", Type::Integer);
const VALUE: ParamSpec = p("value", Type::Number);

impl PureFunction {
    pub fn signature(self) -> Signature {
        use PureFunction::*;
        match self {
            TextLength => sig("text.length", &[TEXT], Type::Integer, "The number of Unicode scalar values."),
            TextUpper => sig("text.upper", &[TEXT], Type::String, "Unicode upper case, locale-independent."),
            TextLower => sig("text.lower", &[TEXT], Type::String, "Unicode lower case, locale-independent."),
            TextTrim => sig("text.trim", &[TEXT], Type::String, "Without leading and trailing white space."),
            TextSplit => sig(
                "text.split",
                const { &[TEXT, p("separator", Type::String)] },
                STRINGS,
                "The parts between occurrences of a separator.",
            ),
            TextJoin => sig(
                "text.join",
                const { &[p("parts", STRINGS), p("separator", Type::String)] },
                Type::String,
                "The parts with a separator between them.",
            ),
            TextReplace => sig(
                "text.replace",
                const { &[TEXT, p("old", Type::String), p("new", Type::String)] },
                Type::String,
                "Every occurrence of a text replaced.",
            ),
            TextStartsWith => sig(
                "text.starts_with",
                const { &[TEXT, p("prefix", Type::String)] },
                Type::Boolean,
                "Whether the text begins with a prefix.",
            ),
            TextEndsWith => sig(
                "text.ends_with",
                const { &[TEXT, p("suffix", Type::String)] },
                Type::Boolean,
                "Whether the text ends with a suffix.",
            ),
            TextSlice => sig(
                "text.slice",
                &[TEXT, START, END],
                Type::String,
                "The scalar values from start up to end.",
            ),
            RegexMatches => regex_sig(
                "regex.matches",
                &[PATTERN, TEXT],
                Type::Boolean,
                "Whether the pattern matches anywhere in the text.",
            ),
            RegexFind => regex_sig(
                "regex.find",
                &[PATTERN, TEXT],
                Type::Nullable(&Type::String),
                "The first match, or null.",
            ),
            RegexFindAll => regex_sig(
                "regex.find_all",
                &[PATTERN, TEXT],
                STRINGS,
                "Every non-overlapping match, in order.",
            ),
            RegexCaptures => regex_sig(
                "regex.captures",
                &[PATTERN, TEXT],
                Type::Nullable(&Type::List(&Type::Nullable(&Type::String))),
                "The groups of the first match, or null.",
            ),
            RegexReplace => regex_sig(
                "regex.replace",
                const { &[PATTERN, TEXT, p("replacement", Type::String)] },
                Type::String,
                "Every match replaced, with `$1` and `${name}` expanded.",
            ),
            RegexSplit => regex_sig(
                "regex.split",
                &[PATTERN, TEXT],
                STRINGS,
                "The parts between matches of the pattern.",
            ),
            ListLength => sig("list.length", &[ITEMS], Type::Integer, "The number of elements."),
            ListSlice => list_sig(
                "list.slice",
                &[ITEMS, START, END],
                OutputRule::SameElements,
                "The elements from start up to end.",
            ),
            ListReverse => {
                list_sig("list.reverse", &[ITEMS], OutputRule::SameElements, "The elements in reverse order.")
            }
            ListSort => list_sig(
                "list.sort",
                &[ITEMS],
                OutputRule::SameElements,
                "Numbers or strings in ascending order.",
            ),
            ListUnique => list_sig(
                "list.unique",
                &[ITEMS],
                OutputRule::SameElements,
                "The first occurrence of each distinct element.",
            ),
            ListFlatten => list_sig(
                "list.flatten",
                const { &[p("lists", Type::List(&ANYS))] },
                OutputRule::InnerElements,
                "The elements of each list, in order.",
            ),
            ListRange => sig(
                "list.range",
                const { &[p("start", Type::Integer), p("end", Type::Integer)] },
                Type::List(&Type::Integer),
                "The integers from start up to end.",
            ),
            JsonParse => sig("json.parse", &[TEXT], Type::Any, "The value a strict JSON text denotes."),
            JsonStringify => sig(
                "json.stringify",
                const { &[p("value", Type::Any)] },
                Type::String,
                "Canonical compact presentation JSON.",
            ),
            NumberParse => {
                sig("number.parse", &[TEXT], Type::Number, "The Number a JSON number text denotes.")
            }
            NumberParseInteger => {
                sig("number.parse_integer", &[TEXT], Type::Integer, "The Integer a decimal text denotes.")
            }
            NumberFloor => sig("number.floor", &[VALUE], Type::Integer, "The greatest Integer not above."),
            NumberCeil => sig("number.ceil", &[VALUE], Type::Integer, "The least Integer not below."),
            NumberRound => {
                sig("number.round", &[VALUE], Type::Integer, "The nearest Integer, halves away from zero.")
            }
            NumberFormat => sig(
                "number.format",
                const { &[VALUE, p("decimals", Type::Integer)] },
                Type::String,
                "Fixed-point text with a number of decimals.",
            ),
            TimeFormat => sig(
                "time.format",
                const { &[p("millis", Type::Integer)] },
                Type::String,
                "RFC 3339 UTC text of a Unix time in milliseconds.",
            ),
            TimeParse => {
                sig("time.parse", &[TEXT], Type::Integer, "The Unix time in milliseconds of RFC 3339 text.")
            }
            HashSha256 => {
                sig("hash.sha256", &[TEXT], Type::String, "Lowercase hex SHA-256 of the text's UTF-8 bytes.")
            }
            HashDigest => sig(
                "hash.digest",
                const { &[p("value", Type::Any)] },
                Type::String,
                "`sha256:` and the hex SHA-256 of the value's RCVE bytes.",
            ),
        }
    }
}

impl SampledFunction {
    pub fn signature(self) -> Signature {
        match self {
            SampledFunction::TimeNow => {
                sig("time.now", &[], Type::Integer, "The wall clock as Unix time in milliseconds.")
            }
            SampledFunction::NumberRandom => {
                sig("number.random", &[], Type::Number, "A uniformly random Number in [0, 1).")
            }
        }
    }
}

impl Intrinsic {
    /// Every intrinsic, in name order.
    pub fn all() -> impl Iterator<Item = Intrinsic> {
        let mut all: Vec<Intrinsic> = PureFunction::ALL
            .into_iter()
            .map(Intrinsic::Pure)
            .chain(SampledFunction::ALL.into_iter().map(Intrinsic::Sampled))
            .collect();
        all.sort_by_key(|i| i.name());
        all.into_iter()
    }

    /// The intrinsic with the dotted name `name`.
    pub fn named(name: &str) -> Option<Intrinsic> {
        Intrinsic::all().find(|i| i.name() == name)
    }

    pub fn signature(self) -> Signature {
        match self {
            Intrinsic::Pure(function) => function.signature(),
            Intrinsic::Sampled(function) => function.signature(),
        }
    }

    pub fn name(self) -> &'static str {
        self.signature().name
    }

    /// The registry descriptor of this intrinsic, its schemas interned in `arena`.
    pub fn descriptor(self, arena: &mut SchemaArena) -> ToolDescriptor {
        let signature = self.signature();
        let params = signature
            .params
            .iter()
            .map(|param| Param {
                name: param.name.into(),
                schema: param.ty.build(arena),
                optional: param.optional,
                description: None,
            })
            .collect();
        ToolDescriptor {
            name: QualifiedName::parse(signature.name).expect("intrinsic names are qualified names"),
            title: None,
            description: signature.summary.to_owned(),
            input: CallSchema { positional: Some(params), object: None },
            output: signature.output.build(arena),
            errors: Vec::new(),
            execution: ExecutionClass::Pure,
            execution_origin: ExecutionOrigin::Declared,
            schema_version: Arc::from(PRELUDE_VERSION),
            max_concurrency: None,
            resource_group: None,
            mcp: None,
            docs: SchemaDocs::new(),
        }
    }
}

impl fmt::Display for Intrinsic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Type {
    /// The schema of this type in `arena`.
    pub fn build(self, arena: &mut SchemaArena) -> SchemaId {
        let kind = match self {
            Type::Any => SchemaKind::Any,
            Type::Boolean => SchemaKind::Boolean(None),
            Type::Integer => SchemaKind::Integer(IntegerRange::default()),
            Type::Number => SchemaKind::Number(NumberRange::default()),
            Type::String => SchemaKind::String(StringSchema::default()),
            Type::List(items) => {
                let items = items.build(arena);
                SchemaKind::List(ListSchema { items, length: LengthRange::default() })
            }
            Type::Nullable(inner) => {
                let inner = inner.build(arena);
                let null = arena.intern(Schema::public(SchemaKind::Null));
                return arena.union(&[inner, null], usize::MAX).schema;
            }
        };
        arena.intern(Schema::public(kind))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_sorted_and_inside_the_prelude_namespaces() {
        let names: Vec<&str> = Intrinsic::all().map(Intrinsic::name).collect();
        assert!(names.windows(2).all(|w| w[0] < w[1]), "{names:?}");
        for name in &names {
            let root = name.split('.').next().unwrap_or_default();
            assert!(NAMESPACES.contains(&root), "{name} is outside the prelude namespaces");
            assert_eq!(Intrinsic::named(name).map(Intrinsic::name), Some(*name));
        }
        assert!(NAMESPACES.iter().all(|ns| names.iter().any(|n| n.starts_with(&format!("{ns}.")))));
    }

    #[test]
    fn the_deterministic_prelude_leaves_out_exactly_the_sampled_functions() {
        let standard: Vec<Intrinsic> = Prelude::Standard.intrinsics().collect();
        let deterministic: Vec<Intrinsic> = Prelude::Deterministic.intrinsics().collect();
        assert_eq!(standard.len(), PureFunction::ALL.len() + SampledFunction::ALL.len());
        assert_eq!(deterministic.len(), PureFunction::ALL.len());
        assert!(deterministic.iter().all(|i| matches!(i, Intrinsic::Pure(_))));
        assert_eq!(Prelude::None.intrinsics().count(), 0);
    }

    #[test]
    fn regex_functions_and_only_they_name_a_pattern_parameter() {
        for intrinsic in Intrinsic::all() {
            let signature = intrinsic.signature();
            let is_regex = signature.name.starts_with("regex.");
            assert_eq!(signature.pattern.is_some(), is_regex, "{}", signature.name);
            if let Some(index) = signature.pattern {
                assert_eq!(signature.params[index].name, "pattern");
            }
        }
    }
}
