//! Host decisions about an interrupted run (spec §5.4), each one call wrapping the core's
//! `Runtime::recovery`: list the operations left uncertain, resolve one (applied with an output,
//! not applied, failed with an error), authorize a fresh generation, or cancel the run; each
//! decision journaled.

use std::str::FromStr;

use runlet::diag::codes;
use runlet::engine::{OperationId, Resolution};
use runlet::journal::RunId;
use runlet::runtime::{Recovery, RecoveryError};
use runlet::value::parse_json;

use crate::error::{
    Error, RUNLET_ERR_INVALID_ARGUMENT, RUNLET_ERR_JOURNAL, RUNLET_ERR_JOURNAL_UNKNOWN_RUN,
    RUNLET_ERR_NULL_ARGUMENT, RUNLET_ERR_VERSION_MISMATCH, invalid_json, runlet_error,
};
use crate::handle::borrow;
use crate::program::runlet_program;
use crate::reentrancy::refuse_blocking;
use crate::run::{read_run_options, runlet_run_options};
use crate::runtime::runlet_runtime;
use crate::strings::{runlet_buf, runlet_str};

/// The C error for a run that could not be recovered or a decision the core refused: unknown
/// runs and journal failures keep their journal codes; a header pinning another program,
/// configuration or digest key, or written by a runtime this one cannot replay, is
/// `RUNLET_ERR_VERSION_MISMATCH`; a refused decision (or one about a run that has ended)
/// `RUNLET_ERR_INVALID_ARGUMENT`. The message carries the core's `RLnnnn` code.
pub(crate) fn recovery_error(error: &RecoveryError) -> Error {
    let code = match error {
        RecoveryError::Journal(journal) if journal.code() == codes::JOURNAL_UNKNOWN_RUN => {
            RUNLET_ERR_JOURNAL_UNKNOWN_RUN
        }
        RecoveryError::Journal(_) | RecoveryError::Decode(_) | RecoveryError::Replay(_) => RUNLET_ERR_JOURNAL,
        RecoveryError::PinMismatch { .. } | RecoveryError::ReplayIncompatible { .. } => {
            RUNLET_ERR_VERSION_MISMATCH
        }
        RecoveryError::ForeignProgram
        | RecoveryError::NotUncertain { .. }
        | RecoveryError::DecisionRefused { .. }
        | RecoveryError::OutputMismatch { .. }
        | RecoveryError::NotStarted { .. }
        | RecoveryError::Unstartable { .. }
        | RecoveryError::Ended { .. } => RUNLET_ERR_INVALID_ARGUMENT,
    };
    Error::new(code, error.to_string())
}

/// Brings run `run_id` back from the runtime's journal (nothing runs) and hands it to `decide`.
/// Blocks; refused from a callback.
///
/// # Safety
/// Live handles, valid views, and `options` NULL or a readable options struct.
unsafe fn with_recovery<T>(
    runtime: *const runlet_runtime,
    program: *const runlet_program,
    run_id: runlet_str,
    options: *const runlet_run_options,
    decide: impl FnOnce(&mut Recovery<'_>) -> Result<T, Error>,
) -> Result<T, Error> {
    // SAFETY: forwarded from the caller.
    let (runtime, program, run_id, (run_options, _)) =
        unsafe { (borrow(runtime)?, borrow(program)?, run_id.to_str("run_id")?, read_run_options(options)?) };
    refuse_blocking("the recovery functions")?;
    let mut recovery = runtime
        .instance()
        .engine()
        .recovery(program.executable(), &RunId::new(run_id), run_options)
        .map_err(|error| recovery_error(&error))?;
    decide(&mut recovery)
}

/// The operation id at `operation_id`.
///
/// # Safety
/// The view is valid for the call.
unsafe fn operation(operation_id: runlet_str) -> Result<OperationId, Error> {
    // SAFETY: forwarded from the caller.
    let text = unsafe { operation_id.to_str("operation_id") }?;
    OperationId::from_str(text)
        .map_err(|error| Error::new(RUNLET_ERR_INVALID_ARGUMENT, format!("`operation_id`: {error}")))
}

/// The host's buffer `out`, zeroed first so it is empty on every failure.
///
/// # Safety
/// `out` is NULL or writable for `'a`.
pub(crate) unsafe fn buffer_out<'a>(out: *mut runlet_buf) -> Result<&'a mut runlet_buf, Error> {
    // SAFETY: forwarded from the caller.
    let out = unsafe { out.as_mut() }
        .ok_or_else(|| Error::new(RUNLET_ERR_NULL_ARGUMENT, "the `out` pointer is NULL"))?;
    *out = runlet_buf::empty();
    Ok(out)
}

/// Lists the operations run `run_id` (of `program`, resumed with `options`; NULL for none) left
/// dispatching that no host decision covers yet, as a JSON array in node order, into a buffer
/// the host frees with `runlet_buf_free`: `[{"operation_id", "node", "tool", "class",
/// "dispatch_id", "prepared_seq", "generation", "needs_decision"}, …]` — the entries of
/// `runlet runs show`, with the tool's execution `class` (such as `"at_most_once"`), the
/// uncertain dispatch and the sequence number of its `CallDispatchPrepared`, the operation
/// generation (0 unless a fresh one was authorized), and whether a resume leaves it to the host
/// (`at_most_once` and `unsafe`: until decided, the resumed run fails with `RL6109`; the other
/// classes are redispatched or recovered by the resume). Empty (`[]`) once the journal records
/// the run's end. Errors as for `runlet_run_resume`. Blocks
/// while the journal is read; refused from a callback.
///
/// Thread-safety: any thread but a callback's; the run must not be running elsewhere.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_run_uncertain_json(
    runtime: *const runlet_runtime,
    program: *const runlet_program,
    run_id: runlet_str,
    options: *const runlet_run_options,
    out: *mut runlet_buf,
) -> *mut runlet_error {
    ffi_boundary!(Result<(), Error>, {
        // SAFETY: the caller passes NULL or a writable buffer.
        let out = unsafe { buffer_out(out) }?;
        // SAFETY: the caller passes live handles and valid views.
        let listed = unsafe {
            with_recovery(runtime, program, run_id, options, |recovery| {
                let operations = recovery.uncertain_operations();
                Ok(serde_json::to_string(&operations).expect("uncertain operations serialize"))
            })
        }?;
        *out = runlet_buf::from_vec(listed.into_bytes());
        Ok(())
    })
}

/// Journals that the uncertain operation `operation_id` of run `run_id` took effect with the
/// output `result_json`, which must match the tool's output schema; the next resume makes the
/// call succeed with it. Refusals (`RL84xx` in the message) are `RUNLET_ERR_INVALID_ARGUMENT`:
/// an operation that is not uncertain, an output the schema refuses. Blocks; refused from a
/// callback.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_run_resolve_applied(
    runtime: *const runlet_runtime,
    program: *const runlet_program,
    run_id: runlet_str,
    options: *const runlet_run_options,
    operation_id: runlet_str,
    result_json: runlet_str,
) -> *mut runlet_error {
    ffi_boundary!(Result<(), Error>, {
        // SAFETY: the caller passes valid views.
        let (operation, text) = unsafe { (operation(operation_id)?, result_json.to_str("result_json")?) };
        let output = parse_json(text).map_err(|error| invalid_json("result_json", &error))?;
        // SAFETY: the caller passes live handles and valid views.
        unsafe {
            with_recovery(runtime, program, run_id, options, |recovery| {
                recovery.resolve(&operation, Resolution::Applied(output)).map_err(|e| recovery_error(&e))
            })
        }
    })
}

/// Journals that the uncertain operation `operation_id` of run `run_id` did not take effect;
/// the next resume dispatches it again under the same operation id. Refused (`RL8402`) for an
/// `unsafe` tool, which needs `runlet_run_authorize_fresh_generation`. Blocks; refused from a
/// callback.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_run_resolve_not_applied(
    runtime: *const runlet_runtime,
    program: *const runlet_program,
    run_id: runlet_str,
    options: *const runlet_run_options,
    operation_id: runlet_str,
) -> *mut runlet_error {
    ffi_boundary!(Result<(), Error>, {
        // SAFETY: the caller passes a valid view.
        let operation = unsafe { operation(operation_id) }?;
        // SAFETY: the caller passes live handles and valid views.
        unsafe {
            with_recovery(runtime, program, run_id, options, |recovery| {
                recovery.resolve(&operation, Resolution::NotApplied).map_err(|e| recovery_error(&e))
            })
        }
    })
}

/// Journals that the uncertain operation `operation_id` of run `run_id` failed with `err` (built
/// with `runlet_error_new_tool` for the tool's own code, or `runlet_error_new`); the next resume
/// fails the call with it, no longer uncertain. Consumes `err` on every path; NULL is
/// `RUNLET_ERR_NULL_ARGUMENT`. Blocks; refused from a callback.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_run_resolve_failed(
    runtime: *const runlet_runtime,
    program: *const runlet_program,
    run_id: runlet_str,
    options: *const runlet_run_options,
    operation_id: runlet_str,
    err: *mut runlet_error,
) -> *mut runlet_error {
    ffi_boundary!(Result<(), Error>, {
        // SAFETY: the caller hands over `err`, NULL or live.
        let err = unsafe { runlet_error::from_raw(err) }
            .ok_or_else(|| Error::new(RUNLET_ERR_NULL_ARGUMENT, "`err` is NULL"))?;
        // SAFETY: the caller passes a valid view.
        let operation = unsafe { operation(operation_id) }?;
        // SAFETY: the caller passes live handles and valid views.
        unsafe {
            with_recovery(runtime, program, run_id, options, |recovery| {
                let tool = recovery
                    .uncertain_operations()
                    .into_iter()
                    .find(|op| op.operation_id == operation)
                    .map_or_else(String::new, |op| op.tool);
                recovery
                    .resolve(&operation, Resolution::Failed(err.to_tool_error(&tool)))
                    .map_err(|e| recovery_error(&e))
            })
        }
    })
}

/// Journals the host's authorization of a fresh generation of the uncertain operation
/// `operation_id` of run `run_id`: the next resume dispatches the call under a new operation
/// id, written to `out` (a buffer the host frees with `runlet_buf_free`; zeroed on failure).
/// Allowed for `unsafe` tools only (`RL8402` otherwise). Blocks; refused from a callback.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_run_authorize_fresh_generation(
    runtime: *const runlet_runtime,
    program: *const runlet_program,
    run_id: runlet_str,
    options: *const runlet_run_options,
    operation_id: runlet_str,
    out: *mut runlet_buf,
) -> *mut runlet_error {
    ffi_boundary!(Result<(), Error>, {
        // SAFETY: the caller passes NULL or a writable buffer, and a valid view.
        let (out, operation) = unsafe { (buffer_out(out)?, operation(operation_id)?) };
        // SAFETY: the caller passes live handles and valid views.
        let fresh = unsafe {
            with_recovery(runtime, program, run_id, options, |recovery| {
                recovery.authorize_fresh_generation(&operation).map_err(|e| recovery_error(&e))
            })
        }?;
        *out = runlet_buf::from_vec(fresh.to_string().into_bytes());
        Ok(())
    })
}

/// Journals the cancellation of run `run_id`, which no process is running (an interrupted run,
/// or one whose worker is gone), as `runlet cancel` does: its calls left dispatching are
/// abandoned and a resume ends at once, cancelled. A run that has ended is refused (`RL8404`,
/// `RUNLET_ERR_INVALID_ARGUMENT`). To cancel a run this process is running use
/// `runlet_run_cancel`. Blocks; refused from a callback.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_run_cancel_interrupted(
    runtime: *const runlet_runtime,
    program: *const runlet_program,
    run_id: runlet_str,
    options: *const runlet_run_options,
) -> *mut runlet_error {
    ffi_boundary!(Result<(), Error>, {
        // SAFETY: the caller passes live handles and valid views.
        unsafe {
            with_recovery(runtime, program, run_id, options, |recovery| {
                recovery.cancel().map_err(|e| recovery_error(&e))
            })
        }
    })
}
