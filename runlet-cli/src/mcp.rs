//! The MCP servers of a command (INTERFACES.md §4.2): `--mcp NAME=COMMAND…` / `--mcp NAME=URL`,
//! `--mcp-config FILE`, which servers' annotations are trusted and the class of other tools;
//! attaching them, the registry of their tools with `--registry` laid over it, and the executor
//! that answers calls — with `--tools` fixtures winning for the tools they script
//! ([`runlet_mcp::Routed`]).

use std::path::PathBuf;
use std::time::Duration;

use runlet::diag::codes;
use runlet::schema::ExecutionClass;
use runlet_mcp::{ClassPolicy, McpClient, McpOptions, ServerSpec};

use crate::failure::Failure;
use crate::files::{FileKind, read_text};

/// The class of MCP tools that neither the registry file nor trusted annotations classify.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum DefaultClass {
    #[default]
    Unsafe,
    AtMostOnce,
}

#[derive(Debug, Clone, Default, clap::Args)]
pub struct McpArgs {
    /// An MCP server: NAME=COMMAND [ARGS…] (stdio, split like shell words) or NAME=URL
    /// (Streamable HTTP). Its tools are `NAME.<tool>`. Repeatable.
    #[arg(long = "mcp", value_name = "NAME=COMMAND|URL")]
    mcp: Vec<String>,
    /// A `{"mcpServers": {NAME: {command, args, env} | {url, headers}}}` file, as other MCP
    /// clients use.
    #[arg(long = "mcp-config", value_name = "FILE")]
    mcp_config: Option<PathBuf>,
    /// Believe this server's tool annotations: `readOnlyHint` makes a tool pure,
    /// `idempotentHint` idempotent. Repeatable.
    #[arg(long = "mcp-trust", value_name = "NAME")]
    trust: Vec<String>,
    /// The execution class of MCP tools that the registry file does not classify and no
    /// trusted annotation does.
    #[arg(long = "mcp-default-class", value_enum, default_value_t)]
    default_class: DefaultClass,
    /// Refuse the servers when one of their tools does not import (instead of leaving it out
    /// with a warning).
    #[arg(long = "mcp-strict")]
    strict: bool,
    /// How long a server has to start and complete the handshake, and again to list its tools
    /// (RL8602, RL8603 past it), in milliseconds: a server `npx` must first download may need
    /// more.
    #[arg(long = "mcp-startup-timeout", value_name = "MS", value_parser = clap::value_parser!(u64).range(1..),
          default_value_t = McpOptions::STARTUP_TIMEOUT.as_millis() as u64)]
    startup_timeout_ms: u64,
    /// Fail a call (RL6102) whose server neither answers nor reports progress for this many
    /// milliseconds (default: five minutes), and tell the server to cancel it; `off` waits for
    /// ever.
    #[arg(long = "mcp-silence-timeout", value_name = "MS|off", value_parser = parse_silence)]
    silence_timeout: Option<Silence>,
}

/// `--mcp-silence-timeout`: a positive number of milliseconds, or `off` (`None`).
#[derive(Debug, Clone, Copy)]
struct Silence(Option<Duration>);

fn parse_silence(text: &str) -> Result<Silence, String> {
    match (text, text.parse::<u64>()) {
        ("off", _) => Ok(Silence(None)),
        (_, Ok(ms)) if ms > 0 => Ok(Silence(Some(Duration::from_millis(ms)))),
        _ => Err("a positive number of milliseconds, or `off` to wait for ever".to_owned()),
    }
}

impl McpArgs {
    pub fn is_empty(&self) -> bool {
        self.mcp.is_empty() && self.mcp_config.is_none()
    }

    /// Starts the servers named (none: `None`) and imports their tools. Their progress
    /// notifications are journaled as `CallHeartbeat` events (`--events`).
    pub fn attach(&self) -> Result<Option<McpClient>, Failure> {
        if self.is_empty() {
            return Ok(None);
        }
        ignore_sigpipe();
        let mut specs = Vec::new();
        if let Some(path) = &self.mcp_config {
            let file = read_text(path, FileKind::McpConfig)?;
            let configured = ServerSpec::parse_config(&file.text).map_err(|error| {
                Failure::new(error.code, format!("`{}`: {}", file.display_name(), error.message))
            })?;
            specs.extend(configured);
        }
        for flag in &self.mcp {
            specs
                .push(ServerSpec::parse_flag(flag).map_err(|error| Failure::new(error.code, error.message))?);
        }
        let default = match self.default_class {
            DefaultClass::Unsafe => ExecutionClass::Unsafe,
            DefaultClass::AtMostOnce => ExecutionClass::AtMostOnce,
        };
        let defaults = McpOptions::default();
        let options = McpOptions {
            classes: ClassPolicy { trusted: self.trust.clone(), default },
            strict: self.strict,
            startup_timeout: Duration::from_millis(self.startup_timeout_ms),
            silence_timeout: self.silence_timeout.map_or(defaults.silence_timeout, |set| set.0),
            ..defaults
        };
        let client =
            McpClient::connect(&specs, &options).map_err(|error| Failure::new(error.code, error.message))?;
        Ok(Some(client))
    }
}

/// A stdio server that exits closes the pipe Runlet writes its requests to; the write must fail
/// (and the call with it), not end this process with `SIGPIPE`, whose default `main` restores.
fn ignore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to "ignore" has no other effect on the process.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

/// A command that takes tools from fixtures or servers but was given neither.
pub fn no_tools(command: &str) -> Failure {
    Failure::new(
        codes::INVALID_ARGUMENT,
        format!("`runlet {command}` needs `--tools FILE`, `--mcp …` or `--mcp-config FILE`"),
    )
}
