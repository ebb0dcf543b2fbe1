//! The host's retry policy (spec §2.8, §5.4): backoff delays, a tool's `retry_after`, retryable
//! classification, tool deadlines, and what each execution class lets a boundary repeat.

use std::sync::Arc;
use std::time::Duration;

use super::executor::ToolError;
use crate::diag::codes;
use crate::schema::{ExecutionClass, ToolDescriptor};

/// Exponential backoff between boundary attempts: retry *k* waits `min(cap, base × factorᵏ⁻¹)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub base: Duration,
    /// Growth per retry; 1 keeps the delay constant.
    pub factor: u32,
    pub cap: Duration,
}

impl Backoff {
    /// The delay before retry number `retry` (1 for the first retry).
    pub fn delay(&self, retry: u32) -> Duration {
        let growth = self.factor.max(1).checked_pow(retry.saturating_sub(1)).unwrap_or(u32::MAX);
        self.base.checked_mul(growth).unwrap_or(self.cap).min(self.cap)
    }
}

/// The wait before retry number `retry`: the tool's `retry_after` when it gave one (capped by the
/// backoff's cap when backoff is configured), else the backoff delay, else none.
pub fn retry_delay(backoff: Option<&Backoff>, retry: u32, retry_after: Option<Duration>) -> Duration {
    match (retry_after, backoff) {
        (Some(wait), Some(backoff)) => wait.min(backoff.cap),
        (Some(wait), None) => wait,
        (None, Some(backoff)) => backoff.delay(retry),
        (None, None) => Duration::ZERO,
    }
}

/// Whether a boundary may dispatch an operation of `class` again after one of its dispatches
/// was durably prepared (spec §5.4). `at_most_once` and `unsafe` never are: the cutoff is
/// `CallDispatchPrepared`, whatever the executor saw. A retry request never overrides this.
pub fn redispatch_permitted(class: ExecutionClass) -> bool {
    matches!(class, ExecutionClass::Pure | ExecutionClass::Idempotent | ExecutionClass::Recoverable)
}

/// The host's retryable classification of tool errors: given the tool's name and its error,
/// whether trying again may succeed. It runs before the error is journaled.
pub type RetryClassifier = Arc<dyn Fn(&str, &ToolError) -> bool + Send + Sync>;

/// Settles whether `error` is retryable: a code the tool's descriptor declares takes the
/// declared answer, then the host's classifier (when set) has the last word. Cancellation
/// acknowledgements stay non-retryable whatever either says.
pub fn classify(
    tool: &ToolDescriptor,
    classifier: Option<&RetryClassifier>,
    mut error: ToolError,
) -> ToolError {
    if error.code == codes::TOOL_CALL_CANCELLED.to_string() {
        error.retryable = false;
        return error;
    }
    if let Some(declared) = tool.errors.iter().find(|e| e.code == error.code) {
        error.retryable = declared.retryable;
    }
    if let Some(classifier) = classifier {
        error.retryable = classifier(&tool.name.to_string(), &error);
    }
    error
}

/// The error a call fails with when the host's tool deadline passes (`RL6102`). Retryable; the
/// outcome is uncertain for every class but `pure`, so the class decides what a retry may do.
pub fn timeout_error(tool: &str, class: ExecutionClass, timeout: Duration) -> ToolError {
    ToolError::retryable(
        codes::TOOL_TIMEOUT.to_string(),
        format!("the call to `{tool}` did not answer within {} ms", timeout.as_millis()),
    )
    .with_uncertain(class != ExecutionClass::Pure)
}

/// The error of an operation whose outcome the runtime cannot know and may not find out by
/// dispatching again (`RL6109`): never retryable, always uncertain.
pub fn uncertain_error(tool: &str, why: &str) -> ToolError {
    ToolError::new(
        codes::UNCERTAIN_OUTCOME.to_string(),
        format!("the outcome of `{tool}` is unknown {why}; resolve it through the host recovery API"),
    )
    .with_uncertain(true)
}

/// The error of a call whose executor panicked (`RL6105`): not retryable (a panic is a bug in
/// the host), and uncertain for every class but `pure`, since the tool may have acted first.
pub fn panicked_error(tool: &str, class: ExecutionClass, panic: &(dyn std::any::Any + Send)) -> ToolError {
    let message = panic_message(panic);
    ToolError::new(
        codes::TOOL_EXECUTOR_PANICKED.to_string(),
        format!("the executor panicked while answering the call to `{tool}`: {message}"),
    )
    .with_uncertain(class != ExecutionClass::Pure)
}

/// The message a panic carried, if it carried text.
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic without a message")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::{Registry, RegistryOptions};

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn backoff_grows_by_factor_up_to_the_cap() {
        let backoff = Backoff { base: MS(100), factor: 2, cap: MS(350) };
        let delays: Vec<Duration> = (1..=4).map(|k| backoff.delay(k)).collect();
        assert_eq!(delays, [MS(100), MS(200), MS(350), MS(350)]);
        let huge = Backoff { base: MS(1), factor: 10, cap: MS(5_000) };
        assert_eq!(huge.delay(60), MS(5_000), "overflow saturates at the cap");
    }

    #[test]
    fn retry_after_replaces_the_computed_delay_and_is_capped_only_by_configured_backoff() {
        let backoff = Backoff { base: MS(100), factor: 2, cap: MS(1_000) };
        assert_eq!(retry_delay(Some(&backoff), 1, Some(MS(700))), MS(700));
        assert_eq!(retry_delay(Some(&backoff), 1, Some(MS(9_000))), MS(1_000));
        assert_eq!(retry_delay(Some(&backoff), 2, None), MS(200));
        assert_eq!(retry_delay(None, 3, Some(MS(9_000))), MS(9_000));
        assert_eq!(retry_delay(None, 3, None), Duration::ZERO, "the default is no delay");
    }

    #[test]
    fn only_pure_idempotent_and_recoverable_operations_are_redispatched() {
        let allowed: Vec<&str> = ExecutionClass::ALL
            .into_iter()
            .filter(|c| redispatch_permitted(*c))
            .map(|c| c.as_str())
            .collect();
        assert_eq!(allowed, ["pure", "idempotent", "recoverable"]);
    }

    #[test]
    fn declared_codes_then_the_host_classifier_decide_retryability() {
        let json = r#"{"tools": [{"name": "shop.orders", "inputSchema": {"type": "object"},
            "errors": [{"code": "UNAVAILABLE", "retryable": true}, {"code": "GONE", "retryable": false}],
            "execution": "pure"}]}"#;
        let registry = Registry::from_json_str(json, &RegistryOptions::default()).expect("registry").registry;
        let tool = registry.tool(registry.tool_named("shop.orders").expect("tool"));
        assert!(classify(tool, None, ToolError::new("UNAVAILABLE", "down")).retryable);
        assert!(!classify(tool, None, ToolError::retryable("GONE", "gone")).retryable);
        assert!(classify(tool, None, ToolError::retryable("OTHER", "kept as the tool said")).retryable);
        let never: RetryClassifier = Arc::new(|_, _| false);
        assert!(!classify(tool, Some(&never), ToolError::new("UNAVAILABLE", "down")).retryable);
        let always: RetryClassifier = Arc::new(|_, _| true);
        assert!(!classify(tool, Some(&always), ToolError::cancelled("shop.orders")).retryable);
    }

    #[test]
    fn timeouts_are_retryable_and_uncertain_except_for_pure_tools() {
        let pure = timeout_error("t", ExecutionClass::Pure, MS(250));
        assert_eq!((pure.code.as_str(), pure.retryable, pure.uncertain), ("RL6102", true, false));
        assert_eq!(pure.message, "the call to `t` did not answer within 250 ms");
        assert!(timeout_error("t", ExecutionClass::Idempotent, MS(1)).uncertain);
        let unknown = uncertain_error("payments.charge", "after worker loss");
        assert_eq!((unknown.code.as_str(), unknown.retryable, unknown.uncertain), ("RL6109", false, true));
    }
}
