//! Failure semantics through the `Runtime`: Appendix A with `shop.orders` failing, host backoff
//! and `retry_after`, tool deadlines by execution class, recovery before redispatch, the host's
//! retryable classification and the unsafe-tool prohibition.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use runlet::analyze::Inputs;
use runlet::engine::event::Event;
use runlet::engine::{
    Outcome, RecoveryOutcome, RecoveryRequest, ToolCall, ToolError, ToolExecutor, ToolOutput,
};
use runlet::runtime::{BuildError, Runtime, RuntimeBuilder};
use runlet::scripted::ScriptedExecutor;
use runlet::value::Value;

use super::{example, inputs, registry, succeeded};

/// Runs `source` to its end and returns the outcome with every committed event.
fn run_to_end(builder: RuntimeBuilder, source: &str, inputs: &Inputs) -> (Outcome, Vec<Event>) {
    let runtime = builder.build().expect("runtime");
    let program = runtime.compile(source, inputs).unwrap_or_else(|d| panic!("compiles: {d:?}"));
    let mut run = runtime.start(&program, inputs).expect("starts");
    let mut events = Vec::new();
    while !events
        .iter()
        .any(|e| matches!(e, Event::RunSucceeded | Event::RunFailed { .. } | Event::RunCancelled))
    {
        match run.events().blocking_recv() {
            Some((_, event)) => events.push(event),
            None => break,
        }
    }
    (run.wait().expect("journal works"), events)
}

fn prepared(events: &[Event], tool: &str) -> usize {
    events.iter().filter(|e| matches!(e, Event::CallDispatchPrepared { tool: t, .. } if &**t == tool)).count()
}

fn timer_delays(events: &[Event]) -> Vec<u64> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::TimerStarted { delay_ms, .. } => Some(*delay_ms),
            _ => None,
        })
        .collect()
}

#[test]
fn appendix_a_with_shop_orders_failing_retries_twice_then_summarizes_without_orders() {
    let tools = ScriptedExecutor::from_json_str(&example("appendix-a", "tools-orders-failing.json"))
        .expect("fixtures");
    let builder = Runtime::builder()
        .registry(registry(&example("appendix-a", "registry.json")))
        .executor(Arc::new(tools));
    let inputs = inputs(&example("appendix-a", "inputs.json"));
    let (outcome, events) = run_to_end(builder, &example("appendix-a", "main.run"), &inputs);
    assert_eq!(
        succeeded(outcome),
        "\"Ada (pro) has one open high-priority refund ticket; her orders could not be loaded (the order service is unavailable).\""
    );
    assert_eq!(prepared(&events, "shop.orders"), 3, "retry 2 is three attempts");
    for shared in ["crm.customer", "billing.limits", "support.tickets"] {
        assert_eq!(prepared(&events, shared), 1, "{shared} is outside the boundary and never retried");
    }
    assert_eq!(prepared(&events, "fraud.score"), 0, "no orders, no scores");
    assert_eq!(prepared(&events, "ai.summarize"), 1, "only the catch summary runs");
    let retries = events.iter().filter(|e| matches!(e, Event::BoundaryRetryScheduled { .. })).count();
    let catches = events.iter().filter(|e| matches!(e, Event::CatchSelected { .. })).count();
    assert_eq!((retries, catches), (2, 1));
}

const FLAKY_REGISTRY: &str = r#"{"tools": [
    {"name": "t.flaky", "params": [{"name": "x", "schema": {"type": "integer"}}], "outputSchema": {"type": "integer"},
     "errors": [{"code": "DECLARED_RETRYABLE", "retryable": true}], "execution": "idempotent"},
    {"name": "t.once", "params": [{"name": "x", "schema": {"type": "integer"}}], "outputSchema": {"type": "integer"},
     "execution": "at_most_once"},
    {"name": "t.checked", "params": [{"name": "x", "schema": {"type": "integer"}}], "outputSchema": {"type": "integer"},
     "execution": "recoverable"}
]}"#;

const RETRIED: &str =
    "r = boundary retry 2 {\n    return t.flaky(1)\n} catch err {\n    return err.code\n}\nreturn r\n";

/// Fails every call with `error`, counting dispatches.
struct AlwaysFails {
    error: ToolError,
    calls: AtomicUsize,
}

#[async_trait]
impl ToolExecutor for AlwaysFails {
    async fn dispatch(&self, _: ToolCall) -> Result<ToolOutput, ToolError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Err(self.error.clone())
    }
}

fn failing(error: ToolError) -> Arc<AlwaysFails> {
    Arc::new(AlwaysFails { error, calls: AtomicUsize::new(0) })
}

#[test]
fn backoff_delays_grow_by_the_factor_and_retry_after_replaces_them_up_to_the_cap() {
    let executor = failing(ToolError::retryable("BUSY", "busy"));
    let builder = Runtime::builder()
        .registry(registry(FLAKY_REGISTRY))
        .executor(executor.clone())
        .retry_backoff(Duration::from_millis(20), 3, Duration::from_millis(50));
    let (outcome, events) = run_to_end(builder, RETRIED, &Inputs::new());
    assert_eq!(succeeded(outcome), "\"BUSY\"");
    assert_eq!(timer_delays(&events), [20, 50], "min(cap, base × factorᵏ⁻¹)");
    assert_eq!(executor.calls.load(Ordering::SeqCst), 3);
    assert!(events.iter().any(|e| matches!(e, Event::TimerArmed { .. })), "deadlines are journaled");

    let asks = ToolError::retryable("BUSY", "busy").with_retry_after(Duration::from_millis(30));
    let builder = Runtime::builder()
        .registry(registry(FLAKY_REGISTRY))
        .executor(failing(asks))
        .retry_backoff(Duration::from_millis(5), 2, Duration::from_millis(25));
    let (_, events) = run_to_end(builder, RETRIED, &Inputs::new());
    assert_eq!(timer_delays(&events), [25, 25], "retry_after replaces the delay, capped by the cap");

    let asks = ToolError::retryable("BUSY", "busy").with_retry_after(Duration::from_millis(10));
    let builder = Runtime::builder().registry(registry(FLAKY_REGISTRY)).executor(failing(asks));
    let (_, events) = run_to_end(builder, RETRIED, &Inputs::new());
    assert_eq!(timer_delays(&events), [10, 10], "without backoff, retry_after still applies");
}

#[test]
fn declared_error_codes_and_the_host_classifier_decide_what_is_retried() {
    let declared = failing(ToolError::new("DECLARED_RETRYABLE", "the registry says retry"));
    let builder = Runtime::builder().registry(registry(FLAKY_REGISTRY)).executor(declared.clone());
    let (outcome, _) = run_to_end(builder, RETRIED, &Inputs::new());
    assert_eq!(succeeded(outcome), "\"DECLARED_RETRYABLE\"");
    assert_eq!(declared.calls.load(Ordering::SeqCst), 3);

    let refused = failing(ToolError::retryable("BUSY", "the tool says retry"));
    let builder = Runtime::builder()
        .registry(registry(FLAKY_REGISTRY))
        .executor(refused.clone())
        .retry_classifier(|_, error| error.code != "BUSY");
    let (outcome, _) = run_to_end(builder, RETRIED, &Inputs::new());
    assert_eq!(succeeded(outcome), "\"BUSY\"");
    assert_eq!(refused.calls.load(Ordering::SeqCst), 1, "the host classified BUSY as not retryable");
}

/// Never answers until its token fires; counts dispatches and recovery questions. Recovery
/// answers `recovered`.
struct Hangs {
    dispatches: AtomicUsize,
    recoveries: AtomicUsize,
    recovered: RecoveryOutcome,
}

#[async_trait]
impl ToolExecutor for Hangs {
    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        self.dispatches.fetch_add(1, Ordering::SeqCst);
        call.context.cancellation.cancelled().await;
        Err(ToolError::cancelled(&call.tool))
    }

    async fn recover(&self, _: RecoveryRequest) -> Result<RecoveryOutcome, ToolError> {
        self.recoveries.fetch_add(1, Ordering::SeqCst);
        Ok(self.recovered.clone())
    }
}

fn hangs(recovered: RecoveryOutcome) -> Arc<Hangs> {
    Arc::new(Hangs { dispatches: AtomicUsize::new(0), recoveries: AtomicUsize::new(0), recovered })
}

fn timed_out(tool: &str, executor: Arc<Hangs>) -> Value {
    let source = format!(
        "r = boundary retry 1 {{\n    return {tool}(1)\n}} catch err {{\n    return [err.code, err.uncertain, err.retryable]\n}}\nreturn r\n"
    );
    let builder = Runtime::builder()
        .registry(registry(FLAKY_REGISTRY))
        .executor(executor)
        .tool_timeout(Duration::from_millis(30));
    match run_to_end(builder, &source, &Inputs::new()).0 {
        Outcome::Succeeded(value) => value.value().clone(),
        other => panic!("expected the catch value, got {other:?}"),
    }
}

#[test]
fn a_tool_deadline_fails_the_call_as_a_timeout_retried_only_where_the_class_allows() {
    let idempotent = hangs(RecoveryOutcome::Unsupported);
    let caught = timed_out("t.flaky", idempotent.clone());
    assert_eq!(caught, runlet::value::parse_json(r#"["RL6102", true, true]"#).expect("json"));
    assert_eq!(idempotent.dispatches.load(Ordering::SeqCst), 2, "redispatched once, same operation");

    let once = hangs(RecoveryOutcome::Unsupported);
    let caught = timed_out("t.once", once.clone());
    assert_eq!(
        caught,
        runlet::value::parse_json(r#"["RL6102", true, false]"#).expect("json"),
        "uncertain and, for at_most_once, not retryable"
    );
    assert_eq!(once.dispatches.load(Ordering::SeqCst), 1, "never redispatched after CallDispatchPrepared");
}

#[test]
fn a_recoverable_call_that_timed_out_is_recovered_by_operation_id_before_any_redispatch() {
    let applied = hangs(RecoveryOutcome::Succeeded(ToolOutput::new(Value::Int(41))));
    let source =
        "r = boundary retry 1 {\n    return t.checked(1)\n} catch err {\n    return 0\n}\nreturn r\n";
    let builder = Runtime::builder()
        .registry(registry(FLAKY_REGISTRY))
        .executor(applied.clone())
        .tool_timeout(Duration::from_millis(30));
    let (outcome, _) = run_to_end(builder, source, &Inputs::new());
    assert_eq!(succeeded(outcome), "41", "the recovered output is the call's result");
    assert_eq!(applied.dispatches.load(Ordering::SeqCst), 1);
    assert_eq!(applied.recoveries.load(Ordering::SeqCst), 1);

    let unknown = hangs(RecoveryOutcome::Unknown);
    let caught = timed_out("t.checked", unknown.clone());
    assert_eq!(caught, runlet::value::parse_json(r#"["RL6109", true, false]"#).expect("json"));
    assert_eq!(unknown.dispatches.load(Ordering::SeqCst), 1, "an unknown outcome is never redispatched");
}

#[test]
fn a_runtime_can_prohibit_unsafe_tools() {
    let json = r#"{"tools": [{"name": "t.wild", "inputSchema": {"type": "object"}}]}"#;
    let built = Runtime::builder()
        .registry(registry(json))
        .executor(failing(ToolError::new("X", "x")))
        .prohibit_unsafe_tools()
        .build();
    match built {
        Err(BuildError::UnsafeToolProhibited { tool }) => assert_eq!(tool, "t.wild"),
        other => panic!("expected the prohibition, got {other:?}"),
    }
}

#[test]
fn a_backoff_past_the_clock_never_fires_and_cancelling_the_run_ends_it() {
    let executor = failing(ToolError::retryable("BUSY", "busy").with_retry_after(Duration::MAX));
    let runtime = Runtime::builder()
        .registry(registry(FLAKY_REGISTRY))
        .executor(executor.clone())
        .build()
        .expect("runtime");
    let program = runtime.compile(RETRIED, &Inputs::new()).expect("compiles");
    let mut run = runtime.start(&program, &Inputs::new()).expect("starts");
    loop {
        match run.events().blocking_recv() {
            Some((_, Event::TimerArmed { deadline_unix_ms, .. })) => {
                assert_eq!(deadline_unix_ms, u64::MAX, "a deadline past the clock's range");
                break;
            }
            Some(_) => {}
            None => panic!("the run ended before its backoff started"),
        }
    }
    run.cancel();
    assert!(matches!(run.wait().expect("journal works"), Outcome::Cancelled), "the backoff is cancellable");
    assert_eq!(executor.calls.load(Ordering::SeqCst), 1);
}
