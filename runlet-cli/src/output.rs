//! Writing what a command produces: its files (`fmt --write`, `--events`, `--record`, `--dot`)
//! and standard output ([`outln!`], [`out!`]). A file that cannot be written is a [`Failure`]
//! with `RL8506`, and so is standard output (a full disk behind `> file`): the command goes on
//! to its end, and `main` reports the first error writing it. Standard error ([`errln!`],
//! [`err!`]) is written as far as it can be; an error writing it has nowhere to be told, and the
//! exit status still tells how the command ended.

use std::io::Write;
use std::path::Path;
use std::sync::OnceLock;

use runlet::diag::codes;

use crate::failure::Failure;

/// Writes `contents` to `path`, replacing what it held.
pub fn write_file(path: &Path, contents: impl AsRef<[u8]>) -> Result<(), Failure> {
    std::fs::write(path, contents).map_err(|error| unwritable(path, &error))
}

/// Refuses to write `output` (the file of option `flag`) when it is one of the files the
/// command reads or keeps (`kept`: a program, a registry, a journal and its companions, the other
/// output): writing would first empty it. Compared as files where both exist (so a second path
/// to the same file is caught too), and by their directory and name where one does not yet (a
/// journal the run is about to create). Devices such as `/dev/null` are never refused. Checked
/// before anything is written.
pub fn refuse_clobbering(flag: &str, output: &Path, kept: &[(&str, &Path)]) -> Result<(), Failure> {
    if std::fs::metadata(output).is_ok_and(|m| !m.is_file()) {
        return Ok(());
    }
    match kept.iter().find(|(_, path)| same_file(output, path)) {
        Some((what, path)) => Err(Failure::new(
            codes::FILE_UNWRITABLE,
            format!(
                "`{flag} {}` would overwrite {what} `{}`: give {flag} a file of its own",
                output.display(),
                path.display()
            ),
        )),
        None => Ok(()),
    }
}

/// Whether `a` and `b` name one file: the same file where both exist, else the same name in
/// the same directory.
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        (Err(_), Err(_)) => {
            let place = |path: &Path| {
                let directory = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
                Some((directory.canonicalize().ok()?, path.file_name()?.to_owned()))
            };
            place(a).is_some_and(|a| Some(a) == place(b))
        }
        _ => false,
    }
}

/// The failure of writing `path`.
pub fn unwritable(path: &Path, error: &dyn std::fmt::Display) -> Failure {
    Failure::new(codes::FILE_UNWRITABLE, format!("cannot write `{}`: {error}", path.display()))
}

/// Prints to standard output like `println!`, without panicking when it cannot be written.
macro_rules! outln {
    ($($arg:tt)*) => { $crate::output::to_stdout(format_args!("{}\n", format_args!($($arg)*))) };
}

/// Prints to standard output like `print!`, without panicking when it cannot be written.
macro_rules! out {
    ($($arg:tt)*) => { $crate::output::to_stdout(format_args!($($arg)*)) };
}

/// Prints to standard error like `eprintln!`, without panicking when it cannot be written (a
/// closed pipe behind `2>&1 | head`).
macro_rules! errln {
    ($($arg:tt)*) => { $crate::output::to_stderr(format_args!("{}\n", format_args!($($arg)*))) };
}

/// Prints to standard error like `eprint!`, without panicking when it cannot be written.
macro_rules! err {
    ($($arg:tt)*) => { $crate::output::to_stderr(format_args!($($arg)*)) };
}

/// Writes `text` to standard error, as far as it can be written.
pub fn to_stderr(text: std::fmt::Arguments<'_>) {
    let _ = std::io::stderr().lock().write_fmt(text);
}

/// The first error writing standard output met.
static STDOUT_ERROR: OnceLock<String> = OnceLock::new();

/// Writes `text` to standard output, keeping the first error it meets for [`stdout_failure`].
/// A reader that closed the pipe (`runlet graph … | head`) ends the process by `SIGPIPE`, as it
/// does other Unix tools.
pub fn to_stdout(text: std::fmt::Arguments<'_>) {
    kept(std::io::stdout().lock().write_fmt(text));
}

/// Keeps the first error of writing standard output; a closed pipe ends the process instead.
fn kept(written: std::io::Result<()>) {
    match written {
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => end_by_sigpipe(),
        Err(error) => {
            let _ = STDOUT_ERROR.set(error.to_string());
        }
        Ok(()) => {}
    }
}

/// Ends the process as the default action of `SIGPIPE` does. Only standard output's pipe does
/// that: the process keeps Rust's disposition (ignored) otherwise, so a page viewer or a server
/// that closes its socket is an error on that socket, never the end of the process and its run.
fn end_by_sigpipe() -> ! {
    #[cfg(unix)]
    // SAFETY: restoring the default disposition and raising the signal only ends the process.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
    }
    std::process::exit(141)
}

/// Flushes standard output; the failure of writing it, if any write (or this flush) failed.
pub fn stdout_failure() -> Option<Failure> {
    kept(std::io::stdout().lock().flush());
    let error = STDOUT_ERROR.get()?;
    Some(Failure::new(codes::FILE_UNWRITABLE, format!("cannot write standard output: {error}")))
}
