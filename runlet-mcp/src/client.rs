//! The attached servers of one host: connected at once (concurrently), their tools imported,
//! the registry file a program is compiled against (the servers' tools with a host registry
//! file laid over them), the executor that calls them, and the bounded shutdown of all.
//!
//! The client owns a small tokio runtime of its own, so the sessions outlive any one run and
//! the engine's runtime needs nothing from it. Its blocking methods are called from outside an
//! async context.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::future::join_all;
use runlet::registry::{LoadedRegistry, McpImportOptions, Registry, RegistryOptions, import_mcp_tools};
use runlet::schema::{RegistryError, RegistryIssue};
use serde_json::{Map, Value, json};

use crate::config::{ClassPolicy, ServerSpec};
use crate::error::McpError;
use crate::executor::McpExecutor;
use crate::session::{ServerIdentity, Session};
use crate::stdio::Stopped;

/// How servers are attached.
#[derive(Clone)]
pub struct McpOptions {
    pub classes: ClassPolicy,
    /// A tool that does not import fails the whole attach instead of being left out.
    pub strict: bool,
    /// How long a server has to start and complete the handshake, and again to list its tools.
    /// Zero is refused.
    pub startup_timeout: Duration,
    /// How long a stdio server has to exit after its standard input closes, and again after
    /// `SIGTERM`, before `SIGKILL`.
    pub shutdown_grace: Duration,
    /// How long a call may wait with neither its answer nor a progress notification from its
    /// server before it fails with `RL6102` and the server is told to cancel it (MCP asks
    /// clients to time out every request: a server that garbles or loses an answer would
    /// otherwise hold the run for ever). Each progress notification starts the wait again.
    /// `None` waits for ever; zero is refused. A host's own tool deadline applies either way.
    pub silence_timeout: Option<Duration>,
}

impl McpOptions {
    /// The default [`McpOptions::startup_timeout`]: 30 seconds.
    pub const STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

    /// The default [`McpOptions::silence_timeout`]: five minutes.
    pub const SILENCE_TIMEOUT: Duration = Duration::from_secs(300);
}

impl Default for McpOptions {
    fn default() -> McpOptions {
        McpOptions {
            classes: ClassPolicy::default(),
            strict: false,
            startup_timeout: McpOptions::STARTUP_TIMEOUT,
            shutdown_grace: Duration::from_secs(2),
            silence_timeout: Some(McpOptions::SILENCE_TIMEOUT),
        }
    }
}

impl std::fmt::Debug for McpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpOptions")
            .field("classes", &self.classes)
            .field("strict", &self.strict)
            .field("startup_timeout", &self.startup_timeout)
            .field("shutdown_grace", &self.shutdown_grace)
            .field("silence_timeout", &self.silence_timeout)
            .finish_non_exhaustive()
    }
}

/// One attached server and what it contributed.
struct Attached {
    session: Arc<Session>,
    entries: Vec<Value>,
    names: Vec<(String, String)>,
}

/// Attached MCP servers.
pub struct McpClient {
    runtime: Option<tokio::runtime::Runtime>,
    servers: Vec<Attached>,
    warnings: Vec<RegistryIssue>,
    grace: Duration,
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient").field("servers", &self.identities().collect::<Vec<_>>()).finish()
    }
}

impl McpClient {
    /// Connects every server of `specs` (concurrently) and imports its tools. Any server that
    /// fails to start, or whose tools do not import, fails the whole attach; the servers already
    /// started are shut down.
    pub fn connect(specs: &[ServerSpec], options: &McpOptions) -> Result<McpClient, McpError> {
        let mut names: Vec<&str> = specs.iter().map(|spec| spec.name.as_str()).collect();
        names.sort_unstable();
        if let Some(pair) = names.windows(2).find(|pair| pair[0] == pair[1]) {
            return Err(McpError::spec(format!("two MCP servers are named `{}`", pair[0])));
        }
        // A misspelt trusted name would silently believe no server's annotations.
        if let Some(unknown) = options.classes.trusted.iter().find(|name| !names.contains(&name.as_str())) {
            return Err(McpError::spec(format!(
                "the trusted MCP server `{unknown}` is not one of the servers attached ({})",
                names.join(", ")
            )));
        }
        if options.silence_timeout.is_some_and(|silence| silence.is_zero()) {
            let why = "a silence timeout of zero would fail every call at once: give a positive one, or none";
            return Err(McpError::spec(why.to_owned()));
        }
        if options.startup_timeout.is_zero() {
            let why = "a start-up timeout of zero would refuse every server: give a positive one";
            return Err(McpError::spec(why.to_owned()));
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("runlet-mcp")
            .on_thread_start(crate::stdio::block_sigpipe)
            .enable_all()
            .build()
            .map_err(|error| McpError::start("*", format!("no runtime for the MCP client: {error}")))?;
        // On the client's threads, which write to the servers' pipes with `SIGPIPE` blocked.
        let (starting, options_owned) = (specs.to_vec(), options.clone());
        let connecting = runtime.spawn(async move {
            let options = &options_owned;
            let starts = starting.iter().map(|spec| async move {
                let session = Session::connect(spec, options).await?;
                let tools = session.list_tools(options.startup_timeout).await;
                Ok::<_, McpError>((session, tools))
            });
            let mut connected = Vec::new();
            let mut first_error = None;
            for result in join_all(starts).await {
                match result {
                    Ok((session, Ok(tools))) => connected.push((session, tools)),
                    Ok((session, Err(error))) => {
                        first_error.get_or_insert(error);
                        session.shutdown(options.shutdown_grace).await;
                    }
                    Err(error) => {
                        first_error.get_or_insert(error);
                    }
                }
            }
            if let Some(error) = first_error {
                for (session, _) in &connected {
                    session.shutdown(options.shutdown_grace).await;
                }
                return Err(error);
            }
            Ok(connected)
        });
        let connected = runtime
            .block_on(connecting)
            .map_err(|error| McpError::start("*", format!("the MCP client's start panicked: {error}")))??;
        let mut client = McpClient {
            runtime: Some(runtime),
            servers: Vec::new(),
            warnings: Vec::new(),
            grace: options.shutdown_grace,
        };
        let mut errors = Vec::new();
        for (session, tools) in connected {
            let name = session.spec.name.clone();
            let import = McpImportOptions {
                strict: options.strict,
                trust_annotations: options.classes.trusted.contains(&name),
                default_execution: options.classes.default,
                registry: RegistryOptions::default(),
            };
            let (entries, names) = match import_mcp_tools(&name, &json!({"tools": tools}), &import) {
                Ok(imported) => {
                    client.warnings.extend(imported.warnings.into_iter().map(|w| about(&name, w)));
                    let names = imported.entries.iter().filter_map(call_names).collect();
                    (imported.entries, names)
                }
                Err(error) => {
                    errors.extend(error.issues.into_iter().map(|issue| about(&name, issue)));
                    (Vec::new(), Vec::new())
                }
            };
            client.servers.push(Attached { session: Arc::new(session), entries, names });
        }
        if let Some(first) = errors.first() {
            let code = first.code;
            let message = errors.iter().map(|issue| issue.message.as_str()).collect::<Vec<_>>().join("; ");
            client.shutdown();
            return Err(McpError::new(code, message));
        }
        Ok(client)
    }

    /// What the handshake established about each server, in name order.
    pub fn identities(&self) -> impl Iterator<Item = &ServerIdentity> {
        self.servers.iter().map(|server| &server.session.identity)
    }

    /// The tools left out on import, and why.
    pub fn warnings(&self) -> &[RegistryIssue] {
        &self.warnings
    }

    /// The registry file (INTERFACES.md §2) of the servers' tools with `host` laid over it: a
    /// tool the host file names replaces the fields it gives of the server's entry (its
    /// `execution` overrides the class, say), and its other tools, `inputs`, `resource_groups`
    /// and `prelude` are added. `mcp_servers` records each server's protocol version and
    /// implementation, which enter the registry digest.
    pub fn registry_document(&self, host: Option<&Value>) -> Value {
        let mut tools: BTreeMap<String, Value> = BTreeMap::new();
        for entry in self.servers.iter().flat_map(|server| &server.entries) {
            tools.insert(name_of(entry), entry.clone());
        }
        let mut document = Map::new();
        if let Some(Value::Object(host)) = host {
            for (key, value) in host {
                if key != "tools" {
                    document.insert(key.clone(), value.clone());
                }
            }
            for entry in host.get("tools").and_then(Value::as_array).into_iter().flatten() {
                match (tools.get_mut(&name_of(entry)), entry) {
                    (Some(Value::Object(ours)), Value::Object(theirs)) => {
                        ours.extend(theirs.iter().map(|(k, v)| (k.clone(), v.clone())));
                    }
                    _ => {
                        tools.insert(name_of(entry), entry.clone());
                    }
                }
            }
        }
        document.insert("tools".into(), Value::Array(tools.into_values().collect()));
        document.insert("mcp_servers".into(), self.servers_json());
        Value::Object(document)
    }

    /// The registry of [`McpClient::registry_document`].
    pub fn registry(&self, host: Option<&Value>) -> Result<LoadedRegistry, RegistryError> {
        Registry::from_json(&self.registry_document(host), &RegistryOptions::default())
    }

    /// The servers as the registry document records them (`mcp_servers`): name, protocol
    /// version and implementation of each.
    fn servers_json(&self) -> Value {
        let servers: Map<String, Value> = self
            .identities()
            .map(|identity| {
                let mut server = json!({"protocol_version": identity.protocol_version});
                if let Some((name, version)) = &identity.implementation {
                    server["implementation"] = json!({"name": name, "version": version});
                }
                (identity.name.clone(), server)
            })
            .collect();
        Value::Object(servers)
    }

    /// The executor answering calls of every imported tool.
    pub fn executor(&self) -> McpExecutor {
        let tools = self
            .servers
            .iter()
            .flat_map(|server| {
                server
                    .names
                    .iter()
                    .map(|(name, original)| (name.clone(), (server.session.clone(), original.clone())))
            })
            .collect();
        McpExecutor::new(tools, self.handle())
    }

    fn handle(&self) -> tokio::runtime::Handle {
        self.runtime.as_ref().expect("a client has its runtime until it shuts down").handle().clone()
    }

    /// Ends every session (stdio servers: standard input closed, then `SIGTERM`, then
    /// `SIGKILL` of their process group, each after the grace period) and reports how each
    /// stdio server stopped.
    pub fn shutdown(mut self) -> Vec<(String, Stopped)> {
        self.stop()
    }

    fn stop(&mut self) -> Vec<(String, Stopped)> {
        let Some(runtime) = self.runtime.take() else { return Vec::new() };
        let grace = self.grace;
        let sessions: Vec<Arc<Session>> = self.servers.iter().map(|server| server.session.clone()).collect();
        let stopped = runtime.block_on(async move {
            let stops = sessions.iter().map(|session| async move {
                session.shutdown(grace).await.map(|stopped| (session.spec.name.clone(), stopped))
            });
            join_all(stops).await.into_iter().flatten().collect()
        });
        runtime.shutdown_timeout(grace);
        stopped
    }
}

impl Drop for McpClient {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `(registry name, the server's name)` of an imported entry (its `x-runlet-mcp`).
fn call_names(entry: &Value) -> Option<(String, String)> {
    let original = entry.get("x-runlet-mcp")?.get("name")?.as_str()?;
    Some((name_of(entry), original.to_owned()))
}

/// A finding of the import of `server`'s tools, its message saying which server.
fn about(server: &str, mut issue: RegistryIssue) -> RegistryIssue {
    issue.message = format!("MCP server `{server}`: {}", issue.message);
    issue
}

fn name_of(entry: &Value) -> String {
    entry.get("name").and_then(Value::as_str).unwrap_or_default().to_owned()
}
