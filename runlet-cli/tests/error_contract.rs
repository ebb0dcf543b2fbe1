//! One error contract (INTERFACES.md §4): every error the command line reports outside a
//! program's diagnostics has a stable RL code that `runlet explain` knows, comes as the JSON of §1
//! with `--format json` (a run report with `"status": "usage_error"` for the run commands),
//! leads its text with the code otherwise, and exits 2.

mod support;

use support::{INPUTS, PROGRAM, REGISTRY, Scratch, TOOLS, failure_code, json, runlet, stderr, stdout};

/// Each failing command line (without `--format`) and the code it must report.
fn failures(scratch: &Scratch) -> Vec<(Vec<String>, &'static str)> {
    let program = scratch.file("main.run", PROGRAM);
    let registry = scratch.file("registry.json", REGISTRY);
    let tools = scratch.file("tools.json", TOOLS);
    let inputs = scratch.file("inputs.json", INPUTS);
    let bad_tools = scratch.file("tools-bad.json", r#"{"echo.say": [{"result": 1, "times": 0}]}"#);
    let run_with_tools = |tools: &str, extra: &[&str]| -> Vec<String> {
        let mut args = vec!["run", &program, "--registry", &registry, "--tools", tools, "--inputs", &inputs];
        args.extend_from_slice(extra);
        args.into_iter().map(str::to_owned).collect()
    };
    let run = |extra: &[&str]| run_with_tools(&tools, extra);
    let check = |extra: &[String]| -> Vec<String> {
        let mut args = vec!["check".to_owned(), program.clone()];
        args.extend_from_slice(extra);
        args
    };
    let flag = |name: &str, path: String| vec![name.to_owned(), path];
    vec![
        (run(&["--limit", "tool_calls=many"]), "RL8105"),
        (run(&["--limit", "calls=1"]), "RL8105"),
        (run(&["--journal", "postgres:x"]), "RL8501"),
        (run(&["--journal", &format!("sqlite:{}", scratch.path("no/such/dir/runs.db"))]), "RL7005"),
        (run(&["--input", "not-an-assignment"]), "RL8018"),
        (run(&["--input", "word={"]), "RL8101"),
        (run(&["--events", &scratch.path("no/such/dir/events.jsonl")]), "RL8506"),
        (run(&["--record", &scratch.path("no/such/dir/transcript.json")]), "RL8506"),
        (run(&["--bogus"]), "RL8501"),
        (vec!["run".into(), program.clone()], "RL8501"),
        (check(&flag("--registry", scratch.file("dup.json", r#"{"tools": [], "tools": []}"#))), "RL8023"),
        (check(&flag("--registry", scratch.file("bad.json", "{ tools: "))), "RL8001"),
        (check(&flag("--inputs", scratch.file("in.json", r#"{"word": 1e-400}"#))), "RL8101"),
        (check(&flag("--inputs", scratch.file("root.json", r#"{"return": 1}"#))), "RL8018"),
        (check(&flag("--registry", scratch.path("absent.json"))), "RL8502"),
        (run_with_tools(&bad_tools, &[]), "RL8201"),
        (run(&["--digest-key-file", &scratch.file("empty-key", "")]), "RL8102"),
        (vec!["heal".into(), scratch.path("absent.run")], "RL8502"),
        (
            vec![
                "replay".into(),
                program.clone(),
                "--registry".into(),
                registry.clone(),
                "--inputs".into(),
                inputs.clone(),
                "--transcript".into(),
                scratch.file("transcript.json", r#"{"format": 1}"#),
            ],
            "RL8302",
        ),
    ]
}

#[test]
fn every_failure_is_coded_json_with_format_json() {
    let scratch = Scratch::new("contract-json");
    for (args, code) in failures(&scratch) {
        let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
        args.extend(["--format", "json"]);
        let output = runlet(&args);
        assert_eq!(failure_code(&output), code, "{args:?}");
        let is_run = matches!(args[0], "run" | "graph" | "replay");
        assert_eq!(json(&output).get("status").is_some_and(|s| s == "usage_error"), is_run, "{args:?}");
    }
}

#[test]
fn every_failure_leads_its_text_with_the_code() {
    let scratch = Scratch::new("contract-text");
    for (args, code) in failures(&scratch) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = runlet(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let printed = format!("{}{}", stdout(&output), stderr(&output));
        assert!(
            printed.contains(&format!("[{code}]")) || printed.contains(&format!("({code})")),
            "{args:?}: {printed}"
        );
    }
}

#[test]
fn explain_knows_every_code_the_command_line_prints() {
    let scratch = Scratch::new("contract-explain");
    let mut codes: Vec<&str> = failures(&scratch).into_iter().map(|(_, code)| code).collect();
    codes.extend([
        "RL8503",
        "RL8504",
        "RL8505",
        "RL8507",
        "TOOL_INPUT_SCHEMA_MISMATCH",
        "TOOL_OUTPUT_SCHEMA_MISMATCH",
    ]);
    for code in codes {
        let output = runlet(&["explain", code]);
        assert_eq!(output.status.code(), Some(0), "{code}: {}", stderr(&output));
        assert!(stdout(&output).starts_with("# RL"), "{code}");
    }
    let unknown = runlet(&["explain", "RL9999"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(stderr(&unknown).starts_with("error[RL8507]"), "{}", stderr(&unknown));
}

/// A tool answering what its output schema refuses fails the run with a code `explain` finds.
#[test]
fn a_tool_output_schema_mismatch_is_explained() {
    let scratch = Scratch::new("contract-tool-output");
    let output = runlet(&[
        "run",
        &scratch.file("main.run", PROGRAM),
        "--registry",
        &scratch.file("registry.json", REGISTRY),
        "--tools",
        &scratch.file("tools.json", r#"{"echo.say": [{"result": 42}]}"#),
        "--inputs",
        &scratch.file("inputs.json", INPUTS),
        "--format",
        "json",
    ]);
    assert_eq!(output.status.code(), Some(1));
    let code = json(&output)["error"]["code"].as_str().expect("a code").to_owned();
    assert_eq!(code, "TOOL_OUTPUT_SCHEMA_MISMATCH");
    assert!(stdout(&runlet(&["explain", &code])).starts_with("# RL6104:"));
}

/// An argument that is not UTF-8 is refused like any other bad argument (`RL8501`, exit 2),
/// never a panic, wherever it stands.
#[test]
fn an_argument_that_is_not_utf8_is_a_usage_error() {
    use std::os::unix::ffi::OsStrExt;
    let scratch = Scratch::new("contract-not-utf8");
    let program = scratch.file("main.run", PROGRAM);
    let bad = std::ffi::OsStr::from_bytes(b"RL\xff");
    for args in [
        vec!["explain".as_ref(), bad],
        vec![bad],
        vec!["check".as_ref(), program.as_ref(), "--limit".as_ref(), bad],
    ] {
        let output =
            std::process::Command::new(env!("CARGO_BIN_EXE_runlet")).args(&args).output().expect("runs");
        assert_eq!(output.status.code(), Some(2), "{args:?}: {}", stderr(&output));
        assert!(stderr(&output).starts_with("error[RL8501]"), "{args:?}: {}", stderr(&output));
    }
}

/// Standard error that cannot be written (a full disk, a reader that hung up on `2>&1 | head`)
/// leaves the command's exit status as it was: what went wrong cannot be told, and it does not
/// panic trying.
#[test]
fn standard_error_that_cannot_be_written_leaves_the_exit_status() {
    let scratch = Scratch::new("contract-stderr");
    let missing = scratch.path("missing.run");
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").expect("/dev/full");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_runlet"))
        .args(["check", &missing])
        .stderr(full)
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2), "exit 2 (RL8502), not a panic: {:?}", output.status);
}

/// Standard output that cannot be written (a full disk behind `>`) is `RL8506` on stderr and exit
/// 2 once the command is done, never a panic.
#[test]
fn standard_output_that_cannot_be_written_is_reported() {
    let scratch = Scratch::new("contract-stdout");
    let program = scratch.file("main.run", PROGRAM);
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").expect("/dev/full");
    for args in [vec!["explain", "RL4002"], vec!["check", &program, "--format", "json"]] {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_runlet"))
            .args(&args)
            .stdout(full.try_clone().expect("a handle"))
            .output()
            .expect("runs");
        assert_eq!(output.status.code(), Some(2), "{args:?}: {}", stderr(&output));
        assert!(
            stderr(&output).contains("error[RL8506]: cannot write standard output"),
            "{args:?}: {}",
            stderr(&output)
        );
    }
}

/// An output path that names a file the command reads or keeps — the journal, its digest key,
/// the program, another path to one of them — is refused (`RL8506`) before anything is written:
/// it would have been emptied first.
#[test]
fn an_output_path_that_is_an_input_or_the_journal_is_refused_untouched() {
    let scratch = Scratch::new("contract-clobber");
    let program = scratch.file("main.run", PROGRAM);
    let registry = scratch.file("registry.json", REGISTRY);
    let tools = scratch.file("tools.json", TOOLS);
    let inputs = scratch.file("inputs.json", INPUTS);
    let db = scratch.path("runs.db");
    let journal = format!("sqlite:{db}");
    let run_on = |journal: &str, extra: &[&str]| {
        let mut args = vec![
            "run",
            &program,
            "--registry",
            &registry,
            "--tools",
            &tools,
            "--inputs",
            &inputs,
            "--journal",
            journal,
        ];
        args.extend_from_slice(extra);
        runlet(&args)
    };
    let run = |extra: &[&str]| run_on(&journal, extra);
    assert_eq!(run(&[]).status.code(), Some(0), "a first run is journaled");
    let key = format!("{db}.digest-key");
    let other_path_to_db = format!("{}/./runs.db", scratch.path(""));
    let before: Vec<Vec<u8>> =
        [&db, &key, &program].iter().map(|p| std::fs::read(p).expect("exists")).collect();
    for (flag, path, named) in [
        ("--events", &db, "the journal"),
        ("--events", &key, "the journal's digest key"),
        ("--events", &program, "the program"),
        ("--record", &other_path_to_db, "the journal"),
    ] {
        let output = run(&[flag, path, "--format", "json"]);
        assert_eq!(failure_code(&output), "RL8506", "{flag} {path}");
        let message = json(&output)["diagnostics"][0]["message"].to_string();
        assert!(message.contains(&format!("would overwrite {named}")), "{message}");
    }
    let after: Vec<Vec<u8>> =
        [&db, &key, &program].iter().map(|p| std::fs::read(p).expect("exists")).collect();
    assert!(before == after, "nothing was written");
    let listed = runlet(&["runs", "--journal", &journal]);
    assert_eq!(stdout(&listed).lines().count(), 1, "the first run is still listed: {}", stdout(&listed));
    // Paths that do not exist yet: a journal the run would create, and the two outputs.
    let fresh = scratch.path("fresh.db");
    let fresh_journal = format!("sqlite:{fresh}");
    let output = run_on(&fresh_journal, &["--events", &fresh, "--format", "json"]);
    assert_eq!(failure_code(&output), "RL8506");
    let both = scratch.path("both.out");
    let output = run(&["--events", &both, "--record", &both, "--format", "json"]);
    assert_eq!(failure_code(&output), "RL8506");
    // A device is no file of the run's.
    let output = run(&["--events", "/dev/null", "--record", "/dev/null"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}
