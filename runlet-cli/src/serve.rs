//! The live graph page from the command line (INTERFACES.md §4.4): `runlet serve --journal J
//! [--addr ADDR]` serves a journal's runs until interrupted, and [`LiveServer`] serves the run
//! `runlet run … --serve[=ADDR]` drives, on a thread of its own so the run never waits for it.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::mpsc;

use runlet::diag::codes;
use runlet::journal::{Journal, RunId};
use runlet::observe::{RunObserver, ViewPolicy};
use runlet_web::{Background, Catalog, DEFAULT_ADDR};

use crate::failure::{Failure, Shape};
use crate::journal_spec::{DurabilityArg, JournalSpec};
use crate::report::Format;
use crate::signals::SignalWatch;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The journal whose runs are shown: `sqlite:PATH` (or a PostgreSQL URL).
    #[arg(long)]
    journal: String,
    /// What an acknowledged append of the journal survives.
    #[arg(long, value_enum, default_value_t)]
    durability: DurabilityArg,
    /// The address to listen on; loopback unless another host is named.
    #[arg(long, value_name = "HOST:PORT", default_value = DEFAULT_ADDR)]
    addr: String,
}

pub fn run(args: &Args) -> ExitCode {
    execute(args).unwrap_or_else(|failure| failure.report(Format::Text, Shape::Diagnostics))
}

fn execute(args: &Args) -> Result<ExitCode, Failure> {
    let journal = JournalSpec::durable(&args.journal)?.open(args.durability)?.journal;
    let server = LiveServer::start(&args.addr, journal)?;
    let (stop, _watch) = stop_signal();
    errln!("serving {}/runs", server.server.url());
    let _ = stop.recv();
    Ok(ExitCode::SUCCESS)
}

/// Receives once on the first SIGINT or SIGTERM from now on, while the watch is kept.
fn stop_signal() -> (mpsc::Receiver<()>, SignalWatch) {
    let (signalled, received) = mpsc::channel();
    let watch = crate::signals::on_first_signal("stopping the page server", move || {
        let _ = signalled.send(());
    });
    (received, watch)
}

/// A page server running on its own thread until the process ends.
pub struct LiveServer {
    server: Background,
}

impl LiveServer {
    /// Binds `addr` and serves the runs of `journal` (and the live runs added later).
    pub fn start(addr: &str, journal: Arc<dyn Journal>) -> Result<LiveServer, Failure> {
        let catalog = Arc::new(Catalog::new(Some(journal), ViewPolicy::default()));
        let server = Background::start(addr, catalog)
            .map_err(|error| Failure::new(codes::INVALID_ARGUMENT, error.to_string()))?;
        Ok(LiveServer { server })
    }

    /// Shows the run `observer` follows, whose program is `source`, and prints its page's address.
    pub fn show(&self, run: &RunId, observer: RunObserver, source: &str) {
        self.server.catalog().add_live(observer, source);
        errln!("serving {}/runs/{run}", self.server.url());
    }

    /// Keeps serving until SIGINT or SIGTERM, then exits the process with `status`.
    pub fn wait_for_signal(self, status: u8) -> ExitCode {
        let (stop, _watch) = stop_signal();
        let _ = stop.recv();
        ExitCode::from(status)
    }
}
