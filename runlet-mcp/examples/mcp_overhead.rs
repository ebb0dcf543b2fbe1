//! The per-call overhead of an MCP call through Runlet against the same `tools/call` made by a
//! minimal rmcp client, over stdio, in one process: two processes of the same server command,
//! one attached to Runlet, one to the minimal client, measured in alternating rounds.
//!
//! cargo run --release -p runlet-mcp --example mcp_overhead -- 'SERVER COMMAND' [CALLS] [ROUNDS]
//!
//! Runlet runs a program of CALLS dependent `echo` calls (each call's argument is the previous
//! answer, so they run one after another); the minimal client makes the same CALLS calls in a
//! loop. Each round prints both per-call times; the last line is the medians and the overhead.

use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use runlet::analyze::Inputs;
use runlet::engine::Outcome;
use runlet::runtime::Runtime;
use runlet_mcp::{McpClient, McpOptions, ServerSpec};
use tokio::process::Command;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let command = args.get(1).expect("usage: mcp_overhead 'SERVER COMMAND' [CALLS] [ROUNDS]");
    let calls: usize = args.get(2).map_or(200, |n| n.parse().expect("CALLS is a number"));
    let rounds: usize = args.get(3).map_or(7, |n| n.parse().expect("ROUNDS is a number"));

    let spec = ServerSpec::parse_flag(&format!("everything={command}")).expect("a server command");
    let client = McpClient::connect(&[spec], &McpOptions::default()).expect("the server attaches");
    let registry = client.registry(None).expect("its registry loads").registry;
    let runtime = Runtime::builder()
        .registry(registry)
        .executor(Arc::new(client.executor()))
        .build()
        .expect("a runtime");
    let program = runtime.compile(&chain(calls), &Inputs::new()).expect("the chain compiles");

    let direct = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    let words = shlex::split(command).expect("a command");
    let peer = direct.block_on(async {
        let mut child = Command::new(&words[0])
            .args(&words[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("the server starts");
        let io = (child.stdout.take().expect("stdout"), child.stdin.take().expect("stdin"));
        (().serve(io).await.expect("the handshake"), child)
    });

    let (mut through, mut minimal) = (Vec::new(), Vec::new());
    for round in 0..=rounds {
        let started = Instant::now();
        let run = runtime.start(&program, &Inputs::new()).expect("starts");
        let outcome = run.wait().expect("the journal works");
        assert!(matches!(outcome, Outcome::Succeeded(_)), "the chain succeeds: {outcome:?}");
        let runlet_per_call = started.elapsed() / calls as u32;

        let started = Instant::now();
        direct.block_on(async {
            let mut message = "x".to_owned();
            for _ in 0..calls {
                let mut arguments = serde_json::Map::new();
                arguments.insert("message".into(), message.clone().into());
                let params = CallToolRequestParams::new("echo").with_arguments(arguments);
                let result = peer.0.peer().call_tool(params).await.expect("the call answers");
                message = result.content[0].as_text().expect("text").text.clone();
            }
        });
        let direct_per_call = started.elapsed() / calls as u32;
        if round > 0 {
            // Round 0 warms both up.
            println!(
                "round {round}: runlet {} µs/call, direct {} µs/call",
                micros(runlet_per_call),
                micros(direct_per_call)
            );
            through.push(runlet_per_call);
            minimal.push(direct_per_call);
        }
    }
    let (through, minimal) = (median(&mut through), median(&mut minimal));
    println!(
        "median over {rounds} rounds of {calls} calls: runlet {} µs/call, direct {} µs/call, overhead {} µs/call",
        micros(through),
        micros(minimal),
        micros(through.saturating_sub(minimal))
    );
    client.shutdown();
}

/// A program of `calls` echo calls, each taking the previous answer.
fn chain(calls: usize) -> String {
    let mut source = "m0 = everything.echo({message: \"x\"})\n".to_owned();
    for i in 1..calls {
        source.push_str(&format!("m{i} = everything.echo({{message: m{}}})\n", i - 1));
    }
    source.push_str(&format!("return m{}\n", calls - 1));
    source
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort_unstable();
    times[times.len() / 2]
}

fn micros(duration: Duration) -> u128 {
    duration.as_micros()
}
