//! The versioned, checksummed frame around every journal record: a version byte, the record's
//! sequence number, the event kind, the payload, and a CRC-32C over everything before it.

use crate::diag::{Code, codes};

/// The envelope layout this build writes and reads.
pub const ENVELOPE_VERSION: u8 = 1;

const HEADER_LEN: usize = 1 + 8 + 2;
const TRAILER_LEN: usize = 4;

/// A decoded record frame. The payload is opaque here; the engine's event codec reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Envelope {
    pub seq: u64,
    pub kind: u16,
    pub payload: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvelopeError {
    #[error("journal record is {len} bytes, shorter than the {min}-byte envelope")]
    Truncated { len: usize, min: usize },
    #[error("journal record has envelope version {found}; this runtime reads version {ENVELOPE_VERSION}")]
    UnsupportedVersion { found: u8 },
    #[error("journal record checksum is {found:08x} but its bytes hash to {computed:08x}")]
    ChecksumMismatch { found: u32, computed: u32 },
}

impl EnvelopeError {
    pub fn code(&self) -> Code {
        match self {
            EnvelopeError::Truncated { .. } | EnvelopeError::ChecksumMismatch { .. } => {
                codes::JOURNAL_CORRUPT_RECORD
            }
            EnvelopeError::UnsupportedVersion { .. } => codes::JOURNAL_UNSUPPORTED_VERSION,
        }
    }
}

impl Envelope {
    /// The length of the encoded record around a payload of `payload_len` bytes: the frame has
    /// a fixed size, whatever the sequence number and kind.
    pub const fn encoded_len(payload_len: usize) -> usize {
        HEADER_LEN + payload_len + TRAILER_LEN
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_LEN + self.payload.len() + TRAILER_LEN);
        Envelope::frame_appended(&mut out, self.seq, self.kind, |out| out.extend_from_slice(&self.payload));
        out
    }

    /// Appends to `out` the record frame of `seq` and `kind` around the payload `write`
    /// appends: the payload is written in place, so the records of one append share one
    /// buffer. The bytes are those of [`Envelope::encode`].
    pub fn frame_appended(out: &mut Vec<u8>, seq: u64, kind: u16, write: impl FnOnce(&mut Vec<u8>)) {
        let start = out.len();
        out.push(ENVELOPE_VERSION);
        out.extend_from_slice(&seq.to_be_bytes());
        out.extend_from_slice(&kind.to_be_bytes());
        write(out);
        let checksum = crc32c::crc32c(&out[start..]);
        out.extend_from_slice(&checksum.to_be_bytes());
    }

    pub fn decode(bytes: &[u8]) -> Result<Envelope, EnvelopeError> {
        let min = HEADER_LEN + TRAILER_LEN;
        if bytes.len() < min {
            return Err(EnvelopeError::Truncated { len: bytes.len(), min });
        }
        let (body, trailer) = bytes.split_at(bytes.len() - TRAILER_LEN);
        let found = u32::from_be_bytes(trailer.try_into().expect("trailer is 4 bytes"));
        let computed = crc32c::crc32c(body);
        if found != computed {
            return Err(EnvelopeError::ChecksumMismatch { found, computed });
        }
        if body[0] != ENVELOPE_VERSION {
            return Err(EnvelopeError::UnsupportedVersion { found: body[0] });
        }
        let seq = u64::from_be_bytes(body[1..9].try_into().expect("8 bytes"));
        let kind = u16::from_be_bytes(body[9..11].try_into().expect("2 bytes"));
        Ok(Envelope { seq, kind, payload: body[HEADER_LEN..].to_vec() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn layout_is_version_seq_kind_payload_crc() {
        let bytes = Envelope { seq: 2, kind: 7, payload: vec![0xAA] }.encode();
        assert_eq!(&bytes[..12], &[1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 7, 0xAA]);
        assert_eq!(bytes[12..], crc32c::crc32c(&bytes[..12]).to_be_bytes());
        assert_eq!(Envelope::encoded_len(1), bytes.len());
    }

    #[test]
    fn rejects_truncation_corruption_and_future_versions() {
        let bytes = Envelope { seq: 9, kind: 1, payload: b"hello".to_vec() }.encode();
        assert!(matches!(Envelope::decode(&bytes[..5]), Err(EnvelopeError::Truncated { .. })));
        let mut flipped = bytes.clone();
        flipped[12] ^= 0x01;
        assert!(matches!(Envelope::decode(&flipped), Err(EnvelopeError::ChecksumMismatch { .. })));
        let mut future = bytes[..bytes.len() - 4].to_vec();
        future[0] = 2;
        let checksum = crc32c::crc32c(&future);
        future.extend_from_slice(&checksum.to_be_bytes());
        assert_eq!(Envelope::decode(&future), Err(EnvelopeError::UnsupportedVersion { found: 2 }));
    }

    proptest! {
        #[test]
        fn round_trips(seq: u64, kind: u16, payload in proptest::collection::vec(any::<u8>(), 0..256)) {
            let envelope = Envelope { seq, kind, payload };
            prop_assert_eq!(Envelope::decode(&envelope.encode()), Ok(envelope));
        }

        #[test]
        fn any_single_bit_flip_is_detected(payload in proptest::collection::vec(any::<u8>(), 0..64), bit: usize) {
            let mut bytes = Envelope { seq: 1, kind: 1, payload }.encode();
            let bit = bit % (bytes.len() * 8);
            bytes[bit / 8] ^= 1 << (bit % 8);
            prop_assert!(Envelope::decode(&bytes).is_err());
        }

        #[test]
        fn decoding_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = Envelope::decode(&bytes);
        }
    }
}
