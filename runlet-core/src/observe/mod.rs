//! Observability (spec §6): the public graph of a run — node identities, the §4.4 state machine,
//! labelled edges — built from journaled events, live snapshots and gap-free subscriptions, and
//! the `ViewPolicy` redaction applied before anything crosses the API.

mod assemble;
mod context;
mod dot;
mod event;
mod hub;
mod iterations;
mod model;
mod node_id;
mod retention;
mod snapshot;
mod state;
mod view;

pub use context::{GraphContext, NodeKind, ProgramGraph};
pub use dot::to_dot;
pub use event::GraphEvent;
pub(crate) use hub::ObserverIndex;
pub use hub::{ObserveError, RunObserver, Subscription, snapshot_from_journal};
pub use model::RunState;
pub use node_id::NodeId;
pub use snapshot::{
    BlockedOn, CancellationInfo, EdgeKind, FailureInfo, GraphEdge, GraphNode, GraphSnapshot, IterationRange,
    LoopInfo, OwningScope, RetryInfo, RetryWait, RunSummary, SnapshotOptions, SourceSpan, Timestamps,
    ToolInfo, UnmaterializedRegion,
};
pub use state::{IllegalTransition, NodeState};
pub use view::ViewPolicy;
