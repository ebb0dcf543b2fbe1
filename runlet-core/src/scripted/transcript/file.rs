//! The transcript file (docs/transcripts.md): versioned JSON written in key order, and read back
//! strictly, every problem an `RL83xx` diagnostic located in the file's text.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use super::{CallKey, SampleEntry, Transcript, TranscriptEntry};
use crate::analyze::WorkflowIdentity;
use crate::diag::{Code, Diagnostic, Span, codes};
use crate::engine::OperationId;
use crate::engine::ToolError;
use crate::schema::{JsonPath, QualifiedName, locate};
use crate::scripted::fixtures::first_message;
use crate::stdlib::Intrinsic;
use crate::value::{DigestKey, Object, Value, ValueError, parse_json, to_serde_json};

/// The format name and version a transcript file starts with; a layout change must change it.
pub const TRANSCRIPT_FORMAT: &str = "runlet.transcript/1";

const ROOT_FIELDS: &[&str] = &["format", "workflow", "digest_key", "calls", "samples"];
const SAMPLE_FIELDS: &[&str] = &["node_id", "function", "result", "error"];
const WORKFLOW_FIELDS: &[&str] = &["source_digest", "registry_digest", "language_version"];
const ENTRY_FIELDS: &[&str] =
    &["call_site", "dynamic_key", "attempt", "operation_id", "tool", "arguments", "result", "error"];
const ERROR_FIELDS: &[&str] = &["code", "message", "retryable", "retry_after_ms", "details", "uncertain"];

/// A transcript file that could not be read: every finding, in the order of the text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the transcript has {} error(s); the first: {}", .diagnostics.len(), first_message(.diagnostics))]
pub struct TranscriptError {
    /// Diagnostics about the transcript's text (render them with that text).
    pub diagnostics: Vec<Diagnostic>,
}

#[derive(Serialize)]
struct FileOut<'a> {
    format: &'static str,
    workflow: WorkflowOut,
    #[serde(skip_serializing_if = "Option::is_none")]
    digest_key: Option<&'a str>,
    calls: Vec<EntryOut<'a>>,
    /// Absent when the run sampled nothing, so such files read the same as before samples were
    /// recorded.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    samples: Vec<SampleOut<'a>>,
}

#[derive(Serialize)]
struct SampleOut<'a> {
    node_id: &'a str,
    function: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
}

#[derive(Serialize)]
struct WorkflowOut {
    source_digest: String,
    registry_digest: String,
    language_version: u32,
}

#[derive(Serialize)]
struct EntryOut<'a> {
    call_site: &'a str,
    dynamic_key: &'a str,
    attempt: u32,
    operation_id: OperationId,
    tool: &'a str,
    arguments: serde_json::Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ErrorOut<'a>>,
}

#[derive(Serialize)]
struct ErrorOut<'a> {
    code: &'a str,
    message: &'a str,
    retryable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    retry_after_ms: Option<u64>,
    details: serde_json::Value,
    uncertain: bool,
}

impl Transcript {
    /// The transcript as pretty-printed JSON. Integers and Numbers stay apart (`1` and `1.0`), so
    /// reading the text back gives exactly these values. A value holding Bytes, which JSON cannot
    /// carry, fails with `RL5207`.
    pub fn to_json(&self) -> Result<String, ValueError> {
        let calls = self.entries.iter().map(entry_out).collect::<Result<Vec<_>, _>>()?;
        let samples = self.samples.iter().map(sample_out).collect::<Result<Vec<_>, _>>()?;
        let file = FileOut {
            format: TRANSCRIPT_FORMAT,
            workflow: WorkflowOut {
                source_digest: self.workflow.source_digest.to_string(),
                registry_digest: self.workflow.registry_digest.to_string(),
                language_version: self.workflow.language_version,
            },
            digest_key: self.digest_key(),
            calls,
            samples,
        };
        let mut text = serde_json::to_string_pretty(&file).expect("JSON trees always serialize");
        text.push('\n');
        Ok(text)
    }

    /// Reads a transcript file. The JSON is read with the strict host reader (`RL8101`), then
    /// every field is checked (`RL8301`); a file of another format version is `RL8302`.
    pub fn from_json_str(text: &str) -> Result<Transcript, TranscriptError> {
        let document = parse_json(text).map_err(|error| TranscriptError {
            diagnostics: vec![error.to_diagnostic("the transcript", text)],
        })?;
        let mut reader = Reader { text, diagnostics: Vec::new() };
        let transcript = reader.file(&document);
        match transcript {
            Some(transcript) if reader.diagnostics.is_empty() => Ok(transcript),
            _ => {
                reader.diagnostics.sort_by_key(|d| d.span);
                Err(TranscriptError { diagnostics: reader.diagnostics })
            }
        }
    }
}

fn sample_out(sample: &SampleEntry) -> Result<SampleOut<'_>, ValueError> {
    let (result, error) = match &sample.answer {
        Ok(value) => (Some(to_serde_json(value)?), None),
        Err(message) => (None, Some(message.as_str())),
    };
    Ok(SampleOut {
        node_id: &sample.node_id,
        function: Intrinsic::Sampled(sample.function).name(),
        result,
        error,
    })
}

fn entry_out(entry: &TranscriptEntry) -> Result<EntryOut<'_>, ValueError> {
    let (result, error) = match &entry.answer {
        Ok(value) => (Some(to_serde_json(value)?), None),
        Err(error) => {
            let error = ErrorOut {
                code: &error.code,
                message: &error.message,
                retryable: error.retryable,
                retry_after_ms: error
                    .retry_after
                    .map(|wait| u64::try_from(wait.as_millis()).unwrap_or(u64::MAX)),
                details: to_serde_json(&Value::Object(error.details.clone()))?,
                uncertain: error.uncertain,
            };
            (None, Some(error))
        }
    };
    Ok(EntryOut {
        call_site: &entry.key.call_site,
        dynamic_key: &entry.key.dynamic_key,
        attempt: entry.key.attempt,
        operation_id: entry.operation_id,
        tool: &entry.tool,
        arguments: to_serde_json(&Value::List(entry.arguments.clone()))?,
        result,
        error,
    })
}

/// Walks a parsed transcript, collecting a diagnostic for everything wrong in it.
struct Reader<'t> {
    text: &'t str,
    diagnostics: Vec<Diagnostic>,
}

impl Reader<'_> {
    fn report(&mut self, code: Code, path: &JsonPath, message: String) {
        let span = locate(self.text, path).unwrap_or(Span::at(0));
        let shown = if path.segments().is_empty() { "/".to_owned() } else { path.to_string() };
        let diagnostic =
            Diagnostic::error(code, span, message).with_note(format!("transcript path: {shown}"));
        self.diagnostics.push(diagnostic);
    }

    fn bad(&mut self, path: &JsonPath, message: String) {
        self.report(codes::TRANSCRIPT_BAD_FIELD, path, message);
    }

    /// `value` as an object of `what` whose fields are all among `known`.
    fn object<'v>(
        &mut self,
        value: &'v Value,
        path: &JsonPath,
        what: &str,
        known: &[&str],
    ) -> Option<&'v Object> {
        let Value::Object(fields) = value else {
            self.bad(path, format!("{what} must be a JSON object"));
            return None;
        };
        for key in fields.keys().filter(|key| !known.contains(key)) {
            let listed = known.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
            self.bad(&path.key(key), format!("{what} has no field `{key}`; its fields are {listed}"));
        }
        Some(fields)
    }

    /// A field that must be present and readable by `read`, which says what it expects.
    fn required<'v, T>(
        &mut self,
        fields: &'v Object,
        key: &str,
        path: &JsonPath,
        read: impl Fn(&'v Value) -> Result<T, String>,
    ) -> Option<T> {
        let Some(value) = fields.get(key) else {
            self.bad(path, format!("a field `{key}` is required here"));
            return None;
        };
        self.read(value, &path.key(key), read)
    }

    /// A field that may be absent (`Ok(None)`); present, it must be readable by `read` (else
    /// `Err(())`, with the problem reported).
    fn optional<'v, T>(
        &mut self,
        fields: &'v Object,
        key: &str,
        path: &JsonPath,
        read: impl Fn(&'v Value) -> Result<T, String>,
    ) -> Result<Option<T>, ()> {
        match fields.get(key) {
            None => Ok(None),
            Some(value) => self.read(value, &path.key(key), read).map(Some).ok_or(()),
        }
    }

    fn read<'v, T>(
        &mut self,
        value: &'v Value,
        path: &JsonPath,
        read: impl Fn(&'v Value) -> Result<T, String>,
    ) -> Option<T> {
        read(value).map_err(|message| self.bad(path, message)).ok()
    }

    fn file(&mut self, document: &Value) -> Option<Transcript> {
        let root = JsonPath::root();
        let fields = self.object(document, &root, "a transcript", ROOT_FIELDS)?;
        match fields.get("format").and_then(Value::as_str) {
            Some(TRANSCRIPT_FORMAT) => {}
            found => {
                let found = found.map_or("no `format` string".to_owned(), |f| format!("the format `{f}`"));
                let message = format!("the transcript has {found}; this Runlet reads `{TRANSCRIPT_FORMAT}`");
                self.report(codes::TRANSCRIPT_FORMAT, &root.key("format"), message);
                return None;
            }
        }
        let workflow = self
            .required(fields, "workflow", &root, Ok)
            .and_then(|w| self.workflow(w, &root.key("workflow")));
        let digest_key = self.optional(fields, "digest_key", &root, |v| {
            v.as_str().filter(|id| DigestKey::is_valid_id(id)).ok_or_else(|| {
                "`digest_key` must be a key id: 1 to 64 characters from `A-Z a-z 0-9 . _ -`".to_owned()
            })
        });
        let calls = self.required(fields, "calls", &root, |v| match v {
            Value::List(calls) => Ok(calls),
            _ => Err("`calls` must be a JSON array of calls".to_owned()),
        });
        let entries: Vec<TranscriptEntry> = calls
            .into_iter()
            .flat_map(|calls| calls.iter().enumerate())
            .filter_map(|(i, entry)| self.entry(entry, &root.key("calls").index(i)))
            .collect();
        let samples = self.optional(fields, "samples", &root, |v| match v {
            Value::List(samples) => Ok(samples),
            _ => Err("`samples` must be a JSON array of sampled values".to_owned()),
        });
        let samples: Vec<SampleEntry> = samples
            .ok()?
            .into_iter()
            .flat_map(|samples| samples.iter().enumerate())
            .filter_map(|(i, sample)| self.sample(sample, &root.key("samples").index(i)))
            .collect();
        let transcript = Transcript::new(workflow?, entries).with_samples(samples);
        Some(match digest_key.ok()? {
            Some(key_id) => transcript.with_digest_key(key_id),
            None => transcript,
        })
    }

    fn sample(&mut self, value: &Value, path: &JsonPath) -> Option<SampleEntry> {
        let fields = self.object(value, path, "a sample", SAMPLE_FIELDS)?;
        let node_id = self.required(fields, "node_id", path, |v| {
            v.as_str().map(Arc::from).ok_or_else(|| "`node_id` must be a string".to_owned())
        });
        let function =
            self.required(fields, "function", path, |v| match v.as_str().and_then(Intrinsic::named) {
                Some(Intrinsic::Sampled(function)) => Ok(function),
                _ => {
                    Err("`function` must name a sampled intrinsic: `time.now` or `number.random`".to_owned())
                }
            });
        let answer = match (fields.get("result"), fields.get("error")) {
            (Some(result), None) => Some(Ok(result.clone())),
            (None, Some(error)) => self.read(error, &path.key("error"), |v| {
                v.as_str()
                    .map(|message| Err(message.to_owned()))
                    .ok_or_else(|| "`error` must be the message of the failed sample".to_owned())
            }),
            _ => {
                self.bad(path, "a sample needs exactly one of `result` and `error`".to_owned());
                None
            }
        };
        Some(SampleEntry { node_id: node_id?, function: function?, answer: answer? })
    }

    fn workflow(&mut self, value: &Value, path: &JsonPath) -> Option<WorkflowIdentity> {
        let fields = self.object(value, path, "`workflow`", WORKFLOW_FIELDS)?;
        let digest = |v: &Value| {
            v.as_str()
                .and_then(|text| text.parse().ok())
                .ok_or_else(|| "a digest must be `sha256:` and 64 hex digits".to_owned())
        };
        let source_digest = self.required(fields, "source_digest", path, digest);
        let registry_digest = self.required(fields, "registry_digest", path, digest);
        let language_version = self.required(fields, "language_version", path, |v| {
            int_in(v, 1, u32::MAX.into())
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| "`language_version` must be a positive integer".to_owned())
        });
        Some(WorkflowIdentity {
            source_digest: source_digest?,
            registry_digest: registry_digest?,
            language_version: language_version?,
        })
    }

    fn entry(&mut self, value: &Value, path: &JsonPath) -> Option<TranscriptEntry> {
        let fields = self.object(value, path, "a call", ENTRY_FIELDS)?;
        let text = |key: &'static str| {
            move |v: &Value| v.as_str().map(Arc::from).ok_or_else(|| format!("`{key}` must be a string"))
        };
        let call_site = self.required(fields, "call_site", path, text("call_site"));
        let dynamic_key = self.required(fields, "dynamic_key", path, text("dynamic_key"));
        let attempt = self.required(fields, "attempt", path, |v| {
            int_in(v, 0, u32::MAX.into())
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| "`attempt` must be a non-negative integer".to_owned())
        });
        let operation_id = self.required(fields, "operation_id", path, |v| {
            let text = v.as_str().ok_or("`operation_id` must be a string")?;
            text.parse::<OperationId>().map_err(|e| e.to_string())
        });
        let tool = self.required(fields, "tool", path, |v| {
            let name = v.as_str().ok_or("`tool` must be a string")?;
            QualifiedName::parse(name)
                .map(|_| Arc::from(name))
                .map_err(|e| format!("`{name}` is not a tool name: {e}"))
        });
        let arguments = self.required(fields, "arguments", path, |v| match v {
            Value::List(arguments) => Ok(arguments.clone()),
            _ => {
                Err("`arguments` must be the JSON array of the call's arguments, in source order".to_owned())
            }
        });
        let answer = match (fields.get("result"), fields.get("error")) {
            (Some(result), None) => Some(Ok(result.clone())),
            (None, Some(error)) => self.error(error, &path.key("error")).map(Err),
            (Some(_), Some(_)) => {
                self.bad(path, "a call gives both `result` and `error`; it was answered with one".to_owned());
                None
            }
            (None, None) => {
                self.bad(path, "a call needs the `result` or the `error` it was answered with".to_owned());
                None
            }
        };
        Some(TranscriptEntry {
            key: CallKey { call_site: call_site?, dynamic_key: dynamic_key?, attempt: attempt? },
            operation_id: operation_id?,
            tool: tool?,
            arguments: arguments?,
            answer: answer?,
        })
    }

    fn error(&mut self, value: &Value, path: &JsonPath) -> Option<ToolError> {
        let fields = self.object(value, path, "`error`", ERROR_FIELDS)?;
        let code = self.required(fields, "code", path, |v| {
            v.as_str()
                .filter(|code| !code.is_empty())
                .ok_or_else(|| "`code` must be a non-empty string".to_owned())
        });
        let message = self.required(fields, "message", path, |v| {
            v.as_str().ok_or_else(|| "`message` must be a string".to_owned())
        });
        let retryable = self.required(fields, "retryable", path, |v| boolean(v, "retryable"));
        let retry_after = self.optional(fields, "retry_after_ms", path, |v| {
            int_in(v, 0, i64::MAX).map(|ms| Duration::from_millis(ms.unsigned_abs())).ok_or_else(|| {
                "`retry_after_ms` must be a non-negative integer number of milliseconds".to_owned()
            })
        });
        let details = self.optional(fields, "details", path, |v| match v {
            Value::Object(details) => Ok(details.clone()),
            _ => Err("`details` must be a JSON object".to_owned()),
        });
        let uncertain = self.optional(fields, "uncertain", path, |v| boolean(v, "uncertain"));
        let mut error = ToolError::new(code?, message?);
        error.retryable = retryable?;
        error.retry_after = retry_after.ok()?;
        error.details = details.ok()?.unwrap_or_else(Object::empty);
        error.uncertain = uncertain.ok()?.unwrap_or(false);
        Some(error)
    }
}

/// An Integer in `min..=max`.
fn int_in(value: &Value, min: i64, max: i64) -> Option<i64> {
    match value {
        Value::Int(n) if (min..=max).contains(n) => Some(*n),
        _ => None,
    }
}

fn boolean(value: &Value, key: &str) -> Result<bool, String> {
    match value {
        Value::Bool(b) => Ok(*b),
        _ => Err(format!("`{key}` must be true or false")),
    }
}
