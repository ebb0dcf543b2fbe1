//! The execution engine (spec §2.4–2.8, §4, §5; docs/design/engine.md): the plan of a compiled
//! program, the deterministic run core, its events, and the tool-call layer the shell calls through.

mod core;
mod error;
pub mod event;
mod executor;
mod identity;
pub mod limits;
pub mod permits;
mod replay;
mod retry;
mod sampler;
mod shell;
#[cfg(test)]
mod testing;

pub use core::{
    CallHandle, CallRequest, Effect, Input, Outcome, Resolution, RunCore, RunSettings, SampleRequest,
    TimerHandle,
};
pub use error::{FailureClass, RunError};
pub use executor::{
    CallContext, RecoveryOutcome, RecoveryRequest, ToolCall, ToolCapabilities, ToolError, ToolExecutor,
    ToolOutput,
};
pub use identity::{DispatchId, IdParseError, OperationComponents, OperationId};
pub use limits::{Breach, LimitKey, LimitParseError, Limits};
pub use permits::{
    PermitRequest, PermitTable, PermitWaits, Permits, ResourceKey, RunPermits, Ticket, tool_keys,
};
pub use replay::{PendingTimer, ReplayError, Resumed, replay, replay_run};
pub use retry::{Backoff, RetryClassifier};
pub use sampler::{Sampler, SystemSampler};
pub use shell::{RunEnvironment, drive, resume};
pub(crate) use shell::{operation_of, records_after};
