//! Knows whether the current thread is inside a host callback, so blocking functions called
//! from one return `RUNLET_ERR_INVALID_ARGUMENT` instead of deadlocking.

use std::cell::Cell;

use crate::error::{Error, RUNLET_ERR_INVALID_ARGUMENT};

thread_local! {
    static CALLBACK_DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// Calls into the host: `call` runs marked as a callback on this thread.
pub(crate) fn call_host<R>(call: impl FnOnce() -> R) -> R {
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            CALLBACK_DEPTH.with(|depth| depth.set(depth.get() - 1));
        }
    }
    CALLBACK_DEPTH.with(|depth| depth.set(depth.get() + 1));
    let _leave = Leave;
    call()
}

pub(crate) fn in_callback() -> bool {
    CALLBACK_DEPTH.with(|depth| depth.get() > 0)
}

/// Refuses `function`, a blocking one, inside a callback.
pub(crate) fn refuse_blocking(function: &str) -> Result<(), Error> {
    if in_callback() {
        return Err(Error::new(
            RUNLET_ERR_INVALID_ARGUMENT,
            format!("`{function}` blocks and cannot be called from inside a Runlet callback"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocking_is_refused_only_inside_callbacks() {
        assert!(refuse_blocking("runlet_run_wait").is_ok());
        let inside = call_host(|| call_host(|| refuse_blocking("runlet_run_wait")));
        assert_eq!(inside.expect_err("refused").code(), RUNLET_ERR_INVALID_ARGUMENT);
        assert!(!in_callback(), "the depth unwinds");
    }
}
