//! The string and byte views of the ABI: borrowed `runlet_str`/`runlet_bytes` inputs (checked
//! and copied before use) and owned `runlet_buf` outputs released by `runlet_buf_free`.

use std::os::raw::c_char;

use crate::error::{Error, RUNLET_ERR_INVALID_UTF8, RUNLET_ERR_NULL_ARGUMENT};

/// A UTF-8 string view, not NUL-terminated. `ptr` may be NULL only when `len` is 0.
///
/// As an input it is borrowed for the length of the call: Runlet copies what it keeps. As an
/// output its lifetime is the one the returning function documents.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct runlet_str {
    pub ptr: *const c_char,
    pub len: usize,
}

/// An opaque byte view. `ptr` may be NULL only when `len` is 0. Borrowed like `runlet_str`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct runlet_bytes {
    pub ptr: *const u8,
    pub len: usize,
}

/// Bytes owned by the host after Runlet returned them; release with `runlet_buf_free`, never
/// with `free()`. A zeroed `runlet_buf` is empty and freeing it is a no-op.
#[repr(C)]
#[derive(Debug)]
pub struct runlet_buf {
    pub ptr: *mut u8,
    pub len: usize,
}

impl runlet_str {
    /// A view of `text`; valid as long as `text` is.
    pub(crate) fn of(text: &str) -> runlet_str {
        runlet_str { ptr: text.as_ptr().cast(), len: text.len() }
    }

    pub(crate) fn empty() -> runlet_str {
        runlet_str { ptr: std::ptr::null(), len: 0 }
    }

    /// The text, checked for NULL and UTF-8. `what` names the argument in error messages.
    ///
    /// # Safety
    /// `ptr` must point at `len` readable bytes that stay unchanged for `'a`.
    pub(crate) unsafe fn to_str<'a>(self, what: &str) -> Result<&'a str, Error> {
        // SAFETY: forwarded from the caller.
        let bytes = unsafe { view(self.ptr.cast(), self.len, what) }?;
        std::str::from_utf8(bytes).map_err(|e| {
            Error::new(
                RUNLET_ERR_INVALID_UTF8,
                format!("`{what}` is not valid UTF-8 (invalid byte at offset {})", e.valid_up_to()),
            )
        })
    }
}

impl runlet_bytes {
    /// The bytes, checked for NULL.
    ///
    /// # Safety
    /// `ptr` must point at `len` readable bytes that stay unchanged for `'a`.
    pub(crate) unsafe fn to_slice<'a>(self, what: &str) -> Result<&'a [u8], Error> {
        // SAFETY: forwarded from the caller.
        unsafe { view(self.ptr, self.len, what) }
    }
}

/// # Safety
/// When `ptr` is not NULL it must point at `len` readable bytes that stay unchanged for `'a`.
unsafe fn view<'a>(ptr: *const u8, len: usize, what: &str) -> Result<&'a [u8], Error> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(Error::new(RUNLET_ERR_NULL_ARGUMENT, format!("`{what}` is NULL with a length of {len}")));
    }
    // SAFETY: non-NULL, and the caller vouches for `len` readable bytes.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

impl runlet_buf {
    /// Hands `bytes` to the host.
    pub(crate) fn from_vec(bytes: Vec<u8>) -> runlet_buf {
        let boxed = bytes.into_boxed_slice();
        let len = boxed.len();
        runlet_buf { ptr: Box::into_raw(boxed).cast(), len }
    }

    pub(crate) fn empty() -> runlet_buf {
        runlet_buf { ptr: std::ptr::null_mut(), len: 0 }
    }
}

/// Releases bytes Runlet returned. A buffer with a NULL `ptr` is a no-op; each buffer is freed
/// at most once.
///
/// Thread-safety: any thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_buf_free(buf: runlet_buf) {
    ffi_boundary!((), {
        if !buf.ptr.is_null() {
            let slice = std::ptr::slice_from_raw_parts_mut(buf.ptr, buf.len);
            // SAFETY: `ptr`/`len` came from `runlet_buf::from_vec`'s boxed slice, freed once.
            drop(unsafe { Box::from_raw(slice) });
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::RUNLET_ERR_INVALID_UTF8;

    #[test]
    fn views_are_checked_for_null_and_utf8() {
        let text = "héllo";
        // SAFETY: views of live local data.
        unsafe {
            assert_eq!(runlet_str::of(text).to_str("text").expect("valid"), "héllo");
            assert_eq!(runlet_str::empty().to_str("empty").expect("empty is valid"), "");
            let dangling = runlet_str { ptr: std::ptr::null(), len: 3 };
            assert_eq!(dangling.to_str("x").expect_err("NULL").code(), RUNLET_ERR_NULL_ARGUMENT);
            let bad = [b'a', 0xff, b'b'];
            let invalid = runlet_str { ptr: bad.as_ptr().cast(), len: bad.len() };
            let err = invalid.to_str("name").expect_err("invalid UTF-8");
            assert_eq!(err.code(), RUNLET_ERR_INVALID_UTF8);
            assert_eq!(err.message(), "`name` is not valid UTF-8 (invalid byte at offset 1)");
        }
    }

    #[test]
    fn buffers_round_trip_and_free_once() {
        let buf = runlet_buf::from_vec(b"{}".to_vec());
        assert_eq!(buf.len, 2);
        // SAFETY: a buffer made above, freed once; then the no-op cases.
        unsafe {
            runlet_buf_free(buf);
            runlet_buf_free(runlet_buf::empty());
            runlet_buf_free(runlet_buf::from_vec(Vec::new()));
        }
    }
}
