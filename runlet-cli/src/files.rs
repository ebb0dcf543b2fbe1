//! Reading the files a command is given, every one through one bounded reader: regular files only
//! (a directory, a FIFO or a device such as `/dev/zero` is refused without blocking or reading
//! forever), each kind under a size cap checked before reading and enforced while reading (a file
//! that grows while it is read), and text that must be UTF-8. Each problem is a [`Failure`] with
//! its RL code (RL8502–RL8505).
//!
//! The caps (docs/diagnostics/RL8504.md): program source 1 MiB (the parser's own default),
//! `--inputs` 16 MiB, registry, tool fixture and transcript files 64 MiB, a digest key file 4 KiB.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use runlet::diag::codes;

use crate::failure::Failure;

/// What a file is to the command, which sets its cap and how errors name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Source,
    Registry,
    Fixtures,
    Inputs,
    Transcript,
    DigestKey,
    McpConfig,
}

impl FileKind {
    /// The most bytes a file of this kind may have.
    pub const fn cap(self) -> u64 {
        match self {
            FileKind::Source | FileKind::McpConfig => 1 << 20,
            FileKind::Inputs => 16 << 20,
            FileKind::Registry | FileKind::Fixtures | FileKind::Transcript => 64 << 20,
            FileKind::DigestKey => 4 << 10,
        }
    }

    /// How messages name a file of this kind.
    pub const fn what(self) -> &'static str {
        match self {
            FileKind::Source => "the source file",
            FileKind::Registry => "the registry",
            FileKind::Fixtures => "the tool fixture file",
            FileKind::Inputs => "the inputs file",
            FileKind::Transcript => "the transcript",
            FileKind::DigestKey => "the digest key file",
            FileKind::McpConfig => "the MCP configuration",
        }
    }
}

/// A text file read into memory.
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

/// Reads `path`, a `kind` file, as UTF-8 text.
pub fn read_text(path: &Path, kind: FileKind) -> Result<SourceFile, Failure> {
    let bytes = read_bytes(path, kind)?;
    let text = String::from_utf8(bytes).map_err(|error| {
        let offset = error.utf8_error().valid_up_to();
        let message = format!(
            "{} `{}` is not UTF-8: the byte at offset {offset} is not part of a UTF-8 character",
            kind.what(),
            path.display()
        );
        Failure::new(codes::FILE_NOT_UTF8, message)
            .with_help("Runlet reads UTF-8 only: convert the file, for example with `iconv -t utf-8`")
    })?;
    Ok(SourceFile { path: path.to_owned(), text })
}

/// Reads the bytes of `path`, a `kind` file: a regular file of at most `kind.cap()` bytes.
pub fn read_bytes(path: &Path, kind: FileKind) -> Result<Vec<u8>, Failure> {
    let unreadable = |error: io::Error| {
        let message = format!("cannot read {} `{}`: {error}", kind.what(), path.display());
        Failure::new(codes::FILE_UNREADABLE, message)
    };
    let file = open(path).map_err(unreadable)?;
    let metadata = file.metadata().map_err(unreadable)?;
    if !metadata.is_file() {
        let message = format!(
            "{} `{}` is {}; Runlet reads regular files only",
            kind.what(),
            path.display(),
            not_regular(&metadata)
        );
        return Err(Failure::new(codes::NOT_A_REGULAR_FILE, message)
            .with_help("save what you mean to pass into a file and give that file"));
    }
    let too_large = |size: &str| {
        let message = format!(
            "{} `{}` {size}, more than the {} a file of its kind may have",
            kind.what(),
            path.display(),
            bytes_text(kind.cap())
        );
        Failure::new(codes::FILE_TOO_LARGE, message)
    };
    if metadata.len() > kind.cap() {
        return Err(too_large(&format!("has {}", bytes_text(metadata.len()))));
    }
    match read_at_most(file, metadata.len(), kind.cap()) {
        Ok(Some(bytes)) => Ok(bytes),
        Ok(None) => Err(too_large("grew while it was read")),
        Err(error) => Err(unreadable(error)),
    }
}

/// Opens `path` for reading without waiting: opening a FIFO does not block for a writer, so the
/// type of what was opened can be checked first.
fn open(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    options.open(path)
}

/// Every byte of `reader`, which said it has `expected` bytes; `None` past `cap`.
fn read_at_most(reader: impl Read, expected: u64, cap: u64) -> io::Result<Option<Vec<u8>>> {
    let mut bytes = Vec::with_capacity(expected.min(cap) as usize);
    reader.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= cap).then_some(bytes))
}

/// What a file that is not a regular file is, as a noun phrase.
fn not_regular(metadata: &Metadata) -> &'static str {
    let kind = metadata.file_type();
    if kind.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if kind.is_socket() {
            return "a socket";
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "a device";
        }
    }
    "not a regular file"
}

/// `1 MiB`, `4 KiB` or `12345 bytes`.
fn bytes_text(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reading_stops_past_the_cap_whatever_the_file_said() {
        assert_eq!(read_at_most(&b"abc"[..], 3, 3).expect("read"), Some(b"abc".to_vec()));
        assert_eq!(read_at_most(&b"abcd"[..], 3, 3).expect("read"), None, "a file that grew");
        assert_eq!(read_at_most(io::repeat(0), 0, 1 << 10).expect("read"), None, "an endless file");
    }

    #[test]
    fn caps_are_ordered_and_printed_in_their_units() {
        assert!(FileKind::DigestKey.cap() < FileKind::Source.cap());
        assert!(FileKind::Source.cap() < FileKind::Inputs.cap());
        assert!(FileKind::Inputs.cap() < FileKind::Registry.cap());
        assert_eq!(bytes_text(FileKind::Source.cap()), "1 MiB");
        assert_eq!(bytes_text(FileKind::DigestKey.cap()), "4 KiB");
        assert_eq!(bytes_text(1025), "1025 bytes");
    }
}
