//! What a host saw when it ran a fixture: the one shape every host — the in-process Rust host
//! and the C and Go host programs, which print it as JSON — reports, and the judge reads.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Observation {
    pub outcome: Outcome,
    /// Every invocation of the host's tool executor, both runtimes' when the fixture crashes.
    #[serde(default)]
    pub invocations: Vec<Invocation>,
    /// Per tool, the most invocations running at once, counted at the executor.
    #[serde(default)]
    pub max_in_flight: BTreeMap<String, u64>,
    /// The run's journaled events (sequence number and kind name), in any order, possibly
    /// repeated: the judge orders them by sequence number.
    #[serde(default)]
    pub events: Vec<SeenEvent>,
}

/// How the run ended, as the host's public API reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case", deny_unknown_fields)]
pub enum Outcome {
    /// The run's value as presentation JSON.
    Succeeded {
        value: Json,
    },
    /// The run error's record (code, message, retryable, uncertain, details, …).
    Failed {
        error: Json,
    },
    /// The compile report (INTERFACES.md §1).
    CompileError {
        report: Json,
    },
    Cancelled,
    /// The host could not run the fixture: a refused input, a failed journal, a crash of the
    /// host program. Always a failure.
    HostError {
        message: String,
    },
}

impl Outcome {
    pub fn status(&self) -> &'static str {
        match self {
            Outcome::Succeeded { .. } => "succeeded",
            Outcome::Failed { .. } => "failed",
            Outcome::CompileError { .. } => "compile_error",
            Outcome::Cancelled => "cancelled",
            Outcome::HostError { .. } => "host_error",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Invocation {
    pub tool: String,
    /// The canonical argument list as presentation JSON.
    pub args: Json,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeenEvent {
    pub seq: u64,
    pub kind: String,
}

impl Observation {
    /// An observation of a host that could not run the fixture.
    pub fn host_error(message: impl Into<String>) -> Observation {
        Observation {
            outcome: Outcome::HostError { message: message.into() },
            invocations: Vec::new(),
            max_in_flight: BTreeMap::new(),
            events: Vec::new(),
        }
    }

    /// The event kinds in sequence order, each sequence number once.
    pub fn event_kinds(&self) -> Vec<&str> {
        let by_seq: BTreeMap<u64, &str> = self.events.iter().map(|e| (e.seq, e.kind.as_str())).collect();
        by_seq.into_values().collect()
    }

    /// How many invocations each tool had.
    pub fn dispatches(&self) -> BTreeMap<&str, u64> {
        let mut counts = BTreeMap::new();
        for invocation in &self.invocations {
            *counts.entry(invocation.tool.as_str()).or_default() += 1;
        }
        counts
    }

    /// The codes of the compile report's errors, in order.
    pub fn diagnostic_codes(&self) -> Option<Vec<String>> {
        let Outcome::CompileError { report } = &self.outcome else { return None };
        let diagnostics = report.get("diagnostics")?.as_array()?;
        let errors = diagnostics.iter().filter(|d| d.get("severity").and_then(Json::as_str) == Some("error"));
        Some(errors.filter_map(|d| d.get("code").and_then(Json::as_str).map(str::to_owned)).collect())
    }
}
