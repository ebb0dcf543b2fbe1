//! The runtime model cases of spec §12.2 about failure: nested boundary ownership, the
//! execution-class retry table with operation and dispatch ids, loop permits on failure and
//! cancellation, late completions, simultaneous failures with a replay-stable primary error, and
//! runtime conversions of host inputs versus compile-time literal diagnostics.

use std::sync::Arc;

use super::state::{Control, NodeState};
use super::tests::{Oracle, Simulation, Trace, continue_run, fresh_core, value_of};
use super::{CallRequest, Effect, Input, Outcome};
use crate::analyze::WorkflowIdentity;
use crate::analyze::hir::Program;
use crate::analyze::{AnalyzeOptions, Inputs, analyze};
use crate::engine::event::Event;
use crate::engine::executor::ToolError;
use crate::engine::identity::{DispatchId, OperationComponents, OperationId};
use crate::engine::retry::timeout_error;
use crate::engine::testing::{int, list};
use crate::registry::{Registry, RegistryOptions};
use crate::schema::ExecutionClass;
use crate::value::{Labelled, List, Value, sha256};

/// One `k.<class>` tool per execution class, and helpers, all Integer to Integer.
fn registry_json() -> String {
    let tool = |name: &str, class: &str| {
        format!(
            r#"{{"name": "{name}", "params": [{{"name": "x", "schema": {{"type": "integer"}}}}], "outputSchema": {{"type": "integer"}}, "execution": "{class}"}}"#
        )
    };
    let mut tools: Vec<String> =
        ExecutionClass::ALL.iter().map(|c| tool(&format!("k.{c}"), c.as_str())).collect();
    for helper in ["t.gate", "t.base", "t.inner", "t.outer", "t.maybe", "t.slow", "t.f"] {
        tools.push(tool(helper, "idempotent"));
    }
    tools.push(
        r#"{"name": "t.items", "params": [{"name": "n", "schema": {"type": "integer"}}], "outputSchema": {"type": "array", "items": {"type": "integer"}}, "execution": "pure"}"#
            .into(),
    );
    tools.push(
        r#"{"name": "t.half", "params": [{"name": "x", "schema": {"type": "number"}}], "outputSchema": {"type": "number"}, "execution": "pure"}"#
            .into(),
    );
    format!(r#"{{"tools": [{}], "inputs": {{"count": {{"type": "integer"}}}}}}"#, tools.join(","))
}

fn compile(source: &str) -> (Arc<Program>, Arc<Registry>) {
    let registry = Arc::new(
        Registry::from_json_str(&registry_json(), &RegistryOptions::default()).expect("registry").registry,
    );
    let analysis = analyze(source, &registry, &Inputs::new(), &AnalyzeOptions::default());
    match analysis.hir {
        Some(hir) if !analysis.has_errors() => (Arc::new(hir), registry),
        _ => panic!("{source}\n{:#?}", analysis.diagnostics),
    }
}

fn simulate(program: &(Arc<Program>, Arc<Registry>), oracle: &Oracle, seed: u64) -> Trace {
    let (program, registry) = program;
    continue_run(
        fresh_core(program, registry),
        Vec::new(),
        Some(Input::Start { inputs: Vec::new() }),
        registry,
        oracle,
        seed,
    )
}

fn first_int(args: &List) -> i64 {
    match args.iter().next() {
        Some(Value::Int(n)) => *n,
        other => panic!("expected an Integer argument, got {other:?}"),
    }
}

/// The operation id the shell derives for `request` (the workflow and schema version are the
/// run's own, so they are fixed here).
fn operation(request: &CallRequest) -> OperationId {
    let workflow = WorkflowIdentity {
        source_digest: sha256(&Value::Null),
        registry_digest: sha256(&Value::Null),
        language_version: 1,
    };
    OperationId::derive(&OperationComponents {
        workflow: &workflow,
        call_site: &request.call_site,
        dynamic_key: &request.dynamic_key,
        schema_version: "1",
        input_digest: &request.input_digest,
        generation: 0,
    })
}

fn dispatch_id(request: &CallRequest) -> DispatchId {
    operation(request).dispatch_id(request.dispatch_generation)
}

/// The dispatch requests of `tool` in `trace`.
fn requests<'t>(trace: &'t Trace, registry: &Registry, tool: &str) -> Vec<&'t CallRequest> {
    let id = registry.tool_named(tool).expect("tool");
    trace.requests.iter().filter(|r| r.tool == id).collect()
}

fn count(trace: &Trace, wanted: impl Fn(&Event) -> bool) -> usize {
    trace.events.iter().filter(|e| wanted(e)).count()
}

fn caught_value(trace: &Trace) -> Value {
    value_of(&trace.outcome)
}

/// Whether boundaries may dispatch operations of this class again.
fn redispatches(class: ExecutionClass) -> bool {
    matches!(class, ExecutionClass::Pure | ExecutionClass::Idempotent | ExecutionClass::Recoverable)
}

#[test]
fn a_durably_successful_call_is_reused_by_the_retry_for_every_class() {
    for class in ExecutionClass::ALL {
        let source = format!(
            "r = boundary retry 1 {{\n    v = k.{class}(1)\n    return t.gate(v)\n}} catch err {{\n    return 0 - 1\n}}\nreturn r\n"
        );
        let program = compile(&source);
        let oracle = |tool: &str, args: &List, attempt: u32| match tool {
            "t.gate" if attempt == 1 => Err(ToolError::retryable("GATE", "closed")),
            _ => Ok(int(first_int(args) * 10)),
        };
        let trace = simulate(&program, &oracle, 3);
        assert_eq!(caught_value(&trace), int(100), "{class}");
        assert_eq!(
            requests(&trace, &program.1, &format!("k.{class}")).len(),
            1,
            "{class}: one dispatch in all"
        );
        assert_eq!(count(&trace, |e| matches!(e, Event::CallReused { .. })), 1, "{class}");
    }
}

#[test]
fn a_confirmed_retryable_failure_is_redispatched_only_where_the_class_allows() {
    for class in ExecutionClass::ALL {
        let source = format!(
            "r = boundary retry 1 {{\n    return k.{class}(1)\n}} catch err {{\n    return 0 - 1 if err.retryable else 0 - 2\n}}\nreturn r\n"
        );
        let program = compile(&source);
        let oracle = |_: &str, _: &List, attempt: u32| {
            if attempt == 1 { Err(ToolError::retryable("BUSY", "busy")) } else { Ok(int(5)) }
        };
        let trace = simulate(&program, &oracle, 1);
        let sent = requests(&trace, &program.1, &format!("k.{class}"));
        if redispatches(class) {
            assert_eq!(caught_value(&trace), int(5), "{class}");
            assert_eq!(sent.len(), 2, "{class}");
            assert_eq!(operation(sent[0]), operation(sent[1]), "{class}: the same operation");
            assert_ne!(dispatch_id(sent[0]), dispatch_id(sent[1]), "{class}: a new dispatch");
            assert_eq!((sent[0].dispatch_generation, sent[1].dispatch_generation), (1, 2));
            assert!(!sent[1].recover_first, "{class}: a confirmed failure needs no recovery");
        } else {
            assert_eq!(caught_value(&trace), int(-2), "{class}: caught as not retryable");
            assert_eq!(sent.len(), 1, "{class}: never redispatched after CallDispatchPrepared");
        }
    }
}

#[test]
fn an_uncertain_outcome_is_recomputed_redispatched_recovered_or_surfaced_by_class() {
    for class in ExecutionClass::ALL {
        let source = format!(
            "r = boundary retry 1 {{\n    return k.{class}(1)\n}} catch err {{\n    return 0 - 1 if err.uncertain else 0 - 2\n}}\nreturn r\n"
        );
        let program = compile(&source);
        let oracle = move |tool: &str, _: &List, attempt: u32| {
            if attempt == 1 {
                Err(timeout_error(tool, class, std::time::Duration::from_secs(1)))
            } else {
                Ok(int(5))
            }
        };
        let trace = simulate(&program, &oracle, 1);
        let sent = requests(&trace, &program.1, &format!("k.{class}"));
        if redispatches(class) {
            assert_eq!(caught_value(&trace), int(5), "{class}");
            assert_eq!(sent.len(), 2, "{class}");
            assert_eq!(operation(sent[0]), operation(sent[1]), "{class}");
            assert_ne!(dispatch_id(sent[0]), dispatch_id(sent[1]), "{class}");
            assert_eq!(
                sent[1].recover_first,
                class == ExecutionClass::Recoverable,
                "{class}: only a recoverable operation is queried before it is sent again"
            );
        } else {
            assert_eq!(caught_value(&trace), int(-1), "{class}: the uncertainty reaches the catch");
            assert_eq!(sent.len(), 1, "{class}");
        }
    }
}

#[test]
fn a_call_left_dispatching_by_a_crash_is_recovered_by_class_on_resume() {
    for class in ExecutionClass::ALL {
        let source = format!(
            "r = boundary retry 1 {{\n    return k.{class}(1)\n}} catch err {{\n    return 0 - 1 if err.uncertain else 0 - 2\n}}\nreturn r\n"
        );
        let (program, registry) = compile(&source);
        let mut crashed = Simulation::new(fresh_core(&program, &registry), Vec::new(), &registry, 1);
        assert!(crashed.step(Input::Start { inputs: Vec::new() }).is_none());
        let before = crashed.trace.requests[0].clone();
        let prefix = crashed.trace.events.clone();

        let resumed =
            crate::engine::replay(fresh_core(&program, &registry), &prefix).expect("prefix replays");
        assert_eq!(resumed.in_flight.len(), 1);
        let mut sim = Simulation::new(resumed.core, Vec::new(), &registry, 1);
        let ended = sim.step(Input::Resume);
        assert_eq!(
            ended.is_some(),
            !redispatches(class),
            "{class}: only a refused redispatch ends the run at once"
        );
        let after: Vec<CallRequest> = sim.trace.requests.clone();
        let rest = match ended {
            Some(outcome) => Trace { outcome, ..sim.trace },
            None => sim.run(None, &|_: &str, _: &List, _: u32| Ok(int(5))),
        };
        if redispatches(class) {
            assert_eq!(after.len(), 1, "{class}: sent again once");
            assert_eq!(operation(&after[0]), operation(&before), "{class}: the same operation id");
            assert_eq!(after[0].dispatch_generation, 2, "{class}: a new dispatch id");
            assert_eq!(after[0].recover_first, class == ExecutionClass::Recoverable, "{class}");
            assert_eq!(caught_value(&rest), int(5), "{class}");
        } else {
            assert!(after.is_empty(), "{class}: never sent again");
            assert_eq!(caught_value(&rest), int(-1), "{class}: RL6109 reaches the catch as uncertain");
        }
        let whole: Vec<Event> = prefix.iter().chain(&rest.events).cloned().collect();
        let replayed = crate::engine::replay(fresh_core(&program, &registry), &whole)
            .expect("the resumed journal replays");
        assert_eq!(replayed.outcome.as_ref().map(value_of), Some(value_of(&rest.outcome)), "{class}");
    }
}

#[test]
fn duplicate_input_iterations_are_distinct_operations_for_every_class() {
    for class in ExecutionClass::ALL {
        let source = format!("ys = for x in [5, 5] limit 2 {{\n    return k.{class}(x)\n}}\nreturn ys\n");
        let program = compile(&source);
        let trace = simulate(&program, &|_: &str, args: &List, _: u32| Ok(int(first_int(args))), 2);
        let sent = requests(&trace, &program.1, &format!("k.{class}"));
        assert_eq!(sent.len(), 2, "{class}");
        assert_eq!(sent[0].input_digest, sent[1].input_digest, "{class}: equal inputs");
        assert_ne!(
            operation(sent[0]),
            operation(sent[1]),
            "{class}: distinct iterations, distinct operations"
        );
        assert_eq!(caught_value(&trace), list(vec![int(5), int(5)]));
    }
}

const NESTED: &str = "shared = t.base(1)
outer = boundary retry 1 {
    inner = boundary retry 2 {
        return t.inner(shared)
    } catch e {
        return 0 - 1
    }
    return t.outer(inner)
} catch err {
    return 0 - 2
}
return outer
";

#[test]
fn nested_boundaries_retry_only_what_they_own_and_reuse_what_succeeded() {
    let program = compile(NESTED);
    let oracle = |tool: &str, args: &List, attempt: u32| match tool {
        "t.base" => Ok(int(7)),
        "t.inner" if attempt == 1 => Err(ToolError::retryable("INNER", "once")),
        "t.inner" => Ok(int(first_int(args) + 1)),
        "t.outer" if attempt == 1 => Err(ToolError::retryable("OUTER", "once")),
        _ => Ok(int(first_int(args) * 10)),
    };
    for seed in 0..16 {
        let trace = simulate(&program, &oracle, seed);
        assert_eq!(caught_value(&trace), int(80), "seed {seed}");
        let sent = |tool| requests(&trace, &program.1, tool).len();
        assert_eq!((sent("t.base"), sent("t.inner"), sent("t.outer")), (1, 2, 2), "seed {seed}");
        assert_eq!(count(&trace, |e| matches!(e, Event::BoundaryRetryScheduled { .. })), 2);
        assert_eq!(
            count(&trace, |e| matches!(e, Event::CallReused { .. })),
            1,
            "the outer retry reuses t.inner"
        );
    }
    let inner_gives_up = |tool: &str, args: &List, _: u32| match tool {
        "t.inner" => Err(ToolError::new("INNER", "always")),
        _ => Ok(int(first_int(args) * 10)),
    };
    let trace = simulate(&program, &inner_gives_up, 1);
    assert_eq!(caught_value(&trace), int(-10), "the inner catch handles it; the outer never retries");
    assert_eq!(count(&trace, |e| matches!(e, Event::BoundaryRetryScheduled { .. })), 0);
    let upstream_fails = |tool: &str, args: &List, _: u32| match tool {
        "t.base" => Err(ToolError::retryable("UPSTREAM", "shared dependency")),
        _ => Ok(int(first_int(args))),
    };
    let trace = simulate(&program, &upstream_fails, 1);
    match &trace.outcome {
        Outcome::Failed(error) => {
            assert_eq!(error.code, "UPSTREAM", "no boundary catches a shared upstream failure")
        }
        other => panic!("expected the run to fail, got {other:?}"),
    }
    assert_eq!(count(&trace, |e| matches!(e, Event::CatchSelected { .. })), 0);
}

#[test]
fn loop_permits_are_released_by_caught_failures_and_by_cancellation() {
    let caught = compile(
        "ys = for x in t.items(6) limit 2 {\n    return boundary {\n        return t.maybe(x)\n    } catch e {\n        return 0\n    }\n}\nreturn ys\n",
    );
    let odd_fails = |tool: &str, args: &List, _: u32| match tool {
        "t.items" => Ok(list((1..=6).map(int).collect())),
        _ if first_int(args) % 2 == 1 => Err(ToolError::new("ODD", "odd")),
        _ => Ok(int(first_int(args))),
    };
    for seed in 0..16 {
        let trace = simulate(&caught, &odd_fails, seed);
        assert_eq!(
            caught_value(&trace),
            list([0, 2, 0, 4, 0, 6].into_iter().map(int).collect()),
            "seed {seed}"
        );
        assert_eq!(trace.peak_iterations, 2, "seed {seed}");
    }

    let uncaught = compile("ys = for x in t.items(6) limit 2 {\n    return t.maybe(x)\n}\nreturn ys\n");
    for seed in 0..16 {
        let trace = simulate(&uncaught, &odd_fails, seed);
        assert!(matches!(trace.outcome, Outcome::Failed(_)), "seed {seed}");
        let failed =
            trace.events.iter().position(|e| matches!(e, Event::NodeFailed { .. })).expect("a failure");
        assert!(
            !trace.events[failed..].iter().any(|e| matches!(e, Event::IterationMaterialized { .. })),
            "seed {seed}: no iteration starts after the loop failed"
        );
    }

    let mut sim = Simulation::new(fresh_core(&uncaught.0, &uncaught.1), Vec::new(), &uncaught.1, 1);
    sim.step(Input::Start { inputs: Vec::new() });
    let items = sim.in_flight.pop().expect("t.items in flight");
    sim.step(Input::ToolCompleted {
        call: items.call,
        value: Labelled::public(list((1..=6).map(int).collect())),
    });
    assert_eq!(sim.in_flight.len(), 2, "two iterations hold the two permits");
    assert!(matches!(sim.step(Input::CancelRequested), Some(Outcome::Cancelled)));
    for node in sim.core.arena.nodes.iter() {
        if let Control::Loop(state) = &node.control {
            assert!(state.active.is_empty(), "a cancelled loop holds no permits");
            assert_eq!(node.state, NodeState::Cancelled);
        }
    }
    let late = sim.cancelled.pop().expect("a cancelled call");
    let effects = sim.core.react(Input::ToolCompleted { call: late.call, value: Labelled::public(int(1)) });
    assert!(effects.is_empty(), "a finished run ignores late answers");
}

const LATE: &str = "r = boundary retry 1 {
    a = t.slow(1)
    b = t.gate(2)
    return [a, b]
} catch err {
    return []
}
return r
";

fn dispatched(effects: &[Effect]) -> Vec<CallRequest> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Dispatch(request) => Some(request.clone()),
            _ => None,
        })
        .collect()
}

fn events_of(effects: &[Effect]) -> Vec<Event> {
    effects
        .iter()
        .flat_map(|e| match e {
            Effect::Append(events) => events.clone(),
            _ => Vec::new(),
        })
        .collect()
}

#[test]
fn a_retry_waits_for_cancelled_calls_and_a_late_completion_never_satisfies_the_new_attempt() {
    let (program, registry) = compile(LATE);
    let names = |requests: &[CallRequest]| -> Vec<String> {
        requests.iter().map(|r| registry.tool(r.tool).name.to_string()).collect()
    };
    for acknowledged_by_grace in [false, true] {
        let mut core = fresh_core(&program, &registry);
        let first = dispatched(&core.react(Input::Start { inputs: Vec::new() }));
        assert_eq!(names(&first), ["t.slow", "t.gate"]);
        let (slow, gate) = (&first[0], &first[1]);
        let failing =
            core.react(Input::ToolFailed { call: gate.call, error: ToolError::retryable("GATE", "closed") });
        assert!(failing.iter().any(|e| matches!(e, Effect::Cancel(c) if *c == slow.call)));
        assert!(dispatched(&failing).is_empty(), "the retry waits for the cancelled call");
        let grace = failing.iter().find_map(|e| match e {
            Effect::StartTimer { timer, .. } => Some(*timer),
            _ => None,
        });
        let retried = if acknowledged_by_grace {
            core.react(Input::TimerFired { timer: grace.expect("a grace timer") })
        } else {
            let answered =
                core.react(Input::ToolCompleted { call: slow.call, value: Labelled::public(int(1)) });
            let events = events_of(&answered);
            assert!(events.iter().any(|e| matches!(e, Event::OrphanedCompletion { .. })));
            assert!(answered.iter().any(|e| matches!(e, Effect::CancelTimer(t) if Some(*t) == grace)));
            answered
        };
        let second = dispatched(&retried);
        assert_eq!(names(&second), ["t.slow", "t.gate"], "an orphaned result is never reused");
        assert!(second.iter().all(|r| r.attempt == 2));
        if acknowledged_by_grace {
            let late = core.react(Input::ToolCompleted { call: slow.call, value: Labelled::public(int(1)) });
            assert_eq!(events_of(&late), [Event::OrphanedCompletion { node: slow.node_id.clone() }]);
        }
        core.react(Input::ToolCompleted { call: second[1].call, value: Labelled::public(int(2)) });
        let done = core.react(Input::ToolCompleted { call: second[0].call, value: Labelled::public(int(3)) });
        let outcome = done.into_iter().find_map(|e| match e {
            Effect::Finish(outcome) => Some(outcome),
            _ => None,
        });
        assert_eq!(
            value_of(&outcome.expect("finished")),
            list(vec![int(3), int(2)]),
            "attempt 2's own answers"
        );
    }
}

const SIMULTANEOUS: &str = "r = boundary {
    a = t.f(1)
    b = t.f(2)
    c = t.f(3)
    return [a, b, c]
} catch err {
    return err
}
return r
";

#[test]
fn the_first_committed_failure_is_primary_and_later_ones_are_causes_in_node_order() {
    let (program, registry) = compile(SIMULTANEOUS);
    let failure = |n: i64| ToolError::new(format!("F{n}"), format!("call {n} failed"));
    // (who fails first, then how each other call answers its cancellation: Some = a real failure)
    let orders: [(i64, [(i64, bool); 2]); 3] =
        [(2, [(3, true), (1, true)]), (2, [(1, true), (3, false)]), (3, [(1, false), (2, true)])];
    for (first, others) in orders {
        let mut sim = Simulation::new(fresh_core(&program, &registry), Vec::new(), &registry, 1);
        sim.step(Input::Start { inputs: Vec::new() });
        let by_arg = |sim: &Simulation, n: i64| {
            sim.trace.requests.iter().find(|r| first_int(&r.arguments) == n).expect("dispatched").call
        };
        sim.step(Input::ToolFailed { call: by_arg(&sim, first), error: failure(first) });
        let mut outcome = None;
        for (n, fails) in others {
            let error = if fails { failure(n) } else { ToolError::cancelled("t.f") };
            outcome = sim.step(Input::ToolFailed { call: by_arg(&sim, n), error });
        }
        let caught = value_of(&outcome.expect("the catch ends the run"));
        let Value::Object(record) = &caught else { panic!("{caught:?}") };
        let field = |name: &str| record.get(name).cloned().expect("field");
        assert_eq!(field("code"), Value::from(format!("F{first}")));
        let mut expected: Vec<i64> = others.iter().filter(|(_, fails)| *fails).map(|(n, _)| *n).collect();
        expected.sort();
        let Value::List(causes) = field("causes") else { panic!("causes") };
        let codes: Vec<Value> = causes
            .iter()
            .map(|c| match c {
                Value::Object(o) => o.get("code").cloned().expect("code"),
                _ => panic!("a cause is a record"),
            })
            .collect();
        let expected: Vec<Value> = expected.iter().map(|n| Value::from(format!("F{n}"))).collect();
        assert_eq!(codes, expected, "causes by node identity; cancellation acknowledgements are not causes");
        let replayed =
            crate::engine::replay(fresh_core(&program, &registry), &sim.trace.events).expect("replays");
        assert_eq!(
            replayed.outcome.as_ref().map(value_of),
            Some(caught),
            "primary and causes are replay-stable"
        );
    }
    let (program, registry) = compile("a = t.f(1)\nb = t.f(2)\nreturn [a, b]\n");
    let mut sim = Simulation::new(fresh_core(&program, &registry), Vec::new(), &registry, 1);
    sim.step(Input::Start { inputs: Vec::new() });
    let calls: Vec<_> = sim.trace.requests.iter().map(|r| r.call).collect();
    sim.step(Input::ToolFailed { call: calls[1], error: failure(2) });
    match sim.step(Input::ToolFailed { call: calls[0], error: failure(1) }) {
        Some(Outcome::Failed(error)) => {
            assert_eq!(error.code, "F2");
            assert_eq!(error.causes.iter().map(|c| c.code.as_str()).collect::<Vec<_>>(), ["F1"]);
        }
        other => panic!("expected the run to fail, got {other:?}"),
    }
}

#[test]
fn a_host_input_conversion_fails_at_run_time_and_is_caught_while_a_literal_is_a_compile_error() {
    let program = compile(
        "r = boundary {\n    return t.half(count)\n} catch err {\n    return err.code\n}\nreturn r\n",
    );
    let echo = |_: &str, args: &List, _: u32| Ok(args.iter().next().cloned().unwrap_or(Value::Null));
    let run = |count: i64| {
        let inputs = vec![Labelled::public(int(count))];
        let (program, registry) = &program;
        let start = Some(Input::Start { inputs });
        let trace = continue_run(fresh_core(program, registry), Vec::new(), start, registry, &echo, 1);
        (caught_value(&trace), trace.requests.len())
    };
    let exact = 1i64 << 53;
    assert_eq!(run(exact), (Value::Number(crate::value::Number::new(exact as f64).expect("finite")), 1));
    assert_eq!(
        run(exact + 1),
        (Value::from("RL5104"), 0),
        "an Integer with no exact binary64 value fails its Convert node, caught; the call is never sent"
    );
    let registry =
        Registry::from_json_str(&registry_json(), &RegistryOptions::default()).expect("registry").registry;
    let literal = format!("return t.half({})\n", exact + 1);
    let analysis = analyze(&literal, &registry, &Inputs::new(), &AnalyzeOptions::default());
    assert!(analysis.has_errors(), "the same conversion of a literal is rejected before running");
    assert!(
        analysis.diagnostics.iter().any(|d| d.code.to_string() == "RL5104"),
        "{:#?}",
        analysis.diagnostics
    );
}

#[test]
fn a_backoff_is_cancellable_and_a_resumed_timer_keeps_its_deadline() {
    use crate::engine::retry::Backoff;
    use std::time::Duration;
    let (program, registry) =
        compile("r = boundary retry 1 {\n    return t.gate(1)\n} catch err {\n    return 0\n}\nreturn r\n");
    let settings = super::RunSettings {
        retry_backoff: Some(Backoff {
            base: Duration::from_millis(400),
            factor: 2,
            cap: Duration::from_secs(1),
        }),
        ..super::RunSettings::default()
    };
    let new_core = || super::tests::core_with(&program, &registry, settings.clone());
    let mut core = new_core();
    let first = dispatched(&core.react(Input::Start { inputs: Vec::new() }));
    let failed =
        core.react(Input::ToolFailed { call: first[0].call, error: ToolError::retryable("GATE", "closed") });
    let (timer, delay) = failed
        .iter()
        .find_map(|e| match e {
            Effect::StartTimer { timer, delay } => Some((*timer, *delay)),
            _ => None,
        })
        .expect("a backoff timer");
    assert_eq!(delay, Duration::from_millis(400));
    let armed = core.react(Input::TimerArmed { timer, deadline_unix_ms: 1_000_400 });
    assert_eq!(events_of(&armed), [Event::TimerArmed { timer: timer.0, deadline_unix_ms: 1_000_400 }]);

    let cancelled = core.react(Input::CancelRequested);
    assert!(
        cancelled.iter().any(|e| matches!(e, Effect::CancelTimer(t) if *t == timer)),
        "backoff is cancellable"
    );
    assert!(dispatched(&cancelled).is_empty());
    assert!(core.react(Input::TimerFired { timer }).is_empty(), "a cancelled timer's firing does nothing");

    let mut sim = Simulation::new(new_core(), Vec::new(), &registry, 1);
    sim.step(Input::Start { inputs: Vec::new() });
    let call = sim.in_flight.pop().expect("t.gate").call;
    sim.step(Input::ToolFailed { call, error: ToolError::retryable("GATE", "closed") });
    let resumed = crate::engine::replay(new_core(), &sim.trace.events).expect("replays");
    assert_eq!(resumed.timers.len(), 1);
    assert_eq!(resumed.timers[0].delay, Duration::from_millis(400));
    assert_eq!(resumed.timers[0].deadline_unix_ms, Some(400), "the simulated shell armed it at 400");
}

#[test]
fn a_cancelled_run_replays_as_cancelled() {
    let (program, registry) = compile(NESTED);
    let mut sim = Simulation::new(fresh_core(&program, &registry), Vec::new(), &registry, 1);
    sim.step(Input::Start { inputs: Vec::new() });
    assert!(matches!(sim.step(Input::CancelRequested), Some(Outcome::Cancelled)));
    let resumed = crate::engine::replay(fresh_core(&program, &registry), &sim.trace.events).expect("replays");
    assert!(matches!(resumed.outcome, Some(Outcome::Cancelled)), "program cancellation is durable");
    let mut core = resumed.core;
    assert!(dispatched(&core.react(Input::Resume)).is_empty(), "a cancelled run dispatches nothing");
}

#[test]
fn a_limit_breach_ends_a_draining_run_at_once_and_no_boundary_catches_it() {
    use crate::engine::limits::{LimitKey, Limits};
    let (program, registry) = compile("a = t.f(1)\nb = t.f(2)\nreturn [a, b]\n");
    let limits = Limits::new().with(LimitKey::WallClockMs, 40);
    let mut sim =
        Simulation::new(fresh_core(&program, &registry).with_limits(limits, 0), Vec::new(), &registry, 1);
    sim.step(Input::Start { inputs: Vec::new() });
    let calls: Vec<_> = sim.trace.requests.iter().map(|r| r.call).collect();
    assert!(
        sim.step(Input::ToolFailed { call: calls[0], error: ToolError::new("F1", "down") }).is_none(),
        "draining"
    );
    match sim.step(Input::WallClockExpired { elapsed_ms: 41 }) {
        Some(Outcome::Failed(error)) => {
            assert_eq!(error.code, "RL4104", "the breach, not the drained failure")
        }
        other => panic!("expected the limit to end the run, got {other:?}"),
    }

    let (program, registry) = compile(LATE);
    let limits = Limits::new().with(LimitKey::WallClockMs, 40);
    let mut sim =
        Simulation::new(fresh_core(&program, &registry).with_limits(limits, 0), Vec::new(), &registry, 1);
    sim.step(Input::Start { inputs: Vec::new() });
    let gate = sim.trace.requests[1].call;
    assert!(
        sim.step(Input::ToolFailed { call: gate, error: ToolError::retryable("GATE", "closed") }).is_none()
    );
    match sim.step(Input::WallClockExpired { elapsed_ms: 41 }) {
        Some(Outcome::Failed(error)) => {
            assert_eq!(error.code, "RL4104", "a draining boundary does not catch it")
        }
        other => panic!("expected the limit to end the run, got {other:?}"),
    }
    assert_eq!(
        count(&sim.trace, |e| matches!(
            e,
            Event::CatchSelected { .. } | Event::BoundaryRetryScheduled { .. }
        )),
        0
    );
}

#[test]
fn a_failing_catch_propagates_to_the_enclosing_boundary_with_the_full_error_record() {
    let program = compile(
        "r = boundary {\n    return boundary retry 1 {\n        return t.f(1)\n    } catch e {\n        return t.f(e.attempt + 10)\n    }\n} catch err {\n    return err\n}\nreturn r\n",
    );
    let oracle = |_: &str, args: &List, _: u32| -> Result<Value, ToolError> {
        let n = first_int(args);
        let error = if n == 1 {
            ToolError::retryable("F1", "first")
        } else {
            ToolError::new(format!("F{n}"), "catch")
        };
        Err(error.with_details(crate::value::Object::from_pairs(vec![("n".into(), int(n))]).expect("flat")))
    };
    for seed in 0..8 {
        let trace = simulate(&program, &oracle, seed);
        let Value::Object(record) = caught_value(&trace) else { panic!("a record") };
        let keys: Vec<&str> = record.entries().iter().map(|(k, _)| &**k).collect();
        assert_eq!(
            keys,
            ["attempt", "causes", "code", "details", "message", "node_id", "retryable", "tool", "uncertain"],
            "the catch record of spec §2.8"
        );
        let field = |name: &str| record.get(name).cloned().expect("field");
        assert_eq!(
            field("code"),
            Value::from("F12"),
            "the inner catch ran once, after attempt 2, and failed"
        );
        assert_eq!(field("tool"), Value::from("t.f"));
        assert_eq!(field("retryable"), Value::Bool(false));
        assert_eq!(field("details"), json_object(r#"{"n": 12}"#));
        assert!(
            matches!(field("node_id"), Value::String(id) if id.contains("catch")),
            "raised in the catch scope"
        );
        assert_eq!(requests(&trace, &program.1, "t.f").len(), 3, "two attempts, then the catch's call");
    }
}

fn json_object(text: &str) -> Value {
    crate::value::parse_json(text).expect("JSON")
}
