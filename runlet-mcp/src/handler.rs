//! The client side of one MCP session: what Runlet tells a server about itself, and the
//! routing of the server's `notifications/progress` to the call whose progress token they name,
//! as that call's heartbeat and as a sign of life its wait for the answer can see.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam, ProgressToken,
};
use rmcp::service::{NotificationContext, RoleClient};
use runlet::engine::{Heartbeat, Progress};
use tokio::sync::Notify;

/// How many progress notifications for requests not yet routed are held (the token of a
/// request is known only once it is sent, and a server may report progress at once).
const EARLY_NOTIFICATIONS: usize = 256;

/// The calls in flight by progress token, shared by a session's handler and its calls: each
/// notification becomes a report on its call's [`Heartbeat`], which the run journals as a
/// `CallHeartbeat` event.
#[derive(Clone, Default)]
pub(crate) struct ProgressRoutes {
    table: Arc<Mutex<Table>>,
}

#[derive(Default)]
struct Table {
    routes: BTreeMap<String, Route>,
    /// Notifications that arrived before their request was registered, oldest first.
    early: Vec<ProgressNotificationParam>,
}

/// Where one request's progress goes: its call's heartbeat, and a notice that the server is
/// still at work on it.
#[derive(Clone)]
struct Route {
    heartbeat: Heartbeat,
    heard: Arc<Notify>,
}

impl Route {
    /// Reports one notification; one whose numbers are not finite is dropped, but still shows
    /// the server at work.
    fn tell(&self, params: &ProgressNotificationParam) {
        if let Some(progress) = Progress::new(params.progress, params.total, params.message.as_deref()) {
            self.heartbeat.report(progress);
        }
        self.heard.notify_one();
    }
}

impl ProgressRoutes {
    /// Routes the progress of the request with `token` to `heartbeat` until the returned guard
    /// drops, first delivering what came for it before.
    pub(crate) fn register(&self, token: &ProgressToken, heartbeat: Heartbeat) -> RouteGuard {
        let key = key(token);
        let route = Route { heartbeat, heard: Arc::new(Notify::new()) };
        let early = {
            let mut table = self.table.lock();
            table.routes.insert(key.clone(), route.clone());
            let (early, later) = std::mem::take(&mut table.early)
                .into_iter()
                .partition(|p| self::key(&p.progress_token) == key);
            table.early = later;
            early
        };
        for params in early {
            route.tell(&params);
        }
        RouteGuard { table: self.table.clone(), key, heard: route.heard }
    }

    fn deliver(&self, params: ProgressNotificationParam) {
        let route = {
            let mut table = self.table.lock();
            let route = table.routes.get(&key(&params.progress_token)).cloned();
            if route.is_none() {
                if table.early.len() == EARLY_NOTIFICATIONS {
                    table.early.remove(0);
                }
                table.early.push(params.clone());
            }
            route
        };
        if let Some(route) = route {
            route.tell(&params);
        }
    }
}

/// Ends the routing of one request's progress.
pub(crate) struct RouteGuard {
    table: Arc<Mutex<Table>>,
    key: String,
    heard: Arc<Notify>,
}

impl RouteGuard {
    /// Returns `silence` once it passes without a progress notification for the request
    /// (never, for `None`); each notification starts the wait again.
    pub(crate) async fn silent_for(&self, silence: Option<Duration>) -> Duration {
        let Some(silence) = silence else { return std::future::pending().await };
        while tokio::time::timeout(silence, self.heard.notified()).await.is_ok() {}
        silence
    }
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        self.table.lock().routes.remove(&self.key);
    }
}

fn key(token: &ProgressToken) -> String {
    serde_json::to_string(&token.0).unwrap_or_default()
}

/// Runlet's side of a session.
#[derive(Clone)]
pub(crate) struct Handler {
    pub progress: ProgressRoutes,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("runlet", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.deliver(params);
    }
}
