//! Runs as the runtime's journal holds them, whichever process ran them: the list of its runs
//! with their statuses (`runlet runs`), and one run's graph rebuilt from its records.

use runlet::diag::codes;
use runlet::journal::{JournalError, RunId};
use runlet::observe::SnapshotOptions;

use crate::error::{Error, RUNLET_ERR_JOURNAL, RUNLET_ERR_JOURNAL_UNKNOWN_RUN, runlet_error};
use crate::handle::borrow;
use crate::program::runlet_program;
use crate::recovery::buffer_out;
use crate::reentrancy::refuse_blocking;
use crate::run::graph_json;
use crate::runtime::runlet_runtime;
use crate::strings::{runlet_buf, runlet_str};

/// The C error for a journal that could not be read: an unknown run keeps its code.
pub(crate) fn read_error(code: runlet::diag::Code, error: impl std::fmt::Display) -> Error {
    let c =
        if code == codes::JOURNAL_UNKNOWN_RUN { RUNLET_ERR_JOURNAL_UNKNOWN_RUN } else { RUNLET_ERR_JOURNAL };
    Error::new(c, format!("the journal could not be read ({code}): {error}"))
}

/// Lists the runs of the runtime's journal in the order they were created, as
/// `runlet runs --format json` prints them: `{"runs": [{"run_id", "status", "program_digest",
/// "started_ms", "last_seq", "last_event_ms"}, …]}`, into a buffer the host frees with
/// `runlet_buf_free` (zeroed on failure). `status` is what the journal alone tells: `running`,
/// `interrupted`, `succeeded`, `failed` or `cancelled`; whether an interrupted run needs a host
/// decision takes its program (`runlet_run_uncertain_json`). A run whose header or last record
/// cannot be read is `damaged`, with `"damage": {"code", "message"}` (and `program_digest`
/// `null` when its header is what is damaged), and hides no other. `started_ms` and
/// `last_event_ms` (Unix milliseconds) are `null` where the journal does not keep them. The
/// in-memory and SQLite journals list their runs, a host journal through its vtable's `runs`;
/// one without it gives `RUNLET_ERR_JOURNAL`.
/// Blocks while the journal is read; refused from a callback.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_runtime_runs_json(
    runtime: *const runlet_runtime,
    out: *mut runlet_buf,
) -> *mut runlet_error {
    ffi_boundary!(Result<(), Error>, {
        // SAFETY: the caller passes a writable buffer or NULL, and a live handle.
        let (out, runtime) = unsafe { (buffer_out(out)?, borrow(runtime)?) };
        refuse_blocking("runlet_runtime_runs_json")?;
        let runs = runtime.instance().engine().runs().map_err(|e: JournalError| read_error(e.code(), &e))?;
        *out = runlet_buf::from_vec(serde_json::json!({ "runs": runs }).to_string().into_bytes());
        Ok(())
    })
}

/// The graph of run `run_id` of `program` as the runtime's journal records it (the JSON of
/// `runlet_run_snapshot_json`, timed by when the records were appended where the journal keeps
/// that), for a run no handle of this process follows: another process's, an interrupted or a
/// finished one. Redacted under the runtime's `view` policy; into a buffer the host frees with
/// `runlet_buf_free` (zeroed on failure). `RUNLET_ERR_JOURNAL_UNKNOWN_RUN` for an unknown run.
/// Blocks while the journal is read; refused from a callback.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_run_journal_snapshot_json(
    runtime: *const runlet_runtime,
    program: *const runlet_program,
    run_id: runlet_str,
    out: *mut runlet_buf,
) -> *mut runlet_error {
    ffi_boundary!(Result<(), Error>, {
        // SAFETY: the caller passes a writable buffer or NULL, live handles and a valid view.
        let (out, runtime, program, run_id) =
            unsafe { (buffer_out(out)?, borrow(runtime)?, borrow(program)?, run_id.to_str("run_id")?) };
        refuse_blocking("runlet_run_journal_snapshot_json")?;
        let instance = runtime.instance();
        let snapshot = instance
            .engine()
            .journal_snapshot(program.executable(), &RunId::new(run_id), instance.view(), &SnapshotOptions::default())
            .map_err(|error| read_error(error.code(), &error))?;
        *out = runlet_buf::from_vec(graph_json(&snapshot)?);
        Ok(())
    })
}
