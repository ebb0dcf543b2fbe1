//! Which MCP servers to attach and how (INTERFACES.md §4.2): a `--mcp NAME=COMMAND…` or
//! `--mcp NAME=URL` value, the `{"mcpServers": …}` file other MCP clients use, and the host's
//! policy for execution classes.

use std::collections::BTreeMap;

use runlet::schema::{ExecutionClass, is_identifier, is_reserved};
use serde_json::Value;

use crate::error::McpError;

/// One server to attach, under the registry namespace `name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    pub name: String,
    pub transport: TransportSpec,
}

/// How a server is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransportSpec {
    /// A process started by the client, speaking JSON-RPC on its standard input and output.
    Stdio { command: String, args: Vec<String>, env: BTreeMap<String, String> },
    /// A Streamable HTTP endpoint.
    Http { url: String, headers: BTreeMap<String, String> },
}

/// What a server's tools get as their execution class when the host's registry does not say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassPolicy {
    /// Servers whose annotations are believed: `readOnlyHint: true` makes a tool `pure`,
    /// `idempotentHint: true` makes it `idempotent`. Annotations of other servers are ignored.
    pub trusted: Vec<String>,
    /// The class of every other tool: [`ExecutionClass::Unsafe`] (the default) or
    /// [`ExecutionClass::AtMostOnce`].
    pub default: ExecutionClass,
}

impl Default for ClassPolicy {
    fn default() -> ClassPolicy {
        ClassPolicy { trusted: Vec::new(), default: ExecutionClass::Unsafe }
    }
}

impl ServerSpec {
    /// Reads a `--mcp` value: `NAME=URL` (`http://` or `https://`) or `NAME=COMMAND [ARGS…]`,
    /// the command split as a POSIX shell splits words (quotes honoured, nothing expanded).
    pub fn parse_flag(flag: &str) -> Result<ServerSpec, McpError> {
        let bad = |why: String| McpError::spec(format!("`--mcp {flag}`: {why}"));
        let Some((name, target)) = flag.split_once('=') else {
            return Err(bad("write NAME=COMMAND or NAME=URL".to_owned()));
        };
        check_name(name).map_err(bad)?;
        let target = target.trim();
        if is_url(target) {
            let transport = TransportSpec::Http { url: target.to_owned(), headers: BTreeMap::new() };
            return Ok(ServerSpec { name: name.to_owned(), transport });
        }
        let words =
            shlex::split(target).ok_or_else(|| bad("the command has an unclosed quote".to_owned()))?;
        let Some((command, args)) = words.split_first() else {
            return Err(bad("the command is empty".to_owned()));
        };
        let transport =
            TransportSpec::Stdio { command: command.clone(), args: args.to_vec(), env: BTreeMap::new() };
        Ok(ServerSpec { name: name.to_owned(), transport })
    }

    /// Reads the servers of an `{"mcpServers": {NAME: {command, args?, env?} | {url, headers?}}}`
    /// document, in name order.
    pub fn parse_config(text: &str) -> Result<Vec<ServerSpec>, McpError> {
        let json: Value = serde_json::from_str(text)
            .map_err(|error| McpError::spec(format!("the MCP configuration is not JSON: {error}")))?;
        let Some(servers) = json.get("mcpServers").and_then(Value::as_object) else {
            return Err(McpError::spec("the MCP configuration needs an object `mcpServers`".to_owned()));
        };
        let mut specs: Vec<ServerSpec> = servers
            .iter()
            .map(|(name, entry)| {
                let bad = |why: String| McpError::spec(format!("`mcpServers.{name}`: {why}"));
                check_name(name).map_err(bad)?;
                config_transport(entry)
                    .map(|transport| ServerSpec { name: name.clone(), transport })
                    .map_err(bad)
            })
            .collect::<Result<_, _>>()?;
        specs.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(specs)
    }

    /// The server as one line of text, for messages and the registry's record of it.
    pub fn describe(&self) -> String {
        match &self.transport {
            TransportSpec::Stdio { command, args, .. } => {
                shlex::try_join(std::iter::once(command.as_str()).chain(args.iter().map(String::as_str)))
                    .unwrap_or_else(|_| command.clone())
            }
            TransportSpec::Http { url, .. } => url.clone(),
        }
    }
}

fn is_url(text: &str) -> bool {
    text.starts_with("http://") || text.starts_with("https://")
}

/// A server name is the namespace of its tools, so it is an identifier and not a reserved word.
fn check_name(name: &str) -> Result<(), String> {
    if is_identifier(name) && !is_reserved(name) {
        return Ok(());
    }
    Err(format!("the server name `{name}` is not an identifier a program can use as a namespace"))
}

fn config_transport(entry: &Value) -> Result<TransportSpec, String> {
    let Some(fields) = entry.as_object() else { return Err("a server is an object".to_owned()) };
    const KNOWN: [&str; 6] = ["command", "args", "env", "url", "headers", "type"];
    if let Some(unknown) = fields.keys().find(|key| !KNOWN.contains(&key.as_str())) {
        return Err(format!("a server has no field `{unknown}` (it has {})", KNOWN.join(", ")));
    }
    let strings = |key: &str| -> Result<BTreeMap<String, String>, String> {
        let Some(value) = fields.get(key) else { return Ok(BTreeMap::new()) };
        let object = value.as_object().ok_or_else(|| format!("`{key}` is an object of strings"))?;
        object
            .iter()
            .map(|(k, v)| {
                v.as_str().map(|v| (k.clone(), v.to_owned())).ok_or(format!("`{key}.{k}` is a string"))
            })
            .collect()
    };
    match (fields.get("command"), fields.get("url")) {
        (Some(command), None) => {
            let command =
                command.as_str().filter(|c| !c.is_empty()).ok_or("`command` is a non-empty string")?;
            let args = match fields.get("args") {
                None => Vec::new(),
                Some(Value::Array(args)) => args
                    .iter()
                    .map(|arg| arg.as_str().map(str::to_owned).ok_or("`args` is a list of strings"))
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err("`args` is a list of strings".to_owned()),
            };
            Ok(TransportSpec::Stdio { command: command.to_owned(), args, env: strings("env")? })
        }
        (None, Some(url)) => {
            let url = url.as_str().filter(|url| is_url(url)).ok_or("`url` is an http:// or https:// URL")?;
            Ok(TransportSpec::Http { url: url.to_owned(), headers: strings("headers")? })
        }
        _ => Err("a server has either `command` (stdio) or `url` (Streamable HTTP)".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_name_a_command_or_a_url() {
        let stdio = ServerSpec::parse_flag("fs=npx -y 'server filesystem' /tmp").expect("a command");
        assert_eq!(
            stdio.transport,
            TransportSpec::Stdio {
                command: "npx".into(),
                args: vec!["-y".into(), "server filesystem".into(), "/tmp".into()],
                env: BTreeMap::new()
            }
        );
        assert_eq!(stdio.describe(), "npx -y 'server filesystem' /tmp");
        let http = ServerSpec::parse_flag("api=http://127.0.0.1:8000/mcp").expect("a url");
        assert!(
            matches!(http.transport, TransportSpec::Http { ref url, .. } if url == "http://127.0.0.1:8000/mcp")
        );
        for bad in ["fs", "fs=", "for=ls", "a-b=ls", "fs=ls 'open"] {
            let error = ServerSpec::parse_flag(bad).expect_err(bad);
            assert_eq!(error.code, runlet::diag::codes::MCP_SERVER_SPEC, "{bad}");
        }
    }

    #[test]
    fn config_files_are_read_in_name_order() {
        let text = r#"{"mcpServers": {
            "memory": {"command": "node", "args": ["server.js"], "env": {"X": "1"}},
            "api": {"url": "https://example.invalid/mcp", "headers": {"Authorization": "Bearer t"}}
        }}"#;
        let specs = ServerSpec::parse_config(text).expect("valid");
        assert_eq!(specs.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["api", "memory"]);
        let TransportSpec::Stdio { env, .. } = &specs[1].transport else { panic!("stdio") };
        assert_eq!(env.get("X").map(String::as_str), Some("1"));
        for (bad, says) in [
            (r#"{"servers": {}}"#, "needs an object `mcpServers`"),
            (r#"{"mcpServers": {"a": {"command": "x", "url": "http://h"}}}"#, "either `command`"),
            (r#"{"mcpServers": {"a": {"command": "x", "args": [1]}}}"#, "list of strings"),
            (r#"{"mcpServers": {"a": {"url": "ftp://h"}}}"#, "http:// or https://"),
            (r#"{"mcpServers": {"a": {"command": "x", "cwd": "/"}}}"#, "no field `cwd`"),
        ] {
            let error = ServerSpec::parse_config(bad).expect_err(bad);
            assert!(error.message.contains(says), "{bad}: {}", error.message);
        }
    }
}
