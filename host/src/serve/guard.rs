//! Requests a browser could be tricked into sending are refused before any handler runs:
//! any `Origin` that is neither the server's own (`http(s)://` and the request's allowed
//! `Host`: the console's requests) nor listed in `[server] allowed_origins` (cross-site
//! requests, even "simple" `text/plain` POSTs), and any `Host` that is not an IP literal,
//! `localhost` or a name listed in `[server] hosts` (DNS rebinding points a hostile name at
//! the server's address, and with it the origin a same-origin check would accept).

use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use futures_util::future::Either;
use serde_json::json;
use std::future::{ready, Ready};
use std::sync::Arc;
use std::task::{Context, Poll};
use tower_layer::Layer;
use tower_service::Service;

/// What the guard allows.
#[derive(Clone, Default)]
pub struct Guard {
    pub hosts: Vec<String>,
    pub allowed_origins: Vec<String>,
}

impl Guard {
    fn host_allowed(&self, host: &str) -> bool {
        let name = match host.rsplit_once(':') {
            Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
            _ => host,
        };
        let name = name.trim_start_matches('[').trim_end_matches(']');
        name.parse::<std::net::IpAddr>().is_ok()
            || name.eq_ignore_ascii_case("localhost")
            || self
                .hosts
                .iter()
                .any(|h| h.eq_ignore_ascii_case(host) || h.eq_ignore_ascii_case(name))
    }

    /// Why this request is refused, if it is.
    pub fn check(&self, request: &Request) -> Option<String> {
        let headers = request.headers();
        let host = headers
            .get("host")
            .and_then(|h| h.to_str().ok())
            .unwrap_or("");
        if !self.host_allowed(host) {
            return Some(format!(
                "host {host:?} is not served here (list it in [server] hosts)"
            ));
        }
        if let Some(origin) = headers.get("origin") {
            let origin = origin.to_str().unwrap_or("");
            let own = origin
                .strip_prefix("http://")
                .or_else(|| origin.strip_prefix("https://"))
                .is_some_and(|rest| !host.is_empty() && rest.eq_ignore_ascii_case(host));
            if !own && !self.allowed_origins.iter().any(|o| o == origin) {
                return Some(format!(
                    "origin {origin:?} is not allowed (list it in [server] allowed_origins)"
                ));
            }
        }
        None
    }
}

/// 403 with a JSON error naming why.
fn refused(why: String) -> Response {
    (StatusCode::FORBIDDEN, Json(json!({"error": why}))).into_response()
}

/// The guard in front of every route, as a layer: a refused request is answered at once, an
/// allowed one goes on as the route's own future. (axum's `from_fn` middleware boxes a future
/// and clones the route's service on every request: ~2 % of a served call.)
#[derive(Clone)]
pub struct GuardLayer(pub Arc<Guard>);

impl<S> Layer<S> for GuardLayer {
    type Service = Guarded<S>;
    fn layer(&self, inner: S) -> Guarded<S> {
        Guarded {
            guard: self.0.clone(),
            inner,
        }
    }
}

/// A route behind the guard.
#[derive(Clone)]
pub struct Guarded<S> {
    guard: Arc<Guard>,
    inner: S,
}

impl<S> Service<Request> for Guarded<S>
where
    S: Service<Request, Response = Response>,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Either<Ready<Result<Response, S::Error>>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        match self.guard.check(&request) {
            Some(why) => Either::Left(ready(Ok(refused(why)))),
            None => Either::Right(self.inner.call(request)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Guard;

    #[test]
    fn hosts_are_ip_literals_localhost_or_listed() {
        let g = Guard {
            hosts: vec!["hak.internal:8787".into()],
            allowed_origins: vec![],
        };
        for ok in [
            "127.0.0.1:8787",
            "[::1]:8787",
            "localhost:8787",
            "10.0.0.5",
            "hak.internal:8787",
        ] {
            assert!(g.host_allowed(ok), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:8787",
            "",
            "hak.internal.evil.example:8787",
        ] {
            assert!(!g.host_allowed(bad), "{bad}");
        }
    }
}
