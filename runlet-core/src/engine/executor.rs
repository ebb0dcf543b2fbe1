//! The seam between the engine and host tools (spec §7.2): the async `ToolExecutor` trait, the
//! call and its context, and what a tool answers — an output, an error, or a recovery outcome.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::identity::{DispatchId, OperationId};
use super::progress::Heartbeat;
use crate::diag::codes;
use crate::journal::RunId;
use crate::registry::ToolId;
use crate::value::{List, Object, Value};

/// Runs host tools. The engine calls it only after the call's `CallDispatchPrepared` event has
/// committed, and validates the output against the tool's schema before journaling success.
///
/// Implementations must be safe to call concurrently: independent calls of one run, and calls
/// of different runs, are dispatched at the same time.
#[async_trait]
pub trait ToolExecutor: Send + Sync {
    /// What the executor does with cancellation of calls to `tool` (spec §4.6). The default is
    /// the conservative answer: cancellation is not supported and a cancelled call may still
    /// complete.
    fn capabilities(&self, tool: &str) -> ToolCapabilities {
        let _ = tool;
        ToolCapabilities::default()
    }

    /// Performs one transport attempt of a call.
    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError>;

    /// Asks whether an operation whose dispatch outcome is uncertain took effect (spec §5.4,
    /// `recoverable` tools). The default answers [`RecoveryOutcome::Unsupported`].
    async fn recover(&self, request: RecoveryRequest) -> Result<RecoveryOutcome, ToolError> {
        let _ = request;
        Ok(RecoveryOutcome::Unsupported)
    }
}

/// How calls to one tool respond to their cancellation token (spec §4.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolCapabilities {
    /// The executor watches [`CallContext::cancellation`] and stops the call when it fires.
    pub cancellation: bool,
    /// A call may still complete (and its effect happen) after its token fired; the engine then
    /// records the late result as an orphaned completion.
    pub completion_after_cancel: bool,
    /// The executor's `dispatch` never blocks its thread: it awaits whatever it waits for. The
    /// engine then polls a call once on the run's own task before it gives the call a task of
    /// its own, so a call that answers at once (an in-process tool, a scripted answer) costs no
    /// task and no hop between threads. Off by default: a dispatch that runs blocking work in
    /// its first poll would hold up the whole run.
    pub answers_inline: bool,
}

impl Default for ToolCapabilities {
    fn default() -> ToolCapabilities {
        ToolCapabilities { cancellation: false, completion_after_cancel: true, answers_inline: false }
    }
}

/// One tool call as the executor receives it.
#[derive(Debug, Clone)]
pub struct ToolCall {
    /// The tool's registry name, such as `crm.customer`.
    pub tool: Arc<str>,
    pub tool_id: ToolId,
    /// The canonical argument list (spec §2.3): the converted arguments in source order, so
    /// `f(a, b)` receives `[a, b]` and `f({x: a})` receives `[{x: a}]`.
    pub arguments: List,
    pub context: CallContext,
}

/// Data a host gives a run for its calls (a request's context, say); the executor finds it in
/// each call's [`CallContext::host_data`] and downcasts it to what it gave.
pub type HostData = Arc<dyn std::any::Any + Send + Sync>;

/// What a tool knows about the call it is running (spec §7.2).
#[derive(Debug, Clone)]
pub struct CallContext {
    pub run_id: RunId,
    pub node_id: Arc<str>,
    /// The boundary attempt the call belongs to, from 1.
    pub attempt: u32,
    /// Equal for every dispatch of one semantic operation; tools deduplicate by it.
    pub operation_id: OperationId,
    /// Distinct for every transport attempt.
    pub dispatch_id: DispatchId,
    /// When the engine gives up on the call. A tokio instant, so tests with a paused clock see
    /// deadlines move with it.
    pub deadline: Option<Instant>,
    /// Fires when the call's scope is cancelled (a dropped branch, a failed loop, a retried
    /// boundary, a cancelled run).
    pub cancellation: CancellationToken,
    /// The tool descriptor's `schema_version`.
    pub schema_version: Arc<str>,
    /// W3C trace context entries (`traceparent`, `tracestate`) for the tool attempt's span.
    pub trace: BTreeMap<String, String>,
    /// What the host gave the run's start or resume for its calls
    /// ([`RunOptions::host_data`](crate::runtime::RunOptions::host_data)): a request's context,
    /// say, known to the executor from a run's first call on. Never journaled.
    pub host_data: Option<HostData>,
    /// The call's logical call site (its syntax path, spec §4.2); empty when not set.
    pub call_site: Arc<str>,
    /// The loop iterations and arms the call is inside; empty for a static call.
    pub dynamic_key: Arc<str>,
    /// The id of the digest key the operation id was keyed under, because an argument or a
    /// loop item it depends on is sensitive or secret (spec §6.2); None when all are public.
    pub digest_key: Option<Arc<str>>,
    /// Reports the call's progress to its run, which journals it as `CallHeartbeat`.
    pub heartbeat: Heartbeat,
}

/// The empty text, shared: a context without a call site allocates nothing for it.
fn empty() -> Arc<str> {
    static EMPTY: std::sync::OnceLock<Arc<str>> = std::sync::OnceLock::new();
    Arc::clone(EMPTY.get_or_init(|| Arc::from("")))
}

impl CallContext {
    /// The deadline on the wall clock events use (Unix milliseconds), for hosts outside tokio.
    pub fn deadline_unix_ms(&self) -> Option<u64> {
        let remaining = self.deadline?.saturating_duration_since(Instant::now());
        Some(std::time::SystemTime::now().checked_add(remaining).map_or(u64::MAX, super::event::unix_ms))
    }

    /// A context without deadline or trace entries and with a fresh cancellation token.
    pub fn new(
        run_id: RunId,
        node_id: impl Into<Arc<str>>,
        attempt: u32,
        operation_id: OperationId,
        dispatch_id: DispatchId,
        schema_version: impl Into<Arc<str>>,
    ) -> CallContext {
        CallContext {
            run_id,
            node_id: node_id.into(),
            attempt,
            operation_id,
            dispatch_id,
            deadline: None,
            cancellation: CancellationToken::new(),
            schema_version: schema_version.into(),
            trace: BTreeMap::new(),
            call_site: empty(),
            dynamic_key: empty(),
            digest_key: None,
            heartbeat: Heartbeat::default(),
            host_data: None,
        }
    }

    /// Gives the call the host's data of its run.
    pub fn with_host_data(mut self, data: Option<HostData>) -> CallContext {
        self.host_data = data;
        self
    }

    /// Names the digest key the call's operation identity was keyed under, if any.
    pub fn with_digest_key(mut self, key_id: Option<Arc<str>>) -> CallContext {
        self.digest_key = key_id;
        self
    }

    /// Names the call site and dynamic key the call's operation identity was derived from.
    pub fn with_call_site(
        mut self,
        call_site: impl Into<Arc<str>>,
        dynamic_key: impl Into<Arc<str>>,
    ) -> CallContext {
        self.call_site = call_site.into();
        self.dynamic_key = dynamic_key.into();
        self
    }

    pub fn with_deadline(mut self, deadline: Instant) -> CallContext {
        self.deadline = Some(deadline);
        self
    }

    pub fn with_heartbeat(mut self, heartbeat: Heartbeat) -> CallContext {
        self.heartbeat = heartbeat;
        self
    }

    pub fn with_cancellation(mut self, token: CancellationToken) -> CallContext {
        self.cancellation = token;
        self
    }

    pub fn with_trace(mut self, key: impl Into<String>, value: impl Into<String>) -> CallContext {
        self.trace.insert(key.into(), value.into());
        self
    }
}

/// A tool's answer: its value, and sanitized observability metadata kept apart from it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    pub value: Value,
    pub metadata: BTreeMap<String, serde_json::Value>,
}

impl ToolOutput {
    pub fn new(value: Value) -> ToolOutput {
        ToolOutput { value, metadata: BTreeMap::new() }
    }

    pub fn with_metadata(mut self, key: impl Into<String>, value: serde_json::Value) -> ToolOutput {
        self.metadata.insert(key.into(), value);
        self
    }
}

/// A failed call. The tool's own stable `code` and `details` are kept as given; the engine adds
/// call-site context around them without rewriting them (spec §3.5).
#[derive(Debug, Clone, PartialEq, thiserror::Error, serde::Serialize, serde::Deserialize)]
#[error("{code}: {message}")]
pub struct ToolError {
    /// The tool's stable error code (`RATE_LIMITED`), or an `RLnnnn` code for failures Runlet
    /// itself reports.
    pub code: String,
    pub message: String,
    /// Whether trying again may succeed; the tool's execution class still decides whether the
    /// engine may (spec §5.4).
    pub retryable: bool,
    /// How long the tool asks to wait before a retry (an HTTP `Retry-After`). It replaces the
    /// host's computed backoff for that attempt and never enters any identity (spec §2.8).
    pub retry_after: Option<Duration>,
    pub details: Object,
    /// The tool cannot tell whether the operation took effect.
    pub uncertain: bool,
}

impl ToolError {
    /// A non-retryable error without details.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> ToolError {
        ToolError {
            code: code.into(),
            message: message.into(),
            retryable: false,
            retry_after: None,
            details: Object::empty(),
            uncertain: false,
        }
    }

    /// A retryable error without details.
    pub fn retryable(code: impl Into<String>, message: impl Into<String>) -> ToolError {
        ToolError { retryable: true, ..ToolError::new(code, message) }
    }

    /// The acknowledgement of a call that stopped because its cancellation token fired
    /// (`RL6201`). Never retryable: cancellation is not a failure to try again.
    pub fn cancelled(tool: &str) -> ToolError {
        ToolError::new(codes::TOOL_CALL_CANCELLED.to_string(), format!("the call to `{tool}` was cancelled"))
    }

    /// The engine's own acknowledgement for a cancelled call whose executor cannot cancel it
    /// (spec §4.6): `RL6201` with details `{cancellation: "not_delivered"}`. The call is
    /// detached; whatever it answers later is only an orphaned completion.
    pub fn cancellation_not_delivered(tool: &str) -> ToolError {
        let details = Object::from_pairs(vec![(Arc::from("cancellation"), Value::from("not_delivered"))]);
        let error = ToolError::new(
            codes::TOOL_CALL_CANCELLED.to_string(),
            format!(
                "the call to `{tool}` was cancelled, but its executor cannot stop it: it was detached, and a later answer is only an orphaned completion"
            ),
        );
        match details {
            Ok(details) => error.with_details(details),
            Err(_) => error,
        }
    }

    pub fn with_retry_after(mut self, wait: Duration) -> ToolError {
        self.retry_after = Some(wait);
        self
    }

    pub fn with_details(mut self, details: Object) -> ToolError {
        self.details = details;
        self
    }

    pub fn with_uncertain(mut self, uncertain: bool) -> ToolError {
        self.uncertain = uncertain;
        self
    }

    /// The error a host states as an object `{code, message, retryable?, details?}` (a
    /// `resolve --failed` decision, say): `code` and `message` strings, `retryable` a boolean
    /// (default false), `details` an object. Anything else is refused with the reason.
    pub fn from_value(value: &Value) -> Result<ToolError, String> {
        const FIELDS: [&str; 4] = ["code", "message", "retryable", "details"];
        let Value::Object(fields) = value else {
            return Err("a tool error is an object `{code, message, retryable?, details?}`".to_owned());
        };
        if let Some(unknown) = fields.keys().find(|key| !FIELDS.contains(key)) {
            return Err(format!("a tool error has no field `{unknown}` (it has {})", FIELDS.join(", ")));
        }
        let text = |name: &str| match fields.get(name) {
            Some(Value::String(text)) if !text.is_empty() => Ok(text.to_string()),
            _ => Err(format!("a tool error needs `{name}`, a non-empty string")),
        };
        let mut error = ToolError::new(text("code")?, text("message")?);
        match fields.get("retryable") {
            None => {}
            Some(Value::Bool(retryable)) => error.retryable = *retryable,
            Some(_) => return Err("a tool error's `retryable` is true or false".to_owned()),
        }
        match fields.get("details") {
            None => {}
            Some(Value::Object(details)) => error.details = details.clone(),
            Some(_) => return Err("a tool error's `details` is an object".to_owned()),
        }
        Ok(error)
    }
}

/// A question about an operation whose last dispatch, `call.context.dispatch_id`, has an
/// uncertain outcome (a crash or timeout after `CallDispatchPrepared`).
#[derive(Debug, Clone)]
pub struct RecoveryRequest {
    pub call: ToolCall,
}

/// What recovery learned about an uncertain operation (spec §5.4).
#[derive(Debug, Clone, PartialEq)]
pub enum RecoveryOutcome {
    /// The operation took effect; this is its output, reused as the call's result.
    Succeeded(ToolOutput),
    /// The operation definitely did not take effect, so it may be redispatched.
    NotApplied,
    /// The tool could not find out; the engine surfaces the uncertainty.
    Unknown,
    /// The executor cannot query outcomes; the engine treats the operation as [`Unknown`].
    ///
    /// [`Unknown`]: RecoveryOutcome::Unknown
    Unsupported,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::WorkflowIdentity;
    use crate::engine::identity::OperationComponents;
    use crate::registry::{Registry, RegistryOptions};
    use crate::value::sha256;

    /// A tool that echoes its arguments and relies on every default of the trait.
    struct Echo;

    #[async_trait]
    impl ToolExecutor for Echo {
        async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
            Ok(ToolOutput::new(Value::List(call.arguments)).with_metadata("echoed", serde_json::json!(true)))
        }
    }

    fn call() -> ToolCall {
        let registry = Registry::from_json_str(
            r#"{"tools": [{"name": "echo", "params": [{"name": "x", "schema": {}}]}]}"#,
            &RegistryOptions::default(),
        )
        .expect("valid registry")
        .registry;
        let workflow = WorkflowIdentity {
            source_digest: sha256(&Value::Null),
            registry_digest: registry.digest().clone(),
            language_version: 1,
        };
        let arguments = List::new(vec![Value::Int(1)]).expect("shallow");
        let input_digest = sha256(&Value::List(arguments.clone()));
        let operation_id = OperationId::derive(&OperationComponents {
            workflow: &workflow,
            call_site: "return/value",
            dynamic_key: "",
            schema_version: "1",
            input_digest: &input_digest,
            generation: 0,
        });
        let context =
            CallContext::new(RunId::new("run-1"), "n1", 1, operation_id, operation_id.dispatch_id(1), "1");
        ToolCall {
            tool: "echo".into(),
            tool_id: registry.tool_named("echo").expect("registered"),
            arguments,
            context,
        }
    }

    #[tokio::test]
    async fn defaults_are_conservative_and_the_trait_is_object_safe() {
        let executor: Arc<dyn ToolExecutor> = Arc::new(Echo);
        assert_eq!(
            executor.capabilities("echo"),
            ToolCapabilities { cancellation: false, completion_after_cancel: true, answers_inline: false }
        );
        let output = executor.dispatch(call()).await.expect("echoes");
        assert_eq!(output.value, Value::List(List::new(vec![Value::Int(1)]).expect("shallow")));
        assert_eq!(output.metadata.get("echoed"), Some(&serde_json::json!(true)));
        let outcome = executor.recover(RecoveryRequest { call: call() }).await;
        assert_eq!(outcome, Ok(RecoveryOutcome::Unsupported));
    }

    #[test]
    fn error_constructors_set_what_they_name() {
        let plain = ToolError::new("NOT_FOUND", "no such customer");
        assert!(
            !plain.retryable && !plain.uncertain && plain.retry_after.is_none() && plain.details.is_empty()
        );
        let details = Object::from_pairs(vec![("customer".into(), Value::from("c-42"))]).expect("shallow");
        let slow = ToolError::retryable("RATE_LIMITED", "slow down")
            .with_retry_after(Duration::from_millis(1500))
            .with_details(details.clone())
            .with_uncertain(true);
        assert!(slow.retryable && slow.uncertain);
        assert_eq!(slow.retry_after, Some(Duration::from_millis(1500)));
        assert_eq!(slow.details, details);
        assert_eq!(slow.to_string(), "RATE_LIMITED: slow down");
        let cancelled = ToolError::cancelled("crm.customer");
        assert_eq!(cancelled.code, "RL6201");
        assert!(!cancelled.retryable);
        assert_eq!(cancelled.message, "the call to `crm.customer` was cancelled");
    }

    #[test]
    fn context_builders_fill_the_optional_parts() {
        let token = CancellationToken::new();
        let deadline = Instant::now() + Duration::from_secs(5);
        let context = call()
            .context
            .with_deadline(deadline)
            .with_cancellation(token.clone())
            .with_trace("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
        assert_eq!(context.deadline, Some(deadline));
        token.cancel();
        assert!(context.cancellation.is_cancelled());
        assert_eq!(context.trace.keys().collect::<Vec<_>>(), ["traceparent"]);
    }
}
