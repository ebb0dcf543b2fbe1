//! The [`ToolExecutor`] over attached MCP servers: a registry name maps to its server's session
//! and the tool's own name there; every dispatch is one `tools/call` (see `call`). Calls can be
//! cancelled (the server is told), and a cancelled call may still have taken effect.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use runlet::diag::codes;
use runlet::engine::{ToolCall, ToolCapabilities, ToolError, ToolExecutor, ToolOutput};

use crate::call::call_tool;
use crate::session::Session;

/// Answers calls of the tools of attached MCP servers. Cheap to clone; share it.
#[derive(Clone)]
pub struct McpExecutor {
    /// Registry name → (session, the server's name for the tool).
    tools: Arc<BTreeMap<String, (Arc<Session>, String)>>,
    runtime: tokio::runtime::Handle,
}

impl std::fmt::Debug for McpExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpExecutor").field("tools", &self.tools.keys().collect::<Vec<_>>()).finish()
    }
}

impl McpExecutor {
    pub(crate) fn new(
        tools: BTreeMap<String, (Arc<Session>, String)>,
        runtime: tokio::runtime::Handle,
    ) -> McpExecutor {
        McpExecutor { tools: Arc::new(tools), runtime }
    }

    /// The registry names of the tools this executor answers, in name order.
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.tools.keys().map(String::as_str)
    }
}

#[async_trait]
impl ToolExecutor for McpExecutor {
    fn capabilities(&self, _tool: &str) -> ToolCapabilities {
        ToolCapabilities { cancellation: true, completion_after_cancel: true, answers_inline: false }
    }

    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        let Some((session, original)) = self.tools.get(&*call.tool) else {
            return Err(ToolError::new(
                codes::MCP_PROTOCOL_ERROR.to_string(),
                format!("`{}` is not a tool of an attached MCP server", call.tool),
            ));
        };
        call_tool(session, original, &call, &self.runtime).await
    }
}
