//! MCP servers a C host attaches to its runtime (`runlet_runtime_options.mcp_servers_json`, the
//! `{"mcpServers": …}` JSON other MCP clients read): started and imported when the runtime is
//! built, their tools laid under the host's registry and answered by runlet-mcp, every other
//! tool by the host's executor; shut down after the runtime's runs. Behind the `mcp` feature;
//! without it the option is refused.

// Without the `mcp` feature the flags and the request's other fields are never read.
#![cfg_attr(not(feature = "mcp"), allow(dead_code))]

use std::sync::Arc;

use runlet::engine::ToolExecutor;
use runlet::registry::Registry;

use crate::error::Error;
#[cfg(not(feature = "mcp"))]
use crate::error::RUNLET_ERR_UNSUPPORTED;

/// `mcp_flags`: a tool that does not import fails the runtime's creation instead of being left
/// out.
pub const RUNLET_MCP_STRICT: u32 = 1;
/// `mcp_flags`: tools that neither the registry nor a trusted server's annotations classify
/// are `at_most_once` instead of `unsafe`.
pub const RUNLET_MCP_AT_MOST_ONCE: u32 = 2;

/// `mcp_silence_timeout_ms`: a call of an MCP tool waits for its answer for ever, however long
/// its server is silent.
pub const RUNLET_MCP_SILENCE_FOREVER: u64 = u64::MAX;

/// What the host asked for: the configuration's text, the trusted servers' names (a JSON array),
/// the flags, and the silence and start-up timeouts (0 for their defaults).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct McpRequest<'a> {
    pub servers_json: &'a str,
    pub trusted_json: &'a str,
    pub flags: u32,
    pub silence_timeout_ms: u64,
    pub startup_timeout_ms: u64,
}

#[cfg(feature = "mcp")]
pub(crate) use attached::Servers;

#[cfg(feature = "mcp")]
mod attached {
    use std::collections::BTreeSet;

    use runlet::registry::RegistryOptions;
    use runlet::schema::ExecutionClass;
    use runlet_mcp::{ClassPolicy, McpClient, McpError, McpOptions, Routed, ServerSpec};

    use super::*;
    use crate::error::{
        RUNLET_ERR_INVALID_ARGUMENT, RUNLET_ERR_INVALID_JSON, RUNLET_ERR_MCP, RUNLET_ERR_REGISTRY,
    };

    /// The attached servers of one runtime.
    #[derive(Debug)]
    pub(crate) struct Servers {
        client: McpClient,
    }

    fn mcp_error(error: McpError) -> Error {
        Error::new(RUNLET_ERR_MCP, error.message.clone())
            .with_details_json(serde_json::json!({ "code": error.code.to_string() }).to_string())
    }

    impl Servers {
        /// Starts the servers of `request`, or `None` when it names none.
        pub(crate) fn attach(request: McpRequest<'_>) -> Result<Option<Servers>, Error> {
            if request.servers_json.is_empty() {
                return Ok(None);
            }
            let known = RUNLET_MCP_STRICT | RUNLET_MCP_AT_MOST_ONCE;
            if request.flags & !known != 0 {
                return Err(Error::new(
                    RUNLET_ERR_INVALID_ARGUMENT,
                    format!("`mcp_flags` has unknown bits {:#x}", request.flags & !known),
                ));
            }
            let trusted: Vec<String> = match request.trusted_json {
                "" => Vec::new(),
                text => serde_json::from_str(text).map_err(|e| {
                    Error::new(
                        RUNLET_ERR_INVALID_JSON,
                        format!("`mcp_trusted_json` is not a JSON array of server names: {e}"),
                    )
                })?,
            };
            let specs = ServerSpec::parse_config(request.servers_json).map_err(mcp_error)?;
            let default = if request.flags & RUNLET_MCP_AT_MOST_ONCE != 0 {
                ExecutionClass::AtMostOnce
            } else {
                ExecutionClass::Unsafe
            };
            let defaults = McpOptions::default();
            let options = McpOptions {
                classes: ClassPolicy { trusted, default },
                strict: request.flags & RUNLET_MCP_STRICT != 0,
                silence_timeout: match request.silence_timeout_ms {
                    0 => defaults.silence_timeout,
                    RUNLET_MCP_SILENCE_FOREVER => None,
                    ms => Some(std::time::Duration::from_millis(ms)),
                },
                startup_timeout: match request.startup_timeout_ms {
                    0 => defaults.startup_timeout,
                    ms => std::time::Duration::from_millis(ms),
                },
                ..defaults
            };
            McpClient::connect(&specs, &options).map(|client| Some(Servers { client })).map_err(mcp_error)
        }

        /// The servers' tools with the host's registry file (`host`, empty for none) laid over.
        pub(crate) fn registry(&self, host: &str) -> Result<Registry, Error> {
            let host: Option<serde_json::Value> = match host {
                "" => None,
                text => Some(serde_json::from_str(text).map_err(|e| {
                    Error::new(RUNLET_ERR_INVALID_JSON, format!("`registry_json` is not JSON: {e}"))
                })?),
            };
            let document = self.client.registry_document(host.as_ref());
            Registry::from_json(&document, &RegistryOptions::default()).map(|loaded| loaded.registry).map_err(
                |error| {
                    let text = document.to_string();
                    let diagnostics = error.diagnostics(&text);
                    let first = diagnostics.first().map_or_else(String::new, |d| format!(": {}", d.message));
                    Error::new(
                        RUNLET_ERR_REGISTRY,
                        format!("the registry of the MCP servers' tools has errors{first}"),
                    )
                    .with_details_json(runlet::diag::render_json(&text, &diagnostics))
                },
            )
        }

        /// The executor of the servers' tools, routing every other tool to `host`.
        pub(crate) fn executor(&self, host: Option<Arc<dyn ToolExecutor>>) -> Arc<dyn ToolExecutor> {
            let servers = self.client.executor();
            match host {
                None => Arc::new(servers),
                Some(host) => {
                    let names: BTreeSet<String> = servers.tool_names().map(str::to_owned).collect();
                    Arc::new(Routed::new(Arc::new(servers), names, host))
                }
            }
        }

        /// The names of the servers' tools.
        pub(crate) fn tool_names(&self) -> BTreeSet<String> {
            self.client.executor().tool_names().map(str::to_owned).collect()
        }

        /// Ends every session (bounded: see `McpClient::shutdown`).
        pub(crate) fn shutdown(self) {
            self.client.shutdown();
        }
    }
}

/// Without the `mcp` feature no servers can exist.
#[cfg(not(feature = "mcp"))]
#[derive(Debug)]
pub(crate) enum Servers {}

#[cfg(not(feature = "mcp"))]
impl Servers {
    pub(crate) fn attach(request: McpRequest<'_>) -> Result<Option<Servers>, Error> {
        if request.servers_json.is_empty() {
            return Ok(None);
        }
        Err(Error::new(
            RUNLET_ERR_UNSUPPORTED,
            "`mcp_servers_json` needs a librunlet built with the `mcp` feature",
        ))
    }

    pub(crate) fn registry(&self, _host: &str) -> Result<Registry, Error> {
        match *self {}
    }

    pub(crate) fn executor(&self, _host: Option<Arc<dyn ToolExecutor>>) -> Arc<dyn ToolExecutor> {
        match *self {}
    }

    pub(crate) fn tool_names(&self) -> std::collections::BTreeSet<String> {
        match *self {}
    }

    pub(crate) fn shutdown(self) {
        match self {}
    }
}

/// A library built without the feature refuses servers, and every build takes none.
#[cfg(all(test, not(feature = "mcp")))]
mod tests {
    use super::*;

    #[test]
    fn without_the_feature_mcp_servers_are_unsupported() {
        let request = McpRequest { servers_json: r#"{"mcpServers": {}}"#, ..McpRequest::default() };
        let error = Servers::attach(request).expect_err("refused");
        assert_eq!(error.code(), RUNLET_ERR_UNSUPPORTED);
        let none = McpRequest { servers_json: "", ..request };
        assert!(Servers::attach(none).expect("no servers").is_none());
    }
}
