//! Seeded simulation on generated programs: random well-typed sources
//! (`tests/common/generated_programs.rs`) are compiled by the analyzer and run under many completion orders with injected failures,
//! timeouts, cancellation acknowledgements, late completions and a crash; every order must reach
//! the same outcome, the invariants hold after each reaction, and the journal replays exactly —
//! also when a `journal_bytes` cap cuts the run short.

use std::sync::Arc;

use std::collections::BTreeMap;
use std::time::Duration;

use super::tests::{Oracle, Simulation, Trace, answer_positions, continue_run, fresh_core, value_of};
use super::{Input, Outcome};
use crate::analyze::hir::Program;
use crate::analyze::{AnalyzeOptions, Inputs, analyze};
use crate::engine::event::Event;
use crate::engine::executor::ToolError;
use crate::engine::limits::{LimitKey, Limits};
use crate::engine::retry::timeout_error;
use crate::registry::{Registry, RegistryOptions};
use crate::schema::ExecutionClass;
use crate::value::{List, Value};

#[path = "../../../tests/common/generated_programs.rs"]
mod generated_programs;
use generated_programs::{Answer, Generator, REGISTRY, answer};

/// The simulation's tools: [`answer`] to the first argument, in the call's boundary attempt.
fn oracle(tool: &str, args: &List, attempt: u32) -> Result<Value, ToolError> {
    let n = match args.iter().next() {
        Some(Value::Int(n)) => *n,
        _ => 0,
    };
    Ok(match answer(tool, n, attempt) {
        Answer::Int(n) => Value::Int(n),
        Answer::Bool(b) => Value::Bool(b),
        Answer::Ints(ns) => List::new(ns.into_iter().map(Value::Int).collect()).expect("list").into(),
        Answer::Error { code, message, retryable: true } => return Err(ToolError::retryable(code, message)),
        Answer::Error { code, message, retryable: false } => return Err(ToolError::new(code, message)),
        Answer::TimedOut => {
            return Err(timeout_error(tool, ExecutionClass::AtMostOnce, Duration::from_secs(1)));
        }
    })
}

/// The run's end as a comparable value: the result, or the failure's code.
fn ending(outcome: &Outcome) -> Result<Value, String> {
    match outcome {
        Outcome::Succeeded(_) => Ok(value_of(outcome)),
        Outcome::Failed(error) => Err(error.code.clone()),
        Outcome::Cancelled => Err("cancelled".into()),
    }
}

/// Invariant 8: an at-most-once operation is dispatched at most once, whatever the retries, and
/// an uncertain failure stays uncertain in the error that reports it.
fn check_no_false_exactly_once(trace: &Trace, registry: &Registry, source: &str) {
    let charge = registry.tool_named("t.charge").expect("tool");
    let mut sent: BTreeMap<(String, String, String), usize> = BTreeMap::new();
    for request in trace.requests.iter().filter(|r| r.tool == charge) {
        let key = (
            request.call_site.to_string(),
            request.dynamic_key.to_string(),
            request.input_digest.to_string(),
        );
        *sent.entry(key).or_default() += 1;
    }
    assert!(sent.values().all(|n| *n == 1), "an at-most-once operation was sent twice:\n{source}");
    if let Outcome::Failed(error) = &trace.outcome {
        let uncertain = trace.events.iter().any(|e| {
            matches!(e, Event::CallFailed { node, error: recorded } if **node == *error.node_id && recorded.uncertain)
        });
        assert!(!uncertain || error.uncertain, "an uncertain failure lost its uncertainty:\n{source}");
    }
}

/// The program the generator writes from `program_seed`, and its compiled form.
fn generated_program(registry: &Registry, program_seed: u64) -> (String, Arc<Program>) {
    let source = Generator::new(program_seed).program();
    let analysis = analyze(&source, registry, &Inputs::new(), &AnalyzeOptions::default());
    let Some(hir) = analysis.hir else {
        panic!("the generator wrote a program the analyzer rejects:\n{source}\n{:#?}", analysis.diagnostics);
    };
    (source, Arc::new(hir))
}

#[test]
fn generated_programs_end_when_their_journal_outgrows_its_cap_and_replay_there() {
    let registry =
        Arc::new(Registry::from_json_str(REGISTRY, &RegistryOptions::default()).expect("registry").registry);
    let mut crossed = 0;
    for program_seed in 1..=150u64 {
        let (source, program) = generated_program(&registry, program_seed);
        let oracle: &Oracle = &oracle;
        for order_seed in 0..4 {
            let run = |limits: &Limits| {
                let core = fresh_core(&program, &registry).with_limits(limits.clone(), 0);
                let start = Some(Input::Start { inputs: Vec::new() });
                continue_run(core, Vec::new(), start, &registry, oracle, order_seed)
            };
            let full = run(&Limits::new());
            let total: u64 = full.events.iter().map(|e| e.encoded_len() as u64).sum();
            // Half way through the journal: the run still ends (the simulation fails the test
            // if it stops without ending), failing as a whole unless its own end came first.
            let limits = Limits::new().with(LimitKey::JournalBytes, total / 2);
            let capped = run(&limits);
            match ending(&capped.outcome) {
                Err(code) if code == "RL4112" => crossed += 1,
                other => assert_eq!(other, ending(&full.outcome), "order {order_seed} of\n{source}"),
            }
            let replayed =
                crate::engine::replay(fresh_core(&program, &registry).with_limits(limits, 0), &capped.events)
                    .unwrap_or_else(|e| panic!("replay diverged: {e}\n{source}"));
            let replayed_end = replayed.outcome.as_ref().map(ending);
            assert_eq!(replayed_end, Some(ending(&capped.outcome)), "{source}");
        }
    }
    assert!(crossed > 500, "only {crossed} runs crossed their journal cap");
}

#[test]
fn generated_programs_reach_one_outcome_under_every_completion_order() {
    let registry =
        Arc::new(Registry::from_json_str(REGISTRY, &RegistryOptions::default()).expect("registry").registry);
    let mut compiled = 0;
    let mut seen: BTreeMap<&'static str, usize> = BTreeMap::new();
    for program_seed in 1..=150u64 {
        let (source, program) = generated_program(&registry, program_seed);
        compiled += 1;
        let oracle: &Oracle = &oracle;
        let mut first: Option<(Result<Value, String>, usize)> = None;
        for order_seed in 0..8 {
            let start = Some(Input::Start { inputs: Vec::new() });
            let trace = continue_run(
                fresh_core(&program, &registry),
                Vec::new(),
                start,
                &registry,
                oracle,
                order_seed,
            );
            check_no_false_exactly_once(&trace, &registry, &source);
            for event in &trace.events {
                *seen.entry(event.kind()).or_default() += 1;
            }
            let writes = trace.dispatched.iter().filter(|t| *t == "t.write").count();
            let end = ending(&trace.outcome);
            match &first {
                None => first = Some((end.clone(), writes)),
                Some((expected, expected_writes)) => {
                    assert_eq!(&end, expected, "order {order_seed} of\n{source}");
                    if end.is_ok() {
                        assert_eq!(
                            writes, *expected_writes,
                            "effect roots ran a different number of times:\n{source}"
                        );
                    }
                }
            }
            // Invariants 6 and 9: the journal replays to the same end, primary error and causes
            // included.
            let resumed = crate::engine::replay(fresh_core(&program, &registry), &trace.events)
                .unwrap_or_else(|e| panic!("replay diverged: {e}\n{source}"));
            match (&resumed.outcome, &trace.outcome) {
                (Some(Outcome::Failed(replayed)), Outcome::Failed(original)) => {
                    assert_eq!(replayed, original, "replay chose another primary error or causes:\n{source}")
                }
                (Some(replayed), original) => assert_eq!(ending(replayed), ending(original), "{source}"),
                (None, _) => panic!("the replayed journal has no end:\n{source}"),
            }
            // A crash between two committed batches, with calls dispatching: resuming reaches
            // the same end. A call answer always opens its reaction's batch.
            let answers = answer_positions(&trace.events);
            if let Some(&cut) = answers.get(answers.len() / 2) {
                let resumed = crate::engine::replay(fresh_core(&program, &registry), &trace.events[..cut])
                    .unwrap_or_else(|e| panic!("prefix replay diverged: {e}\n{source}"));
                let mut sim = Simulation::new(resumed.core, Vec::new(), &registry, order_seed + 1);
                let rest = match sim.step(Input::Resume) {
                    Some(outcome) => outcome,
                    None => sim.run(None, oracle).outcome,
                };
                assert_eq!(
                    ending(&rest),
                    first.as_ref().map(|(e, _)| e.clone()).expect("first"),
                    "resumed:\n{source}"
                );
            }
        }
    }
    assert_eq!(compiled, 150);
    for kind in [
        "BoundaryRetryScheduled",
        "CatchSelected",
        "NodeCancelling",
        "OrphanedCompletion",
        "CallReused",
        "TimerFired",
        "RunFailed",
    ] {
        assert!(seen.get(kind).is_some_and(|n| *n > 0), "the generated runs never produced {kind}: {seen:?}");
    }
}
