//! What a run header retains (spec §5.5) and the run compiled again from it: the source, the
//! registry file, the host inputs (their canonical RCVE bytes, so every value comes back exactly)
//! and the limits a run was started with. A process given nothing but a run id — an operator's
//! `runlet resume`, a worker taking over a run — rebuilds the program from here; the header's
//! digests then check that what came back is what ran.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::analyze::Inputs;
use crate::diag::{Code, codes};
use crate::engine::{LimitKey, Limits};
use crate::journal::{RetainedRun, RunHeader};
use crate::registry::{Registry, RegistryOptions};
use crate::stdlib::PRELUDE_VERSION;
use crate::value::{Object, Value, rcve};

/// Why a run could not be rebuilt from its header.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RetainError {
    #[error(
        "RL7302: the header of run `{run}` retains no program (it was written before run headers retained their source, registry and inputs): resume it from the host that started it"
    )]
    NotRetained { run: String },
    #[error("RL7303: the header of run `{run}` retains {what} that cannot be read back: {reason}")]
    Unreadable { run: String, what: &'static str, reason: String },
}

impl RetainError {
    pub fn code(&self) -> Code {
        match self {
            RetainError::NotRetained { .. } => codes::RUN_NOT_RETAINED,
            RetainError::Unreadable { .. } => codes::RUN_RETAINED_UNREADABLE,
        }
    }
}

/// A run as its header retains it: compile `source` against `registry` with `inputs`, under a
/// runtime with `limits`, and the program is the one that ran (the header's digests say so).
#[derive(Debug)]
pub struct RetainedProgram {
    pub source: Arc<str>,
    /// The registry read from the retained file; empty when the run's registry was not read
    /// from a file (its digest then tells whether the resuming host's registry is the same).
    pub registry: Option<Registry>,
    pub inputs: Inputs,
    pub limits: Limits,
}

impl RetainedProgram {
    /// Reads back what `header` retains; `options` are those the registry was first read with.
    pub fn from_header(
        header: &RunHeader,
        options: &RegistryOptions,
    ) -> Result<RetainedProgram, RetainError> {
        let run = || header.run_id.to_string();
        let retained = header.retained.as_ref().ok_or_else(|| RetainError::NotRetained { run: run() })?;
        let unreadable =
            |what: &'static str, reason: String| RetainError::Unreadable { run: run(), what, reason };
        let registry = match &retained.registry {
            Some(file) => Some(
                Registry::from_json(file, options)
                    .map_err(|error| unreadable("a registry file", error.to_string()))?
                    .registry,
            ),
            None => None,
        };
        let inputs = decode_inputs(&retained.inputs).map_err(|reason| unreadable("host inputs", reason))?;
        let mut limits = Limits::new();
        for (key, cap) in &retained.limits {
            let key = LimitKey::parse(key)
                .ok_or_else(|| unreadable("limits", format!("`{key}` is not a limit key")))?;
            limits = limits.with(key, *cap);
        }
        Ok(RetainedProgram { source: Arc::clone(&retained.source), registry, inputs, limits })
    }
}

/// What the header of a run of `source` with `inputs` (name, value, in the program's order)
/// under `limits` retains.
pub(super) fn retain(
    source: &Arc<str>,
    registry: &Registry,
    inputs: &[(&str, &Value)],
    limits: &Limits,
    durability: Option<&str>,
    created_unix_ms: u64,
    trace: BTreeMap<String, String>,
) -> RetainedRun {
    RetainedRun {
        source: Arc::clone(source),
        registry: registry.file().cloned(),
        inputs: encode_inputs(inputs),
        limits: limits.caps().map(|(key, cap)| (key.as_str().to_owned(), cap)).collect::<BTreeMap<_, _>>(),
        prelude_version: PRELUDE_VERSION.to_owned(),
        durability: durability.map(str::to_owned),
        created_unix_ms,
        trace,
    }
}

/// The hex of the RCVE encoding of `{name: value, …}`.
fn encode_inputs(inputs: &[(&str, &Value)]) -> String {
    let pairs = inputs.iter().map(|(name, value)| (Arc::from(*name), (*value).clone())).collect();
    // The names are the program's input names, distinct by construction.
    let object = Object::from_pairs(pairs).map(Value::from).unwrap_or(Value::Null);
    hex::encode(rcve::encode(&object))
}

fn decode_inputs(text: &str) -> Result<Inputs, String> {
    let bytes = hex::decode(text).map_err(|error| format!("not hex: {error}"))?;
    let value = rcve::decode(&bytes).map_err(|error| error.to_string())?;
    let Value::Object(object) = value else {
        return Err("not an object of input names to values".to_owned());
    };
    let mut inputs = Inputs::new();
    for (name, value) in object.entries() {
        inputs.insert(name.to_string(), value.clone());
    }
    Ok(inputs)
}
