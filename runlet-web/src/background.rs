//! A page server on a thread of its own, for hosts whose own threads must never wait for it
//! (`runlet run --serve`, `runlet serve`, the C library and the Go binding): bound on the
//! caller's thread before [`Background::start`] returns, so its address is known and a bad one
//! refused there, and stopped — every connection closed, the thread joined — when dropped.

use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::{Condvar, Mutex};
use tokio::sync::oneshot;

use crate::catalog::Catalog;
use crate::serve::{Server, cannot_listen};

/// A page server running on its own thread until dropped.
#[derive(Debug)]
pub struct Background {
    catalog: Arc<Catalog>,
    url: String,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Background {
    /// Binds `addr` (`HOST:PORT`; port 0 picks a free one) and serves `catalog` on a new thread.
    /// Fails, saying why, when the address cannot be bound or the thread or its reactor cannot
    /// start.
    pub fn start(addr: &str, catalog: Arc<Catalog>) -> Result<Background, std::io::Error> {
        let listener = std::net::TcpListener::bind(addr).map_err(|error| cannot_listen(addr, error))?;
        listener.set_nonblocking(true)?;
        let url = format!("http://{}", listener.local_addr()?);
        let (stop, stopped) = oneshot::channel::<()>();
        let served = Arc::clone(&catalog);
        // The reactor is built on the server's thread (building one touches the thread it is
        // built on); whether that worked comes back through `started`.
        let started = Arc::new(Started::default());
        let starting = Arc::clone(&started);
        let thread = std::thread::Builder::new().name("runlet-web".to_owned()).spawn(move || {
            let reactor = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
                Ok(reactor) => reactor,
                Err(error) => return starting.set(Err(error)),
            };
            starting.set(Ok(()));
            reactor.block_on(async move {
                let serving =
                    async { Server::new(tokio::net::TcpListener::from_std(listener)?)?.serve(served).await };
                tokio::select! {
                    served = serving => if let Err(error) = served {
                        tracing::warn!(%error, "runlet: the page server stopped");
                    },
                    _ = stopped => {}
                }
            });
            // Dropping the reactor here cancels every connection still open.
        })?;
        if let Err(error) = started.wait() {
            let _ = thread.join();
            return Err(error);
        }
        Ok(Background { catalog, url, stop: Some(stop), thread: Some(thread) })
    }

    /// `http://HOST:PORT`, with the port the system picked.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The runs it shows: add live runs here.
    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
    }
}

/// Whether the server's thread got its reactor: set once by the thread, waited for by the caller.
#[derive(Default)]
struct Started {
    result: Mutex<Option<std::io::Result<()>>>,
    set: Condvar,
}

impl Started {
    fn set(&self, result: std::io::Result<()>) {
        *self.result.lock() = Some(result);
        self.set.notify_all();
    }

    fn wait(&self) -> std::io::Result<()> {
        let mut result = self.result.lock();
        loop {
            if let Some(result) = result.take() {
                return result;
            }
            self.set.wait(&mut result);
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
