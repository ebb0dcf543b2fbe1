//! Nondeterministic intrinsics under replay: a run journals each sample once, and a fresh core
//! fed that journal reaches the same result from the recorded values without sampling again.

use std::sync::Arc;

use runlet::analyze::Inputs;
use runlet::diag::codes;
use runlet::engine::event::Event;
use runlet::engine::{Effect, Input, Outcome, RunCore, replay};
use runlet::journal::{Journal, MemoryJournal, RunId};
use runlet::runtime::{Executable, RunOptions, Runtime};
use runlet::scripted::ScriptedExecutor;
use runlet::value::{Value, ValueError, rcve, to_presentation_json};

use crate::support::{REGISTRY, registry};

const PROGRAM: &str = "started = time.now()\nrolls = for i in list.range(0, 3) {\n    return number.round(number.random() * 100)\n}\nreturn { started, rolls, key: hash.digest(rolls) }\n";

/// Runs [`PROGRAM`] once: its program, its result and its journal's events.
fn recorded_run() -> (Executable, Runtime, Value, Vec<Event>) {
    let journal = Arc::new(MemoryJournal::new());
    let runtime = Runtime::builder()
        .registry(registry(REGISTRY))
        .executor(Arc::new(ScriptedExecutor::from_json_str("{}").expect("fixtures")))
        .journal(journal.clone())
        .worker_threads(1)
        .build()
        .expect("runtime");
    let program = runtime.compile(PROGRAM, &Inputs::new()).expect("compiles");
    let run = runtime.start(&program, &Inputs::new()).expect("starts");
    let run_id: RunId = run.run_id().clone();
    let value = match run.wait().expect("journal works") {
        Outcome::Succeeded(value) => value.value().clone(),
        other => panic!("expected success, got {other:?}"),
    };
    let reader = tokio::runtime::Builder::new_current_thread().build().expect("reader");
    let records = reader.block_on(journal.read(&run_id, 0, usize::MAX)).expect("read");
    let events = records.iter().map(|r| Event::decode(&r.bytes).expect("decodes").1).collect();
    (program, runtime, value, events)
}

fn fresh_core(program: &Executable, runtime: &Runtime) -> RunCore {
    runtime.core(program, &RunOptions::default())
}

fn replayed_value(program: &Executable, runtime: &Runtime, events: &[Event]) -> Value {
    let resumed = replay(fresh_core(program, runtime), events).expect("replays");
    assert!(resumed.unsampled.is_empty() && resumed.in_flight.is_empty());
    match resumed.outcome {
        Some(Outcome::Succeeded(value)) => value.value().clone(),
        other => panic!("expected the recorded success, got {other:?}"),
    }
}

#[test]
fn each_sample_is_journaled_once_and_replay_reuses_it() {
    let (program, runtime, value, events) = recorded_run();
    let samples = events.iter().filter(|e| matches!(e, Event::IntrinsicSampled { .. })).count();
    assert_eq!(samples, 4, "time.now once, number.random once per iteration");
    assert_eq!(replayed_value(&program, &runtime, &events), value);
}

#[test]
fn replay_takes_the_recorded_value_even_when_sampling_would_differ() {
    let (program, runtime, value, mut events) = recorded_run();
    let Some(Event::IntrinsicSampled { output, .. }) =
        events.iter_mut().find(|e| matches!(e, Event::IntrinsicSampled { .. }))
    else {
        panic!("the run sampled the clock");
    };
    *output = Ok(serde_bytes::ByteBuf::from(rcve::encode(&Value::Int(42))));
    let replayed = replayed_value(&program, &runtime, &events);
    let json = to_presentation_json(&replayed).expect("JSON");
    assert!(json.contains(r#""started":42"#), "{json}");
    let Value::Object(original) = value else { panic!("an object") };
    let Value::Object(replayed) = replayed else { panic!("an object") };
    assert_eq!(original.get("rolls"), replayed.get("rolls"), "the other samples are the recorded ones");
}

#[test]
fn a_journal_ending_before_a_sample_lists_it_as_unsampled() {
    let (program, runtime, _, events) = recorded_run();
    let first = events.iter().position(|e| matches!(e, Event::IntrinsicSampled { .. })).expect("a sample");
    let resumed = replay(fresh_core(&program, &runtime), &events[..first]).expect("replays a prefix");
    assert!(resumed.outcome.is_none());
    assert!(!resumed.unsampled.is_empty(), "the requested samples are still to take");
}

#[test]
fn a_sampling_failure_is_journaled_and_replays_as_the_same_failure() {
    let (program, runtime, _, events) = recorded_run();
    let first = events.iter().position(|e| matches!(e, Event::IntrinsicSampled { .. })).expect("a sample");
    let mut journal = events[..first].to_vec();
    let mut resumed = replay(fresh_core(&program, &runtime), &journal).expect("replays a prefix");
    let request = resumed.unsampled.first().expect("a requested sample").clone();
    let answer = Err(ValueError::new(codes::SAMPLE_UNAVAILABLE, "no random source"));
    for effect in resumed.core.react(Input::Sampled { call: request.call, answer }) {
        if let Effect::Append(appended) = effect {
            journal.extend(appended);
        }
    }
    assert!(journal.iter().any(|e| matches!(e, Event::IntrinsicSampled { output: Err(_), .. })));
    match replay(fresh_core(&program, &runtime), &journal).expect("replays").outcome {
        Some(Outcome::Failed(error)) => assert_eq!(error.code, "RL5408"),
        other => panic!("expected the recorded failure, got {other:?}"),
    }
}
