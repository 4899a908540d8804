//! A small client for a running server's admin routes, for `hak approvals list|approve|deny`,
//! `hak pause` and `hak resume`:
//! one HTTP/1.1 request (plain HTTP: the server serves no TLS of its own; put a proxy in front
//! for that), the admin token from `$HAK_ADMIN_TOKEN` (or an approver's key) as the bearer, JSON in and out, a
//! 30-second timeout. Nothing else lives here.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(30);

/// `method` `server``path` with `body` (JSON) → the answer's JSON, or a one-line error that
/// names the server and what it said.
pub fn request(
    server: &str,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> anyhow::Result<Value> {
    request_as("HAK_ADMIN_TOKEN", server, method, path, body)
}

/// [`request`] with the bearer key `$key_env` holds (an approver's, or the admin token).
pub fn request_as(
    key_env: &str,
    server: &str,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> anyhow::Result<Value> {
    let url = format!("{}{path}", server.trim_end_matches('/'));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let client: Client<HttpConnector, Full<Bytes>> =
            Client::builder(TokioExecutor::new()).build(HttpConnector::new());
        let mut request = hyper::Request::builder()
            .method(method)
            .uri(&url)
            .header("content-type", "application/json");
        if let Some(token) = std::env::var(key_env).ok().filter(|t| !t.is_empty()) {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        let body = body.map(Value::to_string).unwrap_or_default();
        let request = request.body(Full::new(Bytes::from(body)))?;
        let response = tokio::time::timeout(TIMEOUT, client.request(request))
            .await
            .map_err(|_| anyhow::anyhow!("{url}: no answer within {} s", TIMEOUT.as_secs()))?
            .map_err(|e| anyhow::anyhow!("{url}: {e} (is `hak serve` running there?)"))?;
        let status = response.status();
        let bytes = response.into_body().collect().await?.to_bytes();
        let value: Value = serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
        if status.is_success() {
            Ok(value)
        } else {
            let said = value["error"]
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| value.to_string());
            anyhow::bail!("{url}: {status}: {said}")
        }
    })
}
