//! Tool fixture files (INTERFACES.md §3): tool names to ordered cases, each answering calls with a
//! result or an error after a delay, read strictly into [`ToolFixtures`] or `RL8xxx` diagnostics.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crate::diag::{Code, Diagnostic, Span, codes, nearest};
use crate::engine::ToolError;
use crate::schema::{JsonPath, QualifiedName, locate};
use crate::value::{List, Object, Value, parse_json};

/// The fields of a case.
const CASE_FIELDS: &[&str] = &["args", "result", "error", "times", "delay_ms"];
/// The fields of a case's `error` object.
const ERROR_FIELDS: &[&str] = &["code", "message", "retryable", "retry_after_ms", "details"];

/// A parsed tool fixture file: each tool's cases in file order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolFixtures {
    tools: BTreeMap<Arc<str>, Vec<FixtureCase>>,
}

/// One case of a tool.
#[derive(Debug, Clone, PartialEq)]
pub struct FixtureCase {
    /// The canonical argument list the case answers; `None` answers any arguments.
    pub args: Option<List>,
    pub answer: FixtureAnswer,
    /// How many calls the case answers; `None` for any number.
    pub times: Option<u64>,
    /// How long the case waits before answering.
    pub delay: Duration,
}

/// What a case answers with.
#[derive(Debug, Clone, PartialEq)]
pub enum FixtureAnswer {
    Result(Value),
    Error(ToolError),
}

/// A fixture file that could not be read: every finding, in the order of the text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the tool fixture file has {} error(s); the first: {}", .diagnostics.len(), first_message(.diagnostics))]
pub struct FixtureError {
    /// Diagnostics about the fixture file's text (render them with that text).
    pub diagnostics: Vec<Diagnostic>,
}

/// `code: message` of the first diagnostic, for the one-line form of a file's errors.
pub(super) fn first_message(diagnostics: &[Diagnostic]) -> String {
    diagnostics.first().map(|d| format!("{}: {}", d.code, d.message)).unwrap_or_default()
}

impl ToolFixtures {
    /// Reads a fixture file's text. The JSON is read with the strict host reader (`RL8101`:
    /// duplicate keys, integers outside i64 and the like are errors), so `result` values are
    /// exactly what the file says.
    pub fn from_json_str(text: &str) -> Result<ToolFixtures, FixtureError> {
        let document = parse_json(text).map_err(|error| FixtureError {
            diagnostics: vec![error.to_diagnostic("the tool fixture file", text)],
        })?;
        let mut reader = Reader { text, diagnostics: Vec::new() };
        let tools = reader.file(&document);
        if reader.diagnostics.is_empty() {
            return Ok(ToolFixtures { tools });
        }
        reader.diagnostics.sort_by_key(|d| d.span);
        Err(FixtureError { diagnostics: reader.diagnostics })
    }

    /// Every tool with its cases, by name.
    pub fn tools(&self) -> impl Iterator<Item = (&Arc<str>, &[FixtureCase])> {
        self.tools.iter().map(|(name, cases)| (name, cases.as_slice()))
    }

    /// The cases of `tool`, empty when the file has none.
    pub fn cases(&self, tool: &str) -> &[FixtureCase] {
        self.tools.get(tool).map_or(&[], Vec::as_slice)
    }
}

/// Walks a parsed fixture file, collecting a diagnostic for everything wrong in it.
struct Reader<'t> {
    text: &'t str,
    diagnostics: Vec<Diagnostic>,
}

impl Reader<'_> {
    fn report(&mut self, code: Code, path: &JsonPath, message: String) -> &mut Diagnostic {
        let span = locate(self.text, path).unwrap_or(Span::at(0));
        let shown = if path.segments().is_empty() { "/".to_owned() } else { path.to_string() };
        let diagnostic = Diagnostic::error(code, span, message).with_note(format!("fixture path: {shown}"));
        self.diagnostics.push(diagnostic);
        let last = self.diagnostics.len() - 1;
        &mut self.diagnostics[last]
    }

    fn bad_field(&mut self, path: &JsonPath, message: String) {
        self.report(codes::TOOL_FIXTURE_BAD_FIELD, path, message);
    }

    fn file(&mut self, document: &Value) -> BTreeMap<Arc<str>, Vec<FixtureCase>> {
        let root = JsonPath::root();
        let Value::Object(tools) = document else {
            let message =
                "a tool fixture file must be a JSON object of tool names to lists of cases".to_owned();
            self.bad_field(&root, message);
            return BTreeMap::new();
        };
        let mut fixtures = BTreeMap::new();
        for (name, entry) in tools.entries() {
            let path = root.key(name);
            if let Err(error) = QualifiedName::parse(name) {
                self.bad_field(&path, format!("`{name}` is not a tool name: {error}"));
            }
            let Value::List(cases) = entry else {
                self.bad_field(&path, format!("the cases of `{name}` must be a JSON array"));
                continue;
            };
            let cases =
                cases.iter().enumerate().filter_map(|(i, case)| self.case(case, &path.index(i))).collect();
            fixtures.insert(name.clone(), cases);
        }
        fixtures
    }

    fn case(&mut self, json: &Value, path: &JsonPath) -> Option<FixtureCase> {
        let Value::Object(fields) = json else {
            self.bad_field(path, "a case must be a JSON object".to_owned());
            return None;
        };
        let before = self.diagnostics.len();
        self.reject_unknown(fields, CASE_FIELDS, "a case", path);
        let args = match fields.get("args") {
            None => None,
            Some(Value::List(args)) => Some(args.clone()),
            Some(_) => {
                let message =
                    "`args` must be the JSON array of the call's arguments, in source order".to_owned();
                self.bad_field(&path.key("args"), message);
                None
            }
        };
        let answer = match (fields.get("result"), fields.get("error")) {
            (Some(result), None) => Some(FixtureAnswer::Result(result.clone())),
            (None, Some(error)) => self.error(error, &path.key("error")).map(FixtureAnswer::Error),
            (Some(_), Some(_)) => {
                let message = "a case gives both `result` and `error`; it answers with one".to_owned();
                self.report(codes::TOOL_FIXTURE_ANSWER, path, message);
                None
            }
            (None, None) => {
                let message = "a case needs `result` or `error`".to_owned();
                self.report(codes::TOOL_FIXTURE_ANSWER, path, message);
                None
            }
        };
        let times =
            self.count(fields, "times", 1, path, "a positive integer: a case that answers no call is dead");
        let delay = self.count(fields, "delay_ms", 0, path, "a non-negative integer number of milliseconds");
        let answer = answer.filter(|_| self.diagnostics.len() == before)?;
        Some(FixtureCase { args, answer, times, delay: Duration::from_millis(delay.unwrap_or(0)) })
    }

    fn error(&mut self, json: &Value, path: &JsonPath) -> Option<ToolError> {
        let Value::Object(fields) = json else {
            let message = "`error` must be an object `{code, message, retryable}`".to_owned();
            self.bad_field(path, message);
            return None;
        };
        let before = self.diagnostics.len();
        self.reject_unknown(fields, ERROR_FIELDS, "an error", path);
        let code = self.required(fields, "code", path, "a non-empty string", |v| {
            v.as_str().filter(|code| !code.is_empty())
        });
        let message = self.required(fields, "message", path, "a string", Value::as_str);
        let retryable = self.required(fields, "retryable", path, "true or false", |v| match v {
            Value::Bool(b) => Some(*b),
            _ => None,
        });
        let retry_after =
            self.count(fields, "retry_after_ms", 0, path, "a non-negative integer number of milliseconds");
        let details = match fields.get("details") {
            None => Object::empty(),
            Some(Value::Object(details)) => details.clone(),
            Some(_) => {
                self.bad_field(&path.key("details"), "`details` must be a JSON object".to_owned());
                Object::empty()
            }
        };
        if self.diagnostics.len() != before {
            return None;
        }
        let (code, message, retryable) = (code?, message?, retryable?);
        let mut error = ToolError::new(code, message).with_details(details);
        error.retryable = retryable;
        error.retry_after = retry_after.map(Duration::from_millis);
        Some(error)
    }

    /// A field that must be present and readable by `read`.
    fn required<'v, T>(
        &mut self,
        fields: &'v Object,
        key: &str,
        path: &JsonPath,
        expected: &str,
        read: impl Fn(&'v Value) -> Option<T>,
    ) -> Option<T> {
        let Some(value) = fields.get(key) else {
            self.bad_field(path, format!("an error needs `{key}`"));
            return None;
        };
        let read = read(value);
        if read.is_none() {
            self.bad_field(&path.key(key), format!("`{key}` must be {expected}"));
        }
        read
    }

    /// An optional Integer field of at least `min`.
    fn count(
        &mut self,
        fields: &Object,
        key: &str,
        min: u64,
        path: &JsonPath,
        expected: &str,
    ) -> Option<u64> {
        let value = fields.get(key)?;
        let count = match value {
            Value::Int(n) => u64::try_from(*n).ok().filter(|n| *n >= min),
            _ => None,
        };
        if count.is_none() {
            self.bad_field(&path.key(key), format!("`{key}` must be {expected}"));
        }
        count
    }

    /// Reports every field not in `known`, offering the closest known one (ignoring case and
    /// underscores, so `retryAfterMs` finds `retry_after_ms`).
    fn reject_unknown(&mut self, fields: &Object, known: &[&str], what: &str, path: &JsonPath) {
        for key in fields.keys().filter(|key| !known.contains(key)) {
            let closest = known
                .iter()
                .filter_map(|k| Some((nearest::distance(&folded(k), &folded(key))?, *k)))
                .filter(|(distance, _)| *distance <= 3)
                .min();
            let listed = known.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
            let diagnostic = self.report(
                codes::TOOL_FIXTURE_UNKNOWN_FIELD,
                &path.key(key),
                format!("{what} has no field `{key}`"),
            );
            diagnostic.help.push(format!("the fields of {what} are {listed}"));
            diagnostic.candidates.extend(closest.map(|(_, k)| k.to_owned()));
        }
    }
}

/// A field name without case or underscores, for finding the field a misspelling meant.
fn folded(name: &str) -> String {
    name.chars().filter(|c| *c != '_').flat_map(char::to_lowercase).collect()
}
