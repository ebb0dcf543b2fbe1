//! The adapter through the Rust API against real servers: the handshake's record, paged tool
//! import of every reference server, the bounded shutdown of stdio servers (stdin closed, then
//! SIGTERM, then SIGKILL), progress journaled as the call's heartbeats, the host's tool deadline ending a
//! call at the server, and parallel calls to several servers under one runtime; and servers
//! that break the protocol (`rogue_server.py`, over stdio and Streamable HTTP): tool lists that
//! never end, answers that cannot be read.

#[path = "../../tests/mcp-servers/support.rs"]
mod support;

use std::sync::Arc;
use std::time::Duration;

use runlet::analyze::Inputs;
use runlet::engine::Outcome;
use runlet::observe::ViewPolicy;
use runlet::runtime::Runtime;
use runlet::value::to_presentation_json;
use runlet_mcp::{McpClient, McpOptions, ServerSpec, Stopped};
use support::{scratch, servers};

fn spec(flag: &str) -> ServerSpec {
    ServerSpec::parse_flag(flag).expect("a server flag")
}

/// Runs `source` against the client's tools under `runtime` settings; the result as JSON text.
fn run(client: &McpClient, source: &str, timeout: Option<Duration>) -> Result<String, (String, String)> {
    let registry = client.registry(None).expect("the servers' registry loads").registry;
    let mut builder = Runtime::builder().registry(registry).executor(Arc::new(client.executor()));
    if let Some(timeout) = timeout {
        builder = builder.tool_timeout(timeout);
    }
    let runtime = builder.build().expect("a runtime");
    let program = runtime.compile(source, &Inputs::new()).expect("the program compiles");
    match runtime.start(&program, &Inputs::new()).expect("starts").wait().expect("the journal works") {
        Outcome::Succeeded(value) => Ok(to_presentation_json(value.value()).expect("JSON")),
        Outcome::Failed(error) => Err((error.code.to_string(), error.message.clone())),
        Outcome::Cancelled => Err(("cancelled".into(), String::new())),
    }
}

#[test]
fn every_reference_server_imports_and_records_its_handshake() {
    let s = servers();
    let dir = scratch("import");
    let specs = [
        spec(&format!("fs={} {}", s.reference("filesystem"), dir.display())),
        spec(&format!("memory={}", s.memory(&dir.join("m.jsonl")))),
        spec(&format!("everything={}", s.reference("everything"))),
    ];
    let client = McpClient::connect(&specs, &McpOptions::default()).expect("the servers attach");
    let identities: Vec<_> =
        client.identities().map(|i| (i.name.as_str(), i.protocol_version.as_str())).collect();
    assert_eq!(identities, [("fs", "2025-11-25"), ("memory", "2025-11-25"), ("everything", "2025-11-25")]);
    assert!(client.warnings().is_empty(), "{:?}", client.warnings());
    let names: Vec<String> = client.executor().tool_names().map(str::to_owned).collect();
    assert!(names.contains(&"everything.get_tiny_image".to_owned()), "{names:?}");
    assert!(names.len() > 30, "{names:?}");
    let stopped = client.shutdown();
    assert!(stopped.iter().all(|(_, how)| *how == Stopped::Exited), "closing stdin ends them: {stopped:?}");
}

#[test]
fn a_server_that_ignores_stdin_and_sigterm_is_killed_within_the_grace_periods() {
    let s = servers();
    let options = McpOptions { shutdown_grace: Duration::from_millis(300), ..McpOptions::default() };
    let client =
        McpClient::connect(&[spec(&format!("lab={}", s.lab("stubborn")))], &options).expect("attaches");
    assert_eq!(client.shutdown(), [("lab".to_owned(), Stopped::Killed)]);
}

#[test]
fn progress_notifications_are_journaled_as_the_calls_heartbeats() {
    let s = servers();
    let client = McpClient::connect(&[spec(&format!("lab={}", s.lab("stdio")))], &McpOptions::default())
        .expect("attaches");
    let registry = client.registry(None).expect("the registry loads").registry;
    let runtime = Runtime::builder()
        .registry(registry)
        .executor(Arc::new(client.executor()))
        .build()
        .expect("a runtime");
    let program = runtime.compile("return lab.steps({count: 4})\n", &Inputs::new()).expect("compiles");
    let run = runtime.start(&program, &Inputs::new()).expect("starts");
    let id = run.run_id().clone();
    assert!(matches!(run.wait().expect("the journal works"), Outcome::Succeeded(_)));
    let events = runtime.journal_events(&program, &id, &ViewPolicy::default()).expect("events");
    let beats: Vec<_> = events.iter().filter(|e| e.kind == "CallHeartbeat").collect();
    let steps: Vec<f64> = beats.iter().filter_map(|e| e.progress.map(|p| p.get())).collect();
    // Reports coalesce while the run is busy, so some steps may share one record; the last
    // report always survives.
    assert!(steps.windows(2).all(|w| w[0] < w[1]) && steps.last() == Some(&4.0), "{steps:?}");
    assert!(
        beats.iter().all(|e| e.tool.as_deref() == Some("lab.steps") && e.total.map(|t| t.get()) == Some(4.0))
    );
    assert_eq!(beats.last().and_then(|e| e.message.as_deref()), Some("step 4"));
    let answered = events.iter().position(|e| e.kind == "CallCompleted");
    assert!(events.iter().position(|e| e.kind == "CallHeartbeat") < answered);
}

#[test]
fn the_hosts_tool_deadline_ends_a_slow_call_and_the_server_is_told() {
    let s = servers();
    let lab = s.lab_http();
    let client =
        McpClient::connect(&[spec(&format!("lab={}", lab.url))], &McpOptions::default()).expect("attaches");
    let error =
        run(&client, "return lab.slow({tag: \"late\", seconds: 60})\n", Some(Duration::from_millis(500)))
            .expect_err("the deadline passes");
    assert_eq!(error.0, "RL6102", "{error:?}");
    let mut told = false;
    for _ in 0..100 {
        if run(&client, "return lab.cancelled_tags({})\n", None).expect("answers").contains("late") {
            told = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(told, "the server saw notifications/cancelled for the call");
}

#[test]
fn one_runtime_calls_several_servers_in_parallel() {
    let s = servers();
    let lab = s.lab_http();
    let specs =
        [spec(&format!("lab={}", lab.url)), spec(&format!("everything={}", s.reference("everything")))];
    let client = McpClient::connect(&specs, &McpOptions::default()).expect("attaches");
    let source = r#"sums = for n in [1, 2, 3] {
    return {lab: lab.add({a: n, b: n}).result, everything: everything.get_sum({a: n, b: 100})}
}
return sums
"#;
    let value = run(&client, source, None).expect("succeeds");
    assert!(value.contains(r#"{"everything":"The sum of 1 and 100 is 101.","lab":2}"#), "{value}");
    assert!(value.contains(r#""lab":6"#), "{value}");
}

/// A server whose tool list never ends — pages for ever, a cursor given twice, more tools than
/// any host needs — is refused with `RL8603` saying which, never followed until memory runs out.
#[test]
fn a_tool_list_that_never_ends_is_refused() {
    let s = servers();
    for (mode, why) in [
        ("pages-for-ever", format!("more than {} pages", runlet_mcp::MOST_TOOL_PAGES)),
        ("same-cursor", "repeats the cursor".to_owned()),
        ("too-many-tools", format!("more than {} tools", runlet_mcp::MOST_TOOLS)),
        ("deep-tools", "nested deeper than 127 levels".to_owned()),
    ] {
        let attached =
            McpClient::connect(&[spec(&format!("rogue={}", s.rogue(mode)))], &McpOptions::default());
        let error = attached.expect_err(mode);
        assert_eq!(error.code.to_string(), "RL8603", "{mode}: {error}");
        assert!(error.message.contains(&why), "{mode}: {error}");
    }
}

/// An answer Runlet cannot read — longer than the transport takes, nested deeper than its
/// parser goes — fails the call at once (`RL6111`, saying what the server sent) instead of
/// leaving it waiting for an answer that was dropped. One level less deep is read.
#[test]
fn an_answer_that_cannot_be_read_fails_the_call_instead_of_hanging_it() {
    let s = servers();
    let deepest = spec(&format!("rogue={} 124", s.rogue("deep-result")));
    let client = McpClient::connect(&[deepest], &McpOptions::default()).expect("attaches");
    let answer = run(&client, "return rogue.echo({})\n", None).expect("127 levels in all are read");
    assert!(answer.starts_with(&format!("{{\"v\":{}", "[".repeat(124))), "{answer}");
    client.shutdown();
    for (mode, why) in
        [("huge-result", "longer than 16 MiB"), ("deep-result 125", "nested deeper than 127 levels")]
    {
        let client = McpClient::connect(&[spec(&format!("rogue={}", s.rogue(mode)))], &McpOptions::default())
            .expect("attaches");
        let (code, message) = run(&client, "return rogue.echo({})\n", None).expect_err(mode);
        assert_eq!(code, "RL6111", "{mode}: {message}");
        assert!(message.contains(why), "{mode}: {message}");
        client.shutdown();
    }
}

/// Over Streamable HTTP too, an answer Runlet cannot read — a body longer than 16 MiB, JSON nested
/// deeper than its parser goes — fails the call at once with a short message in the transport's
/// words, and a tool list nested too deep is refused; a server that answers well is read.
#[test]
fn an_http_answer_that_cannot_be_read_fails_the_call_instead_of_hanging_it() {
    let s = servers();
    for (mode, why) in [
        ("huge-result", "exceeded the maximum size of 16777216 bytes"),
        ("deep-result 200", "recursion limit exceeded"),
    ] {
        let server = s.rogue_http(mode);
        let client = McpClient::connect(&[spec(&format!("rogue={}", server.url))], &McpOptions::default())
            .expect("attaches");
        let (code, message) = run(&client, "return rogue.echo({})\n", None).expect_err(mode);
        assert_eq!(code, "RL6111", "{mode}: {message}");
        assert!(message.contains(why), "{mode}: {message}");
        assert!(message.chars().count() < 600 && !message.contains("rmcp::"), "{mode}: {message}");
        client.shutdown();
    }
    let server = s.rogue_http("deep-tools");
    let error = McpClient::connect(&[spec(&format!("rogue={}", server.url))], &McpOptions::default())
        .expect_err("a tool list nested too deep");
    assert_eq!(error.code.to_string(), "RL8603", "{error}");
    assert!(error.message.contains("recursion limit exceeded"), "{error}");
    let server = s.rogue_http("echo");
    let client = McpClient::connect(&[spec(&format!("rogue={}", server.url))], &McpOptions::default())
        .expect("attaches");
    assert_eq!(run(&client, "return rogue.echo({})\n", None), Ok(r#""ok""#.to_owned()));
    client.shutdown();
}

/// A stdio server that exits in the middle of a call fails that call (`RL6111`, retryable and
/// uncertain) and is started again by the next call, which it answers; one that comes back as
/// another version than the handshake recorded is refused, since the registry holds the tools
/// of the first.
#[test]
fn a_server_that_exited_is_started_again_by_the_next_call() {
    let s = servers();
    let dir = scratch("restart");
    for (mode, restarts) in [("crash-once", true), ("crash-upgraded", false)] {
        let marker = dir.join(mode);
        let flag = format!("rogue={} {}", s.rogue(mode), marker.display());
        let client = McpClient::connect(&[spec(&flag)], &McpOptions::default()).expect("attaches");
        let (code, message) = run(&client, "return rogue.echo({})\n", None).expect_err("it exited");
        assert_eq!(code, "RL6111", "{mode}: {message}");
        assert!(message.contains("its process exited (exit status: 3)"), "{mode}: {message}");
        let again = run(&client, "return rogue.echo({})\n", None);
        if restarts {
            assert_eq!(again, Ok(r#""ok""#.to_owned()), "{mode}");
        } else {
            let (code, message) = again.expect_err("another version");
            assert_eq!(code, "RL6111", "{mode}: {message}");
            assert!(message.contains("it is rogue 2, protocol"), "{mode}: {message}");
            assert!(message.contains("where it was rogue 1, protocol"), "{mode}: {message}");
        }
        // The server started again is stopped at shutdown; the other version was at once.
        let stopped = client.shutdown();
        assert_eq!(stopped.len(), usize::from(restarts), "{mode}: {stopped:?}");
    }
}

/// A server that exits at the end of its input, leaving a child it started in its process
/// group, is stopped with that child.
#[test]
fn a_child_the_server_leaves_behind_is_stopped_with_it() {
    let s = servers();
    let pid_file = scratch("left-child").join("child.pid");
    let flag = format!("rogue={} {}", s.rogue("leaves-child"), pid_file.display());
    let client = McpClient::connect(&[spec(&flag)], &McpOptions::default()).expect("attaches");
    let pid: i32 =
        std::fs::read_to_string(&pid_file).expect("the child's pid").trim().parse().expect("a pid");
    let alive = || {
        // A zombie waiting for init to reap it has ended too.
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|stat| stat.rsplit(')').next().is_some_and(|rest| !rest.trim_start().starts_with('Z')))
    };
    assert!(alive(), "the child runs while the server does");
    assert_eq!(client.shutdown(), vec![("rogue".to_owned(), Stopped::Exited)]);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while alive() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(), "the child was stopped with the server");
}

/// A tool the server describes wrongly (an annotation of the wrong type) makes its page of
/// `tools/list` no valid result as a whole: the page is read as plain JSON, and the other tools
/// are imported and called all the same.
#[test]
fn a_tool_described_wrongly_leaves_the_other_tools_of_its_server() {
    let s = servers();
    let client =
        McpClient::connect(&[spec(&format!("rogue={}", s.rogue("bad-annotation")))], &McpOptions::default())
            .expect("attaches");
    let registry = client.registry(None).expect("the servers' registry loads").registry;
    let names: Vec<String> = registry.tools().map(|(_, tool)| tool.name.to_string()).collect();
    assert!(
        names.contains(&"rogue.echo".to_owned()) && names.contains(&"rogue.vendor".to_owned()),
        "{names:?}"
    );
    let warnings: Vec<String> = client.warnings().iter().map(|w| w.message.clone()).collect();
    assert!(!names.contains(&"rogue.shady".to_owned()), "{names:?}");
    assert!(
        warnings.iter().any(|w| w.contains("`shady` was left out") && w.contains("readOnlyHint")),
        "left out, naming it and why: {warnings:?}"
    );
    assert_eq!(run(&client, "return rogue.echo({})\n", None), Ok(r#""ok""#.to_owned()));
    client.shutdown();
}

/// A trusted server name that names no attached server is refused, before any server starts:
/// misspelt, it would silently believe no server's annotations.
#[test]
fn a_trusted_name_that_is_not_attached_is_refused() {
    let s = servers();
    let options = McpOptions {
        classes: runlet_mcp::ClassPolicy {
            trusted: vec!["Rogue".to_owned()],
            ..runlet_mcp::ClassPolicy::default()
        },
        ..McpOptions::default()
    };
    let error =
        McpClient::connect(&[spec(&format!("rogue={}", s.rogue("echo")))], &options).expect_err("refused");
    assert_eq!(error.code.to_string(), "RL8601", "{error}");
    assert!(error.message.contains("`Rogue` is not one of the servers attached (rogue)"), "{error}");
}

/// A call whose answer never comes — here the server garbles it, and the transport drops what it
/// cannot read — fails with `RL6102` once the silence timeout passes, where it waited for ever;
/// a call whose server keeps reporting progress for longer than that is not cut short.
#[test]
fn a_call_the_server_goes_silent_on_fails_at_the_silence_timeout() {
    let s = servers();
    let options = McpOptions { silence_timeout: Some(Duration::from_millis(700)), ..McpOptions::default() };
    let client = McpClient::connect(&[spec(&format!("rogue={}", s.rogue("garbled-result")))], &options)
        .expect("attaches");
    let (code, message) = run(&client, "return rogue.echo({})\n", None).expect_err("no answer");
    assert_eq!(code, "RL6102", "{message}");
    assert!(message.contains("nor reported progress on it for 700 ms"), "{message}");
    client.shutdown();
    // Eight reports 0.2 s apart: 1.6 s in all, never 0.7 s without one.
    let client =
        McpClient::connect(&[spec(&format!("rogue={} 8", s.rogue("progress")))], &options).expect("attaches");
    assert_eq!(run(&client, "return rogue.echo({})\n", None), Ok(r#""ok""#.to_owned()));
    client.shutdown();
    for zero in [
        McpOptions { silence_timeout: Some(Duration::ZERO), ..McpOptions::default() },
        McpOptions { startup_timeout: Duration::ZERO, ..McpOptions::default() },
    ] {
        let refused =
            McpClient::connect(&[spec(&format!("rogue={}", s.rogue("echo")))], &zero).expect_err("zero");
        assert_eq!(refused.code.to_string(), "RL8601", "{refused}");
    }
}
