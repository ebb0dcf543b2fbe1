//! The value-size caps on generated programs: a chain of steps that double a list or string
//! (`x + x`) or nest it (`[x, x]`), from a literal or a host input, under generated caps. The
//! program fails exactly when a step's value would cross a cap, with that cap's code: while
//! checking when the analyzer folds the value (never for a host input), else in the run;
//! otherwise it succeeds. Sizes are tracked by a model of [`Value::weight`].

use std::sync::Arc;

use proptest::prelude::*;
use runlet::analyze::Inputs;
use runlet::engine::{LimitKey, Limits, Outcome};
use runlet::runtime::Runtime;
use runlet::scripted::ScriptedExecutor;
use runlet::value::Value;

use crate::registry;

#[derive(Debug, Clone, Copy)]
enum Step {
    Double,
    Nest,
}

/// What the model knows of a value: whether it is a string, its length and its weight.
#[derive(Debug, Clone, Copy)]
struct Size {
    string: bool,
    length: u64,
    weight: u64,
}

impl Size {
    fn after(self, step: Step) -> Size {
        match step {
            // `s + s` is a string twice as long; `l + l` a list of both lists' elements.
            Step::Double if self.string => {
                Size { length: 2 * self.length, weight: 5 + 2 * self.length, ..self }
            }
            Step::Double => Size { length: 2 * self.length, weight: 2 * self.weight - 5, ..self },
            Step::Nest => Size { string: false, length: 2, weight: 5 + 2 * self.weight },
        }
    }

    /// The code of the first cap this value crosses, checked as the engine checks a value's top.
    fn crossing(self, caps: (u64, u64, u64)) -> Option<&'static str> {
        let (value_bytes, list_length, string_bytes) = caps;
        if self.string && self.length > string_bytes {
            return Some("RL4115");
        }
        if !self.string && self.length > list_length {
            return Some("RL4114");
        }
        (self.weight > value_bytes).then_some("RL4113")
    }
}

fn source(seed: &str, steps: &[Step]) -> String {
    let mut text = format!("x0 = {seed}\n");
    for (i, step) in steps.iter().enumerate() {
        let previous = format!("x{i}");
        let value = match step {
            Step::Double => format!("{previous} + {previous}"),
            Step::Nest => format!("[{previous}, {previous}]"),
        };
        text.push_str(&format!("x{} = {value}\n", i + 1));
    }
    text.push_str(&format!("return x{}\n", steps.len()));
    text
}

fn runtime(caps: (u64, u64, u64)) -> Runtime {
    let limits = Limits::new()
        .with(LimitKey::ValueBytes, caps.0)
        .with(LimitKey::ListLength, caps.1)
        .with(LimitKey::StringBytes, caps.2);
    Runtime::builder()
        .registry(registry(r#"{"tools": []}"#))
        .executor(Arc::new(ScriptedExecutor::from_json_str("{}").expect("no fixtures")))
        .limits(limits)
        .build()
        .expect("runtime")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn a_value_fails_with_its_cap_exactly_when_a_step_crosses_it(
        string in any::<bool>(),
        seed_length in 1u64..6,
        steps in proptest::collection::vec(prop_oneof![Just(Step::Double), Just(Step::Nest)], 0..24),
        from_input in any::<bool>(),
        caps in (50u64..20_000, 4u64..3_000, 4u64..3_000),
    ) {
        let seed = if string {
            format!("\"{}\"", "a".repeat(seed_length as usize))
        } else {
            format!("[{}]", vec!["1"; seed_length as usize].join(", "))
        };
        let first = if string {
            Size { string, length: seed_length, weight: 5 + seed_length }
        } else {
            Size { string, length: seed_length, weight: 5 + 9 * seed_length }
        };
        // The first value over a cap, seed included.
        let mut size = first;
        let mut expected = size.crossing(caps);
        for &step in &steps {
            if expected.is_some() {
                break;
            }
            size = size.after(step);
            expected = size.crossing(caps);
        }
        let runtime = runtime(caps);
        let (text, inputs) = if from_input {
            let value = runlet::value::parse_json(&seed.replace(' ', "")).expect("seed JSON");
            let inputs: Inputs = [("seed".to_owned(), value)].into_iter().collect();
            (source("seed", &steps), inputs)
        } else {
            (source(&seed, &steps), Inputs::new())
        };
        let program = match runtime.compile(&text, &inputs) {
            Ok(program) => program,
            Err(diagnostics) => {
                let codes: Vec<String> =
                    diagnostics.iter().filter(|d| d.is_error()).map(|d| d.code.to_string()).collect();
                prop_assert!(!from_input, "a host input is not known while checking: {codes:?}\n{text}");
                prop_assert_eq!(codes, expected.map(str::to_owned).into_iter().collect::<Vec<_>>(), "{}", text);
                return Ok(());
            }
        };
        let outcome = runtime.start(&program, &inputs).expect("starts").wait().expect("journal");
        match (outcome, expected) {
            (Outcome::Succeeded(value), None) => {
                prop_assert_eq!(value.value().weight(), size.weight, "the model's weight");
                if let Value::String(text) = value.value() {
                    prop_assert_eq!(text.len() as u64, size.length);
                }
            }
            (Outcome::Failed(error), Some(code)) => {
                prop_assert_eq!(error.code.as_str(), code, "{}", text);
            }
            (other, expected) => prop_assert!(false, "{other:?} where the model expects {expected:?}\n{text}"),
        }
    }
}
