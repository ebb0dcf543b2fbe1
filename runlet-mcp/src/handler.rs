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

/// The calls in flight by progress token, shared by a session's handler and its calls.
#[derive(Clone, Default)]
pub(crate) struct ProgressRoutes {
    routes: Arc<Mutex<BTreeMap<String, Route>>>,
    listener: Option<ProgressListener>,
}

impl ProgressRoutes {
    pub(crate) fn new(listener: Option<ProgressListener>) -> ProgressRoutes {
        ProgressRoutes { routes: Arc::default(), listener }
    }

    /// Routes the progress of the request with `token` to `route` until the returned guard drops.
    pub(crate) fn register(&self, token: &ProgressToken, route: Route) -> RouteGuard {
        let key = key(token);
        self.routes.lock().insert(key.clone(), route);
        RouteGuard { routes: self.routes.clone(), key }
    }

    fn deliver(&self, params: &ProgressNotificationParam) {
        let Some(listener) = &self.listener else { return };
        let Some(route) = self.routes.lock().get(&key(&params.progress_token)).cloned() else { return };
        listener(&Progress {
            tool: route.tool,
            operation_id: route.operation_id,
            dispatch_id: route.dispatch_id,
            progress: params.progress,
            total: params.total,
            message: params.message.clone(),
        });
    }
}

/// Ends the routing of one request's progress.
pub(crate) struct RouteGuard {
    routes: Arc<Mutex<BTreeMap<String, Route>>>,
    key: String,
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        self.routes.lock().remove(&self.key);
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
        self.progress.deliver(&params);
    }
}
