//! `runlet tools [--registry R.json] [--mcp …]… [--mcp-config FILE] [--format text|json]`:
//! prints the registry a program is compiled against — with MCP servers, their tools under
//! their namespaces with the registry file laid over them, and the servers' protocol versions
//! and implementations (`mcp_servers`) — so the registry a model is prompted with can be saved,
//! checked and digested. JSON prints the registry file (INTERFACES.md §2); text one line per
//! tool with its class and description, then the digest. Exit 0, or 2 when the registry does
//! not load.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::failure::{Failure, Shape};
use crate::files::{FileKind, read_text};
use crate::mcp::McpArgs;
use crate::registry::{load_registry_with, registry_document};
use crate::report::Format;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The registry file; beside MCP servers it overrides what it names of their tools.
    #[arg(long)]
    registry: Option<PathBuf>,
    #[command(flatten)]
    mcp: McpArgs,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(args: &Args) -> ExitCode {
    execute(args).unwrap_or_else(|failure| failure.report(args.format, Shape::Diagnostics))
}

fn execute(args: &Args) -> Result<ExitCode, Failure> {
    let servers = args.mcp.attach()?;
    let file = match &servers {
        Some(servers) => registry_document(args.registry.as_deref(), servers)?,
        None => match &args.registry {
            Some(path) => read_text(path, FileKind::Registry)?,
            None => return Err(crate::mcp::no_tools("tools")),
        },
    };
    let registry = load_registry_with(args.registry.as_deref(), servers.as_ref())?;
    if let Some(servers) = servers {
        servers.shutdown();
    }
    match args.format {
        Format::Json => outln!("{}", file.text),
        Format::Text => {
            for (_, tool) in registry.tools() {
                // A server's words reach the terminal: its control characters are shown escaped,
                // so none of them can clear the screen or rewrite the line.
                let mut summary = String::new();
                for c in tool.description.lines().next().unwrap_or_default().chars() {
                    match c.is_control() {
                        true => summary.extend(c.escape_default()),
                        false => summary.push(c),
                    }
                }
                outln!("{}  [{}]  {summary}", tool.name, tool.execution.as_str());
            }
            outln!("digest {}", registry.digest());
        }
    }
    Ok(ExitCode::SUCCESS)
}
