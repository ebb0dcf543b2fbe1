//! The live graph page of Runlet runs (spec §6.3, INTERFACES.md §4.4): a local HTTP server that
//! lists a journal's runs and draws one run's graph as its events arrive.
//!
//! The graph is the core's observe model: the server sends redacted [`GraphSnapshot`]s and
//! [`GraphEvent`]s under the [`Catalog`]'s [`ViewPolicy`], so the page never receives what the
//! policy hides, and the page only draws what it is sent. Routes:
//!
//! - `GET /` and `GET /runs`: the runs page; `GET /runs/{id}`: a run's page.
//! - `GET /api/runs`: the runs (id, status, program digest, start, last event) as JSON.
//! - `GET /api/runs/{id}`: the run's snapshot, its source text and its failure views.
//! - `GET /api/runs/{id}/events?after=SEQ` (or `Last-Event-ID`): server-sent events, each
//!   journal record once and in order after `SEQ` (`event: record`, `id: SEQ`), with `graph`
//!   messages carrying the redrawn snapshot, and `end` once the run's last record was sent.
//!
//! [`Background`] serves a catalog on a thread of its own, stopped when dropped: what the CLI,
//! the C library and the Go binding use.
//!
//! A Rust host serves its own runs the same way: a [`Catalog`] over its journal, each run added
//! with its observer and source, and a [`Server`] bound to an address (an admin port):
//!
//! ```no_run
//! # async fn example(journal: std::sync::Arc<dyn runlet::journal::Journal>,
//! #     run: &runlet::runtime::RunHandle, source: &str) -> std::io::Result<()> {
//! use std::sync::Arc;
//! use runlet::observe::ViewPolicy;
//!
//! let catalog = Arc::new(runlet_web::Catalog::new(Some(journal), ViewPolicy::default()));
//! catalog.add_live(run.observer(), source);
//! let server = runlet_web::bind("127.0.0.1:8081").await?;
//! println!("{}/runs/{}", server.url(), run.run_id());
//! tokio::spawn(server.serve(catalog));
//! # Ok(()) }
//! ```
//!
//! [`GraphSnapshot`]: runlet::observe::GraphSnapshot
//! [`GraphEvent`]: runlet::observe::GraphEvent
//! [`ViewPolicy`]: runlet::observe::ViewPolicy

mod api;
mod assets;
mod background;
mod catalog;
mod failure;
mod host;
mod journal_run;
mod serve;
mod stream;

pub use background::Background;
pub use catalog::{Catalog, FINISHED_LIVE_KEPT, OPENED_KEPT, WebError};
pub use serve::{DEFAULT_ADDR, HEAD_READ_TIMEOUT, Server, bind, router};
