//! Which `Host` a request may name: the defence against DNS rebinding. A web page the operator
//! visits can point a name it owns at 127.0.0.1 and then read a loopback server as its own
//! origin; its requests still carry that name in `Host`. A server bound to loopback therefore
//! answers only requests for a loopback name (`localhost`, `*.localhost`) or a loopback address.
//! A server bound elsewhere was exposed on purpose, under names the host knows and the server
//! does not: it answers any `Host`.

use std::net::{IpAddr, SocketAddr};

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::http::header::HOST;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// The hosts a server answers, from the address it is bound to.
#[derive(Debug, Clone, Copy)]
pub(crate) enum AllowedHosts {
    /// Bound to a loopback address: loopback names and addresses only.
    Loopback,
    /// Bound to another address: every host.
    Any,
}

impl AllowedHosts {
    pub(crate) fn for_bound(addr: SocketAddr) -> AllowedHosts {
        if addr.ip().to_canonical().is_loopback() { AllowedHosts::Loopback } else { AllowedHosts::Any }
    }

    /// Whether a request whose `Host` header is `host` is answered. A request without one (an
    /// HTTP/1.0 client; browsers always send it) is.
    fn admits(self, host: Option<&[u8]>) -> bool {
        match (self, host) {
            (AllowedHosts::Any, _) | (_, None) => true,
            (AllowedHosts::Loopback, Some(host)) => std::str::from_utf8(host).is_ok_and(is_loopback_host),
        }
    }
}

/// Whether `host` (`NAME[:PORT]`, `ADDRESS[:PORT]` or `[IPV6][:PORT]`) names this machine.
fn is_loopback_host(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(bracketed) => match bracketed.split_once(']') {
            Some((inside, port)) if port.is_empty() || port.starts_with(':') => inside,
            _ => return false,
        },
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    let name = name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase();
    match name.parse::<IpAddr>() {
        Ok(ip) => ip.to_canonical().is_loopback(),
        Err(_) => name == "localhost" || name.ends_with(".localhost"),
    }
}

/// The middleware: a request for a host the server does not answer is a 403 JSON error.
pub(crate) async fn check(State(allowed): State<AllowedHosts>, request: Request, next: Next) -> Response {
    if allowed.admits(request.headers().get(HOST).map(|host| host.as_bytes())) {
        return next.run(request).await;
    }
    let message = "this server answers only requests for a loopback host (localhost or 127.0.0.1): \
                   open it by that name, or bind it to another address to serve other names";
    let body = json!({ "error": { "code": "host_not_allowed", "message": message } });
    (StatusCode::FORBIDDEN, axum::Json(body)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names_and_addresses_are_admitted_and_others_refused() {
        let loopback = AllowedHosts::Loopback;
        for host in [
            "localhost",
            "localhost:8080",
            "LOCALHOST.:80",
            "runs.localhost:1",
            "127.0.0.1",
            "127.0.0.1:4000",
            "127.1.2.3:4000",
            "[::1]:4000",
            "[::1]",
            "[::ffff:127.0.0.1]:4000",
            "127.0.0.1.",
        ] {
            assert!(loopback.admits(Some(host.as_bytes())), "{host}");
        }
        for host in [
            "attacker.example",
            "attacker.example:8080",
            "localhost.attacker.example",
            "10.0.0.1:80",
            "[::2]:80",
            "::1",
            "[::ffff:10.0.0.1]:80",
            "0.0.0.0:80",
            "",
            "[::1",
        ] {
            assert!(!loopback.admits(Some(host.as_bytes())), "{host}");
        }
        assert!(!loopback.admits(Some(b"local\xffhost")));
        assert!(loopback.admits(None));
        assert!(AllowedHosts::Any.admits(Some(b"attacker.example")));
    }

    #[test]
    fn the_bound_address_decides() {
        assert!(matches!(AllowedHosts::for_bound("127.0.0.1:1".parse().unwrap()), AllowedHosts::Loopback));
        assert!(matches!(AllowedHosts::for_bound("[::1]:1".parse().unwrap()), AllowedHosts::Loopback));
        assert!(matches!(
            AllowedHosts::for_bound("[::ffff:127.0.0.1]:1".parse().unwrap()),
            AllowedHosts::Loopback
        ));
        assert!(matches!(AllowedHosts::for_bound("192.0.2.10:1".parse().unwrap()), AllowedHosts::Any));
    }
}
