//! The run header (spec §5.5): what a run is pinned to, written once by `create_run` and
//! checked before the run is resumed; what it retains so that a run can be resumed, listed and
//! shown by a process that was given nothing but its id; and the journal's listing of its runs.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::RunId;

/// What a run is pinned to (spec §5.5). Stored once by `create_run`; recovery refuses a run whose
/// header does not match the program and runtime at hand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunHeader {
    pub run_id: RunId,
    pub language_version: u32,
    pub runtime_version: String,
    pub source_digest: String,
    pub registry_digest: String,
    pub inputs_digest: String,
    pub config_digest: String,
    /// The keyed-digest algorithm and key id digests of sensitive values use,
    /// `hmac-sha256:<key id>` (spec §5.5); the key itself never enters the journal. Empty in
    /// headers written before runs pinned it.
    #[serde(default)]
    pub keyed_digest: String,
    pub value_encoding_version: u32,
    pub event_encoding_version: u32,
    /// What the digests above were computed from, so the run can be compiled again from its
    /// header alone; `None` in headers written before runs retained it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retained: Option<RetainedRun>,
}

/// What a run header retains besides its digests (spec §5.5): the source, the registry
/// descriptors, the host inputs and the configuration the run was started with. Each is checked
/// against the header's digest when the run is compiled from it again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetainedRun {
    /// The program's source text, exactly as compiled (shared with the program, not copied
    /// per run).
    pub source: Arc<str>,
    /// The registry file the program was compiled against, when its registry was read from one
    /// (shared with the registry, not copied per run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry: Option<Arc<serde_json::Value>>,
    /// The host inputs: the lowercase hex of the canonical RCVE encoding of an object of input
    /// names to values, so every value comes back exactly as given.
    pub inputs: String,
    /// The limits set for the run, by configuration key (those left at their default are not
    /// listed).
    pub limits: BTreeMap<String, u64>,
    /// The version of the standard prelude whose intrinsics the run calls
    /// (`runlet.prelude/1`).
    pub prelude_version: String,
    /// What an acknowledged append of the journal survives (`Journal::durability`), when the
    /// journal says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub durability: Option<String>,
    /// When the run was created, in Unix milliseconds.
    pub created_unix_ms: u64,
    /// The W3C trace context (`traceparent`, `tracestate`) of the run's anchor span
    /// (`runlet.run`): every process that drives the run parents its session span to it, so a
    /// run is one trace. Empty when the process that created the run exported no traces.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub trace: BTreeMap<String, String>,
}

/// One run of a journal, as [`super::Journal::runs`] lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunEntry {
    pub run_id: RunId,
    /// The sequence number of its last record (0 before the first).
    pub last_seq: u64,
    /// When its last records were appended, in Unix milliseconds, when the store keeps it.
    pub last_append_unix_ms: Option<u64>,
    /// The process driving it ([`super::Journal::claim`]), when the store keeps owners and one
    /// has not released it.
    pub owner: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stores hand headers back as JSON (SQLite's column, a C host's `header` callback); a
    /// header with a field twice is refused rather than read last-wins.
    #[test]
    fn a_header_with_a_repeated_field_is_refused() {
        let header = RunHeader {
            run_id: RunId::new("r-1"),
            language_version: 1,
            runtime_version: "0.1.0".into(),
            source_digest: "sha256:00".into(),
            registry_digest: "sha256:01".into(),
            inputs_digest: "sha256:02".into(),
            config_digest: "sha256:03".into(),
            keyed_digest: String::new(),
            value_encoding_version: 1,
            event_encoding_version: 1,
            retained: None,
        };
        let json = serde_json::to_string(&header).expect("serializes");
        assert_eq!(serde_json::from_str::<RunHeader>(&json).expect("reads back"), header);
        let repeated = json.replacen('{', r#"{"registry_digest":"sha256:ff","#, 1);
        let error = serde_json::from_str::<RunHeader>(&repeated).expect_err("a repeated field");
        assert!(error.to_string().contains("duplicate field `registry_digest`"), "{error}");
    }
}
