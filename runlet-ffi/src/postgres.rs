//! The PostgreSQL journal and its workers for C hosts (`runlet-postgres`): a runtime whose
//! options name `postgres_journal_url` journals to that database; `runlet_runtime_submit`
//! journals a run for a worker to run, and `runlet_worker_*` runs the journal's runs in this
//! process, as `runlet worker` does. Behind the `postgres` feature; without it the option is
//! refused with `RUNLET_ERR_UNSUPPORTED`.

// Without the `postgres` feature the worker's parts are never read.
#![cfg_attr(not(feature = "postgres"), allow(dead_code, unused_imports))]

use std::ffi::c_void;
use std::sync::Arc;

use runlet::analyze::Inputs;

use crate::boundary::Poison;
#[cfg(not(feature = "postgres"))]
use crate::error::RUNLET_ERR_UNSUPPORTED;
use crate::error::inputs_error;
use crate::error::{Error, RUNLET_ERR_INVALID_ARGUMENT};
use crate::handle::{Handle, borrow, into_raw, out_param, take};
use crate::program::runlet_program;
use crate::recovery::buffer_out;
use crate::reentrancy::{call_host, refuse_blocking};
use crate::run::read_run_options;
use crate::runtime::runlet_runtime;
use crate::strings::{runlet_buf, runlet_str};
use crate::versioned::{Versioned, copy_in};

/// The journal a runtime opened from `postgres_journal_url`, kept for its workers.
#[cfg(feature = "postgres")]
pub(crate) type Shared = runlet_postgres::PostgresJournal;
#[cfg(not(feature = "postgres"))]
pub(crate) type Shared = ();

/// The PostgreSQL journal at `url` (empty: none), its leases `lease_ms` long (0: 10 s).
///
/// # Safety
/// `url` points at its `len` readable bytes.
pub(crate) unsafe fn open(url: runlet_str, lease_ms: u32) -> Result<Option<Shared>, Error> {
    // SAFETY: forwarded from the caller.
    let url = unsafe { url.to_str("postgres_journal_url") }?;
    if url.is_empty() {
        return Ok(None);
    }
    connect(url, lease_ms).map(Some)
}

#[cfg(feature = "postgres")]
fn connect(url: &str, lease_ms: u32) -> Result<Shared, Error> {
    let mut options = runlet_postgres::PostgresOptions::default();
    if lease_ms != 0 {
        options.lease = std::time::Duration::from_millis(u64::from(lease_ms));
    }
    runlet_postgres::PostgresJournal::connect(url, options).map_err(|error| {
        Error::new(
            crate::error::RUNLET_ERR_JOURNAL,
            format!("the PostgreSQL journal could not be opened ({}): {error}", error.code()),
        )
    })
}

#[cfg(not(feature = "postgres"))]
fn connect(_url: &str, _lease_ms: u32) -> Result<Shared, Error> {
    Err(Error::new(
        RUNLET_ERR_UNSUPPORTED,
        "this librunlet was built without the `postgres` feature: `postgres_journal_url` is not available",
    ))
}

/// Journals a run of `program` with `input_json` (a JSON object of host input values, or empty)
/// and `options` for a worker to run, and stores its id (`r-…`, UTF-8) in `*run_id_out`. Nothing
/// runs here. Needs a runtime with `postgres_journal_url` (or any durable journal whose runs
/// another process recovers): with the in-memory journal only this runtime's
/// `runlet_runtime_recover_interrupted` would ever run it. Blocks while the journal stores the
/// run; refused from a callback.
///
/// Thread-safety: any thread, concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_runtime_submit(
    runtime: *const runlet_runtime,
    program: *const runlet_program,
    input_json: runlet_str,
    options: *const crate::run::runlet_run_options,
    run_id_out: *mut runlet_buf,
) -> *mut crate::error::runlet_error {
    ffi_boundary!(Result<(), Error>, {
        // SAFETY: the caller passes a writable out-pointer (emptied first, so it is empty on
        // every failure), live handles and valid views.
        let (out, runtime, program, input_text, (run_options, _)) = unsafe {
            (
                buffer_out(run_id_out)?,
                borrow(runtime)?,
                borrow(program)?,
                input_json.to_str("input_json")?,
                read_run_options(options)?,
            )
        };
        refuse_blocking("runlet_runtime_submit")?;
        let engine = runtime.instance().engine();
        let inputs: Inputs = Inputs::from_json(input_text, engine.registry())
            .map_err(|error| inputs_error("input_json", error))?;
        let run = engine
            .submit(program.executable(), &inputs, run_options)
            .map_err(|error| Error::new(RUNLET_ERR_INVALID_ARGUMENT, error.to_string()))?;
        *out = runlet_buf::from_vec(run.as_str().as_bytes().to_vec());
        Ok(())
    })
}

/// How a worker shares its journal's runs. Initialize with `RUNLET_WORKER_OPTIONS_INIT`.
///
/// - `concurrency`: runs it drives at once; 0 for 16.
/// - `max_recoveries`: takeovers a run may need before it is parked as failed (`RL7306`); 0
///   for 5.
/// - `poll_ms`: how often it looks for runs when no notification wakes it; 0 for 1000.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct runlet_worker_options {
    pub struct_size: usize,
    pub concurrency: u32,
    pub max_recoveries: u32,
    pub poll_ms: u32,
}

// SAFETY: `struct_size` first; integers are valid zeroed.
unsafe impl Versioned for runlet_worker_options {
    const NAME: &'static str = "runlet_worker_options";
    const KNOWN_SIZES: &'static [usize] = &[std::mem::size_of::<runlet_worker_options>()];
}

/// Called once for each run a worker is done with, on the thread that runs the worker, with
/// `{"run_id", "action": "ended"|"lost"|"parked"|"left", "status"?, "code"?, "message"?}`
/// (borrowed for the call).
pub type runlet_worker_report_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, report_json: runlet_str)>;

/// A worker over a runtime's PostgreSQL journal: made by `runlet_worker_new`, run (blocking)
/// by `runlet_worker_run` until `runlet_worker_stop`, freed by `runlet_worker_free` once
/// `runlet_worker_run` returned. Free workers before their runtime.
pub struct runlet_worker {
    #[cfg(feature = "postgres")]
    worker: runlet_postgres::Worker,
    #[cfg(feature = "postgres")]
    runtime: Arc<runlet::runtime::Runtime>,
    stop: tokio_util::sync::CancellationToken,
    poison: Arc<Poison>,
}

impl std::fmt::Debug for runlet_worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("runlet_worker").finish_non_exhaustive()
    }
}

impl Handle for runlet_worker {
    const NAME: &'static str = "runlet_worker";
    fn poison(&self) -> &Arc<Poison> {
        &self.poison
    }
}

/// Makes a worker for `runtime`, which must have been built with `postgres_journal_url`
/// (`RUNLET_ERR_INVALID_ARGUMENT` otherwise), and stores it in `*out`. `options` may be NULL for
/// the defaults. It claims only runs of the runtime's registry.
///
/// Thread-safety: any thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_worker_new(
    runtime: *const runlet_runtime,
    options: *const runlet_worker_options,
    out: *mut *mut runlet_worker,
) -> *mut crate::error::runlet_error {
    ffi_boundary!(Result<(), Error>, {
        // SAFETY: the caller passes a writable out-pointer, a live handle and NULL or options.
        let (out, runtime) = unsafe { (out_param(out)?, borrow(runtime)?) };
        // SAFETY: as above.
        let options = if options.is_null() { None } else { Some(unsafe { copy_in(options) }?) };
        *out = into_raw(new_worker(runtime, options)?);
        Ok(())
    })
}

#[cfg(feature = "postgres")]
fn new_worker(
    runtime: &runlet_runtime,
    options: Option<runlet_worker_options>,
) -> Result<runlet_worker, Error> {
    let instance = runtime.instance();
    let journal = instance.postgres().cloned().ok_or_else(|| {
        Error::new(RUNLET_ERR_INVALID_ARGUMENT, "a worker needs a runtime built with `postgres_journal_url`")
    })?;
    let mut settings = runlet_postgres::WorkerOptions::default();
    if let Some(options) = options {
        let or = |given: u32, default: u32| if given == 0 { default } else { given };
        settings.concurrency = or(options.concurrency, settings.concurrency as u32) as usize;
        settings.max_recoveries = or(options.max_recoveries, settings.max_recoveries);
        settings.poll = std::time::Duration::from_millis(u64::from(or(options.poll_ms, 1000)));
    }
    let engine = Arc::clone(instance.shared_engine());
    Ok(runlet_worker {
        worker: runlet_postgres::Worker::new(Arc::clone(&engine), journal, settings),
        runtime: engine,
        stop: tokio_util::sync::CancellationToken::new(),
        poison: Arc::default(),
    })
}

#[cfg(not(feature = "postgres"))]
fn new_worker(
    _runtime: &runlet_runtime,
    _options: Option<runlet_worker_options>,
) -> Result<runlet_worker, Error> {
    Err(Error::new(RUNLET_ERR_UNSUPPORTED, "this librunlet was built without the `postgres` feature"))
}

/// Runs the worker on the calling thread until `runlet_worker_stop`: claims runs, drives them,
/// and calls `report` (may be NULL) as each is handled; once stopped it claims nothing more and
/// returns when the runs it drives have ended. Refused from a callback.
///
/// Thread-safety: one thread at a time per worker.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_worker_run(
    worker: *const runlet_worker,
    report: runlet_worker_report_fn,
    user_data: *mut c_void,
) -> *mut crate::error::runlet_error {
    ffi_boundary!(Result<(), Error>, {
        refuse_blocking("runlet_worker_run")?;
        // SAFETY: the caller passes a live handle.
        let worker = unsafe { borrow(worker) }?;
        run_worker(worker, report, crate::executor::UserData(user_data));
        Ok(())
    })
}

#[cfg(feature = "postgres")]
fn run_worker(worker: &runlet_worker, report: runlet_worker_report_fn, user_data: crate::executor::UserData) {
    let on_handled = |handled: &runlet_postgres::Handled| {
        if let Some(report) = report {
            let json = handled.to_json().to_string();
            // SAFETY: the host's function with its own pointer and a view valid for the call.
            call_host(|| unsafe { report(user_data.0, runlet_str::of(&json)) });
        }
    };
    worker.runtime.handle().block_on(worker.worker.run(worker.stop.clone(), on_handled));
}

#[cfg(not(feature = "postgres"))]
fn run_worker(
    _worker: &runlet_worker,
    _report: runlet_worker_report_fn,
    _user_data: crate::executor::UserData,
) {
}

/// Asks the worker to stop claiming runs; `runlet_worker_run` returns once the runs it drives
/// have ended. Idempotent; NULL is a no-op.
///
/// Thread-safety: any thread, also from `report`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_worker_stop(worker: *const runlet_worker) {
    ffi_boundary!((), {
        // SAFETY: the caller passes NULL or a live handle.
        if let Some(worker) = unsafe { worker.as_ref() } {
            worker.stop.cancel();
        }
    })
}

/// Frees the worker; NULL is a no-op. Call it only after `runlet_worker_run` returned.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_worker_free(worker: *mut runlet_worker) {
    ffi_boundary!((), {
        // SAFETY: the caller passes NULL or a live handle, freed once.
        drop(unsafe { take(worker) });
    })
}

/// A library built without the feature refuses the option, and every build takes an empty one.
#[cfg(all(test, not(feature = "postgres")))]
mod tests {
    use super::*;

    #[test]
    fn without_the_feature_a_postgres_url_is_unsupported() {
        // SAFETY: views of live strings.
        let error = unsafe { open(runlet_str::of("postgres://u@127.0.0.1/db"), 0) }.expect_err("refused");
        assert_eq!(error.code(), RUNLET_ERR_UNSUPPORTED);
        // SAFETY: as above.
        assert!(unsafe { open(runlet_str::of(""), 0) }.expect("no journal").is_none());
    }
}
