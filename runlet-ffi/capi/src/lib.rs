//! The C library artifacts, `librunlet.so` and `librunlet.a`: every symbol of the `runlet-ffi`
//! ABI linked into one library (the header is `include/runlet.h`).

pub use runlet_ffi::*;
