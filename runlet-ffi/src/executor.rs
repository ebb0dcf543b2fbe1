//! The host tool executor: the copied `runlet_tool_executor` struct adapted to the engine's
//! `ToolExecutor`, and the `runlet_tool_call` completion token each dispatch (or recovery
//! question about an uncertain operation) hands the host.

use std::cell::RefCell;
use std::ffi::c_void;
use std::sync::Arc;

use async_trait::async_trait;
use parking_lot::ReentrantMutex;
use runlet::diag::codes;
use runlet::engine::{
    Heartbeat, Progress, RecoveryOutcome, RecoveryRequest, ToolCall, ToolCapabilities, ToolError,
    ToolExecutor, ToolOutput, w3c,
};
use runlet::value::{Value, parse_json, to_presentation_json};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::error::{
    Error, RUNLET_ERR_INVALID_ARGUMENT, RUNLET_ERR_NULL_ARGUMENT, invalid_json, runlet_error,
};
use crate::reentrancy::call_host;
use crate::run::RunTag;
use crate::strings::runlet_str;
use crate::versioned::{Versioned, copy_in};

/// A host's tool executor. Runlet copies the struct when the runtime is created.
///
/// - `invoke(user_data, call)` is called once per tool call attempt, on a Runlet worker thread,
///   possibly concurrently for different calls. It must return promptly: start the work and
///   complete `call` later from any thread, or complete it inline before returning.
/// - `drop(user_data)` (optional) is called exactly once, after the last `invoke` — also when the
///   runtime could not be created.
/// - `recover(user_data, call)` (optional) asks whether an operation whose dispatch outcome is
///   uncertain took effect (a `recoverable` tool's call left dispatching by a crash, spec §5.4).
///   `runlet_tool_call_is_recovery(call)` is true for these tokens. Answer like `invoke`, exactly
///   once, from any thread: `runlet_tool_call_complete` with its output (it took effect),
///   `runlet_tool_call_not_applied` (it did not: the call is dispatched again),
///   `runlet_tool_call_outcome_unknown` (the tool cannot tell: the call stays uncertain,
///   `RL6109`) or `runlet_tool_call_fail`. Without `recover` every such call is uncertain.
///   Added in the second version of the struct: `RUNLET_TOOL_EXECUTOR_INIT` sets the size that
///   has it; the first version's size is still accepted.
///
/// Set `struct_size` with `RUNLET_TOOL_EXECUTOR_INIT`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct runlet_tool_executor {
    pub struct_size: usize,
    pub user_data: *mut c_void,
    pub invoke: Option<unsafe extern "C" fn(user_data: *mut c_void, call: *mut runlet_tool_call)>,
    pub drop: Option<unsafe extern "C" fn(user_data: *mut c_void)>,
    pub recover: Option<unsafe extern "C" fn(user_data: *mut c_void, call: *mut runlet_tool_call)>,
}

// SAFETY: `struct_size` first; pointers and optional function pointers are valid zeroed.
unsafe impl Versioned for runlet_tool_executor {
    const NAME: &'static str = "runlet_tool_executor";
    const KNOWN_SIZES: &'static [usize] =
        &[std::mem::offset_of!(runlet_tool_executor, recover), std::mem::size_of::<runlet_tool_executor>()];
}

/// A host pointer Runlet passes back to the host's callbacks. The host's contract (stated in the
/// header) makes its callbacks safe to call from any thread.
#[derive(Debug, Clone, Copy)]
pub(crate) struct UserData(pub(crate) *mut c_void);

// SAFETY: Runlet never dereferences it; the host promises thread-safe callbacks.
unsafe impl Send for UserData {}
// SAFETY: as above.
unsafe impl Sync for UserData {}

/// The registered executor; dropping it calls the host's `drop` once.
#[derive(Debug)]
pub(crate) struct HostExecutor {
    user_data: UserData,
    invoke: HostFn,
    recover: Option<HostFn>,
    drop: Option<unsafe extern "C" fn(*mut c_void)>,
}

/// The host's `invoke` or `recover`: a function handed a token.
type HostFn = unsafe extern "C" fn(*mut c_void, *mut runlet_tool_call);

impl HostExecutor {
    /// Copies and checks the host's struct. When it is readable but invalid, its `drop` is
    /// called before the error returns.
    ///
    /// # Safety
    /// `raw` is NULL or points at a readable `runlet_tool_executor` of its `struct_size`.
    pub(crate) unsafe fn adopt(raw: *const runlet_tool_executor) -> Result<HostExecutor, Error> {
        // SAFETY: forwarded from the caller.
        let copied = unsafe { copy_in(raw) }?;
        let Some(invoke) = copied.invoke else {
            if let Some(drop) = copied.drop {
                // SAFETY: the host's own function with its own pointer, called once.
                call_host(|| unsafe { drop(copied.user_data) });
            }
            return Err(Error::new(RUNLET_ERR_NULL_ARGUMENT, "`runlet_tool_executor.invoke` is NULL"));
        };
        Ok(HostExecutor {
            user_data: UserData(copied.user_data),
            invoke,
            recover: copied.recover,
            drop: copied.drop,
        })
    }
}

impl Drop for HostExecutor {
    fn drop(&mut self) {
        if let Some(drop) = self.drop {
            let user_data = self.user_data;
            // SAFETY: the host's own function with its own pointer, called once.
            call_host(|| unsafe { drop(user_data.0) });
        }
    }
}

#[async_trait]
impl ToolExecutor for HostExecutor {
    /// `invoke` must return promptly (the header's contract), so a call the host completes
    /// inline before returning completes on the run's own task.
    fn capabilities(&self, _tool: &str) -> ToolCapabilities {
        ToolCapabilities { answers_inline: true, ..ToolCapabilities::default() }
    }

    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        match self.ask(self.invoke, Purpose::Dispatch, &call).await? {
            Answer::Output(output) => Ok(output),
            Answer::Failed(error) => Err(error),
            // Refused by `runlet_tool_call_not_applied`/`_outcome_unknown` for dispatch tokens.
            Answer::NotApplied | Answer::Unknown => Err(abandoned(&call.tool)),
        }
    }

    async fn recover(&self, request: RecoveryRequest) -> Result<RecoveryOutcome, ToolError> {
        let Some(recover) = self.recover else { return Ok(RecoveryOutcome::Unsupported) };
        Ok(match self.ask(recover, Purpose::Recover, &request.call).await? {
            Answer::Output(output) => RecoveryOutcome::Succeeded(output),
            Answer::Failed(error) => return Err(error),
            Answer::NotApplied => RecoveryOutcome::NotApplied,
            Answer::Unknown => RecoveryOutcome::Unknown,
        })
    }
}

fn abandoned(tool: &str) -> ToolError {
    ToolError::new("TOOL_CALL_ABANDONED", format!("the call to `{tool}` was never completed"))
}

impl HostExecutor {
    /// Hands a token for `call` to the host's `function` and awaits the host's answer.
    async fn ask(&self, function: HostFn, purpose: Purpose, call: &ToolCall) -> Result<Answer, ToolError> {
        let args_json = to_presentation_json(&Value::List(call.arguments.clone())).map_err(|error| {
            ToolError::new(
                error.code().to_string(),
                format!("the arguments of `{}` cannot be sent as JSON: {}", call.tool, error.message()),
            )
        })?;
        let (sender, answer) = oneshot::channel();
        let context = &call.context;
        let token = runlet_tool_call {
            tool: Arc::clone(&call.tool),
            args_json,
            run_id: context.run_id.as_str().to_owned(),
            node_id: Arc::clone(&context.node_id),
            operation_id: context.operation_id.to_string(),
            dispatch_id: context.dispatch_id.to_string(),
            traceparent: context.trace.get(w3c::TRACEPARENT).cloned().unwrap_or_default(),
            tracestate: context.trace.get(w3c::TRACESTATE).cloned().unwrap_or_default(),
            attempt: context.attempt,
            deadline_unix_ms: context
                .deadline_unix_ms()
                .map_or(-1, |ms| i64::try_from(ms).unwrap_or(i64::MAX)),
            run_tag: context
                .host_data
                .as_ref()
                .and_then(|data| data.downcast_ref::<RunTag>())
                .map_or(0, |tag| tag.0),
            purpose,
            heartbeat: context.heartbeat.clone(),
            sender,
            shared: Arc::new(CallShared {
                cancellation: context.cancellation.clone(),
                completed: CancellationToken::new(),
                on_cancel: ReentrantMutex::new(RefCell::new(None)),
                pool: tokio::runtime::Handle::current(),
            }),
        };
        self.hand_over(function, token);
        answer.await.map_err(|_| abandoned(&call.tool))
    }

    /// Gives `token` to the host's `function`; from here on the host owns it.
    fn hand_over(&self, function: HostFn, token: runlet_tool_call) {
        let raw = Box::into_raw(Box::new(token));
        let user_data = self.user_data;
        // SAFETY: the host's function with its own pointer and a token it now owns.
        call_host(|| unsafe { function(user_data.0, raw) });
    }
}

/// What a token asks the host: to run the call, or whether an uncertain one took effect.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Purpose {
    Dispatch,
    Recover,
}

/// The host's answer through a token.
#[derive(Debug)]
enum Answer {
    Output(ToolOutput),
    Failed(ToolError),
    /// A recovery answer: the operation did not take effect.
    NotApplied,
    /// A recovery answer: the tool cannot tell.
    Unknown,
}

/// The completion token of one tool call attempt (or recovery question). Owned by the host from
/// `invoke` (`recover`) until it is consumed by exactly one of `runlet_tool_call_complete`,
/// `_fail`, `_not_applied` or `_outcome_unknown`, from any thread. Completing after the run
/// ended or the runtime was freed is a safe no-op. Consuming a token twice is undefined
/// behaviour: its memory is gone after the first.
#[derive(Debug)]
pub struct runlet_tool_call {
    tool: Arc<str>,
    args_json: String,
    run_id: String,
    node_id: Arc<str>,
    operation_id: String,
    dispatch_id: String,
    traceparent: String,
    tracestate: String,
    attempt: u32,
    deadline_unix_ms: i64,
    run_tag: u64,
    purpose: Purpose,
    heartbeat: Heartbeat,
    sender: oneshot::Sender<Answer>,
    shared: Arc<CallShared>,
}

/// What a call's token shares with its cancellation watcher.
#[derive(Debug)]
struct CallShared {
    cancellation: CancellationToken,
    /// Fired when the token is consumed: the watcher stops.
    completed: CancellationToken,
    /// The host's cancellation callback. Held (re-entrantly) while it runs, so a completion on
    /// another thread waits for it and none is ever called after a completion returned.
    on_cancel: ReentrantMutex<RefCell<Option<CancelCallback>>>,
    pool: tokio::runtime::Handle,
}

#[derive(Debug, Clone, Copy)]
struct CancelCallback {
    callback: unsafe extern "C" fn(*mut c_void),
    user_data: UserData,
}

impl CallShared {
    fn fire_cancel(&self) {
        let guard = self.on_cancel.lock();
        let registered = guard.borrow_mut().take();
        if let Some(CancelCallback { callback, user_data }) = registered {
            // SAFETY: the host's function with its own pointer, called at most once.
            call_host(|| unsafe { callback(user_data.0) });
        }
    }

    fn finish(&self) {
        let guard = self.on_cancel.lock();
        guard.borrow_mut().take();
        self.completed.cancel();
    }
}

impl runlet_tool_call {
    /// Consumes the token with the call's answer; a run that already ended ignores it.
    fn answer(self, answer: Answer) {
        self.shared.finish();
        let _ = self.sender.send(answer);
    }
}

/// Borrows the token's field `field` for the accessors below.
///
/// # Safety
/// `call` is NULL or a live, unconsumed token.
unsafe fn field(
    call: *const runlet_tool_call,
    field: impl Fn(&runlet_tool_call) -> runlet_str,
) -> runlet_str {
    // SAFETY: forwarded from the caller.
    unsafe { call.as_ref() }.map_or_else(runlet_str::empty, field)
}

/// The tool's registry name, such as `crm.customer`. Borrowed until the token is consumed.
/// Empty for NULL. Thread-safety: the token's owner.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_tool_call_name(call: *const runlet_tool_call) -> runlet_str {
    // SAFETY: the caller passes NULL or a live token.
    ffi_boundary!(runlet_str, { unsafe { field(call, |c| runlet_str::of(&c.tool)) } })
}

/// The canonical argument list (spec §2.3) as presentation JSON: `f(a, b)` gives `[a, b]` and
/// `f({x: a})` gives `[{"x": a}]`. Borrowed until the token is consumed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_tool_call_args_json(call: *const runlet_tool_call) -> runlet_str {
    // SAFETY: the caller passes NULL or a live token.
    ffi_boundary!(runlet_str, { unsafe { field(call, |c| runlet_str::of(&c.args_json)) } })
}

/// The id of the run the call belongs to. Borrowed until the token is consumed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_tool_call_run_id(call: *const runlet_tool_call) -> runlet_str {
    // SAFETY: the caller passes NULL or a live token.
    ffi_boundary!(runlet_str, { unsafe { field(call, |c| runlet_str::of(&c.run_id)) } })
}

/// The public id of the call's node (spec §4.2). Borrowed until the token is consumed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_tool_call_node_id(call: *const runlet_tool_call) -> runlet_str {
    // SAFETY: the caller passes NULL or a live token.
    ffi_boundary!(runlet_str, { unsafe { field(call, |c| runlet_str::of(&c.node_id)) } })
}

/// The operation id: equal for every dispatch of one semantic operation, so tools deduplicate
/// by it. Borrowed until the token is consumed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_tool_call_operation_id(call: *const runlet_tool_call) -> runlet_str {
    // SAFETY: the caller passes NULL or a live token.
    ffi_boundary!(runlet_str, { unsafe { field(call, |c| runlet_str::of(&c.operation_id)) } })
}

/// The dispatch id: distinct for every transport attempt. Borrowed until the token is consumed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_tool_call_dispatch_id(call: *const runlet_tool_call) -> runlet_str {
    // SAFETY: the caller passes NULL or a live token.
    ffi_boundary!(runlet_str, { unsafe { field(call, |c| runlet_str::of(&c.dispatch_id)) } })
}

/// The W3C `traceparent` of the call's dispatch span (docs/tracing.md), for the host to continue
/// the run's trace in the tool's own spans or send it on (an HTTP `traceparent` header, say).
/// Empty when the process exports no traces. Borrowed until the token is consumed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_tool_call_traceparent(call: *const runlet_tool_call) -> runlet_str {
    // SAFETY: the caller passes NULL or a live token.
    ffi_boundary!(runlet_str, { unsafe { field(call, |c| runlet_str::of(&c.traceparent)) } })
}

/// The W3C `tracestate` that goes with `runlet_tool_call_traceparent`; usually empty. Borrowed
/// until the token is consumed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_tool_call_tracestate(call: *const runlet_tool_call) -> runlet_str {
    // SAFETY: the caller passes NULL or a live token.
    ffi_boundary!(runlet_str, { unsafe { field(call, |c| runlet_str::of(&c.tracestate)) } })
}

/// The attempt of the innermost `boundary` around the call, from 1 (0 outside any boundary, and
/// for NULL).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_tool_call_attempt(call: *const runlet_tool_call) -> u32 {
    // SAFETY: the caller passes NULL or a live token.
    ffi_boundary!(u32, { unsafe { call.as_ref() }.map_or(0, |c| c.attempt) })
}

/// The `host_tag` of the run options the call's run was started or resumed with; 0 when they
/// gave none (and for NULL).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_tool_call_run_tag(call: *const runlet_tool_call) -> u64 {
    // SAFETY: the caller passes NULL or a live token.
    ffi_boundary!(u64, { unsafe { call.as_ref() }.map_or(0, |c| c.run_tag) })
}

/// When Runlet gives up on the call, in milliseconds since the Unix epoch; -1 when the call has
/// no deadline (or for NULL).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_tool_call_deadline_unix_ms(call: *const runlet_tool_call) -> i64 {
    // SAFETY: the caller passes NULL or a live token.
    ffi_boundary!(i64, { unsafe { call.as_ref() }.map_or(-1, |c| c.deadline_unix_ms) })
}

/// Registers `callback(user_data)` to run once if the call is cancelled (a dropped branch, a
/// retried boundary, a cancelled or finished run). It runs on a Runlet thread — or at once on
/// the calling thread if the call is already cancelled (so also after the runtime was freed;
/// hold no lock the callback takes while registering) — and never after the token's completion
/// returned; a
/// completion from another thread waits for a running callback. `callback` may complete the
/// call itself. One registration per token. Does not consume the token.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_tool_call_on_cancel(
    call: *mut runlet_tool_call,
    callback: Option<unsafe extern "C" fn(user_data: *mut c_void)>,
    user_data: *mut c_void,
) -> *mut runlet_error {
    ffi_boundary!(Result<(), Error>, {
        // SAFETY: the caller passes NULL or a live token.
        let call = unsafe { call.as_ref() }
            .ok_or_else(|| Error::new(RUNLET_ERR_NULL_ARGUMENT, "the `runlet_tool_call` is NULL"))?;
        let callback = callback.ok_or_else(|| Error::new(RUNLET_ERR_NULL_ARGUMENT, "`callback` is NULL"))?;
        {
            let guard = call.shared.on_cancel.lock();
            let mut slot = guard.borrow_mut();
            if slot.is_some() {
                return Err(Error::new(RUNLET_ERR_INVALID_ARGUMENT, "a cancellation callback is already registered"));
            }
            *slot = Some(CancelCallback { callback, user_data: UserData(user_data) });
        }
        let shared = Arc::clone(&call.shared);
        if shared.cancellation.is_cancelled() {
            // At once, on this thread: the runtime's threads may be gone already (it was freed).
            // The callback may complete the call, which frees the token: only `shared`, held
            // here, is used from now on.
            shared.fire_cancel();
            return Ok(());
        }
        call.shared.pool.spawn(async move {
            tokio::select! {
                _ = shared.cancellation.cancelled() => shared.fire_cancel(),
                _ = shared.completed.cancelled() => {}
            }
        });
        Ok(())
    })
}

/// Reports how far the call is: `progress` so far, of `total` when the tool knows it (pass a
/// negative `total` or NaN when it does not), with an optional `message` (an empty view for
/// none; at most 512 bytes are kept). The run journals it as a `CallHeartbeat` event, which
/// event listeners and `runlet_run_next_event` deliver; reports that come faster than the run
/// commits coalesce, the latest kept. Does not consume the token; call it from any thread
/// until the token is consumed. Returns NULL, or an error for a NULL token, a `progress` that
/// is not a finite number or a `message` that is not UTF-8. A report after the run ended is
/// ignored.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_tool_call_report_progress(
    call: *const runlet_tool_call,
    progress: f64,
    total: f64,
    message: runlet_str,
) -> *mut runlet_error {
    ffi_boundary!(Result<(), Error>, {
        // SAFETY: the caller passes NULL or a live token.
        let call = unsafe { call.as_ref() }
            .ok_or_else(|| Error::new(RUNLET_ERR_NULL_ARGUMENT, "the `runlet_tool_call` is NULL"))?;
        // SAFETY: the caller passes a valid view.
        let message = unsafe { message.to_str("message") }?;
        let total = (total >= 0.0).then_some(total);
        let report = Progress::new(progress, total, (!message.is_empty()).then_some(message)).ok_or_else(|| {
            Error::new(RUNLET_ERR_INVALID_ARGUMENT, format!("`progress` ({progress}) and `total` must be finite numbers"))
        })?;
        call.heartbeat.report(report);
        Ok(())
    })
}

/// Completes the call with its result as JSON and consumes the token, on every path. Call it
/// exactly once per token, from any thread, inline in `invoke` or later. Returns NULL when the
/// result was accepted; when it is not valid UTF-8 JSON the call fails with that error instead
/// and a copy is returned for the host to free. A run that already ended ignores the result.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_tool_call_complete(
    call: *mut runlet_tool_call,
    result_json: runlet_str,
) -> *mut runlet_error {
    ffi_boundary!(Result<(), Error>, {
        // SAFETY: the caller passes NULL or a live token, consumed here once.
        let call = unsafe { crate::handle::take(call) }
            .ok_or_else(|| Error::new(RUNLET_ERR_NULL_ARGUMENT, "the `runlet_tool_call` is NULL"))?;
        // SAFETY: the caller passes a valid view.
        let parsed = unsafe { result_json.to_str("result_json") }
            .and_then(|text| parse_json(text).map_err(|error| invalid_json("result_json", &error)));
        match parsed {
            Ok(value) => {
                call.answer(Answer::Output(ToolOutput::new(value)));
                Ok(())
            }
            Err(error) => {
                let failure = ToolError::new(
                    codes::INVALID_HOST_JSON.to_string(),
                    format!("the result of `{}` is unusable: {}", call.tool, error.message()),
                );
                call.answer(Answer::Failed(failure));
                Err(error)
            }
        }
    })
}

/// Fails the call with `err` (built with `runlet_error_new_tool` or `runlet_error_new`) and
/// consumes both the token and `err`, on every path. Call it exactly once per token, from any
/// thread. A NULL `err` fails the call with a generic `TOOL_FAILED`. A run that already ended
/// ignores it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_tool_call_fail(call: *mut runlet_tool_call, err: *mut runlet_error) {
    ffi_boundary!((), {
        // SAFETY: the caller hands over `err` (NULL or live) and the token (NULL or live).
        let (call, err) = unsafe { (crate::handle::take(call), runlet_error::from_raw(err)) };
        if let Some(call) = call {
            let error = err.map_or_else(
                || ToolError::new("TOOL_FAILED", format!("the host failed the call to `{}`", call.tool)),
                |err| err.to_tool_error(&call.tool),
            );
            call.answer(Answer::Failed(error));
        }
    })
}

/// Whether `call` is a recovery question (handed to `recover`) rather than a dispatch (handed
/// to `invoke`). False for NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_tool_call_is_recovery(call: *const runlet_tool_call) -> bool {
    // SAFETY: the caller passes NULL or a live token.
    ffi_boundary!(bool, { unsafe { call.as_ref() }.is_some_and(|c| c.purpose == Purpose::Recover) })
}

/// Answers a recovery question: the operation did not take effect, so the call is dispatched
/// again under the same operation id. Consumes the token on every path. A dispatch token is
/// refused: its call fails with `RUNLET_ERR_INVALID_ARGUMENT`'s name, and a copy of that error
/// is returned for the host to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_tool_call_not_applied(call: *mut runlet_tool_call) -> *mut runlet_error {
    // SAFETY: forwarded from the caller.
    ffi_boundary!(Result<(), Error>, { unsafe { recovery_answer(call, Answer::NotApplied, "runlet_tool_call_not_applied") } })
}

/// Answers a recovery question: the tool cannot tell whether the operation took effect, so the
/// call stays uncertain (the run fails with `RL6109` until the host resolves it). Consumes the
/// token on every path; a dispatch token is refused as by `runlet_tool_call_not_applied`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_tool_call_outcome_unknown(call: *mut runlet_tool_call) -> *mut runlet_error {
    // SAFETY: forwarded from the caller.
    ffi_boundary!(Result<(), Error>, { unsafe { recovery_answer(call, Answer::Unknown, "runlet_tool_call_outcome_unknown") } })
}

/// Consumes `call` with a recovery-only `answer`; a dispatch token fails its call instead.
///
/// # Safety
/// `call` is NULL or a live token, consumed here once.
unsafe fn recovery_answer(call: *mut runlet_tool_call, answer: Answer, function: &str) -> Result<(), Error> {
    // SAFETY: forwarded from the caller.
    let call = unsafe { crate::handle::take(call) }
        .ok_or_else(|| Error::new(RUNLET_ERR_NULL_ARGUMENT, "the `runlet_tool_call` is NULL"))?;
    if call.purpose == Purpose::Recover {
        call.answer(answer);
        return Ok(());
    }
    let error = Error::new(
        RUNLET_ERR_INVALID_ARGUMENT,
        format!("`{function}` answers recovery questions; the call to `{}` is a dispatch", call.tool),
    );
    let failure = error.to_tool_error(&call.tool);
    call.answer(Answer::Failed(failure));
    Err(error)
}
