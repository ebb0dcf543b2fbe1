//! Keyed digests of sensitive values (spec §4.2, §6.2): operation ids and loop keys of secret
//! values are keyed by the host's digest key, public ones are not; no secret reaches journal
//! metadata or published events; replay restores output labels and refuses another key.

use std::sync::Arc;

use runlet::analyze::Inputs;
use runlet::diag::codes;
use runlet::engine::event::Event;
use runlet::engine::{OperationComponents, OperationId, Outcome, RunCore, replay, replay_run};
use runlet::journal::{Journal, MemoryJournal, RunHeader};
use runlet::observe::{GraphEvent, ViewPolicy};
use runlet::runtime::{RunOptions, Runtime};
use runlet::scripted::{RecordingExecutor, ScriptedExecutor, Transcript};
use runlet::value::{List, Segment, Sensitivity, Value, sha256};

use super::examples::registry;

const VAULT: &str = r#"{"tools": [
    {"name": "vault.get", "params": [], "execution": "pure",
     "outputSchema": {"type": "object", "required": ["id", "token", "tokens"], "properties": {
        "id": {"type": "string"},
        "token": {"type": "string", "x-runlet-sensitivity": "secret"},
        "tokens": {"type": "array", "items": {"type": "string"}, "x-runlet-sensitivity": "secret"}}}},
    {"name": "svc.use", "params": [{"name": "text", "schema": {"type": "string"}}], "execution": "pure",
     "outputSchema": {"type": "string"}},
    {"name": "svc.table", "params": [], "execution": "pure",
     "outputSchema": {"type": "object", "additionalProperties": {"type": "string"}}}
]}"#;

/// A call with a secret argument, a loop over secret items, and a call with a public argument.
const CALLS: &str = "s = vault.get()\nused = svc.use(s.token)\neach = for t in s.tokens {\n    return svc.use(t)\n}\nplain = svc.use(s.id)\nreturn { used, each, plain }\n";

/// [`CALLS`], then a failure whose code, message and details are the secret.
const FAILS: &str = "s = vault.get()\nused = svc.use(s.token)\neach = for t in s.tokens {\n    return svc.use(t)\n}\ndone = [used, each]\nfailed = fail(s.token, \"bad token \" + s.token, { token: s.token }) if done != [] else done\nreturn failed\n";

/// A lookup whose compute error (`RL5206`, "key `…` not found") would quote the secret key.
const LOOKS_UP: &str = "s = vault.get()\ntable = svc.table()\nreturn table[s.token]\n";

const SECRET: &str = "SECRETtoken4711";

fn fixtures() -> String {
    serde_json::json!({
        "vault.get": [{"result": {"id": "v-1", "token": SECRET, "tokens": [format!("{SECRET}-a"), format!("{SECRET}-b")]}}],
        "svc.use": [{"result": "ok"}],
        "svc.table": [{"result": {"alpha": "1"}}]
    })
    .to_string()
}

fn runtime(
    key: Option<(&str, &[u8])>,
    journal: Arc<MemoryJournal>,
    recorder: Arc<RecordingExecutor>,
) -> Runtime {
    let builder = Runtime::builder().registry(registry(VAULT)).executor(recorder).journal(journal);
    let builder = match key {
        Some((id, secret)) => builder.digest_key(id, secret),
        None => builder,
    };
    builder.build().expect("runtime")
}

/// One run of `source`: its outcome, transcript, journal records, header and published events.
struct Ran {
    outcome: Outcome,
    transcript: Transcript,
    records: Vec<Vec<u8>>,
    header: RunHeader,
    published: String,
    runtime: Runtime,
    program: runlet::runtime::Executable,
}

fn run(source: &str, key: Option<(&str, &[u8])>) -> Ran {
    let journal = Arc::new(MemoryJournal::new());
    let scripted = Arc::new(ScriptedExecutor::from_json_str(&fixtures()).expect("fixtures"));
    let recorder = Arc::new(RecordingExecutor::new(scripted));
    let runtime = runtime(key, journal.clone(), recorder.clone());
    let program = runtime.compile(source, &Inputs::new()).expect("compiles");
    let run = runtime.start(&program, &Inputs::new()).expect("starts");
    let run_id = run.run_id().clone();
    let observer = run.observer();
    let mut subscription = observer.subscribe(0, ViewPolicy::default());
    let outcome = run.wait().expect("journal");
    let events: Vec<GraphEvent> = reader().block_on(async move {
        let mut events = Vec::new();
        while let Some(event) = subscription.next().await {
            events.push(event.expect("the journal reads back"));
        }
        events
    });
    let snapshot = observer.snapshot(&ViewPolicy::default());
    let published = format!(
        "{}\n{}",
        serde_json::to_string(&events).expect("events serialize"),
        serde_json::to_string(&snapshot).expect("snapshot serializes")
    );
    let reader = reader();
    let records = reader.block_on(journal.read(&run_id, 0, usize::MAX)).expect("read");
    let header = reader.block_on(journal.header(&run_id)).expect("header");
    let workflow = program.compiled().identity().clone();
    Ran {
        outcome,
        transcript: recorder.transcript(workflow),
        records: records.iter().map(|r| r.bytes.to_vec()).collect(),
        header,
        published,
        runtime,
        program,
    }
}

fn reader() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("reader")
}

/// Each call's `(call site, dynamic key, operation id)`, in call-key order.
fn ids(ran: &Ran) -> Vec<(String, String, OperationId)> {
    let entries = ran.transcript.entries().iter();
    entries.map(|e| (e.key.call_site.to_string(), e.key.dynamic_key.to_string(), e.operation_id)).collect()
}

/// The operation id a call would have with its arguments digested unkeyed.
fn unkeyed_id(ran: &Ran, call_site: &str, dynamic_key: &str, arguments: &List) -> OperationId {
    let workflow = ran.program.compiled().identity().clone();
    let (_, tool) =
        ran.runtime.registry().tools().find(|(_, t)| t.name.to_string() == "svc.use").expect("svc.use");
    OperationId::derive(&OperationComponents {
        workflow: &workflow,
        call_site,
        dynamic_key,
        schema_version: &tool.schema_version,
        input_digest: &sha256(&Value::List(arguments.clone())),
        generation: 0,
    })
}

/// The loop key an element would have with an unkeyed digest.
fn unkeyed_iteration_key(index: usize, element: &str) -> String {
    format!("i{index}~{}", hex::encode(&sha256(&Value::from(element)).bytes()[..4]))
}

const KEY_A: (&str, &[u8]) = ("tenant-a.v1", b"key material a");
const KEY_B: (&str, &[u8]) = ("tenant-b.v1", b"key material b");

#[test]
fn secret_operation_ids_and_loop_keys_are_keyed_by_the_host_key() {
    let (first, again, other) = (run(CALLS, Some(KEY_A)), run(CALLS, Some(KEY_A)), run(CALLS, Some(KEY_B)));
    assert!(matches!(first.outcome, Outcome::Succeeded(_)), "{:?}", first.outcome);
    assert_eq!(ids(&first), ids(&again), "the same key gives the same ids");
    assert_eq!(first.header.keyed_digest, "hmac-sha256:tenant-a.v1");
    let entries = first.transcript.entries();
    assert_eq!(entries.len(), 5, "vault.get, svc.use of the token, two iterations and the public call");
    let (mut keyed, mut public) = (0, 0);
    for ((entry, under_a), under_b) in entries.iter().zip(ids(&first)).zip(ids(&other)) {
        let unkeyed = unkeyed_id(&first, &entry.key.call_site, &entry.key.dynamic_key, &entry.arguments);
        let argument = entry.arguments.iter().next().and_then(Value::as_str).unwrap_or_default();
        if argument.starts_with(SECRET) {
            keyed += 1;
            assert_ne!(under_a.2, under_b.2, "a secret argument's id depends on the key: {entry:?}");
            assert_ne!(under_a.2, unkeyed, "a secret argument's id is never the unkeyed one: {entry:?}");
        } else {
            public += 1;
            assert_eq!(under_a, under_b, "a public call's id does not depend on the key: {entry:?}");
        }
    }
    assert_eq!((keyed, public), (3, 2));
    let loop_keys: Vec<&str> =
        entries.iter().map(|e| e.key.dynamic_key.as_ref()).filter(|k| !k.is_empty()).collect();
    let other_keys: Vec<String> =
        ids(&other).into_iter().map(|(_, key, _)| key).filter(|k| !k.is_empty()).collect();
    assert_eq!(loop_keys.len(), 2);
    for (index, (under_a, under_b)) in loop_keys.iter().zip(&other_keys).enumerate() {
        let element = format!("{SECRET}-{}", ["a", "b"][index]);
        assert!(!under_a.contains(&unkeyed_iteration_key(index, &element)), "{under_a} is keyed");
        assert_ne!(*under_a, under_b.as_str(), "a secret item's loop key depends on the key");
    }
}

#[test]
fn public_programs_keep_their_unkeyed_ids_under_any_key() {
    const PUBLIC: &str = "s = vault.get()\nplain = svc.use(s.id)\nreturn plain\n";
    let (first, other, random) = (run(PUBLIC, Some(KEY_A)), run(PUBLIC, Some(KEY_B)), run(PUBLIC, None));
    assert_eq!(ids(&first), ids(&other));
    assert_eq!(ids(&first), ids(&random));
    let plain = first.transcript.entries().iter().find(|e| &*e.tool == "svc.use").expect("svc.use");
    let unkeyed = unkeyed_id(&first, &plain.key.call_site, &plain.key.dynamic_key, &plain.arguments);
    assert_eq!(plain.operation_id, unkeyed, "public inputs use the unkeyed digest");
    assert!(random.header.keyed_digest.starts_with("hmac-sha256:local-"), "{}", random.header.keyed_digest);
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|window| window == needle)
}

/// Asserts that only the record of the tool answer that carries the secret (the data replay
/// needs) holds its bytes, and that no published event or the run's error shows it.
fn assert_secret_kept_out(ran: &Ran) {
    for bytes in &ran.records {
        if contains(bytes, SECRET.as_bytes()) {
            let (_, event) = Event::decode(bytes).expect("decodes");
            assert!(
                matches!(event, Event::CallCompleted { .. }),
                "the secret is in journal metadata: {event:?}"
            );
        }
    }
    assert!(!ran.published.contains(SECRET), "the secret was published: {}", ran.published);
    let Outcome::Failed(error) = &ran.outcome else { panic!("expected a failure, got {:?}", ran.outcome) };
    let shown = format!("{:?}", error.to_value());
    assert!(!shown.contains(SECRET), "the run's error carries the secret: {shown}");
}

#[test]
fn a_failure_built_from_a_secret_journals_and_publishes_only_redactions() {
    let ran = run(FAILS, Some(KEY_A));
    assert_secret_kept_out(&ran);
    let Outcome::Failed(error) = &ran.outcome else { unreachable!("checked above") };
    assert_eq!(error.code, "<redacted:secret>");
    assert!(error.message.starts_with("<redacted:"), "{}", error.message);
    assert_eq!(error.details.get("token"), Some(&Value::from("<redacted:secret>")));
    let failed = ran.records.iter().map(|bytes| Event::decode(bytes).expect("decodes").1);
    let codes: Vec<String> = failed
        .filter_map(|event| match event {
            Event::NodeFailed { code, .. } | Event::RunFailed { code } => Some(code),
            _ => None,
        })
        .collect();
    assert!(!codes.is_empty() && codes.iter().all(|code| code == "<redacted:secret>"), "{codes:?}");
}

#[test]
fn a_compute_error_about_a_secret_keeps_only_its_code() {
    let ran = run(LOOKS_UP, Some(KEY_A));
    assert_secret_kept_out(&ran);
    let Outcome::Failed(error) = &ran.outcome else { unreachable!("checked above") };
    assert_eq!(error.code, codes::KEY_NOT_FOUND.to_string());
    assert_eq!(error.details.get("redacted"), Some(&Value::from("secret")));
}

fn fresh_core(ran: &Ran) -> RunCore {
    ran.runtime.core(&ran.program, &RunOptions::default())
}

fn events(ran: &Ran) -> Vec<Event> {
    ran.records.iter().map(|bytes| Event::decode(bytes).expect("decodes").1).collect()
}

#[test]
fn replayed_outputs_carry_their_schema_labels() {
    let ran = run("s = vault.get()\nreturn s\n", Some(KEY_A));
    let resumed = replay(fresh_core(&ran), &events(&ran)).expect("replays");
    let Some(Outcome::Succeeded(value)) = resumed.outcome else { panic!("expected the recorded success") };
    let level = |key: &str| value.labels().child(&Segment::Key(key.into())).max();
    assert_eq!(level("token"), Sensitivity::Secret);
    assert_eq!(level("tokens"), Sensitivity::Secret);
    assert_eq!(level("id"), Sensitivity::Public);
}

#[test]
fn replaying_under_another_key_is_refused_naming_both() {
    let ran = run(CALLS, Some(KEY_A));
    let resumed = replay_run(fresh_core(&ran), &ran.header, &events(&ran)).expect("the same key replays");
    assert!(matches!(resumed.outcome, Some(Outcome::Succeeded(_))));
    let other = run(CALLS, Some(KEY_B));
    let error = replay_run(fresh_core(&other), &ran.header, &events(&ran)).expect_err("another key");
    assert_eq!(error.code(), codes::DIGEST_KEY_MISMATCH);
    let message = error.to_string();
    assert!(message.contains("tenant-a.v1") && message.contains("tenant-b.v1"), "{message}");
}

#[test]
fn an_unusable_host_key_fails_the_build() {
    let scripted = Arc::new(ScriptedExecutor::from_json_str("{}").expect("fixtures"));
    for (id, secret) in [("tenant:7", &b"key"[..]), ("tenant-7", &b""[..])] {
        let builder = Runtime::builder().registry(registry(VAULT)).executor(scripted.clone());
        let built = builder.digest_key(id, secret).build();
        let error = built.map(|_| ()).expect_err("an unusable key");
        assert!(error.to_string().starts_with("RL8102"), "{error}");
    }
}
