//! A crash at every append: generated programs and the hand-written corpus run once without a
//! crash, then once per journal append k with a worker whose journal takes appends 1..k and
//! nothing after; a new worker recovers each run from what the journal holds and resumes it.
//! Checked after each: the same result as the crash-free run, no completed call dispatched
//! again, at-most-once and unsafe calls dispatched at most once and reported uncertain exactly
//! when their `CallDispatchPrepared` has no outcome, loops within their bound, and a replay of
//! the ended journal that dispatches nothing. A second test crashes twice: the worker that takes
//! the run over after the first crash crashes too, 1 to 3 appends later (or while it journals
//! its decisions), and a third worker resumes the run from what both left.
//!
//! Seeded: `RUNLET_CRASH_SEED` (default [`DEFAULT_SEED`]) picks the generated programs. A
//! failure names its case and crash point; `RUNLET_CRASH_CASE` and `RUNLET_CRASH_POINT` run
//! just those.

// Only the example files are read here; the module's other helpers serve other suites.
#[allow(dead_code)]
#[path = "../common/examples.rs"]
mod examples;
#[path = "../common/generated_programs.rs"]
mod generated_programs;

mod audit;
mod corpus;
mod generated;
mod harness;
mod lab;
mod world;

use harness::{Bench, Case, Tally};

pub const DEFAULT_SEED: u64 = 20_261_201;

/// Which crash points a run of the tests covers.
#[derive(Debug)]
pub struct Config {
    pub seed: u64,
    case: Option<String>,
    point: Option<usize>,
}

impl Config {
    pub fn from_env() -> Config {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let number = |name: &str, text: String| {
            let parsed = match text.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => text.parse(),
            };
            parsed.unwrap_or_else(|_| panic!("{name} is not a number: {text}"))
        };
        Config {
            seed: var("RUNLET_CRASH_SEED").map_or(DEFAULT_SEED, |v| number("RUNLET_CRASH_SEED", v)),
            case: var("RUNLET_CRASH_CASE"),
            point: var("RUNLET_CRASH_POINT").map(|v| number("RUNLET_CRASH_POINT", v) as usize),
        }
    }

    /// The one case the run is limited to, if it is.
    pub fn only(&self) -> Option<&str> {
        self.case.as_deref()
    }

    /// Whether the run is limited to one case, and it is not this one.
    pub fn skips(&self, name: &str) -> bool {
        self.only().is_some_and(|only| only != name)
    }
}

/// Crashes `case` after each of its appends in turn (or at the configured point only), unless
/// its crash-free run takes more than `max_appends`; panics with what reproduces the first
/// failure.
pub fn crash_everywhere(case: &Case, config: &Config, max_appends: usize) -> Option<Tally> {
    crash_at_points(case, config, max_appends, None)
}

/// [`crash_everywhere`], each crash followed by a second one: the worker that takes the run
/// over after a crash at point `p` crashes `second(p)` appends later, and a third resumes it.
pub fn crash_twice_everywhere(
    case: &Case,
    config: &Config,
    max_appends: usize,
    second: fn(usize) -> usize,
) -> Option<Tally> {
    crash_at_points(case, config, max_appends, Some(second))
}

fn crash_at_points(
    case: &Case,
    config: &Config,
    max_appends: usize,
    second: Option<fn(usize) -> usize>,
) -> Option<Tally> {
    let bench = Bench::new(case);
    let reference = bench.reference();
    if reference.appends > max_appends {
        return None;
    }
    let points = match config.point {
        Some(point) => point..=point,
        None => 0..=reference.appends,
    };
    let mut tally = Tally::default();
    for point in points {
        let checked = match second {
            Some(second) => bench.crash_twice_at(&reference, point, second(point)),
            None => bench.crash_at(&reference, point),
        };
        match checked {
            Ok(counted) => tally.add(counted),
            Err(failure) => panic!(
                "{}: a crash after append {point} of {}: {failure}\nreproduce with RUNLET_CRASH_SEED={} RUNLET_CRASH_CASE={} RUNLET_CRASH_POINT={point} cargo test -p runlet-core --test crash\n{}",
                case.name, reference.appends, config.seed, case.name, case.source
            ),
        }
    }
    Some(tally)
}
