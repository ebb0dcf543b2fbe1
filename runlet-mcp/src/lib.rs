//! Runlet as an MCP client (INTERFACES.md §4.2): attach MCP servers over stdio or Streamable
//! HTTP, import their tools as registry entries under each server's namespace, and call them
//! through a [`runlet::engine::ToolExecutor`].
//!
//! Execution classes: a class the host's registry file gives a tool wins. Otherwise a server the
//! host marks trusted ([`ClassPolicy::trusted`]) has its annotations believed — `readOnlyHint`
//! makes a tool `pure`, `idempotentHint` `idempotent` — and every other tool gets the host's
//! default, `unsafe` unless the host chooses `at_most_once` ([`ClassPolicy::default`]).
//!
//! Failures of a call (see the `call` module): `isError` is `RL6113` with the server's text, not
//! retryable; a JSON-RPC error `RL6112`, not retryable; a server that is gone `RL6111`,
//! retryable and uncertain, so a boundary sends it again only for `pure`, `idempotent` and
//! `recoverable` tools.

mod call;
mod client;
mod config;
mod error;
mod executor;
mod guard;
mod handler;
mod route;
mod session;
mod stdio;

pub use call::{META_ATTEMPT, META_DISPATCH, META_OPERATION};
pub use client::{McpClient, McpOptions};
pub use config::{ClassPolicy, ServerSpec, TransportSpec};
pub use error::McpError;
pub use executor::McpExecutor;
pub use route::Routed;
pub use session::{MOST_TOOL_PAGES, MOST_TOOLS, ServerIdentity};
pub use stdio::Stopped;
