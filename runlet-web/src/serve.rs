//! Binding and serving: the routes of the page over a [`Catalog`], on a listener bound to an
//! address (loopback unless the host says otherwise), with errors that say which address failed.
//! Each connection is HTTP/1.1 with a deadline for every request head ([`HEAD_READ_TIMEOUT`]),
//! so a client that opens connections and never finishes a request does not hold them.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::routing::get;
use axum::{Router, middleware};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;

use crate::catalog::Catalog;
use crate::host::{self, AllowedHosts};
use crate::{api, assets, stream};

/// The address served when none is given: loopback, a port the system picks.
pub const DEFAULT_ADDR: &str = "127.0.0.1:0";

/// How long a connection may take to send a request's head, and may stay idle between requests.
pub const HEAD_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// The routes of the page and its API over `catalog`, for a listener bound to `bound`: bound to
/// loopback, they answer only requests for a loopback host (`localhost`, `127.0.0.1`, `[::1]`),
/// so a web page cannot read them through a name of its own pointed at this machine (DNS
/// rebinding); any other request is a 403 `host_not_allowed`. A host that mounts them on its
/// own listener passes that listener's address.
pub fn router(catalog: Arc<Catalog>, bound: SocketAddr) -> Router {
    let allowed = AllowedHosts::for_bound(bound);
    Router::new()
        .route("/", get(assets::runs_page))
        .route("/runs", get(assets::runs_page))
        .route("/runs/{id}", get(assets::run_page))
        .route("/assets/page.css", get(assets::style))
        .route("/assets/runs.js", get(assets::runs_script))
        .route("/assets/run.js", get(assets::run_script))
        .route("/assets/dagre.min.js", get(assets::dagre))
        .route("/api/runs", get(api::runs))
        .route("/api/runs/{id}", get(api::run))
        .route("/api/runs/{id}/events", get(stream::events))
        .fallback(api::not_found)
        .method_not_allowed_fallback(api::method_not_allowed)
        .with_state(catalog)
        .layer(middleware::from_fn_with_state(allowed, host::check))
}

/// A bound listener, ready to serve.
#[derive(Debug)]
pub struct Server {
    listener: TcpListener,
    addr: SocketAddr,
}

/// Binds `addr` (`HOST:PORT`; port 0 picks a free one). Must be called inside a tokio runtime.
pub async fn bind(addr: &str) -> Result<Server, std::io::Error> {
    let listener = TcpListener::bind(addr).await.map_err(|error| cannot_listen(addr, error))?;
    Server::new(listener)
}

/// The error of a listener that could not be bound at `addr`, naming it.
pub(crate) fn cannot_listen(addr: &str, error: std::io::Error) -> std::io::Error {
    let why = match error.kind() {
        std::io::ErrorKind::AddrInUse => "the address is in use".to_owned(),
        _ => error.to_string(),
    };
    std::io::Error::new(error.kind(), format!("cannot listen on `{addr}`: {why}"))
}

impl Server {
    /// Serves on `listener`, already bound.
    pub(crate) fn new(listener: TcpListener) -> Result<Server, std::io::Error> {
        let addr = listener.local_addr()?;
        Ok(Server { listener, addr })
    }

    /// The address bound (with the port the system picked).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://HOST:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Serves [`router`] over `catalog` until the task is dropped. A connection whose next
    /// request head has not arrived within [`HEAD_READ_TIMEOUT`] (an idle one included) is
    /// closed.
    pub async fn serve(self, catalog: Arc<Catalog>) -> Result<(), std::io::Error> {
        let routes = router(catalog, self.addr);
        loop {
            let stream = match self.listener.accept().await {
                Ok((stream, _)) => stream,
                // Out of descriptors, say: the server waits and accepts again.
                Err(error) => {
                    tracing::debug!(%error, "runlet: the page server could not accept a connection");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            let service = TowerToHyperService::new(routes.clone());
            tokio::spawn(async move {
                let mut connection = http1::Builder::new();
                connection.timer(TokioTimer::new()).header_read_timeout(HEAD_READ_TIMEOUT);
                let _ = connection.serve_connection(TokioIo::new(stream), service).await;
            });
        }
    }
}
