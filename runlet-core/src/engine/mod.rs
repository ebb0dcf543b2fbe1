//! The execution engine (spec §2.4–2.8, §4, §5; docs/design/engine.md): the deterministic run
//! core, the async shell that carries out its effects, the events a run journals, replay, limits,
//! permits, and the seam to host tools.
//!
//! A run is one [`RunCore`]: a sans-IO state machine over a program's HIR and its
//! [`Plan`](crate::plan::Plan) that is fed [`Input`]s and answers with [`Effect`]s. It never
//! awaits, reads a clock or spawns. The shell ([`drive`], [`resume`]) is one tokio task per run
//! that carries out the effects and feeds the answers back:
//!
//! ```text
//!  hir::Program + Plan ─▶ RunCore ──Effect──▶ shell ─▶ Journal::append                (first)
//!                            ▲                  │   ─▶ observer channel               (after the commit)
//!                            └──────Input───────┘   ─▶ ToolExecutor, timers, Sampler  (after the commit)
//! ```
//!
//! A reaction's events come first, as one [`Effect::Append`]; the shell acts on the effects after
//! it only once the append has committed (invariant 7), and [`replay`] of the journaled events
//! into a fresh core regenerates them exactly (invariant 6). A run ends in an [`Outcome`], fails
//! with a [`RunError`], and is bounded by [`Limits`] and [`permits`]. The engine knows nothing of
//! `observe`, which reads only [`event`]; [`crate::runtime`] joins the two.
//!
//! # Which way in
//!
//! - **[`RunCore`] directly**, for deterministic tests: you pick which call answers when, when
//!   timers fire and where a crash falls, as the example below does; no tokio is involved.
//! - **[`drive`] / [`resume`]** to run the shell on your own tokio runtime: you assemble the
//!   [`RunEnvironment`], create the run's header in the journal before `drive`, and bring the
//!   core up to the journal's end with [`replay_run`] (which checks the digest key) before `resume`.
//! - **[`Runtime`](crate::runtime::Runtime)** otherwise: it compiles, validates host inputs,
//!   writes and checks run headers, shares permits and observers, and recovers runs.
//!
//! A host's tools are one [`ToolExecutor`]. `dispatch` is called concurrently, only after the
//! call's `CallDispatchPrepared` committed; its output is validated against the tool's schema.
//! An executor that stops calls when [`CallContext::cancellation`] fires says so in
//! [`capabilities`](ToolExecutor::capabilities) and answers [`ToolError::cancelled`]; otherwise
//! a cancelled call is detached at once (`RL6201`, `not_delivered`) and a late answer is only an
//! orphaned completion. `recoverable` tools implement [`recover`](ToolExecutor::recover). The
//! [`crate::scripted`] executors answer from fixtures or transcripts, for tests and replays.
//!
//! ```
//! use std::sync::Arc;
//! use runlet::analyze::{Inputs, analyze};
//! use runlet::engine::event::Event;
//! use runlet::engine::{Effect, Input, Outcome, RunCore, RunSettings, ToolTable};
//! use runlet::plan::Plan;
//! use runlet::registry::{Registry, RegistryOptions};
//! use runlet::value::{DigestKey, Value};
//!
//! let tools = r#"{"tools": [{"name": "kv.get", "params": [{"name": "key", "schema": {"type": "string"}}],
//!     "outputSchema": {"type": "string"}, "execution": "pure"}]}"#;
//! let registry = Registry::from_json_str(tools, &RegistryOptions::default()).expect("loads").registry;
//! let analysis = analyze("return kv.get(\"greeting\")\n", &registry, &Inputs::new(), &Default::default());
//! let hir = Arc::new(analysis.hir.expect("compiles"));
//! let (plan, tools) = (Arc::new(Plan::new(&hir)), ToolTable::of(&registry));
//! let key = DigestKey::new("doc", b"doc key").expect("key");
//! let mut core = RunCore::new(hir, plan, tools, RunSettings::default(), key);
//!
//! // The events come first; the dispatch they record waits for their commit.
//! let effects = core.react(Input::Start { inputs: Vec::new() });
//! let [Effect::Append(events), Effect::Dispatch(call)] = effects.as_slice() else { panic!("{effects:?}") };
//! assert!(matches!(events.last(), Some(Event::CallDispatchPrepared { .. })));
//!
//! // The test plays the shell: it answers the call, labelled by the tool's output schema.
//! let value = core.labelled_output(call.call, Value::from("hello"));
//! match core.react(Input::ToolCompleted { call: call.call, value }).last() {
//!     Some(Effect::Finish(Outcome::Succeeded(value))) => assert_eq!(value.value(), &Value::from("hello")),
//!     other => panic!("{other:?}"),
//! }
//! ```

mod call_permits;
mod core;
mod error;
pub mod event;
mod executor;
mod identity;
pub mod limits;
pub mod metrics;
pub mod permits;
mod progress;
mod replay;
mod retry;
mod sampler;
mod shared_permits;
mod shell;
pub mod snapshot;
#[cfg(test)]
mod testing;
pub(crate) mod trace;
pub mod w3c;

pub use core::{
    CallHandle, CallRequest, EVALUATIONS_PER_REACTION, Effect, Input, Outcome, Resolution, RunCore,
    RunSettings, SampleRequest, ScopeHandle, TimerHandle, ToolTable, TracedScope,
};
pub use error::{FailureClass, RunError};
pub use event::{Amount, MAX_PROGRESS_MESSAGE, Progress};
pub use executor::{
    CallContext, HostData, RecoveryOutcome, RecoveryRequest, ToolCall, ToolCapabilities, ToolError,
    ToolExecutor, ToolOutput,
};
pub use identity::{DispatchId, IdParseError, OperationComponents, OperationId, OperationPrefix, Workflow};
pub use limits::{Breach, LimitKey, LimitParseError, Limits};
pub use permits::{
    PermitRequest, PermitTable, PermitWaits, Permits, ResourceKey, RunPermits, SharedCaps, Ticket, tool_keys,
};
pub use progress::Heartbeat;
pub use replay::{Ledger, PendingTimer, ReplayError, Resumed, replay, replay_after, replay_run};
pub(crate) use retry::panic_message;
pub use retry::{Backoff, RetryClassifier};
pub use sampler::{Sampler, SystemSampler};
pub use shared_permits::{SharedKey, SharedPermit, SharedPermits};
pub use shell::{CommittedBatch, RunEnvironment, drive, resume};
pub(crate) use shell::{operation_of, records_after};
