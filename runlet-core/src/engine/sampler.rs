//! Where nondeterministic intrinsics get their values (docs/STDLIB.md): the shell asks the run's
//! `Sampler` once per sample and the core journals the answer; transcripts wrap or replace it.

use crate::stdlib::SampledFunction;
use crate::value::{Value, ValueError};

/// Samples nondeterministic intrinsics. Called once per sampled node; the answer is journaled,
/// so a replay of the journal never asks again.
pub trait Sampler: Send + Sync {
    /// A value of `function` for the intrinsic node `node_id` (its public node id).
    fn sample(&self, function: SampledFunction, node_id: &str) -> Result<Value, ValueError>;
}

/// The wall clock and the operating system's random source: the sampler of every runtime that
/// is not given another.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemSampler;

impl Sampler for SystemSampler {
    fn sample(&self, function: SampledFunction, _node_id: &str) -> Result<Value, ValueError> {
        function.sample()
    }
}
