//! The transitions a run records and publishes (spec §5.2). The core emits them in order; the
//! shell appends each batch to the journal before anything else may observe it.

/// One recorded transition. `node` is the public node id (spec §4.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    RunCreated,
    NodeReady { node: String },
    CallDispatchPrepared { node: String, tool: String, attempt: u32 },
    NodeSucceeded { node: String },
    NodeFailed { node: String, code: String },
    NodeCancelled { node: String },
    BranchSelected { node: String, arm: Arm },
    LoopCollectionResolved { node: String, items: usize },
    IterationMaterialized { node: String, index: usize },
    BoundaryAttemptStarted { node: String, attempt: u32 },
    BoundaryRetryScheduled { node: String, attempt: u32 },
    CatchSelected { node: String },
    RunSucceeded,
    RunFailed { code: String },
    RunCancelled,
}

/// Which alternative a conditional or `and`/`or` took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arm {
    Then,
    Else,
    /// `and`/`or` decided by its left operand; the right arm never runs.
    ShortCircuit,
    /// `and`/`or` needs its right operand.
    Right,
}

impl Event {
    /// The event's name, as `--events` files and observers show it.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::RunCreated => "RunCreated",
            Event::NodeReady { .. } => "NodeReady",
            Event::CallDispatchPrepared { .. } => "CallDispatchPrepared",
            Event::NodeSucceeded { .. } => "NodeSucceeded",
            Event::NodeFailed { .. } => "NodeFailed",
            Event::NodeCancelled { .. } => "NodeCancelled",
            Event::BranchSelected { .. } => "BranchSelected",
            Event::LoopCollectionResolved { .. } => "LoopCollectionResolved",
            Event::IterationMaterialized { .. } => "IterationMaterialized",
            Event::BoundaryAttemptStarted { .. } => "BoundaryAttemptStarted",
            Event::BoundaryRetryScheduled { .. } => "BoundaryRetryScheduled",
            Event::CatchSelected { .. } => "CatchSelected",
            Event::RunSucceeded => "RunSucceeded",
            Event::RunFailed { .. } => "RunFailed",
            Event::RunCancelled => "RunCancelled",
        }
    }
}
