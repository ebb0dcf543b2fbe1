//! [`Routed`]: one executor for a named set of tools, another for every other tool — how MCP
//! servers share a run with other tools (the CLI's scripted fixtures, a C or Go host's own
//! executor).

use std::collections::BTreeSet;
use std::sync::Arc;

use async_trait::async_trait;
use runlet::engine::{
    RecoveryOutcome, RecoveryRequest, ToolCall, ToolCapabilities, ToolError, ToolExecutor, ToolOutput,
};

/// Answers the calls of `chosen_tools` with `chosen`, and all others with `others`.
pub struct Routed {
    chosen: Arc<dyn ToolExecutor>,
    chosen_tools: BTreeSet<String>,
    others: Arc<dyn ToolExecutor>,
}

impl std::fmt::Debug for Routed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Routed").field("chosen_tools", &self.chosen_tools).finish_non_exhaustive()
    }
}

impl Routed {
    pub fn new(
        chosen: Arc<dyn ToolExecutor>,
        chosen_tools: BTreeSet<String>,
        others: Arc<dyn ToolExecutor>,
    ) -> Routed {
        Routed { chosen, chosen_tools, others }
    }

    fn route(&self, tool: &str) -> &Arc<dyn ToolExecutor> {
        if self.chosen_tools.contains(tool) { &self.chosen } else { &self.others }
    }
}

#[async_trait]
impl ToolExecutor for Routed {
    fn capabilities(&self, tool: &str) -> ToolCapabilities {
        self.route(tool).capabilities(tool)
    }

    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        self.route(&call.tool).dispatch(call).await
    }

    async fn recover(&self, request: RecoveryRequest) -> Result<RecoveryOutcome, ToolError> {
        self.route(&request.call.tool).recover(request).await
    }
}
