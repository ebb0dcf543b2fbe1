//! The named parts a run core's state is grouped in: what the run has materialized (`RunArena`),
//! what is about to be evaluated (`Agenda`), what one reaction hands the shell (`Outbox`), what
//! is known of each operation (`Operations`), its timers (`Timers`), and the tools it calls
//! (`ToolTable`, shared by every run of a runtime).

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use super::arena::{Arena, Slot};
use super::operations::{OperationKey, OperationRecord, ParkedCall};
use super::recovery::HostDecision;
use super::state::{Node, NodeIx, Scope, ScopeIx, TimerPurpose};
use super::{Effect, TimerHandle};
use crate::engine::event::Event;
use crate::registry::{Registry, ToolId};
use crate::schema::ExecutionClass;

impl Slot for NodeIx {
    fn from_slot(slot: u32) -> Self {
        NodeIx(slot)
    }
    fn slot(self) -> usize {
        self.0 as usize
    }
}

impl Slot for ScopeIx {
    fn from_slot(slot: u32) -> Self {
        ScopeIx(slot)
    }
    fn slot(self) -> usize {
        self.0 as usize
    }
}

/// The run's materialized graph: nodes and scopes by index, and what is due to be released.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub(super) struct RunArena {
    pub(super) nodes: Arena<NodeIx, Node>,
    pub(super) scopes: Arena<ScopeIx, Scope>,
    /// How many nodes the run has created, released ones included.
    pub(super) materialized: usize,
    /// Finished iterations and fold steps whose value was taken, released after the current step.
    pub(super) retired: Vec<ScopeIx>,
}

/// The nodes waiting to be evaluated.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub(super) struct Agenda {
    /// Nodes whose dependencies all resolved, in the order they became ready.
    pub(super) ready: VecDeque<NodeIx>,
    /// Nodes created by the demands of the current step, checked for readiness together.
    pub(super) fresh: Vec<NodeIx>,
}

/// What the current reaction hands the shell: the events to append as one batch, then the
/// effects that follow their commit.
#[derive(Debug, Default)]
pub(super) struct Outbox {
    pub(super) events: Vec<Event>,
    pub(super) effects: Vec<Effect>,
}

/// What the run knows about operations (spec §4.2, §5.4).
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub(super) struct Operations {
    /// The operations of calls inside boundary attempts, which a retry may meet again.
    pub(super) records: BTreeMap<OperationKey, OperationRecord>,
    /// The operation of each dispatched call node inside a boundary attempt.
    pub(super) by_call: BTreeMap<NodeIx, OperationKey>,
    /// The host's recovery decisions for calls left dispatching, applied on `Resume`.
    pub(super) host_decisions: BTreeMap<NodeIx, HostDecision>,
    /// Calls waiting for their permits, with what their dispatch needs once granted.
    pub(super) parked: BTreeMap<NodeIx, ParkedCall>,
}

/// The timers the run asked for and what each is for.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub(super) struct Timers {
    pub(super) purposes: BTreeMap<TimerHandle, TimerPurpose>,
    /// The handle the next timer gets.
    pub(super) next: u32,
}

/// The tools a run calls, by `ToolId` index: their names (for events and errors), execution
/// classes (spec §5.4) and whether a cap of their own (a resource group or `max_concurrency`)
/// makes every call wait for a permit. Built once per runtime from its registry and shared by
/// every run.
#[derive(Debug, Clone)]
pub struct ToolTable {
    names: Arc<[Arc<str>]>,
    classes: Arc<[ExecutionClass]>,
    capped: Arc<[bool]>,
    /// Each tool's descriptor `schema_version`, a part of its operations' ids.
    schema_versions: Arc<[Arc<str>]>,
}

impl ToolTable {
    /// The names and classes of `registry`'s tools.
    pub fn of(registry: &Registry) -> ToolTable {
        ToolTable {
            names: registry.tools().map(|(_, t)| t.name.shared()).collect(),
            schema_versions: registry.tools().map(|(_, t)| t.schema_version.clone()).collect(),
            classes: registry.tools().map(|(_, t)| t.execution).collect(),
            capped: registry
                .tools()
                .map(|(_, t)| t.resource_group.is_some() || t.max_concurrency.is_some())
                .collect(),
        }
    }

    /// Whether calls of `tool` wait for a permit of the tool's own cap.
    pub(super) fn capped(&self, tool: ToolId) -> bool {
        self.capped.get(tool.index()).copied().unwrap_or(false)
    }

    pub(super) fn schema_version(&self, tool: ToolId) -> &str {
        self.schema_versions.get(tool.index()).map_or("", |version| version)
    }

    pub(super) fn name(&self, tool: ToolId) -> Arc<str> {
        self.names.get(tool.index()).cloned().unwrap_or_else(|| Arc::from(""))
    }

    /// Whether `tool` is one of the table's.
    pub(super) fn knows(&self, tool: ToolId) -> bool {
        tool.index() < self.names.len()
    }

    /// A tool outside the table (which a program of this registry cannot call) counts as
    /// `unsafe`, the class that permits the least.
    pub(super) fn class(&self, tool: ToolId) -> ExecutionClass {
        self.classes.get(tool.index()).copied().unwrap_or(ExecutionClass::Unsafe)
    }
}
