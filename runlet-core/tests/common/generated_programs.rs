//! Random well-typed programs from a seed (calls, arithmetic, conditionals, `for … limit`,
//! `skip`, effect roots, `fold`, nested boundaries around loops), the registry they are written
//! against and what its tools answer. Shared by the core's simulation (`engine/core/generated.rs`)
//! and the crash-at-every-append harness (`tests/crash`), each turning [`Answer`]s into its own
//! values and errors.

/// The tools generated programs call: pure numbers, lists and flags, an idempotent write, an
/// idempotent call that fails retryably, and an at-most-once charge.
pub const REGISTRY: &str = r#"{"tools": [
    {"name": "t.num", "params": [{"name": "x", "schema": {"type": "integer"}}], "outputSchema": {"type": "integer"}, "execution": "pure"},
    {"name": "t.list", "params": [{"name": "n", "schema": {"type": "integer"}}], "outputSchema": {"type": "array", "items": {"type": "integer"}}, "execution": "pure"},
    {"name": "t.flag", "params": [{"name": "x", "schema": {"type": "integer"}}], "outputSchema": {"type": "boolean"}, "execution": "pure"},
    {"name": "t.write", "params": [{"name": "x", "schema": {"type": "integer"}}], "outputSchema": {"type": "boolean"}, "execution": "idempotent"},
    {"name": "t.flaky", "params": [{"name": "x", "schema": {"type": "integer"}}], "outputSchema": {"type": "integer"}, "execution": "idempotent"},
    {"name": "t.charge", "params": [{"name": "x", "schema": {"type": "integer"}}], "outputSchema": {"type": "integer"}, "execution": "at_most_once"}
]}"#;

/// What a tool of [`REGISTRY`] answers.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    Int(i64),
    Bool(bool),
    Ints(Vec<i64>),
    /// A failure the tool reports: its code, message and whether trying again may succeed.
    Error {
        code: &'static str,
        message: &'static str,
        retryable: bool,
    },
    /// The host's deadline passed before the at-most-once tool answered: its outcome is unknown.
    TimedOut,
}

/// The deterministic answer of `tool` to its integer argument `n` in boundary attempt `attempt`:
/// `t.num` fails on 13 (the same error whichever call hits it first); `t.flaky` fails retryably
/// in a first attempt on multiples of 3; `t.charge` times out on 1 mod 4 and otherwise answers 0,
/// which is also what its catch returns.
pub fn answer(tool: &str, n: i64, attempt: u32) -> Answer {
    match tool {
        "t.num" if n == 13 => Answer::Error { code: "THIRTEEN", message: "unlucky", retryable: false },
        "t.flaky" if attempt == 1 && n % 3 == 0 => {
            Answer::Error { code: "FLAKY", message: "try again", retryable: true }
        }
        "t.flaky" => Answer::Int(n % 7),
        "t.charge" if n.rem_euclid(4) == 1 => Answer::TimedOut,
        "t.charge" => Answer::Int(0),
        "t.num" => Answer::Int((n * 3 + 1).rem_euclid(50)),
        "t.list" => Answer::Ints((0..n.rem_euclid(6)).collect()),
        "t.flag" => Answer::Bool(n % 2 == 0),
        "t.write" => Answer::Bool(true),
        other => panic!("unexpected tool {other}"),
    }
}

/// Writes random programs against [`REGISTRY`] from a seed.
pub struct Generator {
    state: u64,
    names: u32,
    ints: Vec<String>,
}

impl Generator {
    pub fn new(seed: u64) -> Generator {
        Generator { state: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15), names: 0, ints: Vec::new() }
    }

    /// Two to four bindings of integers or lists, and a list of them all as the result.
    pub fn program(&mut self) -> String {
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
        let choice = if depth == 0 || self.pick(5) == 0 { self.pick(2) } else { 2 + self.pick(6) };
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
            6 => {
                let err = self.fresh("err");
                format!(
                    "boundary retry 1 {{\n    return t.num({})\n}} catch {err} {{\n    return 0\n}}",
                    self.int(depth - 1)
                )
            }
            _ => self.nested_boundary(depth - 1),
        }
    }

    /// A boundary around a fold of flaky calls and a nested boundary around an at-most-once
    /// call that reads the fold: the inner call is sent only once the fold succeeded, so its
    /// attempt never fails afterwards and the outcome does not depend on completion order.
    fn nested_boundary(&mut self, depth: u32) -> String {
        let (sum, acc, item, inner, outer) =
            (self.fresh("s"), self.fresh("acc"), self.fresh("item"), self.fresh("e"), self.fresh("err"));
        let collection = self.list(depth);
        let retries = self.pick(3);
        format!(
            "boundary retry {retries} {{\n    {sum} = fold {acc} = 0 for {item} in {collection} {{\n        return {acc} + t.flaky({item})\n    }}\n    return boundary {{\n        return t.charge({sum})\n    }} catch {inner} {{\n        return 0\n    }}\n}} catch {outer} {{\n    return 1\n}}"
        )
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
}
