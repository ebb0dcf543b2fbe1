//! Host journals: the versioned `runlet_journal_vtable` adapted to the engine's `Journal` trait
//! (callbacks on a blocking pool, serialized per run), the sink they push read data through,
//! and `runlet_journal_conformance_check`, which runs the shared journal suite against one.

use std::ffi::c_void;
use std::sync::Arc;

use async_trait::async_trait;
use parking_lot::Mutex;
use runlet::journal::{
    Bytes, Journal, JournalError, JournalErrorKind, Record, RunEntry, RunHeader, RunId, Snapshot, suite,
};

use crate::boundary::panic_message;
use crate::error::{
    Error, RUNLET_ERR_INVALID_ARGUMENT, RUNLET_ERR_JOURNAL, RUNLET_ERR_JOURNAL_INVALID_RECORD,
    RUNLET_ERR_JOURNAL_RUN_EXISTS, RUNLET_ERR_JOURNAL_SEQUENCE_CONFLICT, RUNLET_ERR_JOURNAL_UNKNOWN_RUN,
    RUNLET_ERR_NULL_ARGUMENT, RUNLET_ERR_VERSION_MISMATCH, runlet_error,
};
use crate::executor::UserData;
use crate::reentrancy::{call_host, refuse_blocking};
use crate::strings::{runlet_bytes, runlet_str};
use crate::versioned::{Versioned, copy_in};

/// The journal ABI's major version; a vtable with another `abi_major` is refused.
pub const RUNLET_JOURNAL_ABI_MAJOR: u32 = 1;

/// One record passed to `append`: its sequence number and its bytes, borrowed for the call.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct runlet_journal_record {
    pub seq: u64,
    pub bytes: runlet_bytes,
}

/// Where a journal callback pushes what it read; Runlet copies each push. Valid only during
/// the callback it is passed to.
#[derive(Debug)]
pub struct runlet_journal_sink {
    /// How many pushes the callback may make.
    room: usize,
    pushed: Vec<(u64, Vec<u8>)>,
}

/// A journal implemented by the host. Runlet copies the vtable when it is registered and checks
/// it then: `struct_size` must be known, `abi_major` equal to `RUNLET_JOURNAL_ABI_MAJOR`, `flags`
/// 0 and every function but `drop` non-NULL.
///
/// Threading: callbacks may block; they run on Runlet's blocking pool, never on its scheduler
/// threads. Calls for one run are serialized and ordered; calls for different runs may run
/// concurrently. Every callback returns NULL on success or an error built with
/// `runlet_error_new` (ownership passes to Runlet), using the `RUNLET_ERR_JOURNAL_*` codes for
/// the journal contract's outcomes and `RUNLET_ERR_JOURNAL` for storage failures.
///
/// - `create_run`: registers a run with its header (a JSON object); a second call for the same
///   id fails with `RUNLET_ERR_JOURNAL_RUN_EXISTS`.
/// - `header`: pushes the stored header JSON once (seq 0). A run whose header cannot be read
///   (`RUNLET_ERR_JOURNAL_INVALID_RECORD`, nothing pushed, or bytes that are not a run header)
///   is damaged: listings show it as such and go on with the other runs.
/// - `append`: atomically stores `records` (sequence numbers `expected_seq + 1`, … without gaps)
///   when `expected_seq` is the last stored sequence number, and sets `*last_seq_out` to the new
///   last one; on `RUNLET_ERR_JOURNAL_SEQUENCE_CONFLICT` it sets it to the actual last one.
///   Records with a gap fail with `RUNLET_ERR_JOURNAL_INVALID_RECORD`, writing nothing.
/// - `read`: pushes up to `limit` records with sequence numbers above `after`, in order.
/// - `load_snapshot`: pushes the latest snapshot (seq = the sequence it covers up to), or nothing.
/// - `store_snapshot`: stores a snapshot; `RUNLET_ERR_JOURNAL_INVALID_RECORD` when it covers
///   records the journal does not have.
/// - `drop` (optional): called exactly once after the last callback, also when registration
///   fails.
/// - `runs` (optional; added in the second version of the struct, whose size
///   `RUNLET_JOURNAL_VTABLE_INIT` sets — the first version's size is still accepted): pushes one
///   item per run in the order the runs were created, `seq` its last sequence number and the
///   bytes its id, for `runlet_runtime_runs_json`. Without it the journal cannot list its runs.
///
/// Unknown runs fail with `RUNLET_ERR_JOURNAL_UNKNOWN_RUN`. Set `struct_size` and `abi_major`
/// with `RUNLET_JOURNAL_VTABLE_INIT`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct runlet_journal_vtable {
    pub struct_size: usize,
    pub abi_major: u32,
    pub flags: u32,
    pub user_data: *mut c_void,
    pub create_run: Option<
        unsafe extern "C" fn(
            user_data: *mut c_void,
            run_id: runlet_str,
            header_json: runlet_str,
        ) -> *mut runlet_error,
    >,
    pub header: Option<
        unsafe extern "C" fn(
            user_data: *mut c_void,
            run_id: runlet_str,
            sink: *mut runlet_journal_sink,
        ) -> *mut runlet_error,
    >,
    pub append: Option<
        unsafe extern "C" fn(
            user_data: *mut c_void,
            run_id: runlet_str,
            expected_seq: u64,
            records: *const runlet_journal_record,
            count: usize,
            last_seq_out: *mut u64,
        ) -> *mut runlet_error,
    >,
    pub read: Option<
        unsafe extern "C" fn(
            user_data: *mut c_void,
            run_id: runlet_str,
            after: u64,
            limit: usize,
            sink: *mut runlet_journal_sink,
        ) -> *mut runlet_error,
    >,
    pub load_snapshot: Option<
        unsafe extern "C" fn(
            user_data: *mut c_void,
            run_id: runlet_str,
            sink: *mut runlet_journal_sink,
        ) -> *mut runlet_error,
    >,
    pub store_snapshot: Option<
        unsafe extern "C" fn(
            user_data: *mut c_void,
            run_id: runlet_str,
            upto_seq: u64,
            bytes: runlet_bytes,
        ) -> *mut runlet_error,
    >,
    pub drop: Option<unsafe extern "C" fn(user_data: *mut c_void)>,
    pub runs: Option<
        unsafe extern "C" fn(user_data: *mut c_void, sink: *mut runlet_journal_sink) -> *mut runlet_error,
    >,
}

// SAFETY: `struct_size` first; integers, pointers and optional function pointers are valid zeroed.
unsafe impl Versioned for runlet_journal_vtable {
    const NAME: &'static str = "runlet_journal_vtable";
    const KNOWN_SIZES: &'static [usize] =
        &[std::mem::offset_of!(runlet_journal_vtable, runs), std::mem::size_of::<runlet_journal_vtable>()];
}

/// Pushes one item into `sink`: a record (`seq`, `bytes`), a snapshot (`seq` = the sequence it
/// covers up to) or the header JSON (`seq` 0). Copies `bytes`. Fails with
/// `RUNLET_ERR_INVALID_ARGUMENT` when the callback pushes more than it was asked for.
///
/// Thread-safety: only inside the callback the sink was passed to.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_journal_sink_push(
    sink: *mut runlet_journal_sink,
    seq: u64,
    bytes: runlet_bytes,
) -> *mut runlet_error {
    ffi_boundary!(Result<(), Error>, {
        // SAFETY: the sink is live for the callback it was passed to.
        let sink = unsafe { sink.as_mut() }
            .ok_or_else(|| Error::new(RUNLET_ERR_NULL_ARGUMENT, "the `runlet_journal_sink` is NULL"))?;
        if sink.pushed.len() >= sink.room {
            return Err(Error::new(
                RUNLET_ERR_INVALID_ARGUMENT,
                format!("the sink takes at most {} item(s) in this callback", sink.room),
            ));
        }
        // SAFETY: the caller passes a valid view.
        let bytes = unsafe { bytes.to_slice("bytes") }?;
        sink.pushed.push((seq, bytes.to_vec()));
        Ok(())
    })
}

/// The copied, checked vtable; dropping it calls the host's `drop` once.
#[derive(Debug)]
struct Callbacks {
    vtable: runlet_journal_vtable,
}

// SAFETY: the host promises its journal callbacks may be called from any thread.
unsafe impl Send for Callbacks {}
// SAFETY: as above.
unsafe impl Sync for Callbacks {}

impl Drop for Callbacks {
    fn drop(&mut self) {
        if let Some(drop) = self.vtable.drop {
            let user_data = UserData(self.vtable.user_data);
            // SAFETY: the host's own function with its own pointer, called once.
            call_host(|| unsafe { drop(user_data.0) });
        }
    }
}

/// How many locks the per-run serialization is striped over.
const STRIPES: usize = 64;

/// A host journal as the engine sees it.
#[derive(Debug)]
pub(crate) struct HostJournal {
    callbacks: Arc<Callbacks>,
    /// Calls for one run take its stripe's fair lock, so they run one at a time and in order.
    stripes: Box<[tokio::sync::Mutex<()>]>,
}

impl HostJournal {
    /// Copies and checks the host's vtable. When it is readable but invalid, its `drop` is
    /// called before the error returns.
    ///
    /// # Safety
    /// `raw` is NULL or points at a readable `runlet_journal_vtable` of its `struct_size`.
    pub(crate) unsafe fn adopt(raw: *const runlet_journal_vtable) -> Result<HostJournal, Error> {
        // SAFETY: forwarded from the caller.
        let callbacks = Callbacks { vtable: unsafe { copy_in(raw) }? };
        let vtable = &callbacks.vtable;
        if vtable.abi_major != RUNLET_JOURNAL_ABI_MAJOR || vtable.flags != 0 {
            return Err(Error::new(
                RUNLET_ERR_VERSION_MISMATCH,
                format!(
                    "the journal vtable has abi_major {} and flags {:#x}; this library needs abi_major {} and flags 0",
                    vtable.abi_major, vtable.flags, RUNLET_JOURNAL_ABI_MAJOR
                ),
            ));
        }
        let missing = [
            ("create_run", vtable.create_run.is_none()),
            ("header", vtable.header.is_none()),
            ("append", vtable.append.is_none()),
            ("read", vtable.read.is_none()),
            ("load_snapshot", vtable.load_snapshot.is_none()),
            ("store_snapshot", vtable.store_snapshot.is_none()),
        ];
        if let Some((name, _)) = missing.iter().find(|(_, absent)| *absent) {
            return Err(Error::new(
                RUNLET_ERR_NULL_ARGUMENT,
                format!("`runlet_journal_vtable.{name}` is NULL"),
            ));
        }
        let stripes = (0..STRIPES).map(|_| tokio::sync::Mutex::new(())).collect();
        Ok(HostJournal { callbacks: Arc::new(callbacks), stripes })
    }

    /// Runs `call` with the host's vtable on the blocking pool, after the earlier calls for
    /// `run` (a listing of runs passes the empty id).
    async fn on_pool<T: Send + 'static>(
        &self,
        run: &str,
        call: impl FnOnce(&runlet_journal_vtable) -> Result<T, JournalError> + Send + 'static,
    ) -> Result<T, JournalError> {
        let stripe = run.bytes().fold(0usize, |h, b| h.wrapping_mul(31).wrapping_add(usize::from(b)));
        let _turn = self.stripes[stripe % STRIPES].lock().await;
        let callbacks = Arc::clone(&self.callbacks);
        tokio::task::spawn_blocking(move || call_host(|| call(&callbacks.vtable)))
            .await
            .unwrap_or_else(|error| Err(storage(format!("a journal callback did not return: {error}"))))
    }
}

fn storage(message: String) -> JournalError {
    JournalError::new(JournalErrorKind::Storage, message)
}

/// The journal error for what a host callback returned; `actual` is the host's last sequence
/// number, for conflicts.
///
/// # Safety
/// `raw` is NULL or an error the host built and hands over.
unsafe fn taken(raw: *mut runlet_error, expected: u64, actual: u64) -> Result<(), JournalError> {
    // SAFETY: forwarded from the caller.
    let Some(error) = (unsafe { runlet_error::from_raw(raw) }) else { return Ok(()) };
    let kind = match error.code() {
        RUNLET_ERR_JOURNAL_RUN_EXISTS => JournalErrorKind::RunExists,
        RUNLET_ERR_JOURNAL_UNKNOWN_RUN => JournalErrorKind::UnknownRun,
        RUNLET_ERR_JOURNAL_SEQUENCE_CONFLICT => JournalErrorKind::SequenceConflict { expected, actual },
        RUNLET_ERR_JOURNAL_INVALID_RECORD => JournalErrorKind::InvalidRecord,
        _ => JournalErrorKind::Storage,
    };
    Err(JournalError::new(kind, error.message().to_owned()))
}

/// A sink for one callback that may push `room` items.
fn sink(room: usize) -> runlet_journal_sink {
    runlet_journal_sink { room, pushed: Vec::new() }
}

/// Calls a sink-filling callback and returns what it pushed.
fn filled(
    room: usize,
    call: impl FnOnce(*mut runlet_journal_sink) -> *mut runlet_error,
) -> Result<Vec<(u64, Vec<u8>)>, JournalError> {
    let mut sink = sink(room);
    let returned = call(&mut sink);
    // SAFETY: the callback hands its returned error over.
    unsafe { taken(returned, 0, 0) }?;
    Ok(sink.pushed)
}

#[async_trait]
impl Journal for HostJournal {
    async fn create_run(&self, header: &RunHeader) -> Result<(), JournalError> {
        let header_json = serde_json::to_string(header).map_err(|e| storage(format!("header JSON: {e}")))?;
        let run = header.run_id.clone();
        self.on_pool(header.run_id.as_str(), move |vtable| {
            let create_run = vtable.create_run.expect("checked at registration");
            // SAFETY: the host's function with its pointer and views of live strings.
            let returned = unsafe {
                create_run(vtable.user_data, runlet_str::of(run.as_str()), runlet_str::of(&header_json))
            };
            // SAFETY: the callback hands its returned error over.
            unsafe { taken(returned, 0, 0) }
        })
        .await
    }

    async fn header(&self, run: &RunId) -> Result<RunHeader, JournalError> {
        let id = run.clone();
        let pushed = self
            .on_pool(run.as_str(), move |vtable| {
                let header = vtable.header.expect("checked at registration");
                // SAFETY: the host's function with its pointer, a live view and a live sink.
                filled(1, |sink| unsafe { header(vtable.user_data, runlet_str::of(id.as_str()), sink) })
            })
            .await?;
        let damaged = |message: String| JournalError::new(JournalErrorKind::Corrupt, message);
        let Some((_, bytes)) = pushed.into_iter().next() else {
            return Err(damaged(format!("the journal pushed no header for run `{run}`")));
        };
        serde_json::from_slice(&bytes)
            .map_err(|e| damaged(format!("the header of run `{run}` is not a run header: {e}")))
    }

    async fn append(&self, run: &RunId, expected_seq: u64, records: &[Record]) -> Result<u64, JournalError> {
        let id = run.clone();
        let records = records.to_vec();
        self.on_pool(run.as_str(), move |vtable| {
            let append = vtable.append.expect("checked at registration");
            let views: Vec<runlet_journal_record> = records
                .iter()
                .map(|r| runlet_journal_record {
                    seq: r.seq,
                    bytes: runlet_bytes { ptr: r.bytes.as_ptr(), len: r.bytes.len() },
                })
                .collect();
            let mut last_seq = expected_seq;
            // SAFETY: the host's function with its pointer and views of live data.
            let returned = unsafe {
                append(
                    vtable.user_data,
                    runlet_str::of(id.as_str()),
                    expected_seq,
                    views.as_ptr(),
                    views.len(),
                    &mut last_seq,
                )
            };
            // SAFETY: the callback hands its returned error over.
            unsafe { taken(returned, expected_seq, last_seq) }?;
            Ok(last_seq)
        })
        .await
    }

    async fn read(&self, run: &RunId, after: u64, limit: usize) -> Result<Vec<Record>, JournalError> {
        let id = run.clone();
        let pushed = self
            .on_pool(run.as_str(), move |vtable| {
                let read = vtable.read.expect("checked at registration");
                // SAFETY: the host's function with its pointer, a live view and a live sink.
                filled(limit, |sink| unsafe {
                    read(vtable.user_data, runlet_str::of(id.as_str()), after, limit, sink)
                })
            })
            .await?;
        Ok(pushed.into_iter().map(|(seq, bytes)| Record { seq, bytes: Bytes::from(bytes) }).collect())
    }

    async fn load_snapshot(&self, run: &RunId) -> Result<Option<Snapshot>, JournalError> {
        let id = run.clone();
        let pushed = self
            .on_pool(run.as_str(), move |vtable| {
                let load = vtable.load_snapshot.expect("checked at registration");
                // SAFETY: the host's function with its pointer, a live view and a live sink.
                filled(1, |sink| unsafe { load(vtable.user_data, runlet_str::of(id.as_str()), sink) })
            })
            .await?;
        Ok(pushed.into_iter().next().map(|(upto_seq, bytes)| Snapshot { upto_seq, bytes: Arc::from(bytes) }))
    }

    async fn runs(&self) -> Result<Vec<RunEntry>, JournalError> {
        let Some(runs) = self.callbacks.vtable.runs else {
            return Err(storage("this journal cannot list its runs: its vtable has no `runs`".to_owned()));
        };
        let pushed = self
            .on_pool("", move |vtable| {
                // SAFETY: the host's function with its pointer and a live sink.
                filled(usize::MAX, |sink| unsafe { runs(vtable.user_data, sink) })
            })
            .await?;
        pushed
            .into_iter()
            .map(|(last_seq, id)| {
                let id = String::from_utf8(id)
                    .map_err(|_| storage("a run id the journal listed is not UTF-8".to_owned()))?;
                Ok(RunEntry { run_id: RunId::new(id), last_seq, last_append_unix_ms: None, owner: None })
            })
            .collect()
    }

    async fn store_snapshot(&self, run: &RunId, snapshot: Snapshot) -> Result<(), JournalError> {
        let id = run.clone();
        self.on_pool(run.as_str(), move |vtable| {
            let store = vtable.store_snapshot.expect("checked at registration");
            let bytes = runlet_bytes { ptr: snapshot.bytes.as_ptr(), len: snapshot.bytes.len() };
            // SAFETY: the host's function with its pointer and views of live data.
            let returned =
                unsafe { store(vtable.user_data, runlet_str::of(id.as_str()), snapshot.upto_seq, bytes) };
            // SAFETY: the callback hands its returned error over.
            unsafe { taken(returned, 0, 0) }
        })
        .await
    }
}

/// Runs the shared journal conformance suite (the checks Runlet's own in-memory and SQLite
/// journals pass) against a host journal, then releases it: the vtable's `drop` is called once
/// on every path. Returns NULL when every check passes, else a `RUNLET_ERR_JOURNAL` error naming
/// the first failed check. Blocks; refused from inside a Runlet callback.
///
/// Thread-safety: any thread; the journal's callbacks run on other threads meanwhile.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_journal_conformance_check(
    journal: *const runlet_journal_vtable,
) -> *mut runlet_error {
    ffi_boundary!(Result<(), Error>, {
        // SAFETY: the caller passes NULL or a readable vtable; adopted, it is released once.
        let journal = unsafe { HostJournal::adopt(journal) }?;
        refuse_blocking("runlet_journal_conformance_check")?;
        // The suite runs on a thread of its own (which also releases the journal), so the host's
        // thread is left as it was.
        let current = Arc::new(Mutex::new(""));
        let starting = Arc::clone(&current);
        let checked = std::thread::spawn(move || {
            let pool = tokio::runtime::Builder::new_current_thread()
                .build()
                .map_err(|e| Error::new(RUNLET_ERR_JOURNAL, format!("the suite's runtime did not start: {e}")))?;
            pool.block_on(suite::check_telling(&journal, |check| *starting.lock() = check));
            Ok(())
        })
        .join();
        checked.unwrap_or_else(|payload| {
            Err(Error::new(
                RUNLET_ERR_JOURNAL,
                format!(
                    "the journal fails the conformance suite's check `{}`: {}",
                    current.lock().replace('_', " "),
                    panic_message(payload.as_ref())
                ),
            ))
        })
    })
}
