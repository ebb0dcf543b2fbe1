//! Recovery at start from C: `runlet_runtime_recover_interrupted` wraps the core's
//! `Runtime::recover_interrupted` — every interrupted run of the journal resumed, parked as
//! failed after too many resumes, or left for an operator — handing the host each resumed run's
//! handle and a JSON report of what happened to every run.

use std::ffi::c_void;

use runlet::runtime::Recovered;
use serde_json::json;

use crate::error::{Error, RUNLET_ERR_INVALID_ARGUMENT, runlet_error};
use crate::handle::{borrow, into_raw};
use crate::recovery::buffer_out;
use crate::reentrancy::refuse_blocking;
use crate::run::{launched, read_run_options, runlet_run, runlet_run_options};
use crate::runtime::runlet_runtime;
use crate::stored::read_error;
use crate::strings::runlet_buf;

/// Receives one resumed run's handle, which the host then owns (`runlet_run_free`; freeing it
/// cancels the run).
pub type runlet_on_resumed = Option<unsafe extern "C" fn(user_data: *mut c_void, run: *mut runlet_run)>;

/// Recovery at start: resumes every interrupted run of the runtime's journal that this runtime
/// can run — each compiled again from the source and registry its header retains, which must
/// pin this runtime's registry — in the order the runs were created, and parks as failed
/// (`RL7306`) those already resumed `max_resumes` times without ending. Runs whose calls need a
/// host's decision (`RL8405`), runs whose header or last record is damaged (`RL7008`), runs
/// another process claimed since they were listed (`RL7010`) and runs this runtime cannot run
/// are left as they are. What a host calls once after building its
/// runtime, so runs its last process left go on.
///
/// Each resumed run's handle is handed to `on_resumed(user_data, run)` (on this thread, before
/// the function returns); with a NULL `on_resumed` the resumed runs go on unwatched until they
/// end or the runtime is freed. `options` (NULL for the defaults) may ask for `pull_events`; a
/// recovered run keeps the limits its journal pins, so `limits_json` must be empty.
///
/// `*report` gets a JSON array, one object per interrupted or damaged run, in creation order:
/// `{"run_id", "outcome": "resumed"}`, `{"run_id", "outcome": "parked", "resumes": N}` or
/// `{"run_id", "outcome": "left", "code": "RLnnnn", "message"}`; the host frees it with
/// `runlet_buf_free`. Fails only when the journal cannot list its runs (`RUNLET_ERR_JOURNAL`).
/// Blocks while it replays each run; refused from a callback.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_runtime_recover_interrupted(
    runtime: *const runlet_runtime,
    max_resumes: u32,
    options: *const runlet_run_options,
    on_resumed: runlet_on_resumed,
    user_data: *mut c_void,
    report: *mut runlet_buf,
) -> *mut runlet_error {
    ffi_boundary!(Result<(), Error>, {
        // SAFETY: the caller passes a writable buffer or NULL, a live handle and readable options.
        let (report, runtime, (run_options, pull_events)) =
            unsafe { (buffer_out(report)?, borrow(runtime)?, read_run_options(options)?) };
        refuse_blocking("runlet_runtime_recover_interrupted")?;
        if run_options.limits != runlet::engine::Limits::new() {
            return Err(Error::new(
                RUNLET_ERR_INVALID_ARGUMENT,
                "a recovered run keeps the limits its journal pins: leave `limits_json` empty",
            ));
        }
        let recovered = runtime
            .instance()
            .engine()
            .recover_interrupted_with(max_resumes, run_options.host_data)
            .map_err(|error| read_error(error.code(), &error))?;
        let mut entries = Vec::with_capacity(recovered.len());
        for outcome in recovered {
            let run_id = outcome.run_id().as_str().to_owned();
            entries.push(match outcome {
                Recovered::Resumed(handle) => {
                    if let Some(on_resumed) = on_resumed {
                        let run = into_raw(launched(runtime, handle, pull_events, None));
                        // SAFETY: the host's callback takes the handle it is given.
                        unsafe { on_resumed(user_data, run) };
                    }
                    json!({ "run_id": run_id, "outcome": "resumed" })
                }
                Recovered::Parked { resumes, .. } => json!({ "run_id": run_id, "outcome": "parked", "resumes": resumes }),
                Recovered::Left { code, message, .. } => {
                    json!({ "run_id": run_id, "outcome": "left", "code": code.to_string(), "message": message })
                }
            });
        }
        *report = runlet_buf::from_vec(serde_json::Value::Array(entries).to_string().into_bytes());
        Ok(())
    })
}
