//! The client side of one MCP session: what Runlet tells a server about itself, and the
//! routing of the server's `notifications/progress` to the call whose progress token they name,
//! as that call's heartbeat.

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::Mutex;
use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam, ProgressToken,
};
use rmcp::service::{NotificationContext, RoleClient};
use runlet::engine::{Heartbeat, Progress};

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
    routes: BTreeMap<String, Heartbeat>,
    /// Notifications that arrived before their request was registered, oldest first.
    early: Vec<ProgressNotificationParam>,
}

impl ProgressRoutes {
    /// Routes the progress of the request with `token` to `heartbeat` until the returned guard
    /// drops, first delivering what came for it before.
    pub(crate) fn register(&self, token: &ProgressToken, heartbeat: Heartbeat) -> RouteGuard {
        let key = key(token);
        let early = {
            let mut table = self.table.lock();
            table.routes.insert(key.clone(), heartbeat.clone());
            let (early, later) = std::mem::take(&mut table.early)
                .into_iter()
                .partition(|p| self::key(&p.progress_token) == key);
            table.early = later;
            early
        };
        for params in early {
            tell(&heartbeat, &params);
        }
        RouteGuard { table: self.table.clone(), key }
    }

    fn deliver(&self, params: ProgressNotificationParam) {
        let heartbeat = {
            let mut table = self.table.lock();
            let heartbeat = table.routes.get(&key(&params.progress_token)).cloned();
            if heartbeat.is_none() {
                if table.early.len() == EARLY_NOTIFICATIONS {
                    table.early.remove(0);
                }
                table.early.push(params.clone());
            }
            heartbeat
        };
        if let Some(heartbeat) = heartbeat {
            tell(&heartbeat, &params);
        }
    }
}

/// Reports one notification; one whose numbers are not finite is dropped.
fn tell(heartbeat: &Heartbeat, params: &ProgressNotificationParam) {
    if let Some(progress) = Progress::new(params.progress, params.total, params.message.as_deref()) {
        heartbeat.report(progress);
    }
}

/// Ends the routing of one request's progress.
pub(crate) struct RouteGuard {
    table: Arc<Mutex<Table>>,
    key: String,
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
