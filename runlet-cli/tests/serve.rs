//! End-to-end tests of the page server commands (INTERFACES.md §4.4): `run --serve` prints its
//! address before the run starts, prints the result, keeps serving until SIGINT and then exits
//! with the run's status; `serve --journal` lists the journal's runs and streams one rebuilt from
//! the journal; an address in use is a usage error naming it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

fn example(relative: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(relative)
        .to_str()
        .expect("UTF-8")
        .to_owned()
}

fn journal(test: &str) -> String {
    let path = std::env::temp_dir().join(format!("runlet-serve-{}-{test}.db", std::process::id()));
    let _ = std::fs::remove_file(&path);
    format!("sqlite:{}", path.to_str().expect("UTF-8"))
}

/// Starts `runlet ARGS` and reads stderr up to the line naming the served address; the rest of
/// stderr is read on a thread, so the process can write to it until it ends, and handed back by
/// the thread's handle.
fn serving(args: &[&str]) -> (Child, String, std::thread::JoinHandle<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_runlet"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts runlet");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    while stderr.read_line(&mut line).expect("reads stderr") > 0 {
        if let Some(url) = line.trim().strip_prefix("serving ") {
            let url = url.to_owned();
            let rest = std::thread::spawn(move || {
                let mut rest = String::new();
                let _ = stderr.read_to_string(&mut rest);
                rest
            });
            return (child, url, rest);
        }
        line.clear();
    }
    let status = child.wait().expect("waits");
    panic!("runlet printed no address and exited with {status}");
}

/// The body of GET `path` from the server at `url`'s host.
fn get(url: &str, path: &str) -> String {
    let host = url.trim_start_matches("http://").split('/').next().expect("a host");
    let mut stream = TcpStream::connect(host).expect("connects");
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").expect("writes");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("reads");
    response
}

/// Runs Appendix A to its end, journaled in `journal`.
fn run_appendix_a(journal: &str) {
    let ran = Command::new(env!("CARGO_BIN_EXE_runlet"))
        .args(["run", &example("appendix-a/main.run"), "--registry", &example("appendix-a/registry.json")])
        .args(["--tools", &example("appendix-a/tools.json"), "--inputs", &example("appendix-a/inputs.json")])
        .args(["--journal", journal])
        .output()
        .expect("runs");
    assert!(ran.status.success());
}

fn interrupt(child: &mut Child) -> i32 {
    // SAFETY: `kill` with a process id this test started and a signal number has no other effect.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    child.wait().expect("waits").code().expect("an exit status")
}

#[test]
fn run_serve_prints_the_run_page_then_the_result_and_exits_with_the_status_on_sigint() {
    let journal = journal("run");
    let (mut child, url, stderr) = serving(&[
        "run",
        &example("appendix-a/main.run"),
        "--registry",
        &example("appendix-a/registry.json"),
        "--tools",
        &example("appendix-a/tools.json"),
        "--inputs",
        &example("appendix-a/inputs.json"),
        "--journal",
        &journal,
        "--serve",
    ]);
    let (base, run) = url.split_once("/runs/").expect("a run page address");
    assert!(base.starts_with("http://127.0.0.1:"), "{url}");
    assert!(run.starts_with("r-"), "{url}");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut result = String::new();
    stdout.read_line(&mut result).expect("the result");
    assert!(result.contains("Ada"), "{result}");
    let page = get(&url, &format!("/runs/{run}"));
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(get(&url, &format!("/api/runs/{run}")).contains(r#""run":{"state":"succeeded""#));
    assert_eq!(interrupt(&mut child), 0);
    // The run had ended: the signal was the page server's alone.
    let stderr = stderr.join().expect("stderr");
    assert!(stderr.contains("stopping the page server"), "{stderr}");
    assert!(!stderr.contains("cancelling the run"), "{stderr}");
}

#[test]
fn serve_lists_a_journals_runs_and_refuses_an_address_in_use() {
    let journal = journal("list");
    run_appendix_a(&journal);
    let (mut child, url, _) = serving(&["serve", "--journal", &journal]);
    assert!(url.ends_with("/runs"), "{url}");
    let runs = get(&url, "/api/runs");
    assert!(runs.contains(r#""status":"succeeded""#), "{runs}");
    let run = runs.split(r#""run_id":""#).nth(1).and_then(|rest| rest.split('"').next()).expect("a run id");
    let last: u64 = runs
        .split(r#""last_seq":"#)
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|digits| digits.parse().ok())
        .expect("its last seq");
    // The journal's run, rebuilt from its header: the stream resumes after `after`.
    let stream = get(&url, &format!("/api/runs/{run}/events?after={}", last - 3));
    let ids: Vec<u64> = stream.lines().filter_map(|line| line.strip_prefix("id: ")?.parse().ok()).collect();
    assert_eq!(ids, vec![last - 2, last - 1, last], "{stream}");
    assert!(stream.contains("event: end"), "{stream}");
    // A viewer that has every record of the ended run is told so at once.
    let caught_up = get(&url, &format!("/api/runs/{run}/events?after={last}"));
    assert!(caught_up.contains("event: end") && !caught_up.contains("id: "), "{caught_up}");
    let page = get(&url, &format!("/api/runs/{run}"));
    assert!(page.contains(r#""live":false"#) && page.contains("crm.customer(customer_id)"), "{page}");
    assert!(!page.contains(r#""halted""#), "an ended run did not halt: {page}");
    // Folded once, then kept: the same snapshot again.
    let body = |response: String| response.split_once("\r\n\r\n").map(|(_, body)| body.to_owned());
    assert_eq!(body(get(&url, &format!("/api/runs/{run}"))), body(page.clone()));
    let addr = url.trim_start_matches("http://").trim_end_matches("/runs");
    let taken = Command::new(env!("CARGO_BIN_EXE_runlet"))
        .args(["serve", "--journal", &journal, "--addr", addr])
        .output()
        .expect("runs");
    assert_eq!(taken.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&taken.stderr);
    assert!(stderr.contains("address is in use") && stderr.contains(addr), "{stderr}");
    assert_eq!(interrupt(&mut child), 0);
}

/// A journaled run that no process drives and that has not ended (its process was killed; here
/// its last batch, with its end, is taken out of the journal) is served with how it halted, so
/// the page's badge does not read its snapshot's `running`.
#[test]
fn a_run_whose_process_stopped_is_served_as_halted() {
    let journal = journal("halted");
    run_appendix_a(&journal);
    let path = journal.strip_prefix("sqlite:").expect("an SQLite journal");
    let store = rusqlite::Connection::open(path).expect("the journal file");
    let last_batch = "DELETE FROM batches WHERE last_seq = (SELECT max(last_seq) FROM batches)";
    assert_eq!(store.execute(last_batch, []).expect("the last batch removed"), 1);
    drop(store);
    let (mut child, url, _) = serving(&["serve", "--journal", &journal]);
    let runs = get(&url, "/api/runs");
    assert!(runs.contains(r#""status":"interrupted""#), "{runs}");
    let run = runs.split(r#""run_id":""#).nth(1).and_then(|rest| rest.split('"').next()).expect("a run id");
    let page = get(&url, &format!("/api/runs/{run}"));
    assert!(page.contains(r#""halted":"interrupted""#), "{page}");
    assert!(page.contains(r#""run":{"state":"running""#), "the snapshot alone reads as running: {page}");
    assert_eq!(interrupt(&mut child), 0);
}

/// A viewer that closes its page or event stream makes the server's next write on that socket
/// fail; that must end the connection, never the process and a run it drives. The process keeps
/// `SIGPIPE` ignored (only standard output's closed pipe ends it, as `runlet graph … | head`
/// shows in tests/graph.rs), and the server goes on answering after viewers that hang up.
#[test]
fn a_viewer_that_hangs_up_never_ends_the_server() {
    let journal = journal("hang-up");
    run_appendix_a(&journal);
    let (mut child, url, _) = serving(&["serve", "--journal", &journal]);
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).expect("its status");
    let ignored = status.lines().find_map(|line| line.strip_prefix("SigIgn:")).expect("SigIgn");
    let ignored = u64::from_str_radix(ignored.trim(), 16).expect("a mask");
    assert_ne!(ignored & (1 << (libc::SIGPIPE - 1)), 0, "SIGPIPE is ignored: {ignored:#x}");
    let runs = get(&url, "/api/runs");
    let run = runs.split(r#""run_id":""#).nth(1).and_then(|rest| rest.split('"').next()).expect("a run id");
    let host = url.trim_start_matches("http://").split('/').next().expect("a host").to_owned();
    for _ in 0..50 {
        let mut stream = TcpStream::connect(&host).expect("connects");
        write!(stream, "GET /api/runs/{run}/events HTTP/1.1\r\nHost: {host}\r\n\r\n").expect("writes");
        let _ = stream.read(&mut [0; 64]);
    }
    assert!(get(&url, "/api/runs").contains(run), "still serving");
    assert_eq!(interrupt(&mut child), 0);
}
