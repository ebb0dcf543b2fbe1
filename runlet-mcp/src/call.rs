//! One `tools/call` for the executor: the call's object argument and Runlet's ids in `_meta`,
//! progress reported as the call's heartbeat while it runs, `notifications/cancelled` when Runlet
//! cancels it or stops waiting (a deadline, or the session's silence timeout passing without an
//! answer or progress: `RL6102`), and the answer turned into a value or a tool error.
//!
//! Answers: `structuredContent` is the value (the engine then checks it against the output
//! schema); without it the text content, joined by newlines, is a String; `isError: true` is a
//! tool failure `RL6113` carrying the server's text (not retryable: MCP says nothing about it).
//! A JSON-RPC error is `RL6112` (not retryable). A server that is gone is `RL6111`, retryable
//! and uncertain: the request may have reached the server before it went, so only a tool whose
//! class lets a boundary redispatch it is sent again.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientRequest, ContentBlock, JsonObject, RequestId, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, ServiceError};
use runlet::diag::codes;
use runlet::engine::{ToolCall, ToolError, ToolOutput};
use runlet::value::{Object, Value, parse_json, to_serde_json};

use crate::error::{clipped, service_failure};
use crate::session::{Link, Session};

/// The `_meta` keys Runlet sets on every `tools/call`.
pub const META_OPERATION: &str = "runlet.dev/operation_id";
pub const META_DISPATCH: &str = "runlet.dev/dispatch_id";
pub const META_ATTEMPT: &str = "runlet.dev/attempt";

/// Makes the call `call` of the tool the server calls `original`.
pub(crate) async fn call_tool(
    session: &Session,
    original: &str,
    call: &ToolCall,
    runtime: &tokio::runtime::Handle,
) -> Result<ToolOutput, ToolError> {
    let server = &session.spec.name;
    // A server started again may take its start-up time: the call's cancellation is heard
    // meanwhile, and nothing is sent after it.
    let link = tokio::select! {
        biased;
        () = call.context.cancellation.cancelled() => return Err(ToolError::cancelled(&call.tool)),
        link = session.link(runtime) => match link {
            Ok(link) => link,
            Err(why) => return Err(unavailable(server, original, &why, false)),
        },
    };
    let mut params = CallToolRequestParams::new(original.to_owned());
    if let Some(arguments) = arguments(call)? {
        params = params.with_arguments(arguments);
    }
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let options = PeerRequestOptions::no_options().with_meta(meta(call).into());
    let handle = match link.peer.send_cancellable_request(request, options).await {
        Ok(handle) => handle,
        Err(error) => return Err(failure(server, &link, original, error, false).await),
    };
    let route = link.routes.register(&handle.progress_token, call.context.heartbeat.clone());
    let mut pending =
        Pending { peer: link.peer.clone(), id: Some(handle.id.clone()), runtime: runtime.clone() };
    let answer = tokio::select! {
        // An answer that comes as the silence timeout passes is the answer.
        biased;
        answer = handle.await_response() => answer,
        () = call.context.cancellation.cancelled() => {
            pending.cancel("the Runlet call was cancelled");
            return Err(ToolError::cancelled(&call.tool));
        }
        silence = route.silent_for(session.silence()) => {
            let silence = silence.as_millis();
            pending.cancel(&format!("Runlet heard nothing of the call for {silence} ms"));
            return Err(silent(server, original, silence));
        }
    };
    pending.id = None;
    match answer {
        Ok(ServerResult::CallToolResult(result)) => answer_of(server, original, result),
        Ok(other) => Err(ToolError::new(
            codes::MCP_PROTOCOL_ERROR.to_string(),
            format!(
                "`{server}` answered `tools/call` of `{original}` with something else than a tool result: {}",
                clipped(format!("{other:?}"))
            ),
        )),
        Err(error) => Err(failure(server, &link, original, error, true).await),
    }
}

/// The call's arguments as the object MCP sends: the one object argument of the object call
/// shape, or none.
fn arguments(call: &ToolCall) -> Result<Option<JsonObject>, ToolError> {
    let shape_error = |why: &str| {
        ToolError::new(
            codes::TOOL_INPUT_SCHEMA_MISMATCH.to_string(),
            format!("`{}` is an MCP tool and takes one object argument: {why}", call.tool),
        )
    };
    match call.arguments.items() {
        [] => Ok(None),
        [value @ Value::Object(_)] => match to_serde_json(value) {
            Ok(serde_json::Value::Object(object)) => Ok(Some(object)),
            Ok(_) => unreachable!("an object converts to an object"),
            Err(error) => Err(shape_error(&error.to_string())),
        },
        _ => Err(shape_error("it was given positional arguments")),
    }
}

/// Runlet's ids (and trace context) for the server, in the request's `_meta`.
fn meta(call: &ToolCall) -> JsonObject {
    let context = &call.context;
    let mut meta = JsonObject::new();
    meta.insert(META_OPERATION.into(), context.operation_id.to_string().into());
    meta.insert(META_DISPATCH.into(), context.dispatch_id.to_string().into());
    meta.insert(META_ATTEMPT.into(), context.attempt.into());
    for (key, value) in &context.trace {
        meta.insert(key.clone(), value.clone().into());
    }
    meta
}

/// A request sent and not answered: dropping it (Runlet stopped waiting, at a deadline) or
/// cancelling it tells the server with `notifications/cancelled`.
struct Pending {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
    runtime: tokio::runtime::Handle,
}

impl Pending {
    fn cancel(&mut self, reason: &str) {
        let Some(id) = self.id.take() else { return };
        let notification =
            CancelledNotification::new(CancelledNotificationParam::new(Some(id), Some(reason.to_owned())));
        let peer = self.peer.clone();
        self.runtime.spawn(async move {
            let _ = peer.send_notification(notification.into()).await;
        });
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        self.cancel("Runlet stopped waiting for the call (its deadline passed)");
    }
}

/// The value of a result, or the tool failure it reports.
fn answer_of(server: &str, original: &str, result: CallToolResult) -> Result<ToolOutput, ToolError> {
    let text: Vec<&str> = result.content.iter().filter_map(text_of).collect();
    if result.is_error == Some(true) {
        let message =
            if text.is_empty() { format!("`{original}` of `{server}` failed") } else { text.join("\n") };
        return Err(ToolError::new(codes::MCP_TOOL_ERROR.to_string(), message)
            .with_details(details(server, original)));
    }
    if let Some(structured) = result.structured_content {
        return value_of(server, original, &structured).map(ToolOutput::new);
    }
    if text.is_empty() && !result.content.is_empty() {
        let kinds: Vec<&str> = result.content.iter().map(kind_of).collect();
        let message = format!(
            "`{original}` of `{server}` answered without structured content or text (it sent {})",
            kinds.join(", ")
        );
        return Err(ToolError::new(codes::MCP_NO_TEXT_CONTENT.to_string(), message)
            .with_details(details(server, original)));
    }
    Ok(ToolOutput::new(Value::from(text.join("\n").as_str())))
}

fn text_of(block: &ContentBlock) -> Option<&str> {
    match block {
        ContentBlock::Text(text) => Some(text.text.as_str()),
        _ => None,
    }
}

fn kind_of(block: &ContentBlock) -> &'static str {
    match block {
        ContentBlock::Text(_) => "text",
        ContentBlock::Image(_) => "an image",
        ContentBlock::Audio(_) => "audio",
        ContentBlock::Resource(_) => "an embedded resource",
        ContentBlock::ResourceLink(_) => "a resource link",
        _ => "content of another kind",
    }
}

fn value_of(server: &str, original: &str, json: &serde_json::Value) -> Result<Value, ToolError> {
    parse_json(&json.to_string()).map_err(|error| {
        let message = format!(
            "the structured content `{original}` of `{server}` answered is not a Runlet value: {error:?}"
        );
        ToolError::new(codes::TOOL_OUTPUT_SCHEMA_MISMATCH.to_string(), message)
    })
}

fn details(server: &str, original: &str) -> Object {
    Object::from_pairs(vec![
        (Arc::from("server"), Value::from(server)),
        (Arc::from("tool"), Value::from(original)),
    ])
    .unwrap_or_else(|_| Object::empty())
}

/// A call the server neither answered nor reported progress on within the session's silence
/// timeout (`RL6102`): retryable, and uncertain, since the server may be at work on it.
fn silent(server: &str, original: &str, silence: u128) -> ToolError {
    let message = format!(
        "`{server}` neither answered `{original}` nor reported progress on it for {silence} ms \
         (an answer it sent may have been unreadable); the call was cancelled at the server"
    );
    ToolError::retryable(codes::TOOL_TIMEOUT.to_string(), message)
        .with_uncertain(true)
        .with_details(details(server, original))
}

/// A request that got no result: a JSON-RPC error, or a server that is gone (`sent`: the request
/// may have reached it).
async fn failure(server: &str, link: &Link, original: &str, error: ServiceError, sent: bool) -> ToolError {
    match error {
        ServiceError::McpError(error) => ToolError::new(
            codes::MCP_PROTOCOL_ERROR.to_string(),
            format!(
                "`{server}` refused `tools/call` of `{original}`: {} (JSON-RPC error {})",
                error.message, error.code.0
            ),
        )
        .with_details(details(server, original)),
        other => {
            let why = link.gone().await.unwrap_or_else(|| service_failure(&other));
            unavailable(server, original, &why, sent)
        }
    }
}

/// `RL6111`: the server is gone (`why`), retryable — the next attempt starts it again — and
/// uncertain when the request was `sent`.
fn unavailable(server: &str, original: &str, why: &str, sent: bool) -> ToolError {
    ToolError::retryable(
        codes::MCP_SERVER_UNAVAILABLE.to_string(),
        format!("the MCP server `{server}` is unavailable for `{original}`: {why}"),
    )
    .with_uncertain(sent)
    .with_details(details(server, original))
}
