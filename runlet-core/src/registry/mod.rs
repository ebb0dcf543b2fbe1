//! The frozen registry (spec §3.1, §2.3): tools by name in nested namespaces, host input schemas,
//! the unsafe-tool policy of §5.4 and the prelude's intrinsics, built once by [`RegistryBuilder`]
//! (or read from a registry file, INTERFACES.md §2) and immutable afterwards. It sits above
//! `schema`, whose vocabulary it uses, and `stdlib`, whose descriptors it is handed.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::diag::{codes, nearest};
use crate::stdlib::{self, Intrinsic, Prelude};
use crate::value::{Digest, Value, sha256};

use crate::schema::import::{Document, Findings, import_document};
use crate::schema::tool_entry::read_tool;
use crate::schema::{
    ExecutionClass, ExecutionOrigin, ImportOptions, JsonPath, RegistryError, RegistryIssue, SchemaArena,
    SchemaDocs, SchemaId, ToolDescriptor, is_default_ignorable, is_identifier, is_reserved, nfc, skeleton,
    visible,
};

mod digest;
mod file;
mod mcp;
mod namespace;

use digest::canonical_form;
pub use mcp::{McpImport, McpImportOptions, import_mcp_tools, mcp_tool_identifier};
pub use namespace::{Callable, Namespace, ToolId};

/// What the host allows of tools whose execution class is `unsafe` (spec §5.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UnsafeToolPolicy {
    #[default]
    Allow,
    /// Unsafe calls must sit inside a `boundary`; the analyzer enforces it.
    RequireBoundary,
    /// The registry is rejected if it has an unsafe tool (`RL8017`).
    Prohibit,
}

/// How a registry is loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RegistryOptions {
    pub import: ImportOptions,
    pub unsafe_tools: UnsafeToolPolicy,
}

/// A named value the host supplies to a program, with its schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostInput {
    pub schema: SchemaId,
    /// Documentation by JSON pointer relative to the input's schema (`""` for the schema itself).
    pub docs: SchemaDocs,
}

/// An immutable set of tools and host inputs with their schemas. `Send + Sync`; share it.
#[derive(Debug)]
pub struct Registry {
    schemas: Arc<SchemaArena>,
    tools: Vec<ToolDescriptor>,
    namespace: Namespace,
    inputs: BTreeMap<String, HostInput>,
    /// Concurrency caps shared by the tools naming them (`resource_groups`), by group name.
    resource_groups: BTreeMap<String, u64>,
    unsafe_tools: UnsafeToolPolicy,
    digest: Digest,
    prelude: Prelude,
    /// The tools that are intrinsics of the prelude, by id.
    intrinsics: BTreeMap<ToolId, Intrinsic>,
    /// The registry file this registry was read from, which run headers retain (spec §5.5).
    file: Option<Arc<serde_json::Value>>,
    /// The MCP servers the tools come from (`mcp_servers` of the registry file), in the digest.
    mcp_servers: Option<Value>,
}

/// A registry that loaded, with the warnings found on the way.
#[derive(Debug)]
pub struct LoadedRegistry {
    pub registry: Registry,
    pub warnings: Vec<RegistryIssue>,
}

impl Registry {
    /// A registry with no tools, no host inputs and no prelude.
    pub fn empty() -> Registry {
        RegistryBuilder::new(RegistryOptions::default())
            .build()
            .map(|loaded| loaded.registry)
            .unwrap_or_else(|_| unreachable!("a builder with nothing in it has nothing to refuse"))
    }

    /// The arena every schema id of this registry refers to. Later stages layer their own
    /// schemas on it with [`SchemaArena::layered_on`].
    pub fn schemas(&self) -> &Arc<SchemaArena> {
        &self.schemas
    }

    /// Every tool in name order, with its id.
    pub fn tools(&self) -> impl Iterator<Item = (ToolId, &ToolDescriptor)> {
        self.tools.iter().enumerate().map(|(i, tool)| (ToolId(i as u32), tool))
    }

    /// The registry file this registry was read from ([`Registry::from_json`]); `None` for one
    /// built tool by tool.
    pub fn file(&self) -> Option<&Arc<serde_json::Value>> {
        self.file.as_ref()
    }

    /// How many tools the registry has.
    pub fn tool_count(&self) -> usize {
        self.tools.len()
    }

    pub fn tool(&self, id: ToolId) -> &ToolDescriptor {
        &self.tools[id.index()]
    }

    /// The tool with the full dotted name `name`.
    pub fn tool_named(&self, name: &str) -> Option<ToolId> {
        self.namespace.get(&name.split('.').collect::<Vec<_>>())?.tool()
    }

    /// The longest prefix of a dotted path that names a tool (spec §2.3); the segments after it
    /// are member projections on the tool's result.
    pub fn resolve_callable<S: AsRef<str>>(&self, segments: &[S]) -> Option<Callable> {
        self.namespace.longest_callable(segments)
    }

    /// The namespace at `segments` (the top level for none), for listing members as candidates.
    pub fn namespace<S: AsRef<str>>(&self, segments: &[S]) -> Option<&Namespace> {
        self.namespace.get(segments)
    }

    /// The first segments of all tool names, sorted: reserved as binding names in every scope.
    pub fn roots(&self) -> impl Iterator<Item = &str> {
        self.namespace.members()
    }

    pub fn is_root(&self, name: &str) -> bool {
        self.namespace.get(&[name]).is_some()
    }

    /// The host inputs whose schemas the registry declares, by name.
    pub fn inputs(&self) -> &BTreeMap<String, HostInput> {
        &self.inputs
    }

    /// The declared resource groups and the most calls of each group's tools in flight at once.
    pub fn resource_groups(&self) -> &BTreeMap<String, u64> {
        &self.resource_groups
    }

    /// SHA-256 over the RCVE bytes of [`Registry::canonical_form`]: part of a run's identity,
    /// equal for registries that differ only in key order, tool order or free text.
    pub fn digest(&self) -> &Digest {
        &self.digest
    }

    /// The normalized descriptors as one canonical value (the layout is described at
    /// `schema::digest`), for pinning in run headers.
    pub fn canonical_form(&self) -> Value {
        canonical_form(&self.schemas, &self.tools, &self.inputs, self.mcp_servers.as_ref())
    }

    pub fn unsafe_tool_policy(&self) -> UnsafeToolPolicy {
        self.unsafe_tools
    }

    /// The prelude of intrinsics this registry offers next to its tools.
    pub fn prelude(&self) -> Prelude {
        self.prelude
    }

    /// The intrinsic `tool` is, when it is one of the prelude's functions rather than a host tool.
    pub fn intrinsic(&self, tool: ToolId) -> Option<Intrinsic> {
        self.intrinsics.get(&tool).copied()
    }

    /// `root` when it is a namespace of this registry's prelude (such as `text`).
    pub fn intrinsic_namespace<'r>(&self, root: &'r str) -> Option<&'r str> {
        (self.prelude != Prelude::None && stdlib::NAMESPACES.contains(&root)).then_some(root)
    }

    /// Whether calls of `tool` must be inside a `boundary` under the host's policy.
    pub fn requires_boundary(&self, tool: ToolId) -> bool {
        self.unsafe_tools == UnsafeToolPolicy::RequireBoundary
            && self.tool(tool).execution == ExecutionClass::Unsafe
    }
}

/// Collects tools and host inputs, then checks and freezes them into a [`Registry`].
#[derive(Debug)]
pub struct RegistryBuilder {
    arena: SchemaArena,
    options: RegistryOptions,
    tools: Vec<(ToolDescriptor, JsonPath)>,
    inputs: BTreeMap<String, (HostInput, JsonPath)>,
    resource_groups: BTreeMap<String, u64>,
    issues: Vec<RegistryIssue>,
    prelude: Prelude,
    mcp_servers: Option<Value>,
}

impl RegistryBuilder {
    pub fn new(options: RegistryOptions) -> RegistryBuilder {
        RegistryBuilder {
            arena: SchemaArena::new(),
            options,
            tools: Vec::new(),
            inputs: BTreeMap::new(),
            resource_groups: BTreeMap::new(),
            issues: Vec::new(),
            prelude: Prelude::None,
            mcp_servers: None,
        }
    }

    /// Records the MCP servers the tools come from (an object of server name → protocol
    /// version and implementation); it enters the digest.
    pub fn mcp_servers(&mut self, servers: Value) {
        self.mcp_servers = Some(servers);
    }

    /// Offers the intrinsics of `prelude` next to the tools (docs/STDLIB.md). The prelude's
    /// namespaces are then closed to host tools (`RL8021`).
    pub fn prelude(&mut self, prelude: Prelude) {
        self.prelude = prelude;
    }

    /// Adds findings made outside the builder (such as about the file around the tools).
    pub fn extend_issues(&mut self, issues: impl IntoIterator<Item = RegistryIssue>) {
        self.issues.extend(issues);
    }

    /// Adds one tool entry (registry file format, INTERFACES.md §2); `path` is where it is in
    /// the host's document, for findings.
    pub fn add_tool_json(&mut self, json: &serde_json::Value, path: JsonPath) {
        if let Some(tool) = read_tool(&mut self.arena, &self.options.import, json, &path, &mut self.issues) {
            self.tools.push((tool, path));
        }
    }

    /// Adds a host input named `name` (kept in NFC, as the lexer reads names) whose schema is
    /// `schema` (JSON Schema), found at `path`.
    pub fn add_input_json(&mut self, name: &str, schema: &serde_json::Value, path: JsonPath) {
        let name = &*nfc(name);
        if !is_identifier(name) || is_reserved(name) {
            let message = format!("the host input name `{name}` is not an identifier a program can use");
            self.issues.push(RegistryIssue::error(codes::INVALID_HOST_INPUT, path.clone(), message));
        } else if name.chars().any(is_default_ignorable) {
            let message = format!(
                "the host input name `{}` holds invisible characters, so a reader cannot tell it from the name without them",
                visible(name)
            );
            self.issues.push(RegistryIssue::error(codes::INVALID_HOST_INPUT, path.clone(), message));
        }
        let mut docs = SchemaDocs::new();
        let document_name = format!("inputs/{name}");
        let document = Document { json: schema, path: &path, name: &document_name };
        let findings = Findings { issues: &mut self.issues, docs: &mut docs, docs_base: &path };
        let schema = import_document(&mut self.arena, &self.options.import, document, findings);
        self.inputs.insert(name.to_owned(), (HostInput { schema, docs }, path));
    }

    /// Declares the resource group `name`: at most `cap` calls of its tools in flight at once.
    pub fn add_resource_group(&mut self, name: &str, cap: u64) {
        self.resource_groups.insert(name.to_owned(), cap);
    }

    /// Checks names across the whole registry and freezes it; any error fails the build with
    /// every finding.
    pub fn build(mut self) -> Result<LoadedRegistry, RegistryError> {
        self.check_duplicates();
        self.check_unsafe_tools();
        self.check_resource_groups();
        self.add_prelude();
        let mut namespace = Namespace::default();
        self.tools.sort_by(|(a, _), (b, _)| a.name.cmp(&b.name));
        self.tools.dedup_by(|(a, _), (b, _)| a.name == b.name);
        let mut intrinsics = BTreeMap::new();
        for (i, (tool, _)) in self.tools.iter().enumerate() {
            namespace.insert(tool.name.segments(), ToolId(i as u32));
            // A host tool cannot be in a prelude namespace (`add_prelude`), so a prelude name is
            // the intrinsic's own descriptor.
            if stdlib::NAMESPACES.contains(&tool.name.root()) {
                let intrinsic = Intrinsic::named(tool.name.as_str()).filter(|&f| self.prelude.includes(f));
                intrinsics.extend(intrinsic.map(|f| (ToolId(i as u32), f)));
            }
        }
        for (name, (_, path)) in &self.inputs {
            if namespace.get(&[name]).is_some() {
                let message = format!("the host input `{name}` has the name of a registry root");
                let issue = RegistryIssue::error(codes::INVALID_HOST_INPUT, path.clone(), message)
                    .with_help("registry roots are reserved in every scope: rename the input");
                self.issues.push(issue);
            }
        }
        if self.issues.iter().any(RegistryIssue::is_error) {
            return Err(RegistryError { issues: self.issues });
        }
        let tools: Vec<ToolDescriptor> = self.tools.into_iter().map(|(tool, _)| tool).collect();
        let inputs: BTreeMap<String, HostInput> =
            self.inputs.into_iter().map(|(name, (input, _))| (name, input)).collect();
        let digest = sha256(&canonical_form(&self.arena, &tools, &inputs, self.mcp_servers.as_ref()));
        let registry = Registry {
            schemas: Arc::new(self.arena),
            tools,
            namespace,
            inputs,
            resource_groups: self.resource_groups,
            unsafe_tools: self.options.unsafe_tools,
            digest,
            prelude: self.prelude,
            intrinsics,
            file: None,
            mcp_servers: self.mcp_servers,
        };
        Ok(LoadedRegistry { registry, warnings: self.issues })
    }

    /// Names are in NFC (an NFC and an NFD spelling are one name, `RL8005`), and two names that
    /// differ only by invisible, default-ignorable characters are refused together (`RL8024`).
    fn check_duplicates(&mut self) {
        let mut first: BTreeMap<String, (&ToolDescriptor, &JsonPath)> = BTreeMap::new();
        for (tool, path) in &self.tools {
            let name = tool.name.as_str();
            match first.get(&skeleton(name)) {
                Some((earlier_tool, earlier)) if earlier_tool.name.as_str() == name => {
                    let issue = if tool.mcp.is_some() || earlier_tool.mcp.is_some() {
                        let message = format!(
                            "`{}` and `{}` (at {earlier}) both map to the tool name `{name}`",
                            tool.call_name(),
                            earlier_tool.call_name()
                        );
                        RegistryIssue::error(codes::MAPPED_TOOL_NAMES_COLLIDE, path.key("name"), message)
                            .with_help("rename one of the tools, or register it under a name of its own")
                    } else {
                        let message = format!("a tool named `{name}` is already registered at {earlier}");
                        RegistryIssue::error(codes::DUPLICATE_TOOL, path.key("name"), message)
                    };
                    self.issues.push(issue);
                }
                Some((earlier_tool, earlier)) => {
                    let earlier_name = earlier_tool.name.as_str();
                    let invisible: BTreeSet<String> = (name.chars().chain(earlier_name.chars()))
                        .filter(|&c| is_default_ignorable(c))
                        .map(|c| format!("U+{:04X}", c as u32))
                        .collect();
                    let message = format!(
                        "the tool name `{}` differs from `{}` (at {earlier}) only by invisible characters ({})",
                        visible(name),
                        visible(earlier_name),
                        invisible.into_iter().collect::<Vec<_>>().join(", ")
                    );
                    let issue = RegistryIssue::error(codes::CONFUSABLE_TOOL_NAME, path.key("name"), message)
                        .with_help(
                            "a reader cannot tell the two apart: rename one, without invisible characters",
                        );
                    self.issues.push(issue);
                }
                None => {
                    first.insert(skeleton(name), (tool, path));
                }
            }
        }
    }

    fn check_resource_groups(&mut self) {
        for (tool, path) in &self.tools {
            let Some(group) = &tool.resource_group else { continue };
            if !self.resource_groups.contains_key(group) {
                let message =
                    format!("`{}` names the resource group `{group}`, which is not declared", tool.name);
                let nearest = self
                    .resource_groups
                    .keys()
                    .filter_map(|declared| Some((nearest::distance(declared, group)?, declared.as_str())))
                    .filter(|(distance, _)| *distance <= 2)
                    .min();
                let issue = RegistryIssue::error(codes::REGISTRY_BAD_FIELD, path.key("resource_group"), message)
                    .with_candidates(nearest.map(|(_, name)| name))
                    .with_help(format!(
                        "declare it at the top level: `\"resource_groups\": {{\"{group}\": 4}}` (its most calls in flight)"
                    ));
                self.issues.push(issue);
            }
        }
    }

    /// Adds the prelude's descriptors, after reporting every host tool in a prelude namespace:
    /// a host cannot override or extend an intrinsic namespace (docs/STDLIB.md, "Names").
    fn add_prelude(&mut self) {
        if self.prelude == Prelude::None {
            return;
        }
        for (tool, path) in &self.tools {
            if stdlib::NAMESPACES.contains(&tool.name.root()) {
                let message = format!(
                    "`{}` is in the `{}` namespace, which the {} prelude owns",
                    tool.name,
                    tool.name.root(),
                    self.prelude.as_str()
                );
                let issue = RegistryIssue::error(codes::PRELUDE_NAMESPACE_TAKEN, path.key("name"), message)
                    .with_help("rename the tool into a namespace of its own, or load the registry without the prelude")
                    .with_candidates(stdlib::NAMESPACES.iter().map(|ns| format!("{ns}.*")));
                self.issues.push(issue);
            }
        }
        for intrinsic in self.prelude.intrinsics() {
            self.tools.push((intrinsic.descriptor(&mut self.arena), JsonPath::root().key("prelude")));
        }
    }

    fn check_unsafe_tools(&mut self) {
        if self.options.unsafe_tools != UnsafeToolPolicy::Prohibit {
            return;
        }
        for (tool, path) in self.tools.iter().filter(|(t, _)| t.execution == ExecutionClass::Unsafe) {
            let (at, why) = match tool.execution_origin {
                ExecutionOrigin::Declared => (path.key("execution"), "it declares `execution: \"unsafe\"`"),
                _ => (path.clone(), "it declares no `execution` and no MCP `readOnlyHint`/`idempotentHint`"),
            };
            let message = format!("`{}` is unsafe and this host prohibits unsafe tools: {why}", tool.name);
            let issue = RegistryIssue::error(codes::UNSAFE_TOOL_PROHIBITED, at, message).with_help(
                "declare the tool's real guarantee with `execution` (`pure`, `idempotent`, `recoverable` or `at_most_once`), or leave the tool out",
            );
            self.issues.push(issue);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Registry>();
    }
}
