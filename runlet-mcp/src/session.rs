//! One MCP session: connecting over stdio (its output read through [`crate::guard`]) or
//! Streamable HTTP, the handshake (whose negotiated protocol version and server identity are
//! kept), the paged `tools/list`, bounded in pages, tools and time, and the bounded shutdown of
//! the server. A server that went away (its process exited, its stream or connection closed) is
//! started or reached again by the next call, which goes on only when the server is the one the
//! handshake identified: a long-lived host outlives a crash of one of its tools' servers.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use rmcp::model::{
    ClientRequest, CustomResult, ListToolsRequest, PaginatedRequestParams, ProtocolVersion, ServerResult,
    Tool,
};
use rmcp::service::{
    ClientInitializeError, ClientLifecycleMode, ClientServiceExt, Peer, RoleClient, RunningService,
};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio::sync::Mutex as AsyncMutex;

use crate::client::McpOptions;
use crate::config::{ServerSpec, TransportSpec};
use crate::error::{McpError, clipped, service_failure, without_url_secrets};
use crate::guard::{Guarded, Violation};
use crate::handler::{Handler, ProgressRoutes};
use crate::stdio::{ServerProcess, Stopped};

/// What the handshake established about a server; it enters the registry digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerIdentity {
    /// The namespace its tools are under.
    pub name: String,
    /// The protocol version both sides agreed on, such as `2025-11-25`.
    pub protocol_version: String,
    /// The server's `serverInfo` name and version, when it gave them.
    pub implementation: Option<(String, String)>,
}

impl std::fmt::Display for ServerIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.implementation {
            Some((name, version)) => write!(f, "{name} {version}, protocol {}", self.protocol_version),
            None => write!(f, "a server without serverInfo, protocol {}", self.protocol_version),
        }
    }
}

/// The most pages of `tools/list` read from one server.
pub const MOST_TOOL_PAGES: usize = 100;

/// The most tools one server may list.
pub const MOST_TOOLS: usize = 10_000;

/// A server the client attached: its first handshake's identity, and the link calls go over.
pub(crate) struct Session {
    pub spec: ServerSpec,
    pub identity: ServerIdentity,
    options: McpOptions,
    /// The current link; replaced, under this lock, when the server went away.
    link: AsyncMutex<Arc<Link>>,
    shut_down: AtomicBool,
}

/// One connection to the server: one started process over stdio, or one HTTP session.
pub(crate) struct Link {
    pub peer: Peer<RoleClient>,
    pub routes: ProgressRoutes,
    /// Why the guard ended a stdio server's stream, once it did.
    violation: Violation,
    service: Mutex<Option<RunningService<RoleClient, Handler>>>,
    process: AsyncMutex<Option<ServerProcess>>,
}

/// The lifecycle Runlet asks for: the current protocol first, the handshake of 2025-11-25 that
/// the reference servers speak when the server does not know it.
fn lifecycle() -> ClientLifecycleMode {
    ClientLifecycleMode::Initialize
}

impl Session {
    /// Starts or reaches the server of `spec` and completes the handshake within the options'
    /// start-up timeout.
    pub(crate) async fn connect(spec: &ServerSpec, options: &McpOptions) -> Result<Session, McpError> {
        let (link, identity) = Link::connect(spec, options).await?;
        Ok(Session {
            spec: spec.clone(),
            identity,
            options: options.clone(),
            link: AsyncMutex::new(Arc::new(link)),
            shut_down: AtomicBool::new(false),
        })
    }

    /// The link for a call: the current one while the server is there; else the server started
    /// or reached again, when it is still the one the first handshake identified. The error
    /// says why there is none. A new link is made on `client`, the MCP client's runtime, whose
    /// threads write to servers' pipes with `SIGPIPE` blocked and outlive any one run.
    pub(crate) async fn link(&self, client: &tokio::runtime::Handle) -> Result<Arc<Link>, String> {
        let mut current = self.link.lock().await;
        if self.shut_down.load(Ordering::Acquire) {
            return Err("the MCP client was shut down".to_owned());
        }
        let Some(why) = current.gone().await else { return Ok(Arc::clone(&current)) };
        let (old, spec, options, identity) =
            (Arc::clone(&current), self.spec.clone(), self.options.clone(), self.identity.clone());
        let reconnect = client.spawn(async move {
            old.shutdown(options.shutdown_grace).await;
            let (link, found) = Link::connect(&spec, &options)
                .await
                .map_err(|error| format!("starting it again failed: {}", error.message))?;
            if found != identity {
                link.shutdown(options.shutdown_grace).await;
                return Err(format!(
                    "started again, it is {found} where it was {identity}, whose tools the registry holds"
                ));
            }
            Ok(link)
        });
        let link = match reconnect.await {
            Ok(Ok(link)) if self.shut_down.load(Ordering::Acquire) => {
                link.shutdown(self.options.shutdown_grace).await;
                return Err("the MCP client was shut down".to_owned());
            }
            Ok(Ok(link)) => link,
            Ok(Err(failed)) => return Err(format!("{why}; {failed}")),
            Err(error) => return Err(format!("{why}; starting it again panicked: {error}")),
        };
        tracing::info!(server = %self.spec.name, reason = %why, "runlet: an MCP server went away and was started again");
        *current = Arc::new(link);
        Ok(Arc::clone(&current))
    }

    /// How long a call waits with neither its answer nor progress before it fails.
    pub(crate) fn silence(&self) -> Option<Duration> {
        self.options.silence_timeout
    }

    /// Every tool the server lists (see [`Link::list_tools`]).
    pub(crate) async fn list_tools(&self, within: Duration) -> Result<Vec<serde_json::Value>, McpError> {
        let link = Arc::clone(&*self.link.lock().await);
        link.list_tools(&self.spec.name, within).await
    }

    /// Ends the session for good (see [`Link::shutdown`]): no call starts the server again.
    pub(crate) async fn shutdown(&self, grace: Duration) -> Option<Stopped> {
        // Said first: a call starting the server again meanwhile gives up once it holds the link.
        self.shut_down.store(true, Ordering::Release);
        let link = self.link.lock().await;
        link.shutdown(grace).await
    }
}

impl Link {
    /// Starts or reaches the server of `spec` and completes the handshake within the options'
    /// start-up timeout; what the server said of itself beside.
    async fn connect(spec: &ServerSpec, options: &McpOptions) -> Result<(Link, ServerIdentity), McpError> {
        let startup = options.startup_timeout;
        let routes = ProgressRoutes::default();
        let handler = Handler { progress: routes.clone() };
        let name = spec.name.as_str();
        let violation = Violation::default();
        let (service, process) = match &spec.transport {
            TransportSpec::Stdio { command, args, env } => {
                let (mut process, stdout, stdin) = ServerProcess::spawn(name, command, args, env)?;
                let stdout = Guarded::new(stdout, Arc::clone(&violation));
                match handshake(name, startup, handler.serve_with_lifecycle((stdout, stdin), lifecycle()))
                    .await
                {
                    Ok(service) => (service, Some(process)),
                    Err(mut error) => {
                        if let Some(why) = violation.lock().clone() {
                            error.message.push_str(&format!("; {why}"));
                        }
                        let exited = process.ended(Duration::from_millis(500)).await;
                        let tail = process.stderr_tail();
                        let _ = process.shutdown(Duration::from_millis(200)).await;
                        return Err(with_process_facts(error, exited, &tail));
                    }
                }
            }
            TransportSpec::Http { url, headers } => {
                let mut custom = HashMap::new();
                for (key, value) in headers {
                    let header = http::HeaderName::try_from(key.as_str()).map_err(|e| {
                        McpError::start(name, format!("the header name `{key}` is invalid: {e}"))
                    })?;
                    let value = http::HeaderValue::try_from(value.as_str()).map_err(|e| {
                        McpError::start(name, format!("the value of header `{key}` is invalid: {e}"))
                    })?;
                    custom.insert(header, value);
                }
                let config =
                    StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(custom);
                let transport = StreamableHttpClientTransport::from_config(config);
                (handshake(name, startup, handler.serve_with_lifecycle(transport, lifecycle())).await?, None)
            }
        };
        let info = service.peer().peer_info();
        let identity = ServerIdentity {
            name: name.to_owned(),
            protocol_version: info.as_ref().map_or_else(
                || ProtocolVersion::default().to_string(),
                |info| info.protocol_version.to_string(),
            ),
            implementation: info
                .as_ref()
                .and_then(|info| info.server_info.as_ref())
                .map(|server| (server.name.clone(), server.version.clone())),
        };
        let link = Link {
            peer: service.peer().clone(),
            routes,
            violation,
            service: Mutex::new(Some(service)),
            process: AsyncMutex::new(process),
        };
        Ok((link, identity))
    }

    /// Every tool the server `name` lists, following `nextCursor` to the last page, as the JSON
    /// of MCP's `Tool` objects: within `within`, [`MOST_TOOL_PAGES`] pages and [`MOST_TOOLS`]
    /// tools, and without a cursor given twice. A server past any of them is refused
    /// (`RL8603`) rather than followed for ever.
    async fn list_tools(&self, name: &str, within: Duration) -> Result<Vec<serde_json::Value>, McpError> {
        // What the guard refused, when it ended the stream, says more than the closed transport.
        let refused = |why: String| McpError::tools_list(name, self.violation.lock().clone().unwrap_or(why));
        let listing = async {
            let (mut tools, mut cursor, mut cursors) = (Vec::new(), None, BTreeSet::new());
            for page in 1..=MOST_TOOL_PAGES {
                let params = PaginatedRequestParams::default().with_cursor(cursor.take());
                let (listed, next_cursor) = self.tools_page(params).await.map_err(refused)?;
                tools.extend(listed);
                if tools.len() > MOST_TOOLS {
                    return Err(refused(format!("it lists more than {MOST_TOOLS} tools")));
                }
                match next_cursor {
                    None => return Ok(tools),
                    Some(next) if !cursors.insert(next.clone()) => {
                        return Err(refused(format!("its page {page} repeats the cursor of an earlier one")));
                    }
                    Some(next) => cursor = Some(next),
                }
            }
            Err(refused(format!("it lists more than {MOST_TOOL_PAGES} pages of tools")))
        };
        let late = || refused(format!("the list was not complete within {} ms", within.as_millis()));
        tokio::time::timeout(within, listing).await.unwrap_or_else(|_| Err(late()))
    }

    /// One page of `tools/list`: its tools as the server sent them, and its `nextCursor`. Read
    /// as plain JSON where the page is not a valid `ListToolsResult` as a whole, so one tool
    /// the server describes wrongly (an annotation of the wrong type, say) is left out by the
    /// import, naming it, instead of refusing every tool of the server.
    async fn tools_page(
        &self,
        params: PaginatedRequestParams,
    ) -> Result<(Vec<serde_json::Value>, Option<String>), String> {
        let request = ClientRequest::ListToolsRequest(ListToolsRequest {
            method: Default::default(),
            params: Some(params),
            extensions: Default::default(),
        });
        match self.peer.send_request(request).await.map_err(|e| service_failure(&e))? {
            ServerResult::ListToolsResult(listed) => {
                let tools = listed.tools.iter().map(serde_json::to_value).collect::<Result<_, _>>();
                Ok((tools.map_err(|e| e.to_string())?, listed.next_cursor))
            }
            ServerResult::CustomResult(CustomResult(page)) => {
                let Some(tools) = page.get("tools").and_then(serde_json::Value::as_array) else {
                    return Err("its answer to `tools/list` has no list of tools".to_owned());
                };
                let next_cursor = match page.get("nextCursor") {
                    None | Some(serde_json::Value::Null) => None,
                    Some(serde_json::Value::String(cursor)) => Some(cursor.clone()),
                    Some(_) => return Err("its `nextCursor` is not a string".to_owned()),
                };
                // Each tool as the typed path would give it (MCP's `Tool`, fields it does not
                // know left out), and as sent only where it is no `Tool`: the import says why.
                let tools = tools
                    .iter()
                    .map(|tool| match serde_json::from_value::<Tool>(tool.clone()) {
                        Ok(typed) => serde_json::to_value(typed).unwrap_or_else(|_| tool.clone()),
                        Err(_) => tool.clone(),
                    })
                    .collect();
                Ok((tools, next_cursor))
            }
            _ => Err("it answered `tools/list` with something else than a list of tools".to_owned()),
        }
    }

    /// Why the server cannot be reached over this link any more: how its process ended
    /// (waiting a moment for it to, once its stream closed) and the last lines of its standard
    /// error, for stdio servers; `None` while it looks alive.
    pub(crate) async fn gone(&self) -> Option<String> {
        if let Some(why) = self.violation.lock().clone() {
            return Some(format!("{why}, which Runlet cannot read, and its stream was closed"));
        }
        let closed = self.peer.is_transport_closed();
        let mut process = self.process.lock().await;
        let Some(process) = process.as_mut() else {
            return closed.then(|| "its connection closed".to_owned());
        };
        let wait = if closed { Duration::from_millis(500) } else { Duration::ZERO };
        let Some(status) = process.ended(wait).await else {
            return closed.then(|| "its standard output closed".to_owned());
        };
        let tail = process.stderr_tail();
        Some(if tail.is_empty() {
            format!("its process exited ({status})")
        } else {
            format!("its process exited ({status}); its last standard error:\n{tail}")
        })
    }

    /// Ends the link: the transport closes (for stdio, the server's standard input), then
    /// the process gets `grace` to exit before `SIGTERM` and, after as long again, `SIGKILL`.
    async fn shutdown(&self, grace: Duration) -> Option<Stopped> {
        let service = self.service.lock().take();
        if let Some(service) = service {
            let _ = service.cancel().await;
        }
        let process = self.process.lock().await.take();
        match process {
            Some(process) => Some(process.shutdown(grace).await),
            None => None,
        }
    }
}

async fn handshake<F>(
    name: &str,
    startup: Duration,
    start: F,
) -> Result<RunningService<RoleClient, Handler>, McpError>
where
    F: Future<Output = Result<RunningService<RoleClient, Handler>, ClientInitializeError>>,
{
    match tokio::time::timeout(startup, start).await {
        Ok(Ok(service)) => Ok(service),
        Ok(Err(error)) => {
            let why = match &error {
                // The transport's own words, without the names of its Rust types.
                ClientInitializeError::TransportError { error, context } => {
                    format!("{} ({context})", error.error)
                }
                other => other.to_string(),
            };
            Err(McpError::start(
                name,
                format!("the handshake failed: {}", clipped(without_url_secrets(&why))),
            ))
        }
        Err(_) => Err(McpError::start(name, format!("no handshake within {} ms", startup.as_millis()))),
    }
}

fn with_process_facts(mut error: McpError, exited: Option<String>, tail: &str) -> McpError {
    if let Some(status) = exited {
        error.message.push_str(&format!("; its process exited ({status})"));
    }
    if !tail.is_empty() {
        error.message.push_str(&format!("; its last standard error:\n{tail}"));
    }
    error
}
