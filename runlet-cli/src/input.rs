//! Reading what the commands are given: source, registry and input files as UTF-8 text, with I/O
//! problems reported as usage errors (exit status 2) that name the file.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// A file read into memory.
#[derive(Debug)]
pub struct SourceFile {
    pub path: PathBuf,
    pub text: String,
}

impl SourceFile {
    /// The path as diagnostics print it.
    pub fn display_name(&self) -> String {
        self.path.display().to_string()
    }
}

/// Reads `path` (source, registry or inputs) as UTF-8, or prints why not and returns exit status 2.
pub fn read_text(path: &Path) -> Result<SourceFile, ExitCode> {
    let bytes =
        std::fs::read(path).map_err(|err| usage_error(format!("cannot read `{}`: {err}", path.display())))?;
    let text = String::from_utf8(bytes).map_err(|err| {
        usage_error(format!(
            "`{}` is not UTF-8 text (invalid byte at offset {}); Runlet reads UTF-8 only",
            path.display(),
            err.utf8_error().valid_up_to()
        ))
    })?;
    Ok(SourceFile { path: path.to_owned(), text })
}

/// Prints `message` as an error and returns exit status 2.
pub fn usage_error(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(2)
}
