//! The one way to turn each kind of handle pointer into Rust and back: boxed handles handed to
//! the host, borrowed (NULL- and poison-checked) during a call, and taken back by `_free`.

use std::sync::Arc;

use crate::boundary::{Poison, touch};
use crate::error::{Error, RUNLET_ERR_NULL_ARGUMENT, RUNLET_ERR_PANIC};

/// A handle type the host holds as an opaque pointer.
pub(crate) trait Handle {
    /// The C type's name, for error messages.
    const NAME: &'static str;
    fn poison(&self) -> &Arc<Poison>;
}

/// Hands `value` to the host as a handle it frees with the type's `_free`.
pub(crate) fn into_raw<T>(value: T) -> *mut T {
    Box::into_raw(Box::new(value))
}

/// The handle behind `raw` for the length of a call: NULL and poisoned handles are refused, and
/// a panic during the call poisons it.
///
/// # Safety
/// `raw` is NULL or a live handle of type `T` that is not freed during the call.
pub(crate) unsafe fn borrow<'a, T: Handle>(raw: *const T) -> Result<&'a T, Error> {
    // SAFETY: forwarded from the caller.
    let Some(handle) = (unsafe { raw.as_ref() }) else {
        return Err(Error::new(RUNLET_ERR_NULL_ARGUMENT, format!("the `{}` handle is NULL", T::NAME)));
    };
    if handle.poison().is_set() {
        return Err(Error::new(
            RUNLET_ERR_PANIC,
            format!("the `{}` handle is poisoned: an earlier call on it panicked", T::NAME),
        ));
    }
    touch(handle.poison());
    Ok(handle)
}

/// Takes back a handle for freeing; NULL gives `None`.
///
/// # Safety
/// `raw` is NULL or a live handle from [`into_raw`], taken at most once.
pub(crate) unsafe fn take<T>(raw: *mut T) -> Option<Box<T>> {
    // SAFETY: forwarded from the caller.
    (!raw.is_null()).then(|| unsafe { Box::from_raw(raw) })
}

/// An out-parameter, set to NULL before anything else happens so it is NULL on every failure.
///
/// # Safety
/// `out` is NULL or points at writable storage for a pointer.
pub(crate) unsafe fn out_param<'a, T>(out: *mut *mut T) -> Result<&'a mut *mut T, Error> {
    // SAFETY: forwarded from the caller.
    let Some(slot) = (unsafe { out.as_mut() }) else {
        return Err(Error::new(RUNLET_ERR_NULL_ARGUMENT, "the `out` pointer is NULL"));
    };
    *slot = std::ptr::null_mut();
    Ok(slot)
}
