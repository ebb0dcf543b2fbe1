//! `runlet submit` and `runlet worker` on a PostgreSQL journal, through real processes
//! (INTERFACES.md §4.3): a worker killed with SIGKILL in the middle of a run loses it to another
//! once its lease expires; the other resumes it from the journal without sending a finished
//! call again, and the run ends with the crash-free result. The takeover times are printed for
//! BENCHMARKS.md.

#[path = "../../runlet-postgres/tests/support/mod.rs"]
mod postgres;
mod support;

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value as Json;
use support::{Scratch, one_drove_and_the_other_said_so, stderr, stdout};

/// Six idempotent steps, two at a time, summed.
const PROGRAM: &str = "done = for n in [1, 2, 3, 4, 5, 6] limit 2 {
    return work.step(n)
}
return fold acc = 0 for d in done { return acc + d }
";

const REGISTRY: &str = r#"{"tools": [
 {"name": "work.step", "params": [{"name": "n", "schema": {"type": "integer"}}], "outputSchema": {"type": "integer"}, "execution": "idempotent"}
]}"#;

const LEASE_MS: u64 = 1000;

fn tools(step_ms: u64) -> String {
    let steps: Vec<Json> =
        (1..=6).map(|n| serde_json::json!({"args": [n], "result": n * 10, "delay_ms": step_ms})).collect();
    serde_json::json!({"work.step": steps}).to_string()
}

struct Setup {
    scratch: Scratch,
    url: String,
    registry: String,
    key: String,
}

impl Setup {
    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_runlet"));
        command.args(args).args(["--journal", &self.url]).env("RUNLET_DIGEST_KEY_FILE", &self.key);
        command
    }

    fn submit(&self) -> String {
        let program = self.scratch.file("main.run", PROGRAM);
        let output =
            self.command(&["submit", &program, "--registry", &self.registry]).output().expect("submit");
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let id = stdout(&output).trim().to_owned();
        assert!(id.starts_with("r-") && !id.contains('\n'), "the id alone: {id:?}");
        id
    }

    fn worker(&self, tools: &str) -> Child {
        let tools = self.scratch.file("tools.json", tools);
        let lease = LEASE_MS.to_string();
        self.command(&["worker", "--registry", &self.registry, "--tools", &tools])
            .args(["--lease-ms", &lease, "--poll-ms", "50"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start runlet worker")
    }

    /// Waits until `reached` holds of `runs show`'s report of `run` and its journal's events.
    fn wait_until(&self, run: &str, what: &str, reached: impl Fn(&Json, &[Json]) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let shown = self.command(&["runs", "show", run, "--format", "json"]).output().expect("runs show");
            let shown: Json = serde_json::from_str(&stdout(&shown)).expect("runs show prints JSON");
            if reached(&shown, &self.journal_events(run)) {
                return;
            }
            assert!(Instant::now() < deadline, "waited a minute for this: {what}; {shown}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn journal_events(&self, run: &str) -> Vec<Json> {
        let shown = self.command(&["runs", "show", run, "--events"]).output().expect("runs show");
        assert_eq!(shown.status.code(), Some(0), "{}", stderr(&shown));
        let events: Vec<Json> =
            stdout(&shown).lines().map(|line| serde_json::from_str(line).expect("a JSON line")).collect();
        let times: Vec<u64> = events.iter().map(|event| event["at_ms"].as_u64().expect("a time")).collect();
        assert!(times.windows(2).all(|pair| pair[0] <= pair[1]), "appended in order: {times:?}");
        events
    }
}

/// The nodes of `work.step` that `kind` events of `events` name.
fn steps(events: &[Json], kind: &str) -> BTreeSet<String> {
    events
        .iter()
        .filter(|e| e["kind"] == kind && e["tool"] == "work.step")
        .map(|e| e["node"].as_str().expect("a node").to_owned())
        .collect()
}

/// The JSON lines a worker prints, read as they come.
fn lines_of(child: &mut Child) -> std::sync::mpsc::Receiver<Json> {
    let out = child.stdout.take().expect("piped stdout");
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            let _ = send.send(serde_json::from_str(&line).expect("a JSON line"));
        }
    });
    receive
}

#[test]
fn a_killed_worker_loses_its_run_to_another_which_repeats_no_finished_call() {
    let Some(db) = postgres::database("cli_kill") else { return };
    let scratch = Scratch::new("workers-kill");
    let registry = scratch.file("registry.json", REGISTRY);
    let key = scratch.file("digest.key", "the key all the workers share");
    let setup = Setup { url: db.url.clone(), registry, key, scratch };
    for finished_before_kill in [1, 3, 4] {
        let run = setup.submit();
        let mut first = setup.worker(&tools(150));
        let deadline = Instant::now() + Duration::from_secs(60);
        let killed = loop {
            let events = setup.journal_events(&run);
            if steps(&events, "NodeSucceeded").len() >= finished_before_kill {
                first.kill().expect("SIGKILL");
                break Instant::now();
            }
            assert!(Instant::now() < deadline, "the first worker never got that far");
            std::thread::sleep(Duration::from_millis(20));
        };
        let _ = first.wait();
        let before = setup.journal_events(&run);
        let mut second = setup.worker(&tools(0));
        let lines = lines_of(&mut second);
        let handled = lines.recv_timeout(Duration::from_secs(60)).expect("the second worker ends the run");
        let took_over = killed.elapsed();
        // SIGTERM: the worker drains (nothing left) and exits 0.
        // SAFETY: signalling a child process this test started.
        unsafe { libc::kill(second.id() as i32, libc::SIGTERM) };
        assert_eq!(second.wait().expect("the second worker exits").code(), Some(0));
        assert_eq!(handled["run_id"], run.as_str(), "{handled}");
        assert_eq!(handled["action"], "ended", "{handled}");
        assert_eq!(handled["status"], "succeeded", "{handled}");

        let shown = setup.command(&["runs", "show", &run, "--format", "json"]).output().expect("runs show");
        let shown: Json = serde_json::from_str(&stdout(&shown)).expect("runs show prints JSON");
        assert_eq!(shown["status"], "succeeded", "{shown}");
        assert_eq!(shown["value"], 210, "the crash-free result: 10 + 20 + … + 60");
        let after = setup.journal_events(&run);
        assert!(after.len() > before.len(), "the second worker wrote the rest");
        let again = &after[before.len()..];
        let finished = steps(&before, "NodeSucceeded");
        let sent_again = steps(again, "CallDispatchPrepared");
        assert_eq!(sent_again.intersection(&finished).count(), 0, "finished steps are not sent again");
        assert_eq!(sent_again.len() + finished.len(), 6, "every unfinished step is sent once");
        let last = after.last().expect("events");
        assert_eq!(last["kind"], "RunSucceeded", "{last}");
        eprintln!(
            "SIGKILL after {} finished steps: taken over and finished {} ms later (lease {LEASE_MS} ms)",
            finished.len(),
            took_over.as_millis()
        );
    }
}

/// Two `runlet resume` started at the same moment of one run whose worker was killed: the
/// journal's claim is exclusive while a lease holds, so one process drives the run on and the
/// other says RL7010 before it journals or sends anything; no finished step is sent again.
#[test]
fn of_two_resumes_at_once_one_drives_the_run_and_the_other_says_so() {
    let Some(db) = postgres::database("cli_two_resumes") else { return };
    let scratch = Scratch::new("workers-two-resumes");
    let registry = scratch.file("registry.json", REGISTRY);
    let key = scratch.file("digest.key", "the key all the processes share");
    let setup = Setup { url: db.url.clone(), registry, key, scratch };
    let run = setup.submit();
    let mut worker = setup.worker(&tools(150));
    setup.wait_until(&run, "the worker finished a step", |shown, events| {
        shown["status"] == "running" && !steps(events, "NodeSucceeded").is_empty()
    });
    worker.kill().expect("SIGKILL");
    let _ = worker.wait();
    setup.wait_until(&run, "the worker's lease lapsed", |shown, _| shown["status"] == "interrupted");
    let before = setup.journal_events(&run);
    // Slow enough that the second process starts long before the first could end the run.
    let tools = setup.scratch.file("tools-resume.json", tools(500));
    let resume = || {
        setup
            .command(&["resume", &run, "--tools", &tools, "--format", "json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start runlet resume")
    };
    let both = [resume(), resume()].map(|child| child.wait_with_output().expect("it ends"));
    assert_eq!(one_drove_and_the_other_said_so(&both)["value"], 210);
    let after = setup.journal_events(&run);
    let again = &after[before.len()..];
    assert!(steps(again, "CallDispatchPrepared").is_disjoint(&steps(&before, "NodeSucceeded")));
    assert_eq!(again.iter().filter(|e| e["kind"] == "RunResumed").count(), 1, "one process drove it on");
}

/// A worker that cannot start a run it claimed (its digest key is not the one the run was
/// submitted with) leaves it for an operator once, rather than letting it go for every worker
/// to claim again.
#[test]
fn a_run_a_worker_cannot_start_is_left_once() {
    let Some(db) = postgres::database("cli_left_once") else { return };
    let scratch = Scratch::new("workers-left-once");
    let registry = scratch.file("registry.json", REGISTRY);
    let key = scratch.file("digest.key", "the key the run was submitted with");
    let other_key = scratch.file("other.key", "a key of another deployment");
    let setup = Setup { url: db.url.clone(), registry, key, scratch };
    let run = setup.submit();
    let tools = setup.scratch.file("tools.json", tools(0));
    let mut worker = Command::new(env!("CARGO_BIN_EXE_runlet"))
        .args(["worker", "--registry", &setup.registry, "--tools", &tools, "--journal", &setup.url])
        .args(["--lease-ms", &LEASE_MS.to_string(), "--poll-ms", "50"])
        .env("RUNLET_DIGEST_KEY_FILE", &other_key)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start runlet worker");
    let lines = lines_of(&mut worker);
    let first = lines.recv_timeout(Duration::from_secs(60)).expect("the worker handles the run");
    assert_eq!(
        (first["run_id"].as_str(), first["action"].as_str()),
        (Some(run.as_str()), Some("left")),
        "{first}"
    );
    // Polls every 50 ms: a run let go would be claimed again many times over.
    let again = lines.recv_timeout(Duration::from_millis(1500));
    worker.kill().expect("SIGKILL");
    let _ = worker.wait();
    assert!(again.is_err(), "handled again: {again:?}");
}

#[test]
fn the_worker_and_submit_refuse_what_they_cannot_use() {
    let scratch = Scratch::new("workers-usage");
    let registry = scratch.file("registry.json", REGISTRY);
    let program = scratch.file("main.run", PROGRAM);
    let not_postgres = support::runlet(&["worker", "--journal", "sqlite:x.db", "--registry", &registry]);
    assert_eq!(not_postgres.status.code(), Some(2));
    assert!(stderr(&not_postgres).contains("postgres://"), "{}", stderr(&not_postgres));
    let no_key = Command::new(env!("CARGO_BIN_EXE_runlet"))
        .args([
            "submit",
            &program,
            "--registry",
            &registry,
            "--journal",
            "postgres://nobody@127.0.0.1:1/none",
        ])
        .env_remove("RUNLET_DIGEST_KEY_FILE")
        .output()
        .expect("submit");
    assert_eq!(no_key.status.code(), Some(2));
    assert!(stderr(&no_key).contains("--digest-key-file"), "{}", stderr(&no_key));
}
