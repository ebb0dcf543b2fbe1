//! The digest key of `run`, `graph` and `replay`: read from `--digest-key-file` or the file named
//! by `RUNLET_DIGEST_KEY_FILE`, and named by its fingerprint (docs/transcripts.md).

use std::path::{Path, PathBuf};

use runlet::value::DigestKey;

use crate::failure::Failure;
use crate::files::{FileKind, read_bytes};

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
    let bytes = read_bytes(&path, FileKind::DigestKey)?;
    let secret = without_line_end(&bytes).to_vec();
    let key = DigestKey::fingerprinted(&secret).map_err(|err| {
        Failure::new(err.code(), format!("the digest key file `{}`: {err}", path.display()))
    })?;
    Ok(Some(HostKey { id: key.id().to_owned(), secret }))
}

/// `bytes` without one trailing `\n` or `\r\n`, so a key written by `echo` or `openssl rand -hex`
/// is the same key as the text without it.
fn without_line_end(bytes: &[u8]) -> &[u8] {
    match bytes.strip_suffix(b"\n") {
        Some(line) => line.strip_suffix(b"\r").unwrap_or(line),
        None => bytes,
    }
}
