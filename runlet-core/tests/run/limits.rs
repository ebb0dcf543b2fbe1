//! Execution limits and call permits end to end: for every limit key, a run at the cap succeeds
//! and one past it fails with its `RL41xx` code, key, amount, cap and span; boundaries do not
//! catch limit failures; runs count independently; permits bound calls in flight.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use runlet::analyze::Inputs;
use runlet::engine::event::Event;
use runlet::engine::{
    LimitKey, Limits, Outcome, RunError, ToolCall, ToolError, ToolExecutor, ToolOutput, replay,
};
use runlet::journal::{Journal, MemoryJournal};
use runlet::runtime::{RunOptions, Runtime};
use runlet::value::{Value, rcve, to_presentation_json};

use crate::registry;

const TOOLS: &str = r#"{
    "resource_groups": {"api": 3},
    "tools": [
        {"name": "echo", "params": [{"name": "x", "schema": {}}], "execution": "idempotent"},
        {"name": "slow", "params": [{"name": "x", "schema": {}}], "execution": "idempotent"},
        {"name": "narrow", "params": [{"name": "x", "schema": {}}], "execution": "idempotent", "max_concurrency": 2},
        {"name": "api.read", "params": [{"name": "x", "schema": {}}], "execution": "idempotent", "resource_group": "api"},
        {"name": "api.write", "params": [{"name": "x", "schema": {}}], "execution": "idempotent", "resource_group": "api"},
        {"name": "flaky", "params": [], "execution": "idempotent"},
        {"name": "items", "params": [{"name": "n", "schema": {"type": "integer"}}], "outputSchema": {"type": "array", "items": {"type": "integer"}}, "execution": "pure"}
    ]
}"#;

/// Calls in flight now and at most, overall, per tool and per namespace root.
#[derive(Default)]
struct InFlight {
    now: BTreeMap<String, usize>,
    peak: BTreeMap<String, usize>,
}

/// `echo(x)` answers `x`; `slow`, `narrow` and `api.*` answer `x` after a pause; `flaky()` fails
/// retryably; `items(n)` answers `[1, …, n]`.
#[derive(Default)]
struct Tools {
    in_flight: Mutex<InFlight>,
}

impl Tools {
    fn track(&self, tool: &str, delta: isize) {
        let mut state = self.in_flight.lock().expect("lock");
        let root = tool.split('.').next().unwrap_or(tool).to_owned() + ".*";
        for key in ["all".to_owned(), tool.to_owned(), root] {
            let now = state.now.entry(key.clone()).or_insert(0);
            *now = now.checked_add_signed(delta).expect("in-flight count");
            let now = *now;
            let peak = state.peak.entry(key).or_insert(0);
            *peak = (*peak).max(now);
        }
    }

    fn peak(&self, key: &str) -> usize {
        self.in_flight.lock().expect("lock").peak.get(key).copied().unwrap_or(0)
    }
}

#[async_trait]
impl ToolExecutor for Tools {
    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        let first = call.arguments.iter().next().cloned().unwrap_or(Value::Null);
        match call.tool.as_ref() {
            "flaky" => Err(ToolError::retryable("RATE_LIMITED", "slow down")),
            "items" => {
                let n = match first {
                    Value::Int(n) => n,
                    _ => 0,
                };
                let list = runlet::value::List::new((1..=n).map(Value::Int).collect()).expect("list");
                Ok(ToolOutput::new(Value::List(list)))
            }
            "echo" => Ok(ToolOutput::new(first)),
            tool => {
                self.track(tool, 1);
                tokio::time::sleep(Duration::from_millis(40)).await;
                self.track(tool, -1);
                Ok(ToolOutput::new(first))
            }
        }
    }
}

fn runtime(tools: Arc<Tools>, limits: Limits) -> Runtime {
    Runtime::builder().registry(registry(TOOLS)).executor(tools).limits(limits).build().expect("runtime")
}

/// Runs `source` once under `limits` (given per run) and returns how it ended.
fn run(source: &str, limits: Limits) -> Outcome {
    let runtime = runtime(Arc::new(Tools::default()), Limits::new());
    let program = runtime.compile(source, &Inputs::new()).expect("compiles");
    let options = RunOptions { limits, ..RunOptions::default() };
    runtime.start_with(&program, &Inputs::new(), options).expect("starts").wait().expect("journal")
}

fn succeeded(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Succeeded(value) => to_presentation_json(value.value()).expect("JSON"),
        other => panic!("expected success, got {other:?}"),
    }
}

fn failed(outcome: Outcome) -> RunError {
    match outcome {
        Outcome::Failed(error) => error,
        other => panic!("expected a failed run, got {other:?}"),
    }
}

fn detail(error: &RunError, key: &str) -> Value {
    error.details.get(key).cloned().unwrap_or_else(|| panic!("no `{key}` in {:?}", error.details))
}

/// The source text the failure's `details.span` points at.
fn span_text<'s>(error: &RunError, source: &'s str) -> &'s str {
    let Value::Object(span) = detail(error, "span") else { panic!("span is not an object") };
    let at = |key: &str| match span.get(key) {
        Some(Value::Int(n)) => *n as usize,
        other => panic!("span {key} is {other:?}"),
    };
    &source[at("start")..at("end")]
}

/// `source` succeeds with `key` capped at `cap`, and fails past it: one less than `cap` is
/// crossed by reaching `cap`. Returns the failure.
fn at_and_past_the_cap(source: &str, key: LimitKey, cap: u64) -> RunError {
    let at_cap = run(source, Limits::new().with(key, cap));
    succeeded(&at_cap);
    let error = failed(run(source, Limits::new().with(key, cap - 1)));
    assert_eq!(Some(error.code.clone()), key.code().map(|c| c.to_string()), "{error:?}");
    assert_eq!(detail(&error, "limit"), Value::from(key.as_str()));
    assert_eq!(detail(&error, "current"), Value::Int(cap as i64), "{key}: {error:?}");
    assert_eq!(detail(&error, "cap"), Value::Int(cap as i64 - 1), "{key}");
    assert!(!error.retryable);
    assert!(error.message.contains(key.as_str()), "{}", error.message);
    error
}

#[test]
fn tool_calls_count_every_dispatch() {
    let source = "a = echo(1)\nb = echo(a)\nc = echo(b)\nreturn c\n";
    let error = at_and_past_the_cap(source, LimitKey::ToolCalls, 3);
    assert_eq!(span_text(&error, source), "echo(b)");
    assert_eq!(error.tool.as_deref(), Some("echo"));
}

#[test]
fn tool_calls_count_every_attempt_of_a_boundary() {
    let source = "return boundary retry 2 {\n    return flaky()\n} catch err {\n    return err.code\n}\n";
    let error = at_and_past_the_cap(source, LimitKey::ToolCalls, 3);
    assert_eq!(span_text(&error, source), "flaky()");
    assert_eq!(error.attempt, 3, "the third attempt's call crossed it");
}

#[test]
fn node_evaluations_count_each_evaluation_in_every_iteration() {
    // The list (a constant the analyzer folds), the loop, and per item the item binding, the
    // constant 2 and the product: 1 + 1 + 3 × 3.
    let source = "return for n in [1, 2, 3] {\n    return n * 2\n}\n";
    let error = at_and_past_the_cap(source, LimitKey::NodeEvaluations, 11);
    assert_eq!(span_text(&error, source), "n * 2");
}

#[test]
fn depth_counts_nested_scopes() {
    // The program (1), an iteration (2), the selected arm (3).
    let source = "return for n in [1, 2] {\n    return (n if n > 1 else 0)\n}\n";
    let error = at_and_past_the_cap(source, LimitKey::Depth, 3);
    assert!(["n", "0"].contains(&span_text(&error, source)), "{}", span_text(&error, source));
}

#[test]
fn loop_iterations_bound_the_items_of_one_loop() {
    let source = "xs = items(3)\nys = for x in xs {\n    return x\n}\nreturn ys\n";
    let error = at_and_past_the_cap(source, LimitKey::LoopIterations, 3);
    assert!(span_text(&error, source).starts_with("for x in xs"), "{}", span_text(&error, source));
    let fold = "return fold total = 0 for x in items(4) {\n    return total + x\n}\n";
    at_and_past_the_cap(fold, LimitKey::LoopIterations, 4);
}

#[test]
fn graph_nodes_count_materialized_nodes() {
    // As for evaluations: 1 + 1 + 3 × 3 nodes; `unused` is never demanded, so never materialized.
    let source = "unused = items(7)\nreturn for n in [1, 2, 3] {\n    return n * 2\n}\n";
    let error = at_and_past_the_cap(source, LimitKey::GraphNodes, 11);
    // The last node the last iteration materializes: the product's right operand.
    assert_eq!(span_text(&error, source), "2");
    assert!(error.node_id.starts_with("i2~"), "{}", error.node_id);
}

#[test]
fn graph_edges_count_every_input_of_every_planned_node() {
    // The loop reads its list (1 edge); each of 3 iterations multiplies two operands (2 edges).
    let source = "return for n in [1, 2, 3] {\n    return n * 2\n}\n";
    let error = at_and_past_the_cap(source, LimitKey::GraphEdges, 7);
    // The last edge the last iteration plans: the product's right operand.
    assert_eq!(span_text(&error, source), "n * 2");
    assert!(error.node_id.starts_with("i2~"), "{}", error.node_id);
}

/// Runs `source` under `limits` with a journal of its own: how the run ended, and each journal
/// record's event with the record's length.
fn journaled_run(source: &str, limits: Limits) -> (Outcome, Vec<(Event, u64)>) {
    let journal = Arc::new(MemoryJournal::new());
    let runtime = Runtime::builder()
        .registry(registry(TOOLS))
        .executor(Arc::new(Tools::default()))
        .journal(journal.clone())
        .limits(limits)
        .build()
        .expect("runtime");
    let program = runtime.compile(source, &Inputs::new()).expect("compiles");
    let handle = runtime.start(&program, &Inputs::new()).expect("starts");
    let run = handle.run_id().clone();
    let outcome = handle.wait().expect("journal");
    let reader = tokio::runtime::Builder::new_current_thread().build().expect("reader");
    let records = reader.block_on(journal.read(&run, 0, usize::MAX)).expect("read");
    let events = records
        .iter()
        .map(|record| (Event::decode(&record.bytes).expect("decodes").1, record.bytes.len() as u64))
        .collect();
    (outcome, events)
}

fn bytes_of(records: &[(Event, u64)]) -> u64 {
    records.iter().map(|(_, len)| len).sum()
}

const TWO_CALLS: &str = "a = echo(1)\nreturn echo(a)\n";

#[test]
fn journal_bytes_count_every_record_and_the_success_record_must_fit_too() {
    let (outcome, records) = journaled_run(TWO_CALLS, Limits::new());
    succeeded(&outcome);
    assert_eq!(records.last().map(|(e, _)| e), Some(&Event::RunSucceeded));
    let total = bytes_of(&records);
    // One byte short, the run's success record is the one that crosses the cap.
    let error = at_and_past_the_cap(TWO_CALLS, LimitKey::JournalBytes, total);
    assert_eq!(error.node_id, "", "the run as a whole crossed it");
    assert_eq!(span_text(&error, TWO_CALLS).trim_end(), TWO_CALLS.trim_end());
    let (_, failed_records) = journaled_run(TWO_CALLS, Limits::new().with(LimitKey::JournalBytes, total - 1));
    let events: Vec<&Event> = failed_records.iter().map(|(e, _)| e).collect();
    let succeeded_run: Vec<&Event> = records.iter().map(|(e, _)| e).collect();
    let crossing = succeeded_run.len() - 1;
    assert_eq!(events[..crossing], succeeded_run[..crossing], "everything but the success is kept");
    assert_eq!(
        events[crossing..],
        [
            &Event::LimitExceeded {
                limit: "journal_bytes".into(),
                current: total,
                cap: total - 1,
                node: "".into()
            },
            &Event::RunFailed { code: "RL4112".into() },
        ]
    );
}

#[test]
fn journal_bytes_crossed_by_a_call_completion_stop_the_run_before_its_next_call_and_replay_there() {
    let (_, records) = journaled_run(TWO_CALLS, Limits::new());
    let completion =
        records.iter().position(|(e, _)| matches!(e, Event::CallCompleted { .. })).expect("a completion");
    let cap = bytes_of(&records[..=completion]) - 1;
    let limits = Limits::new().with(LimitKey::JournalBytes, cap);
    let (outcome, journal) = journaled_run(TWO_CALLS, limits.clone());
    let error = failed(outcome);
    assert_eq!(error.code, "RL4112");
    assert_eq!(detail(&error, "cap"), Value::Int(cap as i64));
    let crossing = journal
        .iter()
        .position(|(e, _)| matches!(e, Event::LimitExceeded { .. }))
        .expect("the breach is journaled");
    assert!(crossing > completion, "the completion's step is journaled before the breach");
    assert_eq!(journal[..=completion], records[..=completion]);
    assert_eq!(detail(&error, "current"), Value::Int(bytes_of(&journal[..crossing]) as i64));
    let prepared = journal.iter().filter(|(e, _)| matches!(e, Event::CallDispatchPrepared { .. })).count();
    assert_eq!(prepared, 1, "the second call is never prepared");
    assert_eq!(journal.last().map(|(e, _)| e), Some(&Event::RunFailed { code: "RL4112".into() }));
    // A fresh core fed the journal regenerates it, crossing at the same record.
    let runtime = runtime(Arc::new(Tools::default()), Limits::new());
    let program = runtime.compile(TWO_CALLS, &Inputs::new()).expect("compiles");
    let core = runtime.core(&program, &RunOptions { limits, ..RunOptions::default() });
    let events: Vec<Event> = journal.into_iter().map(|(e, _)| e).collect();
    let replayed = replay(core, &events).expect("replays without divergence");
    assert!(matches!(replayed.outcome, Some(Outcome::Failed(e)) if e == error));
}

#[test]
fn source_bytes_bound_the_program_text() {
    let source = "return \"a short program\"\n";
    let error = at_and_past_the_cap(source, LimitKey::SourceBytes, source.len() as u64);
    assert_eq!(error.node_id, "", "the program as a whole crossed it");
    assert_eq!(span_text(&error, source).trim_end(), source.trim_end());
}

#[test]
fn call_input_bytes_measure_the_canonical_argument_list() {
    let argument = Value::from("twenty bytes of text");
    let list = runlet::value::List::new(vec![argument]).expect("list");
    let size = rcve::encode(&Value::List(list)).len() as u64;
    let source = "return echo(\"twenty bytes of text\")\n";
    let error = at_and_past_the_cap(source, LimitKey::CallInputBytes, size);
    assert_eq!(span_text(&error, source), "echo(\"twenty bytes of text\")");
}

#[test]
fn call_output_bytes_measure_the_canonical_output() {
    let output = runlet::value::List::new((1..=5).map(Value::Int).collect()).expect("list");
    let size = rcve::encode(&Value::List(output)).len() as u64;
    let source = "return items(5)\n";
    let error = at_and_past_the_cap(source, LimitKey::CallOutputBytes, size);
    assert_eq!(span_text(&error, source), "items(5)");
}

#[test]
fn retries_count_every_new_attempt_and_no_catch_takes_the_failure() {
    let source = "return boundary retry 3 {\n    return flaky()\n} catch err {\n    return err.code\n}\n";
    // Three retries fit a cap of 3; the catch then takes the tool's own error.
    assert_eq!(succeeded(&run(source, Limits::new().with(LimitKey::Retries, 3))), r#""RATE_LIMITED""#);
    let error = at_and_past_the_cap(source, LimitKey::Retries, 3);
    assert!(span_text(&error, source).starts_with("boundary retry 3"));
}

#[test]
fn wall_clock_stops_a_run_that_takes_too_long() {
    let source = "a = slow(1)\nb = slow(a)\nreturn b\n";
    succeeded(&run(source, Limits::new().with(LimitKey::WallClockMs, 60_000)));
    let error = failed(run(source, Limits::new().with(LimitKey::WallClockMs, 20)));
    assert_eq!(error.code, "RL4104");
    assert_eq!(detail(&error, "limit"), Value::from("wall_clock_ms"));
    assert_eq!(detail(&error, "cap"), Value::Int(20));
    match detail(&error, "current") {
        Value::Int(elapsed) => assert!(elapsed > 20, "stopped at {elapsed} ms, within the cap"),
        other => panic!("current is {other:?}"),
    }
    assert_eq!(error.node_id, "");
}

#[test]
fn a_boundary_does_not_catch_a_limit_failure_inside_it() {
    let source = "r = boundary {\n    a = echo(1)\n    return echo(a)\n} catch err {\n    return \"caught\"\n}\nreturn r\n";
    assert_eq!(succeeded(&run(source, Limits::new())), "1");
    let error = failed(run(source, Limits::new().with(LimitKey::ToolCalls, 1)));
    assert_eq!(error.code, "RL4101");
    assert!(!error.is_catchable());
    assert_eq!(error.class, runlet::engine::FailureClass::Limit);
}

#[test]
fn a_limit_failure_is_journaled_and_ends_the_run() {
    let runtime = runtime(Arc::new(Tools::default()), Limits::new().with(LimitKey::ToolCalls, 1));
    let program = runtime.compile("a = echo(1)\nreturn echo(a)\n", &Inputs::new()).expect("compiles");
    let mut handle = runtime.start(&program, &Inputs::new()).expect("starts");
    let mut events = Vec::new();
    while !events.iter().any(|e| matches!(e, Event::RunFailed { .. })) {
        events.push(handle.events().blocking_recv().expect("an event").1);
    }
    let exceeded = events.iter().find_map(|e| match e {
        Event::LimitExceeded { limit, current, cap, .. } => Some((limit.clone(), *current, *cap)),
        _ => None,
    });
    assert_eq!(exceeded, Some(("tool_calls".to_owned(), 2, 1)));
    assert_eq!(events.last(), Some(&Event::RunFailed { code: "RL4101".into() }));
    let dispatched = events.iter().filter(|e| matches!(e, Event::CallDispatchPrepared { .. })).count();
    assert_eq!(dispatched, 1, "the call past the cap is never prepared");
}

#[test]
fn concurrent_runs_of_one_program_count_independently() {
    // Each run makes 3 calls under a cap of 3; 64 runs together make 192.
    let runtime = runtime(Arc::new(Tools::default()), Limits::new().with(LimitKey::ToolCalls, 3));
    let program =
        runtime.compile("a = echo(1)\nb = echo(a)\nreturn echo(b)\n", &Inputs::new()).expect("compiles");
    let runs: Vec<_> = (0..64).map(|_| runtime.start(&program, &Inputs::new()).expect("starts")).collect();
    for handle in runs {
        assert_eq!(succeeded(&handle.wait().expect("journal")), "1");
    }
}

const PARALLEL: &str = "return for x in items(12) limit 12 {\n    return slow(x)\n}\n";

#[test]
fn concurrency_throttles_calls_in_flight_without_failing_the_run() {
    let tools = Arc::new(Tools::default());
    let runtime = runtime(tools.clone(), Limits::new());
    let program = runtime.compile(PARALLEL, &Inputs::new()).expect("compiles");
    let options =
        RunOptions { limits: Limits::new().with(LimitKey::Concurrency, 3), ..RunOptions::default() };
    let outcome =
        runtime.start_with(&program, &Inputs::new(), options).expect("starts").wait().expect("journal");
    assert_eq!(succeeded(&outcome), "[1,2,3,4,5,6,7,8,9,10,11,12]");
    assert_eq!(tools.peak("all"), 3);
}

#[test]
fn the_runtime_wide_concurrency_cap_spans_runs() {
    let tools = Arc::new(Tools::default());
    let runtime = runtime(tools.clone(), Limits::new().with(LimitKey::Concurrency, 4));
    let program = runtime.compile(PARALLEL, &Inputs::new()).expect("compiles");
    let runs: Vec<_> = (0..3).map(|_| runtime.start(&program, &Inputs::new()).expect("starts")).collect();
    for handle in runs {
        succeeded(&handle.wait().expect("journal"));
    }
    assert_eq!(tools.peak("all"), 4);
}

#[test]
fn per_tool_and_resource_group_permits_bound_their_calls() {
    let tools = Arc::new(Tools::default());
    let runtime = runtime(tools.clone(), Limits::new().with(LimitKey::Concurrency, 8));
    let source = "xs = items(8)\n\
        a = for x in xs limit 8 {\n    return narrow(x)\n}\n\
        b = for x in xs limit 8 {\n    return api.read(x)\n}\n\
        c = for x in xs limit 8 {\n    return api.write(x)\n}\n\
        return [a, b, c]\n";
    let program = runtime.compile(source, &Inputs::new()).expect("compiles");
    let runs: Vec<_> = (0..2).map(|_| runtime.start(&program, &Inputs::new()).expect("starts")).collect();
    for handle in runs {
        succeeded(&handle.wait().expect("journal"));
    }
    assert_eq!(tools.peak("narrow"), 2, "narrow declares max_concurrency 2");
    assert_eq!(tools.peak("api.*"), 3, "the api group allows 3");
    assert!(tools.peak("all") <= 8);
}

#[test]
fn cancelling_a_run_whose_calls_wait_for_permits_frees_them_and_is_no_limit_error() {
    let tools = Arc::new(Tools::default());
    let runtime = runtime(tools.clone(), Limits::new().with(LimitKey::Concurrency, 1));
    let program = runtime.compile(PARALLEL, &Inputs::new()).expect("compiles");
    let options =
        RunOptions { limits: Limits::new().with(LimitKey::WallClockMs, 60_000), ..RunOptions::default() };
    let mut cancelled = runtime.start_with(&program, &Inputs::new(), options).expect("starts");
    loop {
        match cancelled.events().blocking_recv() {
            Some((_, Event::CallDispatchPrepared { .. })) => break,
            Some(_) => {}
            None => panic!("the run ended before dispatching"),
        }
    }
    cancelled.cancel();
    assert!(matches!(cancelled.wait().expect("journal"), Outcome::Cancelled));
    let outcome = runtime.start(&program, &Inputs::new()).expect("starts").wait().expect("journal");
    assert_eq!(succeeded(&outcome), "[1,2,3,4,5,6,7,8,9,10,11,12]", "no permit was left behind");
    assert_eq!(tools.peak("all"), 1);
}

#[test]
fn every_value_size_cap_holds_at_its_cap_and_fails_one_past_it() {
    let list = at_and_past_the_cap("xs = items(3)\nreturn xs + xs\n", LimitKey::ListLength, 6);
    assert_eq!(span_text(&list, "xs = items(3)\nreturn xs + xs\n"), "xs + xs");
    at_and_past_the_cap("s = echo(\"abc\")\nreturn s + s\n", LimitKey::StringBytes, 6);
    at_and_past_the_cap("o = echo({ a: 1 })\nreturn o + { b: 2 }\n", LimitKey::ObjectEntries, 2);
    // `items(2)` weighs 5 + 2 × 9; the list holding it twice weighs 5 + 2 × 23.
    at_and_past_the_cap("xs = items(2)\nreturn [xs, xs]\n", LimitKey::ValueBytes, 51);
}

#[test]
fn a_value_over_a_cap_is_policy_no_boundary_catches_and_tool_outputs_are_checked_inside() {
    let caught =
        "r = boundary {\n    return items(3) + items(3)\n} catch err {\n    return []\n}\nreturn r\n";
    let error = failed(run(caught, Limits::new().with(LimitKey::ListLength, 5)));
    assert_eq!(error.code, "RL4114");
    assert!(!error.is_catchable());
    let nested = failed(run("return [items(10)]\n", Limits::new().with(LimitKey::ListLength, 5)));
    assert_eq!((nested.code.as_str(), detail(&nested, "current")), ("RL4114", Value::Int(10)));
    assert_eq!(LimitKey::ListLength.default_cap(), Some(1_000_000), "a cap applies when none is set");
}

/// A fold whose every step is pure: without yielding, the whole loop is one reaction.
const LONG_FOLD: &str =
    "total = fold acc = 0 for n in items(300000) {\n    return acc + n\n}\nreturn total\n";

#[test]
fn the_wall_clock_stops_a_long_pure_computation_in_the_middle() {
    // A millisecond is far less than any machine needs for 300,000 fold steps: the shell's
    // deadline must get between the core's reactions for the run to fail.
    let error = failed(run(LONG_FOLD, Limits::new().with(LimitKey::WallClockMs, 1)));
    assert_eq!(error.code, "RL4104", "{error:?}");
}

/// Answers `items(n)` as `Tools` does, and says when it has.
struct AnsweredItems(Arc<std::sync::atomic::AtomicBool>);

#[async_trait]
impl ToolExecutor for AnsweredItems {
    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        let answer = Tools::default().dispatch(call).await;
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        answer
    }
}

#[test]
fn a_long_pure_computation_is_cancellable_and_replays_exactly_across_its_yields() {
    let journal = Arc::new(MemoryJournal::new());
    let answered = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let runtime = Runtime::builder()
        .registry(registry(TOOLS))
        .executor(Arc::new(AnsweredItems(Arc::clone(&answered))))
        .journal(journal.clone())
        .build()
        .expect("runtime");
    let program = runtime.compile(LONG_FOLD, &Inputs::new()).expect("compiles");
    let run = runtime.start(&program, &Inputs::new()).expect("starts");
    let run_id = run.run_id().clone();
    // Cancelled as the fold's items arrive: the fold is all pure work from there on.
    while !answered.load(std::sync::atomic::Ordering::SeqCst) {
        std::thread::yield_now();
    }
    run.cancel();
    assert!(matches!(run.wait().expect("journal"), Outcome::Cancelled), "cancelled in the middle");
    let reader = tokio::runtime::Builder::new_current_thread().build().expect("tokio");
    let records = reader.block_on(journal.read(&run_id, 0, usize::MAX)).expect("reads");
    let steps = records
        .iter()
        .filter(|r| matches!(Event::decode(&r.bytes), Ok((_, Event::IterationMaterialized { .. }))))
        .count();
    assert!(steps < 300_000, "the fold stopped before its end: {steps} steps");

    let short = "total = fold acc = 0 for n in items(6000) {\n    return acc + n\n}\nreturn total\n";
    let program = runtime.compile(short, &Inputs::new()).expect("compiles");
    let run = runtime.start(&program, &Inputs::new()).expect("starts");
    let run_id = run.run_id().clone();
    assert_eq!(succeeded(&run.wait().expect("journal")), "18003000");
    let replayed =
        runtime.recovery(&program, &run_id, RunOptions::default()).expect("replays without a difference");
    assert!(replayed.uncertain_operations().is_empty());
}
