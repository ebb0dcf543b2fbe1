//! The `hash` namespace: stable, non-secret digests — SHA-256 of a text's UTF-8 bytes, and the
//! canonical digest of any value over its RCVE bytes (the digest journals and identities use).

use sha2::{Digest as _, Sha256};

use crate::value::{Value, ValueError, sha256};

use super::args::Args;

pub(super) fn sha256_hex(args: Args<'_>) -> Result<Value, ValueError> {
    let digest = Sha256::digest(args.text(0)?.as_bytes());
    Ok(Value::from(hex::encode(digest)))
}

pub(super) fn digest(args: Args<'_>) -> Result<Value, ValueError> {
    Ok(Value::from(sha256(args.value(0)?).to_string()))
}
