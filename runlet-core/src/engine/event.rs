//! The transitions a run records and publishes (spec §5.2). The core emits them in order; the
//! shell appends each batch to the journal (MessagePack in a checksummed envelope) before anything
//! else may observe it.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::diag::{Code, codes};
use crate::engine::core::Resolution;
use crate::engine::executor::ToolError;
// The operation ids call events carry, for readers of events that may not see the rest of the engine.
pub use crate::engine::identity::OperationId;
use crate::journal::{Blob, Envelope, EnvelopeError, Journal, JournalError, JournalErrorKind, Record};
use crate::value::{Value, rcve};

/// Declares [`Event`] from one table of `number => Variant { fields }`, and from the same table
/// the kind's name, its stable number and the lookup from a number back to a name, so no list
/// of kinds is kept by hand beside the enum.
macro_rules! declare_events {
    (
        $(#[$meta:meta])*
        pub enum Event {
            $(
                $(#[$doc:meta])*
                $number:literal => $variant:ident $({ $($fields:tt)* })?,
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
        pub enum Event {
            $( $(#[$doc])* $variant $({ $($fields)* })?, )*
        }

        impl Event {
            /// Every kind's stable number and name, in declaration order.
            pub const KINDS: &'static [(u16, &'static str)] = &[$(($number, stringify!($variant))),*];

            /// The event's name, as `--events` files and observers show it.
            pub fn kind(&self) -> &'static str {
                match self {
                    $( Event::$variant { .. } => stringify!($variant), )*
                }
            }

            /// The stable number the envelope records for this event's kind.
            pub fn kind_number(&self) -> u16 {
                match self {
                    $( Event::$variant { .. } => $number, )*
                }
            }

            /// Whether an event of the kind numbered `number` ends its run: `RunSucceeded` (13),
            /// `RunFailed` (14) or `RunCancelled` (15), the last record a finished run journals.
            /// Asked of every event a host's queue takes, so by number.
            pub fn ends_run(number: u16) -> bool {
                matches!(number, 13..=15)
            }

            /// The name of the kind numbered `number`, if there is one.
            pub fn kind_named(number: u16) -> Option<&'static str> {
                match number {
                    $( $number => Some(stringify!($variant)), )*
                    _ => None,
                }
            }
        }
    };
}

declare_events! {
    /// One recorded transition. `node` is the public node id (spec §4.2). Each variant stands
    /// beside its stable kind number, the number its journal envelope records: numbers are never
    /// reused or changed, and a new kind takes the next one (the payload names its variant, so
    /// the order of variants is free).
    pub enum Event {
        /// The run started with these host inputs (RCVE of their list, in `Program::inputs` order).
        1 => RunCreated {
            inputs: RecordedValue,
        },
        2 => NodeReady {
            node: Arc<str>,
        },
        /// A node was materialised; `inputs` are the nodes its value reads, in operand order (the
        /// data edges of spec §4.3). Observers derive `blocked`/`ready` from their states.
        28 => NodePlanned {
            node: Arc<str>,
            inputs: Vec<Arc<str>>,
        },
        /// The call is being handed to its executor. `operation` is its operation id (spec
        /// §4.2), absent in journals written before runs recorded it.
        3 => CallDispatchPrepared {
            node: Arc<str>,
            tool: Arc<str>,
            attempt: u32,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            operation: Option<OperationId>,
        },
        4 => NodeSucceeded {
            node: Arc<str>,
        },
        /// A tool answered: the output's RCVE bytes. Replay feeds these back instead of calling.
        16 => CallCompleted {
            node: Arc<str>,
            output: RecordedValue,
        },
        /// A tool failed with this error.
        17 => CallFailed {
            node: Arc<str>,
            error: RecordedToolError,
        },
        /// A tool answered after its node was cancelled: evidence only (spec §4.6).
        18 => OrphanedCompletion {
            node: Arc<str>,
        },
        5 => NodeFailed {
            node: Arc<str>,
            code: String,
        },
        6 => NodeCancelled {
            node: Arc<str>,
        },
        /// The host asked to cancel the run; the cancellations it causes follow.
        19 => CancellationRequested,
        7 => BranchSelected {
            node: Arc<str>,
            arm: Arm,
        },
        8 => LoopCollectionResolved {
            node: Arc<str>,
            items: usize,
        },
        9 => IterationMaterialized {
            node: Arc<str>,
            index: usize,
        },
        10 => BoundaryAttemptStarted {
            node: Arc<str>,
            attempt: u32,
        },
        11 => BoundaryRetryScheduled {
            node: Arc<str>,
            attempt: u32,
        },
        12 => CatchSelected {
            node: Arc<str>,
        },
        13 => RunSucceeded,
        14 => RunFailed {
            code: String,
        },
        15 => RunCancelled,
        /// The run crossed an execution limit (`limit` is its configuration key) at `node` ("" for
        /// the run as a whole); the failure it causes follows. For `wall_clock_ms` it records the
        /// shell's timer, so replay feeds it back as an input.
        20 => LimitExceeded {
            limit: String,
            current: u64,
            cap: u64,
            node: Arc<str>,
        },
        /// A nondeterministic intrinsic was sampled: the value's RCVE bytes, or why no value could be
        /// had. Replay feeds this back instead of sampling again (spec §5.3).
        21 => IntrinsicSampled {
            node: Arc<str>,
            output: Result<serde_bytes::ByteBuf, String>,
        },
        /// A running call's cancellation token fired; `NodeCancelled` follows its acknowledgement
        /// or the end of the cancellation grace (spec §4.4 `cancelling`).
        22 => NodeCancelling {
            node: Arc<str>,
        },
        /// A call in a boundary retry took the durable result of the identical operation (same
        /// operation id) that `from` produced in an earlier attempt, without dispatching (spec §2.8).
        23 => CallReused {
            node: Arc<str>,
            from: Arc<str>,
        },
        /// The core asked for a timer: a retry backoff of boundary `node`, or the cancellation
        /// grace of a failed attempt (`node` is the boundary) or run (`node` is empty).
        24 => TimerStarted {
            timer: u32,
            node: Arc<str>,
            delay_ms: u64,
        },
        /// The shell armed the timer to fire at this wall-clock time (Unix milliseconds).
        25 => TimerArmed {
            timer: u32,
            deadline_unix_ms: u64,
        },
        26 => TimerFired {
            timer: u32,
        },
        /// The run continued after a restart; calls left dispatching are recovered by class.
        27 => RunResumed,
        /// The shell started the run's `wall_clock_ms` clock at this wall-clock time (Unix
        /// milliseconds); a resumed run counts its time from here, not from the resumption.
        29 => WallClockStarted {
            started_unix_ms: u64,
        },
        /// The host resolved the uncertain outcome of a call left dispatching (spec §5.4); the
        /// next resume applies it.
        30 => OperationResolved {
            node: Arc<str>,
            resolution: RecordedResolution,
        },
        /// The host authorized a fresh operation generation for a call left dispatching (spec
        /// §5.4); the next resume dispatches it under that generation's operation id.
        31 => FreshGenerationAuthorized {
            node: Arc<str>,
            generation: u32,
        },
        /// The host gave up recovering the run after it was resumed `resumes` times without
        /// ending: it is parked as failed (`RL7306`), its calls left dispatching abandoned.
        32 => RunParked {
            resumes: u32,
        },
        /// A running call reported its progress (an MCP server's `notifications/progress`, a
        /// host executor's report): evidence for observers, replayed as the input it was.
        33 => CallHeartbeat {
            node: Arc<str>,
            progress: Progress,
        },
    }
}

/// The longest progress message kept, in bytes (longer ones are cut at a character boundary).
pub const MAX_PROGRESS_MESSAGE: usize = 512;

/// A finite number of a progress report. Compared by its bits, so records of it are `Eq`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Amount(f64);

impl Amount {
    /// The amount `value`, if it is finite.
    pub fn new(value: f64) -> Option<Amount> {
        value.is_finite().then_some(Amount(value))
    }

    pub fn get(self) -> f64 {
        self.0
    }
}

impl PartialEq for Amount {
    fn eq(&self, other: &Amount) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

impl Eq for Amount {}

/// How far a running call is, as its tool says: `progress` so far, of `total` when known, with
/// an optional human-readable message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    pub progress: Amount,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<Amount>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl Progress {
    /// A report of `progress` (of `total`), or None when a number is not finite. The message
    /// is cut to [`MAX_PROGRESS_MESSAGE`] bytes.
    pub fn new(progress: f64, total: Option<f64>, message: Option<&str>) -> Option<Progress> {
        let total = match total {
            Some(total) => Some(Amount::new(total)?),
            None => None,
        };
        let message = message.map(|text| {
            let mut end = text.len().min(MAX_PROGRESS_MESSAGE);
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text[..end].to_owned()
        });
        Some(Progress { progress: Amount::new(progress)?, total, message })
    }
}

/// A host's resolution of an uncertain operation as the journal keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum RecordedResolution {
    /// The operation took effect: the output's RCVE bytes.
    Applied {
        #[serde(with = "serde_bytes")]
        output: Vec<u8>,
    },
    NotApplied,
    Failed {
        error: RecordedToolError,
    },
}

impl From<&Resolution> for RecordedResolution {
    fn from(resolution: &Resolution) -> Self {
        match resolution {
            Resolution::Applied(value) => RecordedResolution::Applied { output: rcve::encode(value) },
            Resolution::NotApplied => RecordedResolution::NotApplied,
            Resolution::Failed(error) => RecordedResolution::Failed { error: RecordedToolError::from(error) },
        }
    }
}

impl RecordedResolution {
    /// The resolution again, or why the recorded bytes are not one.
    pub fn to_resolution(&self) -> Result<Resolution, String> {
        Ok(match self {
            RecordedResolution::Applied { output } => {
                Resolution::Applied(rcve::decode(output).map_err(|e| e.to_string())?)
            }
            RecordedResolution::NotApplied => Resolution::NotApplied,
            RecordedResolution::Failed { error } => Resolution::Failed(
                error.to_tool_error().ok_or("the recorded error details are not an object")?,
            ),
        })
    }
}

/// A tool error as the journal keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedToolError {
    pub code: String,
    pub message: String,
    pub retryable: bool,
    pub retry_after_ms: Option<u64>,
    /// RCVE of the details object.
    #[serde(with = "serde_bytes")]
    pub details: Vec<u8>,
    pub uncertain: bool,
}

impl From<&ToolError> for RecordedToolError {
    fn from(error: &ToolError) -> Self {
        RecordedToolError {
            code: error.code.clone(),
            message: error.message.clone(),
            retryable: error.retryable,
            retry_after_ms: error.retry_after.map(|d| d.as_millis().min(u128::from(u64::MAX)) as u64),
            details: rcve::encode(&Value::Object(error.details.clone())),
            uncertain: error.uncertain,
        }
    }
}

impl RecordedToolError {
    /// The tool error again, or `None` when the recorded details are not an RCVE object.
    pub fn to_tool_error(&self) -> Option<ToolError> {
        let Ok(Value::Object(details)) = rcve::decode(&self.details) else { return None };
        let mut error = ToolError::new(self.code.clone(), self.message.clone())
            .with_details(details)
            .with_uncertain(self.uncertain);
        error.retryable = self.retryable;
        error.retry_after = self.retry_after_ms.map(std::time::Duration::from_millis);
        Some(error)
    }
}

/// Which alternative a conditional or `and`/`or` took.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Arm {
    Then,
    Else,
    /// `and`/`or` decided by its left operand; the right arm never runs.
    ShortCircuit,
    /// `and`/`or` needs its right operand.
    Right,
}

/// A value's RCVE bytes as a record holds them: inline, or — in a journal that keeps large
/// values apart ([`Journal::keeps_blobs`](crate::journal::Journal::keeps_blobs)) — the SHA-256
/// of the bytes and their length, the blob the journal keeps them in. Inline bytes encode as
/// MessagePack `bin` (as before blobs existed); a blob reference as a two-element array, which
/// a reader that knows no blobs refuses instead of misreading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordedValue {
    Inline(Vec<u8>),
    Blob { digest: [u8; 32], len: u64 },
}

impl RecordedValue {
    /// The bytes, when they are inline: a value read from a journal is inline once its blobs
    /// were attached ([`Event::attach_blobs`](crate::engine::event::Event)).
    pub fn inline(&self) -> Option<&[u8]> {
        match self {
            RecordedValue::Inline(bytes) => Some(bytes),
            RecordedValue::Blob { .. } => None,
        }
    }
}

impl From<Vec<u8>> for RecordedValue {
    fn from(bytes: Vec<u8>) -> RecordedValue {
        RecordedValue::Inline(bytes)
    }
}

impl Serialize for RecordedValue {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RecordedValue::Inline(bytes) => s.serialize_bytes(bytes),
            RecordedValue::Blob { digest, len } => (serde_bytes::Bytes::new(digest), len).serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for RecordedValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<RecordedValue, D::Error> {
        struct Shape;
        impl<'de> serde::de::Visitor<'de> for Shape {
            type Value = RecordedValue;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a value's bytes or a blob reference [digest, length]")
            }
            fn visit_bytes<E: serde::de::Error>(self, bytes: &[u8]) -> Result<RecordedValue, E> {
                Ok(RecordedValue::Inline(bytes.to_vec()))
            }
            fn visit_byte_buf<E: serde::de::Error>(self, bytes: Vec<u8>) -> Result<RecordedValue, E> {
                Ok(RecordedValue::Inline(bytes))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<RecordedValue, A::Error> {
                use serde::de::Error as _;
                let digest: serde_bytes::ByteBuf =
                    seq.next_element()?.ok_or_else(|| A::Error::invalid_length(0, &self))?;
                let len: u64 = seq.next_element()?.ok_or_else(|| A::Error::invalid_length(1, &self))?;
                if seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
                    return Err(A::Error::invalid_length(3, &self));
                }
                let digest = <[u8; 32]>::try_from(digest.as_slice())
                    .map_err(|_| A::Error::custom("a blob digest is 32 bytes"))?;
                Ok(RecordedValue::Blob { digest, len })
            }
        }
        d.deserialize_any(Shape)
    }
}

impl Event {
    /// This event as a journal that keeps values of more than `threshold` bytes apart records
    /// it — the value replaced by a reference to its blob — and the blob; `None` when the event
    /// holds no value that large.
    pub fn detached(&self, threshold: usize) -> Option<(Event, Blob)> {
        let (Event::CallCompleted { output: RecordedValue::Inline(bytes), .. }
        | Event::RunCreated { inputs: RecordedValue::Inline(bytes) }) = self
        else {
            return None;
        };
        if bytes.len() <= threshold {
            return None;
        }
        let blob = Blob::of(bytes);
        let reference = RecordedValue::Blob { digest: blob.digest, len: bytes.len() as u64 };
        let detached = match self {
            Event::CallCompleted { node, .. } => {
                Event::CallCompleted { node: node.clone(), output: reference }
            }
            _ => Event::RunCreated { inputs: reference },
        };
        Some((detached, blob))
    }

    /// Puts back the value this event, read from `journal`, keeps in a blob: the blob's bytes,
    /// checked against the digest and length the record names (`RL7008` when the journal does
    /// not have them).
    pub async fn attach_blobs(&mut self, journal: &dyn Journal) -> Result<(), JournalError> {
        let (Event::CallCompleted { output: slot, .. } | Event::RunCreated { inputs: slot }) = self else {
            return Ok(());
        };
        let RecordedValue::Blob { digest, len } = slot else { return Ok(()) };
        let missing = || {
            JournalError::new(
                JournalErrorKind::Corrupt,
                format!(
                    "a record names the blob sha256:{} of {len} bytes, which the journal does not have",
                    hex::encode(*digest)
                ),
            )
        };
        let bytes = journal.blob(digest).await?.ok_or_else(missing)?;
        if bytes.len() as u64 != *len || Blob::digest_of(&bytes) != *digest {
            return Err(missing());
        }
        *slot = RecordedValue::Inline(bytes.to_vec());
        Ok(())
    }
}

/// Why journal bytes are not an event this runtime can read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EventDecodeError {
    #[error(transparent)]
    Envelope(#[from] EnvelopeError),
    /// The envelope of a record read at a known sequence number does not hold.
    #[error("journal record {seq}: {error}")]
    EnvelopeAt { seq: u64, error: EnvelopeError },
    #[error("journal record {seq} has event kind {kind}, which this runtime does not know")]
    UnknownKind { seq: u64, kind: u16 },
    #[error("journal record {seq} does not decode as a {expected} event: {reason}")]
    Payload { seq: u64, expected: &'static str, reason: String },
    #[error("journal record {seq} holds the envelope of record {found}: the store moved or copied it")]
    Misplaced { seq: u64, found: u64 },
}

impl EventDecodeError {
    pub fn code(&self) -> Code {
        match self {
            EventDecodeError::Envelope(error) | EventDecodeError::EnvelopeAt { error, .. } => error.code(),
            EventDecodeError::UnknownKind { .. } => codes::JOURNAL_UNSUPPORTED_VERSION,
            EventDecodeError::Payload { .. } | EventDecodeError::Misplaced { .. } => {
                codes::JOURNAL_CORRUPT_RECORD
            }
        }
    }
}

impl Event {
    /// The journal record of this event at sequence number `seq`.
    pub fn encode(&self, seq: u64) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_appended(seq, &mut out);
        out
    }

    /// [`Event::encode`] after what `out` holds already.
    pub fn encode_appended(&self, seq: u64, out: &mut Vec<u8>) {
        Envelope::frame_appended(out, seq, self.kind_number(), |out| {
            rmp_serde::encode::write_named(out, self).expect("events serialize to MessagePack")
        });
    }

    /// The length of [`Event::encode`]'s record, without building it; the same at every
    /// sequence number.
    pub fn encoded_len(&self) -> usize {
        let mut payload = ByteCount(0);
        rmp_serde::encode::write_named(&mut payload, self).expect("events serialize to MessagePack");
        Envelope::encoded_len(payload.0)
    }

    /// The event of journal record `record`, which must be the one written at the record's own
    /// sequence number: a checksummed envelope of another position is corrupt too.
    pub fn decode_record(record: &Record) -> Result<Event, EventDecodeError> {
        let decoded = Event::decode(&record.bytes).map_err(|error| match error {
            EventDecodeError::Envelope(error) => EventDecodeError::EnvelopeAt { seq: record.seq, error },
            error => error,
        });
        match decoded? {
            (seq, event) if seq == record.seq => Ok(event),
            (found, _) => Err(EventDecodeError::Misplaced { seq: record.seq, found }),
        }
    }

    /// Reads a journal record back: the sequence number it was written at and the event.
    pub fn decode(bytes: &[u8]) -> Result<(u64, Event), EventDecodeError> {
        let envelope = Envelope::decode(bytes)?;
        let seq = envelope.seq;
        let Some(expected) = Event::kind_named(envelope.kind) else {
            return Err(EventDecodeError::UnknownKind { seq, kind: envelope.kind });
        };
        let event: Event = rmp_serde::from_slice(&envelope.payload)
            .map_err(|err| EventDecodeError::Payload { seq, expected, reason: err.to_string() })?;
        if event.kind() != expected {
            return Err(EventDecodeError::Payload {
                seq,
                expected,
                reason: format!("the payload is a {}", event.kind()),
            });
        }
        Ok((seq, event))
    }
}

/// `time` in Unix milliseconds, the clock every `*_unix_ms` field of an event is on (0 before
/// the epoch, saturating far after it).
pub fn unix_ms(time: std::time::SystemTime) -> u64 {
    time.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis().min(u128::from(u64::MAX)) as u64)
}

/// A writer that only counts the bytes written to it.
struct ByteCount(usize);

impl std::io::Write for ByteCount {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0 += bytes.len();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn every_kind() -> Vec<Event> {
        let node = || Arc::<str>::from("let:x/value#00");
        vec![
            Event::RunCreated { inputs: vec![0x30, 0x00].into() },
            Event::NodeReady { node: node() },
            Event::CallDispatchPrepared {
                node: node(),
                tool: "crm.customer".into(),
                attempt: 2,
                operation: Some(format!("op:{}", "ab".repeat(32)).parse().expect("an operation id")),
            },
            Event::NodeSucceeded { node: node() },
            Event::NodeFailed { node: node(), code: "RATE_LIMITED".into() },
            Event::NodeCancelled { node: node() },
            Event::BranchSelected { node: node(), arm: Arm::Else },
            Event::LoopCollectionResolved { node: node(), items: 3 },
            Event::IterationMaterialized { node: node(), index: 1 },
            Event::BoundaryAttemptStarted { node: node(), attempt: 1 },
            Event::BoundaryRetryScheduled { node: node(), attempt: 2 },
            Event::CatchSelected { node: node() },
            Event::RunSucceeded,
            Event::RunFailed { code: "RL5102".into() },
            Event::RunCancelled,
            Event::CallCompleted { node: node(), output: vec![0x10, 0x02].into() },
            Event::CallFailed {
                node: node(),
                error: RecordedToolError {
                    code: "RATE_LIMITED".into(),
                    message: "slow down".into(),
                    retryable: true,
                    retry_after_ms: Some(250),
                    details: vec![0x31, 0x00],
                    uncertain: false,
                },
            },
            Event::OrphanedCompletion { node: node() },
            Event::CancellationRequested,
            Event::LimitExceeded { limit: "tool_calls".into(), current: 4, cap: 3, node: node() },
            Event::IntrinsicSampled {
                node: node(),
                output: Ok(serde_bytes::ByteBuf::from(vec![0x10, 0x02])),
            },
            Event::NodeCancelling { node: node() },
            Event::CallReused { node: node(), from: "a1|let:x/value#00".into() },
            Event::TimerStarted { timer: 0, node: node(), delay_ms: 250 },
            Event::TimerArmed { timer: 0, deadline_unix_ms: 1_764_489_600_000 },
            Event::TimerFired { timer: 0 },
            Event::RunResumed,
            Event::NodePlanned { node: node(), inputs: vec![node()] },
            Event::WallClockStarted { started_unix_ms: 1_764_489_600_000 },
            Event::OperationResolved {
                node: node(),
                resolution: RecordedResolution::Applied { output: vec![0x10, 0x02] },
            },
            Event::FreshGenerationAuthorized { node: node(), generation: 1 },
            Event::RunParked { resumes: 3 },
            Event::CallHeartbeat {
                node: node(),
                progress: crate::engine::Progress::new(2.0, Some(5.0), Some("two of five")).unwrap(),
            },
        ]
    }

    /// Journals written before dispatches recorded their operation id still read, as a
    /// dispatch without one.
    #[test]
    fn a_dispatch_recorded_without_its_operation_reads_back() {
        #[derive(Serialize)]
        enum Old {
            CallDispatchPrepared { node: String, tool: String, attempt: u32 },
        }
        let payload = rmp_serde::to_vec_named(&Old::CallDispatchPrepared {
            node: "n1".into(),
            tool: "t.x".into(),
            attempt: 0,
        })
        .expect("encode");
        let record = Envelope { seq: 3, kind: 3, payload }.encode();
        let expected = Event::CallDispatchPrepared {
            node: "n1".into(),
            tool: "t.x".into(),
            attempt: 0,
            operation: None,
        };
        assert_eq!(Event::decode(&record), Ok((3, expected)));
    }

    #[test]
    fn inline_values_encode_as_before_blobs_and_blob_references_round_trip() {
        #[derive(Serialize)]
        enum Before {
            CallCompleted {
                node: String,
                #[serde(with = "serde_bytes")]
                output: Vec<u8>,
            },
        }
        let before = Before::CallCompleted { node: "n1".into(), output: vec![0x10, 0x02] };
        let inline = Event::CallCompleted { node: "n1".into(), output: vec![0x10, 0x02].into() };
        let payload = rmp_serde::to_vec_named(&inline).expect("encode");
        assert_eq!(
            payload,
            rmp_serde::to_vec_named(&before).expect("encode"),
            "journals of before still read"
        );
        let reference = Event::CallCompleted {
            node: "n1".into(),
            output: RecordedValue::Blob { digest: [7; 32], len: 70_000 },
        };
        assert_eq!(Event::decode(&reference.encode(4)), Ok((4, reference)));
        let large = Event::RunCreated { inputs: vec![0x30; 100].into() };
        let (detached, blob) = large.detached(64).expect("larger than the threshold");
        assert_eq!(
            detached,
            Event::RunCreated { inputs: RecordedValue::Blob { digest: blob.digest, len: 100 } }
        );
        assert!(large.detached(100).is_none(), "at the threshold a value stays inline");
    }

    #[test]
    fn every_kind_has_a_number_and_round_trips() {
        let events = every_kind();
        assert_eq!(events.len(), Event::KINDS.len());
        for (index, event) in events.into_iter().enumerate() {
            assert_eq!(event.kind_number() as usize, index + 1);
            assert_eq!(Event::kind_named(event.kind_number()), Some(event.kind()));
            assert_eq!(Event::decode(&event.encode(7)), Ok((7, event.clone())));
            for seq in [1, 300, u64::MAX] {
                assert_eq!(event.encoded_len(), event.encode(seq).len(), "{}", event.kind());
            }
        }
    }

    #[test]
    fn kind_numbers_are_distinct_and_unknown_ones_have_no_name() {
        let numbers: std::collections::BTreeSet<u16> = Event::KINDS.iter().map(|(n, _)| *n).collect();
        assert_eq!(numbers.len(), Event::KINDS.len());
        assert_eq!(Event::kind_named(0), None);
        assert_eq!(Event::kind_named(Event::KINDS.len() as u16 + 1), None);
    }

    #[test]
    fn only_a_run_s_three_ends_end_it() {
        let ends: Vec<u16> = Event::KINDS.iter().map(|(n, _)| *n).filter(|n| Event::ends_run(*n)).collect();
        assert_eq!(ends, [Event::RunSucceeded.kind_number(), 14, Event::RunCancelled.kind_number()]);
        assert_eq!(Event::kind_named(14), Some("RunFailed"));
    }

    #[test]
    fn encoding_after_other_records_in_one_buffer_gives_the_same_records() {
        let mut buffer = Vec::new();
        for (seq, event) in every_kind().into_iter().rev().enumerate() {
            let start = buffer.len();
            event.encode_appended(seq as u64, &mut buffer);
            let record = &buffer[start..];
            assert_eq!(record, event.encode(seq as u64), "{}", event.kind());
            let payload = rmp_serde::to_vec_named(&event).expect("encode");
            assert_eq!(record, Envelope { seq: seq as u64, kind: event.kind_number(), payload }.encode());
        }
    }

    #[test]
    fn a_failed_sample_round_trips() {
        let event =
            Event::IntrinsicSampled { node: "let:r/value#00".into(), output: Err("no source".into()) };
        assert_eq!(Event::decode(&event.encode(3)), Ok((3, event)));
    }

    #[test]
    fn every_resolution_round_trips_through_the_journal() {
        let failed = ToolError::new("CARD_DECLINED", "declined").with_retry_after(Duration::from_millis(5));
        for resolution in
            [Resolution::Applied(Value::Int(7)), Resolution::NotApplied, Resolution::Failed(failed)]
        {
            let recorded = RecordedResolution::from(&resolution);
            let event =
                Event::OperationResolved { node: "let:b/value#00".into(), resolution: recorded.clone() };
            assert_eq!(Event::decode(&event.encode(4)), Ok((4, event)));
            assert_eq!(recorded.to_resolution(), Ok(resolution));
        }
        let unreadable = RecordedResolution::Applied { output: vec![0xff] };
        assert!(unreadable.to_resolution().is_err(), "bytes that are no value are refused, not trusted");
    }

    #[test]
    fn unknown_kinds_and_mismatched_payloads_are_errors() {
        let payload = rmp_serde::to_vec_named(&Event::RunCancelled).expect("encode");
        let future = Envelope { seq: 1, kind: 999, payload: payload.clone() }.encode();
        assert!(matches!(Event::decode(&future), Err(EventDecodeError::UnknownKind { kind: 999, .. })));
        let mislabelled = Envelope { seq: 1, kind: 1, payload }.encode();
        assert!(matches!(Event::decode(&mislabelled), Err(EventDecodeError::Payload { .. })));
        let garbage = Envelope { seq: 1, kind: 2, payload: vec![0xc1] }.encode();
        assert!(matches!(Event::decode(&garbage), Err(EventDecodeError::Payload { .. })));
    }
}
