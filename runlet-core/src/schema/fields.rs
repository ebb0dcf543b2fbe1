//! Reading the fields of registry objects (the file, tools, parameters, errors, annotations):
//! typed getters that report a wrong type, a missing field or an unknown one with its JSON path.

use serde_json::{Map, Value};

use crate::diag::{codes, nearest};

use super::issue::RegistryIssue;
use super::json_path::JsonPath;

/// The fields of one registry object.
#[derive(Debug)]
pub(crate) struct Fields<'a, 'i> {
    object: &'a Map<String, Value>,
    pub path: JsonPath,
    pub issues: &'i mut Vec<RegistryIssue>,
}

impl<'a, 'i> Fields<'a, 'i> {
    /// The fields of `json`, or `None` after reporting that it is not an object (`what` names
    /// it, such as "a tool").
    pub(crate) fn of(
        json: &'a Value,
        path: &JsonPath,
        issues: &'i mut Vec<RegistryIssue>,
        what: &str,
    ) -> Option<Fields<'a, 'i>> {
        match json.as_object() {
            Some(object) => Some(Fields { object, path: path.clone(), issues }),
            None => {
                issues.push(RegistryIssue::error(
                    codes::REGISTRY_BAD_FIELD,
                    path.clone(),
                    format!("{what} must be a JSON object"),
                ));
                None
            }
        }
    }

    /// Reports every field not in `known`, suggesting the closest known name.
    pub(crate) fn reject_unknown(&mut self, known: &[&str], what: &str) {
        for key in self.object.keys().filter(|k| !known.contains(&k.as_str())) {
            let mut nearest: Vec<(usize, &str)> = known
                .iter()
                .filter_map(|k| Some((nearest::distance(&k.to_lowercase(), &key.to_lowercase())?, *k)))
                .filter(|(distance, _)| *distance <= 3)
                .collect();
            nearest.sort();
            let message = format!("{what} has no field `{key}`");
            let mut issue = RegistryIssue::error(codes::REGISTRY_UNKNOWN_FIELD, self.path.key(key), message)
                .with_candidates(nearest.into_iter().take(1).map(|(_, k)| k));
            issue.help.push(format!(
                "the fields of {what} are {}",
                known.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
            ));
            self.issues.push(issue);
        }
    }

    pub(crate) fn get(&self, key: &str) -> Option<&'a Value> {
        self.object.get(key)
    }

    pub(crate) fn keys(&self) -> impl Iterator<Item = &'a String> + use<'a> {
        self.object.keys()
    }

    fn wrong_type(&mut self, key: &str, expected: &str) {
        let message = format!("`{key}` must be {expected}");
        self.issues.push(RegistryIssue::error(codes::REGISTRY_BAD_FIELD, self.path.key(key), message));
    }

    /// The field read by `read`, `None` when absent; a present field `read` rejects is reported
    /// as not being `expected`.
    fn typed<T>(&mut self, key: &str, expected: &str, read: impl Fn(&'a Value) -> Option<T>) -> Option<T> {
        let value = self.object.get(key)?;
        let read = read(value);
        if read.is_none() {
            self.wrong_type(key, expected);
        }
        read
    }

    pub(crate) fn string(&mut self, key: &str) -> Option<&'a str> {
        self.typed(key, "a string", Value::as_str)
    }

    pub(crate) fn boolean(&mut self, key: &str) -> Option<bool> {
        self.typed(key, "true or false", Value::as_bool)
    }

    pub(crate) fn array(&mut self, key: &str) -> Option<&'a Vec<Value>> {
        self.typed(key, "an array", Value::as_array)
    }

    pub(crate) fn object(&mut self, key: &str) -> Option<&'a Map<String, Value>> {
        self.typed(key, "an object", Value::as_object)
    }

    /// A whole number of at least 1.
    pub(crate) fn positive_integer(&mut self, key: &str) -> Option<u64> {
        self.typed(key, "a whole number of at least 1", |v| v.as_u64().filter(|n| *n >= 1))
    }

    /// A string field that must be present.
    pub(crate) fn required_string(&mut self, key: &str, what: &str) -> Option<&'a str> {
        if !self.object.contains_key(key) {
            let message = format!("{what} needs `{key}`");
            self.issues.push(RegistryIssue::error(codes::REGISTRY_BAD_FIELD, self.path.clone(), message));
        }
        self.string(key)
    }
}
