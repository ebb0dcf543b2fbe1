//! Crash points of generated programs (`tests/common/generated_programs.rs`), drawn from the
//! seed until they number at least [`CRASH_POINTS`].

use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use runlet::engine::{Limits, RunSettings, ToolCall, ToolError, ToolExecutor, ToolOutput};
use runlet::value::{List, Value};

use crate::generated_programs::{Answer, Generator, REGISTRY, answer};
use crate::harness::{Case, Tally};
use crate::{Config, crash_everywhere, crash_twice_everywhere};

/// The fewest crash points one run of the test covers.
const CRASH_POINTS: usize = 10_000;

/// The generated programs' tools: [`answer`] to the first argument in the call's attempt.
struct Tools;

#[async_trait]
impl ToolExecutor for Tools {
    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        let n = match call.arguments.iter().next() {
            Some(Value::Int(n)) => *n,
            _ => 0,
        };
        let value = match answer(&call.tool, n, call.context.attempt) {
            Answer::Int(n) => Value::Int(n),
            Answer::Bool(b) => Value::Bool(b),
            Answer::Ints(ns) => List::new(ns.into_iter().map(Value::Int).collect()).expect("list").into(),
            Answer::Error { code, message, retryable: true } => {
                return Err(ToolError::retryable(code, message));
            }
            Answer::Error { code, message, retryable: false } => return Err(ToolError::new(code, message)),
            Answer::TimedOut => {
                let message = format!("the call to `{}` did not answer within its deadline", call.tool);
                return Err(ToolError::retryable("RL6102", message).with_uncertain(true));
            }
        };
        Ok(ToolOutput::new(value))
    }
}

/// The program numbered `index` of `seed`.
fn case(seed: u64, index: u64) -> Case {
    let mut mixed = seed ^ index.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    mixed = (mixed ^ (mixed >> 31)).wrapping_mul(0x94D0_49BB_1331_11EB);
    Case {
        name: format!("generated-{index}"),
        source: Generator::new(mixed ^ (mixed >> 29)).program(),
        registry: REGISTRY.to_owned(),
        inputs: "{}".to_owned(),
        limits: Limits::new(),
        settings: RunSettings { default_loop_limit: 3, ..RunSettings::default() },
        tools: Box::new(|| Arc::new(Tools)),
    }
}

/// Programs whose crash-free run takes more appends are left out: each of their crash points
/// costs as much as the run, so a few large programs would take most of the test's time.
const MAX_APPENDS: usize = 20;

/// The threads the programs are shared out to, by index.
const THREADS: u64 = 2;

/// The fewest double-crash points one run of the test covers: each costs three runs' worth.
const DOUBLE_CRASH_POINTS: usize = 1_000;

#[test]
fn generated_programs_resume_alike_after_a_crash_at_every_append() {
    let config = Config::from_env();
    let tally = crash_generated(&config, CRASH_POINTS, crash_everywhere);
    if config.only().is_none() {
        assert!(tally.points >= CRASH_POINTS, "{tally:?}");
        assert!(
            tally.with_calls_in_flight > tally.points / 2,
            "most crashes leave calls in flight: {tally:?}"
        );
        assert!(tally.decisions > 100 && tally.redispatched > 1000, "{tally:?}");
        assert!(
            tally.from_snapshot > tally.points / 4,
            "many crash points resume from a snapshot: {tally:?}"
        );
    }
}

/// The worker that takes a run over after a crash at point `p` crashes 1 to 3 appends later.
fn second_crash(point: usize) -> usize {
    1 + point % 3
}

#[test]
fn generated_programs_resume_alike_after_a_second_crash_of_the_worker_that_took_over() {
    let config = Config::from_env();
    let twice =
        |case: &Case, config: &Config, max: usize| crash_twice_everywhere(case, config, max, second_crash);
    let tally = crash_generated(&config, DOUBLE_CRASH_POINTS, twice);
    if config.only().is_none() {
        assert!(tally.points >= DOUBLE_CRASH_POINTS, "{tally:?}");
        assert!(tally.decisions > 20 && tally.redispatched > 100 && tally.from_snapshot > 0, "{tally:?}");
    }
}

/// Crashes generated programs of the configured seed with `crash` until at least `points`
/// crash points are covered (or the configured case alone), on [`THREADS`] threads, and
/// reports what they exercised.
fn crash_generated(
    config: &Config,
    points: usize,
    crash: impl Fn(&Case, &Config, usize) -> Option<Tally> + Sync,
) -> Tally {
    let started = Instant::now();
    let only: Option<u64> = config
        .only()
        .map(|name| name.strip_prefix("generated-").and_then(|i| i.parse().ok()).unwrap_or(u64::MAX));
    // Each thread takes the programs of its residue until it has its share of the crash points.
    let share = |thread: u64| {
        let (mut tally, mut programs, mut larger) = (Tally::default(), 0, 0);
        for index in (thread..).step_by(THREADS as usize) {
            let done = match only {
                Some(only) => index > only,
                None => tally.points >= points.div_ceil(THREADS as usize),
            };
            if done {
                break;
            }
            if only.is_some_and(|only| only != index) {
                continue;
            }
            match crash(&case(config.seed, index), config, MAX_APPENDS) {
                Some(counted) => tally.add(counted),
                None => larger += 1,
            }
            programs += 1;
        }
        (tally, programs, larger)
    };
    let shares: Vec<(Tally, usize, usize)> = std::thread::scope(|scope| {
        let share = &share;
        let threads: Vec<_> = (0..THREADS).map(|t| scope.spawn(move || share(t))).collect();
        threads.into_iter().map(|t| t.join().expect("a thread of crash points panicked")).collect()
    });
    let mut tally = Tally::default();
    let (mut programs, mut larger) = (0, 0);
    for (counted, ran, left_out) in shares {
        tally.add(counted);
        programs += ran;
        larger += left_out;
    }
    eprintln!(
        "seed {}: {programs} generated programs ({larger} left out, over {MAX_APPENDS} appends), {tally:?} in {:.1?}",
        config.seed,
        started.elapsed()
    );
    tally
}
