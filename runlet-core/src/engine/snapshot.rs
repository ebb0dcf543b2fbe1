//! Run snapshots (spec §5.3): the state replay reaches at one journal position — the core's
//! image and the replay [`Ledger`] — so a resume replays only the records after it. The journal
//! stays authoritative: a snapshot is used only when it verifies, and a resume that cannot use
//! one replays from the first record.
//!
//! A snapshot's bytes are a MessagePack body and the SHA-256 of that body. The body names the
//! runtime version that wrote it, the run, a digest of the run header's pins, its position and
//! the SHA-256 of the journal record at that position. [`restore`] checks all of them against
//! the header and the journal before the image is restored, so a snapshot of another run,
//! another header, another runtime or a journal that was rewritten is refused with the reason.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use super::core::{Effect, RunCore};
use super::event::Event;
use super::replay::Ledger;
use crate::journal::{Journal, Record, RunHeader, RunId, Snapshot};

/// When a run's shell writes snapshots: once `every` events were journaled since the last one
/// (or since the run started) and, since a snapshot holds the run's whole state, at least as
/// many journal bytes as the last snapshot had — so writing them never costs more than the
/// journal itself, however large a run's state grows (a loop over a million items keeps every
/// result). For the run whose header is `header`.
#[derive(Debug, Clone)]
pub struct SnapshotPolicy {
    pub every: u64,
    pub header: Arc<RunHeader>,
}

/// A live shell's snapshot writer: the ledger replay would keep, fed the effects and events of
/// every reaction, and where the last snapshot was taken.
#[derive(Debug)]
pub(crate) struct Snapshots {
    policy: SnapshotPolicy,
    ledger: Ledger,
    taken_at: u64,
    /// Journal bytes appended since the last snapshot, and that snapshot's size.
    journaled: usize,
    last_size: usize,
}

impl Snapshots {
    /// A writer for a run whose ledger (empty for a new run) is `ledger`.
    pub(crate) fn new(policy: SnapshotPolicy, ledger: Ledger) -> Snapshots {
        let taken_at = ledger.last_seq();
        Snapshots { policy, ledger, taken_at, journaled: 0, last_size: 0 }
    }

    /// A reaction begins.
    pub(crate) fn reacting(&mut self) {
        self.ledger.reacting();
    }

    /// The reaction asked for `effect` (after recording its events).
    pub(crate) fn effect(&mut self, effect: &Effect) {
        self.ledger.effect(effect);
    }

    /// The core recorded `events` as the records after `after`.
    pub(crate) fn recorded(&mut self, after: u64, events: &[Event]) {
        for (offset, event) in events.iter().enumerate() {
            self.ledger.recorded(after + 1 + offset as u64, event);
        }
    }

    /// Whether a snapshot is due once a commit that ends at `last_seq` with `bytes` of records
    /// returns: the shell then reacts to nothing until it did, so the snapshot sees the core
    /// as that commit left it.
    pub(crate) fn due(&self, last_seq: u64, bytes: usize) -> bool {
        last_seq.saturating_sub(self.taken_at) >= self.policy.every
            && self.journaled.saturating_add(bytes) >= self.last_size
    }

    /// Stores a snapshot of `core` once enough events were journaled since the last one and the
    /// core is between whole reactions; `last` is the journal's last record, just committed
    /// with `bytes` of records. A snapshot that cannot be written loses nothing (the journal is
    /// authoritative): the next attempt comes after as many events again.
    pub(crate) async fn after_commit(
        &mut self,
        journal: &dyn Journal,
        run: &RunId,
        core: &RunCore,
        last: &Record,
        bytes: usize,
    ) {
        let due = self.due(last.seq, bytes);
        self.journaled = self.journaled.saturating_add(bytes);
        if !due || self.ledger.yielded() || core.is_finished() {
            return;
        }
        self.taken_at = last.seq;
        self.journaled = 0;
        if let Ok(snapshot) = capture(&self.policy.header, core, &self.ledger, last) {
            self.last_size = snapshot.bytes.len();
            let _ = journal.store_snapshot(run, snapshot).await;
        }
    }
}

/// The version of the snapshot layout.
const SNAPSHOT_VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
struct Body {
    version: u32,
    runtime_version: String,
    run_id: String,
    pins: [u8; 32],
    upto_seq: u64,
    /// SHA-256 of the bytes of the journal record at `upto_seq`.
    record: [u8; 32],
    #[serde(with = "serde_bytes")]
    core: Vec<u8>,
    ledger: Ledger,
}

/// The snapshot of a run whose core is `core` and replay ledger `ledger`, at the ledger's
/// position, whose record is `last`. Fails only when the core is mid-reaction.
pub fn capture(
    header: &RunHeader,
    core: &RunCore,
    ledger: &Ledger,
    last: &Record,
) -> Result<Snapshot, String> {
    if last.seq != ledger.last_seq() {
        return Err(format!("the record given is {}, the ledger is at {}", last.seq, ledger.last_seq()));
    }
    let body = Body {
        version: SNAPSHOT_VERSION,
        runtime_version: env!("CARGO_PKG_VERSION").to_owned(),
        run_id: header.run_id.to_string(),
        pins: pins(header),
        upto_seq: last.seq,
        record: Sha256::digest(&last.bytes).into(),
        core: core.image()?,
        ledger: ledger.clone(),
    };
    let mut bytes = rmp_serde::to_vec(&body).map_err(|e| format!("the snapshot does not encode: {e}"))?;
    let checksum = Sha256::digest(&bytes);
    bytes.extend_from_slice(&checksum);
    Ok(Snapshot { upto_seq: last.seq, bytes: bytes.into() })
}

/// The core and ledger `snapshot` holds, restored into `fresh` (a new core of the run's
/// program), after checking it against the run's `header` and `record`, the journal's record
/// at the snapshot's position (`None` when the journal has none there). The reason when it
/// cannot be used.
pub fn restore(
    snapshot: &Snapshot,
    header: &RunHeader,
    record: Option<&Record>,
    fresh: RunCore,
) -> Result<(RunCore, Ledger), String> {
    let (body, checksum) =
        snapshot.bytes.split_last_chunk::<32>().ok_or("the snapshot is shorter than its checksum")?;
    if Sha256::digest(body).as_slice() != checksum {
        return Err("the snapshot's checksum does not match its bytes".into());
    }
    let body: Body = rmp_serde::from_slice(body).map_err(|e| format!("the snapshot does not decode: {e}"))?;
    let runtime = env!("CARGO_PKG_VERSION");
    let refusal = if body.version != SNAPSHOT_VERSION {
        Some(format!("it has layout {}, this runtime reads {SNAPSHOT_VERSION}", body.version))
    } else if body.runtime_version != runtime {
        Some(format!("runtime {} wrote it, this is {runtime}", body.runtime_version))
    } else if body.run_id != header.run_id.as_str() || body.pins != pins(header) {
        Some("it belongs to another run or another run header".into())
    } else if body.upto_seq != snapshot.upto_seq || body.upto_seq != body.ledger.last_seq() {
        Some("its position disagrees with itself".into())
    } else {
        match record {
            None => Some(format!("the journal has no record {}", body.upto_seq)),
            Some(record) if record.seq != body.upto_seq => {
                Some(format!("the journal has no record {}", body.upto_seq))
            }
            Some(record) if Sha256::digest(&record.bytes).as_slice() != body.record => Some(format!(
                "the journal's record {} is not the one the snapshot was taken at",
                body.upto_seq
            )),
            Some(_) => None,
        }
    };
    if let Some(refusal) = refusal {
        return Err(refusal);
    }
    let core = fresh.restore(&body.core)?;
    Ok((core, body.ledger))
}

/// A digest of everything the run header pins.
fn pins(header: &RunHeader) -> [u8; 32] {
    let pinned = (
        header.run_id.as_str(),
        header.language_version,
        &header.source_digest,
        &header.registry_digest,
        &header.inputs_digest,
        &header.config_digest,
        &header.keyed_digest,
        header.value_encoding_version,
        header.event_encoding_version,
    );
    let bytes = rmp_serde::to_vec(&pinned).expect("strings and integers encode");
    Sha256::digest(bytes).into()
}
