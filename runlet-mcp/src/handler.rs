//! The client side of one MCP session: what Runlet tells a server about itself, and the
//! routing of the server's `notifications/progress` to the call whose progress token they name.

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::Mutex;
use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam, ProgressToken,
};
use rmcp::service::{NotificationContext, RoleClient};

/// One progress notification of a call in flight.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// The registry name of the tool, such as `everything.trigger_long_running_operation`.
    pub tool: Arc<str>,
    pub operation_id: String,
    pub dispatch_id: String,
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// Receives progress notifications. Runlet's core has no heartbeat event yet, so progress goes
/// to the host here rather than into the journal.
pub type ProgressListener = Arc<dyn Fn(&Progress) + Send + Sync>;

/// Where progress for one request goes: the call it belongs to.
#[derive(Clone)]
pub(crate) struct Route {
    pub tool: Arc<str>,
    pub operation_id: String,
    pub dispatch_id: String,
}

/// How many progress notifications for requests not yet routed are held (the token of a
/// request is known only once it is sent, and a server may report progress at once).
const EARLY_NOTIFICATIONS: usize = 256;

/// The calls in flight by progress token, shared by a session's handler and its calls.
#[derive(Clone, Default)]
pub(crate) struct ProgressRoutes {
    table: Arc<Mutex<Table>>,
    listener: Option<ProgressListener>,
}

#[derive(Default)]
struct Table {
    routes: BTreeMap<String, Route>,
    /// Notifications that came before their request was routed, oldest first.
    early: Vec<ProgressNotificationParam>,
}

impl ProgressRoutes {
    pub(crate) fn new(listener: Option<ProgressListener>) -> ProgressRoutes {
        ProgressRoutes { table: Arc::default(), listener }
    }

    /// Routes the progress of the request with `token` to `route` until the returned guard
    /// drops, first delivering what came for it before.
    pub(crate) fn register(&self, token: &ProgressToken, route: Route) -> RouteGuard {
        let key = key(token);
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
            self.tell(&route, &params);
        }
        RouteGuard { table: self.table.clone(), key }
    }

    fn deliver(&self, params: ProgressNotificationParam) {
        if self.listener.is_none() {
            return;
        }
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
            self.tell(&route, &params);
        }
    }

    fn tell(&self, route: &Route, params: &ProgressNotificationParam) {
        let Some(listener) = &self.listener else { return };
        listener(&Progress {
            tool: route.tool.clone(),
            operation_id: route.operation_id.clone(),
            dispatch_id: route.dispatch_id.clone(),
            progress: params.progress,
            total: params.total,
            message: params.message.clone(),
        });
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
