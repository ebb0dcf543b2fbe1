//! The live graph page for C hosts (`runlet-web`, INTERFACES.md §4.4): `runlet_page_server_start`
//! serves a runtime's runs — those of its journal, and the runs it starts or resumes from then on
//! live — on a thread of the server's own, as `runlet serve` and `runlet run --serve` do, under
//! the runtime's view policy. Behind the `web` feature; without it starting one is refused with
//! `RUNLET_ERR_UNSUPPORTED`.

// Without the `web` feature the catalogs and the server's parts are never read.
#![cfg_attr(not(feature = "web"), allow(dead_code, unused_imports))]

use std::sync::Arc;

use parking_lot::Mutex;
use runlet::observe::RunObserver;

use crate::boundary::Poison;
#[cfg(not(feature = "web"))]
use crate::error::RUNLET_ERR_UNSUPPORTED;
use crate::error::runlet_error;
use crate::error::{Error, RUNLET_ERR_INVALID_ARGUMENT};
use crate::handle::{Handle, borrow, into_raw, out_param, take};
use crate::runtime::runlet_runtime;
use crate::strings::runlet_str;

#[cfg(feature = "web")]
type Catalog = runlet_web::Catalog;
#[cfg(not(feature = "web"))]
type Catalog = ();

/// The catalogs of a runtime's page servers, which its runs are shown in live.
#[derive(Debug, Default)]
pub(crate) struct Pages {
    catalogs: Mutex<Vec<std::sync::Weak<Catalog>>>,
}

impl Pages {
    /// Shows the run `observer` follows, whose program is `source`, in every page server of the
    /// runtime that is still running.
    pub(crate) fn show(&self, observer: &RunObserver, source: &str) {
        let mut catalogs = self.catalogs.lock();
        catalogs.retain(|catalog| catalog.strong_count() > 0);
        #[cfg(feature = "web")]
        for catalog in catalogs.iter().filter_map(std::sync::Weak::upgrade) {
            catalog.add_live(observer.clone(), source);
        }
        #[cfg(not(feature = "web"))]
        let _ = (observer, source);
    }

    fn add(&self, catalog: &Arc<Catalog>) {
        self.catalogs.lock().push(Arc::downgrade(catalog));
    }
}

/// A page server of a runtime's runs, serving until it is freed.
#[derive(Debug)]
pub struct runlet_page_server {
    #[cfg(feature = "web")]
    server: runlet_web::Background,
    poison: Arc<Poison>,
}

impl Handle for runlet_page_server {
    const NAME: &'static str = "runlet_page_server";
    fn poison(&self) -> &Arc<Poison> {
        &self.poison
    }
}

/// Starts serving the graph page of `runtime`'s runs at `addr` (`HOST:PORT`; port 0 picks a free
/// one; empty for `127.0.0.1:0`, loopback) and stores the server in `*out` (NULL on failure):
/// the journal's runs, and every run `runtime` starts or resumes from now on live. Its address
/// is `runlet_page_server_url`. What the pages show of values is what the runtime's `view`
/// allows. An address that cannot be bound is `RUNLET_ERR_INVALID_ARGUMENT`, naming it; a
/// library built without the `web` feature gives `RUNLET_ERR_UNSUPPORTED`. The server runs on a
/// thread of its own and never makes a run wait. Free it before the runtime.
///
/// Thread-safety: any thread, concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_page_server_start(
    runtime: *const runlet_runtime,
    addr: runlet_str,
    out: *mut *mut runlet_page_server,
) -> *mut runlet_error {
    ffi_boundary!(Result<(), Error>, {
        // SAFETY: the caller passes a writable out-pointer, a live handle and a valid view.
        let (out, runtime, addr) = unsafe { (out_param(out)?, borrow(runtime)?, addr.to_str("addr")?) };
        *out = into_raw(start(runtime, addr)?);
        Ok(())
    })
}

#[cfg(feature = "web")]
fn start(runtime: &runlet_runtime, addr: &str) -> Result<runlet_page_server, Error> {
    let instance = runtime.instance();
    let journal = Arc::clone(instance.engine().journal());
    let view = runlet::observe::ViewPolicy::clone(instance.view());
    let catalog = Arc::new(Catalog::new(Some(journal), view));
    let addr = if addr.is_empty() { runlet_web::DEFAULT_ADDR } else { addr };
    let server = runlet_web::Background::start(addr, Arc::clone(&catalog))
        .map_err(|error| Error::new(RUNLET_ERR_INVALID_ARGUMENT, error.to_string()))?;
    instance.pages().add(&catalog);
    Ok(runlet_page_server { server, poison: Arc::default() })
}

#[cfg(not(feature = "web"))]
fn start(_runtime: &runlet_runtime, _addr: &str) -> Result<runlet_page_server, Error> {
    Err(Error::new(RUNLET_ERR_UNSUPPORTED, "the graph page needs a librunlet built with the `web` feature"))
}

/// The server's address, `http://HOST:PORT` (the runs page is under `/runs`, a run's page under
/// `/runs/RUN_ID`). Borrowed: valid until `runlet_page_server_free(server)`. Empty for NULL.
///
/// Thread-safety: any thread, concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_page_server_url(server: *const runlet_page_server) -> runlet_str {
    ffi_boundary!(runlet_str, {
        // SAFETY: the caller passes NULL or a live handle.
        unsafe { borrow(server) }.map_or_else(|_| runlet_str::empty(), url)
    })
}

#[cfg(feature = "web")]
fn url(server: &runlet_page_server) -> runlet_str {
    runlet_str::of(server.server.url())
}

#[cfg(not(feature = "web"))]
fn url(_server: &runlet_page_server) -> runlet_str {
    runlet_str::empty()
}

/// Stops the server: its connections are closed and its thread joined before this returns.
/// NULL is a no-op; free at most once, not concurrently with other calls on it.
///
/// Thread-safety: any thread but a callback's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_page_server_free(server: *mut runlet_page_server) {
    ffi_boundary!((), {
        // SAFETY: the caller passes NULL or a live handle, freed once.
        drop(unsafe { take(server) });
    })
}

/// A library built without the feature refuses to serve.
#[cfg(all(test, not(feature = "web")))]
mod tests {
    use std::ptr::null_mut;

    use super::*;
    use crate::error::{runlet_error_code, runlet_error_free};
    use crate::runtime::{runlet_runtime_free, runlet_runtime_new, runlet_runtime_options};

    #[test]
    fn without_the_feature_the_page_is_unsupported() {
        let registry = r#"{"tools": []}"#;
        // SAFETY: zeroed options are valid (`Versioned`); the views are of live strings and the
        // handles are freed once.
        unsafe {
            let mut options: runlet_runtime_options = std::mem::zeroed();
            options.struct_size = size_of::<runlet_runtime_options>();
            options.registry_json = runlet_str::of(registry);
            unsafe extern "C" fn invoke(_: *mut std::ffi::c_void, _: *mut crate::executor::runlet_tool_call) {
            }
            let mut executor: crate::executor::runlet_tool_executor = std::mem::zeroed();
            executor.struct_size = size_of::<crate::executor::runlet_tool_executor>();
            executor.invoke = Some(invoke);
            options.executor = &executor;
            let mut runtime = null_mut();
            assert!(runlet_runtime_new(&options, &mut runtime).is_null(), "a runtime");
            let mut server = null_mut();
            let error = runlet_page_server_start(runtime, runlet_str::of(""), &mut server);
            assert_eq!(runlet_error_code(error), RUNLET_ERR_UNSUPPORTED);
            assert!(server.is_null());
            runlet_error_free(error);
            runlet_runtime_free(runtime);
        }
    }
}
