//! Execution limits (spec §10, peer decision 0002): the host's immutable policy of inclusive
//! maxima for one run, and the `RL41xx` error a run that crosses one of them fails with.

use std::fmt;
use std::sync::Arc;

use crate::diag::{Code, Span, codes};
use crate::engine::error::RunError;

/// The value-size caps' defaults, the `value` module's.
const DEFAULT_CAPS: ValueCaps = ValueCaps::DEFAULT;

/// The compile-time limits' defaults, the analyzer's.
const DEFAULT_ANALYSIS: AnalyzeOptions = AnalyzeOptions::DEFAULT;
use crate::analyze::AnalyzeOptions;
use crate::syntax::ParseOptions;
use crate::value::{JsonError, MAX_DEPTH, Object, Value, ValueCaps, parse_json, to_presentation_json};

/// Declares [`LimitKey`] from one table: each key's variant, its host configuration key, the
/// code a run crossing it fails with (`None` for a throttle, which only makes calls wait), what
/// it counts (for messages), and the cap that applies when the host sets none (`None`:
/// unlimited). The order is the keys' order everywhere they are listed.
macro_rules! declare_limits {
    ($( $(#[$doc:meta])* $variant:ident = $key:literal, $code:expr, $counts:literal, $default:expr; )*) => {
        /// One configurable limit, named by its host configuration key (INTERFACES.md §4).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
        pub enum LimitKey {
            $( $(#[$doc])* $variant, )*
        }

        impl LimitKey {
            /// Every key, in table order.
            pub const ALL: [LimitKey; [$($key),*].len()] = [$(LimitKey::$variant),*];

            /// The host configuration key, as `--limit KEY=N` and limit errors spell it.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( LimitKey::$variant => $key, )*
                }
            }

            /// The code a run crossing this limit fails with; `None` for a throttle
            /// (`concurrency`).
            pub fn code(self) -> Option<Code> {
                match self {
                    $( LimitKey::$variant => $code, )*
                }
            }

            /// What the limit counts, for messages.
            fn counts(self) -> &'static str {
                match self {
                    $( LimitKey::$variant => $counts, )*
                }
            }

            /// The cap that applies when the host sets none; `None` is unlimited.
            pub fn default_cap(self) -> Option<u64> {
                match self {
                    $( LimitKey::$variant => $default, )*
                }
            }
        }
    };
}

declare_limits! {
    /// Physical tool-call attempts in the run; every dispatch counts, retries included.
    ToolCalls = "tool_calls", Some(codes::TOOL_CALL_LIMIT_EXCEEDED), "tool calls", None;
    /// Node evaluations in the run: every time a node's work runs, in every iteration and attempt.
    NodeEvaluations = "node_evaluations", Some(codes::NODE_EVALUATION_LIMIT_EXCEEDED), "node evaluations", None;
    /// The one-based nesting depth of a dynamic scope: the program is 1, and each conditional
    /// arm, `and`/`or` right operand, loop iteration, fold step, boundary attempt or catch
    /// entered inside a scope of depth d has depth d + 1. Value nesting is bounded separately
    /// (`RL4303`, `RL4301`).
    Depth = "depth", Some(codes::DEPTH_LIMIT_EXCEEDED), "levels of scope nesting", None;
    /// Tool calls in flight at once: over all runs when the runtime sets it, over one run when
    /// a run sets it. A throttle: calls wait for a permit and the run never fails because of it
    /// (0 acts as 1, so calls still run one at a time).
    Concurrency = "concurrency", None, "calls in flight", None;
    /// Milliseconds from the run's start to its end.
    WallClockMs = "wall_clock_ms", Some(codes::WALL_CLOCK_LIMIT_EXCEEDED), "milliseconds of wall-clock time", None;
    /// Items one `for` or `fold` iterates.
    LoopIterations = "loop_iterations", Some(codes::LOOP_ITERATION_LIMIT_EXCEEDED), "loop iterations", None;
    /// Nodes materialized in the run.
    GraphNodes = "graph_nodes", Some(codes::GRAPH_NODE_LIMIT_EXCEEDED), "graph nodes", None;
    /// Bytes of the program's source text.
    SourceBytes = "source_bytes", Some(codes::SOURCE_BYTES_LIMIT_EXCEEDED), "bytes of source", None;
    /// Canonical (RCVE) bytes of one call's argument list.
    CallInputBytes = "call_input_bytes", Some(codes::CALL_INPUT_BYTES_LIMIT_EXCEEDED), "bytes of call input", None;
    /// Canonical (RCVE) bytes of one call's output.
    CallOutputBytes = "call_output_bytes", Some(codes::CALL_OUTPUT_BYTES_LIMIT_EXCEEDED), "bytes of call output", None;
    /// Boundary retries in the run, over every boundary.
    Retries = "retries", Some(codes::RETRY_LIMIT_EXCEEDED), "boundary retries", None;
    /// Dependency edges materialized in the run: one per input of every planned node.
    GraphEdges = "graph_edges", Some(codes::GRAPH_EDGE_LIMIT_EXCEEDED), "graph edges", None;
    /// Bytes of the journal records the run appends: each event's whole record (envelope and
    /// checksum included), counted from the events alone so a replay crosses at the same point.
    /// The records of the limit failure itself do not count.
    JournalBytes = "journal_bytes", Some(codes::JOURNAL_BYTES_LIMIT_EXCEEDED), "bytes of journal records", None;
    /// The weight of one value a run builds or receives ([`Value::weight`]: about its canonical
    /// encoding's bytes, shared parts counted each time).
    ValueBytes = "value_bytes", Some(codes::VALUE_BYTES_LIMIT_EXCEEDED), "bytes in one value", Some(DEFAULT_CAPS.value_bytes);
    /// Elements of one list a run builds or receives.
    ListLength = "list_length", Some(codes::LIST_LENGTH_LIMIT_EXCEEDED), "elements in one list", Some(DEFAULT_CAPS.list_length);
    /// UTF-8 bytes of one string (or bytes of one Bytes value) a run builds or receives.
    StringBytes = "string_bytes", Some(codes::STRING_BYTES_LIMIT_EXCEEDED), "bytes in one string", Some(DEFAULT_CAPS.string_bytes);
    /// Entries of one object or map a run builds or receives.
    ObjectEntries = "object_entries", Some(codes::OBJECT_ENTRIES_LIMIT_EXCEEDED), "entries in one object", Some(DEFAULT_CAPS.object_entries);
    /// The deepest nesting of brackets, blocks and operators a program's source may have; a
    /// compile-time limit, reported as a diagnostic. At most 256.
    ParseNesting = "parse_nesting", Some(codes::NESTING_TOO_DEEP), "levels of nesting in the source", Some(DEFAULT_ANALYSIS.parse.max_nesting_depth as u64);
    /// The most binary operators on one path down an expression; compile time. At most 512.
    OperatorChain = "operator_chain", Some(codes::NESTING_TOO_DEEP), "operators in one chain", Some(DEFAULT_ANALYSIS.parse.max_operator_chain as u64);
    /// The units of analysis work (expressions lowered, static conversion steps) a program may
    /// take to check; compile time.
    AnalysisWork = "analysis_work", Some(codes::ANALYSIS_BUDGET_EXCEEDED), "units of analysis work", Some(DEFAULT_ANALYSIS.max_work);
    /// The most diagnostics a check reports; the rest are summarized by one note.
    Diagnostics = "diagnostics", Some(codes::TOO_MANY_DIAGNOSTICS), "diagnostics", Some(DEFAULT_ANALYSIS.max_diagnostics as u64);
    /// The deepest value a conversion (`as`, a tool's argument) accepts; at most the value
    /// depth ceiling.
    ConversionDepth = "conversion_depth", Some(codes::CONVERSION_DEPTH_EXCEEDED), "levels of a converted value", Some(MAX_DEPTH as u64);
}

impl LimitKey {
    /// The key spelled `text`.
    pub fn parse(text: &str) -> Option<LimitKey> {
        LimitKey::ALL.into_iter().find(|key| key.as_str() == text)
    }

    /// The largest cap the key takes, when it has one: the compile-time depths, past which the
    /// passes over a program would not fit a thread's stack ([`ParseOptions::NESTING_CEILING`]).
    pub fn ceiling(self) -> Option<u64> {
        match self {
            LimitKey::ParseNesting => Some(u64::from(ParseOptions::NESTING_CEILING)),
            LimitKey::OperatorChain => Some(u64::from(ParseOptions::OPERATOR_CHAIN_CEILING)),
            _ => None,
        }
    }

    /// `cap` for this key, unless it is above the key's ceiling.
    fn checked(self, cap: u64) -> Result<u64, LimitParseError> {
        match self.ceiling() {
            Some(ceiling) if cap > ceiling => Err(LimitParseError::AboveCeiling { key: self, cap, ceiling }),
            _ => Ok(cap),
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

    /// The cap of `key`: the one set, else the key's default; `None` when unlimited.
    pub fn get(&self, key: LimitKey) -> Option<u64> {
        self.caps[key as usize].or(key.default_cap())
    }

    /// The value-size caps these limits set (spec §10), for building values within them.
    pub fn value_caps(&self) -> ValueCaps {
        let cap = |key: LimitKey| self.get(key).unwrap_or(u64::MAX);
        ValueCaps {
            value_bytes: cap(LimitKey::ValueBytes),
            list_length: cap(LimitKey::ListLength),
            string_bytes: cap(LimitKey::StringBytes),
            object_entries: cap(LimitKey::ObjectEntries),
        }
    }

    /// The options a program is checked under: the compile-time limits (`parse_nesting`,
    /// `operator_chain`, `analysis_work`, `diagnostics`) and the value-size caps literal folding
    /// stays within. (`source_bytes` is a run's limit, checked when the run starts.)
    pub fn analyze_options(&self) -> AnalyzeOptions {
        let get = |key: LimitKey| self.get(key).unwrap_or(u64::MAX);
        let narrow = |key: LimitKey| u32::try_from(get(key)).unwrap_or(u32::MAX);
        let diagnostics = usize::try_from(get(LimitKey::Diagnostics)).unwrap_or(usize::MAX);
        let mut options = AnalyzeOptions { value_caps: self.value_caps(), ..AnalyzeOptions::DEFAULT };
        options.parse.max_nesting_depth = narrow(LimitKey::ParseNesting);
        options.parse.max_operator_chain = narrow(LimitKey::OperatorChain);
        options.parse.max_diagnostics = diagnostics;
        options.max_work = get(LimitKey::AnalysisWork);
        options.max_diagnostics = diagnostics;
        options
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

    /// The caps the host set (defaults aside) as `(key, cap)` in key order.
    pub fn caps(&self) -> impl Iterator<Item = (LimitKey, u64)> + '_ {
        LimitKey::ALL.into_iter().filter_map(|key| self.caps[key as usize].map(|cap| (key, cap)))
    }

    /// The set caps as a value `{key: cap}`, for configuration digests.
    pub fn to_value(&self) -> Value {
        let pairs: Vec<(Arc<str>, Value)> = self
            .caps()
            .map(|(key, cap)| (Arc::from(key.as_str()), Value::Int(saturating_int(cap))))
            .collect();
        Object::from_pairs(pairs).map(Value::from).unwrap_or(Value::Null)
    }

    /// The limits a value `{key: cap}` sets: the inverse of [`Limits::to_value`] for caps within
    /// their keys' ceilings, as hosts give limits in JSON (the C runtime and run options'
    /// `limits_json`). Each key must be a limit key and each cap a whole number of at least 0,
    /// and at most the key's [`LimitKey::ceiling`].
    pub fn from_value(value: &Value) -> Result<Limits, LimitParseError> {
        let Value::Object(caps) = value else {
            return Err(LimitParseError::NotAnObject);
        };
        let mut limits = Limits::new();
        for (name, cap) in caps.entries() {
            let key = LimitKey::parse(name).ok_or_else(|| LimitParseError::UnknownKey(name.to_string()))?;
            let cap = match cap {
                Value::Int(cap) => u64::try_from(*cap).ok(),
                _ => None,
            }
            .ok_or_else(|| LimitParseError::BadNumber {
                key,
                text: to_presentation_json(cap).unwrap_or_else(|_| "a value with no JSON form".to_owned()),
            })?;
            limits = limits.with(key, key.checked(cap)?);
        }
        Ok(limits)
    }

    /// [`Limits::from_value`] of a JSON object's text; empty text sets no limit.
    pub fn from_json(text: &str) -> Result<Limits, LimitParseError> {
        if text.trim().is_empty() {
            return Ok(Limits::new());
        }
        Limits::from_value(&parse_json(text).map_err(LimitParseError::NotJson)?)
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
        Ok((key, key.checked(cap)?))
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
    #[error(
        "the limit `{key}` is at most {ceiling} (deeper programs would not fit a thread's stack), not {cap}"
    )]
    AboveCeiling { key: LimitKey, cap: u64, ceiling: u64 },
    #[error("limits are an object of caps by limit key; the keys are {keys}", keys = valid_keys())]
    NotAnObject,
    #[error("the limits are not valid JSON: {0}")]
    NotJson(JsonError),
}

impl LimitParseError {
    /// `RL8101` for text that is not JSON, `RL8105` (`INVALID_LIMIT`) otherwise.
    pub fn code(&self) -> Code {
        match self {
            LimitParseError::NotJson(_) => codes::INVALID_HOST_JSON,
            _ => codes::INVALID_LIMIT,
        }
    }
}

/// A limit a run crossed: which, how far, and the source that did it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
        let mut error = RunError::limit(code, message, node_id);
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
    fn compile_time_limits_reach_the_analyzer_and_default_to_its_own() {
        assert_eq!(Limits::new().analyze_options(), AnalyzeOptions::DEFAULT);
        let set = Limits::new()
            .with(LimitKey::ParseNesting, 7)
            .with(LimitKey::OperatorChain, 8)
            .with(LimitKey::AnalysisWork, 9)
            .with(LimitKey::Diagnostics, 10)
            .with(LimitKey::ListLength, 11)
            .analyze_options();
        assert_eq!((set.parse.max_nesting_depth, set.parse.max_operator_chain), (7, 8));
        assert_eq!((set.max_work, set.max_diagnostics, set.parse.max_diagnostics), (9, 10, 10));
        assert_eq!(set.value_caps.list_length, 11);
    }

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

    /// The compile-time depths are refused above their ceilings, from the CLI's assignments and
    /// from a host's JSON alike, with the ceiling named.
    #[test]
    fn the_compile_time_depths_are_refused_above_their_ceilings() {
        assert_eq!(Limits::parse_assignment("parse_nesting=256"), Ok((LimitKey::ParseNesting, 256)));
        assert_eq!(Limits::parse_assignment("operator_chain=512"), Ok((LimitKey::OperatorChain, 512)));
        let over = Limits::parse_assignment("parse_nesting=5000").expect_err("above the ceiling");
        assert_eq!(
            over,
            LimitParseError::AboveCeiling { key: LimitKey::ParseNesting, cap: 5000, ceiling: 256 }
        );
        assert_eq!(over.code(), codes::INVALID_LIMIT);
        assert!(over.to_string().contains("`parse_nesting` is at most 256"), "{over}");
        assert!(matches!(
            Limits::from_json(r#"{"operator_chain": 513}"#),
            Err(LimitParseError::AboveCeiling { key: LimitKey::OperatorChain, cap: 513, ceiling: 512 })
        ));
        assert_eq!(LimitKey::Depth.ceiling(), None);
    }

    #[test]
    fn limits_read_back_from_their_value() {
        let limits = Limits::new().with(LimitKey::ToolCalls, 3).with(LimitKey::WallClockMs, 0);
        assert_eq!(Limits::from_value(&limits.to_value()), Ok(limits));
        assert_eq!(Limits::from_value(&Limits::new().to_value()), Ok(Limits::new()));
        let parse = |json: &str| Limits::from_value(&crate::value::parse_json(json).expect("json"));
        assert_eq!(parse(r#"{"calls": 3}"#), Err(LimitParseError::UnknownKey("calls".into())));
        for bad in [r#"{"depth": -1}"#, r#"{"depth": 1.5}"#, r#"{"depth": "2"}"#] {
            assert!(
                matches!(parse(bad), Err(LimitParseError::BadNumber { key: LimitKey::Depth, .. })),
                "{bad}"
            );
        }
        assert_eq!(parse("[1]"), Err(LimitParseError::NotAnObject));
        assert_eq!(Limits::from_json(r#"{"depth": 2}"#), Ok(Limits::new().with(LimitKey::Depth, 2)));
        assert_eq!(Limits::from_json(""), Ok(Limits::new()));
        assert!(matches!(Limits::from_json("{"), Err(LimitParseError::NotJson(_))));
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
        assert!(!error.is_catchable());
        assert_eq!(error.class, crate::engine::FailureClass::Limit);
        assert_eq!(
            crate::value::to_presentation_json(&Value::Object(error.details)).expect("json"),
            r#"{"cap":3,"current":4,"limit":"tool_calls","span":{"end":9,"start":5}}"#
        );
    }
}
