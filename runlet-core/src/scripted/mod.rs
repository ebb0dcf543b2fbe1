//! Scripted tool executors: hosts of the engine that answer a run's calls without real tools —
//! from a fixture file of cases per tool ([`ScriptedExecutor`]), or from a recorded transcript
//! ([`ReplayExecutor`], recorded by [`RecordingExecutor`]). The CLI's `--tools`, `--record` and
//! `replay` and the tests use them; a host with real tools never needs them.

mod executor;
pub(crate) mod fixtures;
mod transcript;

pub use executor::{CaseUsage, ScriptedExecutor};
pub use fixtures::{FixtureAnswer, FixtureCase, FixtureError, ToolFixtures};
pub use transcript::{
    CallKey, RecordingExecutor, ReplayExecutor, ReplayMismatch, RequestedCall, SampleEntry,
    TRANSCRIPT_FORMAT, Transcript, TranscriptEntry, TranscriptError,
};
