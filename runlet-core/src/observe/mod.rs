//! Observability (spec §6): the public graph of a run — node identities, the §4.4 state machine,
//! labelled edges — built from its journaled events, as consistent snapshots and gap-free
//! subscriptions, with the [`ViewPolicy`] redaction applied before anything leaves the API.
//!
//! ```text
//!  engine shell ──(seq, Event), after the commit──▶ RunObserver (one per run, with its GraphContext)
//!                                                     ├─ snapshot(view)          ─▶ GraphSnapshot
//!                                                     └─ subscribe(after, view)  ─▶ GraphEvent, …
//!                                                          (behind? it reads the journal by seq)
//!  Journal ──read──▶ snapshot_from_journal(context, …)   ─▶ GraphSnapshot (the same fold)
//! ```
//!
//! Observe reads only the engine's [`Event`](crate::engine::event::Event)s, the journal and the
//! compiled program ([`GraphContext`]); the engine never waits for a viewer. The runtime makes one
//! [`RunObserver`] per run and publishes each event to it after its commit; hosts get it from
//! `RunHandle::observer` or `Runtime::observer`. Snapshot nodes carry a [`NodeId`], a
//! [`NodeKind`] and a [`NodeState`] of the §4.4 machine; the run has a [`RunState`].
//!
//! # Which view
//!
//! - [`RunObserver::snapshot`] (or `snapshot_with` and [`SnapshotOptions`]): the graph as of the
//!   last published record, [`GraphSnapshot::seq`]. A loop with more items than
//!   `iteration_detail_limit` folds most iterations into [`IterationRange`]s; untaken arms and
//!   unused catches are listed as [`UnmaterializedRegion`]s. [`to_dot`] renders one as Graphviz.
//! - [`RunObserver::subscribe`]`(after_seq, view)`: every [`GraphEvent`] after `after_seq`, in
//!   order and each once, ending after the run's last record. Subscribing from a snapshot's `seq`
//!   continues exactly where the snapshot stops; reconnect from [`Subscription::last_seq`].
//!   [`Subscription::next_record`] gives the engine's unredacted events instead.
//! - [`snapshot_from_journal`] with an `Executable::graph_context`: the same graph rebuilt from
//!   the journal, for a finished run or another process's, timed by when its records were
//!   appended (where the journal keeps that) rather than when they were published. Records the
//!   state machine refuses are reported in [`GraphSnapshot::integrity_errors`], not applied.
//!   [`JournalFold`] keeps that graph and reads on from where it got to, for a run that is still
//!   growing in another process.
//!
//! [`ViewPolicy::default`] shows public values and metadata only: a path labelled `sensitive` or
//! `secret` (`x-runlet-sensitivity` in its schema) reads `"<redacted:…>"`, and tool messages
//! inheriting such a label are left out; [`ViewPolicy::everything`] shows all of it.
//!
//! ```
//! use std::sync::Arc;
//! use runlet::analyze::Inputs;
//! use runlet::observe::{RunState, ViewPolicy};
//! use runlet::registry::{Registry, RegistryOptions};
//! use runlet::runtime::Runtime;
//! use runlet::scripted::ScriptedExecutor;
//!
//! let tools = r#"{"tools": [{"name": "vault.token", "params": [], "execution": "pure",
//!     "outputSchema": {"type": "string", "x-runlet-sensitivity": "secret"}}]}"#;
//! let registry = Registry::from_json_str(tools, &RegistryOptions::default()).expect("loads").registry;
//! let answers = r#"{"vault.token": [{"result": "hunter2"}]}"#;
//! let answers = ScriptedExecutor::from_json_str(answers).expect("loads");
//! let runtime = Runtime::builder().registry(registry).executor(Arc::new(answers)).build().expect("builds");
//! let program = runtime.compile("return vault.token()\n", &Inputs::new()).expect("compiles");
//! let run = runtime.start(&program, &Inputs::new()).expect("starts");
//! let observer = run.observer();
//! let mut events = observer.subscribe(0, ViewPolicy::default());
//! run.wait().expect("journal works");
//!
//! let snapshot = observer.snapshot(&ViewPolicy::default());
//! assert_eq!(snapshot.run.state, RunState::Succeeded);
//! let call = snapshot.nodes.iter().find(|node| node.tool.is_some()).expect("the call");
//! assert_eq!(call.value.as_deref(), Some("\"<redacted:secret>\""));
//! let cleared = observer.snapshot(&ViewPolicy::everything()).nodes;
//! assert!(cleared.iter().any(|node| node.value.as_deref() == Some("\"hunter2\"")));
//!
//! let pool = tokio::runtime::Builder::new_current_thread().build().expect("tokio");
//! let mut seqs = Vec::new();
//! while let Some(event) = pool.block_on(events.next()) {
//!     seqs.push(event.expect("the journal reads back").seq);
//! }
//! assert_eq!(seqs, (1..=snapshot.seq).collect::<Vec<_>>());
//! ```

mod assemble;
mod context;
mod dot;
mod event;
mod hub;
mod iterations;
mod model;
mod node_id;
mod queue;
mod retention;
mod snapshot;
mod state;
mod view;

pub use context::{GraphContext, NodeKind, ProgramGraph};
pub use dot::to_dot;
pub use event::GraphEvent;
pub(crate) use hub::ObserverIndex;
pub use hub::{
    JournalFold, ObserveError, RunObserver, Subscription, events_from_journal, snapshot_from_journal,
};
pub use model::RunState;
pub use node_id::NodeId;
pub use snapshot::{
    BlockedOn, CancellationInfo, EdgeKind, FailureInfo, GraphEdge, GraphNode, GraphSnapshot, IterationRange,
    LoopInfo, OwningScope, ProgressInfo, RetryInfo, RetryWait, RunSummary, SnapshotOptions, SourceSpan,
    Timestamps, ToolInfo, UnmaterializedRegion,
};
pub use state::{IllegalTransition, NodeState};
pub use view::ViewPolicy;
