//! The fuzz targets' checks (`fuzz/checks.rs`) on stable Rust, for a bounded time: every file of
//! each target's committed seeds (`fuzz/seeds/<target>/`), then a fixed number of seeded
//! mutations of each (bytes flipped, cut, repeated, spliced). The cargo-fuzz targets search
//! further; this keeps what they found, and the obvious damage, tested on every run.
//!
//! `RUNLET_BLESS=1` writes the generated seeds (journal records of a real run) into `fuzz/seeds/`.

#[allow(dead_code)]
#[path = "../../fuzz/checks.rs"]
mod checks;

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use runlet::analyze::Inputs;
use runlet::engine::event::Event;
use runlet::engine::{ToolCall, ToolError, ToolExecutor, ToolOutput, replay};
use runlet::journal::{Envelope, Journal, MemoryJournal};
use runlet::registry::{Registry, RegistryOptions};
use runlet::runtime::{RunOptions, Runtime};
use runlet::value::{List, Value};

/// Mutations of each corpus file per target: enough to hit every kind of damage at many
/// positions, few enough for seconds in a debug build.
const MUTATIONS: usize = 1_000;

fn corpus_dir(target: &str) -> PathBuf {
    [env!("CARGO_MANIFEST_DIR"), "..", "fuzz", "seeds", target].iter().collect()
}

fn corpus(target: &str) -> Vec<Vec<u8>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir(target))
        .unwrap_or_else(|e| panic!("the corpus of {target}: {e}"))
        .map(|entry| entry.expect("a corpus entry").path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "the corpus of {target} is empty");
    files.iter().map(|path| std::fs::read(path).expect("a corpus file")).collect()
}

/// A small seeded generator (splitmix64): the same mutations on every run.
struct Mutations(u64);

impl Mutations {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn mutate(&mut self, seed: &[u8]) -> Vec<u8> {
        let mut bytes = seed.to_vec();
        for _ in 0..=self.below(3) {
            let at = self.below(bytes.len());
            match self.below(5) {
                0 if !bytes.is_empty() => bytes[at] ^= 1 << self.below(8),
                1 => bytes.truncate(at),
                2 => {
                    let end = (at + 1 + self.below(16)).min(bytes.len());
                    let copy = bytes[at..end].to_vec();
                    bytes.splice(at..at, copy);
                }
                3 if !bytes.is_empty() => bytes[at] = self.next() as u8,
                _ => bytes.insert(at.min(bytes.len()), b"{}[]\",:0e\\"[self.below(10)]),
            }
        }
        bytes
    }
}

fn exercise(target: &str, check: fn(&[u8])) {
    exercise_with(target, check, MUTATIONS);
}

/// Each seed of `target` and `count` seeded mutations of it.
fn exercise_with(target: &str, check: fn(&[u8]), count: usize) {
    let mut mutations = Mutations(target.len() as u64);
    for seed in corpus(target) {
        check(&seed);
        for _ in 0..count {
            check(&mutations.mutate(&seed));
        }
    }
}

/// Answers `t.rows()` with three rows and `t.score(row)` with the row, failing row 2 once.
struct Tools(std::sync::Mutex<bool>);

#[async_trait]
impl ToolExecutor for Tools {
    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        let first = call.arguments.iter().next().cloned();
        match (call.tool.as_ref(), first) {
            ("t.rows", _) => Ok(ToolOutput::new(Value::List(
                List::new(vec![Value::Int(1), Value::Int(2), Value::Int(3)]).expect("list"),
            ))),
            (_, Some(Value::Int(2))) if !std::mem::replace(&mut *self.0.lock().expect("lock"), true) => {
                Err(ToolError::retryable("BUSY", "try again"))
            }
            (_, Some(row)) => Ok(ToolOutput::new(row)),
            _ => Err(ToolError::new("BAD", "no row")),
        }
    }
}

/// A runtime over `journal` with `checks::REPLAY_SOURCE` compiled on it.
fn seed_runtime(journal: Arc<MemoryJournal>) -> (Runtime, runlet::runtime::Executable) {
    let registry =
        Registry::from_json_str(checks::REPLAY_REGISTRY, &RegistryOptions::default()).expect("registry");
    let runtime = Runtime::builder()
        .registry(registry.registry)
        .executor(Arc::new(Tools(std::sync::Mutex::new(false))))
        .journal(journal)
        .digest_key("fuzz", b"fuzz key")
        .build()
        .expect("runtime");
    let program = runtime.compile(checks::REPLAY_SOURCE, &Inputs::new()).expect("compiles");
    (runtime, program)
}

/// The records of a real run of `checks::REPLAY_SOURCE`: one seed per record, and one journal
/// in `replay_journal`'s framing.
fn generated_seeds() -> (Vec<Vec<u8>>, Vec<u8>) {
    let journal = Arc::new(MemoryJournal::new());
    let (runtime, program) = seed_runtime(Arc::clone(&journal));
    let run = runtime.start(&program, &Inputs::new()).expect("starts");
    let run_id = run.run_id().clone();
    run.wait().expect("journal");
    let reader = tokio::runtime::Builder::new_current_thread().build().expect("tokio");
    let records = reader.block_on(journal.read(&run_id, 0, usize::MAX)).expect("reads");
    let mut framed = Vec::new();
    for record in &records {
        framed.extend_from_slice(&(record.bytes.len() as u16).to_le_bytes());
        framed.extend_from_slice(&record.bytes);
    }
    (records.iter().map(|r| r.bytes.to_vec()).collect(), framed)
}

/// Images of the run's core replayed to several points of its journal (`checks::core_image`'s
/// seeds): where a committed batch ends, from its first to its last.
fn core_images(records: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let events: Vec<Event> =
        records.iter().map(|bytes| Event::decode(bytes).expect("a real record").1).collect();
    // Replay stops only where a batch ended: a prefix cut inside one diverges.
    let (runtime, program) = seed_runtime(Arc::new(MemoryJournal::new()));
    let core = || runtime.core(&program, &RunOptions::default());
    let images: Vec<Vec<u8>> = (1..=events.len())
        .filter_map(|upto| replay(core(), &events[..upto]).ok())
        .map(|resumed| resumed.core.image().expect("replay ends between reactions"))
        .collect();
    assert!(images.len() > 4, "{} batch ends", images.len());
    [0, images.len() / 3, images.len() / 2, images.len() - 1].map(|at| images[at].clone()).to_vec()
}

/// With `RUNLET_BLESS=1`, writes the generated seeds into `fuzz/seeds/` (records of a run with
/// calls in flight together differ in order from run to run, so they are not compared).
#[test]
fn generated_seeds_bless_the_corpora() {
    if std::env::var_os("RUNLET_BLESS").is_none() {
        return;
    }
    let (records, framed) = generated_seeds();
    for (index, record) in records.iter().take(12).enumerate() {
        std::fs::write(corpus_dir("event_record").join(format!("record-{index:02}")), record)
            .expect("writes");
    }
    std::fs::write(corpus_dir("replay_journal").join("run.journal"), framed).expect("writes");
    for (index, image) in core_images(&records).iter().enumerate() {
        std::fs::write(corpus_dir("core_image").join(format!("image-{index}")), image).expect("writes");
    }
}

#[test]
fn source_parsed() {
    exercise("parse", checks::parse);
}

#[test]
fn source_analyzed() {
    exercise_with("analyze", checks::analyze_source, MUTATIONS / 10);
}

#[test]
fn rcve_decoded() {
    exercise("rcve_decode", checks::rcve_decode);
}

#[test]
fn host_json_read() {
    exercise("host_json", checks::host_json);
}

#[test]
fn json_schemas_imported() {
    exercise_with("schema_import", checks::schema_import, MUTATIONS / 4);
}

#[test]
fn registry_files() {
    exercise("registry", checks::registry);
}

#[test]
fn transcripts() {
    exercise("transcript", checks::transcript);
}

#[test]
fn journal_records() {
    let (records, _) = generated_seeds();
    let mut mutations = Mutations(7);
    for record in &records {
        checks::event_record(record);
        for _ in 0..MUTATIONS / 10 {
            checks::event_record(&mutations.mutate(record));
        }
    }
    exercise("event_record", checks::event_record);
    // A kind a later Runlet may add is refused by its number, not misread.
    let future = Envelope { seq: 1, kind: 200, payload: vec![0x80] }.encode();
    checks::event_record(&future);
    let error = Event::decode(&future).expect_err("an unknown kind");
    assert_eq!(error.code(), runlet::diag::codes::JOURNAL_UNSUPPORTED_VERSION);
}

#[test]
fn core_images_restored() {
    let (records, _) = generated_seeds();
    let mut mutations = Mutations(13);
    for image in core_images(&records) {
        checks::core_image(&image);
        let restored = checks::fresh_core().restore(&image).expect("a real image restores");
        assert_eq!(restored.image().expect("between reactions"), image);
        for _ in 0..MUTATIONS / 4 {
            checks::core_image(&mutations.mutate(&image));
        }
    }
    exercise_with("core_image", checks::core_image, MUTATIONS / 4);
}

#[test]
fn journals_replayed() {
    let (records, framed) = generated_seeds();
    checks::replay_journal(&framed);
    // Whole records dropped, repeated, swapped and cut short: journals that decode but were
    // never written that way.
    let mut mutations = Mutations(11);
    for _ in 0..MUTATIONS {
        let mut journal = records.clone();
        let at = mutations.below(journal.len());
        match mutations.below(4) {
            0 => drop(journal.remove(at)),
            1 => journal.insert(at, journal[at].clone()),
            2 => journal.swap(at, mutations.below(records.len())),
            _ => journal.truncate(at),
        }
        let mut framed = Vec::new();
        for record in &journal {
            framed.extend_from_slice(&(record.len() as u16).to_le_bytes());
            framed.extend_from_slice(record);
        }
        checks::replay_journal(&framed);
    }
    exercise("replay_journal", checks::replay_journal);
}
