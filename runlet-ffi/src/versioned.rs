//! Reading host structs that start with `struct_size`: the size must be one this library knows,
//! and the bytes are copied so the host may reuse its struct once the call returns.

use crate::error::{Error, RUNLET_ERR_NULL_ARGUMENT, RUNLET_ERR_VERSION_MISMATCH};

/// A `#[repr(C)]` struct whose first field is `struct_size: usize` and whose every field is
/// valid when zeroed (integers, raw pointers, optional function pointers, bools).
///
/// # Safety
/// Implementors must uphold both properties.
pub(crate) unsafe trait Versioned: Copy {
    /// What the struct is called in error messages.
    const NAME: &'static str;
    /// The sizes of every version of the struct this library knows, oldest first.
    const KNOWN_SIZES: &'static [usize];
}

/// Copies the host's `*raw`, refusing NULL and unknown sizes. Fields a known older version lacks
/// read as zero.
///
/// # Safety
/// `raw` is NULL or points at a readable struct of at least `struct_size` bytes.
pub(crate) unsafe fn copy_in<T: Versioned>(raw: *const T) -> Result<T, Error> {
    if raw.is_null() {
        return Err(Error::new(RUNLET_ERR_NULL_ARGUMENT, format!("the `{}` pointer is NULL", T::NAME)));
    }
    // SAFETY: non-NULL; every version starts with `struct_size`.
    let size = unsafe { raw.cast::<usize>().read_unaligned() };
    if !T::KNOWN_SIZES.contains(&size) {
        return Err(Error::new(
            RUNLET_ERR_VERSION_MISMATCH,
            format!(
                "`{}.struct_size` is {size}; this library knows the sizes {:?} (use the INIT macro)",
                T::NAME,
                T::KNOWN_SIZES
            ),
        ));
    }
    let mut copy = std::mem::MaybeUninit::<T>::zeroed();
    let len = size.min(std::mem::size_of::<T>());
    // SAFETY: the host vouches for `size` readable bytes; the zeroed rest is valid by `Versioned`.
    unsafe {
        std::ptr::copy_nonoverlapping(raw.cast::<u8>(), copy.as_mut_ptr().cast::<u8>(), len);
        Ok(copy.assume_init())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[repr(C)]
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Probe {
        struct_size: usize,
        value: u32,
    }

    // SAFETY: `struct_size` first; integers are valid zeroed.
    unsafe impl Versioned for Probe {
        const NAME: &'static str = "probe";
        const KNOWN_SIZES: &'static [usize] = &[std::mem::size_of::<Probe>()];
    }

    #[test]
    fn known_sizes_are_copied_and_others_refused() {
        let good = Probe { struct_size: std::mem::size_of::<Probe>(), value: 7 };
        // SAFETY: pointers to live locals, or NULL.
        unsafe {
            assert_eq!(copy_in(&good), Ok(good));
            let wrong = Probe { struct_size: 3, value: 7 };
            assert_eq!(copy_in(&wrong).expect_err("size").code(), RUNLET_ERR_VERSION_MISMATCH);
            assert_eq!(
                copy_in::<Probe>(std::ptr::null()).expect_err("NULL").code(),
                RUNLET_ERR_NULL_ARGUMENT
            );
        }
    }
}
