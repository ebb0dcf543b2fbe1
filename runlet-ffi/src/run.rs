//! The `runlet_run` handle: a started run whose events are forwarded to the listener and the
//! pull queue, cancellable from any thread, awaited with a timeout, and read back as status and
//! result JSON.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use runlet::analyze::Inputs;
use runlet::engine::{FailureClass, HostData, Limits, Outcome, w3c};
use runlet::journal::{JournalError, JournalErrorKind, RunId};
use runlet::observe::ViewPolicy;
use runlet::observe::{RunObserver, Subscription};
use runlet::runtime::{RunCanceller, RunHandle, RunOptions};
use runlet::value::to_presentation_json;

use crate::boundary::Poison;
use crate::error::{
    Error, RUNLET_ERR_CANCELLED, RUNLET_ERR_INVALID_ARGUMENT, RUNLET_ERR_JOURNAL, RUNLET_ERR_LIMIT,
    RUNLET_ERR_NOT_FINISHED, RUNLET_ERR_PANIC, RUNLET_ERR_SCRIPT, RUNLET_ERR_TIMEOUT, RUNLET_ERR_TOOL_FAILED,
    RUNLET_ERR_UNSUPPORTED, inputs_error, limits_error, runlet_error,
};
use crate::events::{EventQueue, ListenerSink, OwnedEvent, Popped, runlet_event_owned};
use crate::handle::{Handle, borrow, into_raw, out_param, take};
use crate::program::runlet_program;
use crate::ready::{Readiness, runlet_ready_queue};
use crate::recovery::{buffer_out, recovery_error};
use crate::reentrancy::refuse_blocking;
use crate::runtime::runlet_runtime;
use crate::strings::{runlet_buf, runlet_str};
use crate::versioned::{Versioned, copy_in};

/// Where a run is: one of the `RUNLET_RUN_*` values (0 for a NULL or poisoned handle).
pub type runlet_run_state = u32;

/// The run has not ended yet; `runlet_run_result_json` returns `RUNLET_ERR_NOT_FINISHED`.
pub const RUNLET_RUN_RUNNING: runlet_run_state = 1;
/// The program ended with a value; `runlet_run_result_json` returns it as JSON (or
/// `RUNLET_ERR_UNSUPPORTED` when the value has no JSON form).
pub const RUNLET_RUN_SUCCEEDED: runlet_run_state = 2;
/// The program or a tool failed, or the journal did (the result error says which).
pub const RUNLET_RUN_FAILED: runlet_run_state = 3;
/// The run was cancelled before it ended (`runlet_run_cancel`, freeing the runtime, or a
/// resumed run whose journal records its cancellation); `runlet_run_result_json` returns
/// `RUNLET_ERR_CANCELLED`.
pub const RUNLET_RUN_CANCELLED: runlet_run_state = 4;

/// Per-run options. Initialize with `RUNLET_RUN_OPTIONS_INIT`; NULL means the defaults.
///
/// - `limits_json`: caps for this run replacing the runtime's (the same JSON object as
///   `runlet_runtime_options.limits_json`); a run's own `concurrency` caps its calls in flight
///   under the runtime-wide cap. Empty for none.
/// - `pull_events`: queue the run's events for `runlet_run_next_event` (bounded by the
///   runtime's `event_queue_capacity`, with `RUNLET_EVENT_EVENTS_DROPPED` markers; the run's
///   journaled end is never dropped).
/// - `traceparent`, `tracestate`: the W3C trace context of the host's span a new run's trace
///   continues (docs/tracing.md); empty for none. An invalid `traceparent` fails the start
///   with `RUNLET_ERR_INVALID_ARGUMENT` (RL8107). A resume ignores them: a run's sessions join
///   the trace it was started in.
/// - `host_tag`: a number of the host's that every tool call of the run carries
///   (`runlet_tool_call_run_tag`), from the first on — the key of a request's context, say,
///   which a map by run id would not have yet for calls dispatched before the start returned.
///   0 for none; never journaled, so a resume gives it again.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct runlet_run_options {
    pub struct_size: usize,
    pub limits_json: runlet_str,
    pub pull_events: bool,
    pub traceparent: runlet_str,
    pub tracestate: runlet_str,
    pub host_tag: u64,
}

// SAFETY: `struct_size` first; views, a bool and an integer are valid zeroed.
unsafe impl Versioned for runlet_run_options {
    const NAME: &'static str = "runlet_run_options";
    const KNOWN_SIZES: &'static [usize] = &[
        std::mem::offset_of!(runlet_run_options, traceparent),
        std::mem::offset_of!(runlet_run_options, host_tag),
        std::mem::size_of::<runlet_run_options>(),
    ];
}

/// The host's tag of a run, as its calls carry it in their host data.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RunTag(pub(crate) u64);

/// How a run ended: its status and its result JSON or error.
#[derive(Debug)]
struct Finished {
    status: runlet_run_state,
    result: Result<String, Error>,
}

impl Finished {
    fn from_outcome(outcome: Result<Outcome, JournalError>) -> Finished {
        match outcome {
            Ok(Outcome::Succeeded(value)) => Finished {
                status: RUNLET_RUN_SUCCEEDED,
                result: to_presentation_json(value.value()).map_err(|error| {
                    Error::new(
                        RUNLET_ERR_UNSUPPORTED,
                        format!("the run's result has no JSON form: {}", error.message()),
                    )
                }),
            },
            Ok(Outcome::Failed(error)) => {
                let code = match error.class {
                    FailureClass::Limit => RUNLET_ERR_LIMIT,
                    FailureClass::Tool | FailureClass::Cancelled | FailureClass::Uncertain => {
                        RUNLET_ERR_TOOL_FAILED
                    }
                    FailureClass::Compute => RUNLET_ERR_SCRIPT,
                };
                let record = to_presentation_json(&error.to_value()).unwrap_or_default();
                Finished {
                    status: RUNLET_RUN_FAILED,
                    result: Err(Error::new(code, format!("{}: {}", error.code, error.message))
                        .with_details_json(record)),
                }
            }
            Ok(Outcome::Cancelled) => Finished {
                status: RUNLET_RUN_CANCELLED,
                result: Err(Error::new(RUNLET_ERR_CANCELLED, "the run was cancelled")),
            },
            Err(error) if error.kind == JournalErrorKind::RunPanicked => Finished {
                status: RUNLET_RUN_FAILED,
                result: Err(Error::new(RUNLET_ERR_PANIC, format!("{}: {error}", error.code()))),
            },
            Err(error) => Finished {
                status: RUNLET_RUN_FAILED,
                result: Err(Error::new(
                    RUNLET_ERR_JOURNAL,
                    format!("the journal failed ({}): {error}", error.code()),
                )),
            },
        }
    }
}

/// What a run's handle shares with the task forwarding its events.
#[derive(Debug)]
pub(crate) struct RunState {
    run_id: Arc<str>,
    cancel: RunCanceller,
    finished: Mutex<Option<Finished>>,
    done: Condvar,
    /// The pull API's queue, when the run was started with `pull_events`.
    pull: Option<EventQueue>,
    /// The run's graph, for snapshots under `view`.
    observer: RunObserver,
    view: Arc<ViewPolicy>,
    poison: Arc<Poison>,
    /// The ready queue the host hears from this run through (`runlet_run_set_ready_queue`).
    ready: OnceLock<Readiness>,
}

impl RunState {
    fn finish(&self, finished: Finished) {
        *self.finished.lock() = Some(finished);
        self.done.notify_all();
        self.changed();
    }

    /// Tells the run's ready queue, if it has one, that the run changed.
    fn changed(&self) {
        if let Some(ready) = self.ready.get() {
            ready.notify();
        }
    }
}

/// A started run. Control functions (`cancel`, `status`, `wait`, `next_event`) are safe from any
/// thread concurrently; `runlet_run_free` must not race them.
#[derive(Debug)]
pub struct runlet_run {
    state: Arc<RunState>,
}

impl Handle for runlet_run {
    const NAME: &'static str = "runlet_run";
    fn poison(&self) -> &Arc<Poison> {
        &self.state.poison
    }
}

/// Who receives a run's events: the listener, and the subscription that feeds it and the pull
/// queue (none when neither takes events).
struct Consumers {
    listener: Option<ListenerSink>,
    events: Option<Subscription>,
}

impl Consumers {
    /// The consumers of the run `handle` follows. Subscribed here, as the run is wrapped, so
    /// its live events reach them from the run's start: catching up from the journal later
    /// would find nothing of a run an in-memory journal had forgotten meanwhile.
    fn of(handle: &RunHandle, listener: Option<ListenerSink>, pulled: bool, view: &ViewPolicy) -> Consumers {
        let events = (listener.is_some() || pulled).then(|| {
            let wants = listener.clone();
            let wanted = move |kind: u16| pulled || wants.as_ref().is_some_and(|l| l.wants(u32::from(kind)));
            handle.observer().subscribe(0, view.clone()).only_kinds(wanted)
        });
        Consumers { listener, events }
    }
}

/// Forwards the run's published events (its observer's subscription: the stream `runlet run
/// --events` writes, on the observer's clock) to the listener and the pull queue, then records
/// the outcome. Attached to the run, so freeing the runtime waits for it.
async fn forward(handle: RunHandle, state: Arc<RunState>, consumers: Consumers) {
    let Consumers { listener, events } = consumers;
    if let Some(mut events) = events {
        // A failure to read the journal back while catching up ends the stream early; the run's
        // outcome still comes.
        while let Some(Ok(public)) = events.next().await {
            let kind = u32::from(public.kind_number);
            let owned = Arc::new(OwnedEvent::published(&state.run_id, public));
            if let Some(listener) = listener.as_ref().filter(|l| l.wants(kind)) {
                listener.queue().push(Arc::clone(&owned));
            }
            if let Some(pull) = &state.pull
                && pull.push(owned)
            {
                state.changed();
            }
        }
    }
    let outcome = handle.outcome().await;
    if let Some(listener) = &listener {
        listener.queue().end_run(&state.run_id);
    }
    if let Some(pull) = &state.pull {
        pull.end_run(&state.run_id);
        pull.close();
    }
    state.finish(Finished::from_outcome(outcome));
}

/// The run options at `options`, or the defaults for NULL: the run's limits and trace context,
/// and whether to queue its events for the pull API.
///
/// # Safety
/// `options` is NULL or points at a readable options struct whose views are valid.
pub(crate) unsafe fn read_run_options(
    options: *const runlet_run_options,
) -> Result<(RunOptions, bool), Error> {
    if options.is_null() {
        return Ok((RunOptions::default(), false));
    }
    // SAFETY: the caller passes a readable options struct with valid views.
    let options = unsafe { copy_in(options) }?;
    // SAFETY: as above.
    let limits = Limits::from_json(unsafe { options.limits_json.to_str("limits_json") }?)
        .map_err(|error| limits_error("limits_json", error))?;
    let mut trace = BTreeMap::new();
    // SAFETY: as above.
    let entries = unsafe {
        [
            (w3c::TRACEPARENT, options.traceparent.to_str("traceparent")?),
            (w3c::TRACESTATE, options.tracestate.to_str("tracestate")?),
        ]
    };
    for (key, value) in entries {
        if !value.is_empty() {
            trace.insert(key.to_owned(), value.to_owned());
        }
    }
    let host_data = (options.host_tag != 0).then(|| Arc::new(RunTag(options.host_tag)) as HostData);
    Ok((RunOptions { limits, trace, host_data }, options.pull_events))
}

/// Wraps a started or resumed run: its events are forwarded to the listener (and the pull
/// queue when `pull_events`) on the runtime's pool until it ends, and it is shown live on the
/// runtime's page servers when its program's `source` is at hand (else from the journal).
pub(crate) fn launched(
    runtime: &runlet_runtime,
    handle: RunHandle,
    pull_events: bool,
    source: Option<&str>,
) -> runlet_run {
    let instance = runtime.instance();
    if let Some(source) = source {
        instance.pages().show(&handle.observer(), source);
    }
    let state = Arc::new(RunState {
        run_id: Arc::from(handle.run_id().as_str()),
        cancel: handle.canceller(),
        finished: Mutex::new(None),
        done: Condvar::new(),
        pull: pull_events.then(|| EventQueue::new(instance.event_capacity())),
        observer: handle.observer(),
        view: Arc::clone(instance.view()),
        poison: Arc::default(),
        ready: OnceLock::new(),
    });
    let consumers = Consumers::of(&handle, instance.listener().cloned(), pull_events, instance.view());
    instance.engine().spawn_attached(forward(handle, Arc::clone(&state), consumers));
    runlet_run { state }
}

/// Starts a run of `program` with `input_json` (a JSON object of host input values, or empty for
/// none) and stores its handle in `*out` (NULL on failure). Never blocks: the run proceeds on the
/// runtime's threads. The program must come from the same runtime. Inputs that are missing or do
/// not match their schemas give `RUNLET_ERR_INVALID_ARGUMENT`.
///
/// Thread-safety: any thread, concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_run_start(
    runtime: *const runlet_runtime,
    program: *const runlet_program,
    input_json: runlet_str,
    options: *const runlet_run_options,
    out: *mut *mut runlet_run,
) -> *mut runlet_error {
    ffi_boundary!(Result<(), Error>, {
        // SAFETY: the caller passes a writable out-pointer, live handles and valid views.
        let (out, runtime, program, input_text, (run_options, pull_events)) = unsafe {
            (
                out_param(out)?,
                borrow(runtime)?,
                borrow(program)?,
                input_json.to_str("input_json")?,
                read_run_options(options)?,
            )
        };
        let inputs = Inputs::from_json(input_text, runtime.instance().engine().registry())
            .map_err(|error| inputs_error("input_json", error))?;
        let handle = runtime
            .instance()
            .engine()
            .start_with(program.executable(), &inputs, run_options)
            .map_err(|error| Error::new(RUNLET_ERR_INVALID_ARGUMENT, error.to_string()))?;
        *out = into_raw(launched(runtime, handle, pull_events, Some(program.executable().source())));
        Ok(())
    })
}

/// Resumes the interrupted run `run_id` of `program` from the runtime's journal and stores its
/// handle in `*out` (NULL on failure): the journal is replayed, finished calls are not
/// dispatched again, and calls left in flight are redispatched or reported uncertain by their
/// execution class (spec §5.4). A finished run resumes to its recorded end.
///
/// The journal's header must pin what this runtime runs: the same source, registry,
/// configuration, limits (`options->limits_json` for a run started with its own) and digest key
/// id, or the call fails with `RUNLET_ERR_VERSION_MISMATCH`; an unknown run is
/// `RUNLET_ERR_JOURNAL_UNKNOWN_RUN`. The run must not be running elsewhere: a SQLite journal
/// refuses the run's claim while another live process of this machine owns it, a PostgreSQL
/// journal while another process's lease on it holds, and the resumed run then ends with a
/// journal error whose code is `RL7010`. A run this runtime is driving is refused at once
/// (`RUNLET_ERR_JOURNAL`, `RL7010`) until it ends. Blocks while the journal is read;
/// refused from a callback.
///
/// Thread-safety: any thread but a callback's, concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_run_resume(
    runtime: *const runlet_runtime,
    program: *const runlet_program,
    run_id: runlet_str,
    options: *const runlet_run_options,
    out: *mut *mut runlet_run,
) -> *mut runlet_error {
    ffi_boundary!(Result<(), Error>, {
        // SAFETY: the caller passes a writable out-pointer, live handles and valid views.
        let (out, runtime, program, run_id, (run_options, pull_events)) = unsafe {
            (out_param(out)?, borrow(runtime)?, borrow(program)?, run_id.to_str("run_id")?, read_run_options(options)?)
        };
        refuse_blocking("runlet_run_resume")?;
        let engine = runtime.instance().engine();
        let recovery = engine
            .recovery(program.executable(), &RunId::new(run_id), run_options)
            .map_err(|error| recovery_error(&error))?;
        *out = into_raw(launched(runtime, recovery.resume(), pull_events, Some(program.executable().source())));
        Ok(())
    })
}

/// The run's id. Borrowed: valid until `runlet_run_free(run)`. Empty for NULL.
///
/// Thread-safety: any thread, concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_run_id(run: *const runlet_run) -> runlet_str {
    ffi_boundary!(runlet_str, {
        // SAFETY: the caller passes NULL or a live handle.
        unsafe { borrow(run) }.map_or_else(|_| runlet_str::empty(), |run| runlet_str::of(&run.state.run_id))
    })
}

/// Requests cancellation of the run. Idempotent, never blocks, callable from any thread and
/// from inside callbacks. The run then ends as cancelled unless it already ended.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_run_cancel(run: *const runlet_run) -> *mut runlet_error {
    ffi_boundary!(Result<(), Error>, {
        // SAFETY: the caller passes NULL or a live handle.
        unsafe { borrow(run) }?.state.cancel.cancel();
        Ok(())
    })
}

/// The run's status now; never blocks. 0 for a NULL or poisoned handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_run_status(run: *const runlet_run) -> runlet_run_state {
    ffi_boundary!(runlet_run_state, {
        // SAFETY: the caller passes NULL or a live handle.
        unsafe { borrow(run) }.map_or(0, |run| {
            run.state.finished.lock().as_ref().map_or(RUNLET_RUN_RUNNING, |finished| finished.status)
        })
    })
}

/// A call's `timeout_ms` as a wait: `None` (no limit) for a negative one.
pub(crate) fn timeout(timeout_ms: i64) -> Option<Duration> {
    u64::try_from(timeout_ms).ok().map(Duration::from_millis)
}

/// Waits until the run has ended, up to `timeout_ms` milliseconds (negative: no limit; 0: just
/// check). Returns NULL once it ended (whatever the outcome), `RUNLET_ERR_TIMEOUT` if it has
/// not. A waiting call (`timeout_ms` ≠ 0) from inside a Runlet callback is refused with
/// `RUNLET_ERR_INVALID_ARGUMENT`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_run_wait(run: *const runlet_run, timeout_ms: i64) -> *mut runlet_error {
    ffi_boundary!(Result<(), Error>, {
        // SAFETY: the caller passes NULL or a live handle.
        let state = &unsafe { borrow(run) }?.state;
        if timeout_ms != 0 {
            refuse_blocking("runlet_run_wait")?;
        }
        let deadline = timeout(timeout_ms).map(|t| Instant::now() + t);
        let mut finished = state.finished.lock();
        while finished.is_none() {
            match deadline {
                None => state.done.wait(&mut finished),
                Some(deadline) => {
                    if state.done.wait_until(&mut finished, deadline).timed_out() {
                        break;
                    }
                }
            }
        }
        match *finished {
            Some(_) => Ok(()),
            None => Err(Error::new(RUNLET_ERR_TIMEOUT, format!("the run did not end within {timeout_ms} ms"))),
        }
    })
}

/// The result of a run that succeeded, as canonical presentation JSON (spec §3.3), in a buffer
/// the host frees with `runlet_buf_free` (`*out` is zeroed on failure). For a run that ended
/// otherwise it returns the run's error: `RUNLET_ERR_SCRIPT`, `RUNLET_ERR_TOOL_FAILED` or
/// `RUNLET_ERR_LIMIT` with the error record as details (its `code` is the tool's own, or the
/// limit's `RL4xxx` with the limit named in its details), `RUNLET_ERR_CANCELLED`, or
/// `RUNLET_ERR_JOURNAL`, or `RUNLET_ERR_PANIC` when the run's task panicked (`RL7307`; the run
/// stopped as of its last commit and can be resumed); `RUNLET_ERR_NOT_FINISHED` while it runs.
/// Never blocks.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_run_result_json(
    run: *const runlet_run,
    out: *mut runlet_buf,
) -> *mut runlet_error {
    ffi_boundary!(Result<(), Error>, {
        // SAFETY: the caller passes NULL or a writable buffer.
        let out = unsafe { buffer_out(out) }?;
        // SAFETY: the caller passes NULL or a live handle.
        let state = &unsafe { borrow(run) }?.state;
        let finished = state.finished.lock();
        let finished = finished
            .as_ref()
            .ok_or_else(|| Error::new(RUNLET_ERR_NOT_FINISHED, "the run has not finished"))?;
        let json = finished.result.clone()?;
        *out = runlet_buf::from_vec(json.into_bytes());
        Ok(())
    })
}

/// Takes the run's next event from its pull queue (the run must be started with
/// `pull_events`), waiting up to `timeout_ms` (negative: no limit; 0: just check). Stores an
/// event the host frees with `runlet_event_owned_free` in `*out`, or NULL with a NULL return
/// once the run ended and every event was taken. `RUNLET_ERR_TIMEOUT` when none arrived in
/// time. A waiting call from inside a Runlet callback is refused with
/// `RUNLET_ERR_INVALID_ARGUMENT`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_run_next_event(
    run: *const runlet_run,
    timeout_ms: i64,
    out: *mut *mut runlet_event_owned,
) -> *mut runlet_error {
    ffi_boundary!(Result<(), Error>, {
        // SAFETY: the caller passes a writable out-pointer and NULL or a live handle.
        let (out, run) = unsafe { (out_param(out)?, borrow(run)?) };
        if timeout_ms != 0 {
            refuse_blocking("runlet_run_next_event")?;
        }
        let pull = run.state.pull.as_ref().ok_or_else(|| {
            Error::new(RUNLET_ERR_INVALID_ARGUMENT, "the run was started without `pull_events`")
        })?;
        match pull.pop(timeout(timeout_ms)) {
            Popped::Event(event) => *out = into_raw(runlet_event_owned::new(event)),
            Popped::Closed => {}
            Popped::TimedOut => {
                return Err(Error::new(RUNLET_ERR_TIMEOUT, format!("no event within {timeout_ms} ms")));
            }
        }
        Ok(())
    })
}

/// The graph of the run as of its last published event — the JSON `runlet graph` prints (nodes
/// with their §4.4 states, edges, loops folded into iteration ranges, the run's state) — with
/// values and value-derived metadata redacted under the runtime's `view` policy, in a buffer
/// the host frees with `runlet_buf_free` (`*out` is zeroed on failure). Never blocks; callable
/// while the run goes on and after it ended.
///
/// Thread-safety: any thread, concurrently, also from callbacks.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_run_snapshot_json(
    run: *const runlet_run,
    out: *mut runlet_buf,
) -> *mut runlet_error {
    ffi_boundary!(Result<(), Error>, {
        // SAFETY: the caller passes NULL or a writable buffer, and NULL or a live handle.
        let (out, run) = unsafe { (buffer_out(out)?, borrow(run)?) };
        let snapshot = run.state.observer.snapshot(&run.state.view);
        *out = runlet_buf::from_vec(graph_json(&snapshot)?);
        Ok(())
    })
}

/// The JSON of a graph snapshot.
pub(crate) fn graph_json(snapshot: &runlet::observe::GraphSnapshot) -> Result<Vec<u8>, Error> {
    serde_json::to_vec(snapshot).map_err(|error| {
        Error::new(crate::error::RUNLET_ERR_INTERNAL, format!("the graph does not serialize: {error}"))
    })
}

/// Makes the run put `token` in `queue` when something changes for it: an event is queued for
/// `runlet_run_next_event` while none was, or it ends (`runlet_ready_queue` tells the rest).
/// The token is queued once at once, for what happened before the call. One queue per run, set
/// once: a second call gives `RUNLET_ERR_INVALID_ARGUMENT`. The run keeps the queue alive.
/// Once `runlet_run_free(run)` returns, its token is never given out again (one taken before
/// may still be in the host's hands), so a token may name the run's handle.
///
/// Thread-safety: any thread, concurrently; also from callbacks.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_run_set_ready_queue(
    run: *const runlet_run,
    queue: *const runlet_ready_queue,
    token: u64,
) -> *mut runlet_error {
    ffi_boundary!(Result<(), Error>, {
        // SAFETY: the caller passes NULL or live handles.
        let (run, queue) = unsafe { (borrow(run)?, borrow(queue)?) };
        run.state.ready.set(queue.readiness(token)).map_err(|_| {
            Error::new(RUNLET_ERR_INVALID_ARGUMENT, "the run already has a ready queue")
        })?;
        run.state.changed();
        Ok(())
    })
}

/// Frees the run's handle. NULL is a no-op; free at most once, not concurrently with other calls
/// on it. An unfinished run is cancelled and detached: its tool calls' cancellation callbacks
/// and the listener may still see it until it ends.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_run_free(run: *mut runlet_run) {
    ffi_boundary!((), {
        // SAFETY: the caller passes NULL or a live handle, freed once.
        if let Some(run) = unsafe { take(run) } {
            if let Some(ready) = run.state.ready.get() {
                ready.disarm();
            }
            run.state.cancel.cancel();
        }
    })
}

#[cfg(test)]
mod tests {
    use runlet::journal::JournalError;

    use super::*;

    /// A run whose task panicked did not fail in its journal: C hosts get `RUNLET_ERR_PANIC`,
    /// with the code and the panic in the message; a store's failure stays `RUNLET_ERR_JOURNAL`.
    #[test]
    fn a_panicked_run_is_reported_as_a_panic_and_a_store_failure_as_the_journals() {
        let outcome = |kind, message: &str| {
            let finished = Finished::from_outcome(Err(JournalError::new(kind, message)));
            let error = finished.result.expect_err("an error");
            (finished.status, error.code(), error.message().to_owned())
        };
        let (status, code, message) =
            outcome(JournalErrorKind::RunPanicked, "run `r` stopped: its task panicked (a bug)");
        assert_eq!((status, code), (RUNLET_RUN_FAILED, RUNLET_ERR_PANIC));
        assert_eq!(message, "RL7307: run `r` stopped: its task panicked (a bug)");
        let (status, code, message) = outcome(JournalErrorKind::Storage, "disk full");
        assert_eq!((status, code), (RUNLET_RUN_FAILED, RUNLET_ERR_JOURNAL));
        assert_eq!(message, "the journal failed (RL7005): disk full");
    }
}
