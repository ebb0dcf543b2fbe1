//! The `runlet_program` handle: source compiled against a runtime's registry into an immutable
//! program any number of runs can share; compile errors carry the diagnostics report.

use std::sync::Arc;

use runlet::analyze::Inputs;
use runlet::diag::render_json;
use runlet::runtime::Executable;

use crate::boundary::Poison;
use crate::error::{Error, RUNLET_ERR_COMPILE, inputs_error, runlet_error};
use crate::handle::{Handle, borrow, into_raw, out_param, take};
use crate::runtime::runlet_runtime;
use crate::strings::runlet_str;

/// A compiled program: immutable; any thread may start runs of it concurrently.
#[derive(Debug)]
pub struct runlet_program {
    executable: Executable,
    poison: Arc<Poison>,
}

impl Handle for runlet_program {
    const NAME: &'static str = "runlet_program";
    fn poison(&self) -> &Arc<Poison> {
        &self.poison
    }
}

impl runlet_program {
    pub(crate) fn executable(&self) -> &Executable {
        &self.executable
    }
}

/// Compiles `source` against the runtime's registry and stores the program in `*out` (NULL on
/// failure). `inputs_json` is a JSON object of sample host inputs whose schemas the registry
/// does not declare (their schemas are inferred from the values), or empty. A program that
/// does not compile gives `RUNLET_ERR_COMPILE` whose details are the diagnostics report of
/// INTERFACES.md §1 (byte offsets into `source`, fixes, candidates).
///
/// Thread-safety: any thread, concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_program_compile(
    runtime: *const runlet_runtime,
    source: runlet_str,
    inputs_json: runlet_str,
    out: *mut *mut runlet_program,
) -> *mut runlet_error {
    ffi_boundary!(Result<(), Error>, {
        // SAFETY: the caller passes a writable out-pointer, a live handle and valid views.
        let (out, runtime, source, inputs_text) = unsafe {
            (out_param(out)?, borrow(runtime)?, source.to_str("source")?, inputs_json.to_str("inputs_json")?)
        };
        let instance = runtime.instance();
        let inputs = Inputs::from_json(inputs_text, instance.engine().registry())
            .map_err(|error| inputs_error("inputs_json", error))?;
        let executable = instance.engine().compile(source, &inputs).map_err(|diagnostics| {
            let errors = diagnostics.iter().filter(|d| d.is_error()).count();
            let first = diagnostics.iter().find(|d| d.is_error()).map_or_else(String::new, |d| format!(": {} {}", d.code, d.message));
            Error::new(RUNLET_ERR_COMPILE, format!("the program has {errors} error(s){first}"))
                .with_details_json(render_json(source, &diagnostics))
        })?;
        *out = into_raw(runlet_program { executable, poison: Arc::default() });
        Ok(())
    })
}

/// Frees a program. NULL is a no-op; free at most once. Runs started from it are unaffected.
///
/// Thread-safety: any thread; not concurrently with other calls on the same handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_program_free(program: *mut runlet_program) {
    ffi_boundary!((), {
        // SAFETY: the caller passes NULL or a live handle, freed once.
        drop(unsafe { take(program) });
    })
}
