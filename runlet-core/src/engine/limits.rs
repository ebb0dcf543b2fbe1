//! Execution limits (spec §10, peer decision 0002): the host's immutable policy of inclusive
//! maxima for one run, and the `RL41xx` error a run that crosses one of them fails with.

use std::fmt;
use std::sync::Arc;

use crate::diag::{Code, Span, codes};
use crate::engine::error::RunError;
use crate::value::{Object, Value};

/// One configurable limit, named by its host configuration key (INTERFACES.md §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LimitKey {
    /// Physical tool-call attempts in the run; every dispatch counts, retries included.
    ToolCalls,
    /// Node evaluations in the run: every time a node's work runs, in every iteration and attempt.
    NodeEvaluations,
    /// The one-based nesting depth of a dynamic scope: the program is 1, and each conditional
    /// arm, `and`/`or` right operand, loop iteration, fold step, boundary attempt or catch
    /// entered inside a scope of depth d has depth d + 1. Value nesting is bounded separately
    /// (`RL4303`, `RL4301`).
    Depth,
    /// Tool calls in flight at once: over all runs when the runtime sets it, over one run when
    /// a run sets it. A throttle: calls wait for a permit and the run never fails because of it
    /// (0 acts as 1, so calls still run one at a time).
    Concurrency,
    /// Milliseconds from the run's start to its end.
    WallClockMs,
    /// Items one `for` or `fold` iterates.
    LoopIterations,
    /// Nodes materialized in the run.
    GraphNodes,
    /// Bytes of the program's source text.
    SourceBytes,
    /// Canonical (RCVE) bytes of one call's argument list.
    CallInputBytes,
    /// Canonical (RCVE) bytes of one call's output.
    CallOutputBytes,
    /// Boundary retries in the run, over every boundary.
    Retries,
    /// Dependency edges materialized in the run: one per input of every planned node.
    GraphEdges,
    /// Bytes of the journal records the run appends: each event's whole record (envelope and
    /// checksum included), counted from the events alone so a replay crosses at the same point.
    /// The records of the limit failure itself do not count.
    JournalBytes,
}

impl LimitKey {
    /// Every key, in the order of [`LimitKey::as_str`]'s documentation.
    pub const ALL: [LimitKey; 13] = [
        LimitKey::ToolCalls,
        LimitKey::NodeEvaluations,
        LimitKey::Depth,
        LimitKey::Concurrency,
        LimitKey::WallClockMs,
        LimitKey::LoopIterations,
        LimitKey::GraphNodes,
        LimitKey::SourceBytes,
        LimitKey::CallInputBytes,
        LimitKey::CallOutputBytes,
        LimitKey::Retries,
        LimitKey::GraphEdges,
        LimitKey::JournalBytes,
    ];

    /// The host configuration key, as `--limit KEY=N` and limit errors spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            LimitKey::ToolCalls => "tool_calls",
            LimitKey::NodeEvaluations => "node_evaluations",
            LimitKey::Depth => "depth",
            LimitKey::Concurrency => "concurrency",
            LimitKey::WallClockMs => "wall_clock_ms",
            LimitKey::LoopIterations => "loop_iterations",
            LimitKey::GraphNodes => "graph_nodes",
            LimitKey::SourceBytes => "source_bytes",
            LimitKey::CallInputBytes => "call_input_bytes",
            LimitKey::CallOutputBytes => "call_output_bytes",
            LimitKey::Retries => "retries",
            LimitKey::GraphEdges => "graph_edges",
            LimitKey::JournalBytes => "journal_bytes",
        }
    }

    /// The key spelled `text`.
    pub fn parse(text: &str) -> Option<LimitKey> {
        LimitKey::ALL.into_iter().find(|key| key.as_str() == text)
    }

    /// The code a run crossing this limit fails with; `None` for `concurrency`, which throttles.
    pub fn code(self) -> Option<Code> {
        Some(match self {
            LimitKey::ToolCalls => codes::TOOL_CALL_LIMIT_EXCEEDED,
            LimitKey::NodeEvaluations => codes::NODE_EVALUATION_LIMIT_EXCEEDED,
            LimitKey::Depth => codes::DEPTH_LIMIT_EXCEEDED,
            LimitKey::Concurrency => return None,
            LimitKey::WallClockMs => codes::WALL_CLOCK_LIMIT_EXCEEDED,
            LimitKey::LoopIterations => codes::LOOP_ITERATION_LIMIT_EXCEEDED,
            LimitKey::GraphNodes => codes::GRAPH_NODE_LIMIT_EXCEEDED,
            LimitKey::SourceBytes => codes::SOURCE_BYTES_LIMIT_EXCEEDED,
            LimitKey::CallInputBytes => codes::CALL_INPUT_BYTES_LIMIT_EXCEEDED,
            LimitKey::CallOutputBytes => codes::CALL_OUTPUT_BYTES_LIMIT_EXCEEDED,
            LimitKey::Retries => codes::RETRY_LIMIT_EXCEEDED,
            LimitKey::GraphEdges => codes::GRAPH_EDGE_LIMIT_EXCEEDED,
            LimitKey::JournalBytes => codes::JOURNAL_BYTES_LIMIT_EXCEEDED,
        })
    }

    /// What the limit counts, for messages.
    fn counts(self) -> &'static str {
        match self {
            LimitKey::ToolCalls => "tool calls",
            LimitKey::NodeEvaluations => "node evaluations",
            LimitKey::Depth => "levels of scope nesting",
            LimitKey::Concurrency => "calls in flight",
            LimitKey::WallClockMs => "milliseconds of wall-clock time",
            LimitKey::LoopIterations => "loop iterations",
            LimitKey::GraphNodes => "graph nodes",
            LimitKey::SourceBytes => "bytes of source",
            LimitKey::CallInputBytes => "bytes of call input",
            LimitKey::CallOutputBytes => "bytes of call output",
            LimitKey::Retries => "boundary retries",
            LimitKey::GraphEdges => "graph edges",
            LimitKey::JournalBytes => "bytes of journal records",
        }
    }
}

impl fmt::Display for LimitKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The valid keys, comma-separated, for messages about a key that is not one.
pub fn valid_keys() -> String {
    LimitKey::ALL.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(", ")
}

/// The limits of a run: an inclusive maximum per key, or none (unlimited). Immutable once
/// given to a runtime or a run; every run counts from zero.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Limits {
    caps: [Option<u64>; LimitKey::ALL.len()],
}

impl Limits {
    /// No limit set: everything unlimited.
    pub fn new() -> Limits {
        Limits::default()
    }

    /// These limits with `key` capped at `cap` (inclusive).
    pub fn with(mut self, key: LimitKey, cap: u64) -> Limits {
        self.caps[key as usize] = Some(cap);
        self
    }

    /// The cap of `key`, `None` when unlimited.
    pub fn get(&self, key: LimitKey) -> Option<u64> {
        self.caps[key as usize]
    }

    /// These limits with every cap `overrides` sets replacing this one's.
    pub fn overridden_by(&self, overrides: &Limits) -> Limits {
        let mut merged = self.clone();
        for (mine, theirs) in merged.caps.iter_mut().zip(overrides.caps) {
            if theirs.is_some() {
                *mine = theirs;
            }
        }
        merged
    }

    /// The set caps as `(key, cap)` in key order.
    pub fn caps(&self) -> impl Iterator<Item = (LimitKey, u64)> + '_ {
        LimitKey::ALL.into_iter().filter_map(|key| self.get(key).map(|cap| (key, cap)))
    }

    /// The set caps as a value `{key: cap}`, for configuration digests.
    pub fn to_value(&self) -> Value {
        let pairs: Vec<(Arc<str>, Value)> = self
            .caps()
            .map(|(key, cap)| (Arc::from(key.as_str()), Value::Int(saturating_int(cap))))
            .collect();
        Object::from_pairs(pairs).map(Value::from).unwrap_or(Value::Null)
    }

    /// Reads one `KEY=N` assignment, as `runlet run --limit` takes it.
    pub fn parse_assignment(text: &str) -> Result<(LimitKey, u64), LimitParseError> {
        let (name, number) =
            text.split_once('=').ok_or_else(|| LimitParseError::NotAnAssignment(text.to_owned()))?;
        let key = LimitKey::parse(name.trim()).ok_or_else(|| LimitParseError::UnknownKey(name.to_owned()))?;
        let cap = number
            .trim()
            .parse::<u64>()
            .map_err(|_| LimitParseError::BadNumber { key, text: number.to_owned() })?;
        Ok((key, cap))
    }
}

/// Why a `KEY=N` limit assignment was not understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitParseError {
    #[error("`{0}` is not KEY=N; the keys are {keys}", keys = valid_keys())]
    NotAnAssignment(String),
    #[error("`{0}` is not a limit; the keys are {keys}", keys = valid_keys())]
    UnknownKey(String),
    #[error("the limit `{key}` needs a whole number of at least 0, not `{text}`")]
    BadNumber { key: LimitKey, text: String },
}

/// A limit a run crossed: which, how far, and the source that did it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Breach {
    pub key: LimitKey,
    pub current: u64,
    pub cap: u64,
    pub span: Span,
}

impl Breach {
    /// The run failure this breach causes at `node_id` ("" for the run as a whole): a policy
    /// failure no boundary catches, with `details: {limit, current, cap, span}`.
    pub fn to_error(&self, node_id: String) -> RunError {
        let code = self.key.code().map(|c| c.to_string()).unwrap_or_default();
        let message = format!(
            "the run crossed its limit of {cap} {what}: it reached {current} (host configuration key `{key}`)",
            cap = self.cap,
            what = self.key.counts(),
            current = self.current,
            key = self.key,
        );
        let mut error = RunError::policy(code, message, node_id);
        let span: Vec<(Arc<str>, Value)> = vec![
            ("start".into(), Value::Int(i64::from(self.span.start))),
            ("end".into(), Value::Int(i64::from(self.span.end))),
        ];
        let details: Vec<(Arc<str>, Value)> = vec![
            ("limit".into(), Value::from(self.key.as_str())),
            ("current".into(), Value::Int(saturating_int(self.current))),
            ("cap".into(), Value::Int(saturating_int(self.cap))),
            ("span".into(), Object::from_pairs(span).map(Value::from).unwrap_or(Value::Null)),
        ];
        error.details = Object::from_pairs(details).unwrap_or_else(|_| Object::empty());
        error
    }
}

fn saturating_int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_through_their_names() {
        for (index, key) in LimitKey::ALL.into_iter().enumerate() {
            assert_eq!(key as usize, index, "caps are indexed by key");
            assert_eq!(LimitKey::parse(key.as_str()), Some(key));
            assert_eq!(key.code().is_none(), key == LimitKey::Concurrency);
        }
        assert_eq!(LimitKey::parse("toolcalls"), None);
    }

    #[test]
    fn assignments_parse_and_name_the_valid_keys_when_wrong() {
        assert_eq!(Limits::parse_assignment("tool_calls=3"), Ok((LimitKey::ToolCalls, 3)));
        assert_eq!(Limits::parse_assignment("journal_bytes=4096"), Ok((LimitKey::JournalBytes, 4096)));
        let unknown = Limits::parse_assignment("calls=3").expect_err("unknown key");
        assert!(unknown.to_string().contains("tool_calls, node_evaluations, depth"), "{unknown}");
        assert!(matches!(Limits::parse_assignment("depth=-1"), Err(LimitParseError::BadNumber { .. })));
        assert!(matches!(Limits::parse_assignment("depth"), Err(LimitParseError::NotAnAssignment(_))));
    }

    #[test]
    fn overrides_replace_only_the_caps_they_set() {
        let base = Limits::new().with(LimitKey::ToolCalls, 10).with(LimitKey::Depth, 4);
        let run = Limits::new().with(LimitKey::Depth, 2).with(LimitKey::Retries, 0);
        let merged = base.overridden_by(&run);
        assert_eq!(merged.get(LimitKey::ToolCalls), Some(10));
        assert_eq!(merged.get(LimitKey::Depth), Some(2));
        assert_eq!(merged.get(LimitKey::Retries), Some(0));
        assert_eq!(merged.get(LimitKey::GraphNodes), None);
    }

    #[test]
    fn a_breach_is_an_uncatchable_error_with_its_details() {
        let breach = Breach { key: LimitKey::ToolCalls, current: 4, cap: 3, span: Span { start: 5, end: 9 } };
        let error = breach.to_error("let:x/value".into());
        assert_eq!(error.code, "RL4101");
        assert!(!error.catchable);
        assert_eq!(
            crate::value::to_presentation_json(&Value::Object(error.details)).expect("json"),
            r#"{"cap":3,"current":4,"limit":"tool_calls","span":{"end":9,"start":5}}"#
        );
    }
}
