//! The run manager end to end through real processes (INTERFACES.md §4.1): `runlet run` with an
//! SQLite journal killed with SIGKILL or stopped with SIGTERM, then `runs`, `runs show`,
//! `resume`, `resolve` and `cancel` on what its journal holds. A process is stopped once its
//! `--events` file (flushed per event) shows the point the test wants, so no test depends on
//! timing.

mod support;

use std::collections::BTreeSet;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value as Json;
use support::{Scratch, failure_code, json, one_drove_and_the_other_said_so, runlet, stderr, stdout};

/// Six idempotent steps, two at a time, then one `at_most_once` mail with their sum.
const PROGRAM: &str = "items = [1, 2, 3, 4, 5, 6]
done = for n in items limit 2 {
    return work.step(n)
}
total = fold acc = 0 for d in done { return acc + d }
return mail.send(total)
";

const REGISTRY: &str = r#"{"tools": [
 {"name": "work.step", "params": [{"name": "n", "schema": {"type": "integer"}}], "outputSchema": {"type": "integer"}, "execution": "idempotent"},
 {"name": "mail.send", "params": [{"name": "total", "schema": {"type": "integer"}}], "outputSchema": {"type": "string"}, "execution": "at_most_once"}
]}"#;

/// Fixtures whose steps take `step_ms` and whose mail takes `mail_ms`.
fn tools(step_ms: u64, mail_ms: u64) -> String {
    let steps: Vec<Json> =
        (1..=6).map(|n| serde_json::json!({"args": [n], "result": n * 10, "delay_ms": step_ms})).collect();
    let mail = serde_json::json!([{"args": [210], "result": "sent", "delay_ms": mail_ms}]);
    serde_json::json!({"work.step": steps, "mail.send": mail}).to_string()
}

struct Setup {
    scratch: Scratch,
    program: String,
    registry: String,
    journal: String,
}

impl Setup {
    fn new(test: &str) -> Setup {
        let scratch = Scratch::new(test);
        let program = scratch.file("main.run", PROGRAM);
        let registry = scratch.file("registry.json", REGISTRY);
        let journal = format!("sqlite:{}", scratch.path("runs.db"));
        Setup { scratch, program, registry, journal }
    }

    /// Starts `runlet run` with `tools` and an events file, in the background.
    fn start(&self, tools: &str, events: &str) -> Child {
        let tools = self.scratch.file("tools-run.json", tools);
        let events = self.scratch.path(events);
        Command::new(env!("CARGO_BIN_EXE_runlet"))
            .args(["run", &self.program, "--registry", &self.registry, "--tools", &tools])
            .args(["--journal", &self.journal, "--events", &events, "--format", "json"])
            // Snapshots as often as they may be written: resumes restore one.
            .args(["--snapshot-every", "1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start runlet run")
    }

    /// Starts a run whose steps take ten minutes, and waits until its first step is sent.
    fn in_its_first_step(&self) -> Child {
        let child = self.start(&tools(600_000, 0), "events.jsonl");
        self.wait_for("events.jsonl", |event| is(event, "CallDispatchPrepared", "work.step"));
        child
    }

    /// A run killed (SIGKILL) while its first step was in flight: its id.
    fn killed_in_its_first_step(&self) -> String {
        let mut child = self.in_its_first_step();
        child.kill().expect("SIGKILL");
        run_id(child)
    }

    /// A run killed (SIGKILL) once a step has succeeded, its events in `events`: its id.
    fn killed_after_a_step(&self, events: &str) -> String {
        let mut child = self.start(&tools(150, 0), events);
        self.wait_for(events, |event| is(event, "NodeSucceeded", "work.step"));
        child.kill().expect("SIGKILL");
        run_id(child)
    }

    /// Runs `runlet run` with `tools` and `extra` flags to its end.
    fn run_to_end(&self, tools: &str, extra: &[&str]) -> std::process::Output {
        let tools = self.scratch.file("tools-run.json", tools);
        let mut args = vec!["run", &self.program, "--registry", &self.registry, "--tools", &tools];
        args.extend(["--journal", &self.journal]);
        args.extend(extra);
        runlet(&args)
    }

    /// Waits until the events file `events` has a line that `seen` accepts.
    fn wait_for(&self, events: &str, seen: impl Fn(&Json) -> bool) {
        self.wait_until(events, |written| written.iter().any(&seen));
    }

    /// Waits until the events written to the file `events` so far satisfy `reached`.
    fn wait_until(&self, events: &str, reached: impl Fn(&[Json]) -> bool) {
        let path = self.scratch.path(events);
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            // Only whole lines: the last one may be half written.
            let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
            lines.retain(|line| line.ends_with('\n'));
            let written: Vec<Json> =
                lines.iter().filter_map(|line| serde_json::from_str(line).ok()).collect();
            if reached(&written) {
                return;
            }
            assert!(Instant::now() < deadline, "the run never reached the point the test waits for");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn manage(&self, args: &[&str]) -> std::process::Output {
        let mut all = args.to_vec();
        all.extend(["--journal", &self.journal]);
        runlet(&all)
    }

    fn resume(&self, run: &str, tools: &str, events: &str) -> std::process::Output {
        let tools = self.scratch.file("tools-resume.json", tools);
        let events = self.scratch.path(events);
        self.manage(&["resume", run, "--tools", &tools, "--events", &events, "--format", "json"])
    }

    /// The run's whole journal, as `runs show --events` prints it.
    fn journal_events(&self, run: &str) -> Vec<Json> {
        let shown = self.manage(&["runs", "show", run, "--events"]);
        assert_eq!(shown.status.code(), Some(0), "{}", stderr(&shown));
        let events: Vec<Json> =
            stdout(&shown).lines().map(|line| serde_json::from_str(line).expect("a JSON line")).collect();
        let times: Vec<u64> = events.iter().map(|event| event["at_ms"].as_u64().expect("a time")).collect();
        assert!(times.windows(2).all(|pair| pair[0] <= pair[1]), "appended in order: {times:?}");
        events
    }

    fn only_run(&self) -> Json {
        let listed = self.manage(&["runs", "--format", "json"]);
        assert_eq!(listed.status.code(), Some(0), "{}", stderr(&listed));
        let runs = json(&listed)["runs"].as_array().expect("a list of runs").clone();
        assert_eq!(runs.len(), 1, "{runs:?}");
        runs[0].clone()
    }
}

/// The run id a stopped `runlet run` printed first on stderr.
fn run_id(child: Child) -> String {
    let output = child.wait_with_output().expect("the run's output");
    let text = stderr(&output);
    let first = text.lines().next().unwrap_or_default();
    first.strip_prefix("run ").unwrap_or_else(|| panic!("stderr starts with `run r-…`: {text}")).to_owned()
}

fn is(event: &Json, kind: &str, tool: &str) -> bool {
    event["kind"] == kind && event["tool"] == tool
}

/// The nodes of `tool` that `kind` events of `events` name.
fn nodes(events: &[Json], kind: &str, tool: &str) -> BTreeSet<String> {
    events
        .iter()
        .filter(|e| is(e, kind, tool))
        .map(|e| e["node"].as_str().expect("a node").to_owned())
        .collect()
}

#[test]
fn a_killed_run_with_an_uncertain_mail_is_resolved_and_resumed_without_repeating_finished_steps() {
    let setup = Setup::new("uncertain");
    let child = setup.start(&tools(20, 600_000), "first.jsonl");
    setup.wait_for("first.jsonl", |event| is(event, "CallDispatchPrepared", "mail.send"));
    let mut child = child;
    child.kill().expect("SIGKILL");
    let run = run_id(child);
    assert!(run.starts_with("r-"), "{run}");

    let listed = setup.only_run();
    assert_eq!(listed["run_id"], run.as_str());
    assert_eq!(listed["status"], "needs_resolution", "{listed}");
    assert!(listed["program_digest"].as_str().is_some_and(|d| d.starts_with("sha256:")));
    assert!(listed["started_ms"].as_u64().is_some() && listed["last_event_ms"].as_u64().is_some());

    let shown = json(&setup.manage(&["runs", "show", &run, "--format", "json"]));
    assert_eq!(shown["status"], "needs_resolution");
    assert!(shown["header"]["retained"]["source"].as_str().is_some_and(|s| s == PROGRAM), "{shown}");
    assert!(shown["header"]["retained"].get("inputs").is_none(), "inputs are not shown");
    let uncertain = shown["uncertain"].as_array().expect("uncertain operations").clone();
    assert_eq!(uncertain.len(), 1, "{shown}");
    assert_eq!(uncertain[0]["tool"], "mail.send");
    let operation = uncertain[0]["operation_id"].as_str().expect("an operation id").to_owned();
    let journal = setup.journal_events(&run);
    let prepared = journal.iter().find(|e| is(e, "CallDispatchPrepared", "mail.send")).expect("prepared");
    assert_eq!(prepared["operation"], operation.as_str(), "call events name their operation");
    assert!(uncertain[0]["prepared_seq"].as_u64().is_some_and(|seq| seq > 0));

    // Unresolved: resume stops at once, journals nothing, and lists what needs a decision.
    let before = setup.journal_events(&run).len();
    let refused = setup.resume(&run, &tools(20, 0), "refused.jsonl");
    assert_eq!(refused.status.code(), Some(1), "{}", stderr(&refused));
    let report = json(&refused);
    assert_eq!(
        (report["status"].as_str(), report["error"]["code"].as_str()),
        (Some("failed"), Some("RL6109"))
    );
    assert_eq!(report["error"]["uncertain"], true);
    assert_eq!(report["uncertain"][0]["operation_id"], operation.as_str());
    assert_eq!(setup.journal_events(&run).len(), before, "a refused resume journals nothing");
    let written = std::fs::read_to_string(setup.scratch.path("refused.jsonl")).expect("its events file");
    assert_eq!(written.lines().count(), before, "its events file holds the run's journal");
    // In text, each operation is listed with the decisions its class takes.
    let answers = setup.scratch.file("answers.json", tools(20, 0));
    let text = stderr(&setup.manage(&["resume", &run, "--tools", &answers]));
    assert!(text.contains("(--applied JSON | --not-applied | --failed JSON)"), "{text}");
    assert!(!text.contains("fresh-generation"), "no fresh generation for an at_most_once call: {text}");

    // A decision that does not fit the tool is refused; an unknown operation too.
    let wrong = setup.manage(&["resolve", &run, &operation, "--applied", "42", "--format", "json"]);
    assert_eq!(failure_code(&wrong), "RL8403");
    let unknown = format!("op:{}", "0".repeat(64));
    assert_eq!(
        failure_code(&setup.manage(&["resolve", &run, &unknown, "--not-applied", "--format", "json"])),
        "RL8401"
    );

    let resolved = setup.manage(&["resolve", &run, &operation, "--not-applied", "--format", "json"]);
    assert_eq!(resolved.status.code(), Some(0), "{}", stderr(&resolved));
    assert_eq!(json(&resolved)["decision"], "not_applied");
    assert_eq!(
        failure_code(&setup.manage(&["resolve", &run, &operation, "--applied", "\"x\"", "--format", "json"])),
        "RL8401",
        "decided once"
    );

    let first = setup.journal_events(&run);
    let resumed = setup.resume(&run, &tools(20, 0), "resumed.jsonl");
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    let report = json(&resumed);
    assert_eq!((report["status"].as_str(), report["value"].as_str()), (Some("succeeded"), Some("sent")));
    assert_eq!(report["run_id"], run.as_str());
    let again: Vec<Json> = setup.journal_events(&run)[first.len()..].to_vec();
    let finished = nodes(&first, "NodeSucceeded", "work.step");
    assert_eq!(finished.len(), 6, "every step had finished before the mail");
    assert!(nodes(&again, "CallDispatchPrepared", "work.step").is_empty(), "no finished step is sent again");
    assert_eq!(nodes(&again, "CallDispatchPrepared", "mail.send").len(), 1, "the mail is sent once more");
    // The resumed run's observer starts where its journal was: its events file holds them all.
    let written = std::fs::read_to_string(setup.scratch.path("resumed.jsonl")).expect("events");
    let seqs: Vec<u64> = written
        .lines()
        .map(|l| serde_json::from_str::<Json>(l).expect("json")["seq"].as_u64().expect("seq"))
        .collect();
    assert_eq!(seqs, (1..=(first.len() + again.len()) as u64).collect::<Vec<_>>());
    assert_eq!(setup.only_run()["status"], "succeeded");
}

#[test]
fn sigterm_journals_a_cancellation() {
    let setup = Setup::new("sigterm");
    let child = setup.in_its_first_step();
    // SAFETY: signalling the child this test started and still owns.
    let signalled = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    assert_eq!(signalled, 0);
    let output = child.wait_with_output().expect("the run's output");
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(json(&output)["status"], "cancelled");
    let run = json(&output)["run_id"].as_str().expect("a run id").to_owned();
    assert_eq!(setup.only_run()["status"], "cancelled");
    let events = setup.journal_events(&run);
    assert_eq!(events.last().map(|e| e["kind"].clone()), Some("RunCancelled".into()));
    // Every event reached the file before the process ended, in order and without a gap.
    let written = std::fs::read_to_string(setup.scratch.path("events.jsonl")).expect("events");
    let seqs: Vec<u64> = written
        .lines()
        .map(|l| serde_json::from_str::<Json>(l).expect("json")["seq"].as_u64().expect("seq"))
        .collect();
    assert_eq!(seqs, (1..=events.len() as u64).collect::<Vec<_>>());
}

#[test]
fn a_running_run_is_listed_as_running_and_cancelled_by_its_owner_on_request() {
    let setup = Setup::new("running");
    let child = setup.in_its_first_step();
    let listed = setup.only_run();
    assert_eq!(listed["status"], "running", "{listed}");
    let run = listed["run_id"].as_str().expect("a run id").to_owned();
    let refused = setup.resume(&run, &tools(0, 0), "resumed.jsonl");
    assert_eq!(failure_code(&refused), "RL7010", "two processes never drive one run");
    let cancelled = setup.manage(&["cancel", &run, "--format", "json"]);
    assert_eq!(cancelled.status.code(), Some(0), "{}", stderr(&cancelled));
    assert_eq!(json(&cancelled)["status"], "cancelled");
    let output = child.wait_with_output().expect("the run's output");
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(json(&output)["status"], "cancelled", "the owner cancelled its own run");
    assert_eq!(setup.only_run()["status"], "cancelled");
}

/// A run whose `at_most_once` call is in flight in a live process is shown running, with no
/// uncertain operation for an operator to resolve; once that process is killed, the call is;
/// once the run is cancelled, it is shown abandoned.
#[test]
fn a_call_in_flight_in_a_live_process_is_not_uncertain() {
    let setup = Setup::new("in-flight");
    let mut child = setup.start(&tools(0, 600_000), "events.jsonl");
    setup.wait_for("events.jsonl", |event| is(event, "CallDispatchPrepared", "mail.send"));
    let run = setup.only_run()["run_id"].as_str().expect("a run id").to_owned();
    let shown = json(&setup.manage(&["runs", "show", &run, "--format", "json"]));
    assert_eq!(
        (&shown["status"], &shown["uncertain"]),
        (&serde_json::json!("running"), &serde_json::json!([]))
    );
    child.kill().expect("SIGKILL");
    child.wait().expect("reaped");
    let shown = json(&setup.manage(&["runs", "show", &run, "--format", "json"]));
    assert_eq!(shown["status"], "needs_resolution");
    assert_eq!(shown["uncertain"][0]["tool"], "mail.send");
    assert_eq!(shown["abandoned"], serde_json::json!([]));
    // Cancelled instead of resolved, the run still shows the mail that may have been sent.
    let cancelled = setup.manage(&["cancel", &run, "--format", "json"]);
    assert_eq!(cancelled.status.code(), Some(0), "{}", stderr(&cancelled));
    let shown = json(&setup.manage(&["runs", "show", &run, "--format", "json"]));
    assert_eq!(
        (&shown["status"], &shown["uncertain"]),
        (&serde_json::json!("cancelled"), &serde_json::json!([]))
    );
    assert_eq!(shown["abandoned"][0]["tool"], "mail.send", "{shown}");
    let text = stdout(&setup.manage(&["runs", "show", &run]));
    assert!(text.contains("abandoned: op:") && text.contains("mail.send"), "{text}");
}

/// `cancel` of a run whose process is stopped waits for it, saying so; when that process is
/// killed meanwhile, the run it left interrupted is cancelled there and then.
#[test]
fn a_cancel_waiting_for_a_process_that_dies_cancels_the_run_itself() {
    let setup = Setup::new("cancel-dies");
    let mut child = setup.in_its_first_step();
    let run = setup.only_run()["run_id"].as_str().expect("a run id").to_owned();
    // SAFETY: signalling the child this test started and still owns.
    let stopped = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGSTOP) };
    assert_eq!(stopped, 0);
    let cancel = Command::new(env!("CARGO_BIN_EXE_runlet"))
        .args(["cancel", &run, "--journal", &setup.journal, "--format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start runlet cancel");
    std::thread::sleep(Duration::from_millis(300));
    child.kill().expect("SIGKILL");
    child.wait().expect("reaped");
    let cancelled = cancel.wait_with_output().expect("the cancel's output");
    assert_eq!(cancelled.status.code(), Some(0), "{}", stderr(&cancelled));
    assert!(stderr(&cancelled).contains("waiting for it"), "{}", stderr(&cancelled));
    assert_eq!(json(&cancelled)["status"], "cancelled");
    assert_eq!(setup.only_run()["status"], "cancelled");
}

#[test]
fn an_interrupted_run_is_cancelled_from_another_process_and_stays_cancelled() {
    let setup = Setup::new("cancel");
    let run = setup.killed_in_its_first_step();
    assert_eq!(setup.only_run()["status"], "interrupted");
    let cancelled = setup.manage(&["cancel", &run, "--format", "json"]);
    assert_eq!(cancelled.status.code(), Some(0), "{}", stderr(&cancelled));
    assert_eq!(json(&cancelled)["status"], "cancelled");
    assert_eq!(setup.only_run()["status"], "cancelled");
    assert_eq!(failure_code(&setup.manage(&["cancel", &run, "--format", "json"])), "RL8404");
    let resumed = setup.resume(&run, &tools(0, 0), "resumed.jsonl");
    assert_eq!(json(&resumed)["status"], "cancelled", "a cancelled run stays cancelled");
    let listed = setup.manage(&["runs", "--status", "interrupted", "--format", "json"]);
    assert_eq!(json(&listed)["runs"], serde_json::json!([]));
}

/// A run journaled `full` is not resumed, cancelled or decided about under `--durability
/// normal`: its durability comes from its header, and a flag may not loosen it.
#[test]
fn a_flag_may_not_loosen_the_durability_a_run_was_journaled_with() {
    let setup = Setup::new("durability");
    let run = setup.killed_in_its_first_step();
    let answers = setup.scratch.file("answers.json", tools(0, 0));
    for args in [
        vec!["resume", &run, "--tools", &answers],
        vec!["resume", "--interrupted", "--tools", &answers],
        vec!["cancel", &run],
    ] {
        let mut loosened = args.clone();
        loosened.extend(["--durability", "normal", "--format", "json"]);
        let refused = setup.manage(&loosened);
        assert_eq!(refused.status.code(), Some(2), "{args:?}: {}", stdout(&refused));
        assert_eq!(failure_code(&refused), "RL8501", "{args:?}");
        assert!(stdout(&refused).contains("durability `full`"), "{}", stdout(&refused));
    }
    assert_eq!(setup.only_run()["status"], "interrupted", "nothing was journaled");
    // Reading writes nothing, so it may open the journal either way.
    let shown = setup.manage(&["runs", "show", &run, "--durability", "normal", "--format", "json"]);
    assert_eq!(json(&shown)["status"], "interrupted", "{}", stderr(&shown));
    let resumed = setup.resume(&run, &tools(0, 0), "resumed.jsonl");
    assert_eq!(json(&resumed)["value"], "sent");
}

/// SIGKILL at several points of the fan-out, each followed by a resume: no step that finished
/// before the kill runs again, and the steps the kill left in flight — at most the loop's limit —
/// are the only ones sent again. The counts are printed for BENCHMARKS.md.
#[test]
fn killed_at_many_points_a_fan_out_resumes_without_repeating_finished_calls() {
    // After the fourth step the last two run together for 150 ms: the kill lands before the
    // `at_most_once` mail can be prepared, which would leave it for a decision instead.
    for finished_before_kill in [1, 3, 4] {
        let setup = Setup::new(&format!("kill-{finished_before_kill}"));
        let mut child = setup.start(&tools(150, 0), "first.jsonl");
        setup.wait_until("first.jsonl", |written| {
            nodes(written, "NodeSucceeded", "work.step").len() >= finished_before_kill
        });
        child.kill().expect("SIGKILL");
        let run = run_id(child);
        let first = setup.journal_events(&run);
        let resumed = setup.resume(&run, &tools(0, 0), "resumed.jsonl");
        assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
        assert_eq!(json(&resumed)["value"], "sent");
        let again: Vec<Json> = setup.journal_events(&run)[first.len()..].to_vec();
        let finished = nodes(&first, "NodeSucceeded", "work.step");
        let in_flight: BTreeSet<String> =
            nodes(&first, "CallDispatchPrepared", "work.step").difference(&finished).cloned().collect();
        let sent_again = nodes(&again, "CallDispatchPrepared", "work.step");
        let repeated = sent_again.intersection(&finished).count();
        let redispatched = sent_again.intersection(&in_flight).count();
        eprintln!(
            "kill after {} finished steps: completed calls executed again {repeated}, in-flight calls redispatched {redispatched}",
            finished.len()
        );
        assert_eq!(repeated, 0, "finished steps are not sent again");
        // Each step's end names the operation its last dispatch prepared.
        let mut prepared = std::collections::BTreeMap::new();
        for event in setup.journal_events(&run) {
            if is(&event, "CallDispatchPrepared", "work.step") {
                prepared.insert(event["node"].to_string(), event["operation"].clone());
            } else if is(&event, "NodeSucceeded", "work.step") {
                assert_eq!(event["operation"], prepared[&event["node"].to_string()], "{event}");
            }
        }
        assert!(redispatched <= 2, "at most the loop's limit was in flight: {redispatched}");
        assert_eq!(sent_again.len(), 6 - finished.len(), "every unfinished step is sent once");
    }
}

/// An events file that fails while the run goes on (a full disk) fails the command, which
/// then says how the run ended and which run it was.
#[test]
fn an_events_file_that_fails_meanwhile_names_the_run_and_how_it_ended() {
    let setup = Setup::new("events-full");
    let output = setup.run_to_end(&tools(0, 0), &["--events", "/dev/full", "--format", "json"]);
    assert_eq!(failure_code(&output), "RL8506");
    let run = setup.only_run();
    assert_eq!(run["status"], "succeeded");
    let message = json(&output)["diagnostics"][0]["message"].as_str().expect("a message").to_owned();
    let id = run["run_id"].as_str().expect("an id");
    assert!(message.contains(&format!("run `{id}` succeeded")), "{message}");
}

#[test]
fn output_paths_are_checked_before_anything_runs() {
    let setup = Setup::new("paths");
    let missing = setup.scratch.path("no/such/dir/events.jsonl");
    for flag in ["--events", "--record"] {
        let output = setup.run_to_end(&tools(0, 0), &[flag, &missing, "--format", "json"]);
        assert_eq!(output.status.code(), Some(2), "{flag}: {}", stdout(&output));
        assert_eq!(json(&output)["status"], "usage_error");
        assert_eq!(json(&output)["diagnostics"][0]["code"], "RL8506");
    }
    // Nothing ran: the journal was not even made.
    assert_eq!(failure_code(&setup.manage(&["runs", "--format", "json"])), "RL7005");
}

#[test]
fn the_run_manager_needs_a_durable_journal_and_a_known_run() {
    let setup = Setup::new("usage");
    let memory = runlet(&["runs", "--journal", "memory", "--format", "json"]);
    assert_eq!(failure_code(&memory), "RL8501");
    let made = setup.start(&tools(0, 0), "made.jsonl").wait_with_output().expect("the run ends");
    assert_eq!(made.status.code(), Some(0), "{}", stderr(&made));
    assert_eq!(failure_code(&setup.manage(&["runs", "show", "r-none", "--format", "json"])), "RL7002");
    assert_eq!(failure_code(&setup.manage(&["cancel", "r-none", "--format", "json"])), "RL7002");
    let bad_op = setup.manage(&["resolve", "r-none", "op:xyz", "--not-applied", "--format", "json"]);
    assert_eq!(failure_code(&bad_op), "RL8501");
    let two = setup.manage(&[
        "resolve",
        "r-none",
        "op:xyz",
        "--not-applied",
        "--fresh-generation",
        "--format",
        "json",
    ]);
    assert_eq!(failure_code(&two), "RL8501");
}

/// The run manager and the page server read journals and never make one: a mistyped path is
/// an error, not an empty journal beside the real one, and a journal's missing digest key is
/// not replaced by a new one its runs could not be verified with.
#[test]
fn reading_a_journal_makes_no_journal_and_no_key() {
    let setup = Setup::new("read-only");
    let fixtures = setup.scratch.file("tools.json", tools(0, 0));
    for command in [
        vec!["runs"],
        vec!["runs", "show", "r-none"],
        vec!["cancel", "r-none"],
        vec!["resume", "r-none", "--tools", &fixtures],
    ] {
        let output = setup.manage(&[command.as_slice(), &["--format", "json"]].concat());
        assert_eq!(failure_code(&output), "RL7005", "{command:?}");
        assert!(stdout(&output).contains("there is no journal at"), "{command:?}: {}", stdout(&output));
    }
    let serve = setup.manage(&["serve", "--addr", "127.0.0.1:0"]);
    assert_eq!(serve.status.code(), Some(2), "{}", stderr(&serve));
    assert!(stderr(&serve).contains("error[RL7005]: there is no journal at"), "{}", stderr(&serve));
    assert!(!std::path::Path::new(&setup.scratch.path("runs.db")).exists(), "a reader made the journal");
    // Nor is an empty file, or another program's database, made a journal, or changed.
    let empty = setup.scratch.file("empty.db", "");
    let listed = runlet(&["runs", "--journal", &format!("sqlite:{empty}"), "--format", "json"]);
    assert_eq!(failure_code(&listed), "RL7005");
    assert!(stdout(&listed).contains("empty file"), "{}", stdout(&listed));
    assert_eq!(std::fs::metadata(&empty).expect("still there").len(), 0);
    let other = setup.scratch.path("other.db");
    rusqlite::Connection::open(&other)
        .expect("a database")
        .execute_batch("CREATE TABLE t (x);")
        .expect("a table");
    let before = std::fs::read(&other).expect("its bytes");
    let listed = runlet(&["runs", "--journal", &format!("sqlite:{other}"), "--format", "json"]);
    assert_eq!(failure_code(&listed), "RL7005");
    assert!(stdout(&listed).contains("not a Runlet journal"), "{}", stdout(&listed));
    assert_eq!(std::fs::read(&other).expect("its bytes"), before, "its journal mode is left as it was");
    let url = runlet(&["runs", "--journal", "sqlite://runs.db", "--format", "json"]);
    assert_eq!(failure_code(&url), "RL8501");
    for uri in ["sqlite:file:runs.db", "sqlite::memory:"] {
        let listed = runlet(&["runs", "--journal", uri, "--format", "json"]);
        assert_eq!(failure_code(&listed), "RL8501", "{uri}: an SQLite URI or name is no path either");
    }
    let submit = setup.manage(&["submit", &setup.program, "--registry", &setup.registry, "--format", "json"]);
    assert_eq!(failure_code(&submit), "RL8501", "submit is for PostgreSQL journals");

    let made = setup.start(&tools(0, 0), "made.jsonl").wait_with_output().expect("the run ends");
    assert_eq!(made.status.code(), Some(0), "{}", stderr(&made));
    let run = setup.only_run()["run_id"].as_str().expect("an id").to_owned();
    let key = setup.scratch.path("runs.db.digest-key");
    let kept = setup.scratch.path("kept.key");
    std::fs::rename(&key, &kept).expect("the journal's key file");
    let shown = setup.manage(&["runs", "show", &run, "--format", "json"]);
    assert_eq!(failure_code(&shown), "RL8102");
    assert!(!std::path::Path::new(&key).exists(), "a new key was made");
    // The key the runs were keyed with, given, verifies them.
    let shown = setup.manage(&["runs", "show", &run, "--digest-key-file", &kept, "--format", "json"]);
    assert_eq!(shown.status.code(), Some(0), "{}", stderr(&shown));
}

#[test]
fn only_an_ended_run_is_deleted() {
    let setup = Setup::new("delete");
    let run = setup.killed_after_a_step("first.jsonl");
    let refused = setup.manage(&["runs", "delete", &run, "--format", "json"]);
    assert_eq!(failure_code(&refused), "RL8406", "an interrupted run is not deleted");
    let cancelled = setup.manage(&["cancel", &run, "--format", "json"]);
    assert_eq!(cancelled.status.code(), Some(0), "{}", stderr(&cancelled));
    let deleted = setup.manage(&["runs", "delete", &run, "--format", "json"]);
    assert_eq!(deleted.status.code(), Some(0), "{}", stderr(&deleted));
    assert_eq!(json(&deleted), serde_json::json!({"run_id": run, "deleted": true, "blobs_collected": 0}));
    let listed = setup.manage(&["runs", "--format", "json"]);
    assert_eq!(json(&listed)["runs"], serde_json::json!([]));
    assert_eq!(failure_code(&setup.manage(&["runs", "delete", &run, "--format", "json"])), "RL7002");
}

#[test]
fn resume_interrupted_resumes_every_interrupted_run_and_parks_those_resumed_too_often() {
    let setup = Setup::new("interrupted");
    let tools = setup.scratch.file("tools-resume.json", tools(0, 0));
    let first = setup.killed_after_a_step("first.jsonl");
    let parked = setup.manage(&[
        "resume",
        "--interrupted",
        "--max-resumes",
        "0",
        "--tools",
        &tools,
        "--format",
        "json",
    ]);
    assert_eq!(parked.status.code(), Some(1), "a run parked as failed: {}", stderr(&parked));
    assert_eq!(
        json(&parked)["runs"],
        serde_json::json!([{"run_id": first, "action": "parked", "status": "failed", "code": "RL7306", "resumes": 0}])
    );
    assert_eq!(setup.only_run()["status"], "failed");

    let second = setup.killed_after_a_step("second.jsonl");
    let resumed = setup.manage(&["resume", "--interrupted", "--tools", &tools, "--format", "json"]);
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    assert_eq!(
        json(&resumed)["runs"],
        serde_json::json!([{"run_id": second, "action": "resumed", "status": "succeeded"}]),
        "the parked run stays failed"
    );
    let again = setup.manage(&["resume", "--interrupted", "--tools", &tools, "--format", "json"]);
    assert_eq!(json(&again)["runs"], serde_json::json!([]), "nothing is left to resume");
}

/// A run killed between its header and its first event (nothing ran) is shown as such, a
/// resume of it starts it from the inputs its header retains, and it can be deleted without
/// being cancelled first. Before, every command but the recovery sweep refused it (`RL7305`),
/// and deleting it asked to cancel it, which was refused too.
#[test]
fn a_run_that_never_started_is_shown_resumed_or_deleted() {
    let setup = Setup::new("never-started");
    let (resumed, deleted) = (setup.killed_after_a_step("a.jsonl"), setup.killed_after_a_step("b.jsonl"));
    {
        // What a process killed right after storing the header leaves.
        let store = rusqlite::Connection::open(setup.scratch.path("runs.db")).expect("the journal file");
        for table in ["batches", "snapshots", "owners"] {
            store.execute(&format!("DELETE FROM {table}"), []).expect("rows removed");
        }
    }
    let shown = setup.manage(&["runs", "show", &resumed, "--format", "json"]);
    assert_eq!(shown.status.code(), Some(0), "{}", stdout(&shown));
    assert_eq!(json(&shown)["never_started"], true);
    assert_eq!(json(&shown)["status"], "interrupted");
    let tools = tools(0, 0);
    let output = setup.resume(&resumed, &tools, "resumed.jsonl");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(json(&output)["status"], "succeeded");
    let removed = setup.manage(&["runs", "delete", &deleted, "--format", "json"]);
    assert_eq!(removed.status.code(), Some(0), "{}", stdout(&removed));
    let listed = json(&setup.manage(&["runs", "--format", "json"]));
    let ids: Vec<&str> = listed["runs"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|r| r["run_id"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(ids, [resumed.as_str()]);
}

/// A run whose retained program no longer compiles is left by the recovery sweep with its
/// reason, and the sweep goes on to the next run.
#[test]
fn resume_interrupted_leaves_a_run_it_cannot_rebuild_and_goes_on() {
    let setup = Setup::new("unbuildable");
    let (broken, healthy) = (setup.killed_after_a_step("a.jsonl"), setup.killed_after_a_step("b.jsonl"));
    {
        let store = rusqlite::Connection::open(setup.scratch.path("runs.db")).expect("the journal file");
        let edit =
            "UPDATE runs SET header = replace(header, 'work.step(n)', 'work.step(n') WHERE run_id = ?1";
        assert_eq!(store.execute(edit, [&broken]).expect("a program broken"), 1);
    }
    let tools = setup.scratch.file("tools-resume.json", tools(0, 0));
    let resumed = setup.manage(&["resume", "--interrupted", "--tools", &tools, "--format", "json"]);
    assert_eq!(resumed.status.code(), Some(1), "a run was left: {}", stderr(&resumed));
    let lines = json(&resumed)["runs"].as_array().expect("a list").clone();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(
        (lines[0]["run_id"].as_str(), lines[0]["action"].as_str()),
        (Some(broken.as_str()), Some("left"))
    );
    assert!(lines[0]["code"].as_str().is_some_and(|code| code.starts_with("RL")), "{}", lines[0]);
    assert_eq!(lines[1], serde_json::json!({"run_id": healthy, "action": "resumed", "status": "succeeded"}));
    // Shown with why, and deleted: nothing this runtime does can resume or cancel it.
    let shown = setup.manage(&["runs", "show", &broken, "--format", "json"]);
    assert_eq!(shown.status.code(), Some(0), "{}", stdout(&shown));
    assert_eq!(json(&shown)["unbuildable"]["code"], "RL7303", "{}", stdout(&shown));
    let cancelled = setup.manage(&["cancel", &broken, "--format", "json"]);
    assert_eq!(failure_code(&cancelled), "RL7303");
    assert!(stdout(&cancelled).contains("runlet runs delete"), "{}", stdout(&cancelled));
    let deleted = setup.manage(&["runs", "delete", &broken, "--format", "json"]);
    assert_eq!(deleted.status.code(), Some(0), "{}", stdout(&deleted));
}

/// SIGINT during the recovery sweep cancels the run being resumed, as it does for `resume ID`,
/// and starts no other: the next interrupted run stays interrupted.
#[test]
fn a_signal_stops_the_recovery_sweep() {
    let setup = Setup::new("sweep-signal");
    let (first, second) = (setup.killed_after_a_step("a.jsonl"), setup.killed_after_a_step("b.jsonl"));
    let slow = setup.scratch.file("tools-slow.json", tools(2_000, 0));
    let mut sweep = Command::new(env!("CARGO_BIN_EXE_runlet"))
        .args(["resume", "--interrupted", "--tools", &slow, "--journal", &setup.journal, "--format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the sweep");
    let status_of = |run: &str| {
        let listed = json(&setup.manage(&["runs", "--format", "json"]));
        let runs = listed["runs"].as_array().expect("a list").clone();
        runs.into_iter().find(|r| r["run_id"] == run).map(|r| r["status"].as_str().unwrap_or("").to_owned())
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while status_of(&first).as_deref() != Some("running") {
        assert!(std::time::Instant::now() < deadline, "the sweep took the first run");
        assert!(
            sweep.try_wait().expect("a status").is_none(),
            "the sweep ended before it took the first run"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY: signals a child of this test.
    let signalled = unsafe { libc::kill(sweep.id() as libc::pid_t, libc::SIGINT) };
    assert_eq!(signalled, 0);
    let output = sweep.wait_with_output().expect("the sweep ends");
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let lines = json(&output)["runs"].as_array().expect("a list").clone();
    assert_eq!(lines.len(), 1, "only the first run was resumed: {lines:?}");
    assert_eq!(
        (lines[0]["run_id"].as_str(), lines[0]["action"].as_str()),
        (Some(first.as_str()), Some("resumed"))
    );
    // Cancelled, unless the signal came between its claim and its own watch.
    assert!(matches!(lines[0]["status"].as_str(), Some("cancelled" | "succeeded")), "{}", lines[0]);
    assert!(stderr(&output).contains("1 more interrupted runs were not resumed"), "{}", stderr(&output));
    assert_eq!(status_of(&second).as_deref(), Some("interrupted"));
}

#[test]
fn a_damaged_run_is_listed_as_damaged_and_hides_no_other_run() {
    let setup = Setup::new("damaged");
    let ended = |events: &str| {
        let output = setup.start(&tools(0, 0), events).wait_with_output().expect("the run ends");
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        json(&output)["run_id"].as_str().expect("a run id").to_owned()
    };
    let (no_header, no_end, whole) = (ended("a.jsonl"), ended("b.jsonl"), ended("c.jsonl"));
    let interrupted = setup.killed_after_a_step("d.jsonl");
    {
        let store = rusqlite::Connection::open(setup.scratch.path("runs.db")).expect("the journal file");
        store
            .execute("UPDATE runs SET header = '{\"run_id\": 5' WHERE run_id = ?1", [&no_header])
            .expect("a header overwritten");
        let last_row = "UPDATE batches SET codec = 7 WHERE run_id = ?1
             AND last_seq = (SELECT max(last_seq) FROM batches WHERE run_id = ?1)";
        assert_eq!(store.execute(last_row, [&no_end]).expect("a row marked"), 1);
    }

    let listed = setup.manage(&["runs", "--format", "json"]);
    assert_eq!(listed.status.code(), Some(0), "{}", stderr(&listed));
    let runs = json(&listed)["runs"].as_array().expect("a list").clone();
    let ids: Vec<&str> = runs.iter().map(|run| run["run_id"].as_str().expect("an id")).collect();
    assert_eq!(ids, [&no_header, &no_end, &whole, &interrupted]);
    let statuses: Vec<&str> = runs.iter().map(|run| run["status"].as_str().expect("a status")).collect();
    assert_eq!(statuses, ["damaged", "damaged", "succeeded", "interrupted"]);
    assert_eq!(runs[0]["program_digest"], Json::Null, "its header is what is damaged");
    assert_eq!(runs[0]["damage"]["code"], "RL7008");
    assert!(runs[0]["damage"]["message"].as_str().is_some_and(|m| m.contains("header")), "{}", runs[0]);
    assert!(runs[1]["program_digest"].as_str().is_some_and(|digest| digest.starts_with("sha256:")));
    assert_eq!(runs[1]["damage"]["code"], "RL7008");
    assert!(runs[1]["damage"]["message"].as_str().is_some_and(|m| m.contains("codec 7")), "{}", runs[1]);
    assert!(runs[2].get("damage").is_none(), "{}", runs[2]);

    let only = setup.manage(&["runs", "--status", "damaged", "--format", "json"]);
    let only: Vec<Json> = json(&only)["runs"].as_array().expect("a list").clone();
    assert_eq!(only, runs[..2]);
    let text = setup.manage(&["runs"]);
    assert_eq!(text.status.code(), Some(0), "{}", stderr(&text));
    let line =
        stdout(&text).lines().find(|line| line.starts_with(no_header.as_str())).expect("its line").to_owned();
    assert!(line.contains("damaged") && line.contains("RL7008: "), "{line}");
    // The run itself is refused with the reason.
    assert_eq!(failure_code(&setup.manage(&["runs", "show", &no_end, "--format", "json"])), "RL7008");

    // Recovery leaves the damaged runs, with the reason, and resumes the interrupted one.
    let tools = setup.scratch.file("tools-resume.json", tools(0, 0));
    let resumed = setup.manage(&["resume", "--interrupted", "--tools", &tools, "--format", "json"]);
    assert_eq!(resumed.status.code(), Some(1), "damaged runs were left: {}", stderr(&resumed));
    let lines = json(&resumed)["runs"].as_array().expect("a list").clone();
    let actions: Vec<(&str, &str, &str)> = lines
        .iter()
        .map(|line| {
            let field = |name: &str| line[name].as_str().unwrap_or("");
            (field("run_id"), field("action"), field("status"))
        })
        .collect();
    assert_eq!(
        actions,
        [
            (no_header.as_str(), "left", "damaged"),
            (no_end.as_str(), "left", "damaged"),
            (interrupted.as_str(), "resumed", "succeeded")
        ]
    );
    assert_eq!(lines[0]["code"], "RL7008");

    // Nothing can resume a damaged run; an operator deletes it.
    let deleted = setup.manage(&["runs", "delete", &no_header, "--format", "json"]);
    assert_eq!(deleted.status.code(), Some(0), "{}", stdout(&deleted));
    let listed = json(&setup.manage(&["runs", "--format", "json"]));
    let ids: Vec<&str> = listed["runs"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|run| run["run_id"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(ids, [&no_end, &whole, &interrupted]);
}

#[test]
fn of_two_resumes_at_once_one_drives_the_run_and_the_other_says_so() {
    let setup = Setup::new("two-resumes");
    let run = setup.killed_after_a_step("first.jsonl");
    let first = setup.journal_events(&run);
    let tools = setup.scratch.file("tools-resume.json", tools(150, 0));
    let resume = || {
        Command::new(env!("CARGO_BIN_EXE_runlet"))
            .args(["resume", &run, "--journal", &setup.journal, "--tools", &tools, "--format", "json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start runlet resume")
    };
    let both = [resume(), resume()].map(|child| child.wait_with_output().expect("it ends"));
    assert_eq!(one_drove_and_the_other_said_so(&both)["status"], "succeeded");
    let again: Vec<Json> = setup.journal_events(&run)[first.len()..].to_vec();
    let finished = nodes(&first, "NodeSucceeded", "work.step");
    assert!(
        nodes(&again, "CallDispatchPrepared", "work.step").is_disjoint(&finished),
        "no finished step is sent again"
    );
    let resumed = again.iter().filter(|event| event["kind"] == "RunResumed").count();
    assert_eq!(resumed, 1, "one process drove the run on");
}
