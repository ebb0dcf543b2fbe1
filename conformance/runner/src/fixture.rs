//! Conformance fixtures (INTERFACES.md §5): one JSON file each, read strictly, and suites —
//! directories searched recursively for `*.json`, in path order.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value as Json;

/// The fixture format this runner reads.
pub const FORMAT: u64 = 1;

/// One fixture: a program, what it runs against, and what must be observed.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fixture {
    pub runlet_conformance: u64,
    pub name: String,
    pub source: String,
    /// A registry file (§2); none means a registry without tools.
    #[serde(default)]
    pub registry: Option<Json>,
    /// Host input values, also the sample inputs the program is compiled against.
    #[serde(default)]
    pub inputs: Option<Json>,
    /// Execution limits by `--limit` key.
    #[serde(default)]
    pub limits: Option<BTreeMap<String, u64>>,
    /// A tool fixture file (§3).
    #[serde(default)]
    pub tools: Option<Json>,
    #[serde(default)]
    pub crash: Option<Crash>,
    pub expect: Expect,
}

/// Where the host stops the runtime abruptly.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Crash {
    /// The journal takes this many `append` calls; nothing after them reaches it.
    pub after_appends: u64,
}

/// What must be observed; every key but `status` is checked only when present.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    pub status: ExpectedStatus,
    #[serde(default)]
    pub value: Option<Json>,
    #[serde(default)]
    pub error: Option<serde_json::Map<String, Json>>,
    #[serde(default)]
    pub diagnostics: Option<Vec<String>>,
    #[serde(default)]
    pub dispatches: Option<BTreeMap<String, u64>>,
    #[serde(default)]
    pub calls: Option<Vec<ExpectedCall>>,
    #[serde(default)]
    pub max_in_flight: Option<BTreeMap<String, u64>>,
    #[serde(default)]
    pub events: Option<Vec<String>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExpectedStatus {
    Succeeded,
    Failed,
    CompileError,
}

impl ExpectedStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ExpectedStatus::Succeeded => "succeeded",
            ExpectedStatus::Failed => "failed",
            ExpectedStatus::CompileError => "compile_error",
        }
    }
}

/// A call that must have been dispatched at least once with exactly these arguments.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedCall {
    pub tool: String,
    pub args: Json,
}

impl Fixture {
    /// The registry file's text for the hosts.
    pub fn registry_json(&self) -> String {
        self.registry.as_ref().map_or_else(|| r#"{"tools": []}"#.to_owned(), Json::to_string)
    }

    /// The host inputs as a JSON object's text.
    pub fn inputs_json(&self) -> String {
        self.inputs.as_ref().map_or_else(|| "{}".to_owned(), Json::to_string)
    }

    /// The limits as the JSON object the hosts take (`limits_json`); empty for none.
    pub fn limits_json(&self) -> String {
        self.limits.as_ref().map_or_else(String::new, |limits| {
            serde_json::to_string(limits).expect("a map of numbers encodes")
        })
    }

    /// The tool fixture file's text.
    pub fn tools_json(&self) -> String {
        self.tools.as_ref().map_or_else(|| "{}".to_owned(), Json::to_string)
    }
}

/// One file of a suite: its fixture, or why it is not one.
#[derive(Debug)]
pub struct Entry {
    pub path: PathBuf,
    pub fixture: Result<Fixture, String>,
}

impl Entry {
    /// The fixture's name, or its path when it could not be read.
    pub fn name(&self) -> String {
        match &self.fixture {
            Ok(fixture) => fixture.name.clone(),
            Err(_) => self.path.display().to_string(),
        }
    }
}

/// Every `*.json` file under `paths` (files are taken as they are), sorted by path, each read as
/// a fixture. A path that does not exist is an error.
pub fn load_suites(paths: &[PathBuf]) -> Result<Vec<Entry>, String> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_file() {
            files.push(path.clone());
            continue;
        }
        if !path.is_dir() {
            return Err(format!("`{}` is neither a fixture file nor a directory", path.display()));
        }
        for entry in walkdir::WalkDir::new(path).follow_links(true) {
            let entry = entry.map_err(|e| format!("reading `{}`: {e}", path.display()))?;
            if entry.file_type().is_file() && entry.path().extension().is_some_and(|ext| ext == "json") {
                files.push(entry.into_path());
            }
        }
    }
    files.sort();
    files.dedup();
    Ok(files.into_iter().map(|path| Entry { fixture: read(&path), path }).collect())
}

/// Reads one fixture file.
fn read(path: &Path) -> Result<Fixture, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read it: {e}"))?;
    let fixture: Fixture = serde_json::from_str(&text).map_err(|e| format!("not a fixture: {e}"))?;
    if fixture.runlet_conformance != FORMAT {
        return Err(format!(
            "`runlet_conformance` is {}; this runner reads format {FORMAT}",
            fixture.runlet_conformance
        ));
    }
    Ok(fixture)
}
