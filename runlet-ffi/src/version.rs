//! The library's version: `runlet_version()` at run time and the `RUNLET_VERSION_*` constants
//! at compile time, both checked against the crate version (the one source).

use crate::strings::runlet_str;

/// The major version of the library this header was generated from; `runlet_version()` gives
/// the version of the library linked at run time.
pub const RUNLET_VERSION_MAJOR: u32 = 0;
/// The minor version of the library this header was generated from.
pub const RUNLET_VERSION_MINOR: u32 = 1;
/// The patch version of the library this header was generated from.
pub const RUNLET_VERSION_PATCH: u32 = 0;
/// `MAJOR * 10000 + MINOR * 100 + PATCH`, for `#if` comparisons.
pub const RUNLET_VERSION_NUMBER: u32 = 100;

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The library's version as `"MAJOR.MINOR.PATCH"`. Static: never freed.
///
/// Thread-safety: any thread.
#[unsafe(no_mangle)]
pub extern "C" fn runlet_version() -> runlet_str {
    ffi_boundary!(runlet_str, { runlet_str::of(VERSION) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_constants_match_the_crate_version() {
        let parts: Vec<u32> = VERSION.split('.').map(|p| p.parse().expect("numeric version")).collect();
        assert_eq!(parts, [RUNLET_VERSION_MAJOR, RUNLET_VERSION_MINOR, RUNLET_VERSION_PATCH]);
        assert_eq!(
            RUNLET_VERSION_NUMBER,
            RUNLET_VERSION_MAJOR * 10000 + RUNLET_VERSION_MINOR * 100 + RUNLET_VERSION_PATCH
        );
        // SAFETY: a static string.
        assert_eq!(unsafe { runlet_version().to_str("version") }.expect("UTF-8"), VERSION);
    }
}
