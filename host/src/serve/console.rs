//! The operator console: a page, a script, a style sheet and an icon embedded in the binary
//! and served at `GET /console` by `hak serve`. The page holds no data: it reads the admin
//! routes (approvals) of the server that served it, with the admin token the
//! operator types (kept for the tab, sent as the bearer, never in a URL), so nothing it shows
//! is more than an admin token can read already. Every answer carries a strict
//! Content-Security-Policy (this origin's script and style only, no inline code, no frames,
//! no request elsewhere). What lives here: the files and their headers; what the page does
//! with the JSON is `console/console.js`'s; the routes it reads are the admin API's.

use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

const PAGE: &str = include_str!("console/index.html");
const SCRIPT: &str = include_str!("console/console.js");
const STYLE: &str = include_str!("console/console.css");
const ICON: &str = include_str!("console/favicon.svg");

/// What the page may load and send: this origin's script, style and JSON, nothing else.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; \
     form-action 'none'; frame-ancestors 'none'";

fn file(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::X_FRAME_OPTIONS, "DENY"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

/// The console's routes (no state: the page is static).
pub fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route(
            "/console",
            get(|| async { file("text/html; charset=utf-8", PAGE) }),
        )
        .route(
            "/console/console.js",
            get(|| async { file("text/javascript; charset=utf-8", SCRIPT) }),
        )
        .route(
            "/console/console.css",
            get(|| async { file("text/css; charset=utf-8", STYLE) }),
        )
        .route(
            "/console/favicon.svg",
            get(|| async { file("image/svg+xml", ICON) }),
        )
}
