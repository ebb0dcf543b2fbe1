//! The JSON the command line reads is read strictly end to end: a registry that says a key twice
//! is refused naming the key and path, and a Number input takes any finite JSON number.

mod support;

use support::{Scratch, failure_code, json, runlet, stdout};

#[test]
fn a_second_prelude_does_not_turn_on_the_clock() {
    let scratch = Scratch::new("strict-prelude");
    let registry =
        scratch.file("registry.json", r#"{"prelude": "none", "tools": [], "prelude": "standard"}"#);
    let program = scratch.file("main.run", "now = time.now()\nreturn now\n");
    let output = runlet(&["check", &program, "--registry", &registry, "--format", "json"]);
    assert_eq!(failure_code(&output), "RL8023");
    let diagnostic = &json(&output)["diagnostics"][0];
    assert!(diagnostic["message"].as_str().expect("message").contains("`prelude`"), "{diagnostic}");
    assert_eq!(diagnostic["notes"][0], "registry path: /prelude");
}

#[test]
fn a_second_execution_class_does_not_make_a_tool_pure() {
    let scratch = Scratch::new("strict-execution");
    let registry = scratch.file(
        "registry.json",
        r#"{"tools": [{"name": "pay.charge", "execution": "at_most_once", "execution": "pure"}]}"#,
    );
    let output = runlet(&["check", &scratch.file("main.run", "return 1\n"), "--registry", &registry]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stdout(&output).contains("error[RL8023]: the key `execution` appears twice"),
        "{}",
        stdout(&output)
    );
    assert!(stdout(&output).contains("registry path: /tools/0/execution"), "{}", stdout(&output));
}

#[test]
fn a_number_input_takes_two_to_the_sixty_fourth() {
    let scratch = Scratch::new("strict-number-input");
    let registry =
        scratch.file("registry.json", r#"{"tools": [], "inputs": {"amount": {"type": "number"}}}"#);
    let (program, tools) = (scratch.file("main.run", "return amount\n"), scratch.file("tools.json", "{}"));
    let run = |extra: &[&str]| {
        let mut args =
            vec!["run", program.as_str(), "--registry", &registry, "--tools", &tools, "--format", "json"];
        args.extend_from_slice(extra);
        runlet(&args)
    };
    let inputs = scratch.file("inputs.json", r#"{"amount": 18446744073709551616}"#);
    for output in [run(&["--inputs", &inputs]), run(&["--input", "amount=18446744073709551616"])] {
        assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
        assert_eq!(json(&output)["value"].as_f64(), Some(18446744073709551616.0));
    }
    let underflow = scratch.file("underflow.json", r#"{"amount": 1e-400}"#);
    assert_eq!(failure_code(&run(&["--inputs", &underflow])), "RL8101");
}
