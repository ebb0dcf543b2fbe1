//! Every file the command line reads goes through one bounded reader: what is not a regular file,
//! is over its kind's cap, cannot be read or is not UTF-8 is refused with its code, at once.

mod support;

use support::{INPUTS, PROGRAM, REGISTRY, Scratch, TOOLS, failure_code, runlet, stderr};

/// `runlet run` with every file given, one of them replaced by `path`; the JSON failure's code.
fn run_with(scratch: &Scratch, flag: &str, path: &str) -> String {
    let (mut program, mut registry, mut tools, mut inputs) = (
        scratch.file("main.run", PROGRAM),
        scratch.file("registry.json", REGISTRY),
        scratch.file("tools.json", TOOLS),
        scratch.file("inputs.json", INPUTS),
    );
    let mut key = scratch.file("key", "secret\n");
    let replaced = match flag {
        "FILE" => &mut program,
        "--registry" => &mut registry,
        "--tools" => &mut tools,
        "--inputs" => &mut inputs,
        "--digest-key-file" => &mut key,
        other => panic!("no flag {other}"),
    };
    *replaced = path.to_owned();
    let args = [
        "run",
        &program,
        "--registry",
        &registry,
        "--tools",
        &tools,
        "--inputs",
        &inputs,
        "--digest-key-file",
        &key,
        "--format",
        "json",
    ];
    failure_code(&runlet(&args))
}

const FLAGS: [&str; 5] = ["FILE", "--registry", "--tools", "--inputs", "--digest-key-file"];

#[test]
fn every_file_runs_when_it_is_fine() {
    let scratch = Scratch::new("files-fine");
    let output = runlet(&[
        "run",
        &scratch.file("main.run", PROGRAM),
        "--registry",
        &scratch.file("registry.json", REGISTRY),
        "--tools",
        &scratch.file("tools.json", TOOLS),
        "--inputs",
        &scratch.file("inputs.json", INPUTS),
        "--digest-key-file",
        &scratch.file("key", "secret\n"),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

#[test]
fn a_directory_is_refused() {
    let scratch = Scratch::new("files-dir");
    for flag in FLAGS {
        assert_eq!(run_with(&scratch, flag, &std::env::temp_dir().to_string_lossy()), "RL8503", "{flag}");
    }
}

#[cfg(unix)]
#[test]
fn a_device_is_refused_without_reading_it() {
    let scratch = Scratch::new("files-device");
    for flag in FLAGS {
        assert_eq!(run_with(&scratch, flag, "/dev/zero"), "RL8503", "{flag}");
    }
}

#[cfg(unix)]
#[test]
fn a_fifo_is_refused_without_waiting_for_a_writer() {
    let scratch = Scratch::new("files-fifo");
    let fifo = scratch.path("fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    for flag in FLAGS {
        assert_eq!(run_with(&scratch, flag, &fifo), "RL8503", "{flag}");
    }
}

#[test]
fn a_missing_file_is_unreadable() {
    let scratch = Scratch::new("files-missing");
    for flag in FLAGS {
        assert_eq!(run_with(&scratch, flag, &scratch.path("absent")), "RL8502", "{flag}");
    }
}

#[test]
fn each_kind_has_its_cap() {
    let scratch = Scratch::new("files-caps");
    for (flag, cap) in [
        ("FILE", 1 << 20),
        ("--inputs", 16 << 20),
        ("--registry", 64 << 20),
        ("--tools", 64 << 20),
        ("--digest-key-file", 4 << 10),
    ] {
        let over = scratch.file("over", vec![b' '; cap + 1]);
        assert_eq!(run_with(&scratch, flag, &over), "RL8504", "{flag} over {cap} bytes");
    }
    let at_cap = scratch.file("at-cap.json", format!("{INPUTS}{}", " ".repeat((16 << 20) - INPUTS.len())));
    let output = runlet(&[
        "check",
        &scratch.file("main.run", PROGRAM),
        "--registry",
        &scratch.file("registry.json", REGISTRY),
        "--inputs",
        &at_cap,
    ]);
    assert_eq!(output.status.code(), Some(0), "a file at its cap is read: {}", stderr(&output));
}

#[test]
fn text_that_is_not_utf8_is_refused_with_its_offset() {
    let scratch = Scratch::new("files-utf8");
    for flag in ["FILE", "--registry", "--tools", "--inputs"] {
        let latin1 = scratch.file("latin1", b"{\"caf\xe9\": 1}".as_slice());
        assert_eq!(run_with(&scratch, flag, &latin1), "RL8505", "{flag}");
    }
    let latin1 = scratch.file("latin1.run", b"return \"caf\xe9\"\n".as_slice());
    let output = runlet(&["check", &latin1]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("error[RL8505]") && stderr(&output).contains("offset 11"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_transcript_goes_through_the_same_reader() {
    let scratch = Scratch::new("files-transcript");
    let replay = |transcript: &str| {
        failure_code(&runlet(&[
            "replay",
            &scratch.file("main.run", PROGRAM),
            "--registry",
            &scratch.file("registry.json", REGISTRY),
            "--inputs",
            &scratch.file("inputs.json", INPUTS),
            "--transcript",
            transcript,
            "--format",
            "json",
        ]))
    };
    assert_eq!(replay(&scratch.file("over.json", vec![b' '; (64 << 20) + 1])), "RL8504");
    assert_eq!(replay(&std::env::temp_dir().to_string_lossy()), "RL8503");
    assert_eq!(replay(&scratch.file("latin1.json", b"\"\xe9\"".as_slice())), "RL8505");
}
