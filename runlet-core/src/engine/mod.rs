//! The execution engine (spec §2.4–2.8, §4, §5; docs/design/engine.md): the plan of a compiled
//! program, the deterministic run core, its events, and the tool-call layer the shell calls through.

mod core;
mod error;
pub mod event;
mod executor;
mod fixture_file;
mod identity;
pub mod limits;
pub mod permits;
pub mod plan;
mod replay;
mod retry;
mod runtime;
mod sampler;
mod scripted;
mod shell;
#[cfg(test)]
mod testing;
mod transcript;

pub use core::{
    CallHandle, CallRequest, Effect, Input, Outcome, Resolution, RunCore, RunSettings, SampleRequest,
    TimerHandle,
};
pub use error::RunError;
pub use executor::{
    CallContext, RecoveryOutcome, RecoveryRequest, ToolCall, ToolCapabilities, ToolError, ToolExecutor,
    ToolOutput,
};
pub use fixture_file::{FixtureAnswer, FixtureCase, FixtureError, ToolFixtures};
pub use identity::{DispatchId, IdParseError, OperationComponents, OperationId, WorkflowIdentity};
pub use limits::{Breach, LimitKey, LimitParseError, Limits};
pub use permits::{PermitRequest, PermitTable, Permits, ResourceKey, RunPermits, Ticket, tool_keys};
pub use plan::Plan;
pub use replay::{PendingTimer, ReplayError, Resumed, replay, replay_run};
pub use retry::{Backoff, RetryClassifier};
pub use runtime::{
    BuildError, Executable, Recovery, RecoveryError, RunHandle, RunOptions, Runtime, RuntimeBuilder,
    StartError, UncertainOperation,
};
pub use sampler::{Sampler, SystemSampler};
pub use scripted::{CaseUsage, ScriptedExecutor};
pub use shell::{RunEnvironment, drive, resume};
pub use transcript::{
    CallKey, RecordingExecutor, ReplayExecutor, ReplayMismatch, RequestedCall, SampleEntry,
    TRANSCRIPT_FORMAT, Transcript, TranscriptEntry, TranscriptError,
};
