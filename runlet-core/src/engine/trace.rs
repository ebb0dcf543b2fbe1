//! The `tracing` spans of a run's tool calls (spec §6.2, INTERFACES.md §4.5): `execute_tool
//! {tool}` for each call node the shell sends, under the run's session span, and `runlet.dispatch`
//! for each invocation of the executor under it (a recovery question and the dispatch after it
//! are two). Attribute names follow the OpenTelemetry GenAI conventions where they exist
//! (`gen_ai.tool.name`, `gen_ai.tool.call.id` = the operation id, shared by every attempt of
//! one operation). No value reaches an attribute. The core installs no subscriber: a host that
//! does not trace pays a disabled callsite check per span.

use tracing::Span;
use tracing::field::Empty;

use super::core::Input;
use super::executor::{ToolCall, ToolError};

/// The span of the call `call`, a child of `session` (the span of the process driving the run).
pub(crate) fn call_span(session: &Span, call: &ToolCall) -> Span {
    let context = &call.context;
    tracing::info_span!(
        parent: session,
        "execute_tool",
        otel.name = %format_args!("execute_tool {}", call.tool),
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = %call.tool,
        gen_ai.tool.call.id = %context.operation_id,
        runlet.run.id = %context.run_id.as_str(),
        runlet.node.id = %context.node_id,
        runlet.attempt = context.attempt,
        error.type = Empty,
        runlet.uncertain = Empty,
    )
}

/// The span of one invocation of the executor for `call` (`recovery`: a recovery question),
/// a child of the current span (the call's).
pub(crate) fn dispatch_span(call: &ToolCall, recovery: bool) -> Span {
    tracing::info_span!(
        "runlet.dispatch",
        runlet.dispatch.id = %call.context.dispatch_id,
        runlet.attempt = call.context.attempt,
        runlet.recovery = recovery,
        error.type = Empty,
        runlet.uncertain = Empty,
    )
}

/// Records on `span` how an invocation ended, when it failed.
pub(crate) fn record_error(span: &Span, error: &ToolError) {
    span.record("error.type", error.code.as_str());
    span.record("runlet.uncertain", error.uncertain);
}

/// Records on the call's `span` the answer the core is told.
pub(crate) fn record_answer(span: &Span, answer: &Input) {
    if let Input::ToolFailed { error, .. } = answer {
        record_error(span, error);
    }
}
