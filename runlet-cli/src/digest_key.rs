//! The digest key of `run`, `graph`, `replay` and the run manager: read from `--digest-key-file`
//! or the file named by `RUNLET_DIGEST_KEY_FILE` (or a durable journal's own key file), and
//! named by its fingerprint (docs/transcripts.md).

use std::path::{Path, PathBuf};

use runlet::diag::codes;
use runlet::value::DigestKey;

use crate::failure::Failure;
use crate::files::{FileKind, read_bytes};
use crate::output::unwritable;

/// The environment variable naming a key file when `--digest-key-file` is not given.
pub const KEY_FILE_VARIABLE: &str = "RUNLET_DIGEST_KEY_FILE";

/// A host key for digests of sensitive values: its id and its secret bytes.
pub struct HostKey {
    pub id: String,
    pub secret: Vec<u8>,
}

/// The key of `flag` or else of the file `RUNLET_DIGEST_KEY_FILE` names; none when neither is
/// set (the runtime then keys with a random key of this process). The file's bytes are the key,
/// without one trailing line end; the id is the key's fingerprint, `fp-<16 hex>`. An unreadable,
/// oversized or empty file is a [`Failure`].
pub fn load(flag: Option<&Path>) -> Result<Option<HostKey>, Failure> {
    let path = match flag {
        Some(path) => path.to_owned(),
        None => match std::env::var_os(KEY_FILE_VARIABLE) {
            Some(path) if !path.is_empty() => PathBuf::from(path),
            _ => return Ok(None),
        },
    };
    read_key(&path).map(Some)
}

/// The key of the file at `path`, made first (a random key, readable by its owner only) when
/// there is none. Two processes making it at once end up with the one written first.
pub fn load_or_create(path: &Path) -> Result<HostKey, Failure> {
    if !path.exists() {
        let mut bits = [0u8; 32];
        getrandom::fill(&mut bits).map_err(|error| {
            Failure::new(codes::INVALID_DIGEST_KEY, format!("no random source for a digest key: {error}"))
        })?;
        let secret = hex::encode(bits);
        match create_private(path, secret.as_bytes()) {
            Ok(()) => {}
            // Another process made it first and may still be writing it: wait a moment for it.
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
                for _ in 0..100 {
                    if std::fs::metadata(path).is_ok_and(|m| m.len() > 0) {
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
            }
            Err(error) => return Err(unwritable(path, &error)),
        }
    }
    read_key(path)
}

/// Writes a new file at `path` that only its owner may read.
fn create_private(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    std::io::Write::write_all(&mut options.open(path)?, contents)
}

fn read_key(path: &Path) -> Result<HostKey, Failure> {
    let bytes = read_bytes(path, FileKind::DigestKey)?;
    let secret = without_line_end(&bytes).to_vec();
    if secret.is_empty() {
        return Err(Failure::new(
            codes::INVALID_DIGEST_KEY,
            format!("the digest key file `{}` is empty: write the key's bytes into it", path.display()),
        ));
    }
    let key = DigestKey::fingerprinted(&secret).map_err(|err| {
        let (code, text) = (err.code(), err.to_string());
        Failure::new(code, format!("the digest key file `{}`: {}", path.display(), code.unprefixed(&text)))
    })?;
    Ok(HostKey { id: key.id().to_owned(), secret })
}

/// `bytes` without one trailing `\n` or `\r\n`, so a key written by `echo` or `openssl rand -hex`
/// is the same key as the text without it.
fn without_line_end(bytes: &[u8]) -> &[u8] {
    match bytes.strip_suffix(b"\n") {
        Some(line) => line.strip_suffix(b"\r").unwrap_or(line),
        None => bytes,
    }
}
