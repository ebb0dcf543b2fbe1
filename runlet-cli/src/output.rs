//! Writing the files a command produces (`fmt --write`, `--events`, `--record`, `--dot`); a file
//! that cannot be written is a [`Failure`] with `RL8506`.

use std::path::Path;

use runlet::diag::codes;

use crate::failure::Failure;

/// Writes `contents` to `path`, replacing what it held.
pub fn write_file(path: &Path, contents: impl AsRef<[u8]>) -> Result<(), Failure> {
    std::fs::write(path, contents).map_err(|error| unwritable(path, &error))
}

/// The failure of writing `path`.
pub fn unwritable(path: &Path, error: &dyn std::fmt::Display) -> Failure {
    Failure::new(codes::FILE_UNWRITABLE, format!("cannot write `{}`: {error}", path.display()))
}
