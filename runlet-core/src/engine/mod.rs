//! The execution engine's tool-call layer: operation and dispatch identities, the `ToolExecutor`
//! seam the async shell calls tools through, and the scripted executor behind tool fixture files.

mod executor;
mod fixture_file;
mod identity;
mod scripted;

pub use executor::{
    CallContext, RecoveryOutcome, RecoveryRequest, ToolCall, ToolCapabilities, ToolError, ToolExecutor,
    ToolOutput,
};
pub use fixture_file::{FixtureAnswer, FixtureCase, FixtureError, ToolFixtures};
pub use identity::{DispatchId, IdParseError, OperationComponents, OperationId, WorkflowIdentity};
pub use scripted::{CaseUsage, ScriptedExecutor};
