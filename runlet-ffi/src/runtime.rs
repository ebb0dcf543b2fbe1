//! The `runlet_runtime` handle: options in, a registry, the host's executor, journal and
//! listener adopted, the engine's `Runtime` built; freeing cancels and awaits its runs, then
//! tears it down (on a helper thread when freed from inside a callback).

use std::sync::Arc;
use std::time::Duration;

use runlet::diag::render_json;
use runlet::engine::{Limits, RunSettings, ToolExecutor};
use runlet::journal::Journal;
use runlet::observe::ViewPolicy;
use runlet::registry::{Registry, RegistryOptions};
use runlet::runtime::{Runtime, RuntimeBuilder};
use runlet::value::DigestKey;

use crate::boundary::Poison;
use crate::error::{
    Error, RUNLET_ERR_INTERNAL, RUNLET_ERR_INVALID_ARGUMENT, RUNLET_ERR_NULL_ARGUMENT, RUNLET_ERR_REGISTRY,
    limits_error, runlet_error,
};
use crate::events::{Dispatcher, Listener, ListenerSink, runlet_event_listener};
use crate::executor::{HostExecutor, runlet_tool_executor};
use crate::handle::{Handle, into_raw, out_param, take};
use crate::journal::{HostJournal, runlet_journal_vtable};
use crate::mcp::{McpRequest, Servers};
use crate::page::Pages;
use crate::reentrancy::in_callback;
use crate::strings::{runlet_bytes, runlet_str};
use crate::versioned::{Versioned, copy_in};
use crate::view::{runlet_view_policy, view_policy};

/// How boundaries retry and how long tool calls may take (spec §2.8, §5.4). The number of
/// retries is the program's (`boundary retry N`), capped by the `retries` limit.
///
/// - `backoff_base_ms`, `backoff_factor`, `backoff_cap_ms`: retry *k* of a boundary waits
///   `min(cap, base × factor^(k-1))`, and a tool's `retry_after` is capped by `cap`. All 0: no
///   backoff. With a base, the cap is required; a factor of 0 is taken as 1.
/// - `tool_timeout_ms`: the deadline of each tool call (a call past it fails with the retryable
///   `RL6102`); 0 for none.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct runlet_retry_policy {
    pub backoff_base_ms: u32,
    pub backoff_factor: u32,
    pub backoff_cap_ms: u32,
    pub tool_timeout_ms: u32,
}

/// What a runtime is built from. Initialize with `RUNLET_RUNTIME_OPTIONS_INIT`, which sets
/// `struct_size`; an unknown `struct_size` is refused with `RUNLET_ERR_VERSION_MISMATCH`.
///
/// - `registry_json`: the tools and host input schemas (INTERFACES.md §2). Required.
/// - `executor`: runs tool calls. Required unless MCP servers answer every tool.
/// - `journal`: where runs are journaled through host callbacks; NULL for the built-in SQLite
///   journal when `sqlite_journal_path` is set, else an in-memory journal, which keeps every
///   run that has not ended and the latest 1,024 that have (older ones are forgotten, so memory
///   stays flat however many runs a long-lived host runs).
/// - `listener`: receives run events; NULL for none.
/// - `worker_threads`: threads of the runtime's pool; 0 for one per core.
/// - `default_loop_limit`: concurrency of a `for` without `limit`; 0 for 16.
/// - `retry`: backoff between boundary retries and the tool-call deadline; zeroed for none.
/// - `event_queue_capacity`: events queued per consumer before dropping; 0 for 1024, and at
///   least 2 (a dropped-events marker and the event after it).
/// - `limits_json`: the execution limits of every run (spec §10) as a JSON object of caps, such
///   as `{"tool_calls": 100, "wall_clock_ms": 30000}`; keys are `tool_calls`,
///   `node_evaluations`, `depth`, `concurrency`, `wall_clock_ms`, `loop_iterations`,
///   `graph_nodes`, `graph_edges`, `source_bytes`, `call_input_bytes`, `call_output_bytes`,
///   `retries`, `journal_bytes`, `conversion_depth`, the value-size caps `value_bytes`,
///   `list_length`, `string_bytes`, `object_entries` (which apply with safe defaults when not
///   set: 64 MiB, 1,000,000 elements, 16 MiB, 1,000,000 entries), and the compile-time
///   `parse_nesting`, `operator_chain`, `analysis_work` and `diagnostics` (defaults 128, 256,
///   1,000,000 and 100; crossing one is a compile diagnostic; the first two take at most 256
///   and 512, and a larger cap is refused like a bad one). Empty for none. A run crossing
///   one fails with `RUNLET_ERR_LIMIT`.
/// - `view`: what listeners and pull queues may see of values and value-derived metadata;
///   zeroed, public only (tool outputs labelled sensitive or secret are redacted).
/// - `digest_key`, `digest_key_id`: the key that operation ids and loop keys of sensitive or
///   secret values are keyed with (HMAC-SHA-256, spec §6.2). Journals pin the id, never the key,
///   and replay only under the same id. An empty id names the key by its fingerprint
///   (`fp-<16 hex>`, as `runlet --digest-key-file` does); ids are 1 to 64 of `A-Z a-z 0-9 . _ -`.
///   No key: a random key of this runtime, so its runs' keyed ids cannot be recomputed by
///   another process. A bad key or id is `RUNLET_ERR_INVALID_ARGUMENT`.
/// - `sqlite_journal_path`, `sqlite_durability`: journal runs in the SQLite file at this path
///   (created when missing; several processes may share one), committing under the
///   `RUNLET_DURABILITY_*` mode; empty for none. Giving both a path and `journal` is
///   `RUNLET_ERR_INVALID_ARGUMENT`; a file that is no journal `RUNLET_ERR_JOURNAL`.
/// - `snapshot_every`: how many journaled events a run's snapshots are at least apart (spec
///   §5.3): a resume restores the latest that verifies and replays only what follows it. 0 for
///   the default (every 10,000 events, none for the in-memory journal); `RUNLET_SNAPSHOTS_OFF`
///   for none.
/// - `mcp_servers_json`, `mcp_trusted_json`, `mcp_flags`: MCP servers to attach — the
///   `{"mcpServers": {NAME: {"command", "args", "env"} | {"url", "headers"}}}` JSON other MCP
///   clients read; empty for none. Their tools join the registry as `NAME.<tool>` (with
///   `registry_json`, then optional, laid over them: its entries override what they name, such
///   as a tool's `execution`), and calls of them go to the servers; every other tool's to
///   `executor`. A server named in the JSON array `mcp_trusted_json` has its annotations
///   believed (`readOnlyHint`: pure, `idempotentHint`: idempotent); other tools are `unsafe`, or
///   `at_most_once` with `RUNLET_MCP_AT_MOST_ONCE`. A tool that does not import is left out
///   unless `RUNLET_MCP_STRICT`. The servers start before `runlet_runtime_new` returns and stop
///   when the runtime is freed. A server that fails is `RUNLET_ERR_MCP` (details: its `RL86xx`
///   code); a library built without the `mcp` feature refuses the option with
///   `RUNLET_ERR_UNSUPPORTED`. Writes to stdio servers happen on Runlet's threads with
///   `SIGPIPE` blocked, so a server that exits never signals the host.
/// - `postgres_journal_url`, `postgres_lease_ms`: journal runs in the PostgreSQL database at
///   this URL (`postgres://user@host:port/db`), shared with other processes and machines, its
///   claims held by leases of `postgres_lease_ms` (0 for 10 s); empty for none. Such a runtime
///   can submit runs (`runlet_runtime_submit`) and run the journal's runs in workers
///   (`runlet_worker_new`). Giving it with another journal is `RUNLET_ERR_INVALID_ARGUMENT`; a
///   database that cannot be opened as a journal `RUNLET_ERR_JOURNAL`; a library built without
///   the `postgres` feature refuses it with `RUNLET_ERR_UNSUPPORTED`.
/// - `owner`: the name the runtime claims its runs under in its journal; empty for this
///   process's name. Runtimes of one process that share a PostgreSQL journal's runs as workers
///   need names of their own.
/// - `runtime_flags`: `RUNLET_RUNTIME_NO_LIVE_GRAPH` for runs that fold no live graph, which
///   saves that work on every event: events, listeners and pull queues are as before, but
///   `runlet_run_snapshot_json` and the runs' pages show a run's state and no nodes (the
///   snapshot's `integrity_errors` say why) while `runlet_run_journal_snapshot_json` folds the
///   graph from the journal. Unknown bits are `RUNLET_ERR_INVALID_ARGUMENT`.
/// - `mcp_silence_timeout_ms`: how long a call of an MCP tool may go with neither its answer nor
///   a progress notification before it fails (`RL6102`, retryable and uncertain) and its server
///   is told to cancel it: 0 for the default (five minutes), `RUNLET_MCP_SILENCE_FOREVER` to
///   wait for ever.
/// - `mcp_startup_timeout_ms`: how long each MCP server has to start and complete its
///   handshake, and again to list its tools: 0 for the default (30 s). A server that `npx` must
///   first download may need more.
///
/// The structs pointed to are copied during `runlet_runtime_new`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct runlet_runtime_options {
    pub struct_size: usize,
    pub registry_json: runlet_str,
    pub executor: *const runlet_tool_executor,
    pub journal: *const runlet_journal_vtable,
    pub listener: *const runlet_event_listener,
    pub worker_threads: u32,
    pub default_loop_limit: u32,
    pub event_queue_capacity: u32,
    pub limits_json: runlet_str,
    pub retry: runlet_retry_policy,
    pub view: runlet_view_policy,
    pub digest_key_id: runlet_str,
    pub digest_key: runlet_bytes,
    pub sqlite_journal_path: runlet_str,
    pub sqlite_durability: u32,
    pub snapshot_every: u64,
    pub mcp_servers_json: runlet_str,
    pub mcp_trusted_json: runlet_str,
    pub mcp_flags: u32,
    pub postgres_journal_url: runlet_str,
    pub postgres_lease_ms: u32,
    pub owner: runlet_str,
    pub runtime_flags: u32,
    pub mcp_silence_timeout_ms: u64,
    pub mcp_startup_timeout_ms: u64,
}

/// `runtime_flags` of the runtime options: runs fold no live graph (`RuntimeBuilder::live_graph`).
pub const RUNLET_RUNTIME_NO_LIVE_GRAPH: u32 = 1;

/// `snapshot_every` of the runtime options: runs write no snapshots.
pub const RUNLET_SNAPSHOTS_OFF: u64 = u64::MAX;

// SAFETY: `struct_size` first; integers, pointers, views and nested integer structs are valid zeroed.
unsafe impl Versioned for runlet_runtime_options {
    const NAME: &'static str = "runlet_runtime_options";
    const KNOWN_SIZES: &'static [usize] = &[
        std::mem::offset_of!(runlet_runtime_options, view),
        std::mem::offset_of!(runlet_runtime_options, sqlite_journal_path),
        std::mem::offset_of!(runlet_runtime_options, snapshot_every),
        std::mem::offset_of!(runlet_runtime_options, mcp_servers_json),
        std::mem::offset_of!(runlet_runtime_options, postgres_journal_url),
        std::mem::offset_of!(runlet_runtime_options, runtime_flags),
        std::mem::offset_of!(runlet_runtime_options, mcp_silence_timeout_ms),
        std::mem::size_of::<runlet_runtime_options>(),
    ];
}

/// The host's digest key from `options`, if it gives one: its id (the fingerprint when no id is
/// given) and its secret, both checked.
///
/// # Safety
/// The views in `options` point at their `len` readable bytes.
unsafe fn digest_key(options: &runlet_runtime_options) -> Result<Option<(String, &[u8])>, Error> {
    // SAFETY: forwarded from the caller.
    let (id, secret) = unsafe {
        (options.digest_key_id.to_str("digest_key_id")?, options.digest_key.to_slice("digest_key")?)
    };
    if id.is_empty() && secret.is_empty() {
        return Ok(None);
    }
    let key = if id.is_empty() { DigestKey::fingerprinted(secret) } else { DigestKey::new(id, secret) };
    let key = key.map_err(|error| {
        Error::new(RUNLET_ERR_INVALID_ARGUMENT, format!("`digest_key`: {}", error.message()))
    })?;
    Ok(Some((key.id().to_owned(), secret)))
}

const DEFAULT_EVENT_QUEUE_CAPACITY: usize = 1024;

/// A runtime's parts: the engine and the listener's dispatcher.
#[derive(Debug)]
pub(crate) struct Instance {
    /// Taken by `drop`, which decides on which thread the engine is torn down. Shared with the
    /// runtime's workers.
    engine: Option<Arc<Runtime>>,
    /// The PostgreSQL journal of `postgres_journal_url`, for workers.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    postgres: Option<crate::postgres::Shared>,
    dispatcher: Option<Dispatcher>,
    event_capacity: usize,
    /// What event consumers may see; every event is redacted under it before it is queued.
    view: Arc<ViewPolicy>,
    poison: Arc<Poison>,
    /// Stopped after the engine, once no run calls them any more.
    servers: Option<Servers>,
    /// The page servers its runs are shown in live.
    pages: Pages,
}

impl Instance {
    pub(crate) fn engine(&self) -> &Runtime {
        self.shared_engine()
    }

    pub(crate) fn shared_engine(&self) -> &Arc<Runtime> {
        self.engine.as_ref().expect("the engine lives until the runtime is dropped")
    }

    /// The PostgreSQL journal the runtime journals to, when its options named one.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) fn postgres(&self) -> Option<&crate::postgres::Shared> {
        self.postgres.as_ref()
    }

    /// Where runs push events for the listener, if there is one.
    pub(crate) fn listener(&self) -> Option<&ListenerSink> {
        self.dispatcher.as_ref().map(Dispatcher::sink)
    }

    pub(crate) fn event_capacity(&self) -> usize {
        self.event_capacity
    }

    pub(crate) fn view(&self) -> &Arc<ViewPolicy> {
        &self.view
    }

    pub(crate) fn pages(&self) -> &Pages {
        &self.pages
    }
}

impl Drop for Instance {
    /// Cancels the runs still running and waits for them to end, then stops the dispatcher and
    /// the engine's pool, waiting for their threads (so every host `drop` has run on return).
    /// From a callback or a pool thread that would wait on itself, so there a helper thread does it.
    fn drop(&mut self) {
        let engine = self.engine.take();
        let dispatcher = self.dispatcher.take();
        let servers = self.servers.take();
        let teardown = move || {
            if let Some(engine) = &engine {
                engine.shutdown();
            }
            if let Some(dispatcher) = dispatcher {
                dispatcher.stop();
            }
            drop(engine);
            if let Some(servers) = servers {
                servers.shutdown();
            }
        };
        if in_callback() || tokio::runtime::Handle::try_current().is_ok() {
            std::thread::spawn(teardown);
        } else {
            teardown();
        }
    }
}

/// A runtime: compiles programs and starts runs. All its functions are safe to call from any
/// thread concurrently.
#[derive(Debug)]
pub struct runlet_runtime {
    instance: Instance,
}

impl Handle for runlet_runtime {
    const NAME: &'static str = "runlet_runtime";
    fn poison(&self) -> &Arc<Poison> {
        &self.instance.poison
    }
}

impl runlet_runtime {
    pub(crate) fn instance(&self) -> &Instance {
        &self.instance
    }
}

/// The host structs of `options`, each adopted or (when readable) released, so every `drop`
/// runs exactly once whatever fails.
struct Adopted {
    executor: Option<Result<HostExecutor, Error>>,
    journal: Option<Result<HostJournal, Error>>,
    listener: Option<Result<Listener, Error>>,
}

/// # Safety
/// The pointers in `options` are NULL or point at readable structs of their `struct_size`.
unsafe fn adopt_all(options: &runlet_runtime_options) -> Adopted {
    // SAFETY: forwarded from the caller.
    unsafe {
        Adopted {
            executor: (!options.executor.is_null()).then(|| HostExecutor::adopt(options.executor)),
            journal: (!options.journal.is_null()).then(|| HostJournal::adopt(options.journal)),
            listener: (!options.listener.is_null()).then(|| Listener::adopt(options.listener)),
        }
    }
}

/// Applies the retry policy to `builder`.
fn with_retry_policy(
    mut builder: RuntimeBuilder,
    retry: runlet_retry_policy,
) -> Result<RuntimeBuilder, Error> {
    let ms = |ms: u32| Duration::from_millis(u64::from(ms));
    if retry.backoff_base_ms != 0 || retry.backoff_cap_ms != 0 {
        if retry.backoff_base_ms == 0 || retry.backoff_cap_ms == 0 {
            return Err(Error::new(
                RUNLET_ERR_INVALID_ARGUMENT,
                "`retry.backoff_base_ms` and `retry.backoff_cap_ms` are set together",
            ));
        }
        let factor = retry.backoff_factor.max(1);
        builder = builder.retry_backoff(ms(retry.backoff_base_ms), factor, ms(retry.backoff_cap_ms));
    }
    if retry.tool_timeout_ms != 0 {
        builder = builder.tool_timeout(ms(retry.tool_timeout_ms));
    }
    Ok(builder)
}

/// # Safety
/// As for `runlet_runtime_new`.
unsafe fn build(options: &runlet_runtime_options, adopted: Adopted) -> Result<Instance, Error> {
    if options.runtime_flags & !RUNLET_RUNTIME_NO_LIVE_GRAPH != 0 {
        return Err(Error::new(
            RUNLET_ERR_INVALID_ARGUMENT,
            format!(
                "`runtime_flags` has unknown bits {:#x}",
                options.runtime_flags & !RUNLET_RUNTIME_NO_LIVE_GRAPH
            ),
        ));
    }
    crate::telemetry::install()?;
    let executor = adopted.executor.transpose()?;
    let journal = adopted.journal.transpose()?;
    let listener = adopted.listener.transpose()?;
    // SAFETY: the caller passes valid views.
    let (registry_text, limits_text, mcp) = unsafe {
        let mcp = McpRequest {
            servers_json: options.mcp_servers_json.to_str("mcp_servers_json")?,
            trusted_json: options.mcp_trusted_json.to_str("mcp_trusted_json")?,
            flags: options.mcp_flags,
            silence_timeout_ms: options.mcp_silence_timeout_ms,
            startup_timeout_ms: options.mcp_startup_timeout_ms,
        };
        (options.registry_json.to_str("registry_json")?, options.limits_json.to_str("limits_json")?, mcp)
    };
    let limits = Limits::from_json(limits_text).map_err(|error| limits_error("limits_json", error))?;
    let view = view_policy(options.view)?;
    // SAFETY: the caller passes valid views.
    let key = unsafe { digest_key(options) }?;
    let servers = Servers::attach(mcp)?;
    let registry = match &servers {
        Some(servers) => servers.registry(registry_text)?,
        None => host_registry(registry_text)?,
    };
    let executor = tool_executor(&registry, executor, servers.as_ref())?;
    let chosen =
        [journal.is_some(), options.sqlite_journal_path.len != 0, options.postgres_journal_url.len != 0];
    if chosen.iter().filter(|set| **set).count() > 1 {
        return Err(Error::new(
            RUNLET_ERR_INVALID_ARGUMENT,
            "more than one of `journal`, `sqlite_journal_path` and `postgres_journal_url` is set: choose one journal",
        ));
    }
    // SAFETY: the caller passes valid views.
    let sqlite = unsafe { crate::sqlite::open(options.sqlite_journal_path, options.sqlite_durability) }?;
    // SAFETY: as above.
    let postgres = unsafe { crate::postgres::open(options.postgres_journal_url, options.postgres_lease_ms) }?;
    // SAFETY: as above.
    let owner = unsafe { options.owner.to_str("owner") }?;
    let journal: Option<Arc<dyn Journal>> = match (journal, &postgres) {
        (Some(host), _) => Some(Arc::new(host)),
        #[cfg(feature = "postgres")]
        (None, Some(postgres)) => Some(Arc::new(postgres.clone())),
        _ => sqlite,
    };
    let mut builder = Runtime::builder().registry(registry).executor(executor).limits(limits);
    // Tools' and resource groups' caps hold over every process on the database.
    #[cfg(feature = "postgres")]
    if let Some(postgres) = &postgres {
        builder = builder.shared_permits(Arc::new(postgres.permits()));
    }
    if !owner.is_empty() {
        builder = builder.owner(owner);
    }
    if let Some(journal) = journal {
        builder = builder.journal(journal);
    }
    if options.default_loop_limit != 0 {
        builder = builder.settings(RunSettings {
            default_loop_limit: options.default_loop_limit,
            ..RunSettings::default()
        });
    }
    builder = with_retry_policy(builder, options.retry)?;
    if let Some((id, secret)) = key {
        builder = builder.digest_key(&id, secret);
    }
    if options.worker_threads != 0 {
        builder = builder.worker_threads(options.worker_threads as usize);
    }
    builder = builder.live_graph(options.runtime_flags & RUNLET_RUNTIME_NO_LIVE_GRAPH == 0);
    match options.snapshot_every {
        0 => {}
        RUNLET_SNAPSHOTS_OFF => builder = builder.snapshot_every(0),
        every => builder = builder.snapshot_every(every),
    }
    let event_capacity = match options.event_queue_capacity {
        0 => DEFAULT_EVENT_QUEUE_CAPACITY,
        n => n as usize,
    };
    let engine = builder
        .build()
        .map_err(|e| Error::new(RUNLET_ERR_INTERNAL, format!("the runtime could not start: {e}")))?;
    let dispatcher = listener
        .map(|listener| listener.start(event_capacity))
        .transpose()
        .map_err(|e| Error::new(RUNLET_ERR_INTERNAL, format!("the event dispatcher could not start: {e}")))?;
    Ok(Instance {
        engine: Some(Arc::new(engine)),
        postgres,
        dispatcher,
        event_capacity,
        view: Arc::new(view),
        poison: Arc::default(),
        servers,
        pages: Pages::default(),
    })
}

/// The registry of `registry_json` alone.
fn host_registry(text: &str) -> Result<Registry, Error> {
    Registry::from_json_str(text, &RegistryOptions::default()).map(|loaded| loaded.registry).map_err(
        |error| {
            let diagnostics = error.diagnostics(text);
            let first = diagnostics.first().map_or_else(String::new, |d| format!(": {}", d.message));
            Error::new(RUNLET_ERR_REGISTRY, format!("the registry has errors{first}"))
                .with_details_json(render_json(text, &diagnostics))
        },
    )
}

/// The executor of every tool of `registry`: the host's, with the MCP servers' tools routed to
/// them. Without a host executor the servers must answer every tool.
fn tool_executor(
    registry: &Registry,
    host: Option<HostExecutor>,
    servers: Option<&Servers>,
) -> Result<Arc<dyn ToolExecutor>, Error> {
    let host = host.map(|host| Arc::new(host) as Arc<dyn ToolExecutor>);
    let Some(servers) = servers else {
        return host.ok_or_else(|| {
            Error::new(RUNLET_ERR_NULL_ARGUMENT, "`runlet_runtime_options.executor` is NULL")
        });
    };
    if host.is_none() {
        let served = servers.tool_names();
        let unserved: Vec<String> = registry
            .tools()
            .filter(|(id, tool)| {
                registry.intrinsic(*id).is_none() && !served.contains(&tool.name.to_string())
            })
            .map(|(_, tool)| format!("`{}`", tool.name))
            .collect();
        if !unserved.is_empty() {
            return Err(Error::new(
                RUNLET_ERR_NULL_ARGUMENT,
                format!(
                    "`runlet_runtime_options.executor` is NULL, and no MCP server answers {}",
                    unserved.join(", ")
                ),
            ));
        }
    }
    Ok(servers.executor(host))
}

/// Creates a runtime from `options` and stores it in `*out` (NULL on failure).
///
/// The executor, journal and listener structs are copied; each one's `drop` runs exactly once —
/// when the runtime is gone, or before this function returns an error. (A struct that is NULL
/// or has an unknown `struct_size` is not read at all, so its `drop` cannot run.) Registry
/// errors are `RUNLET_ERR_REGISTRY` with the diagnostics report (INTERFACES.md §1) about
/// `registry_json` as details.
///
/// In a library built with OTLP export (the `otlp` feature), the process's first runtime sets
/// it up from `OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_PROTOCOL` (`http/protobuf` or
/// `http/json`) and `OTEL_SERVICE_NAME` (docs/tracing.md); a protocol it does not speak fails
/// this call with `RUNLET_ERR_INVALID_ARGUMENT`, and so does every later one.
///
/// Thread-safety: any thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_runtime_new(
    options: *const runlet_runtime_options,
    out: *mut *mut runlet_runtime,
) -> *mut runlet_error {
    ffi_boundary!(Result<(), Error>, {
        // SAFETY: the caller passes NULL or a writable out-pointer: NULL on every failure, also
        // for options that cannot be read.
        if let Some(slot) = unsafe { out.as_mut() } {
            *slot = std::ptr::null_mut();
        }
        // SAFETY: the caller passes NULL or a readable options struct.
        let options = unsafe { copy_in(options) }?;
        // SAFETY: as above; each adopted struct's drop then runs exactly once.
        let adopted = unsafe { adopt_all(&options) };
        // SAFETY: the caller passes a writable out-pointer or NULL.
        let out = match unsafe { out_param(out) } {
            Ok(out) => out,
            Err(error) => {
                drop(adopted);
                return Err(error);
            }
        };
        // SAFETY: as above.
        let instance = unsafe { build(&options, adopted) }?;
        *out = into_raw(runlet_runtime { instance });
        Ok(())
    })
}

/// Frees the runtime. NULL is a no-op; free at most once. Runs still running are cancelled and
/// awaited; then the runtime's threads stop and the executor's, journal's and listener's `drop`s
/// run, and a library built with OTLP export sends the spans and metrics still pending, all
/// before this returns — except from inside a Runlet callback, where that happens on a
/// helper thread after the callback returns. Run handles stay valid (and ended) until freed.
///
/// Thread-safety: any thread; not concurrently with other calls on the same handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_runtime_free(runtime: *mut runlet_runtime) {
    ffi_boundary!((), {
        // SAFETY: the caller passes NULL or a live handle, freed once.
        drop(unsafe { take(runtime) });
        // The runtime's last spans ended as its runs did.
        crate::telemetry::flush();
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use runlet::engine::LimitKey;

    use crate::error::RUNLET_ERR_INVALID_JSON;

    #[test]
    fn core_refusals_of_limits_map_to_error_codes() {
        let limits_from_json =
            |what: &str, text: &str| Limits::from_json(text).map_err(|e| limits_error(what, e));
        let limits =
            limits_from_json("limits_json", r#"{"tool_calls": 3, "wall_clock_ms": 0}"#).expect("valid");
        assert_eq!(limits.get(LimitKey::ToolCalls), Some(3));
        assert_eq!(limits.get(LimitKey::WallClockMs), Some(0));
        assert_eq!(limits.get(LimitKey::Retries), None);
        assert_eq!(limits_from_json("limits_json", "").expect("empty"), Limits::new());
        let unknown = limits_from_json("limits_json", r#"{"calls": 3}"#).expect_err("unknown key");
        assert_eq!(unknown.code(), RUNLET_ERR_INVALID_ARGUMENT);
        assert!(unknown.message().contains("tool_calls, node_evaluations"), "{}", unknown.message());
        for bad in [r#"{"retries": -1}"#, r#"{"retries": 1.5}"#, r#"{"retries": "2"}"#] {
            assert_eq!(limits_from_json("l", bad).expect_err(bad).code(), RUNLET_ERR_INVALID_ARGUMENT);
        }
        assert_eq!(limits_from_json("l", "[1]").expect_err("array").code(), RUNLET_ERR_INVALID_JSON);
    }

    #[test]
    fn the_header_documents_every_limit_key() {
        let header = include_str!("../../include/runlet.h");
        let start = header.find("`limits_json`: the execution limits").expect("the limits paragraph");
        let paragraph = &header[start..start + header[start..].find("RUNLET_ERR_LIMIT").expect("its end")];
        for key in LimitKey::ALL {
            assert!(
                paragraph.contains(&format!("`{}`", key.as_str())),
                "`{}` is not documented",
                key.as_str()
            );
        }
    }
}
