//! The `tracing` spans of a run (spec §6.2, INTERFACES.md §4.5). `runlet.run` anchors the
//! run's trace and ends once the run is durably created; `runlet.session` is each process's
//! share of the run (its start, each resume), a child of the anchor through the trace context
//! the run header keeps, so one run is one trace however many processes drove it;
//! `runlet.boundary.attempt` and `runlet.loop` are the run's structured scopes; `execute_tool
//! {tool}` is each call node the shell sends, under its innermost scope, and `runlet.dispatch`
//! each invocation of the executor under it (a recovery question and the dispatch after it are
//! two). Records replayed on resume open none. Attribute names follow the OpenTelemetry GenAI
//! conventions where they exist (`gen_ai.tool.name`, `gen_ai.tool.call.id` = the operation id,
//! shared by every attempt of one operation). No value reaches an attribute. The core installs
//! no subscriber: a host that does not trace pays a disabled callsite check per span.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use tracing::Span;
use tracing::field::Empty;

use super::core::{Input, ScopeHandle, TracedScope};
use super::event::Event;
use super::executor::{ToolCall, ToolError};
use super::w3c;
use crate::journal::RunId;

/// The anchor span of the new run `run`: a child of the host's span `parent` names (W3C
/// entries), else of the current span. The caller ends it (drops it) once the run's header is
/// durable, so a crash never leaves a trace without its root.
pub(crate) fn run_span(run: &RunId, parent: &BTreeMap<String, String>) -> Span {
    let span = tracing::info_span!("runlet.run", runlet.run.id = %run.as_str());
    w3c::adopt(&span, parent);
    span
}

/// The span of this process's share of run `run`, which the journal held `journaled` records
/// of when it began: a root in `tracing`'s tree, whose OpenTelemetry parent is the anchor the
/// run header's `trace` entries name. (Not a `tracing` child of the anchor even in the process
/// that created it: a child would hold the anchor open until the session ends.)
pub(crate) fn session_span(run: &RunId, journaled: u64, trace: &BTreeMap<String, String>) -> Span {
    let span = tracing::info_span!(
        parent: None,
        "runlet.session",
        runlet.run.id = %run.as_str(),
        runlet.resumed = journaled > 0,
        runlet.journaled = journaled,
    );
    w3c::adopt(&span, trace);
    span
}

/// The spans of a run's open traced scopes, keyed by scope. The core names each scope as it
/// begins ([`ScopeSpans::began`]); the round's events, once committed, open and close the spans
/// in their order ([`ScopeSpans::follow`], then [`ScopeSpans::apply`]).
#[derive(Debug, Default)]
pub(crate) struct ScopeSpans {
    /// False when no subscriber records the run's spans: then nothing is kept.
    enabled: bool,
    open: HashMap<ScopeHandle, Span>,
    /// The open scopes by their node id, which the events name.
    by_node: HashMap<Arc<str>, ScopeHandle>,
    /// Scopes the round's reactions began, waiting for their events.
    began: Vec<Began>,
    /// What the round's events do to the spans, applied once they commit.
    pending: Vec<ScopeChange>,
}

#[derive(Debug)]
struct Began {
    scope: ScopeHandle,
    node: Arc<str>,
    parent: Option<ScopeHandle>,
    kind: TracedScope,
}

#[derive(Debug)]
enum ScopeChange {
    Open(Began),
    Close { scope: ScopeHandle, error: Option<String> },
}

impl ScopeSpans {
    /// The scope spans of a run whose session span is `session`.
    pub(crate) fn new(session: &Span) -> ScopeSpans {
        ScopeSpans { enabled: !session.is_disabled(), ..ScopeSpans::default() }
    }

    /// The core began traced scope `scope` for `node` inside `parent`.
    pub(crate) fn began(
        &mut self,
        scope: ScopeHandle,
        node: Arc<str>,
        parent: Option<ScopeHandle>,
        kind: TracedScope,
    ) {
        if self.enabled {
            self.began.push(Began { scope, node, parent, kind });
        }
    }

    /// Reads the round's `events`, in order, for the scopes they begin and end.
    pub(crate) fn follow(&mut self, events: &[Event]) {
        if !self.enabled || (self.began.is_empty() && self.by_node.is_empty()) {
            return;
        }
        for event in events {
            match event {
                Event::BoundaryAttemptStarted { node, .. } | Event::LoopCollectionResolved { node, .. } => {
                    if let Some(at) = self.began.iter().position(|began| &began.node == node) {
                        let began = self.began.swap_remove(at);
                        self.by_node.insert(began.node.clone(), began.scope);
                        self.pending.push(ScopeChange::Open(began));
                    }
                }
                Event::NodeSucceeded { node }
                | Event::NodeCancelled { node }
                | Event::BoundaryRetryScheduled { node, .. }
                | Event::CatchSelected { node } => self.close(node, None),
                Event::NodeFailed { node, code } => self.close(node, Some(code.clone())),
                _ => {}
            }
        }
    }

    fn close(&mut self, node: &str, error: Option<String>) {
        if let Some(scope) = self.by_node.remove(node) {
            self.pending.push(ScopeChange::Close { scope, error });
        }
    }

    /// Opens and closes the spans the committed events said, opening each under its parent
    /// scope's span, else `session`.
    pub(crate) fn apply(&mut self, session: &Span) {
        for change in std::mem::take(&mut self.pending) {
            match change {
                ScopeChange::Open(Began { scope, node, parent, kind }) => {
                    let parent = parent.and_then(|p| self.open.get(&p)).unwrap_or(session);
                    self.open.insert(scope, scope_span(parent, &node, kind));
                }
                ScopeChange::Close { scope, error } => {
                    if let (Some(span), Some(code)) = (self.open.remove(&scope), error) {
                        failed(&span, &code);
                    }
                }
            }
        }
    }

    /// The span a call in `scope` is a child of: its scope's, else `session`.
    pub(crate) fn parent_of<'a>(&'a self, scope: Option<ScopeHandle>, session: &'a Span) -> &'a Span {
        scope.and_then(|scope| self.open.get(&scope)).unwrap_or(session)
    }
}

/// The span of one traced scope of node `node`.
fn scope_span(parent: &Span, node: &str, kind: TracedScope) -> Span {
    match kind {
        TracedScope::BoundaryAttempt { attempt } => tracing::info_span!(
            parent: parent,
            "runlet.boundary.attempt",
            runlet.node.id = node,
            runlet.attempt = attempt,
            error.type = Empty,
            otel.status_code = Empty,
        ),
        TracedScope::Loop { items } => tracing::info_span!(
            parent: parent,
            "runlet.loop",
            runlet.node.id = node,
            runlet.loop.items = items,
            error.type = Empty,
            otel.status_code = Empty,
        ),
    }
}

/// The span of the call `call`, a child of `parent` (its scope's span, else the session's).
pub(crate) fn call_span(parent: &Span, call: &ToolCall) -> Span {
    let context = &call.context;
    tracing::info_span!(
        parent: parent,
        "execute_tool",
        otel.name = %format_args!("execute_tool {}", call.tool),
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = %call.tool,
        gen_ai.tool.call.id = %context.operation_id,
        runlet.run.id = %context.run_id.as_str(),
        runlet.node.id = %context.node_id,
        runlet.attempt = context.attempt,
        error.type = Empty,
            otel.status_code = Empty,
        runlet.uncertain = Empty,
    )
}

/// The span of one invocation of the executor for `call` (`recovery`: a recovery question),
/// a child of the current span (the call's). The call's context carries its W3C entries to the
/// tool.
pub(crate) fn dispatch_span(call: &mut ToolCall, recovery: bool) -> Span {
    let span = tracing::info_span!(
        "runlet.dispatch",
        runlet.dispatch.id = %call.context.dispatch_id,
        runlet.attempt = call.context.attempt,
        runlet.recovery = recovery,
        error.type = Empty,
            otel.status_code = Empty,
        runlet.uncertain = Empty,
    );
    call.context.trace = w3c::of_span(&span);
    span
}

/// Records on `span` how an invocation ended, when it failed.
pub(crate) fn record_error(span: &Span, error: &ToolError) {
    failed(span, &error.code);
    span.record("runlet.uncertain", error.uncertain);
}

/// Marks `span` failed with `code`: its `error.type`, and the error status OpenTelemetry
/// backends show a failure by.
fn failed(span: &Span, code: &str) {
    span.record("error.type", code);
    span.record("otel.status_code", "ERROR");
}

/// Records on the call's `span` the answer the core is told.
pub(crate) fn record_answer(span: &Span, answer: &Input) {
    if let Input::ToolFailed { error, .. } = answer {
        record_error(span, error);
    }
}
