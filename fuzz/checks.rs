//! The properties the fuzz targets check, shared by the cargo-fuzz targets (`fuzz_targets/`)
//! and the stable-Rust run of their seeds that `scripts/test` makes
//! (`runlet-core/tests/fuzz_corpus.rs`): parsing and analyzing source, decoding RCVE, reading
//! host JSON, importing JSON Schemas, registry files, transcripts and journal records, and
//! replaying journals, never panics, and what is accepted stays consistent.

use std::sync::{Arc, OnceLock};

use runlet::analyze::{AnalyzeOptions, Inputs, analyze};
use runlet::diag::{Diagnostic, apply_fixes};
use runlet::engine::event::Event;
use runlet::engine::{RunCore, RunSettings, ToolTable, replay};
use runlet::plan::Plan;
use runlet::registry::{Registry, RegistryOptions};
use runlet::schema::validate;
use runlet::scripted::Transcript;
use runlet::syntax::{ParseOptions, parse_with};
use runlet::value::{self, DigestKey, Value};

/// Source text: it parses within the configured limits, with diagnostics whose spans and fixes
/// fit the source.
pub fn parse(bytes: &[u8]) {
    let Ok(source) = std::str::from_utf8(bytes) else { return };
    let options = ParseOptions {
        max_source_bytes: 64 << 10,
        max_nesting_depth: 64,
        max_diagnostics: 50,
        ..ParseOptions::default()
    };
    let parse = parse_with(source, &options);
    assert!(parse.diagnostics.len() <= options.max_diagnostics + 1);
    fits(source, &parse.diagnostics);
}

/// Source text checked against the Appendix A registry: bounded diagnostics that fit the
/// source, and a program exactly when there is no error.
pub fn analyze_source(bytes: &[u8]) {
    let Ok(source) = std::str::from_utf8(bytes) else { return };
    let options = AnalyzeOptions { max_work: 100_000, ..AnalyzeOptions::default() };
    let analysis = analyze(source, appendix_a(), &Inputs::new(), &options);
    assert!(analysis.diagnostics.len() <= 2 * options.max_diagnostics + 2);
    assert_eq!(analysis.hir.is_some(), !analysis.has_errors());
    fits(source, &analysis.diagnostics);
}

/// Every diagnostic's span is inside `source` and each of its fixes applies.
fn fits(source: &str, diagnostics: &[Diagnostic]) {
    for diagnostic in diagnostics {
        assert!(diagnostic.span.end as usize <= source.len());
        for fix in &diagnostic.fixes {
            assert!(apply_fixes(source, [fix]).is_some());
        }
    }
}

fn appendix_a() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let text = include_str!("../examples/appendix-a/registry.json");
        Registry::from_json_str(text, &RegistryOptions::default())
            .expect("the example registry loads")
            .registry
    })
}

/// RCVE v1 bytes: whatever decodes is canonical, re-encoding to exactly the bytes.
pub fn rcve_decode(bytes: &[u8]) {
    if let Ok(decoded) = value::rcve::decode(bytes) {
        assert_eq!(value::rcve::encode(&decoded), bytes, "accepted a non-canonical encoding");
        let _ = value::to_presentation_json(&decoded);
    }
}

/// Host JSON: a value read prints as presentation JSON that reads back to an equal value
/// (except integral Numbers of magnitude 2^53 or more, whose shortest digits read back as a
/// different Integer).
pub fn host_json(bytes: &[u8]) {
    if let Ok(parsed) = value::parse_json_bytes(bytes) {
        let json = value::to_presentation_json(&parsed).expect("JSON input has no Bytes");
        if !has_large_integral_number(&parsed) {
            let again = value::parse_json(&json).expect("presentation JSON reads back");
            assert!(value::equals(&again, &parsed), "{json} does not read back");
        }
    }
}

fn has_large_integral_number(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.get().abs() >= 9_007_199_254_740_992.0 && n.get().abs() < 1e21,
        Value::List(list) => list.iter().any(has_large_integral_number),
        Value::Object(object) => object.entries().iter().any(|(_, v)| has_large_integral_number(v)),
        _ => false,
    }
}

/// A JSON Schema, imported as a tool's input and output schema: it is imported or refused with
/// findings, an imported one gives the same digest twice, and values validate against it or
/// are refused (the schema itself, read as a value, and a few scalars), never panicking.
pub fn schema_import(bytes: &[u8]) {
    let Ok(text) = std::str::from_utf8(bytes) else { return };
    let file = format!(
        r#"{{"tools": [{{"name": "t.x", "inputSchema": {{"type": "object", "properties": {{"v": {text}}}}}, "outputSchema": {text}}}]}}"#
    );
    let Ok(loaded) = Registry::from_json_str(&file, &RegistryOptions::default()) else { return };
    let again = Registry::from_json_str(&file, &RegistryOptions::default()).expect("imports twice");
    assert_eq!(loaded.registry.digest(), again.registry.digest(), "the digest is deterministic");
    let registry = loaded.registry;
    let (_, tool) = registry.tools().next().expect("the one tool");
    let samples =
        [value::parse_json(text).ok(), Some(Value::Null), Some(Value::Int(1)), Some(Value::from("s"))];
    for sample in samples.into_iter().flatten() {
        let _ = validate(registry.schemas(), tool.output, &sample);
    }
}

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

/// A run core's image (a snapshot's core, `RunCore::image`) restored into a core of
/// [`REPLAY_SOURCE`]: damaged bytes are refused, never a panic, and an image that restores
/// images again to the same bytes.
pub fn core_image(bytes: &[u8]) {
    if let Ok(core) = fresh_core().restore(bytes) {
        let again = core.image().expect("a restored core is between reactions");
        let twice = fresh_core().restore(&again).expect("a core's own image restores");
        assert_eq!(twice.image().expect("between reactions"), again);
    }
}

/// The program `replay_journal` replays into.
pub const REPLAY_SOURCE: &str = "rows = t.rows()\nscores = for row in rows limit 2 {\n    return boundary retry 1 {\n        return t.score(row)\n    } catch err {\n        return 0\n    }\n}\nreturn scores\n";

/// The registry of [`REPLAY_SOURCE`]'s tools.
pub const REPLAY_REGISTRY: &str = r#"{"tools": [
    {"name": "t.rows", "params": [], "outputSchema": {"type": "array", "items": {"type": "integer"}}, "execution": "pure"},
    {"name": "t.score", "params": [{"name": "row", "schema": {"type": "integer"}}], "outputSchema": {"type": "integer"}, "execution": "idempotent"}
]}"#;

pub fn fresh_core() -> RunCore {
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
