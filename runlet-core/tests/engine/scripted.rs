//! The scripted executor: first matching case wins, `times` and `delay_ms` as INTERFACES.md §3
//! says, cancellation during the delay, unanswered calls, and concurrent calls that exhaust
//! `times` exactly. Delays run on tokio's paused clock, so nothing really sleeps.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use runlet::diag::codes;
use runlet::engine::{ToolCapabilities, ToolError, ToolExecutor, ToolOutput};
use runlet::scripted::{CaseUsage, ScriptedExecutor};
use runlet::value::{List, Value, parse_json};
use tokio::time::Instant;

use crate::fixtures::INTERFACES_EXAMPLE;
use crate::{call, call_with, registry};

fn executor(text: &str) -> ScriptedExecutor {
    ScriptedExecutor::from_json_str(text).expect("valid fixtures")
}

fn json(text: &str) -> Value {
    parse_json(text).expect("valid JSON")
}

/// The value a dispatch answered, or the code of its error.
async fn answer(executor: &ScriptedExecutor, tool: &str, arguments: &str) -> Result<Value, String> {
    executor.dispatch(call(&registry(), tool, arguments)).await.map(|output| output.value).map_err(|e| e.code)
}

fn usage(tool: &str, index: usize, times: Option<u64>, used: u64) -> CaseUsage {
    CaseUsage { tool: tool.into(), index, times, used }
}

#[tokio::test(start_paused = true)]
async fn the_interfaces_example_answers_as_documented() {
    let executor = executor(INTERFACES_EXAMPLE);
    let registry = registry();
    let start = Instant::now();
    let customer = executor.dispatch(call(&registry, "crm.customer", r#"["c-42"]"#)).await;
    let expected = json(r#"{"id": "c-42", "email": "a@example.com", "tier": "pro"}"#);
    assert_eq!(customer, Ok(ToolOutput::new(expected)));
    assert_eq!(start.elapsed(), Duration::from_millis(200), "answers after its delay on the paused clock");

    let limited = executor.dispatch(call(&registry, "fraud.score", r#"[{"id": "c-42"}, 1]"#)).await;
    assert_eq!(limited, Err(ToolError::retryable("RATE_LIMITED", "slow down")));
    let score = executor.dispatch(call(&registry, "fraud.score", r#"[{"id": "c-42"}, 1]"#)).await;
    assert_eq!(score.map(|o| o.value), Ok(json("0.25")));
    assert_eq!(start.elapsed(), Duration::from_millis(250));
    assert_eq!(
        executor.usage(),
        [
            usage("crm.customer", 0, None, 1),
            usage("fraud.score", 0, Some(1), 1),
            usage("fraud.score", 1, None, 1)
        ]
    );
    assert!(executor.unused().is_empty());
}

#[tokio::test(start_paused = true)]
async fn the_first_matching_case_answers() {
    let executor = executor(
        r#"{"echo": [
            {"args": ["a"], "result": "first a"},
            {"args": ["a"], "result": "second a"},
            {"result": "any"},
            {"args": ["b"], "result": "never: the case above answers every call first"}
        ]}"#,
    );
    assert_eq!(answer(&executor, "echo", r#"["a"]"#).await, Ok(json(r#""first a""#)));
    assert_eq!(answer(&executor, "echo", r#"["a"]"#).await, Ok(json(r#""first a""#)));
    assert_eq!(answer(&executor, "echo", r#"["b"]"#).await, Ok(json(r#""any""#)));
    assert_eq!(answer(&executor, "echo", "[]").await, Ok(json(r#""any""#)));
    assert_eq!(
        executor.unused(),
        [usage("echo", 1, None, 0), usage("echo", 3, None, 0)],
        "shadowed cases are reported unused"
    );
}

#[tokio::test(start_paused = true)]
async fn times_are_used_up_in_order() {
    let executor = executor(
        r#"{"echo": [
            {"args": ["a"], "result": 1, "times": 2},
            {"args": ["a"], "error": {"code": "GONE", "message": "no more", "retryable": false}, "times": 1},
            {"args": ["b"], "result": 3, "times": 1}
        ]}"#,
    );
    assert_eq!(answer(&executor, "echo", r#"["a"]"#).await, Ok(Value::Int(1)));
    assert_eq!(answer(&executor, "echo", r#"["a"]"#).await, Ok(Value::Int(1)));
    assert_eq!(answer(&executor, "echo", r#"["a"]"#).await, Err("GONE".to_owned()));
    assert_eq!(answer(&executor, "echo", r#"["a"]"#).await, Err("RL8204".to_owned()));
    assert_eq!(answer(&executor, "echo", r#"["b"]"#).await, Ok(Value::Int(3)));
    assert_eq!(answer(&executor, "echo", r#"["b"]"#).await, Err("RL8204".to_owned()));
    assert_eq!(
        executor.usage(),
        [usage("echo", 0, Some(2), 2), usage("echo", 1, Some(1), 1), usage("echo", 2, Some(1), 1)]
    );
}

/// Arguments are compared with the language's `==`: `1` matches `1.0`, but the list envelope,
/// kinds and nesting still matter (`f(a)` is not `f([a])`, `f(a, b)` is not `f({x: a})`).
#[tokio::test(start_paused = true)]
async fn arguments_match_by_canonical_equality() {
    let executor = executor(
        r#"{"echo": [
            {"args": [1], "result": "one"},
            {"args": [{"x": "a"}], "result": "object"},
            {"args": ["a", "b"], "result": "two"}
        ]}"#,
    );
    let registry = registry();
    let number_one = List::new(vec![Value::number(1.0).expect("finite")]).expect("shallow");
    let answered = executor.dispatch(call_with(&registry, "echo", number_one)).await.map(|o| o.value);
    assert_eq!(answered, Ok(json(r#""one""#)));
    assert_eq!(answer(&executor, "echo", "[1.0]").await, Ok(json(r#""one""#)));
    assert_eq!(answer(&executor, "echo", r#"[{"x": "a"}]"#).await, Ok(json(r#""object""#)));
    assert_eq!(answer(&executor, "echo", r#"["a", "b"]"#).await, Ok(json(r#""two""#)));
    for unmatched in
        [r#"["1"]"#, "[[1]]", "[1, 1]", r#"["a"]"#, r#"[["a", "b"]]"#, r#"[{"x": "a", "y": null}]"#]
    {
        assert_eq!(answer(&executor, "echo", unmatched).await, Err("RL8204".to_owned()), "{unmatched}");
    }
}

#[tokio::test(start_paused = true)]
async fn cancellation_during_the_delay_returns_promptly() {
    let executor = Arc::new(executor(r#"{"echo": [{"result": "late", "delay_ms": 10000, "times": 1}]}"#));
    let call = call(&registry(), "echo", "[]");
    let token = call.context.cancellation.clone();
    let start = Instant::now();
    let running = tokio::spawn({
        let executor = executor.clone();
        async move { executor.dispatch(call).await }
    });
    tokio::time::sleep(Duration::from_millis(1000)).await;
    token.cancel();
    let outcome = running.await.expect("the task completes");
    assert_eq!(outcome, Err(ToolError::cancelled("echo")));
    assert_eq!(start.elapsed(), Duration::from_millis(1000), "does not wait out the delay");
    assert_eq!(
        executor.usage(),
        [usage("echo", 0, Some(1), 1)],
        "the case was claimed by the cancelled call"
    );
    assert_eq!(answer(&executor, "echo", "[]").await, Err("RL8204".to_owned()));
    assert_eq!(
        executor.capabilities("echo"),
        ToolCapabilities { cancellation: true, completion_after_cancel: false, answers_inline: true }
    );
}

/// A case without `delay_ms` answers in the dispatch's first poll, on a tokio runtime that has
/// no timer at all (where any sleep, even of zero, would panic): no timer tick per call.
#[test]
fn a_case_without_a_delay_answers_at_once_without_the_timer() {
    let executor = executor(
        r#"{"echo": [{"args": ["a"], "result": "now"}, {"error": {"code": "NO", "message": "no", "retryable": false}}]}"#,
    );
    let registry = registry();
    let no_timer = tokio::runtime::Builder::new_current_thread().build().expect("a runtime without timers");
    let answered = no_timer.block_on(async {
        let mut answers = Vec::new();
        for arguments in [r#"["a"]"#, r#"["b"]"#, r#"["a"]"#] {
            let dispatch = executor.dispatch(call(&registry, "echo", arguments));
            let mut dispatch = std::pin::pin!(dispatch);
            let mut context = std::task::Context::from_waker(std::task::Waker::noop());
            match dispatch.as_mut().poll(&mut context) {
                std::task::Poll::Ready(answer) => answers.push(answer.map(|o| o.value).map_err(|e| e.code)),
                std::task::Poll::Pending => panic!("`{arguments}` was not answered in the first poll"),
            }
        }
        answers
    });
    assert_eq!(answered, [Ok(json(r#""now""#)), Err("NO".to_owned()), Ok(json(r#""now""#))]);
}

#[tokio::test(start_paused = true)]
async fn an_already_cancelled_call_uses_no_case() {
    let executor = executor(r#"{"echo": [{"result": 1, "times": 1}]}"#);
    let registry = registry();
    let call = call(&registry, "echo", "[]");
    call.context.cancellation.cancel();
    let outcome = executor.dispatch(call).await;
    assert_eq!(outcome.map_err(|e| e.code), Err(codes::TOOL_CALL_CANCELLED.to_string()));
    assert_eq!(executor.unused(), [usage("echo", 0, Some(1), 0)]);
    assert_eq!(answer(&executor, "echo", "[]").await, Ok(Value::Int(1)));
}

#[tokio::test(start_paused = true)]
async fn an_unanswered_call_names_the_tool_the_arguments_and_the_cases() {
    let executor = executor(
        r#"{"crm.customer": [
            {"args": ["c-41"], "result": {"id": "c-41"}},
            {"args": ["c-42"], "error": {"code": "RATE_LIMITED", "message": "slow", "retryable": true}, "times": 1},
            {"args": ["c-43"], "result": null, "times": 2}
        ]}"#,
    );
    assert_eq!(answer(&executor, "crm.customer", r#"["c-42"]"#).await, Err("RATE_LIMITED".to_owned()));
    let error =
        executor.dispatch(call(&registry(), "crm.customer", r#"["c-42"]"#)).await.expect_err("unanswered");
    assert_eq!((error.code.as_str(), error.retryable, error.uncertain), ("RL8204", false, false));
    insta::assert_snapshot!("unanswered_message", error.message);
    insta::assert_snapshot!("unanswered_details", format!("{:?}", error.details));
}

#[tokio::test(start_paused = true)]
async fn a_tool_without_cases_suggests_the_closest_name() {
    let executor = executor(r#"{"crm.customers": [{"result": 1}], "echo": []}"#);
    let error =
        executor.dispatch(call(&registry(), "crm.customer", r#"["c-1", {"n": 2}]"#)).await.expect_err("none");
    assert_eq!(
        error.message,
        "no case of the tool fixtures answers `crm.customer` called with [\"c-1\",{\"n\":2}]; \
         the fixture file has no cases for `crm.customer` (did you mean `crm.customers`?)"
    );
    let error = executor.dispatch(call(&registry(), "echo", "[]")).await.expect_err("none");
    assert_eq!(
        error.message,
        "no case of the tool fixtures answers `echo` called with []; the fixture file has no cases for `echo`"
    );
}

#[tokio::test(start_paused = true)]
async fn arguments_json_cannot_show_are_described_anyway() {
    let executor = executor(r#"{"echo": []}"#);
    let bytes = List::new(vec![Value::bytes(vec![0u8, 255])]).expect("shallow");
    let error = executor.dispatch(call_with(&registry(), "echo", bytes)).await.expect_err("none");
    assert!(error.message.contains(r#"called with [b"00ff"]"#), "{}", error.message);
}

/// Many calls race for a case with `times: 5`: exactly five get it, the rest fall through.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_calls_exhaust_times_exactly() {
    let executor = Arc::new(executor(
        r#"{"echo": [{"result": "limited", "times": 5}, {"result": "fallback", "times": 59}]}"#,
    ));
    let registry = registry();
    let barrier = Arc::new(tokio::sync::Barrier::new(64));
    let tasks: Vec<_> = (0..64)
        .map(|i| {
            let (executor, barrier) = (executor.clone(), barrier.clone());
            let call = call(&registry, "echo", &format!("[{i}]"));
            tokio::spawn(async move {
                barrier.wait().await;
                executor.dispatch(call).await
            })
        })
        .collect();
    let mut answers = Vec::new();
    for task in tasks {
        answers.push(task.await.expect("the task completes").expect("answered").value);
    }
    let limited = answers.iter().filter(|v| **v == json(r#""limited""#)).count();
    assert_eq!((limited, answers.len() - limited), (5, 59));
    assert_eq!(executor.usage(), [usage("echo", 0, Some(5), 5), usage("echo", 1, Some(59), 59)]);
    assert_eq!(answer(&executor, "echo", "[0]").await, Err("RL8204".to_owned()));
}

/// Arguments already at the depth limit cannot nest inside the error's details; the details then
/// keep only the tool, and the call still fails cleanly.
#[tokio::test(start_paused = true)]
async fn arguments_at_the_depth_limit_are_left_out_of_the_details() {
    let executor = executor(r#"{"echo": [{"args": [1], "result": 1}]}"#);
    let mut nested = Value::Null;
    for _ in 0..runlet::value::MAX_DEPTH - 1 {
        nested = Value::List(List::new(vec![nested]).expect("within the limit"));
    }
    let deepest = List::new(vec![nested]).expect("at the limit");
    let error = executor.dispatch(call_with(&registry(), "echo", deepest)).await.expect_err("unanswered");
    assert_eq!(error.code, "RL8204");
    assert_eq!(error.details.keys().collect::<Vec<_>>(), ["tool"]);
}
