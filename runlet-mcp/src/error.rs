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
        ServiceError::TransportSend(sending) => without_url_secrets(&sending.error.to_string()),
        other => without_url_secrets(&other.to_string()),
    })
}

/// `text` cut to [`MOST_QUOTED_CHARS`] characters: what a server sent, quoted in an error.
pub(crate) fn clipped(text: String) -> String {
    match text.char_indices().nth(MOST_QUOTED_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// `text` with the query and the user part of each `http://` or `https://` URL in it left out:
/// a server's URL may carry a token there, and a transport's error quotes the URL it failed on.
pub(crate) fn without_url_secrets(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = [rest.find("http://"), rest.find("https://")].into_iter().flatten().min() {
        out.push_str(&rest[..at]);
        let url = &rest[at..];
        let end = url
            .find(|c: char| c.is_whitespace() || matches!(c, ')' | '"' | '\'' | '>' | ','))
            .unwrap_or(url.len());
        let (url, after) = url.split_at(end);
        let scheme_end = url.find("://").map_or(0, |i| i + 3);
        let (scheme, rest_of_url) = url.split_at(scheme_end);
        let authority_end = rest_of_url.find(['/', '?', '#']).unwrap_or(rest_of_url.len());
        let (authority, path) = rest_of_url.split_at(authority_end);
        let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
        out.push_str(scheme);
        out.push_str(host);
        match path.split_once('?') {
            Some((path, _)) => {
                out.push_str(path);
                out.push_str("?…");
            }
            None => out.push_str(path),
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::without_url_secrets;

    #[test]
    fn urls_in_messages_lose_their_queries_and_users() {
        assert_eq!(
            without_url_secrets(
                "error sending request for url (http://user:pw@127.0.0.1:1/mcp?token=SECRET)"
            ),
            "error sending request for url (http://127.0.0.1:1/mcp?…)"
        );
        assert_eq!(
            without_url_secrets("https://a.example/x and http://b/y?k=v#f, done"),
            "https://a.example/x and http://b/y?…, done"
        );
        assert_eq!(without_url_secrets("no url here"), "no url here");
    }
}
