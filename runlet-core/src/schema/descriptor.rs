//! Tool descriptors (spec §3.1): name, documentation, call shapes, output schema, declared
//! errors, execution class (spec §5.4) and schema version; schemas are ids in the registry arena.

use std::fmt;
use std::sync::Arc;

use super::docs::SchemaDocs;
use super::model::SchemaId;
use super::names::QualifiedName;

/// The dispatch guarantee a tool declares (spec §5.4), from most to least forgiving.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ExecutionClass {
    Pure,
    Idempotent,
    Recoverable,
    AtMostOnce,
    Unsafe,
}

impl ExecutionClass {
    pub const ALL: [ExecutionClass; 5] = [
        ExecutionClass::Pure,
        ExecutionClass::Idempotent,
        ExecutionClass::Recoverable,
        ExecutionClass::AtMostOnce,
        ExecutionClass::Unsafe,
    ];

    /// The registry spelling, such as `at_most_once`.
    pub fn as_str(self) -> &'static str {
        match self {
            ExecutionClass::Pure => "pure",
            ExecutionClass::Idempotent => "idempotent",
            ExecutionClass::Recoverable => "recoverable",
            ExecutionClass::AtMostOnce => "at_most_once",
            ExecutionClass::Unsafe => "unsafe",
        }
    }

    pub fn parse(text: &str) -> Option<ExecutionClass> {
        ExecutionClass::ALL.into_iter().find(|c| c.as_str() == text)
    }

    /// Whether calls have effects, which makes their statements implicit roots (spec §2.5).
    pub fn is_effectful(self) -> bool {
        self != ExecutionClass::Pure
    }
}

impl fmt::Display for ExecutionClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a tool's execution class came from, for explaining it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExecutionOrigin {
    /// The registry's `execution` field.
    Declared,
    /// MCP `annotations.readOnlyHint: true`.
    ReadOnlyHint,
    /// MCP `annotations.idempotentHint: true`.
    IdempotentHint,
    /// Nothing said otherwise, so `unsafe`.
    Default,
}

/// One positional parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    pub name: Arc<str>,
    pub schema: SchemaId,
    pub optional: bool,
    pub description: Option<String>,
}

/// How a tool may be called (spec §2.3): positionally, with one object argument, or both when
/// the registry proved the two shapes cannot accept the same call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallSchema {
    /// `params`: the ordered parameters; optional ones come last.
    pub positional: Option<Vec<Param>>,
    /// `inputSchema`: the schema of the single object argument (an object or map schema, or a
    /// union of them). With no required property the argument may be left out.
    pub object: Option<SchemaId>,
}

impl CallSchema {
    /// The numbers of arguments the positional shape accepts: required count ..= total.
    pub fn positional_arity(&self) -> Option<(usize, usize)> {
        let params = self.positional.as_ref()?;
        Some((params.iter().filter(|p| !p.optional).count(), params.len()))
    }
}

/// An error code a tool declares it may fail with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorDescriptor {
    pub code: String,
    pub retryable: bool,
    pub description: Option<String>,
}

/// The tool's own name where a registry entry renamed it (`x-runlet-mcp`): the MCP server it
/// comes from, when known, and the name that server knows it by, which calls of it must use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpOrigin {
    pub server: Option<String>,
    pub name: String,
}

/// Everything the analyzer and runtime know about one registered tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolDescriptor {
    pub name: QualifiedName,
    /// MCP `title` (or `annotations.title`), a human display name.
    pub title: Option<String>,
    pub description: String,
    pub input: CallSchema,
    pub output: SchemaId,
    /// Sorted by code.
    pub errors: Vec<ErrorDescriptor>,
    pub execution: ExecutionClass,
    pub execution_origin: ExecutionOrigin,
    pub schema_version: Arc<str>,
    /// The most calls of this tool in flight at once over a whole runtime (`max_concurrency`);
    /// scheduling policy, not part of the registry digest.
    pub max_concurrency: Option<u64>,
    /// The `resource_groups` entry whose permits the tool's calls share (`resource_group`).
    pub resource_group: Option<String>,
    /// Where the tool comes from when its registry name is not its own (INTERFACES.md §4.2).
    pub mcp: Option<McpOrigin>,
    /// Documentation of the tool's schema positions, by JSON pointer relative to the tool entry
    /// (`/outputSchema/properties/email`, `/params/0/schema`).
    pub docs: SchemaDocs,
}

impl ToolDescriptor {
    /// The name calls of the tool go out under: its own name at its server (`get-env`) when the
    /// registry renamed it, else its registry name.
    pub fn call_name(&self) -> &str {
        self.mcp.as_ref().map_or(self.name.as_str(), |origin| &origin.name)
    }

    /// One line about the tool: the first line of its description, else its title, else "".
    pub fn summary(&self) -> &str {
        self.description
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .or(self.title.as_deref())
            .unwrap_or_default()
    }
}
