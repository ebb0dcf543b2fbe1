//! JSON Schema import (INTERFACES.md §2): one schema document (an `inputSchema`, `outputSchema`,
//! parameter or host input schema) into normalized arena nodes, reporting every keyword it drops.

mod alternatives;
mod keywords;
mod literals;
mod references;
mod typed;

use std::collections::{BTreeMap, HashSet};

use serde_json::{Map, Value};

use crate::diag::codes;

use super::arena::SchemaArena;
use super::docs::{SchemaDoc, SchemaDocs};
use super::issue::RegistryIssue;
use super::json_path::{At, JsonPath};
use super::model::{DefId, SchemaId};
use super::union::Normalized;
use crate::value::Sensitivity;
use keywords::{Annotation, Keywords, Mapped};

/// What to do with a schema keyword outside the supported subset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UnsupportedKeywords {
    /// Every unsupported keyword is an error (`RL8008`).
    #[default]
    Reject,
    /// A keyword whose absence can only widen the schema (such as `pattern` or
    /// `exclusiveMinimum`) is dropped with a warning (`RL8009`): Runlet then checks less than the
    /// tool does. Keywords that change what their siblings mean stay errors.
    DropConstraints,
}

/// Limits and choices for schema import.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImportOptions {
    pub unsupported_keywords: UnsupportedKeywords,
    /// More distinct union variants than this widen to `Any` with a warning (`RL8013`).
    pub max_union_variants: usize,
    /// How deeply schemas may nest, counting references followed.
    pub max_depth: usize,
}

impl Default for ImportOptions {
    fn default() -> ImportOptions {
        ImportOptions {
            unsupported_keywords: UnsupportedKeywords::Reject,
            max_union_variants: 64,
            max_depth: 64,
        }
    }
}

/// One schema document: its JSON, where it is in the registry file, and the registry-unique
/// name its definitions are keyed by (such as `crm.customer/outputSchema`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Document<'a> {
    pub json: &'a Value,
    pub path: &'a JsonPath,
    pub name: &'a str,
}

/// Where findings and documentation of an import go.
#[derive(Debug)]
pub(crate) struct Findings<'a> {
    pub issues: &'a mut Vec<RegistryIssue>,
    pub docs: &'a mut SchemaDocs,
    /// Documentation keys are paths relative to this one.
    pub docs_base: &'a JsonPath,
}

/// Imports `document` into `arena`. Every problem is reported to `findings`; the schema of a
/// position with an error is `Any`, so import always finishes and reports everything at once.
pub(crate) fn import_document(
    arena: &mut SchemaArena,
    options: &ImportOptions,
    document: Document<'_>,
    findings: Findings<'_>,
) -> SchemaId {
    let mut importer = Importer {
        arena,
        options,
        findings,
        document,
        targets: BTreeMap::new(),
        pending_discriminators: Vec::new(),
        reported: HashSet::new(),
        depth: 0,
    };
    let id = importer.target(document.json, JsonPath::root());
    importer.check_pending_discriminators();
    id
}

/// Whether a schema is a property's (which may carry aliases) or anything else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Property,
    Other,
}

/// The import of a `$ref` target: under way (with the definition reserved once something
/// refers back to it) or finished.
#[derive(Debug, Clone, Copy)]
enum Target {
    InProgress(Option<DefId>),
    Done(SchemaId),
}

struct Importer<'a, 'f> {
    arena: &'a mut SchemaArena,
    options: &'a ImportOptions,
    findings: Findings<'f>,
    document: Document<'a>,
    /// `$ref` targets by path relative to the document.
    targets: BTreeMap<JsonPath, Target>,
    /// Unions whose named discriminator could only be checked once recursion was resolved.
    pending_discriminators: Vec<(SchemaId, String, JsonPath)>,
    /// Findings already reported, so a position imported twice (by position and by reference)
    /// reports once.
    reported: HashSet<(JsonPath, String)>,
    depth: usize,
}

impl<'a> Importer<'a, '_> {
    fn report(&mut self, issue: RegistryIssue) {
        if self.reported.insert((issue.path.clone(), issue.message.clone())) {
            self.findings.issues.push(issue);
        }
    }

    fn invalid(&mut self, path: impl Into<JsonPath>, message: impl Into<String>) {
        self.report(RegistryIssue::error(codes::INVALID_SCHEMA, path, message));
    }

    /// Reports a union widened to `Any` and returns the schema.
    fn widened(&mut self, normalized: Normalized, path: &At<'_>) -> SchemaId {
        if let Some(loss) = normalized.widened {
            let message = format!(
                "this union has {} distinct variants, more than the limit of {}, and is treated as any value",
                loss.variants, loss.limit
            );
            self.report(
                RegistryIssue::warning(codes::UNION_WIDENED_TO_ANY, *path, message)
                    .with_help("split the schema or raise the registry's union variant limit"),
            );
        }
        normalized.schema
    }

    /// The registry path of a path relative to the document.
    fn absolute(&self, relative: &JsonPath) -> JsonPath {
        self.document.path.join(relative)
    }

    fn schema(&mut self, json: &'a Value, path: &At<'_>, place: Place) -> SchemaId {
        if self.depth >= self.options.max_depth {
            let message = format!("schemas nest more than {} levels deep here", self.options.max_depth);
            self.report(RegistryIssue::error(codes::SCHEMA_TOO_DEEP, *path, message));
            return self.arena.any();
        }
        self.depth += 1;
        let id = match json {
            Value::Bool(true) => self.arena.any(),
            Value::Bool(false) => {
                self.invalid(*path, "the schema `false` accepts no value");
                self.arena.any()
            }
            Value::Object(object) => self.object_schema(object, path, place),
            _ => {
                self.invalid(*path, "a schema must be a JSON object (or `true`)");
                self.arena.any()
            }
        };
        self.depth -= 1;
        id
    }

    fn object_schema(&mut self, object: &'a Map<String, Value>, path: &At<'_>, place: Place) -> SchemaId {
        let keywords = Keywords::sort(object);
        self.report_unsupported(&keywords, path);
        self.record_docs(&keywords, path);
        if let (Place::Other, Some(_)) = (place, keywords.get(Mapped::RunletAliases)) {
            self.invalid(path.key("x-runlet-aliases"), "only object properties can have `x-runlet-aliases`");
        }
        let sensitivity = self.sensitivity(&keywords, path);
        if let Some(definitions) = keywords.get(Mapped::Defs) {
            self.definitions(definitions, &path.key("$defs"));
        }
        let id = if let Some(reference) = keywords.get(Mapped::Ref) {
            self.reference(reference, &keywords, path)
        } else if keywords.get(Mapped::AnyOf).or(keywords.get(Mapped::OneOf)).is_some() {
            self.alternatives(&keywords, path)
        } else if keywords.get(Mapped::Enum).or(keywords.get(Mapped::Const)).is_some() {
            self.literals(&keywords, path)
        } else {
            self.typed(&keywords, path)
        };
        self.arena.with_sensitivity(id, sensitivity)
    }

    fn report_unsupported(&mut self, keywords: &Keywords<'_>, path: &At<'_>) {
        for &(key, unsupported) in &keywords.unsupported {
            self.unsupported(key, path.key(key), unsupported.droppable, unsupported.help);
        }
    }

    /// Reports the keyword `key` at `at` as outside the subset: dropped with a warning when the
    /// host allows it and dropping can only widen the schema (`droppable`), else an error.
    fn unsupported(&mut self, key: &str, at: At<'_>, droppable: bool, help: &str) {
        let issue = match (self.options.unsupported_keywords, droppable) {
            (UnsupportedKeywords::DropConstraints, true) => RegistryIssue::warning(
                codes::SCHEMA_KEYWORD_DROPPED,
                at,
                format!("`{key}` is not checked by Runlet and was dropped; the tool must check it"),
            ),
            _ => RegistryIssue::error(
                codes::UNSUPPORTED_SCHEMA_KEYWORD,
                at,
                format!("unsupported schema keyword `{key}`"),
            ),
        };
        self.report(issue.with_help(help));
    }

    fn record_docs(&mut self, keywords: &Keywords<'_>, path: &At<'_>) {
        let mut doc = SchemaDoc::default();
        for &(annotation, key, value) in &keywords.annotations {
            let ok = match annotation {
                Annotation::Title => value.as_str().map(|t| doc.title = Some(t.to_owned())).is_some(),
                Annotation::Description => {
                    value.as_str().map(|d| doc.description = Some(d.to_owned())).is_some()
                }
                Annotation::Examples => value
                    .as_array()
                    .map(|e| doc.examples = e.iter().map(Value::to_string).collect())
                    .is_some(),
                Annotation::Default => {
                    doc.default = Some(value.to_string());
                    true
                }
                Annotation::Deprecated => value.as_bool().map(|d| doc.deprecated = d).is_some(),
                Annotation::ReadOnly => value.as_bool().map(|r| doc.read_only = r).is_some(),
                Annotation::WriteOnly => value.as_bool().map(|w| doc.write_only = w).is_some(),
                Annotation::Comment | Annotation::Dialect => value.is_string(),
            };
            if !ok {
                self.invalid(path.key(key), format!("`{key}` must be {}", annotation.expected()));
            }
        }
        if !doc.is_empty() {
            let path = JsonPath::from(*path);
            let key = path.strip_prefix(self.findings.docs_base).unwrap_or(path);
            self.findings.docs.insert(key.to_string(), doc);
        }
    }

    fn sensitivity(&mut self, keywords: &Keywords<'_>, path: &At<'_>) -> Sensitivity {
        let Some(value) = keywords.get(Mapped::RunletSensitivity) else {
            return Sensitivity::Public;
        };
        match value.as_str().and_then(Sensitivity::parse) {
            Some(sensitivity) => sensitivity,
            None => {
                let message = format!(
                    "`x-runlet-sensitivity` must be \"public\", \"sensitive\" or \"secret\", not {value}"
                );
                let issue =
                    RegistryIssue::error(codes::INVALID_SCHEMA, path.key("x-runlet-sensitivity"), message)
                        .with_candidates(["public", "sensitive", "secret"]);
                self.report(issue);
                Sensitivity::Public
            }
        }
    }

    /// Reports the mapped keywords beside `anchor` that `allowed` rejects, with `help` for each.
    fn check_siblings(
        &mut self,
        keywords: &Keywords<'_>,
        path: &At<'_>,
        anchor: &str,
        allowed: impl Fn(Mapped) -> bool,
        help: impl Fn(&str) -> String,
    ) {
        let code = if anchor == "$ref" { codes::BAD_SCHEMA_REF } else { codes::UNSUPPORTED_SCHEMA_KEYWORD };
        for (mapped, key, _) in keywords.mapped() {
            if !mapped.is_structural_only() && !allowed(mapped) {
                let message = format!("`{key}` beside `{anchor}` is not supported");
                self.report(RegistryIssue::error(code, path.key(key), message).with_help(help(key)));
            }
        }
    }

    fn check_pending_discriminators(&mut self) {
        for (union, property, path) in std::mem::take(&mut self.pending_discriminators) {
            let variants = match self.arena.kind(union) {
                super::model::SchemaKind::Union(u) => u.variants.clone(),
                _ => continue,
            };
            if let Err(error) = super::discriminator::check(self.arena, &variants, &property) {
                let message = format!("`{property}` does not discriminate these variants: {error}");
                self.report(RegistryIssue::error(codes::INVALID_DISCRIMINATOR, path, message));
            }
        }
    }
}

impl Annotation {
    fn expected(self) -> &'static str {
        match self {
            Annotation::Title | Annotation::Description | Annotation::Comment | Annotation::Dialect => {
                "a string"
            }
            Annotation::Examples => "an array",
            Annotation::Default => "a value",
            Annotation::Deprecated | Annotation::ReadOnly | Annotation::WriteOnly => "true or false",
        }
    }
}
