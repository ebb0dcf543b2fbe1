//! The standard prelude of intrinsics (spec §2.3, §7.3; docs/STDLIB.md): the functions of the
//! `text`, `regex`, `list`, `json`, `number`, `time` and `hash` namespaces, their schemas and code.
//!
//! A host opts in per registry ([`Prelude`]); the registry then holds one descriptor per function
//! (`schema_version` [`PRELUDE_VERSION`], execution class `pure`) next to its tools, so calls to
//! intrinsics are resolved, checked and converted exactly like tool calls. The analyzer lowers
//! them to `Intrinsic` expressions: deterministic ones ([`PureFunction`]) are compute nodes the
//! run core evaluates itself; nondeterministic ones ([`SampledFunction`]: the clock, randomness)
//! are sampled once by the shell and journaled, so replay reuses the recorded value.

mod args;
mod catalogue;
mod evaluate;
mod hash;
mod json;
mod list;
mod number;
mod regex;
mod sample;
mod text;
mod time;

pub use catalogue::{
    Intrinsic, NAMESPACES, OutputRule, PRELUDE_VERSION, Prelude, PureFunction, SampledFunction, Signature,
    Type,
};
pub use regex::{PatternCache, compile as compile_regex};

/// The most bytes a string an intrinsic builds may have (`RL5406` beyond it).
pub const MAX_RESULT_BYTES: usize = 16 * 1024 * 1024;

/// The most elements a list an intrinsic builds may have (`RL5406` beyond it).
pub const MAX_RESULT_ITEMS: usize = 1_000_000;
