//! Seeded simulation on generated programs: random well-typed sources (calls, arithmetic,
//! conditionals, `for … limit`, `skip`, effect roots, `fold`, boundaries) are compiled by the
//! analyzer and run under many completion orders; every order must reach the same outcome, the
//! invariants hold after each reaction, and the journal replays exactly.

use std::sync::Arc;

use super::tests::{Oracle, continue_run, fresh_core, value_of};
use super::{Input, Outcome};
use crate::analyze::{AnalyzeOptions, Inputs, analyze};
use crate::engine::executor::ToolError;
use crate::schema::{Registry, RegistryOptions};
use crate::value::{List, Value};

const REGISTRY: &str = r#"{"tools": [
    {"name": "t.num", "params": [{"name": "x", "schema": {"type": "integer"}}], "outputSchema": {"type": "integer"}, "execution": "pure"},
    {"name": "t.list", "params": [{"name": "n", "schema": {"type": "integer"}}], "outputSchema": {"type": "array", "items": {"type": "integer"}}, "execution": "pure"},
    {"name": "t.flag", "params": [{"name": "x", "schema": {"type": "integer"}}], "outputSchema": {"type": "boolean"}, "execution": "pure"},
    {"name": "t.write", "params": [{"name": "x", "schema": {"type": "integer"}}], "outputSchema": {"type": "boolean"}, "execution": "idempotent"}
]}"#;

/// Deterministic tools: `t.num` fails on 13 (the same error whichever call hits it first).
fn oracle(tool: &str, args: &List, _attempt: u32) -> Result<Value, ToolError> {
    let n = match args.iter().next() {
        Some(Value::Int(n)) => *n,
        _ => 0,
    };
    Ok(match tool {
        "t.num" if n == 13 => return Err(ToolError::new("THIRTEEN", "unlucky")),
        "t.num" => Value::Int((n * 3 + 1).rem_euclid(50)),
        "t.list" => List::new((0..n.rem_euclid(6)).map(Value::Int).collect()).expect("list").into(),
        "t.flag" => Value::Bool(n % 2 == 0),
        "t.write" => Value::Bool(true),
        other => panic!("unexpected tool {other}"),
    })
}

/// Writes random programs from a seed.
struct Generator {
    state: u64,
    names: u32,
    ints: Vec<String>,
}

impl Generator {
    fn pick(&mut self, n: u64) -> u64 {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        self.state % n
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.names += 1;
        format!("{prefix}{}", self.names)
    }

    fn int(&mut self, depth: u32) -> String {
        let choice = if depth == 0 || self.pick(5) == 0 { self.pick(2) } else { 2 + self.pick(5) };
        match choice {
            0 => self.pick(20).to_string(),
            1 if !self.ints.is_empty() => {
                let index = self.pick(self.ints.len() as u64) as usize;
                self.ints[index].clone()
            }
            1 => "1".into(),
            2 => format!("t.num({})", self.int(depth - 1)),
            3 => format!("({} + {})", self.int(depth - 1), self.int(depth - 1)),
            4 => format!(
                "({} if {} else {})",
                self.int(depth - 1),
                self.boolean(depth - 1),
                self.int(depth - 1)
            ),
            5 => {
                let (acc, item) = (self.fresh("acc"), self.fresh("item"));
                let collection = self.list(depth - 1);
                format!("fold {acc} = 0 for {item} in {collection} {{\n    return {acc} + {item}\n}}")
            }
            _ => {
                let err = self.fresh("err");
                format!(
                    "boundary retry 1 {{\n    return t.num({})\n}} catch {err} {{\n    return 0\n}}",
                    self.int(depth - 1)
                )
            }
        }
    }

    fn boolean(&mut self, depth: u32) -> String {
        if self.pick(2) == 0 {
            format!("t.flag({})", self.int(depth))
        } else {
            format!("{} > {}", self.int(depth), self.int(depth))
        }
    }

    fn list(&mut self, depth: u32) -> String {
        if depth == 0 || self.pick(4) == 0 {
            return format!("t.list({})", self.int(depth.saturating_sub(1)));
        }
        let item = self.fresh("x");
        let collection = self.list(depth - 1);
        let limit = if self.pick(2) == 0 { format!(" limit {}", 1 + self.pick(3)) } else { String::new() };
        let mut body = String::new();
        if self.pick(2) == 0 {
            let written = self.fresh("w");
            body.push_str(&format!("    {written} = t.write({item})\n"));
        }
        self.ints.push(item.clone());
        if self.pick(2) == 0 {
            body.push_str(&format!("    skip if {}\n", self.boolean(depth - 1)));
        }
        let value = self.int(depth - 1);
        self.ints.pop();
        format!("for {item} in {collection}{limit} {{\n{body}    return {value}\n}}")
    }

    fn program(&mut self) -> String {
        let mut out = String::new();
        let mut results = Vec::new();
        for _ in 0..2 + self.pick(3) {
            let name = self.fresh("v");
            let value = if self.pick(2) == 0 { self.int(3) } else { self.list(3) };
            out.push_str(&format!("{name} = {value}\n"));
            results.push(name.clone());
            if value.starts_with("t.list") || value.starts_with("for") {
                continue;
            }
            self.ints.push(name);
        }
        out.push_str(&format!("return [{}]\n", results.join(", ")));
        out
    }
}

#[test]
fn generated_programs_reach_one_outcome_under_every_completion_order() {
    let registry =
        Arc::new(Registry::from_json_str(REGISTRY, &RegistryOptions::default()).expect("registry").registry);
    let mut compiled = 0;
    for program_seed in 1..=150u64 {
        let mut generator =
            Generator { state: program_seed.wrapping_mul(0x9E37_79B9_7F4A_7C15), names: 0, ints: Vec::new() };
        let source = generator.program();
        let analysis = analyze(&source, &registry, &Inputs::new(), &AnalyzeOptions::default());
        let Some(hir) = analysis.hir else {
            panic!(
                "the generator wrote a program the analyzer rejects:\n{source}\n{:#?}",
                analysis.diagnostics
            );
        };
        compiled += 1;
        let program = Arc::new(hir);
        let oracle: &Oracle = &oracle;
        let mut first: Option<(Outcome, usize)> = None;
        for order_seed in 0..8 {
            let start = Some(Input::Start { inputs: Vec::new() });
            let trace = continue_run(
                fresh_core(&program, &registry),
                Vec::new(),
                start,
                &registry,
                oracle,
                order_seed,
            );
            let writes = trace.dispatched.iter().filter(|t| *t == "t.write").count();
            match (&first, &trace.outcome) {
                (None, outcome) => first = Some((outcome.clone(), writes)),
                (Some((Outcome::Succeeded(_), expected_writes)), Outcome::Succeeded(_)) => {
                    let expected = first.as_ref().map(|(o, _)| value_of(o)).expect("first outcome");
                    assert_eq!(value_of(&trace.outcome), expected, "order {order_seed} of\n{source}");
                    assert_eq!(
                        writes, *expected_writes,
                        "effect roots ran a different number of times:\n{source}"
                    );
                }
                (Some((Outcome::Failed(expected), _)), Outcome::Failed(error)) => {
                    assert_eq!(error.code, expected.code, "order {order_seed} of\n{source}");
                }
                (Some((expected, _)), outcome) => {
                    panic!("order {order_seed} ended {outcome:?}, another {expected:?}:\n{source}")
                }
            }
            let resumed = crate::engine::replay(fresh_core(&program, &registry), &trace.events)
                .unwrap_or_else(|e| panic!("replay diverged: {e}\n{source}"));
            assert!(resumed.outcome.is_some());
        }
    }
    assert_eq!(compiled, 150);
}
