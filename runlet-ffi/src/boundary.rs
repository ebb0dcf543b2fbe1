//! The one panic boundary every exported function runs inside: a panic becomes a
//! `RUNLET_ERR_PANIC` error (or a typed default) and poisons every handle the call touched.

use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{Error, RUNLET_ERR_PANIC, runlet_code, runlet_error};
use crate::strings::{runlet_buf, runlet_str};

/// Runs an exported function's body, typed as `$ret`, inside the panic boundary.
macro_rules! ffi_boundary {
    ($ret:ty, $body:block) => {
        $crate::boundary::run(move || -> $ret { $body })
    };
}

/// Set once a panic escaped while a call was working on the handle; later calls refuse it.
#[derive(Debug, Default)]
pub(crate) struct Poison(AtomicBool);

impl Poison {
    pub(crate) fn is_set(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

thread_local! {
    /// The poison flags of the handles the boundary calls on this thread are working on.
    static TOUCHED: RefCell<Vec<Arc<Poison>>> = const { RefCell::new(Vec::new()) };
}

/// Records that the current call works on the handle owning `poison`.
pub(crate) fn touch(poison: &Arc<Poison>) {
    TOUCHED.with(|touched| touched.borrow_mut().push(Arc::clone(poison)));
}

/// What an exported function returns, and what it returns instead when its body panicked.
pub(crate) trait Returned {
    type C;
    fn into_c(self) -> Self::C;
    fn panicked(message: String) -> Self::C;
}

impl Returned for Result<(), Error> {
    type C = *mut runlet_error;

    fn into_c(self) -> *mut runlet_error {
        self.err().map_or(std::ptr::null_mut(), Error::into_raw)
    }

    fn panicked(message: String) -> *mut runlet_error {
        Error::new(RUNLET_ERR_PANIC, message).into_raw()
    }
}

/// Types whose panic value is a fixed default: NULL, 0, empty.
macro_rules! returned_default {
    ($($ty:ty => $default:expr),* $(,)?) => {$(
        impl Returned for $ty {
            type C = $ty;
            fn into_c(self) -> $ty {
                self
            }
            fn panicked(_: String) -> $ty {
                $default
            }
        }
    )*};
}

returned_default! {
    () => (),
    bool => false,
    runlet_code => 0,
    u64 => 0,
    i64 => -1,
    runlet_str => runlet_str::empty(),
    runlet_buf => runlet_buf::empty(),
}

impl<T> Returned for *mut T {
    type C = *mut T;
    fn into_c(self) -> *mut T {
        self
    }
    fn panicked(_: String) -> *mut T {
        std::ptr::null_mut()
    }
}

impl<T> Returned for *const T {
    type C = *const T;
    fn into_c(self) -> *const T {
        self
    }
    fn panicked(_: String) -> *const T {
        std::ptr::null()
    }
}

/// The message a panic carried.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

/// Runs `body`; on a panic poisons the handles it touched and returns the panic value.
pub(crate) fn run<R: Returned>(body: impl FnOnce() -> R) -> R::C {
    let mark = TOUCHED.with(|touched| touched.borrow().len());
    let result = catch_unwind(AssertUnwindSafe(body));
    let touched = TOUCHED.with(|touched| touched.borrow_mut().split_off(mark));
    match result {
        Ok(value) => value.into_c(),
        Err(payload) => {
            for poison in &touched {
                poison.0.store(true, Ordering::Release);
            }
            R::panicked(format!("Runlet panicked: {}", panic_message(payload.as_ref())))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::runlet_error_code;

    #[test]
    fn a_panic_becomes_a_panic_error_and_poisons_what_it_touched() {
        let touched = Arc::new(Poison::default());
        let untouched = Arc::new(Poison::default());
        let flag = Arc::clone(&touched);
        let err = run(move || -> Result<(), Error> {
            touch(&flag);
            panic!("an injected failure");
        });
        // SAFETY: `err` is a live error returned above, freed once.
        unsafe {
            assert_eq!(runlet_error_code(err), RUNLET_ERR_PANIC);
            let message = crate::error::runlet_error_message(err).to_str("message").expect("UTF-8");
            assert_eq!(message, "Runlet panicked: an injected failure");
            crate::error::runlet_error_free(err);
        }
        assert!(touched.is_set());
        assert!(!untouched.is_set());
        assert_eq!(TOUCHED.with(|t| t.borrow().len()), 0, "the boundary forgets what it touched");
    }

    #[test]
    fn panics_in_typed_functions_return_their_default() {
        assert_eq!(run(|| -> runlet_code { panic!("boom") }), 0);
        assert!(run(|| -> *mut u8 { panic!("boom") }).is_null());
        assert_eq!(run(|| -> runlet_str { panic!("boom") }).len, 0);
        assert!(run(|| -> Result<(), Error> { Ok(()) }).is_null());
    }
}
