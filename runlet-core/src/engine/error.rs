//! A run's failures: the structured error value a `catch` receives (spec §2.8) and a failed run
//! reports, built from compute failures, tool errors and policy breaches.

use std::sync::Arc;
use std::time::Duration;

use crate::value::{List, Object, Sensitivity, Value, ValueError};

/// What kind of failure a [`RunError`] is: what hosts branch on (the C ABI's error codes, exit
/// statuses), so that none of them classifies failures by their code's spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub enum FailureClass {
    /// A tool answered with an error, or its call could not be made (a timeout, a schema
    /// mismatch of its arguments or output).
    Tool,
    /// The program's own evaluation failed: an operator, projection, conversion or check, or a
    /// `fail(…)` it raised.
    Compute,
    /// The run crossed one of its execution limits (`RL41xx`): a policy failure no boundary
    /// catches.
    Limit,
    /// A call ended by cancellation (`RL6201`): its executor acknowledged it, or could not
    /// stop it and the call was detached.
    Cancelled,
    /// A tool call whose outcome is unknown: it may or may not have taken effect (spec §5.4).
    Uncertain,
}

impl FailureClass {
    /// The class's name, as reports spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureClass::Tool => "tool",
            FailureClass::Compute => "compute",
            FailureClass::Limit => "limit",
            FailureClass::Cancelled => "cancelled",
            FailureClass::Uncertain => "uncertain",
        }
    }
}

/// One execution failure, of one [`FailureClass`]; limit failures are policy, which no boundary
/// catches.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RunError {
    pub code: String,
    pub message: String,
    pub retryable: bool,
    /// How long the tool asked to wait before a retry; scheduling only, never in the record.
    pub retry_after: Option<Duration>,
    pub tool: Option<String>,
    pub node_id: String,
    pub attempt: u32,
    pub details: Object,
    pub causes: Vec<RunError>,
    pub uncertain: bool,
    pub class: FailureClass,
}

impl RunError {
    /// A deterministic compute failure (an operator, projection, conversion or check) at `node_id`.
    /// An error about a sensitive or secret value keeps only its code (spec §6.2): the error is
    /// journaled, published and caught as a plain value, so it must not quote what failed.
    pub fn compute(error: &ValueError, node_id: String, attempt: u32) -> RunError {
        let error = error.redacted(Sensitivity::Public);
        RunError {
            code: error.code().to_string(),
            message: error.message().to_owned(),
            retryable: false,
            retry_after: None,
            tool: None,
            node_id,
            attempt,
            details: error.details().clone(),
            causes: Vec::new(),
            uncertain: false,
            class: FailureClass::Compute,
        }
    }

    /// A crossed execution limit: a policy failure, never caught by a boundary.
    pub fn limit(code: String, message: String, node_id: String) -> RunError {
        RunError {
            code,
            message,
            retryable: false,
            retry_after: None,
            tool: None,
            node_id,
            attempt: 0,
            details: Object::empty(),
            causes: Vec::new(),
            uncertain: false,
            class: FailureClass::Limit,
        }
    }

    /// Whether a boundary may catch this failure: execution failures (tool failures, timeouts,
    /// runtime conversions, compute errors) are; policy failures — limit breaches and host
    /// cancellation — are not (spec §2.8). Every boundary decision asks this one predicate.
    pub fn is_catchable(&self) -> bool {
        self.class != FailureClass::Limit
    }

    /// The record a `catch err` block receives (spec §2.8).
    pub fn to_value(&self) -> Value {
        let causes: Vec<Value> = self.causes.iter().map(RunError::to_value).collect();
        let text = |s: &str| Value::from(s);
        let pairs: Vec<(Arc<str>, Value)> = vec![
            ("code".into(), text(&self.code)),
            ("message".into(), text(&self.message)),
            ("retryable".into(), Value::Bool(self.retryable)),
            ("tool".into(), self.tool.as_deref().map_or(Value::Null, text)),
            ("node_id".into(), text(&self.node_id)),
            ("attempt".into(), Value::Int(i64::from(self.attempt))),
            ("details".into(), Value::Object(self.details.clone())),
            ("causes".into(), List::new(causes).map(Value::from).unwrap_or(Value::Null)),
            ("uncertain".into(), Value::Bool(self.uncertain)),
        ];
        Object::from_pairs(pairs).map(Value::from).unwrap_or(Value::Null)
    }
}
