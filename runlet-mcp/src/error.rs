//! The errors of attaching MCP servers, each with its stable `RL` code: a malformed server
//! specification (`RL8601`), a server that does not start or answer (`RL8602`), a failed
//! `tools/list` (`RL8603`), and registry findings about the imported tools.

use rmcp::ServiceError;
use runlet::diag::{Code, codes};

/// The most characters of a transport's own words an error quotes: they can repeat what the
/// server sent, up to the whole of a 16 MiB answer.
const MOST_QUOTED_CHARS: usize = 400;

/// A host-side failure of the MCP client, before any program runs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct McpError {
    pub code: Code,
    pub message: String,
}

impl McpError {
    pub fn new(code: Code, message: impl Into<String>) -> McpError {
        McpError { code, message: message.into() }
    }

    pub(crate) fn spec(message: String) -> McpError {
        McpError::new(codes::MCP_SERVER_SPEC, message)
    }

    pub(crate) fn start(server: &str, why: impl std::fmt::Display) -> McpError {
        McpError::new(codes::MCP_SERVER_START, format!("the MCP server `{server}` did not start: {why}"))
    }

    pub(crate) fn tools_list(server: &str, why: impl std::fmt::Display) -> McpError {
        McpError::new(
            codes::MCP_TOOLS_LIST,
            format!("`tools/list` of the MCP server `{server}` failed: {why}"),
        )
    }
}

/// Why a request to a server got no answer, in the transport's words without the names of its
/// Rust types, and [`clipped`].
pub(crate) fn service_failure(error: &ServiceError) -> String {
    clipped(match error {
        ServiceError::TransportSend(sending) => sending.error.to_string(),
        other => other.to_string(),
    })
}

/// `text` cut to [`MOST_QUOTED_CHARS`] characters: what a server sent, quoted in an error.
pub(crate) fn clipped(text: String) -> String {
    match text.char_indices().nth(MOST_QUOTED_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}
