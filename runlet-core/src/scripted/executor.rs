//! The scripted executor: answers tool calls from a tool fixture file (INTERFACES.md §3), first
//! matching case wins, counting how often each case answered so unused cases can be reported.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;

use super::fixtures::{FixtureAnswer, FixtureCase, FixtureError, ToolFixtures};
use crate::diag::{codes, nearest};
use crate::engine::{ToolCall, ToolCapabilities, ToolError, ToolExecutor, ToolOutput};
use crate::value::{List, Object, Value, ValueError, equals, to_presentation_json};

/// Answers each call with the first case of its tool whose `args` (when present) equal the
/// call's canonical argument list and whose `times` (when present) is not used up, after
/// sleeping the case's `delay_ms` on the tokio clock (a case without one answers at once, never
/// touching the timer).
///
/// - Arguments match by the language's `==` ([`equals`]): numbers compare by value, so a
///   fixture's `[1]` answers a call whose argument was converted to the Number `1.0`. JSON
///   cannot tell those apart, so identity (RCVE) matching would make such a case unreachable.
/// - A case is used when it starts answering a call, even if that call is then cancelled during
///   the delay. Claiming is atomic, so concurrent calls never use a case more than `times`.
/// - Cancellation is supported: a call whose token fires returns [`ToolError::cancelled`]
///   promptly and never completes afterwards. A call whose token has already fired uses no case.
/// - Deadlines are not read; cancellation is the only early exit.
/// - Dispatch never blocks (a delay is a tokio sleep), so the executor answers inline
///   ([`ToolCapabilities::answers_inline`]): a case without a delay completes on the run's task.
#[derive(Debug)]
pub struct ScriptedExecutor {
    tools: BTreeMap<Arc<str>, Vec<ScriptedCase>>,
}

#[derive(Debug)]
struct ScriptedCase {
    case: FixtureCase,
    used: AtomicU64,
}

/// How often one case answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseUsage {
    pub tool: Arc<str>,
    /// The case's position among its tool's cases, from 0.
    pub index: usize,
    pub times: Option<u64>,
    pub used: u64,
}

impl ScriptedExecutor {
    pub fn new(fixtures: ToolFixtures) -> ScriptedExecutor {
        let tools = fixtures
            .tools()
            .map(|(name, cases)| {
                let cases =
                    cases.iter().map(|case| ScriptedCase { case: case.clone(), used: AtomicU64::new(0) });
                (name.clone(), cases.collect())
            })
            .collect();
        ScriptedExecutor { tools }
    }

    /// Reads a fixture file's text ([`ToolFixtures::from_json_str`]).
    pub fn from_json_str(text: &str) -> Result<ScriptedExecutor, FixtureError> {
        ToolFixtures::from_json_str(text).map(ScriptedExecutor::new)
    }

    /// Every case with how often it answered, by tool name and then file order.
    pub fn usage(&self) -> Vec<CaseUsage> {
        self.tools
            .iter()
            .flat_map(|(tool, cases)| {
                cases.iter().enumerate().map(|(index, scripted)| CaseUsage {
                    tool: tool.clone(),
                    index,
                    times: scripted.case.times,
                    used: scripted.used.load(Ordering::SeqCst),
                })
            })
            .collect()
    }

    /// The cases that answered no call.
    pub fn unused(&self) -> Vec<CaseUsage> {
        self.usage().into_iter().filter(|usage| usage.used == 0).collect()
    }

    /// The first case of `tool` that answers `arguments` and still has a use left, claimed.
    fn claim(&self, tool: &str, arguments: &List) -> Option<&FixtureCase> {
        let call = Value::List(arguments.clone());
        let cases = self.tools.get(tool)?;
        cases.iter().find_map(|scripted| {
            let case = &scripted.case;
            if case.args.as_ref().is_some_and(|args| !equals(&Value::List(args.clone()), &call)) {
                return None;
            }
            let use_one = |used: u64| case.times.is_none_or(|times| used < times).then_some(used + 1);
            scripted.used.fetch_update(Ordering::SeqCst, Ordering::SeqCst, use_one).ok().map(|_| case)
        })
    }

    /// The error for a call no case answers: the tool, the arguments, and the tool's cases with
    /// their use (or, when the tool has none, the closest tool name that has some).
    fn unanswered(&self, tool: &str, arguments: &List) -> ToolError {
        let shown = show(&Value::List(arguments.clone()));
        let mut message = format!("no case of the tool fixtures answers `{tool}` called with {shown}");
        let mut cases = Vec::new();
        match self.tools.get(tool) {
            Some(scripted) if !scripted.is_empty() => {
                message.push_str("; its cases:");
                for (index, scripted) in scripted.iter().enumerate() {
                    let case = &scripted.case;
                    let used = scripted.used.load(Ordering::SeqCst);
                    message.push_str(&format!("\n  #{index}: {}", describe(case, used)));
                    cases.push(case_details(index, case, used));
                }
            }
            _ => {
                message.push_str(&format!("; the fixture file has no cases for `{tool}`"));
                if let Some(closest) = self.closest_tool(tool) {
                    message.push_str(&format!(" (did you mean `{closest}`?)"));
                }
            }
        }
        // Fixture args sit inside a file of bounded depth, so the cases always nest; arguments
        // already at the depth limit cannot be nested into details and are left out.
        let cases = List::new(cases).map_or(Value::Null, Value::List);
        let tool = Value::from(tool);
        let details =
            object(vec![("tool", tool.clone()), ("arguments", arguments.clone().into()), ("cases", cases)])
                .or_else(|_| object(vec![("tool", tool)]))
                .unwrap_or_else(|_| Object::empty());
        ToolError::new(codes::NO_FIXTURE_CASE.to_string(), message).with_details(details)
    }

    /// The closest other tool name that has cases.
    fn closest_tool(&self, tool: &str) -> Option<&str> {
        self.tools
            .iter()
            .filter(|(name, cases)| &***name != tool && !cases.is_empty())
            .filter_map(|(name, _)| Some((nearest::distance(name, tool)?, &**name)))
            .filter(|(distance, _)| *distance <= 3)
            .min()
            .map(|(_, name)| name)
    }
}

#[async_trait]
impl ToolExecutor for ScriptedExecutor {
    fn capabilities(&self, _tool: &str) -> ToolCapabilities {
        ToolCapabilities { cancellation: true, completion_after_cancel: false, answers_inline: true }
    }

    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        let token = &call.context.cancellation;
        if token.is_cancelled() {
            return Err(ToolError::cancelled(&call.tool));
        }
        let Some(case) = self.claim(&call.tool, &call.arguments) else {
            return Err(self.unanswered(&call.tool, &call.arguments));
        };
        // A zero delay answers at once: tokio's timer would round it up to its next tick.
        if !case.delay.is_zero() {
            tokio::select! {
                biased;
                () = token.cancelled() => return Err(ToolError::cancelled(&call.tool)),
                () = tokio::time::sleep(case.delay) => {}
            }
        }
        match &case.answer {
            FixtureAnswer::Result(value) => Ok(ToolOutput::new(value.clone())),
            FixtureAnswer::Error(error) => Err(error.clone()),
        }
    }
}

/// A value as presentation JSON, or its debug form when it holds Bytes (which JSON cannot show).
fn show(value: &Value) -> String {
    to_presentation_json(value).unwrap_or_else(|_| format!("{value:?}"))
}

/// One line about a case: what it matches, answers and how much of it is used.
fn describe(case: &FixtureCase, used: u64) -> String {
    let args = case.args.as_ref().map_or("any arguments".to_owned(), |args| show(&Value::List(args.clone())));
    let answer = match &case.answer {
        FixtureAnswer::Result(_) => "result".to_owned(),
        FixtureAnswer::Error(error) => format!("error {}", error.code),
    };
    let uses = match case.times {
        Some(times) if used >= times => format!(", times {times} (used up)"),
        Some(times) => format!(", times {times} (used {used})"),
        None => String::new(),
    };
    format!("args {args} -> {answer}{uses}")
}

fn case_details(index: usize, case: &FixtureCase, used: u64) -> Value {
    let count = |n: u64| Value::Int(i64::try_from(n).unwrap_or(i64::MAX));
    object(vec![
        ("index", count(index as u64)),
        ("args", case.args.clone().map_or(Value::Null, Value::List)),
        ("times", case.times.map_or(Value::Null, count)),
        ("used", count(used)),
    ])
    .map_or(Value::Null, Value::Object)
}

fn object(entries: Vec<(&str, Value)>) -> Result<Object, ValueError> {
    Object::from_pairs(entries.into_iter().map(|(key, value)| (Arc::from(key), value)).collect())
}
