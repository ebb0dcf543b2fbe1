//! The properties the fuzz targets check, shared by the cargo-fuzz targets (`fuzz_targets/`)
//! and the stable-Rust run of their corpora that `scripts/test` makes
//! (`runlet-core/tests/fuzz_corpus.rs`): reading untrusted registry files, transcripts and
//! journal records, and replaying journals, never panics, and what is accepted stays consistent.

use std::sync::{Arc, OnceLock};

use runlet::analyze::{AnalyzeOptions, Inputs, analyze};
use runlet::engine::event::Event;
use runlet::engine::{RunCore, RunSettings, ToolTable, replay};
use runlet::plan::Plan;
use runlet::registry::{Registry, RegistryOptions};
use runlet::scripted::Transcript;
use runlet::value::DigestKey;

/// A registry file: it loads or is refused with findings, and a registry that loads has a
/// digest that is the same when it is loaded again.
pub fn registry(bytes: &[u8]) {
    let Ok(text) = std::str::from_utf8(bytes) else { return };
    if let Ok(loaded) = Registry::from_json_str(text, &RegistryOptions::default()) {
        let again = Registry::from_json_str(text, &RegistryOptions::default()).expect("loads twice");
        assert_eq!(loaded.registry.digest(), again.registry.digest(), "the digest is deterministic");
        let _ = loaded.registry.canonical_form();
    }
}

/// A transcript file: it reads or is refused.
pub fn transcript(bytes: &[u8]) {
    if let Ok(text) = std::str::from_utf8(bytes) {
        let _ = Transcript::from_json_str(text);
    }
}

/// One journal record: it decodes or is refused, and what decodes encodes back to the bytes.
pub fn event_record(bytes: &[u8]) {
    if let Ok((seq, event)) = Event::decode(bytes) {
        assert_eq!(event.encode(seq), bytes, "a decoded record re-encodes to its bytes");
    }
}

/// A journal of records, each prefixed by its length (two bytes, little-endian), replayed into
/// a fresh core of a small program with a loop, a boundary and a call: every record decodes or
/// is refused, and replay ends or reports a difference, never panics.
pub fn replay_journal(bytes: &[u8]) {
    let mut events = Vec::new();
    let mut rest = bytes;
    while let [low, high, tail @ ..] = rest {
        let length = usize::from(u16::from_le_bytes([*low, *high])).min(tail.len());
        let (record, after) = tail.split_at(length);
        match Event::decode(record) {
            Ok((_, event)) => events.push(event),
            Err(_) => return,
        }
        rest = after;
    }
    let _ = replay(fresh_core(), &events);
}

/// The program `replay_journal` replays into.
pub const REPLAY_SOURCE: &str = "rows = t.rows()\nscores = for row in rows limit 2 {\n    return boundary retry 1 {\n        return t.score(row)\n    } catch err {\n        return 0\n    }\n}\nreturn scores\n";

/// The registry of [`REPLAY_SOURCE`]'s tools.
pub const REPLAY_REGISTRY: &str = r#"{"tools": [
    {"name": "t.rows", "params": [], "outputSchema": {"type": "array", "items": {"type": "integer"}}, "execution": "pure"},
    {"name": "t.score", "params": [{"name": "row", "schema": {"type": "integer"}}], "outputSchema": {"type": "integer"}, "execution": "idempotent"}
]}"#;

fn fresh_core() -> RunCore {
    static PROGRAM: OnceLock<(Arc<runlet::analyze::hir::Program>, ToolTable)> = OnceLock::new();
    let (program, tools) = PROGRAM.get_or_init(|| {
        let registry =
            Registry::from_json_str(REPLAY_REGISTRY, &RegistryOptions::default()).expect("registry").registry;
        let analysis = analyze(REPLAY_SOURCE, &registry, &Inputs::new(), &AnalyzeOptions::default());
        (Arc::new(analysis.hir.expect("compiles")), ToolTable::of(&registry))
    });
    let key = DigestKey::new("fuzz", b"fuzz key").expect("key");
    RunCore::new(
        Arc::clone(program),
        Arc::new(Plan::new(program)),
        tools.clone(),
        RunSettings::default(),
        key,
    )
}
