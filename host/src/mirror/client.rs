//! The mirror node's HTTP side: GET + JSON, retrying 404 / 429 / 502 / 503 / 504 and
//! connection errors three times with doubling backoff, as the kit's client does (the mirror
//! lags consensus by seconds); POST + JSON for `/contracts/call`, retrying 429 / 502 / 503 /
//! 504 and connection errors five times, as the kit's `getERC20Decimals` does. Paths and what
//! the answers mean live in `mirror::resources`.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_openssl::client::legacy::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;
use std::fmt;
use std::sync::OnceLock;
use std::time::Duration;

const RETRYABLE: [u16; 5] = [404, 429, 502, 503, 504];
const ATTEMPTS: u32 = 3;
/// A POST is an EVM call, not a read of something that may lag: 404 is an answer.
const POST_RETRYABLE: [u16; 4] = [429, 502, 503, 504];
const POST_ATTEMPTS: u32 = 5;
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a mirror request failed, worded like the kit's errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MirrorError {
    /// A non-success HTTP status (after retries for the retryable ones).
    Status { status: u16, reason: String },
    /// The request never got an answer.
    Network { url: String, message: String },
    /// The answer was not JSON.
    Body { url: String, message: String },
}

impl fmt::Display for MirrorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MirrorError::Status { status, reason } => write!(f, "{status} {reason}"),
            MirrorError::Network { url, message } => {
                write!(f, "Network error fetching {url}: {message}")
            }
            MirrorError::Body { url, message } => write!(f, "Invalid JSON from {url}: {message}"),
        }
    }
}

type Http = Client<HttpsConnector<HttpConnector>, Full<Bytes>>;

pub struct MirrorClient {
    base: String,
    /// Built on the first request: OpenSSL reads every system CA certificate when a TLS
    /// connector is made (~240 M instructions, most of a `hak call`'s start), which a process
    /// that never asks the mirror — most return-bytes calls — should not pay.
    http: OnceLock<Result<Http, String>>,
    first_backoff: Duration,
}

impl MirrorClient {
    /// A client for `base` (e.g. `https://testnet.mirrornode.hedera.com/api/v1`); the first
    /// retry waits `first_backoff` (the kit waits 1 s; a loopback mirror needs far less).
    pub fn new(base: &str, first_backoff: Duration) -> anyhow::Result<Self> {
        Ok(MirrorClient {
            base: base.trim_end_matches('/').to_owned(),
            http: OnceLock::new(),
            first_backoff,
        })
    }

    /// The HTTP(S) client, made once; why not when OpenSSL cannot make a TLS connector.
    fn http(&self) -> Result<&Http, String> {
        self.http
            .get_or_init(|| {
                let mut http = HttpConnector::new();
                http.enforce_http(false);
                let tls =
                    || -> Result<HttpsConnector<HttpConnector>, openssl::error::ErrorStack> {
                        let mut tls =
                            openssl::ssl::SslConnector::builder(openssl::ssl::SslMethod::tls())?;
                        tls.set_alpn_protos(b"\x08http/1.1")?;
                        HttpsConnector::with_connector(http, tls)
                    };
                let https = tls().map_err(|e| format!("cannot set up TLS: {e}"))?;
                Ok(Client::builder(TokioExecutor::new()).build(https))
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    pub fn base_url(&self) -> &str {
        &self.base
    }

    /// GET `{base}{path}` as JSON.
    pub async fn get(&self, path: &str) -> Result<Value, MirrorError> {
        self.send(path, None, &RETRYABLE, ATTEMPTS).await
    }

    /// GET `{base}{path}` as JSON, `None` on 404: for a lookup whose miss is an answer (an
    /// EVM address no account holds), not a lagging mirror to wait for.
    pub async fn get_present(&self, path: &str) -> Result<Option<Value>, MirrorError> {
        match self.send(path, None, &POST_RETRYABLE, ATTEMPTS).await {
            Ok(value) => Ok(Some(value)),
            Err(MirrorError::Status { status: 404, .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// POST `body` as JSON to `{base}{path}`, the answer as JSON.
    pub async fn post(&self, path: &str, body: &Value) -> Result<Value, MirrorError> {
        let body = Bytes::from(body.to_string());
        self.send(path, Some(body), &POST_RETRYABLE, POST_ATTEMPTS)
            .await
    }

    async fn send(
        &self,
        path: &str,
        body: Option<Bytes>,
        retryable: &[u16],
        attempts: u32,
    ) -> Result<Value, MirrorError> {
        let url = format!("{}{path}", self.base);
        let network = |message: String| MirrorError::Network {
            url: url.clone(),
            message,
        };
        let uri: hyper::Uri = url
            .parse()
            .map_err(|e| network(format!("invalid URL: {e}")))?;
        let http = self.http().map_err(network)?;
        let mut delay = self.first_backoff;
        for attempt in 1..=attempts {
            let last = attempt == attempts;
            let request = match &body {
                None => http.get(uri.clone()),
                Some(body) => {
                    let request = hyper::Request::post(uri.clone())
                        .header(hyper::header::CONTENT_TYPE, "application/json")
                        .body(Full::new(body.clone()))
                        .map_err(|e| network(e.to_string()))?;
                    http.request(request)
                }
            };
            let response = match tokio::time::timeout(REQUEST_TIMEOUT, request).await {
                Ok(Ok(response)) => response,
                Ok(Err(e)) if !last => {
                    tracing::debug!("mirror {url}: {e}; retrying");
                    tokio::time::sleep(delay).await;
                    delay *= 2;
                    continue;
                }
                Ok(Err(e)) => return Err(network(e.to_string())),
                Err(_) => return Err(network(format!("no answer within {REQUEST_TIMEOUT:?}"))),
            };
            let status = response.status();
            if status.is_success() {
                let body = response
                    .into_body()
                    .collect()
                    .await
                    .map_err(|e| network(e.to_string()))?;
                return serde_json::from_slice(&body.to_bytes()).map_err(|e| MirrorError::Body {
                    url: url.clone(),
                    message: e.to_string(),
                });
            }
            if retryable.contains(&status.as_u16()) && !last {
                tokio::time::sleep(delay).await;
                delay *= 2;
                continue;
            }
            return Err(MirrorError::Status {
                status: status.as_u16(),
                reason: status.canonical_reason().unwrap_or("").to_owned(),
            });
        }
        unreachable!("the last attempt returns")
    }
}

#[cfg(test)]
mod tests {
    use super::MirrorClient;
    use std::time::Duration;

    #[test]
    fn the_tls_connector_is_made_on_the_first_request_and_once() {
        let client = MirrorClient::new("https://mirror.invalid/api/v1/", Duration::ZERO).unwrap();
        assert!(client.http.get().is_none(), "made when the host was built");
        let first: *const _ = client.http().unwrap();
        assert!(std::ptr::eq(first, client.http().unwrap()));
        assert_eq!(client.base_url(), "https://mirror.invalid/api/v1");
    }
}
