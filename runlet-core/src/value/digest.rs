//! Canonical digests (spec §3.3, §6.2): SHA-256 over a value's RCVE bytes, or HMAC-SHA-256 under
//! a run-pinned key when any path of the value is sensitive or secret.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use hmac::{KeyInit, Mac};
use sha2::{Digest as _, Sha256};

use super::error::ValueError;
use super::model::Value;
use super::rcve::{ScalarRef, Sink, write_list_header, write_scalar_list, write_scalars, write_value};
use super::sensitivity::{Labels, Sensitivity};
use crate::diag::codes;

type HmacSha256 = hmac::Hmac<Sha256>;

/// A digest of a value's RCVE bytes. Prints as `sha256:<hex>` or
/// `hmac-sha256:<key id>:<hex>` (lowercase hex) and parses back from that text.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Digest {
    Sha256([u8; 32]),
    HmacSha256 { key_id: Arc<str>, mac: [u8; 32] },
}

impl Digest {
    /// The 32 digest bytes, without the algorithm or key id.
    pub fn bytes(&self) -> &[u8; 32] {
        match self {
            Digest::Sha256(bytes) => bytes,
            Digest::HmacSha256 { mac, .. } => mac,
        }
    }

    /// Its text (`sha256:<hex>` or `hmac-sha256:<key id>:<hex>`), lent to `use_text` from the
    /// stack rather than a fresh string: every call's operation id digests its input digest's.
    pub fn with_text<R>(&self, use_text: impl FnOnce(&str) -> R) -> R {
        let mut hex = [0u8; 64];
        let mut text = smallvec::SmallVec::<[u8; 256]>::new();
        match self {
            Digest::Sha256(bytes) => {
                text.extend_from_slice(b"sha256:");
                text.extend_from_slice(lower_hex(bytes, &mut hex).as_bytes());
            }
            Digest::HmacSha256 { key_id, mac } => {
                text.extend_from_slice(b"hmac-sha256:");
                text.extend_from_slice(key_id.as_bytes());
                text.push(b':');
                text.extend_from_slice(lower_hex(mac, &mut hex).as_bytes());
            }
        }
        use_text(std::str::from_utf8(&text).expect("a digest's text is ASCII"))
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.with_text(|text| f.write_str(text))
    }
}

/// The lowercase hex of 32 digest bytes, written into `out` rather than a fresh string.
fn lower_hex<'a>(bytes: &[u8; 32], out: &'a mut [u8; 64]) -> &'a str {
    hex::encode_to_slice(bytes, out).expect("64 hex digits fit 32 bytes");
    std::str::from_utf8(out).expect("hex digits are ASCII")
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl serde::Serialize for Digest {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// The text is not a digest this module prints.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a digest: expected `sha256:<64 hex>` or `hmac-sha256:<key id>:<64 hex>`")]
pub struct DigestParseError(String);

impl FromStr for Digest {
    type Err = DigestParseError;

    fn from_str(text: &str) -> Result<Digest, DigestParseError> {
        let invalid = || DigestParseError(text.to_owned());
        let lower_hex = |h: &str| -> Option<[u8; 32]> {
            let lowercase = h.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
            lowercase.then(|| hex::decode(h).ok()?.try_into().ok()).flatten()
        };
        if let Some(h) = text.strip_prefix("sha256:") {
            return lower_hex(h).map(Digest::Sha256).ok_or_else(invalid);
        }
        let rest = text.strip_prefix("hmac-sha256:").ok_or_else(invalid)?;
        let (key_id, h) = rest.split_once(':').ok_or_else(invalid)?;
        if !is_valid_key_id(key_id) {
            return Err(invalid());
        }
        let mac = lower_hex(h).ok_or_else(invalid)?;
        Ok(Digest::HmacSha256 { key_id: key_id.into(), mac })
    }
}

/// A run-pinned HMAC key and the id digests name it by. `Debug` never shows the secret.
#[derive(Clone)]
pub struct DigestKey {
    id: Arc<str>,
    /// The secret as the HMAC key block (RFC 2104): hashed when longer than the SHA-256 block,
    /// zero-padded to the block size. HMAC under this block equals HMAC under the secret.
    block: Arc<[u8; HMAC_BLOCK]>,
}

const HMAC_BLOCK: usize = 64;

/// What a fingerprinted key's id is the keyed digest of.
const KEY_ID_LABEL: &str = "runlet.digest_key_id/1";

/// Key ids are 1 to 64 characters from `A-Z a-z 0-9 . _ -`, so `hmac-sha256:<id>:<hex>` is
/// unambiguous.
fn is_valid_key_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

impl DigestKey {
    /// How the ids of [`DigestKey::random`] keys start.
    pub const RANDOM_ID_PREFIX: &'static str = "local-";

    /// A key named `id` (1 to 64 characters from `A-Z a-z 0-9 . _ -`) with a non-empty secret.
    pub fn new(id: &str, secret: &[u8]) -> Result<DigestKey, ValueError> {
        if !is_valid_key_id(id) || secret.is_empty() {
            return Err(ValueError::new(
                codes::INVALID_DIGEST_KEY,
                "a digest key needs an id of 1 to 64 characters from `A-Z a-z 0-9 . _ -` and a non-empty secret",
            )
            .with_detail("key_id", id));
        }
        let mut block = [0u8; HMAC_BLOCK];
        if secret.len() > HMAC_BLOCK {
            block[..32].copy_from_slice(&Sha256::digest(secret));
        } else {
            block[..secret.len()].copy_from_slice(secret);
        }
        Ok(DigestKey { id: id.into(), block: Arc::new(block) })
    }

    /// A fresh key from the operating system's random source, named `local-<16 hex>` by random
    /// bits too. Nothing outside this process knows it: digests under it cannot be recomputed
    /// by another process, so a journal keyed by it replays only where the key still lives.
    pub fn random() -> Result<DigestKey, ValueError> {
        let mut bits = [0u8; 40];
        getrandom::fill(&mut bits).map_err(|error| {
            ValueError::new(codes::INVALID_DIGEST_KEY, format!("no random source for a digest key: {error}"))
        })?;
        let (id, secret) = bits.split_at(8);
        DigestKey::new(&format!("{}{}", DigestKey::RANDOM_ID_PREFIX, hex::encode(id)), secret)
    }

    /// A key named by its own fingerprint, `fp-<16 hex>`: the first 8 bytes of the HMAC-SHA-256
    /// of `runlet.digest_key_id/1` under `secret`. Equal secrets get equal ids and, short of a
    /// collision, different secrets different ones, so a host that only has the key material
    /// (a key file) still pins an id that tells keys apart without revealing them.
    pub fn fingerprinted(secret: &[u8]) -> Result<DigestKey, ValueError> {
        let probe = DigestKey::new("fp", secret)?;
        let fingerprint = keyed(&Value::from(KEY_ID_LABEL), &probe);
        DigestKey::new(&format!("fp-{}", hex::encode(&fingerprint.bytes()[..8])), secret)
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// Whether `id` may name a key: 1 to 64 characters from `A-Z a-z 0-9 . _ -`.
    pub fn is_valid_id(id: &str) -> bool {
        is_valid_key_id(id)
    }

    /// What a run header pins about this key: `hmac-sha256:<key id>`.
    pub fn pinned(&self) -> String {
        format!("hmac-sha256:{}", self.id)
    }
}

impl fmt::Debug for DigestKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DigestKey").field("id", &self.id).finish_non_exhaustive()
    }
}

/// Feeds encoded bytes to a hash in chunks: RCVE writes many tiny pieces. The buffer lives on
/// the stack, so digesting a small value (an identity, a call's arguments) allocates nothing.
struct HashSink<H: sha2::digest::Update> {
    hash: H,
    buffer: [u8; HASH_CHUNK],
    len: usize,
}

const HASH_CHUNK: usize = 1024;

impl<H: sha2::digest::Update> HashSink<H> {
    fn new(hash: H) -> Self {
        HashSink { hash, buffer: [0; HASH_CHUNK], len: 0 }
    }

    fn into_hash(mut self) -> H {
        self.hash.update(&self.buffer[..self.len]);
        self.hash
    }
}

impl<H: sha2::digest::Update> Sink for HashSink<H> {
    fn put(&mut self, bytes: &[u8]) {
        if self.len + bytes.len() > HASH_CHUNK {
            self.hash.update(&self.buffer[..self.len]);
            self.len = 0;
        }
        if bytes.len() >= HASH_CHUNK {
            self.hash.update(bytes);
        } else {
            self.buffer[self.len..self.len + bytes.len()].copy_from_slice(bytes);
            self.len += bytes.len();
        }
    }
}

/// SHA-256 of the RCVE bytes of `value`, computed while encoding.
pub fn sha256(value: &Value) -> Digest {
    let mut sink = HashSink::new(Sha256::new());
    write_value(value, &mut sink);
    Digest::Sha256(sink.into_hash().finalize().into())
}

/// SHA-256 of the RCVE bytes of the List of `items`: equal to [`sha256`] of that List built from
/// values, without building it.
pub fn sha256_of_scalars(items: &[ScalarRef<'_>]) -> Digest {
    let mut sink = HashSink::new(Sha256::new());
    write_scalar_list(items, &mut sink);
    Digest::Sha256(sink.into_hash().finalize().into())
}

/// SHA-256 of RCVE Lists of scalars that all begin with the same items: the hash of the header
/// and those items is kept, so each digest hashes only the items that follow. Equal to
/// [`sha256_of_scalars`] of the whole list.
#[derive(Clone)]
pub struct ScalarListPrefix {
    hash: Sha256,
    /// How many items each list has after the prefix.
    rest: usize,
}

impl fmt::Debug for ScalarListPrefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScalarListPrefix").field("rest", &self.rest).finish_non_exhaustive()
    }
}

impl ScalarListPrefix {
    /// The prefix `first` of Lists of `len` items.
    ///
    /// # Panics
    ///
    /// If `first` has more than `len` items.
    pub fn new(len: usize, first: &[ScalarRef<'_>]) -> ScalarListPrefix {
        assert!(first.len() <= len, "a prefix of {} items of a list of {len}", first.len());
        let mut sink = HashSink::new(Sha256::new());
        write_list_header(len, &mut sink);
        write_scalars(first, &mut sink);
        ScalarListPrefix { hash: sink.into_hash(), rest: len - first.len() }
    }

    /// SHA-256 of the List of the prefix's items followed by `rest`.
    ///
    /// # Panics
    ///
    /// If `rest` does not hold exactly the items the list has after the prefix.
    pub fn digest(&self, rest: &[ScalarRef<'_>]) -> Digest {
        assert_eq!(rest.len(), self.rest, "the items after a list prefix");
        let mut sink = HashSink::new(self.hash.clone());
        write_scalars(rest, &mut sink);
        Digest::Sha256(sink.into_hash().finalize().into())
    }
}

/// HMAC-SHA-256 of the RCVE bytes of `value` under `key`.
pub fn keyed(value: &Value, key: &DigestKey) -> Digest {
    let mut sink = HashSink::new(<HmacSha256 as KeyInit>::new(&(*key.block).into()));
    write_value(value, &mut sink);
    Digest::HmacSha256 { key_id: key.id.clone(), mac: sink.into_hash().finalize().into_bytes().into() }
}

/// The digest spec §6.2 requires for a value with these labels: keyed when any path is
/// sensitive or secret, plain SHA-256 when the value is entirely public.
pub fn canonical_digest(value: &Value, labels: &Labels, key: &DigestKey) -> Digest {
    if labels.max() > Sensitivity::Public { keyed(value, key) } else { sha256(value) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::rcve::encode;

    #[test]
    fn a_list_digested_after_its_prefix_digests_like_the_whole_list() {
        let items =
            [ScalarRef::Str("runlet"), ScalarRef::Int(-3), ScalarRef::Bytes(b"xy"), ScalarRef::Str("")];
        for split in 0..=items.len() {
            let prefix = ScalarListPrefix::new(items.len(), &items[..split]);
            assert_eq!(prefix.digest(&items[split..]), sha256_of_scalars(&items), "split at {split}");
        }
    }

    #[test]
    fn scalar_lists_digest_like_the_same_list_of_values() {
        use crate::value::List;
        let scalars = [
            ScalarRef::Str("runlet"),
            ScalarRef::Str(""),
            ScalarRef::Int(0),
            ScalarRef::Int(-64),
            ScalarRef::Int(i64::MIN),
            ScalarRef::Bytes(&[0, 255]),
            ScalarRef::Str(&"é".repeat(100)),
            ScalarRef::Str(&"x".repeat(1000)),
            ScalarRef::Str(&"y".repeat(3000)),
        ];
        let values = vec![
            Value::from("runlet"),
            Value::from(""),
            Value::Int(0),
            Value::Int(-64),
            Value::Int(i64::MIN),
            Value::bytes(vec![0, 255]),
            Value::from("é".repeat(100)),
            Value::from("x".repeat(1000)),
            Value::from("y".repeat(3000)),
        ];
        let list = Value::List(List::new(values).expect("flat"));
        assert_eq!(sha256_of_scalars(&scalars), sha256(&list));
        assert_eq!(sha256_of_scalars(&[]), sha256(&Value::List(List::new(Vec::new()).expect("empty"))));
    }

    #[test]
    fn sha256_hashes_the_rcve_bytes() {
        // RCVE of Null is the single byte 0x00.
        assert_eq!(
            sha256(&Value::Null).to_string(),
            "sha256:6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"
        );
        let big = Value::bytes(vec![7u8; 3 * HASH_CHUNK + 5]);
        assert_eq!(sha256(&big), Digest::Sha256(Sha256::digest(encode(&big)).into()));
    }

    /// RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?". The RCVE String
    /// encoding prefixes the data with `0x20 0x1c`, so the test hashes that exact message too.
    #[test]
    fn keyed_digest_is_hmac_sha256() {
        let key = DigestKey::new("k1", b"Jefe").expect("valid key");
        let mut mac = <HmacSha256 as KeyInit>::new_from_slice(b"Jefe").expect("any length");
        mac.update(b"\x20\x1cwhat do ya want for nothing?");
        let expected: [u8; 32] = mac.finalize().into_bytes().into();
        let digest = keyed(&Value::from("what do ya want for nothing?"), &key);
        assert_eq!(digest, Digest::HmacSha256 { key_id: "k1".into(), mac: expected });
        let mut rfc = <HmacSha256 as KeyInit>::new_from_slice(b"Jefe").expect("any length");
        rfc.update(b"what do ya want for nothing?");
        assert_eq!(
            hex::encode(rfc.finalize().into_bytes()),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn labels_choose_the_algorithm() {
        let key = DigestKey::new("run-7.v2", b"secret").expect("valid key");
        let value = Value::from("x");
        assert_eq!(canonical_digest(&value, &Labels::public(), &key), sha256(&value));
        let sensitive = Labels::uniform(Sensitivity::Sensitive);
        assert_eq!(canonical_digest(&value, &sensitive, &key), keyed(&value, &key));
    }

    #[test]
    fn text_form_round_trips() {
        let key = DigestKey::new("run-7.v2", b"secret").expect("valid key");
        for digest in [sha256(&Value::Int(1)), keyed(&Value::Int(1), &key)] {
            assert_eq!(digest.to_string().parse::<Digest>(), Ok(digest));
        }
        for bad in ["sha256:00", "md5:00", "hmac-sha256::00", &format!("sha256:{}", "A".repeat(64))] {
            assert!(bad.parse::<Digest>().is_err(), "{bad}");
        }
        assert!(format!("{key:?}").contains("run-7.v2") && !format!("{key:?}").contains("secret"));
        assert_eq!(
            DigestKey::new("bad:id", b"x").map(|_| ()).map_err(|e| e.code()),
            Err(codes::INVALID_DIGEST_KEY)
        );
        assert!(DigestKey::new("ok", b"").is_err());
    }

    #[test]
    fn random_keys_differ_and_name_themselves_apart() {
        let (one, two) = (DigestKey::random().expect("random"), DigestKey::random().expect("random"));
        assert!(one.id().starts_with("local-") && one.id().len() == 22, "{one:?}");
        assert_ne!(one.id(), two.id());
        assert_ne!(keyed(&Value::Int(1), &one).bytes(), keyed(&Value::Int(1), &two).bytes());
    }

    #[test]
    fn fingerprinted_keys_are_named_by_their_secret() {
        let one = DigestKey::fingerprinted(b"tenant key one").expect("valid key");
        let again = DigestKey::fingerprinted(b"tenant key one").expect("valid key");
        let two = DigestKey::fingerprinted(b"tenant key two").expect("valid key");
        assert!(one.id().starts_with("fp-") && one.id().len() == 19, "{one:?}");
        assert_eq!(one.id(), again.id());
        assert_ne!(one.id(), two.id());
        assert_eq!(keyed(&Value::Int(1), &one), keyed(&Value::Int(1), &again));
        assert_eq!(one.pinned(), format!("hmac-sha256:{}", one.id()));
        assert!(DigestKey::fingerprinted(b"").is_err());
    }

    #[test]
    fn long_secrets_are_hashed_like_hmac_does() {
        let secret = [0xaau8; 131];
        let key = DigestKey::new("long", &secret).expect("valid key");
        let mut mac = <HmacSha256 as KeyInit>::new_from_slice(&secret).expect("any length");
        mac.update(&encode(&Value::Int(5)));
        let expected: [u8; 32] = mac.finalize().into_bytes().into();
        assert_eq!(keyed(&Value::Int(5), &key).bytes(), &expected);
    }
}
