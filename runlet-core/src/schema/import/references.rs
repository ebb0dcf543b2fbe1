//! Local references: `$ref` to `#` pointers inside the same document, `$defs`, and recursion,
//! which must pass through a definition and be guarded by a list, object or map.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::diag::{codes, nearest};

use super::super::arena::SchemaArena;
use super::super::issue::RegistryIssue;
use super::super::json_path::{At, JsonPath, PathSegment};
use super::super::model::{DefId, Schema, SchemaId, SchemaKind};
use super::keywords::{Keywords, Mapped};
use super::{Importer, Place, Target};

impl<'a> Importer<'a, '_> {
    /// The schema a `$ref` names.
    pub(super) fn reference(
        &mut self,
        reference: &'a Value,
        keywords: &Keywords<'a>,
        path: &At<'_>,
    ) -> SchemaId {
        let help = |key: &str| format!("move `{key}` into the schema that `$ref` names");
        self.check_siblings(keywords, path, "$ref", |m| m == Mapped::Ref, help);
        let at = path.key("$ref");
        let Some(text) = reference.as_str() else {
            self.bad_reference(at, "`$ref` must be a string".into(), None);
            return self.arena.any();
        };
        let Some(fragment) = text.strip_prefix('#') else {
            let help = "copy the referenced schema into `$defs` and refer to it as `#/$defs/Name`";
            self.bad_reference(
                at,
                format!("`{text}` is not in this schema: only `#…` references are supported"),
                Some(help),
            );
            return self.arena.any();
        };
        let Some(target) = percent_decode(fragment).and_then(|pointer| JsonPath::from_pointer(&pointer))
        else {
            self.bad_reference(at, format!("`{text}` is not a JSON pointer such as `#/$defs/Name`"), None);
            return self.arena.any();
        };
        let Some(json) = target.resolve(self.document.json) else {
            let issue = RegistryIssue::error(
                codes::BAD_SCHEMA_REF,
                at,
                format!("`{text}` points at nothing in this schema"),
            )
            .with_candidates(self.nearest_definitions(&target));
            self.report(issue);
            return self.arena.any();
        };
        self.target(json, target)
    }

    fn bad_reference(&mut self, path: At<'_>, message: String, help: Option<&str>) {
        let mut issue = RegistryIssue::error(codes::BAD_SCHEMA_REF, path, message);
        issue.help.extend(help.map(str::to_owned));
        self.report(issue);
    }

    /// The document's own definitions closest to the last segment of `target`, as references.
    fn nearest_definitions(&self, target: &JsonPath) -> Vec<String> {
        let wanted = match target.segments().last() {
            Some(PathSegment::Key(key)) => key.clone(),
            Some(PathSegment::Index(i)) => i.to_string(),
            None => String::new(),
        };
        let Some(definitions) = self.document.json.get("$defs").and_then(Value::as_object) else {
            return Vec::new();
        };
        let mut names: Vec<(usize, &String)> =
            definitions.keys().filter_map(|name| Some((nearest::distance(name, &wanted)?, name))).collect();
        names.sort();
        names
            .into_iter()
            .take(3)
            .map(|(_, name)| format!("#{}", JsonPath::root().key("$defs").key(name)))
            .collect()
    }

    /// Imports every definition of a `$defs` object, used or not, so each is checked.
    pub(super) fn definitions(&mut self, definitions: &'a Value, path: &At<'_>) {
        let Some(definitions) = definitions.as_object() else {
            self.invalid(*path, "`$defs` must be an object of named schemas");
            return;
        };
        // Sorted, so which definitions become references never depends on key order.
        let mut definitions: Vec<(&String, &'a Value)> = definitions.iter().collect();
        definitions.sort_by_key(|(name, _)| *name);
        for (name, json) in definitions {
            if let Some(relative) = JsonPath::from(path.key(name)).strip_prefix(self.document.path) {
                self.target(json, relative);
            }
        }
    }

    /// The schema at `relative` (a path inside the document), imported once. A target reached
    /// again while it is being imported becomes a definition, and its uses `Ref` nodes.
    pub(super) fn target(&mut self, json: &'a Value, relative: JsonPath) -> SchemaId {
        match self.targets.get(&relative).copied() {
            Some(Target::Done(id)) => return id,
            Some(Target::InProgress(def)) => {
                let def = def.unwrap_or_else(|| {
                    let key = format!("{}#{}", self.document.name, relative);
                    let def = self.arena.define(key, definition_name(self.document.name, &relative));
                    self.targets.insert(relative.clone(), Target::InProgress(Some(def)));
                    def
                });
                return self.arena.intern(Schema::public(SchemaKind::Ref(def)));
            }
            None => {}
        }
        self.targets.insert(relative.clone(), Target::InProgress(None));
        let path = self.absolute(&relative);
        let mut id = self.schema(json, &At::Path(&path), Place::Other);
        if let Some(Target::InProgress(Some(def))) = self.targets.get(&relative).copied() {
            if reaches_unguarded(self.arena, id, def) {
                let message = "this schema refers to itself without a list, object or map in between";
                let help =
                    "a recursive schema must nest itself inside a property, a list item or a map value";
                self.report(RegistryIssue::error(codes::BAD_SCHEMA_REF, path, message).with_help(help));
                id = self.arena.any();
            }
            self.arena.set_body(def, id);
            id = self.arena.intern(Schema::public(SchemaKind::Ref(def)));
        }
        self.targets.insert(relative, Target::Done(id));
        id
    }
}

/// The short name of a definition: the last segment of its path, or the document's name.
fn definition_name(document: &str, relative: &JsonPath) -> String {
    match relative.segments().last() {
        Some(PathSegment::Key(key)) => key.clone(),
        Some(PathSegment::Index(i)) => i.to_string(),
        None => document.to_owned(),
    }
}

/// Whether `from` reaches a use of `def` through unions and references alone.
fn reaches_unguarded(arena: &SchemaArena, from: SchemaId, def: DefId) -> bool {
    let mut stack = vec![from];
    let mut seen = BTreeSet::new();
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        match arena.kind(id) {
            SchemaKind::Ref(used) if *used == def => return true,
            SchemaKind::Ref(used) => stack.extend(arena.definition(*used).body),
            SchemaKind::Union(union) => stack.extend(union.variants.iter().copied()),
            _ => {}
        }
    }
    false
}

/// Decodes `%XX` escapes of a URI fragment.
fn percent_decode(fragment: &str) -> Option<String> {
    let bytes = fragment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = fragment.get(i + 1..i + 3).filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}
